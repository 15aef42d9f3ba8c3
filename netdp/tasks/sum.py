"""Summation: the mean of the nodes' real values (AISTATS 2022 Algorithms 1 and 3).

Each holder adds its value and a draw of local noise to the token it forwards. On the
ring (Alg. 1) a noise draw comes once every ``n - 1`` hops; on other graphs (Alg. 3)
every holder adds noise. Duchi, Piecewise and Hybrid reports replace the value at every
hop instead. Pairwise tracking: the ring's closed form, the reference walk tracker of
the complete graph (kov, rdp, pld), and on any other graph its generalisation by the walk's
taboo chain (kov, rdp; :mod:`netdp.tracking.taboo`) beside the ICML 2024 closed form.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from netdp import mechanisms
from netdp.accounting.registry import check_noise
from netdp.accounting.registry import entry as accountant_entry
from netdp.adversary.network import Adversary, AttackRun, Null, detect, plan, received_mass
from netdp.bounds.line_cost import seconds as published_seconds
from netdp.core import seeding
from netdp.core.errors import check
from netdp.core.params import MAX_VALUE, param
from netdp.core.sections import (
    DATA_GROUP,
    UserLevelSection,
    check_data_file,
    check_value_range,
    column_param,
    data_file_param,
)
from netdp.core.setup import Setup, Streams, View
from netdp.core.simulation_config import SimulationConfig
from netdp.data.values import check_range, synthetic
from netdp.engine.trace import Trace
from netdp.graphs.walk_kind import kind_of
from netdp.mechanisms import registry
from netdp.mechanisms.noise import Gaussian, Laplace
from netdp.report.types import Report, Utility, fmt, row
from netdp.tasks.base import (
    Attackable,
    Auditable,
    NoisyOutput,
    PairwiseDetails,
    Sized,
    Task,
    TimeVarying,
    default_accountants_for,
    default_cost,
    walk_footprint,
)
from netdp.tasks.preparation import build_topology, range_worlds, resolve, values_from_file
from netdp.tasks.summation import (
    CHUNK,
    SumOutcome,
    randomized_sum,
    ring_noise_mask,
    ring_sum,
    walk_sum,
    walk_sum_std,
)
from netdp.tasks.user_level import (
    UserLevel,
    UserLevelReport,
    UserLevelSetup,
    sqrt_ratio,
    total,
    users_of,
)
from netdp.tracking import graph_walk
from netdp.tracking.base import Tracking, ldp_setting
from netdp.tracking.graph_observers import (
    DENSE_NODES,
    graph_by_distance,
    graph_note,
    sources_param,
    transition,
    walk_observers,
    walk_stays,
)

ADDITIVE = registry.names("additive", first="gaussian")
MECHANISMS = registry.names(*mechanisms.NUMERIC_KINDS, first="gaussian")
DATA = ("uniform", "constant", "normal")
GROUP = DATA_GROUP


@dataclass(frozen=True)
class SumConfig(UserLevelSection):
    """Parameters of ``--task sum`` (with the user-level mode's ``records_per_node`` and
    ``bound``: :mod:`netdp.tasks.user_level`)."""

    task = "sum"

    mechanism: str = param("gaussian", "gaussian or laplace noise, or duchi piecewise hybrid "
                           "(a report at every hop)", choices=MECHANISMS, metavar="NAME",
                           group=GROUP)
    calibration: str = param("analytic", "Gaussian sigma: analytic (exact) or classic "
                             "(sqrt(2 ln(1.25/delta))/eps, eps <= 1 only)",
                             choices=("analytic", "classic"), group=GROUP)
    noise_every_hop: bool = param(False, "ring: noise at every contribution (the local-DP "
                                  "baseline)", group=GROUP)
    data: str = param("uniform", "synthetic values: uniform on the range, constant "
                      "(midpoint) or normal (clipped)", choices=DATA, group=GROUP)
    data_file: str | None = data_file_param("the values")
    column: str | None = column_param()
    low: float = param(0.0, "range of the values; its width is the sensitivity",
                       pair="range", low=-MAX_VALUE, high=MAX_VALUE, metavar="LOW",
                       group=GROUP, default_text="0 1")
    high: float = param(1.0, "range of the values; its width is the sensitivity",
                        pair="range", low=-MAX_VALUE, high=MAX_VALUE, metavar="HIGH",
                        group=GROUP, default_text="0 1")
    sources: int | None = sources_param()

    def validate(self, config: Any) -> None:
        super().validate(config)
        check_value_range(self.low, self.high)
        check_data_file(self)
        check(not self.noise_every_hop or kind_of(config.topology).public_schedule,
              "noise-every-hop", f"applies to the ring only (every holder adds noise on "
              f"{config.topology})")
        for name in config.accountants or ():  # an unknown name: refused by make_config
            check_noise(name, self.mechanism == "gaussian", self.mechanism)
        check(config.attack is None or self.mechanism in ADDITIVE, "attack",
              f"malicious sums are modelled with additive noise (gaussian, laplace); "
              f"{self.mechanism} reports replace the value")
        if self.mechanism == "gaussian" and self.calibration == "classic":
            check(config.epsilon <= 1, "epsilon", f"must be <= 1 with --calibration classic "
                  f"(got {config.epsilon:g}); use --calibration analytic")

    def contribution_range(self) -> tuple[float, float]:
        """What one node adds: the sum of its ``T`` kept records, in ``T [low, high]``."""
        return self.bound * self.low, self.bound * self.high


@dataclass(frozen=True, eq=False)
class SumUtility(Utility):
    """The mean's estimate over the runs, beside its closed-form standard deviation."""

    estimate: float
    truth: float
    abs_error: float
    theoretical_std: float | None
    empirical_std: float | None
    ldp_std: float | None
    user_level: UserLevelReport | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"quantity": "mean", "estimate": self.estimate, "truth": self.truth,
               "abs_error": self.abs_error, "theoretical_std": self.theoretical_std,
               "empirical_std": self.empirical_std, "ldp_std": self.ldp_std}
        return out if self.user_level is None else {**out,
                                                    "user_level": self.user_level.to_dict()}

    def lines(self, report: Report) -> list[str]:
        mech, section = report.mechanism or {}, report.config.section_as(SumConfig)
        noise = f"{mech['name']} eps={mech['epsilon']:g}"
        if mech["name"] == "gaussian":
            noise += (f" delta={mech['delta']:g} -> sigma={mech['sigma']:.4g} "
                      f"({mech['calibration']} calibration)")
        elif "scale" in mech:
            noise += f" -> scale={mech['scale']:.4g}"
        else:
            noise += " (report replaces the value, at every hop)"
        widths = (10, 12, 12, 12, 12, 12)
        lines = [f"  noise   {noise}; range [{section.low:g}, {section.high:g}]", "",
                 row(("", "estimate", "truth", "abs error", "theory std", "run std"), widths),
                 row(("mean", *map(fmt, (self.estimate, self.truth, self.abs_error,
                                         self.theoretical_std, self.empirical_std))), widths)]
        if self.ldp_std is not None:
            lines.append(f"  LDP baseline (noise at every hop): std {fmt(self.ldp_std)}")
        return lines + ([] if self.user_level is None else self.user_level.lines())


