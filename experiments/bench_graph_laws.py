"""Cost of the sound graph tracker's laws of the visits at T = 100 n, and whether any view
falls back to the LDP loss.

Usage: python experiments/bench_graph_laws.py [--graphs hypercube:1024 ...]
       [--observers 3] [--accountants rdp kov] [--seed 0] [--json]

For each graph ``name:n`` (default: the hypercube of 1024 nodes, the random geometric
graph and the grid at n = 1000 and 1024): one walk of ``T = 100 n`` steps with the walk
rule ``simulate`` picks (ε0 = 1, δ = 1e-6), then :func:`netdp.tracking.walk_views.
sound_graph_losses` for ``--observers`` observers drawn at random, per accountant.
Reported per graph and accountant: seconds per observer (after a warm-up observer, numba
compiled), the views of the observers and how many fell back to the LDP loss
(``unamplified``), those whose laws were exact (the observers within
:data:`~netdp.tracking.walk_views.LAW_WORK`) and bounded (:mod:`netdp.tracking.
law_bound`), the mean loss and the mean LDP baseline of the same pairs, and, timed in the
same process as the yardstick, one sparse step of the walk (``P.T @ x``): seconds per
observer over that step's seconds is the machine-free cost.

Beside each row, a fresh process runs the command a user types for the same run
(``experiments/_command.py``)::

    netdp simulate --topology NAME --nodes N --steps 100N --epsilon 1 --delta 1e-6 \\
        --accountant A --sources OBSERVERS --seed SEED

(its observers drawn by ``simulate``, not these), with its wall time, its peak resident
memory and its ratio to the kernels timed here: the set-up and walk, and the observers'
seconds (``--observers`` times seconds per observer). The command also computes the ICML
closed form and the published bounds by distance. ``--no-command`` skips it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import _command
import numpy as np

from netdp.core.setup import Streams
from netdp.tasks import make_config, task_of
from netdp.tasks.preparation import with_seed
from netdp.tracking import walk_views
from netdp.tracking.cycle_entries import observer_views
from netdp.tracking.graph_observers import transition
from netdp.tracking.loss_table import ldp_losses

EPS0, DELTA = 1.0, 1e-6
GRAPHS = ("hypercube:1024", "random-geometric:1000", "grid:1024")


def prepared(topology: str, n: int, seed: int):
    config = with_seed(make_config({"topology": topology, "nodes": n, "steps": 100 * n,
                                    "seed": seed}))
    task = task_of(config)
    setup = task.prepare(config)
    return setup, task.trace(setup, Streams(setup.seed, 0))


def step_seconds(P) -> float:
    """Seconds of one sparse step ``P.T @ x`` (the yardstick)."""
    x = np.full(P.shape[0], 1.0 / P.shape[0])
    PT = P.T.tocsr()
    start = time.perf_counter()
    for _ in range(200):
        x = PT @ x
    return (time.perf_counter() - start) / 200


def command(topology: str, n: int | str, steps: int | str, accountant: str, observers: int,
            seed: int) -> list[str]:
    """The ``netdp simulate`` argv of the run a cell times."""
    return ["simulate", "--topology", topology, "--nodes", str(n), "--steps", str(steps),
            "--epsilon", str(EPS0), "--delta", str(DELTA), "--accountant", accountant,
            "--sources", str(observers), "--seed", str(seed)]


def cell(topology: str, n: int, accountant: str, observers: int, seed: int) -> dict:
    start = time.perf_counter()
    setup, trace = prepared(topology, n, seed)
    prepared_s = time.perf_counter() - start
    P = transition(setup)
    n = P.shape[0]
    z = setup.mechanism.sigma / setup.mechanism.sensitivity
    obs = np.sort(np.random.default_rng(seed).choice(n, observers + 1, replace=False))
    holders, _, _, begin, pos = walk_views.observer_setup(trace, None, None)
    views = [observer_views(holders, trace.steps, pos[begin[v]:begin[v + 1]]) for v in obs]
    works = [walk_views.law_work(v, n, P.nnz) for v in views]
    walk_views.sound_graph_losses(trace, P, EPS0, DELTA, z, accountant, None, obs[:1])
    start = time.perf_counter()
    table = walk_views.sound_graph_losses(trace, P, EPS0, DELTA, z, accountant, None,
                                          obs[1:])
    seconds = (time.perf_counter() - start) / observers
    ldp = ldp_losses(trace, EPS0, DELTA)
    yard = step_seconds(P)
    return {"graph": topology, "n": n, "T": int(trace.steps), "accountant": accountant,
            "s_per_observer": seconds, "steps_per_observer": seconds / yard,
            "views": int(sum(v.size for v in views[1:])),
            "unamplified": int(table.unamplified),
            "exact_observers": int(sum(w <= walk_views.LAW_WORK for w in works[1:])),
            "bounded_observers": int(sum(w > walk_views.LAW_WORK for w in works[1:])),
            "mean_eps": float(np.mean(table.values)),
            "mean_ldp": float(np.mean(ldp[table.nodes])),
            "longest_view": int(max(int(v.length.max(initial=0)) for v in views[1:])),
            "kernels_s": prepared_s + seconds * observers}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graphs", nargs="+", default=list(GRAPHS))
    ap.add_argument("--observers", type=int, default=3)
    ap.add_argument("--accountants", nargs="+", default=["rdp", "kov"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    _command.add_arguments(ap)
    args = ap.parse_args(argv)
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    if not args.no_command:
        line = _command.shell_line(command("NAME", "N", "100N", "A", args.observers, args.seed))
        print(f"# command: {line} (a fresh process per row; x the kernels: its wall time over "
              "the set-up, walk and observers timed here)", file=sys.stderr)
    prepared("hypercube", 16, args.seed)  # load (or compile) the walk's kernels: not timed
    rows = []
    for spec in args.graphs:
        name, n = spec.rsplit(":", 1)
        for accountant in args.accountants:
            row = cell(name, int(n), accountant, args.observers, args.seed)
            if not args.no_command:
                row.update(_command.beside(command(name, n, row["T"], accountant,
                                                   args.observers, args.seed),
                                           row["kernels_s"], args.command_timeout))
            rows.append(row)
            if not args.json:
                print(f"{row['graph']:>17} n={row['n']:<5} T={row['T']:<7} "
                      f"{accountant:>3}: {row['s_per_observer']:7.2f} s/observer "
                      f"({row['steps_per_observer']:9.0f} sparse steps), views "
                      f"{row['views']}, fell back {row['unamplified']}, observers exact/"
                      f"bounded {row['exact_observers']}/{row['bounded_observers']}, mean "
                      f"eps {row['mean_eps']:.3f} (LDP {row['mean_ldp']:.1f}), longest view "
                      f"{row['longest_view']}"
                      + ("" if args.no_command else f"; {_command.sentence(row)}"), flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
