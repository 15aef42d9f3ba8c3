"""The report page of a run or a sweep: one self-contained HTML file.

:func:`run_page` renders a result's JSON object (``netdp simulate``, ``account``,
``attack``, ``audit``) with the sections of :mod:`netdp.report.sections` and the figures
that apply: the pairwise losses and the heatmap when the ``n x n`` matrix is at hand, the
loss by hop distance when the result has it. :func:`sweep_page` renders a sweep's folder:
the spec, the manifest's provenance, the mean per grid point, the theoretical lines and
the table presets of ``netdp plot``. Figures are the same matplotlib figures the ``plot``
command draws, inline as SVG; :func:`write_page` writes atomically.
``netdp report``, ``netdp simulate --html`` and ``netdp sweep --html`` use them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from netdp.core.errors import InputError, shorten, without_value
from netdp.core.files import write_atomic
from netdp.core.reading import read_json, read_own_text
from netdp.core.version import __version__
from netdp.report.html import (
    Section,
    code_block,
    document,
    esc,
    figure,
    number,
    paragraph,
    table,
)
from netdp.report.run_marks import check_shape
from netdp.report.sections import provenance_section, result_sections, title
from netdp.run.sweep.summary import grid_means

#: Most nodes whose n x n matrix the heatmap draws (beyond: a picture of noise, and MBs).
HEATMAP_NODES = 1000
#: The table presets a sweep page draws, and the column that must vary for each.
SWEEP_PRESETS = (("privacy-vs-n", "nodes"), ("utility-vs-eps", "eps0"))
#: Rows of failed runs a sweep page lists.
ERROR_ROWS = 50


def _figure(key: str, make: Callable[[], Any], alt: str, caption: str) -> str:
    """A figure rendered to inline SVG, or a note saying why it could not be drawn."""
    from netdp.report.figures import svg_text

    try:
        fig = make()
    except InputError as exc:
        return f'<p class="note">{esc(caption.split(":")[0])} not drawn: {esc(exc.message)}</p>'
    return figure(svg_text(fig), key, alt, caption)


def _loss_words(result: Mapping[str, Any]) -> str:
    """The first accountant's summary in words, for a figure's text alternative."""
    priv = result.get("privacy") if isinstance(result.get("privacy"), Mapping) else {}
    assert isinstance(priv, Mapping)
    emp = [e for e in priv.get("empirical") or [] if isinstance(e, Mapping)]
    if not emp:
        return ""
    e = emp[0]
    words = (f" {e.get('accountant', 'the accountant')}: mean {number(e.get('mean'))}, "
             f"min {number(e.get('min'))}, max {number(e.get('max'))}")
    ldp = priv.get("ldp")
    if isinstance(ldp, Mapping) and ldp.get("mean") is not None:
        words += f"; LDP mean {number(ldp['mean'])}"
    return words + "."


def run_figures(result: Mapping[str, Any], pairs: Any = None, topology: Any = None) -> str:
    """The figures of one run: pairs (histogram and ECDF) and heatmap with a matrix, the
    loss by hop distance when the result holds it; notes where one cannot be drawn."""
    from netdp.run.sweep import plot_command

    res = dict(result)
    out = []
    if pairs is None and _has_pairs(res):
        out.append(paragraph(f"Pairs and heatmap figures not drawn: {_why_no_matrix(res)}."))
    if pairs is not None:
        n = int(pairs.shape[0])
        out.append(_figure("fig-pairs", lambda: plot_command.pairs_plot(pairs, res),
                           f"Histogram and empirical CDF of the {n * (n - 1):,} pairwise "
                           f"losses ε(u → v), with the mean, quantiles and the LDP and "
                           f"theory reference lines.{_loss_words(res)}",
                           "Pairs: the distribution of the pairwise losses of this run "
                           "(left: histogram; right: empirical CDF)."))
        if n > HEATMAP_NODES:
            out.append(paragraph(f"Heatmap left out: n = {n} > {HEATMAP_NODES} nodes."))
        else:
            graph = (lambda: topology) if topology is not None else partial(result_topology,
                                                                             res)
            out.append(_figure("fig-heatmap",
                               lambda: plot_command.heatmap_plot(pairs, res, graph()),
                               f"Heatmap of the {n} x {n} matrix of pairwise losses, rows "
                               "sources u, columns observers v, both ordered by hop distance "
                               f"to node 0, with a colour bar.{_loss_words(res)}",
                               "Heatmap: the pairwise matrix, nodes ordered by hop distance "
                               "to node 0 (one block per distance)."))
    priv = res.get("privacy") if isinstance(res.get("privacy"), Mapping) else {}
    assert isinstance(priv, Mapping)
    if any(isinstance(e, Mapping) and e.get("by_distance") for e in priv.get("empirical") or []):
        out.append(_figure("fig-by-distance",
                           lambda: plot_command.by_distance_plot([("this run", res)]),
                           "Pairwise loss against hop distance from u to v: mean with the "
                           f"min–max band per distance and the LDP level.{_loss_words(res)}",
                           "By distance: the pairwise loss against the hop distance."))
    return "\n".join(out)


def _has_pairs(result: Mapping[str, Any]) -> bool:
    """Whether the result reports pairwise losses (the pairs figures would apply)."""
    priv = result.get("privacy")
    return isinstance(priv, Mapping) and any(isinstance(e, Mapping) and e.get("pairs")
                                             for e in priv.get("empirical") or [])


def _why_no_matrix(result: Mapping[str, Any]) -> str:
    """Why a page of ``result`` has no n x n matrix, and how to give it one."""
    seen = result.get("observers")
    if isinstance(seen, Mapping) and seen.get("mode") == "sampled":
        return (f"the run sampled {seen.get('accounted')} of {seen.get('of')} observers, so "
                "there is no n x n matrix (a cluster gives every observer: --workers K)")
    if isinstance(result.get("config"), Mapping) and result["config"].get("coalition"):
        return "a coalition observes as one: there is no n x n matrix"
    return ("the page was made without the run's n x n matrix: write it with 'netdp "
            "simulate ... --pairs-out FILE.npy' and give it to 'netdp report RUN.json --pairs "
            "FILE.npy' ('simulate --html' keeps it on its own up to 200 nodes)")


#: The config keys that say how a run's graph is built (:func:`result_topology`).
GRAPH_KEYS = ("topology", "nodes", "seed", "self_moves", "directed", "graph_format", "weight",
              "snapshot_period", "after_snapshots")


def result_topology(result: Mapping[str, Any], topology: str | None = None) -> Any:
    """The graph of a result: rebuilt from its config when it names a graph netdp makes
    (``hypercube``, ``ring``, ...), else from ``topology``, the file the user names
    (``--topology``); a file the JSON names is never opened."""
    from netdp.graphs.topologies import is_named
    from netdp.tasks import make_config
    from netdp.tasks.preparation import build_topology, with_seed

    config = result.get("config")
    if not isinstance(config, Mapping) or "topology" not in config:
        raise InputError("PATH", "the result has no config naming its graph (the heatmap "
                         "needs it)")
    params = {key: config[key] for key in GRAPH_KEYS if key in config}
    if topology is not None:
        params["topology"] = topology
    elif not is_named(params["topology"]) or params.get("graph_format") == "contacts":
        raise InputError("topology", "give --topology FILE, the run's graph: the heatmap "
                         "needs it, the JSON names a file, and netdp opens no file a JSON "
                         "names")
    try:
        built = with_seed(make_config(params))
        return build_topology(built, built.nodes)
    except InputError as exc:  # the JSON's values: never echoed, named by PATH
        if topology is not None and exc.param == "topology":
            raise
        raise InputError("PATH", f"its config cannot rebuild the run's graph ({exc.label}: "
                         f"{without_value(exc.message)})") from None


def run_page(result: Mapping[str, Any], *, pairs: Any = None, topology: Any = None,
             command: str | None = None) -> str:
    """The page of one result: its sections and the figures that apply."""
    sections = result_sections(result, command)
    figures = run_figures(result, pairs, topology)
    if figures:  # right after the answer
        at = 1 if sections and sections[0].id == "answer" else 0
        sections.insert(at, Section("figures", "Figures", figures))
    seed = result.get("seed")
    subtitle = (f"netdp {result.get('version', '?')}" + (f", seed {seed}" if seed is not None
                                                          else "")
                + "; every figure and table of this page is in this one file.")
    return document(title(result), subtitle, sections, f"Written by netdp {__version__}.")


# --------------------------------------------------------------------------- sweeps


def sweep_page(folder: str | Path, command: str | None = None) -> str:
    """The page of a sweep's folder: spec, provenance, results per grid point, theory,
    the table presets' figures and the runs that failed."""
    from netdp.run.sweep.table import ResultTable

    table_ = ResultTable(folder, param="PATH")
    manifest = table_.manifest() if table_.path.is_dir() else None
    if manifest is None:
        raise InputError("PATH", f"{str(folder)!r} is not a sweep folder (no sweep.json); "
                         "make one with `netdp sweep SPEC.toml --out DIR`")
    frame = table_.dataframe()
    sections = [_sweep_answer(frame, manifest)]
    figures = _sweep_figures(frame)
    if figures:
        sections.append(Section("figures", "Figures", figures))
    sections.append(_results_section(frame, manifest))
    failed = _failures(frame)
    if failed is not None:
        sections.append(failed)
    sections += [_spec_section(table_.path, manifest, command),
                 provenance_section(manifest, "sweep")]
    name = manifest.get("description") or manifest.get("spec_file") or str(folder)
    subtitle = (f"{len(frame):,} of {manifest.get('runs', '?')} runs in {folder}; every figure "
                "and table of this page is in this one file.")
    return document(f"netdp sweep: {name}", subtitle, sections,
                    f"Written by netdp {__version__}.")


