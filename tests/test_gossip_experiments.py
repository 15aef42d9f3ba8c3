"""Smoke tests of the gossip experiments (``experiments/muffliato_hypercube.py``,
``muffliato_grid.py``, ``walk_vs_gossip.py``) on tiny graphs, with the identities their
tables rely on."""

from __future__ import annotations

import csv
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from netdp.graphs import gossip_matrix
from netdp.graphs import topologies as topology
from netdp.tracking import gossip as G
from netdp.tracking import gossip_message_sum

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"experiment_{name}", EXPERIMENTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def assert_png(path: Path) -> None:
    img = imread(path)[..., :3]
    assert img.shape[0] > 300 and img.shape[1] > 400
    assert img.reshape(-1, 3).std(axis=0).max() > 0.05
    assert np.all(img > 0.95, axis=2).mean() < 0.97


def test_muffliato_hypercube_small(tmp_path, capsys):
    exp = load("muffliato_hypercube")
    result = exp.main(["--dim", "5", "--out", str(tmp_path)])
    assert "(a) joint (exact)" in capsys.readouterr().out
    assert result["steps"] >= 5  # the rule: T >= d, so the closed form holds
    for row in result["rows"]:
        k = row["distance"]
        assert row["joint"] == pytest.approx(min(1.0, 5 / math.comb(5, k)) if k < 5 else 1.0,
                                             abs=1e-9)
        assert row["closed_form"] == pytest.approx(row["joint"], abs=1e-9)
        # the off-by-one drops the t = 0 term: 1 on the source's neighbours, else 0
        assert row["sum_1_to_T_raw"] == pytest.approx(row["sum_raw"] - (k == 1), abs=1e-12)
        assert row["accel_wt"] == row["sum"]  # W^t in place of P_t: the plain figure
        assert row["sum_0_to_Tm1_raw"] <= row["sum_raw"]
    table = rows(tmp_path / "muffliato_hypercube.csv")
    assert [r["distance"] for r in table] == ["1", "2", "3", "4", "5", "all"]
    assert float(table[-1]["pairs_per_node"]) == 31
    assert_png(tmp_path / "muffliato_hypercube.png")


@pytest.mark.parametrize("corner", ["exact", "sample"])
def test_muffliato_grid_small_matches_all_observers(tmp_path, capsys, corner):
    """The orbit shortcut gives the column of the dense joint matrix (every observer);
    the message sum's row is the dense one's."""
    exp = load("muffliato_grid")
    side = 7
    result = exp.main(["--side", str(side), "--steps", "4", "--centre", "exact",
                       "--corner", corner, "--out", str(tmp_path)])
    assert "source centre (3, 3) = node 24" in capsys.readouterr().out
    topo = topology.build("grid", side * side)
    W, adj = gossip_matrix.metropolis(topo), gossip_matrix.adjacency(topo)
    joint = G.joint(W, adj, 4).matrix()  # sources on rows
    msum = gossip_message_sum.message_sum(W, adj, 4).matrix()
    for name, u in result["sources"].items():
        dist = gossip_matrix.hop_distances(adj, [u])[0]
        label = "joint" if name == "centre" or corner == "exact" else "joint (sampled)"
        for r in result["rows"][(name, label)]:
            at = (dist == r["distance"])
            expect = joint[u, at]
            if label == "joint":
                assert r["observers"] == at.sum()
                assert r["mean"] == pytest.approx(expect.mean(), abs=1e-9)
            assert expect.min() - 1e-9 <= r["min"] <= r["max"] <= expect.max() + 1e-9
        for r in result["rows"][(name, "sum")]:
            at = dist == r["distance"]
            assert r["mean"] == pytest.approx(msum[u, at].mean(), abs=1e-12)
    assert result["computed"]["centre"] < side * side - 1  # the symmetry saved work
    table = rows(tmp_path / "muffliato_grid.csv")
    assert {r["source"] for r in table} == {"centre", "corner"}
    assert_png(tmp_path / "muffliato_grid.png")


def test_grid_orbits_are_the_symmetries_fixing_the_source():
    exp = load("muffliato_grid")
    rep = exp.orbits(5, (2, 2))  # the centre: 8 symmetries
    assert len(np.unique(rep)) == 6  # (0,0) (0,1) (0,2) (1,1) (1,2) (2,2) up to symmetry
    rep = exp.orbits(5, (0, 0))  # the corner: the diagonal reflection only
    assert len(np.unique(rep)) == 15  # 5 on the diagonal + 20 / 2 off it
    assert rep[1 * 5 + 3] == rep[3 * 5 + 1] and rep[1 * 5 + 3] != rep[3 * 5 + 2]


