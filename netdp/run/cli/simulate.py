"""``netdp simulate``: its flags come from the parameter declarations of the common
config and of every task's section (:mod:`netdp.core.params`)."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from netdp.core.config import flat_params, read_config
from netdp.core.errors import InputError, check, shorten, values_from_file
from netdp.core.files import (
    atomic_files,
    check_distinct,
    check_file_name,
    check_not_inputs,
    write_atomic,
)
from netdp.core.setup import Setup
from netdp.graphs.graph_record import plain_labels
from netdp.run.api import simulate
from netdp.run.cli import integer
from netdp.run.cli.param_flags import add_param_flags
from netdp.tasks import TASKS, make_config, task_of, tracking_table
from netdp.tasks.readers import check_read
from netdp.tracking.graph_observers import SOURCES

EXAMPLES = """\
examples:
  netdp simulate                                   # complete graph, n=100, T=100 n, eps=1
  netdp simulate --topology ring --nodes 1000 --rounds 5 --epsilon 0.5
  netdp simulate --topology ring --nodes 1000 --noise-every-hop   # the LDP baseline
  netdp simulate --topology hypercube --nodes 1024 --steps 100000 --runs 20 --json
  netdp simulate --topology edges.txt --data-file ages.csv --column age --range 0 120
  netdp simulate --topology club.graphml --weight weight   # your own network, weighted
  netdp simulate --config run.toml --seed 7        # TOML keys = flag names, flags win
  netdp simulate --task histogram --mechanism olh --domain 50 --data zipf -n 2000
  netdp simulate --task sgd --epsilon 10 --compare local,network,central --seed 1
  netdp simulate --task histogram --topology ring --gamma 0.5 --domain 8 --rounds 3

Summation: the estimate is the mean of the nodes' values. On the ring (AISTATS 2022
Alg. 1) noise is added once every n-1 hops; on other graphs (Alg. 3) every holder adds
noise and the token moves to a uniform neighbour (Metropolis-Hastings on irregular
graphs, so the estimate stays unbiased).
Histogram: each holder adds a fresh report of its category to the token (Alg. 2 on the
ring, Alg. 4 on a walk); an observer sees only the sum of the reports since its last
visit, so each report is amplified by shuffling among them.
SGD: the token is a model (Alg. 5); each holder takes a clipped, noisy gradient step on
its own rows. --compare runs local, network and central DP at the same (eps, delta) on
the same walk and writes the learning curves (CSV and PNG).
A flag that the chosen task or topology does not use is refused, not ignored.
Bad input exits with status 2 and writes nothing.
"""
#: Most nodes for which ``--html`` keeps the pairwise matrix without ``--pairs-out``.
PAGE_PAIRS_NODES = 200
NOT_CONFIG = ("command", "handler", "json", "out", "config", "pairs_out", "trace_out",
              "quiet", "workers", "scheduler", "html", "argv", "curves_out")


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``simulate``, its flags generated from the declarations."""

    epilog = (EXAMPLES + "\ntasks, and where pairwise privacy is tracked "
              "(topology: accountants; method):\n" + "\n".join(tracking_table()) + "\n")
    sim = sub.add_parser("simulate", help="run one protocol and report its utility and privacy",
                         description="Run one decentralized protocol on a graph and report "
                         "the estimate, its error and its theoretical standard deviation, and "
                         "the pairwise privacy loss of every node towards every other.",
                         epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter,
                         argument_default=argparse.SUPPRESS)
    sim.add_argument("--config", metavar="FILE.toml", help="read parameters from a TOML file "
                     "(keys are the flag names with _ for -); flags given here override it")
    add_param_flags(sim)
    out = report_outputs(sim, "; on a graph whose nodes have names of their own (a file's "
                         "labels), also FILE.labels.json: the name of each row and column")
    out.add_argument("--html", metavar="FILE.html", help="also write the run's report page: "
                     "one self-contained HTML file (tables, figures inline as SVG; see "
                     "`netdp report`); with --pairs-out, or a token walk on at most "
                     f"{PAGE_PAIRS_NODES} nodes (the matrix kept, the numbers unchanged), it "
                     "has the pairs and heatmap figures")
    out.add_argument("--curves-out", metavar="FILE.json", help="also write every pair's "
                     "privacy curve eps(delta): the same run accounted at 36 target deltas "
                     "(0.5 to 1e-12) by the first accountant, so 36 times the accounting; "
                     "up to 500 nodes, every observer tracked. .json: the worst pair's "
                     "curve and its privacy loss distribution (for dp-accounting: "
                     "docs/composition.md), each observer's worst, every pair's; .csv or "
                     ".parquet: one row per ordered pair and delta")
    out.add_argument("--trace-out", metavar="FILE.csv", help="write the runs' traces as a "
                     "deployment's log, one line per hop (t,token,sender,receiver) or gossip "
                     "message (t,sender,receiver), a run column for several runs, under a "
                     "'# key = value' header: `netdp account FILE` reports its privacy")
    cluster = sim.add_argument_group("cluster (the observers on dask workers: "
                                     "docs/cluster.md)")
    where = cluster.add_mutually_exclusive_group()
    where.add_argument("--workers", type=integer, metavar="K", help="account the observers "
                       "on a local dask cluster of K single-threaded worker processes: every "
                       "observer unless --sources is given, the same numbers as one process "
                       "with --sources n (walks on a graph, gossip)")
    where.add_argument("--scheduler", metavar="ADDRESS", help="as --workers, on the running "
                       "dask scheduler at ADDRESS (tcp://HOST:PORT; netdp installed on its "
                       "workers, NETDP_SHARED_DIR a folder they share for large traces)")
    flags: dict[str, tuple[Any, list[str]]] = {}
    for task in TASKS.values():
        for output in task.outputs:
            flags.setdefault(output.flag, (output, []))[1].append(task.label)
    for flag, (output, labels) in flags.items():
        out.add_argument(f"--{flag}", metavar=output.metavar,
                         help=f"--task {' or '.join(labels)}: {output.help}")
    sim.set_defaults(handler=run)


