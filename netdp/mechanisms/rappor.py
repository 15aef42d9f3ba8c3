"""RAPPOR (Erlingsson et al. 2014), one report per user, decoded by least squares.

Item x sets the bits ``B(x) = {h_t(x) : t < hashes}`` of a Bloom filter of ``bloom`` bits
(public keys ``draw_keys(default_rng(hash_seed), hashes)``; ``design[x, b] = 1[b in B(x)]``).
A user applies, bit by bit and independently,

1. the permanent randomized response: ``B'_b = 1`` w.p. ``f/2``, ``0`` w.p. ``f/2``,
   ``B_b`` w.p. ``1 - f`` (the memo; in this one-shot protocol each user reports once, so
   the memo is drawn and used at once);
2. the instantaneous randomized response: ``S_b = 1`` w.p. ``q`` if ``B'_b = 1``, ``p``
   if ``B'_b = 0``.

Marginally ``P[S_b = 1 | B_b = 1] = q* = f(p+q)/2 + (1-f) q`` and
``P[S_b = 1 | B_b = 0] = p* = f(p+q)/2 + (1-f) p``; the bits stay independent given x.
ε of the memo (a user seen forever): ``2 h ln((1 - f/2)/(f/2))``; ε of one report
(:attr:`RAPPOR.epsilon`): ``h ln(q*(1-p*)/(p*(1-q*)))``, reached when two items have
disjoint filters of h bits each (fewer bits or overlapping filters only lower it).

Decoding. ``c_b = sum_u S_{u,b}`` has mean ``n p* + (q* - p*) t_b`` with
``t = design^T N`` (N the true counts), so ``t̂ = (c - n p*)/(q* - p*)`` is unbiased for t
and ``N̂ = argmin ||design^T N - t̂||² = W t̂``, ``W = pinv(design^T)`` (d x bloom), is
unbiased when ``design`` has full row rank d (checked; needs ``d <= bloom``). Larger domains
need the regularised (LASSO) decoding of the paper, which is left out.

Variance (exact). Given the values the bits of one report are independent, and reports
are independent, so ``Cov(c) = diag(v)`` with
``v_b = t_b q*(1-q*) + (n - t_b) p*(1-p*)`` (no cross-bit covariance: it would only arise
if the values themselves were random), and ``Var[N̂_i] = sum_b W[i,b]² v_b / (q*-p*)²``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from netdp.errors import check
from netdp.mechanisms import _oracle as oracle
from netdp.mechanisms._hashing import hash_values, public_hashes
from netdp.mechanisms.base import FrequencyOracle


def rappor_probabilities(f: float, p: float, q: float) -> tuple[float, float]:
    """``(p*, q*)``: probability that a reported bit is 1 when the Bloom bit is 0, 1."""
    shared = f * (p + q) / 2
    return shared + (1 - f) * p, shared + (1 - f) * q


def rappor_epsilon(f: float, p: float, q: float, hashes: int) -> float:
    """ε of one report: ``h ln(q*(1-p*)/(p*(1-q*)))``."""
    p_star, q_star = rappor_probabilities(f, p, q)
    return hashes * (math.log(q_star) + math.log1p(-p_star)
                     - math.log(p_star) - math.log1p(-q_star))


def rappor_permanent_epsilon(f: float, hashes: int) -> float:
    """ε of the memoised permanent response: ``2h ln((1 - f/2)/(f/2))``."""
    return 2 * hashes * math.log((1 - f / 2) / (f / 2))


@dataclass(frozen=True)
class RAPPOR(FrequencyOracle):
    """RAPPOR with a permanent and an instantaneous randomized response; ε-LDP per report.

    Parameters
    ----------
    domain
        Number of items d, ``2 <= d <= bloom``.
    f
        Permanent randomized-response parameter, in (0, 1) (Google's default 0.5).
    p, q
        Probability that a reported bit is 1 when the memo bit is 0, 1;
        ``0 <= p < q <= 1`` (defaults 0.5, 0.75).
    hashes
        Number h of hash functions per item (default 2).
    bloom
        Bloom filter size (default 32).
    hash_seed
        Seed of the public hash keys.

    Attributes
    ----------
    epsilon
        ε of one (instantaneous) report; :meth:`from_epsilon` picks f for a given one.
    epsilon_permanent
        ε of the permanent memo, the bound for a user observed forever.
    p_star, q_star
        ``P[S_b = 1 | B_b = 0]`` and ``P[S_b = 1 | B_b = 1]``.
    design
        ``design[x, b] = 1`` when item x sets bit b, shape (d, bloom).
    """

    domain: int
    f: float = 0.5
    p: float = 0.5
    q: float = 0.75
    hashes: int = 2
    bloom: int = 32
    hash_seed: int = 0
    epsilon: float = field(init=False)
    epsilon_permanent: float = field(init=False)
    p_star: float = field(init=False)
    q_star: float = field(init=False)
    keys: np.ndarray = field(init=False, repr=False, compare=False)
    design: np.ndarray = field(init=False, repr=False, compare=False)
    decoder: np.ndarray = field(init=False, repr=False, compare=False)
    name = "rappor"

    def __post_init__(self) -> None:
        oracle.check_int(self.bloom, "bloom", 1)
        oracle.check_domain(self.domain, self.bloom)
        oracle.check_int(self.hashes, "hashes", 1)
        oracle.check_int(self.hash_seed, "hash_seed", 0)
        for name in ("f", "p", "q"):
            value = getattr(self, name)
            check(oracle.is_real(value), name, f"must be a number (got {value!r})")
        check(0 < self.f < 1, "f", f"must lie in (0, 1) (got {self.f})")
        check(0 <= self.p < 1, "p", f"must lie in [0, 1) (got {self.p})")
        check(self.p < self.q <= 1, "q", f"must lie in (p, 1] = ({self.p}, 1] (got {self.q})")
        keys, bits = public_hashes(self.hash_seed, self.hashes, self.domain, self.bloom)
        design = np.zeros((self.domain, self.bloom), dtype=np.uint8)
        design[np.arange(self.domain)[None, :], bits] = 1
        rank = int(np.linalg.matrix_rank(design.astype(float)))
        check(rank == self.domain, "hash_seed",
              f"the Bloom design (domain x bloom) has rank {rank} < domain = {self.domain}: "
              "items are not linearly separable; pick another hash_seed or a larger bloom")
        p_star, q_star = rappor_probabilities(self.f, self.p, self.q)
        object.__setattr__(self, "p_star", p_star)
        object.__setattr__(self, "q_star", q_star)
        object.__setattr__(self, "epsilon", rappor_epsilon(self.f, self.p, self.q, self.hashes))
        object.__setattr__(self, "epsilon_permanent",
                           rappor_permanent_epsilon(self.f, self.hashes))
        object.__setattr__(self, "keys", keys)
        object.__setattr__(self, "design", design)
        object.__setattr__(self, "decoder", np.linalg.pinv(design.T.astype(float)))

    @classmethod
    def from_epsilon(cls, epsilon: float, domain: int, *, p: float = 0.5, q: float = 0.75,
                     hashes: int = 2, bloom: int = 32, hash_seed: int = 0) -> RAPPOR:
        """The RAPPOR whose one-report ε is ``epsilon``, with p, q, h fixed and f solved for.

        ε of one report falls continuously from ``h ln(q(1-p)/(p(1-q)))`` (f -> 0) to 0
        (f -> 1); f is the root, nudged up until the resulting ε is <= ``epsilon``.
        """
        oracle.check_epsilon(epsilon)
        oracle.check_int(hashes, "hashes", 1)
        check(0 <= p < 1, "p", f"must lie in [0, 1) (got {p})")
        check(p < q <= 1, "q", f"must lie in (p, 1] = ({p}, 1] (got {q})")
        top = math.inf if p == 0 or q == 1 else hashes * math.log(q * (1 - p) / (p * (1 - q)))
        check(epsilon < top, "epsilon",
              f"one RAPPOR report with p = {p}, q = {q}, h = {hashes} has epsilon < {top:.6g} "
              f"for every f in (0, 1) (got {epsilon})")

        def excess(f: float) -> float:
            return rappor_epsilon(f, p, q, hashes) - epsilon

        lo = 1e-12
        while excess(lo) < 0:  # only when the f -> 0 limit is barely above epsilon
            lo /= 1e3
        f = optimize.brentq(excess, lo, 1 - 1e-15, xtol=1e-15, rtol=4 * np.finfo(float).eps)
        while excess(f) > 0:
            f = float(np.nextafter(f, 1.0))
        return cls(domain, f=f, p=p, q=q, hashes=hashes, bloom=bloom, hash_seed=hash_seed)

    def bit_probabilities(self, value: int) -> np.ndarray:
        """``P[S_b = 1 | value]`` for every bit b (the bits are independent)."""
        oracle.check_categories(np.array([value]), self.domain)
        return np.where(self.design[value] == 1, self.q_star, self.p_star)

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Reports as a uint8 array (n, bloom) of reported bits.

        Each user reports once, so the memo is drawn and used at once and only the law of
        the reported bits matters: given the item they are independent, 1 with
        probability q* on the item's Bloom bits and p* elsewhere (module doc). They are
        drawn from that law, block of users by block: every bit as a Bernoulli(p*) from
        the generator's bytes (:func:`~netdp.mechanisms._oracle.bernoulli`), then the
        Bloom bits again as Bernoulli(q*).
        """
        x = oracle.check_categories(values, self.domain)
        out = np.empty((x.size, self.bloom), dtype=np.uint8)
        for s in oracle.row_chunks(x.size, self.bloom, itemsize=1):
            rows = s.stop - s.start
            block = oracle.bernoulli(rng, self.p_star, rows * self.bloom).reshape(rows, -1)
            # the item's Bloom bits h_t(x), t < h (a bit set by two hashes is drawn twice;
            # the second draw stands, still a Bernoulli(q*))
            bits = hash_values(self.keys[:, None, :], x[s][None, :], self.bloom)
            block[np.arange(rows), bits] = oracle.bernoulli(rng, self.q_star, bits.size
                                                            ).reshape(bits.shape)
            out[s] = block
        return out

    def _check_reports(self, reports: np.ndarray) -> np.ndarray:
        reports = oracle.check_reports(reports, self.bloom, "Bloom-filter bits", dtype="bits")
        if reports.size:
            check(reports.min() >= 0 and reports.max() <= 1, "reports", "bits must be 0 or 1")
        return reports

    def aggregate(self, reports: np.ndarray) -> np.ndarray:
        """int64 vector of length bloom: how many reports set each bit."""
        return oracle.column_counts(self._check_reports(reports))

    def log_probability(self, reports: np.ndarray, value: int) -> np.ndarray:
        """``ln P[report | value]`` for every report (exact)."""
        reports = self._check_reports(reports).astype(bool)
        one = self.bit_probabilities(value)
        return np.where(reports, np.log(one), np.log1p(-one)).sum(axis=1)

    def bit_estimates(self, aggregate: np.ndarray, n: int) -> np.ndarray:
        """Unbiased ``t̂_b = (c_b - n p*)/(q* - p*)``: users whose Bloom filter sets bit b."""
        oracle.check_count(n, 0)
        agg = oracle.check_aggregate(aggregate, self.bloom)
        return (agg - n * self.p_star) / (self.q_star - self.p_star)

    def estimate_counts(self, aggregate: np.ndarray, n: int) -> np.ndarray:
        """Least-squares counts ``argmin ||design^T N - t̂|| = W t̂``, with the decoder
        ``W = pinv(design^T)`` computed once at construction.

        Unbiased since the design has full rank. ``aggregate`` may be stacked along
        leading axes (one row per run).
        """
        return self.bit_estimates(aggregate, n) @ self.decoder.T

    def variance(self, frequencies: np.ndarray, n: int) -> np.ndarray:
        """Exact variance of each estimated frequency: ``sum_b W[i,b]² v_b / (n (q*-p*))²``.

        ``v_b = t_b q*(1-q*) + (n - t_b) p*(1-p*)``, ``t = design^T (n f)`` (module doc).
        """
        oracle.check_count(n, 0)
        f = np.asarray(frequencies, dtype=float)
        check(f.shape == (self.domain,), "frequencies",
              f"must have one entry per item ({self.domain}) (got shape {f.shape})")
        counts = f * n
        t = self.design.T.astype(float) @ counts
        total = counts.sum()
        v = t * self.q_star * (1 - self.q_star) + (total - t) * self.p_star * (1 - self.p_star)
        return self.decoder**2 @ v / ((self.q_star - self.p_star) * max(n, 1)) ** 2

    def describe(self) -> dict:
        return {"name": self.name, "epsilon": self.epsilon, "delta": 0.0,
                "epsilon_permanent": self.epsilon_permanent, "domain": int(self.domain),
                "f": float(self.f), "p": float(self.p), "q": float(self.q),
                "hashes": int(self.hashes), "bloom": int(self.bloom),
                "hash_seed": int(self.hash_seed), "p_star": self.p_star,
                "q_star": self.q_star,
                "report": "uint8 (n, bloom): the instantaneous bits"}
