"""Local-hashing frequency oracles: BLH (g = 2) and OLH (g = round(e^ε) + 1).

Each user draws its own hash ``H(x) = ((a x + b) mod P) mod g`` from the universal
family of :mod:`netdp.mechanisms._hashing`, hashes its category and applies generalized
randomized response over ``[g]``: ``y = H(v)`` with probability ``p = e^ε/(e^ε+g-1)``,
else one of the other ``g - 1`` values uniformly (each with ``q = 1/(e^ε+g-1)``). The
report ``(a, b, y)`` supports every category ``i`` with ``H(i) = y`` (Wang et al. 2017).

``p* = p`` exactly. ``q* = P[H(i) = y]`` for ``i != v`` is ``1/g`` up to the collision
probability of the family: for ``x != x'`` the pair ``((a x + b) mod P, (a x' + b) mod P)``
is a uniform pair of distinct residues, so ``P[H(x) = H(x')] = sum_r c_r (c_r - 1) /
(P (P - 1))`` with ``c_r = |{z < P : z mod g = r}|``, within ``1/P`` (about 5e-10) of
``1/g``. The estimator uses ``q* = 1/g``; the bias this leaves is below ``n / P`` counts.

Domains larger than P (ids of 32 bits and more, up to ``2^61 - 1``) hash with the same
family over ``P61 = 2^61 - 1`` (:func:`~netdp.mechanisms._hashing.family_prime`); the
report is still ``(a, b, y)`` in int64, the same closed forms hold with the collision
probability within ``1/P61`` of ``1/g``, and only given candidates can be counted
(:meth:`_LocalHashing.candidate_counts`): :meth:`~_LocalHashing.aggregate` would
enumerate the whole domain and refuses.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from netdp.core.errors import check
from netdp.mechanisms._hashing import (
    PRIME,
    PRIME61,
    affine_mod61,
    draw_keys,
    family_prime,
    hash_values,
)
from netdp.mechanisms._oracle import (
    CHUNK_ELEMENTS,
    PureOracle,
    check_categories,
    check_domain,
    check_epsilon,
    check_int,
    check_reports,
)


def support_counts(keys: np.ndarray, y: np.ndarray, domain: int, g: int,
                   chunk_elements: int = CHUNK_ELEMENTS) -> np.ndarray:
    """``C_i = sum_j 1[H_j(i) = y_j]`` for every category ``i`` in ``[0, domain)``.

    Hashes a block of reports against a block of categories at once; a block holds at
    most ``chunk_elements`` (reports x categories) entries (one report against
    ``chunk_elements`` categories when the domain is larger), hashed in place in one
    int64 buffer, so the memory stays near ``9 * chunk_elements`` bytes whatever the
    domain.

    Parameters
    ----------
    keys
        int64 array (n, 2) of hash keys (columns a, b).
    y
        int64 array (n,) of reported hash values in ``[0, g)``.
    domain, g
        Number of categories and size of the hash range.
    chunk_elements
        Largest size of one (reports x categories) block.

    Returns
    -------
    numpy.ndarray
        int64 array (domain,) of support counts.
    """
    check(domain <= PRIME, "domain", f"support counts enumerate every category: at most "
          f"{PRIME} categories (got {domain}); count given candidates instead")
    counts = np.zeros(domain, dtype=np.int64)
    width = min(domain, max(1, chunk_elements))
    for lo in range(0, domain, width):
        items = np.arange(lo, min(domain, lo + width), dtype=np.int64)
        counts[lo:lo + items.size] = candidate_counts(keys, y, items, g, chunk_elements)
    return counts


def candidate_counts(keys: np.ndarray, y: np.ndarray, items: np.ndarray, g: int,
                     chunk_elements: int = CHUNK_ELEMENTS, prime: int = PRIME) -> np.ndarray:
    """``C_i = sum_j 1[H_j(i) = y_j]`` for the given categories ``items`` only.

    The cost is ``len(y) x len(items)`` hash evaluations, whatever the domain: what a
    prefix-extension heavy-hitter search needs (candidates of a domain of ``2^30``).
    Reports are hashed against all items in blocks of at most ``chunk_elements`` entries
    (at least one report per block), in one int64 buffer. ``keys``, ``y``, ``g`` and
    ``chunk_elements`` as in :func:`support_counts`; ``items`` an int64 array (c,) of
    categories below the hash family's prime ``prime`` (:data:`PRIME`, or :data:`PRIME61`
    for domains above it, hashed in uint64 by :func:`affine_mod61`). Returns the int64
    counts (c,).
    """
    items = np.asarray(items, dtype=np.int64)
    counts = np.zeros(items.size, dtype=np.int64)
    n = len(y)
    if n == 0 or items.size == 0:
        return counts
    rows = min(n, max(1, chunk_elements // items.size))
    buffer = np.empty(rows * items.size if prime == PRIME else 0, dtype=np.int64)
    a, b = keys[:, 0, None], keys[:, 1, None]
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        if prime == PRIME:
            hashed = buffer[:(stop - start) * items.size].reshape(stop - start, items.size)
            np.multiply(a[start:stop], items, out=hashed)  # (a x + b) mod P mod g
            hashed += b[start:stop]
            hashed %= PRIME
            hashed %= g
        else:
            hashed = affine_mod61(a[start:stop], items, b[start:stop])
            hashed %= np.uint64(g)
        counts += np.count_nonzero(hashed == y[start:stop, None].astype(hashed.dtype), axis=0)
    return counts


def support_bytes(reports: int, domain: int, chunk_elements: int = CHUNK_ELEMENTS) -> int:
    """Peak bytes of :func:`support_counts` besides its result: the int64 block and its
    boolean comparison."""
    width = min(domain, max(1, chunk_elements))
    rows = min(max(1, reports), max(1, chunk_elements // width))
    return 9 * rows * width + 8 * width


@dataclass(frozen=True)
class _LocalHashing(PureOracle):
    """Per-user universal hash into ``[g]``, then GRR over the g hash values."""

    epsilon: float
    domain: int
    g: int | None = None
    p: float = field(init=False)
    q: float = field(init=False)

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_domain(self.domain, PRIME61)
        resolved = self._resolve_g()
        check_int(resolved, "g", 2, PRIME - 1)
        assert resolved is not None  # check_int raised otherwise
        g = int(resolved)
        e = math.exp(self.epsilon)
        object.__setattr__(self, "g", g)
        object.__setattr__(self, "p", e / (e + g - 1))
        object.__setattr__(self, "q", 1 / (e + g - 1))

    def _resolve_g(self) -> int | None:
        return self.g

    @property
    def _g(self) -> int:
        """The size of the hash range, ``g``, as resolved by ``__post_init__``."""
        assert self.g is not None
        return self.g

    @property
    def prime(self) -> int:
        """The prime of the hash family: ``2^31 - 1``, or ``2^61 - 1`` for domains above
        it (:func:`~netdp.mechanisms._hashing.family_prime`)."""
        return family_prime(self.domain)

    @property
    def p_star(self) -> float:
        """Probability that a report supports its own category: ``e^ε/(e^ε+g-1)``."""
        return self.p

    @property
    def q_star(self) -> float:
        """Probability that a report supports a given other category: ``1/g``."""
        return 1 / self._g

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Reports as an int64 array (n, 3): hash key ``a``, ``b`` and perturbed hash ``y``.

        Draws, in order: every user's key (``draw_keys``), one uniform per user (keep
        ``H(v)`` when below ``p``) and one offset in ``[1, g)`` per user (the value sent
        otherwise is ``(H(v) + offset) mod g``, uniform over the other g - 1 values).
        """
        v = check_categories(values, self.domain)
        n = v.size
        keys = draw_keys(rng, n, self.prime)
        hashed = hash_values(keys, v, self._g, self.prime)
        keep = rng.random(n) < self.p
        offset = rng.integers(1, self._g, n)
        out = np.empty((n, 3), dtype=np.int64)
        out[:, :2] = keys
        out[:, 2] = np.where(keep, hashed, (hashed + offset) % self._g)
        return out

    def aggregate(self, reports: np.ndarray) -> np.ndarray:
        """int64 support count of every category, ``sum_j 1[H_j(i) = y_j]``, vectorized."""
        check(self.domain <= PRIME, "domain", f"aggregate enumerates every category: at "
              f"most {PRIME} (got {self.domain}); use candidate_counts for larger domains")
        reports = self._checked(reports)
        return support_counts(reports[:, :2], reports[:, 2], self.domain, self._g)

    def _checked(self, reports: np.ndarray) -> np.ndarray:
        """``reports`` as int64 (n, 3), after checking the keys and values lie in range."""
        reports = check_reports(reports, 3, "(a, b, y)").astype(np.int64, copy=False)
        prime = self.prime
        if len(reports):
            a, b, y = reports[:, 0], reports[:, 1], reports[:, 2]
            check(a.min() >= 1 and a.max() < prime and b.min() >= 0 and b.max() < prime
                  and y.min() >= 0 and y.max() < self.g, "reports",
                  f"need 1 <= a < {prime}, 0 <= b < {prime} and 0 <= y < {self.g}")
        return reports

    def candidate_counts(self, reports: np.ndarray, items: np.ndarray) -> np.ndarray:
        """Support counts of ``items`` only (int64, one per item), without the whole
        domain: ``aggregate(reports)[items]`` at a cost of ``len(reports) x len(items)``
        (:func:`candidate_counts`)."""
        reports = self._checked(reports)
        items = np.asarray(items, dtype=np.int64)
        check(items.size == 0 or (items.min() >= 0 and items.max() < self.domain), "items",
              f"candidates must lie in 0..{self.domain - 1}")
        return candidate_counts(reports[:, :2], reports[:, 2], items, self._g,
                                prime=self.prime)

    def report_scores(self, reports: np.ndarray, items: Sequence[int]) -> np.ndarray:
        """A report ``(a, b, y)`` supports the categories that its hash maps to ``y``."""
        reports = np.asarray(reports, dtype=np.int64)
        return np.stack([hash_values(reports[:, :2], int(i), self._g, self.prime)
                         == reports[:, 2]
                         for i in items], axis=1).astype(float)

    def report_bytes(self) -> int:
        """A report is three int64; drawing it holds about seven more."""
        return 96

    def working_bytes(self, rows: int) -> int:
        """A call's reports, plus the hashing block of :func:`support_counts`."""
        return super().working_bytes(rows) + support_bytes(rows, self.domain)

    def describe(self) -> dict:
        out = {"name": self.name, "epsilon": self.epsilon, "delta": 0.0,
               "domain": self.domain, "g": self.g, "p": self.p, "q": self.q,
               "p_star": self.p_star, "q_star": self.q_star,
               "report": "int64 (a, b, y): hash key and perturbed hash value"}
        if self.prime != PRIME:
            out["hash_prime"] = self.prime
        return out


