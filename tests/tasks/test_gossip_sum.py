"""Gossip averaging (--task sum --protocol gossip): the states follow W, every node's
estimate has its closed-form error, and the privacy figures are the exact joint losses."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import assert_mean, assert_std_gaussian

from netdp import simulate
from netdp.core.errors import InputError
from netdp.core.setup import Streams
from netdp.engine import averaging
from netdp.run.cli import main
from netdp.tasks import make_config, task_of
from netdp.tasks.preparation import with_seed
from netdp.tracking import gossip_message_sum

RUNS = 300


@pytest.fixture(scope="module")
def many_runs():
    return simulate(make_config(task="sum", protocol="gossip", topology="torus", nodes=16,
                                sigma=0.5, steps=6, runs=RUNS, accountants=(), seed=7))


def test_every_node_ends_at_the_closed_form_law(many_runs):
    """Node v's final state is Gaussian with mean (A_T x)_v and std σΔ ‖(A_T)_{v,:}‖."""
    cfg = many_runs.config
    task = task_of(cfg)
    setup = task.prepare(cfg)
    W, steps = setup.plan.W, setup.steps
    mean = averaging.gossip(W, setup.data, steps)[-1]
    norms = gossip_message_sum.row_norms(W, steps)[-1]
    finals = np.array([o.final for o in many_runs.outcomes])
    for v in (0, 5, 11):
        std = 0.5 * np.sqrt(norms[v])
        assert_mean(finals[:, v], mean[v], std)
        assert_std_gaussian(finals[:, v], std)
    rmse = np.sqrt(np.mean(0.25 * norms + (mean - setup.data.mean()) ** 2))
    assert many_runs.utility.theoretical_rmse == pytest.approx(rmse, rel=1e-12)


def test_a_run_is_the_gossip_of_its_noisy_values():
    cfg = with_seed(make_config(task="sum", protocol="gossip", topology="karate", sigma=2.0,
                                steps=5, seed=3, accelerated=True))
    task = task_of(cfg)
    setup = task.prepare(cfg)
    streams = Streams(setup.seed, 0)
    trace = task.trace(setup, streams)
    outcome = task.run(setup, trace, streams)
    noise = Streams(setup.seed, 0).generator("noise").standard_normal(setup.topology.n)
    states = averaging.gossip(setup.plan.W, setup.data + 2.0 * noise, 5, accelerated=True,
                           gamma=setup.plan.gamma)
    np.testing.assert_allclose(outcome.final, states[-1], rtol=1e-12)
    view = task.view(setup, trace, streams, observer=0)
    neighbours = setup.plan.adj.indices[setup.plan.adj.indptr[0]:setup.plan.adj.indptr[1]]
    assert set(view.token) == set(neighbours.tolist())
    np.testing.assert_allclose(view.received, states[view.step, view.token], rtol=1e-12)
    assert trace.hops == (5 + 1) * 2 * 78  # every directed edge at every step


def test_privacy_is_the_joint_loss_capped_at_ldp_and_summarised_by_distance():
    report = simulate(make_config(task="sum", protocol="gossip", topology="hypercube",
                                  nodes=32, sigma=1.0, seed=1), keep_pairs=True)
    priv = report.privacy
    (row,) = priv.empirical
    assert row.max <= priv.ldp.max + 1e-12 and row.pairs == 32 * 31
    matrix = report.pairs
    off = ~np.isnan(matrix)
    assert matrix[off].mean() == pytest.approx(row.mean, rel=1e-12)  # dense == transitive
    (rows,) = priv.by_distance
    assert sum(r.pairs for r in rows) == 32 * 31
    assert "joint" in priv.method and "gossip-message-sum" in priv.theory
    assert report.config.section.sigma == 1.0 and report.config.steps > 0


def test_sampled_observers_report_their_standard_error():
    report = simulate(make_config(task="sum", protocol="gossip", topology="karate", sigma=1.0,
                                  sources=8, seed=2))
    assert "sampled, 8 observers" in report.privacy.method
    assert report.privacy.empirical[0].pairs == 34 * 33


@pytest.mark.parametrize(("params", "param"), [
    ({"topology": "ring"}, "topology"),
    ({"tokens": 2}, "tokens"),
    ({"walk": "metropolis", "topology": "karate"}, "walk"),
    ({"accountants": ("kov",)}, "accountant"),
])
def test_what_gossip_does_not_use_is_refused(params, param):
    with pytest.raises(InputError) as err:
        make_config(task="sum", protocol="gossip", **params)
    assert err.value.param == param


