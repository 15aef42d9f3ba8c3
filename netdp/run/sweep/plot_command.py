"""``netdp plot``: figures from a sweep's result table, or from one simulation."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
from collections import Counter
from pathlib import Path
from typing import Any

from netdp.core.config import read_config
from netdp.core.errors import InputError, shorten, values_from_file
from netdp.core.files import check_file_name, check_not_inputs, sweep_parts
from netdp.core.reading import read_json
from netdp.report import figures, run_marks
from netdp.run.api import run
from netdp.run.cli import parse_sets
from netdp.run.resources import check_footprint
from netdp.tasks import make_config, task_of
from netdp.tasks.preparation import with_seed
from netdp.tracking.base import MATRIX_LIMIT

PRESETS = ("privacy-vs-n", "pairs", "distance", "utility-vs-eps", "by-distance", "heatmap")
ONE_RUN_PRESETS = ("pairs", "distance", "heatmap")
TABLE_PRESETS = ("privacy-vs-n", "utility-vs-eps")
ROLES = ("observer", "source")

EPILOG = """\
examples:
  netdp plot out/fig1b --preset privacy-vs-n --out fig1b.png     # Fig. 1b from a sweep
  netdp plot out/fig1b --x n --y privacy --hue eps0 --logx --logy --out eps.pdf
  netdp plot out/util --preset utility-vs-eps --where topology=ring --out util.svg
  netdp plot out/util --x eps0 --y abs_error --y theoretical_std --hue nodes --logy
  netdp plot --preset pairs --nodes 200 --seed 1 --out pairs.png  # runs one simulation
  netdp simulate -n 500 --seed 1 --pairs-out p.npy --out r.json
  netdp plot --preset pairs --pairs p.npy --result r.json --out pairs.png
  netdp plot --preset distance --task sgd --topology hypercube -n 64 --seed 1 --out d.png
  netdp plot --preset distance --topology ring --task histogram --set dummies=0 \\
      --nodes 200 --node 10 --epsilon 0.5 --seed 1 --out dist.png
  netdp plot --preset distance --config run.toml --node 3
  netdp simulate --task sum --protocol gossip --topology hypercube -n 256 --sigma 1 \\
      --rdp-order 2 --seed 1 --out g.json
  netdp simulate --task sgd --topology hypercube -n 256 --seed 1 --out w.json
  netdp plot --preset by-distance --result g.json --result w.json --logy --out bd.png
  netdp plot --preset by-distance --result g.json --y renyi --out renyi.png
  netdp plot --preset heatmap --task sum --protocol gossip --topology grid -n 100 \\
      --set sigma=1 --node 0 --seed 1 --out heat.png
  netdp plot --preset heatmap --pairs p.npy --node 10 --seed 1 --out heat.png

Table plots (DIR: a folder written by `netdp sweep`, or a .csv/.parquet/.jsonl table):
one point per x value and group of runs, the mean over seeds with a min/max band. Runs
are grouped by --hue and by every other setting that varies in the table, so different
settings are never averaged together; filter with --where. --y takes column names or a
group: privacy (each accountant's mean ε over pairs and seeds, band: min/max over pairs
and seeds) or utility (the task's error: abs_error for sums, mse for histograms, with
their theoretical and LDP-baseline values).

Presets:
  privacy-vs-n    DIR; theoretical vs empirical ε against n, log-log, LDP line (dotted)
                  and theory (dash-dot: theory_* columns, or netdp.bounds.curves.CURVES)
  utility-vs-eps  DIR; the task's error against eps0 per mechanism, log-log
  pairs           one run: histogram and ECDF of its n x n pairwise losses
  distance        one run: each node's loss against its shortest-path distance to --node
  heatmap         one run: the n x n matrix, nodes ordered by hop distance from --node
                  (ties by id), a block per distance, colour bar (cividis)
  by-distance     --result FILE.json (repeatable): each run's pairwise loss against hop
                  distance (privacy.empirical[].by_distance: mean line, min-max band),
                  its LDP level (dotted) and any per-distance theory (dash-dot);
                  --y renyi for the Renyi divergences of gossip runs with --rdp-order;
                  linear x, --logy for a log y axis
