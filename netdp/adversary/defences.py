"""Server-side defences against poisoning that look at the reports or the estimate.

Spec mechanisms.md, "Poisoning: gains and defences". Two defences besides ``normalize`` and
``enforced-perturbation`` (:mod:`netdp.adversary.poisoning`):

* :func:`detect_fake`, **fake-user detection** (Cao, Jia and Gong, "Data Poisoning
  Attacks to Local Differential Privacy Protocols", USENIX Security 2021, §6.2): an MGA
  report supports every target at once, which an honest report rarely does; the server
  mines the itemsets that too many reports support and drops those reports.
* :func:`recover`, **LDPRecover-style post-processing** (Sun et al., "LDPRecover:
  Recovering Frequencies from Poisoning Attacks against Local Differential Privacy",
  ICDE 2024): the poisoned estimate is a mixture ``f̃ = (1 - β) f + β f_fake``; estimate
  the fake part, subtract it, rescale and project onto the simplex.
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import numpy as np
from scipy import stats

from netdp.core.errors import check
from netdp.mechanisms import registry
from netdp.mechanisms._hadamard import hadamard_entry
from netdp.mechanisms._hashing import hash_values
from netdp.mechanisms._oracle import project_simplex

#: Oracles whose reports support several items at once, with a known honest law of which
#: sets they support together (unary encoding, local hashing). Hadamard response is left
#: out: a report supports half the domain, so the plug-in margin below swamps MGA's excess.
DETECTABLE = registry.names(trait="detectable")
#: Pure oracles (``p*``, ``q*``), whose per-report footprint :func:`recover` models.
RECOVERABLE = registry.names(trait="recoverable")
DETECT_ALPHA = 0.01  # false-alarm level of one detection on honest reports (Bonferroni)
DETECT_CAP = 4096  # candidate itemsets of one size at most; the mining stops beyond
PLUG_IN_Z = 3.0  # margin, in standard deviations, on the estimated frequencies in the law
RECOVER_ALPHA = 0.01  # false-alarm level of the outlier test of recover (Bonferroni)
_BLOCK = 1 << 22  # elements of one (reports x items x ...) temporary


def check_applies(name: str, defence: str) -> None:
    """Refuse a defence on an oracle it does not apply to (one line naming --defence)."""
    allowed = {"detect-fake": DETECTABLE, "recover": RECOVERABLE}.get(defence)
    if allowed is not None:
        check(name in allowed, "defence", f"{defence} applies to {', '.join(allowed)} "
              f"(got --mechanism {name})")


def support_matrix(oracle: Any, reports: np.ndarray, items: np.ndarray) -> np.ndarray:
    """bool (n, len(items)): which of ``items`` each report supports (``report_scores``
    above 0: a set bit, an item hashed to the value sent, ``bit H[i+1, j] = +1``)."""
    return oracle.report_scores(reports, [int(i) for i in items]) > 0


def public_map(oracle: Any, reports: np.ndarray, items: np.ndarray) -> np.ndarray:
    """The public part of each report applied to ``items``, int64 (n, len(items)): the
    report's hash of each item (local hashing) or ``H[i+1, j]`` (Hadamard response). A
    report supports item i when this equals the value it sends."""

    reports = np.asarray(reports, dtype=np.int64)
    if oracle.name == "hr":
        return hadamard_entry(np.asarray(items)[None, :] + 1, reports[:, :1])
    return hash_values(reports[:, None, :2], np.asarray(items)[None, :], oracle.g)


def mass_alike(oracle: Any, reports: np.ndarray, items: np.ndarray,
               f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float (n, len(items)) each: the frequency mass of the categories that a report's
    public map sends where it sends each item, ``Σ_v f_v 1[φ(v) = φ(i)]``, and how many
    categories those are; in blocks of reports."""
    n, k, d = len(reports), items.size, f.size
    out, count = np.empty((n, k)), np.empty((n, k))
    step = max(1, _BLOCK // max(1, k * d))
    every = np.arange(d)
    for start in range(0, n, step):
        part = reports[start:start + step]
        alike = public_map(oracle, part, items)[:, :, None] == \
            public_map(oracle, part, every)[:, None, :]
        out[start:start + step] = alike @ f
        count[start:start + step] = alike.sum(axis=2)
    return out, count


class HonestLaw:
    """How many honest reports support all of an itemset S: a sum of independent
    Bernoullis, bounded above (Hoeffding 1956: a Poisson-binomial's upper tail lies below
    the Binomial's of the same mean) by ``Binomial(N_S, π̄_S)``.

    * Unary encoding (independent bits): ``N_S = n`` and ``π̄_S = Σ_{i ∈ S} f_i p q^{s-1}
      + (1 - f_S) q^s``.
    * Local hashing and Hadamard response: given its public part φ (hash key,
      coefficient), a report can support all of S only if φ sends S to one value c; it
      then does with probability ``q_y + (p_y - q_y) F(c)``, ``F(c)`` the mass of the
      categories φ sends to c (``p_y, q_y``: the chance of sending a category's own
      value and a given other one). ``N_S`` counts those reports, ``π̄_S`` averages that
      chance over them. Conditioning on φ keeps the law exact whatever the dependence
      between the items' hashes (the universal family is only pairwise independent).

    ``f``: the frequencies, estimated by the server from all reports (clipped at 0 and
    renormalised); it stands in for the true ones, with a margin: each estimated mass
    (``f_S``, ``F(c)``) is raised by :data:`PLUG_IN_Z` standard deviations of its
    estimate (``sd0 sqrt(items)``, ``sd0`` that of one estimated frequency near 0), so
    that the estimation noise does not raise false alarms.
    """

    def __init__(self, oracle: Any, reports: np.ndarray, items: np.ndarray,
                 f: np.ndarray) -> None:
        self.unary = oracle.name in registry.names(family="unary")
        self.n = len(reports)
        self.f_pool = f[items]
        p_star, q_star = oracle.p_star, oracle.q_star
        self.sd0 = math.sqrt(q_star * (1 - q_star) / max(1, self.n)) / (p_star - q_star)
        if self.unary:
            self.p, self.q = p_star, q_star
            return
        self.p, self.q = (oracle.p, oracle.q) if oracle.name != "hr" else \
            (oracle.p, 1.0 - oracle.p)
        self.phi = public_map(oracle, reports, items)
        mass, alike = mass_alike(oracle, reports, items, f)
        mass = np.minimum(1.0, mass + PLUG_IN_Z * self.sd0 * np.sqrt(alike))
        self.chance = self.q + (self.p - self.q) * mass

    def binomials(self, sets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(N_S, π̄_S)`` for each row of ``sets`` (int (C, s), positions in the pool)."""
        s = sets.shape[1]
        if self.unary:
            f_s = np.minimum(1.0, self.f_pool[sets].sum(axis=1)
                             + PLUG_IN_Z * self.sd0 * math.sqrt(s))
            pi = f_s * self.p * self.q ** (s - 1) + (1 - f_s) * self.q ** s
            return np.full(len(sets), self.n), np.clip(pi, 0.0, 1.0)
        trials, pi = np.empty(len(sets), dtype=np.int64), np.empty(len(sets))
        step = max(1, _BLOCK // max(1, self.n * s))
        for start in range(0, len(sets), step):
            block = sets[start:start + step]
            phi = self.phi[:, block]  # (n, C, s)
            together = (phi == phi[:, :, :1]).all(axis=2)  # (n, C)
            trials[start:start + step] = together.sum(axis=0)
            chance = np.where(together, self.chance[:, block[:, 0]], 0.0).sum(axis=0)
            pi[start:start + step] = chance / np.maximum(trials[start:start + step], 1)
        return trials, np.clip(pi, 0.0, 1.0)


def next_candidates(frequent: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """Apriori's join: the (s+1)-sets all of whose s-subsets are in ``frequent``."""
    known = set(frequent)
    out = set()
    for a, b in combinations(sorted(frequent), 2):
        if a[:-1] == b[:-1]:
            joined = a + (b[-1],)
            if all(sub in known for sub in combinations(joined, len(joined) - 1)):
                out.add(joined)
    return sorted(out)


def detect_fake(oracle: Any, reports: np.ndarray, r: int,
                alpha: float = DETECT_ALPHA) -> tuple[np.ndarray, int]:
    """The ``detect-fake`` defence: which reports to keep, and the size of the flagged
    itemsets (0 when none is).

    Following Cao, Jia and Gong (USENIX Security 2021, §6.2, "detecting fake users"):
    MGA's reports all support the r targets, a set that few honest reports support
    together. The server mines the frequent itemsets among the reports' supported items
    and drops the reports that support a flagged one. Made tractable and testable here:

    1. the pool: the ``2r`` items of largest estimate (``r``, the number of targets, is
       taken as known to the server, as β is to :func:`recover`);
    2. level by level from pairs (Apriori: a set is a candidate only if all its subsets
       one smaller were flagged), a candidate S is flagged when more reports support it
       than the ``1 - α / C`` quantile of its honest law (:class:`HonestLaw`), C the
       candidates of that level (Bonferroni); at most :data:`DETECT_CAP` candidates a
       level (the sets may outgrow r: MGA's hash on local hashing maps other items with
       the targets);
    3. the reports that support a flagged itemset of the largest size reached are dropped.

    On honest reports every pair stays below its quantile with probability at least
    ``1 - α`` (up to the plug-in of the estimated frequencies), and then nothing is
    dropped. The paper's mining and threshold are not spelled out this way: the pool,
    the Binomial bound and the removal rule are netdp's.
    """
    n, d = len(reports), oracle.domain
    f_hat = oracle.estimate_counts(oracle.aggregate(reports), n) / n
    f = np.clip(f_hat, 0.0, None)
    f = f / f.sum() if f.sum() > 0 else np.full(d, 1.0 / d)
    pool = np.argsort(-f_hat, kind="stable")[:min(d, 2 * r)]
    support = support_matrix(oracle, reports, pool)
    law = HonestLaw(oracle, reports, pool, f)
    candidates: list[tuple[int, ...]] = list(combinations(range(pool.size), 2))
    flagged: list[tuple[int, ...]] = []
    while candidates and len(candidates) <= DETECT_CAP:
        sets = np.array(candidates)
        counts = np.empty(len(sets), dtype=np.int64)
        step = max(1, _BLOCK // max(1, n * sets.shape[1]))
        for start in range(0, len(sets), step):
            counts[start:start + step] = support[:, sets[start:start + step]].all(
                axis=2).sum(axis=0)
        trials, pi = law.binomials(sets)
        limit = stats.binom.isf(alpha / len(sets), trials, pi)
        level = [c for c, hit in zip(candidates, counts > limit, strict=True) if hit]
        if not level:
            break
        flagged = level
        candidates = next_candidates(level)
    keep = np.ones(n, dtype=bool)
    for items in flagged:
        keep &= ~support[:, list(items)].all(axis=1)
    return keep, len(flagged[0]) if flagged else 0


def recover(oracle: Any, f_tilde: np.ndarray, beta: float, n: int,
            alpha: float = RECOVER_ALPHA) -> np.ndarray:
    """The ``recover`` defence: frequencies recovered from the poisoned estimate ``f̃``
    of ``n`` reports, a fraction ``beta`` of them fake (β known to the server).

    After LDPRecover (Sun et al., ICDE 2024). What follows the paper: the poisoned
    estimate is the mixture ``f̃ = (1 - β) f + β f_fake``; the server learns the fake
    part's statistics from properties of the protocol, subtracts ``β f_fake``, rescales
    by ``1/(1 - β)`` and solves for the closest frequency vector (here: projects onto the
    simplex, :func:`~netdp.mechanisms._oracle.project_simplex`). What is simplified: the
    paper's adaptive-attack model and its constrained inference become

    1. the promoted items O: those whose ``f̃_i`` exceeds the median estimate by more
       than ``z_{α/d}`` standard deviations of an estimate at frequency 0 (Bonferroni over
       the d items);
    2. the fake footprint: a fake report supports no item outside O (as MGA's do), so
       there its estimate is ``c = -q*/(p* - q*)``; on O it is ``c + δ``, the same δ
       for every item of O, fixed by the total ``Σ_i f̃_i = (1 - β) + β Σ_i f_fake,i``
       (clipped at 0: no promotion, nothing removed but the uniform ``c``).

    A uniform shift is what the projection removes anyway, so only δ matters: honest
    heavy hitters caught in O take a share of it, which is this defence's cost.
    """

    d = f_tilde.size
    p, q = oracle.p_star, oracle.q_star
    sd0 = math.sqrt(q * (1 - q) / n) / (p - q)
    promoted = f_tilde > np.median(f_tilde) + stats.norm.isf(alpha / d) * sd0
    base = -q / (p - q)
    fake = np.full(d, base)
    excess = (f_tilde.sum() - (1 - beta)) / beta - base * d
    if promoted.any() and excess > 0:
        fake[promoted] += excess / promoted.sum()
    return project_simplex((f_tilde - beta * fake) / (1 - beta))
