"""Poisoning attacks on LDP frequency collection: fake users promote chosen targets.

Spec mechanisms.md, "Poisoning" and "Poisoning: gains and defences" (Cao, Jia and Gong,
"Data Poisoning Attacks to Local Differential Privacy Protocols", USENIX Security 2021).
``M`` fake users join ``N`` honest ones (``β = M / (N + M)``) and send reports that
promote the targets ``T`` (``|T| = r``):

* **RPA**: a uniformly random valid report;
* **RIA**: a uniformly random target, perturbed honestly;
* **MGA**: the report that maximises the targets' estimated frequency (GRR: a random
  target, unperturbed; unary encoding: every target bit set; local hashing: a hash that
  maps as many targets as it can to one value, and that value; Hadamard response: a
  coefficient ``j`` whose column has one sign ``σ`` on every target's row, and the bit
  ``σ``; RAPPOR: the Bloom-filter report that maximises the targets' least-squares
  estimate, every bit whose decoder weight summed over the targets is positive).

The **frequency gain** is ``FG = Σ_{t ∈ T} (f̃_t - f̂_t)``: the estimate from all
``N + M`` reports minus the estimate from the ``N`` honest ones (the same honest
reports). For a pure oracle (support probabilities ``p*``, ``q*``), if a fake report
supports target t with probability ``s_t``, then ``E[f̃_t] = (1 - β) f_t + β (s_t - q*)
/ (p* - q*)``, so

    ``E[FG] = β (Σ_t (s_t - q*) / (p* - q*) - f_T)``.

With the attacks' ``s_t`` this gives every closed form of the paper: RIA ``β (1 - f_T)``
for every oracle; RPA ``β (r/d - f_T)`` (GRR), ``β (r (1/2 - q)/(p - q) - f_T)`` (unary
encoding: ``β (r - f_T)`` for OUE), ``-β f_T`` (local hashing); MGA ``β ((1 - r q)/(p -
q) - f_T)`` (GRR) and ``β (r (1 - q)/(p - q) - f_T)`` (unary encoding, local hashing
when the hash supports every target); Hadamard response (``q* = 1/2``): RPA ``-β f_T``,
MGA ``β (r c_ε - f_T)``.

RAPPOR is not a pure oracle (its estimate is a least-squares decoding of the Bloom bits),
but its estimate is affine in the aggregate and unbiased, so the same argument gives
``E[FG] = β (Σ_t e_t - f_T)``, with ``e_t`` the estimate of target t from the *expected*
aggregate of one fake report (its mean bit vector): :func:`report_boost`, which gives
``(s_t - q*)/(p* - q*)`` for a pure oracle. For RAPPOR, :func:`fake_reports` returns that
mean bit vector in place of ``s_t``; the closed form is then exact, not asymptotic.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from netdp.core.documented import Documented
from netdp.core.errors import check
from netdp.mechanisms import registry
from netdp.mechanisms._hadamard import fwht
from netdp.mechanisms._hashing import draw_keys, hash_values
from netdp.mechanisms._oracle import project_simplex

ATTACKS = ("rpa", "ria", "mga")
# oracles whose RPA and MGA reports are built
CRAFTED = registry.names(trait="crafted")
TARGETS = ("random", "least")
DEFENCES = ("normalize", "enforced-perturbation", "detect-fake", "recover")
HASH_TRIES = 1 << 20  # hash keys an MGA on local hashing tries, in blocks
HASH_BLOCK = 1 << 16


@dataclass(frozen=True, repr=False)
class Poisoning(Documented):
    """An attack on one frequency oracle, its gain measured over trials and in theory.

    Attributes
    ----------
    mechanism
        The oracle's ``describe()``.
    attack, beta, targets
        The attack, the fraction of fake users and the target categories.
    honest, fake
        Honest users ``N`` and fake users ``M`` per trial.
    trials
        Independent repetitions (fresh honest and fake reports).
    gain, gain_std, theory
        Mean frequency gain over the trials, the standard error of that mean, and the
        closed form ``β (Σ_t (s_t - q*)/(p* - q*) - f_T)``.
    per_target
        Mean gain of each target.
    supported
        Targets that a fake report supports for sure (MGA on local hashing: those its
        hash maps to the value sent; else ``r``).
    mse, mse_attacked
        Mean squared error of the honest users' frequencies, estimated without and with
        the fake reports.
    seconds
        Time of the trials.
    defences
        For each defence asked for: ``{name, gain, std, theory, mse_honest,
        mse_with_attack}`` on the same trials; ``detect-fake`` adds ``removed_fake`` and
        ``removed_honest``, the mean number of fake and honest reports it drops per trial
        (:mod:`netdp.adversary.defences`).
    seed, config
        The seed and the parameters of the command that ran (``netdp attack``'s, as
        :func:`netdp.attack` takes them; ``{}`` when :func:`poison` was called directly).
    """

    mechanism: dict
    attack: str
    beta: float
    targets: tuple[int, ...]
    honest: int
    fake: int
    trials: int
    gain: float
    gain_std: float
    theory: float | None
    per_target: tuple[float, ...]
    supported: int
    mse: float
    mse_attacked: float
    seconds: float
    defences: tuple[dict, ...] = ()
    seed: int | None = None
    config: Mapping[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        theory = "-" if self.theory is None else f"{self.theory:.4g}"
        return (f"{self.attack} on {self.mechanism.get('name')} (eps "
                f"{self.mechanism.get('epsilon'):g}): gain {self.gain:.4g} +- "
                f"{self.gain_std:.2g} (theory {theory}), {self.fake:,} fake and "
                f"{self.honest:,} honest users, {len(self.targets)} targets")

    def figures(self) -> dict[str, Any]:
        """``{mechanism, attack, beta, targets, gain: {empirical, theory, std}, ...}``."""
        return {"mechanism": self.mechanism, "attack": self.attack, "beta": self.beta,
                "targets": list(self.targets), "users": {"honest": self.honest,
                                                         "fake": self.fake},
                "trials": self.trials,
                "gain": {"empirical": self.gain, "theory": self.theory, "std": self.gain_std},
                "per_target": [{"target": t, "gain": g}
                               for t, g in zip(self.targets, self.per_target, strict=True)],
                "supported_targets": self.supported,
                "utility": {"mse_honest": self.mse, "mse_with_attack": self.mse_attacked},
                **({"defence": list(self.defences)} if self.defences else {}),
                "seconds": self.seconds}


def choose_targets(values: np.ndarray, domain: int, r: int, how: str,
                   rng: np.random.Generator) -> np.ndarray:
    """``r`` target categories: uniformly at random, or the ``least`` frequent among the
    honest values (ties by category)."""
    check(how in TARGETS, "target-choice", f"must be one of {', '.join(TARGETS)} (got {how!r})")
    check(1 <= r <= domain, "targets", f"must lie in 1..{domain} (the domain) (got {r})")
    if how == "random":
        return np.sort(rng.choice(domain, r, replace=False))
    counts = np.bincount(values, minlength=domain)
    return np.sort(np.argsort(counts, kind="stable")[:r])


def fake_reports(oracle: Any, attack: str, targets: np.ndarray, m: int,
                 rng: np.random.Generator,
                 crafted: tuple[np.ndarray, int, np.ndarray] | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``m`` fake reports of ``attack`` in the oracle's report format, and ``s_t``: the
    probability that one of them supports each target (RAPPOR: the probability that it
    sets each Bloom bit, its mean report; :func:`report_boost`). ``crafted``: an MGA's
    hash on local hashing (:func:`best_hash`), found once for all trials."""
    check(attack in ATTACKS, "attack", f"must be one of {', '.join(ATTACKS)} (got {attack!r})")
    r = targets.size
    if attack == "ria":
        reports = oracle.perturb(targets[rng.integers(0, r, m)], rng)
        if oracle.name == "rappor":
            return reports, mean_rappor_report(oracle, targets)
        if hasattr(oracle, "p_star"):
            p, q = oracle.p_star, oracle.q_star
            return reports, np.full(r, (p + (r - 1) * q) / r)
        return reports, np.full(r, np.nan)
    name = oracle.name
    check(name in CRAFTED, "mechanism", f"{attack} reports are built for "
          f"{', '.join(CRAFTED)} (got {name}); ria applies to every oracle")
    d = oracle.domain
    if name == "grr":
        if attack == "rpa":
            return rng.integers(0, d, m), np.full(r, 1.0 / d)
        return targets[rng.integers(0, r, m)], np.full(r, 1.0 / r)
    if name in registry.names(family="unary"):
        if attack == "rpa":
            return (rng.random((m, d)) < 0.5).astype(np.uint8), np.full(r, 0.5)
        bits = np.zeros((m, d), dtype=np.uint8)
        bits[:, targets] = 1
        return bits, np.ones(r)
    if name in registry.names(family="sketch"):
        return sketch_reports(oracle, attack, targets, m, rng)
    if name == "hr":
        return hadamard_reports(oracle, attack, targets, m, rng)
    if name == "rappor":
        return rappor_reports(oracle, attack, targets, m, rng)

    g = oracle.g
    if attack == "rpa":
        reports = np.empty((m, 3), dtype=np.int64)
        reports[:, :2] = draw_keys(rng, m)
        reports[:, 2] = rng.integers(0, g, m)
        return reports, np.full(r, 1.0 / g)
    key, value, hit = crafted if crafted is not None else best_hash(targets, g, rng)
    reports = np.tile(np.array([key[0], key[1], value], dtype=np.int64), (m, 1))
    return reports, hit.astype(float)


