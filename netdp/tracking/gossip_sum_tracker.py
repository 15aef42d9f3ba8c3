"""The pairwise tracker of gossip averaging (Muffliato): each observer's exact Rényi loss of
its whole view (:func:`netdp.tracking.gossip.joint`), every observer up to
:data:`DENSE_NODES` nodes and :data:`SAMPLED` of them beyond, the paper's per-message sum
beside it as theory, and the report part that says which was done."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from netdp.accounting import registry
from netdp.core.errors import check
from netdp.core.setup import Streams
from netdp.engine.faults import from_config
from netdp.engine.trace import Trace
from netdp.graphs import gossip_matrix as GM
from netdp.report.types import (
    QUANTILES,
    DistanceRow,
    LdpSummary,
    PairSummary,
    PrivacyReport,
    Report,
    by_distance,
    distance_lines,
    fmt,
    row,
)
from netdp.tracking import gossip_message_sum as MS
from netdp.tracking.base import MATRIX_LIMIT, Tracker, draw_coalition
from netdp.tracking.gossip_setup import GossipSetup, GossipSumSetup

DENSE_NODES = 200  # every observer's exact loss up to here, sampled beyond
CLOSED_FORM_NODES = 4096  # the eavesdropper's n x n covariance inverted up to here
SAMPLED = 32  # observers sampled by default beyond DENSE_NODES
#: The accountant where a config names none: the first the gossip trackers compose with.
DEFAULT = registry.names(protocol="gossip")[:1]


def first_accountant(config: Any) -> str:
    """The accountant of the matrix, the coalition's losses and the LDP figure: the
    config's first, else :data:`DEFAULT`."""
    return (config.accountants or DEFAULT)[0]