One-run presets simulate the config given by --config FILE.toml (the keys of `netdp
simulate --config`), --set KEY=VALUE and the few flags below (flags win), or read a
matrix written by `netdp simulate --pairs-out FILE.npy` (--pairs; --result FILE.json
from the same run's --out adds the LDP and theory marks). A run has a pairwise matrix
on the ring and the complete graph (sum with gaussian or laplace noise, histogram), on
any graph with --task sgd or --task sum --protocol gossip, and for a walk sum on any
graph when every observer is tracked (up to 200 nodes, or --sources n); never with a
coalition.

The image format follows the extension of --out (.png, .pdf, .svg); the file is written
atomically. Bad input exits with status 2 and writes nothing.
"""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``plot`` subcommand to the ``netdp`` parser."""
    p = sub.add_parser("plot", help="plot a sweep's results or one run's pairwise losses",
                       description="Plot a result table (theory vs empirical privacy, "
                       "utility) or the pairwise losses of one simulation.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", nargs="?", metavar="DIR", help="results folder of `netdp sweep` "
                   "(or a .csv/.parquet/.jsonl table); not used by pairs and distance")
    p.add_argument("--preset", choices=PRESETS, help="a named figure (see below)")
    p.add_argument("--out", metavar="FILE", help="image to write: .png, .pdf or .svg "
                   "(default: PRESET.png, or Y-vs-X.png, in the current folder)")
    p.add_argument("--title", help="replace the figure's title")

    tab = p.add_argument_group("table plots")
    tab.add_argument("--x", metavar="COLUMN", help="x axis: a column (aliases: n = nodes, "
                     "T = steps, K = rounds, eps = epsilon); default nodes for privacy-vs-n, "
                     "eps0 for utility-vs-eps")
    tab.add_argument("--y", action="append", metavar="COLUMN|GROUP", help="y axis: privacy, "
                     "utility, or a column (repeat for several columns); by-distance: "
                     "epsilon (default) or renyi")
    tab.add_argument("--hue", metavar="COLUMN", help="one colour and marker per value of this "
                     "column (default: eps0 for privacy-vs-n, mechanism for utility-vs-eps)")
    tab.add_argument("--where", action="append", default=[], metavar="COLUMN=VALUE",
                     help="keep only rows with this value (VALUE may list a,b); repeatable")
    tab.add_argument("--logx", action=argparse.BooleanOptionalAction, default=None,
                     help="logarithmic x axis (presets: on)")
    tab.add_argument("--logy", action=argparse.BooleanOptionalAction, default=None,
                     help="logarithmic y axis (table presets: on; by-distance: off)")
    tab.add_argument("--accountant", action="append", metavar="NAME", help="privacy: only "
                     "these accountants (default: every one in the table)")
    tab.add_argument("--theory", action="append", metavar="CURVE", help="theoretical curves "
                     "to draw (names of `netdp bounds`; default for privacy-vs-n: "
                     "complete-ndp-chernoff, ring-ndp or histogram-ring, as they apply)")
    tab.add_argument("--ldp", action=argparse.BooleanOptionalAction, default=None,
                     help="draw the LDP line (ldp_mean) with --y privacy (privacy-vs-n: on)")

    one = p.add_argument_group("one-run presets (pairs, distance, heatmap, by-distance)")
    one.add_argument("--pairs", metavar="FILE.npy", help="a matrix from `netdp simulate "
                     "--pairs-out` instead of running a simulation")
    one.add_argument("--result", action="append", metavar="FILE.json", help="the same "
                     "run's JSON (`netdp simulate --out`): marks its LDP loss and theoretical "
                     "curve; by-distance: the runs to draw (repeatable)")
    one.add_argument("--config", metavar="FILE.toml", help="simulation parameters (keys of "
                     "`netdp simulate --config`)")
    one.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                     help="one simulation parameter, a TOML value (e.g. dummies=0, "
                     "accountants=['rdp']); repeatable")
    one.add_argument("--topology", help="as in simulate (default: complete)")
    one.add_argument("--task", help="as in simulate: sum, histogram or sgd")
    one.add_argument("--protocol", help="as in simulate (e.g. gossip, with --task sum)")
    one.add_argument("--nodes", "-n", type=int, metavar="N", help="number of nodes")
    one.add_argument("--epsilon", "-e", type=float, metavar="EPS", help="eps0 of one "
                     "contribution")
    one.add_argument("--seed", type=int, metavar="INT", help="seed of the run (default: "
                     "fresh, shown in the title)")
    one.add_argument("--node", type=int, default=0, metavar="V", help="distance, heatmap: "
                     "the node distances are measured from (default: 0)")
    one.add_argument("--role", choices=ROLES, default="observer", help="distance, heatmap: "
                     "observer "
                     "(default; the loss of each node u towards V) or source (the loss of V "
                     "towards each observer)")
    one.add_argument("--bins", type=int, default=40, metavar="B", help="pairs: histogram "
                     "bins (default: 40)")
    from netdp.run.cli.param_flags import add_param_flags

    add_param_flags(p, skip=OWN_FLAGS, prefix="one-run presets, as in simulate: ")
    p.set_defaults(handler=_plot)


