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
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib.ticker as mticker
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from netdp.core.errors import InputError
from netdp.core.simulation_config import ACCOUNTANTS
from netdp.report.figures import FORMATS, save  # noqa: F401 (re-exported)

#: Most groups of runs (lines) and categories (x ticks) a table figure draws, and most
#: histogram bins: beyond them a figure takes minutes and reads as noise.
MAX_GROUPS = 100
MAX_CATEGORIES = 200
MAX_BINS = 10_000

#: Okabe-Ito, colour-blind safe (its pale yellow replaced by wine, visible on white).
COLORS = ("#000000", "#E69F00", "#0072B2", "#009E73", "#D55E00", "#CC79A7", "#56B4E9",
          "#882255")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: Line styles of data series (one per accountant / measure); ':' and '-.' are reserved
#: for the LDP and theory reference lines.
LINESTYLES = ("-", "--", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)), (0, (1, 1)))
LDP_STYLE = ":"
THEORY_STYLE = "-."

#: Short names accepted for columns (``--x n``).
ALIASES = {"n": "nodes", "T": "steps", "K": "rounds", "eps": "epsilon", "L": "domain"}

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

#: Theoretical network-DP curves drawn by default, when the table has them.
DEFAULT_THEORY = ("complete-ndp-chernoff", "ring-ndp", "histogram-ring")

#: The utility measure of each task: data columns, then reference (role, column, label).
UTILITY = {
    "sum": (("abs_error",), (("theory", "theoretical_std", "theoretical std"),
                             ("ldp", "ldp_std", "LDP-baseline std"))),
    "histogram": (("mse",), (("theory", "theoretical_mse", "theoretical MSE"),
                             ("ldp", "ldp_mse", "LDP-baseline MSE"))),
}


# --------------------------------------------------------------------------- reading