def test_walk_vs_gossip_small(tmp_path, capsys):
    exp = load("walk_vs_gossip")
    result = exp.main(["--nodes", "40", "--walks", "4", "--extra-steps", "3",
                       "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "crossing, gossip joint vs walk:" in out
    assert set(result["runs"]) == {result["steps"], 3}
    for run in result["runs"].values():
        for k, r in run["rows"]["joint"].items():
            assert 0 <= r["min"] <= r["mean"] <= r["max"] <= 1 + 1e-12
            assert run["rows"]["walk"][k]["pairs"] == r["pairs"]
    table = rows(tmp_path / "walk_vs_gossip.csv")
    assert {int(r["steps"]) for r in table} == {result["steps"], 3}
    assert_png(tmp_path / "walk_vs_gossip.png")


def test_crossing_is_interpolated_in_log_space():
    exp = load("walk_vs_gossip")
    at, text = exp.crossing({1: 1.0, 2: 0.1, 3: 0.001}, {1: 0.1, 2: 0.01, 3: 0.01})
    assert at == pytest.approx(2.5) and "between distances 2 and 3" in text
    assert exp.crossing({1: 1.0, 2: 1.0}, {1: 0.5, 2: 0.1})[0] is None
    assert "above" in exp.crossing({1: 1.0, 2: 1.0}, {1: 0.5, 2: 0.1})[1]
    assert "below" in exp.crossing({1: 0.1}, {1: 0.5})[1]


def test_decor_gossip_small_identities(tmp_path, capsys):
    """One small cell: the exact mean is netdp's report, the equal-privacy σ' gives the
    independent noise that mean, and SecLDP's figure is σ² (Σ⁻¹)_uu converted."""
    from netdp import simulate
    from netdp.tasks import make_config
    from netdp.tracking.gossip import coefficient_epsilon

    exp = load("decor_gossip")
    out = tmp_path / "decor.csv"
    assert exp.main(["--cells", "cycle:8", "--decor", "2", "--out", str(out)]) == 0
    assert "| cycle | 8 |" in capsys.readouterr().out
    table = rows(out)
    first = table[0]
    report = simulate(make_config(task="sum", protocol="gossip", topology="cycle", nodes=8,
                                  sigma=1.0, correlated_noise=2.0, seed=1,
                                  accountants=("pld",), target_delta=1e-6))
    assert float(first["cell_exact_mean"]) == pytest.approx(
        report.to_json()["privacy"]["empirical"][0]["mean"], rel=1e-12)
    assert sum(int(r["pairs"]) for r in table) == 56
    plan = gossip_matrix.GossipPlan.build(topology.build("cycle", 8), "metropolis", False)
    plain = G.joint(plan.W, plan.adj, int(first["steps"]))
    coef = plain.matrix()[~np.eye(8, dtype=bool)]
    equal = coefficient_epsilon(coef, float(first["equal_sigma"]), 1e-6, "pld").mean()
    assert equal == pytest.approx(float(first["cell_exact_mean"]), rel=1e-9)
    assert float(first["decor_noise_rmse"]) < float(first["independent_noise_rmse"])


@pytest.mark.slow
def test_decor_gossip_regenerates_the_docs_table(tmp_path, capsys):
    """docs/gossip.md's DECOR table and its CSV, rerun."""
    exp = load("decor_gossip")
    out = tmp_path / "decor.csv"
    assert exp.main(["--out", str(out)]) == 0
    printed = capsys.readouterr().out
    page = (EXPERIMENTS.parent / "docs" / "gossip.md").read_text(encoding="utf-8")
    for line in printed.splitlines():
        assert line in page, line
    committed = rows(EXPERIMENTS.parent / "docs" / "figures" / "decor_gossip.csv")
    fresh = rows(out)
    assert len(committed) == len(fresh)
    for old, new in zip(committed, fresh, strict=True):
        for key, value in old.items():
            try:
                assert float(new[key]) == pytest.approx(float(value), rel=1e-9), key
            except ValueError:
                assert new[key] == value


def test_compare_protocols_small_equal_utility(tmp_path, capsys):
    """One small cell: every protocol's noise in its estimate is the target (the gossip
    ones exactly, the walk's by netdp's own closed form), and each exact row is netdp's."""
    exp = load("compare_protocols")
    out = tmp_path / "cmp.csv"
    assert exp.main(["--cells", "cycle:8", "--walk-sources", "2", "--out", str(out)]) == 0
    assert "| cycle:8 | 8 | decor |" in capsys.readouterr().out
    table = rows(out)
    whole = {r["protocol"]: r for r in table if r["distance"] == "all"}
    assert set(whole) == {"gossip", "pairwise", "decor", "walk"}
    for name, r in whole.items():
        rel = 1e-9 if name != "walk" else 1e-3
        assert float(r["noise_std"]) == pytest.approx(float(r["target_std"]), rel=rel), name
    lines = {(r["protocol"], r["line"]) for r in table}
    assert {("gossip", "gossip-message-sum"), ("decor", "decor-secldp"),
            ("walk", "icml2024")} <= lines


@pytest.mark.slow
def test_compare_protocols_regenerates_the_docs_page(tmp_path, capsys):
    """docs/protocols-compared.md's tables, rerun: every printed line is on the page."""
    exp = load("compare_protocols")
    assert exp.main(["--markdown", "--out", str(tmp_path / "cmp.csv")]) == 0
    printed = capsys.readouterr().out
    page = (EXPERIMENTS.parent / "docs" / "protocols-compared.md").read_text(encoding="utf-8")
    shown = [line for line in printed.splitlines() if line.startswith("|")]
    summary = [line for line in shown if line.count("|") == 9]
    assert summary and all(line in page for line in summary)
    for graph in ("hypercube:64", "grid:64"):
        block = printed.split(f"\n{graph}\n\n", 1)[1].split("\n\n", 1)[0]
        assert block in page, graph
