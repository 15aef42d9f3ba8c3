"""The preparation steps every task shares: seed, data file, topology, walk rule, steps,
engine, so that a task's ``prepare`` reads as: load the data, build the graph, pick the
randomizer.
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import numpy as np

from netdp.core import seeding
from netdp.core.errors import check
from netdp.core.sections import COLUMN, DATA_FILE
from netdp.core.setup import Setup
from netdp.core.simulation_config import SimulationConfig
from netdp.data.values import read_column
from netdp.engine import choose
from netdp.engine.faults import from_config
from netdp.graphs.node_names import check_named_nodes
from netdp.graphs.time_varying import build_time_varying, names_time_varying
from netdp.graphs.topologies import Topology, build


def range_worlds(setup: Setup, node: int, scale: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The values with ``node``'s at the low and at the high end of the range (``low``,
    ``high``; times ``scale``, the records a node adds up): the neighbouring worlds of a
    sum's audit, the farthest apart."""
    worlds = []
    for end in ("low", "high"):
        data = np.array(setup.data, dtype=float, copy=True)
        data[node] = scale * setup.config.get(end)
        worlds.append(data)
    return worlds[0], worlds[1]


def with_seed(config: SimulationConfig) -> SimulationConfig:
    """The config with its seed drawn from the OS when it has none."""
    return config if config.seed is not None else config.replace(seed=seeding.fresh_seed())


def values_from_file(config: SimulationConfig) -> tuple[np.ndarray | None, int | None]:
    """The nodes' values from the section's ``data_file`` (column ``column``), and so the
    number of nodes; ``(None, config.nodes)`` without a file."""
    path = config.get(DATA_FILE)
    if path is None:
        return None, config.nodes
    values = read_column(path, config.get(COLUMN))
    check(config.nodes is None or config.nodes == values.size, "nodes",
          f"{path} holds {values.size} values; omit --nodes or pass --nodes {values.size}")
    return values, values.size


def topology_source(config: SimulationConfig) -> Any:
    """What the config's graph is built from: the graph given from Python
    (``config.graph``), else the ``topology`` name or file."""
    return config.topology if config.graph is None else config.graph


def build_topology(config: SimulationConfig, nodes: int | None) -> Topology:
    """The config's graph on ``nodes`` nodes (``None``: the topology's own size).

    A time-varying graph (:mod:`netdp.graphs.time_varying`: snapshots from Python, a
    contact trace, a folder of graph files) comes with the config's schedule
    (``snapshot_period``, ``after``); it walks as a topology of kind ``graph`` (the
    attributes the walk kinds read), and the router and the walk tracker use its
    snapshots."""
    topology = _built(config, nodes)
    check_named_nodes(config, topology)  # a coalition's labels: refused before any run
    return topology


def _built(config: SimulationConfig, nodes: int | None) -> Topology:
    """The graph of :func:`build_topology`, its named nodes not yet checked."""
    assert config.seed is not None
    source = topology_source(config)
    if names_time_varying(source, config.graph_format):
        tv = build_time_varying(source, period=config.snapshot_period,
                                after=config.after_snapshots,  # type: ignore[arg-type]
                                directed=config.directed,
                                weight=None if config.graph is not None else config.weight,
                                fmt=config.graph_format)
        tv = dataclasses.replace(tv, period=config.snapshot_period,
                                 after=config.after_snapshots)  # type: ignore[arg-type]
        check(nodes is None or nodes == tv.n, "nodes",
              f"{tv.name} has {tv.n} nodes; omit --nodes or pass --nodes {tv.n}")
        return cast(Topology, tv)
    return build(topology_source(config), nodes, self_moves=config.self_moves,
                 directed=config.directed, seed=seeding.seed_sequence(config.seed, "topology"),
                 weight=None if config.graph is not None else config.weight,
                 fmt=config.graph_format)


def steps_of(config: SimulationConfig, topology: Topology, steps_per_node: int) -> int:
    """The steps per token of the config's walk on ``topology`` (``rounds · n`` on the
    ring, else ``steps`` or ``steps_per_node · n``)."""
    return topology.walk_kind.steps_per_token(n=topology.n, rounds=config.rounds,
                                              steps=config.steps,
                                              steps_per_node=steps_per_node)


def resolve(config: SimulationConfig, topology: Topology, steps_per_node: int,
            accountants: tuple[str, ...], **section: Any) -> tuple[SimulationConfig, int]:
    """The config with nodes, steps, walk, engine and accountants resolved, and the steps
    per token (``rounds · n`` on the ring, else ``steps`` or ``steps_per_node · n``)."""
    n, kind = topology.n, topology.walk_kind
    steps = steps_of(config, topology, steps_per_node)
    walk = kind.walk_rule(topology, config.walk)

    engine = choose(config.engine, config.tokens, config.service_time,
                    from_config(config) is not None)
    chosen = accountants if config.accountants is None else config.accountants
    resolved = config.replace(nodes=n, steps=None if kind.public_schedule else steps, walk=walk,
                              engine=engine, accountants=tuple(chosen), **section)
    return resolved, steps