def _ring_losses(setup: Setup, trace: Trace, accountant: str, coalition: Sequence[int] | None,
                 keep_pairs: bool) -> Any:
    from netdp.tracking.loss_table import ring_losses

    cfg, n = setup.config, setup.topology.n
    section = cfg.section_as(SumConfig)
    mask = ring_noise_mask(n, setup.steps, section.noise_every_hop)
    target = cfg.report_delta if cfg.convention == "sound" else None
    if accountant_entry(accountant).exact:
        from netdp.tracking.loss_table import ring_exact_losses

        z = setup.mechanism.sigma / setup.mechanism.sensitivity
        return ring_exact_losses(n, cfg.rounds, mask, z, cfg.delta, coalition, target)
    sigma = getattr(setup.mechanism, "sigma", None)  # eps0-DP noise: None
    z_or_none = None if sigma is None else sigma / setup.mechanism.sensitivity
    return ring_losses(n, cfg.rounds, mask, cfg.epsilon, cfg.delta, coalition, target,
                       z_or_none)


def _walk_losses(setup: Setup, trace: Trace, accountant: str, coalition: Sequence[int] | None,
                 keep_pairs: bool) -> Any:
    from netdp.tracking.loss_table import walk_losses
    from netdp.tracking.view_cap import cap_to_view

    mech = setup.mechanism
    z = getattr(mech, "sigma", math.nan) / mech.sensitivity
    cfg = setup.config
    sound = cfg.convention == "sound"
    losses = walk_losses(trace, cfg.epsilon, cfg.delta, z, accountant, coalition,
                         keep_pairs=keep_pairs, convention=cfg.convention,
                         self_moves=setup.topology.self_moves,
                         laplace=isinstance(mech, Laplace),
                         target=cfg.report_delta if sound else None)
    if coalition is None and not sound:
        return losses
    # A coalition observes the cycles between any member's visits: composed over all of
    # them, a node's subsampled entries can pass the LDP loss of the largest count of its
    # contributions the view allows, which bounds the view too (spec Correction 6).
    return cap_to_view(losses, trace, cfg.epsilon, cfg.delta, coalition, walk_stays(setup),
                       *ldp_setting(setup), in_place=True)


