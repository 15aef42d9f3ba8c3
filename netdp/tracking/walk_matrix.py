"""What is computed once per walk matrix: its stationary law, and the key that caches what
is computed from it (:mod:`netdp.tracking.law_bound`, :mod:`netdp.tracking.law_chernoff`)."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import scipy.linalg
from scipy import sparse
from scipy.sparse import csgraph


def matrix_key(csr: Any) -> bytes:
    """A digest of a CSR matrix's arrays: the key of what is computed once per matrix."""
    h = hashlib.blake2b(digest_size=20)
    for arr in (csr.indptr, csr.indices, csr.data):
        h.update(np.ascontiguousarray(arr).tobytes())
    return h.digest()


def stationary(P: Any) -> np.ndarray | None:
    """The stationary law of an irreducible walk (scipy sparse ``P``), or ``None`` where it
    is not positive.

    A reversible walk (every walk on an undirected graph) gives it in ``O(edges)`` by
    detailed balance along a breadth-first tree, ``π(j) = π(i) P[i, j] / P[j, i]``; it is
    kept where ``π P = π`` holds to rounding (``1e-12`` of the largest entry), else it is
    solved for (dense)."""
    csr = sparse.csr_array(P)
    n = csr.shape[0]
    order, pred = csgraph.breadth_first_order(csr, 0, directed=True,
                                              return_predecessors=True)
    if order.size == n:
        nodes = order[1:]
        back = np.asarray(csr[nodes, pred[nodes]]).ravel()
        if np.all(back > 0.0):
            # log π(j) - log π(root): the steps' sum up the tree, by pointer jumping
            logpi = np.zeros(n)
            logpi[nodes] = np.log(np.asarray(csr[pred[nodes], nodes]).ravel()) - np.log(back)
            up = pred.copy()
            up[order[0]] = order[0]
            while np.any(up != order[0]):
                logpi, up = logpi + logpi[up], up[up]  # the root's stays 0
            pi = np.exp(logpi - logpi.max())
            pi /= pi.sum()
            if np.abs(pi @ csr - pi).max() <= 1e-12 * pi.max():
                return pi
    system = np.eye(n) - csr.toarray().T
    system[-1] = 1.0
    rhs = np.zeros(n)
    rhs[-1] = 1.0
    pi = scipy.linalg.solve(system, rhs, overwrite_a=True, check_finite=False)
    return pi if np.all(pi > 0.0) else None
