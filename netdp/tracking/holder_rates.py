"""How likely a node holds one hidden position of a walk window, given all the others.

A window of a report-based walk (the histogram's, :mod:`netdp.tracking.graph_shuffle`) is
the run of holders between two of the observer's holds of the token, or before its first
or after its last. The walk is Markov, so given the holders of every other position of
the window, the holder of one hidden position ``i`` depends only on its two neighbours
``h`` (position ``i - 1``) and ``h'`` (position ``i + 1``), and is never an observer
(the set ``B``, one node or a coalition), since the window holds no visit of it:

    ``P(X_i = u | rest) = P_hu P_uh' / Σ_{w ∉ B} P_hw P_wh'``.

A position with no predecessor in the window (the first of a token: the walk's start law
``π0``) or no successor (the last of the trace, or where a token was lost) drops the
missing factor:

    ``π0_u P_uh' / Σ_{w ∉ B} π0_w P_wh'``,  ``P_hu / Σ_{w ∉ B} P_hw``,
    ``π0_u / Σ_{w ∉ B} π0_w``.

:func:`holder_rates` bounds these over every configuration a window can show: ``h`` and
``h'`` range over ``u``'s in- and out-neighbours outside ``B`` (``interior``, the rate of
a position between two others), and the three end cases join in ``edge``. This is the
per-position bound that the hybrid argument of
:func:`~netdp.tracking.shuffle_sound.window_entry` needs ("each unknown position is the
node's with probability at most ``p`` given the holders of all the other positions"): on
the complete graph it is ``1 / N`` with self-moves and ``1 / (N - 2)`` without, the
complete graph's :func:`~netdp.tracking.shuffle_sound.holder_rate`.

Cost: the observer-free part once per graph (each node's ``TOP`` largest interior ratios,
``O(Σ_u d_in(u) d_out(u) d)``), then ``O(nnz + n + Σ_{w ∈ B} d_in(w) d_out(w) d)`` per
observer set. The denominators subtract ``B``'s terms, so that an observer that is the only
other common neighbour of ``h`` and ``h'`` makes ``u`` certain there, as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numba as nb
import numpy as np

TOP = 4  # interior ratios kept per node: the largest whose ends avoid the observers wins


@nb.njit(cache=True)
def _middle_mass(ip, ix, iv, cp, cx, cv, h, h2, skip_mask):
    """``Σ_w P_hw P_wh'`` over ``w`` not in ``skip_mask`` (row ``h`` against column ``h'``,
    both sorted)."""
    i, j = ip[h], cp[h2]
    ie, je = ip[h + 1], cp[h2 + 1]
    s = 0.0
    while i < ie and j < je:
        a, b = ix[i], cx[j]
        if a == b:
            if not skip_mask[a]:
                s += iv[i] * cv[j]
            i += 1
            j += 1
        elif a < b:
            i += 1
        else:
            j += 1
    return s


@nb.njit(cache=True)
def _top_interior(ip, ix, iv, cp, cx, cv, top_val, top_h, top_h2):
    """Each node's ``TOP`` largest ratios ``P_hu P_uh' / (P²)_hh'``, with their ends."""
    n = ip.size - 1
    none = np.zeros(n, np.bool_)
    for u in range(n):
        for a in range(cp[u], cp[u + 1]):  # h -> u
            h = cx[a]
            for b in range(ip[u], ip[u + 1]):  # u -> h'
                h2 = ix[b]
                num = cv[a] * iv[b]
                if num <= 0.0:
                    continue
                val = num / _middle_mass(ip, ix, iv, cp, cx, cv, h, h2, none)
                k = top_val.shape[1] - 1
                if val <= top_val[u, k]:
                    continue
                while k > 0 and top_val[u, k - 1] < val:
                    top_val[u, k] = top_val[u, k - 1]
                    top_h[u, k] = top_h[u, k - 1]
                    top_h2[u, k] = top_h2[u, k - 1]
                    k -= 1
                top_val[u, k] = val
                top_h[u, k] = h
                top_h2[u, k] = h2


