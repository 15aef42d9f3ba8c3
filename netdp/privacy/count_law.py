"""Laws of visit counts: how often a node held a token on a stretch an observer cannot see.

A token walks on ``n`` nodes with the row-stochastic transition matrix ``P``. An observer
set ``W`` (one node, or a coalition) sees it whenever a member holds it. Between two visits
of ``W`` it sees the next holder ``a`` and the last one ``b`` and the cycle length ``m``;
the ``L = m - 2`` steps from ``a`` to ``b`` are hidden. Given what ``W`` sees they form a
*bridge* of the taboo chain ``Q`` (``P`` with the rows and columns of ``W`` set to zero,
not renormalised): a path ``a = x_0, x_1, ..., x_L = b`` drawn with weight
``Π_t Q[x_t, x_{t+1}] / (Q^L)[a, b]``. Different cycles are independent given the view.

For a node ``u`` outside ``W`` this module gives the exact law of its *interior count*
``I_u = #{t in 1..L-1 : x_t = u}`` (``m - 3`` positions when ``m >= 3``, none when
``m = 2``, where ``a = b`` is one position), and of its contribution count
``K_u = [u = a] + [u = b][m >= 3] + I_u`` (:func:`contribution_laws`).

The *first stretch* of a token (before ``W`` first holds it) starts at ``h_0 ~ π0``, avoids
``W`` at positions ``0..i0-1``, ends at ``h_{i0-1} = b`` and reaches ``W`` at ``i0``. Its
interior positions are ``0..i0-2``. It is the bridge of length ``i0`` from a *virtual* node
``σ`` whose row is ``π0`` (outside ``W``) and that no node moves to: the positions
``1..i0-1`` of that bridge are ``h_0..h_{i0-2}`` (:func:`first_stretch_laws`).

Algorithm (:func:`bridge_interior_laws_batch`): first-passage decomposition, no path
enumeration. A path from ``a`` to ``b`` splits at its interior visits of ``u`` into a first
passage ``a -> u`` (``F``), excursions ``u -> u`` avoiding ``u`` (``E``) and a last leg
``u -> b`` avoiding ``u`` before its end (``G``), so that with ``H_k = F * E^{*(k-1)}`` (the
time of the ``k``-th visit)

    ``P(I_u = k) Z = Σ_t H_k(t) G(L - t)``,  ``P(I_u >= k) Z = Σ_t H_k(t) (Q^{L-t})[u, b]``,

``t`` over the interior ``1..L-1`` and ``Z = (Q^L)[a, b]``. Every term is a sum of
non-negative numbers, so small probabilities keep their relative precision; so does
``P(I_u = 0)``: taken as ``1 - P(I_u >= 1)``, it is recomputed from the paths avoiding
``u`` (one backward sweep from ``b``) when below :data:`DIRECT_ZERO`. Long bridges
would underflow (``(Q^L)[a, b]`` decays like ``ρ(Q)^L``): every weight is multiplied by
``e^{-λ}``, ``λ`` the mean log-growth of the taboo chain's mass over the longest ``L``,
which rescales all the path weights of length ``L`` alike and so cancels in the laws.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numba as nb
import numpy as np
import numpy.typing as npt
from scipy import sparse, stats
from scipy.sparse import csgraph

from netdp.errors import InputError, check

TINY = 1e-250  # a rescaled normaliser below this is redone on its corridor, then refused
DIRECT_ZERO = 1e-3  # P(I_u = 0) below this is recomputed from the paths avoiding u
PARALLEL_WORK = 1e6  # sparse steps (nodes x longest L x nnz) from which threads share nodes

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


# --------------------------------------------------------------------------------------
# The complete graph: closed forms and the lumped chain
# --------------------------------------------------------------------------------------

def complete_interior_law(interior: int, n: int, w: int = 1, self_moves: bool = True,
                          a_is_u: bool = False, b_is_u: bool = False,
                          a_is_b: bool = False) -> FloatArray:
    """``P(I_u = k)``, ``k = 0..interior``, for one cycle of the walk on the complete graph.

    Parameters
    ----------
    interior
        Interior positions of the cycle, ``m - 3`` (``0`` when ``m <= 3``).
    n, w
        Nodes, and observers in ``W`` (``u``, ``a`` and ``b`` are outside ``W``).
    self_moves
        Each step uniform over all ``n`` nodes (``True``) or over the ``n - 1`` others.
    a_is_u, b_is_u, a_is_b
        Whether ``u = a``, ``u = b``, ``a = b`` (only matter without self-moves).

    Returns
    -------
    ndarray
        ``(interior + 1,)`` the law of ``I_u``.

    Notes
    -----
    With self-moves every path of ``L = interior + 1`` steps inside the ``s = n - w``
    nodes outside ``W`` has the same weight ``n^{-L}`` and no constraint links
    consecutive holders, so given ``a``, ``b`` the interior holders are iid uniform on
    those ``s`` nodes: ``I_u ~ Binomial(interior, 1/s)``, whatever ``a`` and ``b``.

    Without self-moves every path again has weight ``(n-1)^{-L}``, but consecutive holders
    differ, so the law depends on the ends. Lump the ``s`` nodes into ``U = {u}``,
    ``B = {b}`` (absent when ``b = u``) and ``O`` (the ``o = s - 1 - [b != u]`` others).
    The lumping is exact (strong lumpability): every node of a class sends the same
    number of moves into each class (from ``U``: 0 to ``U``, 1 to ``B``, ``o`` to ``O``;
    from ``B``: 1 to ``U``, 0 to ``B``, ``o`` to ``O``; from a node of ``O``: 1 to ``U``,
    1 to ``B``, ``o - 1`` to ``O``), so the number of paths with a given class sequence
    is the product of these counts along it, and ``I_u`` is read from the class sequence.
    The law is then the forward recursion over (class, visits so far) of that 3-state
    chain, started at ``a``'s class and ended in ``b``'s, normalised at every step.
    """
    check(interior >= 0, "interior", f"must be >= 0, got {interior}")
    check(1 <= w < n, "w", f"must be in 1..n-1, got {w} (n = {n})")
    a_is_b = a_is_b or (a_is_u and b_is_u)
    check(not (a_is_b and a_is_u != b_is_u), "a_is_b", "a = b needs u = a and u = b alike")
    s = n - w
    ends = 1 + (not a_is_u) + (not b_is_u) - (a_is_b and not a_is_u)  # distinct u, a, b
    check(s >= ends, "w", f"{ends} distinct nodes outside W need n - w >= {ends}")
    if self_moves:
        return _binomial(interior, 1.0 / s)
    if interior == 0:
        return np.ones(1)
    start = np.zeros(3)
    start[0 if a_is_u else (1 if a_is_b else 2)] = 1.0
    return _lumped_law(start, s, b_is_u, interior, first=False)


def complete_first_stretch_law(interior: int, n: int, w: int = 1, self_moves: bool = True,
                               b_is_u: bool = False) -> FloatArray:
    """``P(I_u = k)``, ``k = 0..interior``, for a first stretch on the complete graph.

    The token starts uniform over all ``n`` nodes; ``interior = i0 - 1`` (the positions
    ``0..i0-2``). With self-moves ``I_u ~ Binomial(interior, 1/(n - w))``; without, the
    lumped chain of :func:`complete_interior_law` started from the uniform law on the
    nodes outside ``W`` (class weights ``1, 1, o``), counting the start too.
    """
    check(interior >= 0, "interior", f"must be >= 0, got {interior}")
    check(1 <= w < n, "w", f"must be in 1..n-1, got {w} (n = {n})")
    s = n - w
    check(s >= 2 or b_is_u, "w", "u and b outside W need n - w >= 2")
    if self_moves:
        return _binomial(interior, 1.0 / s)
    if interior == 0:
        return np.ones(1)
    o = s - 1 - (0 if b_is_u else 1)
    start = np.array([1.0, 0.0 if b_is_u else 1.0, float(o)])
    return _lumped_law(start, s, b_is_u, interior, first=True)


def _binomial(k: int, p: float) -> FloatArray:
    return np.asarray(stats.binom.pmf(np.arange(k + 1), k, p), dtype=np.float64)


def _lumped_law(start: FloatArray, s: int, b_is_u: bool, interior: int,
                first: bool) -> FloatArray:
    """The count law on the lumped chain ``U, B, O`` (see :func:`complete_interior_law`)
    over ``interior`` counted positions: a bridge makes ``interior + 1`` moves from
    ``start`` and counts ``U`` at positions ``1..interior``; a first stretch makes
    ``interior`` moves and counts ``U`` at ``0..interior-1``. It must end in ``b``'s class."""
    steps = interior if first else interior + 1
    o = s - 1 - (0 if b_is_u else 1)
    has_b = 0.0 if b_is_u else 1.0
    M = np.array([[0.0, has_b, o], [1.0, 0.0, o], [1.0, has_b, max(o - 1, 0)]])
    M[:, 1] *= has_b
    M[1, :] *= has_b
    f = np.zeros((3, steps + 1))  # f[class, visits so far]
    f[:, 0] = start
    if first:
        f[0, :] = np.roll(f[0, :], 1)
    for t in range(1, steps + 1):
        g = M.T @ f
        if t < steps:  # an interior position: a visit of U counts
            g[0, 1:] = g[0, :-1].copy()
            g[0, 0] = 0.0
        total = g.sum()
        if total == 0.0:
            raise InputError("interior", "this cycle has probability 0 on the complete graph")
        f = g / total
    law = f[0 if b_is_u else 1, :interior + 1]
    total = law.sum()
    if total == 0.0:
        raise InputError("interior", "this cycle has probability 0 on the complete graph")
    return law / total


