"""Compiled walk kernel on CSR graphs (numba; compiled once, cached on disk).

Imported only when a walk on an explicit graph runs. ``tests/test_graph_walks.py``
checks it against the plain-Python rules it replaced: the same uniforms give the same
walk, bit for bit.
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
