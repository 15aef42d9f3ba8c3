"""Composition of (ε, δ)-DP steps: basic, advanced (Dwork, Rothblum and Vadhan 2010), the
heterogeneous bound of Kairouz, Oh and Viswanath (2015, Thm 3.5) and their exact optimal
composition of k pure-DP steps, with the accountants ``basic``, ``drv``, ``kov``,
``kov-exact``."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from netdp.accounting._arrays import _check, _f, _out
from netdp.accounting.base import Accountant, approx_units, check_delta, check_epsilon, homogeneous
from netdp.accounting.events import (
    DpEvent,
)
from netdp.core.roots import smallest_within


def drv_epsilon(
    eps: npt.ArrayLike, delta_prime: npt.ArrayLike, k: npt.ArrayLike
) -> np.ndarray | np.float64:
    """Advanced composition (Dwork-Rothblum-Vadhan) of ``k`` ``eps``-DP steps.

    ``DRV(eps, delta', k) = eps sqrt(2 k ln(1/delta')) + k eps (e^eps - 1)``; the total
    delta is ``k delta_step + delta'``. ``k`` may be real (a high-probability bound on a
    number of steps).

    Parameters
    ----------
    eps : array_like
        Per-step epsilon, ``>= 0``.
    delta_prime : array_like
        Slack delta in ``(0, 1]``.
    k : array_like
        Number of steps, ``>= 0``.
    """
    eps, dp, k = np.broadcast_arrays(_f(eps), _f(delta_prime), _f(k))
    _check(eps >= 0, "eps must be >= 0")
    _check((dp > 0) & (dp <= 1), "delta_prime must be in (0, 1]")
    _check(k >= 0, "k must be >= 0")
    return _out(eps * np.sqrt(2.0 * k * np.log(1.0 / dp)) + k * eps * np.expm1(eps))


def opti(eps: npt.ArrayLike, delta: npt.ArrayLike, k: npt.ArrayLike) -> np.ndarray | np.float64:
    """Best of basic and advanced composition: ``min(k eps, DRV(eps, delta, k))``.

    Unlike the reference script (which drops the ``k eps`` term for ``k >= 1e5``), the
    minimum is always taken; both are valid bounds.
    """
    eps, delta, k = np.broadcast_arrays(_f(eps), _f(delta), _f(k))
    return _out(np.minimum(k * eps, np.asarray(drv_epsilon(eps, delta, k))))


def kov_het_terms(
    eps: npt.ArrayLike,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-entry terms of the KOV heterogeneous bound.

    Returns ``(eps, eps (e^eps - 1)/(e^eps + 1), eps**2)``; summed over the entries of a
    pair they give ``sum_eps, s1, s2`` for :func:`kov_het_epsilon` (so a tracker can keep
    three running sums per pair).
    """
    eps = _f(eps)
    _check(eps >= 0, "eps must be >= 0")
    return eps, eps * np.tanh(eps / 2.0), eps * eps


def kov_het_epsilon(
    sum_eps: npt.ArrayLike,
    s1: npt.ArrayLike,
    s2: npt.ArrayLike,
    delta_tilde: npt.ArrayLike,
) -> np.ndarray | np.float64:
    """Kairouz-Oh-Viswanath heterogeneous composition (formula KOV-het of the spec).

    ``eps = min{ sum_eps, s1 + sqrt(2 s2 ln(e + sqrt(s2)/dt)), s1 + sqrt(2 s2 ln(1/dt)) }``
    with ``s1 = sum eps_i (e^eps_i - 1)/(e^eps_i + 1)`` and ``s2 = sum eps_i^2``. The
    composition of ``(eps_i, delta_i)`` steps is then
    ``(eps, 1 - (1 - dt) prod(1 - delta_i))``-DP.

    Parameters
    ----------
    sum_eps, s1, s2 : array_like
        The three sums (see :func:`kov_het_terms`), ``>= 0``.
    delta_tilde : array_like
        Slack ``dt`` in ``(0, 1]``.
    """
    sum_eps, s1, s2, dt = np.broadcast_arrays(_f(sum_eps), _f(s1), _f(s2), _f(delta_tilde))
    _check((sum_eps >= 0) & (s1 >= 0) & (s2 >= 0), "sums must be >= 0")
    _check((dt > 0) & (dt <= 1), "delta_tilde must be in (0, 1]")
    t2 = s1 + np.sqrt(2.0 * s2 * np.log(np.e + np.sqrt(s2) / dt))
    t3 = s1 + np.sqrt(2.0 * s2 * -np.log(dt))
    return _out(np.minimum(sum_eps, np.minimum(t2, t3)))