def report_outputs(parser: argparse.ArgumentParser,
                   extra: str = "") -> argparse._ArgumentGroup:
    """The ``output`` group of a command that prints a report: ``--json``, ``--out``,
    ``--pairs-out`` (``extra``: the end of its help)."""
    out = parser.add_argument_group("output")
    out.add_argument("--json", action="store_true", help="print one JSON object instead of "
                     "the table")
    out.add_argument("--out", metavar="FILE.json", help="also write the JSON object to FILE "
                     "(atomically)")
    out.add_argument("--pairs-out", metavar="FILE.npy", help="write the pairwise losses "
                     "eps(u -> v), mean over runs (n <= 10 000), by the file's extension: "
                     ".npy the n x n matrix M[u, v] (first accountant; a labelled graph's "
                     "names in FILE.labels.json), .csv or .parquet one row per ordered pair "
                     "and accountant (target, observer, epsilon, accountant, delta, seed)"
                     + extra)
    return out



def file_values(args: argparse.Namespace) -> set[str]:
    """The parameters whose value is the ``--config`` file's (no flag overrides it)."""
    if "config" not in args:
        return set()
    read = set(read_config(args.config))
    flags = set(parameters(argparse.Namespace(**{k: v for k, v in vars(args).items()
                                                 if k != "config"})))
    out = read - flags
    return out | ({"low", "high", "range"} if out & {"low", "high", "range"} else set())


def parameters(args: argparse.Namespace) -> dict[str, Any]:
    """The flat parameters of a parsed command line: ``--config`` file, then the flags."""

    options = {k: v for k, v in vars(args).items() if k not in NOT_CONFIG}
    for task in TASKS.values():
        for output in task.outputs:
            options.pop(output.flag, None)
    params = read_config(args.config) if "config" in args else {}
    params.update(flat_params(options))
    return params


