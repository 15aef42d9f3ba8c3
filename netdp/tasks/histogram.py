"""Histograms: the frequency of each category (AISTATS 2022 Algorithms 2 and 4).

The token carries the running aggregate of a frequency oracle's reports; each holder
adds one fresh report of its category per visit. On the ring (Alg. 2) node 0 opens the
token with dummy reports and adds as many again before publishing. Pairwise tracking:
each report is hidden among the reports an observer sees summed (amplification by
shuffling), subsampled where its presence is uncertain, composed per pair with KOV.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from netdp import mechanisms
from netdp.adversary.network import (
    Adversary,
    AttackRun,
    MassModel,
    Null,
    detect,
    plan,
    received_mass,
)
from netdp.adversary.poisoning import CRAFTED, best_hash, choose_targets, fake_reports, report_boost
from netdp.core import seeding
from netdp.core.errors import check
from netdp.core.params import ORACLE_MAX_EPSILON, param
from netdp.core.sections import (
    DATA_GROUP,
    UserLevelSection,
    check_data_file,
    column_param,
    data_file_param,
)
from netdp.core.setup import Once, Setup, Streams, View, once
from netdp.core.simulation_config import SHUFFLE_BOUNDS, SimulationConfig
from netdp.data.values import categories, check_categories
from netdp.engine.trace import Trace
from netdp.graphs.walk_kind import kind_of
from netdp.mechanisms import oracle_memory_bytes, registry
from netdp.mechanisms._oracle import project_simplex
from netdp.report.types import Report, Utility, fmt
from netdp.tasks.base import (
    Attackable,
    Auditable,
    PairwiseDetails,
    Sized,
    Task,
    Timed,
    walk_footprint,
    walk_work,
)
from netdp.tasks.histogram_walk import (
    CHUNK,
    HistOutcome,
    aggregate_reports,
    ldp_mse,
    perturbed_reports,
    ring_histogram,
    truth,
    walk_histogram,
)
from netdp.tasks.preparation import build_topology, resolve, values_from_file
from netdp.tasks.user_level import (
    UserLevel,
    UserLevelReport,
    UserLevelSetup,
    sqrt_ratio,
    total,
    users_of,
)
from netdp.tracking.base import ldp_setting
from netdp.tracking.graph_observers import report_tracking, shuffle_tracking, sources_param

MECHANISMS = registry.names("frequency-oracle")
DATA = ("uniform", "constant", "normal", "zipf")
TARGET_CHOICES = ("random", "least")
GROUP = DATA_GROUP
MAX_DOMAIN = 10**8
MAX_EPSILON = ORACLE_MAX_EPSILON  # e^700 ~ 1e304: the oracles' probabilities stay finite


@dataclass(frozen=True)
class HistogramConfig(UserLevelSection):
    """Parameters of ``--task histogram`` (with the user-level mode's ``records_per_node``
    and ``bound``: :mod:`netdp.tasks.user_level`)."""

    task = "histogram"

    mechanism: str = param("grr", f"a frequency oracle: {' '.join(MECHANISMS)}",
                           choices=MECHANISMS, metavar="NAME", group=GROUP)
    gamma: float | None = param(None, "grr only: gamma-randomized response (keep the value "
                                "w.p. 1 - G, else uniform); sets epsilon to "
                                "ln(1 + L (1 - G) / G)", kind=float, low=0.0, high=1.0,
                                low_open=True, high_open=True, metavar="G", group=GROUP)
    domain: int = param(10, "number of categories", low=2, high=MAX_DOMAIN, short=("-L",),
                        metavar="L", group=GROUP)
    shuffle: str = param("fmt-numeric", "amplification-by-shuffling bound per window: "
                         "fmt-numeric, fmt-closed or blanket (grr)", choices=SHUFFLE_BOUNDS,
                         group=GROUP)
    dummies: int | None = param(None, "ring: dummy reports node 0 adds at the start and "
                                "again at the end", kind=int, low=0, metavar="D", group=GROUP,
                                default_text="n - 1")
    project: bool = param(False, "project the estimate onto the simplex (post-processing; "
                          "biased)", group=GROUP)
    data: str = param("uniform", "synthetic categories: uniform, constant (category 0), "
                      "normal (around the middle) or zipf", choices=DATA, group=GROUP)
    data_file: str | None = data_file_param("the categories")
    column: str | None = column_param()
    targets: int | None = param(None, "with --attack: the number of target categories the "
                                "malicious holders promote", kind=int, low=1, metavar="R",
                                group=GROUP, default_text="min(10, L // 4), at least 1")
    target_choice: str = param("random", "with --attack: random targets, or the least "
                               "frequent categories", choices=TARGET_CHOICES, group=GROUP)
    sources: int | None = sources_param()

    def validate(self, config: Any) -> None:
        super().validate(config)
        check(self.bound == 1 or self.gamma is None, "gamma",
              "sets one report's level; with --bound T each of a node's T reports is at "
              "epsilon / T (leave --gamma out)")
        check(self.bound == 1 or self.shuffle != "blanket", "shuffle",
              "the privacy blanket bound holds for one grr report per node; with --bound T "
              "a node sends T (use fmt-numeric or fmt-closed)")
        check(self.targets is None or config.attack is not None, "targets",
              "picks the targets of --attack; give the attack")
        check(self.target_choice == "random" or config.attack is not None, "target-choice",
              "picks the targets of --attack; give the attack")
        check(self.targets is None or self.targets <= self.domain, "targets",
              f"must lie in 1..{self.domain} (the domain) (got {self.targets})")
        check(self.shuffle != "blanket" or self.mechanism == "grr", "shuffle",
              "the privacy blanket bound holds for grr (k-ary randomized response) only")
        check(self.gamma is None or self.mechanism == "grr", "gamma",
              "gamma parameterises grr (gamma-randomized response); use --mechanism grr")
        check(self.dummies is None or kind_of(config.topology).public_schedule, "dummies",
              f"applies to the ring only (the topology is {config.topology})")
        check_data_file(self)
        if _crafts(config.attack) or (config.attack or "").startswith("rpa"):

            check(self.mechanism in CRAFTED, "attack", f"{config.attack} forges "
                  f"{self.mechanism} reports, which are built for {', '.join(CRAFTED)} (ria "
                  "applies to every oracle)")
        eps0 = self.local_epsilon(config.epsilon)
        check(eps0 <= MAX_EPSILON, "epsilon" if self.gamma is None else "gamma",
              f"one report's level must be <= {MAX_EPSILON} (e^epsilon must stay finite; "
              f"got {eps0:g})")

    def local_epsilon(self, epsilon: float) -> float:
        """ε0 of a node's contribution: from ``gamma`` for γ-RR, else ``epsilon``."""
        if self.gamma is not None:
            return math.log1p(self.domain * (1 - self.gamma) / self.gamma)
        return epsilon

    def report_epsilon(self, epsilon: float) -> float:
        """ε of one report: the contribution's ε0 split over its ``T`` reports (basic
        composition)."""
        return self.local_epsilon(epsilon) / self.bound


