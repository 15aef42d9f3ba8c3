"""An empirical lower bound on ε from the scores of a test statistic in two worlds.

Spec accounting.md §5. The auditor sees, for many trials in world 0 (input ``x``) and
world 1 (its neighbour ``x'``), one score per trial, larger meaning "world 1" (a
log-likelihood ratio where the output law is known). It fits the rejection threshold on
one split of the trials and counts the errors of that fixed test on the other, so that
choosing among many thresholds costs no multiple-testing correction. Clopper-Pearson
bounds on the two error rates (Kairouz, Oh and Viswanath 2015) give ε_lb; for Gaussian
mechanisms the Gaussian-DP fit (Dong, Roth and Su 2022) gives μ_lb and its ε.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from netdp.audit.lower_bounds import (
    epsilon_ceiling,
    epsilon_lower_bound,
    gaussian_mu_lower_bound,
    gdp_epsilon,
    log_ratio_bounds,
)


@dataclass(frozen=True)
class SplitThreshold:
    """Fit the threshold on the first ``fit_fraction`` of each world's trials, among at
    most ``candidates`` quantiles of their scores; count errors on the rest."""

    fit_fraction: float = 0.5
    candidates: int = 256

    def __post_init__(self) -> None:
        if not 0 < self.fit_fraction < 1:
            raise ValueError(f"fit_fraction must lie in (0, 1) (got {self.fit_fraction})")
        if self.candidates < 1:
            raise ValueError(f"candidates must be at least 1 (got {self.candidates})")

    def fit_size(self, trials: int) -> int:
        """How many of ``trials`` trials per world fit the test."""
        return max(1, min(trials - 1, int(trials * self.fit_fraction)))


@dataclass(frozen=True)
class AuditResult:
    """One audit: the test, its errors on the held-out trials, and what they prove.

    Attributes
    ----------
    method
        How the test was chosen and bounded.
    trials
        Held-out trials per world (the counts below are out of these).
    confidence, delta
        The confidence of the bound and the δ it is stated at.
    threshold
        The fitted test: "world 1" when the score exceeds it.
    false_positives, false_negatives
        World-0 trials above the threshold, world-1 trials at or below it.
    epsilon_lower
        ε_lb by Clopper-Pearson.
    ceiling
        The largest ε_lb any test could prove with these trials (no error at all).
    mu_lower, gdp_epsilon
        The Gaussian-DP fit μ_lb and the ε it implies at ``delta`` (``None`` unless asked).
    """

    method: str
    trials: int
    confidence: float
    delta: float
    threshold: float
    false_positives: int
    false_negatives: int
    epsilon_lower: float
    ceiling: float
    mu_lower: float | None = None
    gdp_epsilon: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The fields, JSON-safe (``None`` ones left out)."""
        out = {k: v for k, v in self.__dict__.items() if v is not None}
        return {k: (float(v) if isinstance(v, np.floating) else v) for k, v in out.items()}


