"""Gossip averaging (Muffliato, Cyffers, Even, Bellet, Massoulié, NeurIPS 2022): the mean
of the nodes' values, by ``--task sum --protocol gossip``.

Every node adds ``N(0, σ²Δ²)`` to its value once, then all nodes run ``T`` synchronous
steps ``x ← W x`` (or Chebyshev-accelerated steps) with a symmetric, doubly stochastic
gossip matrix ``W``; every node ends near the mean. A node ``v`` knows its own noisy value
and sees the state of each of its neighbours at every step: a linear Gaussian view of the
noisy values. Its exact Rényi loss about ``u`` is ``α Δ²/(2σ²) ‖Π_v e_u‖²`` (``Π_v`` the
projection onto the view's row space; :func:`netdp.tracking.gossip.joint`), which is what
the tracker reports. The paper's per-message sum ``Σ_t Σ_w (A_t)_{wu}² / ‖(A_t)_{w,:}‖²``
(with ``A_t`` the polynomial actually applied) is reported beside it as theory; it is not
an upper bound (the messages share their noise: ``tests/privacy/test_gossip.py`` shows
pairs where it is below the exact loss).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from netdp.core.errors import check
from netdp.core.params import Section, param
from netdp.core.setup import Setup, Streams, View
from netdp.core.simulation_config import SimulationConfig
from netdp.engine import averaging
from netdp.engine.trace import Trace
from netdp.graphs import gossip_matrix as GM
from netdp.report.types import (
    DistanceRow,
    LdpSummary,
    PairSummary,
    PrivacyReport,
    Report,
    Utility,
    distance_lines,
    fmt,
    row,
)
from netdp.tasks.base import Task
from netdp.tasks.preparation import range_worlds
from netdp.tasks.sum import DATA, real_values
from netdp.tracking import gossip_message_sum as MS
from netdp.tracking.base import MATRIX_LIMIT, Tracker, Tracking, draw_coalition

GROUP = "gossip (--protocol gossip)"
DENSE_NODES = 200  # every observer's exact loss up to here, sampled beyond
SAMPLED = 32  # observers sampled by default beyond DENSE_NODES
DATA_GROUP = "summation and histograms"
QUANTILES = (0.5, 0.9, 0.99)


@dataclass(frozen=True)
class GossipSumConfig(Section):
    """Parameters of ``--task sum --protocol gossip``."""

    task = "sum"
    protocol = "gossip"

    sigma: float | None = param(None, "std of the noise every node adds once, in units of the "
                                "sensitivity (the range's width)", kind=float, low=0.0,
                                low_open=True, metavar="S", group=GROUP,
                                default_text="calibrated to --epsilon, --delta (analytic "
                                "Gaussian)")
    gossip_matrix: str = param("metropolis", "the gossip matrix W: metropolis "
                               "(1/(1 + max(d_u, d_v)) on edges), lazy (1/(2 d_max) on "
                               "edges) or a file (.npy, or 'u v w' lines)",
                               metavar="metropolis|lazy|FILE", group=GROUP)
    accelerated: bool = param(False, "Chebyshev acceleration (the accounting uses the "
                              "polynomial actually applied)", group=GROUP)
    rdp_order: float | None = param(None, "also report the Renyi divergences at this order "
                                    "(unconverted, capped at the LDP level), as the papers "
                                    "plot them", kind=float, low=1.0, low_open=True,
                                    high=1e6, metavar="A", group=GROUP)
    sources: int | None = param(None, "sampled sources for the pairwise accounting of large "
                                "graphs", kind=int, low=1, metavar="K", group=GROUP,
                                default_text="every source up to a few thousand nodes")
    data: str = param("uniform", "synthetic values: uniform on the range, constant "
                      "(midpoint) or normal (clipped)", choices=DATA, group=DATA_GROUP)
    data_file: str | None = param(None, "take the values from a CSV file with a header row "
                                  "(one row per node)", kind=str, metavar="CSV",
                                  group=DATA_GROUP)
    column: str | None = param(None, "the CSV column, by name or 0-based index", kind=str,
                               metavar="NAME|INDEX", group=DATA_GROUP,
                               default_text="the first")
    low: float = param(0.0, "range of the values; its width is the sensitivity",
                       pair="range", metavar="LOW", group=DATA_GROUP, default_text="0 1")
    high: float = param(1.0, "range of the values; its width is the sensitivity",
                        pair="range", metavar="HIGH", group=DATA_GROUP, default_text="0 1")

    def validate(self, config: Any) -> None:
        check(self.low < self.high and math.isfinite(self.high - self.low), "range",
              f"needs finite LOW < HIGH (got {self.low:g} {self.high:g})")
        check(self.column is None or self.data_file is not None, "column",
              "picks a column of --data-file; give the file")
        check_gossip(config)
        from netdp.engine.faults import from_config

        if from_config(config) is not None:
            check(not self.accelerated, "accelerated", "with faults gossip runs plain steps "
                  "(a lost message breaks the Chebyshev recursion); leave --accelerated out")
            check(config.coalition is None, "coalition", "coalitions of a gossip run with "
                  "faults are not tracked yet")


def check_gossip(config: Any) -> None:
    """Refuse the walk's parameters that gossip does not use (both gossip tasks)."""
    check(config.topology != "ring", "topology", "gossip needs undirected edges; the ring "
          "is directed (try --topology cycle)")
    check(config.tokens == 1, "tokens", "gossip moves no token (leave --tokens out)")
    check(config.walk == "auto", "walk", "gossip has no walk rule (leave --walk out)")
    check(config.service_time == 0, "service-time", "gossip nodes keep no token")


