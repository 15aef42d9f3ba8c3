"""Cost of the graph-walk tracker (taboo-chain rates, netdp.tracking.taboo) at T = 100 n.

Usage: python experiments/bench_graph_tracker.py [--graphs hypercube:16384 ...]
       [--observers 4] [--icml-sources 16] [--accountant kov] [--seed 0]

For each graph ``name:n``: one walk of ``T = 100 n`` steps (the walk rule ``simulate``
picks), then the tracker for ``--observers`` observers drawn at random (what ``simulate``
does beyond 200 nodes, 32 by default). Reported per graph: seconds per observer, the
extrapolated cost of every observer, the cycles left unamplified (rows beyond the memory
budget), the mean loss, and, as the baseline timed in the same process, the reference
tracker of the complete graph on a walk of the same n and T (every observer), and the
ICML 2024 closed form the tracker stands beside (``--icml-sources`` sources; ``simulate``
takes 256, and its cost is linear in them). Rows print as they finish. The graph is
drawn from ``--seed`` as ``simulate`` draws it.

Beside each row, a fresh process runs the command a user types for the same run
(``experiments/_command.py``; the tracker here is the reference convention's)::

    netdp simulate --topology NAME --nodes N --steps 100N --epsilon 1 --delta 1e-6 \\
        --accountant A --convention reference --sources OBSERVERS --seed SEED

with its wall time, its peak resident memory and its ratio to the kernels it runs: the
walk, the tracker and the closed form, whose seconds are scaled to the sources the command
takes (every one up to 512 nodes, else 256). ``--no-command`` skips it.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

import _command
import numba
import numpy as np

from netdp import engine, mechanisms
from netdp.core import seeding
from netdp.engine.routing import resolve_walk
from netdp.graphs import topologies as topology
from netdp.graphs import walk_kind
from netdp.run.resources import peak_resident_bytes
from netdp.tracking import graph_walk, loss_summary, taboo
from netdp.tracking import loss_table as tracker

EPS0, DELTA = 1.0, 1e-6
#: The closed form's sources in ``simulate``: every one up to ICML_ALL nodes, else ICML_SAMPLED.
ICML_ALL, ICML_SAMPLED = 512, 256


def _maxrss_mb() -> float:
    return peak_resident_bytes() / 2**20


def bench(spec: str, observers: int, accountant: str, seed: int, icml_sources: int) -> dict:
    name, n_text = spec.split(":")
    topo = topology.build(name, int(n_text), seed=seeding.seed_sequence(seed, "topology"))
    n, steps = topo.n, 100 * topo.n
    rule = resolve_walk(topo, "auto")
    z = mechanisms.Gaussian(EPS0, DELTA).sigma
    start = time.perf_counter()
    trace = engine.walk("vector", engine.Router(topo, rule), steps,
                        [seeding.generator(seed, "walk", 0, 0)])
    walk_s = time.perf_counter() - start
    P = walk_kind.transition_matrix(topo, rule)
    chosen = np.sort(np.random.default_rng(seed).choice(n, size=min(observers, n),
                                                        replace=False))
    start = time.perf_counter()
    table = taboo.graph_walk_losses(trace, P, EPS0, DELTA, z, accountant, observers=chosen)
    tracker_s = time.perf_counter() - start
    # baselines in the same process: the complete graph's reference tracker (every
    # observer) at the same n and T, and the closed form on this graph
    complete = engine.walk("vector", engine.Router(topology.complete(n)), steps,
                           [seeding.generator(seed, "walk", 0, 0)])
    start = time.perf_counter()
    loss_summary.summarize([tracker.walk_losses(complete, EPS0, DELTA, z, accountant)])
    reference_s = time.perf_counter() - start
    sources = np.sort(np.random.default_rng(seed).choice(n, size=min(icml_sources, n),
                                                         replace=False))
    start = time.perf_counter()
    graph_walk.icml_coefficients(P, steps, sources)
    icml_s = time.perf_counter() - start
    per = tracker_s / chosen.size
    command_sources = n if n <= ICML_ALL else ICML_SAMPLED
    return {"graph": name, "n": n, "T": steps, "walk": rule, "walk_s": walk_s,
            "observers": int(chosen.size), "tracker_s": tracker_s, "per_observer_s": per,
            "all_observers_s": per * n, "unamplified": table.unamplified,
            "cycles": int(sum(int(k) for k in table.entries)),
            "mean": float(table.values.mean()), "reference_all_s": reference_s,
            "icml_s": icml_s, "icml_sources": int(sources.size), "peak_mib": _maxrss_mb(),
            "kernels_s": walk_s + tracker_s + icml_s * command_sources / sources.size}


def command(row: dict, accountant: str, seed: int) -> list[str]:
    """The ``netdp simulate`` argv of the run a row times."""
    return ["simulate", "--topology", row["graph"], "--nodes", str(row["n"]),
            "--steps", str(row["T"]), "--epsilon", str(EPS0), "--delta", str(DELTA),
            "--accountant", accountant, "--convention", "reference",
            "--sources", str(row["observers"]), "--seed", str(seed)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=["hypercube:8192", "erdos-renyi:10000",
                                                          "random-geometric:10000",
                                                          "grid:10000"])
    parser.add_argument("--observers", type=int, default=4)
    parser.add_argument("--icml-sources", type=int, default=16)
    parser.add_argument("--accountant", default="kov", choices=taboo.ACCOUNTANTS)
    parser.add_argument("--seed", type=int, default=0)
    _command.add_arguments(parser)
    args = parser.parse_args()
    bench("hypercube:16", 2, args.accountant, 0, 2)  # load (or compile) the kernels
    print(f"{platform.platform()}, {numba.get_num_threads()} numba threads, "
          f"accountant {args.accountant}")
    with_command = not args.no_command
    if with_command:
        shape = {"graph": "NAME", "n": "N", "T": "100N", "observers": args.observers}
        print(f"command: {_command.shell_line(command(shape, args.accountant, args.seed))}; "
              "command / kernels: its wall time over walk + tracker + closed form (at the "
              "command's sources)")
    print("| graph | n | T | walk | s / observer | every observer (est.) | unamplified "
          "cycles | mean ε | reference tracker, complete graph, every observer | "
          "ICML closed form (sources) | peak MiB |"
          + (_command.markdown(_command.HEADER) if with_command else ""))
    print("|---|---|---|---|---|---|---|---|---|---|---|" + (_command.RULE if with_command else ""),
          flush=True)
    for spec in args.graphs:
        r = bench(spec, args.observers, args.accountant, args.seed, args.icml_sources)
        if with_command:
            r.update(_command.beside(command(r, args.accountant, args.seed), r["kernels_s"],
                                     args.command_timeout))
        print(f"| {r['graph']} | {r['n']:,} | {r['T']:.0e} | {r['walk']} | "
              f"{r['per_observer_s']:.2f} | {r['all_observers_s'] / 3600:.1f} h | "
              f"{r['unamplified']} of {r['cycles']} | {r['mean']:.4f} | "
              f"{r['reference_all_s']:.2f} s | {r['icml_s']:.1f} s ({r['icml_sources']}) | "
              f"{r['peak_mib']:.0f} |"
              + (_command.markdown(_command.cells(r)) if with_command else ""),
              flush=True)
        print(json.dumps(r), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