def _graph_walk_losses(setup: Setup, trace: Trace, accountant: str,
                       coalition: Sequence[int] | None, keep_pairs: bool) -> Any:
    """The taboo-chain tracker (:mod:`netdp.tracking.taboo`) for the observers the setup's
    size allows, each pair capped at the LDP loss of the largest count of its node's
    contributions that the observer's view allows (:mod:`netdp.tracking.view_cap`; nodes
    kept: ``observers x n`` values, for the summary by distance)."""
    from netdp.tracking.taboo import ACCOUNTANTS as TABOO_ACCOUNTANTS
    from netdp.tracking.taboo import graph_walk_losses
    from netdp.tracking.view_cap import cap_to_view
    from netdp.tracking.walk_views import sound_graph_losses

    cfg, mech = setup.config, setup.mechanism
    observers = walk_observers(setup)
    z = getattr(mech, "sigma", math.nan) / mech.sensitivity
    topo = setup.topology
    if topo.time_varying:  # the taboo chain indexed by time (netdp.tracking.time_varying)
        from netdp.tracking.time_varying import time_varying_losses

        check(cfg.convention == "sound" and not isinstance(mech, Laplace), "convention",
              "a time-varying graph is tracked under the sound convention with Gaussian "
              "noise (the paper's convention is defined on a fixed graph)")
        table = time_varying_losses(trace, topo.transitions(cfg.walk, trace.steps),  # type: ignore
                                    cfg.epsilon, cfg.delta, z, accountant, coalition,
                                    observers, target=cfg.report_delta)
    elif cfg.convention == "sound":
        table = sound_graph_losses(trace, transition(setup), cfg.epsilon, cfg.delta, z,
                                   accountant, coalition, observers,
                                   laplace=isinstance(mech, Laplace),
                                   target=cfg.report_delta)
    else:
        check(accountant in TABOO_ACCOUNTANTS, "accountant", f"the reference convention on "
              f"a graph composes with {' or '.join(TABOO_ACCOUNTANTS)} (got {accountant})")
        table = graph_walk_losses(trace, transition(setup), cfg.epsilon, cfg.delta, z,
                                  accountant, coalition, observers)
    return cap_to_view(table, trace, cfg.epsilon, cfg.delta, coalition, walk_stays(setup),
                       *ldp_setting(setup), in_place=True)