# --------------------------------------------------------------------------------------
# Any graph: compiled kernels
# --------------------------------------------------------------------------------------

@nb.njit(cache=True)
def _step(indptr, indices, data, blocked, cur, nxt):
    """``nxt = cur Q`` (one forward step of the taboo chain; ``cur`` zero on ``blocked``)."""
    nxt[:] = 0.0
    for x in range(cur.size):
        cx = cur[x]
        if cx == 0.0:
            continue
        for j in range(indptr[x], indptr[x + 1]):
            nxt[indices[j]] += cx * data[j]
    for x in range(cur.size):
        if blocked[x]:
            nxt[x] = 0.0


@nb.njit(cache=True)
def _log_mass(indptr, indices, data, blocked, steps):
    """Mean log-growth per step of the taboo chain's mass from the uniform start over the
    nodes not ``blocked``, over ``steps`` steps (or up to where the mass is gone)."""
    n = indptr.size - 1
    cur, nxt = np.zeros(n), np.zeros(n)
    for x in range(n):
        if not blocked[x]:
            cur[x] = 1.0
    total, done = 0.0, 0
    for _ in range(steps):
        _step(indptr, indices, data, blocked, cur, nxt)
        mass = nxt.sum()
        if mass <= 0.0:
            break
        total += math.log(mass)
        done += 1
        cur[:] = nxt / mass
    return total / done if done else 0.0


