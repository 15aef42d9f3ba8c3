"""Figures from a result table, a pairwise-loss matrix or one simulation.

Plain functions: each takes a pandas DataFrame (one row per run, see
:func:`read_results`) or arrays, and returns a matplotlib ``Figure`` built without pyplot
(no global state, rendered by Agg; a notebook displays it as it is); :func:`save` writes
it atomically as PNG, PDF or SVG. Every figure reads in greyscale:
series differ by marker and line style as well as by colour (the Okabe-Ito palette).

Row convention (the table ``netdp sweep`` writes): one row per (config, seed) run with
every :class:`~netdp.core.config.SimulationConfig` field as a column, ``eps0``, the utility
figures (``abs_error``, ``theoretical_std``, ``ldp_std`` for sums; ``mse``,
``theoretical_mse``, ``ldp_mse`` for histograms), ``ldp_mean/min/max``,
``theory_<curve>`` and, per accountant ``A``, ``A_mean, A_min, A_max, A_q50, ...``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from netdp.core.errors import InputError
from netdp.report.figures import (  # noqa: F401 (re-exported)
    COLORS,
    FORMATS,
    LDP_STYLE,
    LINESTYLES,
    MARKERS,
    MAX_BINS,
    THEORY_STYLE,
    band_handle,
    fmt_value,
    legend_columns,
    place_legend,
    save,
    style_axes,
    wrap_title,
)
from netdp.report.pair_figures import pairs_figure  # noqa: F401 (re-exported)
from netdp.report.run_marks import DEFAULT_THEORY
from netdp.run.sweep.plot_table import (  # noqa: F401 (re-exported)
    ALIASES,
    _delta_text,
    _numeric,
    accountants,
    column,
    config_columns,
    filter_rows,
    read_results,
    utility_columns,
)
from netdp.run.sweep.theory_values import curve_applies, curve_values

#: Most groups of runs (lines) and categories (x ticks) a table figure draws, and most
#: histogram bins: beyond them a figure takes minutes and reads as noise.
MAX_GROUPS = 100
MAX_CATEGORIES = 200
#: Beyond this many groups of runs with bands, a line figure draws one panel per group
#: (the bands of many groups drawn on one axes hide each other), in rows of
#: :data:`FACET_COLUMNS`.
FACET_GROUPS = 4
FACET_COLUMNS = 4


#: Axis labels (with units) of known columns.
LABELS = {
    "nodes": "n (nodes)",
    "steps": "T (random-walk steps)",
    "rounds": "K (turns of the ring)",
    "tokens": "tokens",
    "epsilon": "ε0 (LDP level of one contribution)",
    "eps0": "ε0 (LDP level of one contribution)",
    "delta": "δ",
    "domain": "L (categories)",
    "gamma": "γ (randomized-response parameter)",
    "runtime_s": "runtime (s)",
    "abs_error": "absolute error |estimate − mean|",
    "theoretical_std": "theoretical std of the estimate",
    "ldp_std": "LDP-baseline std of the estimate",
    "mse": "MSE of the frequencies",
    "theoretical_mse": "theoretical MSE of the frequencies",
    "ldp_mse": "LDP-baseline MSE of the frequencies",
    "l1": "L1 error of the frequencies",
    "linf": "L∞ error of the frequencies",
    "ldp_mean": "LDP loss of a node (ε)",
}


# --------------------------------------------------------------------------- the engine


@dataclass(frozen=True)
class Series:
    """One quantity drawn for every group of runs.

    ``y`` is averaged over the seeds at each ``x``; the band spans the minimum of ``lo``
    and the maximum of ``hi`` (default: ``y`` itself), and ``band`` says so in the
    legend. ``role`` ``"data"`` draws markers and the band; ``"ldp"`` and ``"theory"``
    draw reference lines (no band).
    """

    label: str
    y: str
    lo: str | None = None
    hi: str | None = None
    role: str = "data"
    band: str = "min–max over seeds"


def aggregate(df: pd.DataFrame, x: str, series: Series) -> pd.DataFrame:
    """Per ``x``: mean of ``series.y``, min of ``lo`` and max of ``hi`` over the rows."""
    frame = pd.DataFrame({
        "x": df[x].to_numpy(),
        "y": _numeric(df, series.y, "y").to_numpy(),
        "lo": _numeric(df, series.lo or series.y, "y").to_numpy(),
        "hi": _numeric(df, series.hi or series.y, "y").to_numpy(),
    })
    frame = frame.dropna(subset=["y"])
    out = frame.groupby("x", sort=True).agg(mean=("y", "mean"), min=("lo", "min"),
                                            max=("hi", "max"), runs=("y", "size"))
    return out.reset_index()


def _groups(df: pd.DataFrame, x: str, hue: str | None) -> tuple[list[str],
                                                                  list[tuple[tuple, pd.DataFrame]]]:
    """Split the runs into groups: by ``hue``, then by every other configuration column
    that takes several values at one ``x`` (so different settings are never averaged
    together, while columns that follow ``x``, like ``steps = 100 n``, split nothing).
    Returns the key columns and ``(values, rows)`` per group."""
    slice_by = [x] + ([hue] if hue is not None else [])
    text = df.astype({c: str for c in config_columns(df)})
    keys = [c for c in config_columns(df) if c not in {x, hue, "seed", "runs"}
            and (text.groupby(slice_by, dropna=False)[c].nunique(dropna=False) > 1).any()]
    if hue is not None and df[hue].astype(str).nunique(dropna=False) > 1:
        keys = [hue] + keys  # a hue with one value would only repeat itself in labels
    if not keys:
        return [], [((), df)]
    groups = [(v if isinstance(v, tuple) else (v,), sub)
              for v, sub in df.groupby(keys, sort=True, dropna=False)]
    return keys, groups


def _short(name: str) -> str:
    return {"eps0": "ε0", "epsilon": "ε0", "nodes": "n", "steps": "T", "delta": "δ",
            "rounds": "K", "gamma": "γ", "domain": "L"}.get(name, name)


def _group_label(keys: Sequence[str], values: tuple, named: bool = True) -> str:
    if not named and len(keys) == 1:
        return fmt_value(values[0])
    return ", ".join(f"{_short(k)} = {fmt_value(v)}" for k, v in zip(keys, values, strict=True))


def _style(series: Sequence[Series], s: Series) -> dict:
    if s.role == "data":
        j = [t for t in series if t.role == "data"].index(s)
        return {"linestyle": LINESTYLES[j % len(LINESTYLES)]}
    return {"linestyle": LDP_STYLE if s.role == "ldp" else THEORY_STYLE,
            "markerfacecolor": "white"}


def line_figure(df: pd.DataFrame, x: str, series: Sequence[Series], *, hue: str | None = None,
                logx: bool = False, logy: bool = False, xlabel: str | None = None,
                ylabel: str = "", title: str = "", band: bool = True) -> Figure:
    """Lines of ``series`` against ``x``: one colour and marker per group of runs (``hue``
    and every other setting that varies at one ``x``), one line style per series; mean
    over seeds with the min/max band (data series), LDP (dotted) and theory (dash-dot)
    reference lines. With several groups and several series the legend has two parts:
    groups (colour, marker) and series (line style)."""
    if df.empty:
        raise InputError("DIR", "no rows to plot")
    categorical = not pd.api.types.is_numeric_dtype(df[x])
    keys, groups = _groups(df, x, hue)
    if len(groups) > MAX_GROUPS:
        raise InputError("hue" if hue in keys else "where", f"{len(groups)} groups of runs "
                         f"to draw (one per value of {', '.join(keys)}); at most {MAX_GROUPS}: "
                         "keep fewer rows with --where, or choose another --hue")
    ticks: list = sorted(df[x].astype(str).unique()) if categorical else []
    if len(ticks) > MAX_CATEGORIES:
        raise InputError("x", f"{x!r} holds {len(ticks)} distinct non-numeric values; at "
                         f"most {MAX_CATEGORIES} (keep fewer rows with --where)")
    if band and not categorical and len(groups) > FACET_GROUPS and _spread(groups, x, series):
        return _facets(keys, groups, x, series, logx, logy, xlabel or LABELS.get(x, x),
                       ylabel, title)
    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    ax = fig.subplots()
    split = len(groups) > 1 and len(series) > 1
    drawn_groups: list[tuple[int, tuple]] = []
    drawn_series: list[Series] = []
    bands: list[str] = []
    runs: list[int] = []  # the data series' runs per point: unequal ones are said
    for i, (values, sub) in enumerate(groups):
        color, marker = COLORS[i % len(COLORS)], MARKERS[i % len(MARKERS)]
        glabel = _group_label(keys, values) if keys else ""
        for s in series:
            agg = _points(sub, x, s)
            if agg is None:
                continue
            if s.role == "data":
                runs += agg["runs"].astype(int).tolist()
            label = (None if split else ", ".join(p for p in (
                s.label if len(series) > 1 or not glabel else "", glabel) if p) or s.label)
            if categorical:  # dodged points with min/max error bars, no connecting line
                k = i * len(series) + series.index(s)
                xs = (np.array([ticks.index(str(v)) for v in agg["x"]])
                      + 0.7 * ((k + 0.5) / (len(groups) * len(series)) - 0.5))
                bars = s.role == "data" and band
                ax.errorbar(xs, agg["mean"], yerr=[agg["mean"] - agg["min"],
                                                   agg["max"] - agg["mean"]] if bars else None,
                            color=color, marker=marker, markersize=6, linestyle="none",
                            capsize=3, label=label,
                            markerfacecolor=color if s.role == "data" else "white")
            else:
                xs = agg["x"].to_numpy(float)
                ax.plot(xs, agg["mean"], color=color, marker=marker, markersize=5,
                        linewidth=1.6, label=label, **_style(series, s))
                if (s.role == "data" and band
                        and ((agg["runs"] > 1).any() or (agg["max"] > agg["min"]).any())):
                    ax.fill_between(xs, agg["min"], agg["max"], color=color, alpha=0.15,
                                    linewidth=0)
                    if s.band not in bands:
                        bands.append(s.band)
            if i not in [g[0] for g in drawn_groups]:
                drawn_groups.append((i, values))
            if s not in drawn_series:
                drawn_series.append(s)
    if not drawn_series:
        raise InputError("y", "nothing to plot: the chosen columns hold no numbers")
    if categorical:
        ax.set_xticks(range(len(ticks)), ticks, rotation=30 if len(ticks) > 4 else 0)
        ax.set_xlim(-0.6, len(ticks) - 0.4)
    title += _unequal(runs)
    style_axes(ax, xlabel or LABELS.get(x, x), ylabel, logx and not categorical, logy,
                title)
    if split:
        handles, labels = _split_entries(keys, drawn_groups, series, drawn_series)
    else:
        handles, labels = ax.get_legend_handles_labels()
    handles += [band_handle() for _ in bands]
    labels += [f"shaded: {text}" for text in bands]
    place_legend(fig, ax, handles, labels)
    return fig


def _points(sub: pd.DataFrame, x: str, s: Series) -> pd.DataFrame | None:
    """:func:`aggregate` of one group's series, ``None`` where it holds no number."""
    if s.y not in sub or pd.to_numeric(sub[s.y], errors="coerce").notna().sum() == 0:
        return None
    agg = aggregate(sub, x, s)
    return None if agg.empty else agg


