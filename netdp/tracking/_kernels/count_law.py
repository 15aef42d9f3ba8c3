"""Compiled kernels of the count laws on any graph (:mod:`netdp.tracking.count_law`): sparse
steps of the walk that avoids the observers, normalisers, and the per-node sweeps that
build the law of a node's visits inside a window. Each has a plain-numpy oracle in
``tests/privacy/test_count_law.py``."""

from __future__ import annotations

import math

import numba as nb
import numpy as np

DIRECT_ZERO = 1e-3  # P(I_u = 0) below this is recomputed from the paths avoiding u


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


@nb.njit(cache=True, fastmath={"reassoc", "contract"})
def _dot(x, y):
    """``Σ_i x[i] y[i]`` (equal lengths), vectorised. The terms are non-negative here, so
    any order of summation keeps the relative precision (``len · ε``); the order depends on
    the length only, so a node's laws do not depend on the block or thread it is in."""
    acc = 0.0
    for i in range(x.size):
        acc += x[i] * y[i]
    return acc


@nb.njit(cache=True, fastmath={"reassoc", "contract"})
def _dot4(x, y0, y1, y2, y3):
    """Four dot products sharing ``x`` (read once), as :func:`_dot`."""
    a0 = a1 = a2 = a3 = 0.0
    for i in range(x.size):
        c = x[i]
        a0 += c * y0[i]
        a1 += c * y1[i]
        a2 += c * y2[i]
        a3 += c * y3[i]
    return a0, a1, a2, a3


@nb.njit(cache=True)
def _convolve(cur, Er, lo, jlo, nxt):
    """``nxt[q] = Σ_{p = lo}^{q - jlo} cur[p] e[q - p]`` for ``q >= lo + jlo``, with
    ``Er[J - j] = e[j]`` (``J = Er.size - 1``; ``e`` vanishes below ``jlo``): four outputs
    at a time (the terms they share read once), then the few terms of their own."""
    J = Er.size - 1
    q = lo + jlo
    while q + 3 <= J:
        m, o = q - jlo + 1 - lo, J - q + lo  # output q: cur[lo:lo + m] . Er[o:o + m]
        a0, a1, a2, a3 = _dot4(cur[lo:lo + m], Er[o:o + m], Er[o - 1:o - 1 + m],
                               Er[o - 2:o - 2 + m], Er[o - 3:o - 3 + m])
        p = lo + m
        a1 += cur[p] * Er[J - jlo]
        a2 += cur[p] * Er[J - jlo - 1] + cur[p + 1] * Er[J - jlo]
        a3 += cur[p] * Er[J - jlo - 2] + cur[p + 1] * Er[J - jlo - 1] + cur[p + 2] * Er[J - jlo]
        nxt[q], nxt[q + 1], nxt[q + 2], nxt[q + 3] = a0, a1, a2, a3
        q += 4
    while q <= J:
        nxt[q] = _dot(cur[lo:q - jlo + 1], Er[J - q + lo:J - jlo + 1])
        q += 1


@nb.njit(cache=True)
def _gather_block(indptr, indices, data, blocked, X, Y):
    """``Y = Q X`` for a block of columns (``Y`` zero on the rows of ``blocked``)."""
    for x in range(X.shape[0]):
        row = Y[x]
        row[:] = 0.0
        if blocked[x]:
            continue
        for j in range(indptr[x], indptr[x + 1]):
            q = data[j]
            src = X[indices[j]]
            for i in range(row.size):
                row[i] += q * src[i]


@nb.njit(cache=True)
def _gather_block2(indptr, indices, data, blocked, X1, X2, Y1, Y2):
    """``Y1 = Q X1`` and ``Y2 = Q X2`` in one pass over ``Q``."""
    for x in range(X1.shape[0]):
        row1, row2 = Y1[x], Y2[x]
        row1[:] = 0.0
        row2[:] = 0.0
        if blocked[x]:
            continue
        for j in range(indptr[x], indptr[x + 1]):
            q = data[j]
            src1, src2 = X1[indices[j]], X2[indices[j]]
            for i in range(row1.size):
                row1[i] += q * src1[i]
                row2[i] += q * src2[i]