def test_the_cli_runs_it_and_other_tasks_refuse_the_protocol(capsys, tmp_path):
    assert main(["simulate", "--protocol", "gossip", "--topology", "cycle", "-n", "12",
                 "--sigma", "1", "--rdp-order", "2", "--seed", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    renyi = out["privacy"]["empirical"][0]["renyi"]
    assert renyi["order"] == 2.0 and renyi["by_distance"][0]["distance"] == 1
    assert out["config"]["protocol"] == "gossip"
    assert main(["simulate", "--task", "histogram", "--protocol", "gossip"]) == 2
    assert "--protocol: --task histogram runs on walk" in capsys.readouterr().err
    assert main(["simulate", "--sigma", "1"]) == 2
    assert ("applies to --task sum --protocol gossip or sgd --protocol gossip only"
            in capsys.readouterr().err)


def test_renyi_rows_count_the_pairs_they_stand_for():
    """Regression: on a vertex-transitive graph the renyi rows counted one observer's
    pairs (6, 15, 20, ...), the epsilon rows every ordered pair they stand for."""
    from netdp.run.api import simulate

    res = simulate({"task": "sum", "protocol": "gossip", "topology": "hypercube",
                    "nodes": 64, "sigma": 1.0, "rdp_order": 2.0, "seed": 1}).to_dict()
    row = res["privacy"]["empirical"][0]
    eps_pairs = [r["pairs"] for r in row["by_distance"]]
    renyi_pairs = [r["pairs"] for r in row["renyi"]["by_distance"]]
    assert eps_pairs == [64 * math.comb(6, k) for k in range(1, 7)]  # every ordered pair
    assert renyi_pairs == eps_pairs


def test_exact_accountant_in_a_run():
    """``--accountant pld`` beside ``rdp``: every pair below its rdp figure and below the
    exact LDP level, which equals the target ε when σ is calibrated to it (analytic
    Gaussian: the same curve)."""
    res = simulate({"task": "sum", "protocol": "gossip", "topology": "grid", "nodes": 49,
                    "epsilon": 2.0, "delta": 1e-5, "accountants": ["pld", "rdp"],
                    "seed": 3}).to_dict()
    priv = res["privacy"]
    pld, rdp = priv["empirical"]
    assert (pld["accountant"], rdp["accountant"]) == ("pld", "rdp")
    assert priv["ldp"]["max"] == pytest.approx(2.0, rel=1e-9)
    assert pld["max"] <= priv["ldp"]["max"] * (1 + 1e-12)
    for a, b in zip(pld["by_distance"], rdp["by_distance"], strict=True):
        assert a["distance"] == b["distance"] and a["pairs"] == b["pairs"]
        assert a["max"] <= b["max"] and a["mean"] <= b["mean"]
    assert pld["mean"] < rdp["mean"]


def test_a_view_of_full_rank_is_reported_exact():
    """On the cycle at the rule's T every observer rebuilds every noisy value: the report
    says so (proven modulo a prime), and every pair is at the LDP level."""
    res = simulate({"task": "sum", "protocol": "gossip", "topology": "cycle", "nodes": 64,
                    "sigma": 1.0, "seed": 1}).to_dict()["privacy"]
    assert "have full rank" in res["note"] and "could not be certified" not in res["note"]
    assert res["empirical"][0]["min"] == pytest.approx(res["ldp"]["max"], rel=1e-12)


def test_a_coalition_pools_its_views():
    """``--coalition``: every other node's loss towards the coalition is at least its loss
    towards each member alone (the same run's pairwise matrix) and at most the LDP level;
    distances are hops to the nearest member."""
    base = {"task": "sum", "protocol": "gossip", "topology": "hypercube", "nodes": 64,
            "sigma": 1.0, "seed": 1}
    alone = simulate(make_config(**base), keep_pairs=True).pairs
    pooled = simulate({**base, "coalition": "0,1,2"}).to_dict()["privacy"]
    (row,) = pooled["empirical"]
    assert row["pairs"] == 61 and pooled["coalitions"] == [[0, 1, 2]]
    assert row["max"] <= pooled["ldp"]["max"] * (1 + 1e-12)
    floor = np.delete(np.nanmax(alone[:, [0, 1, 2]], axis=1), [0, 1, 2])
    assert row["min"] >= floor.min() - 1e-9 and row["mean"] >= floor.mean() - 1e-9
    assert sum(r["pairs"] for r in row["by_distance"]) == 61
    assert row["by_distance"][0]["distance"] == 1
    assert "coalition" in pooled["method"]


def test_random_coalitions_are_drawn_per_run_and_reproducible():
    cfg = {"task": "sum", "protocol": "gossip", "topology": "grid", "nodes": 49,
           "sigma": 1.0, "coalition": "random:3", "runs": 3, "seed": 5}
    first = simulate(cfg).to_dict()["privacy"]
    again = simulate(cfg).to_dict()["privacy"]
    assert first == again
    assert len(first["coalitions"]) == 3 and all(len(c) == 3 for c in first["coalitions"])
    assert first["empirical"][0]["pairs"] == 3 * (49 - 3)  # every run: the non-members


def test_a_coalition_has_no_pair_matrix():
    with pytest.raises(InputError, match="pairs-out"):
        simulate(make_config(task="sum", protocol="gossip", topology="hypercube", nodes=16,
                             sigma=1.0, coalition="0,1", seed=1), keep_pairs=True)


def test_the_papers_sum_is_given_by_distance_beside_the_exact_loss():
    """``theory_by_distance['gossip-message-sum']`` (and its Rényi twin): every ordered
    pair counted once, the mean equal to the all-pairs theory figure; on the hypercube
    it falls with distance while the exact loss rises again at the antipode."""
    res = simulate({"task": "sum", "protocol": "gossip", "topology": "hypercube",
                    "nodes": 64, "sigma": 1.0, "rdp_order": 2.0, "seed": 1}).to_dict()
    priv = res["privacy"]
    rows = priv["theory_by_distance"]["gossip-message-sum"]
    assert sum(r["pairs"] for r in rows) == 64 * 63
    mean = sum(r["pairs"] * r["mean"] for r in rows) / (64 * 63)
    assert mean == pytest.approx(priv["theory"]["gossip-message-sum"], rel=1e-12)
    means = [r["mean"] for r in rows]
    assert all(a >= b for a, b in zip(means[:-1], means[1:], strict=True))
    exact = priv["empirical"][0]["by_distance"]
    assert exact[-1]["mean"] > rows[-1]["mean"]  # the antipode: exact 1 (LDP), sum small
    renyi = priv["empirical"][0]["renyi"]["theory_by_distance"]["gossip-message-sum"]
    assert [r["pairs"] for r in renyi] == [r["pairs"] for r in rows]
