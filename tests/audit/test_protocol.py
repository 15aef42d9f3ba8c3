"""Protocol audits: the sandwich ε_lb <= tracker ε <= LDP ε for the pairs they sample,
on the ring and the complete graph of every task with a walk tracker."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from netdp.audit.protocol import audit_protocol, linear_scores
from netdp.tasks import make_config

SETTINGS = {
    "sum-ring": dict(task="sum", topology="ring", nodes=8, rounds=3),
    "sum-complete": dict(task="sum", topology="complete", nodes=8, steps=48),
    "histogram-ring": dict(task="histogram", topology="ring", nodes=8, domain=4),
    "histogram-complete": dict(task="histogram", topology="complete", nodes=8, steps=48,
                               domain=4),
    "sum-gossip-cycle": dict(task="sum", protocol="gossip", topology="cycle", nodes=8,
                             steps=2),
    "sgd-ring": dict(task="sgd", topology="ring", nodes=8, rounds=3, dataset="synthetic",
                     model="linear"),
    "sgd-complete": dict(task="sgd", topology="complete", nodes=8, steps=32,
                         dataset="synthetic"),
    "sgd-gossip-cycle": dict(task="sgd", protocol="gossip", topology="cycle", nodes=8,
                             steps=2, dataset="synthetic", model="linear"),
    "fraction-complete": dict(task="fraction", topology="complete", nodes=8, steps=48),
}
TRIALS = {"sgd-complete": 300, "sgd-gossip-cycle": 200}  # a replay trains a model


@pytest.mark.parametrize("name", list(SETTINGS))
@pytest.mark.parametrize("epsilon", [1.0, 4.0])
def test_sandwich_for_sampled_pairs(name, epsilon):
    config = make_config(dict(SETTINGS[name], seed=3, epsilon=epsilon))
    rng = np.random.default_rng(17)
    for _ in range(2):
        v, u = (int(x) for x in rng.choice(8, size=2, replace=False))
        got = audit_protocol(config, v, u, TRIALS.get(name, 600))
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


def test_the_sgd_audit_has_power_on_an_exposed_pair():
    """sgd on a ring of 4: the canary's clipped update reaches its successor under its own
    noise and the 2 updates since the observer's last visit, 3 turns; at ε = 16 500
    held-out replays prove ε_lb of about 1.8, below the tracker's 18.5 (which assumes the
    observer knows the model before the update, the worst case)."""
    config = make_config(dict(task="sgd", topology="ring", nodes=4, rounds=3, seed=3,
                              epsilon=16.0, dataset="synthetic", model="linear"))
    got = audit_protocol(config, 0, 3, 1000)
    assert got.result.epsilon_lower > 1.0
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


def test_bad_pairs_and_tasks_are_refused(monkeypatch):
    from netdp.audit import protocol
    from netdp.core.errors import InputError

    config = make_config(dict(task="sum", topology="ring", nodes=6, seed=1))
    with pytest.raises(InputError, match="node"):
        audit_protocol(config, 2, 2, 100)
    with pytest.raises(InputError, match="observer"):
        audit_protocol(config, 9, 1, 100)
    monkeypatch.setattr(protocol, "Auditable", type("Nothing", (), {}))  # declares none
    with pytest.raises(InputError, match="no neighbouring worlds"):
        audit_protocol(config, 0, 1, 100)


def test_cli_protocol_audit_json(capsys):
    from netdp.run.cli import main

    code = main(["audit", "--task", "sum", "--topology", "ring", "--nodes", "6",
                 "--rounds", "2", "--trials", "400", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    a = out["audit"]
    assert {"tracker_epsilon", "ldp_epsilon", "sandwich", "epsilon_lower", "claim_epsilon",
            "violation"} <= set(a)
    assert a["sandwich"] is True and out["node"] == 5  # the predecessor on the ring
    assert out["paths"] == "fixed"  # the ring's path is public: nothing to draw
    for flags, paths in (([], "secret"), (["--fixed-path"], "fixed")):
        code = main(["audit", "--task", "sum", "--topology", "complete", "--nodes", "6",
                     "--trials", "100", "--json", *flags])
        assert code == 0 and json.loads(capsys.readouterr().out)["paths"] == paths


def test_a_tracker_that_drops_the_attributable_neighbour_is_caught():
    """A planted tracker bug: it forgets that v knows whom it handed the token to and who
    handed it back, so every pair of v gets v's non-attributable (subsampled) loss, the
    observer's base. On the complete graph at ε0 = 4 (n = 6, T = 60) that is 3.38 for the
    most attributed node, where the real tracker says 9.19. The hidden paths are drawn
    again in every replay (the trackers' mechanism), so the view is a mixture over paths
    and Clopper-Pearson is the test: 20 000 held-out replays prove 3.68 (9 s)."""
    from netdp.core.setup import Streams
    from netdp.tasks import task_of
    from netdp.tracking.loss_table import walk_losses

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
    buggy = float(walk_losses(trace, 4.0, config.delta, z, "pld",
                              convention="reference").base[v])
    got = audit_protocol(config, v, u, 40_000)
    assert got.paths == "secret" and got.result.gdp_epsilon is None
    assert got.result.epsilon_lower > buggy, (got.result.epsilon_lower, buggy)
    assert got.sandwich


def test_hidden_paths_are_drawn_again_and_the_ring_has_one():
    """The default audit draws the hidden stretches of the walk again per replay: on the
    complete graph the replays' views differ from the fixed-path audit's; on the ring,
    whose path is public, both audits are the same numbers."""
    ring = make_config(dict(SETTINGS["sum-ring"], seed=3, epsilon=4.0))
    secret, fixed = (audit_protocol(ring, 0, 7, 400, paths=p) for p in ("secret", "fixed"))
    assert secret.result == fixed.result and secret.paths == "fixed"
    assert secret.result.gdp_epsilon is not None  # the ring's view is a Gaussian shift
    complete = make_config(dict(SETTINGS["sum-complete"], seed=3, epsilon=4.0))
    secret, fixed = (audit_protocol(complete, 0, 3, 400, paths=p) for p in ("secret", "fixed"))
    assert (secret.paths, fixed.paths) == ("secret", "fixed")
    # a mixture over paths is not a Gaussian shift: no Gaussian-DP fit there
    assert secret.result.gdp_epsilon is None and fixed.result.gdp_epsilon is not None
    assert secret.result.epsilon_lower != fixed.result.epsilon_lower
    assert secret.sandwich and fixed.sandwich


@pytest.mark.parametrize(("argv", "flag"), [
    (["--topology", "ring", "--nodes", "5", "--observer", "9"], "--observer"),
    (["--topology", "hypercube", "--nodes", "256"], "--nodes"),
    (["--topology", "ring", "--nodes", "5", "--coalition", "1,2"], "--node"),
    (["--topology", "ring", "--nodes", "5", "--coalition", "1,2", "--node", "2"], "--node"),
    (["--topology", "ring", "--nodes", "5", "--coalition", "1,9", "--node", "3"],
     "--coalition"),
    (["--topology", "ring", "--nodes", "5", "--set", "nope=1"], "--nope"),
])
def test_cli_protocol_bad_input_is_one_line_exit_2(capsys, argv, flag):
    from netdp.run.cli import main

    code = main(["audit", "--task", "sum", "--trials", "10", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and flag in err, err


def test_a_ring_that_forgets_the_dummies_is_caught(monkeypatch):
    """A planted protocol bug: node 0 opens the ring's histogram token without its dummy
    reports, while the tracker counts on them. Observer 1 then receives node 0's report
    alone, an ε0-LDP release, where the tracker claims the shuffle of that report among
    n - 1 dummies (1.14 at n = 300, ε0 = 2, one turn). 1000 held-out replays per world
    prove about 1.9 (the ceiling of a report at ε0 = 2 is 2); the true protocol proves
    nothing above the tracker's figure."""
    import dataclasses

    from netdp.tasks.histogram import HistogramTask

    config = make_config(dict(task="histogram", topology="ring", nodes=300, rounds=1,
                              seed=1, epsilon=2.0, domain=2))
    honest = audit_protocol(config, 1, 0, 2000)
    assert honest.sandwich and not honest.result.epsilon_lower > honest.tracker_epsilon
    view = HistogramTask.view

    def forgets_the_dummies(self, setup, trace, streams, observer):
        forgetful = dataclasses.replace(setup, config=setup.config.replace(dummies=0))
        return view(self, forgetful, trace, streams, observer)

    monkeypatch.setattr(HistogramTask, "view", forgets_the_dummies)
    buggy = audit_protocol(config, 1, 0, 2000)
    assert buggy.tracker_epsilon == honest.tracker_epsilon  # the tracker still counts them
    assert buggy.result.epsilon_lower > buggy.tracker_epsilon, (
        f"eps_lb {buggy.result.epsilon_lower} vs tracker {buggy.tracker_epsilon}")
    assert not buggy.sandwich


COALITIONS = {name: SETTINGS[name] for name in ("sum-ring", "sum-complete", "histogram-ring",
                                                 "histogram-complete", "sum-gossip-cycle")}


@pytest.mark.parametrize("name", list(COALITIONS))
def test_coalition_sandwich(name):
    """A coalition observes as one, pooling its members' views; the sandwich holds for
    the node between them and for one away from them."""
    config = make_config(dict(COALITIONS[name], seed=3, epsilon=4.0, coalition="1,3"))
    for u in (2, 6):
        got = audit_protocol(config, None, u, 600)
        assert got.coalition == (1, 3) and got.observer == -1
        assert got.sandwich, (f"{name}, {u} -> {{1, 3}}: eps_lb = "
                              f"{got.result.epsilon_lower}, tracker {got.tracker_epsilon}, "
                              f"LDP {got.ldp_epsilon}")


def test_a_coalition_around_a_ring_node_sees_it_in_the_clear():
    """Nodes 1 and 3 hold both ring neighbours of node 2, whose contributions carry no
    noise (one draw per n - 1 hops, none of them 2's): they read x_2 exactly. The tracker
    says so (inf), and the audit proves its ceiling; one node alone proves far less."""
    config = make_config(dict(COALITIONS["sum-ring"], seed=3, epsilon=4.0, coalition="1,3"))
    got = audit_protocol(config, None, 2, 2000)
    assert got.tracker_epsilon == math.inf and got.sandwich
    assert got.result.epsilon_lower == pytest.approx(got.result.ceiling, rel=0.01)
    alone = audit_protocol(make_config(dict(COALITIONS["sum-ring"], seed=3, epsilon=4.0)),
                           3, 2, 2000)
    assert alone.result.epsilon_lower < 0.5 * got.result.epsilon_lower


def test_cli_coalition_json(capsys):
    from netdp.run.cli import main

    code = main(["audit", "--task", "histogram", "--topology", "ring", "--nodes", "8",
                 "--coalition", "1,3", "--node", "2", "--trials", "400", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["coalition"] == [1, 3] and out["observer"] == -1
    assert out["audit"]["sandwich"] is True and out["audit"]["pair_bounds"] == []


def test_cli_observer_and_node_by_label(capsys):
    """On a labelled graph, audit --observer and --node take node labels: the same audit
    as their ids (its JSON names the ids), the text line shows both."""
    from netdp.graphs.topologies import build
    from netdp.run.cli import main

    ids = {label: i for i, label in enumerate(build("florentine").labels)}
    base = ["audit", "--task", "sum", "--topology", "florentine", "--steps", "30",
            "--trials", "200"]
    outs = []
    for observer, node in (("Medici", "Strozzi"), (ids["Medici"], ids["Strozzi"])):
        assert main([*base, "--observer", str(observer), "--node", str(node), "--json"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    for out in outs:
        out.pop("config", None)
        out["audit"].pop("seconds")
    assert outs[0] == outs[1] and outs[0]["observer"] == ids["Medici"]
    assert main([*base, "--observer", "Medici", "--node", "Strozzi"]) == 0
    assert (f"node Strozzi ({ids['Strozzi']}) -> observer Medici ({ids['Medici']})"
            in capsys.readouterr().out)


@pytest.mark.parametrize(("argv", "flag"), [
    (["--observer", "Borgia", "--node", "Medici"], "--observer"),
    (["--observer", "Medici", "--node", "Borgia"], "--node"),
    (["--observer", "Borgia"], "--observer"),  # the default node is found from it
    (["--coalition", "Medici,Borgia", "--node", "Strozzi"], "--coalition"),
])
def test_cli_an_unknown_label_is_one_line_exit_2(capsys, argv, flag):
    from netdp.run.cli import main

    code = main(["audit", "--task", "sum", "--topology", "florentine", "--steps", "30",
                 "--trials", "10", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and flag in err, err
    assert "not a node label of florentine, which has 15 labels" in err