@dataclass(frozen=True, eq=False)
class HistogramUtility(Utility):
    """Per-category estimates (mean over runs) and their errors."""

    estimate: np.ndarray
    truth: np.ndarray
    l1: float
    linf: float
    mse: float
    theoretical_mse: float
    ldp_mse: float
    reports: int
    dummies: int
    projected: bool
    user_level: UserLevelReport | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"quantity": "frequencies", "estimate": self.estimate.tolist(),
               "truth": self.truth.tolist(), "l1": self.l1, "linf": self.linf,
               "mse": self.mse, "theoretical_mse": self.theoretical_mse,
               "ldp_mse": self.ldp_mse, "reports": self.reports, "dummies": self.dummies,
               "projected": self.projected}
        return out if self.user_level is None else {**out,
                                                    "user_level": self.user_level.to_dict()}

    def lines(self, report: Report) -> list[str]:
        mech = report.mechanism or {}
        shown = min(self.estimate.size, 12)
        dummies = f" + 2 x {self.dummies:,} dummies" if self.dummies else ""
        lines = [f"  oracle  {mech['name']} eps={mech['epsilon']:.4g}, domain "
                 f"{self.truth.size}; {self.reports:,} reports{dummies}", "",
                 f"  {'category':>10} {'estimate':>11} {'truth':>11}"]
        lines += [f"  {j:>10} {fmt(self.estimate[j]):>11} {fmt(self.truth[j]):>11}"
                  for j in range(shown)]
        if shown < self.estimate.size:
            lines.append(f"  {'...':>10}  ({self.estimate.size - shown} more in --json)")
        lines += ["", f"  error   L1 {fmt(self.l1)}  Linf {fmt(self.linf)}  MSE {fmt(self.mse)} "
                      f"(theory {fmt(self.theoretical_mse)}); LDP baseline MSE "
                      f"{fmt(self.ldp_mse)} (one report per node)"]
        return lines + ([] if self.user_level is None else self.user_level.lines())


