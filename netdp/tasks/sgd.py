"""Decentralized SGD: the token is a model (AISTATS 2022 Algorithm 5).

Each holder takes one step on its own rows with its gradient clipped to ``L`` *before*
Gaussian noise. ``regimes`` (``--compare``) runs local, network and central DP (and a
non-private reference) at the same target (ε, δ) on the same walk and the same noise
draws; σ is calibrated per regime. The tracker reports the per-pair Rényi loss of the
walk that ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from netdp.core import seeding
from netdp.core.errors import check
from netdp.core.files import atomic_files
from netdp.core.params import MAX_SCALE, Section, param
from netdp.core.setup import Once, Setup, Streams, View, once
from netdp.core.simulation_config import SimulationConfig
from netdp.engine.faults import from_config
from netdp.engine.trace import Trace
from netdp.graphs.topologies import hop_distances
from netdp.graphs.walk_kind import kind_of
from netdp.learning import training_data as datasets
from netdp.learning.curves import curves_csv, curves_figure
from netdp.learning.models import MODELS, Model, solve
from netdp.learning.training_data import DATASETS, canary_worlds
from netdp.report.figures import draw
from netdp.report.types import (
    QUANTILES,
    PrivacyReport,
    RegimeLosses,
    Report,
    Utility,
    by_distance,
    fmt,
    quantiles_of,
)
from netdp.tasks.base import Auditable, Output, Reported, Sized, Task
from netdp.tasks.preparation import build_topology, resolve
from netdp.tracking import graph_walk
from netdp.tracking.base import MATRIX_LIMIT, Tracker, Tracking

REGIMES = ("local", "network", "central", "nonprivate", "local-hm", "local-pm")
#: Regimes whose updates are Wang et al.'s sampled PM/HM reports (ICDE 2019, §5), not
#: Gaussian: regime -> numeric mechanism.
LDP_REGIMES = {"local-hm": "hybrid", "local-pm": "piecewise"}
SCHEDULES = ("constant", "inv-sqrt", "inv")
DEFAULT_NODES = 2000
GROUP = "decentralized SGD (--task sgd)"
METHOD = ("per pair (u, v): RDP sum over u's updates of 2 alpha L^2 / (sigma^2 j), j = steps "
          "until v next holds the model; converted at delta; ldp: a node's actual updates, "
          "each fully exposed")


@dataclass(frozen=True)
class SgdConfig(Section):
    """Parameters of ``--task sgd``."""

    task = "sgd"

    dataset: str = param("randhie", "randhie (RAND health insurance, 20 190 rows, shipped "
                         "in netdp), synthetic, or a CSV file with a header row",
                         metavar="NAME|FILE.csv", group=GROUP)
    target: str | None = param(None, "CSV label column", kind=str, metavar="COLUMN",
                               group=GROUP, default_text="the last")
    model: str = param("logistic", "logistic (labels -1/+1) or linear (least squares)",
                       choices=MODELS, group=GROUP)
    lipschitz: float = param(0.4, "gradient clipping norm L, applied before the noise",
                             low=0.0, low_open=True, high=MAX_SCALE, metavar="L",
                             group=GROUP)
    lr: float = param(0.1, "step size", low=0.0, low_open=True, metavar="GAMMA", group=GROUP)
    lr_schedule: str = param("constant", "constant, inv-sqrt (lr / sqrt(1 + t/n)) or inv "
                             "(lr / (1 + t/n))", choices=SCHEDULES, group=GROUP)
    radius: float | None = param(None, "project the model onto the ball of radius R after "
                                 "each step", kind=float, low=0.0, low_open=True,
                                 metavar="R", group=GROUP, default_text="no projection")
    l2: float = param(0.0, "ridge term lambda/2 |w|^2", low=0.0, metavar="LAMBDA", group=GROUP)
    skew: float | None = param(None, "deal each label's rows to the nodes with Dirichlet(A) "
                               "shares", kind=float, low=0.0, low_open=True,
                               high=MAX_SCALE, metavar="A",  # beyond: NaN shares
                               group=GROUP, default_text="equal split")
    test_fraction: float = param(0.2, "held-out share of the rows", low=0.0, high=1.0,
                                 low_open=True, high_open=True, metavar="F", group=GROUP)
    max_contributions: int | None = param(None, "cap on each node's updates (the calibration "
                                          "then assumes K)", kind=int, low=1, high=10**9,
                                          metavar="K",
                                          group=GROUP, default_text="none, assumes T/n")
    regimes: tuple[str, ...] = param(("network",), "comma-separated regimes run on the same "
                                     "walk and noise: local, network, central, nonprivate, "
                                     "local-hm, local-pm (sampled HM/PM gradients, Wang et "
                                     "al. 2019)",
                                     choices=REGIMES, flag="compare", metavar="REGIMES",
                                     group=GROUP, default_text="network")
    evals: int = param(100, "evaluation points along the walk", low=1, high=100_000,
                       metavar="E", group=GROUP)

    def validate(self, config: Any) -> None:
        check_learning(self, REGIMES)
        check(config.tokens == 1, "tokens", f"sgd moves one model token (got {config.tokens})")
        check(config.coalition is None, "coalition", "coalitions are not tracked for sgd")
        check(not set(self.regimes) & set(LDP_REGIMES) or np.isfinite(self.lipschitz),
              "lipschitz", "local-hm and local-pm report g / L in [-1, 1]^d: L must be "
              "finite")

        check(config.on_loss != "regenerate" or from_config(config) is None, "on-loss",
              "sgd's tracker reads the model's own updates, and a lost model's would go "
              "unaccounted: use resend or skip")


@dataclass(frozen=True, eq=False)
class SgdData:
    """The prepared learning problem."""

    split: Any
    model: Any
    rates: np.ndarray
    radius: float
    contributions: float


class SgdRun:
    """One walk of Algorithm 5: the learning curve per regime, and the walk's pair
    coefficients (computed once, when the calibration or the tracker asks)."""

    def __init__(self, holders: np.ndarray, n: int) -> None:
        self.holders, self.n = holders, n
        self.curves: dict[str, Any] = {}
        self.calibrations: dict[str, Any] = {}

    @cached_property
    def coefficients(self) -> np.ndarray:
        """``C[u, v] = Σ 1/j`` over u's updates (:func:`netdp.tracking.sgd.pair_coefficients`)."""
        from netdp.tracking.sgd import pair_coefficients

        return pair_coefficients(self.holders, self.n)


