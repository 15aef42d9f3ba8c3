"""Heavy hitters over a domain of ``2^m`` items by prefix extension (PEM).

Wang, Li, Lin, Jha, Li and Li, "Locally Differentially Private Heavy Hitter
Identification", IEEE TDSC 2019 (arXiv 1708.06674, 2017), Section 4 (the
Prefix Extending Method). The reports are split into ``g`` groups; group ``j`` reports
the first ``ℓ_j = min(m, s0 + j η)`` bits of its item with a local-hashing frequency
oracle (OLH by default, whose report does not grow with the domain). The aggregator
estimates the frequency of all ``2^s0`` prefixes from group 0, keeps the ``c`` best,
extends each by the next bits (``2^(ℓ_j - ℓ_{j-1})`` children), estimates those from
group ``j``, and so on; the ``K`` best of the last group are the heavy hitters.

Groups: each report draws its group uniformly from ``[g]``, independently of the data
(the same law as PEM's random partition of the users). A report is then one draw of a
single ε-LDP randomizer, ``(j, OLH_{ℓ_j}(prefix_{ℓ_j}(x)))``: ``P[(j, z) | x] = P_j[z |
x] / g ≤ e^ε P[(j, z) | x']``, so a window of such reports is a shuffle of one
randomizer's outputs and the histogram's shuffle tracker applies as it is.

Only the candidates are ever hashed (:meth:`~netdp.mechanisms.local_hashing.
_LocalHashing.candidate_counts`): round ``j`` costs ``N_j x c 2^η`` hash evaluations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from netdp.core.errors import check
from netdp.mechanisms import frequency_oracle
from netdp.mechanisms._oracle import pure_counts

#: Largest domain bits. Prefixes of up to 30 bits hash with the prime 2^31 - 1, longer ones
#: with 2^61 - 1 (:func:`netdp.mechanisms._hashing.family_prime`); ids pass through float64
#: on the way in (``--data-file``, ``numpy.rint``), exact below 2^53.
MAX_BITS = 53
#: Largest number of candidates one round estimates (2^s0, c 2^η).
MAX_CANDIDATES = 1 << 16


@dataclass(frozen=True)
class Plan:
    """The prefix schedule: ``bits`` (m), the prefix length ``lengths[j]`` of each group
    (increasing, ending at ``m``) and ``keep`` (c, the candidates kept per round)."""

    bits: int
    lengths: tuple[int, ...]
    keep: int

    @classmethod
    def of(cls, bits: int, start: int | None = None, step: int | None = None,
           groups: int | None = None, keep: int = 10, keep_flag: str = "candidates") -> Plan:
        """``ℓ_j = min(m, s0 + j η)`` (``g = 1 + ceil((m - s0) / η)``) or, with ``groups``,
        ``ℓ_j = s0 + round(j (m - s0) / (g - 1))``. ``s0`` defaults to
        ``min(m, ceil(log2 2c))`` (at least ``2c`` prefixes in the first round), ``η`` to 4.
        ``keep_flag`` names ``c`` in errors (``top`` where ``c`` defaults to ``K``).
        """
        check(1 <= bits <= MAX_BITS, "domain-bits", f"must lie in 1..{MAX_BITS} "
              f"(got {bits})")
        check(keep >= 1, keep_flag, f"must be >= 1 (got {keep})")
        s0 = start if start is not None else min(bits, max(1, (2 * keep - 1).bit_length()))
        check(1 <= s0 <= bits, "start-bits", f"must lie in 1..{bits} (--domain-bits) "
              f"(got {s0})")
        check(step is None or groups is None, "groups",
              "gives the number of rounds; give --groups or --step-bits, not both")
        if groups is not None:
            check(1 <= groups <= bits - s0 + 1, "groups", f"must lie in 1..{bits - s0 + 1} "
                  f"(one more than --domain-bits - --start-bits = {bits} - {s0}) "
                  f"(got {groups})")
            lengths = [bits] if groups == 1 else [
                s0 + round(j * (bits - s0) / (groups - 1)) for j in range(groups)]
            check(groups > 1 or s0 == bits, "groups", f"one group reports whole items: "
                  f"--start-bits must equal --domain-bits ({bits}) (got {s0})")
        else:
            eta = 4 if step is None else step
            check(eta >= 1, "step-bits", f"must be >= 1 (got {eta})")
            lengths = list(range(s0, bits, eta)) + [bits]
        plan = cls(bits, tuple(int(x) for x in lengths), keep)
        grow = max(np.diff(np.asarray(plan.lengths)).max(initial=0), 0)
        check(1 << s0 <= MAX_CANDIDATES, "start-bits",
              f"2^start-bits prefixes are estimated at once: at most "
              f"{MAX_CANDIDATES.bit_length() - 1} (got {s0})")
        check(keep << int(grow) <= MAX_CANDIDATES, keep_flag,
              f"the candidates kept x 2^step must be at most {MAX_CANDIDATES} (got {keep} "
              f"x 2^{grow})")
        return plan

    @property
    def groups(self) -> int:
        """``g``: one group per prefix length."""
        return len(self.lengths)


def group_oracles(name: str, epsilon: float, plan: Plan) -> list:
    """Group ``j``'s ε-LDP oracle over the ``2^ℓ_j`` prefixes (``olh`` or ``blh``)."""
    return [frequency_oracle(name, epsilon, 1 << int(length)) for length in plan.lengths]