def icml_theory(setup: Setup) -> dict[str, float]:
    """With Gaussian noise on any graph: the mean over ordered pairs of the ICML 2024 closed
    form (:mod:`netdp.tracking.graph_walk`). Each token's walk of T steps gives every pair
    the linear RDP ``α c_uv / (2σ²)`` (σ in units of the value range; the same
    linear-Gaussian view as the SGD walk, with sensitivity Δ), tokens compose; all sources
    up to 512 nodes, else 256 sampled from the ``sources`` stream; skipped without an
    accountant (``--no-tracking``), as its cost grows with the graph."""

    if (setup.topology.walk_kind.implicit or not isinstance(setup.mechanism, Gaussian)
            or not setup.config.accountants or setup.topology.time_varying):
        return {}
    from netdp.tracking.sgd import epsilon_upper

    cfg, n = setup.config, setup.topology.n
    sources = None
    if n > 512:
        rng = Streams(setup.seed, 0).generator("sources")
        sources = np.sort(rng.choice(n, size=256, replace=False))
    coef = cfg.tokens * graph_walk.icml_coefficients(transition(setup), setup.steps, sources)
    mask = np.ones(coef.shape, dtype=bool)
    rows = np.arange(coef.shape[0])
    mask[rows, rows if sources is None else sources] = False
    sigma = setup.mechanism.sigma / setup.mechanism.sensitivity
    eps = epsilon_upper(np.maximum(coef[mask], 0.0) / (2.0 * sigma**2),
                        ldp_setting(setup)[0] or cfg.delta)
    return {"graph-walk-icml2024": float(eps.mean())}


def _published_lines(setup: Setup) -> Any:
    """The published bounds by hop distance (:mod:`netdp.bounds.by_distance`)."""
    from netdp.bounds.by_distance import published_by_distance

    return published_by_distance(setup)


def _ring_ldp(setup: Setup, trace: Trace) -> np.ndarray:
    from netdp.bounds.curves import opti

    cfg = setup.config
    k = np.full(setup.topology.n, cfg.rounds, dtype=float)
    target, z = ldp_setting(setup)
    if target is not None:
        from netdp.accounting.target_delta import ldp_epsilon

        return ldp_epsilon(k, cfg.epsilon, target, z)
    return np.asarray(opti(cfg.epsilon, cfg.delta, k))


def _theory(prefix: str) -> Any:
    """The curves named ``prefix...`` at this setting: at the report's one δ under the sound
    convention (:meth:`~netdp.bounds.curves.Curve.at_target`), as their papers spend
    ``--delta`` under the reference convention."""

    def theory(setup: Setup) -> dict[str, float]:
        from netdp.bounds.curves import CURVES

        cfg = setup.config
        args = {"n": setup.topology.n, "K": cfg.rounds, "T": setup.steps,
                "eps0": cfg.epsilon, "delta": cfg.delta}
        target, z = ldp_setting(setup)
        curves = {name: c for name, c in CURVES.items() if name.startswith(prefix)}
        if target is None:
            return {name: float(c(**args)) for name, c in curves.items()}
        return {name: float(c.at_target(target, z, **args)) for name, c in curves.items()}
    return theory


def _section(setup: Setup) -> SumConfig:
    return setup.config.section_as(SumConfig)


