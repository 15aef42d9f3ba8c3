"""Audit one randomizer: run it on two neighbouring inputs, score every output, bound ε.

Spec accounting.md §5. A number randomizer (``laplace``, ``gaussian``, ``duchi``,
``piecewise``, ``hybrid``) runs on ``x = -1`` and ``x' = +1`` (its whole input range,
the worst pair) and is scored by its output: the likelihood ratio is monotone in it for
the additive ones, so the threshold test is the likelihood-ratio test. A frequency oracle
runs on categories ``0`` and ``1``:

* an oracle that gives its reports' law (``log_probability``: CMS, HCMS, RAPPOR) scores
  a report by its exact log-likelihood ratio;
* the others by how much more it supports ``1`` than ``0``
  (:meth:`~netdp.mechanisms.base.FrequencyOracle.report_scores`), the likelihood ratio's
  order for the pure oracles; where that support takes few values, a small classifier
  (each support cell's frequency ratio, fitted on the first split,
  :func:`~netdp.audit.auditor.cell_scores`) scores it instead, which also catches a
  report law that is not the claimed one.

The two worlds share their random draws (paired seeds), so their difference is the input
alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from netdp import mechanisms
from netdp.audit.auditor import Auditor, AuditResult, SplitThreshold, cell_scores
from netdp.core import progress
from netdp.core.documented import Documented
from netdp.core.errors import check
from netdp.mechanisms.base import FrequencyOracle
from netdp.mechanisms.noise import Gaussian

NUMERIC = mechanisms.registry.names(*mechanisms.NUMERIC_KINDS)
CHUNK = 1 << 16  # reports drawn at once


def audit_seconds(name: str, domain: int, trials: int,
                  curve: bool = False) -> tuple[float, str]:
    """Seconds :func:`audit_mechanism` takes on ``trials`` trials of ``name`` (and the
    ladder of :func:`netdp.audit.curve.audit_curve` after it: as many again), and the
    parameter that drives them (``domain`` where the categories cost more than the
    report), for the refusal of a run over ``NETDP_TIME_LIMIT`` before anything is drawn.

    Examples
    --------
    >>> seconds, param = audit_seconds("laplace", 8, 56_000_000)
    >>> round(seconds, 1), param
    (7.8, 'trials')
    """
    a, b = mechanisms.registry.entry(name).audit_us
    per_category = b * domain if name not in NUMERIC else 0.0
    seconds = 1e-6 * (a + per_category) * float(trials) * (2.0 if curve else 1.0)
    return seconds, "domain" if per_category > a else "trials"


@dataclass(frozen=True, repr=False)
class MechanismAudit(Documented):
    """The audit of one randomizer against a claimed ε.

    Attributes
    ----------
    mechanism
        The randomizer's parameters (its ``describe()``).
    pair
        The two neighbouring inputs.
    result
        The audit itself.
    claim_epsilon
        The ε audited (the mechanism's own unless another claim was given).
    violation
        Whether ε_lb exceeds the claim: the claim is false, at the audit's confidence.
    seconds
        Time to draw and score the trials.
    seed, config
        The seed, and the parameters of the command that ran (``netdp audit``'s, as
        :func:`netdp.audit` takes them; else the call's own).
    """

    mechanism: dict
    pair: tuple[float, float]
    result: AuditResult
    claim_epsilon: float
    violation: bool
    seconds: float
    seed: int | None = None
    config: Mapping[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        return verdict_line(self.mechanism, self.result.epsilon_lower, self.claim_epsilon,
                            self.violation, f"{self.result.trials:,} held-out trials per input")

    def figures(self) -> dict[str, Any]:
        """``{mechanism, pair, audit: {method, trials, ..., claim_epsilon, violation}}``."""
        return {"mechanism": self.mechanism, "pair": list(self.pair),
                "audit": {**self.result.to_dict(), "claim_epsilon": self.claim_epsilon,
                          "violation": self.violation, "seconds": self.seconds}}


def verdict_line(mechanism: Mapping[str, Any], lower: float, claim: float, violation: bool,
                 size: str) -> str:
    """``laplace (eps 1): eps_lb 0.91 <= claim 1, consistent (N trials ...)``."""
    sign, verdict = (">", "VIOLATION") if violation else ("<=", "consistent")
    return (f"{mechanism.get('name')} (eps {mechanism.get('epsilon'):g}): eps_lb {lower:.4g} "
            f"{sign} claim {claim:.4g}, {verdict} ({size})")


def build(name: str, epsilon: float, delta: float = 0.0, domain: int = 8) -> Any:
    """The randomizer ``name`` at ``epsilon`` (and ``delta`` for ``gaussian``)."""

    if name in NUMERIC:
        return mechanisms.numeric(name, epsilon, delta)
    return mechanisms.frequency_oracle(name, epsilon, domain)


def scores(mechanism: Any, trials: int, seed: int,
           pair: tuple[float, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Features of ``trials`` runs in each world, both worlds drawing from the same seed:
    a number randomizer's output, signed to grow with the input, or a report's exact
    log-likelihood ratio where the oracle gives its law (``log_probability``: CMS, HCMS,
    RAPPOR), both ``(trials,)``; else a report's support of the two categories
    (``(trials, 2)``)."""
    x0, x1 = pair if pair is not None else default_pair(mechanism)
    score, kind, columns = scorer(mechanism, (x0, x1))
    shape = (trials, columns) if columns > 1 else (trials,)
    out0, out1 = np.empty(shape), np.empty(shape)
    rng0, rng1 = np.random.default_rng(seed), np.random.default_rng(seed)
    with progress.bar(total=trials, desc="audit: drawing both worlds", unit="trial") as shown:
        for lo in range(0, trials, CHUNK):
            size = min(CHUNK, trials - lo)
            for x, rng, out in ((x0, rng0, out0), (x1, rng1, out1)):
                out[lo:lo + size] = score(mechanism.perturb(np.full(size, x, dtype=kind),
                                                            rng))
            shown.update(size)
    return out0, out1


def scorer(mechanism: Any, pair: tuple[float, float]
           ) -> tuple[Callable[[np.ndarray], np.ndarray], Any, int]:
    """The score of :func:`scores` for outputs of ``mechanism`` on ``pair``, the dtype of
    its inputs, and the score's columns (1, or 2 for an oracle's supports)."""
    oracle = _is_oracle(mechanism)
    x0, x1 = pair
    score: Callable[[np.ndarray], np.ndarray]
    exact = oracle and hasattr(mechanism, "log_probability")
    if exact:  # the exact log-likelihood ratio of the report
        def score(out: np.ndarray) -> np.ndarray:
            return (mechanism.log_probability(out, int(x1))
                    - mechanism.log_probability(out, int(x0)))
    elif oracle:
        def score(out: np.ndarray) -> np.ndarray:
            return mechanism.report_scores(out, [int(x0), int(x1)])
    else:
        sign = 1.0 if x1 >= x0 else -1.0

        def score(out: np.ndarray) -> np.ndarray:
            return sign * np.asarray(out, dtype=float)
    kind: Any = np.int64 if oracle else float
    return score, kind, 2 if oracle and not exact else 1


def default_pair(mechanism: Any) -> tuple[float, float]:
    """The neighbouring inputs audited: categories 0 and 1, or the range's ends -1, +1."""
    return (0, 1) if _is_oracle(mechanism) else (-1.0, 1.0)


def _is_oracle(mechanism: Any) -> bool:

    return isinstance(mechanism, FrequencyOracle)


def audit_mechanism(mechanism: Any, trials: int, seed: int, claim_epsilon: float | None = None,
                    confidence: float = 0.95, pair: tuple[float, float] | None = None,
                    strategy: SplitThreshold | None = None) -> MechanismAudit:
    """Audit ``mechanism`` with ``trials`` runs per world against ``claim_epsilon`` (its
    own ε by default), stated at the mechanism's δ. Gaussian noise adds the Gaussian-DP
    fit."""

    check(trials >= 4, "trials", f"must be at least 4 (got {trials})")
    strategy = strategy or SplitThreshold()
    claim = float(mechanism.epsilon if claim_epsilon is None else claim_epsilon)
    pair = pair if pair is not None else default_pair(mechanism)
    start = time.perf_counter()
    s0, s1 = scores(mechanism, trials, seed, pair)
    if s0.ndim == 2:  # supports: the cells' ratios where few, else the difference
        cells = cell_scores(s0, s1, strategy.fit_size(trials))
        s0, s1 = cells if cells is not None else (s0[:, 1] - s0[:, 0], s1[:, 1] - s1[:, 0])
    delta = float(getattr(mechanism, "delta", 0.0) or 0.0)
    result = Auditor(s0, s1, confidence, delta).audit(
        strategy, gaussian=isinstance(mechanism, Gaussian))
    seconds = time.perf_counter() - start
    config = {"trials": trials, "confidence": confidence, "claim_epsilon": claim_epsilon,
              "seed": seed}
    return MechanismAudit(mechanism.describe(), pair, result, claim,
                          bool(result.epsilon_lower > claim), seconds, seed, config)


@dataclass(frozen=True, repr=False)
class OneRunAudit(Documented):
    """A one-run audit of one randomizer (Steinke, Nasr and Jagielski 2023).

    Attributes
    ----------
    mechanism
        The randomizer's parameters (its ``describe()``).
    pair
        The two inputs: a canary left out gives the first, one included the second.
    canaries
        m, the canaries of the run.
    guesses
        r, the canaries guessed on (half of them "in", half "out").
    correct
        The guesses that were right.
    confidence
        Of the bound.
    delta
        The δ at which ε is bounded: the mechanism's own (0 but for Gaussian noise).
    epsilon_lower
        ε_lb from :func:`~netdp.audit.lower_bounds.one_run_epsilon`.
    ceiling
        The ε_lb of ``guesses`` right guesses out of ``guesses``: no audit of this size
        proves more.
    claim_epsilon
        The ε audited (the mechanism's own unless another claim was given).
    violation
        Whether ε_lb exceeds the claim.
    seconds
        Time to draw, score and bound.
    seed, config
        As :class:`MechanismAudit`'s.
    """

    mechanism: dict
    pair: tuple[float, float]
    canaries: int
    guesses: int
    correct: int
    confidence: float
    delta: float
    epsilon_lower: float
    ceiling: float
    claim_epsilon: float
    violation: bool
    seconds: float
    seed: int | None = None
    config: Mapping[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        return verdict_line(self.mechanism, self.epsilon_lower, self.claim_epsilon,
                            self.violation, f"one run of {self.canaries:,} canaries")

    def figures(self) -> dict[str, Any]:
        """``{mechanism, pair, audit: {method: "one-run", canaries, guesses, ...}}``."""
        return {"mechanism": self.mechanism, "pair": list(self.pair),
                "audit": {"method": "one-run", "canaries": self.canaries,
                          "guesses": self.guesses, "correct": self.correct,
                          "confidence": self.confidence, "delta": self.delta,
                          "epsilon_lower": self.epsilon_lower, "ceiling": self.ceiling,
                          "claim_epsilon": self.claim_epsilon,
                          "violation": self.violation, "seconds": self.seconds}}


def default_guesses(canaries: int) -> int:
    """The guesses of a one-run audit unless told: a tenth of the canaries, at least 2,
    fixed before the run (the paper's usual share; choosing it after seeing the scores
    would need a correction)."""
    return max(2, canaries // 10)


def one_run_audit(mechanism: Any, canaries: int, seed: int, guesses: int | None = None,
                  confidence: float = 0.95, claim_epsilon: float | None = None,
                  pair: tuple[float, float] | None = None) -> OneRunAudit:
    """Audit ``mechanism`` in one run of ``canaries`` canaries (Steinke, Nasr and
    Jagielski, NeurIPS 2023).

    Each canary is included independently with probability 1/2: included, its input is
    the pair's second (``+1``, category 1), else its first. All ``canaries`` inputs are
    randomized in one vectorised call and scored as :func:`scores` scores them (an
    oracle's two supports by their difference: nothing is fitted on the canaries). The
    ``guesses // 2`` lowest scores are guessed "out", the ``guesses - guesses // 2``
    highest "in", the rest abstained on (ties broken by canary index, which is
    independent of who was included). The count right gives ε_lb by
    :func:`~netdp.audit.lower_bounds.one_run_epsilon` at the mechanism's δ.

    ``guesses`` defaults to :func:`default_guesses` (a tenth of the canaries), fixed in
    advance, so no correction for choosing it is needed.
    """
    from netdp.audit.lower_bounds import one_run_epsilon

    check(canaries >= 2, "canaries", f"must be at least 2 (got {canaries})")
    guesses = default_guesses(canaries) if guesses is None else guesses
    check(1 <= guesses <= canaries, "guesses",
          f"must lie in 1..{canaries}, the canaries (got {guesses})")
    claim = float(mechanism.epsilon if claim_epsilon is None else claim_epsilon)
    pair = pair if pair is not None else default_pair(mechanism)
    delta = float(getattr(mechanism, "delta", 0.0) or 0.0)
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    included = rng.random(canaries) < 0.5
    score, kind, columns = scorer(mechanism, pair)
    inputs = np.where(included, pair[1], pair[0]).astype(kind)
    s = np.asarray(score(mechanism.perturb(inputs, rng)), dtype=float)
    if columns > 1:  # supports of the two categories: how much more it supports 1
        s = s[:, 1] - s[:, 0]
    order = np.argsort(s, kind="stable")
    out, into = order[:guesses // 2], order[canaries - (guesses - guesses // 2):]
    correct = int(np.count_nonzero(~included[out]) + np.count_nonzero(included[into]))
    lower = one_run_epsilon(guesses, correct, confidence, delta, canaries)
    ceiling = one_run_epsilon(guesses, guesses, confidence, delta, canaries)
    seconds = time.perf_counter() - start
    config = {"one_run": True, "canaries": canaries, "guesses": guesses,
              "confidence": confidence, "claim_epsilon": claim_epsilon, "seed": seed}
    return OneRunAudit(mechanism.describe(), pair, canaries, guesses, correct, confidence,
                       delta, lower, ceiling, claim, bool(lower > claim), seconds, seed, config)
