"""Set-valued data: the padding-and-sampling frequency oracle (PSFO).

Wang, Li and Jha, "Locally Differentially Private Frequent Itemset Mining", IEEE S&P 2018,
§IV (padding and sampling, with the privacy amplification of GRR, Theorem 3) and §IV-C
(the adaptive choice of the oracle). Each user holds a set ``v`` of items from
``0..d-1``. Padding to length ``ℓ`` adds the dummy items ``d + |v|, ..., d + ℓ - 1`` when
``|v| < ℓ``; the user then samples one item uniformly from the padded set (of size
``m = max(|v|, ℓ)``) and reports it with a frequency oracle over the ``d + ℓ`` extended
items. The aggregator multiplies each estimated count by ``ℓ``.

**Oracle.** GRR over ``d' = d + ℓ`` items is run at ``ε' = ln(ℓ (e^ε - 1) + 1)``: with
``p', q'`` its probabilities, ``P[y | v] = q' + (p' - q') [y ∈ v] / m``, at most
``q' + (p' - q')/ℓ = e^ε q'``, so the whole report is ε-LDP (Theorem 3). OLH gains no
such amplification (hash collisions) and runs at ε. The frequency variances of the two,
``(ℓ (e^ε - 1) + d' - 1)/(e^ε - 1)²`` (GRR at ε') and ``4 ℓ² e^ε/(e^ε - 1)²`` (OLH), cross
at ``d < (4ℓ² - ℓ) e^ε + 1``: GRR below, OLH above (the paper's §IV-C rule; the LDP
tutorial quotes it with the inequality reversed, which the two variances contradict).

**Estimate.** A pure oracle's report supports item ``i`` with probability
``s_ui = q* + (p* - q*) π_ui``, ``π_ui = [i ∈ v_u] / m_u``. So ``ℓ ĉ_i`` has mean
``ℓ Σ_u π_ui``: the true count for items held only in sets of size ``<= ℓ``, and
``c_i - Σ_{u ∋ i, |v_u| > ℓ} (1 - ℓ/|v_u|)`` in general (biased downwards), with variance
``ℓ² Σ_u s_ui (1 - s_ui) / (p* - q*)²`` (independent reports).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from netdp.core.errors import check
from netdp.mechanisms import registry
from netdp.mechanisms._oracle import PureOracle, check_domain, check_epsilon, check_int
from netdp.mechanisms.local_hashing import OLH
from netdp.mechanisms.randomized_response import GRR

ORACLES = ("adaptive",) + registry.names(trait="set-valued")


@dataclass(frozen=True, eq=False)
class ItemSets:
    """Users' item sets as CSR arrays: user ``u`` holds ``items[offsets[u]:offsets[u+1]]``.

    Items of one set are distinct, in ``0..domain-1``; a set may be empty.
    """

    offsets: np.ndarray
    items: np.ndarray
    domain: int

    def __post_init__(self) -> None:
        check_domain(self.domain)
        off = np.asarray(self.offsets, dtype=np.int64)
        items = np.asarray(self.items, dtype=np.int64)
        check(off.ndim == 1 and off.size >= 1 and off[0] == 0 and off[-1] == items.size
              and bool(np.all(np.diff(off) >= 0)), "sets",
              "offsets must start at 0, never decrease and end at the number of items")
        check(items.size == 0 or (items.min() >= 0 and items.max() < self.domain), "domain",
              f"items must lie in 0..{self.domain - 1}; raise --domain")
        owner = np.repeat(np.arange(off.size - 1), np.diff(off))
        key = owner * self.domain + items
        check(np.unique(key).size == key.size, "sets", "a set holds an item twice")
        object.__setattr__(self, "offsets", off)
        object.__setattr__(self, "items", items)

    @classmethod
    def from_lists(cls, sets: Sequence[Sequence[int]], domain: int) -> ItemSets:
        """From one list of items per user."""
        sizes = np.array([len(s) for s in sets], dtype=np.int64)
        flat = np.array([i for s in sets for i in s], dtype=np.int64)
        return cls(np.concatenate([[0], np.cumsum(sizes)]), flat, domain)

    @property
    def n(self) -> int:
        """Number of users."""
        return int(self.offsets.size - 1)

    @property
    def sizes(self) -> np.ndarray:
        """Each user's set size."""
        return np.diff(self.offsets)

    def owners(self) -> np.ndarray:
        """The user of each entry of :attr:`items`."""
        return np.repeat(np.arange(self.n), self.sizes)

    def counts(self) -> np.ndarray:
        """How many users hold each item."""
        return np.bincount(self.items, minlength=self.domain).astype(float)

    def frequencies(self) -> np.ndarray:
        """The share of users holding each item."""
        return self.counts() / self.n

    def take(self, users: np.ndarray) -> ItemSets:
        """The sets of ``users`` (with repeats), in that order."""
        users = np.asarray(users, dtype=np.int64)
        sizes = self.sizes[users]
        off = np.concatenate([[0], np.cumsum(sizes)])
        pos = np.arange(off[-1]) - np.repeat(off[:-1], sizes) + np.repeat(
            self.offsets[users], sizes)
        return ItemSets(off, self.items[pos], self.domain)

    def pair_counts(self, items: np.ndarray) -> np.ndarray:
        """``(k, k)``: how many users hold both of ``items[a]`` and ``items[b]``."""
        items = np.asarray(items, dtype=np.int64)
        index = np.full(self.domain, -1)
        index[items] = np.arange(items.size)
        held = np.zeros((self.n, items.size), dtype=np.float64)
        pos = index[self.items]
        keep = pos >= 0
        held[self.owners()[keep], pos[keep]] = 1.0
        return held.T @ held