def _plot(args: argparse.Namespace) -> int:
    path = _run(args)
    print(f"wrote {path}")
    return 0


def _run(args: argparse.Namespace) -> Path:
    from netdp.run.sweep import plots

    if args.out is not None:
        check_file_name(args.out, "out")
    out = Path(args.out) if args.out else Path(_default_name(args))
    check_image(out)
    check_not_inputs([("out", out)], [
        *sweep_parts("DIR", args.dir), ("pairs", args.pairs), ("config", args.config),
        ("topology", args.topology), *(("result", r) for r in args.result or [])])
    if not 1 <= args.bins <= figures.MAX_BINS:
        raise InputError("bins", f"must be an integer in 1..{figures.MAX_BINS} (got "
                         f"{args.bins})")
    if args.preset in ONE_RUN_PRESETS:
        if args.dir is not None:
            raise InputError("DIR", f"--preset {args.preset} plots one run, not a table: "
                             "drop DIR, give --pairs FILE.npy or simulation parameters")
        fig = {"pairs": _pairs, "distance": _distance, "heatmap": _heatmap}[args.preset](args)
    elif args.preset == "by-distance":
        fig = _by_distance(args)
    else:
        _no_run_flags(args)
        if args.dir is None:
            raise InputError("DIR", "give the results folder of `netdp sweep` (or a table "
                             "file)" + ("" if args.preset else ", or --preset "
                                        "pairs|distance|heatmap|by-distance"))
        df = plots.filter_rows(plots.read_results(args.dir), args.where)
        fig = _table(args, df)
    return plots.save(fig, out)


def _default_name(args: argparse.Namespace) -> str:
    if args.preset:
        return f"{args.preset}.png"
    y = "-".join(args.y or ["y"])
    return f"{y}-vs-{args.x or 'x'}.png".replace("/", "_")


def check_image(out: Path, param: str = "out") -> None:
    """Refuse, before any work, an image path of an unknown format or in no writable
    folder."""
    from netdp.run.sweep.plots import FORMATS

    if out.suffix.lower() not in FORMATS:
        raise InputError(param, f"unknown image format {out.suffix or '(none)'!r} in "
                         f"{str(out)!r}; allowed: {', '.join(FORMATS)}")
    parent = out.parent if str(out.parent) else Path(".")
    if out.is_dir() or not parent.is_dir():
        raise InputError(param, f"cannot write {str(out)!r}: give a file in an existing "
                         "folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(param, f"cannot write {str(out)!r}: {str(parent)!r} is not "
                         "writable")