@dataclass(frozen=True)
class RegimeUtility:
    """One regime's noise and where its model ended (means over runs)."""

    sigma: float
    epsilon: float
    delta: float
    accountant: str
    final_objective: float
    final_accuracy: float
    max_contributions: int

    def to_dict(self) -> dict[str, Any]:
        """``utility.<regime>``."""
        return dict(self.__dict__)


@dataclass(frozen=True, eq=False)
class SgdUtility(Utility):
    """Final objective and test score per regime, beside the non-private optimum."""

    metric: str
    optimum: dict[str, Any]
    regimes: dict[str, RegimeUtility]
    curves: dict[str, Any]
    calibrations: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "optimum": self.optimum,
                **{name: regime.to_dict() for name, regime in self.regimes.items()}}

    def curve_rows(self) -> list[dict[str, Any]]:
        """The curves as tidy rows: regime, step (``round`` for gossip GD), objective,
        score, sigma, epsilon."""
        c = self.curves
        x = "round" if c.get("unit") == "rounds" else "step"
        return [{"regime": r, x: s, "objective": o, self.metric: a,
                 "sigma": self.calibrations[r].sigma, "epsilon": self.calibrations[r].epsilon}
                for r in self.regimes
                for s, o, a in zip(c["steps"], c[r]["objective"], c[r]["score"], strict=True)]

    def lines(self, report: Report) -> list[str]:
        cfg, data, model = report.config, report.sections["dataset"], report.sections["model"]
        per_node = data["rows_per_node"]
        metric = "accuracy" if self.metric == "accuracy" else "R2"
        lines = [
            f"  data    {data['name']}: {data['train_rows']} training rows "
            f"({per_node['min']}-{per_node['max']} per node), {data['test_rows']} test rows, "
            f"d = {data['dim']}",
            f"  model   {model['name']}, gradients clipped to L = {model['lipschitz']:g} "
            f"before the noise, lr {model['lr']:g} ({model['lr_schedule']})",
            f"  target  eps = {cfg.epsilon:g}, delta = {cfg.delta:g} for every regime", "",
            f"  {'regime':12}{'sigma':>10} {'objective':>11} {'test ' + metric:>14}  accountant"]
        for regime, u in self.regimes.items():
            lines.append(f"  {regime:12}{fmt(u.sigma):>10} {fmt(u.final_objective):>11} "
                         f"{fmt(u.final_accuracy):>14}  {u.accountant}")
        opt = self.optimum
        lines.append(f"  {'optimum':12}{'':>10} {fmt(opt['objective']):>11} "
                     f"{fmt(opt['score']):>14}  {opt['solver']}")
        return lines


