"""Smoke test of ``experiments/collusion.py`` on a tiny grid (n = 32), with the invariants
its figure relies on: shares in [0, 1], the ring's exposure growing with the coalition,
mean <= max <= LDP, the CSV's columns, and the sweep specs covering the same grid."""

from __future__ import annotations

import csv
import importlib.util
import math
import tomllib
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
EXPERIMENTS = REPO / "experiments"


def load():
    spec = importlib.util.spec_from_file_location("experiment_collusion",
                                                  EXPERIMENTS / "collusion.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def exp():
    return load()


def test_ladder_runs_from_one_to_half_n(exp):
    assert exp.ladder(64) == [1, 2, 4, 8, 16, 32]
    assert exp.ladder(20) == [1, 2, 4, 8, 10]
    assert exp.ladder(2) == [1]


@pytest.mark.slow
def test_tiny_grid_invariants_and_csv(exp, tmp_path, capsys):
    csv_path, png = tmp_path / "collusion.csv", tmp_path / "collusion.png"
    df = exp.main(["--nodes", "32", "--seeds", "6", "--settings", "ring (walk, K = 3)",
                   "complete (walk)", "hypercube (gossip)", "--csv", str(csv_path),
                   "--out", str(png)])
    assert "coalition_size" in capsys.readouterr().out
    assert png.stat().st_size > 10_000
    with csv_path.open(encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        assert tuple(reader.fieldnames or ()) == exp.COLUMNS
        assert len(list(reader)) == 3 * 5 * 6  # settings x sizes 1..16 x seeds

    share = df["unprotected_fraction"]
    assert ((share >= 0) & (share <= 1)).all()
    assert (df["unprotected"] <= df["pairs"]).all()
    # every node outside the coalition, towards it: n - c pairs per run
    assert (df["pairs"] == 32 - df["coalition_size"]).all()

    table = exp.summary(df)
    ring = table[table["setting"] == "ring (walk, K = 3)"].sort_values("coalition_size")
    fractions = ring["unprotected_fraction"].to_numpy()
    assert fractions[0] == 0.0  # one observer always sees a noise draw in between
    assert fractions[-1] > 0.5  # half the ring colluding exposes most of the rest
    assert all(a <= b for a, b in zip(fractions, fractions[1:], strict=False)), fractions
    # an exposed pair makes the mean and the max infinite
    exposed = df[df["unprotected"] > 0]
    assert len(exposed) and exposed["eps_mean"].map(math.isinf).all()

    assert (df.loc[~df["setting"].str.startswith("ring"), "unprotected"] == 0).all()
    for row in df.itertuples():
        # the mean of equal losses may round one ulp above them; inf: every node exposed
        tol = 1e-12 * row.eps_max if math.isfinite(row.eps_max) else 0.0
        assert row.eps_min - tol <= row.eps_mean <= row.eps_max + tol
        if math.isfinite(row.eps_max) and not row.setting.startswith("complete"):
            assert row.eps_max <= row.ldp_max * (1 + 1e-9)  # complete: see below
    # the per-observer theory is recorded at c = 1 only, for every setting
    assert df.loc[df["coalition_size"] == 1, "theory"].notna().all()
    assert df.loc[df["coalition_size"] > 1, "theory"].isna().all()


def test_complete_graph_coalition_loss_stays_below_ldp(exp):
    """A coalition on the complete graph composes the cycles between all its members'
    visits, and a node's subsampled entries can then pass its own LDP loss (before the
    tracker capped them: 39.1 against an LDP max of 33 at n = 32, T = 800, c = 16); the
    cap keeps every pair at or below its node's LDP level."""
    df = pd.DataFrame(exp.rows(32, 6, [16], ["complete (walk)"]))
    assert (df["eps_max"] <= df["ldp_max"] * (1 + 1e-9)).all(), df[["eps_max", "ldp_max"]]


def test_sweep_specs_cover_the_walk_grid(exp):
    sizes = [f"random:{c}" for c in exp.ladder(64)]
    both = tomllib.loads((EXPERIMENTS / "sweeps" / "collusion.toml").read_text("utf-8"))
    ring = tomllib.loads((EXPERIMENTS / "sweeps" / "collusion_ring.toml").read_text("utf-8"))
    assert both["grid"]["coalition"] == sizes == ring["grid"]["coalition"]
    assert set(both["grid"]["topology"]) == {"complete", "hypercube"}
    assert both["fixed"]["steps"] == exp.SETTINGS["complete (walk)"]["steps"] * 64
    assert ring["fixed"]["rounds"] == exp.SETTINGS["ring (walk, K = 3)"]["rounds"]
