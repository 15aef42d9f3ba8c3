"""Privacy accountants and the vectorized closed forms behind them (accounting.md §1-§2).

Two layers:

* **Closed forms** (numpy arrays in, arrays out, broadcasting, no Python loop over the
  elements unless said otherwise): :func:`drv_epsilon`, :func:`opti`,
  :func:`kov_het_terms`, :func:`kov_het_epsilon`, :func:`gaussian_delta`,
  :func:`gaussian_epsilon`, the RDP curves (:func:`rdp_gaussian`,
  :func:`rdp_subsampled_gaussian`, :func:`rdp_laplace`, :func:`rdp_randomized_response`),
  :func:`rdp_to_epsilon` / :func:`rdp_to_delta`, and the exact optimal composition
  :func:`kov_exact_delta` / :func:`kov_exact_epsilon` (a sum per element, looped).
* **Accountants**: objects with a ``name`` and ``epsilon(event, delta)`` (and
  ``delta(event, epsilon)``) over the events of :mod:`netdp.accounting.events`. Get one by
  name with :func:`get_accountant`; ``ACCOUNTANTS`` lists them. An accountant given an
  event it cannot account raises :class:`TypeError` (wrong kind of event) or
  :class:`ValueError` (right kind, unsupported parameters, e.g. ``drv`` on a
  heterogeneous composition); it never silently returns a wrong number.

Delta bookkeeping: ``epsilon(event, delta)`` always returns an epsilon for the *total*
``delta``; the per-event deltas of ``ApproxDP`` events are subtracted first (``inf`` when
they exhaust the budget), as stated in each accountant's docstring.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from netdp.accounting._arrays import _check, _f, _out
from netdp.accounting.amplification import subsampled_delta, subsampled_epsilon
from netdp.accounting.events import (
    ApproxDP,
    Composed,
    DpEvent,
    Gaussian,
    Laplace,
    PureDP,
    RandomizedResponse,
    Repeated,
    Subsampled,
)

__all__ = [
    "DEFAULT_ORDERS",
    "INTEGER_ORDERS",
    "drv_epsilon",
    "opti",
    "kov_het_terms",
    "kov_het_epsilon",
    "gaussian_delta",
    "gaussian_epsilon",
    "rdp_gaussian",
    "rdp_subsampled_gaussian",
    "rdp_laplace",
    "rdp_randomized_response",
    "rdp_to_epsilon",
    "rdp_to_delta",
    "kov_exact_delta",
    "kov_exact_epsilon",
    "Accountant",
    "BasicAccountant",
    "DrvAccountant",
    "KovAccountant",
    "KovExactAccountant",
    "RdpAccountant",
    "PldAccountant",
    "GdpAccountant",
    "ACCOUNTANTS",
    "get_accountant",
]

#: Default Renyi orders: 1.05..1.95 (step 0.05), 2.25..9.75 (quarters, incl. integers),
#: all integers 2..64, then 72..1024. Fine near 1 because large compositions (Gaussian
#: sigma = 1, k = 100) have their optimum at alpha of about 1.5.
DEFAULT_ORDERS: np.ndarray = np.unique(
    np.concatenate(
        [
            np.round(np.arange(1.05, 2.0, 0.05), 2),
            np.arange(2.0, 10.0, 0.25),
            np.arange(2.0, 65.0),
            np.array([72, 80, 96, 112, 128, 160, 192, 256, 320, 384, 512, 768, 1024.0]),
        ]
    )
)
DEFAULT_ORDERS.setflags(write=False)

#: The integer orders of :data:`DEFAULT_ORDERS` (where the subsampled Gaussian is computed).
INTEGER_ORDERS: np.ndarray = DEFAULT_ORDERS[np.floor(DEFAULT_ORDERS) == DEFAULT_ORDERS]
INTEGER_ORDERS.setflags(write=False)








def _orders(orders: npt.ArrayLike) -> np.ndarray:
    a = np.atleast_1d(_f(orders))
    _check(a.ndim == 1, "orders must be a 1-d array")
    _check(a > 1, "orders must all be > 1")
    return a


# ---------------------------------------------------------------------------------------
# Advanced composition
# ---------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------
# Gaussian DP
# ---------------------------------------------------------------------------------------


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
    bracket; converged to ``1e-13`` relative. All elements are iterated together.

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


# ---------------------------------------------------------------------------------------
# Renyi DP
# ---------------------------------------------------------------------------------------


def rdp_gaussian(
    orders: npt.ArrayLike, sigma: npt.ArrayLike, sensitivity: npt.ArrayLike = 1.0
) -> np.ndarray:
    """RDP of the Gaussian mechanism: ``alpha sensitivity^2 / (2 sigma^2)``.

    Returns an array of shape ``broadcast(sigma, sensitivity).shape + (len(orders),)``.
    """
    a = _orders(orders)
    sigma, sens = np.broadcast_arrays(_f(sigma), _f(sensitivity))
    _check(sigma > 0, "sigma must be > 0")
    _check(sens >= 0, "sensitivity must be >= 0")
    return a * (sens * sens / (2.0 * sigma * sigma))[..., None]


def rdp_subsampled_gaussian(
    orders: npt.ArrayLike, q: npt.ArrayLike, sigma: npt.ArrayLike
) -> np.ndarray:
    """RDP of the Poisson-subsampled Gaussian (sensitivity 1) at integer orders.

    Mironov, Talwar, Zhang 2019: for integer ``alpha >= 2``, ``R(alpha) =
    ln(sum_j C(alpha, j) (1-q)^(alpha-j) q^j exp((j^2 - j)/(2 sigma^2))) / (alpha-1)``,
    evaluated as a log-sum-exp (stable for any ``q`` and ``sigma``). For sensitivity
    ``s`` pass ``sigma / s``. Vectorized over arrays of ``q`` and ``sigma`` (loop over the
    orders and over chunks of elements only); cost ``O(size * sum(orders))``.

    Parameters
    ----------
    orders : array_like
        Integer orders ``>= 2`` (a non-integer order raises ``ValueError``).
    q : array_like
        Sampling probability in ``[0, 1]``.
    sigma : array_like
        Noise multiplier ``> 0`` (``inf`` allowed: no loss).

    Returns
    -------
    ndarray
        Shape ``broadcast(q, sigma).shape + (len(orders),)``.
    """
    from scipy import special

    a = _orders(orders)
    _check((a == np.floor(a)) & (a >= 2), "rdp_subsampled_gaussian needs integer orders >= 2")
    q, sigma = np.broadcast_arrays(_f(q), _f(sigma))
    _check((q >= 0) & (q <= 1), "q must be in [0, 1]")
    _check(sigma > 0, "sigma must be > 0")
    shape = q.shape
    qf = q.ravel()
    inv2s2 = 0.5 / np.square(sigma.ravel())
    out = np.empty((qf.size, a.size))
    with np.errstate(divide="ignore"):
        for col, alpha in enumerate(a.astype(np.int64)):
            j = np.arange(alpha + 1, dtype=np.float64)
            log_binom = (
                special.gammaln(alpha + 1.0)
                - special.gammaln(j + 1)
                - special.gammaln(alpha - j + 1)
            )
            step = max(1, (1 << 21) // (alpha + 1))
            for s in range(0, qf.size, step):
                qq = qf[s : s + step, None]
                terms = (
                    log_binom
                    + special.xlog1py(alpha - j, -qq)
                    + special.xlogy(j, qq)
                    + (j * j - j) * inv2s2[s : s + step, None]
                )
                out[s : s + step, col] = special.logsumexp(terms, axis=1) / (alpha - 1.0)
    return np.maximum(out, 0.0).reshape(shape + (a.size,))


def rdp_laplace(
    orders: npt.ArrayLike, scale: npt.ArrayLike, sensitivity: npt.ArrayLike = 1.0
) -> np.ndarray:
    """RDP of the Laplace mechanism (Mironov 2017), ``eps = sensitivity / scale``.

    ``R(alpha) = ln( alpha/(2 alpha - 1) e^((alpha-1) eps) + (alpha-1)/(2 alpha - 1)
    e^(-alpha eps) ) / (alpha - 1)``, in log space. Shape as :func:`rdp_gaussian`.
    """
    a = _orders(orders)
    scale, sens = np.broadcast_arrays(_f(scale), _f(sensitivity))
    _check(scale > 0, "scale must be > 0")
    _check(sens >= 0, "sensitivity must be >= 0")
    eps = (sens / scale)[..., None]
    val = np.logaddexp(
        np.log(a / (2 * a - 1)) + (a - 1) * eps, np.log((a - 1) / (2 * a - 1)) - a * eps
    )
    return np.maximum(val / (a - 1), 0.0)


def rdp_randomized_response(
    orders: npt.ArrayLike, eps: npt.ArrayLike, domain: npt.ArrayLike = 2
) -> np.ndarray:
    """Exact RDP of k-ary randomized response with level ``eps``; ``domain = 2`` is pure DP.

    Outputs ``x``, ``x'`` and the ``k - 2`` others have probabilities proportional to
    ``(e^eps, 1, 1)`` and ``(1, e^eps, 1)``, so
    ``R(alpha) = [ln(e^(alpha eps) + e^((1-alpha) eps) + k - 2) - ln(e^eps + k - 1)]/(alpha-1)``.
    Binary RR (``k = 2``) dominates every ``eps``-DP pair (Kairouz-Oh-Viswanath), so this
    is also the exact worst-case RDP of a pure ``eps``-DP mechanism.
    """
    a = _orders(orders)
    eps, k = np.broadcast_arrays(_f(eps), _f(domain))
    _check(eps >= 0, "eps must be >= 0")
    _check(k >= 2, "domain must be >= 2")
    e = eps[..., None]
    kk = k[..., None]
    with np.errstate(divide="ignore"):
        num = np.logaddexp(np.logaddexp(a * e, (1 - a) * e), np.log(kk - 2))
    den = np.logaddexp(e, np.log(kk - 1))
    return np.maximum((num - den) / (a - 1), 0.0)


def rdp_to_epsilon(
    rdp: npt.ArrayLike, orders: npt.ArrayLike, delta: npt.ArrayLike
) -> np.ndarray | np.float64:
    """RDP to (eps, delta) (Balle et al. 2020), minimised over the orders.

    ``eps = min_alpha [R(alpha) + ln((alpha-1)/alpha) - (ln delta + ln alpha)/(alpha-1)]``,
    clipped at 0. ``rdp`` has the orders on its last axis; ``delta`` broadcasts against
    ``rdp.shape[:-1]``.
    """
    a = _orders(orders)
    r = _f(rdp)
    _check(r.shape[-1:] == a.shape, "rdp must have len(orders) entries on its last axis")
    delta = _f(delta)
    _check((delta > 0) & (delta <= 1), "delta must be in (0, 1]")
    ld = np.log(delta)[..., None]
    val = r + np.log1p(-1.0 / a) - (ld + np.log(a)) / (a - 1.0)
    return _out(np.maximum(np.min(val, axis=-1), 0.0))


def rdp_to_delta(
    rdp: npt.ArrayLike, orders: npt.ArrayLike, eps: npt.ArrayLike
) -> np.ndarray | np.float64:
    """Inverse of :func:`rdp_to_epsilon`: smallest delta over the orders (capped at 1).

    ``ln delta = (alpha - 1)(R(alpha) - eps + ln((alpha-1)/alpha)) - ln alpha``.
    """
    a = _orders(orders)
    r = _f(rdp)
    _check(r.shape[-1:] == a.shape, "rdp must have len(orders) entries on its last axis")
    eps = _f(eps)
    _check(eps >= 0, "eps must be >= 0")
    val = (a - 1.0) * (r - eps[..., None] + np.log1p(-1.0 / a)) - np.log(a)
    return _out(np.exp(np.minimum(np.min(val, axis=-1), 0.0)))


# ---------------------------------------------------------------------------------------
# Exact optimal composition of k pure-DP steps (KOV)
# ---------------------------------------------------------------------------------------


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
    from scipy import optimize

    if k == 0 or eps0 == 0.0:
        return 0.0

    def f(e: float) -> float:
        return math.exp(_kov_exact_log_delta(eps0, k, e)) - delta

    if f(0.0) <= 0.0:
        return 0.0
    hi = k * eps0
    # KOV-het is a valid bound, hence >= the exact value: a tighter upper bracket
    _, s1, s2 = kov_het_terms(eps0)
    het = float(kov_het_epsilon(k * eps0, k * s1, k * s2, delta))
    if het < hi and f(het) <= 0.0:
        hi = het
    return float(optimize.brentq(f, 0.0, hi, xtol=1e-12, rtol=1e-14, maxiter=500))


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

    Brent's root finder on :func:`kov_exact_delta` (bracket ``[0, KOV-het]``), to
    ``1e-12``. Check values (spec): ``eps0 = 1, k = 100, delta = 1e-5`` gives 79.84;
    ``eps0 = 0.1, k = 1000`` gives 17.79. Loops over the broadcast elements.
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


# ---------------------------------------------------------------------------------------
# Accountants
# ---------------------------------------------------------------------------------------


class Accountant(ABC):
    """Interface: ``name``, ``epsilon(event, delta)`` and ``delta(event, epsilon)``."""

    name: str = ""
    description: str = ""

    @abstractmethod
    def epsilon(self, event: DpEvent, delta: float) -> float:
        """Smallest epsilon this method certifies for ``event`` at total ``delta``."""

    def delta(self, event: DpEvent, epsilon: float) -> float:
        """Smallest total delta this method certifies for ``event`` at ``epsilon``."""
        raise NotImplementedError(f"accountant {self.name!r} does not compute delta(epsilon)")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def _check_delta(delta: float) -> float:
    d = float(delta)
    if not 0.0 < d <= 1.0:
        raise ValueError(f"delta must be in (0, 1], got {delta!r}")
    return d


def _check_eps(epsilon: float) -> float:
    e = float(epsilon)
    if not e >= 0.0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
    return e


def _approx_units(event: DpEvent, who: str) -> dict[tuple[float, float], int]:
    """Flatten ``event`` into ``{(eps_i, delta_i): count}`` of (eps, delta)-DP steps."""
    units: dict[tuple[float, float], int] = {}

    def add(key: tuple[float, float], count: int) -> None:
        if count:
            units[key] = units.get(key, 0) + count

    def walk(e: DpEvent, mult: int) -> None:
        if isinstance(e, (PureDP, RandomizedResponse, Laplace)):
            add((float(e.epsilon), 0.0), mult)
        elif isinstance(e, ApproxDP):
            add((e.epsilon, e.delta), mult)
        elif isinstance(e, Composed):
            for sub in e.events:
                walk(sub, mult)
        elif isinstance(e, Repeated):
            walk(e.event, mult * e.count)
        elif isinstance(e, Subsampled):
            inner = _approx_units(e.event, who)
            eps_tot = sum(k[0] * c for k, c in inner.items())
            del_tot = min(1.0, sum(k[1] * c for k, c in inner.items()))
            if inner:
                add(
                    (
                        float(subsampled_epsilon(eps_tot, e.probability)),
                        float(subsampled_delta(del_tot, e.probability)),
                    ),
                    mult,
                )
        elif isinstance(e, Gaussian):
            raise TypeError(
                f"accountant {who!r} needs (eps, delta)-DP steps; a Gaussian event has no "
                "single (eps, delta): use 'gdp', 'rdp' or 'pld', or wrap it as ApproxDP"
            )
        else:
            raise TypeError(f"accountant {who!r} cannot handle event {e!r}")

    walk(event, 1)
    return units


def _homogeneous(units: dict[tuple[float, float], int], who: str) -> tuple[float, float, int]:
    """The single ``(eps, delta)`` of a homogeneous composition, and the count."""
    if not units:
        return 0.0, 0.0, 0
    keys = list(units)
    e0, d0 = keys[0]
    for e, d in keys[1:]:
        if not (math.isclose(e, e0, rel_tol=1e-12) and math.isclose(d, d0, rel_tol=1e-12)):
            raise ValueError(
                f"accountant {who!r} needs a homogeneous composition (identical steps); "
                f"got {len(keys)} different (eps, delta) values: use 'kov' or 'rdp'"
            )
    return e0, d0, sum(units.values())


class BasicAccountant(Accountant):
    """Basic composition: ``(sum eps_i, sum delta_i)``.

    ``epsilon(event, delta)`` is ``sum eps_i`` if ``sum delta_i <= delta`` else ``inf``;
    ``delta(event, eps)`` is ``sum delta_i`` if ``eps >= sum eps_i`` else 1.
    Subsampled events use ``(ln(1 + q(e^eps - 1)), q delta)`` of their inner basic total.
    """

    name = "basic"
    description = "basic composition (sum of epsilons and deltas)"

    def _totals(self, event: DpEvent) -> tuple[float, float]:
        units = _approx_units(event, self.name)
        eps = math.fsum(k[0] * c for k, c in units.items())
        dlt = math.fsum(k[1] * c for k, c in units.items())
        return eps, dlt

    def epsilon(self, event: DpEvent, delta: float) -> float:
        delta = _check_delta(delta)
        eps, dlt = self._totals(event)
        return eps if dlt <= delta else math.inf

    def delta(self, event: DpEvent, epsilon: float) -> float:
        epsilon = _check_eps(epsilon)
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
        delta = _check_delta(delta)
        e0, d0, k = _homogeneous(_approx_units(event, self.name), self.name)
        if k == 0:
            return 0.0
        slack = delta - k * d0
        if slack <= 0:
            return math.inf
        return float(drv_epsilon(e0, min(slack, 1.0), k))

    def delta(self, event: DpEvent, epsilon: float) -> float:
        epsilon = _check_eps(epsilon)
        e0, d0, k = _homogeneous(_approx_units(event, self.name), self.name)
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
        delta = _check_delta(delta)
        units = _approx_units(event, self.name)
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
        delta = _check_delta(delta)
        e0, d0, k = _homogeneous(_approx_units(event, self.name), self.name)
        if k == 0:
            return 0.0
        target = -math.expm1(math.log1p(-delta) - k * math.log1p(-d0)) if delta < 1 else 1.0
        if not target > 0:
            return math.inf
        return float(kov_exact_epsilon(e0, k, min(target, 1.0)))

    def delta(self, event: DpEvent, epsilon: float) -> float:
        epsilon = _check_eps(epsilon)
        e0, d0, k = _homogeneous(_approx_units(event, self.name), self.name)
        if k == 0:
            return 0.0
        dp = float(kov_exact_delta(e0, k, epsilon))
        return min(1.0, -math.expm1(k * math.log1p(-d0) + math.log1p(-dp)))


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
        delta = _check_delta(delta)
        return float(gaussian_epsilon(self.mu(event), delta))

    def delta(self, event: DpEvent, epsilon: float) -> float:
        epsilon = _check_eps(epsilon)
        return float(gaussian_delta(self.mu(event), epsilon))


class RdpAccountant(Accountant):
    """Renyi DP, own implementation, converted with Balle et al. 2020 over ``orders``.

    Curves: Gaussian, Laplace, pure DP and k-ary RR (exact), Poisson-subsampled Gaussian
    (integer orders only; ``inf`` at the others, so they never win the minimum),
    subsampled pure-DP/RR/Laplace (as pure DP at the amplified epsilon). Composition sums
    the curves. ``ApproxDP`` with ``delta > 0`` raises ``TypeError``.
    """

    name = "rdp"
    description = "Renyi DP (own curves, Balle et al. 2020 conversion)"

    def __init__(self, orders: npt.ArrayLike = DEFAULT_ORDERS) -> None:
        self.orders = _orders(orders)
        self._integer = (self.orders == np.floor(self.orders)) & (self.orders >= 2)

    def rdp(self, event: DpEvent) -> np.ndarray:
        """RDP curve of ``event`` over :attr:`orders`."""
        a = self.orders
        if isinstance(event, Gaussian):
            return rdp_gaussian(a, event.sigma, event.sensitivity)
        if isinstance(event, Laplace):
            return rdp_laplace(a, event.scale, event.sensitivity)
        if isinstance(event, RandomizedResponse):
            return rdp_randomized_response(a, event.epsilon, event.domain)
        if isinstance(event, PureDP) or (isinstance(event, ApproxDP) and event.delta == 0):
            return rdp_randomized_response(a, event.epsilon, 2)
        if isinstance(event, Composed):
            total = np.zeros(a.shape)
            for e in event.events:
                total = total + self.rdp(e)
            return total
        if isinstance(event, Repeated):
            return event.count * self.rdp(event.event) if event.count else np.zeros(a.shape)
        if isinstance(event, Subsampled):
            return self._subsampled(event)
        raise TypeError(
            f"accountant {self.name!r} cannot handle {event!r} (ApproxDP with delta > 0 has "
            "no RDP curve; use 'basic', 'kov' or 'pld')"
        )

    def _subsampled(self, event: Subsampled) -> np.ndarray:
        a, q, inner = self.orders, event.probability, event.event
        if isinstance(inner, Gaussian):
            out = np.full(a.shape, np.inf)
            if inner.sensitivity == 0 or q == 0:
                return np.zeros(a.shape)
            if np.any(self._integer):
                out[self._integer] = rdp_subsampled_gaussian(
                    a[self._integer], q, inner.sigma / inner.sensitivity
                )
            return out
        if isinstance(inner, (PureDP, RandomizedResponse, Laplace)) or (
            isinstance(inner, ApproxDP) and inner.delta == 0
        ):
            return rdp_randomized_response(a, float(subsampled_epsilon(inner.epsilon, q)), 2)
        raise TypeError(
            f"accountant {self.name!r}: Subsampled supports a Gaussian, Laplace, RR or pure "
            f"DP event, got {inner!r}"
        )

    def epsilon(self, event: DpEvent, delta: float) -> float:
        delta = _check_delta(delta)
        return float(rdp_to_epsilon(self.rdp(event), self.orders, delta))

    def delta(self, event: DpEvent, epsilon: float) -> float:
        epsilon = _check_eps(epsilon)
        return float(rdp_to_delta(self.rdp(event), self.orders, epsilon))


class PldAccountant(Accountant):
    """Privacy loss distributions through ``dp_accounting.pld`` (pessimistic, exact up to
    discretisation).

    All Gaussian parts are merged first into one Gaussian of parameter
    ``mu = sqrt(sum mu_i^2)`` (exact). Randomized response is built with
    ``from_randomized_response(...)`` and repetitions with ``self_compose``: this avoids
    the dp-accounting 0.6.0 bug where ``PLDAccountant`` ignores the repeat count of a
    ``RandomizedResponseDpEvent``. Pure/approximate DP use the worst-case PLD of
    ``from_privacy_parameters``; subsampled Gaussian/Laplace use the library's
    ``sampling_prob`` (add/remove relation); other subsampled events use the amplified
    ``(eps, delta)``.

    Parameters
    ----------
    value_discretization_interval : float
        PLD grid step (``1e-4`` is the library default and meets the spec's check values).
    """

    name = "pld"
    description = "privacy loss distributions (dp_accounting.pld)"

    def __init__(self, value_discretization_interval: float = 1e-4) -> None:
        if not value_discretization_interval > 0:
            raise ValueError("value_discretization_interval must be > 0")
        self.vdi = float(value_discretization_interval)

    def pld(self, event: DpEvent):
        """The composed ``dp_accounting`` ``PrivacyLossDistribution`` of ``event``."""
        from dp_accounting.pld import privacy_loss_distribution as pld_lib

        mu2, dist = self._build(event)
        if mu2 > 0:
            g = pld_lib.from_gaussian_mechanism(
                standard_deviation=1.0 / math.sqrt(mu2),
                value_discretization_interval=self.vdi,
            )
            dist = g if dist is None else dist.compose(g)
        if dist is None:
            dist = pld_lib.identity(value_discretization_interval=self.vdi)
        return dist

    def compose(self, plds: list):
        """The composition of several PLDs, in a balanced tree (the one PLD composer).

        Pairs are composed level by level, which keeps the intermediate supports small;
        ``self_compose`` is used for repeats of one event (:class:`Repeated`).
        """
        from dp_accounting.pld import privacy_loss_distribution as pld_lib

        parts = list(plds)
        if not parts:
            return pld_lib.identity(value_discretization_interval=self.vdi)
        while len(parts) > 1:
            parts = [a.compose(b) for a, b in zip(parts[::2], parts[1::2], strict=False)] + (
                [parts[-1]] if len(parts) % 2 else [])
        return parts[0]

    def _params(self, eps: float, delta: float):
        from dp_accounting.pld import common
        from dp_accounting.pld import privacy_loss_distribution as pld_lib

        return pld_lib.from_privacy_parameters(
            common.DifferentialPrivacyParameters(eps, delta),
            value_discretization_interval=self.vdi,
        )

    def _build(self, event: DpEvent):
        from dp_accounting import NeighboringRelation
        from dp_accounting.pld import privacy_loss_distribution as pld_lib

        if isinstance(event, Gaussian):
            return event.mu**2, None
        if isinstance(event, Laplace):
            if event.sensitivity == 0:
                return 0.0, None
            return 0.0, pld_lib.from_laplace_mechanism(
                event.scale, sensitivity=event.sensitivity, value_discretization_interval=self.vdi
            )
        if isinstance(event, RandomizedResponse):
            if event.epsilon == 0:
                return 0.0, None
            return 0.0, pld_lib.from_randomized_response(
                noise_parameter=event.gamma,
                num_buckets=event.domain,
                value_discretization_interval=self.vdi,
                neighboring_relation=NeighboringRelation.REPLACE_ONE,
            )
        if isinstance(event, PureDP):
            return 0.0, (self._params(event.epsilon, 0.0) if event.epsilon > 0 else None)
        if isinstance(event, ApproxDP):
            if event.epsilon == 0 and event.delta == 0:
                return 0.0, None
            return 0.0, self._params(event.epsilon, event.delta)
        if isinstance(event, Composed):
            mu2, parts = 0.0, []
            for e in event.events:
                m, d = self._build(e)
                mu2 += m
                if d is not None:
                    parts.append(d)
            return mu2, (self.compose(parts) if parts else None)
        if isinstance(event, Repeated):
            if event.count == 0:
                return 0.0, None
            m, d = self._build(event.event)
            return event.count * m, (d.self_compose(event.count) if d is not None else None)
        if isinstance(event, Subsampled):
            return 0.0, self._subsampled(event)
        raise TypeError(f"accountant {self.name!r} cannot handle event {event!r}")

    def _subsampled(self, event: Subsampled):
        from dp_accounting.pld import privacy_loss_distribution as pld_lib

        q, inner = event.probability, event.event
        if q == 0:
            return None
        if isinstance(inner, Gaussian):
            if inner.sensitivity == 0:
                return None
            return pld_lib.from_gaussian_mechanism(
                inner.sigma,
                sensitivity=inner.sensitivity,
                sampling_prob=q,
                value_discretization_interval=self.vdi,
            )
        if isinstance(inner, Laplace):
            if inner.sensitivity == 0:
                return None
            return pld_lib.from_laplace_mechanism(
                inner.scale,
                sensitivity=inner.sensitivity,
                sampling_prob=q,
                value_discretization_interval=self.vdi,
            )
        if isinstance(inner, (PureDP, RandomizedResponse, ApproxDP)):
            d = inner.delta if isinstance(inner, ApproxDP) else 0.0
            eps = float(subsampled_epsilon(inner.epsilon, q))
            if eps == 0 and d == 0:
                return None
            return self._params(eps, float(subsampled_delta(d, q)))
        raise TypeError(
            f"accountant {self.name!r}: Subsampled supports a Gaussian, Laplace, RR or DP "
            f"event, got {inner!r}"
        )

    def epsilon(self, event: DpEvent, delta: float) -> float:
        delta = _check_delta(delta)
        return max(0.0, float(self.pld(event).get_epsilon_for_delta(delta)))

    def delta(self, event: DpEvent, epsilon: float) -> float:
        epsilon = _check_eps(epsilon)
        return min(1.0, float(self.pld(event).get_delta_for_epsilon(epsilon)))


#: Registry of accountants by name.
ACCOUNTANTS: dict[str, Accountant] = {
    a.name: a
    for a in (
        BasicAccountant(),
        DrvAccountant(),
        KovAccountant(),
        KovExactAccountant(),
        RdpAccountant(),
        PldAccountant(),
        GdpAccountant(),
    )
}

_FACTORIES: dict[str, Callable[..., Accountant]] = {a.name: type(a) for a in ACCOUNTANTS.values()}


def get_accountant(name: str, **kwargs: object) -> Accountant:
    """Accountant by name (``kwargs`` go to its constructor, e.g. ``orders`` for ``rdp``).

    Raises
    ------
    ValueError
        If ``name`` is unknown; the message lists the allowed names.
    """
    if name not in ACCOUNTANTS:
        raise ValueError(f"unknown accountant {name!r}; allowed: {sorted(ACCOUNTANTS)}")
    return _FACTORIES[name](**kwargs) if kwargs else ACCOUNTANTS[name]
