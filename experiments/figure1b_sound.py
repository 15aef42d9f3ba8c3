"""AISTATS 2022 Fig. 1b redrawn with the sound convention and the exact loss.

Usage: python experiments/figure1b_sound.py [--sizes 5 10 20 50 100 200 500 1000]
       [--eps0 0.1 0.4] [--walks 3] [--exact-all-n 50] [--exact-observers 4]
       [--exact-max-n 1000] [--out docs/figures/figure1b_sound]

Complete graph with self-moves, ``T = 100 n`` steps, ``delta = 1e-7``, Gaussian noise of
level ``eps0`` per contribution. For each n: the mean over all ordered pairs of ε by the
reference convention (kov: the paper's method) and by the sound default (kov), averaged
over ``--walks`` walks (seeds 0..walks-1); the exact loss (``--accountant exact``) on the
first walk, over every observer up to ``--exact-all-n`` and over ``--exact-observers``
sampled observers beyond (up to ``--exact-max-n``); and the LDP baseline (every
contribution of a node seen in the clear). Writes ``OUT.csv`` row by row and ``OUT.png``.
"""

from __future__ import annotations

import argparse
import csv
import time

import numpy as np

from netdp import engine, mechanisms
from netdp.core import seeding
from netdp.graphs import topologies as topology
from netdp.tracking import loss_summary
from netdp.tracking import loss_table as tracker

DELTA, T_PER_NODE = 1e-7, 100


def _walk(n: int, seed: int) -> engine.Trace:
    return engine.walk("vector", engine.Router(topology.complete(n)), T_PER_NODE * n,
                       [seeding.generator(seed, "walk", 0, 0)])


def measure(n: int, eps0: float, walks: int, exact_all_n: int, exact_obs: int,
            exact_max_n: int) -> list[dict]:
    z = mechanisms.Gaussian(eps0, DELTA).sigma
    rows = []
    acc: dict[str, list[float]] = {"reference kov": [], "sound kov": [], "LDP": []}
    t0 = time.perf_counter()
    for seed in range(walks):
        trace = _walk(n, seed)
        acc["reference kov"].append(loss_summary.summarize([tracker.walk_losses(
            trace, eps0, DELTA, z, "kov", convention="reference")])["mean"])
        acc["sound kov"].append(loss_summary.summarize([tracker.walk_losses(
            trace, eps0, DELTA, z, "kov")])["mean"])
        acc["LDP"].append(float(np.mean(tracker.ldp_losses(trace, eps0, DELTA))))
    sec = time.perf_counter() - t0
    for method, vals in acc.items():
        rows.append(dict(n=n, eps0=eps0, method=method, mean=float(np.mean(vals)),
                         std=float(np.std(vals)), walks=walks, observers="all",
                         seconds=sec))
    if n <= exact_max_n:
        trace = _walk(n, 0)
        obs = None if n <= exact_all_n else np.sort(
            np.random.default_rng(0).choice(n, size=exact_obs, replace=False))
        t0 = time.perf_counter()
        ex = tracker.walk_losses(trace, eps0, DELTA, z, "exact", observers=obs)
        sec = time.perf_counter() - t0
        rows.append(dict(n=n, eps0=eps0, method="exact", mean=loss_summary.summarize([ex])["mean"],
                         std=0.0, walks=1, observers="all" if obs is None else obs.size,
                         seconds=sec))
        if obs is not None:  # sound kov on the same observers, for comparison
            s = tracker.walk_losses(trace, eps0, DELTA, z, "kov", observers=obs)
            rows.append(dict(n=n, eps0=eps0, method="sound kov (exact's observers)",
                             mean=loss_summary.summarize([s])["mean"], std=0.0, walks=1,
                             observers=obs.size, seconds=0.0))
    return rows


def plot(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5))
    styles = {"reference kov": ("--", "o"), "sound kov": ("-", "s"), "exact": ("-", "^"),
              "LDP": (":", None)}
    colors = {0.1: "tab:blue", 0.4: "tab:red"}
    for eps0 in sorted({r["eps0"] for r in rows}):
        for method, (ls, mk) in styles.items():
            pts = sorted((r["n"], r["mean"]) for r in rows
                         if r["eps0"] == eps0 and r["method"] == method)
            if not pts:
                continue
            x, y = zip(*pts, strict=True)
            label = {"reference kov": "reference (paper, kov)", "sound kov": "sound (kov)",
                     "exact": "exact", "LDP": "LDP"}[method]
            ax.plot(x, y, ls, marker=mk, color=colors.get(eps0, "k"),
                    alpha=0.6 if method == "LDP" else 1.0, label=f"ε0 = {eps0:g}: {label}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of nodes n")
    ax.set_ylabel("mean pairwise ε (δ = 1e-7)")
    ax.set_title("Complete graph, T = 100 n: reference vs sound vs exact")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 10, 20, 50, 100, 200, 500,
                                                                 1000])
    parser.add_argument("--eps0", type=float, nargs="+", default=[0.1, 0.4])
    parser.add_argument("--walks", type=int, default=3)
    parser.add_argument("--exact-all-n", type=int, default=50)
    parser.add_argument("--exact-observers", type=int, default=4)
    parser.add_argument("--exact-max-n", type=int, default=1000)
    parser.add_argument("--out", default="docs/figures/figure1b_sound")
    parser.add_argument("--plot-only", action="store_true")
    args = parser.parse_args()
    fields = ["n", "eps0", "method", "mean", "std", "walks", "observers", "seconds"]
    rows: list[dict] = []
    if not args.plot_only:
        with open(args.out + ".csv", "w", newline="") as fh:
            writer = csv.DictWriter(fh, fields)
            writer.writeheader()
            for n in args.sizes:
                for eps0 in args.eps0:
                    for row in measure(n, eps0, args.walks, args.exact_all_n,
                                       args.exact_observers, args.exact_max_n):
                        writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v)
                                         for k, v in row.items()})
                        rows.append(row)
                        print(row, flush=True)
                    fh.flush()
    with open(args.out + ".csv") as fh:
        rows = [dict(r, n=int(r["n"]), eps0=float(r["eps0"]), mean=float(r["mean"]))
                for r in csv.DictReader(fh)]
    plot(rows, args.out + ".png")


if __name__ == "__main__":
    main()
