"""The published bounds (:mod:`netdp.bounds.published`) as theory lines by hop distance.

Ordered pairs ``(u, v)`` are grouped by the hop distance from the observer ``v`` to ``u``
(as the trackers' summaries by distance, :func:`netdp.tracking.graph_observers.
graph_by_distance`); each distance gets the bound's mean, min and max over its pairs. The
observers are the tracker's (:func:`~netdp.tracking.graph_observers.walk_observers`: all
up to 200 nodes, sampled beyond), so a theory row and an empirical row of one distance
hold the same pairs. ``pn-f-dp`` costs a composition per pair: a report evaluates at most
:data:`PNFDP_PAIRS` distinct pairs (spread over the distances, the same for every run of a
seed), and none beyond :data:`PNFDP_NODES` nodes.

Every line is at one δ, :func:`target_delta` (spec network-dp.md, Correction 7).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from netdp.bounds.line_cost import PNFDP_NODES, PNFDP_SECONDS
from netdp.bounds.published import PUBLISHED, icml_epsilon, pnfdp_epsilon
from netdp.core.setup import Setup, Streams
from netdp.graphs.topologies import hop_distances
from netdp.mechanisms.noise import Gaussian
from netdp.report.types import DistanceRow, by_distance
from netdp.tracking.graph_observers import transition, walk_observers

__all__ = ["target_delta", "rows_by_distance", "pair_sample", "bounds_by_distance",
           "published_by_distance", "PNFDP_PAIRS", "PNFDP_NODES", "PNFDP_SECONDS"]

PNFDP_PAIRS = 16  # distinct pairs a report evaluates for pn-f-dp


def target_delta(config: Any) -> float:
    """The one δ of every published line: the report's target δ (spec Correction 7)."""
    return float(config.report_delta)


def rows_by_distance(eps: np.ndarray, hops: np.ndarray,
                     observers: np.ndarray) -> tuple[DistanceRow, ...]:
    """The pairs of ``eps`` (``(observers, n)``, row ``v``, column ``u``) grouped by
    ``hops`` (same shape), the observer itself and NaN (pairs not evaluated) left out."""
    keep = ~np.isnan(eps)
    keep[np.arange(observers.size), observers] = False
    return by_distance(eps[keep], hops[keep])


def pair_sample(hops: np.ndarray, observers: np.ndarray, budget: int,
                rng: np.random.Generator) -> np.ndarray:
    """``(observers, n)`` booleans: at most ``budget`` pairs, as many per distance as the
    budget allows (at least one each), drawn uniformly within a distance."""
    mask = np.ones(hops.shape, dtype=bool)
    mask[np.arange(observers.size), observers] = False
    out = np.zeros(hops.shape, dtype=bool)
    distances = np.unique(hops[mask])
    per = max(1, budget // max(1, distances.size))
    for d in distances:
        where = np.flatnonzero((hops == d) & mask)
        chosen = where if where.size <= per else rng.choice(where, size=per, replace=False)
        out.flat[chosen] = True
    return out


def bounds_by_distance(P: Any, steps: int, z: float, delta: float, hops: np.ndarray,
                       observers: np.ndarray, tokens: int = 1,
                       names: Sequence[str] = tuple(PUBLISHED),
                       pnfdp_pairs: np.ndarray | None = None, max_seconds: float = np.inf
                       ) -> tuple[dict[str, tuple[DistanceRow, ...]], dict[str, Any]]:
    """Each published bound's rows by distance, and what was evaluated.

    Parameters
    ----------
    P
        The walk's transition matrix (sparse).
    steps, z, delta, tokens
        ``T`` per token, ``σ / Δ``, the target δ, the number of tokens.
    hops
        ``(len(observers), n)`` hop distances from each observer.
    observers
        The observers ``v``.
    names
        Which bounds (keys of :data:`~netdp.bounds.published.PUBLISHED`).
    pnfdp_pairs
        The pairs ``pn-f-dp`` evaluates (default: all).
    max_seconds
        The estimated seconds ``pn-f-dp`` may take; beyond, its line is left out and its
        info says why (``skipped``).

    Returns
    -------
    rows, info
        ``{name: rows}`` and ``{name: {...}}``: the reference, the model, where it
        applies, whether it is sound for netdp's view, δ, the pairs evaluated and, for
        ``pn-f-dp``, its constants (λ₂, ζ, compositions per token, the δ split).
    """
    rows: dict[str, tuple[DistanceRow, ...]] = {}
    info: dict[str, Any] = {}
    for name in names:
        entry = PUBLISHED[name]
        extra: dict[str, Any] = {}
        if name == "icml2024":
            eps = icml_epsilon(P, steps, z, delta, tokens, observers)
        else:
            eps, extra = pnfdp_epsilon(P, steps, z, delta, tokens, observers, pnfdp_pairs,
                                       max_seconds)
        if "skipped" in extra:
            info[name] = {"reference": entry.reference, **extra}
            continue
        evaluated = int(np.sum(~np.isnan(eps))) - observers.size
        rows[name] = rows_by_distance(eps, hops, observers)
        info[name] = {"reference": entry.reference, "model": entry.model,
                      "applies": entry.applies,
                      "sound_for_netdp_view": entry.sound_for_netdp_view,
                      "below_exact": list(entry.below_exact), "delta": delta,
                      "pairs": evaluated, **extra}
    return rows, info


def published_by_distance(setup: Setup
                          ) -> tuple[dict[str, tuple[DistanceRow, ...]], dict[str, Any]]:
    """The report's published lines by distance for a Gaussian sum walk on a graph with a
    transition matrix (none otherwise: the ring, the complete graph's implicit walk, a
    time-varying graph, other noise, no accountant, a coalition)."""
    cfg, topo, mech = setup.config, setup.topology, setup.mechanism
    if (topo.walk_kind.implicit or topo.time_varying or not isinstance(mech, Gaussian)
            or not cfg.accountants or cfg.coalition is not None):
        return {}, {}
    P = transition(setup)
    observers = walk_observers(setup)
    observers = np.arange(topo.n) if observers is None else observers
    hops = hop_distances(topo.distance_graph, observers)
    z = mech.sigma / mech.sensitivity
    names = [n for n in PUBLISHED if n != "pn-f-dp" or topo.n <= PNFDP_NODES]
    rng = Streams(setup.seed, 0).generator("sources", 1)  # apart from the observers' draw
    sample = pair_sample(hops, observers, PNFDP_PAIRS, rng)
    keep = np.flatnonzero(sample.any(axis=1))  # pn-f-dp: only the observers sampled
    rows, info = bounds_by_distance(P, setup.steps, z, target_delta(cfg), hops, observers,
                                    cfg.tokens, [n for n in names if n != "pn-f-dp"])
    if "pn-f-dp" in names and keep.size:
        more, more_info = bounds_by_distance(P, setup.steps, z, target_delta(cfg),
                                             hops[keep], observers[keep], cfg.tokens,
                                             ["pn-f-dp"], sample[keep], PNFDP_SECONDS)
        rows.update(more)
        info.update(more_info)
    elif "pn-f-dp" not in names:
        info["pn-f-dp"] = {"reference": PUBLISHED["pn-f-dp"].reference,
                           "skipped": f"not evaluated beyond {PNFDP_NODES} nodes (a "
                                      "composition per pair; experiments/published_bounds.py "
                                      "evaluates it)"}
    total = observers.size * (topo.n - 1)
    for entry in info.values():
        if "pairs" in entry and entry["pairs"] < total:
            entry["sampled"] = f"{entry['pairs']} of {total} ordered pairs"
    return rows, info
