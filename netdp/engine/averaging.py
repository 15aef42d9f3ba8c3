"""Gossip averaging's values: ``x_t = A_t z`` for t = 0..T, with ``A_t = W^t`` (plain) or
the Chebyshev polynomial ``P_t(W)`` (accelerated), on synchronous rounds or on the realised
rounds of a faulty run (a lost message leaves the receiver with the last value it got).
The engines record who sent to whom (:mod:`netdp.engine.gossip_rounds`); the trackers read
``A_t`` (:mod:`netdp.tracking.gossip`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from scipy import sparse

from netdp.core.errors import check
from netdp.graphs.gossip_matrix import chebyshev_gamma, spectral_gap


def resolve_gamma(W: Any, accelerated: bool, gamma: float | None) -> float | None:
    if not accelerated:
        check(gamma is None, "gamma", "only an accelerated run takes gamma")
        return None
    if gamma is None:
        return chebyshev_gamma(spectral_gap(W))
    check(0.0 < gamma < 2.0, "gamma", f"must be in (0, 2) (got {gamma})")
    return float(gamma)


def iterate(W: Any, X: np.ndarray, steps: int, gamma: float | None) -> Iterator[np.ndarray]:
    """``A_t X`` for t = 0..steps: ``W^t X``, or ``P_t(W) X`` with ``P_0 = I``, ``P_1 = W``,
    ``P_{t+1} = γ W P_t + (1 - γ) P_{t-1}`` when ``gamma`` is given."""
    prev, cur = None, X
    yield cur
    for _ in range(steps):
        nxt = W @ cur
        if gamma is not None and prev is not None:
            nxt *= gamma
            nxt += (1.0 - gamma) * prev
        prev, cur = cur, nxt
        yield cur


def gossip(W: Any, x0: np.ndarray, steps: int, accelerated: bool = False,
           gamma: float | None = None) -> np.ndarray:
    """Run T synchronous gossip steps from the (noisy) values ``x0``.

    Parameters
    ----------
    W
        Symmetric doubly stochastic n × n matrix (sparse or dense).
    x0
        Shape ``(n,)``, or ``(n, k)`` for k independent runs at once.
    steps
        T >= 0.
    accelerated
        Chebyshev acceleration (spec §3.1): ``x_1 = W x_0``,
        ``x_{t+1} = γ W x_t + (1 - γ) x_{t-1}``; the state after t steps is ``P_t(W) x_0``.
    gamma
        The acceleration parameter; default :func:`chebyshev_gamma` of
        :func:`spectral_gap` (an eigensolve: pass it when known).

    Returns
    -------
    np.ndarray
        The states ``x_0..x_T``, shape ``(steps + 1, *x0.shape)``. One sparse
        mat-vec per step.
    """
    check_steps(steps)
    x0 = np.asarray(x0, dtype=np.float64)
    check(x0.ndim in (1, 2) and x0.shape[0] == W.shape[0], "x0",
          f"expected shape ({W.shape[0]},) or ({W.shape[0]}, k) (got {x0.shape})")
    g = resolve_gamma(W, accelerated, gamma)
    out = np.empty((steps + 1, *x0.shape))
    for t, state in enumerate(iterate(W, x0, steps, g)):
        out[t] = state
    return out


def received(states: np.ndarray, adj: sparse.csr_array, v: int) -> tuple[np.ndarray, np.ndarray]:
    """What node v receives (spec "What v sees"): ``x_t[w]`` from each neighbour w.

    Returns
    -------
    neighbours, values
        The neighbours of v (sorted), and ``values[t, j] = states[t, neighbours[j]]``
        for t = 0..T (v's own state excluded: it knows it).
    """
    neighbours = adj.indices[adj.indptr[v]:adj.indptr[v + 1]]
    return neighbours, states[:, neighbours]


def faulty_iterate(W: Any, X: np.ndarray, rounds: Any) -> Iterator[np.ndarray]:
    """``X_t`` for t = 0..steps of plain gossip with the rounds' faults: a receiver that
    misses a message uses the last value it got from that sender (its own current state
    before the first), and a frozen node keeps its state. Without a fault this is
    ``W^t X``.

    ``x_{t+1}[i] = W_ii x_t[i] + Σ_j W_ij y_t[j → i]``, ``y`` the delivered or the stale
    value. The weights of every row still sum to 1, so the states stay in the range of
    the values, but the columns no longer do: the mean of the states drifts towards the
    nodes whose messages got through, which is the bias of this rule.
    """
    W = sparse.csr_array(W)
    n = W.shape[0]
    src, dst = rounds.src, rounds.dst
    weight = np.asarray(W[dst, src]).ravel()
    spread = sparse.csr_array((weight, (dst, np.arange(src.size))), shape=(n, src.size))
    diag = W.diagonal()
    X = np.asarray(X, dtype=np.float64)
    cols = (slice(None),) + (None,) * (X.ndim - 1)
    last = np.zeros((src.size, *X.shape[1:]))
    got = np.zeros(src.size, dtype=bool)
    yield X
    for t in range(rounds.steps):
        lost = rounds.lost[t]
        stale = np.where(got[cols], last, X[dst])
        y = np.where(lost[cols], stale, X[src])
        last, got = np.where(lost[cols], last, y), got | ~lost
        new = diag[cols] * X + spread @ y
        frozen = rounds.frozen[t]
        new[frozen] = X[frozen]
        X = new
        yield X


def faulty_gossip(W: Any, x0: np.ndarray, rounds: Any) -> np.ndarray:
    """The states ``x_0..x_T`` of plain gossip with the rounds' faults
    (:func:`faulty_iterate`), shape ``(steps + 1, *x0.shape)``."""
    return np.stack(list(faulty_iterate(W, x0, rounds)))


def check_steps(steps: int) -> None:
    check(isinstance(steps, int | np.integer) and steps >= 0, "steps",
          f"must be an integer >= 0 (got {steps!r})")