def _no_run_flags(args: argparse.Namespace) -> None:
    given = [name for name in ("pairs", "result", "config", "topology", "task", "protocol",
                               "nodes", "epsilon", "seed") if getattr(args, name) is not None]
    given += (["set"] if args.set else []) + _sim_flags_given(args)
    if given:
        from netdp.tasks import param_specs

        spec = param_specs().get(given[0])  # named by its flag (--after: after_snapshots)
        raise InputError(spec.flag if spec is not None and spec.flag else given[0],
                         "sets up one run: use it with --preset pairs, distance, heatmap "
                         "(or --result with by-distance)")


def _table(args: argparse.Namespace, df):
    from netdp.run.sweep import plots

    if args.preset in TABLE_PRESETS:
        return table_preset(df, args.preset, x=args.x, hue=_hue(args, df, DEFAULT_HUE[
            args.preset]), names=args.accountant, theory=args.theory, ldp=args.ldp,
            logx=args.logx, logy=args.logy, title=args.title)
    if args.x is None:
        raise InputError("x", "give the x column (e.g. --x n), or a --preset: "
                         f"{', '.join(PRESETS)}")
    if not args.y:
        raise InputError("y", "give privacy, utility or a column name (e.g. --y privacy)")
    return plots.table_figure(df, args.x, args.y, hue=args.hue, logx=bool(args.logx),
                              logy=bool(args.logy), names=args.accountant, ldp=bool(args.ldp),
                              theory=args.theory or (), title=args.title)


#: The --x of each table preset when none is given.
PRESET_X = {"privacy-vs-n": "nodes", "utility-vs-eps": "eps0"}
#: The --hue of each table preset when none is given (and the table has that column).
DEFAULT_HUE = {"privacy-vs-n": "eps0", "utility-vs-eps": "mechanism"}


def table_preset(df, preset: str, *, x: str | None = None, hue: str | None = None,
                 names: list[str] | None = None, theory: list[str] | None = None,
                 ldp: bool | None = None, logx: bool | None = None, logy: bool | None = None,
                 title: str | None = None) -> Any:
    """The figure of a table preset (``privacy-vs-n``, ``utility-vs-eps``) of a result
    table, as ``netdp plot DIR --preset PRESET`` draws it (``None``: the preset's
    default)."""
    from netdp.run.sweep import plots

    default = PRESET_X.get(preset)
    if x is None and default is not None and plots.ALIASES.get(default, default) not in \
            df.columns:  # the preset's own x: the table is the one given that lacks it
        raise InputError("DIR", f"the table has no column {default!r} (the x of --preset "
                         f"{preset}; give --x COLUMN); it has "
                         f"{shorten(', '.join(sorted(map(str, df.columns))), 100)}")
    if preset == "privacy-vs-n":
        return plots.privacy_vs_n(df, x=x or "nodes", hue=hue, names=names, theory=theory,
                                  ldp=ldp is not False, logx=logx is not False,
                                  logy=logy is not False, title=title)
    if preset == "utility-vs-eps":
        return plots.utility_vs_eps(df, x=x or "eps0", hue=hue, logx=logx is not False,
                                    logy=logy is not False, title=title)
    raise InputError("preset", f"{preset!r} is not a table preset; choose from "
                     f"{', '.join(TABLE_PRESETS)}")


def _hue(args: argparse.Namespace, df, default: str) -> str | None:
    if args.hue is not None:
        return args.hue
    return default if default in df.columns else None


# --------------------------------------------------------------------------- one run


#: The simulation parameters plot declares itself (the others: simulate's own flags).
OWN_FLAGS = frozenset({"topology", "task", "protocol", "nodes", "epsilon", "seed",
                       "accountants"})