@nb.njit(cache=True)
def _period(E, upto):
    """The gcd of the steps ``1 <= s <= upto`` with ``E[s] > 0`` (1 when there are none)."""
    d = 0
    for s in range(1, upto + 1):
        if E[s] > 0.0:
            a, b = s, d
            while b:
                a, b = b, a % b
            d = a
            if d == 1:
                break
    return max(d, 1)


@nb.njit(cache=True)
def _node_counts(u, F, E, G, Om, src_row, tgt_row, longest, grp_of, cb, cl, pos, z, kmax,
                 laws, tail, k0, prow, pstate):
    """The laws of node ``u`` in every cycle from its series: ``F[src_row[g], t]`` first
    passage from source ``g``, ``E[t]`` first return, ``G[tgt_row[h], r]`` and
    ``Om[tgt_row[h], r]`` the taboo and plain weights from ``u`` to target ``h`` (see
    :func:`_count_laws`).

    With ``A = F * G`` (a first passage, then a last leg) and ``E^{*j}`` the time of ``j``
    returns, ``P(I_u = k) Z = Σ_s E^{*(k-1)}(s) A(L - s)``: the powers of ``E`` are shared
    by all the cycles (whatever their source and target), and each cycle costs one dot
    product per ``k``. The returns to ``u`` happen only at multiples of their period ``d``
    (2 on a bipartite graph), so the powers live on ``d``-multiples: ``d`` times shorter.

    The last power computed, ``E^{*pstate[0]}`` (vanishing below ``pstate[1]``), is left in
    ``prow`` (when it has room). With ``k0 >= 0`` the laws up to ``k0`` are already in
    ``laws`` (a call with ``kmax = k0`` on the same series): the powers go on from
    ``prow``, the same numbers as computed afresh."""
    C = cl.size
    if longest < 2:  # no interior step: I_u = 0
        for c in range(C):
            laws[pos[c], u, 0] = 1.0
        return
    d = _period(E, longest)
    J = (longest - 2) // d  # the powers at the steps 0, d, ..., J d <= longest - 2
    # per cycle, A at L, L - d, ..., down to 2 (a first passage and a last leg, >= 1 each)
    ag, ao = np.zeros((C, J + 1)), np.zeros((C, J + 1))
    hi = np.full(C, -1, dtype=np.int64)
    Gr = np.empty((G.shape[0], longest + 1))  # Gr[h, longest - r] = G[h, r]; Or alike
    Or = np.empty((G.shape[0], longest + 1))
    for h in range(G.shape[0]):
        for r in range(longest + 1):
            Gr[h, longest - r] = G[h, r]
            Or[h, longest - r] = Om[h, r]
    for c in range(C):
        L = cl[c]
        if L < 2:
            continue
        f, h = F[src_row[grp_of[c]]], tgt_row[cb[c]]
        hi[c] = (L - 2) // d
        for j in range(hi[c] + 1):
            m = L - d * j  # Σ_{t=1}^{m-1} F(t) G(m - t)
            ag[c, j] = _dot(f[1:m], Gr[h, longest - m + 1:longest])
            ao[c, j] = _dot(f[1:m], Or[h, longest - m + 1:longest])
    acc = np.zeros((C, kmax + 2))  # acc[:, k], k <= kmax; acc[:, kmax + 1]: the tail
    Er = np.empty(J + 1)  # Er[J - j] = E[d j]: the returns, reversed
    for j in range(J + 1):
        Er[J - j] = E[d * j]
    jlo = 1  # the shortest return (in periods)
    while jlo <= J and Er[J - jlo] == 0.0:
        jlo += 1
    top = min(kmax + 1, longest - 1)
    cur, nxt = np.zeros(J + 1), np.zeros(J + 1)
    if k0 < 0:
        for c in range(C):
            if hi[c] >= 0:
                acc[c, 1] = ag[c, 0] if kmax >= 1 else ao[c, 0]
        cur[0] = 1.0  # E^{*0}
        lo, kc, first = 0, 0, 2
    else:
        kc, lo = pstate[0], pstate[1]
        cur[:] = prow[:J + 1]
        first = k0 + 1 if kc == k0 else top + 1  # kc < k0: the powers ran out
    for k in range(first, top + 1):  # cur = E^{*(k-1)}
        if k - 1 > kc:
            nlo = lo + jlo
            if nlo > J:
                break
            nxt[:nlo] = 0.0
            _convolve(cur, Er, lo, jlo, nxt)
            cur, nxt = nxt, cur
            lo, kc = nlo, k - 1
        for c in range(C):
            e = hi[c] + 1
            if cl[c] - 1 < k or e <= lo:
                continue
            acc[c, k] = _dot(cur[lo:e], ag[c, lo:e] if k <= kmax else ao[c, lo:e])
    if prow.size > J:
        prow[:J + 1] = cur
        pstate[0], pstate[1] = kc, lo
    for c in range(C):
        L, zc, out = cl[c], z[c], pos[c]
        if k0 < 0:
            laws[out, u, 0] = max(1.0 - ao[c, 0] / zc, 0.0) if hi[c] >= 0 else 1.0
        for k in range(max(k0, 0) + 1, min(kmax, L - 1) + 1):
            laws[out, u, k] = acc[c, k] / zc
        if kmax + 1 <= L - 1:
            tail[out, u] = acc[c, kmax + 1] / zc


