"""The compiled walk on explicit graphs against the plain-Python loop it replaced (the
oracle, kept here), and the laws of the lazy and Metropolis walks."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import Z, transitions_match

from netdp import engine, make_config
from netdp.core import seeding
from netdp.core.errors import InputError
from netdp.engine import _kernels, routing
from netdp.engine import event_walk as events
from netdp.engine import vector_walk as vector
from netdp.engine.clock import parse_latency
from netdp.graphs import topologies as topology
from netdp.tasks.summation import _transition, walk_sum_std

SMALL_CHUNK = 1000  # chunk boundaries every 1000 hops in the engines under test


def oracle_hops(topo, walk, current, u, shift=0):
    """The next holders, by the plain-Python hop loop of ``Router._graph_kernel`` before
    the compiled kernel (simple, metropolis), plus the lazy rule. ``shift`` plants an
    off-by-one in the neighbour pick (``shift=0``: the reference)."""
    indptr, indices, h, out = topo.indptr.tolist(), topo.indices.tolist(), current, []

    def pick(h, x):
        lo, d = indptr[h], indptr[h + 1] - indptr[h]
        return indices[lo + (int(x * d) + shift) % d]

    if walk == "simple":
        for (x,) in u.tolist():
            h = pick(h, x)
            out.append(h)
    elif walk == "metropolis":
        for x, accept in u.tolist():
            lo, hi = indptr[h], indptr[h + 1]
            w = pick(h, x)
            if accept * (indptr[w + 1] - indptr[w]) < hi - lo:  # w.p. min(1, d_h/d_w)
                h = w
            out.append(h)
    else:
        for stay, x in u.tolist():
            if not stay < 0.5:
                h = pick(h, x)
            out.append(h)
    return out


def oracle_walk(topo, walk, steps, rng, shift=0):
    """One token's holders from its generator: start, then all uniforms at once."""
    h = int(rng.random() * topo.n)
    u = rng.random((steps - 1, 1 if walk == "simple" else 2))
    return [h, *oracle_hops(topo, walk, h, u, shift)]


def _directed(tmp_path):
    """A strongly connected directed graph with out-degrees 1 to 4, read as an edge list."""
    rng = np.random.default_rng(7)
    n = 40
    edges = {(u, (u + 1) % n) for u in range(n)}
    edges |= {(int(a), int(b)) for a, b in rng.integers(0, n, (80, 2)) if a != b}
    path = tmp_path / "directed.txt"
    path.write_text("".join(f"{a} {b}\n" for a, b in sorted(edges)))
    topo = topology.read_edgelist(path, directed=True)
    assert topo.directed and not topo.is_regular
    return topo


GRAPHS = {
    "karate": lambda tmp: topology.build("karate"),
    "hypercube": lambda tmp: topology.build("hypercube", 64),
    "directed": _directed,
    "erdos-renyi": lambda tmp: topology.build("erdos-renyi", 120, seed=3),
}


def _trace(name, topo, walk, steps, tokens, seed, latency="exp:1"):
    router = engine.Router(topo, walk)
    rngs = [seeding.generator(seed, "walk", 0, k) for k in range(tokens)]
    lats = [seeding.generator(seed, "latency", 0, k) for k in range(tokens)]
    return engine.walk(name, router, steps, rngs, parse_latency(latency), lats)


@pytest.mark.parametrize("graph", list(GRAPHS))
@pytest.mark.parametrize("walk", ["simple", "metropolis", "lazy"])
def test_kernel_walks_as_the_oracle(graph, walk, tmp_path, monkeypatch):
    topo = GRAPHS[graph](tmp_path)
    if walk == "metropolis" and topo.directed:
        with pytest.raises(InputError, match="undirected"):
            engine.resolve_walk(topo, walk)
        return
    assert graph != "erdos-renyi" or not topo.is_regular
    monkeypatch.setattr(vector, "CHUNK", SMALL_CHUNK)
    monkeypatch.setattr(events, "CHUNK", SMALL_CHUNK)
    steps, tokens = 3 * SMALL_CHUNK + 500, 3
    for seed in (0, 1):
        vec = _trace("vector", topo, walk, steps, tokens, seed)
        assert vec.same_walk(_trace("event", topo, walk, steps, tokens, seed))
        for k in range(tokens):
            expected = oracle_walk(topo, walk, steps, seeding.generator(seed, "walk", 0, k))
            assert vec.holders[k].tolist() == expected
            planted = oracle_walk(topo, walk, steps, seeding.generator(seed, "walk", 0, k), 1)
            assert vec.holders[k].tolist() != planted  # the comparison can fail


@pytest.mark.parametrize("walk", ["simple", "metropolis", "lazy"])
def test_kernel_walks_as_the_oracle_across_a_real_chunk(walk):
    topo = topology.build("karate")
    steps = routing.CHUNK + 300
    vec = _trace("vector", topo, walk, steps, 1, seed=5, latency="1")
    assert vec.holders[0].tolist() == oracle_walk(topo, walk, steps,
                                                  seeding.generator(5, "walk", 0, 0))


