"""``netdp sweep`` (run a spec into a result table) and ``netdp results`` (read it)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from netdp.core.errors import InputError
from netdp.core.files import check_distinct, check_file_name, check_not_inputs, sweep_parts
from netdp.run.dask_client import default_backend, require_cluster
from netdp.run.sweep.runner import (
    WORKERS_PER_CORE,
    RunFailed,
    max_workers,
    pending_runs,
    run_sweep,
)
from netdp.run.sweep.spec import load_spec
from netdp.run.sweep.summary import grid_means
from netdp.run.sweep.table import ResultTable, export_csv, export_parquet, parquet_available

EPILOG_SWEEP = """\
examples:
  netdp sweep experiments/sweeps/figure1b_quick.toml --out out/fig1b
  netdp sweep spec.toml --out out/s --backend serial          # this process only
  netdp sweep spec.toml --out out/s --workers 4 --batch-size 2
  netdp sweep spec.toml --out out/s --scheduler tcp://10.0.0.5:8786   # existing cluster
  netdp sweep spec.toml --out out/s --dry-run                 # validate, count, run nothing

A spec (TOML) names fixed parameters, grid axes and seeds:

  seeds = 10                         # or a list of seeds: [1, 2, 3]
  [fixed]                            # any `netdp simulate` parameter (TOML key names)
  topology = "complete"
  delta = 1e-7
  accountants = ["kov", "rdp"]
  [grid]                             # Cartesian product of the axes
  nodes = [5, 10, 20, 50, 100]                       # a list
  epsilon = {start = 0.1, stop = 0.4, num = 2}       # linear range, ends included
  # steps = {start = 1e3, stop = 1e5, num = 3, logspace = true}   # log-spaced

Every grid point is validated before anything runs (bad keys and values give the same
errors as `netdp simulate`, exit status 2, nothing written). Each run is one row of the
table in DIR, written batch by batch: a crash or a kill loses only the batches in flight,
and rerunning the same command runs only what is missing. Read it with `netdp results`.
The values do not depend on the backend: serial and dask give the same table.
See docs/sweeps.md.
"""

EPILOG_RESULTS = """\
examples:
  netdp results out/fig1b                   # summary: mean per grid point
  netdp results out/fig1b --csv fig1b.csv   # the whole table, one row per run
  netdp results out/fig1b --csv - | head    # CSV on stdout
  netdp results out/fig1b --parquet fig1b.parquet   # needs pyarrow: netdp[parquet]
  netdp results out/fig1b --provenance      # versions, commit, host behind the rows

