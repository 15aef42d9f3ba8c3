"""Generalized randomized response (GRR, direct encoding, L-ary RR).

A report supports only itself, so GRR is a pure oracle with ``p* = p`` and ``q* = q``
(:mod:`netdp.mechanisms._oracle` holds the generic estimator and its variance).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from netdp.core.errors import check
from netdp.mechanisms._oracle import (
    DirectSupport,
    bernoulli,
    check_categories,
    check_domain,
    check_epsilon,
)


@dataclass(frozen=True)
class GRR(DirectSupport):
    """Generalized randomized response over ``d`` categories.

    Report the true category with probability ``p = e^ε/(e^ε+d-1)``, else one of the
    ``d-1`` others uniformly (each with ``q = 1/(e^ε+d-1)``). A report supports only
    itself, so ``p* = p`` and ``q* = q``. The AISTATS γ-RR (keep with probability
    ``1-γ``, else uniform over all d values) is the same mechanism with
    ``ε = ln(1 + d(1-γ)/γ)``: see :meth:`from_gamma` and :attr:`gamma`.

    Reports are an int64 array of shape (n,); the aggregate is their histogram.

    Parameters
    ----------
    epsilon
        Privacy level (> 0); exact: ``max p/q = e^ε``.
    domain
        Number of categories d (>= 2).
    """

    epsilon: float
    domain: int
    p: float = field(init=False)
    q: float = field(init=False)
    name = "grr"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_domain(self.domain)
        e_neg = math.exp(-self.epsilon)  # stable for large ε
        denom = 1.0 + (self.domain - 1) * e_neg
        object.__setattr__(self, "p", 1.0 / denom)
        object.__setattr__(self, "q", e_neg / denom)

    @classmethod
    def from_gamma(cls, gamma: float, domain: int) -> GRR:
        """γ-RR: keep w.p. ``1-γ``, else uniform over all ``domain`` values (0 < γ < 1)."""
        check(0 < gamma < 1, "gamma", f"must lie in (0, 1) (got {gamma})")
        check_domain(domain)
        return cls(math.log1p(domain * (1 - gamma) / gamma), domain)

    @property
    def gamma(self) -> float:
        """The γ of the equivalent γ-RR: ``d q = d/(e^ε+d-1)``."""
        return self.domain * self.q

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Reports: int64 array (n,).

        Draws, in order: one Bernoulli(p) per user (keep the value; from the generator's
        bytes, :func:`~netdp.mechanisms._oracle.bernoulli`), then one integer ``r`` in
        ``[0, d-1)`` per user, sent as ``r + (r >= v)`` (uniform over the d - 1 others)
        when the value is not kept.
        """
        values = check_categories(values, self.domain)
        keep = bernoulli(rng, self.p, values.size).view(bool)
        other = rng.integers(0, self.domain - 1, size=values.shape)
        other += other >= values
        return np.where(keep, values, other)

    def aggregate(self, reports: np.ndarray) -> np.ndarray:
        reports = check_categories(reports, self.domain, "reports")
        return np.bincount(reports, minlength=self.domain)

    def report_scores(self, reports: np.ndarray, items: Sequence[int]) -> np.ndarray:
        """A report supports the category it names."""
        return (np.asarray(reports)[:, None] == np.asarray(items)[None, :]).astype(float)

    def describe(self) -> dict:
        return {"name": self.name, "epsilon": float(self.epsilon), "delta": 0.0,
                "domain": int(self.domain), "p": self.p, "q": self.q,
                "p_star": self.p, "q_star": self.q, "gamma": self.gamma}
