"""Apple's count-mean sketch (CMS) and Hadamard count-mean sketch (HCMS).

Both share k public hash functions ``h_0..h_{k-1}: [d] -> [m]`` drawn from the universal
family of :mod:`netdp.mechanisms._hashing` with ``draw_keys(default_rng(hash_seed), k)``
(``hash_table[l, i] = h_l(i)``). A user with item ``x`` draws a row ``J`` uniformly.

* **CMS**: encode ``v in {-1, 1}^m``, +1 only at ``h_J(x)``; flip every coordinate with
  probability ``1/(1+e^{ε/2})``; report ``(J, ṽ)``. Two items differ in two coordinates,
  so the report is ε-LDP (``ε/2`` per coordinate). Server:
  ``M[J] += k (c_ε/2 ṽ + 1/2)``, ``c_ε = (e^{ε/2}+1)/(e^{ε/2}-1)``.
* **HCMS**: the user draws a coefficient ``L`` uniformly in ``[0, m)`` and sends
  ``(J, L, b)``, ``b = H[L, h_J(x)]`` (a ±1 entry of the Sylvester matrix) flipped with
  probability ``1/(1+e^ε)``. Server: ``M[J, L] += k c_ε b`` with
  ``c_ε = (e^ε+1)/(e^ε-1)``, then ``M <- M H`` (:func:`fwht` along the rows, *not*
  divided by m: ``E[M[J, L]]`` carries the factor ``1/m`` of drawing L, and ``H H = m I``).

Estimate (both): ``f(d) = (m/(m-1)) ((1/k) sum_l M[l, h_l(d)] - n/m)``.

Moments. User u contributes ``Y_u = (1/k) M_u[J, h_J(d)]`` to the sum for item d. With
``π(d, x) = (1/k) #{l : h_l(d) = h_l(x)}`` (1 when ``x = d``), ``E[Y_u] = π(d, x_u)`` and

* CMS: ``Var[Y_u] = (c_ε²-1)/4 + π(1-π)``   (``Y = c_ε ṽ/2 + 1/2``, ``E[ṽ | J] = ±1/c_ε``),
* HCMS: ``Var[Y_u] = c_ε² - π²``            (``Y = ±c_ε``).

*Given the hash keys* (exact; :meth:`expected_counts_given_keys`, :meth:`variance`)::

    E[f(d)]   = (m/(m-1)) (sum_x N_x π(d, x) - n/m)
              = N_d + (m/(m-1)) sum_{x != d} N_x (π(d, x) - 1/m),
    Var[f(d)] = (m/(m-1))² sum_x N_x Var[Y | π(d, x)].

So the estimate is **biased for fixed keys** (it subtracts the *average* collision mass
``(n - N_d)/m`` instead of the actual one); it is unbiased over the draw of the keys.

*Over the draw of the keys* as well (:meth:`variance_over_keys`). The rows are
independent and for ``x != d`` the shared family gives ``P[h(x) = h(d)] = ρ`` exactly
(:func:`collision_probability`; ``ρ = 1/m - (m-1)/(m P)`` for m a power of two,
``P = 2^31 - 1``), so ``E[π] = ρ``, ``E[π²] = ρ/k + (1 - 1/k) ρ²``, the mean is
``N_d - (m/(m-1)) (n - N_d)(1/m - ρ)`` (``= N_d - (n - N_d)/P`` for m a power of two:
negligible) and::

    Var[f(d)] = (m/(m-1))² [ N_d V_self + (n - N_d) V_other + ρ(1-ρ)/k sum_{x != d} N_x² ]

    CMS:  V_self = (c_ε²-1)/4,  V_other = (c_ε²-1)/4 + ρ(1-ρ)(1 - 1/k)
    HCMS: V_self = c_ε² - 1,    V_other = c_ε² - ρ/k - (1-1/k) ρ²

The last term is the variance over the keys of the collision mass
``sum_x N_x π(d, x)``; it is exact when the collision indicators ``1[h(x) = h(d)]`` of
distinct x are uncorrelated (a 3-wise independent family, e.g. fully random hashes as in
Apple's analysis). The shared family ``((a x + b) mod P) mod m`` is only 2-universal:
for nearby item ids the events ``h(x) = h(d)`` and ``h(y) = h(d)`` are strongly
correlated, so once two or more items other than d carry mass the across-key variance
exceeds this formula (by 1.3-1.8x in collision-dominated test settings).
Hence :meth:`variance` is the exact fixed-key figure, and this one is reported as the
idealised across-key figure.

Pure-LDP view (over the keys, ``ρ`` for the collision probability): a CMS report supports
``i`` when ``ṽ[h_J(i)] = +1``: ``p* = e^{ε/2}/(1+e^{ε/2})``, ``q* = ρ p* + (1-ρ)(1-p*)``;
an HCMS report supports ``i`` when ``b H[L, h_J(i)] = +1``: ``p* = e^ε/(1+e^ε)``,
``q* = ρ p* + (1-ρ)/2``. With ``ρ = 1/m`` Apple's estimate *is* the generic estimator
``(C_i - n q*)/(p* - q*)``; its variance is not the generic one, because all users share
the same k hash functions (the ``sum N_x²`` term).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt

from netdp.core.errors import check
from netdp.mechanisms._hadamard import fwht, hadamard_entry
from netdp.mechanisms._hashing import (
    PRIME,
    collision_probability,
    hash_range,
    hash_values,
    public_hashes,
    public_keys,
)
from netdp.mechanisms._kernels import signs_below, sketch_row_sums
from netdp.mechanisms._oracle import (
    check_categories,
    check_count,
    check_domain,
    check_epsilon,
    check_int,
    check_reports,
    is_int,
    row_chunks,
    threshold_bytes,
)
from netdp.mechanisms.base import FrequencyOracle


@dataclass(frozen=True)
class _CountMeanSketch(FrequencyOracle):
    """Shared part of CMS and HCMS: hashing, the estimate and its moments.

    Parameters (both)
    -----------------
    epsilon
        Privacy level of one report (> 0).
    domain
        Number of items d (>= 2).
    k
        Number of hash functions (rows of the sketch), default 16.
    m
        Sketch width (range of each hash), >= 2, default 1024 (HCMS: a power of two).
    hash_seed
        Seed of the public hash keys ``draw_keys(default_rng(hash_seed), k)``.

    Attributes (both)
    -----------------
    rho
        Exact collision probability of the hash family into [m].
    keys
        The k hash keys, int64 (k, 2).
    hash_table
        ``hash_table[l, i] = h_l(i)``, int32 (k, d), built on first use (k d 4 bytes):
        the oracle itself hashes a row or the reports' items when it needs them, and
        keeps the table only when it is small (:attr:`table_limit`).
    """

    epsilon: float
    domain: int
    k: int = 16
    m: int = 1024
    hash_seed: int = 0
    p: float = field(init=False)
    c_eps: float = field(init=False)
    rho: float = field(init=False)
    keys: np.ndarray = field(init=False, repr=False, compare=False)

    #: Largest hash table (bytes) the oracle builds and keeps for its own use.
    table_limit = 1 << 24

    # privacy budget of one randomized coordinate (ε/2 for CMS, ε for HCMS)
    def _coordinate_epsilon(self) -> float:
        raise NotImplementedError

    def _check_m(self) -> None:
        check_int(self.m, "m", 2)

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_domain(self.domain, PRIME - 1)
        check_int(self.k, "k", 1)
        self._check_m()
        check_int(self.hash_seed, "hash_seed", 0)
        e = self._coordinate_epsilon()
        object.__setattr__(self, "p", 1.0 / (1.0 + math.exp(-e)))
        object.__setattr__(self, "c_eps", 1.0 / math.tanh(e / 2))
        object.__setattr__(self, "rho", collision_probability(self.m))
        object.__setattr__(self, "keys", public_keys(self.hash_seed, self.k))

    @cached_property
    def hash_table(self) -> np.ndarray:
        """``hash_table[l, i] = h_l(i)``: int32 (k, d), built on first use."""
        return public_hashes(self.hash_seed, self.k, self.domain, self.m)[1]

    def _keeps_table(self) -> bool:
        return "hash_table" in self.__dict__ or 4 * self.k * self.domain <= self.table_limit

    def hash_row(self, row: int) -> np.ndarray:
        """``h_row(i)`` for every item i: an intp array (d,) (from the table when it is
        kept, else hashed afresh)."""
        if self._keeps_table():
            return self.hash_table[row].astype(np.intp)
        return hash_range(self.keys[row], self.domain, self.m)

    def hash_items(self, rows: np.ndarray, items: npt.ArrayLike) -> np.ndarray:
        """``h_rows[u](items[u])`` for every u (intp, broadcast), without the table."""
        return hash_values(self.keys[np.asarray(rows, dtype=np.intp)], items, self.m)

    def table_bytes(self) -> int:
        """The int32 hash table when the oracle keeps it (:attr:`table_limit`), else 0."""
        return 4 * self.k * self.domain if self._keeps_table() else 0

    def vector_bytes(self) -> int:
        """The sketches (k m entries: aggregate, part, sums), and the ~d vectors of the
        estimate and of :meth:`collision_sums` (with its bucket-pair counts, m² or a sort)."""
        d, m = self.domain, self.m
        pairs = 8 * m * m if 8 * m * m <= max(8 * d, self.table_limit) else 48 * d
        return 8 * 6 * self.k * m + 8 * 12 * d + pairs

    @property
    def q(self) -> float:
        """Probability that a coordinate (CMS) or the bit (HCMS) is flipped."""
        t = math.exp(-self._coordinate_epsilon())
        return t / (1.0 + t)

    def _log_pq(self) -> tuple[float, float]:
        """``(ln p, ln q)``, stable for large ε."""
        e = self._coordinate_epsilon()
        log_p = -math.log1p(math.exp(-e))
        return log_p, log_p - e

    @property
    def p_star(self) -> float:
        """Probability that a report supports its own item."""
        return self.p

    @property
    def q_star(self) -> float:
        """Probability, over the keys, that a report supports a given other item."""
        raise NotImplementedError

    # -- estimate ------------------------------------------------------------------------

    def sketch(self, aggregate: npt.ArrayLike) -> np.ndarray:
        """The debiased k x m count sketch ``M`` from the aggregate."""
        raise NotImplementedError

    def _unflatten(self, aggregate: npt.ArrayLike) -> np.ndarray:
        """The flattened k x m aggregate as a float (k, m) array, after checking its size."""
        agg = np.asarray(aggregate, dtype=float)
        check(agg.shape == (self.k * self.m,), "aggregate",
              f"must be the flattened k x m sketch, {self.k * self.m} entries "
              f"(got shape {agg.shape})")
        return agg.reshape(self.k, self.m)

    def estimate_counts(self, aggregate: npt.ArrayLike, n: int) -> np.ndarray:
        """``(m/(m-1)) ((1/k) sum_l M[l, h_l(d)] - n/m)`` for every item d.

        Unbiased over the draw of the hash keys; for fixed keys its mean is
        :meth:`expected_counts_given_keys`.
        """
        check_count(n, 0)
        sk = self.sketch(aggregate)
        mean = sk[0][self.hash_row(0)]  # the row sum in row order, as mean(axis=0) adds
        for row in range(1, self.k):
            mean += sk[row][self.hash_row(row)]
        mean /= self.k
        mean -= n / self.m
        mean *= self.m / (self.m - 1)
        return mean

    # -- moments -------------------------------------------------------------------------

    def _variance_sum(self, n: float, s1: np.ndarray, s2: np.ndarray) -> np.ndarray:
        """``sum_x N_x Var[Y | π(d, x)]`` from ``n``, ``s1 = sum N π`` and ``s2 = sum N π²``.

        ``Var[Y | π]`` is affine in ``(π, π²)`` (module doc), so the sums suffice.
        """
        raise NotImplementedError

    def _counts(self, frequencies: np.ndarray, n: int) -> np.ndarray:
        check_count(n, 0)
        f = np.asarray(frequencies, dtype=float)
        check(f.shape == (self.domain,), "frequencies",
              f"must have one entry per item ({self.domain}) (got shape {f.shape})")
        return f * n

    def collisions(self, items: np.ndarray) -> np.ndarray:
        """``π(i, x)``: fraction of rows where ``h_l(i) = h_l(x)``, shape (len(items), d)."""
        items = check_categories(items, self.domain)
        out = np.empty((items.size, self.domain))
        for s in row_chunks(items.size, self.k * self.domain):
            rows = self.hash_table[:, items[s], None] == self.hash_table[:, None, :]
            out[s] = rows.mean(axis=0)
        return out

    def collision_sums(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``sum_x N_x π(d, x)`` and ``sum_x N_x π(d, x)²`` for every item d.

        Bucket masses per row (and per pair of rows for the squares): O(k² d log d), or
        the explicit collision matrix, O(k d²), whichever is cheaper.
        """
        counts = np.asarray(counts, dtype=float)
        k, m, d = self.k, self.m, self.domain
        if k * max(1.0, math.log2(d)) / 2 >= d:
            s1, s2 = np.empty(d), np.empty(d)
            for s in row_chunks(d, k * d):
                pi = self.collisions(np.arange(s.start, s.stop))
                s1[s], s2[s] = pi @ counts, pi**2 @ counts
            return s1, s2
        same = np.zeros(d)  # sum over rows l of the mass in bucket h_l(d)
        for row in range(k):
            bucket = self.hash_row(row)
            same += np.bincount(bucket, weights=counts, minlength=m)[bucket]
        both = np.zeros(d)  # sum over pairs l < l' of the mass in both buckets
        direct = 8 * m * m <= max(8 * d, self.table_limit)  # bucket pairs by index
        for a in range(k - 1):
            first = self.hash_row(a)
            first *= m
            for b in range(a + 1, k):
                pair = self.hash_row(b)
                pair += first
                if not direct:
                    pair = np.unique(pair, return_inverse=True)[1]
                both += np.bincount(pair, weights=counts)[pair]
        return same / k, (same + 2 * both) / k**2

    def expected_counts_given_keys(self, counts: np.ndarray) -> np.ndarray:
        """Exact mean of :meth:`estimate_counts` for true ``counts``, given these keys.

        ``(m/(m-1)) (sum_x N_x π(d, x) - n/m)``: differs from ``counts`` by the collision
        mass minus its average over the keys.
        """
        counts = np.asarray(counts, dtype=float)
        check(counts.shape == (self.domain,), "counts",
              f"must have one entry per item ({self.domain}) (got shape {counts.shape})")
        s1, _ = self.collision_sums(counts)
        return self.m / (self.m - 1) * (s1 - counts.sum() / self.m)

    def variance(self, frequencies: np.ndarray, n: int) -> np.ndarray:
        """Exact variance of each estimated frequency, given this instance's hash keys.

        ``(m/(m-1))² sum_x N_x Var[Y | π(d, x)] / n²`` with ``N = n f``; CMS:
        ``Var[Y | π] = (c_ε²-1)/4 + π(1-π)``, HCMS: ``c_ε² - π²`` (module doc). The
        estimate also has the fixed-key bias ``expected_counts_given_keys(N) - N``.
        """
        counts = self._counts(frequencies, n)
        s1, s2 = self.collision_sums(counts)
        total = self._variance_sum(counts.sum(), s1, s2)
        return (self.m / (self.m - 1)) ** 2 * total / max(n, 1) ** 2

    def variance_over_keys(self, frequencies: np.ndarray, n: int) -> np.ndarray:
        """Variance of each estimated frequency over the users *and* the hash keys.

        ``(m/(m-1))² [N_d V_self + (n-N_d) V_other + ρ(1-ρ)/k sum_{x!=d} N_x²] / n²``
        (module doc). Exact for a 3-wise independent family (Apple's idealisation); for
        the shared 2-universal family exact only when at most one item other than d
        carries mass, and otherwise an underestimate of the collision term.
        """
        counts = self._counts(frequencies, n)
        rho, k, total_n = self.rho, self.k, counts.sum()
        others = total_n - counts
        s1 = counts + others * rho
        s2 = counts + others * (rho / k + (1 - 1 / k) * rho**2)
        spread = rho * (1 - rho) / k * (np.sum(counts**2) - counts**2)
        total = self._variance_sum(total_n, s1, s2) + spread
        return (self.m / (self.m - 1)) ** 2 * total / max(n, 1) ** 2

    def _describe(self) -> dict:
        return {"name": self.name, "epsilon": float(self.epsilon), "delta": 0.0,
                "domain": int(self.domain), "k": int(self.k), "m": int(self.m),
                "hash_seed": int(self.hash_seed), "p": self.p, "q": self.q,
                "c_eps": self.c_eps, "p_star": self.p_star, "q_star": self.q_star,
                "collision_probability": self.rho}


