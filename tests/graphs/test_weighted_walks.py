"""Weighted walks: the compiled weighted kernel against a plain-numpy oracle (the same
uniforms give the same walk), unit weights walk exactly as the unweighted graph, the
walk's empirical transition frequencies match its matrix P, and the trackers read P."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from conftest import Z, transitions_match, view_cap_max

from netdp import make_config, simulate
from netdp.core import seeding
from netdp.core.errors import InputError
from netdp.core.setup import Streams
from netdp.engine import _kernels, routing
from netdp.graphs import topologies as topology
from netdp.graphs.walk_kind import resolve_walk
from netdp.tasks import task_of
from netdp.tasks.summation import walk_sum_std
from netdp.tracking import graph_observers


def weighted_graph(seed: int = 4, directed: bool = False) -> nx.Graph:
    """A connected irregular graph (30 nodes, a ring plus chords, a self-loop) with
    weights spread over two orders of magnitude."""
    rng = np.random.default_rng(seed)
    g = nx.DiGraph() if directed else nx.Graph()
    n = 30
    for u in range(n):
        g.add_edge(u, (u + 1) % n, w=float(rng.uniform(0.1, 10)))
    for a, b in rng.integers(0, n, (40, 2)):
        if a != b:
            g.add_edge(int(a), int(b), w=float(rng.uniform(0.1, 10)))
    g.add_edge(3, 3, w=2.5)  # a self-loop: the token may stay
    return g


def oracle_hops(topo, walk, current, u):
    """The next holders, plain numpy: cumulative weights per row (``np.cumsum`` of the
    row), the neighbour by ``np.searchsorted(cum, u0 * d, side="right")``; Metropolis
    accepts iff ``u1 * d_w < d_h``; lazy stays iff ``u0 < 0.5``."""
    indptr, indices, weights = topo.indptr, topo.indices, topo.weights
    cum = [np.cumsum(weights[indptr[h]:indptr[h + 1]]) for h in range(topo.n)]

    def pick(h, x):
        c = cum[h]
        j = min(int(np.searchsorted(c, x * c[-1], side="right")), c.size - 1)
        return int(indices[indptr[h] + j])

    h, out = current, []
    for row in u:
        if walk == "simple":
            h = pick(h, row[0])
        elif walk == "metropolis":
            w = pick(h, row[0])
            if row[1] * cum[w][-1] < cum[h][-1]:
                h = w
        elif row[0] >= 0.5:
            h = pick(h, row[1])
        out.append(h)
    return out


@pytest.fixture(scope="module")
def weighted():
    topo = topology.from_networkx(weighted_graph(), weight="w")
    assert topo.weights is not None and not topo.is_regular
    return topo


@pytest.mark.parametrize("walk", ["simple", "metropolis", "lazy"])
def test_weighted_kernel_walks_as_the_numpy_oracle(weighted, walk):
    router = routing.Router(weighted, walk)
    for seed in (0, 1, 2):
        rng = np.random.default_rng(seed)
        start = int(rng.integers(weighted.n))
        u = router.draw(rng, 5000)
        got = router.route(start, u).tolist()
        assert got == oracle_hops(weighted, walk, start, u)
        # the comparison can fail: the same walk read with one slot's weight doubled
        planted = topology.Topology("graph", weighted.n, "planted", indptr=weighted.indptr,
                                    indices=weighted.indices, labels=weighted.labels,
                                    weights=weighted.weights * np.r_[2.0, np.ones(
                                        weighted.weights.size - 1)])
        assert got != oracle_hops(planted, walk, start, u)


def test_weighted_kernel_decides_every_boundary_as_the_oracle(weighted):
    """Uniforms exactly on, and just below, every cumulative-weight boundary."""
    cum = _kernels.row_cumsum(weighted.indptr, weighted.weights)
    cases = []
    for h in range(weighted.n):
        lo, hi = weighted.indptr[h], weighted.indptr[h + 1]
        for c in cum[lo:hi]:
            x = c / cum[hi - 1]
            cases += [x, np.nextafter(x, 0)]
    u = np.array([[x] for x in cases if 0 <= x < 1] + [[np.nextafter(1.0, 0)]])
    router = routing.Router(weighted, "simple")
    for h in range(weighted.n):
        hops = [router.route(h, row[None, :])[0] for row in u]
        assert hops == [oracle_hops(weighted, "simple", h, row[None, :])[0] for row in u]


@pytest.mark.parametrize("walk", ["simple", "metropolis", "lazy"])
def test_unit_weights_walk_exactly_as_the_unweighted_graph(walk):
    plain = topology.build("karate")
    unit = topology.Topology("graph", plain.n, "unit", indptr=plain.indptr,
                             indices=plain.indices, weights=np.ones(plain.indices.size))
    rng = np.random.default_rng(11)
    u = rng.random((20_000, 1 if walk == "simple" else 2))
    assert (routing.Router(unit, walk).route(5, u).tolist()
            == routing.Router(plain, walk).route(5, u).tolist())
    assert np.array_equal(unit.transition(walk).toarray(), plain.transition(walk).toarray())
    # from_networkx: weights all alike are the unweighted graph
    g = nx.karate_club_graph()
    nx.set_edge_attributes(g, 3.0, "w")
    same = topology.from_networkx(g, weight="w")
    assert same.weights is None and same.digest() == topology.from_networkx(g).digest()


def test_transition_matrix_follows_the_weights(weighted):
    n = weighted.n
    w = np.zeros((n, n))
    rows = np.repeat(np.arange(n), np.diff(weighted.indptr))
    w[rows, weighted.indices] = weighted.weights
    d = w.sum(axis=1)
    simple = w / d[:, None]
    assert np.allclose(weighted.transition("simple").toarray(), simple, rtol=1e-14, atol=0)
    assert np.allclose(weighted.transition("lazy").toarray(), (np.eye(n) + simple) / 2)
    metro = w / np.maximum(d[:, None], d[None, :])
    metro[np.arange(n), np.arange(n)] += 1 - metro.sum(axis=1)
    p = weighted.transition("metropolis").toarray()
    assert np.allclose(p, metro, rtol=1e-14, atol=1e-15)
    assert np.allclose(p, p.T) and np.allclose(p.sum(axis=1), 1) and p.min() >= 0
    assert resolve_walk(weighted) == "metropolis"  # weighted degrees differ


@pytest.mark.parametrize("walk", ["simple", "metropolis", "lazy"])
def test_weighted_transition_frequencies_match_p(weighted, walk):
    router = routing.Router(weighted, walk)
    rng = seeding.generator(7, "walk", 0, 0)
    holders = np.r_[0, router.route(0, router.draw(rng, 600_000))]
    p = weighted.transition(walk).toarray()
    assert transitions_match(holders, p, least=2000)
    unweighted = topology.Topology("graph", weighted.n, "plain", indptr=weighted.indptr,
                                   indices=weighted.indices)
    assert not transitions_match(holders, unweighted.transition(walk).toarray())


def test_weighted_directed_walk(tmp_path):
    topo = topology.from_networkx(weighted_graph(5, directed=True), weight="w")
    assert topo.directed and resolve_walk(topo) == "simple"
    with pytest.raises(InputError, match="metropolis needs an undirected graph"):
        resolve_walk(topo, "metropolis")
    router = routing.Router(topo, "simple")
    holders = np.r_[0, router.route(0, router.draw(np.random.default_rng(2), 1_600_000))]
    assert transitions_match(holders, topo.transition("simple").toarray())


def test_weighted_metropolis_visits_every_node_alike(weighted):
    """Tokens start uniform and P is symmetric: each node's mean visits per token is
    exactly steps / n; the simple walk's are proportional to the weighted degrees."""
    tokens, steps, n = 2000, 100, weighted.n
    visits = {}
    for walk in ("metropolis", "simple"):
        router = routing.Router(weighted, walk)
        counts = np.zeros((tokens, n))
        for k in range(tokens):
            rng = seeding.generator(3, "walk", 0, k)
            h = router.start(rng)
            path = np.r_[h, router.route(h, router.draw(rng, steps - 1))]
            counts[k] = np.bincount(path, minlength=n)
        z = (counts.mean(axis=0) - steps / n) / (counts.std(axis=0, ddof=1) / np.sqrt(tokens))
        visits[walk] = z
    assert np.all(np.abs(visits["metropolis"]) <= Z)
    assert np.max(np.abs(visits["simple"])) > Z  # biased by the weights: the test can fail


