"""Gossip schedules other than synchronous rounds: which messages happen, and the states.

``sync`` (:mod:`netdp.engine.gossip_rounds`): every edge carries a message both ways at
every round ``t = 0..T``, and ``x_{t+1} = W x_t``. The others, drawn from the run's
``schedule`` stream (its own child of the seed: the other streams are unchanged):

``partial``
    At every round ``t = 0..T`` each undirected edge fires with probability ``p``,
    independently; a fired edge carries both messages. Node i then moves to
    ``x_{t+1}[i] = x_t[i] + Σ_{j -> i fired} W_ij (x_t[j] - x_t[i])``: the weights of the
    edges that did not fire stay on the diagonal, so the round's matrix ``W_t``
    (:func:`round_matrix`) is symmetric and doubly stochastic, and with every edge fired
    it is W. The trace's :attr:`~netdp.engine.trace.GossipRounds.fired` says which
    messages happened (a log's rounds may also fire one direction alone: the rule is
    then per receiver, row stochastic).
``pairwise``
    Randomized pairwise gossip (Boyd, Ghosh, Prabhakar, Shah, IEEE Trans. Inf. Theory
    2006): every node wakes on a rate-1 Poisson clock, i.e. at each tick one uniformly
    random node wakes (ticks ``Exp(n)`` apart), picks a uniformly random neighbour, and
    both set their states to their mean. An exchange is two messages (each sends its
    state before averaging: push-pull). ``T`` time units are ``n T`` ticks.
``push-pull``
    The cycle-driven push-pull averaging of PeerSim and of Jelasity, Montresor and
    Babaoglu (ACM TOCS 2005): in each of ``T`` cycles every node wakes once, in a random
    order, and exchanges with a uniformly random neighbour, as above.

The tick loop is one compiled kernel (:mod:`netdp.engine._gossip_kernel`); rounds are
one sparse mat-vec each.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from netdp.core.errors import check
from netdp.engine.trace import GossipRounds, Trace
from netdp.graphs.topologies import Topology, edges

SCHEDULES = ("sync", "pairwise", "push-pull", "partial")
TICKING = ("pairwise", "push-pull")
MAX_TICKS = 10**8
"""Most exchanges of one pairwise run (``n T``): its schedule is four arrays of that size."""


def _empty() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class PairwiseGossip(GossipRounds):
    """Gossip by pairwise exchanges, one per tick (``pairwise`` and ``push-pull``).

    ``src, dst`` (inherited) are the graph's directed edges; ``steps`` the time units
    (the states are recorded every ``n`` ticks: ``steps + 1`` of them).

    Attributes
    ----------
    first, second
        ``(ticks,)``: at tick k node ``first[k]`` wakes and exchanges with its neighbour
        ``second[k]``: messages ``first -> second`` and ``second -> first``, then both
        hold their mean.
    times
        ``(ticks,)``: when each tick happens.
    schedule
        ``pairwise`` or ``push-pull``.
    """

    first: np.ndarray = field(default_factory=_empty)
    second: np.ndarray = field(default_factory=_empty)
    times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    schedule: str = "pairwise"

    @property
    def ticks(self) -> int:
        """Exchanges."""
        return int(self.first.size)

    @property
    def messages(self) -> int:
        """Messages delivered: two per exchange."""
        return 2 * self.ticks

    def all_messages(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(tick, src, dst)`` of every message: per tick ``first -> second``, then
        ``second -> first``."""
        tick = np.repeat(np.arange(self.ticks), 2)
        return (tick, np.stack([self.first, self.second], axis=1).ravel(),
                np.stack([self.second, self.first], axis=1).ravel())


