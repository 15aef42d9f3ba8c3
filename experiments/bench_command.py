"""The command end to end: wall time and peak memory of ``netdp simulate``, beside the tracker.

Usage: python experiments/bench_command.py [--sizes 1e4 1e5 1e6] [--accountant default kov]
       [--repeat 1] [--timeout 900] [--baseline-n 10] [--no-tracker] [--out FILE.jsonl]

For each size ``n`` (``T = 100 n`` steps, the complete graph) and accountant (``default``:
no ``--accountant`` flag, so netdp's default one, named in the table as the report names
it; else that accountant), a fresh process runs what a user types::

    netdp simulate --task sum --mechanism gaussian --epsilon 0.1 --delta 1e-7 --seed 1 \\
        --nodes N [--accountant A] --json --quiet --out FILE

through :func:`netdp.run.cli.main`, in a small wrapper (``experiments/_command.py``) that
then prints its own peak resident memory (the whole process's: interpreter, imports, numba
kernels, the run). The wall time is the process's, measured from here (start-up, imports
and exit included); the phases are the report's ``timing`` (set-up, walk, accounting,
report). Another fresh process then runs the tracker alone as
``experiments/bench_tracker.py`` does (its worker: the walk, ``walk_losses`` and
``summarize``, kernels warmed up first; sound convention, the accountant the command used),
so each row shows the command against the tracker it breaks down into, as a ratio.

The memory model is :func:`netdp.tasks.base.footprint`, the sum of the parts
:func:`netdp.run.resources.check_footprint` refuses a run by. It is printed beside the
measured peak *above the baseline*: the same command at ``n = --baseline-n`` (what any run
holds before its size counts: interpreter, imports, numba kernels), and their ratio, which
should be at least 1 (the refusal covers the run) and not much more.

With ``--repeat R`` every process runs R times: times are medians, peaks the largest.
``--out`` appends one JSON line per row. n = 1e6 takes about 100 s and 4 to 5 GB a process.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import sys
from pathlib import Path
from typing import Any

import _command
import numba

from netdp.run.resources import planned_size
from netdp.tasks import make_config, task_of
from netdp.tasks.base import footprint

#: The run benchmarked: the flags of the command and the config they make.
PARAMS: dict[str, Any] = {"task": "sum", "mechanism": "gaussian", "epsilon": 0.1,
                          "delta": 1e-7, "seed": 1}
T_PER_NODE = 100
MIB = _command.MIB


def _bench_tracker() -> Any:
    """``experiments/bench_tracker.py`` as a module (its worker runs the tracker alone)."""
    path = Path(__file__).with_name("bench_tracker.py")
    spec = importlib.util.spec_from_file_location("bench_tracker", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def command(n: int, accountant: str) -> list[str]:
    """The ``netdp simulate`` argv of one row (``default``: no ``--accountant``)."""
    argv = ["simulate", "--nodes", str(n)]
    for key, value in PARAMS.items():
        argv += [f"--{key}", str(value)]
    if accountant != "default":
        argv += ["--accountant", accountant]
    return argv


def model_bytes(n: int, accountant: str) -> float:
    """What :func:`netdp.run.resources.check_footprint` holds the run to, in bytes."""
    params = {**PARAMS, "nodes": n}
    if accountant != "default":
        params["accountants"] = (accountant,)
    config = make_config(params)
    task = task_of(config)
    return sum(size for size, _ in footprint(task, config, *planned_size(task, config))
               .values())


def run_command(n: int, accountant: str, timeout: float) -> dict | str:
    """One fresh process running the command: its numbers, or why there are none."""
    done = _command.run_command(command(n, accountant), timeout)
    if done["status"] != 0:
        return done["error"]
    report = done["report"]
    empirical = report["privacy"]["empirical"][0]
    return {"wall_s": done["wall_s"], "import_s": done["import_s"], "main_s": done["main_s"],
            "peak_bytes": done["peak_bytes"], **done["timing"],
            "accountant_used": empirical["accountant"], "mean_eps": empirical["mean"],
            "hops": report["hops"]}


def _combine(rows: list[dict]) -> dict:
    """The largest peaks (``peak_bytes``, bench_tracker's ``rss_*``), the medians of the
    other numbers (the times), the first run's words."""
    out = {}
    for key, first in rows[0].items():
        if key == "peak_bytes" or key.startswith("rss_"):
            out[key] = max(r[key] for r in rows)
        elif isinstance(first, float):
            out[key] = statistics.median(r[key] for r in rows)
        else:
            out[key] = first
    return out


def repeated(run: Any, repeat: int) -> dict | str:
    """``run()`` ``repeat`` times: the combined numbers, or the first reason for none."""
    rows = []
    for _ in range(repeat):
        row = run()
        if isinstance(row, str):
            return row
        rows.append(row)
    return _combine(rows)


def measure(n: int, accountant: str, args: argparse.Namespace, tracker: Any,
            baselines: dict[str, int]) -> dict:
    """One row: the command, its baseline, the model and the tracker alone."""
    row: dict[str, Any] = {"n": n, "T": T_PER_NODE * n, "accountant": accountant}
    done = repeated(lambda: run_command(n, accountant, args.timeout), args.repeat)
    if isinstance(done, str):
        row["command"] = done
        return row
    row.update(done)
    if accountant not in baselines:
        base = repeated(lambda: run_command(args.baseline_n, accountant, args.timeout),
                        args.repeat)
        baselines[accountant] = base["peak_bytes"] if isinstance(base, dict) else -1
    row["baseline_bytes"] = baselines[accountant]
    row["model_bytes"] = model_bytes(n, accountant)
    if args.no_tracker:
        return row
    used = done["accountant_used"]
    alone = repeated(lambda: tracker._run_worker(n, used, args.timeout, 0, "sound"),
                     args.repeat)
    if isinstance(alone, str):
        row["tracker"] = alone
        return row
    row.update(tracker_s=alone["walk_s"] + alone["losses_s"] + alone["summarize_s"],
               tracker_walk_s=alone["walk_s"], tracker_losses_s=alone["losses_s"],
               tracker_summarize_s=alone["summarize_s"],
               tracker_peak_bytes=alone["rss_summarize_mb"] * MIB,
               tracker_mean_eps=alone["mean"])
    return row


def _cells(row: dict) -> list[str]:
    """The table's cells of one row (``-`` where there is no number)."""
    if "wall_s" not in row:
        return [f"{row['n']:,}", f"{row['T']:.0e}", row["accountant"],
                row.get("command", "?")] + ["-"] * (len(HEADER) - 4)
    grown = row["peak_bytes"] - row["baseline_bytes"]
    has_base = row["baseline_bytes"] > 0 and grown > 0
    cells = [f"{row['n']:,}", f"{row['T']:.0e}",
             row["accountant"] if row["accountant"] != "default"
             else f"default ({row['accountant_used']})",
             f"**{row['wall_s']:.2f}**",
             f"{row['wall_s'] - row['main_s']:.2f}",
             f"{row['setup_s']:.3f}", f"{row['engine_s']:.2f}", f"{row['accounting_s']:.2f}",
             f"{row['report_s']:.3f}", f"{row['main_s'] - row['total_s']:.2f}",
             f"**{row['peak_bytes'] / MIB:,.0f}**",
             f"{grown / MIB:,.0f}" if has_base else "-",
             f"{row['model_bytes'] / MIB:,.0f}",
             f"{row['model_bytes'] / grown:.2f}" if has_base else "-"]
    if "tracker_s" in row:
        cells += [f"{row['tracker_s']:.2f}", f"{row['tracker_peak_bytes'] / MIB:,.0f}",
                  f"{row['wall_s'] / row['tracker_s']:.2f}"]
    else:
        cells += [row.get("tracker", "-"), "-", "-"]
    return [*cells, f"{row['mean_eps']:.5f}"]


HEADER = ["n", "T", "accountant", "command s", "start-up s", "set-up s", "walk s",
          "accounting s", "report s", "rest s", "peak MiB", "above baseline MiB", "model MiB",
          "model / above", "tracker s", "tracker peak MiB", "command / tracker",
          "mean ε"]


def print_table(rows: list[dict], baselines: dict[str, int], baseline_n: int) -> None:
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    for row in rows:
        print("| " + " | ".join(_cells(row)) + " |")
    print("\nstart-up: the process's wall time outside `main` (interpreter, exit); set-up "
          "to report: the report's `timing`; rest: the rest of `main` (parsing, imports, "
          "the checks, writing the report); tracker: experiments/bench_tracker.py's walk, "
          "walk_losses and summarize, in a process of its own; baseline: the same command "
          f"at n = {baseline_n}, peak "
          + ", ".join(f"{acct} {peak / MIB:,.0f} MiB" if peak > 0 else f"{acct} failed"
                      for acct, peak in baselines.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e4, 1e5, 1e6])
    parser.add_argument("--accountant", nargs="+", default=["default", "kov"],
                        help="accountants, one row each; default: netdp's own (no flag)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each process (times: the median; peaks: the largest)")
    parser.add_argument("--timeout", type=float, default=900,
                        help="seconds allowed to one process (default 900)")
    parser.add_argument("--baseline-n", type=int, default=10,
                        help="n of the baseline run, whose peak the model's is compared "
                             "above (default 10)")
    parser.add_argument("--no-tracker", action="store_true",
                        help="time the command only, not the tracker alone")
    parser.add_argument("--out", help="append one JSON line per row to this file")
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"numba threads {numba.get_num_threads()}, python {platform.python_version()}")
    print(f"command: netdp simulate --nodes N {' '.join(f'--{k} {v}' for k, v in PARAMS.items())}"
          f" [--accountant A] --json --quiet --out FILE  (T = {T_PER_NODE} n, complete "
          "graph; one fresh process per run)\n")
    tracker = None if args.no_tracker else _bench_tracker()
    rows: list[dict] = []
    baselines: dict[str, int] = {}
    for size in args.sizes:
        for acct in args.accountant:
            row = measure(int(size), acct, args, tracker, baselines)
            rows.append(row)
            print(f"  done n = {int(size):,} {acct}: {json.dumps(row)}", file=sys.stderr,
                  flush=True)
            if args.out:
                with open(args.out, "a", encoding="utf-8") as f:
                    f.write(json.dumps(row) + "\n")
    print_table(rows, baselines, args.baseline_n)


if __name__ == "__main__":
    main()
