"""Compiled kernels of the pairwise tracker (numba); tests check them against plain numpy.

The walk is grouped by observer with a counting sort (O(T), stable in time). For each
observer ``v`` every return of the token is one *entry* ``(m, c)`` for every other node
``u``: ``c = 0`` for all but the (at most two) nodes ``v`` can attribute a contribution
to. So a pair's composed features are the observer's *base* sum (all entries at
``c = 0``) plus *corrections* for the few attributable pairs: O(T) work and memory, and
the loss of every other pair is the observer's base value.

Features per entry, summed per pair, then turned into ε by a finalizer:

* ``KOV`` (the reference method): the entry loss ``L`` (``c = 0``: subsampled
  ``ln(1 + (1 - (1-1/n)^m)(e^{ε0/√m} - 1))``; ``c = 1``: ``ε0/√m``; ``c = 2``:
  ``2 ε0/√m``) as ``(L, L tanh(L/2), L²)``; finalizer KOV-het with ``δ̃ = k δ``.
* ``RDP``: RDP of the entry at each order: a Gaussian of std ``z √m`` (``z`` = σ / Δ)
  and sensitivity ``c``; ``c = 0`` is Poisson-subsampled (rate ``1 - (1-1/n)^m``, sensitivity
  1). Finalizer: Balle et al. 2020 conversion at ``δ = 2 k δ`` (the δ that KOV spends).
* ``MU2``: the squared Gaussian-DP parameter ``c² / (z² m)`` of the attributable entries
  (0 at ``c = 0``); the finalizer returns the sum, ``μ²`` of the pair's exact Gaussian part,
  which the PLD accountant composes with the observer's subsampled entries.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from netdp.accounting import _compiled as compiled
from netdp.tracking.cycle_entries import A_ONLY, B_ONLY, BOTH, FIRST, NONE, NONE_SAME, REGULAR

KOV, RDP, MU2 = 0, 1, 2


@nb.njit(cache=True)
def group_by_holder(holders, n):
    """Counting sort: ``pos[start[v]:start[v+1]]`` are the hops held by ``v``, in order."""
    start = np.zeros(n + 1, np.int64)
    for i in range(holders.size):
        start[holders[i] + 1] += 1
    for v in range(n):
        start[v + 1] += start[v]
    fill = start[:-1].copy()
    pos = np.empty(holders.size, np.int64)
    for i in range(holders.size):
        h = holders[i]
        pos[fill[h]] = i
        fill[h] += 1
    return start, pos


@nb.njit(cache=True)
def length_flags(holders, steps, n_ids, watched):
    """Which view lengths occur for the ``watched`` holders: ``regular[m]`` for a cycle of
    ``m >= 2`` steps, ``first[i0]`` for a token's stretch of ``i0 >= 1`` steps before
    the holder's first visit (one pass over the tokens, no sort)."""
    regular = np.zeros(steps + 1, np.bool_)
    first = np.zeros(steps + 1, np.bool_)
    last = np.full(n_ids, -1, np.int64)
    tokens = holders.size // steps
    for t in range(tokens):
        base = t * steps
        for i in range(steps):
            h = holders[base + i]
            if not watched[h]:
                continue
            if last[h] < base:
                first[i] = i >= 1
            elif i - (last[h] - base) >= 2:
                regular[i - (last[h] - base)] = True
            last[h] = base + i
    return regular, first


@nb.njit(cache=True)
def _rdp_final(feat, k, delta, orders):
    """Balle et al. conversion at ``δ = 2 k δ`` (the δ that KOV spends); 0 without entries."""
    if k == 0:
        return 0.0
    return compiled.rdp_epsilon(feat, 2.0 * k * delta, orders)


@nb.njit(cache=True)
def _entry_features(mode, m, c, n, eps0, z, orders, out):
    if mode == KOV:
        eg = eps0 / math.sqrt(m)
        if c == 0:
            q = -math.expm1(m * math.log1p(-1.0 / n))
            if eg < 1.0:
                loss = math.log1p(q * math.expm1(eg))
            else:  # ln(1 + q(e^x - 1)) = x + ln(q + (1-q) e^-x), no overflow
                loss = eg + math.log(q + (1.0 - q) * math.exp(-eg))
        else:
            loss = c * eg
        compiled.kov_terms(loss, out)
    elif mode == RDP:
        q = 1.0 if c > 0 else -math.expm1(m * math.log1p(-1.0 / n))
        compiled.rdp_gaussian_entry(q, max(c, 1), z * math.sqrt(m), orders, out)
    else:
        out[0] = c * c / (z * z * m)


@nb.njit(cache=True)
def _finalize(mode, feat, k, delta, orders):
    if mode == KOV:
        return compiled.kov_epsilon(feat, k, delta)
    if mode == RDP:
        return _rdp_final(feat, k, delta, orders)
    return feat[0]