class SumTask(Task[UserLevelSetup], Attackable, Auditable, NoisyOutput, PairwiseDetails, Sized,
              TimeVarying):
    """Summation of real values, by noisy contributions to a walking token."""

    name = "sum"
    summary = "the mean of real values (AISTATS Alg. 1 on the ring, Alg. 3 on a walk)"
    section = SumConfig
    utility_columns = (("abs_error",), (("theory", "theoretical_std", "theoretical std"),
                                        ("ldp", "ldp_std", "LDP-baseline std")))
    attacks = ("max", "beyond", "drop", "replay", "inflate")
    tracking = (
        Tracking("ring", "one noise draw every n - 1 hops; each turn is an (eps0, delta) "
                 "release, composed with KOV; coalitions holding both neighbours expose",
                 _ring_losses, ("kov", "exact"), ADDITIVE, _theory("ring"), _ring_ldp),
        Tracking("complete", "per-cycle losses of the walk that ran (each view as it is; "
                 "--convention reference: the Fig. 1b method), composed by KOV, RDP or PLD, "
                 "or exact", _walk_losses, ("kov", "rdp", "pld", "exact"),
                 ADDITIVE, _theory("complete")),
        Tracking("graph", "each view's exact law of a node's visits from the walk's taboo "
                 "chain, composed by KOV or RDP (pld, exact: small graphs; --convention "
                 "reference: the union-bound rates); every observer up to "
                 f"{DENSE_NODES} nodes, sampled beyond",
                 _graph_walk_losses, ("kov", "rdp", "pld", "exact"), ADDITIVE, icml_theory,
                 note=graph_note, by_distance=graph_by_distance,
                 theory_per_pair=False, theory_by_distance=_published_lines,
                 observers=walk_observers, theory_seconds=published_seconds),
    )

    def prepare(self, config: SimulationConfig) -> UserLevelSetup:

        section = config.section_as(SumConfig)
        values, topo = real_values(config, section.records_per_node)
        users = UserLevel.draw(values.reshape(topo.n, -1), section.bound,
                               seeding.generator(config.seed or 0, "bounding"))
        cost = default_cost(config, topo, self.steps_per_node)
        resolved, steps = resolve(config, topo, self.steps_per_node, default_accountants_for(
            self, topo.kind, section.mechanism, config.convention, cost))
        return UserLevelSetup(resolved, topo, steps, users.sums(),
                              self.noise(config, section.bound), users=users)

    def noise(self, config: SimulationConfig, records: int) -> Any:
        """The randomizer of a contribution that adds up ``records`` records: additive
        noise of sensitivity ``records (high - low)`` (the user-level sensitivity), or a
        report (it maps the contribution's range onto ``[-1, 1]`` itself)."""

        section = config.section_as(SumConfig)
        if section.mechanism in ADDITIVE:
            delta = config.delta if section.mechanism == "gaussian" else 0.0
            return mechanisms.additive(section.mechanism, config.epsilon, delta,
                                       records * (section.high - section.low),
                                       section.calibration)
        return mechanisms.numeric(section.mechanism, config.epsilon)

    def run(self, setup: UserLevelSetup, trace: Trace, streams: Streams) -> Any:
        """Each holder adds its value and its noise (or its report) to the token."""

        cfg, topo, mech, values = setup.config, setup.topology, setup.mechanism, setup.data
        section = cfg.section_as(SumConfig)
        rng = streams.generator("noise")
        if section.mechanism not in ADDITIVE:
            outcome = randomized_sum(trace, values, mech, rng, *section.contribution_range(),
                                     topo, cfg.walk)
        elif topo.walk_kind.public_schedule:
            outcome = ring_sum(trace, values, mech, rng, section.noise_every_hop)
        else:
            outcome = walk_sum(trace, values, mech, rng, topo, cfg.walk)
        return per_record(setup, outcome)

    def attacked(self, setup: UserLevelSetup, trace: Trace, streams: Streams,
                 adversary: Adversary) -> tuple[Any, AttackRun]:
        """Malicious holders add the top of the range (``max``) or any value X
        (``beyond:X``, for a protocol that does not check the range) with their noise, or
        tamper with the running sum (drop, replay, inflate:K adds K fake contributions of
        the top of the range); the honest draws are the run's own."""

        honest = self.run(setup, trace, streams)
        section, attack = _section(setup), adversary.attack
        added = contributions(setup, trace, streams.generator("noise"))
        x = setup.data[trace.holders]
        acts = plan(trace.holders, adversary.malicious(setup.topology, setup.seed,
                                                       streams.run), attack)
        forged = 0.0
        if not attack.tampers:
            value = section.high if attack.name == "max" else float(attack.amount or 0.0)
            added = np.where(acts.attacked, added - x + value, added)
            forged = float(np.sum((value - x)[acts.attacked]))
        fake = (attack.amount or 0.0) * section.high if attack.name == "inflate" else 0.0
        tokens = (added * acts.alive).sum(axis=1) + acts.fakes * fake
        outcome = SumOutcome(float(tokens.mean() / trace.steps), honest.truth,
                             honest.theoretical_std, tokens, honest.noise_draws)
        expected = (forged - float(np.sum(x[~acts.alive])) + float(acts.fakes.sum()) * fake) \
            / trace.holders.size
        checked = (isinstance(setup.mechanism, Gaussian)
                   and not setup.topology.walk_kind.public_schedule)
        detections: tuple[Any, ...] = ()
        if checked:
            null = Null(section.low, section.high, setup.mechanism.std ** 2)
            detections = detect(trace.holders, acts, received_mass(acts, added, fake), added,
                                null)
        note = None if checked else ("honest holders' checks: modelled for Gaussian noise on "
                                     "walks (the ring adds noise once every n - 1 hops)")
        return outcome, AttackRun(
            outcome.estimate - honest.estimate, expected, (), acts.share,
            int((~acts.alive).sum()), int(acts.fakes.sum() * (attack.amount or 0))
            if attack.name == "inflate" else 0, detections, honest,
            tuple(int(m) for m in acts.malicious), note)

    def record(self, outcome: Any) -> dict[str, float]:
        return {"estimate": outcome.estimate, "abs_error": outcome.abs_error}

    def output_noise(self, setup: UserLevelSetup, trace: Trace | None,
                     outcome: Any) -> float | None:
        """``sqrt(draws) σ / steps`` per token's estimate, over the ``K`` tokens
        averaged: ``/ sqrt(K)`` (additive noise; a randomizer's reports: not given)."""
        if _section(setup).mechanism not in ADDITIVE:
            return None
        tokens = len(outcome.token_values)
        return (math.sqrt(outcome.noise_draws) * setup.mechanism.std / setup.steps
                / math.sqrt(tokens))

    def utility(self, setup: UserLevelSetup, outcomes: Sequence[Any]) -> SumUtility:
        estimates = [o.estimate for o in outcomes]
        mech, first = setup.mechanism, outcomes[0]
        ring_additive = (setup.topology.walk_kind.public_schedule
                         and _section(setup).mechanism in ADDITIVE)
        per_node = _section(setup).records_per_node
        return SumUtility(
            estimate=float(np.mean(estimates)), truth=first.truth,
            abs_error=float(np.mean([o.abs_error for o in outcomes])),
            theoretical_std=first.theoretical_std,
            empirical_std=float(np.std(estimates, ddof=1)) if len(outcomes) > 1 else None,
            ldp_std=mech.std / math.sqrt(setup.steps) / per_node if ring_additive else None,
            user_level=self.user_level(setup, first) if per_node > 1 else None)

    def user_level(self, setup: UserLevelSetup, outcome: Any) -> UserLevelReport:
        """The bound's bias and variances against the naive approach's (no bound: every
        record, noise of sensitivity ``K (high - low)``), closed forms on the mean per
        record (:mod:`netdp.tasks.user_level`)."""

        users = users_of(setup)
        cfg, k = setup.config, users.per_node
        noise = naive_noise = None
        if cfg.section_as(SumConfig).mechanism in ADDITIVE:
            per_draw = outcome.noise_draws / (setup.steps * k) ** 2 / len(outcome.token_values)
            noise = per_draw * setup.mechanism.std ** 2
            naive_noise = per_draw * self.noise(cfg, k).std ** 2
        sampling = _sampling_var(setup, users.sums(), k)
        naive_sampling = _sampling_var(setup, users.records.sum(axis=1), k)
        bias = users.sum_bias()
        realized = users.kept.sum() / users.size - users.mean()
        return UserLevelReport(
            "mean", k, users.bound, users.size, cfg.epsilon, cfg.epsilon,
            (1 - users.kept_share) * float(users.records.sum()), users.dropped_mass(),
            bias ** 2, float(realized) ** 2, noise, sampling, users.sum_draw_variance(),
            total(bias ** 2, noise, sampling, users.sum_draw_variance()), naive_noise,
            total(naive_noise, naive_sampling), sqrt_ratio(naive_noise, noise))

    def untracked_note(self, setup: Setup, task: Task[Any]) -> str:
        mechanism = _section(setup).mechanism
        if mechanism not in ADDITIVE:
            return (f"{mechanism} reports replace the values at every hop; pairwise tracking "
                    "of their sums is not implemented, only the LDP baseline is reported")
        return super().untracked_note(setup, task)

    def audit_worlds(self, setup: UserLevelSetup, node: int) -> tuple[Any, Any]:
        """``node``'s value at the low and at the high end of the range (its contribution:
        the sum of ``T`` records at either end, in the user-level mode)."""
        return range_worlds(setup, node, _section(setup).bound)

    def gaussian_view(self, setup: UserLevelSetup) -> bool:

        return isinstance(setup.mechanism, Gaussian)

    def view(self, setup: UserLevelSetup, trace: Trace, streams: Streams, observer: int) -> View:
        """The partial sums the observer receives, replaying the run's draws."""
        added = contributions(setup, trace, streams.generator("noise"))
        return view_of_sums(trace, added, observer)

    def footprint(self, config: SimulationConfig, nodes: int,
                  steps: int) -> dict[str, tuple[float, str]]:
        return {**walk_footprint(config, nodes, steps), "the values": (8.0 * nodes, "nodes")}


