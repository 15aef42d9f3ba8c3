"""Figures of one run's pairwise losses: the pair matrix, a node's losses against hop distance,
the summary by distance of one or more results, and the heatmap of a node's row.

Plain functions returning a matplotlib ``Figure`` built without pyplot, in the style of
:mod:`netdp.report.figures`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib.ticker as mticker
import numpy as np
from matplotlib.figure import Figure

from netdp.core.errors import InputError
from netdp.report import run_marks
from netdp.report.figures import (
    COLORS,
    LDP_STYLE,
    LINESTYLES,
    MARKERS,
    MAX_BINS,
    THEORY_STYLE,
    band_handle,
    fmt_value,
    place_legend,
    style_axes,
    wrap_title,
)

#: A matrix whose entries span less than this (relative to its largest, or absolute
#: below 1) is drawn as constant: one colour and its value in the title, no colour bar.
CONSTANT_SPAN = 1e-9

#: What ``by_distance_figure`` can draw from a result: the converted (ε, δ) losses, or the
#: Rényi divergences at the run's ``--rdp-order`` (gossip).
MEASURES = ("epsilon", "renyi")


def off_diagonal(matrix: np.ndarray) -> np.ndarray:
    """The ``n (n - 1)`` losses ``M[u, v], u != v`` of a square matrix (diagonal dropped)."""
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] < 2:
        raise InputError("pairs", f"expects a square n x n matrix, n >= 2 (got shape "
                         f"{matrix.shape})")
    return matrix[~np.eye(matrix.shape[0], dtype=bool)]


def _refs(ax, refs: dict[str, float], vertical: bool,
          limits: tuple[float, float] | None = None) -> None:
    """Dotted LDP / dash-dot theory reference lines, labelled; with ``limits`` (a vertical
    panel's x range, scaled to the data) a reference beyond them is a marker at the edge
    it lies past, its value in the legend, and the axis keeps the data's range."""
    for i, (label, value) in enumerate(refs.items()):
        if value is None or not np.isfinite(value):
            continue
        style = LDP_STYLE if label.startswith("LDP") else THEORY_STYLE
        color = COLORS[(i + 4) % len(COLORS)]
        if limits is not None and vertical and not limits[0] <= value <= limits[1]:
            right = value > limits[1]
            ax.plot([1.0 if right else 0.0], [0.93 - 0.07 * i], transform=ax.transAxes,
                    marker=">" if right else "<", markersize=9, color=color,
                    linestyle="none", clip_on=False,
                    label=f"{label}: {value:.3g} ({'→' if right else '←'} off the axis)")
            continue
        line = ax.axvline if vertical else ax.axhline
        line(value, color=color, linestyle=style, linewidth=1.8, label=f"{label}: {value:.3g}")


#: A reference within this factor of the data's range (log axis; a span's multiple on a
#: linear one) widens the axis to show it as a line; beyond, it is a marker at the edge.
NEAR_REFERENCE = 3.0


def data_limits(lo: float, hi: float, logx: bool, refs: dict[str, float]) -> tuple[float, float]:
    """The pairs panels' x range: the data's, padded, widened to the references near it
    (:data:`NEAR_REFERENCE`), never to a far one."""
    if logx:
        pad = (hi / lo) ** 0.04
        a, b = lo / pad, hi * pad
        near = [v for v in refs.values() if a / NEAR_REFERENCE <= v <= b * NEAR_REFERENCE]
        return min([a, *(v / pad for v in near)]), max([b, *(v * pad for v in near)])
    span = max(hi - lo, abs(hi) * 0.04, 1e-12)
    a, b = lo - 0.04 * span, hi + 0.04 * span
    near = [v for v in refs.values()
            if a - NEAR_REFERENCE * span <= v <= b + NEAR_REFERENCE * span]
    grown = [min([a, *near]), max([b, *near])]
    pad = 0.04 * (grown[1] - grown[0])
    return grown[0] - (pad if near and min(near) < a else 0.0), \
        grown[1] + (pad if near and max(near) > b else 0.0)


def pairs_figure(matrix: np.ndarray, *, result: Any = None,
                 refs: dict[str, float] | None = None, xlabel: str | None = None,
                 title: str | None = None, bins: int = 40, theory: list[str] | None = None,
                 what: str = "one run") -> Figure:
    """Distribution of the pairwise losses of one run: histogram and ECDF of the
    off-diagonal entries, the x axis scaled to the data, with reference values as vertical
    lines where near it and as markers at the edge where far; infinite losses (exposed
    pairs) are counted in the title.

    Given the run's ``result`` (the :class:`~netdp.report.types.Report` of
    :func:`netdp.simulate`, or its JSON dict), the figure is the one ``netdp plot
    --preset pairs`` draws: the title says what ran (:func:`run_marks.describe`), the x
    label the accountant and the δ of the plotted ε, and the LDP level and the theory
    (``theory``: curve names; default the first that applies) are marked. ``refs``
    (``{"LDP": ...}``) adds or replaces marks; ``xlabel`` and ``title`` replace the text.
    """
    if not (isinstance(bins, int | np.integer) and 1 <= bins <= MAX_BINS):
        raise InputError("bins", f"must be an integer in 1..{MAX_BINS} (got {bins!r})")
    found = run_marks.as_result(result)
    refs = {**run_marks.reference_values(found, theory), **(refs or {})}
    xlabel = xlabel or f"ε(u → v) ({run_marks.accountant_text(found)})"
    title = title or run_marks.titled(f"Pairwise privacy losses of {what}", found)
    values = off_diagonal(matrix)
    values = values[~np.isnan(values)]
    exposed = int(np.isinf(values).sum())
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        raise InputError("pairs", "the matrix holds no finite pairwise loss")
    check_losses(finite)
    refs = {k: v for k, v in (refs or {}).items() if v is not None and np.isfinite(v)}
    lo, hi = float(finite.min()), float(finite.max())
    logx = lo > 0 and hi / lo > 30  # the data's spread alone: far references are markers
    if hi <= lo:  # every pair loses the same: one bar around the value
        edges = np.array([lo * 0.98, lo * 1.02]) if lo > 0 else np.array([lo - 0.5, lo + 0.5])
    elif logx:
        edges = np.geomspace(lo, hi, bins + 1)
    else:
        edges = np.linspace(lo, hi, bins + 1)
    limits = data_limits(float(edges[0]), float(edges[-1]), logx, refs)
    fig = Figure(figsize=(10.0, 4.2), layout="constrained")
    left, right = fig.subplots(1, 2)
    left.hist(finite, bins=edges, color="0.55", edgecolor="black", linewidth=0.5,
              label=f"{finite.size:,} ordered pairs")
    left.axvline(finite.mean(), color="black", linestyle="-", linewidth=1.6,
                 label=f"mean: {finite.mean():.3g}")
    _refs(left, refs, vertical=True, limits=limits)
    left.set_xlim(*limits)
    style_axes(left, xlabel, "ordered pairs (u, v)", logx, False, "Histogram")
    ecdf = np.sort(finite)
    ranks = np.arange(1, ecdf.size + 1)
    if ecdf.size > ECDF_POINTS:  # thinned: a line of millions of steps draws for seconds
        keep = np.unique(np.linspace(0, ecdf.size - 1, ECDF_POINTS).astype(np.int64))
        ecdf, ranks = ecdf[keep], ranks[keep]
    right.step(ecdf, ranks / values.size, where="post", color="black",
               linewidth=1.6, label="empirical CDF")
    for q, marker in ((0.5, "o"), (0.9, "s"), (0.99, "^")):
        v = float(np.quantile(values, q)) if exposed == 0 else float(np.quantile(finite, q))
        right.plot([v], [q], marker=marker, color="black", markerfacecolor="white",
                   linestyle="none", label=f"q{round(q * 100)}: {v:.3g}")
    _refs(right, refs, vertical=True, limits=limits)
    right.set_xlim(*limits)
    style_axes(right, xlabel, "fraction of pairs with loss ≤ ε", logx, False,
                "Empirical CDF")
    right.set_ylim(0, 1.02)
    for ax in (left, right):
        ax.legend(fontsize="small", framealpha=0.9, loc="best")
    note = f"; {exposed} exposed pair(s) (ε = ∞) not drawn" if exposed else ""
    fig.suptitle(wrap_title(title + note, 110), fontsize="medium")
    return fig


#: Most steps the ECDF panel draws (evenly spaced ranks beyond: the same picture at any
#: figure's resolution; a 3000-node matrix's 9 million steps took 15 s to place the legend).
ECDF_POINTS = 4096


#: Largest finite loss a figure draws (matplotlib's ticks overflow near 1e308).
MAX_LOSS = 1e300


def check_losses(values: np.ndarray, param: str = "pairs") -> None:
    """Refuse finite losses beyond :data:`MAX_LOSS` in magnitude (no run makes them: a
    matrix edited or made elsewhere), on ``param``."""
    if values.size and float(np.abs(values[np.isfinite(values)]).max(initial=0.0)) > MAX_LOSS:
        raise InputError(param, f"holds finite losses beyond {MAX_LOSS:g} in magnitude; a "
                         "pairwise matrix of netdp holds losses below (inf: an exposed pair)")


def distance_figure(losses: np.ndarray, distances: np.ndarray, *, node: int,
                    role: str = "observer", refs: dict[str, float] | None = None,
                    ylabel: str = "ε (pairwise)", title: str = "") -> Figure:
    """Loss of every other node against its graph distance to ``node``: every pair as a
    dot (jittered), the per-distance mean and min/max band, reference lines."""
    losses = np.asarray(losses, dtype=float)
    distances = np.asarray(distances, dtype=float)
    keep = np.isfinite(losses) & np.isfinite(distances)
    losses, distances = losses[keep], distances[keep].astype(int)
    check_losses(losses)
    if losses.size == 0:
        raise InputError("node", f"node {node} has no finite loss towards a reachable node")
    levels = np.unique(distances)
    means = np.array([losses[distances == d].mean() for d in levels])
    lows = np.array([losses[distances == d].min() for d in levels])
    highs = np.array([losses[distances == d].max() for d in levels])
    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    ax = fig.subplots()
    jitter = np.random.default_rng(0).uniform(-0.12, 0.12, losses.size)  # display only
    ax.plot(distances + jitter, losses, linestyle="none", marker="o", markersize=3.5,
            color=COLORS[2], alpha=0.45, markeredgewidth=0, label="one node")
    ax.vlines(levels, lows, highs, color="0.45", alpha=0.5, linewidth=4 if levels.size <= 40
              else 1.5, label="min–max at each distance")
    ax.plot(levels, means, color="black", marker="s" if levels.size <= 40 else None,
            markersize=6, linewidth=1.8, markerfacecolor="white",
            label="mean at each distance")
    refs = {k: v for k, v in (refs or {}).items() if v is not None and np.isfinite(v)}
    _refs(ax, refs, vertical=False)
    top = max([losses.max(), *refs.values()])
    logy = losses.min() > 0 and top / losses.min() > 10
    who = (f"hops from each node u to observer {node}" if role == "observer"
           else f"hops from node {node} to each observer v")
    style_axes(ax, f"shortest-path distance ({who})", ylabel, False, logy,
                wrap_title(title or f"Privacy vs graph distance (node {node})", 70))
    if levels.size <= 15:
        ax.set_xticks(levels)
        ax.set_xlim(levels.min() - 0.6, levels.max() + 0.6)
    else:
        ax.xaxis.set_major_locator(mticker.MaxNLocator(nbins=12, integer=True))
    place_legend(fig, ax)
    return fig


def graph_distances(topo, node: int, role: str = "observer") -> np.ndarray:
    """Shortest-path hop counts between ``node`` and every node (networkx), following edge
    directions the way information flows: from ``u`` to the observer ``node``
    (``role="observer"``), or from ``node`` to each observer (``role="source"``).
    Unreachable nodes get NaN."""
    import networkx as nx

    from netdp.graphs.topologies import to_networkx

    n = topo.n
    if not 0 <= node < n:
        raise InputError("node", f"must lie in 0..{n - 1} (got {node})")
    graph = to_networkx(topo.distance_graph)  # a time-varying graph: its union
    if role == "observer" and graph.is_directed():
        graph = graph.reverse(copy=False)
    lengths = nx.single_source_shortest_path_length(graph, node)
    out = np.full(n, np.nan)
    out[list(lengths)] = list(lengths.values())
    return out


@dataclass(frozen=True)
class DistanceSeries:
    """One curve of :func:`by_distance_figure`: per hop distance, the mean pairwise loss
    and its min–max band, with the LDP level of the same measure (a horizontal line).

    ``role`` ``"data"`` draws markers, line and band; ``"theory"`` a dash-dot line (no
    band) for a theoretical figure given per distance.
    """

    label: str
    distance: np.ndarray
    mean: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    ldp: float | None = None
    role: str = "data"


def _rows_series(label: str, rows, source: str, ldp: float | None = None,
                 role: str = "data") -> DistanceSeries:
    """A :class:`DistanceSeries` from ``[{distance, mean, min, max}, ...]`` rows."""
    try:
        table = sorted((int(r["distance"]), float(r["mean"]), float(r.get("min", r["mean"])),
                        float(r.get("max", r["mean"]))) for r in rows)
    except (KeyError, TypeError, ValueError, OverflowError) as exc:  # its text not echoed
        raise InputError("result", f"{source}: a by_distance row lacks a finite distance, "
                         f"mean, min or max ({type(exc).__name__})") from None
    if not table:
        raise InputError("result", f"{source}: by_distance is empty")
    if not all(0 <= row[0] <= 2**62 for row in table):  # a hop count between two nodes
        raise InputError("result", f"{source}: a by_distance row's distance is not a hop "
                         "count in 0..2**62")
    d, mean, lo, hi = (np.array(col) for col in zip(*table, strict=True))
    return DistanceSeries(label, d, mean, lo, hi, ldp, role)


def result_label(result: dict) -> str:
    """``task/protocol on topology`` of a ``netdp simulate`` result (what the run was)."""

    cfg = result.get("config") or {}
    what = "/".join(str(cfg[k]) for k in ("task", "protocol") if cfg.get(k))
    topo = str(result.get("topology") or cfg.get("topology") or "?")
    topo = re.sub(r", [\d,]+ edges\)", ")", topo)  # "grid (n=100, 180 edges)" -> "grid (n=100)"
    extra = ", accelerated" if cfg.get("accelerated") else ""
    return f"{what or 'run'} on {topo}{extra}"


def distance_series(result: dict, *, y: str = "epsilon", source: str = "result",
                    theory: Sequence[str] | None = None) -> list[DistanceSeries]:
    """The by-distance curves of one ``netdp simulate --out`` result.

    One data series per row of ``privacy.empirical`` that has ``by_distance`` (``y =
    "epsilon"``: the converted ε; ``y = "renyi"``: ``renyi.by_distance``, the divergences at
    order ``renyi.order``, present on gossip runs with ``--rdp-order``), labelled by
    task/protocol/topology and, for sgd, the regime. The LDP level of each: the row's
    ``ldp.mean`` or ``privacy.ldp.mean`` (ε), ``order / (2 σ²)`` (Rényi, σ in units of the
    sensitivity). Theoretical figures are drawn only where the result gives them per
    distance: ``privacy.theory_by_distance[NAME]`` (ε) or ``renyi.theory_by_distance[NAME]``
    (Rényi), lists of rows like ``by_distance``; ``theory`` picks names (default: all).

    Raises
    ------
    InputError
        ``result`` when nothing of the kind is there (with ``source`` in the message), ``y``
        for an unknown measure or a run without Rényi divergences.
    """
    if y not in MEASURES:
        raise InputError("y", f"by distance plots {' or '.join(MEASURES)} (got {y!r})")
    priv = result.get("privacy") if isinstance(result, dict) else None
    rows = priv.get("empirical") if isinstance(priv, dict) else None
    if not isinstance(rows, list) or not any(isinstance(r, dict) and r.get("by_distance")
                                             for r in rows):
        raise InputError("result", f"{source} has no privacy.empirical[].by_distance (a "
                         "pairwise summary by hop distance: sgd on a graph, or sum with "
                         "--protocol gossip, written by `netdp simulate --out`)")
    assert isinstance(priv, dict)
    base = result_label(result)
    out: list[DistanceSeries] = []
    theories: dict = {}
    for row in rows:
        if not isinstance(row, dict) or not row.get("by_distance"):
            continue
        label = base + (f", {row['regime']}" if row.get("regime") else "")
        if y == "epsilon":
            ldp = (row.get("ldp") or priv.get("ldp") or {}).get("mean")
            out.append(_rows_series(label, row["by_distance"], source,
                                    None if ldp is None else float(ldp)))
            theories = priv.get("theory_by_distance") or {}
            continue
        renyi = row.get("renyi")
        if not isinstance(renyi, dict) or not renyi.get("by_distance"):
            continue
        sigma = priv.get("sigma")
        order = renyi.get("order")
        ldp = (float(order) / (2.0 * float(sigma) ** 2)
               if sigma is not None and order is not None else None)
        out.append(_rows_series(f"{label} (α = {fmt_value(order)})", renyi["by_distance"], source,
                                ldp))
        theories = renyi.get("theory_by_distance") or {}
    if not out:
        raise InputError("y", f"{source} holds no Renyi divergences by distance (run "
                         "gossip with --rdp-order A, or plot --y epsilon)")
    wanted = list(theories) if theory is None else list(theory)
    for name in wanted:
        if name not in theories:
            raise InputError("theory", f"{source} gives no per-distance theory {name!r} "
                             f"(it has {', '.join(theories) or 'none'})")
        out.append(_rows_series(f"theory {name}, {base}", theories[name], source,
                                role="theory"))
    return out


def by_distance_figure(series: Sequence[DistanceSeries], *, logy: bool = False,
                       ylabel: str = "ε(u → v) (pairwise)", title: str = "") -> Figure:
    """Pairwise loss against hop distance, one curve per series: the mean over the pairs at
    each distance (line and markers) with the min–max band, the LDP level of each series
    (dotted, its colour; equal levels drawn once) and per-distance theory (dash-dot).
    Linear x over the integer distances; ``logy`` for a log y axis (zeros clipped)."""
    if not series:
        raise InputError("result", "nothing to plot (no series)")
    fig = Figure(figsize=(7.2, 4.6), layout="constrained")
    ax = fig.subplots()
    drawn_ldp: dict[float, int] = {}
    data = [s for s in series if s.role == "data"]
    handles: list = []
    labels: list[str] = []
    for i, s in enumerate(series):
        color, marker = COLORS[i % len(COLORS)], MARKERS[i % len(MARKERS)]
        if s.role == "data":
            style = LINESTYLES[data.index(s) % len(LINESTYLES)]
            (line,) = ax.plot(s.distance, s.mean, color=color, marker=marker, markersize=5,
                              linewidth=1.6, linestyle=style)
            spread = (s.hi - s.lo) > 1e-9 * np.maximum(1.0, np.abs(s.mean))
            if spread.any():
                ax.fill_between(s.distance, s.lo, s.hi, color=color, alpha=0.15, linewidth=0)
                handles.append((band_handle(color, 0.15), line))
                labels.append(f"{s.label} (mean, min–max band)")
            else:
                handles.append(line)
                labels.append(f"{s.label} (every pair at a distance alike)")
        else:
            (line,) = ax.plot(s.distance, s.mean, color=color, marker=marker, markersize=5,
                              markerfacecolor="white", linewidth=1.6,
                              linestyle=THEORY_STYLE)
            handles.append(line)
            labels.append(s.label)
        if s.ldp is not None and np.isfinite(s.ldp):
            key = round(float(s.ldp), 12)
            if key not in drawn_ldp:
                drawn_ldp[key] = i
                ldp_line = ax.axhline(s.ldp, color=color, linestyle=LDP_STYLE, linewidth=1.8)
                handles.append(ldp_line)
                labels.append(f"LDP level: {s.ldp:.3g}" + (f" ({s.label})" if len(data) > 1
                                                             else ""))
    levels = np.unique(np.concatenate([s.distance for s in series]))
    if logy:
        positive = np.concatenate([np.r_[s.mean, s.lo][np.r_[s.mean, s.lo] > 0]
                                   for s in series])
        if positive.size == 0:
            raise InputError("logy", "every loss is 0: nothing to draw on a log axis")
        ax.set_yscale("log", nonpositive="clip")
        ax.set_ylim(bottom=float(positive.min()) / 1.5)
    style_axes(ax, "hop distance from source u to observer v (shortest path)", ylabel,
                False, logy, title or "Pairwise privacy loss against hop distance")
    if levels.size <= 20:
        ax.set_xticks(levels)
    else:
        ax.xaxis.set_major_locator(mticker.MaxNLocator(nbins=12, integer=True))
    ax.set_xlim(levels.min() - 0.5, levels.max() + 0.5)
    place_legend(fig, ax, handles, labels)
    return fig


#: Most nodes whose names a heatmap writes on its axes (one tick per node).
NAMED_NODES = 100


def heatmap_figure(matrix: np.ndarray, distances: np.ndarray, *, node: int,
                   role: str = "observer", label: str = "ε(u → v) (pairwise)",
                   title: str = "", cmap: str = "cividis",
                   names: Sequence[Any] | None = None) -> Figure:
    """The pairwise matrix ``M[u, v]`` (rows: sources u, columns: observers v) with both
    axes ordered by hop distance from ``node`` (``distances``, as
    :func:`graph_distances` gives them; ties by node id, unreachable last), a colour bar,
    and lines between the distance blocks. The diagonal (not a pair) is white; infinite
    losses (exposed pairs) take the colour bar's ``over`` colour. ``cmap`` should stay
    perceptually uniform (``cividis``, ``viridis``) so that the figure reads in greyscale.

    Up to :data:`NAMED_NODES` nodes every node is named on the bottom and left axes
    (``names[i]``, default the ids) and the distance blocks on the top and right ones
    (``d=1``, ...); beyond, the blocks on the bottom and left.
    """
    import matplotlib

    matrix = np.asarray(matrix, dtype=float)
    n = matrix.shape[0]
    if matrix.ndim != 2 or matrix.shape[1] != n or n < 2:
        raise InputError("pairs", f"expects a square n x n matrix, n >= 2 (got shape "
                         f"{matrix.shape})")
    distances = np.asarray(distances, dtype=float)
    if distances.shape != (n,):
        raise InputError("node", f"expected {n} distances (got shape {distances.shape})")
    key = np.where(np.isfinite(distances), distances, np.inf)
    order = np.lexsort((np.arange(n), key))
    shown = matrix[np.ix_(order, order)].copy()
    np.fill_diagonal(shown, np.nan)
    finite = shown[np.isfinite(shown)]
    if finite.size == 0:
        raise InputError("pairs", "the matrix holds no finite pairwise loss")
    check_losses(finite)
    exposed = bool(np.isposinf(shown).any())
    colormap = matplotlib.colormaps[cmap].with_extremes(bad="white", over="#D55E00")
    fig = Figure(figsize=(7.0, 6.0), layout="constrained")
    ax = fig.subplots()
    vmin, vmax = float(finite.min()), float(finite.max())
    constant = vmax - vmin <= CONSTANT_SPAN * max(1.0, abs(vmax))
    if constant:  # one colour says it all: no colour bar, the value in the title
        vmin, vmax = vmin - 0.5, vmax + 0.5
    over = vmax + 1.0 + abs(vmax)  # any value above vmax: drawn in the "over" colour
    data = np.ma.masked_invalid(np.where(np.isposinf(shown), over, shown))
    image = ax.imshow(data, cmap=colormap, vmin=vmin, vmax=vmax, interpolation="nearest",
                      aspect="equal", origin="upper")
    if not constant:
        bar = fig.colorbar(image, ax=ax, shrink=0.85, extend="max" if exposed else "neither")
        bar.set_label(label)
    sorted_d = key[order]
    levels, starts = np.unique(sorted_d, return_index=True)
    if levels.size <= 60:
        for b in starts[1:]:
            for line in (ax.axhline, ax.axvline):
                line(b - 0.5, color="white", linewidth=0.8)
                line(b - 0.5, color="black", linewidth=0.3)
    how = f"hops to node {node}" if role == "observer" else f"hops from node {node}"
    named = n <= NAMED_NODES
    if named:
        ids = [str(i) for i in (range(n) if names is None else names)]
        size = 7.0 if n <= 40 else 5.0
        ax.set_xticks(range(n), [ids[i] for i in order], rotation=90, fontsize=size)
        ax.set_yticks(range(n), [ids[i] for i in order], fontsize=size)
        if levels.size <= 25:
            top, right = ax.secondary_xaxis("top"), ax.secondary_yaxis("right")
            _block_ticks(top, levels, starts, n, both=False, axis="x")
            _block_ticks(right, levels, starts, n, both=False, axis="y")
            top.set_xlabel(f"d = {how}", fontsize="small")
    elif levels.size <= 25:
        _block_ticks(ax, levels, starts, n)
    else:
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(mticker.MaxNLocator(nbins=10, integer=True))
    ax.set_xlabel(f"observer v (ordered by {how}; block = one distance d)")
    ax.set_ylabel(f"source u (ordered by {how})")
    note = "; ε = ∞ (exposed) in orange" if exposed else ""
    if constant:
        note += f"\nconstant: {label} = {float(finite[0]):.4g} for every pair"
    ax.set_title(wrap_title((title or f"Pairwise losses, nodes ordered by distance to node {node}")
                       + note, 85), fontsize="medium")
    return fig


def _block_ticks(ax, levels: np.ndarray, starts: np.ndarray, n: int, both: bool = True,
                 axis: str = "x") -> None:
    """A tick labelled ``d=K`` at the middle of every distance block, on both axes (or on
    ``axis`` alone, a secondary axis); where blocks are too narrow for their labels side
    by side, every other label steps out (a second row on x, a second column on y)
    instead of being dropped."""
    ends = np.r_[starts[1:], n]
    centres = (starts + ends - 1) / 2.0
    names = [("d=∞" if not np.isfinite(d) else f"d={int(d)}") for d in levels]
    axes = [(ax.xaxis, 11.0), (ax.yaxis, 14.0)] if both else [
        (ax.xaxis, 11.0) if axis == "x" else (ax.yaxis, 14.0)]
    for which, _ in axes:
        which.set_ticks(centres, names)
    stepped = False
    for i in range(1, centres.size):
        stepped = not stepped and centres[i] - centres[i - 1] < n / 20
        if stepped:
            for axis_, pad in axes:
                tick = axis_.get_major_ticks()[i]
                tick.set_pad(pad)
                tick.tick1line.set_markersize(pad)
                tick.tick2line.set_markersize(pad)
