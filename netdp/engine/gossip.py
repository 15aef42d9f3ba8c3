"""Gossip engines: synchronous rounds in which every node sends its state to each of its
neighbours. The protocol (the task) decides what the states are; the engine records who
sent to whom, and when.

``vector``: every round takes one time unit. ``event`` (simpy): each message takes a
latency drawn from the run's ``latency`` stream, and a node starts its next round when it
has heard from every neighbour (a synchronizer), so the states are those of the
synchronous rounds and only the times differ; the faults issue drops messages here.
"""

from __future__ import annotations

import numpy as np

from netdp.engine.clock import CONSTANT, Latency
from netdp.engine.trace import GossipRounds, Trace
from netdp.errors import InputError
from netdp.topology import Topology


def edges(topology: Topology) -> tuple[np.ndarray, np.ndarray]:
    """The directed edges ``(src, dst)`` that carry messages: both directions of every
    undirected edge, self-loops left out."""
    if topology.kind == "graph":
        assert topology.indptr is not None and topology.indices is not None
        if topology.directed:
            raise InputError("topology", f"gossip needs undirected edges ({topology.name} is "
                                         "directed)")
        src = np.repeat(np.arange(topology.n), np.diff(topology.indptr))
        dst = topology.indices
    elif topology.kind == "complete":
        n = topology.n
        src, dst = np.divmod(np.arange(n * n, dtype=np.int64), n)
    else:
        raise InputError("topology", "gossip needs an undirected graph; the ring is directed "
                                     "(use --protocol walk, or a cycle: --topology cycle.txt)")
    keep = src != dst
    return src[keep].astype(np.int64), dst[keep].astype(np.int64)


def run(engine: str, topology: Topology, steps: int, latency: Latency = CONSTANT,
        latency_rng: np.random.Generator | None = None) -> Trace:
    """Record ``steps`` gossip rounds (messages at ``t = 0..steps``) on ``topology``."""
    src, dst = edges(topology)
    arrivals = None
    if engine == "event" and not latency.is_constant:
        assert latency_rng is not None
        arrivals = _event_arrivals(topology.n, src, dst, steps, latency, latency_rng)
    holders = np.empty((0, 0), dtype=np.int64)
    period = latency.a if latency.is_constant else latency.mean
    return Trace(topology.n, holders, None, period=period, engine=engine,
                 gossip=GossipRounds(src, dst, steps, arrivals))


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
