import math

import numpy as np
import pytest
from conftest import Z, assert_mean
from scipy import stats

from netdp import engine
from netdp.core import seeding
from netdp.core.errors import InputError
from netdp.engine.clock import parse_latency
from netdp.graphs import topologies as topology
from netdp.tasks.summation import _transition

TOPOLOGIES = [
    lambda: topology.complete(1000),
    lambda: topology.complete(30, self_moves=False),
    lambda: topology.ring(17),
    lambda: topology.build("karate"),                      # irregular: metropolis
    lambda: topology.build("barabasi-albert", 300, seed=1),
    lambda: topology.build("hypercube", 64),                # regular: simple
]


def _walk(engine_name, topo, steps, tokens=1, seed=0, latency="1", service=0.0, walk="auto"):
    router = engine.Router(topo, engine.resolve_walk(topo, walk) if topo.kind == "graph"
                           else "simple")
    rngs = [seeding.generator(seed, "walk", 0, k) for k in range(tokens)]
    lats = [seeding.generator(seed, "latency", 0, k) for k in range(tokens)]
    return engine.walk(engine_name, router, steps, rngs, parse_latency(latency), lats, service)


@pytest.mark.parametrize("make", TOPOLOGIES)
@pytest.mark.parametrize("latency", ["1", "exp:0.5", "uniform:1:3"])
def test_both_engines_record_the_same_walk(make, latency):
    topo = make()
    vec = _walk("vector", topo, 3000, tokens=3, seed=11, latency=latency)
    ev = _walk("event", topo, 3000, tokens=3, seed=11, latency=latency)
    assert vec.engine == "vector" and ev.engine == "event"
    assert vec.same_walk(ev)
    other = _walk("vector", topo, 3000, tokens=3, seed=12, latency=latency)
    deterministic = topo.kind == "ring" and latency == "1"  # public schedule, fixed clock
    assert vec.same_walk(other) == deterministic


def test_walks_longer_than_a_chunk_agree_across_chunk_boundaries():
    topo = topology.build("karate")
    steps = engine.routing.CHUNK + 1234
    for latency in ("1", "exp:1"):
        vec = _walk("vector", topo, steps, seed=2, latency=latency)
        assert vec.same_walk(_walk("event", topo, steps, seed=2, latency=latency))


def test_moves_follow_edges():
    topo = topology.build("barabasi-albert", 200, seed=0)
    trace = _walk("vector", topo, 20000, walk="simple")
    h = trace.holders[0]
    edges = set(zip(np.repeat(np.arange(topo.n), topo.degrees).tolist(),
                    topo.indices.tolist(), strict=True))
    assert all(pair in edges for pair in zip(h[:-1].tolist(), h[1:].tolist(), strict=True))
    ring = _walk("vector", topology.ring(5), 12).holders[0]
    assert ring.tolist() == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1]
    no_self = _walk("vector", topology.complete(3, self_moves=False), 5000).holders[0]
    assert np.all(no_self[1:] != no_self[:-1])


def test_complete_graph_visits_are_binomial():
    n, steps = 200, 200_000
    counts = _walk("vector", topology.complete(n), steps, seed=4).visits()
    assert counts.sum() == steps
    # χ² goodness of fit of the multinomial counts to the uniform law
    p = stats.chisquare(counts).pvalue
    assert p > 1e-6, p
    # spread across nodes: Binomial(T, 1/n) variance, sample variance SE ~ var sqrt(2/(n-1))
    var = steps / n * (1 - 1 / n)
    assert abs(counts.var(ddof=1) - var) <= Z * var * math.sqrt(2 / (n - 1))


@pytest.mark.parametrize("self_moves", [True, False])
def test_mean_return_time_is_n(self_moves):
    n, steps = 50, 200_000
    h = _walk("vector", topology.complete(n, self_moves), steps, seed=8).holders[0]
    # one node's successive return times are iid (strong Markov property): with self-moves
    # geometric with success 1/n; without, 1 + geometric with success 1/(n-1). Both have
    # mean n (Kac's lemma); their variances are (1-p)/p^2 of the geometric part.
    p = 1 / n if self_moves else 1 / (n - 1)
    for node in (0, 17, 49):
        gaps = np.diff(np.flatnonzero(h == node))
        assert_mean(gaps, n, std=math.sqrt((1 - p) / p**2))


def test_metropolis_transitions_match_the_matrix():
    topo = topology.build("karate")
    p = _transition(topo, "metropolis")
    assert np.allclose(p, p.T) and np.allclose(p.sum(axis=1), 1)  # uniform stationary law
    h = _walk("vector", topo, 400_000, seed=5, walk="metropolis").holders[0]
    counts = np.zeros_like(p)
    np.add.at(counts, (h[:-1], h[1:]), 1)
    rows = counts.sum(axis=1, keepdims=True)
    se = np.sqrt(p * (1 - p) / rows)
    assert np.all(np.abs(counts / rows - p) <= Z * se + 1e-12)


def test_event_engine_queues_tokens_at_busy_nodes():
    topo = topology.complete(4)
    trace = _walk("event", topo, 500, tokens=6, seed=1, latency="exp:0.2", service=1.0)
    h, t = trace.holders.ravel(), trace.hop_times().ravel()
    for node in range(topo.n):
        starts = np.sort(t[h == node])
        assert np.all(np.diff(starts) >= 1.0 - 1e-9)  # one token at a time per node
    free = _walk("event", topo, 500, tokens=6, seed=1, latency="exp:0.2")
    assert np.array_equal(free.holders, trace.holders)  # queueing changes times, not paths
    assert trace.hop_times()[:, -1].max() > free.hop_times()[:, -1].max()


def test_auto_picks_the_vector_engine_when_exact():
    assert engine.choose("auto", 1, 0.0) == "vector"
    assert engine.choose("auto", 5, 0.0) == "vector"
    assert engine.choose("auto", 1, 2.0) == "vector"
    assert engine.choose("auto", 5, 2.0) == "event"
    with pytest.raises(InputError, match="vector cannot queue"):
        engine.choose("vector", 5, 2.0)
    single = _walk("event", topology.complete(10), 200, seed=3, service=0.5, latency="exp:1")
    assert single.same_walk(_walk("vector", topology.complete(10), 200, seed=3, service=0.5,
                                  latency="exp:1"))


def test_latency_laws():
    assert parse_latency("0").a == 0 and parse_latency("0").is_constant
    assert parse_latency("exp:2").mean == 2 and parse_latency("uniform:1:3").mean == 2


@pytest.mark.parametrize("text", ["x", "exp:", "exp:-1", "uniform:2:1", "const:inf", ""])
def test_bad_latency(text):
    with pytest.raises(InputError, match="latency"):
        parse_latency(text)


def test_streams_do_not_depend_on_request_order():
    a = seeding.generator(9, "noise", 3).random(4)
    seeding.generator(9, "walk", 0, 0).random(100)
    assert np.array_equal(a, seeding.generator(9, "noise", 3).random(4))
    assert not np.array_equal(a, seeding.generator(9, "noise", 2).random(4))
    assert not np.array_equal(a, seeding.generator(9, "walk", 3).random(4))
