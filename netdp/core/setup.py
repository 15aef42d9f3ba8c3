"""What every task works with: the prepared run, its random streams, an observer's view.

The steps that build a :class:`Setup` (seed, data, topology, walk rule, steps, engine) are
in :mod:`netdp.tasks.preparation`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from netdp.core import seeding
from netdp.core.simulation_config import SimulationConfig

if TYPE_CHECKING:
    from netdp.graphs.topologies import Topology


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


def running_sum_view(reports: np.ndarray, holders: np.ndarray, observer: int) -> View:
    """The view of a token that carries the running sum of ``(tokens, steps)`` reports:
    the sum on each of ``observer``'s arrivals (before its own report), and every token's
    total as the published result."""
    before = np.cumsum(reports, axis=1) - reports
    token, step = np.nonzero(holders == observer)
    return View(observer, token, step, before[token, step], reports.sum(axis=1))
