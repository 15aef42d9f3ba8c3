"""Pairwise tracking of walks on any graph, shared by the tasks that declare it.

The observers a graph tracker accounts (every one up to :data:`DENSE_NODES` nodes,
``--sources`` sampled beyond), the walk's transition matrix, the report's note and its
summary by hop distance: the sum's taboo-chain tracker (:mod:`netdp.tracking.taboo`) and
the report-based tasks' shuffle-window tracker (:mod:`netdp.tracking.graph_shuffle`) read
them alike. :func:`report_tracking` is the ``graph`` declaration of a report-based task.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from netdp.core.errors import check
from netdp.core.setup import Setup
from netdp.engine.routing import resolve_walk
from netdp.engine.trace import Trace
from netdp.graphs.topologies import hop_distances
from netdp.graphs.walk_kind import KINDS
from netdp.report.types import by_distance
from netdp.tracking.base import Tracking, ldp_setting
from netdp.tracking.law_bound_cost import DENSE_LIMIT
from netdp.tracking.observer_sampling import (  # noqa: F401  (read from here too)
    DENSE_NODES,
    SAMPLED,
    SOURCES,
    sources_param,
    walk_observers,
)


def transition(setup: Setup) -> Any:
    """The walk's transition matrix (built once per topology and walk rule)."""
    topo = setup.topology
    return topo.transition(resolve_walk(topo, setup.config.walk))


def walk_stays(setup: Setup) -> bool:
    """Whether the run's walk may keep the token for a step, as the view cap reads it
    (:func:`netdp.tracking.view_cap.largest_counts`): self-moves on the complete graph, a
    positive diagonal of the transition matrix on any other graph (lazy, Metropolis), on
    a time-varying graph of any snapshot's (a node without a contact keeps the token: its
    snapshot holds a self-loop there), so a one-snapshot sequence caps as its fixed graph;
    never on the ring, whose path is public."""
    from netdp.tracking.view_cap import chain_stays

    topo = setup.topology
    if getattr(topo, "time_varying", False):
        walk = setup.config.walk
        snapshots = getattr(topo, "snapshots", None)  # a TimeVaryingTopology's
        if snapshots is None:  # nothing to read: the token may stay (the sound side)
            return True
        return any(chain_stays(snap.transition(walk)) for snap in snapshots)
    if topo.walk_kind.uniform:
        return bool(topo.self_moves)
    if topo.walk_kind.public_schedule:
        return False
    return chain_stays(transition(setup))


def graph_note(setup: Setup, tables: Sequence[Any]) -> str | None:
    """Sampled observers (with the standard error of the mean over them) and cycles left
    unamplified, when there are any."""
    parts = []
    observers = walk_observers(setup)
    if observers is not None:
        per = np.concatenate([np.add.reduceat(t.values, np.r_[0, np.cumsum(t.counts)[:-1]])
                              / t.counts for t in tables])
        stderr = per.std(ddof=1) / math.sqrt(per.size) if per.size > 1 else math.nan
        parts.append(f"pairwise losses of {observers.size} of {setup.topology.n} observers, "
                     f"sampled (--sources); standard error of the mean {stderr:.2g}")
    cut = sum(t.unamplified for t in tables)
    if cut and setup.config.convention == "reference":
        parts.append(f"{cut} cycles outlasted the taboo-chain rows kept (the chain mixes "
                     "slowly) and were accounted at rate 1 (sound, not amplified)")
    elif cut:
        parts.append(f"{cut} views belong to observers whose laws of the visits are "
                     f"neither affordable exactly nor bounded (over {DENSE_LIMIT:,} nodes, or "
                     "a part of the graph that cannot reach the observer): their pairs take "
                     "the LDP loss at the largest count of a node's contributions the view allows "
                     "(sound, not amplified; fewer steps, or --convention reference for the "
                     "paper's union-bound rates)")
    left = plds_note(setup, tables)
    if left:
        parts.append(left + " (--sources K: fewer observers)")
    return "; ".join(parts) or None


def plds_note(setup: Setup, tables: Sequence[Any]) -> str | None:
    """What the report says when the windows' PLDs were left out (too dear)."""
    left = max((getattr(t, "plds_left", 0.0) for t in tables), default=0.0)
    if not left:
        return None
    from netdp.tracking.report_plds import RUN_SECONDS

    return (f"the windows' PLDs (each node's count of reports in each window) were left "
            f"out: estimated {left:.0f} s, over {RUN_SECONDS:g} s; the pairs keep the "
            "per-window bound, looser")


