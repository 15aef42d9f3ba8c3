"""One simulation: config -> topology -> walk trace -> protocol outcome -> result."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from tqdm.auto import tqdm

from netdp import __version__, engine, mechanisms, seeding
from netdp.config import SimulationConfig
from netdp.data import check_range, read_column, synthetic
from netdp.errors import check
from netdp.protocols.summation import SumOutcome, ring_sum, walk_sum
from netdp.topology import Topology, build

TIMING_FIELDS = ("runtime_s",)


@dataclass
class Result:
    """Everything one simulation reports (see :meth:`to_dict` for the JSON shape)."""

    config: SimulationConfig
    topology: Topology
    mechanism: mechanisms.AdditiveNoise
    engine: str
    outcomes: list[SumOutcome]
    hops: list[int]
    runtimes: list[float]
    ldp_std: float | None = None
    extra: dict = field(default_factory=dict)

    @property
    def estimate(self) -> float:
        """Mean of the runs' estimates."""
        return float(np.mean([o.estimate for o in self.outcomes]))

    def to_dict(self) -> dict:
        """The JSON object of ``netdp simulate --json``."""
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
                "utility": utility, "runs": runs, **self.extra}


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
    if values is None:
        values = synthetic(config.data, topo.n, seeding.generator(seed, "data"),
                           config.low, config.high)
    check(values.size == topo.n, "nodes",
          f"the data holds {values.size} values for {topo.n} nodes")
    check_range(values, config.low, config.high, config.data_file or f"--data {config.data}")
    walk = "simple" if topo.kind != "graph" else engine.resolve_walk(topo, config.walk)
    steps = config.rounds * topo.n if topo.kind == "ring" else (config.steps or 100 * topo.n)
    chosen = engine.choose(config.engine, config.tokens, config.service_time)
    resolved = config.replace(seed=seed, nodes=topo.n, steps=None if topo.kind == "ring"
                              else steps, walk=walk, engine=chosen)
    return resolved, topo, values


def simulate(config: SimulationConfig, progress: bool | None = None) -> Result:
    """Run ``config.runs`` independent walks of one configuration.

    Parameters
    ----------
    config
        The run's parameters; ``None`` fields are resolved and recorded in the result.
    progress
        Show a progress bar over runs (``None``: on a terminal, for several runs).
    """
    config, topo, values = resolve(config)
    seed = config.seed
    mech = mechanisms.additive(config.mechanism, config.epsilon,
                               config.delta if config.mechanism == "gaussian" else 0.0,
                               config.high - config.low, config.calibration)
    router = engine.Router(topo, config.walk)
    latency = engine.parse_latency(config.latency)
    steps = config.rounds * topo.n if topo.kind == "ring" else config.steps
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
        if topo.kind == "ring":
            outcome = ring_sum(trace, values, mech, noise_rng, config.noise_every_hop)
        else:
            outcome = walk_sum(trace, values, mech, noise_rng, topo, config.walk)
        outcomes.append(outcome)
        hops.append(trace.hops)
        runtimes.append(time.perf_counter() - start)
    ldp_std = mech.std / math.sqrt(steps) if topo.kind == "ring" else None
    return Result(config, topo, mech, config.engine, outcomes, hops, runtimes, ldp_std)
