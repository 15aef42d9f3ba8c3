"""What reports say of an explicit graph: its record in the JSON report (``graph``: size,
direction, weights, digest) and its node labels as JSON values, so that every per-node
output can be mapped back to the user's own node names."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from netdp.graphs.topologies import Topology


#: Most labels the JSON report lists (``graph.labels``); beyond, ``Report.labels`` has them.
LABELS_LISTED = 10_000


def plain_labels(topology: Topology) -> list | None:
    """The node labels as JSON values, in the order of the ids ``0..n-1`` (numbers,
    strings, booleans and ``None`` as they are, tuples as lists, anything else as its
    ``str``); ``None`` where the labels are the ids themselves (or there are none)."""
    labels = topology.labels
    if not labels or all(type(x) is int and x == i for i, x in enumerate(labels)):
        return None
    return [_plain(x) for x in labels]


def _plain(label: Any) -> Any:
    if label is None or isinstance(label, bool | int | float | str):
        return label
    if isinstance(label, np.generic):
        return label.item()
    if isinstance(label, tuple | list | frozenset):
        return [_plain(x) for x in label]
    return str(label)


def graph_record(topology: Topology) -> dict[str, Any] | None:
    """The ``graph`` object of the JSON report for an explicit graph: name, nodes, edges,
    directed, weighted, ``sha256`` (:meth:`Topology.digest`) and ``labels`` (the node
    labels by id, :func:`plain_labels`, where they are not the ids and there are at most
    :data:`LABELS_LISTED`); ``None`` for the implicit ring and complete graph."""
    if topology.walk_kind.implicit:
        return None
    out: dict[str, Any] = {"name": topology.name, "nodes": topology.n,
                           "edges": topology.edge_count, "directed": topology.directed,
                           "weighted": topology.weights is not None,
                           "sha256": topology.digest()}
    if topology.labels and topology.n <= LABELS_LISTED:
        labels = plain_labels(topology)
        if labels is not None:
            out["labels"] = labels
    return out