def _sweep_answer(frame: Any, manifest: Mapping[str, Any]) -> Section:
    """The answer first: how much of the sweep ran (partial, failed, unequal seeds), and
    each accountant's mean pairwise loss over the grid points against the LDP baseline's
    (the smallest and largest ratio, and where)."""
    total = manifest.get("runs")
    done = int((frame["status"] == "ok").sum()) if "status" in frame else len(frame)
    facts = [f"{done:,} of {total if total is not None else '?'} runs finished"
             + ("" if total is None or done >= total else " (a partial sweep: the figures "
                "are over the runs that finished)")]
    errors = int((frame["status"] == "error").sum()) if "status" in frame else 0
    if errors:
        facts.append(f"{errors:,} run(s) ended with an error (listed below)")
    means = grid_means(frame, manifest) if done else None
    lines = []
    if means is not None:
        seeds = means["seeds"]
        facts.append(f"{len(means):,} grid points, "
                     + (f"{int(seeds.iloc[0])} seeds each" if seeds.nunique() == 1 else
                        f"unequal seeds: {int(seeds.min())} to {int(seeds.max())} per point"))
        names = [c for c in means.columns if c.endswith("_mean") and c != "ldp_mean"]
        for col in names if "ldp_mean" in means.columns else []:
            ratio = (means["ldp_mean"] / means[col]).replace([float("inf")], float("nan"))
            if ratio.notna().any():
                lo, hi = ratio.idxmin(), ratio.idxmax()
                lines.append(f"{col.removesuffix('_mean')}: the mean pairwise loss is "
                             f"{ratio[lo]:.3g}x to {ratio[hi]:.3g}x below the LDP baseline's "
                             f"mean over the grid points (least at {_point(means, lo)}, most "
                             f"at {_point(means, hi)})")
    body = "".join(f'<p class="answer-main">{esc(line)}.</p>' for line in lines)
    body += "<ul>" + "".join(f"<li>{esc(f)}</li>" for f in facts) + "</ul>"
    return Section("answer", "The answer", f'<div class="answer">{body}</div>')