def _unequal(runs: list[int]) -> str:
    """The title's line for unequal runs per point (a partial sweep, failed runs)."""
    if runs and min(runs) < max(runs):
        return (f"\nunequal runs per point: {min(runs)} to {max(runs)} (a partial sweep "
                "or failed runs)")
    return ""


def _spread(groups: list, x: str, series: Sequence[Series]) -> bool:
    """Whether some data series of some group has a band to draw (min below max)."""
    for _, sub in groups:
        for s in series:
            if s.role == "data" and s.y in sub:
                agg = aggregate(sub, x, s)
                if (agg["max"] > agg["min"]).any():
                    return True
    return False


def _facets(keys: Sequence[str], groups: list, x: str, series: Sequence[Series],
            logx: bool, logy: bool, xlabel: str, ylabel: str, title: str) -> Figure:
    """:func:`line_figure` of more than :data:`FACET_GROUPS` groups with bands: one small
    panel per group (shared axes; its colour and marker, its name on top), the series told
    apart by line style, one legend below: the bands no longer cover each other."""
    cols = min(FACET_COLUMNS, len(groups))
    rows = -(-len(groups) // cols)
    fig = Figure(figsize=(2.7 * cols + 0.8, 2.2 * rows + 1.2), layout="constrained")
    axes = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)
    drawn: list[Series] = []
    runs: list[int] = []
    for i, (values, sub) in enumerate(groups):
        ax = axes.flat[i]
        color, marker = COLORS[i % len(COLORS)], MARKERS[i % len(MARKERS)]
        for s in series:
            agg = _points(sub, x, s)
            if agg is None:
                continue
            if s.role == "data":
                runs += agg["runs"].astype(int).tolist()
            xs = agg["x"].to_numpy(float)
            ax.plot(xs, agg["mean"], color=color, marker=marker, markersize=4,
                    linewidth=1.4, **_style(series, s))
            if s.role == "data" and (agg["max"] > agg["min"]).any():
                ax.fill_between(xs, agg["min"], agg["max"], color=color, alpha=0.2,
                                linewidth=0)
            if s not in drawn:
                drawn.append(s)
        bottom, left = i + cols >= len(groups), i % cols == 0
        style_axes(ax, xlabel if bottom else "", ylabel if left else "", logx, logy,
                   _group_label(keys, values) if keys else "")
        ax.tick_params(labelbottom=True)
    for ax in axes.flat[len(groups):]:
        ax.set_visible(False)
    title += _unequal(runs)
    fig.suptitle(wrap_title(title, 90), fontsize="medium")
    from matplotlib.lines import Line2D

    handles: list = [Line2D([], [], color="0.25", linewidth=1.4, **_style(series, s))
                     for s in drawn]
    bands = sorted({s.band for s in drawn if s.role == "data"})
    labels = [s.label for s in drawn] + [f"shaded: {text}" for text in bands]
    handles += [band_handle() for _ in bands]
    fig.legend(handles, labels, fontsize="small", loc="outside lower center",
               ncols=legend_columns(fig, labels), frameon=False)
    return fig


