"""Compiled kernels of the graph-walk tracker (numba); tests check them against plain numpy.

Two steps per observer ``v`` (see :mod:`netdp.tracking.taboo`):

* :func:`powers`: the rows ``e_s Q^k`` (forward, through ``Pᵀ``) or columns ``Q^k e_s``
  (backward, through ``P``) of the taboo chain ``Q`` (``P`` with the observer's rows and
  columns removed), normalised to sum 1 with their log-norms kept. They are iterated until
  they repeat with period 2 (period 1 is the special case of aperiodic chains) to
  :data:`TOL`; later ones are read back from the last two, so the cost follows the taboo
  chain's mixing time, not the cycle lengths.
* :func:`observer_losses`: per cycle ``(m, a, b)``, each node's expected number of
  interior visits ``Σ_{k=1}^{L-1} (Q^k)_{au} (Q^{L-k})_{ub} / (Q^L)_{ab}``, ``L = m - 2``
  (the settled middle of the sum in closed form), capped at 1 as the participation rate;
  then the entry's features for every node, composed and finalised as the complete-graph
  tracker does (:mod:`netdp.tracking._kernels.walk`).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from netdp.accounting import _compiled as compiled

KOV, RDP = 0, 1
TOL = 1e-13  # rows that moved less than this (L1, normalised) in two steps have settled
BINS_PER_OCTAVE = 32  # RDP: rates rounded up to 2^(-j/32) (at most 2.2 % above)
MAX_BIN = BINS_PER_OCTAVE * 40  # rates below 2^-40 are rounded up to it


@nb.njit(parallel=True, cache=True)
def powers(indptr, indices, data, starts, blocked, rows, logs):
    """Fill ``rows[s, k] = M^k e_{starts[s]}`` for the CSR matrix ``M`` with the
    ``blocked`` rows and columns removed, ``k = 0..K`` (``rows`` holds ``K + 1``; zeros
    on entry, made by numpy so that pages never touched cost no memory), each normalised
    to sum 1, with ``logs[s, k]`` the log of the norm removed (``-inf`` once the mass is
    gone).

    Returns
    -------
    settled
        Per start, the first ``k`` with ``rows[s, k] = rows[s, k - 2]`` to :data:`TOL`
        (and so every later row, period 2), or where the mass is gone; ``-1`` if none up
        to ``K``.
    """
    ns, n = starts.size, indptr.size - 1
    limit = rows.shape[1] - 1
    settled = np.full(ns, -1, np.int64)
    for s in nb.prange(ns):
        rows[s, 0, starts[s]] = 1.0
        logs[s, :] = -np.inf
        logs[s, 0] = 0.0
        for k in range(1, limit + 1):
            cur, nxt = rows[s, k - 1], rows[s, k]
            total = 0.0
            for x in range(n):
                if blocked[x]:
                    continue
                acc = 0.0
                for p in range(indptr[x], indptr[x + 1]):
                    acc += data[p] * cur[indices[p]]
                nxt[x] = acc
                total += acc
            if total <= 0.0:  # the mass is gone: every later row is 0
                settled[s] = k
                break
            for x in range(n):
                nxt[x] /= total
            logs[s, k] = logs[s, k - 1] + math.log(total)
            if k >= 3:
                moved = 0.0
                for x in range(n):
                    moved += abs(nxt[x] - rows[s, k - 2, x])
                step = logs[s, k] - logs[s, k - 1]
                before = logs[s, k - 2] - logs[s, k - 3]
                if moved < TOL and abs(step - before) < TOL:
                    settled[s] = k
                    break
    return settled


@nb.njit(cache=True)
def _at(logs, settled, s, k):
    """Index of the stored row equal to row ``k`` of start ``s``, and its log-norm."""
    top = settled[s]
    if top < 0 or k <= top:
        return k, logs[s, k]
    if logs[s, top] == -np.inf:
        return top, -np.inf
    extra = k - top
    pairs, odd = extra // 2, extra % 2
    log = logs[s, top] + pairs * (logs[s, top] - logs[s, top - 2])
    if odd:
        log += logs[s, top - 1] - logs[s, top - 2]
    return top - odd, log


@nb.njit(parallel=True, cache=True)
def interior_visits(F, lf, sf, ia, G, lg, sg, ib, b, L, scale, factor, out, blocks):
    """``out[u]``: the expected visits of ``u`` at the interior steps ``1..L-1`` of a path
    of ``L`` steps from ``a`` (forward rows ``F``, start ``ia``) to ``b`` (backward rows
    ``G``, start ``ib``) of the taboo chain, given that it ends at ``b``; ``blocks`` of
    nodes in parallel. ``(Q^k)_{ub} = factor · scale[u] · G[ib, k, u]`` (with its
    log-norm): ones in general; a reversible chain keeps only forward rows, as
    ``(Q^k)_{ub} = (π_b / π_u) (Q^k)_{bu}``."""
    n = out.size
    out[:] = 0.0
    if L < 2:
        return
    i_den, l_den = _at(lf, sf, ia, L)
    den = F[ia, i_den, b]
    if den <= 0.0 or l_den == -np.inf:
        return
    log_den = math.log(den) + l_den - math.log(factor)
    # the settled middle: k > top_f and L - k > top_g, both rows periodic there
    lo, hi = L, 0
    if sf[ia] >= 2 and sg[ib] >= 2 and lf[ia, sf[ia]] > -np.inf and lg[ib, sg[ib]] > -np.inf:
        lo, hi = sf[ia] + 1, L - sg[ib] - 1
    terms = 0
    weight = np.empty(L)
    rows_f = np.empty(L, np.int64)
    rows_g = np.empty(L, np.int64)
    for k in range(1, L):
        if lo <= k <= hi and k >= lo + 2:
            continue  # counted with the first two of its parity
        i_f, l_f = _at(lf, sf, ia, k)
        i_g, l_g = _at(lg, sg, ib, L - k)
        if l_f == -np.inf or l_g == -np.inf:
            continue
        w = math.exp(l_f + l_g - log_den)
        if lo <= k <= hi:  # k = lo or lo + 1: every k' = k + 2j <= hi, geometrically
            count = (hi - k) // 2 + 1
            if count > 1:
                l_f2 = _at(lf, sf, ia, k + 2)[1]
                l_g2 = _at(lg, sg, ib, L - k - 2)[1]
                rate = (l_f2 + l_g2) - (l_f + l_g)  # log of the ratio of consecutive terms
                w *= count if rate == 0.0 else math.expm1(count * rate) / math.expm1(rate)
        if w == 0.0:
            continue
        weight[terms], rows_f[terms], rows_g[terms] = w, i_f, i_g
        terms += 1
    size = (n + blocks - 1) // blocks
    for t in nb.prange(blocks):
        for r in range(terms):
            fr, gr, w = F[ia, rows_f[r]], G[ib, rows_g[r]], weight[r]
            for u in range(t * size, min(n, (t + 1) * size)):
                out[u] += w * fr[u] * gr[u] * scale[u]


@nb.njit(cache=True)
def _subsampled_kov(q, eg):
    if q <= 0.0:
        return 0.0
    if q >= 1.0:
        return eg
    if eg < 1.0:
        return math.log1p(q * math.expm1(eg))
    return eg + math.log(q + (1.0 - q) * math.exp(-eg))


@nb.njit(cache=True)
def rate_bin(q):
    """The grid bin of a rate ``0 < q``: ``2^(-j/32) >= q``, ``j <= MAX_BIN``."""
    if q >= 1.0:
        return 0
    j = int(math.floor(-BINS_PER_OCTAVE * math.log2(q)))
    return min(max(j, 0), MAX_BIN)


@nb.njit(cache=True)
def observer_losses(cycles, a_index, b_index, a_nodes, b_nodes, F, lf, sf, G, lg, sg,
                    scale, factors, blocked, mode, eps0, delta, z, orders, blocks):
    """Every node's loss towards one observer from its cycles ``(m, a, b)``.

    Parameters
    ----------
    cycles
        The observer's return lengths ``m`` (one entry each).
    a_index, b_index
        Per cycle: the start of its forward rows and of its backward rows (``-1`` when
        ``m < 4``: no interior; ``-2`` beyond the rows kept: rate 1).
    a_nodes, b_nodes
        Per cycle: the attributable nodes (``-1`` when ``m < 2``: none).
    scale, factors
        The backward rows' scale per node and per cycle (see :func:`interior_visits`).
    blocked
        The observer's nodes (no loss reported for them).
    blocks
        Threads for the interior visits (``numba.get_num_threads()``).

    Returns
    -------
    (n,) losses (0 for the observer's nodes).
    """
    n = blocked.size
    nf = 3 if mode == KOV else orders.size
    acc = np.zeros((n, nf))
    visits = np.empty(n)
    f = np.empty(nf)
    cache = np.empty((MAX_BIN + 1, nf))
    filled = np.zeros(MAX_BIN + 1, np.bool_)
    used = np.empty(MAX_BIN + 1, np.int64)
    k = cycles.size
    for e in range(k):
        m = cycles[e]
        eg = eps0 / math.sqrt(m)
        std = z * math.sqrt(m)
        a, b = a_nodes[e], b_nodes[e]
        if a_index[e] >= 0:
            interior_visits(F, lf, sf, a_index[e], G, lg, sg, b_index[e], b, m - 2, scale,
                            factors[e], visits, blocks)
        else:  # -2: beyond the rows kept, rate 1; -1: no interior
            visits[:] = 1.0 if a_index[e] == -2 else 0.0
        n_used = 0
        for u in range(n):
            if blocked[u]:
                continue
            c = 0
            if u == a:
                c += 1
            if u == b:
                c += 1
            if c > 0:
                if mode == KOV:
                    compiled.kov_terms(c * eg, f)
                else:
                    compiled.rdp_gaussian_entry(1.0, c, std, orders, f)
                for j in range(nf):
                    acc[u, j] += f[j]
                continue
            q = min(visits[u], 1.0)
            if q <= 0.0:
                continue
            if mode == KOV:
                compiled.kov_terms(_subsampled_kov(q, eg), f)
                for j in range(nf):
                    acc[u, j] += f[j]
            else:
                jb = rate_bin(q)
                if not filled[jb]:
                    compiled.rdp_gaussian_entry(2.0 ** (-jb / BINS_PER_OCTAVE), 1.0, std,
                                                orders, cache[jb])
                    filled[jb] = True
                    used[n_used] = jb
                    n_used += 1
                for j in range(nf):
                    acc[u, j] += cache[jb, j]
        for r in range(n_used):
            filled[used[r]] = False
    out = np.zeros(n)
    for u in range(n):
        if blocked[u] or k == 0:
            continue
        if mode == KOV:
            out[u] = compiled.kov_epsilon(acc[u], k, delta)
        else:
            out[u] = compiled.rdp_epsilon(acc[u], 2.0 * k * delta, orders)
    return out
