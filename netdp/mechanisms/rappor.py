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

Memory. Up to :data:`DENSE_DESIGN` entries the design and W are dense d x bloom arrays.
Beyond, W is never formed: items and bits split into the connected blocks of the
bipartite graph "item x sets bit b" (a few items each when ``bloom >= 2d``), the least
squares separate over the blocks, and each block's own pseudo-inverse is kept (blocks of
one shape are stacked): O(d h + bloom) memory instead of O(d bloom), the same W up to
rounding.

Variance (exact). Given the values the bits of one report are independent, and reports
are independent, so ``Cov(c) = diag(v)`` with
``v_b = t_b q*(1-q*) + (n - t_b) p*(1-p*)`` (no cross-bit covariance: it would only arise
if the values themselves were random), and ``Var[N̂_i] = sum_b W[i,b]² v_b / (q*-p*)²``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt
from scipy import sparse
from scipy.sparse import csgraph

from netdp.core.errors import check
from netdp.core.roots import smallest_within
from netdp.mechanisms import _oracle as oracle
from netdp.mechanisms._hashing import public_hashes
from netdp.mechanisms.base import FrequencyOracle, memory_total

#: Largest design (d x bloom entries) decoded as one dense matrix; larger ones are decoded
#: block by block (module doc).
DENSE_DESIGN = 1 << 21


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


def design_blocks(bits: np.ndarray, domain: int,
                  bloom: int) -> tuple[list[tuple[np.ndarray, np.ndarray]], np.ndarray]:
    """The connected blocks of the design, grouped by shape.

    Parameters
    ----------
    bits
        ``bits[t, x] = h_t(x)``, shape (hashes, domain).
    domain, bloom
        Number of items and of Bloom bits.

    Returns
    -------
    groups
        One ``(items, used)`` pair per block shape (c items, k bits): intp arrays (G, c)
        and (G, k), one row per block, items and bits in increasing order.
    local
        intp array (bloom,): the position of each used bit in its block's row of ``used``.
    """
    hashes = bits.shape[0]
    item_ids = np.tile(np.arange(domain), hashes)
    graph = sparse.coo_matrix(
        (np.ones(item_ids.size, dtype=np.int8), (item_ids, domain + bits.ravel())),
        shape=(domain + bloom, domain + bloom))
    count, labels = csgraph.connected_components(graph, directed=False)
    del graph, item_ids
    used = np.unique(bits)
    item_label, bit_label = labels[:domain], labels[domain + used]
    n_items = np.bincount(item_label, minlength=count)
    n_bits = np.bincount(bit_label, minlength=count)
    item_order = np.argsort(item_label, kind="stable")
    bit_order = used[np.argsort(bit_label, kind="stable")]
    item_start = np.cumsum(n_items) - n_items
    bit_start = np.cumsum(n_bits) - n_bits
    local = np.zeros(bloom, dtype=np.intp)
    local[bit_order] = np.arange(used.size) - bit_start[labels[domain + bit_order]]
    blocks = np.flatnonzero(n_items)
    shape = n_items[blocks] * (bloom + 1) + n_bits[blocks]
    groups = []
    for key in np.unique(shape):
        members = blocks[shape == key]
        c, k = divmod(int(key), bloom + 1)
        groups.append((item_order[item_start[members, None] + np.arange(c)],
                       bit_order[bit_start[members, None] + np.arange(k)]))
    return groups, local


def block_design(bits: np.ndarray, items: np.ndarray, used: np.ndarray,
                 local: np.ndarray) -> np.ndarray:
    """The stacked design blocks of one shape, float (G, c, k): ``[g, i, j] = 1`` when item
    ``items[g, i]`` sets bit ``used[g, j]``."""
    count, c = items.shape
    out = np.zeros((count, c, used.shape[1]))
    group, row = np.repeat(np.arange(count), c), np.tile(np.arange(c), count)
    for hashed in bits:
        out[group, row, local[hashed[items.ravel()]]] = 1.0
    return out


