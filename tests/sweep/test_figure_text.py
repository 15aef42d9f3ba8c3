"""Figures say what they plot: each figure is drawn (Agg) and read back, its labels, legend
entries, tick labels, title and colour limits checked against the data it was given."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from netdp.audit.curve import CurvePoint, curve_figure
from netdp.report import pair_figures
from netdp.report.pair_figures import DistanceSeries
from netdp.run.api import simulate
from netdp.run.sweep import plot_command, plots


def legend_texts(fig) -> list[str]:
    """Every entry of every legend of ``fig`` (the figure's and its axes')."""
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes)]
    return [t.get_text() for leg in legends if leg is not None for t in leg.get_texts()]


def legends(fig) -> list:
    return [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]


def drawn(fig):
    """``fig`` laid out and drawn by Agg, and its renderer (for extents)."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _sweep_table() -> pd.DataFrame:
    """A Figure-1b-like table: two eps0 groups, two accountants, the pairs' δ growing
    with n (2 k δ, as the walk trackers report it) while the config's δ is 1e-7."""
    rows = []
    for n, pair_delta in ((10, 2.0e-5), (100, 2.4e-5), (1000, 2.8e-5)):
        for eps0 in (0.1, 0.4):
            for seed in (1, 2):
                level = eps0 * 30 / np.sqrt(n) * (1 + 0.1 * seed)
                row = {"task": "sum", "topology": "complete", "nodes": n, "steps": 100 * n,
                       "eps0": eps0, "epsilon": eps0, "delta": 1e-7, "seed": seed,
                       "ldp_mean": 40 * eps0}
                for acc, scale in (("kov", 1.0), ("rdp", 0.3)):
                    row |= {f"{acc}_mean": scale * level, f"{acc}_min": 0.5 * scale * level,
                            f"{acc}_max": 2 * scale * level, f"{acc}_delta": pair_delta}
                rows.append(row)
    return pd.DataFrame(rows)


def test_the_privacy_axis_names_the_delta_its_epsilon_is_at():
    fig = plots.privacy_vs_n(_sweep_table())
    ax = fig.axes[0]
    # the ε plotted are at the pairs' δ (kov_delta, rdp_delta), not at the config's 1e-7
    assert ax.get_ylabel() == "ε (pairwise, at δ from 2e-05 to 2.8e-05)"
    assert "1e-07" not in ax.get_ylabel()
    texts = legend_texts(fig)
    # the theory curve is computed at the config's δ, and its entry says so
    assert "theory complete-ndp-chernoff (δ = 1e-07)" in texts
    drawn(fig)
    shown = [t.get_text() for t in ax.get_xticklabels()
             if ax.get_xlim()[0] <= t.get_position()[0] <= ax.get_xlim()[1]]
    assert shown and all(shown), f"empty tick label among {shown}"


def test_one_pair_delta_is_named_as_one_value():
    df = _sweep_table().assign(kov_delta=2.5e-5, rdp_delta=2.5e-5)
    fig = plots.table_figure(df, "nodes", ["privacy"], hue="eps0")
    assert fig.axes[0].get_ylabel() == "ε (pairwise, at δ = 2.5e-05)"


def test_every_band_has_a_legend_entry_in_one_legend_below_the_axes():
    fig = plots.privacy_vs_n(_sweep_table())
    ax = fig.axes[0]
    bands = [c for c in ax.collections if len(c.get_paths())]
    assert len(bands) == 4  # two groups x two accountants, each with its min-max band
    texts = legend_texts(fig)
    assert "shaded: min–max over pairs and seeds" in texts
    # each accountant says the δ of its figures (no convention column here)
    assert {"ε0 = 0.1", "ε0 = 0.4", "kov (δ from 2e-05 to 2.8e-05)",
            "rdp (δ from 2e-05 to 2.8e-05)", "LDP"} <= set(texts)
    (legend,) = legends(fig)  # groups and series in one legend, not two far apart
    renderer = drawn(fig)
    box, axes = legend.get_window_extent(renderer), ax.get_window_extent(renderer)
    assert box.y1 <= axes.y0  # below the axes, not a column beside them
    assert axes.width >= 0.8 * fig.bbox.width


def test_each_accountant_s_legend_names_its_convention_and_delta():
    """With the table's convention column: ``kov (sound convention, δ = 1e-06)``; the
    table without δ nor convention says ``empirical``."""
    df = _sweep_table().assign(convention="sound")
    for acc in ("kov", "rdp"):
        df[f"{acc}_delta"] = 1e-6
    texts = legend_texts(plots.privacy_vs_n(df))
    assert {"kov (sound convention, δ = 1e-06)", "rdp (sound convention, δ = 1e-06)"} <= set(
        texts)
    bare = _sweep_table().drop(columns=["kov_delta", "rdp_delta"])
    assert "kov (empirical)" in legend_texts(plots.privacy_vs_n(bare))


def test_a_column_without_pairs_names_its_band_over_seeds():
    df = _sweep_table()
    fig = plots.table_figure(df, "nodes", ["kov_q99" if "kov_q99" in df else "kov_mean"],
                             hue="eps0")
    assert "shaded: min–max over seeds" in legend_texts(fig)


