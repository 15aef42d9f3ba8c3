"""The pairs figure stays cheap on a large matrix (issue 39: a 3000-node matrix's ECDF of
9 million steps took 15 s of matplotlib's legend placement)."""

from __future__ import annotations

import io
import time

import numpy as np

from netdp.report.pair_figures import ECDF_POINTS, pairs_figure


def test_the_ecdf_of_a_large_matrix_is_thinned():
    rng = np.random.default_rng(39)
    matrix = rng.exponential(size=(400, 400))  # 159,600 ordered pairs
    fig = pairs_figure(matrix)
    line = fig.axes[1].lines[0]
    xs, ys = line.get_xdata(), line.get_ydata()
    off = matrix[~np.eye(400, dtype=bool)]
    assert len(xs) <= ECDF_POINTS and ys[-1] == 1.0 and xs[-1] == off.max()
    small = pairs_figure(rng.exponential(size=(20, 20)))  # small matrices: every step
    assert len(small.axes[1].lines[0].get_xdata()) == 380


def test_a_large_matrix_draws_within_seconds_of_cpu():
    matrix = np.random.default_rng(1).exponential(size=(1500, 1500))
    start = time.process_time()
    pairs_figure(matrix).savefig(io.BytesIO(), format="png")
    assert time.process_time() - start < 8.0