@nb.njit(cache=True)
def _source_normalisers(indptr, indices, data, blocked, source, targets, cb, cl, z):
    """``z[c] = (Q^{cl[c]})[source, targets[cb[c]]]``, ``cl`` sorted."""
    n = indptr.size - 1
    cur, nxt = np.zeros(n), np.zeros(n)
    cur[source] = 1.0
    c, t = 0, 0
    while c < cl.size:
        while c < cl.size and cl[c] == t:
            z[c] = cur[targets[cb[c]]]
            c += 1
        _step(indptr, indices, data, blocked, cur, nxt)
        cur[:] = nxt
        t += 1


@nb.njit(cache=True)
def _normalisers(indptr, indices, data, blocked, sources, targets, grp_ptr, cb, cl, z):
    """``z[c] = (Q^{L_c})[a_c, b_c]`` for the cycles sorted by (source group, ``L``)."""
    for g in range(sources.size):
        c0, c1 = grp_ptr[g], grp_ptr[g + 1]
        if c1 > c0:
            _source_normalisers(indptr, indices, data, blocked, sources[g], targets,
                                cb[c0:c1], cl[c0:c1], z[c0:c1])


@nb.njit(cache=True)
def _node_laws(indptr, indices, data, blocked, u, sources, targets, grp_ptr, cb, cl, pos, z,
               kmax, kk, longest, laws, tail):
    """The laws of node ``u`` in every cycle (see :func:`_count_laws`)."""
    n = indptr.size - 1
    ns, nt = sources.size, targets.size
    F = np.zeros((ns, longest + 1))
    E = np.zeros(longest + 1)
    G = np.zeros((nt, longest + 1))
    Om = np.zeros((nt, longest + 1))
    for h in range(nt):
        if targets[h] == u:
            Om[h, 0] = 1.0
    # backward: psi_t[x] = weight of x -> u in t steps, first reaching u at t
    cur, nxt = np.zeros(n), np.zeros(n)
    cur[u] = 1.0
    for t in range(1, longest + 1):
        _gather(indptr, indices, data, blocked, cur, nxt)
        E[t] = nxt[u]
        for g in range(ns):
            F[g, t] = nxt[sources[g]]
        nxt[u] = 0.0
        cur[:] = nxt
    # forward: chi_r = taboo row from u (u avoided before the end), om_r = plain row
    chi, om = np.zeros(n), np.zeros(n)
    nchi, nom = np.zeros(n), np.zeros(n)
    chi[u] = 1.0
    om[u] = 1.0
    for r in range(1, longest + 1):
        nchi[:] = 0.0
        nom[:] = 0.0
        for x in range(n):
            cx, ox = chi[x], om[x]
            if cx == 0.0 and ox == 0.0:
                continue
            for j in range(indptr[x], indptr[x + 1]):
                y = indices[j]
                nchi[y] += cx * data[j]
                nom[y] += ox * data[j]
        for x in range(n):
            if blocked[x]:
                nchi[x] = 0.0
                nom[x] = 0.0
        for h in range(nt):
            G[h, r] = nchi[targets[h]]
            Om[h, r] = nom[targets[h]]
        nchi[u] = 0.0
        chi[:] = nchi
        om[:] = nom
    # per source group: H[k, t] = weight of reaching u for the k-th time at step t
    H = np.zeros((kk + 1, longest + 1))
    for g in range(ns):
        c0, c1 = grp_ptr[g], grp_ptr[g + 1]
        if c0 == c1:
            continue
        T = cl[c1 - 1] - 1  # the group's last interior step
        for t in range(1, T + 1):
            H[1, t] = F[g, t]
        for k in range(2, min(kk, T) + 1):
            for t in range(k, T + 1):
                acc = 0.0
                for s in range(1, t - k + 2):
                    acc += E[s] * H[k - 1, t - s]
                H[k, t] = acc
        for c in range(c0, c1):
            L, h, zc, out = cl[c], cb[c], z[c], pos[c]
            ge1 = 0.0
            for t in range(1, L):
                ge1 += H[1, t] * Om[h, L - t]
            laws[out, u, 0] = max(1.0 - ge1 / zc, 0.0)
            for k in range(1, min(kmax, L - 1) + 1):
                acc = 0.0
                for t in range(k, L):
                    acc += H[k, t] * G[h, L - t]
                laws[out, u, k] = acc / zc
            if kmax + 1 <= L - 1:
                acc = 0.0
                for t in range(kmax + 1, L):
                    acc += H[kmax + 1, t] * Om[h, L - t]
                tail[out, u] = acc / zc
    # P(I_u = 0) = 1 - P(I_u >= 1) lost its relative precision: the paths avoiding u
    few = np.zeros(cl.size, dtype=np.int64)
    nf = 0
    for g in range(ns):
        for c in range(grp_ptr[g], grp_ptr[g + 1]):
            if laws[pos[c], u, 0] < DIRECT_ZERO:
                few[nf] = c
                nf += 1
    if nf == 0:
        return
    few = few[:nf]
    few = few[np.argsort(cb[few] * (longest + 1) + cl[few])]  # by target, then L
    i = 0
    while i < nf:
        h = cb[few[i]]
        cur[:] = 0.0
        cur[targets[h]] = 1.0
        t = 0
        while i < nf and cb[few[i]] == h:
            c = few[i]
            while t < cl[c]:
                if t > 0:
                    cur[u] = 0.0  # an interior position: u avoided
                _gather(indptr, indices, data, blocked, cur, nxt)
                cur[:] = nxt
                t += 1
            laws[pos[c], u, 0] = cur[sources[_group_of(grp_ptr, c)]] / z[c]
            i += 1


