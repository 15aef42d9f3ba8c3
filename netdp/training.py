"""One decentralized-SGD simulation: data → walk → one learning curve per privacy regime.

All regimes of a run share the walk, the data split and the standard normals of the
noise (common random numbers); they differ only in σ, calibrated per regime at the same
(ε, δ) by :mod:`netdp.privacy.sgd`. The pairwise tracker then reads the walk that was run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

from netdp import __version__, engine, seeding
from netdp.config import SimulationConfig
from netdp.errors import check
from netdp.learning import datasets
from netdp.learning.datasets import Split
from netdp.learning.models import Model, solve
from netdp.privacy import sgd as sgd_privacy
from netdp.privacy.tracker import MATRIX_LIMIT, QUANTILES
from netdp.protocols.sgd import SgdOutcome, learning_rates, walk_sgd
from netdp.topology import Topology, build

DEFAULT_NODES = 2000
STEPS_PER_NODE = 10
TRACK_LIMIT = MATRIX_LIMIT


@dataclass
class SgdResult:
    """Everything one SGD simulation reports (see :meth:`to_dict`)."""

    config: SimulationConfig
    topology: Topology
    data: Split
    model: Model
    calibrations: dict[str, sgd_privacy.Calibration]
    outcomes: list[dict[str, SgdOutcome]]
    optimum: dict
    hops: list[int]
    runtimes: list[float]
    privacy: dict
    pairs: np.ndarray | None = None

    def curves(self) -> dict:
        """Objective and test score against steps, mean over runs, per regime."""
        steps = self.outcomes[0][self.config.regimes[0]].steps
        out: dict = {"steps": steps.tolist()}
        for regime in self.config.regimes:
            out[regime] = {
                "objective": np.mean([o[regime].objective for o in self.outcomes], 0).tolist(),
                "score": np.mean([o[regime].score for o in self.outcomes], 0).tolist()}
        return out

    def curve_rows(self) -> list[dict]:
        """The curves as tidy rows: regime, step, objective, score (one per point)."""
        curves = self.curves()
        return [{"regime": r, "step": s, "objective": o, self.model.metric: a,
                 "sigma": self.calibrations[r].sigma, "epsilon": self.calibrations[r].epsilon}
                for r in self.config.regimes
                for s, o, a in zip(curves["steps"], curves[r]["objective"], curves[r]["score"],
                                   strict=True)]

    def to_dict(self) -> dict:
        """The JSON object of ``netdp simulate --task sgd --json``."""
        cfg = self.config
        utility: dict = {"metric": self.model.metric, "optimum": self.optimum}
        for regime in cfg.regimes:
            outs = [o[regime] for o in self.outcomes]
            cal = self.calibrations[regime]
            utility[regime] = {
                "sigma": cal.sigma, "epsilon": cal.epsilon, "delta": cal.delta,
                "accountant": cal.accountant,
                "final_objective": float(np.mean([o.final_objective for o in outs])),
                "final_accuracy": float(np.mean([o.final_score for o in outs])),
                "max_contributions": int(max(o.contributions.max() for o in outs))}
        runs = [{"run": r, "hops": h, "runtime_s": t,
                 **{f"{g}_final_objective": o[g].final_objective for g in cfg.regimes}}
                for r, (o, h, t) in enumerate(zip(self.outcomes, self.hops, self.runtimes,
                                                            strict=True))]
        return {"version": __version__, "seed": cfg.seed, "config": cfg.to_dict(),
                "engine": cfg.engine, "topology": self.topology.describe(),
                "dataset": self.data.describe(),
                "model": {"name": self.model.name, "l2": self.model.l2,
                          "lipschitz": cfg.lipschitz, "lr": cfg.lr,
                          "lr_schedule": cfg.lr_schedule, "radius": cfg.radius},
                "hops": int(sum(self.hops)), "runtime_s": float(sum(self.runtimes)),
                "utility": utility, "privacy": self.privacy, "curves": self.curves(),
                "runs": runs}


def resolve(config: SimulationConfig) -> tuple[SimulationConfig, Topology, Split]:
    """Fill the ``None`` fields, build the topology and split the data over its nodes."""
    seed = seeding.fresh_seed() if config.seed is None else config.seed
    rng = seeding.generator(seed, "data")
    X, y, name = datasets.load(config.dataset, config.model, rng, config.target)
    rows = y.size - int(round(config.test_fraction * y.size))
    nodes = config.nodes
    if nodes is None and config.topology in ("complete", "ring"):
        nodes = min(DEFAULT_NODES, rows)
    topo = build(config.topology, nodes, self_moves=config.self_moves,
                 directed=config.directed, seed=seeding.seed_sequence(seed, "topology"))
    data = datasets.split(X, y, topo.n, rng, name, config.test_fraction, config.skew)
    walk = "simple" if topo.kind != "graph" else engine.resolve_walk(topo, config.walk)
    steps = config.rounds * topo.n if topo.kind == "ring" else (
        config.steps or STEPS_PER_NODE * topo.n)
    chosen = engine.choose(config.engine, config.tokens, config.service_time)
    resolved = config.replace(seed=seed, nodes=topo.n, walk=walk, engine=chosen,
                              steps=None if topo.kind == "ring" else steps,
                              mechanism="gaussian", accountants=config.resolved_accountants)
    return resolved, topo, data


def simulate_sgd(config: SimulationConfig, progress: bool | None = None,
                 keep_pairs: bool = False) -> SgdResult:
    """Run ``config.runs`` walks of Algorithm 5, each once per regime of ``config.regimes``.

    ``keep_pairs`` also returns the ``n × n`` matrix of the network regime's pairwise ε
    (first run) in ``SgdResult.pairs``.
    """
    config, topo, data = resolve(config)
    seed, n = config.seed, topo.n
    steps = config.rounds * n if topo.kind == "ring" else config.steps
    model = Model(config.model, config.l2)
    router = engine.Router(topo, config.walk)
    latency = engine.parse_latency(config.latency)
    contributions = float(config.max_contributions or steps / n)
    radius = np.inf if config.radius is None else config.radius
    rates = learning_rates(config.lr, config.lr_schedule, steps, n)
    tracking = bool(config.accountants)
    if tracking or keep_pairs:
        check(n <= TRACK_LIMIT, "nodes", f"pairwise sgd tracking holds an n x n matrix: up "
              f"to n = {TRACK_LIMIT} (got {n}); pass --no-tracking for larger runs")
    calibrations: dict[str, sgd_privacy.Calibration] = {}
    outcomes, hops, runtimes, tracked = [], [], [], []
    pairs = None
    bar = tqdm(range(config.runs), desc="runs", unit="run",
               disable=(None if config.runs > 1 else True) if progress is None
               else not progress)
    for run in bar:
        start = time.perf_counter()
        walk_rngs = [seeding.generator(seed, "walk", run, 0)]
        lat_rngs = [seeding.generator(seed, "latency", run, 0)]
        trace = engine.walk(config.engine, router, steps, walk_rngs, latency, lat_rngs,
                            config.service_time)
        holders = trace.holders[0]
        coef = None  # the walk's pair coefficients: tracking, and calibration off the clique
        if tracking or keep_pairs or (run == 0 and topo.kind != "complete"):
            coef = sgd_privacy.pair_coefficients(holders, n)
        if run == 0:
            calibrations = _calibrate(config, topo, steps, contributions, coef)
        by_regime = {}
        for regime in config.regimes:
            by_regime[regime] = walk_sgd(
                holders, data, model, calibrations[regime].sigma, config.lipschitz, rates,
                seeding.generator(seed, "noise", run), radius, config.max_contributions,
                config.evals)
        outcomes.append(by_regime)
        if coef is not None and (tracking or keep_pairs):
            counts = by_regime[config.regimes[0]].contributions
            tracked.append((coef, counts))
            if keep_pairs and run == 0:
                pairs = _pair_matrix(coef, calibrations, config)
        hops.append(trace.hops)
        runtimes.append(time.perf_counter() - start)
    w_opt, f_opt = solve(model, data.X, data.y)
    optimum = {"objective": f_opt, "score": float(model.score(w_opt, data.X_test,
                                                              data.y_test)),
               "solver": "scipy L-BFGS-B on the pooled training rows (non-private)"}
    privacy = _privacy_report(config, calibrations, tracked)
    return SgdResult(config, topo, data, model, calibrations, outcomes, optimum, hops,
                     runtimes, privacy, pairs)


def _calibrate(config: SimulationConfig, topo: Topology, steps: int, contributions: float,
               coef: np.ndarray | None) -> dict[str, sgd_privacy.Calibration]:
    n = topo.n
    if topo.kind == "complete":
        per_update = sgd_privacy.expected_cost(sgd_privacy.hit_probability(n, topo.self_moves))
    else:  # mean over ordered pairs of the walk's coefficients, per update
        per_update = float(coef.sum() / (n * (n - 1)) / (steps / n))
    out = {}
    for regime in config.regimes:
        if regime == "nonprivate":
            out[regime] = sgd_privacy.Calibration(regime, 0.0, float("inf"), config.delta,
                                                  None, "none (no noise)")
        else:
            out[regime] = sgd_privacy.calibrate(regime, config.epsilon, config.delta,
                                                config.lipschitz, n, steps, contributions,
                                                per_update)
    return out


def _pair_epsilons(coef: np.ndarray, sigma: float, clip_norm: float,
                   delta: float) -> np.ndarray:
    rho = 2.0 * clip_norm**2 * coef / sigma**2
    return sgd_privacy.epsilon_upper(rho, delta)


def _pair_matrix(coef, calibrations, config) -> np.ndarray | None:
    regime = "network" if "network" in calibrations else next(
        (r for r in config.regimes if r != "nonprivate"), None)
    if regime is None:
        return None
    eps = _pair_epsilons(coef, calibrations[regime].sigma, config.lipschitz, config.delta)
    np.fill_diagonal(eps, np.nan)
    return eps


def _privacy_report(config: SimulationConfig, calibrations: dict,
                    tracked: list[tuple[np.ndarray, np.ndarray]]) -> dict:
    out: dict = {"delta": config.delta, "target_epsilon": config.epsilon,
                 "calibration": {r: c.to_dict() for r, c in calibrations.items()}}
    if not tracked:
        out["note"] = "pairwise tracking skipped (no accountant)"
        out["empirical"] = []
        return out
    n = tracked[0][0].shape[0]
    off = ~np.eye(n, dtype=bool)
    empirical = []
    for regime, cal in calibrations.items():
        if regime not in ("local", "network"):  # central and nonprivate have no walk view
            continue
        eps = np.concatenate([_pair_epsilons(c[off], cal.sigma, config.lipschitz,
                                             config.delta) for c, _ in tracked])
        ldp = np.concatenate([_pair_epsilons(k.astype(float), cal.sigma, config.lipschitz,
                                             config.delta) for _, k in tracked])
        row = {"regime": regime, "accountant": "rdp", "delta": config.delta,
               "pairs": int(eps.size), "mean": float(eps.mean()), "min": float(eps.min()),
               "max": float(eps.max()),
               **{f"q{round(q * 100):d}": float(np.quantile(eps, q)) for q in QUANTILES},
               "above_target": float(np.mean(eps > config.epsilon)),
               "ldp": {"mean": float(ldp.mean()), "min": float(ldp.min()),
                       "max": float(ldp.max())}}
        empirical.append(row)
    out["empirical"] = empirical
    out["method"] = ("per pair (u, v): RDP sum over u's updates of 2 alpha L^2 / (sigma^2 j), "
                     "j = steps until v next holds the model; converted at delta; ldp: a "
                     "node's actual updates, each fully exposed")
    return out
