"""Trace: what happened on a walk, the one thing every engine produces.

Engines decide *who holds which token when*; protocols decide *what a holder adds*;
the privacy tracker reads *who saw what*. The trace is the contract between them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class GossipRounds:
    """Gossip: at every step ``t = 0..steps`` each directed edge ``src -> dst`` carries
    the state of ``src`` (synchronous rounds).

    Attributes
    ----------
    src, dst
        The directed edges that carry messages (both directions of each undirected edge).
    steps
        Averaging steps after the initial state: messages go out at ``t = 0..steps``.
    arrivals
        ``(steps + 1, edges)`` time at which each message arrived (event engine), or
        ``None`` when every round takes one time unit.
    lost
        With faults: ``(steps + 1, edges)``, which messages never arrived (a lossy link,
        or a sender or receiver down). The receiver uses instead the last value it got
        from that neighbour (its own state before the first).
    frozen
        With faults: ``(steps, n)``, which nodes were down between step ``t`` and
        ``t + 1`` and kept their state.
    fired
        Partial rounds (:mod:`netdp.engine.async_gossip`): ``(steps + 1, edges)``, which
        messages happened; ``None``: every one (synchronous rounds).
    """

    src: np.ndarray
    dst: np.ndarray
    steps: int
    arrivals: np.ndarray | None = None
    lost: np.ndarray | None = None
    frozen: np.ndarray | None = None
    fired: np.ndarray | None = None

    @property
    def messages(self) -> int:
        """Messages delivered over all rounds."""
        if self.fired is not None:
            return int(self.fired.sum())
        return (self.steps + 1) * int(self.src.size)

    def all_messages(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(t, src, dst)`` of every message, round by round (lost ones included; of
        partial rounds, those that fired)."""
        t = np.repeat(np.arange(self.steps + 1), self.src.size)
        src, dst = np.tile(self.src, self.steps + 1), np.tile(self.dst, self.steps + 1)
        if self.fired is None:
            return t, src, dst
        on = self.fired.reshape(-1)
        return t[on], src[on], dst[on]


@dataclass(frozen=True, eq=False)
class FaultLog:
    """What went wrong in one run of the event engine with faults (spec §5).

    Attributes
    ----------
    sent, resent
        Messages that carried a token (first sends and sends again after a timeout).
    lost
        Messages lost: tokens and acks dropped by a link, and tokens sent to a node that
        was down.
    duplicated
        Copies of a token that reached a receiver which already had it (dropped by it).
    skipped
        Next holders routed around because they were down (``skip``).
    regenerated
        New tokens started in place of lost ones (``regenerate``).
    lost_tokens
        ``(token, step, time, why)`` of each token lost for good; its steps from ``step``
        on never happened.
    completion_time
        When the last token made its last step (or was lost).
    downtime
        Mean share of ``[0, completion_time)`` that the nodes the walk tried to reach
        were down.
    finished
        The rows of the trace that made all their steps (the others were lost, and end
        in ``-1``).
    origin
        For each row, the token it walks for (a regenerated token walks for the one it
        replaces).
    """

    sent: int
    resent: int
    lost: int
    duplicated: int
    skipped: int
    regenerated: int
    lost_tokens: tuple[tuple[int, int, float, str], ...]
    completion_time: float
    downtime: float
    finished: tuple[int, ...] = ()
    origin: tuple[int, ...] = ()

    @property
    def completed(self) -> bool:
        """Whether every token made all its steps (itself, or a token regenerated in its
        place)."""
        if not self.origin:
            return not self.lost_tokens
        return {self.origin[r] for r in self.finished} == set(self.origin)

    def to_dict(self) -> dict:
        """The counts of the ``faults`` section."""
        return {"sent": self.sent, "resent": self.resent, "lost": self.lost,
                "duplicated": self.duplicated, "skipped": self.skipped,
                "regenerated": self.regenerated, "lost_tokens": len(self.lost_tokens),
                "completed": self.completed, "finished_tokens": len(self.finished),
                "completion_time": self.completion_time, "node_downtime": self.downtime}