@nb.njit(cache=True)
def _group_of(grp_ptr, c):
    """The source group holding the sorted cycle ``c``."""
    return np.searchsorted(grp_ptr, c, side="right") - 1


@nb.njit(cache=True)
def _gather(indptr, indices, data, blocked, cur, nxt):
    """``nxt = Q cur`` (one backward step of the taboo chain; ``cur`` zero on ``blocked``)."""
    for x in range(cur.size):
        acc = 0.0
        if not blocked[x]:
            for j in range(indptr[x], indptr[x + 1]):
                acc += data[j] * cur[indices[j]]
        nxt[x] = acc


@nb.njit(cache=True, nogil=True)
def _count_laws(indptr, indices, data, blocked, nodes, sources, targets, grp_ptr, cb, cl, pos,
                z, kmax, laws, tail):
    """Fill ``laws[pos[c], u, k] = P(I_u = k)`` and ``tail[pos[c], u] = P(I_u > kmax)``
    for every cycle ``c`` (sorted by source group, then ``L``) and node ``u`` in ``nodes``
    (not ``blocked``); ``z`` holds the normalisers. Per ``u``: the first passages to ``u``
    from every source and its first returns (backward), the taboo and plain rows from
    ``u`` at every target (forward), then per source group the visit-time laws ``H_k`` by
    convolution, and per cycle one dot product per ``k``. Releases the GIL: threads share
    the nodes."""
    longest = 0
    for c in range(cl.size):
        longest = max(longest, cl[c])
    kk = min(kmax + 1, max(longest - 1, 1))  # H_k vanishes for k > L - 1
    for u in nodes:
        _node_laws(indptr, indices, data, blocked, u, sources, targets, grp_ptr, cb, cl, pos,
                   z, kmax, kk, longest, laws, tail)


