"""Histograms on a walk (AISTATS 2022 Algorithms 2 and 4).

The token is the running aggregate of a frequency oracle's reports (a count vector for
γ-RR). Each holder adds one fresh report of its category per visit; at the end the
aggregate is debiased into frequencies. On the ring, node 0 opens the token with dummy
reports of uniform categories and adds as many again before publishing (it knows them
and subtracts them), so that every other observer's first and last windows hold at least
``n - 1`` reports.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netdp.engine.trace import Trace
from netdp.mechanisms.base import FrequencyOracle

# Reports handed to the oracle per call (the unit of its draws); each call keeps its
# working set near ``oracle.budget_bytes`` (FrequencyOracle.perturb_aggregate).
CHUNK = FrequencyOracle.call_rows


@dataclass(frozen=True, eq=False)
class HistOutcome:
    """What a histogram run produced.

    Attributes
    ----------
    estimate, truth
        Estimated and true frequency of each category among the nodes.
    reports
        Number of real reports aggregated.
    dummies
        Dummy reports added by node 0 (ring; at the start and again at the end).
    """

    estimate: np.ndarray
    truth: np.ndarray
    reports: int
    dummies: int = 0

    @property
    def l1(self) -> float:
        return float(np.abs(self.estimate - self.truth).sum())

    @property
    def linf(self) -> float:
        return float(np.abs(self.estimate - self.truth).max())

    @property
    def mse(self) -> float:
        """Mean over categories of the squared error."""
        return float(np.mean((self.estimate - self.truth) ** 2))


def aggregate_reports(oracle: FrequencyOracle, categories: np.ndarray,
                      rng: np.random.Generator) -> np.ndarray | float:
    """Sum of the aggregates of fresh reports of ``categories``, in chunks (0 if none).

    Each chunk of :data:`CHUNK` reports is one ``oracle.perturb_aggregate`` call (the draws
    of one ``perturb``, made in blocks that fit the oracle's budget); the running total is
    a float vector, added to in place.
    """
    total: np.ndarray | float = 0.0
    for start in range(0, categories.size, CHUNK):
        part = oracle.perturb_aggregate(categories[start:start + CHUNK], rng)
        if start == 0:
            total = total + part
        else:
            total += part
    return total


def perturbed_reports(oracle: FrequencyOracle, categories: np.ndarray,
                      rng: np.random.Generator) -> list[np.ndarray]:
    """The reports :func:`aggregate_reports` aggregates, chunk by chunk (the same draws)."""
    return [oracle.perturb(categories[start:start + CHUNK], rng)
            for start in range(0, categories.size, CHUNK)]


def truth(categories: np.ndarray, domain: int) -> np.ndarray:
    """Frequency of each category among the nodes (among their reports, where a node
    holds a row of several: :mod:`netdp.tasks.user_level`)."""
    categories = categories.reshape(-1)
    return np.bincount(categories, minlength=domain) / categories.size


def ring_histogram(trace: Trace, categories: np.ndarray, oracle: FrequencyOracle,
                   rng: np.random.Generator, dummies: int) -> HistOutcome:
    """Algorithm 2: ``K`` turns of the ring, one report per holder per turn (a row of
    categories per node: one report of each entry, in order).

    The published aggregate is ``dummies + reports + dummies``; node 0 removes its
    dummies and debiases the ``K n`` real reports.
    """
    d = oracle.domain
    head = aggregate_reports(oracle, rng.integers(0, d, dummies), rng)
    reports = categories[trace.holders[0]].reshape(-1)
    token = head + aggregate_reports(oracle, reports, rng)
    tail = aggregate_reports(oracle, rng.integers(0, d, dummies), rng)
    published = token + tail
    real = published - head - tail
    counts = oracle.estimate_counts(real, reports.size)
    return HistOutcome(counts / reports.size, truth(categories, d), reports.size, dummies)


def walk_histogram(trace: Trace, categories: np.ndarray, oracle: FrequencyOracle,
                   rng: np.random.Generator) -> HistOutcome:
    """Algorithm 4: each token's holder adds a report at every step (a row of categories
    per node: one report of each entry); the published result is the sum of the tokens,
    debiased over all its reports.

    Unbiased for the nodes' histogram when every node is visited equally often in
    expectation (the complete graph, or a Metropolis walk on any graph).
    """
    sent = categories[trace.holders.reshape(-1)].reshape(-1)
    reports = sent.size
    total = aggregate_reports(oracle, sent, rng)
    counts = oracle.estimate_counts(total, reports)
    return HistOutcome(counts / reports, truth(categories, oracle.domain), reports)


def ldp_mse(oracle: FrequencyOracle, frequencies: np.ndarray, n: int) -> float:
    """Mean squared error over categories of the LDP baseline: one report per node,
    aggregated by an untrusted server (the oracle's closed-form variance)."""
    return float(np.mean(oracle.variance(frequencies, n)))
