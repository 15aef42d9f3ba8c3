"""Empirical lower bounds on ε from a distinguishing test (accounting.md §5).

Run a mechanism many times on two neighbouring inputs, let a test fixed in advance
decide which input produced each output, and count its errors. Clopper-Pearson upper
bounds on the two error rates turn the counts into a lower bound on ε that holds with
the stated confidence (Kairouz et al. 2015): an audit bound above a claimed ε is a
privacy bug.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats


def clopper_pearson_upper(errors: int, trials: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson upper bound on a rate from ``errors`` in ``trials``."""
    if not 0 <= errors <= trials or trials <= 0:
        raise ValueError(f"need 0 <= errors <= trials and trials > 0 "
                         f"(got {errors}, {trials})")
    return float(clopper_pearson_uppers(np.array([errors]), trials, confidence)[0])


def clopper_pearson_uppers(errors: np.ndarray, trials: int, confidence: float) -> np.ndarray:
    """:func:`clopper_pearson_upper` of many error counts at once (unchecked)."""
    errors = np.asarray(errors)
    out = np.ones(errors.shape)
    some = errors < trials
    out[some] = stats.beta.ppf(confidence, errors[some] + 1, trials - errors[some])
    return out


def log_ratio_bounds(false_positives: np.ndarray, false_negatives: np.ndarray, trials: int,
                     delta: float = 0.0, confidence: float = 0.95) -> np.ndarray:
    """The larger of the two log ratios of :func:`epsilon_lower_bound` for many tests at
    once, 0 for a ratio that is undefined, not floored (a negative value still ranks
    tests that prove nothing)."""
    level = 1 - (1 - confidence) / 2
    fpr = clopper_pearson_uppers(false_positives, trials, level)
    fnr = clopper_pearson_uppers(false_negatives, trials, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where((1 - delta - fpr > 0) & (fnr > 0), np.log((1 - delta - fpr) / fnr), 0.0)
        b = np.where((1 - delta - fnr > 0) & (fpr > 0), np.log((1 - delta - fnr) / fpr), 0.0)
    return np.maximum(a, b)


def epsilon_lower_bound(false_positives: int, false_negatives: int, trials: int,
                        delta: float = 0.0, confidence: float = 0.95) -> float:
    """ε that the observed error counts prove, at the given confidence.

    ``max(ln((1 - δ - FPR_hi) / FNR_hi), ln((1 - δ - FNR_hi) / FPR_hi))``, each rate
    bounded at confidence ``1 - (1 - confidence)/2`` so both hold together. Returns
    0 when the counts prove nothing.
    """
    for errors in (false_positives, false_negatives):
        if not 0 <= errors <= trials or trials <= 0:
            raise ValueError(f"need 0 <= errors <= trials and trials > 0 "
                             f"(got {errors}, {trials})")
    bound = log_ratio_bounds(np.array([false_positives]), np.array([false_negatives]),
                             trials, delta, confidence)[0]
    return max(0.0, float(bound))


def gaussian_mu_lower_bound(false_positives: int, false_negatives: int, trials: int,
                            confidence: float = 0.95) -> float:
    """Gaussian-DP fit ``μ_lb = Φ⁻¹(1 - FPR_hi) - Φ⁻¹(FNR_hi)``, floored at 0."""
    level = 1 - (1 - confidence) / 2
    fpr = clopper_pearson_upper(false_positives, trials, level)
    fnr = clopper_pearson_upper(false_negatives, trials, level)
    return max(0.0, float(special.ndtri(1 - fpr) - special.ndtri(fnr)))


def audit_threshold(outputs0: np.ndarray, outputs1: np.ndarray, threshold: float,
                    delta: float = 0.0, confidence: float = 0.95) -> float:
    """Lower bound on ε from the test "say input 1 when the output exceeds ``threshold``".

    ``outputs0`` and ``outputs1`` are scores of runs on the two inputs (the same number
    of each); choose ``threshold`` before looking at them.
    """
    outputs0, outputs1 = np.asarray(outputs0), np.asarray(outputs1)
    if len(outputs0) != len(outputs1):
        raise ValueError("need the same number of runs on both inputs")
    false_positives = int(np.count_nonzero(outputs0 > threshold))
    false_negatives = int(np.count_nonzero(outputs1 <= threshold))
    return epsilon_lower_bound(false_positives, false_negatives, len(outputs0), delta,
                               confidence)


def audit_membership(in_set0: np.ndarray, in_set1: np.ndarray, delta: float = 0.0,
                     confidence: float = 0.95) -> float:
    """Lower bound on ε from the test "say input 1 when the output lies in S".

    ``in_set0`` and ``in_set1`` are booleans: whether each run's output fell in the
    rejection set S (fixed in advance) on input 0 and on input 1.
    """
    in_set0, in_set1 = np.asarray(in_set0, bool), np.asarray(in_set1, bool)
    if len(in_set0) != len(in_set1):
        raise ValueError("need the same number of runs on both inputs")
    return epsilon_lower_bound(int(in_set0.sum()), int((~in_set1).sum()), len(in_set0),
                               delta, confidence)


def epsilon_ceiling(trials: int, delta: float = 0.0, confidence: float = 0.95) -> float:
    """The largest ε that ``trials`` trials per side can prove: the bound of a test that
    made no error at all (spec accounting.md §5.1). No audit with these trials exceeds
    it, whatever the mechanism."""
    return epsilon_lower_bound(0, 0, trials, delta, confidence)


def gdp_delta(mu: float, epsilon: float) -> float:
    """δ(ε) of μ-Gaussian DP: ``Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2)`` (Dong, Roth and Su
    2022, Corollary 2.13)."""
    if mu <= 0:
        return 0.0
    return float(special.ndtr(-epsilon / mu + mu / 2)
                 - math.exp(epsilon) * special.ndtr(-epsilon / mu - mu / 2))


def gdp_epsilon(mu: float, delta: float) -> float:
    """The ε at which μ-Gaussian DP spends ``delta`` (0 when ``δ(0) <= delta``)."""
    from scipy import optimize

    if mu <= 0 or gdp_delta(mu, 0.0) <= delta:
        return 0.0
    hi = 1.0
    while gdp_delta(mu, hi) > delta:
        hi *= 2.0
    return float(optimize.brentq(lambda e: gdp_delta(mu, e) - delta, 0.0, hi, xtol=1e-12))


def one_run_epsilon(guesses: int, correct: int, confidence: float = 0.95) -> float:
    """Lower bound on ε from a one-run audit (Steinke, Nasr and Jagielski, "Privacy
    Auditing with One (1) Training Run", NeurIPS 2023, Theorem 3 with δ = 0).

    ``correct`` of ``guesses`` membership guesses on canaries, each included independently
    with probability 1/2, were right. Under ε-DP the number right is stochastically
    dominated by ``Binomial(guesses, e^ε / (1 + e^ε))``, so the bound is the largest ε
    whose tail ``P[Binomial >= correct]`` is at most ``1 - confidence``: the logit of the
    Clopper-Pearson lower bound on the rate of correct guesses.
    """
    if not 0 <= correct <= guesses:
        raise ValueError(f"need 0 <= correct <= guesses (got {correct}, {guesses})")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1) (got {confidence})")
    if correct == 0:
        return 0.0
    p = float(stats.beta.ppf(1 - confidence, correct, guesses - correct + 1))
    return max(0.0, math.log(p / (1 - p))) if p < 1 else math.inf
