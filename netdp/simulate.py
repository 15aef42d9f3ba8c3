"""One simulation: config -> topology -> walk trace -> protocol outcome -> result."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

from netdp import __version__, engine, mechanisms, seeding
from netdp.config import SimulationConfig, parse_coalition
from netdp.data import categories, check_categories, check_range, read_column, synthetic
from netdp.engine.trace import Trace
from netdp.errors import check
from netdp.privacy import bounds, shuffle_tracker, tracker
from netdp.protocols import histogram
from netdp.protocols.summation import (
    SumOutcome,
    randomized_sum,
    ring_noise_mask,
    ring_sum,
    walk_sum,
)
from netdp.topology import Topology, build

TIMING_FIELDS = ("runtime_s",)


@dataclass
class Result:
    """Everything one simulation reports (see :meth:`to_dict` for the JSON shape)."""

    config: SimulationConfig
    topology: Topology
    mechanism: mechanisms.AdditiveNoise | mechanisms.FrequencyOracle
    engine: str
    outcomes: list[SumOutcome] | list[histogram.HistOutcome]
    hops: list[int]
    runtimes: list[float]
    ldp_std: float | None = None
    privacy: dict | None = None
    pairs: np.ndarray | None = None
    ldp_mse: float | None = None

    @property
    def estimate(self) -> float:
        """Mean of the runs' estimates."""
        return float(np.mean([o.estimate for o in self.outcomes]))

    def to_dict(self) -> dict:
        """The JSON object of ``netdp simulate --json``."""
        if self.config.task == "histogram":
            return self._histogram_dict()
        runs = [{"run": r, "estimate": o.estimate, "abs_error": o.abs_error, "hops": h,
                 "runtime_s": t}
                for r, (o, h, t) in enumerate(zip(self.outcomes, self.hops, self.runtimes,
                                                            strict=True))]
        first = self.outcomes[0]
        utility = {"quantity": "mean", "estimate": self.estimate, "truth": first.truth,
                   "abs_error": float(np.mean([o.abs_error for o in self.outcomes])),
                   "theoretical_std": first.theoretical_std,
                   "empirical_std": (float(np.std([o.estimate for o in self.outcomes], ddof=1))
                                     if len(self.outcomes) > 1 else None),
                   "ldp_std": self.ldp_std}
        return {"version": __version__, "seed": self.config.seed,
                "config": self.config.to_dict(), "engine": self.engine,
                "topology": self.topology.describe(), "mechanism": self.mechanism.describe(),
                "hops": int(sum(self.hops)), "runtime_s": float(sum(self.runtimes)),
                "utility": utility, "privacy": self.privacy, "runs": runs}


    def _histogram_dict(self) -> dict:
        outs = self.outcomes
        runs = [{"run": r, "l1": o.l1, "linf": o.linf, "mse": o.mse, "hops": h,
                 "runtime_s": t}
                for r, (o, h, t) in enumerate(zip(outs, self.hops, self.runtimes,
                                                            strict=True))]
        estimate = np.mean([o.estimate for o in outs], axis=0)
        if self.config.project:
            estimate = histogram.project_simplex(estimate)
        truth = outs[0].truth
        utility = {"quantity": "frequencies", "estimate": estimate.tolist(),
                   "truth": truth.tolist(),
                   "l1": float(np.mean([o.l1 for o in outs])),
                   "linf": float(np.mean([o.linf for o in outs])),
                   "mse": float(np.mean([o.mse for o in outs])),
                   "theoretical_mse": float(np.mean(
                       self.mechanism.variance(truth, outs[0].reports))),
                   "ldp_mse": self.ldp_mse, "reports": outs[0].reports,
                   "dummies": outs[0].dummies, "projected": self.config.project}
        return {"version": __version__, "seed": self.config.seed,
                "config": self.config.to_dict(), "engine": self.engine,
                "topology": self.topology.describe(), "mechanism": self.mechanism.describe(),
                "hops": int(sum(self.hops)), "runtime_s": float(sum(self.runtimes)),
                "utility": utility, "privacy": self.privacy, "runs": runs}


