"""Gossip rounds on a time-varying graph: round ``t`` uses the snapshot in force at ``t``.

At round ``t = 0..T`` every node sends its state ``x_t`` to its neighbours in snapshot
``s(t) = snapshot_at(t)``, and (for ``t < T``) every node moves to ``x_{t+1} = W_{s(t)}
x_t`` with that snapshot's gossip matrix (:mod:`netdp.graphs.gossip_snapshots`). So
``x_t = B_t z`` with the realised products ``B_t = W_{s(t-1)} ⋯ W_{s(0)}`` (``B_0 = I``)
applied to the noisy values ``z``. Plain steps only (Chebyshev acceleration is tuned to
one matrix's spectral gap), synchronous rounds, no faults. With one snapshot this is the
static engine (:func:`netdp.engine.gossip_rounds.run` and
:func:`netdp.engine.averaging.gossip`), bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from netdp.core.errors import check
from netdp.engine.averaging import check_steps
from netdp.engine.trace import GossipRounds, Trace
from netdp.graphs.gossip_snapshots import SnapshotGossip

MAX_ROW_NORM_NODES = 4000
"""Largest n of :func:`final_row_norms` (an n × n dense product)."""


@dataclass(frozen=True, eq=False)
class TimedGossipRounds(GossipRounds):
    """Gossip rounds whose links change with the round.

    ``src, dst`` (inherited) are the directed edges of the union of the snapshots; round
    ``t`` carries only those of snapshot ``snapshot[t]``: the indices ``carried[k]``.

    Attributes
    ----------
    snapshot
        ``(steps + 1,)``: the snapshot in force at each round.
    carried
        Per snapshot, the indices into ``src``/``dst`` of its directed edges.
    """

    snapshot: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    carried: tuple[np.ndarray, ...] = ()

    @property
    def messages(self) -> int:
        """Messages delivered over all rounds."""
        if self.fired is not None:  # partial rounds: those of the snapshot that fired
            return int(self.fired.sum())
        return int(sum(self.carried[int(k)].size for k in self.snapshot))

    def all_messages(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(t, src, dst)`` of every message, round by round (each round its snapshot's
        edges; of partial rounds, those that fired)."""
        if self.fired is not None:
            return super().all_messages()
        idx = [self.carried[int(k)] for k in self.snapshot]
        t = np.repeat(np.arange(self.steps + 1), [i.size for i in idx])
        every = np.concatenate(idx)
        return t, self.src[every], self.dst[every]

    def links(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """``(src, dst)`` of the messages of round ``t``."""
        idx = self.carried[int(self.snapshot[t])] if self.fired is None else \
            np.flatnonzero(self.fired[t])
        return self.src[idx], self.dst[idx]


def run(plan: SnapshotGossip, steps: int) -> Trace:
    """Record ``steps`` gossip rounds (messages at ``t = 0..steps``) on ``plan``'s
    time-varying graph (vector engine: one time unit per round)."""
    check_steps(steps)
    n = plan.n
    keys = []
    for adj in plan.adjacencies:
        rows, cols = adj.nonzero()
        keys.append(rows.astype(np.int64) * n + cols)
    union = np.unique(np.concatenate(keys))
    src, dst = np.divmod(union, n)
    carried = tuple(np.searchsorted(union, np.sort(k)) for k in keys)
    snapshot = np.array([plan.snapshot(t) for t in range(steps + 1)], dtype=np.int64)
    rounds = TimedGossipRounds(src, dst, steps, snapshot=snapshot, carried=carried)
    return Trace(n, np.empty((0, 0), dtype=np.int64), None, period=1.0, engine="vector",
                 gossip=rounds)


def states(plan: SnapshotGossip, x0: np.ndarray, steps: int) -> np.ndarray:
    """The states ``x_0..x_T`` of plain gossip from the noisy values ``x0``.

    Parameters
    ----------
    plan
        The per-snapshot matrices.
    x0
        Shape ``(n,)``, or ``(n, k)`` for k runs at once.
    steps
        T >= 0.

    Returns
    -------
    np.ndarray
        Shape ``(steps + 1, *x0.shape)``; ``x_{t+1} = W_{s(t)} x_t``, one sparse mat-vec
        per step (the static :func:`~netdp.engine.averaging.gossip`'s operations).
    """
    check_steps(steps)
    x0 = np.asarray(x0, dtype=np.float64)
    check(x0.ndim in (1, 2) and x0.shape[0] == plan.n, "x0",
          f"expected shape ({plan.n},) or ({plan.n}, k) (got {x0.shape})")
    out = np.empty((steps + 1, *x0.shape))
    out[0] = x0
    for t, W in enumerate(plan.round_matrices(steps)):
        out[t + 1] = W @ out[t]
    return out


def received(rounds: TimedGossipRounds, states: np.ndarray,
             observer: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What ``observer`` receives: ``(senders, steps, values)``, one entry per message
    (``values[i] = states[steps[i], senders[i]]``), rounds in order, senders sorted."""
    senders, steps = [], []
    for t in range(rounds.steps + 1):
        src, dst = rounds.links(t)
        got = np.sort(src[dst == observer])
        senders.append(got)
        steps.append(np.full(got.size, t, dtype=np.int64))
    who, when = np.concatenate(senders), np.concatenate(steps)
    return who, when, states[when, who]


def final_row_norms(plan: SnapshotGossip, steps: int) -> np.ndarray:
    """``‖(B_T)_{v,:}‖²`` per node: the variance of node v's final state is ``σ²`` times
    it (the time-varying ``MS.row_norms(W, T)[-1]``). Dense ``n × n`` (up to
    :data:`MAX_ROW_NORM_NODES` nodes)."""
    check(plan.n <= MAX_ROW_NORM_NODES, "nodes", f"the final row norms of time-varying "
          f"gossip hold an n x n product: up to n = {MAX_ROW_NORM_NODES} (got {plan.n})")
    B = np.eye(plan.n)
    for W in plan.round_matrices(steps):
        B = np.asarray(W @ B)
    return np.einsum("ij,ij->i", B, B)
