"""``netdp plot --preset by-distance`` and ``--preset heatmap``: real content, the numbers of
the result files, same input same bytes, bad input one line and exit 2."""

from __future__ import annotations

import json

import numpy as np
import pytest
from figure_checks import assert_image, run
from matplotlib.image import imread

from netdp.report import pair_figures
from netdp.run.cli import main


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Gossip (hypercube Q4, σ = 1, α = 2, with its pairs) and sgd (Q4) result files."""
    folder = tmp_path_factory.mktemp("runs")
    gossip, sgd = folder / "gossip.json", folder / "sgd.json"
    pairs = folder / "gossip.npy"
    assert main(["simulate", "--task", "sum", "--protocol", "gossip", "--topology",
                 "hypercube", "-n", "16", "--sigma", "1", "--rdp-order", "2", "--seed", "1",
                 "--pairs-out", str(pairs), "--out", str(gossip)]) == 0
    assert main(["simulate", "--task", "sgd", "--topology", "hypercube", "-n", "16",
                 "--seed", "1", "--out", str(sgd)]) == 0
    complete = folder / "complete.json"  # a run without by_distance
    assert main(["simulate", "-n", "8", "--seed", "1", "--out", str(complete)]) == 0
    return {"gossip": gossip, "sgd": sgd, "pairs": pairs, "complete": complete,
            "folder": folder}


def _line_with(ax, ys, tol=1e-12):
    """The line of ``ax`` whose y data equal ``ys``."""
    for line in ax.lines:
        y = np.asarray(line.get_ydata(), dtype=float)
        if y.shape == np.shape(ys) and np.allclose(y, ys, rtol=0, atol=tol):
            return line
    raise AssertionError(f"no line with y = {ys}")


def _hlines(ax) -> list[float]:
    return [float(line.get_ydata()[0]) for line in ax.lines
            if len(set(np.asarray(line.get_ydata(), dtype=float))) == 1
            and list(line.get_xdata()) == [0, 1]]


# --------------------------------------------------------------------------- by distance


def test_by_distance_draws_every_run_with_its_band_and_ldp(capsys, tmp_path, runs, captured):
    out = tmp_path / "bd.png"
    code, _, err = run(capsys, "plot", "--preset", "by-distance", "--result", runs["gossip"],
                       "--result", runs["sgd"], "--logy", "--out", out)
    assert code == 0, err
    ax = captured[-1].axes[0]
    gossip = json.loads(runs["gossip"].read_text())["privacy"]
    sgd = json.loads(runs["sgd"].read_text())["privacy"]
    for priv in (gossip, sgd):
        rows = priv["empirical"][0]["by_distance"]
        line = _line_with(ax, [r["mean"] for r in rows])
        assert list(line.get_xdata()) == [1, 2, 3, 4]  # Q4: integer distances, linear
    assert ax.get_xscale() == "linear" and ax.get_yscale() == "log"
    levels = _hlines(ax)
    assert gossip["ldp"]["mean"] == pytest.approx(levels[0])
    assert sgd["empirical"][0]["ldp"]["mean"] == pytest.approx(levels[1])
    spread = [any(r["max"] - r["min"] > 1e-9 * max(1.0, abs(r["mean"]))
                  for r in priv["empirical"][0]["by_distance"]) for priv in (gossip, sgd)]
    assert spread[1]  # the sgd walk's pairs differ within a distance
    assert len(ax.collections) == sum(spread)  # a min-max band for each run with a spread
    texts = [t.get_text() for t in captured[-1].legends[0].get_texts()]
    assert any(t.startswith("sum/gossip on hypercube (n=16)") for t in texts)
    assert any("sgd/walk on hypercube (n=16), network" in t for t in texts)
    assert_image(out, captured)


def test_by_distance_renyi_is_the_hypercube_closed_form(capsys, tmp_path, runs, captured):
    """Q4 with T >= 4: the exact joint loss is d / C(d, k) (1 at the antipode), in nats at
    α = 2, σ = 1 (LDP level 1)."""
    out = tmp_path / "renyi.png"
    code, _, err = run(capsys, "plot", "--preset", "by-distance", "--result", runs["gossip"],
                       "--y", "renyi", "--out", out)
    assert code == 0, err
    ax = captured[-1].axes[0]
    _line_with(ax, [1.0, 4 / 6, 1.0, 1.0], tol=1e-9)
    assert _hlines(ax) == [pytest.approx(1.0)]
    assert "α = 2" in ax.get_ylabel() and ax.get_yscale() == "linear"
    assert not ax.collections  # every pair at a distance alike: no band
    assert_image(out, captured)


def test_by_distance_draws_a_theory_given_per_distance(capsys, tmp_path, runs, captured):
    result = json.loads(runs["gossip"].read_text())
    rows = [{"distance": k, "mean": 1.0 / k, "min": 1.0 / k, "max": 1.0 / k} for k in (1, 2, 3)]
    result["privacy"]["theory_by_distance"] = {"demo": rows}
    path = tmp_path / "with_theory.json"
    path.write_text(json.dumps(result))
    code, _, err = run(capsys, "plot", "--preset", "by-distance", "--result", path,
                       "--out", tmp_path / "t.png")
    assert code == 0, err
    line = _line_with(captured[-1].axes[0], [1.0, 0.5, 1 / 3])
    assert line.get_linestyle() == "-."
    code, _, err = run(capsys, "plot", "--preset", "by-distance", "--result", path,
                       "--theory", "other", "--out", tmp_path / "u.png")
    assert code == 2 and "--theory:" in err and "demo" in err


def test_two_runs_of_one_setting_are_told_apart_by_file(capsys, tmp_path, runs, captured):
    copy = tmp_path / "again.json"
    copy.write_text(runs["sgd"].read_text())
    code, _, err = run(capsys, "plot", "--preset", "by-distance", "--result", runs["sgd"],
                       "--result", copy, "--out", tmp_path / "two.png")
    assert code == 0, err
    texts = [t.get_text() for t in captured[-1].legends[0].get_texts()]
    assert any("[sgd.json]" in t for t in texts) and any("[again.json]" in t for t in texts)


def test_distance_series_from_a_dict():
    result = {"config": {"task": "sum", "protocol": "gossip"}, "topology": "cycle (n=6, 6 edges)",
              "privacy": {"sigma": 2.0, "ldp": {"mean": 3.0}, "empirical": [
                  {"by_distance": [{"distance": 2, "mean": 0.5, "min": 0.25, "max": 1.0},
                                   {"distance": 1, "mean": 1.0, "min": 1.0, "max": 1.0}],
                   "renyi": {"order": 4, "by_distance": [
                       {"distance": 1, "mean": 0.5, "min": 0.5, "max": 0.5}]}}]}}
    (eps,) = pair_figures.distance_series(result)
    assert eps.label == "sum/gossip on cycle (n=6)"
    assert eps.distance.tolist() == [1, 2] and eps.mean.tolist() == [1.0, 0.5]
    assert eps.lo.tolist() == [1.0, 0.25] and eps.ldp == 3.0
    (ren,) = pair_figures.distance_series(result, y="renyi")
    assert ren.ldp == pytest.approx(4 / (2 * 2.0**2))  # α / (2σ²)
    assert ren.mean.tolist() == [0.5]


# --------------------------------------------------------------------------- heatmap


def test_heatmap_from_pairs_orders_by_distance(capsys, tmp_path, runs, captured):
    out = tmp_path / "heat.png"
    code, _, err = run(capsys, "plot", "--preset", "heatmap", "--pairs", runs["pairs"],
                       "--result", runs["gossip"], "--task", "sum", "--protocol", "gossip",
                       "--topology", "hypercube", "--set", "sigma=1", "--node", 5,
                       "--seed", 1, "--out", out)
    assert code == 0, err
    fig = captured[-1]
    ax = fig.axes[0]
    shown = np.ma.getdata(ax.images[0].get_array()).astype(float)
    mask = np.ma.getmaskarray(ax.images[0].get_array())
    matrix = np.load(runs["pairs"])
    hamming = np.array([bin(u ^ 5).count("1") for u in range(16)])
    order = np.lexsort((np.arange(16), hamming))
    assert order[0] == 5 and hamming[order].tolist() == sorted(hamming)
    expected = matrix[np.ix_(order, order)]
    assert mask.diagonal().all() and not mask[~np.eye(16, dtype=bool)].any()
    assert np.allclose(shown[~mask], expected[~np.eye(16, dtype=bool)])
    assert len(fig.axes) == 2  # the colour bar
    assert "ε(u → v)" in fig.axes[1].get_ylabel()
    assert len(ax.lines) == 2 * 2 * 4  # two strokes, two axes, between 5 distance blocks
    # every node named in the drawn order; the distance blocks on the top axis
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(u) for u in order]
    assert [t.get_text() for t in ax.child_axes[0].get_xticklabels()] == [
        f"d={d}" for d in range(5)]
    assert ax.images[0].get_cmap().name.startswith("cividis")
    img = imread(out)[..., :3]
    assert img.shape[0] > 300 and img.shape[1] > 400
    # the matrix area holds several distinct colours (not a blank or one-colour image)
    assert len(np.unique((img.reshape(-1, 3) * 255).astype(int), axis=0)) > 20
    assert np.all(img > 0.95, axis=2).mean() < 0.8


def test_heatmap_runs_one_simulation(capsys, tmp_path, captured):
    out = tmp_path / "heat.png"
    code, _, err = run(capsys, "plot", "--preset", "heatmap", "--task", "sgd", "--topology",
                       "hypercube", "-n", 16, "--seed", 1, "--node", 3, "--out", out)
    assert code == 0, err
    ax = captured[-1].axes[0]
    assert ax.images[0].get_array().shape == (16, 16)
    assert "seed 1" in ax.get_title()
    assert_image(out, captured, min_ink=0.1)


def test_heatmap_figure_marks_exposed_pairs():
    m = np.array([[np.nan, 1.0, np.inf], [2.0, np.nan, 3.0], [0.5, 0.25, np.nan]])
    fig = pair_figures.heatmap_figure(m, np.array([0.0, 1.0, 1.0]), node=0)
    assert "exposed" in fig.axes[0].get_title()
    data = fig.axes[0].images[0].get_array()
    assert data[0, 2] > 3.0  # above the colour range: drawn in the "over" colour


# --------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("argv", [
    ["--preset", "by-distance", "--result", "{gossip}", "--result", "{sgd}"],
    ["--preset", "heatmap", "--pairs", "{pairs}", "--task", "sum", "--protocol", "gossip",
     "--topology", "hypercube", "--set", "sigma=1", "--seed", "1"],
])
def test_same_input_same_bytes(capsys, tmp_path, runs, argv):
    argv = [a.format(**runs) for a in argv]
    for name in ("a.png", "b.png", "a.svg", "b.svg"):
        code, _, err = run(capsys, "plot", *argv, "--out", tmp_path / name)
        assert code == 0, err
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("argv, flag", [
    (["--preset", "by-distance", "--result", "{folder}/none.json"], "--result:"),
    (["--preset", "by-distance", "--result", "{complete}"], "--result:"),
    (["--preset", "by-distance", "--result", "{folder}/bad.json"], "--result:"),
    (["--preset", "by-distance", "--result", "{folder}/list.json"], "--result:"),
    (["--preset", "by-distance", "--result", "{sgd}", "--y", "renyi"], "--y:"),
    (["--preset", "by-distance", "--result", "{gossip}", "--y", "mean"], "--y:"),
    (["--preset", "by-distance"], "--result:"),
    (["--preset", "by-distance", "--result", "{gossip}", "--topology", "grid"],
     "--topology:"),
    (["{folder}", "--preset", "by-distance", "--result", "{gossip}"], "DIR:"),
    (["--preset", "heatmap", "--pairs", "{folder}/none.npy"], "--pairs:"),
    (["--preset", "heatmap", "--task", "sgd", "--topology", "hypercube", "-n", "16",
      "--node", "16"], "--node:"),
    (["--preset", "heatmap", "--pairs", "{pairs}", "--result", "{gossip}", "--result",
      "{gossip}"], "--result:"),
    (["--preset", "heatmap", "--task", "sgd", "--topology", "hypercube", "-n", "16",
      "--theory", "x"], "--theory:"),
])
def test_bad_input_one_line_exit_2_nothing_written(capsys, tmp_path, runs, argv, flag):
    (runs["folder"] / "bad.json").write_text("{not json")
    (runs["folder"] / "list.json").write_text("[1, 2]")
    argv = [a.format(**runs) for a in argv] + ["--out", str(tmp_path / "fig.png")]
    code, out, err = run(capsys, "plot", *argv)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("netdp plot: error: ") and flag in lines[0]
    assert not (tmp_path / "fig.png").exists()
