"""Which observers a graph tracker accounts: every node up to :data:`DENSE_NODES` nodes,
``--sources`` sampled beyond (:data:`SAMPLED` by default), a coalition as one; the
``--sources`` declaration of the tasks that have such a tracker, and the count a run's
estimates read (:func:`observers_of`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from netdp.core.params import param
from netdp.core.sections import DATA_GROUP
from netdp.core.setup import Setup, Streams
from netdp.graphs.walk_kind import kind_of

DENSE_NODES = 200  # graph walks: every observer up to here, sampled beyond
SAMPLED = 32  # observers sampled by default beyond DENSE_NODES


SOURCES = "sources"
"""The name of the part :func:`sources_param` declares (shared by several sections: read by
name, ``config.get(SOURCES)``)."""


def sources_param() -> Any:
    """The ``--sources K`` declaration of a task with a graph tracker."""
    return param(None, "walks on a graph: observers sampled by the pairwise tracker (its "
                 "cost grows with each observer)", kind=int, low=1, metavar="K",
                 group=DATA_GROUP,
                 default_text=f"every observer up to {DENSE_NODES} nodes, {SAMPLED} beyond")


def walk_observers(setup: Setup) -> np.ndarray | None:
    """The observers of a graph tracker: ``None`` (all) up to :data:`DENSE_NODES`
    nodes or when ``--sources`` covers them, else ``--sources`` (default :data:`SAMPLED`)
    drawn once from the ``sources`` stream."""
    n, sources = setup.topology.n, setup.config.get(SOURCES)
    samples = sources if sources is not None else (SAMPLED if n > DENSE_NODES else n)
    if samples >= n or setup.config.coalition is not None:
        return None
    rng = Streams(setup.seed, 0).generator("sources")
    return np.sort(rng.choice(n, size=samples, replace=False))


def observers_of(config: Any, nodes: int) -> tuple[int, int]:
    """How many observers a run accounts, and the members of each (1, or a coalition's):
    every node on the complete graph, else ``--sources``, or :data:`SAMPLED` beyond
    :data:`DENSE_NODES` nodes; a coalition is one."""
    if config.coalition is not None:
        return 1, len(config.coalition)
    complete = kind_of(config.topology).implicit
    sources = None if complete else config.get(SOURCES)
    return min(nodes, sources or (nodes if complete or nodes <= DENSE_NODES else SAMPLED)), 1
