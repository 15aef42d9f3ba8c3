"""Compiled kernel of :mod:`netdp.tracking.law_bound`: the bound of ``log E[e^{F(K)}]`` under
a geometric survival bound, node by node (its plain-numpy oracle is
:func:`netdp.tracking.law_bound.expected_log`, compared in ``tests/privacy/test_law_bound.py``)."""

from __future__ import annotations

import math

import numba as nb
import numpy as np

NEGLIGIBLE = 40.0  # nats below the sum at which the remaining counts are bounded together
DOMINANT = 100.0  # nats above the sum at which they are too (within log(size) of their sum)


@nb.njit(cache=True)
def _log_add(x, y):
    if x == -np.inf:
        return y
    if y == -np.inf:
        return x
    if x < y:
        x, y = y, x
    return x + math.log1p(math.exp(y - x))


@nb.njit(cache=True)
def expected_log_table(logB, logrho, logmu, c, size, table, terms, out):
    """``out[r, f]``: the bound of :func:`netdp.tracking.law_bound.expected_log` with
    ``F(j) = table[f, j]`` (``j`` up to ``c + size``; each row nondecreasing)."""
    nf, J = table.shape
    steps = np.full((nf, J), -np.inf)  # log(e^{F(j)} - e^{F(j-1)})
    for f in range(nf):
        for j in range(1, J):
            hi, lo = table[f, j], table[f, j - 1]
            if hi > lo:
                steps[f, j] = hi + math.log(-math.expm1(lo - hi))
    logS = np.empty(terms + 2)  # the survival bound's log at counts k0 + 1 .. top
    for r in range(logB.size):
        lb, lr, lm, cr = logB[r], logrho[r], logmu[r], c[r]
        if lb < 0.0:
            k0 = 0
        elif lr < 0.0:
            k0 = min(int(math.floor(lb / -lr)) + 1, size)
        else:
            k0 = size
        if lm < math.log(size + 1.0):  # S(k) <= E[I] / k < 1 from k > E[I]
            k0 = min(k0, int(math.floor(math.exp(lm))))
        top = min(k0 + terms, size)
        filled = k0  # logS is known up to this count (shared by every row of the table)
        for f in range(nf):
            Ft, St = table[f], steps[f]
            # the sum as e^ref (1 + extra): one exp a term (ref moved where a term passes it)
            ref = Ft[cr + k0]
            extra = 0.0
            k = k0 + 1
            while k <= size:
                if k > top or (k - k0) % 8 == 1:
                    # the counts k..size together: (number) x (the larger end term)
                    acc = ref + math.log1p(extra)
                    end = Ft[cr + size]
                    rest = math.log(size - k + 1.0) + min(
                        max(Ft[cr + k] + lb + (k - 1) * lr, end + lb + (size - 1) * lr), end)
                    if k > top or rest < acc - NEGLIGIBLE or rest > acc + DOMINANT:
                        ref, extra = _add(ref, extra, rest)
                        break
                if k > filled:
                    logS[k - k0] = min(lb + (k - 1) * lr, lm - math.log(k), 0.0)
                    filled = k
                ref, extra = _add(ref, extra, logS[k - k0] + St[cr + k])
                k += 1
            out[r, f] = ref + math.log1p(extra)


@nb.njit(cache=True, inline="always")
def _add(ref, extra, term):
    """``e^ref (1 + extra) + e^term`` as a new ``(ref, extra)``."""
    if term == -np.inf:
        return ref, extra
    if ref == -np.inf:
        return term, 0.0
    if term > ref + 600.0:
        return term, (1.0 + extra) * math.exp(ref - term)
    return ref, extra + math.exp(term - ref)


#: Steps between the tests of a column's convergence in :func:`forward_normalisers`.
CHECK = 4


