"""Decentralized gradient descent with gossip (Muffliato-GD, Cyffers, Even, Bellet,
Massoulié, NeurIPS 2022): ``--task sgd --protocol gossip``.

**Algorithm.** Every node u holds a model ``θ_u`` (all start at 0). In each of R rounds
(``--steps``), every node computes the gradient of its own objective at its own model
(all its rows), clips it to norm L *before* the noise (:func:`netdp.learning.models.clip`),
adds ``η_u ~ N(0, (2Lσ)² I)`` once (σ in units of the sensitivity 2L of a clipped gradient
under replace-one neighbours) and steps::

    θ_u ← θ_u − γ (clip(∇f_u(θ_u), L) + η_u)

then all nodes run K synchronous gossip steps ``Θ ← W Θ`` on the ``n × d`` matrix of
models (``--gossip-steps``; Chebyshev-accelerated with ``--accelerated``), and each
model is projected onto the ball of ``--radius`` (after the gossip, so that the gossip
mixes the noisy updates themselves). Everything is vectorised over nodes and coordinates.

**What an observer sees, and the accounting.** In round r, v knows its own state and
receives each neighbour's state at every gossip step t = 0..K. Given the models before
the round, the states at t = 0 are ``z = Θ_{r-1} − γ(G + H)``, a Gaussian with a mean
that u's data moves by at most ``2Lγ`` (in norm), noise ``2Lσγ`` per coordinate; the
round's view is the linear Gaussian view of ``z`` that :func:`netdp.tracking.gossip.joint`
analyses with T = K. Its Rényi loss about u's update is ``α c[u, v] / (2σ²)`` with
``c[u, v] = ‖Π_v e_u‖²`` (the d coordinates carry independent noise with the same
projection, and the shift has norm <= 2L, so the coordinates add up to at most ``c``).
Composed over the R rounds by RDP addition: ``R α c[u, v] / (2σ²)``, capped at the local
level ``R α / (2σ²)``, converted by :func:`netdp.tracking.sgd.epsilon_upper`. This is the
Muffliato-GD accounting.

*What is sound.* The local level is: v's whole view is a post-processing of u's R noisy
updates and of randomness independent of u's data, and each update is a Gaussian of
sensitivity 2L given everything before it (adaptive composition). The **largest pair is
always at that level**: a neighbour receives u's noisy model itself at t = 0
(``c = 1``). *What is not*: below the local level, the composed figure is a per-round
conditional one. Conditioning on the models before each round ignores what the models
v never sees carry of u's earlier updates into later rounds; on a path with K = 1 a pair
at ``c = 0`` (per round) leaks over two rounds (``tests/tasks/test_sgd_gossip.py``
proves it on the exact view of two rounds of a fixed-gradient run). The per-pair mean,
quantiles and by-distance rows are therefore reported as the Muffliato-GD figure, not as
a bound; the paper's per-message sum
(:func:`netdp.tracking.gossip_message_sum.message_sum`), composed the same way, is shown
as theory, and is not a bound either.

**Calibration** (``--compare``), at the target (ε, δ), on common random numbers (the same
split and the same standard normals in every regime): ``local`` takes ``c = 1`` for every
pair, ``network`` the σ at which the **largest** pairwise ε meets the target (a per-pair
guarantee), and ``nonprivate`` σ = 0. Since the largest pair is a neighbour at ``c = 1``,
the network σ equals the local one on every graph: gossip GD gives no per-pair gain over
local DP against a neighbour; its gain is for the pairs further away. ``--sigma`` fixes σ
for every private regime instead (each then reports the ε it gives).

**Defaults.** K is Muffliato's step count at σ = 1, ``⌈gap^{-1/2} ln n⌉``
(:func:`netdp.graphs.gossip_matrix.default_steps`; σ-free, so it does not depend on the
calibration). The step size is ``1/β``, with β the smoothness bound of every node's
objective (``max ||x||²/4`` for logistic, ``max ||x||²`` for least squares, plus λ: 4 and 1
on the scaled data), the classical step of gradient descent (``f(θ_R) − f* <= β ||θ*||² /
(2R)`` on a convex β-smooth objective). R = :data:`DEFAULT_ROUNDS` rounds: at that step
the non-private regime on randhie (complete graph, n = 100) ends 5e-5 above scipy's
optimum (logistic; 5e-6 for least squares), in well under a second.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from netdp.core.errors import check
from netdp.core.params import MAX_SIGMA, MIN_SIGMA, Section, param
from netdp.core.setup import Streams, View
from netdp.core.simulation_config import SimulationConfig
from netdp.engine import choose
from netdp.engine import gossip_rounds as engine
from netdp.engine.clock import parse_latency
from netdp.engine.faults import fault_flag, from_config
from netdp.engine.trace import Trace
from netdp.learning.curves import LearningCurve
from netdp.learning.models import Model, clip, project, solve
from netdp.learning.training_data import canary_worlds
from netdp.report.types import Report, fmt
from netdp.tasks.base import Auditable, Reported, Sized, Task, Timed
from netdp.tasks.gossip_sum import GROUP as GOSSIP_GROUP
from netdp.tasks.gossip_sum import GossipSumConfig, check_gossip, gossip_work
from netdp.tasks.preparation import build_topology
from netdp.tasks.sgd import (
    CURVES,
    GROUP,
    SgdConfig,
    SgdUtility,
    check_learning,
    learning_data,
    mean_curves,
)
from netdp.tracking.base import Tracker, Tracking
from netdp.tracking.gossip_setup import Calibration, GossipSgdSetup

REGIMES = ("local", "network", "nonprivate")
DEFAULT_ROUNDS = 1000
GOSSIP_STATE_SECONDS = 4e-6
"""Seconds of one gossip state of ``--gossip-steps`` beside its nodes' 0.5 us each."""


