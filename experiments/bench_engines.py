"""Hops per second of both engines on one topology (issues: core simulator, 13).

Usage: python experiments/bench_engines.py [--topology complete] [--nodes 10000]
[--steps 1000000] [--repeat 3]

Prints, for each engine, the median wall time of a whole walk and its hops per second,
next to the floor of the vector engine: one numpy draw of T integers. A random graph is
drawn as ``netdp simulate --seed 1`` draws it.

Beside each engine, a fresh process runs the command a user types for the same walk
(``experiments/_command.py``; the sum without the tracker, which the tracker benchmarks
time)::

    netdp simulate --topology TOPOLOGY --nodes N --steps T --engine ENGINE --seed 1 \\
        --no-tracking

with its wall time, its peak resident memory and its ratio to the engine's median walk.
``--no-command`` skips it.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import _command
import numpy as np

from netdp import engine
from netdp.core import seeding
from netdp.graphs import topologies as topology


def _median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def command(topology: str, n: int, steps: int, name: str) -> list[str]:
    """The ``netdp simulate`` argv of the walk an engine's row times."""
    return ["simulate", "--topology", topology, "--nodes", str(n), "--steps", str(steps),
            "--engine", name, "--seed", "1", "--no-tracking"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=None,
                        help="default: 10 000 (or the named graph's own size)")
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--topology", default="complete")
    _command.add_arguments(parser)
    args = parser.parse_args()
    nodes = 10_000 if args.nodes is None and args.topology == "complete" else args.nodes
    topo = topology.build(args.topology, nodes, seed=seeding.seed_sequence(1, "topology"))
    router = engine.Router(topo, engine.resolve_walk(topo) if topo.kind == "graph"
                           else "simple")
    n, steps = topo.n, args.steps

    def walk(name):
        return lambda: engine.walk(name, router, steps, [seeding.generator(1, "walk", 0, 0)])

    floor = _median_time(lambda: np.random.default_rng(1).integers(0, n, steps), args.repeat)
    vec = _median_time(walk("vector"), args.repeat)
    ev = _median_time(walk("event"), args.repeat)
    print(f"machine: {platform.processor() or platform.machine()}, "
          f"python {platform.python_version()}, numpy {np.__version__}")
    print(f"topology: {topo.describe()}, T = {steps:,} steps, median of {args.repeat}")
    with_command = not args.no_command
    if with_command:
        print(f"command: {_command.shell_line(command(args.topology, n, steps, 'ENGINE'))}")
    print(f"{'what':28}{'seconds':>10}{'hops/s':>16}{'x floor':>10}"
          + (_command.padded(_command.HEADER) if with_command else ""))
    for name, secs, engine_name in (("numpy integers(n, T) floor", floor, None),
                                    ("vector engine", vec, "vector"),
                                    ("event engine (simpy)", ev, "event")):
        fields = {}
        if with_command and engine_name is not None:
            fields = _command.beside(command(args.topology, n, steps, engine_name), secs,
                                     args.command_timeout)
        print(f"{name:28}{secs:>10.4f}{steps / secs:>16,.0f}{secs / floor:>10.2f}"
              + (_command.padded(_command.cells(fields)) if with_command else ""),
              flush=True)


if __name__ == "__main__":
    main()