@dataclass(frozen=True, eq=False)
class GossipPrivacy(PrivacyReport):
    """Pairwise (ε, δ) of gossip averaging from the exact loss of each observer's view, by
    distance; ``by_distance[i]`` belongs to ``empirical[i]``."""

    epsilon0: float
    delta0: float
    sigma: float
    ldp: LdpSummary
    theory: dict[str, float]
    empirical: tuple[PairSummary, ...]
    by_distance: tuple[tuple[DistanceRow, ...], ...]
    method: str
    renyi: dict[str, Any] | None = None
    note: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    theory_by_distance: dict[str, tuple[DistanceRow, ...]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        rows = []
        for emp, dist in zip(self.empirical, self.by_distance, strict=True):
            entry = {**emp.to_dict(), "by_distance": [r.to_dict() for r in dist]}
            if self.renyi is not None:
                entry["renyi"] = self.renyi
            rows.append(entry)
        out: dict[str, Any] = {"epsilon0": self.epsilon0, "delta0": self.delta0,
                               "sigma": self.sigma, "ldp": self.ldp.to_dict(), **self.details,
                               "theory": dict(self.theory), "method": self.method}
        if self.theory_by_distance:
            out["theory_by_distance"] = {name: [r.to_dict() for r in rows]
                                         for name, rows in self.theory_by_distance.items()}
        if self.note is not None:
            out["note"] = self.note
        out["empirical"] = rows
        return out

    def lines(self, report: Report) -> list[str]:
        widths = (14,) + (10,) * 6
        who = ("eps(u -> C) towards the coalition C" if "coalitions" in self.details
               else "eps(u -> v) over ordered pairs")
        extra = self.details.get("correlated_noise", {})
        also = (f", DECOR secrets of std {extra['decor_sigma']:.4g} on "
                f"{extra['decor_pairs']} edges" if "decor_sigma" in extra else "")
        also += ", a user's covariance" if "covariance" in extra else ""
        lines = ["", f"  privacy: {who}; each node adds noise once "
                     f"(sigma = {self.sigma:.4g}{also}, eps0 = {self.epsilon0:.4g}-LDP)",
                 row(("", "mean", "min", "max", "q50", "q90", "q99"), widths) + "  delta"]
        for emp in self.empirical:
            cells = [emp.mean, emp.min, emp.max, *emp.quantiles.values()]
            lines.append(row((f"{emp.accountant} (gossip)", *map(fmt, cells)), widths)
                         + f"  {emp.delta:.2g}")
        lines.append(row(("LDP baseline", fmt(self.ldp.mean), fmt(self.ldp.min),
                          fmt(self.ldp.max)), widths))
        if self.by_distance:
            lines += distance_lines(self.by_distance[0], self.empirical[0].accountant)
        lines += [f"  theory {name}: {fmt(eps)}" for name, eps in self.theory.items()]
        lines.append(f"  accounting: {self.method}")
        if self.note:
            lines.append(f"  note: {self.note}")
        return lines


class GossipTracker(Tracker):
    """The exact loss of each observer's view of the gossip that ran (deterministic for
    synchronous rounds: it depends on W, T and σ, not on the noise drawn).

    All observers up to :data:`DENSE_NODES` nodes, one where the graph is
    vertex-transitive, else ``--sources`` (default :data:`SAMPLED`) sampled observers from
    the ``sources`` stream, with the standard error of the mean.
    """

    def __init__(self, setup: GossipSumSetup, keep_pairs: bool) -> None:
        self.setup, self.keep_pairs = setup, keep_pairs
        n = setup.topology.n
        if keep_pairs:
            check(n <= MATRIX_LIMIT, "pairs-out",
                  f"the full matrix is offered up to n = {MATRIX_LIMIT} (n = {n})")
            check(setup.config.coalition is None, "pairs-out",
                  "a coalition observes as one: no matrix")

        self.tracking = bool(setup.config.accountants)
        self.joint: Any = None
        self.sum: Any = None
        self.coalitions: list[Any] = []  # one GossipLosses per run, with --coalition
        self.realised: list[Any] = []  # one GossipLosses per run, with faults
        self.faulty = from_config(setup.config) is not None
        self.scheduled = setup.schedule != "sync"  # each run's losses, from its trace
        if (self.tracking or keep_pairs) and setup.config.coalition is None \
                and not self.faulty and not self.scheduled:
            self.joint, self.sum = coefficients(setup, setup.steps, dense=keep_pairs)

    def add(self, run: int, trace: Trace, outcome: Any) -> None:
        from netdp.tracking import gossip
        from netdp.tracking.gossip import Method

        check(trace.gossip is not None, "protocol", "the gossip tracker reads gossip rounds")
        assert trace.gossip is not None
        if self.scheduled:
            from netdp.engine.async_gossip import is_scheduled

            check(is_scheduled(trace.gossip), "gossip-schedule", f"the {self.setup.schedule}"
                  " schedule's tracker reads the messages that fired; the trace has none")
        members = draw_coalition(self.setup, run)
        if self.scheduled and members is not None and self.tracking:
            from netdp.tracking import async_gossip

            self.coalitions.append(async_gossip.coalition(self._matrices(), trace.gossip,
                                                          members, noise=self.setup.noise))
            return
        if (trace.gossip.lost is not None or self.scheduled) \
                and (self.tracking or self.keep_pairs):
            n, sources = self.setup.topology.n, self.setup.sources
            observers: np.ndarray = np.arange(n)
            method: Method = "dense"
            if (n > DENSE_NODES or sources is not None) and not self.keep_pairs:
                rng = Streams(self.setup.seed, run).generator("sources")
                observers = np.sort(rng.choice(n, min(sources or SAMPLED, n), replace=False))
                method = "sampled"
            if self.scheduled:
                from netdp.tracking import async_gossip

                self.realised.append(async_gossip.joint(self._matrices(), trace.gossip,
                                                        observers, method,
                                                        noise=self.setup.noise))
                return
            self.realised.append(gossip.realised_joint(self.setup.plan.W, trace.gossip,
                                                       observers, method,
                                                       noise=self.setup.noise))
            return
        if members is not None and self.tracking:
            plan = self.setup.plan
            if self.setup.snapshots is not None:
                from netdp.tracking import time_varying_gossip

                self.coalitions.append(time_varying_gossip.coalition(
                    self.setup.snapshots, self.setup.steps, members))
                return
            self.coalitions.append(gossip.coalition(plan.W, plan.adj, self.setup.steps,
                                                    members, noise=self.setup.noise))

    def _matrices(self) -> Any:
        """The gossip matrix, or every snapshot's on a time-varying graph."""
        snapshots = self.setup.snapshots
        return self.setup.plan.W if snapshots is None else snapshots.matrices

    def _joint(self) -> Any:
        """The exact losses of the run(s): the fault-free one, or every faulty run's
        observers as the rows of one table."""
        if not self.realised:
            return self.joint
        from netdp.tracking.gossip import GossipLosses

        first = self.realised[0]
        return GossipLosses(np.vstack([r.values for r in self.realised]),
                            np.concatenate([r.nodes for r in self.realised]), "observer",
                            "joint", first.method, first.steps, None,
                            (min(r.margin[0] for r in self.realised),
                             max(r.margin[1] for r in self.realised)),
                            sum(r.uncertified for r in self.realised))

    def matrix(self) -> np.ndarray | None:
        joint = self.realised[0] if self.realised else self.joint
        if not self.keep_pairs or joint is None:
            return None
        from netdp.tracking.gossip import coefficient_epsilon

        cfg = self.setup.config
        coef = joint.matrix()  # capped, NaN on the diagonal
        eps = np.full(coef.shape, np.nan)
        off = ~np.isnan(coef)
        eps[off] = coefficient_epsilon(coef[off], self.setup.sigma, cfg.report_delta,
                                       first_accountant(cfg))
        return eps

    def _ldp(self, delta: float | None = None) -> tuple[float, str]:
        """Every node's LDP ε (one Gaussian release) at ``delta`` (default: the report's
        one δ) and how it is computed."""
        from netdp.tracking.sgd import epsilon

        cfg, sigma = self.setup.config, self.setup.sigma
        delta = cfg.report_delta if delta is None else delta
        if registry.entry(first_accountant(cfg)).gaussian_shift == "curve":
            from netdp.accounting.gdp import gaussian_epsilon

            return (float(gaussian_epsilon(1.0 / sigma, delta)),
                    "one Gaussian release per node: exact (1/sigma)-Gaussian DP")
        return (float(epsilon(1.0 / (2.0 * sigma**2), delta)),
                "one Gaussian release per node: RDP alpha / (2 sigma^2), converted")

    def node_ldp(self) -> np.ndarray | None:
        return np.full(self.setup.topology.n, self._ldp()[0])

    def coalition_losses(self) -> np.ndarray | None:
        if not self.coalitions:
            return None
        cfg, first = self.setup.config, self.coalitions[0]
        eps = first.epsilon(self.setup.sigma, cfg.report_delta, first_accountant(cfg))[0]
        return np.where(first.pair_mask()[0], eps, np.nan)

    def report(self) -> GossipPrivacy:
        from netdp.tracking import gossip

        setup, cfg = self.setup, self.setup.config
        sigma, delta, n = setup.sigma, cfg.report_delta, setup.topology.n
        eps_ldp, how = self._ldp()
        ldp = LdpSummary(how, eps_ldp, eps_ldp, eps_ldp)
        details = {"gossip_matrix": setup.matrix, "accelerated": setup.plan.accelerated,
                   "steps": setup.steps, "spectral_gap": setup.plan.gap}
        if self.scheduled:
            details["schedule"] = setup.schedule
        if setup.noise is not None:
            details["correlated_noise"] = setup.noise.describe()
        if self.coalitions:
            return self._coalition_report(eps_ldp, ldp, details)
        joint = self._joint()
        if joint is None:
            return GossipPrivacy(eps_ldp, delta, sigma, ldp, {}, (), (), "none",
                                 note="pairwise tracking skipped (no accountant)",
                                 details=details)
        mask = joint.pair_mask()
        distances = GM.hop_distances(setup.plan.adj, joint.nodes)
        summaries, rows = [], []
        pairs = n * (n - 1) * max(len(self.realised), 1)
        for accountant in cfg.accountants or DEFAULT:
            eps_all = joint.epsilon(sigma, delta, accountant)
            summaries.append(PairSummary.of(accountant, delta, eps_all[mask], QUANTILES, pairs))
            rows.append(distance_rows(joint, distances, eps_all))
        renyi = None
        if setup.rdp_order is not None:
            div = joint.rdp(setup.rdp_order, sigma)
            renyi = {"order": setup.rdp_order, "mean": float(div[mask].mean()),
                     "min": float(div[mask].min()), "max": float(div[mask].max()),
                     "by_distance": gossip.by_distance(joint, distances, div)}
        method = (f"exact Renyi divergence of each observer's view (joint, {joint.method}"
                  + (f", {joint.nodes.size} observers; mean +- {joint.stderr():.2g} "
                     "(standard error of the coefficient)" if joint.method == "sampled"
                     else "") + ")")
        if setup.noise is not None:
            theory, theory_rows, note = secldp_theory(setup, joint, distances,
                                                      summaries[0].accountant)
            if self.scheduled or self.realised:
                how = setup.schedule if self.scheduled else "faults"
                note = (f"{how}: the messages each observer received in each of the "
                        f"{len(self.realised)} run(s), pooled; " + note)
        elif self.sum is not None:
            paper_all = self.sum.epsilon(sigma, delta, summaries[0].accountant)
            theory = {"gossip-message-sum": float(paper_all[self.sum.pair_mask()].mean())}
            from_sources = GM.hop_distances(setup.plan.adj, self.sum.nodes)
            theory_rows = {"gossip-message-sum": distance_rows(self.sum, from_sources,
                                                               paper_all)}
            if renyi is not None:
                renyi["theory_by_distance"] = {"gossip-message-sum": gossip.by_distance(
                    self.sum, from_sources, self.sum.rdp(setup.rdp_order, sigma))}
            note = ("theory gossip-message-sum: the Muffliato per-message sum, capped at "
                    "LDP; not an upper bound (messages share their noise), shown for "
                    "comparison")
        elif self.scheduled:
            theory, theory_rows = {}, {}
            note = (f"{setup.schedule} gossip: the exact loss of the messages each observer "
                    f"received in each of the {len(self.realised)} run(s) (the schedule "
                    "drawn in that run), pooled; no per-message theory")
            if setup.snapshots is not None:
                note += ("; time-varying graph: each round's edges those of the snapshot "
                         "in force that fired; distances: hops on the union")
        elif setup.snapshots is not None:
            theory, theory_rows = {}, {}
            note = ("time-varying graph: each round's messages on the snapshot in force, "
                    "the view's rows the realised products W_t ... W_0; distances: hops on "
                    "the union of the snapshots; no per-message theory")
        else:  # faults: each run's own messages, pooled over the runs
            theory, theory_rows = {}, {}
            note = (f"faults: the exact loss of the messages each observer received in "
                    f"each of the {len(self.realised)} run(s), pooled; a missed message "
                    "is replaced by the last value from that sender")
        if joint.uncertified:
            note += (f"; {joint.uncertified} of {joint.nodes.size} observers' views could "
                     "not be certified in floating point (no gap at the rank cut): their "
                     "pairs within T + 1 hops are at the local level, which is sound (in "
                     "exact arithmetic such a view can reach full rank and expose every "
                     "node it reaches)")
        if joint.full_rank:
            note += (f"; {joint.full_rank} of {joint.nodes.size} observers' views have full "
                     "rank on the nodes within T + 1 hops (proven by their rank modulo a "
                     "prime): those pairs are exactly at the local level, v can rebuild "
                     "every noisy value it reaches")
        return GossipPrivacy(eps_ldp, delta, sigma, ldp, theory, tuple(summaries), tuple(rows),
                             method, renyi, note, details, theory_rows)


    def _coalition_report(self, eps_ldp: float, ldp: LdpSummary,
                          details: dict[str, Any]) -> GossipPrivacy:
        """Every other node's loss towards the run's coalition, pooled over the runs."""

        setup, cfg = self.setup, self.setup.config
        sigma, delta = setup.sigma, cfg.report_delta
        masks = [c.pair_mask()[0] for c in self.coalitions]
        hops = [GM.hop_distances(setup.plan.adj, c.members).min(axis=0)
                for c in self.coalitions]
        far = np.concatenate([h[m] for h, m in zip(hops, masks, strict=True)])
        summaries, rows = [], []
        for accountant in cfg.accountants or DEFAULT:
            eps = np.concatenate([c.epsilon(sigma, delta, accountant)[0][m]
                                  for c, m in zip(self.coalitions, masks, strict=True)])
            summaries.append(PairSummary.of(accountant, delta, eps, QUANTILES))
            rows.append(by_distance(eps, far))
        renyi = None
        if setup.rdp_order is not None:
            div = np.concatenate([c.rdp(setup.rdp_order, sigma)[0][m]
                                  for c, m in zip(self.coalitions, masks, strict=True)])
            renyi = {"order": setup.rdp_order, "mean": float(div.mean()),
                     "min": float(div.min()), "max": float(div.max()),
                     "by_distance": [r.to_dict() for r in by_distance(div, far)]}
        sizes = "/".join(str(k) for k in sorted({c.members.size for c in self.coalitions}))
        method = ("exact Renyi divergence of the coalition's pooled view (every member's "
                  f"own value and every message a member receives; {sizes} members, "
                  f"{len(self.coalitions)} run(s)); distance: hops to the nearest member")
        note = "no theory for a coalition (the per-message sum is per observer)"
        unsure = sum(c.uncertified for c in self.coalitions)
        full = sum(c.full_rank for c in self.coalitions)
        if unsure:
            note += (f"; {unsure} of {len(self.coalitions)} pooled views could not be "
                     "certified in floating point: nodes within T + 1 hops of a member are "
                     "at the local level (sound)")
        if full:
            note += (f"; {full} of {len(self.coalitions)} pooled views have full rank on the "
                     "nodes within T + 1 hops (proven modulo a prime): exactly the local level")
        return GossipPrivacy(eps_ldp, delta, sigma, ldp, {}, tuple(summaries), tuple(rows),
                             method, renyi, note, {**details,
                                                   "coalitions": [c.members.tolist()
                                                                  for c in self.coalitions]})


def coefficients(setup: GossipSetup, steps: int, dense: bool) -> tuple[Any, Any]:
    """The exact joint coefficients (:func:`netdp.tracking.gossip.joint`) and the paper's
    per-message sums (:func:`netdp.tracking.gossip_message_sum.message_sum`) of one gossip phase of
    ``steps`` steps, for the observers (sources) a setup's size allows: every one up to
    :data:`DENSE_NODES` nodes or with ``dense``, one on a vertex-transitive graph, else
    ``sources`` (default :data:`SAMPLED`) drawn from the ``sources`` stream."""
    from netdp.tracking import gossip

    plan, n, sources = setup.plan, setup.topology.n, setup.sources
    transitive = plan.transitive and not dense and setup.snapshots is None
    samples = None
    if not transitive and not dense and n > DENSE_NODES:
        samples = min(sources or SAMPLED, n)
    elif sources is not None and not dense and not transitive:
        samples = min(sources, n)
    rng = Streams(setup.seed, 0).generator("sources")
    if setup.snapshots is not None:  # a time-varying graph: no per-message theory
        from netdp.tracking import time_varying_gossip

        return time_varying_gossip.joint(setup.snapshots, steps, samples=samples,
                                         rng=rng), None
    noise = getattr(setup, "noise", None)
    joint = gossip.joint(plan.W, plan.adj, steps, samples=samples, rng=rng,
                         transitive=transitive, noise=noise)
    if noise is not None:  # the per-message sum assumes independent noise: no theory there
        return joint, None
    rng = Streams(setup.seed, 0).generator("sources")
    per_message = MS.message_sum(plan.W, plan.adj, steps,
                                     accelerated=plan.accelerated, gamma=plan.gamma,
                                     samples=samples, rng=rng, transitive=transitive)
    return joint, per_message


def secldp_theory(setup: GossipSumSetup, joint: Any, distances: np.ndarray,
                  accountant: str) -> tuple[dict[str, float], dict[str, Any], str]:
    """DECOR's SecLDP accountant beside the exact loss of correlated noise: an
    eavesdropper who sees every noisy value and knows no secret,
    ``ρ(α) = α Δ² (Σ⁻¹)_uu / 2`` (``c = σ² (Σ⁻¹)_uu``), per node u, by hop distance
    to the pairs' observers; the theory, its rows and the report's note."""
    from netdp.tracking.gossip import GossipLosses

    noise, n = setup.noise, setup.topology.n
    note = ("correlated noise: the exact loss of each observer's view given what it knows "
            "(its own draws, the secrets of its edges, its own term of a user's covariance)"
            "; LDP baseline: the independent noise alone (what sets the mean's error)")
    if n > CLOSED_FORM_NODES:
        return {}, {}, note + f"; no decor-secldp line beyond {CLOSED_FORM_NODES} nodes"
    import scipy.linalg as sla

    inverse = sla.cho_solve(sla.cho_factor(noise.covariance_matrix(n)), np.eye(n))
    c = noise.sigma**2 * np.diag(inverse)
    rows = GossipLosses(np.tile(c, (joint.nodes.size, 1)), joint.nodes, "observer",
                        "secldp", joint.method, joint.steps)
    eps = rows.epsilon(setup.sigma, setup.config.report_delta, accountant)
    mask = rows.pair_mask()
    theory = {"decor-secldp": float(eps[mask].mean()), "decor-secldp-max": float(eps.max())}
    note += ("; theory decor-secldp: DECOR's SecLDP accountant (Allouah et al., ICML 2024), "
             "an eavesdropper who sees every noisy value and knows no secret, mean and max "
             "over nodes; not a bound on a node's view (a node knows its edges' secrets)")
    return theory, {"decor-secldp": distance_rows(rows, distances, eps)}, note


def distance_rows(losses: Any, distances: np.ndarray,
                  values: np.ndarray) -> tuple[DistanceRow, ...]:
    """:func:`netdp.tracking.gossip.by_distance` of ``values`` as report rows."""
    from netdp.tracking import gossip

    return tuple(DistanceRow(**r) for r in gossip.by_distance(losses, distances, values))