def real_values(config: SimulationConfig, per_node: int = 1) -> tuple[np.ndarray, Any]:
    """The nodes' real values and the graph: ``--data-file`` (which may fix the number of
    nodes) or synthetic ``--data`` from the run's ``data`` stream, checked against the
    section's range (``low``, ``high``, ``data``, ``data_file``: the sum's parameters,
    shared by gossip averaging); ``per_node`` synthetic records per node, node by node
    (the first ``n`` draws when 1)."""

    sec: Any = config.section
    assert config.seed is not None
    values, nodes = values_from_file(config)
    topo = build_topology(config, nodes)
    if values is None:
        values = synthetic(sec.data, topo.n * per_node, seeding.generator(config.seed, "data"),
                           sec.low, sec.high)
    check(values.size == topo.n * per_node, "nodes",
          f"the data holds {values.size} values for {topo.n} nodes")
    check_range(values, sec.low, sec.high, sec.data_file or f"--data {sec.data}",
                from_file=bool(sec.data_file))
    return values, topo


def per_record(setup: Setup, outcome: Any) -> Any:
    """A run's outcome on the mean per record: the mean of the nodes' contributions over
    ``K``, beside the mean of all records (the record-level outcome, unchanged, when
    ``K = 1``)."""
    users = users_of(setup)
    k = users.per_node
    if k == 1:
        return outcome
    std = outcome.theoretical_std
    return dataclasses.replace(outcome, estimate=outcome.estimate / k, truth=users.mean(),
                               theoretical_std=None if std is None else std / k)