def graph_by_distance(setup: Setup, tables: Sequence[Any]) -> tuple[Any, ...]:
    """The pairs of all runs by hop distance between ``u`` and the observer ``v`` (from
    ``v``, along the edges of a directed graph; none for a coalition, which has no one
    position)."""

    if setup.config.coalition is not None:
        return ()
    # the same in every run; a time-varying graph: hops on the union of its snapshots
    hops = hop_distances(setup.topology.distance_graph, tables[0].observers)
    values = np.concatenate([t.values for t in tables])
    distances = np.concatenate([hops[np.repeat(np.arange(t.counts.size), t.counts), t.nodes]
                                for t in tables])
    return by_distance(values, distances)


ShuffleParams = Callable[[Setup], tuple[float, str, int]]


def report_tracking(shuffle: ShuffleParams,
                    published: Callable[[Setup, Trace], Trace] | None = None) -> Tracking:
    """The ``graph`` declaration of a report-based task: the shuffle-window tracker with
    the walk's taboo-chain presence rates (:mod:`netdp.tracking.graph_shuffle`).

    ``shuffle(setup) -> (eps0, bound, domain)``: the level of one report, the shuffle
    bound (``--shuffle``) and the domain size the bound reads (``blanket``).
    ``published(setup, trace)``: the trace as its aggregates are published (a task that
    publishes a partial aggregate mid-walk cuts the token there; default: as it ran)."""

    def losses(setup: Setup, trace: Trace, accountant: str,
               coalition: Sequence[int] | None, keep_pairs: bool) -> Any:
        from netdp.tracking.graph_shuffle import graph_histogram_losses

        eps0, bound, domain = shuffle(setup)
        # the windows' PLDs read the walk's own law: not a trace cut into phases (a
        # phase starts where the walk is, not at the start law) or one with faults
        plds = published is None and trace.faults is None
        if published is not None:
            trace = published(setup, trace)
        return graph_histogram_losses(trace, transition(setup), eps0, setup.config.delta,
                                      bound, domain, coalition,
                                      walk_observers(setup),
                                      convention=setup.config.convention,
                                      target=ldp_setting(setup)[0], plds=plds)

    return Tracking("graph", "each window one shuffle of its reports, a node's every "
                    "report counted, each hidden position its with the walk's largest "
                    "chance given its neighbours (--convention reference: presence once "
                    "at the taboo-chain rate); KOV, capped at LDP of the largest count the "
                    "view allows; at the target δ, the windows' PLDs where smaller (each "
                    "node's exact count law, K of its reports among the others' clones) "
                    "and affordable; "
                    f"every observer up to {DENSE_NODES} nodes, sampled beyond", losses,
                    ("kov",), note=graph_note, by_distance=graph_by_distance,
                    observers=walk_observers)


def shuffle_tracking(topology: str, summary: str, shuffle: ShuffleParams,
                     published: Callable[[Setup, Trace], Trace] | None = None,
                     **options: Any) -> Tracking:
    """The ``ring`` or ``complete`` declaration of a report-based task: the histogram's
    shuffle-window trackers (:func:`~netdp.tracking.shuffle.ring_histogram_losses`
    with the task's ``dummies`` when it has them,
    :func:`~netdp.tracking.shuffle.walk_histogram_losses`), read from
    ``shuffle(setup) -> (eps0, bound, domain)`` as :func:`report_tracking` reads it, under
    ``--convention`` (the walk's law of a node's reports: with or without self-moves);
    ``options``: further :class:`Tracking` fields (``theory``)."""
    check(KINDS[topology].implicit, "topology", f"not a shuffle tracker's: {topology}")

    def losses(setup: Setup, trace: Trace, accountant: str,
               coalition: Sequence[int] | None, keep_pairs: bool) -> Any:
        from netdp.tracking.shuffle import ring_histogram_losses, walk_histogram_losses

        cfg = setup.config
        eps0, bound, domain = shuffle(setup)
        if KINDS[topology].public_schedule:
            dummies = getattr(cfg.section, "dummies", None) or 0
            return ring_histogram_losses(setup.topology.n, cfg.rounds, eps0, cfg.delta, bound,
                                         domain, dummies, coalition, cfg.convention,
                                         ldp_setting(setup)[0])
        plds = published is None and trace.faults is None  # as report_tracking's
        if published is not None:
            trace = published(setup, trace)
        return walk_histogram_losses(trace, eps0, cfg.delta, bound, domain, coalition,
                                     keep_pairs, convention=cfg.convention,
                                     self_moves=setup.topology.self_moves,
                                     target=ldp_setting(setup)[0], plds=plds)

    options.setdefault("note", plds_note)
    return Tracking(topology, summary, losses, ("kov",), **options)
