"""What every task works with: the prepared run, its random streams, an observer's view.

The steps that build a :class:`Setup` (seed, data, topology, walk rule, steps, engine) are
in :mod:`netdp.tasks.preparation`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

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

    A task that keeps more (a gossip matrix, a calibration) subclasses it with typed
    fields of its own (keyword-only), and holds a figure it can only compute from its
    first run in a :class:`Once`.
    """

    config: SimulationConfig
    topology: Topology
    steps: int
    data: Any
    mechanism: Any = None

    @property
    def seed(self) -> int:
        """The run's seed."""
        assert self.config.seed is not None
        return self.config.seed


T = TypeVar("T")


class Once(Generic[T]):
    """A figure a simulation computes once, where it is first needed: from its first run
    (sgd's σ from the first walk) or on a path few runs take (an attack's targets).

    Examples
    --------
    >>> sigma: Once[float] = Once()
    >>> sigma.get(lambda: 2.0), sigma.get(lambda: 3.0)
    (2.0, 2.0)
    """

    __slots__ = ("_value", "_set")

    def __init__(self) -> None:
        self._set = False
        self._value: T | None = None

    def get(self, make: Callable[[], T]) -> T:
        """The figure: ``make()`` on the first call, the same value on every later one."""
        if not self._set:
            self._value, self._set = make(), True
        return self._value  # type: ignore[return-value]

    @property
    def done(self) -> bool:
        """Whether the figure is computed."""
        return self._set

    @property
    def value(self) -> T:
        """The figure, once computed (a ``RuntimeError`` before)."""
        if not self._set:
            raise RuntimeError("the figure is computed on its first run; none ran yet")
        return self._value  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"Once({self._value!r})" if self._set else "Once(<not yet>)"


def once() -> Any:
    """A dataclass field holding a fresh :class:`Once` per setup."""
    return field(default_factory=Once, kw_only=True)


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
