"""Additive-noise randomizers for numbers: Gaussian and Laplace (built by name with
:func:`netdp.mechanisms.additive`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from netdp.core.errors import check
from netdp.core.roots import smallest_within
from netdp.mechanisms.base import AdditiveNoise


def log_ndtr(x: float) -> float:
    """``log Φ(x)``, the log of the standard normal CDF, accurate in both tails.

    ``erfc`` where it is representable; below ``x = -35`` the asymptotic series
    ``Φ(x) = φ(x) / |x| · Σ_k (-1)^k (2k-1)!! / x^(2k)``, whose terms fall below 1e-17 of
    the first by ``k = 8`` there. (Plain ``math``: the default run loads no scipy.)
    """
    if x > 0.0:
        return math.log1p(-0.5 * math.erfc(x / _SQRT2))
    if x > -35.0:
        return math.log(0.5 * math.erfc(-x / _SQRT2))
    inv2, term, total = 1.0 / (x * x), 1.0, 1.0
    for k in range(1, 12):
        term *= -(2 * k - 1) * inv2
        total += term
    return -0.5 * x * x - math.log(-x) - 0.5 * math.log(2.0 * math.pi) + math.log(total)


_SQRT2 = math.sqrt(2.0)


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """Exact δ(ε) of the Gaussian mechanism (Balle & Wang 2018, Theorem 8).

    ``Φ(Δ/(2σ) - εσ/Δ) - e^ε Φ(-Δ/(2σ) - εσ/Δ)``, evaluated in log space.
    """
    mu = sensitivity / sigma
    a = log_ndtr(mu / 2 - epsilon / mu)
    b = epsilon + log_ndtr(-mu / 2 - epsilon / mu)
    return float(math.exp(a) * -math.expm1(b - a)) if b < a else 0.0


def analytic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest σ whose Gaussian mechanism is (ε, δ)-DP, exact for every ε > 0.

    δ(σ) falls with σ: the first float σ with ``δ(σ) <= δ``, by bisection on ``log σ``
    (:func:`netdp.core.roots.smallest_within`) in a bracket widened by factors of
    ``e^10`` around the sensitivity until it holds the answer.
    """

    def delta_of(sigma: float) -> float:
        return gaussian_delta(sigma, epsilon)

    # δ depends on σ / Δ alone: solved at Δ = 1 and scaled, so that a subnormal or huge
    # sensitivity neither underflows the bracket nor overflows it
    lo, hi = math.exp(-10.0), math.exp(10.0)
    while delta_of(lo) <= delta:
        lo *= math.exp(-10.0)
    while delta_of(hi) > delta:
        hi *= math.exp(10.0)
    sigma = sensitivity * smallest_within(delta_of, delta, lo, hi, param="delta", scale="log")
    while sigma < math.inf and gaussian_delta(sigma, epsilon, sensitivity) > delta:
        sigma = math.nextafter(sigma, math.inf)  # the scaling's rounding, never below
    return sigma


def classic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """``Δ sqrt(2 ln(1.25/δ)) / ε`` (Dwork & Roth, Theorem A.1; valid for ε <= 1)."""
    return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon


@dataclass(frozen=True)
class Gaussian(AdditiveNoise):
    """``x + N(0, σ²)``, σ calibrated to (ε, δ) and the sensitivity.

    Parameters
    ----------
    epsilon, delta
        Privacy level of one release.
    sensitivity
        Largest change of the value between neighbouring datasets.
    calibration
        ``analytic`` (default, exact for every ε) or ``classic`` (ε <= 1 only).
    """

    epsilon: float
    delta: float
    sensitivity: float = 1.0
    calibration: str = "analytic"
    sigma: float = field(init=False)
    name = "gaussian"

    def __post_init__(self) -> None:
        check(self.epsilon > 0 and math.isfinite(self.epsilon), "epsilon",
              f"must be a finite number > 0 (got {self.epsilon})")
        check(0 < self.delta < 1, "delta",
              f"the Gaussian mechanism needs 0 < delta < 1 (got {self.delta})")
        check(self.sensitivity > 0, "sensitivity", f"must be > 0 (got {self.sensitivity})")
        check(self.calibration in ("analytic", "classic"), "calibration",
              f"must be analytic or classic (got {self.calibration!r})")
        if self.calibration == "classic":
            check(self.epsilon <= 1, "epsilon", "the classic Gaussian calibration holds only "
                  f"for epsilon <= 1 (got {self.epsilon}); use --calibration analytic")
            sigma = classic_sigma(self.epsilon, self.delta, self.sensitivity)
        else:
            sigma = analytic_sigma(self.epsilon, self.delta, self.sensitivity)
        object.__setattr__(self, "sigma", sigma)

    @property
    def std(self) -> float:
        return self.sigma

    def noise(self, rng: np.random.Generator, size) -> np.ndarray:
        return rng.standard_normal(size) * self.sigma

    def describe(self) -> dict:
        return {"name": self.name, "epsilon": self.epsilon, "delta": self.delta,
                "sensitivity": self.sensitivity, "calibration": self.calibration,
                "sigma": self.sigma}


@dataclass(frozen=True)
class Laplace(AdditiveNoise):
    """``x + Lap(Δ/ε)``: ε-DP, variance ``2 Δ² / ε²``."""

    epsilon: float
    sensitivity: float = 1.0
    delta: float = 0.0
    scale: float = field(init=False)
    name = "laplace"

    def __post_init__(self) -> None:
        check(self.epsilon > 0 and math.isfinite(self.epsilon), "epsilon",
              f"must be a finite number > 0 (got {self.epsilon})")
        check(self.sensitivity > 0, "sensitivity", f"must be > 0 (got {self.sensitivity})")
        check(self.delta == 0, "delta", "the Laplace mechanism is pure DP: delta is 0")
        object.__setattr__(self, "scale", self.sensitivity / self.epsilon)

    @property
    def std(self) -> float:
        return math.sqrt(2) * self.scale

    def noise(self, rng: np.random.Generator, size) -> np.ndarray:
        return rng.laplace(0.0, self.scale, size)

    def describe(self) -> dict:
        return {"name": self.name, "epsilon": self.epsilon, "delta": 0.0,
                "sensitivity": self.sensitivity, "scale": self.scale}