def _split_entries(keys: Sequence[str], groups: list, series: Sequence[Series],
                   drawn: list[Series]) -> tuple[list, list[str]]:
    """The legend of several groups and several series, in one legend: each group
    (colour and marker, named ``ε0 = 0.1``), then each series (line style)."""
    from matplotlib.lines import Line2D

    handles: list = [Line2D([], [], color=COLORS[i % len(COLORS)],
                            marker=MARKERS[i % len(MARKERS)], markersize=5, linewidth=1.6)
                     for i, _ in groups]
    labels = [_group_label(keys, values) for _, values in groups]
    handles += [Line2D([], [], color="0.25", linewidth=1.6, **_style(series, s))
                for s in drawn]
    return handles, labels + [s.label for s in drawn]


# --------------------------------------------------------------------------- table figures


def privacy_series(df: pd.DataFrame, names: Sequence[str] | None = None, ldp: bool = False,
                   theory: Sequence[str] = ()) -> list[Series]:
    """The ``privacy`` group: each accountant's mean with the min/max band (over seeds and
    pairs), optionally the LDP line and theoretical curves (columns ``theory_<curve>``)."""
    found = accountants(df)
    if names:
        bad = [a for a in names if a not in found]
        if bad:
            raise InputError("accountant", f"no columns for {', '.join(bad)}; the table has "
                             f"{', '.join(found) or 'no accountant'}")
        found = list(names)
    if not found:
        raise InputError("y", "the table has no empirical privacy columns (A_mean, A_min, "
                         "A_max); was pairwise tracking on?")
    out = [Series(f"{a} ({_how(df, a)})", f"{a}_mean", f"{a}_min", f"{a}_max",
                  band="min–max over pairs and seeds") for a in found]
    if ldp and "ldp_mean" in df:
        out.append(Series("LDP", "ldp_mean", role="ldp"))
    given = _delta_text(df, ["delta"])
    out += [Series(f"theory {name}" + (f" ({given})" if given else ""), f"theory_{name}",
                   role="theory") for name in theory]
    return out