def _like(record: type, name: str) -> Any:
    """The declaration of ``record``'s field ``name``, for a parameter that means the same
    here: same default, help and checks, hence one CLI flag."""
    f = next(f for f in dataclasses.fields(record) if f.name == name)
    return field(default=f.default, metadata={"param": f.metadata["param"]})


@dataclass(frozen=True)
class GossipSgdConfig(Section):
    """Parameters of ``--task sgd --protocol gossip``."""

    task = "sgd"
    protocol = "gossip"

    dataset: str = _like(SgdConfig, "dataset")
    target: str | None = _like(SgdConfig, "target")
    model: str = _like(SgdConfig, "model")
    lipschitz: float = _like(SgdConfig, "lipschitz")
    lr: float | None = param(None, "step size", kind=float, low=0.0, low_open=True,
                             metavar="GAMMA", group=GROUP,
                             default_text="1/beta, the smoothness bound of the nodes' "
                             "objectives: 4 (logistic) or 1 (linear), less with --l2")
    radius: float | None = param(None, "project every node's model onto the ball of radius "
                                 "R after each round's gossip", kind=float, low=0.0,
                                 low_open=True, metavar="R", group=GROUP,
                                 default_text="no projection")
    l2: float = _like(SgdConfig, "l2")
    skew: float | None = _like(SgdConfig, "skew")
    test_fraction: float = _like(SgdConfig, "test_fraction")
    regimes: tuple[str, ...] = param(("network",), "comma-separated regimes run on the same "
                                     "gossip and noise: local, network, nonprivate",
                                     choices=REGIMES, flag="compare", metavar="REGIMES",
                                     group=GROUP, default_text="network")
    evals: int = param(100, "evaluation points along the rounds", low=1, high=100_000,
                       metavar="E", group=GROUP)
    sigma: float | None = param(None, "std of the noise every node adds to its clipped "
                                "gradient in every round, in units of the sensitivity 2L, "
                                "for every private regime", kind=float, low=MIN_SIGMA,
                                high=MAX_SIGMA, metavar="S", group=GOSSIP_GROUP,
                                default_text="calibrated per regime to --epsilon, --delta")
    gossip_matrix: str = _like(GossipSumConfig, "gossip_matrix")
    accelerated: bool = _like(GossipSumConfig, "accelerated")
    rdp_order: float | None = _like(GossipSumConfig, "rdp_order")
    sources: int | None = _like(GossipSumConfig, "sources")
    gossip_steps: int | None = param(None, "gossip steps after each round's noisy gradient "
                                     "step", kind=int, low=0, high=100_000, metavar="K",
                                     group=GOSSIP_GROUP, default_text="Muffliato's rule at "
                                     "sigma = 1: ceil(gap^(-1/2) ln n)")

    def validate(self, config: Any) -> None:
        check_learning(self, REGIMES)
        check_gossip(config)
        check(config.coalition is None, "coalition", "coalitions are not tracked for gossip "
              "GD yet (they are for --task sum --protocol gossip)")

        check(from_config(config) is None, fault_flag(config), "gossip GD has no faults yet "
              "(they are for walks, and for --task sum --protocol gossip)")
        check(config.engine != "event", "engine", "gossip GD runs synchronous rounds on the "
              "vector engine (leave --engine out)")


@dataclass(frozen=True, eq=False)
class GossipData:
    """The prepared learning problem."""

    split: Any
    model: Any
    lr: float
    radius: float


