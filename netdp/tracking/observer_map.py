"""Per-observer work mapped over the observers: in this process, or elsewhere.

A tracker whose observers are independent given the trace puts the work of one observer
in a top-level function ``work(shared, v)`` and calls :func:`map_observers` with the
observers in their order. Without anything installed the observers run here, one after
the other, as a plain loop. :func:`observers_on` installs an :class:`ObserverMap` (a dask
cluster: :mod:`netdp.run.observer_cluster`) that runs them in batches elsewhere and
returns their results in the observers' order.

``work`` must depend on ``(shared, v)`` alone: no random draw, no state carried from one
observer to the next. The results are then the same, bit for bit, whatever the batching,
the worker or the order in which the batches finish. (The trackers' only random draw,
the sampled observers of the ``sources`` stream, is made once, before the map.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

Work = Callable[[Mapping[str, Any], int], Any]


class ObserverMap(Protocol):
    """Runs ``work(shared, v)`` for each observer ``v`` and returns the results in order."""

    workers: int
    batches: int  # of the last map
    shared: str  # how the last map shared its data: scatter or memmap

    def map(self, work: Work, shared: Mapping[str, Any], observers: np.ndarray,
            desc: str) -> list[Any]:
        """``[work(shared, v) for v in observers]``, computed where the map runs."""


@dataclass(frozen=True)
class Accounted:
    """One call of :func:`map_observers`: what it accounted (``desc``), how many
    observers, and where (``workers``: 0 in this process; else in ``batches``, the data
    ``shared`` by scatter or memmap)."""

    desc: str
    observers: int
    workers: int = 0
    batches: int = 0
    shared: str | None = None


_ACTIVE: ContextVar[ObserverMap | None] = ContextVar("netdp_observer_map", default=None)
_LOG: ContextVar[list[Accounted] | None] = ContextVar("netdp_observer_log", default=None)


def map_observers(work: Work, shared: Mapping[str, Any], observers: Any, desc: str,
                  record: bool = True) -> list[Any]:
    """``[work(shared, v) for v in observers]``: here (a progress bar on a terminal), or
    on the map :func:`observers_on` installed. ``record``: count the call in
    :func:`observer_log` (not for a stand-in, e.g. one observer of a symmetric graph)."""
    ids = np.asarray(observers, dtype=np.int64)
    active = _ACTIVE.get()
    log = _LOG.get()
    if active is not None and ids.size >= 2:
        out = active.map(work, shared, ids, desc)
        entry = Accounted(desc, int(ids.size), active.workers, active.batches, active.shared)
    else:
        from netdp.accounting._arrays import observer_bar

        out = [work(shared, int(v)) for v in observer_bar(ids, desc)]
        entry = Accounted(desc, int(ids.size))
    if record and log is not None:
        log.append(entry)
    return out


@contextmanager
def observers_on(mapper: ObserverMap | None) -> Iterator[None]:
    """Within the block, :func:`map_observers` runs on ``mapper`` (``None``: here)."""
    token = _ACTIVE.set(mapper)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


@contextmanager
def observer_log() -> Iterator[list[Accounted]]:
    """Within the block, every :func:`map_observers` call is recorded in the list."""
    calls: list[Accounted] = []
    token = _LOG.set(calls)
    try:
        yield calls
    finally:
        _LOG.reset(token)