def test_the_by_distance_legend_leaves_the_axes_their_width():
    d = np.arange(1, 6)
    series = [DistanceSeries(f"sum/gossip on hypercube (n=256), seed {s}, a long label", d,
                             1.0 / d, 0.8 / d, 1.2 / d, ldp=2.0 + s) for s in range(3)]
    fig = pair_figures.by_distance_figure(series)
    ax = fig.axes[0]
    renderer = drawn(fig)
    (legend,) = legends(fig)
    box, axes = legend.get_window_extent(renderer), ax.get_window_extent(renderer)
    inside = axes.contains(box.x0, box.y0) and axes.contains(box.x1, box.y1)
    assert inside or box.y1 <= axes.y0
    assert axes.width >= 0.75 * fig.bbox.width  # not 40 % of the width for the legend
    assert sum("min–max band" in t for t in legend_texts(fig)) == 3


def _distances(n: int) -> np.ndarray:
    """Hop distances with narrow first blocks (1, 2, 3 nodes) and wide later ones."""
    d = np.concatenate([np.full(k + 1, k) for k in range(4)]
                       + [np.full(6, k) for k in range(4, 20)])
    return np.sort(d[:n]).astype(float)


def _tick_texts(axis) -> list[str]:
    return [t.get_text() for t in axis.get_ticklabels()]


def test_a_constant_heatmap_says_so_instead_of_a_colour_bar():
    n = 60
    fig = pair_figures.heatmap_figure(np.full((n, n), 5.2216), _distances(n), node=0,
                                      label="ε(u → v) (rdp, δ = 1e-06)")
    assert len(fig.axes) == 1  # no colour bar around one value
    title = fig.axes[0].get_title().replace("\xa0", " ")  # wrap_title's fixed spaces
    assert "constant: ε(u → v) (rdp, δ = 1e-06) = 5.222 for every pair" in title


def test_the_heatmap_scales_to_its_data_and_labels_every_block():
    n = 60
    rng = np.random.default_rng(3)
    matrix = 5.0 + 0.01 * rng.random((n, n))
    dist = _distances(n)
    fig = pair_figures.heatmap_figure(matrix, dist, node=0)
    ax, bar = fig.axes
    off = matrix[~np.eye(n, dtype=bool)]
    assert ax.images[0].get_clim() == pytest.approx((off.min(), off.max()), rel=1e-12)
    assert bar.get_ylabel() == "ε(u → v) (pairwise)"
    drawn(fig)
    levels = [f"d={int(v)}" for v in np.unique(dist)]
    # up to 100 nodes: every node named on the bottom and left (ids, in the drawn order:
    # here the ids' own), every block labelled on the top and right, the narrow ones too
    for axis in (ax.xaxis, ax.yaxis):
        assert _tick_texts(axis) == [str(i) for i in range(n)]
    top, right = ax.child_axes
    assert _tick_texts(top.xaxis) == levels and _tick_texts(right.yaxis) == levels
    # beyond 100 nodes: the blocks on the bottom and left, no names
    big = 105
    wide = pair_figures.heatmap_figure(5.0 + rng.random((big, big)), _distances(big), node=0)
    drawn(wide)
    for axis in (wide.axes[0].xaxis, wide.axes[0].yaxis):
        assert _tick_texts(axis) == [f"d={int(v)}" for v in np.unique(_distances(big))]
    named = pair_figures.heatmap_figure(matrix[:5, :5], _distances(5), node=0,
                                        names=list("abcde"))
    assert _tick_texts(named.axes[0].xaxis) == list("abcde")


def test_the_audit_curve_states_its_one_y_scale():
    points = [CurvePoint(r, r // 2, e, c) for r, e, c in
              ((20, 0.0, 0.8), (200, 0.5, 3.5), (2000, 0.9, 6.0), (20000, 0.97, 8.5))]
    fig = curve_figure(points, 1.0, delta=0.0, confidence=0.95)
    ax = fig.axes[0]
    assert ax.get_yscale() == "symlog"
    threshold = ax.yaxis.get_transform().linthresh
    assert threshold == 1.5  # a round number above the claim (1.25 x 1, rounded up)
    assert ax.get_ylabel() == "ε (linear scale up to 1.5, logarithmic above)"
    drawn(fig)
    assert "1.5" in _tick_texts(ax.yaxis) and all(_tick_texts(ax.yaxis))


@pytest.fixture(scope="module")
def one_run():
    return simulate({"nodes": 20, "seed": 4, "accountants": ["rdp"]}, keep_pairs=True)


def _texts(fig) -> dict:
    return {"title": fig._suptitle.get_text().replace("\xa0", " "),
            "xlabels": [ax.get_xlabel() for ax in fig.axes],
            "legends": legend_texts(fig)}


def test_the_python_pairs_figure_is_the_commands(one_run):
    from_python = _texts(plots.pairs_figure(one_run.pairs, result=one_run))
    from_cli = _texts(plot_command.pairs_plot(one_run.pairs, one_run.to_json()))
    assert from_python == from_cli
    emp = one_run.privacy.empirical[0]
    assert from_python["xlabels"][0] == f"ε(u → v) (rdp, δ = {emp.delta:.2g})"
    title = from_python["title"]
    assert title.startswith("Pairwise privacy losses of one run\nsum on complete")
    assert "δ0 = 1e-06" in title and "seed 4" in title
    assert any(t.startswith("LDP (mean over nodes): ") for t in from_python["legends"])


def test_unequal_runs_per_point_are_said_on_the_figure():
    """A point with fewer runs (a partial sweep, a failed run) is marked in the title; a
    complete table says nothing."""
    df = _sweep_table()
    assert "unequal" not in plots.privacy_vs_n(df).axes[0].get_title()
    part = df.drop(index=df.index[0])
    assert "unequal runs per point: 1 to 2 (a partial sweep or failed runs)" in \
        plots.privacy_vs_n(part).axes[0].get_title()