def _run_nodes(nodes: IntArray, work: float, *args: Any) -> None:
    """:func:`_count_laws` over ``nodes``, split among numba's thread count when the work
    (in sparse steps) is worth a thread pool."""
    threads = min(nb.get_num_threads(), nodes.size)
    if threads <= 1 or work < PARALLEL_WORK:
        _count_laws(args[0], args[1], args[2], args[3], nodes, *args[4:])
        return
    parts = np.array_split(nodes, 4 * threads)
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda part: _count_laws(args[0], args[1], args[2], args[3], part,
                                               *args[4:]), parts))


# --------------------------------------------------------------------------------------
# Any graph: public functions
# --------------------------------------------------------------------------------------

def bridge_interior_laws(P: Any, blocked: Any, a: int, b: int, L: int,
                         kmax: int) -> tuple[FloatArray, FloatArray]:
    """The laws of every node's interior count in one cycle.

    Parameters
    ----------
    P
        ``(n, n)`` transition matrix, dense or scipy sparse (non-negative).
    blocked
        The observer set ``W``: a boolean mask of length ``n`` or a sequence of node ids.
    a, b
        The first and last hidden holders (outside ``W``).
    L
        Steps from ``a`` to ``b``, ``m - 2`` (``0`` needs ``a = b``).
    kmax
        Largest count given in full.

    Returns
    -------
    laws, tail
        ``(n, kmax + 1)`` with ``laws[u, k] = P(I_u = k)`` and ``(n,)`` with
        ``tail[u] = P(I_u > kmax)``; the rows of ``W`` are zero.

    Raises
    ------
    ValueError
        If the cycle has probability 0 (or is below float64's range even after scaling).
    """
    laws, tail = bridge_interior_laws_batch(P, blocked, [a], [b], [L], kmax)
    return laws[0], tail[0]