@dataclass(frozen=True, eq=False)
class SgdPrivacy(PrivacyReport):
    """Per-regime calibration, and the pairwise ε of the walks that ran."""

    delta: float
    target_epsilon: float
    calibration: dict[str, Any]
    empirical: tuple[RegimeLosses, ...]
    note: str | None = None
    theory: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"delta": self.delta, "target_epsilon": self.target_epsilon,
                               "calibration": {r: c.to_dict()
                                               for r, c in self.calibration.items()}}
        if self.theory:
            out["theory"] = dict(self.theory)
        if self.note is not None:
            out["note"] = self.note
        out["empirical"] = [row.to_dict() for row in self.empirical]
        if self.empirical:
            out["method"] = METHOD
        return out

    def lines(self, report: Report) -> list[str]:
        if not self.empirical:
            return [f"  {self.note or ''}"]
        lines = ["", f"  pairwise eps of this walk (network view, delta = {self.delta:g}; "
                     "local = a node's own updates fully exposed)",
                 f"  {'regime':12}{'mean':>9}{'q50':>9}{'q90':>9}{'q99':>9}{'max':>9}"
                 f"{'> target':>10}{'local mean':>12}"]
        for row in self.empirical:
            values = (row.mean, row.quantiles["q50"], row.quantiles["q90"],
                      row.quantiles["q99"], row.max)
            cells = "".join(f" {fmt(v):>8}" for v in values)
            lines.append(f"  {row.regime:12}{cells}{row.above_target:>10.1%}"
                         f"{fmt(row.ldp['mean']):>12}")
        lines += [f"  theory {name} (network, mean over pairs): {fmt(eps)}"
                  for name, eps in self.theory.items()]
        return lines


def mean_curves(outcomes: Sequence[Any]) -> dict[str, Any]:
    """Objective and test score against steps, mean over runs, per regime (in the runs'
    order of regimes)."""
    regimes = list(outcomes[0].curves)
    curves: dict[str, Any] = {"steps": outcomes[0].curves[regimes[0]].steps.tolist()}
    for regime in regimes:
        curves[regime] = {
            "objective": np.mean([o.curves[regime].objective for o in outcomes], 0).tolist(),
            "score": np.mean([o.curves[regime].score for o in outcomes], 0).tolist()}
    return curves


def _pair_epsilons(coef: np.ndarray, sigma: float, clip_norm: float, delta: float) -> np.ndarray:
    from netdp.tracking.sgd import epsilon_upper

    return epsilon_upper(2.0 * clip_norm**2 * coef / sigma**2, delta)


@dataclass(frozen=True, eq=False, kw_only=True)
class SgdSetup(Setup):
    """A walk-SGD run prepared, and its noise per regime, calibrated from its first run's
    walk (:meth:`SgdTask.calibrations`)."""

    calibrations: Once[dict[str, Any]] = once()


def _section(setup: Setup) -> SgdConfig:
    return setup.config.section_as(SgdConfig)


