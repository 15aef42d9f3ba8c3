"""Sweep backends: speed-up of the Figure 1b sweep from serial to dask, per-task overhead.

Usage: python experiments/bench_sweep.py [--spec experiments/sweeps/figure1b_quick.toml]
       [--workers N] [--tiny 200] [--explain] [--accountants kov] [--nodes 5 10 ...]
       [--skip-figure] [--skip-overhead]

(1) Figure 1b (quick variant: n <= 1000, eps0 0.1 and 0.4, kov + rdp, 10 seeds, 160 runs):
the whole command ``python -m netdp sweep SPEC --out DIR --backend serial`` and the same
with ``--backend dask`` (a local cluster, one single-threaded worker per core, started
inside the timing), wall-clock, each in a fresh process; then checks that both tables hold
identical values (all but ``runtime_s``). ``--explain`` adds two runs that show where the
ratio comes from: serial with ``NUMBA_NUM_THREADS=1`` (numba's threaded tracker kernel is
the serial backend's only parallelism) and dask with numba's default threads in each
worker (two workers x two threads on two cores).

(2) Per-task overhead: ``--tiny`` very small runs (complete graph, n = 10, 100 steps, no
tracking), in this process, on an already started cluster: serial and dask, with one
run per task (``--batch-size 1``) and with the automatic batching. Printed: seconds per
run on serial, and the overhead ``(dask wall - serial wall) / tasks``.

The machine's load average is printed with each timing: other work on the machine skews
wall-clock ratios. Writes only into a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "experiments" / "sweeps" / "figure1b_quick.toml"
TINY = """\
seeds = {n}
[fixed]
nodes = 10
steps = 100
accountants = []
"""


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.2f} (5 min {five:.2f})"


def timed_command(args: list[str], env: dict | None = None) -> float:
    """Wall seconds of ``python -m netdp ARGS`` in a fresh process."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "netdp", *args], cwd=REPO, env=env,
                          capture_output=True, text=True)
    secs = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{proc.stderr}")
    return secs


def same_values(a: Path, b: Path) -> bool:
    import pandas as pd

    from netdp.run.sweep.table import read_table

    def values(path: Path):
        return (read_table(path).drop(columns=["runtime_s"])
                .sort_values(["config_hash", "seed"]).reset_index(drop=True))

    try:
        pd.testing.assert_frame_equal(values(a), values(b), check_exact=True)
    except AssertionError:
        return False
    return True


def variant(spec: Path, accountants: list[str] | None, nodes: list[int] | None,
            tmp: Path) -> Path:
    """A copy of ``spec`` with other accountants or another nodes axis."""
    import tomllib

    if not accountants and not nodes:
        return spec
    data = tomllib.loads(spec.read_text())
    lines = [f"seeds = {data.get('seeds', 1)}", f"base_seed = {data.get('base_seed', 0)}",
             "[fixed]"]
    fixed = dict(data.get("fixed", {}))
    if accountants:
        fixed["accountants"] = accountants
    grid = dict(data.get("grid", {}))
    if nodes:
        grid["nodes"] = nodes
    lines += [f"{k} = {_toml(v)}" for k, v in fixed.items()]
    lines += ["[grid]"] + [f"{k} = {_toml(v)}" for k, v in grid.items()]
    out = tmp / "variant.toml"
    out.write_text("\n".join(lines) + "\n")
    print(f"variant of {spec.name}: accountants {fixed.get('accountants')}, nodes "
          f"{grid.get('nodes')}")
    return out


def _toml(value) -> str:
    import json

    return json.dumps(value)


def figure(spec: Path, workers: int | None, explain: bool, tmp: Path) -> None:
    from netdp.run.sweep.spec import load_spec

    n = load_spec(spec).n_runs
    name = spec.relative_to(REPO) if spec.is_relative_to(REPO) else spec.name
    print(f"(1) {name}: {n} runs, whole command, fresh process each")
    extra = ["--workers", str(workers)] if workers else []
    env1 = {**os.environ, "NUMBA_NUM_THREADS": "1"}
    plan = [("serial", ["--backend", "serial"], None),
            ("dask", ["--backend", "dask", *extra], None)]
    if explain:
        plan += [("serial, NUMBA_NUM_THREADS=1", ["--backend", "serial"], env1)]
    times = {}
    for name, args, env in plan:
        out = tmp / name.replace(" ", "_").replace(",", "").replace("=", "")
        load = _load()
        times[name] = timed_command(["sweep", str(spec), "--out", str(out), *args], env)
        print(f"  {name:32} {times[name]:8.1f} s   [{load} before]", flush=True)
    if explain:
        name = "dask, numba default threads"
        load = _load()
        times[name] = _dask_default_threads(spec, tmp / "dask_threads", workers)
        print(f"  {name:32} {times[name]:8.1f} s   [{load} before; in-process]", flush=True)
    from netdp.run.sweep.runner import default_workers
    from netdp.run.sweep.table import read_table

    busy = read_table(tmp / "dask")["runtime_s"].sum()
    share = busy / times["dask"] / (workers or default_workers())
    print(f"  dask: the runs' runtime_s add up to {busy:.1f} s = {share:.0%} of workers x "
          "wall (the rest: imports, start-up, overhead)")
    print(f"  speed-up serial -> dask: {times['serial'] / times['dask']:.2f}x")
    if explain:
        print(f"  speed-up serial (1 numba thread) -> dask: "
              f"{times['serial, NUMBA_NUM_THREADS=1'] / times['dask']:.2f}x")
    print(f"  identical values (serial vs dask): {same_values(tmp / 'serial', tmp / 'dask')}")


