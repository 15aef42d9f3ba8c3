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

``t`` over the interior ``1..L-1`` and ``Z = (Q^L)[a, b]``. It is computed as
``Σ_s E^{*(k-1)}(s) A(L - s)`` with ``A = F * G``: the powers of ``E`` serve every cycle.
Every term is a sum of non-negative numbers (in any order: the sums are vectorised), so
small probabilities keep their relative precision; so does ``P(I_u = 0)``: taken as
``1 - P(I_u >= 1)``, it is recomputed from the paths avoiding ``u`` (one backward sweep
from ``b``) when below ``DIRECT_ZERO`` (above it, its relative error is at most about
``1e-16 L / P(I_u = 0)``). Long bridges would underflow (``(Q^L)[a, b]`` decays like
``ρ(Q)^L``): every weight is multiplied by ``e^{-λ}``, ``λ`` the mean log-growth of the
taboo chain's mass over the longest ``L``, which rescales all the path weights of length
``L`` alike and so cancels in the laws.

Calls on the same chain and observer set (an observer's cycles asked again with a larger
``kmax``, as :func:`netdp.tracking.walk_views.view_laws` does) reuse what the last calls
computed: the series ``F, E, G`` of every node, the direct ``P(I_u = 0)``, and the powers
of ``E`` and the laws up to the last ``kmax`` (see :func:`bridge_interior_laws_batch`).
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numba as nb
import numpy as np
import numpy.typing as npt
from scipy import sparse
from scipy.sparse import csgraph

from netdp.core.errors import InputError, check
from netdp.tracking._kernels.count_law import _count_laws, _log_mass, _normalisers

TINY = 1e-250  # a rescaled normaliser below this is redone on its corridor, then refused
PARALLEL_WORK = 1e6  # sparse steps (nodes x longest L x nnz) from which threads share nodes
BLOCK = 64  # nodes swept together (one column each)
BLOCK_BYTES = 64 * 2**20  # at most this much memory for a block's series
CACHE_BYTES = 128 * 2**20  # series up to this size are kept for the next call on the chain
KEPT_CHAINS = 2  # chains (observer sets) whose series are kept

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


# --------------------------------------------------------------------------------------
# The complete graph: closed forms and the lumped chain
# --------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------
# Any graph: compiled kernels
# --------------------------------------------------------------------------------------


