"""Gossip schedules (netdp.engine.async_gossip): synchronous rounds unchanged bit for bit,
partial rounds firing each edge both ways with probability p, pairwise and push-pull
exchanges with a uniform neighbour, and the compiled tick loop against a numpy oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import Z

from netdp import simulate
from netdp.core.setup import Streams
from netdp.engine import async_gossip as AG
from netdp.engine import averaging
from netdp.engine._gossip_kernel import pairwise_average
from netdp.graphs import topologies as topology
from netdp.tasks import make_config, task_of
from netdp.tasks.preparation import with_seed


def oracle(first, second, X, keep, every):
    """The tick loop in plain numpy: states every ``every`` ticks and at the end, and the
    rows the kept messages carry."""
    X = X.copy()
    states, sent = [], {}
    for k, (i, j) in enumerate(zip(first, second, strict=True)):
        if every and k % every == 0:
            states.append(X.copy())
        sent[2 * k], sent[2 * k + 1] = X[i].copy(), X[j].copy()
        X[[i, j]] = 0.5 * (X[i] + X[j])
    states.append(X.copy())
    return np.array(states), np.array([sent[m] for m in keep]).reshape(len(keep), -1), X


def test_the_kernel_is_the_numpy_loop_bit_for_bit():
    rng = np.random.default_rng(5)
    n, ticks = 7, 70
    first = rng.integers(0, n, ticks)
    second = (first + rng.integers(1, n, ticks)) % n
    X0 = rng.standard_normal((n, 3))
    keep = np.sort(rng.choice(2 * ticks, 40, replace=False))
    slot = np.full(2 * ticks, -1)
    slot[keep] = np.arange(keep.size)
    X, sent = X0.copy(), np.empty((keep.size, 3))
    states = np.empty((ticks // n + 1, n, 3))
    pairwise_average(first, second, X, slot, sent, n, states)
    want_states, want_sent, want_X = oracle(first, second, X0, keep, n)
    assert np.array_equal(states, want_states) and np.array_equal(sent, want_sent)
    assert np.array_equal(X, want_X)


def test_synchronous_gossip_is_unchanged_bit_for_bit():
    """The figures main printed before the schedules existed, at the same seed (the
    privacy figures to 1e-12: the accounting's matrix products round differently on
    another CPU, by 1e-14 on an AVX-512 one)."""
    params = dict(task="sum", protocol="gossip", topology="karate", sigma=0.8, steps=6,
                  seed=11, runs=2)
    default = simulate(make_config(**params))
    named = simulate(make_config(**params, gossip_schedule="sync"))
    for run in (default, named):
        out = run.to_json()
        assert out["utility"]["estimate"] == 0.37313033513809235
        assert out["utility"]["abs_error"] == 0.19486746057397325
        assert out["utility"]["theoretical_rmse"] == 0.3019571785625009
        assert out["privacy"]["empirical"][0]["mean"] == pytest.approx(4.683852235070547, rel=1e-12)
        assert out["privacy"]["empirical"][0]["max"] == pytest.approx(6.7342605746847966, rel=1e-12)
        assert "error_over_time" not in out["utility"] and "schedule" not in out["privacy"]
        assert run.outcomes[0].final[0] == 0.47552234594951176
    assert default.to_json()["privacy"] == named.to_json()["privacy"]


def setup_of(**params):
    cfg = with_seed(make_config(task="sum", protocol="gossip", **params))
    task = task_of(cfg)
    return task, task.prepare(cfg)


def test_partial_rounds_at_probability_one_are_the_synchronous_rounds():
    task, setup = setup_of(topology="karate", sigma=1.0, steps=7, seed=2,
                           gossip_schedule="partial", edge_probability=1.0)
    streams = Streams(setup.seed, 0)
    trace = task.trace(setup, streams)
    assert trace.gossip is not None and trace.gossip.fired is not None
    assert trace.gossip.fired.all() and trace.hops == 8 * 156
    states = task.states(setup, trace, streams)
    sync = averaging.gossip(setup.plan.W, states[0], 7)
    np.testing.assert_allclose(states, sync, rtol=0, atol=1e-12)


def test_the_noise_stream_is_the_same_whatever_the_schedule():
    firsts = []
    for schedule, p in (("sync", None), ("partial", 0.3), ("pairwise", None),
                        ("push-pull", None)):
        task, setup = setup_of(topology="karate", sigma=1.0, steps=3, seed=9,
                               gossip_schedule=schedule, edge_probability=p)
        streams = Streams(setup.seed, 0)
        firsts.append(task.states(setup, task.trace(setup, streams), streams)[0])
    for x in firsts[1:]:
        assert np.array_equal(x, firsts[0])


def test_partial_rounds_fire_each_edge_both_ways_with_probability_p():
    topo = topology.build("karate")
    p, steps = 0.3, 400
    trace = AG.run("partial", topo, steps, np.random.default_rng(1), p)
    rounds = trace.gossip
    assert rounds is not None and rounds.fired is not None
    fired, src, dst = rounds.fired, rounds.src, rounds.dst
    n = topo.n
    key = src * n + dst
    reverse = np.argsort(key)[np.searchsorted(np.sort(key), dst * n + src)]
    assert np.array_equal(fired, fired[:, reverse])  # both directions or neither
    share = fired[:, src < dst].mean()
    trials = fired[:, src < dst].size
    assert abs(share - p) <= Z * math.sqrt(p * (1 - p) / trials)
    t, s, d = rounds.all_messages()
    assert t.size == rounds.messages == fired.sum()
    assert np.array_equal(np.bincount(t, minlength=steps + 1), fired.sum(axis=1))


@pytest.mark.parametrize("schedule", ["pairwise", "push-pull"])
def test_exchanges_pick_a_uniform_neighbour(schedule):
    topo = topology.build("karate")
    n, steps = topo.n, 300
    trace = AG.run(schedule, topo, steps, np.random.default_rng(4))
    rounds = trace.gossip
    assert isinstance(rounds, AG.PairwiseGossip) and rounds.ticks == n * steps
    src, dst = topology.edges(topo)
    edges = set(zip(src.tolist(), dst.tolist(), strict=True))
    assert all((int(a), int(b)) in edges for a, b in zip(rounds.first, rounds.second,
                                                         strict=True))
    wakes = np.bincount(rounds.first, minlength=n)
    if schedule == "push-pull":  # every node once per cycle
        cycles = rounds.first.reshape(steps, n)
        assert all(np.array_equal(np.sort(c), np.arange(n)) for c in cycles)
        assert np.allclose(np.diff(rounds.times), 1 / n)
    else:  # uniform waking node, Exp(n) gaps
        expected = rounds.ticks / n
        assert np.all(np.abs(wakes - expected) <= Z * math.sqrt(expected))
        gaps = np.diff(rounds.times)
        assert abs(gaps.mean() - 1 / n) <= Z * (1 / n) / math.sqrt(gaps.size)
    hub = 0  # node 0's partners: uniform over its 16 neighbours
    partners = rounds.second[rounds.first == hub]
    neighbours = dst[src == hub]
    counts = np.array([(partners == w).sum() for w in neighbours])
    expected = partners.size / neighbours.size
    assert np.all(np.abs(counts - expected) <= Z * math.sqrt(expected))
    t, s, d = rounds.all_messages()
    assert np.array_equal(s[0::2], rounds.first) and np.array_equal(d[0::2], rounds.second)
    assert np.array_equal(s[1::2], rounds.second) and trace.hops == 2 * rounds.ticks


@pytest.mark.parametrize("schedule,p", [("partial", 0.4), ("pairwise", None),
                                        ("push-pull", None)])
def test_schedules_keep_the_mean_and_reach_consensus(schedule, p):
    task, setup = setup_of(topology="hypercube", nodes=16, sigma=1.0, steps=40, seed=3,
                           gossip_schedule=schedule, edge_probability=p, accountants=())
    streams = Streams(setup.seed, 0)
    trace = task.trace(setup, streams)
    states = task.states(setup, trace, streams)
    assert states.shape == (41, 16)
    np.testing.assert_allclose(states.mean(axis=1), states[0].mean(), rtol=0, atol=1e-12)
    assert np.ptp(states[-1]) < 1e-3 * np.ptp(states[0])
    outcome = task.run(setup, trace, streams)
    assert outcome.curve is not None and outcome.curve.shape == (41,)


def test_the_view_is_what_the_messages_carried():
    task, setup = setup_of(topology="cycle", nodes=6, sigma=1.0, steps=4, seed=5,
                           gossip_schedule="pairwise")
    streams = Streams(setup.seed, 0)
    trace = task.trace(setup, streams)
    rounds = trace.gossip
    assert isinstance(rounds, AG.PairwiseGossip)
    view = task.view(setup, trace, streams, observer=2)
    x0 = task.states(setup, trace, streams)[0]
    _, want, _ = oracle(rounds.first, rounds.second, x0[:, None],
                        np.flatnonzero(rounds.all_messages()[2] == 2), 0)
    assert np.array_equal(view.received, want[:, 0])
    assert set(view.token.tolist()) <= {1, 3}
