"""Hadamard response: one randomized Hadamard coefficient per user (HCMS without hashing).

Construction (the standard Hadamard-response / HCMS one-bit scheme):

* pad the domain to ``m = next_power_of_two(d + 1)`` and encode category ``v`` by row
  (= column, H is symmetric) ``v + 1`` of the Sylvester matrix ``H_m``;
* a user draws a coefficient ``j`` uniformly in ``[0, m)``, computes the ±1 bit
  ``H[v+1, j]`` and flips it with probability ``1/(e^ε+1)``; the report is ``(j, bit)``;
* the server sums the bits per coefficient, ``S[j] = sum of bits with index j``, and
  estimates ``count_i = c_ε (S H)[i+1] = c_ε fwht(S)[i+1]``, ``c_ε = (e^ε+1)/(e^ε-1)``.

Why row ``v + 1`` and not ``v``: row 0 of ``H`` is all ones. An item encoded by it
would send +1 (before flipping) whatever coefficient it draws, so its signal would be
the plain mean of all bits, indistinguishable from any uniform bias of the bits (a
miscalibrated coin, or attackers who always send +1). Every other row is balanced
(m/2 entries of each sign), so a uniform shift of ``S`` cancels in every estimate, and
``c_ε fwht(S)[0]`` (expectation 0) is left as a free noise check. Unbiasedness itself
does not need the shift: it comes from drawing ``j`` uniformly over *all* m coefficients,
the uninformative ``j = 0`` included, so that ``(1/m) sum_j H[a, j] H[b, j] = 1[a = b]``.

Unbiasedness and variance. One report contributes ``X_i = c_ε bit H[i+1, j]`` to the
count of ``i``. ``E[bit | j] = H[v+1, j] (e^ε-1)/(e^ε+1) = H[v+1, j] / c_ε``, hence
``E[X_i] = E_j[H[i+1, j] H[v+1, j]] = 1[i = v]``. ``|X_i| = c_ε`` always, so
``Var[X_i] = c_ε² - 1[i = v]``. Reports are independent: the variance of an estimated
frequency is ``(c_ε² - f_i) / n``; the frequency term is not zero, it is ``-f_i / n``.

Pure-LDP view: the report supports ``i`` when ``bit H[i+1, j] = +1``; then
``p* = e^ε/(e^ε+1)``, ``q* = 1/2`` (two distinct balanced rows agree on half the
columns), ``p* - q* = 1/(2 c_ε)``, and the generic estimator and variance of
:mod:`netdp.mechanisms._oracle` give exactly the figures above.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from netdp.core.errors import check
from netdp.mechanisms._hadamard import fwht, hadamard_entry, next_power_of_two
from netdp.mechanisms._oracle import (
    check_aggregate,
    check_categories,
    check_count,
    check_domain,
    check_epsilon,
    check_reports,
)
from netdp.mechanisms.base import FrequencyOracle


@dataclass(frozen=True)
class HadamardResponse(FrequencyOracle):
    """Hadamard response: ε-LDP, one coefficient index and one bit per user.

    ``HadamardResponse(epsilon, domain)``: ε of one report (> 0), number of categories d
    (>= 2).

    Attributes
    ----------
    m
        Padded size ``next_power_of_two(domain + 1)``; the aggregate has m entries.
    p
        Probability of sending the true bit, ``e^ε/(e^ε+1)``.
    c_eps
        Debiasing factor ``(e^ε+1)/(e^ε-1)``.
    """

    epsilon: float
    domain: int
    m: int = field(init=False)
    p: float = field(init=False)
    c_eps: float = field(init=False)
    name = "hr"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_domain(self.domain)
        e = math.exp(self.epsilon)
        object.__setattr__(self, "m", next_power_of_two(self.domain + 1))
        object.__setattr__(self, "p", e / (e + 1))
        object.__setattr__(self, "c_eps", (e + 1) / math.expm1(self.epsilon))

    @property
    def p_star(self) -> float:
        """Probability that a report supports its own category: ``e^ε/(e^ε+1)``."""
        return self.p

    @property
    def q_star(self) -> float:
        """Probability that a report supports a given other category: ``1/2``."""
        return 0.5

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Reports as an int64 array (n, 2): coefficient ``j`` and bit in {-1, +1}.

        Draws, in order: one coefficient per user, uniform in ``[0, m)``, then one
        uniform per user (the bit ``H[v+1, j]`` is kept when it is below ``p``).
        """
        v = check_categories(values, self.domain)
        n = v.size
        j = rng.integers(0, self.m, n)
        keep = rng.random(n) < self.p
        bit = hadamard_entry(v + 1, j)
        out = np.empty((n, 2), dtype=np.int64)
        out[:, 0] = j
        out[:, 1] = np.where(keep, bit, -bit)
        return out

    def aggregate(self, reports: np.ndarray) -> np.ndarray:
        """int64 vector of length m: the sum of the reported bits per coefficient.

        The factor ``c_ε`` is applied in :meth:`estimate_counts`, so the aggregate is an
        exact integer and adds up exactly over groups of reports.
        """
        reports = check_reports(reports, 2, "(j, bit)")
        j, bit = reports[:, 0], reports[:, 1]
        if len(reports):
            check(j.min() >= 0 and j.max() < self.m and bool(np.all(np.abs(bit) == 1)),
                  "reports", f"need 0 <= j < {self.m} and bit in {{-1, +1}}")
        out = np.bincount(j[bit > 0], minlength=self.m).astype(np.int64, copy=False)
        out *= 2
        out -= np.bincount(j, minlength=self.m)
        return out

    def report_scores(self, reports: np.ndarray, items: Sequence[int]) -> np.ndarray:
        """A report ``(j, bit)`` counts ``bit · H[i+1, j]`` towards category i."""
        reports = np.asarray(reports, dtype=np.int64)
        return np.stack([reports[:, 1] * hadamard_entry(np.full(len(reports), int(i) + 1),
                                                        reports[:, 0])
                         for i in items], axis=1).astype(float)

    def estimate_counts(self, aggregate: npt.ArrayLike, n: int) -> np.ndarray:
        """``c_ε fwht(S)[i+1]`` for each category i (n only checked; not needed).

        ``aggregate`` may be stacked along leading axes.
        """
        check_count(n)
        agg = check_aggregate(aggregate, self.m)
        return self.c_eps * fwht(agg)[..., 1:self.domain + 1]

    def variance(self, frequencies: np.ndarray, n: int) -> np.ndarray:
        """``(c_ε² - f) / n`` for each true frequency ``f`` (derivation in the module doc)."""
        check_count(n)
        f = np.asarray(frequencies, dtype=float)
        return (self.c_eps**2 - f) / n

    def report_bytes(self) -> int:
        """A report is two int64; drawing it (the Hadamard entry) holds about eight more."""
        return 96

    def vector_bytes(self) -> int:
        """The aggregate and a part of it (m each), the transform and its half-size
        temporary, the estimate and the variance (d each)."""
        return 8 * (4 * self.m + 3 * self.domain)

    def describe(self) -> dict:
        return {"name": self.name, "epsilon": self.epsilon, "delta": 0.0,
                "domain": self.domain, "m": self.m, "p": self.p, "c_eps": self.c_eps,
                "p_star": self.p_star, "q_star": self.q_star,
                "report": "int64 (j, bit): coefficient index and ±1 bit"}