@nb.njit(cache=True)
def _direct_zeros(indptr, indices, data, blocked, nodes, sources, targets, grp_of, cb, cl,
                  pos, z, by_target, laws, known, X, Y):
    """``P(I_u = 0)`` below :data:`DIRECT_ZERO` from the paths avoiding ``u``: taken from
    ``known[c, u]`` (NaN: not known), or per target one backward sweep for the whole block
    of nodes (``u`` zeroed in its own column at the interior steps), read at each cycle's
    ``L``; what a sweep reads (every node of the block) is kept in ``known``."""
    w, C = nodes.size, cl.size
    i = 0
    while i < C:
        h = cb[by_target[i]]
        j, last = i, -1
        while j < C and cb[by_target[j]] == h:
            c = by_target[j]
            for q in range(w):
                u = nodes[q]
                if laws[pos[c], u, 0] < DIRECT_ZERO:
                    if np.isnan(known[c, u]):
                        last = j
                    else:
                        laws[pos[c], u, 0] = known[c, u]
            j += 1
        if last >= 0:
            X[:] = 0.0
            X[targets[h], :] = 1.0
            t = 0
            for p in range(i, last + 1):
                c = by_target[p]
                while t < cl[c]:
                    if t > 0:  # an interior position: u avoided
                        for q in range(w):
                            X[nodes[q], q] = 0.0
                    _gather_block(indptr, indices, data, blocked, X, Y)
                    X, Y = Y, X
                    t += 1
                s = sources[grp_of[c]]
                for q in range(w):
                    u = nodes[q]
                    known[c, u] = X[s, q] / z[c]
                    if laws[pos[c], u, 0] < DIRECT_ZERO:
                        laws[pos[c], u, 0] = known[c, u]
        i = j


