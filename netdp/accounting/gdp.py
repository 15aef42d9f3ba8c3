"""Gaussian DP (Dong, Roth and Su 2019): the (ε, δ) curve of μ-GDP and the ``gdp`` accountant,
which composes Gaussian mechanisms by adding their μ²."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from netdp.accounting._arrays import _check, _f, _out
from netdp.accounting.base import Accountant, check_delta, check_epsilon
from netdp.accounting.events import (
    Composed,
    DpEvent,
    Gaussian,
    Repeated,
)


def _gauss_log_terms(mu: np.ndarray, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(log delta(eps), log(e^eps Phi(-eps/mu - mu/2)))`` for ``mu > 0``, finite eps."""
    from scipy import special

    a = special.log_ndtr(-eps / mu + mu / 2.0)
    b = eps + special.log_ndtr(-eps / mu - mu / 2.0)
    with np.errstate(divide="ignore"):
        logd = a + np.log(-np.expm1(np.minimum(b - a, 0.0)))
    return logd, b


def gaussian_delta(mu: npt.ArrayLike, eps: npt.ArrayLike) -> np.ndarray | np.float64:
    """Exact delta(eps) of ``mu``-Gaussian DP (tight for the Gaussian mechanism).

    ``delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``, computed as
    ``exp(a + log(1 - e^(b - a)))`` with ``a, b`` from ``log_ndtr`` so it neither
    overflows nor cancels for large ``mu`` or ``eps``.

    Parameters
    ----------
    mu : array_like
        ``sensitivity / sigma`` (composition: root of the sum of squares), ``>= 0``.
    eps : array_like
        ``>= 0`` (``inf`` gives 0).
    """
    mu, eps = np.broadcast_arrays(_f(mu), _f(eps))
    _check(mu >= 0, "mu must be >= 0")
    _check(eps >= 0, "eps must be >= 0")
    out = np.zeros(mu.shape)
    ok = (mu > 0) & np.isfinite(eps) & np.isfinite(mu)
    if np.any(ok):
        logd, _ = _gauss_log_terms(mu[ok], eps[ok])
        out[ok] = np.exp(logd)
    out[np.isinf(mu) & np.isfinite(eps)] = 1.0
    return _out(out)


def gaussian_epsilon(mu: npt.ArrayLike, delta: npt.ArrayLike) -> np.ndarray | np.float64:
    """Exact epsilon(delta) of ``mu``-Gaussian DP, vectorized.

    Safeguarded Newton iteration on ``log delta(eps) = log delta`` inside the bracket
    ``[0, mu^2/2 + mu sqrt(2 ln(1/delta))]`` (the upper end satisfies
    ``delta(eps) <= delta/2``), falling back to bisection whenever a step leaves the
    bracket; converged to ``1e-13`` relative. All elements are iterated together (the
    callers pass a whole table of μ at once, hence not the scalar
    :func:`netdp.core.roots.smallest_within`).

    Parameters
    ----------
    mu : array_like
        ``>= 0``.
    delta : array_like
        In ``(0, 1]``.
    """
    from scipy import special

    mu, delta = np.broadcast_arrays(_f(mu), _f(delta))
    _check(mu >= 0, "mu must be >= 0")
    _check((delta > 0) & (delta <= 1), "delta must be in (0, 1]")
    out = np.zeros(mu.shape)
    out[np.isinf(mu)] = np.inf
    fin = np.isfinite(mu) & (mu > 0)
    d0 = np.zeros(mu.shape)
    d0[fin] = 2.0 * special.ndtr(mu[fin] / 2.0) - 1.0  # delta(0)
    act = np.flatnonzero(fin & (delta < d0))
    if act.size == 0:
        return _out(out)
    m = mu.ravel()[act]
    lt = np.log(delta.ravel()[act])
    lo = np.zeros(m.shape)
    hi = m * m / 2.0 + m * np.sqrt(-2.0 * lt)
    x = hi.copy()
    for _ in range(200):
        logd, b = _gauss_log_terms(m, x)
        f = logd - lt
        above = f > 0
        lo = np.where(above, x, lo)
        hi = np.where(above, hi, x)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            xn = x + f / np.exp(b - logd)  # Newton: d log(delta)/d eps = -e^b / delta
        bad = ~np.isfinite(xn) | (xn <= lo) | (xn >= hi)
        xn = np.where(bad, 0.5 * (lo + hi), xn)
        converged = np.abs(xn - x) <= 1e-13 * np.maximum(x, 1.0)
        x = xn
        if np.all(converged):
            break
    flat = out.ravel()
    flat[act] = x
    return _out(flat.reshape(out.shape))


def _gdp_mu2(event: DpEvent, who: str) -> float:
    if isinstance(event, Gaussian):
        return event.mu**2
    if isinstance(event, Composed):
        return math.fsum(_gdp_mu2(e, who) for e in event.events)
    if isinstance(event, Repeated):
        return event.count * _gdp_mu2(event.event, who)
    raise TypeError(
        f"accountant {who!r} handles only compositions of Gaussian events, got {event!r}"
    )


class GdpAccountant(Accountant):
    """Exact Gaussian DP for compositions of Gaussians: ``mu = sqrt(sum (s_i/sigma_i)^2)``.

    Exact (tight) for any composition of Gaussian mechanisms; any other event raises
    ``TypeError``.
    """

    name = "gdp"
    description = "exact Gaussian DP (compositions of Gaussian mechanisms only)"

    def mu(self, event: DpEvent) -> float:
        """Total Gaussian-DP parameter of ``event``."""
        return math.sqrt(_gdp_mu2(event, self.name))

    def epsilon(self, event: DpEvent, delta: float) -> float:
        delta = check_delta(delta)
        return float(gaussian_epsilon(self.mu(event), delta))

    def delta(self, event: DpEvent, epsilon: float) -> float:
        epsilon = check_epsilon(epsilon)
        return float(gaussian_delta(self.mu(event), epsilon))