def _sampling_var(setup: Setup, sums: np.ndarray, per_node: int) -> float | None:
    """The walk's sampling variance of the mean per record, for nodes that add ``sums``
    (none on the ring: every node adds its sum once per turn; ``None`` where
    :func:`~netdp.tasks.summation.walk_sum_std` has no closed form)."""

    if setup.topology.walk_kind.public_schedule:
        return 0.0
    std = walk_sum_std(setup.topology, setup.config.walk, sums, setup.steps, 0.0)
    return None if std is None else std ** 2 / per_node ** 2 / setup.config.tokens


def contributions(setup: Setup, trace: Trace, rng: np.random.Generator) -> np.ndarray:
    """``(tokens, steps)``: what each holder adds to its token, with the run's own draws
    (the same chunks from the same stream as :meth:`SumTask.run`)."""

    section, mech, values = _section(setup), setup.mechanism, setup.data
    tokens, steps = trace.holders.shape
    if section.mechanism not in ADDITIVE:
        low, high = section.contribution_range()
        scaled = 2.0 * (values - low) / (high - low) - 1.0
        half = (high - low) / 2
        out = np.empty((tokens, steps))
        for k in range(tokens):
            for lo in range(0, steps, CHUNK):
                part = mech.perturb(scaled[trace.holders[k, lo:lo + CHUNK]], rng)
                out[k, lo:lo + part.size] = (part + 1.0) * half + low
        return out
    out = values[trace.holders].astype(float)
    if setup.topology.walk_kind.public_schedule:
        mask = ring_noise_mask(trace.n, steps, section.noise_every_hop)
        out[0, mask] += _chunked_noise(mech, rng, int(mask.sum()))
        return out
    for k in range(tokens):
        out[k] += _chunked_noise(mech, rng, steps)
    return out


def view_of_sums(trace: Trace, added: np.ndarray, observer: int) -> View:
    """An observer's view of tokens that carry running sums of ``added``."""
    before = np.cumsum(added, axis=1) - added
    token, step = np.nonzero(trace.holders == observer)
    return View(observer, token, step, before[token, step], added.sum(axis=1))


def _chunked_noise(mech: Any, rng: np.random.Generator, draws: int) -> np.ndarray:

    parts = [mech.noise(rng, min(CHUNK, draws - lo)) for lo in range(0, draws, CHUNK)]
    return np.concatenate(parts) if parts else np.empty(0)
