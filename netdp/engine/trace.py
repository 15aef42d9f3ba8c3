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
    """

    src: np.ndarray
    dst: np.ndarray
    steps: int
    arrivals: np.ndarray | None = None

    @property
    def messages(self) -> int:
        """Messages delivered over all rounds."""
        return (self.steps + 1) * int(self.src.size)


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
    """

    n: int
    holders: np.ndarray
    times: np.ndarray | None = None
    period: float = 1.0
    engine: str = "vector"
    gossip: GossipRounds | None = None

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
        return self.holders.size + (self.gossip.messages if self.gossip is not None else 0)

    def hop_times(self) -> np.ndarray:
        """``(tokens, steps)`` times, materialized if the trace stores a period only."""
        if self.times is not None:
            return self.times
        return np.broadcast_to(np.arange(self.steps) * self.period, self.holders.shape)

    def visits(self) -> np.ndarray:
        """How many times each node held a token (``n`` counts)."""
        return np.bincount(self.holders.ravel(), minlength=self.n)

    def same_walk(self, other: Trace) -> bool:
        """Whether two traces hold the same holders and the same hop times."""
        return (self.n == other.n and np.array_equal(self.holders, other.holders)
                and np.array_equal(self.hop_times(), other.hop_times()))


def holder_dtype(n: int) -> np.dtype:
    """The smallest signed integer type for node ids ``0..n-1``."""
    return np.dtype(np.int32) if n < 2**31 else np.dtype(np.int64)