def read_results(path: str | Path) -> pd.DataFrame:
    """The result table in ``path`` (a sweep folder, or one CSV / Parquet / JSON-lines file).

    A sweep folder is read with :func:`netdp.run.sweep.table.read_table`, a plain folder by
    concatenating its tables. Rows whose ``status`` is not ``"ok"`` are dropped. Raises
    :class:`InputError` (parameter ``DIR``) when nothing can be read or the table is empty.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("DIR", f"{str(path)!r} does not exist; give a folder written by "
                         "`netdp sweep` or a .csv/.parquet/.jsonl table")
    try:
        df = _read_any(path)
    except InputError:
        raise
    except Exception as exc:  # a torn or foreign file: one line, not a traceback
        raise InputError("DIR", f"cannot read a result table from {str(path)!r}: "
                         f"{type(exc).__name__}: {exc}") from None
    if "status" in df:
        df = df[df["status"].fillna("ok") == "ok"]
    if df.empty:
        raise InputError("DIR", f"{str(path)!r} holds no finished runs (empty table)")
    return df.reset_index(drop=True)


def _read_any(path: Path) -> pd.DataFrame:
    if path.is_dir():
        from netdp.run.sweep import table

        if (path / table.MANIFEST).exists():
            return table.read_table(path)
        files = sorted(p for ext in ("*.parquet", "*.csv", "*.jsonl")
                       for p in path.glob(ext) if not p.name.startswith("."))
        if not files:
            raise InputError("DIR", f"{str(path)!r} is neither a sweep folder (no "
                             f"{table.MANIFEST}) nor a folder of .parquet/.csv/.jsonl tables")
        return pd.concat([_read_file(p) for p in files], ignore_index=True)
    return _read_file(path)


def _read_file(path: Path) -> pd.DataFrame:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return pd.read_parquet(path)
    if suffix == ".csv":
        return pd.read_csv(path)
    if suffix in (".jsonl", ".json"):
        return pd.read_json(path, lines=True)
    raise InputError("DIR", f"cannot read {path.name!r}: allowed tables are .parquet, .csv, "
                     ".jsonl or a folder written by `netdp sweep`")


# --------------------------------------------------------------------------- columns


def column(df: pd.DataFrame, name: str, param: str) -> str:
    """The column ``name`` (or its alias) of ``df``, or :class:`InputError` on ``param``."""
    name = ALIASES.get(name, name)
    if name not in df.columns:
        allowed = ", ".join(sorted(set(df.columns) | {a for a, c in ALIASES.items()
                                                      if c in df.columns}))
        raise InputError(param, f"unknown column {name!r}; choose from {allowed}")
    return name


def config_columns(df: pd.DataFrame) -> list[str]:
    """The configuration columns of ``df`` (every task's parameters and ``eps0``), no seed."""
    from netdp.tasks import param_specs

    names = [name for name in param_specs() if name != "seed"] + ["eps0"]
    return [c for c in names if c in df.columns]


def accountants(df: pd.DataFrame) -> list[str]:
    """Accountants with ``A_mean``, ``A_min`` and ``A_max`` columns holding numbers."""
    found = [c[:-5] for c in df.columns if c.endswith("_mean") and c != "ldp_mean"
             and f"{c[:-5]}_min" in df and f"{c[:-5]}_max" in df
             and pd.to_numeric(df[c], errors="coerce").notna().any()]
    order = {a: i for i, a in enumerate(ACCOUNTANTS)}
    return sorted(found, key=lambda a: (order.get(a, len(order)), a))


def filter_rows(df: pd.DataFrame, where: Sequence[str]) -> pd.DataFrame:
    """Keep the rows matching every ``COLUMN=VALUE`` (``VALUE`` may list ``a,b``)."""
    for cond in where:
        name, sep, value = cond.partition("=")
        if not sep:
            raise InputError("where", f"expects COLUMN=VALUE (got {cond!r})")
        col = column(df, name.strip(), "where")
        wanted = [v.strip() for v in value.split(",")]
        if pd.api.types.is_bool_dtype(df[col]):
            keep = df[col].astype(str).str.lower().isin([w.lower() for w in wanted])
        elif pd.api.types.is_numeric_dtype(df[col]):
            try:
                nums = [float(w) for w in wanted]
            except ValueError:
                raise InputError("where", f"{col} holds numbers (got {value!r})") from None
            keep = np.isclose(df[col].to_numpy(float)[:, None], nums, rtol=1e-9).any(axis=1)
        else:
            keep = df[col].astype(str).isin(wanted)
        df = df[keep]
        if df.empty:
            raise InputError("where", f"no row has {col} = {value}")
    return df


def _numeric(df: pd.DataFrame, col: str, param: str) -> pd.Series:
    values = pd.to_numeric(df[col], errors="coerce")
    if values.notna().sum() == 0:
        raise InputError(param, f"column {col!r} holds no numbers")
    return values.astype(float).replace([np.inf, -np.inf], np.nan)


def _delta_text(df: pd.DataFrame) -> str:
    if "delta" not in df:
        return ""
    deltas = sorted(pd.to_numeric(df["delta"], errors="coerce").dropna().unique())
    if len(deltas) == 1:
        return f", δ = {deltas[0]:g}"
    return ", δ varies" if deltas else ""


# --------------------------------------------------------------------------- the engine


@dataclass(frozen=True)
class Series:
    """One quantity drawn for every group of runs.

    ``y`` is averaged over the seeds at each ``x``; the band spans the minimum of ``lo``
    and the maximum of ``hi`` (default: ``y`` itself). ``role`` ``"data"`` draws markers
    and the band; ``"ldp"`` and ``"theory"`` draw reference lines (no band).
    """

    label: str
    y: str
    lo: str | None = None
    hi: str | None = None
    role: str = "data"


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


def _fmt(value) -> str:
    if isinstance(value, float | np.floating):
        return f"{value:g}"
    return str(value)


def _group_label(keys: Sequence[str], values: tuple, named: bool = True) -> str:
    if not named and len(keys) == 1:
        return _fmt(values[0])
    return ", ".join(f"{_short(k)} = {_fmt(v)}" for k, v in zip(keys, values, strict=True))


def _wrap(text: str, width: int) -> str:
    """Wrap each line of a title to ``width`` characters."""
    text = text.replace(" = ", "\u00a0=\u00a0")  # never break "x = 1" apart
    return "\n".join(textwrap.fill(line, width) for line in text.split("\n"))


def _log_ticks(axis, limits: tuple[float, float]) -> None:
    """Label 1-2-5 ticks in plain numbers when a log axis spans less than 3 decades."""
    lo, hi = sorted(limits)
    if lo > 0 and hi / lo < 1e3:
        decades = 10.0 ** np.arange(np.floor(np.log10(lo)), np.ceil(np.log10(hi)) + 1)
        subs: tuple[float, ...] = (1.0, 2.0, 5.0)
        if np.sum((np.outer(decades, subs) >= lo) & (np.outer(decades, subs) <= hi)) < 3:
            subs = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)
        axis.set_major_locator(mticker.LogLocator(base=10, subs=subs))
        axis.set_major_formatter(mticker.FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(mticker.NullFormatter())


def _style_axes(ax, xlabel: str, ylabel: str, logx: bool, logy: bool, title: str) -> None:
    if logx:
        ax.set_xscale("log")
        _log_ticks(ax.xaxis, ax.get_xlim())
    if logy:
        ax.set_yscale("log")
        _log_ticks(ax.yaxis, ax.get_ylim())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(_wrap(title, 70), fontsize="medium")
    ax.grid(True, which="major", color="0.85", linewidth=0.6)
    if logx or logy:
        ax.grid(True, which="minor", color="0.93", linewidth=0.4)
    ax.set_axisbelow(True)


def _legend(fig: Figure, ax) -> None:
    """One legend: inside the axes when short, else in a column on the right."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    if len(handles) <= 5 and max(map(len, labels)) <= 40:
        ax.legend(fontsize="small", framealpha=0.9)
    else:
        fig.set_figwidth(fig.get_figwidth() + min(0.07 * max(map(len, labels)) + 0.8, 6.0))
        fig.legend(handles, labels, fontsize="small", loc="outside right upper",
                   frameon=False)


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
    fig = Figure(figsize=(6.4, 4.4), layout="constrained")
    ax = fig.subplots()
    split = len(groups) > 1 and len(series) > 1
    drawn_groups: list[tuple[int, tuple]] = []
    drawn_series: list[Series] = []
    for i, (values, sub) in enumerate(groups):
        color, marker = COLORS[i % len(COLORS)], MARKERS[i % len(MARKERS)]
        glabel = _group_label(keys, values) if keys else ""
        for s in series:
            if s.y not in sub or pd.to_numeric(sub[s.y], errors="coerce").notna().sum() == 0:
                continue
            agg = aggregate(sub, x, s)
            if agg.empty:
                continue
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
            if i not in [g[0] for g in drawn_groups]:
                drawn_groups.append((i, values))
            if s not in drawn_series:
                drawn_series.append(s)
    if not drawn_series:
        raise InputError("y", "nothing to plot: the chosen columns hold no numbers")
    if categorical:
        ax.set_xticks(range(len(ticks)), ticks, rotation=30 if len(ticks) > 4 else 0)
        ax.set_xlim(-0.6, len(ticks) - 0.4)
    _style_axes(ax, xlabel or LABELS.get(x, x), ylabel, logx and not categorical, logy,
                title)
    if split:
        _two_legends(fig, keys, drawn_groups, series, drawn_series)
    else:
        _legend(fig, ax)
    return fig


def _two_legends(fig: Figure, keys: Sequence[str], groups: list, series: Sequence[Series],
                 drawn: list[Series]) -> None:
    from matplotlib.lines import Line2D

    named = len(keys) > 1
    ghandles = [Line2D([], [], color=COLORS[i % len(COLORS)], marker=MARKERS[i % len(MARKERS)],
                       markersize=5, linewidth=1.6) for i, _ in groups]
    glabels = [_group_label(keys, values, named) for _, values in groups]
    shandles = [Line2D([], [], color="0.25", linewidth=1.6, **_style(series, s)) for s in drawn]
    fig.legend(ghandles, glabels, title=None if named else _short(keys[0]),
               fontsize="small", loc="outside right upper", frameon=False, alignment="left")
    fig.legend(shandles, [s.label for s in drawn], fontsize="small",
               loc="outside right lower", frameon=False, handlelength=3.0)
    width = max(map(len, glabels + [s.label for s in drawn]))
    fig.set_figwidth(fig.get_figwidth() + min(0.07 * width + 0.8, 6.0))


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
    out = [Series(f"{a} (empirical)", f"{a}_mean", f"{a}_min", f"{a}_max") for a in found]
    if ldp and "ldp_mean" in df:
        out.append(Series("LDP", "ldp_mean", role="ldp"))
    out += [Series(f"theory {name}", f"theory_{name}", role="theory") for name in theory]
    return out


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
        missing = values.isna() & _applies(df, name)
        if missing.any():
            values = values.copy()
            values[missing] = _curve(df[missing], name)
        if values.notna().any():
            df[col] = values
            kept.append(name)
        elif names is not None:
            raise InputError("theory", f"curve {name!r} does not apply to any row "
                             "(topology / task)")
    return df, kept


def _applies(df: pd.DataFrame, curve: str) -> pd.Series:
    topo = df.get("topology", pd.Series("complete", index=df.index)).astype(str)
    task = df.get("task", pd.Series("sum", index=df.index)).astype(str)
    if curve.startswith("complete"):
        return (topo == "complete") & (task == "sum")
    if curve.startswith("ring"):
        return (topo == "ring") & (task == "sum")
    if curve.startswith("histogram-ring"):
        return (topo == "ring") & (task == "histogram")
    return pd.Series(True, index=df.index)


def _curve(rows: pd.DataFrame, name: str) -> np.ndarray:
    from netdp.bounds.curves import CURVES

    n = rows["nodes"].to_numpy(float)
    eps0 = rows["eps0" if "eps0" in rows else "epsilon"].to_numpy(float)
    params = {"n": n, "eps0": eps0, "delta": rows["delta"].to_numpy(float)}
    steps = pd.to_numeric(rows.get("steps"), errors="coerce") if "steps" in rows else None
    params["T"] = (steps.fillna(pd.Series(100 * n, index=rows.index)).to_numpy(float)
                   if steps is not None else 100 * n)
    params["K"] = rows["rounds"].to_numpy(float) if "rounds" in rows else np.ones_like(n)
    with np.errstate(all="ignore"):
        return np.asarray(CURVES[name](**params), dtype=float) * np.ones_like(n)


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
                       ylabel=f"ε (pairwise{_delta_text(df)})", title=title)


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
    if task in UTILITY:
        data, refs = UTILITY[task]
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
    learning = "task" in df and not set(df["task"].astype(str)) & set(UTILITY)
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
        ylabel = f"ε (pairwise{_delta_text(df)})"
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


# --------------------------------------------------------------------------- one run


def off_diagonal(matrix: np.ndarray) -> np.ndarray:
    """The ``n (n - 1)`` losses ``M[u, v], u != v`` of a square matrix (diagonal dropped)."""
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] < 2:
        raise InputError("pairs", f"expects a square n x n matrix, n >= 2 (got shape "
                         f"{matrix.shape})")
    return matrix[~np.eye(matrix.shape[0], dtype=bool)]


def _refs(ax, refs: dict[str, float], vertical: bool) -> None:
    """Dotted LDP / dash-dot theory reference lines, labelled."""
    for i, (label, value) in enumerate(refs.items()):
        if value is None or not np.isfinite(value):
            continue
        style = LDP_STYLE if label.startswith("LDP") else THEORY_STYLE
        line = ax.axvline if vertical else ax.axhline
        line(value, color=COLORS[(i + 4) % len(COLORS)], linestyle=style, linewidth=1.8,
             label=f"{label}: {value:.3g}")


def pairs_figure(matrix: np.ndarray, *, refs: dict[str, float] | None = None,
                 xlabel: str = "ε(u → v) (pairwise)", title: str = "",
                 bins: int = 40) -> Figure:
    """Distribution of the pairwise losses of one run: histogram and ECDF of the
    off-diagonal entries, with reference values (``{"LDP": ..., "theory ...": ...}``)
    as vertical lines; infinite losses (exposed pairs) are counted in the title."""
    if not (isinstance(bins, int | np.integer) and 1 <= bins <= MAX_BINS):
        raise InputError("bins", f"must be an integer in 1..{MAX_BINS} (got {bins!r})")
    values = off_diagonal(matrix)
    values = values[~np.isnan(values)]
    exposed = int(np.isinf(values).sum())
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        raise InputError("pairs", "the matrix holds no finite pairwise loss")
    refs = {k: v for k, v in (refs or {}).items() if v is not None and np.isfinite(v)}
    lo, hi = float(finite.min()), float(finite.max())
    span = [lo, hi] + list(refs.values())
    logx = lo > 0 and max(span) / max(min(span), 1e-300) > 30
    if hi <= lo:  # every pair loses the same: one bar around the value
        edges = np.array([lo * 0.98, lo * 1.02]) if lo > 0 else np.array([lo - 0.5, lo + 0.5])
    elif logx:
        edges = np.geomspace(lo, hi, bins + 1)
    else:
        edges = np.linspace(lo, hi, bins + 1)
    fig = Figure(figsize=(10.0, 4.2), layout="constrained")
    left, right = fig.subplots(1, 2)
    left.hist(finite, bins=edges, color="0.55", edgecolor="black", linewidth=0.5,
              label=f"{finite.size:,} ordered pairs")
    left.axvline(finite.mean(), color="black", linestyle="-", linewidth=1.6,
                 label=f"mean: {finite.mean():.3g}")
    _refs(left, refs, vertical=True)
    _style_axes(left, xlabel, "ordered pairs (u, v)", logx, False, "Histogram")
    ecdf = np.sort(finite)
    right.step(ecdf, np.arange(1, ecdf.size + 1) / values.size, where="post", color="black",
               linewidth=1.6, label="empirical CDF")
    for q, marker in ((0.5, "o"), (0.9, "s"), (0.99, "^")):
        v = float(np.quantile(values, q)) if exposed == 0 else float(np.quantile(finite, q))
        right.plot([v], [q], marker=marker, color="black", markerfacecolor="white",
                   linestyle="none", label=f"q{round(q * 100)}: {v:.3g}")
    _refs(right, refs, vertical=True)
    _style_axes(right, xlabel, "fraction of pairs with loss ≤ ε", logx, False,
                "Empirical CDF")
    right.set_ylim(0, 1.02)
    for ax in (left, right):
        ax.legend(fontsize="small", framealpha=0.9, loc="best")
    note = f"; {exposed} exposed pair(s) (ε = ∞) not drawn" if exposed else ""
    fig.suptitle(_wrap((title or "Pairwise privacy losses of one run") + note, 110),
                 fontsize="medium")
    return fig


def distance_figure(losses: np.ndarray, distances: np.ndarray, *, node: int,
                    role: str = "observer", refs: dict[str, float] | None = None,
                    ylabel: str = "ε (pairwise)", title: str = "") -> Figure:
    """Loss of every other node against its graph distance to ``node``: every pair as a
    dot (jittered), the per-distance mean and min/max band, reference lines."""
    losses = np.asarray(losses, dtype=float)
    distances = np.asarray(distances, dtype=float)
    keep = np.isfinite(losses) & np.isfinite(distances)
    losses, distances = losses[keep], distances[keep].astype(int)
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
    _style_axes(ax, f"shortest-path distance ({who})", ylabel, False, logy,
                _wrap(title or f"Privacy vs graph distance (node {node})", 70))
    if levels.size <= 15:
        ax.set_xticks(levels)
        ax.set_xlim(levels.min() - 0.6, levels.max() + 0.6)
    else:
        ax.xaxis.set_major_locator(mticker.MaxNLocator(nbins=12, integer=True))
    _legend(fig, ax)
    return fig


def graph_distances(topo, node: int, role: str = "observer") -> np.ndarray:
    """Shortest-path hop counts between ``node`` and every node (networkx), following edge
    directions the way information flows: from ``u`` to the observer ``node``
    (``role="observer"``), or from ``node`` to each observer (``role="source"``).
    Unreachable nodes get NaN."""
    import networkx as nx

    n = topo.n
    if not 0 <= node < n:
        raise InputError("node", f"must lie in 0..{n - 1} (got {node})")
    if topo.kind == "ring":
        graph = nx.cycle_graph(n, create_using=nx.DiGraph)
    elif topo.kind == "complete":
        graph = nx.complete_graph(n)
    else:
        from scipy import sparse

        adj = sparse.csr_array((np.ones(topo.indices.size), topo.indices, topo.indptr),
                               shape=(n, n))
        graph = nx.from_scipy_sparse_array(
            adj, create_using=nx.DiGraph if topo.directed else nx.Graph)
    if role == "observer" and graph.is_directed():
        graph = graph.reverse(copy=False)
    lengths = nx.single_source_shortest_path_length(graph, node)
    out = np.full(n, np.nan)
    out[list(lengths)] = list(lengths.values())
    return out


# --------------------------------------------------------------------------- by distance

#: What ``by_distance_figure`` can draw from a result: the converted (ε, δ) losses, or the
#: Rényi divergences at the run's ``--rdp-order`` (gossip).
MEASURES = ("epsilon", "renyi")


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
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError("result", f"{source}: a by_distance row lacks distance/mean/min/max "
                         f"({type(exc).__name__}: {exc})") from None
    if not table:
        raise InputError("result", f"{source}: by_distance is empty")
    d, mean, lo, hi = (np.array(col) for col in zip(*table, strict=True))
    return DistanceSeries(label, d, mean, lo, hi, ldp, role)


def result_label(result: dict) -> str:
    """``task/protocol on topology`` of a ``netdp simulate`` result (what the run was)."""
    import re

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
        out.append(_rows_series(f"{label} (α = {_fmt(order)})", renyi["by_distance"], source,
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
    from matplotlib.patches import Patch

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
                handles.append((Patch(color=color, alpha=0.15, linewidth=0), line))
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
    _style_axes(ax, "hop distance from source u to observer v (shortest path)", ylabel,
                False, logy, title or "Pairwise privacy loss against hop distance")
    if levels.size <= 20:
        ax.set_xticks(levels)
    else:
        ax.xaxis.set_major_locator(mticker.MaxNLocator(nbins=12, integer=True))
    ax.set_xlim(levels.min() - 0.5, levels.max() + 0.5)
    if len(handles) <= 4 and max(map(len, labels)) <= 45:
        ax.legend(handles, labels, fontsize="small", framealpha=0.9)
    else:
        fig.set_figwidth(fig.get_figwidth() + min(0.065 * max(map(len, labels)) + 0.8, 6.0))
        fig.legend(handles, labels, fontsize="small", loc="outside right upper",
                   frameon=False)
    return fig


def heatmap_figure(matrix: np.ndarray, distances: np.ndarray, *, node: int,
                   role: str = "observer", label: str = "ε(u → v) (pairwise)",
                   title: str = "", cmap: str = "cividis") -> Figure:
    """The pairwise matrix ``M[u, v]`` (rows: sources u, columns: observers v) with both
    axes ordered by hop distance from ``node`` (``distances``, as
    :func:`graph_distances` gives them; ties by node id, unreachable last), a colour bar,
    and lines between the distance blocks. The diagonal (not a pair) is white; infinite
    losses (exposed pairs) take the colour bar's ``over`` colour. ``cmap`` should stay
    perceptually uniform (``cividis``, ``viridis``) so that the figure reads in greyscale.
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
    exposed = bool(np.isposinf(shown).any())
    colormap = matplotlib.colormaps[cmap].with_extremes(bad="white", over="#D55E00")
    fig = Figure(figsize=(7.0, 6.0), layout="constrained")
    ax = fig.subplots()
    vmin, vmax = float(finite.min()), float(finite.max())
    if vmax <= vmin:
        vmin, vmax = vmin - 0.5, vmax + 0.5
    over = vmax + 1.0 + abs(vmax)  # any value above vmax: drawn in the "over" colour
    data = np.ma.masked_invalid(np.where(np.isposinf(shown), over, shown))
    image = ax.imshow(data, cmap=colormap, vmin=vmin, vmax=vmax, interpolation="nearest",
                      aspect="equal", origin="upper")
    bar = fig.colorbar(image, ax=ax, shrink=0.85, extend="max" if exposed else "neither")
    bar.set_label(label)
    sorted_d = key[order]
    levels, starts = np.unique(sorted_d, return_index=True)
    if levels.size <= 60:
        for b in starts[1:]:
            for line in (ax.axhline, ax.axvline):
                line(b - 0.5, color="white", linewidth=0.8)
                line(b - 0.5, color="black", linewidth=0.3)
    if levels.size <= 25:
        ends = np.r_[starts[1:], n]
        centres = (starts + ends - 1) / 2.0
        keep, last = [], -np.inf
        for j, c in enumerate(centres):  # labels at least n/30 apart (small blocks crowd)
            if c - last >= n / 30 or j == 0:
                keep.append(j)
                last = c
        names = [("∞" if not np.isfinite(d) else str(int(d))) for d in levels[keep]]
        ax.set_xticks(centres[keep], names)
        ax.set_yticks(centres[keep], names)
    else:
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(mticker.MaxNLocator(nbins=10, integer=True))
    how = f"hops to node {node}" if role == "observer" else f"hops from node {node}"
    ax.set_xlabel(f"observer v (ordered by {how}; block = one distance)")
    ax.set_ylabel(f"source u (ordered by {how})")
    note = "; ε = ∞ (exposed) in orange" if exposed else ""
    ax.set_title(_wrap((title or f"Pairwise losses, nodes ordered by distance to node {node}")
                       + note, 85), fontsize="medium")
    return fig


# --------------------------------------------------------------------------- saving