def bridge_interior_laws_batch(P: Any, blocked: Any, a: Any, b: Any, L: Any,
                               kmax: int) -> tuple[FloatArray, FloatArray]:
    """:func:`bridge_interior_laws` for many cycles of one observer set at once.

    Parameters
    ----------
    a, b, L
        ``(C,)`` the cycles' ends and lengths (``L = m - 2``).

    Returns
    -------
    laws, tail
        ``(C, n, kmax + 1)`` and ``(C, n)``.

    Notes
    -----
    Cost, with ``S`` distinct ``a``, ``B`` distinct ``b``, ``Λ = max L``,
    ``k = min(kmax + 1, Λ)``: per node ``u`` three sweeps of ``Λ`` sparse steps
    (``3 Λ nnz(P)``), ``k Λ_s² / 2`` per source ``s`` (its longest cycle ``Λ_s``) for the
    visit-time laws, and ``k L`` per cycle; in all about
    ``n (3 Λ nnz + S k Λ² / 2 + C k Λ)`` flops, parallel over ``u``, and memory
    ``(S + 2B + k) Λ`` floats per thread plus the ``C n (kmax + 1)`` output. A node
    almost surely visited (``P(I_u = 0) <`` :data:`DIRECT_ZERO`) costs one more sweep per
    distinct ``b`` among those cycles. An observer's cycles share few sources (its
    out-neighbours), so the quadratic term is paid a few times, not once per cycle; many
    single calls pay it per cycle. Practical for ``n`` up to a few hundred and ``Λ`` up to
    a few thousand. Measured on a shared 2-core machine (``kmax = 10``, observer at a
    grid's centre, cycles of a simulated walk): 10×10 grid, 100 cycles up to ``L = 300``:
    0.14-0.2 s batched, 1.0-1.3 s as 100 single calls; 20×20 grid, 100 cycles up to
    ``L = 974``: 6.5 s on one thread.
    The complete graph has closed forms (:func:`complete_interior_law`).

    Scaling: every weight is multiplied by ``e^{-λ}``, ``λ`` the mean log-growth per step
    of the taboo chain's mass from the uniform start over ``Λ`` steps. A cycle whose scaled
    normaliser is below :data:`TINY` (a part of the taboo chain that decays much faster
    than the rest, and a long ``L``) is redone alone on its *corridor*, the nodes on some
    path from ``a`` to ``b`` (the others are never visited), scaled by the corridor's own
    growth; a cycle still below is refused (ValueError) rather than given imprecisely.
    """
    csr = _csr(P)
    n = csr.shape[0]
    return _solve(csr, _mask(blocked, n), _ints(a, "a"), _ints(b, "b"), _ints(L, "L"), kmax,
                  n)


def first_stretch_laws(P: Any, blocked: Any, start_law: Any, b: int, i0: int,
                       kmax: int) -> tuple[FloatArray, FloatArray]:
    """The laws of every node's interior count in a token's first stretch.

    Parameters
    ----------
    P, blocked, kmax
        As in :func:`bridge_interior_laws`.
    start_law
        ``(n,)`` the law ``π0`` of the first holder (its mass on ``W`` is dropped).
    b, i0
        The last holder before ``W``'s first visit, at step ``i0 >= 1``.

    Returns
    -------
    laws, tail
        As in :func:`bridge_interior_laws`, for ``I_u`` over the positions ``0..i0-2``.
    """
    laws, tail = first_stretch_laws_batch(P, blocked, start_law, [b], [i0], kmax)
    return laws[0], tail[0]


def first_stretch_laws_batch(P: Any, blocked: Any, start_law: Any, b: Any, i0: Any,
                             kmax: int) -> tuple[FloatArray, FloatArray]:
    """:func:`first_stretch_laws` for many first stretches (tokens) sharing ``π0``: bridges
    of length ``i0`` from a virtual node ``σ`` with row ``π0`` (cost as in
    :func:`bridge_interior_laws_batch` with one source)."""
    csr = _csr(P)
    n = csr.shape[0]
    mask = _mask(blocked, n)
    pi0 = np.asarray(start_law, dtype=np.float64)
    check(pi0.shape == (n,), "start_law", f"must have shape ({n},), got {pi0.shape}")
    check(bool(np.all(np.isfinite(pi0)) and np.all(pi0 >= 0)), "start_law",
          "must be finite and non-negative")
    i0s = _ints(i0, "i0")
    check(bool(np.all(i0s >= 1)), "i0", "must be >= 1")
    row = np.where(mask, 0.0, pi0)
    aug = sparse.vstack([sparse.hstack([csr, sparse.csr_matrix((n, 1))]),
                         sparse.hstack([sparse.csr_matrix(row[None, :]),
                                        sparse.csr_matrix((1, 1))])]).tocsr()
    bs = _ints(b, "b")
    sigma = np.full(bs.size, n, dtype=np.int64)
    return _solve(aug, np.append(mask, False), sigma, bs, i0s, kmax, n)


