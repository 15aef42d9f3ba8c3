"""Which runs read a parameter: one table, so that a flag the chosen combination ignores
is refused instead of doing nothing (issue 29).

A parameter absent from :data:`READERS` is read by every run of the tasks that declare it
(a task's own section is refused for other tasks by :func:`netdp.tasks.make_config`).
Each entry says when the parameter is read, as a predicate on the config, and who reads
it, as the message says it; :func:`check_read` refuses the parameters given explicitly
(on the command line or in a config file) that the run does not read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from netdp.core.errors import InputError
from netdp.core.simulation_config import SimulationConfig
from netdp.engine.faults import from_config
from netdp.graphs.walk_kind import kind_of
from netdp.tracking.graph_observers import DENSE_NODES, SOURCES


@dataclass(frozen=True)
class Reader:
    """When a parameter is read (``reads``) and by whom (``who``, for the message)."""

    reads: Callable[[SimulationConfig], bool]
    who: str


def _faulty_walk(config: SimulationConfig) -> bool:
    return config.protocol == "walk" and from_config(config) is not None


def _sampled_observers(config: SimulationConfig) -> bool:
    if config.protocol != "walk":
        return True  # gossip's own sampled sources
    sources, n = config.get(SOURCES), config.nodes
    return (not kind_of(config.topology).implicit and config.coalition is None
            and (n is None or sources is None or sources < n or n > DENSE_NODES))


_HAND_OFF = Reader(_faulty_walk, "walks with faults (--loss, --churn, --crash or --slow): "
                                 "the hand-off's resends")

READERS: dict[str, Reader] = {
    "timeout": _HAND_OFF,
    "retries": _HAND_OFF,
    "on_loss": _HAND_OFF,
    "sources": Reader(_sampled_observers, "gossip, and the tracker of a walk on a graph "
                                          "(not the ring or the complete graph) without "
                                          "--coalition when it samples fewer observers than "
                                          f"n, or every observer beyond {DENSE_NODES} nodes "
                                          "(where it samples by default)"),
}


def check_read(config: SimulationConfig, given: Iterable[str]) -> None:
    """Raise :class:`InputError` for the first of ``given`` (parameter names) that the run
    of ``config`` does not read (:data:`READERS`)."""
    for name in given:
        reader = READERS.get(name)
        if reader is not None and not reader.reads(config):
            raise InputError(name.replace("_", "-"), f"is read only by {reader.who}; it does "
                                                      f"nothing here")