class SgdTracker(Tracker):
    """Per-pair RDP of each run's walk, for the local and network regimes."""

    def __init__(self, setup: SgdSetup, keep_pairs: bool) -> None:
        n = setup.topology.n
        self.setup, self.keep_pairs = setup, keep_pairs
        self.tracking = bool(setup.config.accountants)
        self.tracked: list[tuple[np.ndarray, np.ndarray]] = []
        self.pairs: np.ndarray | None = None
        self.ldp: np.ndarray | None = None
        if self.tracking or keep_pairs:
            check(n <= MATRIX_LIMIT, "nodes", f"pairwise sgd tracking holds an n x n matrix: "
                  f"up to n = {MATRIX_LIMIT} (got {n}); pass --no-tracking for larger runs")

    def add(self, run: int, trace: Trace, outcome: Any) -> None:
        if not (self.tracking or self.keep_pairs):
            return
        cfg, sec = self.setup.config, _section(self.setup)
        regimes = sec.regimes
        coef = outcome.coefficients
        self.tracked.append((coef, outcome.curves[regimes[0]].contributions))
        if self.keep_pairs and run == 0:
            cals = outcome.calibrations
            regime = "network" if "network" in cals else next(
                (r for r in regimes if r != "nonprivate" and r not in LDP_REGIMES), None)
            if regime is not None:
                sigma, clip = cals[regime].sigma, sec.lipschitz
                eps = _pair_epsilons(coef, sigma, clip, cfg.report_delta)
                np.fill_diagonal(eps, np.nan)
                self.pairs = eps
                updates = outcome.curves[regime].contributions.astype(float)
                self.ldp = _pair_epsilons(updates, sigma, clip, cfg.report_delta)

    def matrix(self) -> np.ndarray | None:
        return self.pairs

    def node_ldp(self) -> np.ndarray | None:
        """The first run's, in the regime of :meth:`matrix` (kept with the pairs)."""
        return self.ldp

    def report(self) -> SgdPrivacy:
        cfg, sec = self.setup.config, _section(self.setup)
        calibrations = self.setup.calibrations.value
        if not self.tracking:
            return SgdPrivacy(cfg.report_delta, cfg.epsilon, calibrations, (),
                              "pairwise tracking skipped (no accountant)")

        n = self.setup.topology.n
        off = ~np.eye(n, dtype=bool)
        clip, delta = sec.lipschitz, cfg.report_delta
        distances = np.tile(hop_distances(self.setup.topology).astype(np.int32)[off],
                            len(self.tracked))
        empirical: list[RegimeLosses] = []
        for regime, cal in calibrations.items():
            if regime not in ("local", "network"):  # central and nonprivate have no walk view
                continue
            eps = np.concatenate([_pair_epsilons(c[off], cal.sigma, clip, delta)
                                  for c, _ in self.tracked])
            ldp = np.concatenate([_pair_epsilons(k.astype(float), cal.sigma, clip, delta)
                                  for _, k in self.tracked])
            empirical.append(RegimeLosses(
                regime, delta, int(eps.size), float(eps.mean()), float(eps.min()),
                float(eps.max()),
                quantiles_of(eps, QUANTILES),
                float(np.mean(eps > cfg.epsilon)),
                {"mean": float(ldp.mean()), "min": float(ldp.min()), "max": float(ldp.max())},
                by_distance(eps, distances)))
        theory = {}
        if "network" in calibrations:
            theory["graph-walk-icml2024"] = self.icml_mean(calibrations["network"].sigma)
        return SgdPrivacy(delta, cfg.epsilon, calibrations, tuple(empirical), theory=theory)

    def icml_mean(self, sigma: float) -> float:
        """Mean over ordered pairs of the ICML 2024 closed-form ε (network regime), over all
        sources up to :data:`~netdp.tracking.graph_walk.DENSE_LIMIT` nodes, else 256 sampled
        sources (from the ``sources`` stream)."""

        setup, cfg = self.setup, self.setup.config
        n = setup.topology.n
        walk = "simple" if setup.topology.walk_kind.implicit else cfg.walk
        P = setup.topology.transition(walk)
        sources = None
        if n > graph_walk.DENSE_LIMIT:
            rng = Streams(setup.seed, 0).generator("sources")
            sources = np.sort(rng.choice(n, size=256, replace=False))
        coef = graph_walk.icml_coefficients(P, setup.steps, sources)
        mask = np.ones(coef.shape, dtype=bool)
        rows = np.arange(coef.shape[0])
        mask[rows, rows if sources is None else sources] = False
        eps = _pair_epsilons(coef[mask], sigma, _section(setup).lipschitz, cfg.report_delta)
        return float(eps.mean())