def run(args: argparse.Namespace) -> int:
    """Parse -> config -> ``netdp.simulate`` -> write the files -> print."""

    params = parameters(args)
    with values_from_file(file_values(args)):  # a --config file's values never echoed
        config = make_config(params)
        check_read(config, params)  # a flag given that this run does not read
    task = task_of(config)
    own = {output.flag for output in task.outputs}
    for other in TASKS.values():
        for output in other.outputs:
            if output.flag not in own and getattr(args, output.flag, None) is not None:
                owners = [t.label for t in TASKS.values()
                          if any(o.flag == output.flag for o in t.outputs)]
                raise InputError(output.flag, f"applies to --task {' or '.join(owners)} only")
    outputs = []
    for output in task.outputs:
        prefix = getattr(args, output.flag, None)
        if prefix is None and output.default and output.when and output.when(params):
            prefix = output.default
        if prefix is not None:
            check_file_name(prefix, output.flag)  # PREFIX/ is a folder
            outputs.append((output, [Path(prefix + s) for s in output.suffixes]))
    named = {flag: getattr(args, flag.replace("-", "_"), None)
             for flag in ("out", "pairs-out", "trace-out", "html", "curves-out")}
    for flag, name in named.items():
        if name is not None:
            check_writable(name, flag)
    out, pairs_out, trace_out, html, curves_out = (None if n is None else Path(n)
                                                   for n in named.values())
    if curves_out is not None:
        from netdp.run.curves import check_curves_file

        check_curves_file(curves_out, config)
    labels_out = None if pairs_out is None else labels_path(pairs_out)
    for output, paths in outputs:
        for path in paths:
            check_writable(path, output.flag)
    if labels_out is not None:
        check_writable(labels_out, "pairs-out")
    written = [*named.items(), *((o.flag, p) for o, paths in outputs for p in paths)]
    check_distinct(written, companions=[("pairs-out", labels_out, "labels")])
    check_not_inputs([*written, ("pairs-out", labels_out)],
                     [("config", getattr(args, "config", None)), *read_files(params)])
    keep = True if pairs_out is not None else (page_keeps_pairs if html is not None else False)
    cluster = {"workers": getattr(args, "workers", None),
               "scheduler": getattr(args, "scheduler", None)}
    if cluster["workers"] is None and cluster["scheduler"] is None:
        report = simulate(config, keep_pairs=keep, trace_out=trace_out)
    else:
        from netdp.run.observer_cluster import ClusterFailed

        try:
            report = simulate(config, keep_pairs=keep,
                              trace_out=trace_out, **cluster)
        except ClusterFailed as exc:
            print(f"netdp simulate: error: {exc}", file=sys.stderr)
            return 1
    curves = None
    if curves_out is not None:  # before any file is written: a refusal leaves none
        from netdp.run.curves import pair_curves

        curves = pair_curves(report)
    for output, paths in outputs:
        output.write(report, paths)
    if curves is not None:
        from netdp.run.curves import write_curves

        write_curves(curves_out, curves)
    if pairs_out is not None:
        write_pairs(pairs_out, labels_out, report)
    if out is not None or "json" in args or html is not None:
        result = report.to_json()
        for output, paths in outputs:
            result[f"{output.flag}_files"] = [str(p) for p in paths]
        text = json.dumps(result, indent=2, allow_nan=False)
        if out is not None:
            write_atomic(out, text + "\n", param="out")
        if html is not None:
            from netdp.run.page import run_page, write_page

            write_page(html, run_page(result, pairs=report.pairs, topology=report.topology,
                                      command=command_line(args)))
    if "json" in args:
        print(text)
    else:
        print(report.text())
        for output, paths in outputs:
            print(f"  {output.flag} written to {', '.join(map(str, paths))}")
        if html is not None:
            print(f"  report page written to {html}")
        if curves is not None:
            print(f"  pair curves ({curves.accountant}, {curves.deltas.size} deltas) "
                  f"written to {curves_out}")
    return 0


