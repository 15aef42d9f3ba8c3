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


def test_the_axis_is_the_data_s_and_a_far_reference_a_marker_at_its_edge():
    """Losses in [1, 2] (a linear axis): the LDP level at 13.5 (far) leaves the axis to the
    data and is a marker past its right edge, value in the legend; a theory line at 2.5
    (near) widens the axis and is drawn as a line. Losses over three decades (a log axis):
    a reference at 1e-4 is a marker past the left edge."""
    rng = np.random.default_rng(40)
    matrix = 1.0 + rng.random((30, 30))
    off = matrix[~np.eye(30, dtype=bool)]
    fig = pairs_figure(matrix, refs={"LDP": 13.5, "theory near": 2.5})
    for ax in fig.axes[:2]:
        lo, hi = ax.get_xlim()
        assert lo <= off.min() and off.max() <= hi
        assert lo > 0.9 and 2.5 <= hi < 3.0  # the data and the near line, not 13.5
        labels = {ln.get_label(): ln for ln in ax.lines}
        assert labels["LDP: 13.5 (→ off the axis)"].get_marker() == ">"
        assert labels["theory near: 2.5"].get_xdata()[0] == 2.5
    plain = pairs_figure(matrix).axes[0].get_xlim()  # no reference: the data, padded
    assert plain[0] > 0.9 and plain[1] < 2.1
    wide = np.exp(rng.uniform(0.0, 7.0, (30, 30)))  # 1 .. 1100
    ax = pairs_figure(wide, refs={"theory low": 1e-4}).axes[0]
    assert ax.get_xscale() == "log" and ax.get_xlim()[0] > 0.5
    assert {ln.get_label(): ln for ln in ax.lines}[
        "theory low: 0.0001 (← off the axis)"].get_marker() == "<"
