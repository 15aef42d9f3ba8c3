"""The interface every local randomizer shares."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


class Mechanism(ABC):
    """An (ε, δ)-LDP randomizer applied by each node to its own data.

    Subclasses are frozen dataclasses: their parameters are fixed at construction and
    every figure derived from them (noise scale, p, q, ...) is computed once.
    """

    name: str
    epsilon: float
    delta: float

    @abstractmethod
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Randomize every user's value at once."""

    @abstractmethod
    def estimate(self, reports: np.ndarray) -> np.ndarray:
        """Unbiased estimate of each value from its report."""

    @abstractmethod
    def variance(self, values: np.ndarray) -> np.ndarray:
        """Closed-form variance of :meth:`estimate` for each true value."""

    @abstractmethod
    def describe(self) -> dict:
        """Parameters and derived figures, for reports (JSON-safe)."""


class AdditiveNoise(Mechanism):
    """A mechanism that adds zero-mean noise of a fixed law: ``x + noise``."""

    sensitivity: float

    @property
    @abstractmethod
    def std(self) -> float:
        """Standard deviation of one noise draw."""

    @abstractmethod
    def noise(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> np.ndarray:
        """Draw noise of the given shape."""

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        return values + self.noise(rng, values.shape)

    def estimate(self, reports: np.ndarray) -> np.ndarray:
        return np.asarray(reports, dtype=float)

    def variance(self, values: np.ndarray) -> np.ndarray:
        return np.full(np.shape(values), self.std**2)


class FrequencyOracle(ABC):
    """An ε-LDP randomizer for a category in ``{0..d-1}`` with an additive aggregate.

    A report is one row of the array :meth:`perturb` returns. :meth:`aggregate` maps
    reports to a fixed-length vector that adds up over disjoint groups of reports
    (``aggregate(a ++ b) == aggregate(a) + aggregate(b)``), so a token can carry the
    running aggregate through a protocol; :meth:`estimate_counts` debiases it.

    Subclasses are frozen dataclasses with ``epsilon`` and ``domain`` (d) fields.
    """

    name: str
    epsilon: float
    domain: int
    delta: float = 0.0

    @abstractmethod
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Randomize every user's category at once: one report per row."""

    @abstractmethod
    def aggregate(self, reports: np.ndarray) -> np.ndarray:
        """The additive summary of a set of reports (a float or int vector)."""

    @abstractmethod
    def estimate_counts(self, aggregate: np.ndarray, n: int) -> np.ndarray:
        """Unbiased count of each category from the aggregate of ``n`` reports."""

    @abstractmethod
    def variance(self, frequencies: np.ndarray, n: int) -> np.ndarray:
        """Closed-form variance of each estimated frequency for true ``frequencies``."""

    @abstractmethod
    def describe(self) -> dict:
        """Parameters and derived figures, for reports (JSON-safe)."""

    def estimate(self, reports: np.ndarray) -> np.ndarray:
        """Unbiased frequency of each category (never clipped or renormalised)."""
        n = len(reports)
        return self.estimate_counts(self.aggregate(reports), n) / n