def _how(df: pd.DataFrame, accountant: str) -> str:
    """What an accountant's figures are, for its legend: the convention (``sound``: a
    bound of the view; ``reference``: the paper's method, each pair at its own δ) and the
    δ of its column ``A_delta``; ``empirical`` where the table records neither."""
    conventions = sorted(str(c) for c in df["convention"].dropna().unique()) \
        if "convention" in df else []
    parts = [f"{' and '.join(conventions)} convention"] if conventions else []
    given = _delta_text(df, [f"{accountant}_delta"])
    return ", ".join(parts + [given]) if parts or given else "empirical"


def privacy_label(df: pd.DataFrame, series: Sequence[Series]) -> str:
    """The y label of the privacy group, naming the δ its empirical ε is at: each
    accountant's ``A_delta`` column (the pair's δ, 2 k δ for k visits, the largest
    over its pairs), not the config's per-contribution ``delta``."""
    columns = [s.y.removesuffix("_mean") + "_delta" for s in series if s.role == "data"]
    text = _delta_text(df, [c for c in columns if c in df])
    return f"ε (pairwise, at {text})" if text else "ε (pairwise)"


def theory_columns(df: pd.DataFrame, names: Sequence[str] | None = None) -> tuple[
        pd.DataFrame, list[str]]:
    """Make sure ``df`` has a ``theory_<name>`` column for the wanted curves.

    ``names=None`` picks the network-DP curves of :data:`DEFAULT_THEORY` that apply to the
    table's rows. Missing values are recomputed from :data:`netdp.bounds.curves.CURVES`
    (``n = nodes``, ``T = steps``, ``K = rounds``, ``eps0``, ``delta``).
    """
    from netdp.bounds.curves import CURVES

    df = df.copy()
    chosen = list(DEFAULT_THEORY) if names is None else list(names)
    for name in chosen:
        if name not in CURVES:
            raise InputError("theory", f"unknown curve {name!r}; choose from "
                             f"{', '.join(CURVES)}")
    kept = []
    for name in chosen:
        col = f"theory_{name}"
        values = (pd.to_numeric(df[col], errors="coerce") if col in df
                  else pd.Series(np.nan, index=df.index))
        missing = values.isna() & curve_applies(df, name)
        if missing.any():
            values = values.copy()
            values[missing] = curve_values(df[missing], name)
        if values.notna().any():
            df[col] = values
            kept.append(name)
        elif names is not None:
            raise InputError("theory", f"curve {name!r} does not apply to any row "
                             "(topology / task)")
    return df, kept