@functools.cache
def simulate_flags() -> frozenset[str]:
    """The simulation parameters whose flags plot takes from simulate (not OWN_FLAGS)."""
    from netdp.run.cli.param_flags import add_param_flags

    return frozenset(add_param_flags(argparse.ArgumentParser(add_help=False),
                                     skip=OWN_FLAGS))


def _sim_flags_given(args: argparse.Namespace) -> list[str]:
    """The simulate flags given on the command line (absent from ``args`` otherwise)."""
    return sorted(k for k in vars(args) if k in simulate_flags())


def _config(args: argparse.Namespace, nodes: int | None = None):
    from netdp.core.config import flat_params

    params = read_config(args.config) if args.config else {}
    read = dict(params)  # the --config file's values: never echoed
    params.update(parse_sets(args.set))
    flags = {k: getattr(args, k) for k in _sim_flags_given(args)}
    params.update(flat_params(flags))
    for name in ("topology", "task", "protocol", "nodes", "epsilon", "seed"):
        if getattr(args, name) is not None:
            params[name] = getattr(args, name)
    if nodes is not None:
        if params.get("nodes", nodes) != nodes:
            raise InputError("nodes", f"the matrix in --pairs has n = {nodes} (got "
                             f"{params['nodes']})")
        params["nodes"] = nodes
    if "range" in params:
        params["low"], params["high"] = params.pop("range")
    with values_from_file(set(read) - set(parse_sets(args.set)) - set(flat_params(flags)) - {
            name for name in ("topology", "task", "protocol", "nodes", "epsilon", "seed")
            if getattr(args, name) is not None} | (
                {"low", "high", "range"} if {"low", "high", "range"} & set(read) else set())):
        return make_config(params)


def _simulate(args: argparse.Namespace):
    """Run the one-run config with pairs kept: (matrix, result dict, topology)."""

    config = with_seed(_config(args))
    if config.nodes is not None and config.nodes > MATRIX_LIMIT:  # before building a graph
        raise InputError("nodes", f"the pairwise matrix is offered up to n = {MATRIX_LIMIT} "
                         f"(got {config.nodes})")
    if config.accountants == ():
        raise InputError("accountant", "pairwise tracking is off (accountants = []); "
                         "give one, e.g. --set accountants=['kov']")
    if config.coalition is not None:
        raise InputError("coalition", "a coalition observes as one: there is no pairwise "
                         "matrix; drop it for --preset pairs/distance")
    task = task_of(config)
    check_footprint(task, config)
    setup = task.prepare(config)
    try:
        res = run(setup, keep_pairs=True)
    except InputError as exc:
        if exc.param == "pairs-out":
            raise InputError("nodes", exc.message) from None
        raise
    result = res.to_json()
    if res.pairs is None:  # the task's tracker says where it applies (keep_pairs refuses)
        raise InputError("task", f"this run ({res.config.task}) has no pairwise matrix")
    return res.pairs, result, res.topology


def _load_pairs(args: argparse.Namespace):
    import numpy as np

    from netdp.core.npy_file import read_npy
    from netdp.tracking.loss_table import MATRIX_LIMIT

    matrix = read_npy(args.pairs, "pairs", mmap=True)  # the shape checked before the data
    if (not isinstance(matrix, np.ndarray) or matrix.ndim != 2
            or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] < 2):
        raise InputError("pairs", f"expects a square n x n matrix (got shape "
                         f"{getattr(matrix, 'shape', None)})")
    if matrix.shape[0] > MATRIX_LIMIT:
        raise InputError("pairs", f"the matrix has n = {matrix.shape[0]}; at most "
                         f"{MATRIX_LIMIT}")
    if np.iscomplexobj(matrix):
        raise InputError("pairs", f"expects a real matrix of losses (got {matrix.dtype})")
    try:
        matrix = np.array(matrix, dtype=float)
    except (OSError, ValueError, TypeError) as exc:
        raise InputError("pairs", f"cannot read a .npy matrix from {args.pairs!r}: "
                         f"{exc}") from None
    result = None
    if args.result:
        if len(args.result) > 1:
            raise InputError("result", f"--preset {args.preset} reads one run: give one "
                             f"--result (got {len(args.result)})")
        path = args.result[0]
        result = _read_result(path)
        n = (result.get("config") or {}).get("nodes")
        if n is None:
            raise InputError("result", f"{path!r} has no config.nodes: give a `netdp simulate "
                             "--out` JSON")
        if n != matrix.shape[0]:
            raise InputError("result", f"{path!r} is a run on another number of nodes than "
                             f"the matrix's n = {matrix.shape[0]}")
    return matrix, result


