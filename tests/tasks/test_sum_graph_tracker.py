"""The walk sum on any graph: the taboo-chain tracker as the run loop reports it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import view_cap_max

from netdp import simulate
from netdp.core.setup import Streams
from netdp.tasks import make_config, task_of
from netdp.tracking.loss_table import ldp_losses
from netdp.tracking.view_cap import view_caps


def run(keep_pairs: bool = False, **params):
    """A run of the taboo-chain tracker these tests describe: the reference convention
    (the sound one is tested in tests/privacy/test_soundness_property.py)."""
    params.setdefault("convention", "reference")
    return simulate(make_config(task="sum", seed=3, **params), keep_pairs=keep_pairs)


def test_every_pair_is_below_its_view_cap():
    """The invariant: ε(u -> v) <= LDP(K̄(v)), the LDP loss at the largest count of u's
    contributions that a hidden path consistent with v's view allows (spec Correction 6),
    pair by pair, from the run's own trace. On the simple walk a leaf (node 11) hands the
    token straight back to its one neighbour: its pair with that neighbour is attributable
    twice per visit, above its node's realised LDP loss, which is a baseline, not a cap."""
    config = make_config(task="sum", seed=4, topology="karate", steps=1500, walk="simple",
                         convention="reference")
    report = simulate(config, keep_pairs=True)
    task = task_of(config)
    setup = task.prepare(config)
    trace = task.trace(setup, Streams(setup.seed, 0))  # the run's own walk
    # the cap and the baseline at the one target δ (spec Correction 7; --target-delta
    # defaults to --delta), the Gaussian's exact composition as the run reports them
    z = setup.mechanism.sigma / setup.mechanism.sensitivity
    assert config.report_delta == 1e-6
    caps = view_caps(trace, 1.0, 1e-6, stays=False, target=1e-6,
                     noise_multiplier=z)  # the simple walk never stays
    ldp = ldp_losses(trace, 1.0, 1e-6, target=1e-6, noise_multiplier=z)
    M = report.pairs
    assert M is not None and M.shape == (34, 34)
    off = ~np.eye(34, dtype=bool)
    assert np.all(M[off] >= 0)
    assert np.all(M[off] <= np.repeat(caps[None, :], 34, axis=0)[off] + 1e-12)
    assert np.nanmean(M) == pytest.approx(report.privacy.empirical[0].mean, rel=1e-9)
    assert np.any(M[off] > np.repeat(ldp[:, None], 34, axis=1)[off])  # no realised cap


def test_neighbours_lose_more_than_far_nodes_on_a_grid():
    report = run(topology="grid", nodes=100, steps=4000, keep_pairs=True)
    M = report.pairs
    assert M is not None
    side = 10
    coords = np.array([(u // side, u % side) for u in range(100)])
    hops = np.abs(coords[:, None, :] - coords[None, :, :]).sum(axis=2)
    near = M[hops == 1].mean()
    far = M[hops >= 10].mean()
    assert near > 2 * far


def test_large_graphs_sample_observers_and_say_so():
    report = run(topology="hypercube", nodes=256, steps=5000, sources=5)
    (kov,) = report.privacy.empirical
    assert kov.pairs == 5 * 255
    assert "5 of 256 observers, sampled" in report.privacy.note
    assert "standard error" in report.privacy.note
    same = run(topology="hypercube", nodes=256, steps=5000, sources=5)
    assert same.privacy.empirical[0].mean == kov.mean  # one seed, one sample


def test_sampled_observers_refuse_a_pairs_matrix(capsys):
    from netdp.run.cli import main

    code = main(["simulate", "--topology", "hypercube", "--nodes", "256", "--steps", "3000",
                 "--pairs-out", "x.npy"])
    err = capsys.readouterr().err
    assert code == 2 and "--pairs-out" in err and "--sources 256" in err
    assert "Traceback" not in err


def test_exact_beside_another_accountant_runs_on_sampled_observers():
    """The exact accountant keeps its pairs to give each other accountant's ratio to it;
    that is no matrix, so sampled observers do not refuse it (it was refused with the
    --pairs-out line, a flag the user never gave)."""
    report = run(topology="hypercube", nodes=16, steps=48, sources=2, convention="sound",
                 accountants=("rdp", "exact"))
    rdp, exact = report.privacy.empirical
    assert rdp.pairs == exact.pairs == 2 * 15
    assert rdp.to_exact and rdp.to_exact["mean"] >= 1 - 1e-9  # sound: never below exact


def test_pld_is_refused_on_a_graph_with_the_allowed_accountants(capsys):
    """The reference convention on a graph has kov and rdp only; the sound one also pld
    and exact (small graphs)."""
    from netdp.run.cli import main

    code = main(["simulate", "--topology", "karate", "--steps", "500", "--accountant", "pld",
                 "--convention", "reference"])
    err = capsys.readouterr().err
    assert code == 2 and "kov or rdp" in err


def test_json_carries_the_tracker_and_the_closed_form(capsys):
    from netdp.run.cli import main

    assert main(["simulate", "--topology", "torus", "--nodes", "64", "--steps", "3000",
                 "--accountant", "kov", "--accountant", "rdp", "--convention", "reference",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    privacy = out["privacy"]
    assert [e["accountant"] for e in privacy["empirical"]] == ["kov", "rdp"]
    assert privacy["theory"]["graph-walk-icml2024"] > 0
    for e in privacy["empirical"]:
        assert 0 < e["mean"] <= e["max"] <= view_cap_max(out["config"])
        assert e["pairs"] == 64 * 63


def test_coalition_on_a_graph_is_one_observer():
    report = run(topology="hypercube", nodes=32, steps=3000, coalition="0,1")
    (kov,) = report.privacy.empirical
    assert kov.pairs == 30
    assert report.privacy.coalitions == ((0, 1),)


def test_by_distance_rows_partition_the_pairs():
    report = run(topology="grid", nodes=64, steps=3000, keep_pairs=True)
    (kov,) = report.privacy.empirical
    rows = kov.by_distance
    assert [r.distance for r in rows] == list(range(1, 15))  # 8 x 8 grid: 1..14 hops
    assert sum(r.pairs for r in rows) == kov.pairs == 64 * 63
    assert sum(r.mean * r.pairs for r in rows) / kov.pairs == pytest.approx(kov.mean)
    assert min(r.min for r in rows) == kov.min and max(r.max for r in rows) == kov.max
    M = report.pairs
    assert M is not None
    coords = np.array([(u // 8, u % 8) for u in range(64)])
    hops = np.abs(coords[:, None, :] - coords[None, :, :]).sum(axis=2)
    assert rows[0].mean == pytest.approx(M[hops == 1].mean())
    assert rows[0].mean > rows[-1].mean