def run(schedule: str, topology: Topology, steps: int, rng: np.random.Generator,
        edge_probability: float | None = None) -> Trace:
    """The trace of ``steps`` rounds (``partial``) or time units (``pairwise``,
    ``push-pull``) of gossip on ``topology``, the schedule drawn from ``rng``."""
    src, dst = edges(topology)
    n = topology.n
    if schedule == "partial":
        assert edge_probability is not None
        rounds: GossipRounds = GossipRounds(src, dst, steps, fired=partial_fired(
            src, dst, n, steps, edge_probability, rng))
    else:
        first, second, times = pairwise_schedule(src, dst, n, steps, rng,
                                                 cycles=schedule == "push-pull")
        rounds = PairwiseGossip(src, dst, steps, first=first, second=second, times=times,
                                schedule=schedule)
    return Trace(n, np.empty((0, 0), dtype=np.int64), None, period=1.0, engine="vector",
                 gossip=rounds)


def partial_fired(src: np.ndarray, dst: np.ndarray, n: int, steps: int, p: float,
                  rng: np.random.Generator) -> np.ndarray:
    """``(steps + 1, edges)``: which directed messages happen, each undirected edge
    (``src < dst``, in edge order) firing both ways with probability ``p`` per round."""
    key = src * n + dst
    order = np.argsort(key)
    reverse = order[np.searchsorted(key[order], dst * n + src)]
    lower = np.flatnonzero(src < dst)
    which = np.empty(src.size, dtype=np.int64)
    which[lower] = np.arange(lower.size)
    which[reverse[lower]] = np.arange(lower.size)
    fires = rng.random((steps + 1, lower.size)) < p
    return fires[:, which]