def _run_nodes(nodes: IntArray, work: float, width: int, series: tuple[Any, ...],
               *args: Any) -> None:
    """:func:`_count_laws` over ``nodes`` by blocks of ``width``, split among numba's thread
    count when the work (in sparse steps) is worth a thread pool (``series``: the rows of
    ``F, E, G, Om, prow, pstate`` for ``nodes``, or empty)."""
    threads = min(nb.get_num_threads(), nodes.size)
    kept = series[0].shape[0] == nodes.size

    kernel: Any = _count_laws

    def run(lo: int, hi: int) -> None:
        rows = tuple(s[lo:hi] for s in series) if kept else series
        kernel(*args[:7], nodes[lo:hi], width, *rows, *args[7:])

    if threads <= 1 or work < PARALLEL_WORK:
        run(0, nodes.size)
        return
    parts = max(threads, -(-nodes.size // width))  # wide blocks: the sweeps are vectorised
    cuts = np.linspace(0, nodes.size, parts + 1).round().astype(int)
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda i: run(int(cuts[i]), int(cuts[i + 1])), range(parts)))


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
    ``k = min(kmax + 1, Λ)`` and ``d`` the period of the returns to ``u`` (the gcd of
    their lengths: 2 on a bipartite graph, 1 with self-moves): per node ``u`` three sweeps
    of ``Λ`` sparse steps (``3 Λ nnz(P)``, vectorised over a block of nodes), ``L² / d``
    per cycle for ``A``, ``k Λ² / (2 d²)`` for the powers of ``E`` (on the multiples of
    ``d``), and ``k L / d`` per cycle; in all about
    ``n (3 Λ nnz + k Λ² / 2d² + C (L² / d + k L / d))`` flops, the sums vectorised,
    threads sharing the nodes, and memory ``(S + 2B) Λ`` floats per node (``2B Λ + 2C Λ``
    more per thread) plus the ``C n (kmax + 1)`` output. A node almost surely visited
    (``P(I_u = 0) <`` ``DIRECT_ZERO``) costs one more sweep per distinct ``b`` among
    those cycles.
    Practical for ``n`` up to a few hundred and ``Λ`` up to a few thousand.

    Kept from call to call (at most :data:`KEPT_CHAINS` chains, each up to
    :data:`CACHE_BYTES`; keyed by a digest of ``P`` and ``blocked``): the series ``F, E,
    G`` of every node, the direct ``P(I_u = 0)`` by cycle ``(a, b, L)``, the last power
    of ``E`` and the last laws. A call whose scaling ``λ`` equals the kept one (the same
    longest ``L``), whose ``a`` and ``b`` are among the kept ones and ``Λ`` within theirs
    skips the sweeps; if moreover every cycle was in the last call and ``kmax`` is larger,
    the powers go on from the last one and only the counts above the last ``kmax`` are
    computed. Either way the numbers are those computed afresh, bit for bit.

    Measured on a shared, loaded 2-core machine, the calls of ``netdp simulate --accountant
    kov`` (``view_laws``: every observer's views with ``kmax`` 8, then the heavy ones with
    24, 64, 256) replayed against the first version (direct convolutions per source, one
    node at a time, nothing kept): 64-node hypercube, 2000 steps (346 calls): 2.2 s against
    44 s; 10×10 grid, Metropolis walk, cycles up to ``L = 1273`` (a tenth of the observers,
    72 calls): 6.2 s against 106 s.
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
        grp_of = ia[order][sel].astype(np.int64)
        cbs, cls, pos = cb[sel], cl[sel], order[sel].astype(np.int64)
        by_target = np.lexsort((cls, cbs)).astype(np.int64)
        nodes = np.flatnonzero(~blocked[:n_out]).astype(np.int64)
        key = None if corridor else _fingerprint(csr, blocked)
        ends = list(zip(sources[grp_of].tolist(), targets[cbs].tolist(), cls.tolist(),
                        strict=True))
        kept = _kept(key, lam, sources, targets, longest)
        fresh = kept is None
        if kept is None:
            src_row = np.arange(sources.size, dtype=np.int64)
            tgt_row = np.arange(targets.size, dtype=np.int64)
            rows = nodes.size if key is not None else 0
            if 8 * rows * (sources.size + 2 * targets.size + 2) * (longest + 1) > CACHE_BYTES:
                rows = 0
            kept = _Series(lam, sources, targets, longest,
                           np.zeros((rows, sources.size, longest + 1)),
                           np.zeros((rows, longest + 1)),
                           np.zeros((rows, targets.size, longest + 1)),
                           np.zeros((rows, targets.size, longest + 1)),
                           np.zeros((rows, max(longest - 1, 1))),
                           np.zeros((rows, 2), dtype=np.int64), {}, -1, -1, {})
        else:
            src_row = np.searchsorted(kept.sources, sources).astype(np.int64)
            tgt_row = np.searchsorted(kept.targets, targets).astype(np.int64)
        known = np.full((sel.size, n), np.nan)
        for j, end in enumerate(ends):
            if end in kept.known:
                known[j] = kept.known[end]
        k0 = kept.kmax_done
        if (fresh or k0 < 0 or kmax <= k0 or longest != kept.longest_done
                or not all(end in kept.laws_done for end in ends)):
            k0 = -1
        else:  # go on from the last call (same series): its laws up to k0 stand
            for j, end in enumerate(ends):
                laws[pos[j], :, :k0 + 1] = kept.laws_done[end]
        if kept.F.shape[0]:
            width = BLOCK
        else:
            per_node = 8 * ((sources.size + 2 * targets.size + 1) * (longest + 1) + 6 * n)
            width = int(min(BLOCK, max(1, BLOCK_BYTES // per_node)))
        tr = csr  # Q^T for the forward sweeps (not read with kept series)
        if fresh:
            tr = sparse.csr_matrix((data, csr.indices, csr.indptr), shape=csr.shape).T.tocsr()
            tr.sort_indices()
        work = float(nodes.size) * longest * max(csr.nnz, 1)
        _run_nodes(nodes, work, width,
                   (kept.F, kept.E, kept.G, kept.Om, kept.prow, kept.pstate), csr.indptr,
                   csr.indices, data, tr.indptr, tr.indices, tr.data, blocked, fresh, k0,
                   sources, targets, src_row, tgt_row, grp_of, cbs, cls, pos, z[sel],
                   by_target, kmax, laws, tail, known)
        if kept.F.shape[0] and key is not None:
            for j, end in enumerate(ends):
                if not np.isnan(known[j]).all():
                    kept.known[end] = known[j]
            kept.kmax_done, kept.longest_done = kmax, longest
            kept.laws_done = {end: laws[pos[j]].copy() for j, end in enumerate(ends)}
            _keep(key, kept)
    if not (np.all(np.isfinite(laws)) and np.all(np.isfinite(tail))):
        raise InputError("P", "the laws overflowed float64 (a badly scaled taboo chain)")
    return laws, tail


@dataclass
class _Series:
    """The series of every node (see :func:`_count_laws`) for one chain, scaling, sources,
    targets and horizon; the direct ``P(I_u = 0)`` read so far, by cycle ends; the last
    call's powers (``prow, pstate``), ``kmax``, horizon and laws, by cycle ends."""

    lam: float
    sources: IntArray
    targets: IntArray
    longest: int
    F: FloatArray
    E: FloatArray
    G: FloatArray
    Om: FloatArray
    prow: FloatArray
    pstate: IntArray
    known: dict[tuple[int, int, int], FloatArray]
    kmax_done: int
    longest_done: int
    laws_done: dict[tuple[int, int, int], FloatArray]


_KEPT: OrderedDict[bytes, _Series] = OrderedDict()
_KEPT_LOCK = threading.Lock()


def _fingerprint(csr: Any, blocked: npt.NDArray[np.bool_]) -> bytes:
    """A digest of the chain and the observer set."""
    h = hashlib.blake2b(digest_size=20)
    for arr in (np.asarray(csr.shape, dtype=np.int64), csr.indptr, csr.indices, csr.data,
                blocked):
        h.update(np.ascontiguousarray(arr).tobytes())
        h.update(b"|")
    return h.digest()


def _kept(key: bytes | None, lam: float, sources: IntArray, targets: IntArray,
          longest: int) -> _Series | None:
    """The kept series of ``key`` if they serve this call (taken out of the store): the
    same scaling (so the same numbers as computed afresh), its sources and targets among
    theirs, its horizon within theirs."""
    if key is None:
        return None
    with _KEPT_LOCK:  # taken out while in use: a concurrent call computes afresh
        kept = _KEPT.pop(key, None)
    if (kept is None or kept.lam != lam or longest > kept.longest
            or not np.isin(sources, kept.sources).all()
            or not np.isin(targets, kept.targets).all()):
        return None
    return kept


def _keep(key: bytes, series: _Series) -> None:
    with _KEPT_LOCK:
        _KEPT[key] = series
        _KEPT.move_to_end(key)
        while len(_KEPT) > KEPT_CHAINS:
            _KEPT.popitem(last=False)


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