@nb.njit(cache=True)
def _observer_rates(ip, ix, iv, cp, cx, cv, top_val, top_h, top_h2, start, flow,
                    members, blocked, interior, edge):
    """``interior`` and ``edge`` rates of every node for the observer set ``members``."""
    n = ip.size - 1
    k_top = top_val.shape[1]
    # interior: the largest stored ratio whose ends avoid the observers (the last stored
    # one bounds every pair not stored) ...
    for u in range(n):
        interior[u] = 0.0
        if blocked[u]:
            continue
        val = top_val[u, k_top - 1]
        for k in range(k_top):
            if top_val[u, k] <= 0.0:
                val = 0.0
                break
            if not blocked[top_h[u, k]] and not blocked[top_h2[u, k]]:
                val = top_val[u, k]
                break
        interior[u] = val
    # ... and the ratios whose denominator loses an observer's term (h -> w -> h', w in B)
    for m in range(members.size):
        w = members[m]
        for a in range(cp[w], cp[w + 1]):
            h = cx[a]
            if blocked[h]:
                continue
            for b in range(ip[w], ip[w + 1]):
                h2 = ix[b]
                if blocked[h2]:
                    continue
                den = _middle_mass(ip, ix, iv, cp, cx, cv, h, h2, blocked)
                # every middle u of (h, h') outside B
                i, j = ip[h], cp[h2]
                while i < ip[h + 1] and j < cp[h2 + 1]:
                    x, y = ix[i], cx[j]
                    if x == y:
                        if not blocked[x] and den > 0.0:
                            interior[x] = max(interior[x], iv[i] * cv[j] / den)
                        i += 1
                        j += 1
                    elif x < y:
                        i += 1
                    else:
                        j += 1
    # edge: the first position of a token (start law), the last of a trace, a lone one;
    # each holder's mass out to, and each one's start-weighted mass in from, the others
    kept_start = 0.0
    out = np.ones(n)
    into = flow.copy()
    for w in range(n):
        if not blocked[w]:
            kept_start += start[w]
    for m in range(members.size):
        w = members[m]
        for a in range(cp[w], cp[w + 1]):  # h -> w
            out[cx[a]] -= cv[a]
        for b in range(ip[w], ip[w + 1]):  # w -> h'
            into[ix[b]] -= start[w] * iv[b]
    for u in range(n):
        edge[u] = 0.0
        if blocked[u]:
            continue
        if kept_start > 0.0:
            edge[u] = start[u] / kept_start
        for a in range(cp[u], cp[u + 1]):  # h -> u, no successor
            h = cx[a]
            if not blocked[h] and out[h] > 0.0:
                edge[u] = max(edge[u], cv[a] / out[h])
        for b in range(ip[u], ip[u + 1]):  # u -> h', no predecessor
            h2 = ix[b]
            if not blocked[h2] and into[h2] > 0.0:
                edge[u] = max(edge[u], start[u] * iv[b] / into[h2])
    for u in range(n):
        interior[u] = min(interior[u], 1.0)
        edge[u] = min(max(edge[u], interior[u]), 1.0)


@dataclass(frozen=True)
class HolderRates:
    """A walk's transition matrix and start law, with each node's largest interior ratios
    (the observer-free part of :func:`holder_rates`); build with :meth:`of`."""

    arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    start: np.ndarray
    flow: np.ndarray
    top: tuple[np.ndarray, np.ndarray, np.ndarray]

    @classmethod
    def of(cls, P: Any, start: np.ndarray | None = None) -> HolderRates:
        """``P``: the transition matrix (rows sum to 1); ``start``: the law of the first
        holder (default uniform)."""
        from scipy import sparse

        P = sparse.csr_array(P, dtype=float)
        P.sum_duplicates()
        P.sort_indices()
        C = P.tocsc()
        C.sort_indices()
        n = P.shape[0]
        pi0 = np.full(n, 1.0 / n) if start is None else np.asarray(start, float)
        arrays = (P.indptr.astype(np.int64), P.indices.astype(np.int64), P.data,
                  C.indptr.astype(np.int64), C.indices.astype(np.int64), C.data)
        top = (np.zeros((n, TOP)), np.zeros((n, TOP), np.int64), np.zeros((n, TOP), np.int64))
        _top_interior(*arrays, *top)
        return cls(arrays, pi0, np.asarray(P.T @ pi0, float), top)

    def rates(self, members: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:func:`holder_rates` for the observer set ``members``."""
        n = self.start.size
        members = np.asarray(members, np.int64)
        blocked = np.zeros(n, np.bool_)
        blocked[members] = True
        interior, edge = np.empty(n), np.empty(n)
        _observer_rates(*self.arrays, *self.top, self.start, self.flow, members, blocked,
                        interior, edge)
        return interior, edge


def holder_rates(P: Any, members: np.ndarray,
                 start: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each node's largest chance to hold one hidden position of a window, given the
    holders of all the window's other positions (Markov: its two neighbours).

    Parameters
    ----------
    P
        The walk's transition matrix (sparse or dense, rows sum to 1).
    members
        The observers (one node, or a coalition observing as one): no window position is
        theirs.
    start
        The law of a token's first holder (default uniform).

    Returns
    -------
    interior, edge
        ``(n,)`` rates, 0 at the observers: ``interior`` bounds a position between two
        others of its window; ``edge`` (at least ``interior``) bounds any position,
        including a token's first, the trace's last and a lone one.

    Examples
    --------
    >>> import numpy as np
    >>> P = (np.ones((6, 6)) - np.eye(6)) / 5  # complete graph, no self-moves
    >>> interior, edge = holder_rates(P, np.array([0]))
    >>> float(interior[1])  # 1 / (N - 2): uniform over the 5 others but h and h'
    0.3333333333333333
    """
    return HolderRates.of(P, start).rates(members)