@dataclass(frozen=True, eq=False)
class Trace:
    """Holders and hop times of every token.

    Attributes
    ----------
    n
        Number of nodes.
    holders
        ``(tokens, steps)`` integer array: ``holders[k, i]`` is the node that holds token
        ``k`` at its step ``i`` (and contributes to it); ``holders[k, i+1]`` is the node it
        forwards the token to.
    times
        ``(tokens, steps)`` float array, the time at which each holder takes the token,
        or ``None`` when hops are evenly spaced by ``period`` (``times = i * period``).
    period
        Time per hop when ``times`` is ``None``.
    engine
        ``"vector"`` or ``"event"``: which engine recorded it.
    gossip
        The rounds of a gossip run (optional; ``None`` for a walk, whose ``holders`` say
        everything). A gossip trace has no token: ``holders`` has shape ``(0, 0)``.
    faults
        What went wrong, when the run had faults (optional). A lost token's ``holders``
        after its loss are ``-1``: those steps never happened.
    """

    n: int
    holders: np.ndarray
    times: np.ndarray | None = None
    period: float = 1.0
    engine: str = "vector"
    gossip: GossipRounds | None = None
    faults: FaultLog | None = None

    @property
    def completed(self) -> bool:
        """Whether every token made all its steps (always, without faults)."""
        return self.faults is None or self.faults.completed

    def finished(self) -> Trace:
        """The tokens that made all their steps: what the protocol's result is made of
        (the trace itself when none was lost)."""
        if self.faults is None or len(self.faults.finished) == self.tokens:
            return self
        rows = list(self.faults.finished)
        times = None if self.times is None else self.times[rows]
        return Trace(self.n, self.holders[rows], times, self.period, self.engine)

    @property
    def tokens(self) -> int:
        """Number of tokens."""
        return self.holders.shape[0]

    @property
    def steps(self) -> int:
        """Steps (contributions) per token."""
        return self.holders.shape[1]

    @property
    def hops(self) -> int:
        """Contributions over all tokens (a gossip run: its messages)."""
        held = self.holders.size if self.faults is None else int((self.holders >= 0).sum())
        return held + (self.gossip.messages if self.gossip is not None else 0)

    def hop_times(self) -> np.ndarray:
        """``(tokens, steps)`` times, materialized if the trace stores a period only."""
        if self.times is not None:
            return self.times
        return np.broadcast_to(np.arange(self.steps) * self.period, self.holders.shape)

    def visits(self) -> np.ndarray:
        """How many times each node held a token (``n`` counts)."""
        return holder_counts(self.holders, self.n)

    def same_walk(self, other: Trace) -> bool:
        """Whether two traces hold the same holders and the same hop times."""
        return (self.n == other.n and np.array_equal(self.holders, other.holders)
                and np.array_equal(self.hop_times(), other.hop_times()))


#: Holders counted at a time by :func:`holder_counts`.
_VISIT_BLOCK = 1 << 22


def holder_counts(holders: np.ndarray, n: int) -> np.ndarray:
    """How many times each of ``n`` ids appears in ``holders`` (any shape; ``-1``, a lost
    step, is not counted).

    In blocks: one ``bincount`` of 10^8 holders would cast them all to ``intp`` first
    (800 MB of fresh memory), and a mask of the lost steps over all of them is another
    copy: 4 s at n = 10^6, T = 10^8, against 0.6 s.
    """
    held = holders.reshape(-1)
    out = np.zeros(n, np.int64)
    for start in range(0, held.size, _VISIT_BLOCK):
        block = held[start:start + _VISIT_BLOCK]
        if block.size and block.min() < 0:
            block = block[block >= 0]
        out += np.bincount(block, minlength=n)
    return out


def holder_dtype(n: int) -> np.dtype:
    """The smallest signed integer type for node ids ``0..n-1``."""
    return np.dtype(np.int32) if n < 2**31 else np.dtype(np.int64)
