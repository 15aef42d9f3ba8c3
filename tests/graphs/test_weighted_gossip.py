"""Weighted gossip matrices: ``W_uv = w_uv / (w̄ + max(d_u, d_v))`` (Metropolis) and
``w_uv / (2 d_max)`` (lazy) are symmetric, doubly stochastic and nonnegative, equal the
unweighted matrices when every weight is 1, and do not change when all weights scale."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from netdp import simulate
from netdp.graphs import gossip_matrix
from netdp.graphs import topologies as topology


def weighted(seed: int = 1, scale: float = 1.0) -> topology.Topology:
    g = nx.connected_watts_strogatz_graph(40, 4, 0.3, seed=seed)
    rng = np.random.default_rng(seed)
    for u, v in g.edges:
        g[u][v]["w"] = scale * float(rng.uniform(0.05, 20))
    g.add_edge(0, 0, w=5.0)  # a self-loop is no gossip neighbour
    return topology.from_networkx(g, weight="w")


@pytest.mark.parametrize("rule", [gossip_matrix.metropolis, gossip_matrix.lazy])
def test_weighted_gossip_matrix_is_symmetric_doubly_stochastic(rule):
    topo = weighted()
    W = rule(topo).toarray()
    assert np.abs(W - W.T).max() <= 1e-15
    assert np.allclose(W.sum(axis=0), 1, atol=1e-13) and np.allclose(W.sum(axis=1), 1,
                                                                      atol=1e-13)
    assert W.min() >= 0 and np.diag(W).min() > 0
    adj = gossip_matrix.adjacency(topo).toarray()
    off = W - np.diag(np.diag(W))
    assert np.array_equal(off > 0, adj > 0)  # nonzero exactly on the edges
    assert np.allclose(rule(weighted(scale=1e3)).toarray(), W, rtol=1e-12, atol=1e-15)


def test_weighted_metropolis_formula():
    topo = weighted()
    n = topo.n
    w = np.zeros((n, n))
    rows = np.repeat(np.arange(n), np.diff(topo.indptr))
    w[rows, topo.indices] = topo.weights
    np.fill_diagonal(w, 0.0)
    d, mean = w.sum(axis=1), w[w > 0].mean()
    expected = np.where(w > 0, w / (mean + np.maximum(d[:, None], d[None, :])), 0.0)
    expected += np.diag(1 - expected.sum(axis=1))
    assert np.allclose(gossip_matrix.metropolis(topo).toarray(), expected, rtol=1e-13,
                       atol=1e-16)
    lazy = np.where(w > 0, w / (2 * d.max()), 0.0)
    lazy += np.diag(1 - lazy.sum(axis=1))
    assert np.allclose(gossip_matrix.lazy(topo).toarray(), lazy, rtol=1e-13, atol=1e-16)


@pytest.mark.parametrize("rule", [gossip_matrix.metropolis, gossip_matrix.lazy])
def test_unit_weights_give_the_unweighted_matrix(rule):
    plain = topology.build("karate")
    unit = topology.Topology("graph", plain.n, "unit", indptr=plain.indptr,
                             indices=plain.indices, weights=np.ones(plain.indices.size))
    assert np.array_equal(rule(unit).toarray(), rule(plain).toarray())
    heavy = topology.Topology("graph", plain.n, "heavy", indptr=plain.indptr,
                              indices=plain.indices,
                              weights=np.r_[5.0, np.ones(plain.indices.size - 1)])
    assert not np.allclose(rule(heavy).toarray(), rule(plain).toarray())  # can fail


def test_weighted_gossip_runs_and_is_never_transitive():
    g = nx.hypercube_graph(4)
    for k, (u, v) in enumerate(g.edges):
        g[u][v]["w"] = 1.0 + k % 3
    report = simulate({"topology": g, "weight": "w", "protocol": "gossip", "seed": 1})
    assert report.topology.weights is not None
    assert not gossip_matrix.vertex_transitive(report.topology)
    privacy = report.privacy.to_dict()
    assert privacy["empirical"][0]["max"] <= privacy["ldp"]["max"] + 1e-9
    unweighted = simulate({"topology": g, "protocol": "gossip", "seed": 1})
    assert report.privacy.to_dict() != unweighted.privacy.to_dict()