def contribution_laws(laws: FloatArray, tail: FloatArray, a: int | None, b: int,
                      m: int) -> tuple[FloatArray, FloatArray]:
    """The laws of ``K_u = [u = a] + [u = b][m >= 3] + I_u`` from those of ``I_u``.

    Parameters
    ----------
    laws, tail
        ``(n, kmax + 1)`` and ``(n,)`` from :func:`bridge_interior_laws` (or
        :func:`first_stretch_laws`, with ``a = None``: ``K_u = [u = b] + I_u``).
    a, b, m
        The cycle: its ends and length (``m`` is ignored for a first stretch).

    Returns
    -------
    laws, tail
        Same shapes: ``P(K_u = k)``, ``k <= kmax``, and ``P(K_u > kmax)``.
    """
    out, over = np.zeros_like(laws), tail.copy()
    kmax = laws.shape[1] - 1
    shift = np.zeros(laws.shape[0], dtype=np.int64)
    if a is not None:
        shift[a] += 1
    if m >= 3 or a is None:
        shift[b] += 1
    for u in range(laws.shape[0]):
        d = shift[u]
        out[u, d:] = laws[u, :kmax + 1 - d]
        over[u] += laws[u, kmax + 1 - d:].sum()
    return out, over


def _solve(csr: Any, blocked: npt.NDArray[np.bool_], a: IntArray, b: IntArray, L: IntArray,
           kmax: int, n_out: int, corridor: bool = False) -> tuple[FloatArray, FloatArray]:
    """The batched laws on ``csr`` (nodes ``>= n_out`` are virtual sources)."""
    n = csr.shape[0]
    C = a.size
    check(b.size == C and L.size == C, "L", "a, b and L must have the same length")
    check(kmax >= 0, "kmax", f"must be >= 0, got {kmax}")
    for name, x in (("a", a), ("b", b)):
        check(bool(np.all((x >= 0) & (x < n))), name, f"nodes must be in 0..{n - 1}")
        check(not bool(np.any(blocked[x])), name, "nodes must be outside the observer set")
    check(bool(np.all(L >= 0)), "L", "must be >= 0")
    check(bool(np.all((L > 0) | (a == b))), "L", "L = 0 (m = 2) needs a = b")
    laws = np.zeros((C, n_out, kmax + 1))
    tail = np.zeros((C, n_out))
    if C == 0:
        return laws, tail
    longest = int(L.max())
    lam = _log_mass(csr.indptr, csr.indices, csr.data, blocked, longest)
    data = csr.data * math.exp(-lam)
    sources, ia = np.unique(a, return_inverse=True)
    targets, ib = np.unique(b, return_inverse=True)
    order = np.lexsort((L, ia))
    grp_ptr = np.searchsorted(ia[order], np.arange(sources.size + 1)).astype(np.int64)
    cb, cl = ib[order].astype(np.int64), L[order]
    z = np.zeros(C)
    _normalisers(csr.indptr, csr.indices, data, blocked, sources, targets, grp_ptr, cb, cl, z)
    good = np.isfinite(z) & (z > TINY)
    for c in np.flatnonzero(~good):
        i = int(order[c])
        _refuse_impossible(csr, blocked, int(a[i]), int(b[i]), int(L[i]), n_out)
        check(not corridor, "L", f"cycle {i}: its probability is below float64's range "
              "even after scaling")
        keep = _corridor(csr, blocked, int(a[i]), int(b[i]))
        one, over = _solve(csr, blocked | ~keep, a[i:i + 1], b[i:i + 1], L[i:i + 1], kmax,
                           n_out, corridor=True)
        laws[i], tail[i] = one[0], over[0]
        outside = ~blocked[:n_out] & ~keep[:n_out]
        laws[i, outside, 0] = 1.0
    sel = np.flatnonzero(good)
    if sel.size:
        # the kernel reads groups through grp_ptr: keep only the good cycles, in order
        g_ptr = np.searchsorted(ia[order][sel], np.arange(sources.size + 1)).astype(np.int64)
        nodes = np.flatnonzero(~blocked[:n_out]).astype(np.int64)
        work = float(nodes.size) * int(L.max()) * max(csr.nnz, 1)
        _run_nodes(nodes, work, csr.indptr, csr.indices, data, blocked, sources, targets, g_ptr,
                   cb[sel], cl[sel], order[sel].astype(np.int64), z[sel], kmax, laws, tail)
    if not (np.all(np.isfinite(laws)) and np.all(np.isfinite(tail))):
        raise InputError("P", "the laws overflowed float64 (a badly scaled taboo chain)")
    return laws, tail