def _dask_default_threads(spec: Path, out: Path, workers: int | None) -> float:
    """The dask run with numba's own thread count in every worker (cluster start included,
    this process's imports not)."""
    import logging

    from distributed import Client, LocalCluster

    from netdp.run.sweep.runner import default_workers, run_sweep
    from netdp.run.sweep.spec import load_spec

    start = time.perf_counter()
    with LocalCluster(n_workers=workers or default_workers(), threads_per_worker=1,
                      dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        run_sweep(load_spec(spec), out, "dask", client=client, progress=False,
                  numba_threads=None)
    return time.perf_counter() - start


def overhead(n: int, workers: int | None, tmp: Path) -> None:
    import logging

    from distributed import Client, LocalCluster

    from netdp.run.sweep.runner import default_workers, run_sweep
    from netdp.run.sweep.spec import parse_spec

    spec = parse_spec({"seeds": n, "fixed": {"nodes": 10, "steps": 100, "accountants": []}})
    warm = parse_spec({"seeds": 4, "base_seed": 1,
                       "fixed": {"nodes": 10, "steps": 100, "accountants": []}})
    w = workers or default_workers()
    print(f"(2) per-task overhead: {n} tiny runs (complete graph, n = 10, T = 100, no "
          f"tracking), {w} workers, in this process [{_load()}]")
    run_sweep(warm, tmp / "warm_serial", "serial", progress=False)
    res = {}
    for size in (1, None):
        start = time.perf_counter()
        rep = run_sweep(spec, tmp / f"serial_{size}", "serial", batch_size=size,
                        progress=False)
        res["serial", size] = (time.perf_counter() - start, rep.batches)
    start = time.perf_counter()
    with LocalCluster(n_workers=w, threads_per_worker=1, dashboard_address=None,
                      silence_logs=logging.ERROR, env={"NUMBA_NUM_THREADS": "1"}) as cluster, \
            Client(cluster) as client:
        client.wait_for_workers(w)
        started = time.perf_counter() - start
        run_sweep(warm, tmp / "warm_dask", "dask", client=client, progress=False)
        warmed = time.perf_counter() - start - started
        for size in (1, None):
            start = time.perf_counter()
            rep = run_sweep(spec, tmp / f"dask_{size}", "dask", client=client,
                            batch_size=size, progress=False)
            res["dask", size] = (time.perf_counter() - start, rep.batches)
    print(f"  local cluster start {started:.2f} s; first tasks (imports in the workers) "
          f"{warmed:.2f} s")
    for size in (1, None):
        (ts, bs), (td, bd) = res["serial", size], res["dask", size]
        label = "1 run per task" if size == 1 else f"auto batches ({bs} serial, {bd} dask)"
        print(f"  {label:38} serial {ts:6.2f} s ({ts / n * 1e3:6.2f} ms/run)  dask "
              f"{td:6.2f} s  overhead (dask - serial) / task {(td - ts) / bd * 1e3:7.2f} ms")


def main() -> None:
    warnings.filterwarnings("ignore", "Port .* is already in use")  # the scheduler's http
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", type=Path, default=SPEC)
    parser.add_argument("--workers", type=int, default=None, help="dask workers (default: "
                        "cores)")
    parser.add_argument("--tiny", type=int, default=200, help="tiny runs of (2)")
    parser.add_argument("--explain", action="store_true", help="also serial with one numba "
                        "thread, and dask with numba's default threads")
    parser.add_argument("--accountants", nargs="+", help="replace the spec's accountants "
                        "(e.g. kov: runs that numba's threads do not parallelize as much)")
    parser.add_argument("--nodes", nargs="+", type=int, help="replace the spec's nodes axis")
    parser.add_argument("--skip-figure", action="store_true")
    parser.add_argument("--skip-overhead", action="store_true")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(prefix="bench_sweep_") as tmp:
        if not args.skip_figure:
            spec = variant(args.spec.resolve(), args.accountants, args.nodes, Path(tmp))
            figure(spec, args.workers, args.explain, Path(tmp))
        if not args.skip_overhead:
            overhead(args.tiny, args.workers, Path(tmp))


if __name__ == "__main__":
    main()