def privacy_vs_n(df: pd.DataFrame, *, x: str = "nodes", hue: str | None = "eps0",
                 names: Sequence[str] | None = None, theory: Sequence[str] | None = None,
                 ldp: bool = True, logx: bool = True, logy: bool = True,
                 title: str | None = None) -> Figure:
    """Theoretical vs empirical pairwise ε against ``n`` (AISTATS 2022 Fig. 1b).

    Empirical: per accountant, mean over seeds and pairs with the min/max band; the LDP
    line; the theoretical network-DP curves (``theory_*`` columns, recomputed if absent).
    """
    x = column(df, x, "x")
    if hue is not None:
        hue = column(df, hue, "hue")
    df, kept = theory_columns(df, theory)
    series = privacy_series(df, names, ldp=ldp, theory=kept)
    title = title or _privacy_title(df)
    return line_figure(df, x, series, hue=hue, logx=logx, logy=logy,
                       ylabel=privacy_label(df, series), title=title)


def _privacy_title(df: pd.DataFrame) -> str:
    parts = ["Pairwise privacy loss"]
    if "topology" in df and df["topology"].nunique() == 1:
        parts.append(f"on the {df['topology'].iloc[0]} graph"
                     if df["topology"].iloc[0] == "complete" else
                     f"on {df['topology'].iloc[0]}")
    if "steps" in df and "nodes" in df:
        ratio = (pd.to_numeric(df["steps"], errors="coerce") / df["nodes"]).round(6).unique()
        if len(ratio) == 1 and not math.isnan(ratio[0]):
            parts.append(f"(T = {ratio[0]:g} n)")
    return " ".join(parts)