def check_learning(sec: Any, regimes: tuple[str, ...]) -> None:
    """Check an sgd section's ``regimes`` (among ``regimes``), ``dataset`` and ``target``
    (both sgd tasks)."""

    check(len(sec.regimes) > 0, "compare", f"name one or more of {', '.join(regimes)}")
    check(len(set(sec.regimes)) == len(sec.regimes), "compare",
          f"names a regime twice ({', '.join(sec.regimes)})")
    check(sec.dataset in DATASETS or sec.dataset.lower().endswith(".csv")
          or Path(sec.dataset).is_file(), "dataset",
          f"must be one of {', '.join(DATASETS)} or a CSV file (got {sec.dataset!r})")
    check(sec.target is None or sec.dataset not in DATASETS, "target",
          f"picks the label column of a CSV --dataset ({sec.dataset} has its own)")


def learning_data(config: SimulationConfig, cap: int | None = None,
                  topology: Any = None) -> tuple[Any, Any]:
    """The graph (``topology`` if given, built before the data) and the dataset split over
    its nodes, from the run's ``data`` stream (the sgd parameters: ``dataset``, ``model``,
    ``target``, ``test_fraction``, ``skew``). Without ``nodes``, the ring and the complete
    graph get ``min(cap, training rows)`` nodes."""

    sec: Any = config.section
    assert config.seed is not None
    rng = seeding.generator(config.seed, "data")
    X, y, name = datasets.load(sec.dataset, sec.model, rng, sec.target)
    nodes = config.nodes
    if nodes is None and cap is not None and kind_of(config.topology).implicit:
        nodes = min(cap, y.size - int(round(sec.test_fraction * y.size)))
    topo = topology if topology is not None else build_topology(config, nodes)
    return topo, datasets.split(X, y, topo.n, rng, name, sec.test_fraction, sec.skew)


def write_curves(report: Report, paths: Sequence[Path]) -> None:
    """``PREFIX.csv`` (objective and test score against steps, per regime) and ``PREFIX.png``,
    both or neither (:func:`~netdp.core.files.atomic_files`)."""
    figure = curves_figure(report)
    with atomic_files(paths[:2], param="curves") as (table, image):
        table.write(curves_csv(report).encode("utf-8"))
        draw(figure, image, ".png", dpi=120)


CURVES = Output("curves", "PREFIX", "write PREFIX.csv (objective and test score against "
                "steps or rounds, per regime) and PREFIX.png (default with --compare: "
                "sgd-curves)", (".csv", ".png"), write_curves, default="sgd-curves",
                when=lambda params: "regimes" in params)
"""``--curves``: the learning curves of an sgd run (walk or gossip)."""