@dataclass(frozen=True, eq=False)
class GossipOutcome(LearningCurve):
    """One regime of one run: the learning curve of the average model over the rounds
    (:class:`~netdp.tasks.sgd_walk.LearningCurve`), with

    Attributes
    ----------
    models
        ``(n, d)``: every node's final model.
    """

    models: np.ndarray

    @property
    def spread(self) -> float:
        """Mean distance of the nodes' final models to their average."""
        return float(np.linalg.norm(self.models - self.models.mean(axis=0), axis=1).mean())


@dataclass(frozen=True, eq=False)
class GossipSgdRun:
    """One run: the outcome of each regime."""

    curves: dict[str, GossipOutcome]


def gossip_gd(split: Any, model: Any, W: Any, gossip_steps: int, rounds: int, sigma: float,
              clip_norm: float, lr: float, noise_rng: np.random.Generator | None,
              radius: float = math.inf, gamma: float | None = None, evals: int = 100,
              watch: np.ndarray | None = None) -> tuple[GossipOutcome, np.ndarray | None]:
    """Run R rounds of gossip GD (module docstring).

    Parameters
    ----------
    split
        Training rows per node and the test set (:class:`netdp.learning.training_data.Split`).
    model
        Loss and score (:class:`netdp.learning.models.Model`).
    W
        The ``n × n`` gossip matrix (sparse or dense).
    gossip_steps, rounds
        K and R.
    sigma
        Noise std per coordinate added to each clipped gradient (absolute: ``2Lσ``; 0:
        non-private, and nothing is drawn).
    clip_norm, lr, radius
        L, the step size γ and the projection radius (``inf``: none).
    noise_rng
        The run's ``noise`` stream: one ``(n, d)`` draw of standard normals per round, in
        order (the same draws for every σ).
    gamma
        Chebyshev parameter (``None``: plain gossip).
    evals
        Evaluation points along the rounds.
    watch
        Nodes whose states to return at every gossip step of every round.

    Returns
    -------
    outcome, watched
        The outcome, and ``(R, K + 1, len(watch), d)`` states of the watched nodes (or
        ``None``).
    """
    from netdp.tasks.sgd_walk import eval_steps

    n, d = split.n, split.dim
    at = eval_steps(rounds, evals)
    snaps = np.zeros((at.size, d))
    theta = np.zeros((n, d))
    seen = None if watch is None else np.empty((rounds, gossip_steps + 1, len(watch), d))
    k = int(np.sum(at == 0))
    for r in range(rounds):
        grads = clip(model.node_gradients(theta, split.X, split.y, split.indptr), clip_norm)
        if sigma > 0:
            assert noise_rng is not None
            grads += sigma * noise_rng.standard_normal((n, d))
        theta = theta - lr * grads
        prev = None
        for t in range(gossip_steps + 1):
            if seen is not None:
                seen[r, t] = theta[watch]
            if t == gossip_steps:
                break
            nxt = np.asarray(W @ theta)
            if gamma is not None and prev is not None:
                nxt = gamma * nxt + (1.0 - gamma) * prev
            prev, theta = theta, nxt
        theta = project(theta, radius)
        while k < at.size and at[k] == r + 1:
            snaps[k] = theta.mean(axis=0)
            k += 1
    objective = model.objective(snaps, split.X, split.y)
    score = model.score(snaps, split.X_test, split.y_test)
    return GossipOutcome(at, objective, score, theta), seen


@dataclass(frozen=True)
class RegimeUtility:
    """One regime's noise, where its average model ended and how far apart the nodes'
    models are (means over runs)."""

    sigma: float
    noise_multiplier: float
    epsilon: float
    delta: float
    accountant: str
    final_objective: float
    final_accuracy: float
    spread: float

    def to_dict(self) -> dict[str, Any]:
        """``utility.<regime>``."""
        return dict(self.__dict__)


