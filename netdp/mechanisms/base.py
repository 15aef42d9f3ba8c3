"""The interface every local randomizer shares."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import ClassVar

import numpy as np
import numpy.typing as npt


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


def memory_total(*parts: int) -> int:
    """The sum of the estimated parts of a run's memory, plus a quarter of slack (numpy's
    small temporaries, rounding of the block sizes)."""
    return int(1.25 * sum(parts))


class FrequencyOracle(ABC):
    """An ε-LDP randomizer for a category in ``{0..d-1}`` with an additive aggregate.

    A report is one row of the array :meth:`perturb` returns. :meth:`aggregate` maps
    reports to a fixed-length vector that adds up over disjoint groups of reports
    (``aggregate(a ++ b) == aggregate(a) + aggregate(b)``), so a token can carry the
    running aggregate through a protocol; :meth:`estimate_counts` debiases it.
    :meth:`perturb_aggregate` does both without holding more than about
    :attr:`budget_bytes` of reports at once, and :meth:`memory_bytes` (or, before
    building the oracle, :meth:`memory_bound`) says how much memory a run takes.

    Subclasses are frozen dataclasses with ``epsilon`` and ``domain`` (d) fields.
    """

    name: str
    epsilon: float
    domain: int
    delta: float = 0.0

    #: Working set (bytes) of the reports randomized and aggregated at once.
    budget_bytes: ClassVar[int] = 128 << 20
    #: Reports the histogram protocols hand to :meth:`perturb_aggregate` per call; the
    #: draws of a call are those of one :meth:`perturb` of its values.
    call_rows: ClassVar[int] = 1 << 16
    #: Bytes per report that a call holds besides the reports' blocks (values, indices).
    _row_overhead: ClassVar[int] = 32
    #: Fixed slack of :meth:`memory_bytes` (small arrays, interpreter noise).
    _fixed_bytes: ClassVar[int] = 1 << 20

    @abstractmethod
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Randomize every user's category at once: one report per row."""

    @abstractmethod
    def aggregate(self, reports: np.ndarray) -> np.ndarray:
        """The additive summary of a set of reports (a float or int vector)."""

    @abstractmethod
    def estimate_counts(self, aggregate: npt.ArrayLike, n: int) -> np.ndarray:
        """Unbiased count of each category from the aggregate of ``n`` reports."""

    @abstractmethod
    def variance(self, frequencies: np.ndarray, n: int) -> np.ndarray:
        """Closed-form variance of each estimated frequency for true ``frequencies``."""

    @abstractmethod
    def describe(self) -> dict:
        """Parameters and derived figures, for reports (JSON-safe)."""

    def report_scores(self, reports: np.ndarray, items: Sequence[int]) -> np.ndarray:
        """``(len(reports), len(items))``: each report's evidence for these categories, its
        own term in the count estimates up to an affine map shared by every category (a
        pure oracle's support), what an auditor scores a report by.

        The default estimates from the reports one at a time; oracles whose reports show
        their support directly say so faster.
        """
        out = np.empty((len(reports), len(items)))
        for i in range(len(reports)):
            counts = self.estimate_counts(self.aggregate(reports[i:i + 1]), 1)
            out[i] = np.asarray(counts, dtype=float)[list(items)]
        return out

    def estimate(self, reports: np.ndarray) -> np.ndarray:
        """Unbiased frequency of each category (never clipped or renormalised)."""
        n = len(reports)
        return self.estimate_counts(self.aggregate(reports), n) / n

    # -- memory ------------------------------------------------------------------------

    def report_bytes(self) -> int:
        """Peak bytes per report of :meth:`perturb` then :meth:`aggregate`: the report and
        the temporaries that scale with it."""
        return 64

    def block_rows(self) -> int:
        """Reports randomized at once by :meth:`perturb_aggregate`: as many as fit
        :attr:`budget_bytes` (at least one)."""
        return max(1, self.budget_bytes // max(1, self.report_bytes()))

    def perturb_aggregate(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``aggregate(perturb(values, rng))`` in blocks of :meth:`block_rows` reports.

        A single block (the values fit the budget) gives exactly the draws of one
        :meth:`perturb` call. Oracles whose reports are large override this with a
        blocked version that keeps those draws whatever the block size; here the blocks
        are separate :meth:`perturb` calls, so the draws depend on the block size.
        """
        values = np.asarray(values)
        rows = self.block_rows()
        total: np.ndarray | None = None
        for start in range(0, max(1, values.size), rows):
            part = self.aggregate(self.perturb(values[start:start + rows], rng))
            if total is None:
                total = part
            else:
                total += part
        assert total is not None  # the loop runs at least once
        return total

    def table_bytes(self) -> int:
        """Bytes of the oracle's own tables (hash tables, decoders); 0 when it has none."""
        return 0

    def vector_bytes(self) -> int:
        """Peak bytes of the vectors of length ~d that a run holds at once: the running
        aggregate and a part of it, the estimate and the temporaries of
        :meth:`estimate_counts` and :meth:`variance`."""
        return 4 * 8 * self.domain

    def working_bytes(self, rows: int) -> int:
        """Peak bytes of one :meth:`perturb_aggregate` call on ``rows`` values, besides
        the vectors of :meth:`vector_bytes`."""
        rows = max(0, int(rows))
        return min(rows, self.block_rows()) * self.report_bytes() + rows * self._row_overhead

    def memory_bytes(self, reports: int) -> int:
        """Upper estimate (bytes) of the peak memory of a histogram run of ``reports``
        reports with this oracle.

        Counts the oracle's tables, one :meth:`perturb_aggregate` call of at most
        :attr:`call_rows` values (as ``histogram.aggregate_reports`` makes them), the
        running aggregate, :meth:`estimate_counts` and :meth:`variance`. Not counted: the
        caller's own arrays (the categories, the true frequencies, copies of the
        aggregate). Cheap: nothing is allocated.
        """
        rows = min(max(0, int(reports)), self.call_rows)
        return memory_total(self.table_bytes(), self.vector_bytes(), self.working_bytes(rows),
                            self._fixed_bytes)

    @classmethod
    def memory_bound(cls, epsilon: float, domain: int, reports: int, **options) -> int:
        """:meth:`memory_bytes` of ``cls(epsilon, domain, **options)``, without building
        its tables (construction is cheap for every oracle but RAPPOR, which overrides
        this)."""
        build: Callable[..., FrequencyOracle] = cls  # a concrete subclass's constructor
        return build(epsilon, domain, **options).memory_bytes(reports)