@dataclass(frozen=True)
class BLH(_LocalHashing):
    """Binary local hashing: g = 2, ``p* = e^ε/(e^ε+1)``, ``q* = 1/2``.

    Variance of a frequency ``(e^ε+1)^2 / (n (e^ε-1)^2) - f / n``
    (``1 - p* - q* = -(p* - q*)``). ``BLH(epsilon, domain)``: ε of one report (> 0),
    number of categories d (>= 2); g is fixed.
    """

    g: int = field(default=2, init=False)
    name = "blh"


@dataclass(frozen=True)
class OLH(_LocalHashing):
    """Optimized local hashing: ``g = round(e^ε) + 1`` unless ``g`` is given.

    With ``g = e^ε + 1`` exactly, ``p* = 1/2`` and the variance equals OUE's,
    ``(4 e^ε/(e^ε-1)^2 + f) / n``; with the rounded g it is close to it.
    ``OLH(epsilon, domain, g=None)``: ε of one report (> 0), number of categories d
    (>= 2), size of the hash range (integer >= 2, default ``round(e^ε) + 1``).
    """

    name = "olh"

    def _resolve_g(self) -> int | None:
        if self.g is not None:
            return self.g
        check(self.epsilon < math.log(PRIME - 2), "epsilon",
              f"OLH's default g = round(e^epsilon) + 1 must stay below {PRIME} "
              f"(epsilon < {math.log(PRIME - 2):.2f}, got {self.epsilon}); pass g explicitly")
        return round(math.exp(self.epsilon)) + 1