@dataclass(frozen=True)
class CMS(_CountMeanSketch):
    """Apple's count-mean sketch: ε-LDP, a row index and m signs per user.

    ``CMS(epsilon, domain, k=16, m=1024, hash_seed=0)`` (see :class:`_CountMeanSketch`):
    each of the m coordinates is flipped with probability ``1/(1+e^{ε/2})``, so
    :attr:`p` (keeping one) is ``e^{ε/2}/(1+e^{ε/2})`` and :attr:`c_eps` is
    ``(e^{ε/2}+1)/(e^{ε/2}-1)``.
    """

    name = "cms"

    def _coordinate_epsilon(self) -> float:
        return self.epsilon / 2

    @property
    def q_star(self) -> float:
        """Probability, over the keys, that a report supports a given other item."""
        return self.rho * self.p + (1 - self.rho) * self.q

    @property
    def report_dtype(self) -> np.dtype:
        """int8 for k <= 128 (the default), else the smallest signed type holding k - 1."""
        for dt in (np.int8, np.int16, np.int32):
            if self.k - 1 <= np.iinfo(dt).max:
                return np.dtype(dt)
        return np.dtype(np.int64)

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Reports of shape (n, 1 + m), :attr:`report_dtype`: column 0 is the row j,
        columns 1..m the perturbed signs ``ṽ`` in {-1, +1}.

        Draws, in order: the rows of all users (``integers(0, k, n)``), then, block of
        users by block, one Bernoulli(q) flip per coordinate from the generator's bytes
        (:func:`~netdp.mechanisms._oracle.bernoulli`; blocks of about
        8 x :data:`~netdp.mechanisms._oracle.CHUNK_ELEMENTS` coordinates, fixed by n and
        m).
        """
        x = check_categories(values, self.domain)
        j = rng.integers(0, self.k, x.size)
        col = self.hash_items(j, x)
        out = np.empty((x.size, 1 + self.m), dtype=self.report_dtype)
        for s in row_chunks(x.size, self.m, itemsize=1):
            self._fill(out[s], j[s], col[s], rng)
        return out

    def _fill(self, block: np.ndarray, j: np.ndarray, col: np.ndarray,
              rng: np.random.Generator) -> None:
        """Draw one block of reports into ``block`` (rows, 1 + m): the rows ``j`` and the
        flips of the signs of items hashed to ``col``."""
        rows, m = len(j), self.m
        block[:, 0] = j
        byte, level, ties, hit = threshold_bytes(rng, self.q, rows * m)
        signs_below(byte, level, block)  # ṽ = +1 where the -1 of v flips, else -1
        block[ties // m, 1 + ties % m] = np.where(hit, 1, -1)
        block[np.arange(rows), 1 + col] *= -1  # at h_j(x), where v = +1

    def perturb_aggregate(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``aggregate(perturb(values, rng))``, the same draws, drawing and summing one
        block of :meth:`perturb` at a time (never all n x (1 + m) reports)."""
        x = check_categories(values, self.domain)
        j = rng.integers(0, self.k, x.size)
        col = self.hash_items(j, x)
        counts = np.zeros(self.k, dtype=np.int64)
        sums = np.zeros((self.k, self.m), dtype=np.int64)
        block = np.empty((min(x.size, self.block_rows()), 1 + self.m), dtype=self.report_dtype)
        for s in row_chunks(x.size, self.m, itemsize=1):
            part = block[:s.stop - s.start]
            self._fill(part, j[s], col[s], rng)
            block_counts, block_sums, _ = sketch_row_sums(part, self.k)
            counts += block_counts
            sums += block_sums
        return self._sketch(counts, sums)

    def block_rows(self) -> int:
        """Reports drawn at once: the blocks of :meth:`perturb`, fixed by m (about 8 MB)."""
        return next(row_chunks(1 << 62, self.m, itemsize=1)).stop

    def report_bytes(self) -> int:
        """A report is 1 + m bytes; drawing it holds about 2 m more (bytes, tie test)."""
        return 3 * self.m + 32

    def _check_reports(self, reports: np.ndarray) -> np.ndarray:
        reports = check_reports(reports, 1 + self.m, "a row index and m signs")
        if len(reports):
            j = reports[:, 0]
            check(j.min() >= 0 and j.max() < self.k
                  and bool(np.all(np.abs(reports[:, 1:]) == 1)), "reports",
                  f"need 0 <= j < {self.k} in column 0 and signs in {{-1, +1}} elsewhere")
        return reports

    def aggregate(self, reports: np.ndarray) -> np.ndarray:
        """The sketch ``M`` (k x m, flattened): ``M[j] += k (c_ε/2 ṽ + 1/2)`` per report."""
        reports = check_reports(reports, 1 + self.m, "a row index and m signs")
        if reports.dtype != self.report_dtype or not reports.flags.c_contiguous:
            reports = np.ascontiguousarray(reports, dtype=np.int64)
        counts, sums, bad = sketch_row_sums(reports, self.k)  # one compiled pass, checked
        check(bad == 0, "reports",
              f"need 0 <= j < {self.k} in column 0 and signs in {{-1, +1}} elsewhere "
              f"({bad} reports are not)")
        return self._sketch(counts, sums)

    def _sketch(self, counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
        """The flattened sketch from the reports per row and their sign sums per row."""
        sk = self.k * (self.c_eps / 2 * sums + counts[:, None] / 2)
        return sk.ravel()

    def sketch(self, aggregate: npt.ArrayLike) -> np.ndarray:
        return self._unflatten(aggregate)

    def _variance_sum(self, n, s1, s2):
        return n * (self.c_eps**2 - 1) / 4 + s1 - s2

    def log_probability(self, reports: np.ndarray, value: int) -> np.ndarray:
        """``ln P[report | value]`` for every report (exact, given the keys)."""
        reports = self._check_reports(reports)
        check_categories(np.array([value]), self.domain)
        j = reports[:, 0].astype(np.intp)
        hit = self.hash_items(j, value)
        agree = np.count_nonzero(reports[:, 1:] == -1, axis=1)  # ṽ = v where v = -1 ...
        top = reports[np.arange(len(reports)), 1 + hit]
        agree = agree - (top == -1) + (top == 1)  # ... except at h_j(value), where v = +1
        log_p, log_q = self._log_pq()
        return -math.log(self.k) + agree * log_p + (self.m - agree) * log_q

    def describe(self) -> dict:
        out = self._describe()
        out["report"] = f"{self.report_dtype} (n, 1 + m): row j, then m signs in {{-1, +1}}"
        return out


@dataclass(frozen=True)
class HCMS(_CountMeanSketch):
    """Hadamard count-mean sketch: ε-LDP, a row, a coefficient index and one bit per user.

    ``HCMS(epsilon, domain, k=16, m=1024, hash_seed=0)`` (see :class:`_CountMeanSketch`;
    m a power of two): the one bit is flipped with probability ``1/(1+e^ε)``, so
    :attr:`p` (sending the true bit) is ``e^ε/(1+e^ε)`` and :attr:`c_eps` is
    ``(e^ε+1)/(e^ε-1)``.
    """

    name = "hcms"

    def _coordinate_epsilon(self) -> float:
        return float(self.epsilon)

    def _check_m(self) -> None:
        check(is_int(self.m) and self.m >= 2 and not self.m & (self.m - 1), "m",
              f"the HCMS sketch width must be a power of two >= 2 (got {self.m!r})")

    @property
    def q_star(self) -> float:
        """Probability, over the keys, that a report supports a given other item."""
        return self.rho * self.p + (1 - self.rho) / 2

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Reports as an int64 array (n, 3): row j, coefficient l, bit in {-1, +1}.

        Draws, in order: the rows, the coefficients, one uniform per user (the bit
        ``H[l, h_j(x)]`` flips when it is below ``q``).
        """
        x = check_categories(values, self.domain)
        n = x.size
        j = rng.integers(0, self.k, n)
        ell = rng.integers(0, self.m, n)
        flip = rng.random(n) < self.q
        bit = hadamard_entry(ell, self.hash_items(j, x))
        out = np.empty((n, 3), dtype=np.int64)
        out[:, 0], out[:, 1] = j, ell
        out[:, 2] = np.where(flip, -bit, bit)
        return out

    def report_bytes(self) -> int:
        """A report is three int64; drawing it (hash, Hadamard entry) holds about 16 more."""
        return 160

    def _check_reports(self, reports: np.ndarray) -> np.ndarray:
        reports = check_reports(reports, 3, "(j, l, bit)")
        if len(reports):
            j, ell, bit = reports.T
            check(j.min() >= 0 and j.max() < self.k and ell.min() >= 0
                  and ell.max() < self.m and bool(np.all(np.abs(bit) == 1)), "reports",
                  f"need 0 <= j < {self.k}, 0 <= l < {self.m} and bit in {{-1, +1}}")
        return reports

    def aggregate(self, reports: np.ndarray) -> np.ndarray:
        """The untransformed sketch (k x m, flattened): ``M[j, l] += k c_ε bit``.

        :meth:`sketch` applies the Hadamard transform (linear, so aggregates still add).
        """
        reports = self._check_reports(reports)
        flat = reports[:, 0] * self.m + reports[:, 1]
        sums = np.bincount(flat, weights=reports[:, 2], minlength=self.k * self.m)
        return self.k * self.c_eps * sums

    def sketch(self, aggregate: npt.ArrayLike) -> np.ndarray:
        """``M H`` (rows transformed by :func:`fwht`, unnormalised): the count sketch."""
        return fwht(self._unflatten(aggregate))

    def _variance_sum(self, n, s1, s2):
        return n * self.c_eps**2 - s2

    def log_probability(self, reports: np.ndarray, value: int) -> np.ndarray:
        """``ln P[report | value]`` for every report (exact, given the keys)."""
        reports = self._check_reports(reports)
        check_categories(np.array([value]), self.domain)
        j, ell, bit = reports.T
        true = hadamard_entry(ell, self.hash_items(j, value))
        log_p, log_q = self._log_pq()
        return -math.log(self.k * self.m) + np.where(bit == true, log_p, log_q)

    def describe(self) -> dict:
        out = self._describe()
        out["report"] = "int64 (n, 3): row j, Hadamard coefficient l, bit in {-1, +1}"
        return out
