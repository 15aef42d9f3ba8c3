"""Partial rounds on a time-varying graph: each edge of the snapshot in force fires with
probability p; the exact loss against a brute force built from the messages that fired,
the synchronous time-varying run at p = 1, and a log of such a run accounted."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import netdp
from netdp.engine import async_gossip as AG
from netdp.engine import time_varying_gossip as E
from netdp.graphs.gossip_snapshots import gossip_plan
from netdp.graphs.time_varying import from_networkx_sequence
from netdp.tracking import async_gossip


def snapshots(seed: int, n: int = 6, k: int = 3) -> list[nx.Graph]:
    rng = np.random.default_rng(seed)
    while True:
        graphs = [nx.gnp_random_graph(n, 0.5, seed=int(rng.integers(2**31)))
                  for _ in range(k)]
        if nx.is_connected(nx.compose_all(graphs)):
            return graphs


def brute_force(plan, rounds, n: int, members: list[int]) -> np.ndarray:
    """``c[u]`` from the view ``M`` (own values, then every message a member received,
    ``B_t[w]``), ``B`` the product of the rounds' matrices written entry by entry."""
    B = np.eye(n)
    rows = [np.eye(n)[v] for v in members]
    for t in range(rounds.steps + 1):
        W = np.asarray(plan.matrices[int(rounds.snapshot[t])].todense())
        on = np.flatnonzero(rounds.fired[t])
        Wt = np.eye(n)
        for s, d in zip(rounds.src[on].tolist(), rounds.dst[on].tolist(), strict=True):
            if d in members:
                rows.append(B[s].copy())
            Wt[d, s] += W[d, s]
            Wt[d, d] -= W[d, s]
        B = Wt @ B
    M = np.array(rows)
    pinv = np.linalg.pinv(M @ M.T, rcond=1e-10, hermitian=True)
    return np.einsum("iu,ij,ju->u", M, pinv, M)


@pytest.mark.parametrize("seed", range(4))
def test_each_observer_and_a_coalition_against_the_brute_force(seed):
    tv = from_networkx_sequence(snapshots(seed), period=1, after="cycle")
    plan = gossip_plan(tv)
    timed = E.run(plan, 3).gossip
    rounds = AG.timed_partial(timed, 0.6, plan.n, np.random.default_rng(seed))
    assert (rounds.fired <= np.stack([np.isin(np.arange(rounds.src.size),
                                              timed.carried[k]) for k in timed.snapshot])).all()
    losses = async_gossip.joint(plan.matrices, rounds, np.arange(plan.n))
    assert losses.uncertified == 0
    for v in range(plan.n):
        np.testing.assert_allclose(losses.values[v], brute_force(plan, rounds, plan.n, [v]),
                                   rtol=0, atol=1e-9)
    pooled = async_gossip.coalition(plan.matrices, rounds, [0, 4])
    np.testing.assert_allclose(pooled.values[0], brute_force(plan, rounds, plan.n, [0, 4]),
                               rtol=0, atol=1e-9)


def test_every_edge_fired_is_the_synchronous_time_varying_run():
    graphs = snapshots(7, n=8)
    base = {"task": "sum", "protocol": "gossip", "topology": graphs, "sigma": 1.0,
            "steps": 4, "seed": 3}
    sync = netdp.simulate(base)
    partial = netdp.simulate({**base, "gossip_schedule": "partial", "edge_probability": 1.0})
    assert partial.privacy.empirical[0].mean == pytest.approx(sync.privacy.empirical[0].mean,
                                                              rel=1e-9)
    assert partial.utility.estimate == pytest.approx(sync.utility.estimate, rel=1e-12)
    half = netdp.simulate({**base, "gossip_schedule": "partial", "edge_probability": 0.5})
    assert "time-varying" in half.privacy.note and half.privacy.details["schedule"] == "partial"


def test_a_log_of_time_varying_partial_rounds(tmp_path):
    graphs = snapshots(11, n=7)
    paths = []
    for i, g in enumerate(graphs):
        paths.append(tmp_path / f"s{i}.edgelist")
        nx.write_edgelist(g, paths[-1], data=False)
    params = {"task": "sum", "protocol": "gossip", "topology": graphs, "sigma": 1.0,
              "steps": 3, "seed": 5, "runs": 2, "gossip_schedule": "partial",
              "edge_probability": 0.5}
    log = tmp_path / "log.csv"
    made = netdp.simulate(params, trace_out=log)
    text = [line for line in log.read_text().splitlines() if not line.startswith("# topology")]
    (tmp_path / "plain.csv").write_text("\n".join(text) + "\n")
    accounted = netdp.account(tmp_path / "plain.csv", topology=graphs)
    assert accounted.privacy.empirical[0].mean == made.privacy.empirical[0].mean
