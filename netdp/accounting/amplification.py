"""Amplification by subsampling and by shuffling (accounting.md §3-§4).

All functions take numpy arrays (or scalars) and broadcast; scalars in give numpy scalars
out. The shuffling bounds are for ``n`` users, each applying an ``eps0``-LDP randomizer,
and an observer who sees the shuffled multiset of the ``n`` reports.

Validity conditions: a bound used outside the range where its theorem holds is not a
bound. ``strict=True`` (the default) raises :class:`ValueError` there; ``strict=False``
returns ``nan`` for the offending entries instead (so a table over a grid of ``n`` shows
where a bound does not apply).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import numpy.typing as npt

from netdp.accounting._arrays import _check, _f, _out
from netdp.accounting.fmt_numeric import fmt_args, pairwise_apply

__all__ = [
    "subsampled_epsilon",
    "subsampled_delta",
    "erlingsson_epsilon",
    "blanket_epsilon",
    "fmt_closed_epsilon",
    "fmt_closed_valid",
    "binary_rr_shuffled_delta",
    "binary_rr_shuffled_epsilon",
]


def _invalid(valid: np.ndarray, value: np.ndarray, strict: bool, msg: str) -> np.ndarray:
    if strict and not np.all(valid):
        raise ValueError(msg + " (pass strict=False to get nan there)")
    return np.where(valid, value, np.nan)


# ---------------------------------------------------------------------------------------
# Subsampling
# ---------------------------------------------------------------------------------------


def subsampled_epsilon(eps: npt.ArrayLike, q: npt.ArrayLike) -> np.ndarray | np.float64:
    """Amplification by Poisson subsampling: ``ln(1 + q (e^eps - 1))``.

    Parameters
    ----------
    eps : array_like
        Epsilon of the mechanism run on the subsample, ``>= 0`` (``inf`` allowed).
    q : array_like
        Probability that the user is in the subsample, in ``[0, 1]``.

    Returns
    -------
    ndarray or float
        Amplified epsilon (computed as ``log1p(q expm1(eps))``; large ``eps`` handled in
        log space).
    """
    eps, q = np.broadcast_arrays(_f(eps), _f(q))
    _check(eps >= 0, "eps must be >= 0")
    _check((q >= 0) & (q <= 1), "q must be in [0, 1]")
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        small = np.log1p(q * np.expm1(eps))
        # for large eps: ln(q e^eps + 1 - q) = eps + ln q + log1p((1-q) e^-eps / q)
        big = eps + np.log(q) + np.log1p((1.0 - q) * np.exp(-eps) / q)
    out = np.where(eps < 700.0, small, big)
    out = np.where(q == 0, 0.0, out)
    return _out(out)


def subsampled_delta(delta: npt.ArrayLike, q: npt.ArrayLike) -> np.ndarray | np.float64:
    """Delta after Poisson subsampling: ``q delta``.

    Parameters
    ----------
    delta : array_like
        Delta of the mechanism, in ``[0, 1]``.
    q : array_like
        Inclusion probability, in ``[0, 1]``.
    """
    delta, q = np.broadcast_arrays(_f(delta), _f(q))
    _check((delta >= 0) & (delta <= 1), "delta must be in [0, 1]")
    _check((q >= 0) & (q <= 1), "q must be in [0, 1]")
    return _out(q * delta)


# ---------------------------------------------------------------------------------------
# Shuffling: closed forms
# ---------------------------------------------------------------------------------------


def erlingsson_epsilon(
    eps0: npt.ArrayLike, n: npt.ArrayLike, delta: npt.ArrayLike, *, strict: bool = True
) -> np.ndarray | np.float64:
    """Erlingsson et al. (SODA 2019) shuffling bound ``12 eps0 sqrt(ln(1/delta)/n)``.

    Valid for ``eps0 <= 1/2`` (as in the spec). The paper states further side
    conditions on ``n`` and ``delta`` (large ``n``, small ``delta``) that are not checked
    here; this bound is kept as a historical reference and is loose.

    Parameters
    ----------
    eps0 : array_like
        Local epsilon of each report.
    n : array_like
        Number of shuffled reports.
    delta : array_like
        Target delta in ``(0, 1)``.
    strict : bool
        Raise outside ``eps0 <= 1/2`` (default) or return ``nan`` there.
    """
    eps0, n, delta = np.broadcast_arrays(_f(eps0), _f(n), _f(delta))
    _check(eps0 >= 0, "eps0 must be >= 0")
    _check(n >= 1, "n must be >= 1")
    _check((delta > 0) & (delta < 1), "delta must be in (0, 1)")
    val = 12.0 * eps0 * np.sqrt(np.log(1.0 / delta) / n)
    return _out(_invalid(eps0 <= 0.5, val, strict, "erlingsson_epsilon needs eps0 <= 1/2"))


def blanket_epsilon(
    eps0: npt.ArrayLike,
    n: npt.ArrayLike,
    delta: npt.ArrayLike,
    domain: npt.ArrayLike = 2,
    *,
    strict: bool = True,
) -> np.ndarray | np.float64:
    """Privacy-blanket bound (Balle, Bell, Gascon, Nissim, CRYPTO 2019) for k-ary RR.

    Each of the ``n`` users applies k-ary randomized response that answers uniformly at
    random with the blanket probability ``gamma = k / (e^eps0 + k - 1)`` (this makes it
    exactly ``eps0``-LDP). Theorem 3.1 of the paper: the shuffled protocol is
    ``(eps, delta)``-DP for ``eps <= 1`` when
    ``gamma >= max(14 k ln(2/delta) / ((n-1) eps^2), 27 k / ((n-1) eps))``; solving for
    ``eps`` gives

        ``eps = max( sqrt(14 k ln(2/delta) / ((n-1) gamma)), 27 k / ((n-1) gamma) )``,

    valid only when this ``eps <= 1``.

    What was verified: the stored copy of the paper itself could not be read beyond its
    abstract. The constants 14 and 27, the ``n - 1`` (the other users form the blanket),
    ``ln(2/delta)`` and the ``eps <= 1`` side condition agree with the spec and with an
    independent public implementation of the same protocol found by code search (it sets
    ``gamma = max(14 k log(2/delta)/((n-1) eps^2), 27 k/((n-1) eps))``; that code uses a
    base-2 log, which we take to be its own bug: the paper's logs are natural). Treat the
    constants as "spec, corroborated once", not as re-derived.

    Parameters
    ----------
    eps0 : array_like
        Local epsilon, ``> 0``.
    n : array_like
        Number of users, ``>= 2``.
    delta : array_like
        Target delta in ``(0, 1)``.
    domain : array_like
        Domain size ``k >= 2``.
    strict : bool
        Raise where the result exceeds 1 (outside the theorem) or return ``nan`` there.
    """
    eps0, n, delta, k = np.broadcast_arrays(_f(eps0), _f(n), _f(delta), _f(domain))
    _check(eps0 > 0, "eps0 must be > 0")
    _check(n >= 2, "n must be >= 2")
    _check((delta > 0) & (delta < 1), "delta must be in (0, 1)")
    _check(k >= 2, "domain must be >= 2")
    with np.errstate(over="ignore"):
        gamma = k / (np.exp(eps0) + k - 1.0)
    m = (n - 1.0) * gamma
    val = np.maximum(np.sqrt(14.0 * k * np.log(2.0 / delta) / m), 27.0 * k / m)
    return _out(_invalid(val <= 1.0, val, strict, "blanket_epsilon is only valid where eps <= 1"))


def fmt_closed_valid(
    eps0: npt.ArrayLike, n: npt.ArrayLike, delta: npt.ArrayLike
) -> np.ndarray | np.bool_:
    """Validity condition of the FMT closed form: ``eps0 <= ln(n / (16 ln(2/delta)))``."""
    eps0, n, delta = np.broadcast_arrays(_f(eps0), _f(n), _f(delta))
    return _out(eps0 <= np.log(n / (16.0 * np.log(2.0 / delta))))


def fmt_closed_epsilon(
    eps0: npt.ArrayLike,
    n: npt.ArrayLike,
    delta: npt.ArrayLike,
    *,
    variant: str = "paper",
    strict: bool = True,
) -> np.ndarray | np.float64:
    """Feldman-McMillan-Talwar 2021 ("Hiding among the clones") closed-form bound.

    ``variant="paper"`` (spec formula, Theorem 3.1 of the paper)::

        eps = ln(1 + (e^eps0 - 1)/(e^eps0 + 1) * 8 (sqrt(e^eps0 ln(4/delta) / n) + e^eps0 / n))

    ``variant="reference-code"``: the authors' published script
    (``computeamplification.closedformanalysis``) multiplies the same bracket
    ``a = 8(...)`` by ``(1 - e^-eps0) / (1 + e^(-eps0 - ln(1 + a)))`` instead of
    ``tanh(eps0/2)``; it is slightly larger (more conservative), e.g. 0.538 vs 0.535 at
    ``n = 1e5, eps0 = 4, delta = 1e-6``.

    Valid for ``eps0 <= ln(n / (16 ln(2/delta)))`` (spec and paper; the reference script
    checks the stricter ``ln(4/delta)``).

    Parameters
    ----------
    eps0, n, delta : array_like
        Local epsilon (``>= 0``), number of users (``>= 1``), target delta in ``(0, 1)``.
    variant : {"paper", "reference-code"}
        Which expression to use (see above).
    strict : bool
        Raise outside the validity range (default) or return ``nan`` there.
    """
    eps0, n, delta = np.broadcast_arrays(_f(eps0), _f(n), _f(delta))
    _check(eps0 >= 0, "eps0 must be >= 0")
    _check(n >= 1, "n must be >= 1")
    _check((delta > 0) & (delta < 1), "delta must be in (0, 1)")
    with np.errstate(over="ignore", invalid="ignore"):
        e0 = np.exp(eps0)
        a = 8.0 * (np.sqrt(e0 * np.log(4.0 / delta) / n) + e0 / n)
        if variant == "paper":
            factor = np.tanh(eps0 / 2.0)  # (e^eps0 - 1)/(e^eps0 + 1)
        elif variant == "reference-code":
            factor = -np.expm1(-eps0) / (1.0 + np.exp(-eps0 - np.log1p(a)))
        else:
            raise ValueError(f"variant must be 'paper' or 'reference-code', got {variant!r}")
        val = np.log1p(factor * a)
    valid = np.asarray(fmt_closed_valid(eps0, n, delta))
    return _out(
        _invalid(valid, val, strict, "fmt_closed_epsilon needs eps0 <= ln(n/(16 ln(2/delta)))")
    )


# ---------------------------------------------------------------------------------------
# Exact hockey-stick divergence of discrete pairs
# ---------------------------------------------------------------------------------------


class _HockeyStick:
    """``delta(eps) = sum_x [P(x) - e^eps Q(x)]_+ + dropped`` for a discrete pair.

    Built once from the atoms (sorted by privacy loss), then ``delta`` and its inverse
    ``epsilon`` are exact and vectorized: on each interval between consecutive losses
    ``delta(eps) = S_P - e^eps S_Q``.
    """

    def __init__(self, p: np.ndarray, q: np.ndarray, dropped: float = 0.0) -> None:
        p = np.ravel(p)
        q = np.ravel(q)
        infinite = (p > 0) & (q <= 0)
        dropped = float(dropped + p[infinite].sum())  # infinite-loss atoms count always
        keep = (p > q) & (q > 0)
        loss = np.log(p[keep]) - np.log(q[keep])
        order = np.argsort(-loss, kind="stable")
        self.loss = loss[order]
        self.sp = np.concatenate([[0.0], np.cumsum(p[keep][order])])
        self.sq = np.concatenate([[0.0], np.cumsum(q[keep][order])])
        self.dropped = dropped
        breaks = np.concatenate([self.loss, [0.0]])
        d = self.sp - np.exp(breaks) * self.sq + dropped
        self.d_at_breaks = np.maximum.accumulate(np.maximum(d, dropped))

    def delta(self, eps: np.ndarray) -> np.ndarray:
        eps = _f(eps)
        i = np.searchsorted(-self.loss, -eps, side="left")  # number of losses > eps
        with np.errstate(over="ignore", invalid="ignore"):
            val = self.sp[i] - np.exp(eps) * self.sq[i] + self.dropped
        val = np.where(i == 0, self.dropped, val)
        return np.clip(val, self.dropped, 1.0)

    def epsilon(self, delta: np.ndarray) -> np.ndarray:
        delta = _f(delta)
        if np.any(delta <= self.dropped):
            raise ValueError(
                f"delta must exceed the truncated/infinite-loss mass {self.dropped:.3g}"
            )
        j = np.searchsorted(self.d_at_breaks, delta, side="right")  # first D[j] > delta
        jj = np.minimum(j, len(self.sp) - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            val = np.log((self.sp[jj] + self.dropped - delta) / self.sq[jj])
        val = np.where(j >= len(self.d_at_breaks), 0.0, val)
        return np.maximum(val, 0.0)


# ---------------------------------------------------------------------------------------
# FMT numeric bound
# ---------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------
# Exact shuffled binary randomized response (ground truth for the bounds)
# ---------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _binary_rr_tables(eps0: float, n: int, ones: int) -> tuple[_HockeyStick, _HockeyStick]:
    from scipy import stats

    p = 1.0 / (1.0 + math.exp(-eps0))  # probability of reporting the true bit
    zeros = n - 1 - ones
    s = stats.binom.pmf(np.arange(zeros + 1), zeros, 1.0 - p)
    if ones > 0:
        s = np.convolve(stats.binom.pmf(np.arange(ones + 1), ones, p), s)
    s_prev = np.concatenate([[0.0], s])  # S(x - 1), x = 0..n
    s_cur = np.concatenate([s, [0.0]])  # S(x)
    p1 = p * s_prev + (1.0 - p) * s_cur  # count law when the user holds 1
    p0 = (1.0 - p) * s_prev + p * s_cur  # ... holds 0
    return _HockeyStick(p1, p0), _HockeyStick(p0, p1)


def _rr_args(eps0, n, ones) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    eps0, n = fmt_args(eps0, n)
    ones = _f(ones)
    _check((ones >= 0) & (ones <= n - 1) & (ones == np.floor(ones)), "ones must be in 0..n-1")
    return eps0, n, ones


def binary_rr_shuffled_delta(
    eps0: npt.ArrayLike, n: npt.ArrayLike, eps: npt.ArrayLike, ones: npt.ArrayLike = 0
) -> np.ndarray | np.float64:
    """Exact delta(eps) of shuffled binary randomized response, from the count law.

    ``n`` users each report their bit through binary RR (truth with probability
    ``e^eps0/(1+e^eps0)``); the observer sees the number of 1 reports. The neighbouring
    datasets differ in one user's bit (0 vs 1) while ``ones`` of the other ``n-1`` users
    hold 1 and the rest 0. Both directions are taken (max), so this is the exact
    privacy curve of that pair of datasets: a lower bound on the worst case over datasets
    that every valid shuffling bound must stay above. ``ones = 0`` (all others equal) is
    the natural worst-case candidate; cost O(n) for ``ones = 0``, else
    O(ones * (n - ones)).

    Parameters
    ----------
    eps0 : array_like
        Local epsilon of the binary RR, finite, ``>= 0``.
    n : array_like
        Number of users (integer ``>= 1``).
    eps : array_like
        Central epsilon(s), ``>= 0``.
    ones : array_like
        Number of the other users holding 1 (``0..n-1``).
    """
    eps0, n, ones = _rr_args(eps0, n, ones)
    eps = _f(eps)
    _check(eps >= 0, "eps must be >= 0")

    def table(e0: float, nn: float, o: float):
        t1, t2 = _binary_rr_tables(float(e0), int(nn), int(o))
        return lambda x: np.maximum(t1.delta(x), t2.delta(x))

    return _out(pairwise_apply(table, eps0, n, ones, last=eps))


def binary_rr_shuffled_epsilon(
    eps0: npt.ArrayLike, n: npt.ArrayLike, delta: npt.ArrayLike, ones: npt.ArrayLike = 0
) -> np.ndarray | np.float64:
    """Exact epsilon(delta) of shuffled binary RR (see :func:`binary_rr_shuffled_delta`).

    Parameters
    ----------
    eps0, n : array_like
        Local epsilon and number of users.
    delta : array_like
        Target delta in ``(0, 1]``.
    ones : array_like
        Number of the other users holding 1.
    """
    eps0, n, ones = _rr_args(eps0, n, ones)
    delta = _f(delta)
    _check((delta > 0) & (delta <= 1), "delta must be in (0, 1]")

    def table(e0: float, nn: float, o: float):
        t1, t2 = _binary_rr_tables(float(e0), int(nn), int(o))
        return lambda d: np.maximum(t1.epsilon(d), t2.epsilon(d))

    return _out(pairwise_apply(table, eps0, n, ones, last=delta))
