"""Privacy of decentralized gradient descent over gossip (Muffliato-GD): σ calibrated per regime
at the target (ε, δ) over R rounds (:func:`calibrate`), and the tracker that composes each
pair's exact per-round Rényi loss of its view over the rounds, with its report part."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from netdp.core.errors import check
from netdp.engine.trace import Trace
from netdp.graphs import gossip_matrix
from netdp.report.types import (
    QUANTILES,
    PrivacyReport,
    RegimeLosses,
    Report,
    distance_lines,
    fmt,
    quantiles_of,
)
from netdp.tracking.base import MATRIX_LIMIT, Tracker
from netdp.tracking.gossip_setup import Calibration, GossipSgdSetup
from netdp.tracking.gossip_sum_tracker import coefficients, distance_rows

METHOD = ("per pair (u, v): R rounds x the exact Renyi loss of v's view of one round's "
          "K + 1 gossip states about u's noisy update given the models before the round "
          "(gossip.joint, T = K), capped at LDP; converted at delta. Sound at the largest "
          "pair (LDP: a neighbour sees u's noisy model at t = 0); below it a per-round "
          "conditional figure (Muffliato-GD), not a bound")


@dataclass(frozen=True, eq=False)
class GossipSgdPrivacy(PrivacyReport):
    """Per-regime calibration, and the pairwise ε of R rounds of gossip, by distance."""

    delta: float
    target_epsilon: float
    calibration: dict[str, Calibration]
    empirical: tuple[RegimeLosses, ...]
    details: dict[str, Any]
    method: str = METHOD
    theory: dict[str, float] = field(default_factory=dict)
    renyi: dict[str, Any] = field(default_factory=dict)
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"delta": self.delta, "target_epsilon": self.target_epsilon,
                               **self.details,
                               "calibration": {r: c.to_dict()
                                               for r, c in self.calibration.items()}}
        if self.theory:
            out["theory"] = dict(self.theory)
        if self.note is not None:
            out["note"] = self.note
        rows = []
        for row in self.empirical:
            entry = row.to_dict()
            if row.regime in self.renyi:
                entry["renyi"] = self.renyi[row.regime]
            rows.append(entry)
        out["empirical"] = rows
        if self.empirical:
            out["method"] = self.method
        return out

    def lines(self, report: Report) -> list[str]:
        if not self.empirical:
            return ["", f"  {self.note or ''}"]
        lines = ["", f"  pairwise eps over {self.details['rounds']} rounds (delta = "
                     f"{self.delta:g}; local = every update in the clear)",
                 f"  {'regime':12}{'mean':>9}{'q50':>9}{'q90':>9}{'q99':>9}{'max':>9}"
                 f"{'> target':>10}{'local':>10}"]
        for row in self.empirical:
            values = (row.mean, row.quantiles["q50"], row.quantiles["q90"],
                      row.quantiles["q99"], row.max)
            cells = "".join(f" {fmt(v):>8}" for v in values)
            lines.append(f"  {row.regime:12}{cells}{row.above_target:>10.1%}"
                         f"{fmt(row.ldp['mean']):>10}")
        first = self.empirical[0]
        lines += distance_lines(first.by_distance, f"{first.regime} regime")
        lines += [f"  theory {name}, mean over pairs: {fmt(eps)}"
                  for name, eps in self.theory.items()]
        if self.note:
            lines.append(f"  note: {self.note}")
        return lines


class GossipSgdTracker(Tracker):
    """The per-round joint coefficients of the gossip that ran (they depend on W and K
    only), composed over the rounds, for each private regime."""

    def __init__(self, setup: GossipSgdSetup, keep_pairs: bool) -> None:
        self.setup, self.keep_pairs = setup, keep_pairs
        n = setup.topology.n
        if keep_pairs:
            check(n <= MATRIX_LIMIT, "pairs-out",
                  f"the full matrix is offered up to n = {MATRIX_LIMIT} (n = {n})")
            check(bool(self._private()), "pairs-out", "the matrix needs a private regime "
                  "(--compare local or network)")
        self.tracking = bool(setup.config.accountants)
        self.joint: Any = None
        self.sum: Any = None
        if self.tracking or keep_pairs:
            self.joint, self.sum = coefficients(setup, setup.gossip_steps,
                                                dense=keep_pairs)

    def add(self, run: int, trace: Trace, outcome: Any) -> None:
        check(trace.gossip is not None, "protocol", "the gossip tracker reads gossip rounds")

    def _paired(self) -> Calibration:
        """The regime of :meth:`matrix`: network where it runs, else the first private."""
        cals = {c.regime: c for c in self._private()}
        return cals.get("network") or next(iter(cals.values()))

    def node_ldp(self) -> np.ndarray | None:
        if not self._private():
            return None
        from netdp.tracking.sgd import epsilon

        local = epsilon(self.setup.steps / (2.0 * self._paired().noise_multiplier**2),
                        self.setup.config.report_delta)
        return np.full(self.setup.topology.n, float(local))

    def _private(self) -> list[Calibration]:
        return [c for c in self.setup.calibrations.values() if c.noise_multiplier > 0]

    def matrix(self) -> np.ndarray | None:
        if not self.keep_pairs or self.joint is None:
            return None
        from netdp.tracking.sgd import epsilon_upper

        cal = self._paired()
        coef = self.joint.matrix()
        eps = np.full(coef.shape, np.nan)
        off = ~np.isnan(coef)
        eps[off] = epsilon_upper(self.setup.steps * coef[off]
                                 / (2.0 * cal.noise_multiplier**2),
                                 self.setup.config.report_delta)
        return eps

    def report(self) -> GossipSgdPrivacy:
        from netdp.tracking import gossip
        from netdp.tracking.sgd import epsilon

        setup, cfg = self.setup, self.setup.config
        n, rounds = setup.topology.n, setup.steps
        details = {"rounds": rounds, "gossip_steps": setup.gossip_steps,
                   "gossip_matrix": setup.matrix, "accelerated": setup.plan.accelerated,
                   "spectral_gap": setup.plan.gap}
        calibrations = setup.calibrations
        if self.joint is None:
            return GossipSgdPrivacy(cfg.report_delta, cfg.epsilon, calibrations, (), details,
                                    note="pairwise tracking skipped (no accountant)")
        joint, delta = self.joint, cfg.report_delta
        mask = joint.pair_mask()
        distances = gossip_matrix.hop_distances(setup.plan.adj, joint.nodes)
        rows, theory, renyi = [], {}, {}
        for cal in self._private():
            per_round = cal.noise_multiplier / math.sqrt(rounds)  # s: R c/(2σ²) = c/(2s²)
            eps_all = joint.epsilon(per_round, delta)
            eps = eps_all[mask]
            local = float(epsilon(rounds / (2.0 * cal.noise_multiplier**2), delta))
            rows.append(RegimeLosses(
                cal.regime, delta, n * (n - 1), float(eps.mean()), float(eps.min()),
                float(eps.max()),
                quantiles_of(eps, QUANTILES),
                float(np.mean(eps > cfg.epsilon * (1.0 + 1e-9))),
                {"mean": local, "min": local, "max": local},
                distance_rows(joint, distances, eps_all)))
            paper = self.sum.epsilon(per_round, delta)[self.sum.pair_mask()]
            theory[f"gossip-message-sum ({cal.regime})"] = float(paper.mean())
            if setup.rdp_order is not None:
                div = joint.rdp(setup.rdp_order, per_round)
                renyi[cal.regime] = {"order": setup.rdp_order, "mean": float(div[mask].mean()),
                                     "min": float(div[mask].min()),
                                     "max": float(div[mask].max()),
                                     "by_distance": gossip.by_distance(joint, distances, div)}
        sampled = (f"; {joint.nodes.size} observers sampled, mean +- {joint.stderr():.2g} "
                   "(standard error of the coefficient)" if joint.method == "sampled" else "")
        if bool((joint.capped()[mask] >= 1.0).all()):
            note = ("every pair is at the local level here (c = 1: each observer's view of "
                    "a round determines every noisy update)")
        else:
            note = ("pairs below the local level carry the per-round (Muffliato-GD) figure, "
                    "not a bound: the models v never sees carry u's earlier updates into "
                    "later rounds; the largest pair (a neighbour) is at the local level, "
                    "which is sound. theory gossip-message-sum: the paper's per-message sum, "
                    "not a bound either")
        note += sampled
        return GossipSgdPrivacy(delta, cfg.epsilon, calibrations, tuple(rows), details,
                                METHOD + f" ({joint.method})", theory, renyi, note)


def calibrate(regimes: tuple[str, ...], epsilon_target: float, delta: float, rounds: int,
              clip_norm: float, fixed: float | None = None) -> dict[str, Calibration]:
    """σ per regime at the target (ε, δ) over ``rounds`` rounds (module docstring), or the
    noise multiplier ``fixed`` (``--sigma``) with the ε it gives.

    The coefficient of a regime is the largest per-round ``c`` it must cover: 1 for local
    (every update in the clear), and for network the largest over pairs, which is 1 too (a
    neighbour receives the noisy model at t = 0; ``tests/tasks/test_sgd_gossip.py``
    checks it against :func:`netdp.tracking.gossip.joint`).
    """
    from netdp.tracking.sgd import epsilon, rho_for

    largest = {"local": 1.0, "network": 1.0}
    how = {"local": "rdp: Gaussian (sensitivity 2L) composed over R rounds",
           "network": "rdp: largest pair of the exact per-round joint view (a neighbour: "
                      "c = 1), composed over R rounds"}
    out = {}
    for regime in regimes:
        if regime == "nonprivate":
            out[regime] = Calibration(regime, 0.0, 0.0, math.inf, delta, None,
                                      "none (no noise)")
            continue
        c = rounds * largest[regime]
        if fixed is None:
            units, eps = math.sqrt(c / (2.0 * rho_for(epsilon_target, delta))), epsilon_target
        else:
            units, eps = fixed, float(epsilon(c / (2.0 * fixed**2), delta))
        out[regime] = Calibration(regime, 2.0 * clip_norm * units, units, eps, delta, c,
                                  how[regime])
    return out