def perturb_groups(items: np.ndarray, plan: Plan, oracles: Sequence[Any],
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One report per item, in order: its group (uniform in ``[g]``) and its oracle report.

    Draws, in order: the groups (``rng.integers(0, g, N)``), then group 0's reports of
    its items' prefixes (in the items' order), group 1's, and so on.

    Returns
    -------
    groups
        int64 (N,): each report's group.
    reports
        int64 (N, 3): each report ``(a, b, y)`` (local hashing).
    """
    items = np.asarray(items, dtype=np.int64)
    groups = rng.integers(0, plan.groups, items.size)
    reports = np.empty((items.size, 3), dtype=np.int64)
    for j, length in enumerate(plan.lengths):
        mine = np.flatnonzero(groups == j)
        reports[mine] = oracles[j].perturb(items[mine] >> (plan.bits - length), rng)
    return groups, reports


def estimate(oracle, reports: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Unbiased frequency of each of ``items`` among the reporters of ``reports``:
    ``(C_i / N - q*) / (p* - q*)`` (NaN where ``N = 0``)."""
    n = len(reports)
    if n == 0:
        return np.full(len(items), np.nan)
    counts = oracle.candidate_counts(reports, items)
    return pure_counts(counts, n, oracle.p_star, oracle.q_star) / n


@dataclass(frozen=True, eq=False)
class Found:
    """What the search returns: the ``K`` items and their estimated frequencies (from the
    last group), best first, and the candidates each round kept."""

    items: np.ndarray
    estimates: np.ndarray
    rounds: tuple[np.ndarray, ...]


def identify(groups: np.ndarray, reports: np.ndarray, plan: Plan, oracles: Sequence[Any],
             top: int) -> Found:
    """The prefix-extension search over grouped reports: the ``top`` heavy hitters.

    Round 0 estimates every ``s0``-bit prefix from group 0; round ``j`` extends the
    ``c`` best prefixes of round ``j - 1`` by ``ℓ_j - ℓ_{j-1}`` bits and estimates the
    children from group ``j``. Ties go to the smaller prefix (a stable sort).
    """
    candidates = np.arange(1 << plan.lengths[0], dtype=np.int64)
    kept: list[np.ndarray] = []
    freq = np.empty(0)
    for j, length in enumerate(plan.lengths):
        if j > 0:
            grow = length - plan.lengths[j - 1]
            candidates = ((candidates[:, None] << grow)
                          + np.arange(1 << grow, dtype=np.int64)).reshape(-1)
        freq = estimate(oracles[j], reports[groups == j], candidates)
        order = np.argsort(-np.nan_to_num(freq, nan=-np.inf), kind="stable")
        width = top if j == plan.groups - 1 else plan.keep
        order = order[:width]
        candidates, freq = candidates[order], freq[order]
        kept.append(candidates)
    return Found(candidates, freq, tuple(kept))


def true_top(items: np.ndarray, top: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``top`` most frequent items (ties to the smaller id) and their frequencies."""
    values, counts = np.unique(np.asarray(items, dtype=np.int64), return_counts=True)
    order = np.lexsort((values, -counts))[:top]
    return values[order], counts[order] / items.size


def scores(found: np.ndarray, truth: np.ndarray) -> tuple[float, float, float]:
    """Precision, recall and NCR of ``found`` against the true top-K ``truth`` (best first).

    Precision ``|F ∩ T| / |F|``, recall ``|F ∩ T| / |T|``. NCR, the normalized cumulative
    rank of Wang et al. (TDSC 2019, Section 6.1): the true item of rank ``i`` (1 the most
    frequent) scores ``q_i = K - i + 1``, any other item 0; ``NCR = Σ_{v ∈ F} q(v) /
    Σ_{i ≤ K} q_i = Σ_{v ∈ F} q(v) / (K (K + 1) / 2)``, with ``K = |T|``: 1 when every
    true heavy hitter is found, and missing the top ones costs most.
    """
    k = truth.size
    hit = np.isin(truth, found)
    common = int(hit.sum())
    quality = np.arange(k, 0, -1)
    return (common / max(found.size, 1), common / max(k, 1),
            float(quality[hit].sum() / max(quality.sum(), 1)))