@dataclass(frozen=True, eq=False)
class GossipSgdUtility(SgdUtility):
    """The average model's objective and test score per regime, the nodes' spread, beside
    the non-private optimum."""

    def lines(self, report: Report) -> list[str]:
        cfg, data, model = report.config, report.sections["dataset"], report.sections["model"]
        per_node = data["rows_per_node"]
        metric = "accuracy" if self.metric == "accuracy" else "R2"
        lines = [
            f"  data    {data['name']}: {data['train_rows']} training rows "
            f"({per_node['min']}-{per_node['max']} per node), {data['test_rows']} test rows, "
            f"d = {data['dim']}",
            f"  model   {model['name']}, local gradients clipped to L = "
            f"{model['lipschitz']:g} before the noise, lr {model['lr']:g}",
            f"  target  eps = {cfg.epsilon:g}, delta = {cfg.delta:g} for every regime; "
            "objective and score of the average model, spread = mean |theta_u - average|",
            "", f"  {'regime':12}{'sigma':>10} {'objective':>11} {'test ' + metric:>14} "
                f"{'spread':>10}  accountant"]
        for regime, u in self.regimes.items():
            assert isinstance(u, RegimeUtility)
            lines.append(f"  {regime:12}{fmt(u.sigma):>10} {fmt(u.final_objective):>11} "
                         f"{fmt(u.final_accuracy):>14} {fmt(u.spread):>10}  {u.accountant}")
        opt = self.optimum
        lines.append(f"  {'optimum':12}{'':>10} {fmt(opt['objective']):>11} "
                     f"{fmt(opt['score']):>14} {'':>10}  {opt['solver']}")
        return lines


def _section(setup: GossipSgdSetup) -> GossipSgdConfig:
    return setup.config.section_as(GossipSgdConfig)