def _point(means: Any, key: Any) -> str:
    """A grid point in words: ``nodes=100, eps0=0.1``."""
    names = list(means.index.names)
    values = key if isinstance(key, tuple) else (key,)
    return ", ".join(f"{n}={number(v)}" for n, v in zip(names, values, strict=False))


def _spec_section(path: Path, manifest: Mapping[str, Any], command: str | None) -> Section:
    spec = manifest.get("spec_file") or "SPEC.toml"
    body = [code_block(command or f"netdp sweep {spec} --out {path}", "command")]
    if manifest.get("description"):
        body.append(paragraph(str(manifest["description"])))
    grid = manifest.get("grid") or {}
    if grid:
        body.append(table("Grid axes (every combination runs, for every seed)",
                          ("axis", "values"), [(k, v) for k, v in grid.items()]))
    fixed = manifest.get("fixed") or {}
    if fixed:
        body.append(table("Fixed parameters", ("parameter", "value"), list(fixed.items())))
    text = path / "spec.toml"
    if text.is_file() or text.is_symlink():
        body.append(code_block(read_own_text(text, "PATH", "a UTF-8 copy of the sweep's "
                                             "spec (delete it)"), "the sweep spec"))
    return Section("command", "Command and spec", "\n".join(body))


def _rows(frame: Any) -> tuple[list[str], list[list[Any]]]:
    """Header and rows of a DataFrame (its index as leading columns), cells as Python
    values (missing as ``None``)."""
    import pandas as pd

    flat = frame.reset_index()
    rows = [[None if (not isinstance(v, list | tuple) and pd.isna(v)) else
             (v.item() if hasattr(v, "item") else v) for v in row]
            for row in flat.itertuples(index=False)]
    return [str(c) for c in flat.columns], rows


