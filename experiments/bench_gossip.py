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
"""

from __future__ import annotations

import argparse
import math
import os
import time

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


def part1(dim: int, sigma: float, samples: int) -> None:
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
    for bound, path, run in runs:
        for g in (None, gamma):
            if bound == "joint" and g is not None:
                continue  # the joint loss does not depend on the acceleration
            seconds, losses = timed(run, g)
            print(f"  {bound:<12}{path:<12}{'yes' if g else 'no':<7}{seconds:>9.3f}"
                  f"{losses.mean():>12.6f}{losses.stderr():>10.2e}")


def part2(dims: list[int], sigma: float, max_seconds: float, budget: float) -> None:
    avail = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
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
    args = parser.parse_args()
    part1(args.dim, args.sigma, args.samples)
    if args.scale:
        part2(args.scale, args.sigma, args.max_seconds, args.budget)


if __name__ == "__main__":
    main()