def _pairs(args: argparse.Namespace):
    if args.pairs:
        if args.config or args.set:
            raise InputError("pairs", "reads a finished run: drop --config/--set (give "
                             "--result FILE.json for the marks)")
        matrix, result = _load_pairs(args)
    else:
        matrix, result, _ = _simulate(args)
    return pairs_plot(matrix, result, bins=args.bins, theory=args.theory, title=args.title)


def pairs_plot(matrix: Any, result: dict | None, *, bins: int = 40,
               theory: list[str] | None = None, title: str | None = None,
               what: str = "one run") -> Any:
    """The ``pairs`` figure of a matrix, marked with the LDP and theory of its result
    (:func:`netdp.report.pair_figures.pairs_figure`, as from Python)."""
    from netdp.report import pair_figures

    return pair_figures.pairs_figure(matrix, result=result, bins=bins, theory=theory,
                                     title=title, what=what)


def _one_run(args: argparse.Namespace):
    """The matrix, result dict (or None) and topology of the one-run presets, and --node
    checked against the graph."""

    if args.pairs:
        matrix, result = _load_pairs(args)
        config = with_seed(_config(args, nodes=matrix.shape[0]))
        topo = task_of(config).prepare(config).topology
    else:
        matrix, result, topo = _simulate(args)
    if not 0 <= args.node < topo.n:
        raise InputError("node", f"must lie in 0..{topo.n - 1} (got {args.node})")
    return matrix, result, topo


def _distance(args: argparse.Namespace):
    import numpy as np

    from netdp.report import pair_figures


    matrix, result, topo = _one_run(args)
    dist = pair_figures.graph_distances(topo, args.node, args.role)
    losses = (matrix[:, args.node] if args.role == "observer" else matrix[args.node, :])
    losses = np.array(losses, dtype=float)
    losses[args.node] = np.nan
    desc = run_marks.describe(result, sep="\n")
    what = (f"Loss of each node towards observer {args.node}" if args.role == "observer"
            else f"Loss of node {args.node} towards each observer")
    if args.pairs is not None and not np.isfinite(np.delete(losses, args.node)).any():
        way = "towards" if args.role == "observer" else "of"  # the matrix's doing
        raise InputError("pairs", f"the matrix has no finite loss {way} node {args.node}")
    return pair_figures.distance_figure(losses, dist, node=args.node, role=args.role,
                                        refs=run_marks.reference_values(result, args.theory),
                                        ylabel=f"ε (pairwise; "
                                        f"{run_marks.accountant_text(result)})",
                                        title=args.title or what + (f"\n{desc}" if desc
                                                                    else ""))


def _heatmap(args: argparse.Namespace):
    if args.theory:
        raise InputError("theory", "the heatmap draws no theory; drop --theory")
    matrix, result, topo = _one_run(args)
    return heatmap_plot(matrix, result, topo, node=args.node, role=args.role,
                        title=args.title)


