"""The exact loss of an observer's view of partial, pairwise and push-pull gossip
(netdp.tracking.async_gossip) against a brute force: the view's covariance and mean shift
built here from the list of messages that fired, by direct matrix products."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest

from netdp import simulate
from netdp.engine import async_gossip as AG
from netdp.graphs import gossip_matrix as GM
from netdp.graphs import topologies as topology
from netdp.run.cli import main
from netdp.tasks import make_config
from netdp.tracking import async_gossip

SIGMA, DELTA = 0.7, 1.0  # noise std and sensitivity: the coefficient is free of both


def graph(name: str, n: int) -> topology.Topology:
    maker = {"path": nx.path_graph, "cycle": nx.cycle_graph,
             "star": lambda k: nx.star_graph(k - 1)}[name]
    return topology.from_networkx(maker(n), name)


def step_matrices(W: np.ndarray, rounds, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(messages, step)`` per round or tick: the ``(src, dst)`` pairs that fired, and the
    matrix of the averaging that follows them, written out entry by entry."""
    out = []
    if isinstance(rounds, AG.PairwiseGossip):
        for i, j in zip(rounds.first.tolist(), rounds.second.tolist(), strict=True):
            E = np.eye(n)
            E[i, i] = E[j, j] = E[i, j] = E[j, i] = 0.5
            out.append((np.array([[i, j], [j, i]]), E))
        return out
    for t in range(rounds.steps + 1):
        on = np.flatnonzero(rounds.fired[t])
        pairs = np.stack([rounds.src[on], rounds.dst[on]], axis=1)
        Wt = np.eye(n)
        for s, d in pairs.tolist():
            Wt[d, s] += W[d, s]
            Wt[d, d] -= W[d, s]
        out.append((pairs, Wt))
    return out


def brute_force(W: np.ndarray, rounds, n: int, members: list[int]) -> np.ndarray:
    """``c[u]`` for every u from the Gaussian view itself: y = M z, covariance σ² M Mᵀ,
    mean shift Δ M e_u, and ``c = shiftᵀ cov⁺ shift · σ²/Δ²``."""
    B = np.eye(n)
    rows = [np.eye(n)[v] for v in members]
    for pairs, step in step_matrices(W, rounds, n):
        for s, d in pairs.tolist():
            if d in members:
                rows.append(B[s].copy())
        B = step @ B
    M = np.array(rows)
    cov = SIGMA**2 * M @ M.T
    out = np.empty(n)
    for u in range(n):
        shift = DELTA * M[:, u]
        out[u] = shift @ np.linalg.pinv(cov, rcond=1e-10, hermitian=True) @ shift
    return out * SIGMA**2 / DELTA**2


CASES = [(g, n, s) for g, n in (("path", 4), ("path", 6), ("cycle", 5), ("cycle", 6),
                                ("star", 5), ("star", 6))
         for s in ("partial", "pairwise", "push-pull")]


@pytest.mark.parametrize("name,n,schedule", CASES)
def test_each_observer_against_the_brute_force(name, n, schedule):
    topo = graph(name, n)
    W = GM.GossipPlan.build(topo, "metropolis", False).W
    dense = np.asarray(W.todense())
    steps = 3 if schedule == "partial" else 2
    rng = np.random.default_rng(sum(map(ord, name + schedule)) + n)
    rounds = AG.run(schedule, topo, steps, rng, 0.5).gossip
    losses = async_gossip.joint(W, rounds, np.arange(n))
    assert losses.uncertified == 0
    for v in range(n):
        want = brute_force(dense, rounds, n, [v])
        np.testing.assert_allclose(losses.values[v], want, rtol=0, atol=1e-9)
    assert losses.capped().max() <= 1.0


@pytest.mark.parametrize("name,n,schedule", [("path", 6, "partial"), ("cycle", 6, "pairwise"),
                                             ("star", 5, "push-pull")])
def test_a_coalition_against_the_brute_force(name, n, schedule):
    topo = graph(name, n)
    W = GM.GossipPlan.build(topo, "metropolis", False).W
    rounds = AG.run(schedule, topo, 2, np.random.default_rng(3), 0.6).gossip
    members = [1, 3]
    losses = async_gossip.coalition(W, rounds, members)
    want = brute_force(np.asarray(W.todense()), rounds, n, members)
    np.testing.assert_allclose(losses.values[0], want, rtol=0, atol=1e-9)
    alone = async_gossip.joint(W, rounds, members)
    assert np.all(losses.values[0] >= alone.values.max(axis=0) - 1e-12)


def test_a_message_that_never_fired_leaks_nothing():
    """Partial rounds where no edge fires: the observer sees its own value only."""
    topo = graph("path", 5)
    W = GM.GossipPlan.build(topo, "metropolis", False).W
    src, dst = topology.edges(topo)
    from netdp.engine.trace import GossipRounds

    rounds = GossipRounds(src, dst, 3, fired=np.zeros((4, src.size), dtype=bool))
    losses = async_gossip.joint(W, rounds, np.arange(5))
    np.testing.assert_array_equal(losses.values, np.eye(5))


def per_pair(out: dict) -> dict:
    emp = out["privacy"]["empirical"][0]
    assert emp["pairs"] > 0 and 0 <= emp["min"] <= emp["mean"] <= emp["max"]
    assert sum(r["pairs"] for r in emp["by_distance"]) == emp["pairs"]
    return emp


@pytest.mark.parametrize("topo,nodes", [("hypercube", 16), ("karate", None)])
def test_pairwise_runs_through_simulate_and_the_command(topo, nodes, capsys):
    params = {"task": "sum", "protocol": "gossip", "topology": topo, "sigma": 1.0,
              "steps": 4, "seed": 21, "gossip_schedule": "pairwise"}
    if nodes:
        params["nodes"] = nodes
    report = simulate(make_config(**params)).to_json()
    emp = per_pair(report)
    n = report["config"]["nodes"]
    assert emp["pairs"] == n * (n - 1)
    assert report["privacy"]["schedule"] == "pairwise"
    assert len(report["utility"]["error_over_time"]) == 5
    argv = ["simulate", "--task", "sum", "--protocol", "gossip", "--topology", topo,
            "--sigma", "1", "--steps", "4", "--seed", "21", "--gossip-schedule", "pairwise",
            "--json"] + (["--nodes", str(nodes)] if nodes else [])
    assert main(argv) == 0
    cli = json.loads(capsys.readouterr().out)
    assert cli["privacy"]["empirical"] == report["privacy"]["empirical"]
    assert cli["utility"]["error_over_time"] == report["utility"]["error_over_time"]


@pytest.mark.parametrize("topo,nodes,steps", [("karate", None, 2), ("hypercube", 16, 3),
                                              ("grid", 16, 2)])
def test_every_edge_fired_is_the_synchronous_tracker(topo, nodes, steps):
    """Partial rounds where every message fired: the synchronous exact loss."""
    from netdp.engine.trace import GossipRounds
    from netdp.tracking import gossip

    built = topology.build(topo, nodes)
    plan = GM.GossipPlan.build(built, "metropolis", False)
    src, dst = topology.edges(built)
    rounds = GossipRounds(src, dst, steps, fired=np.ones((steps + 1, src.size), bool))
    mine = async_gossip.joint(plan.W, rounds, np.arange(built.n))
    sync = gossip.joint(plan.W, plan.adj, steps)
    np.testing.assert_allclose(mine.values, sync.values, rtol=0, atol=1e-9)