@nb.njit(cache=True)
def _sweeps(indptr, indices, data, tptr, tind, tdata, blocked, nodes, sources, targets, F, E,
            G, Om):
    """The series of a block of nodes ``u`` (one column each), over ``E.shape[1] - 1``
    steps: ``F[i, g, t]`` first passage from source ``g`` to ``u``, ``E[i, t]`` first return
    (backward); ``G[i, h, r]`` taboo weight from ``u`` to target ``h`` (``u`` avoided
    before the end), ``Om[i, h, r]`` plain weight (forward, with ``Q^T``)."""
    n, w = indptr.size - 1, nodes.size
    ns, nt = sources.size, targets.size
    longest = E.shape[1] - 1
    F[:] = 0.0
    E[:] = 0.0
    G[:] = 0.0
    Om[:] = 0.0
    # backward: X[x, i] = weight of x -> nodes[i] in t steps, first reaching it at t
    X, Y = np.zeros((n, w)), np.zeros((n, w))
    for i in range(w):
        X[nodes[i], i] = 1.0
    for t in range(1, longest + 1):
        _gather_block(indptr, indices, data, blocked, X, Y)
        for i in range(w):
            E[i, t] = Y[nodes[i], i]
            for g in range(ns):
                F[i, g, t] = Y[sources[g], i]
            Y[nodes[i], i] = 0.0
        X, Y = Y, X
    # forward: X[x, i] taboo weight nodes[i] -> x, X2 the plain one
    X[:] = 0.0
    X2, Y2 = np.zeros((n, w)), np.zeros((n, w))
    for i in range(w):
        X[nodes[i], i] = 1.0
        X2[nodes[i], i] = 1.0
        for h in range(nt):
            if targets[h] == nodes[i]:
                Om[i, h, 0] = 1.0
    for r in range(1, longest + 1):
        _gather_block2(tptr, tind, tdata, blocked, X, X2, Y, Y2)
        for i in range(w):
            for h in range(nt):
                G[i, h, r] = Y[targets[h], i]
                Om[i, h, r] = Y2[targets[h], i]
            Y[nodes[i], i] = 0.0
        X, Y = Y, X
        X2, Y2 = Y2, X2


@nb.njit(cache=True, nogil=True)
def _count_laws(indptr, indices, data, tptr, tind, tdata, blocked, nodes, width, F, E, G, Om,
                prow, pstate, fresh, k0, sources, targets, src_row, tgt_row, grp_of, cb, cl,
                pos, z, by_target, kmax, laws, tail, known):
    """Fill ``laws[pos[c], u, k] = P(I_u = k)`` and ``tail[pos[c], u] = P(I_u > kmax)``
    for every cycle ``c`` and node ``u`` in ``nodes`` (not ``blocked``); ``z`` holds the
    normalisers, ``tptr, tind, tdata`` is ``Q^T``.

    Nodes go by blocks of ``width``, swept together (one column each, vectorised): the
    first passages to ``u`` from every source and its first returns (backward), the taboo
    and plain rows from ``u`` at every target (forward), into ``F, E, G, Om`` (one row
    per node, kept by the caller and given again with ``fresh`` false, ``src_row`` and
    ``tgt_row`` locating the sources and targets; without rows, per block). Then per node
    the powers of its returns, and per cycle one dot product per ``k``
    (:func:`_node_counts`; ``prow, pstate, k0`` carry the last power from call to call).
    Releases the GIL: threads share the nodes."""
    n = indptr.size - 1
    longest = 0
    for c in range(cl.size):
        longest = max(longest, cl[c])
    kept = F.shape[0] == nodes.size
    for b0 in range(0, nodes.size, width):
        blk = nodes[b0:b0 + width]
        w = blk.size
        if kept:
            Fb, Eb, Gb, Ob = F[b0:b0 + w], E[b0:b0 + w], G[b0:b0 + w], Om[b0:b0 + w]
            Pb, Sb = prow[b0:b0 + w], pstate[b0:b0 + w]
        else:
            Fb = np.zeros((w, sources.size, longest + 1))
            Eb = np.zeros((w, longest + 1))
            Gb = np.zeros((w, targets.size, longest + 1))
            Ob = np.zeros((w, targets.size, longest + 1))
            Pb, Sb = np.zeros((w, 0)), np.zeros((w, 2), dtype=np.int64)
        if fresh:
            _sweeps(indptr, indices, data, tptr, tind, tdata, blocked, blk, sources, targets,
                    Fb, Eb, Gb, Ob)
        for i in range(w):
            _node_counts(blk[i], Fb[i], Eb[i], Gb[i], Ob[i], src_row, tgt_row, longest,
                         grp_of, cb, cl, pos, z, kmax, laws, tail, k0, Pb[i], Sb[i])
        _direct_zeros(indptr, indices, data, blocked, blk, sources, targets, grp_of, cb, cl,
                      pos, z, by_target, laws, known, np.zeros((n, w)), np.zeros((n, w)))
