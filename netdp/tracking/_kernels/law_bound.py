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
def expected_log_table(logB, logrho, c, size, table, terms, out):
    """``out[r, f]``: the bound of :func:`netdp.tracking.law_bound.expected_log` with
    ``F(j) = table[f, j]`` (``j`` up to ``c + size``; each row nondecreasing)."""
    nf, J = table.shape
    steps = np.full((nf, J), -np.inf)  # log(e^{F(j)} - e^{F(j-1)})
    for f in range(nf):
        for j in range(1, J):
            hi, lo = table[f, j], table[f, j - 1]
            if hi > lo:
                steps[f, j] = hi + math.log(-math.expm1(lo - hi))
    for r in range(logB.size):
        lb, lr, cr = logB[r], logrho[r], c[r]
        if lb < 0.0:
            k0 = 0
        elif lr < 0.0:
            k0 = min(int(math.floor(lb / -lr)) + 1, size)
        else:
            k0 = size
        top = min(k0 + terms, size)
        for f in range(nf):
            Ft, St = table[f], steps[f]
            acc = Ft[cr + k0]
            k = k0 + 1
            while k <= size:
                if k > top or (k - k0) % 8 == 1:
                    # the counts k..size together: (number) x (the larger end term)
                    end = Ft[cr + size]
                    rest = math.log(size - k + 1.0) + min(
                        max(Ft[cr + k] + lb + (k - 1) * lr, end + lb + (size - 1) * lr), end)
                    if k > top or rest < acc - NEGLIGIBLE or rest > acc + DOMINANT:
                        acc = _log_add(acc, rest)
                        break
                acc = _log_add(acc, min(lb + (k - 1) * lr, 0.0) + St[cr + k])
                k += 1
            out[r, f] = acc
