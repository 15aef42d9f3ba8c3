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
  :func:`~netdp.privacy.auditor.cell_scores`) scores it instead, which also catches a
  report law that is not the claimed one.

The two worlds share their random draws (paired seeds), so their difference is the input
alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from netdp.errors import check
from netdp.privacy.auditor import Auditor, AuditResult, SplitThreshold, cell_scores

NUMERIC = ("laplace", "gaussian", "duchi", "piecewise", "hybrid")
CHUNK = 1 << 16  # reports drawn at once


@dataclass(frozen=True)
class MechanismAudit:
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
    """

    mechanism: dict
    pair: tuple[float, float]
    result: AuditResult
    claim_epsilon: float
    violation: bool
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """``{mechanism, pair, audit: {method, trials, ..., claim_epsilon, violation}}``."""
        return {"mechanism": self.mechanism, "pair": list(self.pair),
                "audit": {**self.result.to_dict(), "claim_epsilon": self.claim_epsilon,
                          "violation": self.violation, "seconds": self.seconds}}


def build(name: str, epsilon: float, delta: float = 0.0, domain: int = 8) -> Any:
    """The randomizer ``name`` at ``epsilon`` (and ``delta`` for ``gaussian``)."""
    from netdp import mechanisms

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
    oracle = _is_oracle(mechanism)
    x0, x1 = pair if pair is not None else default_pair(mechanism)
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
    shape = (trials, 2) if oracle and not exact else (trials,)
    out0, out1 = np.empty(shape), np.empty(shape)
    rng0, rng1 = np.random.default_rng(seed), np.random.default_rng(seed)
    for lo in range(0, trials, CHUNK):
        size = min(CHUNK, trials - lo)
        for x, rng, out in ((x0, rng0, out0), (x1, rng1, out1)):
            out[lo:lo + size] = score(mechanism.perturb(np.full(size, x, dtype=kind), rng))
    return out0, out1


def default_pair(mechanism: Any) -> tuple[float, float]:
    """The neighbouring inputs audited: categories 0 and 1, or the range's ends -1, +1."""
    return (0, 1) if _is_oracle(mechanism) else (-1.0, 1.0)


def _is_oracle(mechanism: Any) -> bool:
    from netdp.mechanisms.base import FrequencyOracle

    return isinstance(mechanism, FrequencyOracle)


def audit_mechanism(mechanism: Any, trials: int, seed: int, claim_epsilon: float | None = None,
                    confidence: float = 0.95, pair: tuple[float, float] | None = None,
                    strategy: SplitThreshold | None = None) -> MechanismAudit:
    """Audit ``mechanism`` with ``trials`` runs per world against ``claim_epsilon`` (its
    own ε by default), stated at the mechanism's δ. Gaussian noise adds the Gaussian-DP
    fit."""
    from netdp.mechanisms.noise import Gaussian

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
    return MechanismAudit(mechanism.describe(), pair, result, claim,
                          bool(result.epsilon_lower > claim), seconds)