def page_keeps_pairs(setup: Setup) -> bool:
    """Whether ``--html`` keeps the matrix on its own for the pairs and heatmap figures: a
    token walk on at most :data:`PAGE_PAIRS_NODES` nodes, every observer tracked, no
    coalition (there, keeping the matrix leaves every reported number as it is)."""
    config = setup.config
    return (config.protocol == "walk" and setup.topology.n <= PAGE_PAIRS_NODES
            and config.coalition is None and bool(config.accountants)
            and config.get(SOURCES) is None)


def command_line(args: argparse.Namespace) -> str | None:
    """The command as it was typed (``netdp`` and its arguments, quoted for a shell), when
    the command line ran it."""
    argv = getattr(args, "argv", None)
    return None if argv is None else shlex.join(["netdp", *argv])


#: What ``--pairs-out`` writes, by the file's extension.
PAIRS_FORMATS = (".npy", ".csv", ".parquet")


def labels_path(pairs: Path) -> Path | None:
    """Where ``--pairs-out FILE.npy`` writes the nodes' labels: ``FILE.labels.json``
    (``None`` for a table, which names its nodes itself); an extension ``--pairs-out``
    does not write is refused."""
    suffix = pairs.suffix.lower()
    check(suffix in PAIRS_FORMATS, "pairs-out", "must end in .npy (the n x n matrix), .csv "
          f"or .parquet (one row per ordered pair) (got {shorten(pairs.name)!r})")
    if suffix == ".parquet":
        from netdp.run.sweep.table import parquet_available

        check(parquet_available(), "pairs-out", "writing .parquet needs pyarrow (or "
              "fastparquet): pip install 'netdp[parquet]'; or write .csv")
    return pairs.with_name(pairs.name.removesuffix(".npy") + ".labels.json") \
        if suffix == ".npy" else None


def write_pairs(path: Path, labels_out: Path | None, report: Any) -> None:
    """``--pairs-out``: a table of every kept accountant's pairs (``.csv``, ``.parquet``:
    :meth:`~netdp.report.types.Report.pairs_frame`), or the first accountant's matrix
    and, on a graph with labels, its labels' file, all or nothing; a labels' file of an
    earlier run beside it is removed (no stale labels beside a new matrix)."""
    import numpy as np

    if labels_out is None:  # a table
        frame = report.pairs_frame()
        with atomic_files([path], param="pairs-out") as (fh,):
            if path.suffix.lower() == ".csv":
                fh.write(frame.to_csv(index=False).encode("utf-8"))
            else:
                frame.to_parquet(fh, index=False)
        return
    pairs, labels = report.pairs, plain_labels(report.topology)
    if labels is None:
        with atomic_files([path], param="pairs-out", stale=[labels_out]) as (matrix,):
            np.save(matrix, pairs)
        return
    with atomic_files([path, labels_out], param="pairs-out") as (matrix, names):
        np.save(matrix, pairs)
        names.write((json.dumps(labels) + "\n").encode("utf-8"))


#: Parameters whose value names a file a run reads (``loss`` and ``churn`` as ``file:PATH``).
FILE_PARAMS = ("topology", "data_file", "gossip_matrix", "dataset", "loss", "churn")


def read_files(params: dict[str, Any]) -> list[tuple[str, str]]:
    """``(flag, path)`` of the files a run of ``params`` reads (a value that names no file,
    a named topology, is left out by :func:`netdp.core.files.check_not_inputs`)."""
    out = []
    for name in FILE_PARAMS:
        value = params.get(name)
        if isinstance(value, str | os.PathLike):
            text = os.fspath(value)
            if name in ("loss", "churn"):
                if not text.startswith("file:"):
                    continue
                text = text.removeprefix("file:")
            out.append((name.replace("_", "-"), text))
    return out


def check_writable(name: str | Path, param: str = "out") -> None:
    """Refuse, before any work, a target that cannot be written: a name that reads as a
    folder (``newdir/``, :func:`~netdp.core.files.check_file_name`), an existing folder,
    a file in no writable folder."""
    check_file_name(name, param)
    path = Path(name)
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise InputError(param, f"{str(path)!r} is a directory; give a file name")
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise InputError(param, f"cannot write into {str(parent)!r}: no such writable folder")