@nb.njit(cache=True)
def _finish_pairs(mode, basef, acc, seen, touched, nt, k, delta, orders, total, values, ids,
                  out, keep_ids):
    """The losses of an observer's ``nt`` corrected pairs (its base plus each one's
    corrections), written from ``values[out]``; ``acc`` and ``seen`` are reset."""
    for r in range(nt):
        u = touched[r]
        for f in range(basef.size):
            total[f] = basef[f] + acc[u, f]
            acc[u, f] = 0.0
        seen[u] = False
        values[out + r] = _finalize(mode, total, k, delta, orders)
        if keep_ids:
            ids[out + r] = u


@nb.njit(cache=True)
def _finish_slots(mode, basef, acc, slot, touched, nt, k, delta, orders, total, values, ids,
                  out, keep_ids):
    """:func:`_finish_pairs` with each corrected pair's sums in row ``r`` of ``acc`` (the
    order it was first touched in; ``slot[u] = r``): ``acc`` and ``slot`` are reset."""
    # Rényi's conversion: its per-order part once for the observer (at 2 k δ)
    shift = compiled.rdp_shift(2.0 * k * delta, orders) if mode == RDP else np.empty(0)
    for r in range(nt):
        u = touched[r]
        for f in range(basef.size):
            total[f] = basef[f] + acc[r, f]
            acc[r, f] = 0.0
        slot[u] = -1
        if mode == RDP:  # _rdp_final with the shift above
            values[out + r] = compiled.rdp_shifted_epsilon(total, shift) if k > 0 else 0.0
        else:
            values[out + r] = _finalize(mode, total, k, delta, orders)
        if keep_ids:
            ids[out + r] = u


@nb.njit(parallel=True, cache=True)
def pairwise(
    holders,
    steps,
    n_ids,
    n_nodes,
    observers,
    others,
    mode,
    eps0,
    delta,
    z,
    orders,
    keep_ids,
    n_threads,
):
    """Per-observer base losses and the losses of attributable (corrected) pairs.

    Parameters
    ----------
    holders
        Flattened ``(tokens, steps)`` holders, ids in ``0..n_ids-1``.
    steps
        Steps per token (entries never span two tokens).
    n_ids, n_nodes
        Number of ids (nodes, or nodes + 1 with a coalition id) and of real nodes (for the
        subsampling rate).
    observers
        The ids whose views are accounted.
    others
        For each observer, how many nodes ``u`` it is accounted against.
    n_threads
        Blocks of observers run in parallel (``numba.get_num_threads()``).

    Returns
    -------
    base, weight, k, offsets, counts, values, ids
        ``base[o]``: loss of every non-attributable pair of observer ``o`` (``weight[o]``
        pairs); ``k[o]`` its entries; corrected losses in
        ``values[offsets[o]:offsets[o]+counts[o]]`` with the nodes in ``ids`` (if kept).
    """
    start, pos = group_by_holder(holders, n_ids)
    n_obs = observers.size
    nf = 3 if mode == KOV else (orders.size if mode == RDP else 1)
    offsets = np.zeros(n_obs + 1, np.int64)
    most = 0
    for o in range(n_obs):
        v = observers[o]
        offsets[o + 1] = offsets[o] + 2 * max(start[v + 1] - start[v] - 1, 0)
        most = max(most, start[v + 1] - start[v])
    values = np.empty(offsets[-1], np.float64)
    ids = np.empty(offsets[-1] if keep_ids else 0, np.int64)
    base = np.zeros(n_obs)
    weight = np.zeros(n_obs, np.int64)
    kk = np.zeros(n_obs, np.int64)
    counts = np.zeros(n_obs, np.int64)
    block = (n_obs + n_threads - 1) // n_threads
    for t in nb.prange(n_threads):
        acc = np.zeros((n_ids, nf))
        seen = np.zeros(n_ids, np.bool_)
        touched = np.empty(2 * most + 2, np.int64)
        f0 = np.empty(nf)
        fc = np.empty(nf)
        total = np.empty(nf)
        for o in range(t * block, min(n_obs, (t + 1) * block)):
            v = observers[o]
            lo, hi = start[v], start[v + 1]
            basef = np.zeros(nf)
            k = 0
            nt = 0
            for e in range(lo + 1, hi):
                i, j = pos[e], pos[e - 1]
                if i // steps != j // steps:
                    continue
                m = i - j
                k += 1
                _entry_features(mode, m, 0, n_nodes, eps0, z, orders, f0)
                for f in range(nf):
                    basef[f] += f0[f]
                if m < 2:
                    continue
                a, b = holders[j + 1], holders[i - 1]
                c = 2 if a == b else 1  # one node handed the token both ways, or two nodes
                _entry_features(mode, m, c, n_nodes, eps0, z, orders, fc)
                for r in range(3 - c):
                    u = a if r == 0 else b
                    for f in range(nf):
                        acc[u, f] += fc[f] - f0[f]
                    if not seen[u]:
                        seen[u] = True
                        touched[nt] = u
                        nt += 1
            base[o] = _finalize(mode, basef, k, delta, orders)
            kk[o] = k
            weight[o] = others[o] - nt
            counts[o] = nt
            _finish_pairs(mode, basef, acc, seen, touched, nt, k, delta, orders, total,
                          values, ids, offsets[o], keep_ids)
    return base, weight, kk, offsets, counts, values, ids