def _results_section(frame: Any, manifest: Mapping[str, Any]) -> Section:
    body = []
    if not frame.empty:
        counts = frame["status"].value_counts()
        body.append(paragraph("Runs by status: " + ", ".join(f"{n} {s}" for s, n in
                                                             counts.items()) + "."))
    means = grid_means(frame, manifest) if not frame.empty else None
    if means is None:
        body.append(paragraph("No run finished: nothing to summarise."))
        return Section("results", "Results", "\n".join(body))
    header, rows = _rows(means)
    body.append(table("Mean over seeds of each grid point (click a column header to sort)",
                      header, rows, sortable=True))
    theory = [c for c in frame.columns if c.startswith("theory_")
              and frame[c].notna().any()]
    if theory:
        ok = frame[frame["status"] == "ok"]
        axes = list(means.index.names)
        header, rows = _rows(ok.groupby(axes, sort=True, dropna=False)[theory].mean())
        body.append(table("Theoretical lines at each grid point (ε of each curve)",
                          [h.removeprefix("theory_") for h in header], rows, sortable=True))
    return Section("results", "Results", "\n".join(body))


def _sweep_figures(frame: Any) -> str:
    """The table presets whose x axis varies in the table (``netdp plot --preset``)."""
    from netdp.run.sweep import plot_command, plots

    ok = frame[frame["status"] == "ok"] if "status" in frame else frame
    if ok.empty:
        return ""
    out = []
    for preset, x in SWEEP_PRESETS:
        col = x if x in ok.columns else ("epsilon" if x == "eps0" else x)
        if col not in ok.columns or ok[col].nunique() < 2:
            out.append(paragraph(f"{preset} not drawn: {x} takes one value in this sweep."))
            continue
        hue = plot_command.DEFAULT_HUE[preset]
        df = ok.reset_index(drop=True)
        accountants = ", ".join(plots.accountants(df)) or "none"
        alt = (f"{preset}: the mean over seeds against {x} (log-log) with the min–max band, "
               f"one colour and marker per {hue}" + (f"; accountants {accountants}, the LDP "
                                                     "line and theoretical curves"
                                                     if preset == "privacy-vs-n" else "")
               + ".")
        make = partial(plot_command.table_preset, df, preset,
                       hue=hue if hue in df.columns else None)
        out.append(_figure(f"fig-{preset}", make, alt,
                           f"{preset}: as `netdp plot DIR --preset {preset}` draws it."))
    return "\n".join(out)