def _crafts(attack: str | None) -> bool:
    """Whether ``--attack`` sends MGA reports (``mga``, or ``inflate``'s fake ones)."""
    return (attack or "").split(":")[0] in ("mga", "inflate")


def _section(setup: Setup) -> HistogramConfig:
    return setup.config.section_as(HistogramConfig)


def _dummy_reports(setup: Setup) -> int:
    """Node 0's dummy reports at each end of the ring: ``dummies`` bundles of ``T``
    reports (a dummy stands for a node's contribution, as the ring tracker counts it)."""
    sec = _section(setup)
    return int(sec.dummies or 0) * sec.bound


def _per_record(setup: Setup, outcome: Any) -> Any:
    """A run's outcome on each category's share of all ``N`` records: the estimate of the
    kept reports' shares times ``T/K`` (the bounded total over ``N``), beside the truth
    (the record-level outcome, unchanged, when ``K = 1``)."""

    users = users_of(setup)
    if users.per_node == 1:
        return outcome
    return dataclasses.replace(outcome, estimate=outcome.estimate * users.kept_share,
                               truth=users.frequencies(_section(setup).domain))


def _ring_theory(setup: Setup) -> dict[str, float]:
    """The ring curve at the tracker's entry δ: at the report's one δ under the sound
    convention (:func:`~netdp.tracking.shuffle.at_target`'s ``target / (2 K)``)."""
    from netdp.tracking.shuffle import ring_entry_delta, ring_histogram_theory

    cfg, sec = setup.config, _section(setup)
    target = ldp_setting(setup)[0]
    delta = cfg.delta if target is None else ring_entry_delta(target, cfg.rounds)
    return {"histogram-ring": ring_histogram_theory(
        setup.topology.n, cfg.rounds, sec.local_epsilon(cfg.epsilon), delta, sec.shuffle,
        sec.domain)}


def _shuffle(setup: Setup) -> tuple[float, str, int]:
    """The level of one report, the shuffle bound and the domain it reads."""
    sec = _section(setup)
    return sec.local_epsilon(setup.config.epsilon), sec.shuffle, sec.domain


@dataclass(frozen=True, eq=False, kw_only=True)
class HistogramSetup(UserLevelSetup):
    """A histogram run prepared: the records each node keeps, and what an attack fixes once
    per simulation (its targets and crafted hash; the honest reports' mass model)."""

    attack_targets: Once[tuple[np.ndarray, Any]] = once()
    mass: Once[Any] = once()


