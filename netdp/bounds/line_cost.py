"""What the published theory lines by hop distance (:mod:`netdp.bounds.by_distance`) may
cost, without importing them: a run's time estimate counts it before anything is built
(:attr:`netdp.tracking.base.Tracking.theory_seconds`; docs/performance.md, "Limits")."""

from __future__ import annotations

from typing import Any

from netdp.graphs.time_varying import names_time_varying
from netdp.graphs.walk_kind import kind_of

__all__ = ["seconds", "PNFDP_NODES", "PNFDP_SECONDS"]

PNFDP_NODES = 256  # no pn-f-dp line beyond (the first-passage laws cost T nnz each)
#: Estimated seconds the pn-f-dp line may take (its compositions, estimated once the
#: first passages are known: :func:`netdp.bounds.published.pnfdp_epsilon`); beyond, the
#: report leaves it out and says why. A run's time estimate counts it (:func:`seconds`).
PNFDP_SECONDS = 2.0


def seconds(config: Any, nodes: int) -> dict[str, tuple[float, str]]:
    """The seconds a run's report may spend on the published lines, before the graph is
    built (a part of the run's time estimate): ``pn-f-dp``'s :data:`PNFDP_SECONDS` at most
    where :func:`netdp.bounds.by_distance.published_by_distance` draws it (its cost hangs
    on the walk's spectral gap, known once the graph is; beyond the bound the line is
    left out)."""
    source = config.topology if config.graph is None else config.graph
    if (config.accountants == () or config.coalition is not None or nodes > PNFDP_NODES
            or kind_of(config.topology).implicit
            or getattr(config.section, "mechanism", None) != "gaussian"
            or names_time_varying(source, config.graph_format)):
        return {}
    return {"the pn-f-dp theory line (at most)": (PNFDP_SECONDS, "nodes")}
