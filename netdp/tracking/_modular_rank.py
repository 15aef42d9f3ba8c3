"""Exact ranks modulo a prime: certifying that an observer's gossip view has full rank.

A gossip matrix with rational weights (Metropolis, lazy) has an exact image modulo a large
prime; a view whose rank is full there is full over the rationals too, so the joint loss's
rank cut needs no floating-point threshold (:func:`netdp.tracking.gossip.joint`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse

PRIME = 1_048_573
"""The largest prime below 2^20: products of two residues and sums of 2^12 of them stay
exact in float64, so the modular matrix products run on BLAS."""
MAX_RANK_BALL = 5000
"""Largest ball (nodes within ``T + 1`` hops) on which :func:`full_rank_mod_p` runs."""


def rational_weights(W: Any, prime: int = PRIME) -> sparse.csr_array | None:
    """The gossip matrix as residues modulo ``prime``, where its weights are the rationals
    they stand for: every off-diagonal weight ``1/k`` for an integer k (Metropolis
    ``1/(1 + max(d_u, d_v))``, lazy ``1/(2 d_max)``, or a user file of such weights),
    the diagonal ``1 - Σ`` of its row; ``None`` otherwise.

    Parameters
    ----------
    W
        The float gossip matrix.
    prime
        The modulus (larger than every k).
    """
    M = sparse.csr_array(W)
    rows = np.repeat(np.arange(M.shape[0]), np.diff(M.indptr))
    off = rows != M.indices
    w = M.data[off]
    k = np.rint(1.0 / w)
    if w.size == 0 or not np.all((k >= 1) & (k < prime) & (1.0 / k == w)):
        return None
    denominators, which = np.unique(k, return_inverse=True)
    inv = np.array([pow(int(x), prime - 2, prime) for x in denominators], dtype=np.int64)
    residues = inv[which]
    off_sum = np.zeros(M.shape[0], dtype=np.int64)
    np.add.at(off_sum, rows[off], residues)
    data = np.empty(M.data.size, dtype=np.int64)
    data[off] = residues
    diag_rows = rows[~off]
    data[~off] = (1 - off_sum[diag_rows]) % prime
    exact = sparse.csr_array((data, M.indices.copy(), M.indptr.copy()), shape=M.shape)
    missing = np.setdiff1d(np.arange(M.shape[0]), diag_rows)
    if missing.size and np.any(off_sum[missing] % prime != 1):
        return None  # a row without a stored diagonal whose weights do not sum to 1
    return exact


def full_rank_mod_p(exact: sparse.csr_array, v: Any, ball: np.ndarray, steps: int,
                    prime: int = PRIME) -> bool:
    """Whether observer v's view has full rank on ``ball`` (the nodes within ``T + 1``
    hops), proven by its rank modulo ``prime`` (:func:`view_rank_mod_p`).

    Reducing modulo p (every denominator of W prime to p) is a ring map, so a nonzero
    minor modulo p is a nonzero minor over the rationals: rank mod p <= rank. Full rank
    modulo p therefore proves that the row space is the whole ball, so
    ``c[u, v] = ‖Π_v e_u‖² = 1`` exactly for every u in it. A rank below full proves
    nothing (p may divide a minor): False. Skipped (False) on a ball above
    :data:`MAX_RANK_BALL` nodes or with fewer rows than nodes.
    """
    m = ball.size
    vs = np.atleast_1d(np.asarray(v, dtype=np.int64))
    degree = int((exact.indptr[vs + 1] - exact.indptr[vs]).sum())  # with diagonals: more
    if m > MAX_RANK_BALL or vs.size + degree * (steps + 1) < m:
        return False
    return view_rank_mod_p(exact, v, ball, steps, prime) == m


def view_rank_mod_p(exact: sparse.csr_array, v: Any, ball: np.ndarray, steps: int,
                    prime: int = PRIME) -> int:
    """Rank modulo ``prime`` of observer v's view restricted to ``ball``: the rows
    ``e_v`` and ``(W^t)_{w,:}``, ``w ∈ N(v)``, ``t <= T``, of the rational W whose
    residues are ``exact`` (:func:`rational_weights`).

    The rows are reduced one step t at a time against a reduced echelon basis (BLAS
    products, exact in float64 below 2^53); it stops when the basis spans the ball, or
    when a whole step adds nothing (the Krylov space is then invariant under W).
    """
    m = ball.size
    vs = np.atleast_1d(np.asarray(v, dtype=np.int64))
    local = exact[ball][:, ball].astype(np.float64)
    adjacent = np.unique(np.concatenate([exact.indices[exact.indptr[x]:exact.indptr[x + 1]]
                                         for x in vs]))
    neighbours = np.searchsorted(ball, np.setdiff1d(adjacent, vs))
    rows = np.zeros((neighbours.size, m))
    rows[np.arange(neighbours.size), neighbours] = 1.0
    start = np.zeros((vs.size, m))
    start[np.arange(vs.size), np.searchsorted(ball, vs)] = 1.0
    basis, pivots, _ = _insert(np.zeros((0, m)), np.zeros(0, dtype=np.int64), start, prime)
    for _ in range(steps + 1):
        basis, pivots, grew = _insert(basis, pivots, rows, prime)
        if pivots.size == m or not grew:
            break
        rows = np.asarray(local.T @ rows.T).T % prime  # the next step's rows, mod p
    return int(pivots.size)


def _mulmod(a: np.ndarray, b: np.ndarray, prime: int) -> np.ndarray:
    """``a @ b mod p`` exactly in float64: the inner dimension in chunks of 2^12."""
    out = np.zeros((a.shape[0], b.shape[1]))
    for lo in range(0, a.shape[1], 4096):
        out = (out + a[:, lo:lo + 4096] @ b[lo:lo + 4096]) % prime
    return out


def _insert(basis: np.ndarray, pivots: np.ndarray, rows: np.ndarray,
            prime: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """Add a block of ``rows`` to a reduced row echelon basis modulo ``prime``: the new
    basis, its pivot columns and whether it grew."""
    if pivots.size:  # the block against the basis: zero on its pivots
        rows = (rows - _mulmod(rows[:, pivots], basis, prime)) % prime
    new: list[np.ndarray] = []
    cols: list[int] = []
    for r in rows:  # reduced echelon form of the block itself (a few rows)
        for c, q in zip(cols, new, strict=True):
            if r[c]:
                r = (r - r[c] * q) % prime
        nz = np.flatnonzero(r)
        if not nz.size:
            continue
        col = int(nz[0])
        r = r * pow(int(r[col]), prime - 2, prime) % prime
        new = [(q - q[col] * r) % prime for q in new]
        new.append(r)
        cols.append(col)
    if not cols:
        return basis, pivots, False
    block, added = np.array(new), np.array(cols, dtype=np.int64)
    if pivots.size:  # clear the new pivot columns from the basis
        basis = (basis - _mulmod(basis[:, added], block, prime)) % prime
    return np.vstack([basis, block]), np.concatenate([pivots, added]), True