class Auditor:
    """Lower bounds on ε from scores of a distinguishing test in two neighbouring worlds.

    Parameters
    ----------
    scores0, scores1
        One score per trial in world 0 and world 1 (same number), larger for world 1.
    confidence
        The confidence of every bound (default 95 %).
    delta
        The δ the lower bound on ε is stated at.
    """

    def __init__(self, scores0: np.ndarray, scores1: np.ndarray, confidence: float = 0.95,
                 delta: float = 0.0) -> None:
        scores0 = np.asarray(scores0, dtype=float).ravel()
        scores1 = np.asarray(scores1, dtype=float).ravel()
        if scores0.size != scores1.size:
            raise ValueError(f"need as many trials in both worlds (got {scores0.size} and "
                             f"{scores1.size})")
        if scores0.size < 4:
            raise ValueError(f"need at least 4 trials per world (got {scores0.size})")
        if np.isnan(scores0).any() or np.isnan(scores1).any():
            raise ValueError("scores must not be NaN")
        if not 0 < confidence < 1:
            raise ValueError(f"confidence must lie in (0, 1) (got {confidence})")
        if not 0 <= delta < 1:
            raise ValueError(f"delta must lie in [0, 1) (got {delta})")
        self.scores0, self.scores1 = scores0, scores1
        self.confidence, self.delta = confidence, delta

    def audit(self, strategy: SplitThreshold | None = None,
              gaussian: bool = False) -> AuditResult:
        """Fit the threshold on the first split, bound ε with the errors on the second.

        ``gaussian`` adds the Gaussian-DP fit on the same counts.
        """
        strategy = strategy or SplitThreshold()
        fit = strategy.fit_size(self.scores0.size)
        threshold = best_threshold(self.scores0[:fit], self.scores1[:fit], strategy.candidates,
                                   self.delta, self.confidence)
        held0, held1 = self.scores0[fit:], self.scores1[fit:]
        trials = held0.size
        fp = int(np.count_nonzero(held0 > threshold))
        fn = int(np.count_nonzero(held1 <= threshold))
        eps = epsilon_lower_bound(fp, fn, trials, self.delta, self.confidence)
        mu = gdp = None
        if gaussian:
            mu = max(gaussian_mu_lower_bound(fp, fn, trials, self.confidence),
                     gaussian_mu_lower_bound(fn, fp, trials, self.confidence))
            gdp = gdp_epsilon(mu, self.delta)
        return AuditResult(
            f"threshold fitted on {fit} trials per world, Clopper-Pearson on the other "
            f"{trials}" + (" and a Gaussian-DP fit" if gaussian else ""),
            trials, self.confidence, self.delta, float(threshold), fp, fn, eps,
            epsilon_ceiling(trials, self.delta, self.confidence), mu, gdp)


def cell_scores(features0: np.ndarray, features1: np.ndarray, fit: int,
                max_cells: int = 64) -> tuple[np.ndarray, np.ndarray] | None:
    """A small classifier for finite outputs: each trial's score is the log of how much
    more often its output cell (its row of ``features``) came from world 1 than from world
    0 among the first ``fit`` trials of each world (counts smoothed by 1/2). Fitted on that
    split only, so the other split still counts errors of a fixed test. ``None`` when the
    outputs take more than ``max_cells`` values."""
    rows = np.concatenate([np.asarray(features0), np.asarray(features1)])
    rows = rows.reshape(rows.shape[0], -1)
    key = np.zeros(rows.shape[0], dtype=np.int64)
    for column in rows.T:  # one integer per cell, column by column
        values, index = np.unique(column, return_inverse=True)
        if values.size > max_cells:
            return None
        key = key * values.size + index
    cells, inverse = np.unique(key, return_inverse=True)
    if cells.size > max_cells:
        return None
    n = len(features0)
    c0 = np.bincount(inverse[:fit], minlength=cells.size) + 0.5
    c1 = np.bincount(inverse[n:n + fit], minlength=cells.size) + 0.5
    ratio = np.log(c1 / c0)
    return ratio[inverse[:n]], ratio[inverse[n:]]


def best_threshold(scores0: np.ndarray, scores1: np.ndarray, candidates: int, delta: float,
                   confidence: float) -> float:
    """The threshold among quantiles of the pooled scores whose test proves the most on
    these scores (both error rates bounded by Clopper-Pearson, as the audit will)."""
    pooled = np.concatenate([scores0, scores1])
    grid = np.unique(pooled)
    if grid.size > candidates:
        grid = np.unique(np.quantile(pooled, np.linspace(0, 1, candidates)))
    s0, s1 = np.sort(scores0), np.sort(scores1)
    n = s0.size
    fp = n - np.searchsorted(s0, grid, side="right")
    fn = np.searchsorted(s1, grid, side="right")
    return float(grid[int(np.argmax(log_ratio_bounds(fp, fn, n, delta, confidence)))])