class HistogramTask(Task[HistogramSetup], Attackable, Auditable, PairwiseDetails, Sized,
                    Timed):
    """Histograms by frequency-oracle reports aggregated in a walking token."""

    name = "histogram"
    summary = "frequencies of categories by frequency oracles (AISTATS Alg. 2 and 4)"
    section = HistogramConfig
    utility_columns = (("mse",), (("theory", "theoretical_mse", "theoretical MSE"),
                                  ("ldp", "ldp_mse", "LDP-baseline MSE")))
    attacks = ("rpa", "ria", "mga", "drop", "replay", "inflate")
    tracking = (
        shuffle_tracking("ring", "K windows of shuffled reports per pair (first and last "
                         "padded by the dummies), composed with KOV", _shuffle,
                         theory=_ring_theory),
        shuffle_tracking("complete", "each window an observer sees is one shuffle of its "
                         "reports, subsampled where the node's presence is uncertain; KOV, "
                         "capped at LDP of the largest count the view allows; at the target "
                         "δ, the windows' PLDs where smaller (each node's count of reports "
                         "revealed, K of them among the others' clones) and affordable",
                         _shuffle),
        report_tracking(_shuffle),
    )

    def prepare(self, config: SimulationConfig) -> HistogramSetup:

        sec = config.section_as(HistogramConfig)
        assert config.seed is not None
        values, nodes = values_from_file(config)
        topo = build_topology(config, nodes)
        per = sec.records_per_node
        if values is None:
            values = categories(sec.data, topo.n * per, sec.domain,
                                seeding.generator(config.seed, "data"))
        values = check_categories(values, sec.domain, sec.data_file or f"--data {sec.data}")
        check(values.size == topo.n * per, "nodes",
              f"the data holds {values.size} values for {topo.n} nodes")
        users = UserLevel.draw(values.reshape(topo.n, per), sec.bound,
                               seeding.generator(config.seed, "bounding"))
        values = users.categories()
        dummies = sec.dummies
        if topo.walk_kind.public_schedule and dummies is None:
            dummies = topo.n - 1
        resolved, steps = resolve(config, topo, self.steps_per_node, self.default_accountants,
                                  dummies=dummies)
        setup = Setup(resolved, topo, steps, values)
        return HistogramSetup(resolved, topo, steps, values, self.oracle(setup, 0), users=users)

    def oracle(self, setup: Setup, run: int) -> Any:
        """The run's frequency oracle; cms, hcms and rappor draw fresh public hash
        functions per run, so their estimates are unbiased over runs too."""

        cfg, sec = setup.config, _section(setup)
        if run == 0 and setup.mechanism is not None:
            return setup.mechanism
        hash_seed = 0
        if sec.mechanism in mechanisms.HASHED:
            hash_seed = int(Streams(setup.seed, run).generator("hashes").integers(2**31))
        return mechanisms.frequency_oracle(sec.mechanism, sec.report_epsilon(cfg.epsilon),
                                           sec.domain, hash_seed)

    def epsilon0(self, setup: HistogramSetup) -> float:
        return _section(setup).local_epsilon(setup.config.epsilon)

    def privacy_details(self, setup: HistogramSetup) -> dict[str, Any]:
        return {"shuffle_bound": _section(setup).shuffle}

    def run(self, setup: HistogramSetup, trace: Trace, streams: Streams) -> Any:
        """Each holder adds a fresh report of its category to the token's aggregate."""

        oracle = self.oracle(setup, streams.run)
        rng = streams.generator("noise")
        if setup.topology.walk_kind.public_schedule:
            outcome = ring_histogram(trace, setup.data, oracle, rng, _dummy_reports(setup))
        else:
            outcome = walk_histogram(trace, setup.data, oracle, rng)
        return _per_record(setup, outcome)

    def attacked(self, setup: HistogramSetup, trace: Trace, streams: Streams,
                 adversary: Adversary) -> tuple[Any, AttackRun]:
        """Malicious holders forge their reports (rpa, ria, mga: :mod:`~netdp.adversary.
        poisoning`) or tamper with the aggregate (drop, replay, inflate:K with K MGA
        reports); the honest reports are the run's own draws."""

        honest = self.run(setup, trace, streams)
        oracle, attack = self.oracle(setup, streams.run), adversary.attack
        targets, crafted = self.targets(setup, oracle)
        acts = plan(trace.holders, adversary.malicious(setup.topology, setup.seed,
                                                       streams.run), attack)
        forge, rng = adversary.forge_stream(setup.seed, streams.run), streams.generator("noise")
        ring, d, holders = setup.topology.walk_kind.public_schedule, oracle.domain, trace.holders
        dummies = (_section(setup).dummies or 0) if ring else 0
        if ring:  # node 0's head dummies: the same draws as the honest run's
            aggregate_reports(oracle, rng.integers(0, d, dummies), rng)
        model = None if ring else self.mass_model(setup, oracle)
        keep = acts.alive if attack.tampers else acts.alive & ~acts.attacked
        flat, keep, masses = holders.reshape(-1), keep.reshape(-1), np.zeros(holders.size)
        total: Any = 0
        for lo in range(0, flat.size, CHUNK):
            reports = oracle.perturb(setup.data[flat[lo:lo + CHUNK]], rng)
            if keep[lo:lo + CHUNK].any():
                total = total + oracle.aggregate(reports[keep[lo:lo + CHUNK]])
            if model is not None:
                masses[lo:lo + len(reports)] = model.masses(oracle, reports)
        name = "mga" if attack.tampers else attack.name
        count = int(attack.amount or 0) if attack.tampers else int(acts.attacked.sum())
        fakes, support = fake_reports(oracle, name, targets, count, forge, crafted)
        fake_mass = 0.0
        if attack.tampers and count and acts.fakes.any():
            total = total + oracle.aggregate(fakes) * int(acts.fakes.sum())
        elif not attack.tampers and count:
            total = total + oracle.aggregate(fakes)
        if model is not None and count:
            forged = model.masses(oracle, fakes)
            if attack.tampers:
                fake_mass = float(forged.sum())
            else:
                masses[acts.attacked.reshape(-1)] = forged
        reports = holders.size
        outcome = HistOutcome(oracle.estimate_counts(total, reports) / reports,
                              truth(setup.data, d), reports, dummies)
        per_target = (outcome.estimate - honest.estimate)[targets]
        detections: tuple[Any, ...] = ()
        if model is not None:
            grid = masses.reshape(holders.shape)
            detections = detect(holders, acts, received_mass(acts, grid, fake_mass), grid,
                                Null(1.0, 1.0, model.var))
        note = None if model is not None else (
            "honest holders' checks: not modelled on the ring" if ring else
            f"honest holders' checks: {oracle.name} reports have no vectorised support")
        return outcome, AttackRun(
            float(per_target.sum()), self.expected_gain(setup, oracle, trace, acts, targets,
                                                        support, fakes, attack),
            tuple(float(g) for g in per_target), acts.share, int((~acts.alive).sum()),
            int(acts.fakes.sum()) * count if attack.tampers else 0, detections, honest,
            tuple(int(m) for m in acts.malicious), note)

    def expected_gain(self, setup: HistogramSetup, oracle: Any, trace: Trace, acts: Any,
                      targets: np.ndarray, support: np.ndarray, fakes: np.ndarray,
                      attack: Any) -> float | None:
        """``E[FG]`` given the walk and the attack's plan, for an oracle whose estimate is
        affine in the aggregate, ``ĉ = L(A) - n c``: a report adds its own term ``L``, of
        mean ``[x = t] + c_t`` (honest) or ``e_t + c_t`` (forged or fake: :func:`~netdp.
        adversary.poisoning.report_boost`), while ``n`` stays the run's count. So a lost
        report takes ``[x ∈ T] + Σ_t c_t`` from the targets, a forged one adds
        ``Σ_t e_t - [x ∈ T]``, a fake one ``Σ_t (e_t + c_t)``; over N reports. (A pure
        oracle: ``e_t = (s_t - q*)/(p* - q*)``, ``c_t = q*/(p* - q*)``.) ``None`` where
        the boost is unknown."""

        boost = report_boost(oracle, support, targets) if len(fakes) else np.zeros(1)
        if boost is None:
            return None
        shape = oracle.aggregate(oracle.perturb(np.zeros(1, dtype=np.int64),
                                                np.random.default_rng(0)))
        zero = np.zeros_like(shape, dtype=float)  # L(0) - c = -c: the offset per report
        offset = float(-np.sum(np.asarray(oracle.estimate_counts(zero, 1))[targets]))
        in_t = np.isin(setup.data[trace.holders], targets)
        dead = float(np.sum((in_t + offset)[~acts.alive]))
        if attack.tampers:
            gained = float(acts.fakes.sum()) * len(fakes) * (float(boost.sum()) + offset)
        else:
            gained = float(np.sum((boost.sum() - in_t)[acts.attacked]))
        return (gained - dead) / trace.holders.size

    def targets(self, setup: HistogramSetup, oracle: Any) -> tuple[np.ndarray, Any]:
        """The attack's targets (``targets`` stream, key 0) and an MGA's crafted hash on
        local hashing (key 1), once per simulation."""

        def choose() -> tuple[np.ndarray, Any]:
            sec = _section(setup)
            r = sec.targets or max(1, min(10, sec.domain // 4))
            targets = choose_targets(setup.data, sec.domain, r, sec.target_choice,
                                     seeding.generator(setup.seed, "targets", 0))
            crafted = None
            local_hashing = oracle.name in registry.names(family="local_hashing")
            if local_hashing and _crafts(setup.config.attack):
                crafted = best_hash(targets, oracle.g,
                                    seeding.generator(setup.seed, "targets", 1))
            return targets, crafted

        return setup.attack_targets.get(choose)

    def attack_targets(self, setup: HistogramSetup) -> tuple[int, ...]:
        """The targets of the attack that ran (none before it ran)."""
        return tuple(setup.attack_targets.value[0]) if setup.attack_targets.done else ()

    def mass_model(self, setup: HistogramSetup, oracle: Any) -> Any:
        """The honest holders' null model of a report's mass (``calibration`` stream), once
        per simulation (``None`` for cms, hcms and rappor: no vectorised support)."""

        return setup.mass.get(lambda: MassModel.of(oracle, seeding.generator(setup.seed,
                                                                          "calibration")))

    def record(self, outcome: Any) -> dict[str, float]:
        return {"l1": outcome.l1, "linf": outcome.linf, "mse": outcome.mse}

    def utility(self, setup: HistogramSetup, outcomes: Sequence[Any]) -> HistogramUtility:

        sec, first = _section(setup), outcomes[0]
        estimate = np.mean([o.estimate for o in outcomes], axis=0)
        if sec.project:
            estimate = project_simplex(estimate)
        share = setup.users.kept_share ** 2  # 1.0 at K = 1: the shares' scale
        theory = float(np.mean(setup.mechanism.variance(first.truth, first.reports))) * share
        return HistogramUtility(
            estimate=estimate, truth=first.truth,
            l1=float(np.mean([o.l1 for o in outcomes])),
            linf=float(np.mean([o.linf for o in outcomes])),
            mse=float(np.mean([o.mse for o in outcomes])),
            theoretical_mse=theory,
            ldp_mse=ldp_mse(setup.mechanism, first.truth, setup.topology.n * sec.bound) * share,
            reports=first.reports, dummies=first.dummies, projected=sec.project,
            user_level=self.user_level(setup, first, theory) if sec.user_level else None)

    def user_level(self, setup: HistogramSetup, outcome: Any, noise: float) -> UserLevelReport:
        """The bound's bias and variances against the naive approach's (no bound: every
        record reported, each at ``ε/K``), closed forms averaged over the categories
        (:mod:`netdp.tasks.user_level`); the noise's is the oracle's (a walk's sampling
        is not modelled, as in ``theoretical_mse``: ``sampling_var`` is ``None`` and the
        MSEs leave it out)."""

        users = users_of(setup)
        cfg, sec, d = setup.config, _section(setup), _section(setup).domain
        k, t, f = users.per_node, users.bound, outcome.truth
        naive = mechanisms.frequency_oracle(sec.mechanism, sec.local_epsilon(cfg.epsilon) / k,
                                            d, 0)
        naive_noise = float(np.mean(naive.variance(f, outcome.reports // t * k)))
        bias = float(np.mean(users.histogram_bias(d) ** 2))
        kept = np.bincount(users.kept.reshape(-1), minlength=d) / users.size
        sampling = 0.0 if setup.topology.walk_kind.public_schedule else None
        draw = float(np.mean(users.histogram_draw_variance(d)))
        return UserLevelReport(
            "frequencies", k, t, users.size, sec.local_epsilon(cfg.epsilon),
            sec.report_epsilon(cfg.epsilon), float(users.size - users.kept.size),
            float(users.size - users.kept.size), bias, float(np.mean((kept - f) ** 2)),
            noise, sampling, draw, total(bias, noise, sampling or 0.0, draw), naive_noise,
            total(naive_noise, sampling or 0.0), sqrt_ratio(naive_noise, noise))

    def audit_worlds(self, setup: HistogramSetup, node: int) -> tuple[Any, Any]:
        """``node``'s category 0 or 1."""
        worlds = []
        for category in (0, 1):
            data = np.array(setup.data, copy=True)
            data[node] = category
            worlds.append(data)
        return worlds[0], worlds[1]

    def view(self, setup: HistogramSetup, trace: Trace, streams: Streams, observer: int) -> View:
        """The aggregates the observer receives, replaying the run's reports."""

        oracle = self.oracle(setup, streams.run)
        rng = streams.generator("noise")
        d, steps = oracle.domain, trace.steps

        def aggregate(chunks: list[np.ndarray]) -> Any:
            total: Any = 0.0
            for chunk in chunks:
                total = total + oracle.aggregate(chunk)
            return total

        ring = setup.topology.walk_kind.public_schedule
        dummies = _dummy_reports(setup) if ring else 0
        per = _section(setup).bound  # reports per visit
        head = aggregate(perturbed_reports(oracle, rng.integers(0, d, dummies), rng)) \
            if ring else 0.0
        chunks = perturbed_reports(
            oracle, setup.data[trace.holders.reshape(-1)].reshape(-1), rng)
        reports = np.concatenate(chunks) if chunks else np.empty(0)
        tail = aggregate(perturbed_reports(oracle, rng.integers(0, d, dummies), rng)) \
            if ring else 0.0
        token, step = np.nonzero(trace.holders == observer)
        received, published = [], []
        for k in range(trace.tokens):
            edges = np.concatenate([[0], step[token == k], [steps]])
            total = head
            for a, b in zip(edges[:-1], edges[1:], strict=True):
                if b > a:
                    total = total + oracle.aggregate(
                        reports[(k * steps + a) * per:(k * steps + b) * per])
                if b < steps:
                    received.append(total)
            published.append(total + tail)
        return View(observer, token, step, np.array(received), np.array(published))

    def work(self, config: SimulationConfig, nodes: int,
             steps: int) -> dict[str, tuple[float, str]]:
        sec = config.section_as(HistogramConfig)
        reports = float(config.tokens) * steps * sec.bound
        per_pair, per_item = registry.entry(sec.mechanism).seconds
        return {**walk_work(config, nodes, steps),
                "the frequency oracle": ((per_pair * reports + per_item) * sec.domain,
                                         "domain")}

    def footprint(self, config: SimulationConfig, nodes: int,
                  steps: int) -> dict[str, tuple[float, str]]:
        sec = config.section_as(HistogramConfig)

        reports = min(config.tokens * steps, CHUNK)
        oracle = oracle_memory_bytes(sec.mechanism, sec.local_epsilon(config.epsilon),
                                     sec.domain, max(reports, 1))
        out = {**walk_footprint(config, nodes, steps),
               "the categories": (8.0 * nodes * sec.records_per_node, "nodes"),
               "the frequency oracle": (float(oracle), "domain"),
               "the estimates over runs": (8.0 * sec.domain * (config.runs + 6), "domain")}
        if kind_of(config.topology).public_schedule:
            dummies = sec.dummies if sec.dummies is not None else nodes
            out["the dummy reports"] = (16.0 * dummies, "dummies")
        return out
