"""Protocol audits: the sandwich ε_lb <= tracker ε <= LDP ε for the pairs they sample,
on the ring and the complete graph of every task with a walk tracker."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from netdp.privacy.protocol_audit import audit_protocol, linear_scores
from netdp.tasks import make_config

SETTINGS = {
    "sum-ring": dict(task="sum", topology="ring", nodes=8, rounds=3),
    "sum-complete": dict(task="sum", topology="complete", nodes=8, steps=48),
    "histogram-ring": dict(task="histogram", topology="ring", nodes=8, domain=4),
    "histogram-complete": dict(task="histogram", topology="complete", nodes=8, steps=48,
                               domain=4),
    "sum-gossip-cycle": dict(task="sum", protocol="gossip", topology="cycle", nodes=8,
                             steps=2),
}


@pytest.mark.parametrize("name", list(SETTINGS))
@pytest.mark.parametrize("epsilon", [1.0, 4.0])
def test_sandwich_for_sampled_pairs(name, epsilon):
    config = make_config(dict(SETTINGS[name], seed=3, epsilon=epsilon))
    rng = np.random.default_rng(17)
    for _ in range(2):
        v, u = (int(x) for x in rng.choice(8, size=2, replace=False))
        got = audit_protocol(config, v, u, 600)
        r = got.result
        assert got.sandwich, (f"{name} at eps0 = {epsilon}, pair {u} -> {v}: eps_lb = "
                              f"{r.epsilon_lower}, tracker {got.tracker_epsilon}, LDP "
                              f"{got.ldp_epsilon}")
        assert r.epsilon_lower <= r.ceiling
        if r.gdp_epsilon is not None:
            assert r.gdp_epsilon <= got.tracker_epsilon + 1e-9


def test_the_audit_has_power_on_an_exposed_pair():
    """On the ring the predecessor's value reaches the observer in every turn, under one
    noise draw per turn: at ε0 = 4 over 4 turns the audit proves a real part of it."""
    config = make_config(dict(task="sum", topology="ring", nodes=6, rounds=4, seed=1,
                              epsilon=4.0))
    got = audit_protocol(config, 0, 5, 2000)
    assert got.result.epsilon_lower > 0.5
    assert got.sandwich


def test_gossip_exact_loss_is_checked_from_below():
    """Gossip's view is a Gaussian linear map of the noise, so the Gaussian-DP fit is the
    tight test: a neighbour's ε_lb comes within a factor 2 of the exact joint loss, and a
    node beyond the view's reach (3 hops after 1 step, its rows exactly 0) proves
    nothing, as its tracked loss of 0 says."""
    config = make_config(dict(task="sum", protocol="gossip", topology="cycle", nodes=8,
                              sigma=0.5, steps=1, seed=1))
    near = audit_protocol(config, 0, 1, 4000)
    assert near.sandwich and near.result.gdp_epsilon is not None
    assert 0.5 * near.tracker_epsilon < near.result.gdp_epsilon <= near.tracker_epsilon
    far = audit_protocol(config, 0, 4, 4000)
    assert far.tracker_epsilon == 0.0 and far.result.epsilon_lower == 0.0 and far.sandwich


def test_linear_scores_separate_a_mean_shift():
    rng = np.random.default_rng(2)
    v0 = rng.normal(0, 1, (400, 3))
    v1 = rng.normal(0, 1, (400, 3)) + np.array([0.0, 1.0, 0.0])
    s0, s1 = linear_scores(v0, v1, 200)
    assert s1[200:].mean() - s0[200:].mean() > 0.8


def test_bad_pairs_and_tasks_are_refused():
    from netdp.errors import InputError

    config = make_config(dict(task="sum", topology="ring", nodes=6, seed=1))
    with pytest.raises(InputError, match="node"):
        audit_protocol(config, 2, 2, 100)
    with pytest.raises(InputError, match="observer"):
        audit_protocol(config, 9, 1, 100)
    with pytest.raises(InputError, match="task"):
        audit_protocol(make_config(dict(task="sgd", topology="ring", nodes=6, seed=1)),
                       0, 1, 100)


def test_cli_protocol_audit_json(capsys):
    from netdp.cli import main

    code = main(["audit", "--task", "sum", "--topology", "ring", "--nodes", "6",
                 "--rounds", "2", "--trials", "400", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    a = out["audit"]
    assert {"tracker_epsilon", "ldp_epsilon", "sandwich", "epsilon_lower", "claim_epsilon",
            "violation"} <= set(a)
    assert a["sandwich"] is True and out["node"] == 5  # the predecessor on the ring


def test_a_tracker_that_drops_the_attributable_neighbour_is_caught():
    """A planted tracker bug: it forgets that v knows whom it handed the token to and who
    handed it back, so every
    pair of v gets v's non-attributable (subsampled) loss, the observer's base. On the
    complete graph at ε0 = 4 the most attributed node's view is a Gaussian shift (the walk
    is fixed), so the Gaussian-DP fit is the tight test: with 2000 held-out replays it
    proves more than the buggy figure, and stays below the real tracker's."""
    from netdp.privacy.tracker import walk_losses
    from netdp.tasks import task_of
    from netdp.tasks.setup import Streams

    config = make_config(dict(task="sum", topology="complete", nodes=6, steps=60, seed=2,
                              epsilon=4.0, accountants=["pld"]))
    task = task_of(config)
    setup = task.prepare(config)
    trace = task.trace(setup, Streams(setup.seed, 0))
    holders, v = trace.holders[0], 0
    visits = np.flatnonzero(holders == v)
    ends = [int(holders[k]) for j, i in itertools.pairwise(visits) if i - j >= 2
            for k in {j + 1, i - 1}]  # who v handed the token to, and who handed it back
    u = max(sorted(set(ends)), key=ends.count)  # the most attributable node
    z = setup.mechanism.sigma / setup.mechanism.sensitivity
    buggy = float(walk_losses(trace, 4.0, config.delta, z, "pld").base[v])
    got = audit_protocol(config, v, u, 4000)
    assert got.result.gdp_epsilon is not None
    assert got.result.gdp_epsilon > buggy, (got.result.gdp_epsilon, buggy)
    assert got.sandwich and got.result.gdp_epsilon <= got.tracker_epsilon


@pytest.mark.parametrize(("argv", "flag"), [
    (["--topology", "ring", "--nodes", "5", "--observer", "9"], "--observer"),
    (["--topology", "hypercube", "--nodes", "256"], "--nodes"),
    (["--topology", "ring", "--nodes", "5", "--set", "coalition=\"1,2\""], "--coalition"),
    (["--topology", "ring", "--nodes", "5", "--set", "nope=1"], "--nope"),
])
def test_cli_protocol_bad_input_is_one_line_exit_2(capsys, argv, flag):
    from netdp.cli import main

    code = main(["audit", "--task", "sum", "--trials", "10", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and flag in err, err
