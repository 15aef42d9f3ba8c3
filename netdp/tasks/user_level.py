"""User-level DP by contribution bounding: each node holds ``K`` records, keeps ``T``.

The DP query-processing tutorial's *bounding user contribution* approach (Wilson et al.,
PETS 2020, §3; the tutorial's per-partition and cross-partition examples): bound each
user's contribution at a threshold ``t`` fixed without looking at the data, then calibrate
the noise to the user-level sensitivity. Here a node keeps ``T`` of its ``K`` records,
drawn uniformly without replacement, and its whole contribution is one ε-LDP release:

* a sum: the node adds the sum of its kept records, with noise of sensitivity
  ``T (high - low)`` (the naive approach, no bounding, needs ``K (high - low)``: ``K/T``
  times the noise std);
* a histogram: the node adds ``T`` reports of its kept records, each ``ε/T``-LDP (basic
  composition: the cross-partition bound of the tutorial, turned local).

The published estimate is of the total over all ``N = n K`` records, divided by ``N``
(the mean per record, or each category's share of the records). Dropping records biases
it: in expectation a node keeps ``T/K`` of its mass, so the bias is minus the expected
dropped mass, ``-(K - T)/K`` of the truth, over ``N``. The draw of the kept records adds a
variance of its own (without replacement: ``T (K - T)/(K - 1)`` times a node's population
variance of its records, or of its category indicators).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from netdp.core.setup import Setup
from netdp.report.types import fmt


def bound_records(records: np.ndarray, bound: int, rng: np.random.Generator | None) -> np.ndarray:
    """``(n, min(T, K))``: ``T`` of each row's ``K`` records, uniformly without
    replacement (one uniform key per record, the ``T`` smallest kept); all of them, with
    no draw, when ``T >= K``."""
    n, k = records.shape
    if bound >= k:
        return records
    assert rng is not None
    order = np.argsort(rng.random((n, k)), axis=1)[:, :bound]
    return np.take_along_axis(records, order, axis=1)


@dataclass(frozen=True, eq=False)
class UserLevel:
    """The records of the nodes and those each one keeps.

    Attributes
    ----------
    records
        ``(n, K)``: every record (values, or categories).
    kept
        ``(n, T)``: the records each node contributes.
    """

    records: np.ndarray
    kept: np.ndarray

    @classmethod
    def draw(cls, records: np.ndarray, bound: int, rng: np.random.Generator) -> UserLevel:
        """Bound ``records`` (``(n, K)``) at ``bound`` with draws from ``rng``."""
        return cls(records, bound_records(records, bound, rng))

    @property
    def per_node(self) -> int:
        """``K``."""
        return int(self.records.shape[1])

    @property
    def bound(self) -> int:
        """``T`` (at most ``K``)."""
        return int(self.kept.shape[1])

    @property
    def size(self) -> int:
        """``N = n K``: the records the estimate is normalised by."""
        return int(self.records.size)

    @property
    def kept_share(self) -> float:
        """``T / K``: the share of its records a node keeps (1.0 exactly at ``K = T``)."""
        return self.bound / self.per_node

    def _draw_factor(self) -> float:
        """``T (K - T)/(K - 1)``: a without-replacement draw's variance factor."""
        k, t = self.per_node, self.bound
        return 0.0 if t >= k else t * (k - t) / (k - 1)

    # ----------------------------------------------------------------- sums

    def sums(self) -> np.ndarray:
        """Each node's contribution: the sum of its kept records."""
        return self.kept.sum(axis=1)

    def mean(self) -> float:
        """The truth: the mean over all ``N`` records."""
        return float(self.records.reshape(-1).mean())

    def sum_bias(self) -> float:
        """Expected bias of the mean per record: ``-(K - T)/K`` of the mean, i.e. minus
        the expected dropped mass over ``N``."""
        return -(1.0 - self.kept_share) * self.mean()

    def dropped_mass(self) -> float:
        """The mass this draw dropped (its expectation: ``(K - T)/K`` of the total)."""
        return float(self.records.sum() - self.kept.sum())

    def sum_draw_variance(self) -> float:
        """Variance of the mean per record over the draw of the kept records:
        ``Σ_i T (K - T)/(K - 1) σ_i² / N²`` (``σ_i²``: node ``i``'s records' population
        variance)."""
        factor = self._draw_factor()
        if factor == 0.0:
            return 0.0
        return factor * float(self.records.var(axis=1).sum()) / self.size**2

    # ----------------------------------------------------------- histograms

    def categories(self) -> np.ndarray:
        """What a node reports: its kept categories, one row per node (a plain vector
        when ``T = 1``: the record-level task's data)."""
        return self.kept[:, 0] if self.bound == 1 else self.kept

    def frequencies(self, domain: int) -> np.ndarray:
        """The truth: each category's share of all ``N`` records."""
        return np.bincount(self.records.reshape(-1), minlength=domain) / self.size

    def histogram_bias(self, domain: int) -> np.ndarray:
        """Expected bias of each category's share: ``-(K - T)/K f_j``."""
        return -(1.0 - self.kept_share) * self.frequencies(domain)

    def histogram_draw_variance(self, domain: int) -> np.ndarray:
        """Per category, the variance over the draw of the kept records:
        ``Σ_i T (K - T)/(K - 1) p_ij (1 - p_ij) / N²`` (``p_ij``: the share of node
        ``i``'s records in ``j``), from the (node, category) pairs present (no ``n x d``)."""
        factor = self._draw_factor()
        if factor == 0.0:
            return np.zeros(domain)
        n, k = self.records.shape
        pairs = np.repeat(np.arange(n, dtype=np.int64), k) * domain + self.records.reshape(-1)
        cell, count = np.unique(pairs, return_counts=True)
        p = count / k
        return factor * np.bincount(cell % domain, weights=p * (1 - p),
                                    minlength=domain) / self.size**2


