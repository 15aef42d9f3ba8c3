"""Compiled walk kernel on CSR graphs (numba; compiled once, cached on disk).

Imported only when a walk on an explicit graph runs. ``tests/test_graph_walks.py``
checks it against the plain-Python rules it replaced: the same uniforms give the same
walk, bit for bit; ``tests/graphs/test_weighted_walks.py`` checks the weighted kernel
against a plain-numpy oracle the same way.
"""

from __future__ import annotations

import numba as nb
import numpy as np

SIMPLE, METROPOLIS, LAZY = 0, 1, 2
RULES = {"simple": SIMPLE, "metropolis": METROPOLIS, "lazy": LAZY}


@nb.njit(cache=True, nogil=True)
def graph_walk(indptr: np.ndarray, indices: np.ndarray, current: int, u: np.ndarray,
               rule: int, out: np.ndarray) -> np.ndarray:
    """Write the next ``len(u)`` holders after ``current`` into ``out`` and return it.

    Parameters
    ----------
    indptr, indices
        CSR out-neighbours (int64); every node has at least one.
    current
        The holder before the first hop.
    u
        ``(m, width)`` uniforms in ``[0, 1)``. ``SIMPLE`` (width 1): a uniform
        neighbour ``indices[lo + int(u0 * d_h)]``. ``METROPOLIS`` (width 2): propose
        that neighbour ``w`` from ``u0``, move iff ``u1 * d_w < d_h``. ``LAZY``
        (width 2): stay iff ``u0 < 0.5``, else the neighbour picked by ``u1``.
    rule
        ``SIMPLE``, ``METROPOLIS`` or ``LAZY``.
    out
        ``m`` holders (any integer type).
    """
    h = current
    m = u.shape[0]
    if rule == SIMPLE:
        for i in range(m):
            lo = indptr[h]
            h = indices[lo + int(u[i, 0] * (indptr[h + 1] - lo))]
            out[i] = h
    elif rule == METROPOLIS:
        for i in range(m):
            lo = indptr[h]
            d = indptr[h + 1] - lo
            w = indices[lo + int(u[i, 0] * d)]
            if u[i, 1] * (indptr[w + 1] - indptr[w]) < d:  # accept w.p. min(1, d_h / d_w)
                h = w
            out[i] = h
    else:
        for i in range(m):
            if u[i, 0] >= 0.5:  # stay w.p. 1/2
                lo = indptr[h]
                h = indices[lo + int(u[i, 1] * (indptr[h + 1] - lo))]
            out[i] = h
    return out


@nb.njit(cache=True, nogil=True)
def row_cumsum(indptr: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Cumulative weights within each CSR row: ``out[j] = Σ weights[indptr[u]:j + 1]`` for
    ``j`` in row ``u`` (so ``out[indptr[u + 1] - 1]`` is ``u``'s weighted degree)."""
    out = np.empty(weights.size)
    for u in range(indptr.size - 1):
        acc = 0.0
        for j in range(indptr[u], indptr[u + 1]):
            acc += weights[j]
            out[j] = acc
    return out


@nb.njit(cache=True, nogil=True)
def _pick(cum: np.ndarray, lo: int, hi: int, x: float) -> int:
    """The slot ``j`` in ``[lo, hi)`` whose weight interval holds ``x · d``: the first with
    ``cum[j] > x · d`` (``d = cum[hi - 1]``; binary search, the last slot if rounding
    leaves none)."""
    target = x * cum[hi - 1]
    a, b = lo, hi - 1
    while a < b:
        mid = (a + b) // 2
        if cum[mid] > target:
            b = mid
        else:
            a = mid + 1
    return a


@nb.njit(cache=True, nogil=True)
def weighted_walk(indptr: np.ndarray, indices: np.ndarray, cum: np.ndarray, current: int,
                  u: np.ndarray, rule: int, out: np.ndarray) -> np.ndarray:
    """:func:`graph_walk` on a weighted graph: a neighbour is picked with probability
    proportional to its edge's weight, by inverse CDF on the row's cumulative weights
    ``cum`` (:func:`row_cumsum`): the first slot ``j`` with ``cum[j] > u0 · d_h``, ``d``
    the weighted degree. ``METROPOLIS`` moves to the proposal ``w`` iff
    ``u1 · d_w < d_h``; ``LAZY`` stays iff ``u0 < 0.5``, else picks with ``u1``. With unit
    weights it walks exactly as :func:`graph_walk`."""
    h = current
    m = u.shape[0]
    if rule == SIMPLE:
        for i in range(m):
            h = indices[_pick(cum, indptr[h], indptr[h + 1], u[i, 0])]
            out[i] = h
    elif rule == METROPOLIS:
        for i in range(m):
            w = indices[_pick(cum, indptr[h], indptr[h + 1], u[i, 0])]
            if u[i, 1] * cum[indptr[w + 1] - 1] < cum[indptr[h + 1] - 1]:
                h = w
            out[i] = h
    else:
        for i in range(m):
            if u[i, 0] >= 0.5:
                h = indices[_pick(cum, indptr[h], indptr[h + 1], u[i, 1])]
            out[i] = h
    return out


@nb.njit(cache=True, nogil=True)
def timed_walk(indptr: np.ndarray, indices: np.ndarray, cum: np.ndarray, slots: np.ndarray,
               period: int, cycle: bool, first: int, current: int, u: np.ndarray, rule: int,
               out: np.ndarray) -> np.ndarray:
    """:func:`weighted_walk` on a time-varying graph: the hop from step ``t`` to ``t + 1``
    uses snapshot ``slots[s]`` of slot ``s = t // period`` (``mod S`` when ``cycle``, else
    at most ``S - 1``; ``S`` slots).

    ``indptr`` is ``(K, n + 1)``: snapshot ``k``'s rows index the shared ``indices`` and
    ``cum`` (each snapshot's row-cumulative weights, :func:`row_cumsum`; unit weights walk
    exactly as :func:`graph_walk`). ``first`` is the step of ``current``: ``u[i]`` moves
    the token from step ``first + i``.
    """
    h = current
    count = slots.shape[0]
    for i in range(u.shape[0]):
        s = (first + i) // period
        ptr = indptr[slots[s % count if cycle else min(s, count - 1)]]
        if rule == SIMPLE:
            h = indices[_pick(cum, ptr[h], ptr[h + 1], u[i, 0])]
        elif rule == METROPOLIS:
            w = indices[_pick(cum, ptr[h], ptr[h + 1], u[i, 0])]
            if u[i, 1] * cum[ptr[w + 1] - 1] < cum[ptr[h + 1] - 1]:
                h = w
        elif u[i, 0] >= 0.5:
            h = indices[_pick(cum, ptr[h], ptr[h + 1], u[i, 1])]
        out[i] = h
    return out