def resolve(config: SimulationConfig) -> tuple[SimulationConfig, Topology, np.ndarray]:
    """Fill every ``None`` of the config and build the topology and the data."""
    seed = seeding.fresh_seed() if config.seed is None else config.seed
    values = None
    nodes = config.nodes
    if config.data_file is not None:
        values = read_column(config.data_file, config.column)
        check(nodes is None or nodes == values.size, "nodes",
              f"{config.data_file} holds {values.size} values; omit --nodes or pass "
              f"--nodes {values.size}")
        nodes = values.size
    topo = build(config.topology, nodes, self_moves=config.self_moves,
                 directed=config.directed, seed=seeding.seed_sequence(seed, "topology"))
    source = config.data_file or f"--data {config.data}"
    if config.task == "histogram":
        if values is None:
            values = categories(config.data, topo.n, config.domain,
                                seeding.generator(seed, "data"))
        values = check_categories(values, config.domain, source)
    elif values is None:
        values = synthetic(config.data, topo.n, seeding.generator(seed, "data"),
                           config.low, config.high)
    check(values.size == topo.n, "nodes",
          f"the data holds {values.size} values for {topo.n} nodes")
    if config.task == "sum":
        check_range(values, config.low, config.high, source)
    walk = "simple" if topo.kind != "graph" else engine.resolve_walk(topo, config.walk)
    steps = config.rounds * topo.n if topo.kind == "ring" else (config.steps or 100 * topo.n)
    chosen = engine.choose(config.engine, config.tokens, config.service_time)
    dummies = config.dummies
    if config.task == "histogram" and topo.kind == "ring" and dummies is None:
        dummies = topo.n - 1
    resolved = config.replace(seed=seed, nodes=topo.n, steps=None if topo.kind == "ring"
                              else steps, walk=walk, engine=chosen,
                              mechanism=config.resolved_mechanism, dummies=dummies,
                              accountants=config.resolved_accountants)
    return resolved, topo, values


def simulate(config: SimulationConfig, progress: bool | None = None,
             keep_pairs: bool = False) -> Result:
    """Run ``config.runs`` independent walks of one configuration.

    Parameters
    ----------
    config
        The run's parameters; ``None`` fields are resolved and recorded in the result.
    progress
        Show a progress bar over runs (``None``: on a terminal, for several runs).
    keep_pairs
        Also return the ``n × n`` matrix of pairwise losses (first accountant, mean over
        runs) in ``Result.pairs``; up to n = 10 000.
    """
    if config.task == "sgd":
        from netdp.training import simulate_sgd

        return simulate_sgd(config, progress, keep_pairs)
    config, topo, values = resolve(config)
    seed = config.seed
    if config.task == "histogram":
        mech = _oracle(config, 0)
    elif config.mechanism in ("gaussian", "laplace"):
        mech = mechanisms.additive(config.mechanism, config.epsilon,
                                   config.delta if config.mechanism == "gaussian" else 0.0,
                                   config.high - config.low, config.calibration)
    else:
        mech = mechanisms.numeric(config.mechanism, config.epsilon)
    router = engine.Router(topo, config.walk)
    latency = engine.parse_latency(config.latency)
    steps = config.rounds * topo.n if topo.kind == "ring" else config.steps
    if keep_pairs:
        check(topo.n <= tracker.MATRIX_LIMIT, "pairs-out",
              f"the full matrix is offered up to n = {tracker.MATRIX_LIMIT} (n = {topo.n})")
        check(config.coalition is None, "pairs-out", "a coalition observes as one: no matrix")
        check(bool(config.accountants), "pairs-out", "the matrix comes from pairwise "
              "tracking: drop --no-tracking")
        check(isinstance(mech, mechanisms.AdditiveNoise | mechanisms.FrequencyOracle),
              "pairs-out", f"{config.mechanism} reports are not tracked pair by pair")
        tracked = topo.kind == "ring" or topo.kind == "complete"
        check(tracked, "topology", "pairwise losses of this task are tracked on the ring "
              "and the complete graph (and on any graph for --task sgd)")
    privacy = PrivacyTracking(config, topo, mech, steps, keep_pairs)
    outcomes, hops, runtimes = [], [], []
    bar = tqdm(range(config.runs), desc="runs", unit="run",
               disable=(None if config.runs > 1 else True) if progress is None
               else not progress)
    for run in bar:
        start = time.perf_counter()
        walk_rngs = [seeding.generator(seed, "walk", run, k) for k in range(config.tokens)]
        lat_rngs = [seeding.generator(seed, "latency", run, k) for k in range(config.tokens)]
        trace = engine.walk(config.engine, router, steps, walk_rngs, latency, lat_rngs,
                            config.service_time)
        noise_rng = seeding.generator(seed, "noise", run)
        if config.task == "histogram":
            oracle = mech if run == 0 else _oracle(config, run)
            if topo.kind == "ring":
                outcome = histogram.ring_histogram(trace, values, oracle, noise_rng,
                                                   config.dummies)
            else:
                outcome = histogram.walk_histogram(trace, values, oracle, noise_rng)
        elif not isinstance(mech, mechanisms.AdditiveNoise):
            outcome = randomized_sum(trace, values, mech, noise_rng, config.low, config.high,
                                     topo, config.walk)
        elif topo.kind == "ring":
            outcome = ring_sum(trace, values, mech, noise_rng, config.noise_every_hop)
        else:
            outcome = walk_sum(trace, values, mech, noise_rng, topo, config.walk)
        privacy.add(run, trace)
        outcomes.append(outcome)
        hops.append(trace.hops)
        runtimes.append(time.perf_counter() - start)
    if config.task == "histogram":
        ldp_mse = histogram.ldp_mse(mech, outcomes[0].truth, topo.n)
        return Result(config, topo, mech, config.engine, outcomes, hops, runtimes,
                      privacy=privacy.report(), pairs=privacy.matrix(), ldp_mse=ldp_mse)
    additive = isinstance(mech, mechanisms.AdditiveNoise)
    ldp_std = mech.std / math.sqrt(steps) if topo.kind == "ring" and additive else None
    return Result(config, topo, mech, config.engine, outcomes, hops, runtimes, ldp_std,
                  privacy.report(), privacy.matrix())