def sketch_reports(oracle: Any, attack: str, targets: np.ndarray, m: int,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """CMS and HCMS fake reports. A random row ``j`` each. RPA: CMS random signs, HCMS a
    random coefficient and bit (a report supports an item w.p. 1/2). MGA: CMS +1 at
    ``h_j(t)`` for every target and -1 elsewhere; HCMS the coefficient ``l = 0``, whose
    Hadamard row is all +1, with bit +1 (it supports every item, targets included)."""
    r = targets.size
    j = rng.integers(0, oracle.k, m)
    if oracle.name == "hcms":
        out = np.empty((m, 3), dtype=np.int64)
        out[:, 0] = j
        if attack == "rpa":
            out[:, 1] = rng.integers(0, oracle.m, m)
            out[:, 2] = np.where(rng.random(m) < 0.5, 1, -1)
            return out, np.full(r, 0.5)
        out[:, 1], out[:, 2] = 0, 1
        return out, np.ones(r)
    out = np.empty((m, 1 + oracle.m), dtype=oracle.report_dtype)
    out[:, 0] = j
    if attack == "rpa":
        out[:, 1:] = np.where(rng.random((m, oracle.m)) < 0.5, 1, -1)
        return out, np.full(r, 0.5)
    out[:, 1:] = -1
    cols = oracle.hash_items(j[:, None], targets[None, :])  # (m, r)
    out[np.arange(m)[:, None], 1 + cols] = 1
    return out, np.ones(r)


def hadamard_reports(oracle: Any, attack: str, targets: np.ndarray, m: int,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Hadamard-response fake reports ``(j, bit)``; a report supports item i when
    ``bit H[i+1, j] = +1``. RPA: a uniform coefficient and a uniform bit (it supports
    every item w.p. 1/2 = q*). MGA: a coefficient drawn uniformly among those whose
    column ``H[t+1, j]`` has one sign σ on every target (``j = 0``, the all-ones column,
    is always one; ``Σ_t H[t+1, j] = fwht(1_T)[j]`` finds them all), with the bit σ: it
    supports every target, the most any report can."""

    r = targets.size
    out = np.empty((m, 2), dtype=np.int64)
    if attack == "rpa":
        out[:, 0] = rng.integers(0, oracle.m, m)
        out[:, 1] = np.where(rng.random(m) < 0.5, 1, -1)
        return out, np.full(r, 0.5)
    rows = np.zeros(oracle.m)
    rows[targets + 1] = 1.0
    column_sums = np.rint(fwht(rows)).astype(np.int64)  # Σ_t H[t+1, j] for every j
    best = np.flatnonzero(np.abs(column_sums) == r)
    out[:, 0] = best[rng.integers(0, best.size, m)]
    out[:, 1] = np.sign(column_sums[out[:, 0]])
    return out, np.ones(r)


def mean_rappor_report(oracle: Any, items: np.ndarray) -> np.ndarray:
    """The mean RAPPOR report of an honest user holding a uniformly random item of
    ``items``: each bit's probability of being set."""
    return np.mean([oracle.bit_probabilities(int(i)) for i in items], axis=0)


def rappor_reports(oracle: Any, attack: str, targets: np.ndarray, m: int,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """RAPPOR fake reports (Bloom bits) and their mean bit vector. RPA: uniform bits.
    MGA: the targets' total estimate ``Σ_t (W (x - p*) / (q* - p*))_t`` is linear in the
    report x, with weight ``w_b = Σ_t W[t, b] / (q* - p*)`` on bit b (``W`` the
    least-squares decoder, ``q* > p*``), so the best report sets exactly the bits with
    ``w_b > 0`` (those of weight within 1e-9 of the largest ``|w|`` of 0 are left unset,
    as they add nothing). Needs the dense decoder: refused beyond its memory budget."""
    if attack == "rpa":
        return (rng.random((m, oracle.bloom)) < 0.5).astype(np.uint8), np.full(oracle.bloom, 0.5)
    weight = oracle.decoder[targets].sum(axis=0)
    bits = (weight > 1e-9 * np.abs(weight).max()).astype(np.uint8)
    return np.tile(bits, (m, 1)), bits.astype(float)


def best_hash(targets: np.ndarray, g: int,
              rng: np.random.Generator) -> tuple[np.ndarray, int, np.ndarray]:
    """A hash key that maps as many targets as it can to one value: the key, the value
    and which targets it maps there. Tries up to :data:`HASH_TRIES` random keys, in
    blocks; stops at the first key that maps every target to one value."""

    best: tuple[int, np.ndarray, int, np.ndarray] = (-1, np.zeros(2), 0, np.zeros(0))
    for _ in range(HASH_TRIES // HASH_BLOCK):
        keys = draw_keys(rng, HASH_BLOCK)
        h = np.stack([hash_values(keys, int(t), g) for t in targets])  # (r, keys)
        same = (h[:, None, :] == h[None, :, :]).sum(axis=0)  # (r, keys): how many share
        top = same.max(axis=0)
        k = int(np.argmax(top))
        if top[k] > best[0]:
            anchor = int(np.argmax(same[:, k]))
            best = (int(top[k]), keys[k], int(h[anchor, k]), h[:, k] == h[anchor, k])
        if best[0] == targets.size:
            break
    return best[1], best[2], best[3]


def report_boost(oracle: Any, support: np.ndarray,
                 targets: np.ndarray | None = None) -> np.ndarray | None:
    """``e_t``: the expected estimated count of each target from one fake report.

    A pure oracle: ``(s_t - q*)/(p* - q*)`` from the support probabilities ``s_t``.
    RAPPOR: ``support`` is the fake report's mean bit vector (its expected aggregate)
    and ``e_t`` the oracle's own estimate of it for one report, ``(W (x̄ - p*)/(q* -
    p*))_t``: exact, since the estimate is affine in the aggregate. ``None`` when the
    oracle has neither, or the support is unknown (NaN).
    """
    if np.isnan(support).any():
        return None
    if oracle.name == "rappor":
        assert targets is not None, "RAPPOR's boost needs the targets"
        return np.asarray(oracle.estimate_counts(support, 1), dtype=float)[targets]
    if not hasattr(oracle, "p_star"):
        return None
    return (support - oracle.q_star) / (oracle.p_star - oracle.q_star)


def theory_gain(oracle: Any, support: np.ndarray, beta: float, f_targets: float,
                targets: np.ndarray | None = None) -> float | None:
    """``β (Σ_t e_t - f_T)`` (:func:`report_boost`; ``e_t = (s_t - q*)/(p* - q*)`` for a
    pure oracle); ``None`` when the oracle has no closed form."""
    boost = report_boost(oracle, support, targets)
    if boost is None:
        return None
    return float(beta * (np.sum(boost) - f_targets))


def enforced_inputs(oracle: Any, attack: str, targets: np.ndarray, m: int,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Under enforced perturbation the randomness is not the fake user's (the
    oblivious-transfer step of seed 003): it picks only its input, which is then perturbed
    honestly. MGA and RIA pick a random target (MGA becomes RIA); RPA a random category.
    Returns the reports and their ``s_t``."""
    d, r = oracle.domain, targets.size
    if attack == "rpa":
        reports = oracle.perturb(rng.integers(0, d, m), rng)
        if oracle.name == "rappor":
            return reports, mean_rappor_report(oracle, np.arange(d))
        if hasattr(oracle, "p_star"):
            p, q = oracle.p_star, oracle.q_star
            return reports, np.full(r, (p + (d - 1) * q) / d)
        return reports, np.full(r, np.nan)
    return fake_reports(oracle, "ria", targets, m, rng)


def normalized(f: np.ndarray) -> np.ndarray:
    """The ``normalize`` defence: frequencies clipped at 0 and rescaled to sum to 1."""
    f = np.clip(f, 0.0, None)
    total = f.sum()
    return f / total if total > 0 else np.full(f.size, 1.0 / f.size)


def poison(oracle: Any, values: np.ndarray, attack: str, targets: np.ndarray, beta: float,
           trials: int, rng: np.random.Generator,
           defences: tuple[str, ...] = ()) -> Poisoning:
    """Measure ``attack`` on ``oracle`` with the honest ``values`` and ``β`` fake users,
    over ``trials`` repetitions (fresh reports each), beside its closed form; and the same
    under each of ``defences`` (:data:`DEFENCES`)."""
    from netdp.adversary.defences import check_applies, detect_fake, recover

    for name in defences:
        check(name in DEFENCES, "defence", f"must be one of {', '.join(DEFENCES)} "
              f"(got {name!r})")
        check_applies(oracle.name, name)
    detect = "detect-fake" in defences
    check(not detect or targets.size >= 2, "targets", "detect-fake mines itemsets of "
          f"2 or more targets: needs at least 2 (got {targets.size})")
    check(0 < beta < 1, "beta", f"must lie in (0, 1) (got {beta})")
    check(trials >= 2, "trials", f"must be at least 2 (got {trials})")
    values = np.asarray(values, dtype=np.int64)
    n = values.size
    m = int(round(beta * n / (1.0 - beta)))
    check(m >= 1, "beta", f"gives no fake user with {n} honest users (got {beta})")
    truth = np.bincount(values, minlength=oracle.domain) / n
    start = time.perf_counter()
    gains = np.empty((trials, targets.size))
    mse = np.empty((trials, 2))
    support = np.zeros(oracle.bloom if oracle.name == "rappor" else targets.size)
    crafted = best_hash(targets, oracle.g, rng) if attack == "mga" and \
        oracle.name in registry.names(family="local_hashing") else None
    # gain, mse, mse attacked (detect-fake: and the fake and honest reports dropped)
    extra = {name: np.empty((trials, 5 if name == "detect-fake" else 3)) for name in defences}
    enforced_support = np.zeros_like(support)
    for i in range(trials):
        if detect:  # the reports themselves, drawn as perturb_aggregate draws them
            honest_reports = oracle.perturb(values, rng)
            honest = oracle.aggregate(honest_reports)
        else:
            honest = oracle.perturb_aggregate(values, rng)
        fakes, support = fake_reports(oracle, attack, targets, m, rng, crafted)
        f_hat = oracle.estimate_counts(honest, n) / n
        f_tilde = oracle.estimate_counts(honest + oracle.aggregate(fakes), n + m) / (n + m)
        gains[i] = (f_tilde - f_hat)[targets]
        mse[i] = [np.mean((f_hat - truth) ** 2), np.mean((f_tilde - truth) ** 2)]
        for name, out in extra.items():
            dropped: list[int] = []
            if name == "normalize":
                a, b = normalized(f_hat), normalized(f_tilde)
            elif name == "recover":  # without fake reports: β = 0, the projection alone
                a, b = project_simplex(f_hat), recover(oracle, f_tilde, m / (n + m), n + m)
            elif name == "detect-fake":
                kept, _ = detect_fake(oracle, honest_reports, targets.size)
                a = oracle.estimate_counts(oracle.aggregate(honest_reports[kept]),
                                           max(1, int(kept.sum()))) / max(1, int(kept.sum()))
                both = np.concatenate([honest_reports, fakes.astype(honest_reports.dtype)])
                kept, _ = detect_fake(oracle, both, targets.size)
                b = oracle.estimate_counts(oracle.aggregate(both[kept]),
                                           max(1, int(kept.sum()))) / max(1, int(kept.sum()))
                dropped = [int(np.sum(~kept[n:])), int(np.sum(~kept[:n]))]
            else:
                forced, enforced_support = enforced_inputs(oracle, attack, targets, m, rng)
                a = f_hat
                b = oracle.estimate_counts(honest + oracle.aggregate(forced), n + m) / (n + m)
            out[i] = [np.sum((b - a)[targets]), np.mean((a - truth) ** 2),
                      np.mean((b - truth) ** 2), *dropped]
    total = gains.sum(axis=1)
    beta_real = m / (n + m)
    f_targets = float(truth[targets].sum())
    theory = theory_gain(oracle, support, beta_real, f_targets, targets)
    defended = tuple(
        {"name": name, "gain": float(out[:, 0].mean()),
         "std": float(out[:, 0].std(ddof=1) / math.sqrt(trials)),
         "theory": theory_gain(oracle, enforced_support, beta_real, f_targets, targets)
         if name == "enforced-perturbation" else None,
         "mse_honest": float(out[:, 1].mean()), "mse_with_attack": float(out[:, 2].mean()),
         **({"removed_fake": float(out[:, 3].mean()), "removed_honest": float(out[:, 4].mean())}
            if name == "detect-fake" else {})}
        for name, out in extra.items())
    return Poisoning(oracle.describe(), attack, beta_real, tuple(int(t) for t in targets), n,
                     m, trials, float(total.mean()),
                     float(total.std(ddof=1) / math.sqrt(trials)), theory,
                     tuple(float(g) for g in gains.mean(axis=0)),
                     int(np.sum(support == 1.0)) if attack == "mga" and oracle.name in
                     registry.names(family="local_hashing") else targets.size,
                     float(mse[:, 0].mean()), float(mse[:, 1].mean()),
                     time.perf_counter() - start, defended)

