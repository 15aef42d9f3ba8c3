"""Cost of the report-based tasks' graph tracker (shuffle windows, taboo-chain rates).

Usage: python experiments/bench_graph_shuffle.py [--graphs hypercube:1024 ...]
       [--observers 4] [--seed 0] [--csv out.csv]

For each graph ``name:n``: one walk of ``T = 100 n`` steps (the walk rule ``simulate``
picks), then :func:`netdp.tracking.graph_shuffle.graph_histogram_losses` for
``--observers`` observers drawn at random (what ``simulate`` does beyond 200 nodes, 32 by
default; ε0 = 1, δ = 1e-6, fmt-numeric). Reported per graph: seconds per observer, the
extrapolated cost of every observer, the windows left unamplified, the mean loss, and as
the baseline timed in the same process the complete graph's histogram tracker
(:func:`~netdp.tracking.shuffle.walk_histogram_losses`, every observer) on a walk
of the same n and T, with the ratio of one observer here to all of it there. The graph is
drawn from ``--seed`` as ``simulate`` draws it.

Beside each row, a fresh process runs the command a user types for the same run
(``experiments/_command.py``)::

    netdp simulate --task histogram --topology NAME --nodes N --steps 100N --epsilon 1 \\
        --delta 1e-6 --shuffle fmt-numeric --convention C --sources OBSERVERS --seed SEED

(grr over 10 categories, its ε0 the tracker's; its observers drawn by ``simulate``), with
its wall time, its peak resident memory and its ratio to the kernels timed here: the walk
and the tracker. ``--no-command`` skips it.
"""

from __future__ import annotations

import argparse
import csv
import platform
import time

import _command
import numba
import numpy as np

from netdp import engine
from netdp.core import seeding
from netdp.engine.routing import resolve_walk
from netdp.graphs import topologies as topology
from netdp.graphs import walk_kind
from netdp.tracking.graph_shuffle import graph_histogram_losses
from netdp.tracking.shuffle import walk_histogram_losses

EPS0, DELTA = 1.0, 1e-6
GRAPHS = ["hypercube:1024", "random-geometric:1000", "hypercube:8192",
          "random-geometric:10000"]


def bench(spec: str, observers: int, seed: int, convention: str = "sound") -> dict:
    name, n_text = spec.split(":")
    topo = topology.build(name, int(n_text), seed=seeding.seed_sequence(seed, "topology"))
    n, steps = topo.n, 100 * topo.n
    rule = resolve_walk(topo, "auto")
    start = time.perf_counter()
    trace = engine.walk("vector", engine.Router(topo, rule), steps,
                        [seeding.generator(seed, "walk", 0, 0)])
    walk_s = time.perf_counter() - start
    P = walk_kind.transition_matrix(topo, rule)
    chosen = np.sort(np.random.default_rng(seed).choice(n, size=min(observers, n),
                                                        replace=False))
    start = time.perf_counter()
    table = graph_histogram_losses(trace, P, EPS0, DELTA, observers=chosen,
                                   convention=convention)
    tracker_s = time.perf_counter() - start
    per = tracker_s / chosen.size
    complete = engine.walk("vector", engine.Router(topology.complete(n)), steps,
                           [seeding.generator(seed, "walk", 0, 0)])
    start = time.perf_counter()
    walk_histogram_losses(complete, EPS0, DELTA)
    reference = time.perf_counter() - start
    return {"graph": name, "n": n, "T": steps, "walk": rule, "convention": convention,
            "observers": int(chosen.size),
            "per_observer_s": per, "all_observers_h": per * n / 3600,
            "unamplified": table.unamplified, "windows": int(table.entries.sum()),
            "mean": float(table.values.mean()), "reference_all_s": reference,
            "ratio": per / reference, "kernels_s": walk_s + tracker_s}


def command(row: dict, seed: int) -> list[str]:
    """The ``netdp simulate`` argv of the run a row times."""
    return ["simulate", "--task", "histogram", "--topology", row["graph"],
            "--nodes", str(row["n"]), "--steps", str(row["T"]), "--epsilon", str(EPS0),
            "--delta", str(DELTA), "--shuffle", "fmt-numeric", "--convention",
            row["convention"], "--sources", str(row["observers"]), "--seed", str(seed)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=GRAPHS)
    parser.add_argument("--observers", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--convention", choices=["sound", "reference", "both"],
                        default="both", help="the tracker's convention (both: back to back)")
    parser.add_argument("--csv", help="also write the rows to this CSV file")
    _command.add_arguments(parser)
    args = parser.parse_args()
    with_command = not args.no_command
    conventions = ["sound", "reference"] if args.convention == "both" else [args.convention]
    for c in conventions:
        bench("hypercube:16", 2, 0, c)  # load (or compile) the kernels
    print(f"{platform.platform()}, {numba.get_num_threads()} numba threads")
    if with_command:
        shape = {"graph": "NAME", "n": "N", "T": "100N", "convention": "C",
                 "observers": args.observers}
        print(f"command: {_command.shell_line(command(shape, args.seed))}; command / kernels: "
              "its wall time over the walk + the tracker")
    print("| graph | n | walk | convention | s / observer | every observer (est.) "
          "| unamplified windows | mean ε | complete-graph tracker, every observer "
          "| one observer ÷ it |" + (_command.markdown(_command.HEADER) if with_command else ""))
    print("|---|---|---|---|---|---|---|---|---|---|" + (_command.RULE if with_command else ""),
          flush=True)
    rows = []
    for spec in args.graphs:
        for c in conventions:
            r = bench(spec, args.observers, args.seed, c)
            if with_command:
                r.update(_command.beside(command(r, args.seed), r["kernels_s"],
                                         args.command_timeout))
            rows.append(r)
            print(f"| {r['graph']} | {r['n']:,} | {r['walk']} | {c} | {r['per_observer_s']:.2f} | "
                  f"{r['all_observers_h']:.2f} h | {r['unamplified']} of {r['windows']} | "
                  f"{r['mean']:.3f} | {r['reference_all_s']:.2f} s | {r['ratio']:.2f} |"
                  + (_command.markdown(_command.cells(r)) if with_command else ""), flush=True)
    if args.csv:
        with open(args.csv, "w", newline="", encoding="utf-8") as f:
            columns = dict.fromkeys(k for r in rows for k in r if k != "command_timing")
            writer = csv.DictWriter(f, fieldnames=list(columns), extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