def _kov_exact_log_delta(eps0: float, k: int, eps: float) -> float:
    """``log delta(eps)`` for the k-fold composition of ``eps0``-DP, in log space.

    ``delta = sum_{l <= l*} Bin(l; k, q) (1 - e^(eps + (2l - k) eps0))`` with
    ``q = 1/(1 + e^eps0)``, ``l*`` the largest ``l`` with ``(k - 2l) eps0 > eps``: the
    spec's sum rewritten with binomial pmfs. Terms more than 40 standard deviations
    below ``min(l*, kq)`` are negligible (below ``e^-800`` relative) and skipped.
    """
    from scipy import special

    if k == 0 or eps0 == 0.0 or eps >= k * eps0:
        return -math.inf
    lstar = min(math.ceil((k * eps0 - eps) / (2.0 * eps0)) - 1, k)
    if lstar < 0:
        return -math.inf
    log_p = -math.log1p(math.exp(-eps0))
    log_q = -math.log1p(math.exp(eps0))
    q = math.exp(log_q)
    sd = math.sqrt(k * q * (1.0 - q))
    lo = max(0, int(min(lstar, k * q) - 40.0 * sd - 10.0))
    ell = np.arange(lo, lstar + 1, dtype=np.float64)
    log_pmf = (
        special.gammaln(k + 1.0)
        - special.gammaln(ell + 1.0)
        - special.gammaln(k - ell + 1.0)
        + (k - ell) * log_p
        + ell * log_q
    )
    r = np.minimum(eps + (2.0 * ell - k) * eps0, 0.0)
    with np.errstate(divide="ignore"):
        terms = log_pmf + np.log(-np.expm1(r))
    return float(special.logsumexp(terms))


def _kov_exact_eps_scalar(eps0: float, k: int, delta: float) -> float:
    if k == 0 or eps0 == 0.0:
        return 0.0

    def delta_of(e: float) -> float:
        return math.exp(_kov_exact_log_delta(eps0, k, e))

    hi = k * eps0  # delta_of(k eps0) = 0
    # KOV-het is a valid bound, hence >= the exact value: a tighter upper bracket
    _, s1, s2 = kov_het_terms(eps0)
    het = float(kov_het_epsilon(k * eps0, k * s1, k * s2, delta))
    if het < hi and delta_of(het) <= delta:
        hi = het
    return smallest_within(delta_of, delta, 0.0, hi, param="delta", tol=1e-12)


def _kov_args(eps0, k) -> tuple[np.ndarray, np.ndarray]:
    eps0, k = _f(eps0), _f(k)
    _check(np.isfinite(eps0) & (eps0 >= 0), "eps0 must be finite and >= 0")
    _check((k >= 0) & (k == np.floor(k)), "k must be an integer >= 0")
    return eps0, k


def kov_exact_delta(
    eps0: npt.ArrayLike, k: npt.ArrayLike, eps: npt.ArrayLike
) -> np.ndarray | np.float64:
    """Optimal delta(eps) of the k-fold composition of ``eps0``-DP (Kairouz-Oh-Viswanath).

    ``delta = (1+e^eps0)^-k sum_l C(k,l) [e^((k-l) eps0) - e^(eps + l eps0)]_+``, summed in
    log space (no overflow for ``k`` up to ``1e6`` and beyond). Not a closed form: a
    Python loop over the broadcast elements, each an O(sqrt(k))-to-O(k) sum.
    """
    eps0, k = _kov_args(eps0, k)
    eps = _f(eps)
    _check(eps >= 0, "eps must be >= 0")
    b = np.broadcast_arrays(eps0, k, eps)
    out = np.array(
        [
            math.exp(_kov_exact_log_delta(float(e0), int(kk), float(e)))
            for e0, kk, e in zip(*(x.ravel() for x in b), strict=True)
        ],
        dtype=np.float64,
    ).reshape(b[0].shape)
    return _out(out)


def kov_exact_epsilon(
    eps0: npt.ArrayLike, k: npt.ArrayLike, delta: npt.ArrayLike
) -> np.ndarray | np.float64:
    """Optimal epsilon(delta) of the k-fold composition of ``eps0``-DP.

    The smallest ε with :func:`kov_exact_delta` at most ``delta`` (bracket
    ``[0, KOV-het]``), to ``1e-12``, rounded up. Check values (spec): ``eps0 = 1,
    k = 100, delta = 1e-5`` gives 79.84; ``eps0 = 0.1, k = 1000`` gives 17.79. Loops over
    the broadcast elements.
    """
    eps0, k = _kov_args(eps0, k)
    delta = _f(delta)
    _check((delta > 0) & (delta <= 1), "delta must be in (0, 1]")
    b = np.broadcast_arrays(eps0, k, delta)
    out = np.array(
        [
            _kov_exact_eps_scalar(float(e0), int(kk), float(d))
            for e0, kk, d in zip(*(x.ravel() for x in b), strict=True)
        ],
        dtype=np.float64,
    ).reshape(b[0].shape)
    return _out(out)


