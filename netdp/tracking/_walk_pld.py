"""Privacy loss distributions of a walk's pairs: the tracker's ``pld`` accountant.

Pair ``(u, v)`` composes, over the returns of the token to ``v``, a Poisson-subsampled
Gaussian (rate ``1 - (1-1/n)^m``, std ``z √m``, sensitivity 1) for each cycle where ``u``
is not attributable, and an exact Gaussian (std ``z √m``, sensitivity ``c``) for each cycle
where it is. We bound it soundly, and tightly, in two parts:

* **Observer part**: the subsampled entry of *every* cycle of ``v`` (a superset of the
  pair's: composing one more mechanism never lowers ε), as a PLD of ``dp_accounting``.
  Cycle lengths are grouped in bins (exact up to :data:`EXACT_M`, then geometric with
  ratio :data:`BIN_RATIO`); a bin's entries are replaced by the entry that dominates them
  (the rate of its longest cycle, the noise of its shortest), so one PLD per bin serves
  every observer.
* **Pair part**: the attributable Gaussians compose exactly into Gaussian DP with
  ``μ² = Σ c² / (z² m)``; composed with the observer's discretised PLD in closed form,
  ``δ(ε) = P_∞ + Σ_l p(l) δ_G(μ, ε - l)``, for a grid of ε at once by FFT convolution,
  then checked exactly and interpolated along the chord in ``e^ε`` (δ is convex in
  ``e^ε``, so the chord lies above it: the answer stays an upper bound).
"""

from __future__ import annotations

import math

import numpy as np

from netdp.accounting._arrays import geometric_bins
from netdp.accounting.events import Gaussian, Subsampled
from netdp.accounting.gdp import _gauss_log_terms, gaussian_epsilon
from netdp.accounting.pld import PldAccountant

EXACT_M = 32
BIN_RATIO = 2 ** (1 / 32)
VDI = 1e-3  # PLD loss grid; pessimistic rounding costs at most k·VDI of ε for k entries
_CHUNK = 1 << 22  # kernel cells per FFT batch


def cycle_bins(m: np.ndarray) -> np.ndarray:
    """Bin id of each cycle length (its own bin up to EXACT_M, geometric beyond)."""
    return geometric_bins(m, EXACT_M, BIN_RATIO)


def bin_plds(m: np.ndarray, bins: np.ndarray, n: int, z: float) -> dict:
    """One dominating subsampled-Gaussian PLD per bin that occurs: the event
    ``Subsampled(Gaussian(z √m_lo), q(m_hi))`` of the bin, by the PLD accountant."""
    accountant = PldAccountant(VDI)
    ids, inverse = np.unique(bins, return_inverse=True)
    lo = np.full(ids.size, np.iinfo(np.int64).max)
    hi = np.zeros(ids.size, np.int64)
    np.minimum.at(lo, inverse, m)
    np.maximum.at(hi, inverse, m)
    rate = -np.expm1(hi * math.log1p(-1.0 / n)) if n > 1 else np.ones(ids.size)
    return {int(b): accountant.pld(Subsampled(Gaussian(z * math.sqrt(m_lo), 1.0),
                                              float(min(q, 1.0))))
            for b, m_lo, q in zip(ids, lo, rate, strict=True)}


def compose_bins(cache: dict, bins: np.ndarray, counts: np.ndarray):
    """The PLD composing ``counts[i]`` entries of bin ``bins[i]`` (identity when empty),
    by the PLD accountant's composer. Plain pairwise composition, not ``self_compose``:
    dp_accounting's self_compose bounds its FFT with a logsumexp per point and is ~20x
    slower for the few repeats we have."""
    parts = [cache[int(b)] for b, c in zip(bins, counts, strict=True) for _ in range(int(c))]
    return PldAccountant(VDI).compose(parts)