def _refuse_impossible(csr: Any, blocked: npt.NDArray[np.bool_], a: int, b: int, L: int,
                       n_out: int) -> None:
    """Raise if no path of exactly ``L`` steps leads from ``a`` to ``b`` avoiding
    ``blocked`` (checked on the pattern of ``P``, so it does not underflow)."""
    pattern = _pattern(csr, blocked).T.tocsr()
    at = np.zeros(csr.shape[0], dtype=bool)
    at[a] = True
    for _ in range(L):
        at = (pattern @ at.astype(np.float64)) > 0
        if not at.any():
            break
    if not at[b]:
        what = (f"first stretch (from the start law to {b} in {L - 1} steps" if a >= n_out
                else f"cycle ({a} -> {b} in {L} steps")
        raise InputError("L", f"this {what} avoiding the observers) has probability 0")


def _corridor(csr: Any, blocked: npt.NDArray[np.bool_], a: int,
              b: int) -> npt.NDArray[np.bool_]:
    """The nodes on some path from ``a`` to ``b`` avoiding ``blocked``."""
    pattern = _pattern(csr, blocked)
    keep = np.zeros(csr.shape[0], dtype=bool)
    fwd = csgraph.breadth_first_order(pattern, a, directed=True, return_predecessors=False)
    bwd = csgraph.breadth_first_order(pattern.T.tocsr(), b, directed=True,
                                      return_predecessors=False)
    keep[np.intersect1d(fwd, bwd)] = True
    return keep & ~blocked


def _pattern(csr: Any, blocked: npt.NDArray[np.bool_]) -> Any:
    """The 0/1 pattern of the taboo chain."""
    free = sparse.diags((~blocked).astype(np.float64))
    pattern = (free @ csr @ free).tocsr()
    pattern.eliminate_zeros()
    pattern.data[:] = 1.0
    return pattern


def _csr(P: Any) -> Any:
    csr = sparse.csr_matrix(P, dtype=np.float64)
    check(csr.shape[0] == csr.shape[1], "P", f"must be square, got {csr.shape}")
    csr.sum_duplicates()
    check(bool(np.all(np.isfinite(csr.data)) and np.all(csr.data >= 0)), "P",
          "entries must be finite and non-negative")
    return csr


def _mask(blocked: Any, n: int) -> npt.NDArray[np.bool_]:
    arr = np.asarray(blocked)
    if arr.dtype == np.bool_:
        check(arr.shape == (n,), "blocked", f"a mask must have shape ({n},), got {arr.shape}")
        return arr.copy()
    ids = arr.astype(np.int64).ravel()
    check(bool(np.all((ids >= 0) & (ids < n))), "blocked", f"nodes must be in 0..{n - 1}")
    mask = np.zeros(n, dtype=bool)
    mask[ids] = True
    return mask


def _ints(x: int | Sequence[int] | npt.ArrayLike, name: str) -> IntArray:
    arr = np.atleast_1d(np.asarray(x))
    check(arr.ndim == 1 and (arr.size == 0 or np.issubdtype(arr.dtype, np.integer)), name,
          "must be integers")
    return arr.astype(np.int64)