@dataclass(frozen=True)
class UserLevelReport:
    """The bias/noise trade-off of one bound, beside the naive approach (no bounding,
    every record at the user-level sensitivity ``K``), on the mean per record (a
    histogram: averaged over the categories). Variances and biases are closed forms;
    ``realized_bias_sq`` is this data's, after this draw of the kept records. ``mse`` is
    ``bias_sq + noise_var + sampling_var + draw_var``; ``None`` where a part has no
    closed form (``sampling_var`` of a walk on a graph without one)."""

    quantity: str
    records_per_node: int
    bound: int
    records: int
    epsilon_node: float
    epsilon_record: float
    expected_dropped: float
    dropped: float
    bias_sq: float
    realized_bias_sq: float
    noise_var: float | None
    sampling_var: float | None
    draw_var: float
    mse: float | None
    naive_noise_var: float | None
    naive_mse: float | None
    noise_std_ratio: float | None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def lines(self) -> list[str]:
        k, t = self.records_per_node, self.bound
        lines = ["", f"  user    {k} records per node, bound T = {t} ({self.records:,} "
                     f"records; each node's contribution eps={self.epsilon_node:g}"
                     + (f", {t} reports at eps={self.epsilon_record:.4g}"
                        if self.quantity == "frequencies" and t > 1 else "") + ")",
                 f"          dropped {fmt(self.dropped)} (expected {fmt(self.expected_dropped)})"
                 f"; bias^2 {fmt(self.bias_sq)} (this draw {fmt(self.realized_bias_sq)})",
                 f"          variance: noise {fmt(self.noise_var)}, walk sampling "
                 f"{fmt(self.sampling_var)}, bounding draw {fmt(self.draw_var)}; "
                 f"MSE {fmt(self.mse)}"]
        ratio = "" if self.noise_std_ratio is None else \
            f"; noise std x{self.noise_std_ratio:.3g}"
        lines.append(f"          naive (no bound, c = {k}): MSE {fmt(self.naive_mse)} "
                     f"(noise {fmt(self.naive_noise_var)}{ratio})")
        return lines


def total(*parts: float | None) -> float | None:
    """The sum, or ``None`` when a part is unknown."""
    return None if any(p is None for p in parts) else float(sum(p for p in parts
                                                                  if p is not None))


def sqrt_ratio(a: float | None, b: float | None) -> float | None:
    """``sqrt(a / b)`` where both are known and ``b > 0``."""
    return None if a is None or b is None or b <= 0 else math.sqrt(a / b)


@dataclass(frozen=True, eq=False, kw_only=True)
class UserLevelSetup(Setup):
    """A setup whose nodes hold several records each: ``users``, the records each node
    keeps (:class:`UserLevel`); ``data`` holds what each node contributes."""

    users: UserLevel


def users_of(setup: Setup) -> UserLevel:
    """The records of a :class:`UserLevelSetup`."""
    assert isinstance(setup, UserLevelSetup), type(setup)
    return setup.users
