"""What every task works with: the prepared run, its random streams, an observer's view.

Also the resolution steps that every task shares (seed, topology, walk rule, steps,
engine), so that a task's ``prepare`` reads as: load the data, build the graph, pick the
randomizer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from netdp import seeding
from netdp.config import SimulationConfig

if TYPE_CHECKING:
    from netdp.topology import Topology


@dataclass(frozen=True, eq=False)
class Setup:
    """A prepared simulation: the resolved config, the graph, the data and the randomizer.

    Attributes
    ----------
    config
        The resolved config (seed, nodes, steps, walk, engine, accountants filled in).
    topology
        The graph the token walks.
    steps
        Contributions per token (``rounds · n`` on the ring).
    data
        The task's data (the nodes' values, categories, or a training split).
    mechanism
        The local randomizer (``None`` where the task calibrates its noise itself).
    memo
        Figures a task computes once per simulation from its first run (sgd's σ).
    """

    config: SimulationConfig
    topology: Topology
    steps: int
    data: Any
    mechanism: Any = None
    memo: dict[str, Any] = field(default_factory=dict)

    @property
    def seed(self) -> int:
        """The run's seed."""
        assert self.config.seed is not None
        return self.config.seed


@dataclass(frozen=True)
class Streams:
    """The random streams of one run: one ``Generator`` per component, from the seed."""

    seed: int
    run: int

    def generator(self, component: str, *key: int) -> np.random.Generator:
        """The run's stream of ``component`` (``noise``, ``hashes``, ``coalition``, ...)."""
        return seeding.generator(self.seed, component, self.run, *key)


@dataclass(frozen=True, eq=False)
class View:
    """What one observer sees of one run: the token as it reaches the observer.

    Attributes
    ----------
    observer
        The observing node.
    token, step
        For each visit, the token and its step at which the observer takes it (gossip: for
        each message, its sender and the step).
    received
        ``(visits, ...)``: the token's content on arrival (a partial sum, an aggregate,
        a model), before the observer's own contribution.
    published
        The result every node sees at the end (one entry per token).
    """

    observer: int
    token: np.ndarray
    step: np.ndarray
    received: np.ndarray
    published: np.ndarray


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
    from netdp.data import read_column
    from netdp.errors import check

    path = config.get("data_file")
    if path is None:
        return None, config.nodes
    values = read_column(path, config.get("column"))
    check(config.nodes is None or config.nodes == values.size, "nodes",
          f"{path} holds {values.size} values; omit --nodes or pass --nodes {values.size}")
    return values, values.size


def build_topology(config: SimulationConfig, nodes: int | None) -> Topology:
    """The config's graph on ``nodes`` nodes (``None``: the topology's own size)."""
    from netdp.topology import build

    assert config.seed is not None
    return build(config.topology, nodes, self_moves=config.self_moves,
                 directed=config.directed, seed=seeding.seed_sequence(config.seed, "topology"))


def resolve(config: SimulationConfig, topology: Topology, steps_per_node: int,
            accountants: tuple[str, ...], **section: Any) -> tuple[SimulationConfig, int]:
    """The config with nodes, steps, walk, engine and accountants resolved, and the steps
    per token (``rounds · n`` on the ring, else ``steps`` or ``steps_per_node · n``)."""
    from netdp.engine import choose
    from netdp.engine.routing import resolve_walk

    n = topology.n
    ring = topology.kind == "ring"
    steps = config.rounds * n if ring else (config.steps or steps_per_node * n)
    walk = "simple" if topology.kind != "graph" else resolve_walk(topology, config.walk)
    from netdp.engine.faults import from_config

    engine = choose(config.engine, config.tokens, config.service_time,
                    from_config(config) is not None)
    chosen = accountants if config.accountants is None else config.accountants
    resolved = config.replace(nodes=n, steps=None if ring else steps, walk=walk,
                              engine=engine, accountants=tuple(chosen), **section)
    return resolved, steps