class BasicAccountant(Accountant):
    """Basic composition: ``(sum eps_i, sum delta_i)``.

    ``epsilon(event, delta)`` is ``sum eps_i`` if ``sum delta_i <= delta`` else ``inf``;
    ``delta(event, eps)`` is ``sum delta_i`` if ``eps >= sum eps_i`` else 1.
    Subsampled events use ``(ln(1 + q(e^eps - 1)), q delta)`` of their inner basic total.
    """

    name = "basic"
    description = "basic composition (sum of epsilons and deltas)"

    def _totals(self, event: DpEvent) -> tuple[float, float]:
        units = approx_units(event, self.name)
        eps = math.fsum(k[0] * c for k, c in units.items())
        dlt = math.fsum(k[1] * c for k, c in units.items())
        return eps, dlt

    def epsilon(self, event: DpEvent, delta: float) -> float:
        delta = check_delta(delta)
        eps, dlt = self._totals(event)
        return eps if dlt <= delta else math.inf

    def delta(self, event: DpEvent, epsilon: float) -> float:
        epsilon = check_epsilon(epsilon)
        eps, dlt = self._totals(event)
        return min(dlt, 1.0) if epsilon >= eps else 1.0


class DrvAccountant(Accountant):
    """Advanced composition (DRV) of ``k`` identical ``(eps0, delta0)`` steps.

    ``epsilon = DRV(eps0, delta', k)`` with ``delta' = delta - k delta0`` (``inf`` if not
    positive). This is the DRV expression itself, not ``min(k eps0, DRV)`` (see
    :func:`opti`). Heterogeneous compositions raise ``ValueError``.
    """

    name = "drv"
    description = "advanced composition (Dwork-Rothblum-Vadhan), homogeneous steps"

    def epsilon(self, event: DpEvent, delta: float) -> float:
        delta = check_delta(delta)
        e0, d0, k = homogeneous(approx_units(event, self.name), self.name)
        if k == 0:
            return 0.0
        slack = delta - k * d0
        if slack <= 0:
            return math.inf
        return float(drv_epsilon(e0, min(slack, 1.0), k))

    def delta(self, event: DpEvent, epsilon: float) -> float:
        epsilon = check_epsilon(epsilon)
        e0, d0, k = homogeneous(approx_units(event, self.name), self.name)
        if k == 0 or e0 == 0.0:
            return min(1.0, k * d0)
        root = (epsilon - k * e0 * math.expm1(e0)) / e0
        if root <= 0:
            return 1.0
        return min(1.0, k * d0 + math.exp(-root * root / (2.0 * k)))


class KovAccountant(Accountant):
    """Kairouz-Oh-Viswanath heterogeneous composition (formula KOV-het of the spec).

    The composition of ``(eps_i, delta_i)`` steps is
    ``(eps, 1 - (1 - dt) prod(1 - delta_i))``-DP; ``epsilon(event, delta)`` solves that
    for ``dt`` (``inf`` when the step deltas exhaust ``delta``).
    """

    name = "kov"
    description = "Kairouz-Oh-Viswanath heterogeneous composition (KOV-het)"

    def epsilon(self, event: DpEvent, delta: float) -> float:
        delta = check_delta(delta)
        units = approx_units(event, self.name)
        if not units:
            return 0.0
        eps = np.array([k[0] for k in units])
        dlt = np.array([k[1] for k in units])
        cnt = np.array(list(units.values()), dtype=np.float64)
        log_keep = float(np.sum(cnt * np.log1p(-np.minimum(dlt, 1.0))))
        dt = -math.expm1(math.log1p(-delta) - log_keep) if delta < 1 else 1.0
        if not dt > 0:
            return math.inf
        e, s1, s2 = kov_het_terms(eps)
        # fsum: same total as 'basic'
        sum_e, sum_1, sum_2 = (math.fsum(cnt * t) for t in (e, s1, s2))
        return float(kov_het_epsilon(sum_e, sum_1, sum_2, min(dt, 1.0)))


class KovExactAccountant(Accountant):
    """Optimal composition of ``k`` identical ``(eps0, delta0)`` steps (KOV, exact).

    Total delta ``1 - (1 - delta0)^k (1 - delta_pure(eps))`` where ``delta_pure`` is
    :func:`kov_exact_delta`. Heterogeneous compositions raise ``ValueError``.
    """

    name = "kov-exact"
    description = "optimal composition of identical pure/approx DP steps (KOV exact)"

    def epsilon(self, event: DpEvent, delta: float) -> float:
        delta = check_delta(delta)
        e0, d0, k = homogeneous(approx_units(event, self.name), self.name)
        if k == 0:
            return 0.0
        target = -math.expm1(math.log1p(-delta) - k * math.log1p(-d0)) if delta < 1 else 1.0
        if not target > 0:
            return math.inf
        return float(kov_exact_epsilon(e0, k, min(target, 1.0)))

    def delta(self, event: DpEvent, epsilon: float) -> float:
        epsilon = check_epsilon(epsilon)
        e0, d0, k = homogeneous(approx_units(event, self.name), self.name)
        if k == 0:
            return 0.0
        dp = float(kov_exact_delta(e0, k, epsilon))
        return min(1.0, -math.expm1(k * math.log1p(-d0) + math.log1p(-dp)))
