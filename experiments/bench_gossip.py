"""Cost of gossip (Muffliato) accounting: each path on the hypercube, and dense scaling.

Usage: python experiments/bench_gossip.py [--dim 11] [--sigma 1] [--scale 8 9 10 11 12]
       [--max-seconds 120] [--budget 600]

Part 1: hypercube of dimension ``--dim`` (n = 2^dim), Metropolis weights, T from
:func:`~netdp.graphs.gossip_matrix.default_steps`: seconds of the spectral gap and of every
path of the message sum and of the exact joint loss (dense = all pairs), with the mean
coefficient each path reports and the ε at α-free conversion for the mean pair.

Part 2: the dense all-pairs paths on hypercubes of the dimensions ``--scale``, each timed
once (a size is skipped when the previous one predicts more than ``--max-seconds``);
a power law fitted to the two largest sizes timed gives the largest n doable within
``--budget`` seconds, beside the largest n whose n x n arrays fit in memory.

Beside them, a fresh process runs the command a user types for the same hypercube
(``experiments/_command.py``)::

    netdp simulate --protocol gossip --topology hypercube --nodes 2^d --sigma S --seed 0 \\
        [--accelerated] [--pairs-out FILE.npy]

which takes the transitive paths of both bounds (the hypercube is vertex-transitive), or
the dense ones with ``--pairs-out``; it never samples there. Part 1 gives each command's
wall time, peak resident memory and ratio to its kernels (building W, the spectral gap,
the joint loss and the message sum of its path); part 2 the dense command of each size
whose two bounds were timed, against their seconds. ``--no-command`` skips them.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time

import _command
import numpy as np

from netdp.graphs import gossip_matrix
from netdp.graphs import topologies as topology
from netdp.tracking import gossip as G
from netdp.tracking import gossip_message_sum


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - start, out


def setup(dim: int, sigma: float):
    topo = topology.build("hypercube", 2**dim)
    W = gossip_matrix.metropolis(topo)
    adj = gossip_matrix.adjacency(topo)
    return topo, W, adj


def command(dim: int | str, sigma: float, accelerated: bool,
            pairs_out: str | None) -> list[str]:
    """The ``netdp simulate`` argv of gossip on the hypercube of dimension ``dim`` (a
    string: the ``--nodes`` text as it is; ``pairs_out``: the dense path, every pair
    written there)."""
    argv = ["simulate", "--protocol", "gossip", "--topology", "hypercube",
            "--nodes", dim if isinstance(dim, str) else str(2**dim),
            "--sigma", str(sigma), "--seed", "0"]
    if accelerated:
        argv.append("--accelerated")
    return argv if pairs_out is None else [*argv, "--pairs-out", pairs_out]


def print_commands(rows: list[tuple[int, bool, bool, float]], sigma: float,
                   timeout: float) -> None:
    """Run the command of each ``(dim, accelerated, dense, kernels seconds)`` and print it
    beside the seconds of its kernels."""
    print(f"\n  command: {_command.shell_line(command('N', sigma, False, None))} "
          "[--accelerated] [--pairs-out FILE.npy]  (N = 2^d)")
    print(f"  {'d':>3} {'path':<11}{'accel':<7}{'kernels s':>10}"
          + _command.padded(_command.HEADER))
    with tempfile.TemporaryDirectory() as tmp:
        for dim, accelerated, dense, kernels_s in rows:
            argv = command(dim, sigma, accelerated,
                           os.path.join(tmp, "pairs.npy") if dense else None)
            fields = _command.beside(argv, kernels_s, timeout)
            print(f"  {dim:>3} {'dense' if dense else 'transitive':<11}"
                  f"{'yes' if accelerated else 'no':<7}{kernels_s:>10.3f}"
                  + _command.padded(_command.cells(fields)), flush=True)


def part1(dim: int, sigma: float, samples: int, timeout: float | None) -> None:
    t_build, (topo, W, adj) = timed(setup, dim, sigma)
    t_gap, gap = timed(gossip_matrix.spectral_gap, W)
    steps = gossip_matrix.default_steps(gap, sigma, topo.n)
    gamma = gossip_matrix.chebyshev_gamma(gap)
    print(f"hypercube d={dim}: n={topo.n}, Metropolis, sigma={sigma}: gap={gap:.12f} "
          f"(closed form {2 / (dim + 1):.12f}), T={steps}")
    print(f"  build graph + W: {t_build:.2f} s; spectral gap (dense eigvalsh up to "
          f"{gossip_matrix.DENSE_EIGEN_NODES} nodes, eigsh beyond): {t_gap:.2f} s")
    print(f"  {'bound':<12}{'path':<12}{'accel':<7}{'seconds':>9}{'mean c':>12}{'stderr':>10}")
    rng = np.random.default_rng(0)
    runs = [
        ("message-sum", "transitive", lambda g: gossip_message_sum.message_sum(
            W, adj, steps, accelerated=g is not None, gamma=g, transitive=True)),
        ("message-sum", "sampled", lambda g: gossip_message_sum.message_sum(
            W, adj, steps, accelerated=g is not None, gamma=g, samples=samples, rng=rng)),
        ("message-sum", "dense", lambda g: gossip_message_sum.message_sum(
            W, adj, steps, accelerated=g is not None, gamma=g)),
        ("joint", "transitive", lambda g: G.joint(W, adj, steps, transitive=True)),
        ("joint", "sampled", lambda g: G.joint(W, adj, steps, samples=samples, rng=rng)),
        ("joint", "dense", lambda g: G.joint(W, adj, steps)),
    ]
    spent: dict[tuple[str, str, bool], float] = {}
    for bound, path, run in runs:
        for g in (None, gamma):
            if bound == "joint" and g is not None:
                continue  # the joint loss does not depend on the acceleration
            seconds, losses = timed(run, g)
            spent[bound, path, g is not None] = seconds
            print(f"  {bound:<12}{path:<12}{'yes' if g else 'no':<7}{seconds:>9.3f}"
                  f"{losses.mean():>12.6f}{losses.stderr():>10.2e}")
    if timeout is None:
        return
    print_commands([(dim, accelerated, path == "dense",
                     t_build + t_gap + spent["joint", path, False]
                     + spent["message-sum", path, accelerated])
                    for path in ("transitive", "dense") for accelerated in (False, True)],
                   sigma, timeout)
    print("  (kernels: building W, the gap, the joint loss and the message sum of the path; "
          "no command samples on the hypercube, which is vertex-transitive)")


def part2(dims: list[int], sigma: float, max_seconds: float, budget: float,
          timeout: float | None) -> None:
    avail = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    dense_s: dict[int, dict[str, float]] = {}
    for bound, arrays in (("message-sum", 6), ("joint", 1)):
        print(f"\n{bound}, dense (all pairs), hypercubes, T from the rule:")
        print(f"  {'d':>3}{'n':>8}{'T':>5}{'seconds':>10}")
        timings: list[tuple[int, float]] = []
        for dim in dims:
            if len(timings) >= 2:
                predicted = _fit(timings)(2**dim)
                if predicted > max_seconds:
                    print(f"  {dim:>3}{2**dim:>8}      skipped (predicted {predicted:.0f} s)")
                    continue
            topo, W, adj = setup(dim, sigma)
            steps = gossip_matrix.default_steps(2 / (dim + 1), sigma, topo.n)
            fn = gossip_message_sum.message_sum if bound == "message-sum" else G.joint
            seconds, _ = timed(fn, W, adj, steps)
            timings.append((topo.n, seconds))
            dense_s.setdefault(dim, {})[bound] = seconds
            print(f"  {dim:>3}{topo.n:>8}{steps:>5}{seconds:>10.2f}")
        if len(timings) >= 2:
            law = _fit(timings)
            (n1, s1), (n2, s2) = timings[-2:]
            p = math.log(s2 / s1) / math.log(n2 / n1)
            n_time = n2 * (budget / s2) ** (1 / p)
            n_mem = math.sqrt(avail / (arrays * 8))
            print(f"  fit on n={n1}, {n2}: time ~ n^{p:.2f}; within {budget:.0f} s: "
                  f"n ~ {n_time:.0f} (check: {law(n_time):.0f} s); memory ({arrays} n x n "
                  f"float64 in {avail / 2**30:.1f} GiB free): n <= {n_mem:.0f}")
    if timeout is None:
        return
    print_commands([(dim, False, True, sum(by_bound.values()))
                    for dim, by_bound in dense_s.items() if len(by_bound) == 2], sigma,
                   timeout)
    print("  (kernels: the dense message sum and joint loss timed above, at the closed "
          "form's gap; the command also builds W and computes the gap)")


def _fit(timings: list[tuple[int, float]]):
    (n1, s1), (n2, s2) = timings[-2:]
    p = math.log(s2 / s1) / math.log(n2 / n1)
    return lambda n: s2 * (n / n2) ** p


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dim", type=int, default=11, help="hypercube dimension (part 1)")
    parser.add_argument("--sigma", type=float, default=1.0, help="noise std, in units of Δ")
    parser.add_argument("--samples", type=int, default=32, help="sampled sources/observers")
    parser.add_argument("--scale", type=int, nargs="*", default=[8, 9, 10, 11, 12],
                        help="hypercube dimensions for the dense scaling (part 2)")
    parser.add_argument("--max-seconds", type=float, default=120.0,
                        help="skip a size predicted to take longer")
    parser.add_argument("--budget", type=float, default=600.0,
                        help="the time budget for the largest exact n")
    _command.add_arguments(parser)
    args = parser.parse_args()
    timeout = None if args.no_command else args.command_timeout
    part1(args.dim, args.sigma, args.samples, timeout)
    if args.scale:
        part2(args.scale, args.sigma, args.max_seconds, args.budget, timeout)


if __name__ == "__main__":
    main()