def _oracle(config: SimulationConfig, run: int) -> mechanisms.FrequencyOracle:
    """The run's frequency oracle; cms, hcms and rappor draw fresh public hash functions
    per run, so their estimates are unbiased over runs (not only over hash choices)."""
    hash_seed = 0
    if config.mechanism in mechanisms.HASHED:
        hash_seed = int(seeding.generator(config.seed, "hashes", run).integers(2**31))
    return mechanisms.frequency_oracle(config.mechanism, config.local_epsilon, config.domain,
                                       hash_seed)


class PrivacyTracking:
    """Collects the pairwise losses of each run's trace and reports them.

    The ring (AISTATS Alg. 1) and the complete graph (Alg. 3, the reference tracker) are
    tracked pair by pair; on other graphs only the LDP baseline is reported.
    """

    def __init__(self, config: SimulationConfig, topo: Topology,
                 mech: mechanisms.AdditiveNoise, steps: int, keep_pairs: bool) -> None:
        self.config, self.topo, self.mech, self.steps = config, topo, mech, steps
        self.keep_pairs = keep_pairs
        self.losses: dict[str, list[tracker.PairLosses]] = {a: [] for a in config.accountants}
        self.ldp: list[np.ndarray] = []
        self.sum_matrix: np.ndarray | None = None
        self.coalitions: list[list[int]] = []

    def _coalition(self, run: int) -> list[int] | None:
        if self.config.coalition is None:
            return None
        kind, spec = parse_coalition(self.config.coalition)
        n = self.topo.n
        if kind == "random":
            check(spec < n, "coalition", f"random:{spec} needs fewer than n = {n} members")
            rng = seeding.generator(self.config.seed, "coalition", run)
            return sorted(rng.choice(n, size=spec, replace=False).tolist())
        check(max(spec) < n, "coalition", f"node ids must lie in 0..{n - 1}")
        return sorted(set(spec))

    def add(self, run: int, trace: Trace) -> None:
        """Account one run's walk."""
        cfg, topo = self.config, self.topo
        eps0, delta = cfg.local_epsilon, cfg.delta
        coalition = self._coalition(run)
        if coalition is not None:
            self.coalitions.append(coalition)
        if cfg.task == "histogram":
            self._add_histogram(trace, coalition)
        elif not isinstance(self.mech, mechanisms.AdditiveNoise):
            self.ldp.append(tracker.ldp_losses(trace, eps0, delta))
        elif topo.kind == "ring":
            k = np.full(topo.n, cfg.rounds, dtype=float)
            self.ldp.append(np.asarray(bounds.opti(eps0, delta, k)))
            mask = ring_noise_mask(topo.n, self.steps, cfg.noise_every_hop)
            for name in self.losses:
                self.losses[name].append(tracker.ring_losses(topo.n, cfg.rounds, mask, eps0,
                                                             delta, coalition))
        else:
            self.ldp.append(tracker.ldp_losses(trace, eps0, delta))
            if topo.kind != "complete":
                return
            z = getattr(self.mech, "sigma", math.nan) / self.mech.sensitivity
            for name in self.losses:
                self.losses[name].append(tracker.walk_losses(
                    trace, eps0, delta, z, name, coalition, keep_pairs=self.keep_pairs))
        if self.keep_pairs:
            first = self.losses[self.config.accountants[0]][-1].matrix()
            self.sum_matrix = first if self.sum_matrix is None else self.sum_matrix + first

    def _add_histogram(self, trace: Trace, coalition: list[int] | None) -> None:
        cfg, topo = self.config, self.topo
        eps0, delta = cfg.local_epsilon, cfg.delta
        self.ldp.append(tracker.ldp_losses(trace, eps0, delta))
        if topo.kind == "graph":
            return
        for name in self.losses:
            if topo.kind == "ring":
                losses = shuffle_tracker.ring_histogram_losses(
                    topo.n, cfg.rounds, eps0, delta, cfg.shuffle, cfg.domain, cfg.dummies,
                    coalition)
            else:
                losses = shuffle_tracker.walk_histogram_losses(
                    trace, eps0, delta, cfg.shuffle, cfg.domain, coalition, self.keep_pairs)
            self.losses[name].append(losses)

    def matrix(self) -> np.ndarray | None:
        """Mean pairwise matrix over runs (first accountant), if kept."""
        if self.sum_matrix is None:
            return None
        return self.sum_matrix / len(self.ldp)

    def report(self) -> dict:
        """The ``privacy`` section of the JSON result."""
        with np.errstate(over="ignore"):  # a huge eps0 overflows DRV to inf, which is right
            return self._report()

    def _report(self) -> dict:
        cfg, topo = self.config, self.topo
        ldp = np.concatenate(self.ldp)
        out: dict = {"epsilon0": cfg.local_epsilon, "delta0": cfg.delta,
                     "ldp": {"method": "min(k eps0, DRV(eps0, delta, k)) over a node's "
                                       "k contributions", "mean": float(ldp.mean()),
                             "min": float(ldp.min()), "max": float(ldp.max())}}
        if not isinstance(self.mech, mechanisms.AdditiveNoise | mechanisms.FrequencyOracle):
            out["theory"] = {}
            out["note"] = (f"{cfg.mechanism} reports replace the values at every hop; "
                           "pairwise tracking of their sums is not implemented, only the "
                           "LDP baseline is reported")
        elif cfg.task == "histogram":
            out["shuffle_bound"] = cfg.shuffle
            out["theory"] = {}
            if topo.kind == "ring":
                out["theory"]["histogram-ring"] = shuffle_tracker.ring_histogram_theory(
                    topo.n, cfg.rounds, cfg.local_epsilon, cfg.delta, cfg.shuffle, cfg.domain)
            elif topo.kind == "graph":
                out["note"] = ("pairwise tracking covers the ring and the complete graph; "
                               "only the LDP baseline is reported on other graphs")
        elif topo.kind == "ring":
            out["theory"] = {name: float(curve(n=topo.n, K=cfg.rounds, eps0=cfg.epsilon,
                                               delta=cfg.delta))
                             for name, curve in bounds.CURVES.items() if name.startswith("ring")}
        elif topo.kind == "complete":
            out["theory"] = {name: float(curve(n=topo.n, T=self.steps, eps0=cfg.epsilon,
                                               delta=cfg.delta))
                             for name, curve in bounds.CURVES.items()
                             if name.startswith("complete")}
        else:
            out["theory"] = {}
            out["note"] = ("pairwise tracking covers the ring and the complete graph; "
                           "only the LDP baseline is reported on other graphs")
        out["empirical"] = [tracker.summarize(runs) for runs in self.losses.values() if runs]
        if not cfg.accountants:
            out["note"] = "pairwise tracking skipped (no accountant)"
        if self.coalitions:
            out["coalitions"] = self.coalitions
        return out