def _failures(frame: Any) -> Section | None:
    if frame.empty or "status" not in frame:
        return None
    bad = frame[frame["status"] != "ok"]
    if bad.empty:
        return None
    cols = [c for c in ("config_hash", "seed", "status", "error") if c in bad.columns]
    header, rows = _rows(bad[cols].head(ERROR_ROWS).set_index(cols[0]))
    return Section("failures", "Runs that failed",
                   table("Runs that ended with an error", header, rows, total=len(bad)))


# --------------------------------------------------------------------------- files


def read_result(path: str | Path, param: str = "PATH") -> dict[str, Any]:
    """A result's JSON object from ``path``, or :class:`InputError` on ``param``."""
    found = read_json(path, param, "a netdp JSON result (simulate, account, attack or "
                      "audit --json)")
    if not isinstance(found, dict):
        raise InputError(param, f"{str(path)!r} holds no JSON object (a netdp result is one)")
    check_shape(found, param)  # the fields the page and its figures read
    return found


def page_of(path: str | Path, pairs: str | Path | None = None,
            topology: str | None = None) -> str:
    """The page of a result file or a sweep folder (``pairs``: the run's matrix, from
    ``netdp simulate --pairs-out``; ``topology``: the run's graph file, which the heatmap
    needs when the JSON names a file; netdp opens no file a JSON names)."""
    from netdp.core.npy_file import read_npy

    path = Path(path)
    try:
        folder, there = path.is_dir(), path.exists()
    except OSError as exc:  # a name too long, a loop of links
        raise InputError("PATH", f"cannot read {shorten(str(path))!r}: "
                         f"{exc.strerror or exc}") from None
    if topology is not None and pairs is None:
        raise InputError("topology", "the graph of the heatmap, which goes with --pairs "
                         "(the run's matrix)")
    if folder:
        if pairs is not None:
            raise InputError("pairs", "goes with a run's JSON, not a sweep folder")
        return sweep_page(path)
    if not there:
        raise InputError("PATH", f"{str(path)!r} does not exist; give a run's JSON "
                         "(`netdp simulate --json > run.json`) or a sweep folder")
    result = read_result(path)
    matrix = None
    if pairs is not None and not isinstance(result.get("privacy"), dict):
        raise InputError("pairs", f"goes with a run's JSON that has a privacy summary "
                         f"(simulate or account); {str(path)!r} has none")
    if pairs is not None:
        matrix = read_npy(pairs, "pairs")
        n = (result.get("config") or {}).get("nodes")
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or (
                n is not None and matrix.shape[0] != n):
            raise InputError("pairs", f"expects the run's n x n matrix (n = {n}; got shape "
                             f"{matrix.shape})")
    graph = None
    if matrix is not None and matrix.shape[0] <= HEATMAP_NODES:
        graph = result_topology(result, topology)
        if graph.n != matrix.shape[0]:  # the graph given, or the one the JSON describes
            where = ("topology", "has") if topology is not None else (
                "pairs", "the run's JSON describes a graph of")
            raise InputError(where[0], f"{where[1]} {graph.n} nodes; the matrix in --pairs "
                             f"has {matrix.shape[0]}")
    return run_page(result, pairs=matrix, topology=graph)


def write_page(path: str | Path, text: str, param: str = "html") -> Path:
    """Write a page atomically; a failed write is an :class:`InputError` on ``param``."""
    write_atomic(path, text, param=param)
    return Path(path)