def pairwise_schedule(src: np.ndarray, dst: np.ndarray, n: int, steps: int,
                      rng: np.random.Generator, cycles: bool = False
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(first, second, times)`` of ``n · steps`` exchanges: the waking node (uniform,
    or every node once per cycle in a random order), a uniform neighbour of it, and the
    tick times (``Exp(n)`` gaps; cycle-driven: tick k at ``(k + 1) / n``)."""
    ticks = n * steps
    check(ticks <= MAX_TICKS, "steps", f"pairwise gossip makes n * steps exchanges: at most "
          f"{MAX_TICKS:.0e} (got {ticks})")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=n))])
    if cycles:
        first = rng.permuted(np.tile(np.arange(n, dtype=np.int64), (steps, 1)), axis=1).ravel()
        times = np.arange(1, ticks + 1) / n
    else:
        first = rng.integers(0, n, size=ticks, dtype=np.int64)
        times = np.cumsum(rng.standard_exponential(ticks)) / n
    u = rng.random(ticks)
    lo = indptr[first]
    second = dst[lo + (u * (indptr[first + 1] - lo)).astype(np.int64)]
    return first, second.astype(np.int64), times


def edge_weights(W: Any, rounds: GossipRounds) -> np.ndarray:
    """``W[dst, src]`` for every directed edge of the rounds; ``W`` a sequence of matrices
    (a time-varying graph's snapshots): one row per snapshot."""
    from scipy import sparse

    if isinstance(W, list | tuple):
        return np.stack([edge_weights(M, rounds) for M in W])
    return np.asarray(sparse.csr_array(W)[rounds.dst, rounds.src]).ravel()


def nodes_of(W: Any) -> int:
    """n of a gossip matrix, or of a sequence of them."""
    return int((W[0] if isinstance(W, list | tuple) else W).shape[0])


def timed_partial(rounds: Any, p: float, n: int, rng: np.random.Generator) -> Any:
    """Partial rounds on a time-varying graph: each edge of the snapshot in force fires
    with probability ``p`` (both ways), drawn per edge of the union and round."""
    fires = partial_fired(rounds.src, rounds.dst, n, rounds.steps, p, rng)
    there = np.zeros_like(fires)
    for t, k in enumerate(rounds.snapshot.tolist()):
        there[t, rounds.carried[k]] = True
    return dataclasses.replace(rounds, fired=fires & there)


def round_matrix(n: int, rounds: GossipRounds, weights: np.ndarray, t: int) -> Any:
    """``W_t``: round ``t``'s averaging over the messages that fired (module docstring):
    ``W_t[i, j] = W_ij`` for each fired ``j -> i``, the rest of row i on its diagonal."""
    from scipy import sparse

    assert rounds.fired is not None
    on = np.flatnonzero(rounds.fired[t])
    if weights.ndim == 2:  # a time-varying graph: the weights of the snapshot in force
        weights = weights[int(rounds.snapshot[t])]  # type: ignore[attr-defined]
    s, d, w = rounds.src[on], rounds.dst[on], weights[on]
    diag = 1.0 - np.bincount(d, weights=w, minlength=n)
    return sparse.csr_array((np.concatenate([w, diag]),
                             (np.concatenate([d, np.arange(n)]),
                              np.concatenate([s, np.arange(n)]))), shape=(n, n))


def partial_states(W: Any, x0: np.ndarray, rounds: GossipRounds) -> np.ndarray:
    """The states ``x_0..x_T`` of partial rounds, ``x_{t+1} = W_t x_t``: shape
    ``(steps + 1, *x0.shape)``."""
    x0 = np.asarray(x0, dtype=np.float64)
    weights = edge_weights(W, rounds)
    out = np.empty((rounds.steps + 1, *x0.shape))
    out[0] = x0
    for t in range(rounds.steps):
        out[t + 1] = round_matrix(x0.shape[0], rounds, weights, t) @ out[t]
    return out


def pairwise_states(rounds: PairwiseGossip, x0: np.ndarray, n: int,
                    keep: np.ndarray | None = None,
                    record: bool = True) -> tuple[np.ndarray | None, np.ndarray]:
    """Run the exchanges from ``x0`` (``(n,)`` or ``(n, c)``).

    Returns
    -------
    states, sent
        ``(steps + 1, *x0.shape)``: the states every ``n`` ticks (one time unit on
        average) and at the end (``None`` unless ``record``); ``(kept, *x0.shape[1:])``:
        what each message of ``keep`` (indices into :meth:`PairwiseGossip.all_messages`,
        default every one) carried.
    """
    from netdp.engine._gossip_kernel import pairwise_average

    x0 = np.asarray(x0, dtype=np.float64)
    X = np.array(x0.reshape(n, -1), dtype=np.float64, order="C")
    slot = np.full(2 * rounds.ticks, -1, dtype=np.int64)
    keep = np.arange(2 * rounds.ticks) if keep is None else np.asarray(keep, dtype=np.int64)
    slot[keep] = np.arange(keep.size)
    sent = np.empty((keep.size, X.shape[1]))
    shape = (rounds.steps + 1, n, X.shape[1]) if record else (1, 1, 1)
    states = np.empty(shape)
    pairwise_average(rounds.first, rounds.second, X, slot, sent, n if record else 0, states)
    return (states.reshape(rounds.steps + 1, *x0.shape) if record else None,
            sent.reshape(keep.size, *x0.shape[1:]))


def scheduled_states(W: Any, x0: np.ndarray, rounds: GossipRounds) -> np.ndarray:
    """The states ``x_0..x_T`` of a partial or pairwise run (every ``n`` ticks)."""
    if isinstance(rounds, PairwiseGossip):
        states, _ = pairwise_states(rounds, x0, nodes_of(W), keep=np.zeros(0, np.int64))
        assert states is not None
        return states
    return partial_states(W, x0, rounds)


def is_scheduled(rounds: GossipRounds | None) -> bool:
    """Whether the rounds are of a schedule other than ``sync`` (partial or pairwise)."""
    return rounds is not None and (rounds.fired is not None
                                   or isinstance(rounds, PairwiseGossip))


def received(rounds: GossipRounds, W: Any, x0: np.ndarray,
             observer: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What ``observer`` receives: ``(senders, when, values)``, one entry per message in
    time order (``when``: the round, or the tick)."""
    when, src, dst = rounds.all_messages()
    mine = np.flatnonzero(dst == observer)
    if isinstance(rounds, PairwiseGossip):
        _, sent = pairwise_states(rounds, x0, nodes_of(W), keep=mine, record=False)
        return src[mine], when[mine], sent
    states = partial_states(W, x0, rounds)
    return src[mine], when[mine], states[when[mine], src[mine]]