class GossipSgdTask(Task[GossipSgdSetup], Auditable, Reported, Sized, Timed):
    """Gradient descent by every node, averaged by gossip after each noisy step."""

    name = "sgd"
    protocol = "gossip"
    summary = "a model trained by gossip GD (Muffliato-GD): local vs network DP, by distance"
    section = GossipSgdConfig
    unlogged = ("gossip sgd's losses follow from its calibrated regimes, and its rounds "
                "interleave gradient and averaging steps, which a log of messages does not "
                "tell apart")
    tracking = (
        Tracking("graph", "per round the exact joint loss of the observer's view (K + 1 gossip "
                 "states), times R rounds, capped at LDP; by distance", None, ("rdp",)),
        Tracking("complete", "as on any graph", None, ("rdp",)))
    outputs = (CURVES,)
    default_nodes = 100

    def prepare(self, config: SimulationConfig) -> GossipSgdSetup:
        from netdp.graphs import gossip_matrix

        sec = config.section_as(GossipSgdConfig)
        # the graph and its gossip matrix (a file's, perhaps refused) before the data
        topo = build_topology(config, config.nodes)
        plan = gossip_matrix.GossipPlan.build(topo, sec.gossip_matrix, sec.accelerated)
        topo, split = learning_data(config, topology=topo)
        model = Model(sec.model, sec.l2)
        steps = sec.gossip_steps if sec.gossip_steps is not None else \
            gossip_matrix.default_steps(plan.gap, 1.0, topo.n)
        rounds = config.steps or DEFAULT_ROUNDS
        lr = sec.lr if sec.lr is not None else 1.0 / model.smoothness(split.X)
        accountants = (self.default_accountants if config.accountants is None
                       else config.accountants)
        resolved = config.replace(nodes=topo.n, steps=rounds, engine=choose(config.engine, 1, 0.0),
                                  accountants=tuple(accountants), gossip_steps=steps, lr=lr)
        from netdp.tracking.gossip_sgd_tracker import calibrate

        calibrations = calibrate(sec.regimes, config.epsilon, config.delta, rounds,
                                 sec.lipschitz, sec.sigma)
        data = GossipData(split, model, lr, math.inf if sec.radius is None else sec.radius)
        return GossipSgdSetup(resolved, topo, rounds, data, plan=plan, matrix=sec.gossip_matrix,
                              sources=sec.sources, rdp_order=sec.rdp_order, gossip_steps=steps,
                              calibrations=calibrations)

    def trace(self, setup: GossipSgdSetup, streams: Streams) -> Trace:
        """The messages of R rounds of K + 1 gossip states each."""

        cfg = setup.config
        states = setup.steps * (setup.gossip_steps + 1)
        return engine.run(cfg.engine, setup.topology, states - 1, parse_latency(cfg.latency),
                          streams.generator("latency"))

    def run(self, setup: GossipSgdSetup, trace: Trace, streams: Streams) -> GossipSgdRun:
        """Every regime on the same noise draws (a fresh ``noise`` stream each)."""
        return GossipSgdRun({cal.regime: self._gd(setup, streams, cal)[0]
                             for cal in setup.calibrations.values()})

    def _gd(self, setup: GossipSgdSetup, streams: Streams, cal: Calibration,
            watch: np.ndarray | None = None) -> tuple[GossipOutcome, np.ndarray | None]:

        sec, data, plan = _section(setup), setup.data, setup.plan
        return gossip_gd(data.split, data.model, plan.W, setup.gossip_steps, setup.steps,
                         cal.sigma, sec.lipschitz, data.lr, streams.generator("noise"),
                         data.radius, plan.gamma, sec.evals, watch)

    def record(self, outcome: GossipSgdRun) -> dict[str, float]:
        out = {}
        for regime, c in outcome.curves.items():
            out[f"{regime}_final_objective"] = c.final_objective
            out[f"{regime}_spread"] = c.spread
        return out

    def utility(self, setup: GossipSgdSetup, outcomes: Sequence[Any]) -> GossipSgdUtility:

        split, model = setup.data.split, setup.data.model
        calibrations = setup.calibrations
        regimes: dict[str, Any] = {}
        for regime, cal in calibrations.items():
            outs = [o.curves[regime] for o in outcomes]
            regimes[regime] = RegimeUtility(
                cal.sigma, cal.noise_multiplier, cal.epsilon, cal.delta, cal.accountant,
                float(np.mean([o.final_objective for o in outs])),
                float(np.mean([o.final_score for o in outs])),
                float(np.mean([o.spread for o in outs])))
        w_opt, f_opt = solve(model, split.X, split.y)
        optimum = {"objective": f_opt,
                   "score": float(model.score(w_opt, split.X_test, split.y_test)),
                   "solver": "scipy L-BFGS-B on the pooled training rows (non-private)"}
        curves = {**mean_curves(outcomes), "unit": "rounds"}
        return GossipSgdUtility(model.metric, optimum, regimes, curves, calibrations)

    def sections(self, setup: GossipSgdSetup, outcomes: Sequence[Any]) -> dict[str, Any]:
        sec, data = _section(setup), setup.data
        return {"dataset": data.split.describe(),
                "model": {"name": data.model.name, "l2": data.model.l2,
                          "lipschitz": sec.lipschitz, "lr": data.lr, "radius": sec.radius},
                "curves": {**mean_curves(outcomes), "unit": "rounds"}}

    def describe_mechanism(self, setup: GossipSgdSetup) -> None:
        return None

    def tracker(self, setup: GossipSgdSetup, keep_pairs: bool = False) -> Tracker:
        from netdp.tracking.gossip_sgd_tracker import GossipSgdTracker

        return GossipSgdTracker(setup, keep_pairs)

    def process_line(self, setup: GossipSgdSetup) -> str:
        how = "Chebyshev-accelerated steps" if setup.plan.accelerated else "steps of W"
        return (f"gossip  {setup.steps} rounds of (a noisy gradient step, then "
                f"{setup.gossip_steps} {how}), {setup.matrix} weights, spectral gap "
                f"{setup.plan.gap:.4g}")

    def audit_worlds(self, setup: GossipSgdSetup, node: int) -> tuple[Any, Any]:
        """``node``'s rows replaced by a canary row whose clipped gradient points one way
        or the other (:func:`netdp.learning.training_data.canary`)."""

        return canary_worlds(setup.data, node)

    def view(self, setup: GossipSgdSetup, trace: Trace, streams: Streams, observer: int) -> View:
        """The states of the observer's neighbours at every gossip step of every round
        (first regime), and the observer's own final model."""
        adj = setup.plan.adj
        senders = adj.indices[adj.indptr[observer]:adj.indptr[observer + 1]]
        watch = np.append(senders, observer)
        cal = next(iter(setup.calibrations.values()))
        outcome, seen = self._gd(setup, streams, cal, watch)
        assert seen is not None
        rounds, states = seen.shape[0], seen.shape[1]
        step = np.repeat(np.arange(rounds * states), senders.size)
        received = seen[:, :, :-1].reshape(-1, seen.shape[-1])
        return View(observer, np.tile(senders, rounds * states), step, received,
                    outcome.models[[observer]])

    def work(self, config: SimulationConfig, nodes: int,
             steps: int) -> dict[str, tuple[float, str]]:
        parts = gossip_work(nodes, steps)
        k = config.section_as(GossipSgdConfig).gossip_steps  # None: a few (Muffliato's rule)
        if k:  # K gossip states after each of the R rounds (measured: 10-20 us each at n = 6)
            given = "gossip-steps" if config.steps is None or k >= config.steps else "steps"
            parts["the gossip states"] = (float(steps) * k * (GOSSIP_STATE_SECONDS
                                                               + 5e-7 * nodes), given)
        return parts

    def footprint(self, config: SimulationConfig, nodes: int,
                  steps: int) -> dict[str, tuple[float, str]]:
        dense = 8.0 * nodes * nodes * 4 if nodes <= 4096 else 0.0
        return {"the models and gradients": (8.0 * 64 * nodes * 6, "nodes"),
                "the dense accounting": (dense, "nodes")}