In Python: pandas.read_csv("fig1b.csv"), or netdp.run.sweep.read_table("out/fig1b").
Columns: config_hash, seed, status, version, runtime_s, every simulate parameter, then
the utility figures (abs_error, mse, ...) and the privacy figures (eps0, ldp_mean,
theory_<curve>, <accountant>_mean/_min/_max/_q50/_q90/_q99/_delta, ...), and last
provenance_<key> (netdp, commit, dirty, python, platform, host, numpy, scipy, numba,
dp_accounting, networkx, pandas, matplotlib, dask).
"""

SUMMARY_ROWS = 40


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``sweep`` and ``results`` to the ``netdp`` parser."""
    sw = sub.add_parser("sweep", help="run a grid of simulations into a result table",
                        description="Run every (grid point, seed) of a TOML sweep spec and "
                        "write one row per run into the table folder DIR, resuming what a "
                        "previous run of the same command left.",
                        epilog=EPILOG_SWEEP, formatter_class=argparse.RawDescriptionHelpFormatter)
    sw.add_argument("spec", metavar="SPEC.toml", help="the sweep spec")
    sw.add_argument("--out", "-o", required=True, metavar="DIR",
                    help="table folder (created; rerun into it to resume)")
    sw.add_argument("--backend", choices=("dask", "serial"), default=None,
                    help="dask: parallel on a dask.distributed cluster (needs pip install "
                    "'netdp[cluster]'; the default where installed, or the spec's `backend`); "
                    "serial: this process, one run after another")
    sw.add_argument("--scheduler", metavar="ADDR", help="dask scheduler of an existing "
                    "cluster, e.g. tcp://HOST:8786 (default: a local cluster, one worker "
                    "process per core)")
    sw.add_argument("--workers", type=int, metavar="N",
                    help="worker processes of the local dask cluster (default: cores)")
    sw.add_argument("--batch-size", type=int, metavar="K", help="runs per task and per "
                    "table file (default: automatic, from the runs' sizes and the workers)")
    sw.add_argument("--dry-run", action="store_true", help="validate the spec, print the "
                    "number of runs and how many are done, run and write nothing")
    sw.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="progress bar on stderr (default: when stderr is a terminal)")
    sw.add_argument("--html", metavar="FILE.html", help="also write the sweep's report page "
                    "(one self-contained HTML file: spec, provenance, the mean per grid point, "
                    "the table presets' figures; see `netdp report`)")
    sw.set_defaults(handler=_sweep)

    res = sub.add_parser("results", help="summarise or export a sweep's result table",
                         description="Read the result table of a sweep folder: print a "
                         "summary, or export every row as CSV or Parquet.",
                         epilog=EPILOG_RESULTS,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    res.add_argument("dir", metavar="DIR", help="a folder written by `netdp sweep`")
    res.add_argument("--csv", metavar="FILE|-", help="write the table as CSV (- : stdout)")
    res.add_argument("--parquet", metavar="FILE", help="write the table as Parquet "
                     "(needs pyarrow: pip install 'netdp[parquet]')")
    res.add_argument("--provenance", action="store_true", help="print what made the rows "
                     "instead of the summary: each provenance column's distinct values "
                     "(netdp's version and commit, the dependencies, Python, platform, "
                     "host) and how many rows have each")
    res.set_defaults(handler=_results)


def _sweep(args: argparse.Namespace) -> int:

    spec = load_spec(args.spec)
    backend = args.backend or spec.backend or default_backend()
    if backend == "dask":
        require_cluster("backend")
    if args.scheduler is not None and backend != "dask":
        raise InputError("scheduler", "a scheduler address needs --backend dask")
    for name in ("workers", "batch_size"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise InputError(name, f"must be an integer >= 1 (got {value})")
    if args.workers is not None and (backend != "dask" or args.scheduler is not None):
        raise InputError("workers", "sizes the local dask cluster; not with --backend "
                         "serial or --scheduler")
    if args.workers is not None and args.workers > max_workers():
        raise InputError("workers", f"at most {max_workers()} on this machine "
                         f"({WORKERS_PER_CORE} per core; got {args.workers})")
    if args.html is not None:
        _check_writable(args.html, "html")
        check_distinct([("out", args.out), ("html", args.html)])
        check_not_inputs([("html", args.html)], [("SPEC.toml", args.spec),
                                                 *sweep_parts("out", args.out)])
    check_not_inputs([("out", args.out)], [("SPEC.toml", args.spec)])
    todo, skipped = pending_runs(spec, args.out)
    if args.dry_run:
        axes = ", ".join(f"{k} ({len(v)})" for k, v in spec.grid.items()) or "none"
        print(f"{spec.path}: {spec.n_runs} runs = {len(spec.points)} grid points x "
              f"{len(spec.seeds)} seeds; axes: {axes}; {skipped} already in {args.out}, "
              f"{len(todo)} to run")
        return 0
    try:
        report = run_sweep(spec, args.out, backend, args.scheduler, args.workers,
                           args.batch_size, args.progress)
    except RunFailed as exc:
        print(f"netdp sweep: error: {exc} (finished batches are kept in {args.out}; rerun "
              "the command to resume)", file=sys.stderr)
        return 1
    print(report.line())
    if args.html is not None:
        from netdp.run.page import sweep_page, write_page

        argv = getattr(args, "argv", None)
        command = None if argv is None else shlex.join(["netdp", *argv])
        write_page(args.html, sweep_page(args.out, command))
        print(f"report page written to {args.html}")
    if report.errors:  # a failed run is a result: reported, exit status 0
        print(f"netdp sweep: {report.errors} run{'s' if report.errors != 1 else ''} ended "
              f"with an error (status 'error' in the table), e.g. {report.first_error}; "
              f"see `netdp results {args.out}`", file=sys.stderr)
    return 0


def _results(args: argparse.Namespace) -> int:
    if args.provenance and args.csv == "-":
        raise InputError("provenance", "prints a table on stdout: not with --csv - (give "
                         "--csv a file)")

    if args.parquet is not None and not parquet_available():
        raise InputError("parquet", "writing Parquet needs pyarrow (or fastparquet): "
                         "pip install 'netdp[parquet]' (or pyarrow)")
    files = [(flag, target) for flag, target in (("csv", args.csv), ("parquet", args.parquet))
             if target is not None and target != "-"]
    for flag, target in files:
        _check_writable(target, flag)
    check_distinct(files)
    check_not_inputs(files, sweep_parts("DIR", args.dir))
    table = ResultTable(args.dir, param="DIR")
    if not table.path.is_dir() or table.manifest() is None:
        raise InputError("DIR", f"{args.dir!r} is not a sweep folder (no sweep.json); make "
                         "one with `netdp sweep SPEC.toml --out DIR`")
    frame = table.dataframe()
    if args.csv is not None:
        try:
            export_csv(frame, args.csv)
        except BrokenPipeError:  # `--csv - | head`
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
    if args.parquet is not None:
        export_parquet(frame, args.parquet)
    if args.provenance:
        print(provenance_table(frame, args.dir))
    elif args.csv is None and args.parquet is None:
        print(summary(frame, table.manifest()))
    elif args.csv != "-":
        written = [p for p in (args.csv, args.parquet) if p is not None]
        print(f"{len(frame)} rows, {frame.shape[1]} columns -> {', '.join(written)}")
    return 0


def summary(frame, manifest: dict | None) -> str:
    """A short text summary: counts, then the mean of the main figures per grid point."""
    manifest = manifest or {}
    total = manifest.get("runs", 0)
    lines = [f"{manifest.get('spec_file') or 'sweep'}: {len(frame)} of {total} runs in the "
             "table"]
    if not frame.empty:
        status = frame["status"].value_counts()
        lines[0] += " (" + ", ".join(f"{n} {s}" for s, n in status.items()) + ")"
    if manifest.get("description"):
        lines.append(manifest["description"])
    if frame.empty:
        return "\n".join(lines)
    errors = frame[frame["status"] != "ok"]
    if not errors.empty and "error" in errors.columns:
        note = (f"{len(errors)} run{'s' if len(errors) != 1 else ''} ended with an error, "
                f"e.g. {errors['error'].iloc[0]}")
    else:
        note = ""
    table = grid_means(frame, manifest)
    if table is None:
        return "\n".join(lines + ([note] if note else []))
    text = table.head(SUMMARY_ROWS).to_string(float_format=lambda x: f"{x:.4g}")
    lines.append(f"mean over seeds of each grid point ({len(table)} points):")
    lines.append(text)
    if len(table) > SUMMARY_ROWS:
        lines.append(f"... {len(table) - SUMMARY_ROWS} more; every row: --csv FILE")
    if note:
        lines.append(note)
    return "\n".join(lines)


def provenance_table(frame, where: str = "") -> str:
    """Each ``provenance_<key>`` column's distinct values and their row counts (rows written
    before netdp recorded provenance count as ``-``)."""
    columns = [c for c in frame.columns if c.startswith("provenance_")]
    head = f"provenance of the {len(frame)} rows in {where}" if where else \
        f"provenance of {len(frame)} rows"
    if not columns:
        return f"{head}: none recorded (rows written by an earlier netdp)"
    table = []
    for column in columns:
        counts = frame[column].astype(object).where(frame[column].notna(), "-")
        for value, rows in counts.astype(str).value_counts(sort=True).items():
            table.append((column.removeprefix("provenance_"), value, int(rows)))
    key_w = max(len("key"), *(len(k) for k, _, _ in table))
    value_w = max(len("value"), *(len(v) for _, v, _ in table))
    lines = [f"{head}:", f"  {'key':{key_w}}  {'value':{value_w}}  rows"]
    lines += [f"  {k:{key_w}}  {v:{value_w}}  {n:>4}" for k, v, n in table]
    return "\n".join(lines)


def _check_writable(name: str, flag: str) -> None:
    """Refuse up front a file that cannot be written (what the write finds later, a full
    disk, is refused then, as one line too), or a name that reads as a folder."""
    check_file_name(name, flag)
    path = Path(name)
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise InputError(flag, f"{str(path)!r} is a folder; give a file name")
    if not parent.is_dir():
        raise InputError(flag, f"cannot write into {str(parent)!r}: no such folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(flag, f"cannot write into {str(parent)!r}: not writable")