def heatmap_plot(matrix: Any, result: dict | None, topo: Any, *, node: int = 0,
                 role: str = "observer", title: str | None = None) -> Any:
    """The ``heatmap`` figure of a matrix on its graph, titled with its result."""
    from netdp.report import pair_figures

    dist = pair_figures.graph_distances(topo, node, role)
    title = title or run_marks.titled(
        f"Pairwise losses ε(u → v), ordered by hops "
        f"{'to' if role == 'observer' else 'from'} node {node}", result)
    labels = getattr(topo, "labels", None)  # a user's names (strings); else the ids
    names = list(map(str, labels)) if labels and any(isinstance(x, str) for x in labels) \
        else None
    return pair_figures.heatmap_figure(matrix, dist, node=node, role=role,
                                       label=f"ε(u → v) ({run_marks.accountant_text(result)})",
                                       title=title, names=names)


def _by_distance(args: argparse.Namespace):

    from netdp.report import pair_figures

    if args.dir is not None:
        raise InputError("DIR", "--preset by-distance reads result files: drop DIR, give "
                         "--result FILE.json (repeatable)")
    given = [name for name in ("pairs", "config", "topology", "task", "protocol", "nodes",
                               "epsilon", "seed") if getattr(args, name) is not None]
    given += (["set"] if args.set else []) + _sim_flags_given(args)
    if given:
        raise InputError(given[0], "--preset by-distance runs nothing: it reads the runs "
                         "given by --result")
    if not args.result:
        raise InputError("result", "give one or more `netdp simulate --out` files: "
                         "--result FILE.json (repeatable)")
    ys = args.y or ["epsilon"]
    if len(ys) > 1 or ys[0] not in pair_figures.MEASURES:
        raise InputError("y", f"by-distance plots one of {', '.join(pair_figures.MEASURES)} (got "
                         f"{', '.join(ys)})")
    found = [(path, _read_result(path)) for path in args.result]
    return by_distance_plot(found, y=ys[0], logy=bool(args.logy), theory=args.theory,
                            title=args.title)


def by_distance_plot(found: list[tuple[str, dict]], *, y: str = "epsilon", logy: bool = False,
                     theory: list[str] | None = None, title: str | None = None) -> Any:
    """The ``by-distance`` figure of ``(source name, result dict)`` pairs."""
    from netdp.report import pair_figures

    series = []
    deltas = set()
    orders = set()
    for path, result in found:
        series.append((path, pair_figures.distance_series(result, y=y, source=path,
                                                          theory=theory)))
        priv = result.get("privacy") or {}
        for row in priv.get("empirical") or []:
            if isinstance(row, dict) and row.get("delta") is not None:
                deltas.add(float(row["delta"]))
            if isinstance(row, dict) and isinstance(row.get("renyi"), dict):
                orders.add(row["renyi"].get("order"))
    if y == "renyi":
        alpha = f"α = {orders.pop():g}" if len(orders) == 1 else "α as labelled"
        ylabel = f"Rényi divergence D_α(u → v) (nats, {alpha})"
        default = "Pairwise Rényi divergence against hop distance"
    else:
        delta = f", δ = {deltas.pop():g}" if len(deltas) == 1 else ""
        ylabel = f"ε(u → v) (pairwise{delta})"
        default = "Pairwise privacy loss against hop distance"
    return pair_figures.by_distance_figure(_unique_labels(series), logy=logy, ylabel=ylabel,
                                           title=title or default)


def _read_result(path: str) -> dict:
    """A run's JSON from ``--result`` ``path``, the fields the figures read checked."""
    result = read_json(path, "result", "a `netdp simulate --out` JSON")
    if not isinstance(result, dict):
        raise InputError("result", f"{path}: expected a JSON object (a `netdp simulate "
                         "--out` file)")
    run_marks.check_shape(result)
    return result


def _unique_labels(found: list[tuple[str, list]]) -> list:
    """The series of every file, the file's name appended to labels that two runs share
    (e.g. two seeds of one setting)."""

    counts = Counter(s.label for _, series in found for s in series)
    return [dataclasses.replace(s, label=f"{s.label} [{Path(path).name}]")
            if counts[s.label] > 1 else s for path, series in found for s in series]
