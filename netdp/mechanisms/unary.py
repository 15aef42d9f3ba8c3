"""Unary-encoding frequency oracles: SUE (basic one-time RAPPOR) and OUE.

A user with category ``v`` in ``{0..d-1}`` encodes it as the one-hot vector ``e_v`` and
reports every bit independently: a 1 stays 1 with probability ``p``, a 0 becomes 1 with
probability ``q`` (Wang et al., USENIX Security 2017). A report supports category ``i``
when its bit ``i`` is set, so ``p* = p`` and ``q* = q``, and the generic pure-LDP
estimator applies (:mod:`netdp.mechanisms._oracle`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from netdp.mechanisms._oracle import (
    BernoulliStream,
    DirectSupport,
    bernoulli,
    check_categories,
    check_domain,
    check_epsilon,
    check_reports,
    column_counts,
    streams_raw,
)
from netdp.mechanisms.base import FrequencyOracle


def unary_bits(values: np.ndarray, domain: int, p: float, q: float,
               rng: np.random.Generator) -> np.ndarray:
    """Independent bits, ``P[bit i = 1] = p`` for ``i = values[u]`` and ``q`` otherwise.

    uint8 array (n, domain). Draws every bit with q (:func:`~netdp.mechanisms._oracle.
    bernoulli`, one random byte per bit, in place), then each user's true bit with p.
    """
    n = values.size
    out = bernoulli(rng, q, n * domain).reshape(n, domain)
    out[np.arange(n), values] = bernoulli(rng, p, n)
    return out


def unary_counts(values: np.ndarray, domain: int, p: float, q: float,
                 rng: np.random.Generator, rows: int) -> np.ndarray:
    """``column_counts(unary_bits(values, domain, p, q, rng))`` with the same draws, made
    ``rows`` reports at a time: O(rows x domain) memory instead of O(n x domain).

    The Bernoulli(q) bits come from a :class:`~netdp.mechanisms._oracle.BernoulliStream`
    (which leaves ``rng`` after them, as one call does), then the n true bits are drawn,
    then the blocks are replayed and counted. Needs a 64-bit bit generator
    (:func:`~netdp.mechanisms._oracle.streams_raw`).
    """
    n = values.size
    rows = max(1, int(rows))
    noise = BernoulliStream(rng, q, n * domain, rows * domain)
    true = bernoulli(rng, p, n)
    counts = np.zeros(domain, dtype=np.int64)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        block = noise.read((stop - start) * domain).reshape(stop - start, domain)
        block[np.arange(stop - start), values[start:stop]] = true[start:stop]
        counts += column_counts(block)
        del block  # before the next block is drawn
    return counts


def unary_perturb_aggregate(oracle: FrequencyOracle, p: float, q: float, values: np.ndarray,
                            rng: np.random.Generator) -> np.ndarray:
    """``oracle.aggregate(oracle.perturb(values, rng))`` for a one-hot oracle with bit
    probabilities (p, q), in blocks of ``oracle.block_rows()`` reports.

    The draws are those of one ``perturb`` call whatever the block size, except with a
    bit generator that is not 64-bit (MT19937), whose over-budget calls are split into
    separate ``perturb`` calls.
    """
    v = check_categories(values, oracle.domain)
    rows = oracle.block_rows()
    if v.size <= rows:
        return column_counts(unary_bits(v, oracle.domain, p, q, rng))
    if not streams_raw(rng):
        return FrequencyOracle.perturb_aggregate(oracle, v, rng)
    return unary_counts(v, oracle.domain, p, q, rng, rows)


@dataclass(frozen=True)
class _UnaryEncoding(DirectSupport):
    """One-hot encoding with independent per-bit randomized response (p, q)."""

    epsilon: float
    domain: int
    p: float = field(init=False)
    q: float = field(init=False)

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_domain(self.domain)
        p, q = self._probabilities()
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "q", q)

    def _probabilities(self) -> tuple[float, float]:
        raise NotImplementedError

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Perturbed one-hot vectors, a uint8 array of shape (n, d).

        Every bit is drawn as a Bernoulli(q) from the generator's bytes, then each user's
        true bit again as a Bernoulli(p) (:func:`unary_bits`); the draws do not depend on
        any block size, so a seed gives the same reports every time.
        """
        v = check_categories(values, self.domain)
        return unary_bits(v, self.domain, self.p, self.q, rng)

    def aggregate(self, reports: np.ndarray) -> np.ndarray:
        """Column sums of the bit vectors: int64 support count of each category."""
        return column_counts(check_reports(reports, self.domain, "bits", dtype="any"))

    def report_scores(self, reports: np.ndarray, items: Sequence[int]) -> np.ndarray:
        """A report supports the categories whose bit is set."""
        return np.asarray(reports)[:, list(items)].astype(float)

    def perturb_aggregate(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``aggregate(perturb(values, rng))``, the same draws, in blocks of
        :meth:`block_rows` reports (:func:`unary_perturb_aggregate`)."""
        return unary_perturb_aggregate(self, self.p, self.q, values, rng)

    def report_bytes(self) -> int:
        """A report is d bytes; drawing it holds about d more (the tie test)."""
        return 2 * self.domain + 16

    def describe(self) -> dict:
        return {"name": self.name, "epsilon": self.epsilon, "delta": 0.0,
                "domain": self.domain, "p": self.p, "q": self.q, "p_star": self.p_star,
                "q_star": self.q_star, "report": f"uint8 bit vector of length {self.domain}"}


@dataclass(frozen=True)
class SUE(_UnaryEncoding):
    """Symmetric unary encoding (basic one-time RAPPOR).

    ``p = e^{ε/2}/(e^{ε/2}+1)``, ``q = 1/(e^{ε/2}+1) = 1 - p``.

    Two one-hot inputs differ in two bits, each contributing ``e^{ε/2}``. ``p + q = 1``,
    so the variance has no frequency term: ``e^{ε/2} / (n (e^{ε/2}-1)^2)``.
    ``SUE(epsilon, domain)``: ε of one report (> 0), number of categories d (>= 2).
    """

    name = "sue"

    def _probabilities(self) -> tuple[float, float]:
        half = math.exp(self.epsilon / 2)
        return half / (half + 1), 1 / (half + 1)


@dataclass(frozen=True)
class OUE(_UnaryEncoding):
    """Optimized unary encoding: ``p = 1/2``, ``q = 1/(e^ε+1)``.

    Here ``1 - p - q = p - q``, so the variance of a frequency is
    ``(4 e^ε / (e^ε-1)^2 + f) / n``; the spec's ``4 e^ε / (n (e^ε-1)^2)`` is its f = 0 value.
    ``OUE(epsilon, domain)``: ε of one report (> 0), number of categories d (>= 2).
    """

    name = "oue"

    def _probabilities(self) -> tuple[float, float]:
        return 0.5, 1 / (math.exp(self.epsilon) + 1)