def utility_series(df: pd.DataFrame) -> tuple[list[Series], str]:
    """The ``utility`` group of the table's task: the error measure (mean with min/max band
    over seeds) and its theoretical and LDP references; and the y-axis label."""
    tasks = sorted(df["task"].astype(str).unique()) if "task" in df else ["sum"]
    if len(tasks) > 1:
        raise InputError("where", f"the table mixes tasks {', '.join(tasks)}; pick one, "
                         f"e.g. --where task={tasks[0]}")
    task = tasks[0]
    declared = utility_columns(task)
    if declared is not None:
        data, refs = declared
        out = [Series(LABELS[c].split(" of ")[0].split(" |")[0], c) for c in data if c in df]
        out += [Series(label, c, role=role) for role, c, label in refs
                if c in df and pd.to_numeric(df[c], errors="coerce").notna().any()]
        ylabel = LABELS[data[0]]
    else:  # learning tasks: one series per regime, <regime>_final_objective
        cols = [c for c in df.columns if c.endswith("_final_objective")
                and not c.startswith(("calibration_", "optimum_"))]
        out = [Series(f"{c.removesuffix('_final_objective')} (final objective)", c)
               for c in cols]
        if "optimum_objective" in df:
            out.append(Series("non-private optimum", "optimum_objective", role="theory"))
        ylabel = "training objective (loss)"
    if not any(s.role == "data" for s in out):
        raise InputError("y", f"the table has no utility columns for task {task!r}")
    return out, ylabel


def utility_vs_eps(df: pd.DataFrame, *, x: str = "eps0", hue: str | None = "mechanism",
                   logx: bool = True, logy: bool = True, title: str | None = None) -> Figure:
    """Utility (the task's error) against ε, per mechanism and every other varying setting;
    theoretical and LDP-baseline references where the table has them."""
    learning = "task" in df and not any(utility_columns(t) for t in set(df["task"].astype(str)))
    if x == "eps0" and ("eps0" not in df or df["eps0"].isna().all()):
        x = "epsilon"  # learning tasks: the calibration's target epsilon
    x = column(df, x, "x")
    if hue is not None:
        hue = column(df, hue, "hue")
    series, ylabel = utility_series(df)
    xlabel = "target ε (calibration of the noise)" if learning and x == "epsilon" else None
    return line_figure(df, x, series, hue=hue, logx=logx, logy=logy, ylabel=ylabel,
                       xlabel=xlabel, title=title or f"Utility vs privacy ({_tasks(df)})")


def _tasks(df: pd.DataFrame) -> str:
    return ", ".join(sorted(df["task"].astype(str).unique())) if "task" in df else "sum"


def table_figure(df: pd.DataFrame, x: str, y: Sequence[str], *, hue: str | None = None,
                 logx: bool = False, logy: bool = False, names: Sequence[str] | None = None,
                 ldp: bool = False, theory: Sequence[str] = (), title: str | None = None
                 ) -> Figure:
    """The generic plot: ``y`` is ``privacy``, ``utility`` or column names, against ``x``;
    mean over seeds with the min/max band, one group per ``hue`` value."""
    x = column(df, x, "x")
    if hue is not None:
        hue = column(df, hue, "hue")
    y = list(y)
    if not y:
        raise InputError("y", "give privacy, utility or a column name")
    if len(y) > 1 and {"privacy", "utility"} & set(y):
        raise InputError("y", "privacy and utility are groups: give one alone, or column "
                         "names")
    if y != ["privacy"]:
        for flag, given in (("theory", theory), ("ldp", ldp), ("accountant", names)):
            if given:
                raise InputError(flag, "applies to --y privacy (or --preset privacy-vs-n)")
    if y == ["privacy"]:
        if theory:
            df, theory = theory_columns(df, theory)
        series = privacy_series(df, names, ldp=ldp, theory=theory)
        ylabel = privacy_label(df, series)
        what = "Privacy"
    elif y == ["utility"]:
        series, ylabel = utility_series(df)
        what = ylabel[:1].upper() + ylabel[1:]
    else:
        cols = [column(df, name, "y") for name in y]
        for c in cols:
            _numeric(df, c, "y")
        series = [Series(c, c) for c in cols]
        ylabel = LABELS.get(cols[0], cols[0]) if len(cols) == 1 else ", ".join(cols)
        what = ylabel[:1].upper() + ylabel[1:]
    return line_figure(df, x, series, hue=hue, logx=logx, logy=logy, ylabel=ylabel,
                       title=title or f"{what} vs {_short(x)}")

