"""Compiled Rényi sums of the Poisson-subsampled Gaussian, for the cycle entries of
:mod:`netdp.tracking.cycle_entries`: the same terms as
:func:`netdp.accounting._compiled.rdp_gaussian_entry` (its oracle in
``tests/privacy/test_compiled.py``), arranged for the two places where it is called many
times: the label bound (one node's law, many sensitivities) and the per-visit bound at
high orders."""

from __future__ import annotations

import math

import numba as nb
import numpy as np


@nb.njit(cache=True)
def subsampled_base(q, orders):
    """``base[a, j] = log C(α, j) + j log q + (α - j) log(1 - q)`` for each order ``α``
    and ``j = 0..α``, as :func:`~netdp.accounting._compiled.rdp_gaussian_entry` forms
    them: the part of its terms that does not depend on the sensitivity."""
    top = 0
    for a in range(orders.size):
        top = max(top, int(orders[a]))
    base = np.full((orders.size, top + 1), -np.inf)
    lq, l1q = math.log(q), math.log1p(-q)
    for a in range(orders.size):
        alpha = int(orders[a])
        log_binom = 0.0
        for j in range(alpha + 1):
            if j > 0:
                log_binom += math.log(alpha - j + 1) - math.log(j)
            base[a, j] = log_binom + j * lq + (alpha - j) * l1q
    return base


@nb.njit(cache=True)
def subsampled_log_sum(base, scale, orders, out):
    """``out[a] = log Σ_j e^{base[a, j] + j (j - 1) scale}``: ``(α - 1)`` times the RDP of
    the Poisson-subsampled Gaussian at order ``α`` with ``scale = sens² / (2 s²)`` (the
    largest term factored out: one exponential a term)."""
    for a in range(orders.size):
        alpha = int(orders[a])
        top = -np.inf
        for j in range(alpha + 1):
            top = max(top, base[a, j] + j * (j - 1) * scale)
        acc = 0.0
        for j in range(alpha + 1):
            acc += math.exp(base[a, j] + j * (j - 1) * scale - top)
        out[a] = top + math.log(acc)


@nb.njit(cache=True)
def subsampled_rdp_high(q, noise, orders, out):
    """:func:`~netdp.accounting._compiled.rdp_gaussian_entry` (sensitivity 1, ``q < 1``)
    at high orders: :func:`subsampled_log_sum` (one exponential a term, not a
    log-add) divided by ``α - 1``."""
    subsampled_log_sum(subsampled_base(q, orders), 1.0 / (2.0 * noise * noise), orders, out)
    for a in range(orders.size):
        out[a] /= orders[a] - 1.0
