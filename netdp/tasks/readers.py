"""Which runs read a parameter: one table, so that a flag the chosen combination ignores
is refused instead of doing nothing (issue 29).

A parameter absent from :data:`READERS` is read by every run of the tasks that declare it
(a task's own section is refused for other tasks by :func:`netdp.tasks.make_config`), or
refused by the config's checks at every value but the one the run would take anyway.
``experiments/readers_noops.py`` found the entries; ``tests/test_readers.py`` checks that
the output changes exactly where the table says a parameter is read.
Each entry says when the parameter is read, as a predicate on the config, and who reads
it, as the message says it; :func:`check_read` refuses the parameters given explicitly
(on the command line or in a config file) that the run does not read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from netdp.core.errors import InputError
from netdp.core.files import path_kind
from netdp.core.params import params_of
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


def _tracked(config: SimulationConfig) -> bool:
    """Whether a walk's pairwise tracker runs: tracking on, and one of the task's trackers
    covers the topology's kind and the mechanism (else only the LDP baseline)."""
    if config.protocol != "walk" or config.accountants == ():
        return False
    from netdp.tasks import task_of

    section = config.section
    mechanism = getattr(section, "oracle" if config.task == "heavy-hitters" else "mechanism",
                        None)
    kind = kind_of(config.topology).name
    return any(t.covers(kind, mechanism) for t in task_of(config).tracking)


def _transitive(config: SimulationConfig) -> bool:
    """Whether gossip accounts one observer for all: a vertex-transitive graph, unweighted
    (:func:`netdp.graphs.gossip_matrix.vertex_transitive`), without faults."""
    from netdp.graphs.walk_kind import TRANSITIVE_NAMES

    return (kind_of(config.topology).uniform or config.topology in TRANSITIVE_NAMES
            and config.weight is None) and from_config(config) is None


def _sampled_observers(config: SimulationConfig) -> bool:
    if config.protocol != "walk":
        return config.accountants != () and config.coalition is None and not _transitive(config)
    sources, n = config.get(SOURCES), config.nodes
    return (_tracked(config) and not kind_of(config.topology).implicit
            and config.coalition is None
            and (n is None or sources is None or sources < n or n > DENSE_NODES))


def _timed(config: SimulationConfig) -> bool:
    """Walks time every hop (the trace's times, the faults' clock); gossip rounds are
    timed only by churn and crashes (a round lasts the mean latency)."""
    return config.protocol == "walk" or config.churn != "none" or config.crash is not None


def _convention(config: SimulationConfig) -> bool:
    """The pairwise trackers of walks, and the LDP baseline of every walk (at the target δ
    under the sound convention, at ``k δ + δ`` under the reference one), tracked or not."""
    return config.protocol == "walk" and config.task != "sgd"


def _weighted(config: SimulationConfig) -> bool:
    """Not an edge list: its weights are its third column, whatever --weight says."""
    from netdp.graphs.graph_files import file_format

    if config.graph is not None or path_kind(config.topology) != "file":
        return True  # a named topology: refused by its builder
    try:
        fmt = file_format(Path(config.topology), config.graph_format)
    except (InputError, OSError):
        return True
    return fmt not in ("edgelist", "weighted-edgelist")


def _get(config: SimulationConfig, name: str) -> object:
    try:
        return config.get(name)
    except KeyError:
        return None


_HAND_OFF = Reader(_faulty_walk, "walks with faults (--loss, --churn, --crash or --slow): "
                                 "the hand-off's resends")
_CLOCK = Reader(_timed, "walks (the hop times of the trace and of faults), and gossip with "
                        "--churn or --crash (a round lasts the mean latency)")

READERS: dict[str, Reader] = {
    "timeout": _HAND_OFF,
    "retries": _HAND_OFF,
    "on_loss": _HAND_OFF,
    "sources": Reader(_sampled_observers, "the pairwise tracker of gossip without --coalition "
                                          "on a graph that is not vertex-transitive (not "
                                          "complete, hypercube, cycle or torus) or with "
                                          "faults, and of a walk on a "
                                          "graph (not the ring or the complete graph) without "
                                          "--coalition when it samples fewer observers than "
                                          f"n, or every observer beyond {DENSE_NODES} nodes "
                                          "(where it samples by default); never with "
                                          "--no-tracking"),
    "tokens": Reader(lambda c: c.protocol == "walk", "walks (gossip moves no token)"),
    "latency": _CLOCK,
    "service_time": _CLOCK,
    "walk": Reader(lambda c: c.protocol == "walk" and not kind_of(c.topology).implicit,
                   "walks on graphs other than the ring and the complete graph"),
    "convention": Reader(_convention, "walks (not sgd's): the pairwise trackers and the LDP "
                                      "baseline, with --no-tracking too"),
    "shuffle": Reader(_tracked, "the pairwise trackers of walks, where the task tracks the "
                                "topology and mechanism (not the ring for fraction and "
                                "one-bit); never with --no-tracking"),
    "calibration": Reader(lambda c: _get(c, "mechanism") == "gaussian",
                          "--mechanism gaussian"),
    "itemset_size": Reader(lambda c: _get(c, "mining") == "svsm", "--mining svsm"),
    "epsilon": Reader(lambda c: _get(c, "gamma") is None, "runs without --gamma (which "
                                                           "sets epsilon)"),
    "weight": Reader(_weighted, "GraphML and GML files and networkx graphs (of an edge "
                                "list, its weights are its third column)"),
}


def check_read(config: SimulationConfig, given: Iterable[str]) -> None:
    """Raise :class:`InputError` for the first of ``given`` (parameter names, or their
    flags' names as config-file keys: ``accountant``, ``format``) that the run of
    ``config`` does not read (:data:`READERS`)."""
    from netdp.tasks import aliases, task_of

    names = aliases(task_of(config))
    for key in given:
        name = names.get(key, key)
        reader = READERS.get(name)
        if reader is not None and not reader.reads(config):
            raise InputError(flag_of(config, name), f"is read only by {reader.who}; it does "
                                                    f"nothing here")


def flag_of(config: SimulationConfig, name: str) -> str:
    """The flag of the parameter ``name`` (``format`` for ``graph_format``)."""
    assert config.section is not None
    for field, spec, _ in (*params_of(SimulationConfig), *params_of(config.section)):
        if field == name and spec.flag:
            return spec.flag
    return name.replace("_", "-")