def _dense(pmf) -> tuple[int, np.ndarray, float, float]:
    """(lower loss index, probabilities, mass at +∞, grid step) of a dp_accounting PMF."""
    if not hasattr(pmf, "_probs"):
        pmf = pmf.to_dense_pmf()
    return int(pmf._lower_loss), np.asarray(pmf._probs), float(pmf._infinity_mass), float(
        pmf._discretization
    )


def _kernel(mu: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``δ_G(μ, x) = E[(1 - e^{x - L})_+]`` with ``L ~ N(μ²/2, μ²)``, any real x."""
    mu, x = np.broadcast_arrays(mu, x)
    logd, _ = _gauss_log_terms(mu, x)
    return np.exp(logd)


def _exact_delta(lower, probs, inf, h, mu, eps) -> np.ndarray:
    """δ at ``eps[i]`` of the PMF composed with GDP(``mu[i]``), by direct sums."""
    losses = (lower + np.arange(probs.size)) * h
    out = np.empty(mu.size)
    step = max(1, _CHUNK // max(probs.size, 1))
    for s in range(0, mu.size, step):
        sl = slice(s, s + step)
        out[sl] = inf + _kernel(mu[sl, None], eps[sl, None] - losses[None, :]) @ probs
    return out


def _epsilon_one_side(pmf, mu: np.ndarray, delta: float, eps_max: np.ndarray) -> np.ndarray:
    from scipy import signal

    lower, probs, inf, h = _dense(pmf)
    out = np.full(mu.size, np.inf)
    if inf >= delta:
        return out
    s_len = probs.size
    steps = int(np.ceil(eps_max.max() / h)) + 2
    t = np.arange(steps + s_len - 1) - lower - s_len + 1  # kernel argument / h
    idx = np.empty(mu.size, np.int64)
    batch = max(1, _CHUNK // t.size)
    for s in range(0, mu.size, batch):
        sl = slice(s, s + batch)
        kern = _kernel(mu[sl, None], t[None, :] * h)
        conv = signal.fftconvolve(kern, probs[None, :], axes=1)[:, s_len - 1 : s_len - 1 + steps]
        ok = inf + conv <= delta
        ok[:, -1] = True  # eps_max meets δ by construction
        idx[sl] = ok.argmax(axis=1)
    # The FFT has rounding noise of ~1e-16 per unit mass: confirm each grid point exactly.
    j = idx.copy()
    while True:
        d_hi = _exact_delta(lower, probs, inf, h, mu, j * h)
        bad = d_hi > delta
        if not bad.any():
            break
        j[bad] += 1
    d_lo = _exact_delta(lower, probs, inf, h, mu, np.maximum(j - 1, 0) * h)
    out = np.zeros(mu.size)
    pos = (j > 0) & (d_lo > delta)
    e_lo, e_hi = np.exp((j[pos] - 1) * h), np.exp(j[pos] * h)
    frac = (d_lo[pos] - delta) / (d_lo[pos] - d_hi[pos])
    out[pos] = np.log(e_lo + frac * (e_hi - e_lo))
    out[(j > 0) & ~pos] = (j[(j > 0) & ~pos] - 1) * h
    return out


def epsilon_with_gaussian(pld, mu: np.ndarray, delta: float) -> np.ndarray:
    """ε(δ) of ``pld`` composed with μ-Gaussian DP, for each ``mu`` (μ > 0).

    Sound for the true composition whenever ``pld`` is pessimistic (dp_accounting's
    default); the ε grid step is the PLD's own, and the chord interpolation keeps the
    result an upper bound.
    """
    mu = np.asarray(mu, dtype=float)
    if mu.size == 0:
        return np.empty(0)
    eps_max = pld.get_epsilon_for_delta(delta / 2) + gaussian_epsilon(mu, delta / 2)
    out = _epsilon_one_side(pld._pmf_remove, mu, delta, eps_max)
    if pld._pmf_add is not pld._pmf_remove:
        out = np.maximum(out, _epsilon_one_side(pld._pmf_add, mu, delta, eps_max))
    return out