class SgdTask(Task[SgdSetup], Auditable, Reported, Sized):
    """Decentralized SGD, the model walking the graph."""

    name = "sgd"
    summary = "a model trained by the walk (AISTATS Alg. 5): local vs network vs central DP"
    section = SgdConfig
    unlogged = ("sgd's tracker reads each run's model updates (their gradient coefficients), "
                "which a log of hops does not hold")
    tracking = (  # declared for the docs and the checks; SgdTracker does the work
        Tracking("ring", "per pair: RDP sum of 2 alpha L^2/(sigma^2 j) over u's updates, "
                 "j = steps until v holds the model", None, ("rdp",)),
        Tracking("complete", "as on the ring", None, ("rdp",)),
        Tracking("graph", "as on the ring", None, ("rdp",)))
    outputs = (CURVES,)
    default_nodes = DEFAULT_NODES
    steps_per_node = 10

    def prepare(self, config: SimulationConfig) -> SgdSetup:
        from netdp.tasks.sgd_walk import learning_rates

        sec = config.section_as(SgdConfig)
        topo, split = learning_data(config, DEFAULT_NODES)
        resolved, steps = resolve(config, topo, self.steps_per_node, self.default_accountants)
        data = SgdData(split, Model(sec.model, sec.l2),
                       learning_rates(sec.lr, sec.lr_schedule, steps, topo.n),
                       np.inf if sec.radius is None else sec.radius,
                       float(sec.max_contributions or steps / topo.n))
        return SgdSetup(resolved, topo, steps, data)

    def describe_mechanism(self, setup: SgdSetup) -> None:
        return None

    def tracker(self, setup: SgdSetup, keep_pairs: bool = False) -> Tracker:
        return SgdTracker(setup, keep_pairs)

    def calibrations(self, setup: SgdSetup, walk: SgdRun) -> dict[str, Any]:
        """σ per regime at the target (ε, δ), from the first run's walk off the clique."""
        return setup.calibrations.get(lambda: self._calibrate(setup, walk))

    def _calibrate(self, setup: SgdSetup, walk: SgdRun) -> dict[str, Any]:
        from netdp.tracking import sgd as sgd_privacy

        cfg, topo, data, n = setup.config, setup.topology, setup.data, setup.topology.n
        sec = _section(setup)
        if topo.walk_kind.uniform:
            per_update = sgd_privacy.expected_cost(sgd_privacy.hit_probability(n, topo.self_moves))
        else:  # mean over ordered pairs of the walk's coefficients, per update
            per_update = float(walk.coefficients.sum() / (n * (n - 1)) / (setup.steps / n))
        out = {}
        for regime in sec.regimes:
            if regime == "nonprivate":
                out[regime] = sgd_privacy.Calibration(regime, 0.0, float("inf"), cfg.delta,
                                                      None, "none (no noise)")
            elif regime in LDP_REGIMES:
                out[regime] = self.ldp_calibration(setup, regime)
            else:
                out[regime] = sgd_privacy.calibrate(regime, cfg.epsilon, cfg.delta,
                                                    sec.lipschitz, n, setup.steps,
                                                    data.contributions, per_update)
        return out

    def ldp_calibration(self, setup: SgdSetup, regime: str) -> Any:
        """ε_u per update (the largest whose K-fold composition meets (ε, δ)); ``sigma``
        reports the update's worst-case noise std per coordinate, ``L sqrt(Var x_j)`` at
        ``|g_j| = L``, to set beside the Gaussian regimes' σ."""
        from netdp.tracking import sgd as sgd_privacy

        cfg, data = setup.config, setup.data
        eps_u = sgd_privacy.ldp_update_epsilon(cfg.epsilon, cfg.delta, data.contributions)
        pert = self.perturbation(setup, regime, eps_u)
        variance = float(pert.coordinate_variance(np.ones(1))[0])
        sigma = _section(setup).lipschitz * float(np.sqrt(variance))
        return sgd_privacy.Calibration(
            regime, sigma, cfg.epsilon, cfg.delta, eps_u,
            f"kov exact: K updates, each one {eps_u:.4g}-LDP report of k = {pert.k} of "
            f"{pert.dim} coordinates by {pert.mechanism} at eps_u/k (Wang et al. 2019)")

    def perturbation(self, setup: SgdSetup, regime: str, eps_u: float | None = None) -> Any:
        """The sampled PM/HM perturbation of an LDP regime (``None`` for the others)."""
        from netdp.tasks.sgd_walk import SampledPerturbation

        if regime not in LDP_REGIMES:
            return None
        if eps_u is None:
            eps_u = setup.calibrations.value[regime].coefficient
        return SampledPerturbation.of(LDP_REGIMES[regime], float(eps_u),
                                      setup.data.split.dim)

    def run(self, setup: SgdSetup, trace: Trace, streams: Streams) -> SgdRun:
        """The model walks: each holder takes a clipped, noisy step on its own rows."""
        from netdp.tasks.sgd_walk import walk_sgd

        sec, data = _section(setup), setup.data
        walk = SgdRun(trace.holders[0], setup.topology.n)
        walk.calibrations = self.calibrations(setup, walk)
        for regime in sec.regimes:
            walk.curves[regime] = walk_sgd(
                walk.holders, data.split, data.model, walk.calibrations[regime].sigma,
                sec.lipschitz, data.rates, streams.generator("noise"), data.radius,
                sec.max_contributions, sec.evals, self.perturbation(setup, regime))
        return walk

    def record(self, outcome: SgdRun) -> dict[str, float]:
        return {f"{g}_final_objective": c.final_objective for g, c in outcome.curves.items()}

    def utility(self, setup: SgdSetup, outcomes: Sequence[SgdRun]) -> SgdUtility:

        data = setup.data
        split, model = data.split, data.model
        regimes: dict[str, RegimeUtility] = {}
        calibrations = setup.calibrations.value
        for regime in _section(setup).regimes:
            outs = [o.curves[regime] for o in outcomes]
            cal = calibrations[regime]
            regimes[regime] = RegimeUtility(
                cal.sigma, cal.epsilon, cal.delta, cal.accountant,
                float(np.mean([o.final_objective for o in outs])),
                float(np.mean([o.final_score for o in outs])),
                int(max(o.contributions.max() for o in outs)))
        w_opt, f_opt = solve(model, split.X, split.y)
        optimum = {"objective": f_opt,
                   "score": float(model.score(w_opt, split.X_test, split.y_test)),
                   "solver": "scipy L-BFGS-B on the pooled training rows (non-private)"}
        return SgdUtility(model.metric, optimum, regimes, mean_curves(outcomes),
                          calibrations)

    def sections(self, setup: SgdSetup, outcomes: Sequence[Any]) -> dict[str, Any]:
        sec, data = _section(setup), setup.data
        return {"dataset": data.split.describe(),
                "model": {"name": data.model.name, "l2": data.model.l2,
                          "lipschitz": sec.lipschitz, "lr": sec.lr,
                          "lr_schedule": sec.lr_schedule, "radius": sec.radius},
                "curves": mean_curves(outcomes)}

    def audit_worlds(self, setup: SgdSetup, node: int) -> tuple[Any, Any]:
        """``node``'s rows replaced by a canary row whose clipped gradient points one way
        or the other (:func:`netdp.learning.training_data.canary`)."""

        return canary_worlds(setup.data, node)

    def view(self, setup: SgdSetup, trace: Trace, streams: Streams, observer: int) -> View:
        """The models the observer receives (first regime), replaying the run's noise."""
        from netdp.tasks.sgd_walk import model_snapshots

        sec, data = _section(setup), setup.data
        walk = SgdRun(trace.holders[0], setup.topology.n)
        regime = sec.regimes[0]
        sigma = self.calibrations(setup, walk)[regime].sigma
        step = np.flatnonzero(walk.holders == observer)
        snapshots = model_snapshots(walk.holders, data.split, data.model, sigma,
                                    sec.lipschitz, data.rates, streams.generator("noise"),
                                    data.radius, sec.max_contributions,
                                    np.append(step, setup.steps),
                                    self.perturbation(setup, regime))
        return View(observer, np.zeros(step.size, np.int64), step, snapshots[:-1],
                    snapshots[-1:])

    def footprint(self, config: SimulationConfig, nodes: int,
                  steps: int) -> dict[str, tuple[float, str]]:
        drive = "rounds" if kind_of(config.topology).public_schedule else "steps"
        out = {"the walk's trace": (12.0 * steps, drive),
               "the noise and rates": (8.0 * steps, drive)}
        if config.accountants != ():
            out["the pair coefficients (n x n)"] = (16.0 * nodes * nodes, "nodes")
        return out