@nb.njit(cache=True)
def compact(values, ids, offsets, counts, keep_ids):
    """Move each observer's block of corrected values left, in place; return their number."""
    out = 0
    for o in range(counts.size):
        src = offsets[o]
        for r in range(counts[o]):
            values[out + r] = values[src + r]
            if keep_ids:
                ids[out + r] = ids[src + r]
        out += counts[o]
    return out


@nb.njit(parallel=True, cache=True)
def pairwise_sound(holders, steps, n_ids, observers, others, mode, table, rows_regular,
                   rows_first, delta, orders, keep_ids, n_threads, target=0.0):
    """:func:`pairwise` under the sound convention: entries read from ``table``
    (:func:`netdp.tracking.cycle_entries.entry_tables`, indexed ``[kind, key, row]``, the
    row of a length in ``rows_regular`` or ``rows_first``).

    ``target > 0``: every figure at that one δ (spec Correction 7): an observer of ``k``
    entries finishes at ``δ = target / (2 k)`` per entry, so KOV's slack is ``target / 2``
    (its entries, made at :func:`netdp.accounting.target_delta.entry_delta`, spend the
    other half) and Rényi is converted at ``target``. ``target = 0``: the reference
    convention's ``2 k δ``.

    Per token, the stretch before the observer's first visit is one entry (``b``
    attributable); each later return after ``m >= 2`` steps is one (``a`` and ``b``
    attributable, one position when ``m = 2``); a return after one step (the observer
    kept the token) shows nothing and is no entry.
    """
    start, pos = group_by_holder(holders, n_ids)
    n_obs = observers.size
    nf = table.shape[3]
    offsets = np.zeros(n_obs + 1, np.int64)
    most = 0
    for o in range(n_obs):
        v = observers[o]
        offsets[o + 1] = offsets[o] + 2 * (start[v + 1] - start[v])
        most = max(most, start[v + 1] - start[v])
    values = np.empty(offsets[-1], np.float64)
    ids = np.empty(offsets[-1] if keep_ids else 0, np.int64)
    base = np.zeros(n_obs)
    weight = np.zeros(n_obs, np.int64)
    kk = np.zeros(n_obs, np.int64)
    counts = np.zeros(n_obs, np.int64)
    block = (n_obs + n_threads - 1) // n_threads
    for t in nb.prange(n_threads):
        # a corrected pair's sums in the row of the order it was first touched in: a
        # (2 visits + 2) x features block, not n x features (n = 10^6: 224 MB a thread
        # at 28 orders, and a cache miss a write)
        acc = np.zeros((2 * most + 2, nf))
        slot = np.full(n_ids, -1, np.int64)
        touched = np.empty(2 * most + 2, np.int64)
        total = np.empty(nf)
        for o in range(t * block, min(n_obs, (t + 1) * block)):
            v = observers[o]
            lo, hi = start[v], start[v + 1]
            basef = np.zeros(nf)
            k = 0
            nt = 0
            for e in range(lo, hi):
                i = pos[e]
                first = e == lo or pos[e - 1] // steps != i // steps
                if first:
                    length = i - (i // steps) * steps
                    if length < 1:
                        continue
                    kind = FIRST
                    us0, key0 = holders[i - 1], B_ONLY
                    us1, key1 = -1, NONE
                    plain = NONE
                    bn = rows_first[length]
                else:
                    j = pos[e - 1]
                    length = i - j
                    if length < 2:
                        continue
                    kind = REGULAR
                    a, b = holders[j + 1], holders[i - 1]
                    plain = NONE_SAME if (a == b and length > 2) else NONE
                    bn = rows_regular[length]
                    if length == 2 or a == b:
                        us0, key0 = a, (A_ONLY if length == 2 else BOTH)
                        us1, key1 = -1, NONE
                    else:
                        us0, key0 = a, A_ONLY
                        us1, key1 = b, B_ONLY
                k += 1
                for f in range(nf):
                    basef[f] += table[kind, plain, bn, f]
                for r in range(2):
                    u = us0 if r == 0 else us1
                    key = key0 if r == 0 else key1
                    if u < 0:
                        continue
                    if slot[u] < 0:
                        slot[u] = nt
                        touched[nt] = u
                        nt += 1
                    row = slot[u]
                    for f in range(nf):
                        acc[row, f] += table[kind, key, bn, f] - table[kind, plain, bn, f]
            d = delta if target <= 0.0 else target / (2.0 * max(k, 1))
            base[o] = _finalize(mode, basef, k, d, orders)
            kk[o] = k
            weight[o] = others[o] - nt
            counts[o] = nt
            _finish_slots(mode, basef, acc, slot, touched, nt, k, d, orders, total,
                          values, ids, offsets[o], keep_ids)
    return base, weight, kk, offsets, counts, values, ids