@nb.njit(cache=True)
def forward_normalisers(indptr, indices, data, X, due, col, row, out, tol):
    """``out[e] <= log (Q^{due[e]} applied to X's column col[e])[row[e]]`` for ``due``
    sorted, ``(indptr, indices, data)`` the CSR rows of ``Q^T`` (one forward step is
    ``X <- Q^T X``), columns rescaled by their maxima at every step (logs kept), within
    ``tol`` of equality.

    A column is stepped only until its last view is read (the columns are ordered by that
    time, so those still needed are a prefix that shrinks), or until it has converged to
    the chain's Perron mode: with ``r = min_i X_t[i] / X_{t-2}[i]`` over ``X_{t-2} > 0``
    (``X_t`` positive nowhere else), ``(Q^T)^2 X_{t-2} >= r X_{t-2}``, so ``Q^T`` being
    nonnegative, ``(Q^T)^{2k + j} X_{t-2} >= r^k (Q^T)^j X_{t-2}`` for every ``k`` and
    ``j`` in ``{0, 1}``: a lower bound of every later entry (two steps, so that a
    periodic chain, a bipartite graph, converges too). With ``R`` the largest ratio the
    same holds above, so the bound is within ``k log(R / r)`` of the entry; a column is
    frozen once that is at most ``tol`` for its last view."""
    n, C = X.shape
    last = np.full(C, -1, np.int64)
    for e in range(due.size):
        last[col[e]] = max(last[col[e]], due[e])
    order = np.argsort(-last, kind="mergesort")  # the columns needed longest first
    place = np.empty(C, np.int64)
    for i in range(C):
        place[order[i]] = i
    ring = np.zeros((3, n, C))  # X_t in ring[t % 3]: X_{t-1} and X_{t-2} beside it
    logs = np.zeros((3, C))
    for i in range(C):
        ring[0, :, i] = X[:, order[i]]
    frozen = np.zeros(C, np.bool_)
    since = np.zeros(C, np.int64)  # a frozen column: its snapshots' time s
    logr = np.zeros(C)  # and log r
    snap = np.zeros((2, n, C))  # X_s, X_{s+1}
    snap_logs = np.zeros((2, C))
    live = np.empty(C, np.int64)
    top = np.zeros(C)
    active = C
    e = 0
    t = 0
    while e < due.size:
        cur = ring[t % 3]
        while e < due.size and due[e] == t:
            c = place[col[e]]
            if frozen[c]:
                m = t - since[c]
                j = m % 2
                v = snap[j, row[e], c]
                out[e] = (m // 2) * logr[c] + math.log(v) + snap_logs[j, c] if v > 0.0 \
                    else -np.inf
            else:
                v = cur[row[e], c]
                out[e] = math.log(v) + logs[t % 3, c] if v > 0.0 else -np.inf
            e += 1
        if e >= due.size:
            break
        while active > 0 and last[order[active - 1]] <= t:
            active -= 1
        if t >= 2 and t % CHECK == 0:
            old = ring[(t - 2) % 3]
            for c in range(active):
                if frozen[c]:
                    continue
                lo = np.inf
                hi = 0.0
                for i in range(n):
                    if old[i, c] > 0.0:
                        ratio = cur[i, c] / old[i, c]
                        lo = min(lo, ratio)
                        hi = max(hi, ratio)
                    elif cur[i, c] > 0.0:
                        hi = np.inf
                        break
                if not (lo > 0.0 and hi < np.inf):
                    continue
                k = (last[order[c]] - (t - 2)) // 2 + 1
                if k * (math.log(hi) - math.log(lo)) <= tol:
                    frozen[c] = True
                    since[c] = t - 2
                    logr[c] = math.log(lo) + logs[t % 3, c] - logs[(t - 2) % 3, c]
                    for j in range(2):
                        snap[j, :, c] = ring[(t - 2 + j) % 3, :, c]
                        snap_logs[j, c] = logs[(t - 2 + j) % 3, c]
        nlive = 0
        for c in range(active):
            if not frozen[c]:
                live[nlive] = c
                nlive += 1
        nxt = ring[(t + 1) % 3]
        for q in range(nlive):
            top[live[q]] = 0.0
        for i in range(n):
            for q in range(nlive):
                nxt[i, live[q]] = 0.0
            for j in range(indptr[i], indptr[i + 1]):
                w = data[j]
                src = indices[j]
                for q in range(nlive):
                    c = live[q]
                    nxt[i, c] += w * cur[src, c]
            for q in range(nlive):
                c = live[q]
                if nxt[i, c] > top[c]:
                    top[c] = nxt[i, c]
        for q in range(nlive):
            c = live[q]
            if top[c] > 0.0:
                logs[(t + 1) % 3, c] = logs[t % 3, c] + math.log(top[c])
                inv = 1.0 / top[c]
                for i in range(n):
                    nxt[i, c] *= inv
            else:
                logs[(t + 1) % 3, c] = logs[t % 3, c]
        t += 1