def prefers_grr(domain: int, length: int, epsilon: float) -> bool:
    """The adaptive rule of S&P 2018 §IV-C: GRR iff ``d < (4ℓ² - ℓ) e^ε + 1``."""
    return domain < (4 * length**2 - length) * math.exp(epsilon) + 1


def amplified_epsilon(epsilon: float, length: int) -> float:
    """ε' of GRR inside PSFO: ``ln(ℓ (e^ε - 1) + 1)`` (S&P 2018 Theorem 3)."""
    return math.log1p(length * math.expm1(epsilon))


@dataclass(frozen=True)
class PSFO:
    """Padding-and-sampling frequency oracle over ``domain`` items, padding length ``length``.

    Parameters
    ----------
    epsilon
        ε of one report (> 0).
    domain
        Number of items d (>= 2).
    length
        Padding length ℓ (>= 1).
    oracle
        ``grr``, ``olh`` or ``adaptive`` (S&P 2018 §IV-C: :func:`prefers_grr`).
    """

    epsilon: float
    domain: int
    length: int
    oracle: str = "adaptive"
    base: Any = field(init=False, repr=False)
    name = "psfo"

    def __post_init__(self) -> None:

        check_epsilon(self.epsilon)
        check_domain(self.domain)
        check_int(self.length, "set-size", 1)
        check(self.oracle in ORACLES, "oracle",
              f"must be one of {', '.join(ORACLES)} (got {self.oracle!r})")
        use_grr = self.oracle == "grr" or (
            self.oracle == "adaptive" and prefers_grr(self.domain, self.length, self.epsilon))
        extended = self.domain + self.length
        base = (GRR(amplified_epsilon(self.epsilon, self.length), extended) if use_grr
                else OLH(self.epsilon, extended))
        object.__setattr__(self, "base", base)

    @property
    def chosen(self) -> str:
        """The oracle in use: ``grr`` or ``olh``."""
        return str(self.base.name)

    def sample(self, sets: ItemSets, users: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One padded-and-sampled item per entry of ``users``, in ``0..d+ℓ-1``.

        Draws one uniform per entry: index ``j`` in ``0..m_u-1``; the set's ``j``-th item
        if ``j < |v_u|``, else the dummy ``d + j``.
        """
        users = np.asarray(users, dtype=np.int64)
        sizes = sets.sizes[users]
        m = np.maximum(sizes, self.length)
        j = np.minimum((rng.random(users.size) * m).astype(np.int64), m - 1)
        real = j < sizes
        start = sets.offsets[users]
        picked = np.empty(users.size, dtype=np.int64)
        picked[real] = sets.items[(start + j)[real]]
        picked[~real] = self.domain + j[~real]
        return picked

    def perturb(self, sets: ItemSets, rng: np.random.Generator) -> np.ndarray:
        """One report per user: :meth:`sample`, then the base oracle's report."""
        return self.base.perturb(self.sample(sets, np.arange(sets.n), rng), rng)

    def aggregate(self, reports: np.ndarray) -> np.ndarray:
        """The base oracle's aggregate (additive)."""
        return np.asarray(self.base.aggregate(reports))

    def estimate_counts(self, aggregate: np.ndarray, n: int) -> np.ndarray:
        """``ℓ`` times the base oracle's count of each real item, over ``n`` reports."""
        return self.length * np.asarray(self.base.estimate_counts(aggregate, n))[
            ..., :self.domain]

    def sampling_sums(self, sets: ItemSets) -> tuple[np.ndarray, np.ndarray]:
        """``(Σ_u π_ui, Σ_u π_ui²)`` per item, ``π_ui = [i ∈ v_u] / max(|v_u|, ℓ)``."""
        m = np.maximum(sets.sizes, self.length).astype(float)[sets.owners()]
        first = np.bincount(sets.items, 1.0 / m, minlength=self.domain)
        second = np.bincount(sets.items, 1.0 / m**2, minlength=self.domain)
        return first, second

    def expected_counts(self, sets: ItemSets) -> np.ndarray:
        """``E[ĉ_i] = ℓ Σ_u π_ui`` for one report per user."""
        return self.length * self.sampling_sums(sets)[0]

    def bias(self, sets: ItemSets) -> np.ndarray:
        """``E[ĉ_i] - c_i = -Σ_{u ∋ i, |v_u| > ℓ} (1 - ℓ/|v_u|)``: zero unless a set is longer
        than ℓ, never positive."""
        return self.expected_counts(sets) - sets.counts()

    def variance(self, sets: ItemSets) -> np.ndarray:
        """Variance of ``ĉ_i``, one report per user: ``ℓ² Σ_u s_ui (1 - s_ui) / (p*-q*)²``.

        ``Σ_u s(1-s) = n q*(1-q*) + δ (1 - 2q*) Σ π - δ² Σ π²`` with ``δ = p* - q*``.
        """
        p, q = self.support_probabilities()
        delta = p - q
        first, second = self.sampling_sums(sets)
        total = sets.n * q * (1 - q) + delta * (1 - 2 * q) * first - delta**2 * second
        return self.length**2 * total / delta**2

    def mixture_variance(self, share: np.ndarray, reports: int) -> np.ndarray:
        """Variance of the estimated *frequency* ``ĉ_i / N`` when each of ``N`` independent
        reports samples item ``i`` with probability ``share_i`` (holders drawn i.i.d.):
        ``ℓ² s (1 - s) / (N δ²)``, ``s = q* + δ share_i``."""
        p, q = self.support_probabilities()
        s = q + (p - q) * np.asarray(share, dtype=float)
        return self.length**2 * s * (1 - s) / (reports * (p - q) ** 2)

    def support_probabilities(self) -> tuple[float, float]:
        """``(p*, q*)`` of the base oracle."""
        base: PureOracle = self.base
        return float(base.p_star), float(base.q_star)

    def describe(self) -> dict[str, Any]:
        p, q = self.support_probabilities()
        return {"name": self.name, "epsilon": self.epsilon, "delta": 0.0,
                "domain": self.domain, "length": self.length, "oracle": self.chosen,
                "rule": self.oracle, "base_epsilon": float(self.base.epsilon),
                "extended_domain": self.domain + self.length, "p_star": p, "q_star": q}


def top_k(estimate: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` items of largest estimate (ties: the lower index first)."""
    order = np.lexsort((np.arange(estimate.size), -np.asarray(estimate)))
    return order[:k]


def precision_recall(found: np.ndarray, truth: np.ndarray, k: int) -> tuple[float, float]:
    """Precision ``|F ∩ T| / |F|`` and recall ``|F ∩ T| / |T|`` of the found items ``F``
    against ``T = {i : f_i >= f_(k)}``, the true top k with its ties (``f_(k) > 0``; else the
    items held at all)."""
    truth = np.asarray(truth, dtype=float)
    kth = np.sort(truth)[::-1][min(k, truth.size) - 1]
    true_set = np.flatnonzero(truth >= kth) if kth > 0 else np.flatnonzero(truth > 0)
    hits = np.intersect1d(found, true_set).size
    return hits / max(len(found), 1), hits / max(true_set.size, 1)


# --- itemsets (S&P 2018 §VI, SVSM) -------------------------------------------------------

#: The most items an itemset round may be built from (their subsets are bit masks).
MAX_MASK_ITEMS = 62


def candidate_masks(count: int, max_size: int) -> np.ndarray:
    """Every subset of size ``2..max_size`` of ``count`` items, as bit masks over their
    positions, by size and then lexicographically (S&P 2018 §VI: the candidate itemsets
    are built from the frequent items)."""

    check(count <= MAX_MASK_ITEMS, "top", f"must be <= {MAX_MASK_ITEMS} for itemsets")
    masks = [sum(1 << i for i in combo) for size in range(2, max_size + 1)
             for combo in combinations(range(count), size)]
    return np.array(masks, dtype=np.int64)


def contained(sets: ItemSets, items: np.ndarray, masks: np.ndarray) -> ItemSets:
    """Each user's candidates: the masks (over the positions of ``items``) whose items all
    lie in the user's set, as sets over the domain ``0..len(masks)-1``. With the one-bit
    masks ``1 << j`` this is ``v ∩ items``, relabelled by position."""
    items = np.asarray(items, dtype=np.int64)
    check(items.size <= MAX_MASK_ITEMS, "top", f"must be <= {MAX_MASK_ITEMS} for itemsets")
    index = np.full(sets.domain, -1, dtype=np.int64)
    index[items] = np.arange(items.size)
    pos = index[sets.items]
    keep = pos >= 0
    held = np.zeros(sets.n, dtype=np.int64)
    np.bitwise_or.at(held, sets.owners()[keep], np.left_shift(1, pos[keep]))
    masks = np.asarray(masks, dtype=np.int64)
    inside = (held[:, None] & masks[None, :]) == masks[None, :]
    users, which = np.nonzero(inside)
    offsets = np.concatenate([[0], np.cumsum(np.bincount(users, minlength=sets.n))])
    return ItemSets(offsets, which, max(int(masks.size), 2))


def mask_items(items: np.ndarray, masks: np.ndarray, max_size: int) -> np.ndarray:
    """``(len(masks), max_size)``: each mask's items, ascending, padded with -1."""
    items = np.asarray(items, dtype=np.int64)
    bits = (np.asarray(masks, dtype=np.int64)[:, None] >> np.arange(items.size)) & 1
    out = np.full((bits.shape[0], max_size), -1, dtype=np.int64)
    rows, cols = np.nonzero(bits)
    rank = np.arange(rows.size) - np.searchsorted(rows, rows)
    out[rows, rank] = items[cols]
    big = np.iinfo(np.int64).max
    out = np.sort(np.where(out < 0, big, out), axis=1)
    return np.where(out == big, -1, out)


def itemset_keys(itemsets: np.ndarray, domain: int) -> np.ndarray:
    """One integer per itemset (rows of ascending items padded with -1): the digits of the
    items in base ``domain + 1`` (the padding is the digit ``domain``)."""
    rows = np.asarray(itemsets, dtype=np.int64)
    digits = np.where(rows < 0, domain, rows)
    base = (domain + 1) ** np.arange(rows.shape[1] - 1, -1, -1, dtype=np.int64)
    return digits @ base


def itemset_supports(sets: ItemSets, max_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact supports of every itemset of size ``2..max_size`` some user holds: ``(keys,
    counts)`` (:func:`itemset_keys`), enumerated for all users of one set size at once."""

    check((sets.domain + 1) ** max_size < 2**62, "itemset-size",
          f"itemsets of {max_size} items over {sets.domain} items overflow the keys")
    sizes = sets.sizes
    keys = []
    for s in np.unique(sizes[sizes >= 2]):
        users = np.flatnonzero(sizes == s)
        rows = np.sort(sets.items[sets.offsets[users, None] + np.arange(s)], axis=1)
        for size in range(2, min(int(s), max_size) + 1):
            combos = np.array(list(combinations(range(int(s)), size)), dtype=np.int64)
            picked = rows[:, combos].reshape(-1, size)
            padded = np.full((picked.shape[0], max_size), -1, dtype=np.int64)
            padded[:, :size] = picked
            keys.append(itemset_keys(padded, sets.domain))
    if not keys:
        return np.empty(0, dtype=np.int64), np.empty(0)
    unique, counts = np.unique(np.concatenate(keys), return_counts=True)
    return unique, counts.astype(float)
