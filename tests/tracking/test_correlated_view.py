"""The exact loss of a gossip view under correlated noise (DECOR's secrets, a user's
covariance) against a brute force built here independently: the noise written as a
factor ``η = F g`` of independent standard draws ``g`` (one per node, one per edge
secret, one per node of a user's part), what the observer knows as rows ``L`` of ``g``,
and the view as the joint Gaussian ``(M (x + F g), L g)``: its mean moves by
``(M e_u, 0)``, so ``μ = ‖J⁺ (M e_u, 0)‖`` with ``J = [M F; L]``."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from netdp.engine import async_gossip as AG
from netdp.graphs import gossip_matrix as GM
from netdp.graphs import topologies as topology
from netdp.mechanisms.correlated_noise import CorrelatedNoise, graph_edges, root
from netdp.tracking import async_gossip, gossip

SIGMA, SIGMA_COR = 0.8, 1.7


def graph(name: str, n: int) -> topology.Topology:
    maker = {"path": nx.path_graph, "cycle": nx.cycle_graph,
             "star": lambda k: nx.star_graph(k - 1),
             "random": lambda k: nx.gnp_random_graph(k, 0.45, seed=7)}[name]
    g = maker(n)
    assert nx.is_connected(g)
    return topology.from_networkx(g, name)


def sync_rows(W: np.ndarray, adj: np.ndarray, steps: int, members: list[int]) -> np.ndarray:
    """``e_k`` for the members, then ``(W^t)_{w,:}`` for every neighbour w of a member
    and t = 0..T, by dense powers."""
    n = W.shape[0]
    nbrs = sorted({int(w) for k in members for w in np.flatnonzero(adj[k])})
    rows = [np.eye(n)[k] for k in members]
    P = np.eye(n)
    for _ in range(steps + 1):
        rows += [P[w] for w in nbrs]
        P = P @ W
    return np.array(rows)


def factor(n: int, edges: np.ndarray, sigma_cor: float, user: np.ndarray | None):
    """``F`` with ``Cov(η) = F Fᵀ``, and, per node, the columns (or rows) of ``g`` it
    knows: its independent draw, its edges' secrets, its own term of a user's part."""
    blocks = [SIGMA * np.eye(n)]
    if sigma_cor > 0:
        D = np.zeros((n, len(edges)))
        D[edges[:, 0], np.arange(len(edges))] = 1.0
        D[edges[:, 1], np.arange(len(edges))] = -1.0
        blocks.append(sigma_cor * D)
    if user is not None:
        blocks.append(root(user))
    return np.hstack(blocks)


def knowledge(n: int, edges: np.ndarray, sigma_cor: float, F: np.ndarray,
              members: list[int]) -> np.ndarray:
    p = F.shape[1]
    rows = []
    for k in members:
        rows.append(np.eye(p)[k])
        if sigma_cor > 0:
            rows += [np.eye(p)[n + e] for e in np.flatnonzero((edges == k).any(axis=1))]
        start = n + (len(edges) if sigma_cor > 0 else 0)
        if p > start:  # a user's part: its own term, a row of R
            row = np.zeros(p)
            row[start:] = F[k, start:]
            rows.append(row)
    return np.array(rows)


def brute_force(M: np.ndarray, F: np.ndarray, L: np.ndarray, members: list[int]) -> np.ndarray:
    n = M.shape[1]
    J = np.vstack([M @ F, L])
    pinv = np.linalg.pinv(J, rcond=1e-11)
    out = np.zeros(n)
    for u in range(n):
        if u in members:
            continue
        d = np.concatenate([M[:, u], np.zeros(L.shape[0])])
        h = pinv @ d
        assert np.allclose(J @ h, d, atol=1e-9)  # the shift is within the view's support
        out[u] = SIGMA**2 * h @ h
    return out


def models(n: int, edges: np.ndarray, seed: int):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, 2))
    user = 0.9 * A @ A.T  # rank 2: positive semi-definite, singular
    return [("decor", SIGMA_COR, None), ("user", 0.0, user), ("both", SIGMA_COR, user),
            ("decor on some edges", SIGMA_COR, None)]


CASES = [("path", 5, 1), ("path", 6, 3), ("cycle", 6, 2), ("star", 5, 2), ("random", 8, 2)]


@pytest.mark.parametrize("name,n,steps", CASES)
def test_each_observer_of_synchronous_gossip(name, n, steps):
    topo = graph(name, n)
    plan = GM.GossipPlan.build(topo, "metropolis", False)
    W, adj = np.asarray(plan.W.todense()), np.asarray(plan.adj.todense())
    edges = graph_edges(plan.adj)
    for kind, sigma_cor, user in models(n, edges, n + steps):
        pairs = edges[::2] if kind.endswith("some edges") else edges
        noise = CorrelatedNoise(SIGMA, sigma_cor, pairs, user)
        losses = gossip.joint(plan.W, plan.adj, steps, noise=noise)
        assert losses.uncertified == 0, kind
        F = factor(n, pairs, sigma_cor, user)
        for v in range(n):
            want = brute_force(sync_rows(W, adj, steps, [v]), F,
                               knowledge(n, pairs, sigma_cor, F, [v]), [v])
            np.testing.assert_allclose(losses.values[v], want, rtol=0, atol=1e-9,
                                       err_msg=f"{kind}, observer {v}")
        plain = gossip.joint(plan.W, plan.adj, steps)
        assert np.all(losses.capped() <= plain.capped() + 1e-12)  # more noise, never more loss


@pytest.mark.parametrize("name,n,steps", [("path", 6, 2), ("random", 8, 1)])
def test_a_coalition_pools_what_its_members_know(name, n, steps):
    topo = graph(name, n)
    plan = GM.GossipPlan.build(topo, "metropolis", False)
    W, adj = np.asarray(plan.W.todense()), np.asarray(plan.adj.todense())
    edges = graph_edges(plan.adj)
    members = [1, 3]
    for kind, sigma_cor, user in models(n, edges, 5):
        noise = CorrelatedNoise(SIGMA, sigma_cor, edges, user)
        losses = gossip.coalition(plan.W, plan.adj, steps, members, noise=noise)
        F = factor(n, edges, sigma_cor, user)
        want = brute_force(sync_rows(W, adj, steps, members), F,
                           knowledge(n, edges, sigma_cor, F, members), members)
        np.testing.assert_allclose(losses.values[0], want, rtol=0, atol=1e-9, err_msg=kind)
        alone = gossip.joint(plan.W, plan.adj, steps, observers=members, noise=noise)
        others = np.setdiff1d(np.arange(n), members)
        assert np.all(losses.values[0][others] >= alone.values.max(axis=0)[others] - 1e-12)


@pytest.mark.parametrize("schedule", ["partial", "pairwise", "push-pull"])
def test_each_observer_of_asynchronous_gossip(schedule):
    topo = graph("cycle", 6)
    plan = GM.GossipPlan.build(topo, "metropolis", False)
    edges = graph_edges(plan.adj)
    rounds = AG.run(schedule, topo, 2, np.random.default_rng(11), 0.6).gossip
    for kind, sigma_cor, user in models(6, edges, 9):
        noise = CorrelatedNoise(SIGMA, sigma_cor, edges, user)
        losses = async_gossip.joint(plan.W, rounds, np.arange(6), noise=noise)
        F = factor(6, edges, sigma_cor, user)
        for v, M in enumerate(async_gossip.view_rows(plan.W, rounds,
                                                     [np.array([v]) for v in range(6)])):
            want = brute_force(M, F, knowledge(6, edges, sigma_cor, F, [v]), [v])
            np.testing.assert_allclose(losses.values[v], want, rtol=0, atol=1e-9,
                                       err_msg=f"{kind}, {schedule}, observer {v}")


def test_the_complete_graph_sees_every_noisy_value():
    topo = topology.from_networkx(nx.complete_graph(5), "complete")
    plan = GM.GossipPlan.build(topo, "metropolis", False)
    edges = graph_edges(plan.adj)
    noise = CorrelatedNoise(SIGMA, SIGMA_COR, edges)
    losses = gossip.joint(plan.W, plan.adj, 2, noise=noise)
    F = factor(5, edges, SIGMA_COR, None)
    M = np.eye(5)
    for v in range(5):
        want = brute_force(M, F, knowledge(5, edges, SIGMA_COR, F, [v]), [v])
        np.testing.assert_allclose(losses.values[v], want, rtol=0, atol=1e-9)


def test_a_leaf_next_to_the_observer_is_exposed_by_its_secret():
    """On a star, a leaf's only secret is shared with the hub: the hub knows it, and the
    leaf's noisy value reaches it at t = 0, so the leaf is at the local level (c = 1),
    whatever σ_cor; DECOR's eavesdropper bound (no secret known) is below it: as σ_cor
    grows the eavesdropper keeps only the sum of the noisy values, ``c -> 1/n``."""
    topo = graph("star", 5)
    plan = GM.GossipPlan.build(topo, "metropolis", False)
    edges = graph_edges(plan.adj)
    noise = CorrelatedNoise(SIGMA, 10.0, edges)
    hub = gossip.joint(plan.W, plan.adj, 1, observers=[0], noise=noise).values[0]
    np.testing.assert_allclose(hub[1:], 1.0, atol=1e-12)
    eavesdropper = SIGMA**2 * np.diag(np.linalg.inv(noise.covariance_matrix(5)))
    assert 0.2 < eavesdropper[1:].max() < 0.21


def test_a_large_ratio_of_stds_is_solved_in_factor_form():
    """A second reader's case: a path of 9, T = 1, secrets on three edges only, the
    secrets 1e5 times the independent noise. Squaring the covariance lost the answer
    (0.0066 where it is 0.5); the factor form keeps it, checked against a least-squares
    solve on the factor of the joint view."""
    topo = topology.from_networkx(nx.path_graph(9), "path")
    plan = GM.GossipPlan.build(topo, "metropolis", False)
    W, adj = np.asarray(plan.W.todense()), np.asarray(plan.adj.todense())
    pairs = np.array([[2, 3], [3, 4], [5, 6]])
    sigma, sigma_cor = 1e-2, 1e3
    noise = CorrelatedNoise(sigma, sigma_cor, pairs)
    got = gossip.joint(plan.W, plan.adj, 1, observers=[4], noise=noise).values[0]
    M = sync_rows(W, adj, 1, [4])
    F = np.hstack([sigma * np.eye(9), sigma_cor * np.array(
        [[1.0 if i == a else -1.0 if i == b else 0.0 for a, b in pairs] for i in range(9)])])
    known = [4, 9 + 1]  # its draw and the secret of (3, 4)
    L = np.eye(F.shape[1])[known]
    J = np.vstack([M @ F, L])
    for u in (2, 3, 5, 6):
        d = np.concatenate([M[:, u], np.zeros(len(known))])
        h = np.linalg.lstsq(J, d, rcond=None)[0]
        assert np.allclose(J @ h, d, atol=1e-9)
        assert got[u] == pytest.approx(sigma**2 * h @ h, rel=1e-6)
        assert got[u] >= sigma**2 * h @ h * (1 - 1e-12)


def test_a_ratio_beyond_a_million_is_refused():
    from netdp.core.errors import InputError

    with pytest.raises(InputError, match="at most 1e\\+06 times --sigma") as exc:
        CorrelatedNoise(1e-6, 1e3, np.array([[0, 1]]))
    assert exc.value.param == "correlated-noise"


def test_knowledge_a_covariance_barely_resolves_is_counted_as_known():
    """A second reader's case: a coalition {1, 2} whose user terms differ by 2^-26 of a
    draw that node 0's term carries 2^19 times over: C's entries are exact, but the
    known terms' covariance has an eigenvalue of 1e-16, below any pseudo-inverse's cut.
    The exact loss of node 0 is the local level (its term is rebuilt from the coalition's
    two); the user part is then counted as known (sound), where it was dropped (c = 0)."""
    topo = topology.from_networkx(nx.path_graph(5), "path")
    plan = GM.GossipPlan.build(topo, "metropolis", False)
    F = np.zeros((5, 2))
    F[1] = [1.0, 0.0]
    F[2] = [1.0, 2.0**-26]
    F[0] = [0.0, 2.0**19]
    noise = CorrelatedNoise(1.0, 0.0, None, F @ F.T)
    for steps in (1, 2):
        c = gossip.coalition(plan.W, plan.adj, steps, [1, 2], noise=noise).values[0]
        assert c[0] >= 1.0 - 1e-12 and c[3] >= 1.0 - 1e-12
