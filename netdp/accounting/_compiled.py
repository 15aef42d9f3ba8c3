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
def rdp_shift(delta, orders):
    """The curve-free part of :func:`rdp_epsilon` at each order: ``ε(α) = curve[α] +
    shift[α]`` (formed once where many curves share ``delta``)."""
    ld = math.log(min(delta, 1.0))
    shift = np.empty(orders.size)
    for a in range(orders.size):
        alpha = orders[a]
        shift[a] = math.log1p(-1.0 / alpha) - (ld + math.log(alpha)) / (alpha - 1.0)
    return shift


@nb.njit(cache=True)
def rdp_shifted_epsilon(curve, shift):
    """:func:`rdp_epsilon` from its :func:`rdp_shift`: the least ``curve + shift``, at
    least 0."""
    best = np.inf
    for a in range(curve.size):
        best = min(best, curve[a] + shift[a])
    return max(best, 0.0)


@nb.njit(cache=True)
def rdp_epsilon(curve, delta, orders):
    """ε of an RDP ``curve`` at total ``delta`` (at most 1), minimised over the orders."""
    return rdp_shifted_epsilon(curve, rdp_shift(delta, orders))


@nb.njit(cache=True)
def _log_ndtr(x):
    """``log Φ(x)``: through erfc, and its asymptotic series far in the lower tail."""
    if x > -37.0:
        return math.log(0.5 * math.erfc(-x / math.sqrt(2.0)))
    y = 1.0 / (x * x)
    series = 1.0 - y * (1.0 - y * (3.0 - y * (15.0 - y * 105.0)))
    return -0.5 / y - math.log(-x) - 0.5 * math.log(2.0 * math.pi) + math.log(series)


@nb.njit(cache=True)
def _gdp_log_delta(mu, eps):
    a = _log_ndtr(-eps / mu + mu / 2.0)
    b = eps + _log_ndtr(-eps / mu - mu / 2.0)
    if b >= a:
        return -np.inf
    return a + math.log(-math.expm1(b - a))


@nb.njit(cache=True)
def gdp_epsilon(mu, delta):
    """ε(δ) of μ-Gaussian DP (a Gaussian of sensitivity/std μ), rounded up: bisection on
    the decreasing ``δ(ε) = Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2)`` to 1e-12 relative, the
    upper end returned (``δ(ε) <= δ`` holds there). Compiled, inside the loops over the
    entries, hence not the Python :func:`netdp.core.roots.smallest_within`."""
    if mu <= 0.0:
        return 0.0
    ld = math.log(delta)
    if _gdp_log_delta(mu, 0.0) <= ld:
        return 0.0
    lo, hi = 0.0, mu * mu / 2.0 + mu * math.sqrt(-2.0 * ld)
    while _gdp_log_delta(mu, hi) > ld:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _gdp_log_delta(mu, mid) > ld:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return hi * (1.0 + 1e-9)  # a margin over the rounding of the tails


@nb.njit(cache=True)
def _gauss_eps_nb(mu, delta, out):
    for i in range(mu.size):
        out[i] = gdp_epsilon(mu[i], delta)