def _edge_cases(topo, walk):
    """One-hop cases ``(holder, uniforms)`` on every decision boundary: each neighbour
    slot's edges, acceptance at exactly ``d_h / d_w`` and just below, staying at 1/2."""
    indptr, indices = topo.indptr, topo.indices
    below = np.nextafter
    cases = []
    for h in range(topo.n):
        d = int(indptr[h + 1] - indptr[h])
        slots = [x for j in range(d) for x in (j / d, below(j / d, 0), (j + 0.5) / d)]
        slots = [x for x in slots if 0 <= x < 1] + [below(1.0, 0)]
        for x in slots:
            if walk == "simple":
                cases.append((h, [x]))
            elif walk == "lazy":
                cases += [(h, [s, x]) for s in (0.0, below(0.5, 0), 0.5, below(1.0, 0))]
            else:
                w = indices[indptr[h] + min(int(x * d), d - 1)]
                ratio = d / (indptr[w + 1] - indptr[w])
                accepts = [0.0, below(1.0, 0)] + ([ratio, below(ratio, 0)] if ratio < 1 else [])
                cases += [(h, [x, a]) for a in accepts]
    return cases


@pytest.mark.parametrize("graph", ["karate", "directed"])
@pytest.mark.parametrize("walk", ["simple", "metropolis", "lazy"])
def test_kernel_decides_every_boundary_as_the_oracle(graph, walk, tmp_path):
    topo = GRAPHS[graph](tmp_path)
    router = engine.Router(topo, walk)  # metropolis on a directed graph: the kernel runs
    cases = _edge_cases(topo, walk)
    assert len(cases) > 5 * topo.n
    for h, row in cases:
        u = np.array([row])
        expected = oracle_hops(topo, walk, h, u)
        assert router.route(h, u).tolist() == expected, (h, row)
    h, u = cases[0][0], np.array([row for _, row in cases])  # one long call, both dtypes
    expected = oracle_hops(topo, walk, h, u)
    assert router.route(h, u).dtype == np.int32 and router.route(h, u).tolist() == expected
    wide = _kernels.graph_walk(topo.indptr, topo.indices, h, u, _kernels.RULES[walk],
                               np.empty(len(u), np.int64))
    assert wide.tolist() == expected


@pytest.mark.parametrize("graph", ["karate", "directed"])
def test_lazy_transitions_match_its_matrix(graph, tmp_path):
    topo = GRAPHS[graph](tmp_path)
    n = topo.n
    adj = np.zeros((n, n))
    adj[np.repeat(np.arange(n), topo.degrees), topo.indices] = 1.0
    p = (np.eye(n) + adj / adj.sum(axis=1, keepdims=True)) / 2  # (I + D^-1 A) / 2
    assert np.allclose(_transition(topo, "lazy"), p)
    h = _trace("vector", topo, "lazy", 600_000, 1, seed=9, latency="1").holders[0]
    assert transitions_match(h, p)
    wrong = p.copy()  # planted: stay w.p. 0.4 instead of 1/2
    wrong -= np.diag(np.diag(p))
    wrong *= 0.6 / wrong.sum(axis=1, keepdims=True)
    wrong += 0.4 * np.eye(n)
    assert not transitions_match(h, wrong)
    assert not transitions_match(h, _transition(topo, "simple"))


def _visit_z(topo, walk, tokens=2000, steps=100, seed=3):
    """Per node, the z-score of its mean visits per token against ``steps / n``.

    Tokens start uniform and are independent, so each node's visit counts are iid across
    tokens; under a uniform stationary law their mean is exactly ``steps / n``."""
    holders = _trace("vector", topo, walk, steps, tokens, seed, latency="1").holders
    n = topo.n
    visits = np.bincount((holders + n * np.arange(tokens)[:, None]).ravel(),
                         minlength=n * tokens).reshape(tokens, n)
    se = visits.std(axis=0, ddof=1) / np.sqrt(tokens)
    return (visits.mean(axis=0) - steps / n) / se


def test_metropolis_stationary_law_is_uniform_on_an_irregular_graph():
    topo = topology.build("karate")
    assert not topo.is_regular
    assert np.all(np.abs(_visit_z(topo, "metropolis")) <= Z)
    assert np.max(np.abs(_visit_z(topo, "simple"))) > Z  # degree-biased: the test can fail


def test_lazy_walk_rules():
    karate, cube = topology.build("karate"), topology.build("hypercube", 32)
    assert engine.resolve_walk(karate, "lazy") == "lazy"
    assert engine.resolve_walk(karate) == "metropolis" and engine.resolve_walk(cube) == "simple"
    with pytest.raises(InputError, match="auto, simple, lazy or metropolis"):
        engine.resolve_walk(karate, "drunk")
    for name in ("ring", "complete"):
        with pytest.raises(InputError, match="walk"):
            make_config(topology=name, walk="lazy")
    make_config(topology="karate", walk="lazy")
    with pytest.raises(InputError, match="lazy"):
        engine.Router(topology.complete(10), "lazy")
    with pytest.raises(ValueError, match="uniform"):
        engine.Router(karate, "lazy").route(0, np.zeros((3, 1)))
    sink = topology.Topology("graph", 3, "sink", indptr=np.array([0, 1, 2, 2]),
                             indices=np.array([1, 2]), directed=True)
    with pytest.raises(InputError, match="out-neighbour"):
        engine.Router(sink, "simple")


def test_lazy_walk_sum_std():
    cube, karate = topology.build("hypercube", 32), topology.build("karate")
    values = np.random.default_rng(1).uniform(size=32)
    simple = walk_sum_std(cube, "simple", values, 200, 0.5)
    lazy = walk_sum_std(cube, "lazy", values, 200, 0.5)
    assert simple is not None and lazy is not None and lazy > simple  # slower mixing
    assert walk_sum_std(karate, "lazy", np.ones(34), 200, 0.5) is None  # law not uniform
