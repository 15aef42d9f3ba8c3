"""``netdp plot`` and netdp.run.sweep.plots: every preset draws content; errors are one line."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from figure_checks import assert_image, data_ink, run

from netdp.core.errors import InputError
from netdp.graphs.topologies import complete, from_networkx, ring
from netdp.report import pair_figures
from netdp.run.api import simulate
from netdp.run.sweep import plots
from netdp.run.sweep.table import flatten
from netdp.tasks import make_config

# --------------------------------------------------------------------------- fixtures


def _table(configs) -> pd.DataFrame:
    return pd.DataFrame([flatten(simulate(c).to_dict()) for c in configs])


@pytest.fixture(scope="module")
def privacy_csv(tmp_path_factory):
    """Complete graph, n in (6, 12), eps0 in (0.5, 1), two seeds, kov and rdp."""
    configs = [make_config(nodes=n, epsilon=e, seed=s, accountants=("kov", "rdp"))
               for n, e, s in itertools.product((6, 12), (0.5, 1.0), (1, 2))]
    path = tmp_path_factory.mktemp("privacy") / "results.csv"
    _table(configs).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def utility_csv(tmp_path_factory):
    """Ring summation, eps0 in (0.5, 2), gaussian and laplace, two seeds."""
    configs = [make_config(topology="ring", nodes=8, epsilon=e, mechanism=m, seed=s,
                                accountants=("kov",))
               for e, m, s in itertools.product((0.5, 2.0), ("gaussian", "laplace"), (1, 2))]
    path = tmp_path_factory.mktemp("utility") / "results.csv"
    _table(configs).to_csv(path, index=False)
    return path


def test_data_ink_is_zero_for_empty_axes():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    ax.set_xlabel("n (nodes)")
    ax.set_title("nothing drawn")
    assert data_ink(fig) == 0.0
    ax.plot([1, 2, 3], [1, 3, 2])
    assert data_ink(fig) > 0.005


# --------------------------------------------------------------------------- table plots


def test_generic_privacy_plot(capsys, tmp_path, privacy_csv, captured):
    out = tmp_path / "eps.png"
    code, stdout, _ = run(capsys, "plot", privacy_csv, "--x", "n", "--y", "privacy",
                          "--hue", "eps0", "--logx", "--logy", "--out", out)
    assert code == 0 and str(out) in stdout
    ax = captured[-1].axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == "n (nodes)" and ax.get_ylabel().startswith("ε (pairwise")
    # two eps0 groups x two accountants, each with its band
    assert len(ax.lines) == 4 and len(ax.collections) == 4
    assert_image(out, captured)


def test_privacy_vs_n_from_a_sweep_folder(capsys, tmp_path, captured):
    spec = tmp_path / "spec.toml"
    spec.write_text('seeds = 2\n[fixed]\ntopology = "complete"\naccountants = ["kov"]\n'
                    '[grid]\nnodes = [6, 10]\nepsilon = [0.5, 1.0]\n')
    code, _, err = run(capsys, "sweep", spec, "--out", tmp_path / "sweep", "--backend",
                       "serial", "--no-progress")
    assert code == 0, err
    for ext in ("png", "svg", "pdf"):
        out = tmp_path / f"fig.{ext}"
        code, _, err = run(capsys, "plot", tmp_path / "sweep", "--preset", "privacy-vs-n",
                           "--out", out)
        assert code == 0, err
    assert_image(tmp_path / "fig.png", captured[:1])
    assert (tmp_path / "fig.svg").read_text().lstrip().startswith("<?xml")
    assert "<svg" in (tmp_path / "fig.svg").read_text()[:2000]
    assert (tmp_path / "fig.pdf").read_bytes()[:5] == b"%PDF-"
    labels = [t.get_text() for leg in captured[-1].legends for t in leg.get_texts()]
    assert "LDP" in labels and "theory complete-ndp-chernoff (δ = 1e-06)" in labels
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig.pdf", "fig.png", "fig.svg",
                                                         "spec.toml", "sweep"]


def test_utility_vs_eps_preset(capsys, tmp_path, utility_csv, captured):
    out = tmp_path / "util.png"
    code, _, err = run(capsys, "plot", utility_csv, "--preset", "utility-vs-eps", "--out",
                       out)
    assert code == 0, err
    ax = captured[-1].axes[0]
    assert ax.get_ylabel().startswith("absolute error")
    assert ax.get_xlabel().startswith("ε0")
    assert_image(out, captured)


def test_many_groups_with_bands_draw_one_panel_each():
    """Beyond FACET_GROUPS groups the bands hid each other on one axes (issue 40): one
    panel per group then, its name on top, its band in it; up to FACET_GROUPS, one
    axes as before."""
    rng = np.random.default_rng(0)
    rows = [{"task": "sum", "nodes": n, "steps": 100 * n, "eps0": e, "seed": s,
             "abs_error": abs(rng.normal(0, 1 / (e * n))), "theoretical_std": 1 / (e * n)}
            for n in (10, 20, 40, 80, 160, 320) for e in (0.1, 0.5, 1.0) for s in (1, 2, 3)]
    df = pd.DataFrame(rows)
    fig = plots.utility_vs_eps(df, hue=None)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == 6 and len(fig.axes) == 8  # two rows of four, two left blank
    assert [ax.get_title().replace("\xa0", " ") for ax in panels] == [f"n = {n}, T = {100 * n}"
                                                 for n in (10, 20, 40, 80, 160, 320)]
    for ax in panels:  # each panel: its band and its two lines
        assert len(ax.collections) == 1 and len(ax.lines) == 2
    assert data_ink(fig) > 0.005
    few = plots.utility_vs_eps(df[df.nodes <= 80], hue=None)
    assert len(few.axes) == 1 and len(few.axes[0].collections) == 4


def test_generic_columns_and_where(capsys, tmp_path, utility_csv, captured):
    out = tmp_path / "cols.svg"
    code, _, err = run(capsys, "plot", utility_csv, "--x", "eps0", "--y", "abs_error",
                       "--y", "theoretical_std", "--where", "mechanism=laplace", "--logy",
                       "--out", out)
    assert code == 0, err
    assert data_ink(captured[-1]) > 0.005
    assert "<svg" in out.read_text()[:2000]


def test_same_table_same_bytes(tmp_path, privacy_csv):
    df = plots.read_results(privacy_csv)
    for name in ("a.svg", "b.svg"):
        plots.save(plots.privacy_vs_n(df), tmp_path / name)
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()


# --------------------------------------------------------------------------- aggregation


def test_aggregate_mean_over_seeds_band_over_pairs_and_seeds():
    df = pd.DataFrame({"nodes": [10, 10, 20], "kov_mean": [1.0, 3.0, 5.0],
                       "kov_min": [0.5, 2.0, 4.0], "kov_max": [1.5, 6.0, 7.0]})
    agg = plots.aggregate(df, "nodes", plots.Series("kov", "kov_mean", "kov_min", "kov_max"))
    assert agg["x"].tolist() == [10, 20]
    assert agg["mean"].tolist() == [2.0, 5.0]
    assert agg["min"].tolist() == [0.5, 4.0] and agg["max"].tolist() == [6.0, 7.0]
    assert agg["runs"].tolist() == [2, 1]


def test_groups_split_only_settings_that_vary_at_one_x():
    df = pd.DataFrame({"nodes": [10, 10, 20, 20], "steps": [1000, 1000, 2000, 2000],
                       "mechanism": ["gaussian", "laplace"] * 2, "seed": [1, 1, 1, 1]})
    keys, groups = plots._groups(df, "nodes", None)
    assert keys == ["mechanism"] and len(groups) == 2  # steps follows n: no split


def test_theory_recomputed_when_the_column_is_missing(privacy_csv):
    from netdp.bounds.curves import CURVES

    df = plots.read_results(privacy_csv)
    stored = df["theory_complete-ndp-chernoff"].to_numpy()
    recomputed, kept = plots.theory_columns(df.drop(columns=["theory_complete-ndp-chernoff"]))
    assert kept == ["complete-ndp-chernoff"]
    np.testing.assert_allclose(recomputed["theory_complete-ndp-chernoff"], stored, rtol=1e-12)
    row = df.iloc[0]  # at the report's one target delta (Correction 7)
    z = row["mechanism_sigma"] / row["mechanism_sensitivity"]
    assert stored[0] == pytest.approx(float(CURVES["complete-ndp-chernoff"].at_target(
        row["privacy_target_delta"], z, n=row["nodes"], T=row["steps"], eps0=row["eps0"])))


# --------------------------------------------------------------------------- one run


def test_pairs_preset_runs_one_simulation(capsys, tmp_path, captured):
    out = tmp_path / "pairs.png"
    code, _, err = run(capsys, "plot", "--preset", "pairs", "--nodes", 16, "--seed", 3,
                       "--out", out)
    assert code == 0, err
    fig = captured[-1]
    assert len(fig.axes) == 2
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "240 ordered pairs" in labels  # 16 x 15
    assert any(lab.startswith("LDP") for lab in labels)
    assert any(lab.startswith("theory complete-ndp-chernoff") for lab in labels)
    assert_image(out, captured)


def test_pairs_preset_reads_pairs_out_and_result(capsys, tmp_path, captured):
    npy, res = tmp_path / "p.npy", tmp_path / "r.json"
    code, _, err = run(capsys, "simulate", "-n", 12, "--seed", 2, "--pairs-out", npy,
                       "--out", res)
    assert code == 0, err
    out = tmp_path / "pairs.pdf"
    code, _, err = run(capsys, "plot", "--preset", "pairs", "--pairs", npy, "--result", res,
                       "--out", out)
    assert code == 0, err
    assert out.read_bytes()[:5] == b"%PDF-"
    result = json.loads(res.read_text())
    ldp = result["privacy"]["ldp"]["mean"]
    ax = captured[-1].axes[0]
    xs = [line.get_xdata()[0] for line in ax.lines]
    assert any(x == pytest.approx(np.nanmean(np.load(npy))) for x in xs)
    # the LDP level is marked: a line within the axis, or a marker at its edge
    mark = next(ln for ln in ax.lines if ln.get_label().startswith("LDP"))
    assert f"{ldp:.3g}" in mark.get_label()
    lo, hi = ax.get_xlim()
    assert (lo <= ldp <= hi) != ("off the axis" in mark.get_label())


def test_distance_preset_on_the_ring(capsys, tmp_path, captured):
    out = tmp_path / "dist.png"
    code, _, err = run(capsys, "plot", "--preset", "distance", "--topology", "ring",
                       "--task", "histogram", "--set", "dummies=0", "--nodes", 24,
                       "--node", 6, "--epsilon", 0.5, "--seed", 1, "--out", out)
    assert code == 0, err
    ax = captured[-1].axes[0]
    assert ax.get_xlabel().startswith("shortest-path distance")
    mean_line = next(ln for ln in ax.lines if ln.get_label() == "mean at each distance")
    assert mean_line.get_xdata().tolist() == list(range(1, 24))
    # the 6 nodes just before observer 6 sit in its first, small window: larger loss
    y = mean_line.get_ydata()
    assert y[:6].min() > y[6:].max()
    assert_image(out, captured)


def test_distance_preset_on_a_graph_with_sgd(capsys, tmp_path, captured):
    out = tmp_path / "dist.png"
    code, _, err = run(capsys, "plot", "--preset", "distance", "--task", "sgd",
                       "--topology", "hypercube", "--nodes", 16, "--seed", 1, "--out", out)
    assert code == 0, err
    ax = captured[-1].axes[0]
    mean_line = next(ln for ln in ax.lines if ln.get_label() == "mean at each distance")
    assert mean_line.get_xdata().tolist() == [1, 2, 3, 4]  # the 4-cube's distances
    assert_image(out, captured)


def test_graph_distances_follow_the_flow_of_information():
    n = 7
    # directed ring: u reaches observer v in (v - u) mod n hops
    d = pair_figures.graph_distances(ring(n), 2, "observer")
    assert d.tolist() == [(2 - u) % n for u in range(n)]
    d = pair_figures.graph_distances(ring(n), 2, "source")
    assert d.tolist() == [(v - 2) % n for v in range(n)]
    assert pair_figures.graph_distances(complete(n), 0).tolist() == [0] + [1] * (n - 1)
    import networkx as nx

    path = from_networkx(nx.path_graph(n), "path")
    assert pair_figures.graph_distances(path, 3).tolist() == [3, 2, 1, 0, 1, 2, 3]


def test_distance_figure_from_arrays():
    losses = np.array([np.nan, 1.0, 2.0, 2.0, 4.0])
    dist = np.array([0, 1, 1, 2, 2])
    fig = pair_figures.distance_figure(losses, dist, node=0, refs={"LDP": 5.0})
    mean_line = next(ln for ln in fig.axes[0].lines if ln.get_label().startswith("mean"))
    assert mean_line.get_xdata().tolist() == [1, 2]
    assert mean_line.get_ydata().tolist() == [1.5, 3.0]
    assert data_ink(fig) > 0.005


# --------------------------------------------------------------------------- bad input


@pytest.fixture
def empty_csv(tmp_path, privacy_csv):
    path = tmp_path / "empty.csv"
    path.write_text(privacy_csv.read_text().splitlines()[0] + "\n")
    return path


@pytest.mark.parametrize("argv, flag", [
    (["{privacy}", "--x", "foo", "--y", "privacy"], "--x: unknown column 'foo'"),
    (["{privacy}", "--x", "n", "--y", "bar"], "--y: unknown column 'bar'"),
    (["{privacy}", "--x", "n", "--y", "privacy", "--hue", "baz"], "--hue:"),
    (["{privacy}", "--preset", "nope"], "--preset: invalid choice"),
    (["{empty}", "--preset", "privacy-vs-n"], "DIR:"),
    (["{missing}", "--preset", "privacy-vs-n"], "DIR:"),
    (["--preset", "privacy-vs-n"], "DIR:"),
    (["{privacy}", "--preset", "privacy-vs-n", "--out", "{tmp}/fig.jpg"], "--out:"),
    (["{privacy}", "--preset", "privacy-vs-n", "--where", "mechanism=laplace"], "--where:"),
    (["{privacy}", "--preset", "privacy-vs-n", "--theory", "no-such"], "--theory:"),
    (["{privacy}", "--preset", "privacy-vs-n", "--accountant", "pld"], "--accountant:"),
    (["{privacy}", "--x", "n"], "--y:"),
    (["{privacy}", "--preset", "pairs"], "DIR:"),
    (["--preset", "pairs", "--nodes", "1"], "--nodes:"),
    (["--preset", "distance", "--topology", "hypercube", "--nodes", "256"], "--nodes:"),
    (["--preset", "distance", "--topology", "ring", "--nodes", "8", "--node", "9"],
     "--node:"),
    (["--preset", "pairs", "--pairs", "{missing}"], "--pairs:"),
])
def test_bad_input_one_line_exit_2_nothing_written(capsys, tmp_path, privacy_csv, empty_csv,
                                                  argv, flag):
    names = {"privacy": privacy_csv, "empty": empty_csv, "missing": tmp_path / "none.npy",
             "tmp": tmp_path}
    argv = [a.format(**names) for a in argv]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "fig.png")]
    before = set(tmp_path.iterdir())
    code, out, err = run(capsys, "plot", *argv)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("netdp plot: error: ") and flag in lines[0]
    assert set(tmp_path.iterdir()) == before


def test_save_is_atomic(tmp_path, monkeypatch):
    target = tmp_path / "fig.png"
    target.write_bytes(b"old")
    fig = pair_figures.distance_figure(np.array([1.0, 2.0]), np.array([1, 2]), node=0)

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(fig, "savefig", broken)
    with pytest.raises(RuntimeError):
        plots.save(fig, target)
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["fig.png"]
    with pytest.raises(InputError, match="allowed: .png, .pdf, .svg"):
        plots.save(fig, tmp_path / "fig.gif")


def test_plot_takes_the_simulate_flags_it_forwards(capsys, tmp_path, captured):
    """A one-run preset takes simulate's own flags (here --steps, --mechanism), as
    simulate reads them; a table preset refuses them (one line, exit 2)."""
    out = tmp_path / "h.png"
    code, _, err = run(capsys, "plot", "--preset", "heatmap", "--topology", "hypercube",
                       "--nodes", 16, "--steps", 340, "--mechanism", "laplace", "--seed", 1,
                       "--out", out)
    assert code == 0, err
    title = captured[-1].axes[0].get_title().replace("\xa0", " ")  # no-break spaces
    assert "T = 340" in title and "hypercube" in title
    code, _, err = run(capsys, "plot", "--preset", "privacy-vs-n", str(tmp_path), "--steps",
                       30)
    assert code == 2 and err.startswith("netdp plot: error: --steps: sets up one run")