@dataclass(frozen=True)
class GossipRun:
    """One run: every node's final state, and the true mean."""

    final: np.ndarray
    truth: float

    @property
    def errors(self) -> np.ndarray:
        """``|x_T[v] - mean|`` per node."""
        return np.abs(self.final - self.truth)


@dataclass(frozen=True, eq=False)
class GossipUtility(Utility):
    """Every node's estimate of the mean, beside its closed-form error."""

    estimate: float
    truth: float
    abs_error: float
    max_error: float
    theoretical_rmse: float | None
    ldp_std: float
    steps: int

    def to_dict(self) -> dict[str, Any]:
        return {"quantity": "mean, at every node", "estimate": self.estimate,
                "truth": self.truth, "abs_error": self.abs_error, "max_error": self.max_error,
                "theoretical_rmse": self.theoretical_rmse, "ldp_std": self.ldp_std,
                "steps": self.steps}

    def lines(self, report: Report) -> list[str]:
        widths = (10, 12, 12, 12, 12, 14)
        return ["", row(("", "mean est.", "truth", "mean |err|", "max |err|", "theory rmse"),
                        widths),
                row(("nodes", *map(fmt, (self.estimate, self.truth, self.abs_error,
                                         self.max_error, self.theoretical_rmse))), widths),
                f"  LDP baseline (every node's noisy value, averaged): std {fmt(self.ldp_std)}"]


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
        lines = ["", f"  privacy: {who}; each node adds noise once "
                     f"(sigma = {self.sigma:.4g}, eps0 = {self.epsilon0:.4g}-LDP)",
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


def _section(setup: Setup) -> GossipSumConfig:
    section = setup.config.section
    assert isinstance(section, GossipSumConfig)
    return section


class GossipTracker(Tracker):
    """The exact loss of each observer's view of the gossip that ran (deterministic for
    synchronous rounds: it depends on W, T and σ, not on the noise drawn).

    All observers up to :data:`DENSE_NODES` nodes, one where the graph is
    vertex-transitive, else ``--sources`` (default :data:`SAMPLED`) sampled observers from
    the ``sources`` stream, with the standard error of the mean.
    """

    def __init__(self, setup: Setup, keep_pairs: bool) -> None:
        self.setup, self.keep_pairs = setup, keep_pairs
        n = setup.topology.n
        if keep_pairs:
            check(n <= MATRIX_LIMIT, "pairs-out",
                  f"the full matrix is offered up to n = {MATRIX_LIMIT} (n = {n})")
            check(setup.config.coalition is None, "pairs-out",
                  "a coalition observes as one: no matrix")
        from netdp.engine.faults import from_config

        self.tracking = bool(setup.config.accountants)
        self.joint: Any = None
        self.sum: Any = None
        self.coalitions: list[Any] = []  # one GossipLosses per run, with --coalition
        self.realised: list[Any] = []  # one GossipLosses per run, with faults
        self.faulty = from_config(setup.config) is not None
        if (self.tracking or keep_pairs) and setup.config.coalition is None \
                and not self.faulty:
            self.joint, self.sum = coefficients(setup, setup.steps, dense=keep_pairs)

    def add(self, run: int, trace: Trace, outcome: Any) -> None:
        from netdp.tracking import gossip
        from netdp.tracking.gossip import Method

        check(trace.gossip is not None, "protocol", "the gossip tracker reads gossip rounds")
        assert trace.gossip is not None
        if trace.gossip.lost is not None and (self.tracking or self.keep_pairs):
            n, sources = self.setup.topology.n, self.setup.config.get("sources")
            observers: np.ndarray = np.arange(n)
            method: Method = "dense"
            if (n > DENSE_NODES or sources is not None) and not self.keep_pairs:
                rng = Streams(self.setup.seed, run).generator("sources")
                observers = np.sort(rng.choice(n, min(sources or SAMPLED, n), replace=False))
                method = "sampled"
            self.realised.append(gossip.realised_joint(self.setup.memo["W"], trace.gossip,
                                                       observers, method))
            return
        members = draw_coalition(self.setup, run)
        if members is not None and self.tracking:
            memo = self.setup.memo
            self.coalitions.append(gossip.coalition(memo["W"], memo["adj"], self.setup.steps,
                                                    members))

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
        eps[off] = coefficient_epsilon(coef[off], self.setup.memo["sigma"], cfg.delta,
                                       (cfg.accountants or ("rdp",))[0])
        return eps

    def _ldp(self) -> tuple[float, str]:
        """Every node's LDP ε (one Gaussian release) and how it is computed."""
        from netdp.tracking.sgd import epsilon

        cfg, sigma = self.setup.config, self.setup.memo["sigma"]
        if (cfg.accountants or ("rdp",))[0] == "pld":
            from netdp.accounting.gdp import gaussian_epsilon

            return (float(gaussian_epsilon(1.0 / sigma, cfg.delta)),
                    "one Gaussian release per node: exact (1/sigma)-Gaussian DP")
        return (float(epsilon(1.0 / (2.0 * sigma**2), cfg.delta)),
                "one Gaussian release per node: RDP alpha / (2 sigma^2), converted")

    def node_ldp(self) -> np.ndarray | None:
        return np.full(self.setup.topology.n, self._ldp()[0])

    def coalition_losses(self) -> np.ndarray | None:
        if not self.coalitions:
            return None
        cfg, first = self.setup.config, self.coalitions[0]
        eps = first.epsilon(self.setup.memo["sigma"], cfg.delta,
                            (cfg.accountants or ("rdp",))[0])[0]
        return np.where(first.pair_mask()[0], eps, np.nan)

    def report(self) -> GossipPrivacy:
        from netdp.tracking import gossip
        from netdp.tracking.loss_table import QUANTILES as Q

        setup, cfg, sec = self.setup, self.setup.config, _section(self.setup)
        sigma, delta, n = setup.memo["sigma"], cfg.delta, setup.topology.n
        eps_ldp, how = self._ldp()
        ldp = LdpSummary(how, eps_ldp, eps_ldp, eps_ldp)
        details = {"gossip_matrix": sec.gossip_matrix, "accelerated": sec.accelerated,
                   "steps": setup.steps, "spectral_gap": setup.memo["gap"]}
        if self.coalitions:
            return self._coalition_report(eps_ldp, ldp, details)
        joint = self._joint()
        if joint is None:
            return GossipPrivacy(eps_ldp, delta, sigma, ldp, {}, (), (), "none",
                                 note="pairwise tracking skipped (no accountant)",
                                 details=details)
        mask = joint.pair_mask()
        distances = GM.hop_distances(setup.memo["adj"], joint.nodes)
        summaries, rows = [], []
        pairs = n * (n - 1) * max(len(self.realised), 1)
        for accountant in cfg.accountants or ("rdp",):
            eps_all = joint.epsilon(sigma, delta, accountant)
            summaries.append(PairSummary.of(accountant, delta, eps_all[mask], Q, pairs))
            rows.append(distance_rows(joint, distances, eps_all))
        renyi = None
        if sec.rdp_order is not None:
            div = joint.rdp(sec.rdp_order, sigma)
            renyi = {"order": sec.rdp_order, "mean": float(div[mask].mean()),
                     "min": float(div[mask].min()), "max": float(div[mask].max()),
                     "by_distance": gossip.by_distance(joint, distances, div)}
        method = (f"exact Renyi divergence of each observer's view (joint, {joint.method}"
                  + (f", {joint.nodes.size} observers; mean +- {joint.stderr():.2g} "
                     "(standard error of the coefficient)" if joint.method == "sampled"
                     else "") + ")")
        if self.sum is not None:
            paper_all = self.sum.epsilon(sigma, delta, summaries[0].accountant)
            theory = {"gossip-message-sum": float(paper_all[self.sum.pair_mask()].mean())}
            from_sources = GM.hop_distances(setup.memo["adj"], self.sum.nodes)
            theory_rows = {"gossip-message-sum": distance_rows(self.sum, from_sources,
                                                               paper_all)}
            if renyi is not None:
                renyi["theory_by_distance"] = {"gossip-message-sum": gossip.by_distance(
                    self.sum, from_sources, self.sum.rdp(sec.rdp_order, sigma))}
            note = ("theory gossip-message-sum: the Muffliato per-message sum, capped at "
                    "LDP; not an upper bound (messages share their noise), shown for "
                    "comparison")
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
        from netdp.report.types import by_distance
        from netdp.tracking.loss_table import QUANTILES as Q

        setup, cfg, sec = self.setup, self.setup.config, _section(self.setup)
        sigma, delta = setup.memo["sigma"], cfg.delta
        masks = [c.pair_mask()[0] for c in self.coalitions]
        hops = [GM.hop_distances(setup.memo["adj"], c.members).min(axis=0)
                for c in self.coalitions]
        far = np.concatenate([h[m] for h, m in zip(hops, masks, strict=True)])
        summaries, rows = [], []
        for accountant in cfg.accountants or ("rdp",):
            eps = np.concatenate([c.epsilon(sigma, delta, accountant)[0][m]
                                  for c, m in zip(self.coalitions, masks, strict=True)])
            summaries.append(PairSummary.of(accountant, delta, eps, Q))
            rows.append(by_distance(eps, far))
        renyi = None
        if sec.rdp_order is not None:
            div = np.concatenate([c.rdp(sec.rdp_order, sigma)[0][m]
                                  for c, m in zip(self.coalitions, masks, strict=True)])
            renyi = {"order": sec.rdp_order, "mean": float(div.mean()),
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


def coefficients(setup: Setup, steps: int, dense: bool) -> tuple[Any, Any]:
    """The exact joint coefficients (:func:`netdp.tracking.gossip.joint`) and the paper's
    per-message sums (:func:`netdp.tracking.gossip_message_sum.message_sum`) of one gossip phase of
    ``steps`` steps, for the observers (sources) a setup's size allows: every one up to
    :data:`DENSE_NODES` nodes or with ``dense``, one on a vertex-transitive graph, else
    ``sources`` (default :data:`SAMPLED`) drawn from the ``sources`` stream. Reads the
    section's ``sources`` and ``accelerated`` and the memo's ``W``, ``adj``, ``gamma``,
    ``transitive`` (the gossip tasks share them)."""
    from netdp.tracking import gossip

    memo, cfg = setup.memo, setup.config
    n, sources = setup.topology.n, cfg.get("sources")
    transitive = memo["transitive"] and not dense
    samples = None
    if not transitive and not dense and n > DENSE_NODES:
        samples = min(sources or SAMPLED, n)
    elif sources is not None and not dense and not transitive:
        samples = min(sources, n)
    rng = Streams(setup.seed, 0).generator("sources")
    joint = gossip.joint(memo["W"], memo["adj"], steps, samples=samples, rng=rng,
                         transitive=transitive)
    rng = Streams(setup.seed, 0).generator("sources")
    per_message = MS.message_sum(memo["W"], memo["adj"], steps,
                                     accelerated=cfg.get("accelerated"), gamma=memo["gamma"],
                                     samples=samples, rng=rng, transitive=transitive)
    return joint, per_message


def gossip_memo(config: SimulationConfig, topo: Any) -> dict[str, Any]:
    """What the gossip tasks keep of their graph: the gossip matrix ``W`` (the section's
    ``gossip_matrix``), the adjacency ``adj``, the spectral ``gap``, the Chebyshev
    ``gamma`` (``None`` without ``accelerated``) and whether the graph is ``transitive``."""

    name = config.get("gossip_matrix")
    builders = {"metropolis": GM.metropolis, "lazy": GM.lazy}
    adj = GM.adjacency(topo)
    W = builders[name](topo) if name in builders else GM.from_file(name, topo)
    gap = GM.spectral_gap(W)
    gamma = GM.chebyshev_gamma(gap) if config.get("accelerated") else None
    return {"W": W, "adj": adj, "gap": gap, "gamma": gamma,
            "transitive": GM.vertex_transitive(topo)}


def distance_rows(losses: Any, distances: np.ndarray,
                  values: np.ndarray) -> tuple[DistanceRow, ...]:
    """:func:`netdp.tracking.gossip.by_distance` of ``values`` as report rows."""
    from netdp.tracking import gossip

    return tuple(DistanceRow(**r) for r in gossip.by_distance(losses, distances, values))


class GossipSumTask(Task):
    """Averaging by gossip: noise once per node, then ``T`` averaging steps."""

    name = "sum"
    protocol = "gossip"
    summary = "the mean of real values by gossip averaging (Muffliato, NeurIPS 2022)"
    section = GossipSumConfig
    tracking = tuple(
        Tracking(kind, "exact Renyi divergence of each observer's whole view (every message "
                 "it receives and its own value), capped at LDP; converted by rdp or exactly "
                 "(pld: one Gaussian shift); by distance" if kind == "graph"
                 else "as on any graph", None, ("rdp", "pld")) for kind in ("graph", "complete"))

    def prepare(self, config: SimulationConfig) -> Setup:
        from netdp.engine import choose
        from netdp.mechanisms.noise import analytic_sigma

        sec = config.section
        assert isinstance(sec, GossipSumConfig)
        values, topo = real_values(config)
        memo = gossip_memo(config, topo)
        sigma = sec.sigma if sec.sigma is not None else analytic_sigma(config.epsilon,
                                                                       config.delta)
        steps = config.steps or GM.default_steps(memo["gap"], sigma, topo.n)
        engine = choose(config.engine, 1, 0.0)
        accountants = ("rdp",) if config.accountants is None else config.accountants
        resolved = config.replace(nodes=topo.n, steps=steps, engine=engine,
                                  accountants=tuple(accountants), sigma=sigma)
        return Setup(resolved, topo, steps, values, None, {**memo, "sigma": sigma})

    def trace(self, setup: Setup, streams: Streams) -> Trace:
        from netdp.engine import gossip_rounds as engine
        from netdp.engine.clock import parse_latency
        from netdp.engine.faults import fault_run

        cfg = setup.config
        return engine.run(cfg.engine, setup.topology, setup.steps, parse_latency(cfg.latency),
                          streams.generator("latency"), fault_run(setup, streams, 1))

    def run(self, setup: Setup, trace: Trace, streams: Streams) -> GossipRun:
        """Every node adds its noise once, then ``T`` averaging steps."""
        states = self.states(setup, trace, streams)
        return GossipRun(states[-1], float(np.mean(setup.data)))

    def states(self, setup: Setup, trace: Trace, streams: Streams) -> np.ndarray:
        """``(T + 1, n)``: the nodes' states ``x_0..x_T`` of the run (with the trace's
        lost messages and down nodes, when it has faults)."""

        sec, memo = _section(setup), setup.memo
        width = sec.high - sec.low
        noise = streams.generator("noise").standard_normal(setup.topology.n)
        x0 = setup.data + memo["sigma"] * width * noise
        if trace.gossip is not None and trace.gossip.lost is not None:
            return averaging.faulty_gossip(memo["W"], x0, trace.gossip)
        return averaging.gossip(memo["W"], x0, setup.steps, accelerated=sec.accelerated,
                             gamma=memo["gamma"])

    def output_noise(self, setup: Setup, trace: Trace | None, outcome: Any) -> float | None:
        """The root mean square over nodes of the noise std in the final states:
        ``σ · width · ‖(M_T)_{i,:}‖``, with ``M_T`` the rounds' realised map (``W^T``
        without faults)."""

        sec, memo = _section(setup), setup.memo
        rounds = None if trace is None else trace.gossip
        if rounds is not None and rounds.lost is not None:
            final = list(averaging.faulty_iterate(memo["W"], np.eye(setup.topology.n),
                                               rounds))[-1]
            norms = np.einsum("ij,ij->i", final, final)
        else:
            norms = MS.row_norms(memo["W"], setup.steps, accelerated=sec.accelerated,
                                     gamma=memo["gamma"])[-1]
        return float(memo["sigma"] * (sec.high - sec.low) * math.sqrt(norms.mean()))

    def record(self, outcome: GossipRun) -> dict[str, float]:
        return {"estimate": float(outcome.final.mean()),
                "abs_error": float(outcome.errors.mean()),
                "max_error": float(outcome.errors.max())}

    def utility(self, setup: Setup, outcomes: Sequence[GossipRun]) -> GossipUtility:

        sec, memo = _section(setup), setup.memo
        width, n = sec.high - sec.low, setup.topology.n
        norms = MS.row_norms(memo["W"], setup.steps, accelerated=sec.accelerated,
                                 gamma=memo["gamma"])[-1]  # ‖(A_T)_{v,:}‖² per node
        bias = averaging.gossip(memo["W"], setup.data, setup.steps, accelerated=sec.accelerated,
                             gamma=memo["gamma"])[-1] - setup.data.mean()
        rmse = math.sqrt(float(np.mean((memo["sigma"] * width) ** 2 * norms + bias**2)))
        return GossipUtility(
            estimate=float(np.mean([o.final.mean() for o in outcomes])),
            truth=outcomes[0].truth,
            abs_error=float(np.mean([o.errors.mean() for o in outcomes])),
            max_error=float(np.mean([o.errors.max() for o in outcomes])),
            theoretical_rmse=rmse, ldp_std=memo["sigma"] * width / math.sqrt(n),
            steps=setup.steps)

    def tracker(self, setup: Setup, keep_pairs: bool = False) -> Tracker:
        return GossipTracker(setup, keep_pairs)

    def process_line(self, setup: Setup) -> str:
        sec, memo = _section(setup), setup.memo
        how = "Chebyshev-accelerated steps" if sec.accelerated else "steps of x <- W x"
        return (f"gossip  {setup.steps} synchronous {how}, {sec.gossip_matrix} weights, "
                f"spectral gap {memo['gap']:.4g}")

    def describe_mechanism(self, setup: Setup) -> dict[str, Any]:
        sec = _section(setup)
        return {"name": "gaussian", "sigma": setup.memo["sigma"] * (sec.high - sec.low),
                "sigma_over_sensitivity": setup.memo["sigma"], "once_per_node": True}

    def audit_worlds(self, setup: Setup, node: int) -> tuple[Any, Any]:
        """``node``'s value at the low and at the high end of the range."""
        return range_worlds(setup, node)

    def gaussian_view(self, setup: Setup) -> bool:
        """The messages are a linear map of the Gaussian noise: yes."""
        return True

    def view(self, setup: Setup, trace: Trace, streams: Streams, observer: int) -> View:
        """The states of the observer's neighbours at every step (the messages it gets;
        with faults, those that arrived)."""
        assert trace.gossip is not None
        states = self.states(setup, trace, streams)
        incoming = np.flatnonzero(trace.gossip.dst == observer)
        senders = trace.gossip.src[incoming]
        steps = np.repeat(np.arange(setup.steps + 1), senders.size)
        got = np.ones(steps.size, dtype=bool) if trace.gossip.lost is None else \
            ~trace.gossip.lost[:, incoming].reshape(-1)
        return View(observer, np.tile(senders, setup.steps + 1)[got], steps[got],
                    states[:, senders].reshape(-1)[got], states[-1:])

    def footprint(self, config: SimulationConfig, nodes: int,
                  steps: int) -> dict[str, tuple[float, str]]:
        dense = 8.0 * nodes * nodes * 4 if nodes <= 4096 else 0.0
        return {"the states": (8.0 * nodes * 64, "nodes"),
                "the dense accounting": (dense, "nodes")}
