"""Rényi DP (Mironov 2017): the RDP curves of the Gaussian, the subsampled Gaussian, Laplace and
randomized response, their conversion to (ε, δ), and the ``rdp`` accountant.

Why not dp-accounting's ``RdpAccountant``: the trackers need these curves vectorised over
pairs and orders (and compiled, :mod:`netdp.accounting._compiled`), on orders up to 8192
for the complete graph at n = 10⁶ (``WALK_RDP_ORDERS``); dp-accounting's takes one event at
a time on its own orders (its figures differ in the fourth digit where the optimal order
falls between them)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from netdp.accounting._arrays import _check, _f, _out
from netdp.accounting.amplification import subsampled_epsilon
from netdp.accounting.base import Accountant, check_delta, check_epsilon
from netdp.accounting.events import (
    ApproxDP,
    Composed,
    DpEvent,
    Gaussian,
    Laplace,
    PrivacyLoss,
    PureDP,
    RandomizedResponse,
    Repeated,
    Subsampled,
)

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


def rdp_of_loss(a: np.ndarray, event: PrivacyLoss) -> np.ndarray:
    """RDP of a :class:`~netdp.accounting.events.PrivacyLoss` at orders ``a``:
    ``log E[e^{(α - 1) L}] / (α - 1)`` (``inf`` with mass at ``+∞``)."""
    if event.infinity > 0:
        return np.full(a.shape, np.inf)
    loss = np.asarray(event.index, dtype=np.float64) * event.step
    logp = np.log(np.asarray(event.probs))
    with np.errstate(divide="ignore"):
        terms = logp[None, :] + np.multiply.outer(a - 1.0, loss)
    top = terms.max(axis=1)
    return np.maximum((top + np.log(np.exp(terms - top[:, None]).sum(axis=1))) / (a - 1.0),
                      0.0)


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
        if isinstance(event, PrivacyLoss):
            return rdp_of_loss(a, event)
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
        delta = check_delta(delta)
        return float(rdp_to_epsilon(self.rdp(event), self.orders, delta))

    def delta(self, event: DpEvent, epsilon: float) -> float:
        epsilon = check_epsilon(epsilon)
        return float(rdp_to_delta(self.rdp(event), self.orders, epsilon))