def test_the_compiled_faulty_walk_is_the_python_walk_on_a_weighted_graph():
    """The compiled hand-offs read the weights as the Python path does (same holders,
    same times), with loss, churn and skips."""
    from netdp.engine import event_walk as events
    from netdp.engine.clock import parse_latency
    from netdp.engine.faults import fault_run
    from netdp.engine.routing import Router

    config = make_config({"topology": weighted_graph(), "weight": "w", "steps": 400,
                          "seed": 3, "engine": "event", "loss": "0.1", "churn": "exp:50:10",
                          "on_loss": "skip"})
    setup = task_of(config).prepare(config)
    assert setup.topology.weights is not None
    for run in range(2):
        streams = Streams(setup.seed, run)
        router = Router(setup.topology, setup.config.walk)

        def walk(fn, *extra, router=router, streams=streams):
            return fn(router, setup.steps, [streams.generator("walk", 0)],
                      parse_latency("1"), [streams.generator("latency", 0)], *extra,
                      fault_run(setup, streams, 1))

        a, b = walk(events.run_faulty, 0.0), walk(events.run_compiled)
        assert np.array_equal(a.holders, b.holders)
        assert a.faults.to_dict() == b.faults.to_dict()


@pytest.mark.slow
def test_trackers_and_the_std_read_the_weighted_p(weighted):
    """The summation's theoretical std uses the weighted Metropolis P (a uniform law), and
    every pairwise tracker on graphs runs on it and stays below the LDP baseline."""
    values = np.random.default_rng(0).uniform(size=weighted.n)
    std = walk_sum_std(weighted, "metropolis", values, 500, 0.5)
    plain = topology.Topology("graph", weighted.n, "plain", indptr=weighted.indptr,
                              indices=weighted.indices)
    assert std is not None and std != walk_sum_std(plain, "metropolis", values, 500, 0.5)
    assert walk_sum_std(weighted, "simple", values, 500, 0.5) is None  # law not uniform
    g = weighted_graph()
    config = make_config({"topology": g, "weight": "w", "steps": 300, "seed": 2})
    setup = task_of(config).prepare(config)
    assert np.array_equal(graph_observers.transition(setup).toarray(),
                          weighted.transition("metropolis").toarray())
    for params in ({"task": "sum", "accountant": ["kov", "rdp"]},
                   {"task": "histogram", "domain": 4}):
        report = simulate({**params, "topology": g, "weight": "w", "steps": 300, "seed": 2})
        privacy = report.privacy.to_dict()
        assert privacy["empirical"]
        for row in privacy["empirical"]:  # pairwise never above the view cap
            assert 0 <= row["mean"] <= row["max"] <= view_cap_max(report.config)
    sgd = simulate({"task": "sgd", "dataset": "synthetic", "evals": 2, "topology": g,
                    "weight": "w", "steps": 300, "seed": 2}).privacy.to_dict()
    assert sgd["empirical"] and all(np.isfinite(r["mean"]) for r in sgd["empirical"])


def test_a_metropolis_stay_is_never_negative():
    """A node's stay, ``1 - Σ`` of its moves, rounds to ``-2.2e-16`` on some graphs (the
    random geometric graph of 100 nodes at seed 3: nodes 59, 60 and 78); it is 0 there,
    so that the trackers' laws, which refuse a negative entry, take the matrix."""
    from netdp.graphs.walk_kind import transition_matrix

    g = topology.build("random-geometric", 100, seed=seeding.seed_sequence(3, "topology"))
    P = transition_matrix(g, "metropolis").tocoo()
    assert P.data.min() >= 0.0
    assert np.abs(np.asarray(P.sum(axis=1)).ravel() - 1.0).max() < 1e-12
