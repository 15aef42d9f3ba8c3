"""Gossip engines: synchronous rounds in which every node sends its state to each of its
neighbours. The protocol (the task) decides what the states are; the engine records who
sent to whom, and when.

``vector``: every round takes one time unit. ``event`` (simpy): each message takes a
latency drawn from the run's ``latency`` stream, and a node starts its next round when it
has heard from every neighbour (a synchronizer), so the states are those of the
synchronous rounds and only the times differ. With faults, messages are lost (a lossy
link, or a node down at that round): :func:`lose_messages`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from netdp.engine.clock import CONSTANT, Latency
from netdp.engine.trace import FaultLog, GossipRounds, Trace
from netdp.graphs.topologies import Topology, edges


def run(engine: str, topology: Topology, steps: int, latency: Latency = CONSTANT,
        latency_rng: np.random.Generator | None = None, faults: Any = None) -> Trace:
    """Record ``steps`` gossip rounds (messages at ``t = 0..steps``) on ``topology``;
    ``faults``: a :class:`~netdp.engine.faults.FaultRun` whose losses and churn drop
    messages (:func:`lose_messages`)."""
    src, dst = edges(topology)
    arrivals = None
    if engine == "event" and not latency.is_constant:
        assert latency_rng is not None
        arrivals = _event_arrivals(topology.n, src, dst, steps, latency, latency_rng)
    holders = np.empty((0, 0), dtype=np.int64)
    period = latency.a if latency.is_constant else latency.mean
    if faults is None:
        return Trace(topology.n, holders, None, period=period, engine=engine,
                     gossip=GossipRounds(src, dst, steps, arrivals))
    lost, frozen, log = lose_messages(faults, topology.n, src, dst, steps, period)
    return Trace(topology.n, holders, None, period=period, engine=engine,
                 gossip=GossipRounds(src, dst, steps, arrivals, lost, frozen), faults=log)


def lose_messages(faults: Any, n: int, src: np.ndarray, dst: np.ndarray, steps: int,
                  period: float) -> tuple[np.ndarray, np.ndarray, FaultLog]:
    """Which messages of the rounds are lost, which nodes are down, and the log.

    Round ``t`` happens at time ``t · period``. A message is lost when its link loses it
    (the loss model, drawn per message from the faults stream) or when its sender or
    receiver is down then; a node down at round ``t`` keeps its state to ``t + 1``.
    """
    rng, nodes, loss = faults.rngs[0], faults.nodes, faults.faults.loss
    m = src.size
    if loss.law == "iid":
        lost = rng.random((steps + 1, m)) < loss.p
    elif loss.law == "file":
        p = np.array([loss.links.get((int(a), int(b)), 0.0) for a, b in zip(src, dst,
                                                                             strict=True)])
        lost = rng.random((steps + 1, m)) < p
    else:  # Gilbert-Elliott, one chain per directed link
        lost = np.empty((steps + 1, m), dtype=bool)
        bad = np.zeros(m, dtype=bool)
        for t in range(steps + 1):
            u = rng.random((2, m))
            bad = np.where(bad, u[0] >= loss.p_bg, u[0] < loss.p_gb)
            lost[t] = u[1] < np.where(bad, loss.bad, loss.good)
    up = np.stack([nodes.up_at(t * period) for t in range(steps + 1)])
    lost |= ~up[:, src] | ~up[:, dst]
    frozen = ~up[:steps]
    log = FaultLog(sent=int((steps + 1) * m), resent=0, lost=int(lost.sum()), duplicated=0,
                   skipped=0, regenerated=0, lost_tokens=(), completion_time=steps * period,
                   downtime=nodes.mean_downtime(range(n), steps * period))
    return lost, frozen, log


def _event_arrivals(n: int, src: np.ndarray, dst: np.ndarray, steps: int, latency: Latency,
                    rng: np.random.Generator) -> np.ndarray:
    """Arrival time of every message, round by round, with each node starting a round
    when all its neighbours' messages of the previous round have arrived (simpy)."""
    import simpy

    env = simpy.Environment()
    m = src.size
    arrivals = np.empty((steps + 1, m))
    delays = latency.draw(rng, (steps + 1) * m).reshape(steps + 1, m)
    incoming = np.bincount(dst, minlength=n)
    by_src = np.split(np.argsort(src, kind="stable"),
                      np.cumsum(np.bincount(src, minlength=n))[:-1])  # messages u sends
    heard = [[env.event() for _ in range(n)] for _ in range(steps + 1)]
    count = np.zeros((steps + 1, n), dtype=np.int64)

    def deliver(t: int, e: int):
        yield env.timeout(delays[t, e])
        arrivals[t, e] = env.now
        v = int(dst[e])
        count[t, v] += 1
        if count[t, v] == incoming[v]:
            heard[t][v].succeed()

    def node(u: int):
        for t in range(steps + 1):
            for e in by_src[u]:
                env.process(deliver(t, int(e)))
            if incoming[u] and t < steps:
                yield heard[t][u]  # round t + 1 starts once every neighbour was heard
            else:
                yield env.timeout(0)

    for u in range(n):
        env.process(node(u))
    env.run()
    return arrivals
