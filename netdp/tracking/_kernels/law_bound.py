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


@nb.njit(cache=True)
def forward_normalisers(indptr, indices, data, X, due, col, row, out):
    """``out[e] = log (Q^{due[e]} applied to X's column col[e])[row[e]]`` for ``due``
    sorted, ``(indptr, indices, data)`` the CSR rows of ``Q^T`` (one forward step is
    ``X <- Q^T X``), columns rescaled by their maxima at every step (logs kept). A column
    is stepped only until its last view is read: the columns are ordered by that time, so
    those still needed are a prefix that shrinks."""
    n, C = X.shape
    last = np.full(C, -1, np.int64)
    for e in range(due.size):
        last[col[e]] = max(last[col[e]], due[e])
    order = np.argsort(-last, kind="mergesort")  # the columns needed longest first
    place = np.empty(C, np.int64)
    for i in range(C):
        place[order[i]] = i
    cur = np.empty_like(X)
    for i in range(C):
        cur[:, i] = X[:, order[i]]
    nxt = np.empty_like(cur)
    logscale = np.zeros(C)
    top = np.zeros(C)
    active = C
    e = 0
    t = 0
    while e < due.size:
        while e < due.size and due[e] == t:
            c = place[col[e]]
            v = cur[row[e], c]
            out[e] = math.log(v) + logscale[c] if v > 0.0 else -np.inf
            e += 1
        if e >= due.size:
            break
        while active > 0 and last[order[active - 1]] <= t:
            active -= 1
        for c in range(active):
            top[c] = 0.0
        for i in range(n):
            for c in range(active):
                nxt[i, c] = 0.0
            for j in range(indptr[i], indptr[i + 1]):
                w = data[j]
                src = indices[j]
                for c in range(active):
                    nxt[i, c] += w * cur[src, c]
            for c in range(active):
                if nxt[i, c] > top[c]:
                    top[c] = nxt[i, c]
        for c in range(active):
            if top[c] > 0.0:
                logscale[c] += math.log(top[c])
                inv = 1.0 / top[c]
                for i in range(n):
                    cur[i, c] = nxt[i, c] * inv
            else:
                for i in range(n):
                    cur[i, c] = 0.0
        t += 1
