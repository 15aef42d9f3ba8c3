"""Histogram encoding (Wang et al., USENIX Security 2017): SHE and THE.

A user one-hot encodes its category and adds ``Lap(2/ε)`` to every bin (the L1
sensitivity of a one-hot vector is 2, so the noisy vector is ε-LDP). SHE sends the noisy
vector and the server sums; THE thresholds each bin at θ and sends the bits, a pure
oracle with ``p* = 1 - e^{ε(θ-1)/2}/2`` and ``q* = e^{-εθ/2}/2``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from scipy import optimize

from netdp.core.errors import check
from netdp.mechanisms._oracle import (
    PureOracle,
    RawBytes,
    bit_generator_at,
    check_categories,
    check_domain,
    check_epsilon,
    check_reports,
    column_counts,
    random_bytes,
    streams_raw,
)
from netdp.mechanisms.base import FrequencyOracle
from netdp.mechanisms.unary import unary_bits, unary_perturb_aggregate


def laplace_noise(rng: np.random.Generator, scale: float, size: int) -> np.ndarray:
    """``size`` draws of ``Lap(scale)``: ``±scale E``, E standard exponential, the sign a
    fair random bit.

    Draws, in order: ``size`` exponentials (numpy's ziggurat, a third of the cost of the
    logarithm in ``rng.laplace``), then the signs, eight per random byte (the first byte's
    high bit is the first sign).
    """
    out = rng.standard_exponential(size)
    signs = np.unpackbits(random_bytes(rng, -(-size // 8)))[:size]
    np.negative(out, out=out, where=signs.view(bool))  # flips the sign bit only
    out *= scale
    return out


class _LaplaceStream:
    """The draws of one ``laplace_noise(rng, scale, size)`` call, handed out piece by
    piece in O(piece) memory.

    That call draws every exponential, then the sign bytes. The exponentials are drawn
    once here, in pieces of ``piece``, and dropped, to find the first sign byte and leave
    ``rng`` after the signs (as the single call does); :meth:`read` then replays them from
    a copy of the bit generator at the first exponential, and reads the signs from a copy
    at the first sign byte. Needs a 64-bit bit generator. Costs one extra pass of
    exponentials.
    """

    def __init__(self, rng: np.random.Generator, scale: float, size: int, piece: int) -> None:
        bitgen = rng.bit_generator
        first = bitgen.state
        piece = max(1, int(piece))
        buffer = np.empty(min(piece, size))
        for start in range(0, size, piece):
            rng.standard_exponential(out=buffer[:min(piece, size - start)])
        del buffer
        first_sign = bitgen.state
        sign_bytes = -(-size // 8)
        words = -(-sign_bytes // 8)  # what random_bytes(rng, sign_bytes) draws
        for start in range(0, words, piece):
            bitgen.random_raw(min(piece, words - start))
        self._exponentials = np.random.Generator(bit_generator_at(bitgen, first))
        self._signs = RawBytes(bit_generator_at(bitgen, first_sign))
        self._scale = scale
        self._bits = np.empty(0, dtype=np.uint8)

    def read(self, count: int) -> np.ndarray:
        """The next ``count`` Laplace draws (float64)."""
        out = self._exponentials.standard_exponential(count)
        have = self._bits.size
        fresh = np.unpackbits(self._signs.read(-(-max(0, count - have) // 8)))
        bits = np.concatenate([self._bits, fresh]) if have else fresh
        self._bits = bits[count:].copy()
        np.negative(out, out=out, where=bits[:count].view(bool))
        out *= self._scale
        return out


def _noisy_histograms(values: np.ndarray, domain: int, scale: float,
                      rng: np.random.Generator) -> np.ndarray:
    """One-hot rows of ``values`` plus ``Lap(scale)`` in every bin: shape (n, d)."""
    values = check_categories(values, domain)
    out = laplace_noise(rng, scale, values.size * domain).reshape(values.size, domain)
    out[np.arange(values.size), values] += 1.0
    return out


def noisy_histogram_sums(values: np.ndarray, domain: int, scale: float,
                         rng: np.random.Generator, rows: int) -> np.ndarray | None:
    """``_noisy_histograms(values, domain, scale, rng).sum(axis=0)`` with the same draws
    and the same float additions (row by row, in order), made ``rows`` reports at a time
    (None when ``values`` is empty).
    """
    n = values.size
    rows = max(1, int(rows))
    noise = _LaplaceStream(rng, scale, n * domain, rows * domain)
    total: np.ndarray | None = None
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        block = noise.read((stop - start) * domain).reshape(stop - start, domain)
        block[np.arange(stop - start), values[start:stop]] += 1.0
        if total is not None:
            block[0] += total  # numpy sums axis 0 row after row: keep that order
        total = block.sum(axis=0, dtype=float)
        del block  # before the next block is drawn
    return total


@dataclass(frozen=True)
class SHE(FrequencyOracle):
    """Summation with histogram encoding.

    Reports are float arrays of shape (n, d): one-hot plus ``Lap(2/ε)`` per bin. The
    aggregate is the column sums, which are already unbiased counts; each estimated
    frequency has variance ``8/(ε² n)`` whatever the true frequencies. SHE has no support
    set, so it is not a pure oracle (no ``p*``/``q*``).

    Parameters
    ----------
    epsilon
        Privacy level (> 0); exact (Laplace mechanism, L1 sensitivity 2).
    domain
        Number of categories d (>= 2).
    """

    epsilon: float
    domain: int
    scale: float = field(init=False)
    name = "she"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_domain(self.domain)
        object.__setattr__(self, "scale", 2.0 / self.epsilon)

    def support_probabilities(self) -> tuple[float, float]:
        """SHE is not a pure oracle: it has no support set, hence no ``(p*, q*)``."""
        raise NotImplementedError("SHE sums noisy histograms; it has no (p*, q*) (use THE)")

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return _noisy_histograms(values, self.domain, self.scale, rng)

    def aggregate(self, reports: np.ndarray) -> np.ndarray:
        reports = check_reports(reports, self.domain, "noisy histograms", dtype="any")
        return reports.sum(axis=0, dtype=float)

    def report_scores(self, reports: np.ndarray, items: Sequence[int]) -> np.ndarray:
        """A report's noisy count of each category."""
        return np.asarray(reports)[:, list(items)].astype(float)

    def perturb_aggregate(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``aggregate(perturb(values, rng))``, the same draws and sums, in blocks of
        :meth:`block_rows` reports (:func:`noisy_histogram_sums`; with a bit generator that
        is not 64-bit, an over-budget call is split into separate ``perturb`` calls)."""
        v = check_categories(values, self.domain)
        rows = self.block_rows()
        if v.size <= rows:
            return self.aggregate(self.perturb(v, rng))
        if not streams_raw(rng):
            return super().perturb_aggregate(v, rng)
        total = noisy_histogram_sums(v, self.domain, self.scale, rng, rows)
        assert total is not None  # v.size > rows >= 1
        return total

    def report_bytes(self) -> int:
        """A report is d doubles; drawing it holds d sign bits (bytes) more."""
        return 10 * self.domain + 16

    def estimate_counts(self, aggregate: npt.ArrayLike, n: int) -> np.ndarray:
        return np.asarray(aggregate, dtype=float)

    def variance(self, frequencies: np.ndarray, n: int) -> np.ndarray:
        return np.full(np.shape(frequencies), 2 * self.scale**2 / n)

    def describe(self) -> dict:
        return {"name": self.name, "epsilon": float(self.epsilon), "delta": 0.0,
                "domain": int(self.domain), "scale": self.scale,
                "frequency_variance_times_n": 2 * self.scale**2}


def the_probabilities(epsilon: float, theta: float) -> tuple[float, float]:
    """``(p*, q*)`` of THE: ``P[1 + Lap(2/ε) > θ]`` and ``P[Lap(2/ε) > θ]`` (0 <= θ <= 1)."""
    return -0.5 * math.expm1(epsilon * (theta - 1) / 2) + 0.5, 0.5 * math.exp(-epsilon * theta / 2)


def the_optimal_theta(epsilon: float) -> float:
    """θ in (0.5, 1) minimising THE's variance factor ``q*(1-q*)/(p*-q*)²``."""

    def factor(theta: float) -> float:
        p, q = the_probabilities(epsilon, theta)
        return q * (1 - q) / (p - q) ** 2

    res = optimize.minimize_scalar(factor, bounds=(0.5, 1.0), method="bounded",
                                   options={"xatol": 1e-10})
    return float(res.x)


@dataclass(frozen=True)
class THE(PureOracle):
    """Thresholding with histogram encoding.

    A user adds ``Lap(2/ε)`` to each bin of its one-hot vector and reports the bits
    ``noisy > θ`` (uint8 array of shape (n, d)); a report supports the bins set to 1, with
    ``p* = 1 - e^{ε(θ-1)/2}/2`` and ``q* = e^{-εθ/2}/2``. The aggregate is the column sums.
    Post-processing of SHE, so ε-LDP; the exact level of the bits is lower,
    ``epsilon_exact = ln(p*(1-q*)/(q*(1-p*)))``.

    Parameters
    ----------
    epsilon
        Privacy level (> 0) of the underlying noisy histogram.
    domain
        Number of categories d (>= 2).
    theta
        Threshold in [0, 1]; default: the θ in (0.5, 1) minimising the variance.
    """

    epsilon: float
    domain: int
    theta: float | None = None
    p_star: float = field(init=False)
    q_star: float = field(init=False)
    epsilon_exact: float = field(init=False)
    theta_optimised: bool = field(init=False)
    name = "the"

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_domain(self.domain)
        theta = self.theta
        optimised = theta is None
        if theta is None:
            theta = the_optimal_theta(self.epsilon)
            object.__setattr__(self, "theta", theta)
        else:
            check(0 <= theta <= 1, "theta", f"must lie in [0, 1] (got {theta})")
        p, q = the_probabilities(self.epsilon, theta)
        object.__setattr__(self, "p_star", p)
        object.__setattr__(self, "q_star", q)
        object.__setattr__(self, "epsilon_exact",
                           math.log(p) - math.log(q) + math.log1p(-q) - math.log1p(-p))
        object.__setattr__(self, "theta_optimised", optimised)

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The bits ``1[e_v + Lap(2/ε) > θ]``, uint8 (n, d).

        The bins are independent, bit i is 1 with probability p* for the true bin and q*
        for the others: the bits are drawn from that law directly (as unary encoding
        with p = p*, q = q*), never through the Laplace noise, which is ten times slower.
        """
        return unary_bits(check_categories(values, self.domain), self.domain, self.p_star,
                          self.q_star, rng)

    def aggregate(self, reports: np.ndarray) -> np.ndarray:
        return column_counts(check_reports(reports, self.domain, "bits", dtype="any"))

    def report_scores(self, reports: np.ndarray, items: Sequence[int]) -> np.ndarray:
        """A report supports the categories whose bit is set."""
        return np.asarray(reports)[:, list(items)].astype(float)

    def perturb_aggregate(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``aggregate(perturb(values, rng))``, the same draws, in blocks of
        :meth:`block_rows` reports (:func:`~netdp.mechanisms.unary.unary_perturb_aggregate`)."""
        return unary_perturb_aggregate(self, self.p_star, self.q_star, values, rng)

    def report_bytes(self) -> int:
        """A report is d bytes; drawing it holds about d more (the tie test)."""
        return 2 * self.domain + 16

    def describe(self) -> dict:
        assert self.theta is not None  # resolved by __post_init__
        return {"name": self.name, "epsilon": float(self.epsilon), "delta": 0.0,
                "domain": int(self.domain), "theta": float(self.theta),
                "theta_optimised": self.theta_optimised, "p_star": self.p_star,
                "q_star": self.q_star, "epsilon_exact": self.epsilon_exact}
