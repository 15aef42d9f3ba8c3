"""Bounded numeric randomizers (Duchi, Piecewise, Hybrid): a report replaces the value; built
by name with :func:`netdp.mechanisms.numeric`.

All three are unbiased (the report is its own estimate) and pure (δ = 0). See
``mechanisms.md`` and Wang et al., "Collecting and Analyzing Multidimensional Data with
Local Differential Privacy" (ICDE 2019).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from netdp.core.errors import check
from netdp.mechanisms._oracle import check_epsilon
from netdp.mechanisms.base import Mechanism

#: Hybrid mixes in the Piecewise Mechanism only above this ε (Wang et al. 2019, ε*).
HYBRID_THRESHOLD = 0.61


def _check_values(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    check(bool(np.all(np.abs(values) <= 1)), "values",
          "inputs must lie in [-1, 1] (got "
          f"{values[~(np.abs(values) <= 1)].ravel()[:3].tolist()} ...)")
    return values


def _expm1(x: float) -> float:
    """``e^x - 1``, saturating instead of overflowing (x > 700 is ε-irrelevant)."""
    return math.expm1(min(x, 700.0))


@dataclass(frozen=True)
class _PureNumeric(Mechanism):
    """An unbiased ε-LDP randomizer of a number in [-1, 1]: the report is its own estimate.

    ``Cls(epsilon, delta=0.0)``: ε (> 0); δ is always 0 (pure LDP).
    """

    epsilon: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check(self.delta == 0, "delta",
              f"this mechanism is pure LDP: delta must be 0 (got {self.delta})")

    def estimate(self, reports: np.ndarray) -> np.ndarray:
        return np.asarray(reports, dtype=float)


@dataclass(frozen=True)
class Duchi(_PureNumeric):
    """Duchi et al.'s one-dimensional randomizer: output ``±C``.

    ``C = (e^ε+1)/(e^ε-1)`` and ``P[+C] = 1/2 + x (e^ε-1)/(2(e^ε+1)) = 1/2 + x/(2C)``.
    Unbiased, variance ``C² - x²``.
    """

    C: float = field(init=False)
    name = "duchi"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "C", 1.0 / math.tanh(self.epsilon / 2))

    def prob_plus(self, values: np.ndarray) -> np.ndarray:
        """``P[report = +C]`` for each input."""
        return 0.5 + np.asarray(values, dtype=float) / (2 * self.C)

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        values = _check_values(values)
        plus = rng.random(values.shape) < self.prob_plus(values)
        return np.where(plus, self.C, -self.C)

    def variance(self, values: np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        return self.C**2 - values**2

    def describe(self) -> dict:
        return {"name": self.name, "epsilon": float(self.epsilon), "delta": 0.0,
                "C": self.C, "max_variance": self.C**2}


@dataclass(frozen=True)
class Piecewise(_PureNumeric):
    """Piecewise Mechanism (Wang et al. ICDE 2019).

    With ``t = e^{ε/2}``, ``C = (t+1)/(t-1)``, ``l(x) = (C+1)x/2 - (C-1)/2`` and
    ``r(x) = l(x) + C - 1``: with probability ``t/(t+1)`` report uniform on
    ``[l(x), r(x)]``, else uniform on ``[-C, l(x)) ∪ (r(x), C]``. The density is
    ``p = t(t-1)/(2(t+1))`` on the centre piece and ``p/e^ε`` elsewhere. Unbiased,
    variance ``x²/(t-1) + (t+3)/(3(t-1)²)``.
    """

    C: float = field(init=False)
    p_centre: float = field(init=False)
    density_high: float = field(init=False)
    density_low: float = field(init=False)
    name = "piecewise"

    def __post_init__(self) -> None:
        super().__post_init__()
        half = self.epsilon / 2
        C = 1.0 / math.tanh(self.epsilon / 4)  # (t+1)/(t-1)
        p_centre = 1.0 / (1.0 + math.exp(-half))  # t/(t+1)
        object.__setattr__(self, "C", C)
        object.__setattr__(self, "p_centre", p_centre)
        object.__setattr__(self, "density_high", p_centre * _expm1(half) / 2)
        object.__setattr__(self, "density_low", (1 - p_centre) / (C + 1))

    def interval(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The high-density piece ``[l(x), r(x)]`` for each input."""
        values = np.asarray(values, dtype=float)
        left = (self.C + 1) * values / 2 - (self.C - 1) / 2
        return left, left + self.C - 1

    def density(self, reports: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Density of ``report`` given input ``value`` (broadcast), 0 outside ``[-C, C]``."""
        reports = np.asarray(reports, dtype=float)
        left, right = self.interval(values)
        centre = (reports >= left) & (reports <= right)
        inside = np.abs(reports) <= self.C
        return np.where(centre, self.density_high, np.where(inside, self.density_low, 0.0))

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        values = _check_values(values)
        left, right = self.interval(values)
        centre = rng.random(values.shape) < self.p_centre
        u = rng.random(values.shape)
        inner = left + u * (self.C - 1)
        # the outer pieces [-C, l) and (r, C] have total length C + 1; walk along them
        s = u * (self.C + 1)
        left_len = left + self.C
        outer = np.where(s < left_len, s - self.C, right + (s - left_len))
        return np.where(centre, inner, outer)

    def variance(self, values: np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        tm1 = _expm1(self.epsilon / 2)
        return values**2 / tm1 + (tm1 + 4) / (3 * tm1**2)

    def describe(self) -> dict:
        return {"name": self.name, "epsilon": float(self.epsilon), "delta": 0.0,
                "C": self.C, "p_centre": self.p_centre,
                "max_variance": float(self.variance(np.array(1.0)))}


@dataclass(frozen=True)
class Hybrid(_PureNumeric):
    """Hybrid Mechanism (Wang et al. ICDE 2019).

    For ``ε > 0.61`` run the Piecewise Mechanism with probability ``α = 1 - e^{-ε/2}``,
    else Duchi et al.; for ``ε <= 0.61`` Duchi alone (α = 0). Both parts are unbiased
    and ε-LDP, so the mixture is too, with variance
    ``α Var_PM(x) + (1 - α) Var_Duchi(x)``.
    """

    alpha: float = field(init=False)
    duchi: Duchi = field(init=False, repr=False)
    piecewise: Piecewise = field(init=False, repr=False)
    name = "hybrid"

    def __post_init__(self) -> None:
        super().__post_init__()
        alpha = -math.expm1(-self.epsilon / 2) if self.epsilon > HYBRID_THRESHOLD else 0.0
        object.__setattr__(self, "alpha", alpha)
        object.__setattr__(self, "duchi", Duchi(self.epsilon))
        object.__setattr__(self, "piecewise", Piecewise(self.epsilon))

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        values = _check_values(values)
        if self.alpha == 0.0:
            return self.duchi.perturb(values, rng)
        use_pm = rng.random(values.shape) < self.alpha
        out = np.empty(values.shape)
        out[use_pm] = self.piecewise.perturb(values[use_pm], rng)
        out[~use_pm] = self.duchi.perturb(values[~use_pm], rng)
        return out

    def variance(self, values: np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        var_d = self.duchi.variance(values)
        if self.alpha == 0.0:
            return var_d
        return self.alpha * self.piecewise.variance(values) + (1 - self.alpha) * var_d

    def describe(self) -> dict:
        return {"name": self.name, "epsilon": float(self.epsilon), "delta": 0.0,
                "alpha": self.alpha, "threshold": HYBRID_THRESHOLD,
                "C_duchi": self.duchi.C, "C_piecewise": self.piecewise.C,
                "max_variance": float(self.variance(np.array(1.0)))}
