"""Compiled twins of the accountants' closed forms, for the trackers' kernels (numba).

A tracker's kernel composes millions of entries per observer; it cannot call the
accountants of :mod:`netdp.accounting.accountants` entry by entry. These functions are the
same formulas, compiled, one entry or one pair at a time; ``tests/privacy/test_compiled.py``
checks each against the closed form it stands for:

* :func:`kov_terms` / :func:`kov_epsilon` - :func:`~netdp.accounting.composition.kov_het_terms`
  and :func:`~netdp.accounting.composition.kov_het_epsilon` with ``δ̃ = k δ``
  (the :class:`~netdp.accounting.composition.KovAccountant` of ``k`` entries);
* :func:`rdp_gaussian_entry` - :func:`~netdp.accounting.rdp.rdp_gaussian` and
  :func:`~netdp.accounting.rdp.rdp_subsampled_gaussian` at integer orders
  (the :class:`~netdp.accounting.rdp.RdpAccountant` of a Gaussian entry);
* :func:`rdp_epsilon` - :func:`~netdp.accounting.rdp.rdp_to_epsilon` (Balle et al.
  2020), the one RDP to (ε, δ) conversion.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np


@nb.njit(cache=True)
def kov_terms(loss, out):
    """KOV-het terms of one ε-DP entry: ``(ε, ε tanh(ε/2), ε²)`` into ``out``."""
    out[0] = loss
    out[1] = loss * math.tanh(loss / 2.0)
    out[2] = loss * loss


@nb.njit(cache=True)
def kov_epsilon(terms, k, delta):
    """KOV-het of summed terms of ``k`` entries with slack ``δ̃ = min(k δ, 1)``."""
    total, s1, s2 = terms[0], terms[1], terms[2]
    if k == 0 or total <= 0.0:
        return 0.0
    dt = min(k * delta, 1.0)
    best = min(total, s1 + math.sqrt(2.0 * s2 * -math.log(dt)))
    return min(best, s1 + math.sqrt(2.0 * s2 * math.log(math.e + math.sqrt(s2) / dt)))


@nb.njit(cache=True)
def _log_add(a, b):
    if a < b:
        a, b = b, a
    if b == -np.inf:
        return a
    return a + math.log1p(math.exp(b - a))


@nb.njit(cache=True)
def rdp_gaussian_entry(q, sensitivity, noise, orders, out):
    """RDP at integer ``orders`` of a Gaussian of std ``noise`` on a query of sensitivity
    ``sensitivity``, Poisson-subsampled at rate ``q`` (``q >= 1``: not subsampled)."""
    var = noise * noise
    if q >= 1.0:
        for a in range(orders.size):
            out[a] = orders[a] * sensitivity * sensitivity / (2.0 * var)
        return
    var = var / (sensitivity * sensitivity)
    lq, l1q = math.log(q), math.log1p(-q)
    for a in range(orders.size):
        alpha = int(orders[a])
        acc = -np.inf
        log_binom = 0.0
        for j in range(alpha + 1):
            if j > 0:
                log_binom += math.log(alpha - j + 1) - math.log(j)
            term = log_binom + j * lq + (alpha - j) * l1q + j * (j - 1) / (2.0 * var)
            acc = _log_add(acc, term)
        out[a] = acc / (alpha - 1)


@nb.njit(cache=True)
def rdp_epsilon(curve, delta, orders):
    """ε of an RDP ``curve`` at total ``delta`` (at most 1), minimised over the orders."""
    best = np.inf
    ld = math.log(min(delta, 1.0))
    for a in range(orders.size):
        alpha = orders[a]
        eps = curve[a] + math.log1p(-1.0 / alpha) - (ld + math.log(alpha)) / (alpha - 1.0)
        best = min(best, eps)
    return max(best, 0.0)
