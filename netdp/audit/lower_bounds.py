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

from netdp.core.roots import largest_within


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
    """The ε at which μ-Gaussian DP spends ``delta`` (0 when ``δ(0) <= delta``), rounded
    down (to 1e-12) as befits a lower bound: the largest ε found with ``δ(ε) >= delta``."""
    if mu <= 0 or gdp_delta(mu, 0.0) <= delta:
        return 0.0
    hi = 1.0
    while gdp_delta(mu, hi) > delta:
        hi *= 2.0
    return largest_within(lambda e: -gdp_delta(mu, e), -delta, 0.0, hi, param="delta",
                          tol=1e-12)


def one_run_p_value(guesses: int, correct: int, epsilon: float, delta: float,
                    canaries: int) -> float:
    """The p-value of ``correct`` or more right guesses under (ε, δ)-DP, one-run audit.

    Steinke, Nasr and Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS
    2023 (arXiv 2305.08846), their main theorem with δ > 0 (§5), with f the Binomial
    tail (the bound their code computes). With ``q = e^ε / (1 + e^ε)``,
    ``B ~ Binomial(guesses, q)``, ``f(v) = P[B >= v]`` and ``m = canaries``::

        P[correct >= v] <= f(v) + 2 m δ · max_{i = 1..v} (f(v - i) - f(v)) / i,

    where ``f(v - i) - f(v) = P[v - i <= B <= v - 1]``. Capped at 1. Unchecked inputs
    (see :func:`one_run_epsilon`).
    """
    q = float(special.expit(epsilon))
    beta = float(stats.binom.sf(correct - 1, guesses, q))
    if delta == 0 or correct == 0:
        return min(1.0, beta)
    # P[B = v - i] for i = 1 .. v, but only down to 40 standard deviations below the
    # mean: the mass below, ``tail``, is added to every partial sum (an overestimate, so
    # still an upper bound), and any longer window is no larger than the last over i
    mean, sd = guesses * q, math.sqrt(guesses * q * (1 - q))
    low = min(max(0, int(mean - 40 * sd) - 1), correct - 1)
    tail = float(stats.binom.cdf(low - 1, guesses, q)) if low > 0 else 0.0
    below = stats.binom.pmf(np.arange(correct - 1, low - 1, -1), guesses, q)
    alpha = float(np.max((np.cumsum(below) + tail) / np.arange(1, correct - low + 1)))
    return min(1.0, beta + 2 * canaries * delta * alpha)


def one_run_epsilon(guesses: int, correct: int, confidence: float = 0.95,
                    delta: float = 0.0, canaries: int | None = None) -> float:
    """Lower bound on ε from a one-run audit.

    Steinke, Nasr and Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS
    2023 (arXiv 2305.08846): ``canaries`` (m) canaries are each included independently
    with probability 1/2, all in one run; the auditor guesses in or out for ``guesses``
    (r) of them, from the output alone, abstains on the rest, and is right ``correct``
    (v) times.

    Parameters
    ----------
    guesses
        r, the guesses made (abstentions not counted).
    correct
        v, the guesses that were right, ``0 <= v <= r``.
    confidence
        Of the bound, in (0, 1).
    delta
        The δ at which ε is bounded, in [0, 1). With ``delta > 0`` the bound is that ``M``
        is not (ε_lb, δ)-DP.
    canaries
        m, all canaries of the run, guessed on or not, ``m >= r``. Needed when
        ``delta > 0`` (the δ term grows with m), ignored at ``delta = 0``.

    Returns
    -------
    float
        The bound ε_lb >= 0 (``inf`` when even ε = ∞ is rejected, which no finite
        ``guesses`` gives).

    Notes
    -----
    δ = 0 (the same theorem without its δ term): under ε-DP the number right is
    stochastically dominated by ``Binomial(r, e^ε / (1 + e^ε))``, so the bound is the
    largest ε whose tail ``P[Binomial >= v]`` is at most ``1 - confidence``: the logit of
    the one-sided Clopper-Pearson lower bound on the rate of correct guesses.

    δ > 0 (their main theorem, §5): the tail gains the term ``2 m δ · max_i (f(v-i) - f(v)) / i``
    of :func:`one_run_p_value`. For each ε, "reject (ε, δ)-DP when p(ε) <= 1 -
    confidence" is a level ``1 - confidence`` test (its rejections are a subset of
    those of ``v >= v*(ε)``, v* the least v that rejects, whose probability the theorem
    bounds by ``p(v*) <= 1 - confidence``). ε_lb is the *first* ε at which p exceeds ``1 -
    confidence``: every ε below it is rejected, the true ε among them when ε_lb is
    above it, which happens with probability at most ``1 - confidence``. So the bound
    is sound whether or not p grows with ε. When ``2 m δ <= 1`` it does: with ``b`` the
    law of ``Binomial(r - 1, q)``, ``d/dq [f(v) + c (f(v-i) - f(v))/i] = r b(v-1) (1 - c/i)
    + (c r / i) b(v-i-1) >= 0`` for ``c = 2 m δ <= 1``, so the crossing is found by a
    bracketed search (:func:`~netdp.core.roots.largest_within`); else by a scan of 256
    points first. p grows with δ, so a larger δ never gives a larger bound, and δ = 0
    gives the δ = 0 bound exactly.
    """
    if not 0 <= correct <= guesses:
        raise ValueError(f"need 0 <= correct <= guesses (got {correct}, {guesses})")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1) (got {confidence})")
    if not (math.isfinite(delta) and 0 <= delta < 1):
        raise ValueError(f"delta must lie in [0, 1) (got {delta})")
    if delta > 0 and (canaries is None or canaries < guesses):
        raise ValueError(f"canaries must be given, and at least guesses = {guesses}, "
                         f"when delta > 0 (got {canaries})")
    if correct == 0:
        return 0.0
    p = float(stats.beta.ppf(1 - confidence, correct, guesses - correct + 1))
    pure = max(0.0, math.log(p / (1 - p))) if p < 1 else math.inf
    if delta == 0 or pure == 0.0:
        return pure
    assert canaries is not None
    level = 1 - confidence

    def p_value(epsilon: float) -> float:  # (ε, δ)-DP is rejected where it is <= level
        return one_run_p_value(guesses, correct, epsilon, delta, canaries)

    if p_value(0.0) > level:
        return 0.0
    # the crossing lies in [0, pure]: p(ε, δ) >= p(ε, 0) > 1 - confidence above ``pure``
    # (an infinite ``pure`` is searched up to 64: a smaller answer, so still sound)
    lo, hi = 0.0, min(pure, 64.0)
    if 2 * canaries * delta > 1:  # p may not grow with ε: the first grid point not rejected
        grid = np.linspace(0.0, hi, 257)[1:]
        first = next((float(e) for e in grid if p_value(float(e)) > level), hi)
        lo, hi = float(grid[grid < first][-1]) if (grid < first).any() else 0.0, first
    # lo is rejected: the last rejected ε found, within 1e-10 of one that is not
    return largest_within(p_value, level, lo, hi, param="confidence", tol=1e-10)