def _group_bytes(groups: list[tuple[np.ndarray, np.ndarray]]) -> tuple[int, int]:
    """Bytes of the stacked block decoders with their indices, and of the largest group's
    decoder (what one pseudo-inverse works on)."""
    sizes = [items.size * used.shape[1] * 8 for items, used in groups]
    index = sum(8 * (items.size + used.size) for items, used in groups)
    return sum(sizes) + index, max(sizes, default=0)


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
    bits
        ``bits[t, x] = h_t(x)``: the Bloom bits of every item, int32 (hashes, d).
    dense
        Whether the design is decoded as one dense matrix (at most :data:`DENSE_DESIGN`
        entries) or block by block (module doc).
    design
        ``design[x, b] = 1`` when item x sets bit b, uint8 (d, bloom): kept when the
        design is dense (:data:`DENSE_DESIGN`), else built on demand (up to
        :attr:`budget_bytes`).
    decoder
        ``W = pinv(design^T)``, float (d, bloom): kept when the design is dense, else built
        on demand from the blocks (up to :attr:`budget_bytes`).
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
    bits: np.ndarray = field(init=False, repr=False, compare=False)
    dense: bool = field(init=False, repr=False, compare=False)
    #: The design's blocks ``(items, used, decoder)`` when it is not dense (set by
    #: :meth:`_decode_blocks`; absent when the design is dense).
    _blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(
        init=False, repr=False, compare=False)
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
        object.__setattr__(self, "keys", keys)
        object.__setattr__(self, "bits", bits)
        object.__setattr__(self, "dense", self.domain * self.bloom <= DENSE_DESIGN)
        if self.dense:
            design = self._dense_design()
            rank = int(np.linalg.matrix_rank(design.astype(float)))
        else:
            rank = self._decode_blocks()
        check(rank == self.domain, "hash_seed",
              f"the Bloom design (domain x bloom) has rank {rank} < domain = {self.domain}: "
              "items are not linearly separable; pick another hash_seed or a larger bloom")
        p_star, q_star = rappor_probabilities(self.f, self.p, self.q)
        object.__setattr__(self, "p_star", p_star)
        object.__setattr__(self, "q_star", q_star)
        object.__setattr__(self, "epsilon", rappor_epsilon(self.f, self.p, self.q, self.hashes))
        object.__setattr__(self, "epsilon_permanent",
                           rappor_permanent_epsilon(self.f, self.hashes))
        if self.dense:
            object.__setattr__(self, "design", design)
            object.__setattr__(self, "decoder", np.linalg.pinv(design.T.astype(float)))

    def _dense_design(self) -> np.ndarray:
        design = np.zeros((self.domain, self.bloom), dtype=np.uint8)
        design[np.arange(self.domain)[None, :], self.bits] = 1
        return design

    def _decode_blocks(self) -> int:
        """Pseudo-invert the design block by block (kept as ``_blocks``); its rank."""
        groups, local = design_blocks(self.bits, self.domain, self.bloom)
        designs = [block_design(self.bits, items, used, local) for items, used in groups]
        rank = sum(int(np.linalg.matrix_rank(design).sum()) for design in designs)
        if rank == self.domain:
            blocks = []
            for items, used in groups:  # each design block is dropped once inverted
                design = designs.pop(0)
                blocks.append((items, used, np.linalg.pinv(design.transpose(0, 2, 1))))
            object.__setattr__(self, "_blocks", blocks)
        return rank

    @cached_property
    def design(self) -> np.ndarray:
        """``design[x, b] = 1`` when item x sets bit b: uint8 (d, bloom)."""
        check(self.domain * self.bloom <= self.budget_bytes, "domain",
              f"the dense design would take {self.domain * self.bloom} bytes: use the bits")
        return self._dense_design()

    @cached_property
    def decoder(self) -> np.ndarray:
        """``W = pinv(design^T)``: float (d, bloom), assembled from the blocks."""
        check(8 * self.domain * self.bloom <= self.budget_bytes, "domain",
              f"the dense decoder would take {8 * self.domain * self.bloom} bytes")
        out = np.zeros((self.domain, self.bloom))
        for items, used, decoder in self._blocks:
            out[items[:, :, None], used[:, None, :]] = decoder
        return out

    @classmethod
    def from_epsilon(cls, epsilon: float, domain: int, *, p: float = 0.5, q: float = 0.75,
                     hashes: int = 2, bloom: int = 32, hash_seed: int = 0) -> RAPPOR:
        """The RAPPOR whose one-report ε is ``epsilon``, with p, q, h fixed and f solved for.

        ε of one report falls continuously from ``h ln(q(1-p)/(p(1-q)))`` (f -> 0) to 0
        (f -> 1); f is the first float whose ε is <= ``epsilon``.
        """
        oracle.check_epsilon(epsilon)
        oracle.check_int(hashes, "hashes", 1)
        check(0 <= p < 1, "p", f"must lie in [0, 1) (got {p})")
        check(p < q <= 1, "q", f"must lie in (p, 1] = ({p}, 1] (got {q})")
        top = math.inf if p == 0 or q == 1 else hashes * math.log(q * (1 - p) / (p * (1 - q)))
        check(epsilon < top, "epsilon",
              f"one RAPPOR report with p = {p}, q = {q}, h = {hashes} has epsilon < {top:.6g} "
              f"for every f in (0, 1) (got {epsilon})")

        def epsilon_of(f: float) -> float:
            return rappor_epsilon(f, p, q, hashes)

        lo = 1e-12
        while epsilon_of(lo) < epsilon:  # only when the f -> 0 limit is barely above epsilon
            lo /= 1e3
        f = smallest_within(epsilon_of, epsilon, lo, 1 - 1e-15, param="epsilon", scale="log")
        return cls(domain, f=f, p=p, q=q, hashes=hashes, bloom=bloom, hash_seed=hash_seed)

    def bit_probabilities(self, value: int) -> np.ndarray:
        """``P[S_b = 1 | value]`` for every bit b (the bits are independent)."""
        oracle.check_categories(np.array([value]), self.domain)
        ones = np.zeros(self.bloom, dtype=bool)
        ones[self.bits[:, value]] = True
        return np.where(ones, self.q_star, self.p_star)

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
            out[s] = self._draw(x[s], rng)
        return out

    def _draw(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One block of reports of the items ``x``: uint8 (len(x), bloom)."""
        rows = x.size
        block = oracle.bernoulli(rng, self.p_star, rows * self.bloom).reshape(rows, -1)
        # the item's Bloom bits h_t(x), t < h (a bit set by two hashes is drawn twice;
        # the second draw stands, still a Bernoulli(q*))
        bits = self.bits[:, x]
        block[np.arange(rows), bits] = oracle.bernoulli(rng, self.q_star, bits.size
                                                        ).reshape(bits.shape)
        return block

    def perturb_aggregate(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``aggregate(perturb(values, rng))``, the same draws, counting one block of
        :meth:`perturb` at a time (never all n x bloom bits)."""
        x = oracle.check_categories(values, self.domain)
        counts = np.zeros(self.bloom, dtype=np.int64)
        for s in oracle.row_chunks(x.size, self.bloom, itemsize=1):
            counts += oracle.column_counts(self._draw(x[s], rng))
        return counts

    def block_rows(self) -> int:
        """Reports drawn at once: the blocks of :meth:`perturb`, fixed by bloom (8 MB)."""
        return next(oracle.row_chunks(1 << 62, self.bloom, itemsize=1)).stop

    def report_bytes(self) -> int:
        """A report is bloom bytes; drawing it holds about bloom more (the tie test)."""
        return 2 * self.bloom + 16 * self.hashes + 16

    def table_bytes(self) -> int:
        """The bits, and the dense design and decoder or the block decoders."""
        return self._table_bytes(self.domain, self.bloom, self.hashes,
                                 None if self.dense else _group_bytes(
                                     [(items, used) for items, used, _ in self._blocks]))

    @staticmethod
    def _table_bytes(domain: int, bloom: int, hashes: int,
                     blocks: tuple[int, int] | None) -> int:
        """Tables (see :meth:`table_bytes`) and the peak of building them: the dense
        design's pseudo-inverse, or the block graph and the largest group's one."""
        base = 4 * hashes * domain
        if blocks is None:
            dense = domain * bloom
            return base + 9 * dense + 8 * (5 * dense + domain * domain)
        kept, largest = blocks
        graph = 48 * hashes * domain + 40 * bloom + 32 * domain
        return base + kept + max(graph, 6 * largest)

    def vector_bytes(self) -> int:
        """The aggregate and a part of it, the bit estimates, v and t (bloom each), the
        estimate, the variance and their temporaries (d each)."""
        return 8 * (6 * self.bloom + 5 * self.domain)

    @classmethod
    def memory_bound(cls, epsilon: float, domain: int, reports: int, **options) -> int:
        """:meth:`memory_bytes` of ``RAPPOR.from_epsilon(epsilon, domain, **options)``,
        from its hash table and block shapes only (no decoder is built: O(d h + bloom))."""
        hashes, bloom = options.get("hashes", 2), options.get("bloom", 32)
        oracle.check_int(bloom, "bloom", 1)
        oracle.check_domain(domain, bloom)
        oracle.check_int(hashes, "hashes", 1)
        blocks = None
        if domain * bloom > DENSE_DESIGN:
            bits = public_hashes(options.get("hash_seed", 0), hashes, domain, bloom)[1]
            blocks = _group_bytes(design_blocks(bits, domain, bloom)[0])
        shell = object.__new__(cls)  # the per-report figures need only these fields
        for name, value in (("domain", domain), ("bloom", bloom), ("hashes", hashes)):
            object.__setattr__(shell, name, value)
        rows = min(max(0, int(reports)), cls.call_rows)
        return memory_total(cls._table_bytes(domain, bloom, hashes, blocks),
                            shell.vector_bytes(), shell.working_bytes(rows), cls._fixed_bytes)

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

    def bit_estimates(self, aggregate: npt.ArrayLike, n: int) -> np.ndarray:
        """Unbiased ``t̂_b = (c_b - n p*)/(q* - p*)``: users whose Bloom filter sets bit b."""
        oracle.check_count(n, 0)
        agg = oracle.check_aggregate(aggregate, self.bloom)
        return (agg - n * self.p_star) / (self.q_star - self.p_star)

    def estimate_counts(self, aggregate: npt.ArrayLike, n: int) -> np.ndarray:
        """Least-squares counts ``argmin ||design^T N - t̂|| = W t̂``, with the decoder
        ``W = pinv(design^T)`` computed once at construction.

        Unbiased since the design has full rank. ``aggregate`` may be stacked along
        leading axes (one row per run).
        """
        t = self.bit_estimates(aggregate, n)
        if self.dense:
            return t @ self.decoder.T
        out = np.empty(t.shape[:-1] + (self.domain,))
        for items, used, decoder in self._blocks:
            out[..., items] = (decoder @ t[..., used][..., None])[..., 0]
        return out

    def variance(self, frequencies: np.ndarray, n: int) -> np.ndarray:
        """Exact variance of each estimated frequency: ``sum_b W[i,b]² v_b / (n (q*-p*))²``.

        ``v_b = t_b q*(1-q*) + (n - t_b) p*(1-p*)``, ``t = design^T (n f)`` (module doc).
        """
        oracle.check_count(n, 0)
        f = np.asarray(frequencies, dtype=float)
        check(f.shape == (self.domain,), "frequencies",
              f"must have one entry per item ({self.domain}) (got shape {f.shape})")
        counts = f * n
        if self.dense:
            t = self.design.T.astype(float) @ counts
        else:  # design^T counts: each item's distinct bits
            first = np.ones(self.bits.shape, dtype=bool)
            for later in range(1, self.hashes):
                first[later] = np.all(self.bits[later] != self.bits[:later], axis=0)
            weights = np.broadcast_to(counts, self.bits.shape)[first]
            t = np.bincount(self.bits[first], weights=weights, minlength=self.bloom)
        total = counts.sum()
        v = t * self.q_star * (1 - self.q_star) + (total - t) * self.p_star * (1 - self.p_star)
        scale = ((self.q_star - self.p_star) * max(n, 1)) ** 2
        if self.dense:
            return self.decoder**2 @ v / scale
        out = np.empty(self.domain)
        for items, used, decoder in self._blocks:
            out[items] = (decoder**2 @ v[used][..., None])[..., 0]
        out /= scale
        return out

    def describe(self) -> dict:
        return {"name": self.name, "epsilon": self.epsilon, "delta": 0.0,
                "epsilon_permanent": self.epsilon_permanent, "domain": int(self.domain),
                "f": float(self.f), "p": float(self.p), "q": float(self.q),
                "hashes": int(self.hashes), "bloom": int(self.bloom),
                "hash_seed": int(self.hash_seed), "p_star": self.p_star,
                "q_star": self.q_star,
                "report": "uint8 (n, bloom): the instantaneous bits"}
