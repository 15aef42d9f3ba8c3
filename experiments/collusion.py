"""Collusion sweeps: privacy against the coalition size c, from 1 to n/2 (issue 16, item 5;
docs/collusion.md, figure docs/figures/collusion.png).

Usage: python experiments/collusion.py [--nodes 64] [--seeds 8]
       [--out docs/figures/collusion.png] [--csv collusion.csv]

A coalition of c nodes, drawn at random in every run (`--coalition random:C`), observes
as one; every other node's loss towards it is tracked. Four settings, n = 64 by default,
c = 1, 2, 4, ..., n/2: a walk sum on the directed ring (3 turns), on the complete graph
and on the hypercube (T = 25 n steps, the graph tracker), and gossip averaging on the
hypercube (Muffliato's T). One run per seed and point, the sweep's seeds (so the walk rows
are those of experiments/sweeps/collusion.toml and collusion_ring.toml); about 40 s in one
process. Per point: the share of (node -> coalition) pairs left unprotected (infinite
loss), the mean and max pairwise ε of the first accountant (kov for walks, rdp for
gossip) and the LDP level.

What it shows: on the ring a coalition exposes every node whose stretch between two
members holds no noise draw, so from c = 2 on a growing share of nodes is in the clear
(most of them by c = 8). On the complete graph and the hypercube no pair is ever exposed,
but the coalition's ε grows about linearly in c; gossip's rises to its LDP level by
c = 16. The theory of netdp is per observer: it is drawn at c = 1 only (the ring's
`ring-ndp`, the complete graph's `complete-ndp-chernoff`, the hypercube walk's
`graph-walk-icml2024` and gossip's per-message sum); there is no curve for c >= 2.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from netdp import simulate
from netdp.run.sweep.spec import derive_seed

#: The settings: the fixed parameters of each (task sum); ``steps`` is per node (T = 25 n).
SETTINGS: dict[str, dict] = {
    "ring (walk, K = 3)": {"task": "sum", "topology": "ring", "rounds": 3},
    "complete (walk)": {"task": "sum", "topology": "complete", "steps": 25},
    "hypercube (walk)": {"task": "sum", "topology": "hypercube", "steps": 25},
    "hypercube (gossip)": {"task": "sum", "protocol": "gossip", "topology": "hypercube"},
}
#: The single-observer theory curve of each setting, and whether it is a mean over pairs
#: (drawn on the mean panel) or a bound on every pair (the max panel).
THEORY = {"ring (walk, K = 3)": ("ring-ndp", "max"),
          "complete (walk)": ("complete-ndp-chernoff", "max"),
          "hypercube (walk)": ("graph-walk-icml2024", "mean"),
          "hypercube (gossip)": ("gossip-message-sum", "mean")}
COLUMNS = ("setting", "nodes", "coalition_size", "seed", "accountant", "pairs", "unprotected",
           "unprotected_fraction", "eps_mean", "eps_min", "eps_max", "ldp_mean", "ldp_max",
           "theory_name", "theory", "seconds")


def ladder(nodes: int) -> list[int]:
    """Coalition sizes 1, 2, 4, ... up to n/2 (n/2 itself included)."""
    sizes, c = [], 1
    while c <= nodes // 2:
        sizes.append(c)
        c *= 2
    if nodes // 2 not in sizes and nodes // 2 >= 1:
        sizes.append(nodes // 2)
    return sizes


def _number(value) -> float:
    return math.nan if value is None else float(value)


def rows(nodes: int = 64, seeds: int = 8, sizes: Sequence[int] | None = None,
         settings: Sequence[str] | None = None, base_seed: int = 0) -> list[dict]:
    """One row per (setting, coalition size, seed), each one run of ``netdp.simulate``."""
    sizes = list(sizes) if sizes is not None else ladder(nodes)
    out = []
    for name in settings or list(SETTINGS):
        curve, _ = THEORY[name]
        for i in range(seeds):
            seed = derive_seed(base_seed, i)
            theory = math.nan
            for c in sizes:
                params = {**SETTINGS[name], "nodes": nodes, "coalition": f"random:{c}",
                          "seed": seed}
                if "steps" in params:
                    params["steps"] *= nodes
                start = time.perf_counter()
                report = simulate(params, progress=False).to_json()
                seconds = time.perf_counter() - start
                privacy = report["privacy"]
                first = privacy["empirical"][0]
                if c == 1:  # the per-observer theory: reported with the coalition, or not
                    found = privacy.get("theory") or {}
                    if curve not in found:  # gossip reports none for a coalition
                        plain = {k: v for k, v in params.items() if k != "coalition"}
                        found = simulate(plain, progress=False).to_json()["privacy"]["theory"]
                    theory = _number(found.get(curve))
                pairs, unprotected = int(first["pairs"]), int(first["unprotected"])
                out.append({
                    "setting": name, "nodes": nodes, "coalition_size": c, "seed": seed,
                    "accountant": first["accountant"], "pairs": pairs,
                    "unprotected": unprotected,
                    "unprotected_fraction": unprotected / pairs if pairs else math.nan,
                    "eps_mean": _number(first["mean"]), "eps_min": _number(first["min"]),
                    "eps_max": _number(first["max"]),
                    "ldp_mean": _number(privacy["ldp"]["mean"]),
                    "ldp_max": _number(privacy["ldp"]["max"]),
                    "theory_name": curve, "theory": theory if c == 1 else math.nan,
                    "seconds": seconds})
    return out


def summary(df):
    """Per (setting, c): the pooled unprotected share, the mean of the runs' mean ε, the
    largest max ε, the smallest ε (on the ring: that of every node still protected), the
    LDP level (mean over runs and nodes; ``ldp_max``: the largest node's) and the theory."""
    by = df.groupby(["setting", "coalition_size"], sort=False)
    out = by.agg(runs=("seed", "size"), pairs=("pairs", "sum"),
                 unprotected=("unprotected", "sum"), eps_mean=("eps_mean", "mean"),
                 eps_max=("eps_max", "max"), eps_min=("eps_min", "min"),
                 ldp=("ldp_mean", "mean"), ldp_max=("ldp_max", "max"),
                 theory=("theory", "mean"))
    out["unprotected_fraction"] = out["unprotected"] / out["pairs"]
    return out.reset_index()


def figure(df):
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import numpy as np
    from matplotlib.figure import Figure

    table = summary(df)
    fig = Figure(figsize=(14, 5.4), layout="constrained")
    axes = fig.subplots(1, 3)
    colours = dict(zip(SETTINGS, ("C0", "C1", "C2", "C3"), strict=True))
    marks = dict(zip(SETTINGS, ("o", "s", "^", "D"), strict=True))
    for name, part in table.groupby("setting", sort=False):
        kw = {"color": colours[name], "marker": marks[name]}
        c = part["coalition_size"].to_numpy()
        for ax, col, ldp in ((axes[0], "eps_mean", "ldp"), (axes[1], "eps_max", "ldp_max")):
            y = part[col].to_numpy()
            finite = np.isfinite(y)
            ax.plot(c[finite], y[finite], label=name, **kw)
            if (~finite).any():  # the ring: infinite from c = 2 on; its protected nodes
                ax.plot(c, part["eps_min"], ls=":", color=colours[name], marker=marks[name],
                        mfc="none", label=f"{name}: the nodes still protected (min)")
            ax.axhline(part[ldp].max(), color=colours[name], ls="--", lw=0.9, alpha=0.7)
        axes[2].plot(c, part["unprotected_fraction"], label=name, **kw)
        theory = part["theory"].dropna()
        if len(theory):
            curve, panel = THEORY[name]
            axes[0 if panel == "mean" else 1].plot(
                [1], theory.iloc[:1], marker="*", ms=13, ls="none", color=colours[name],
                mec="k", label=f"theory at c = 1: {curve}")
    axes[0].plot([], [], "k--", lw=0.9, label="LDP level (mean / max over nodes)")
    labels = (("mean pairwise ε towards the coalition\n(ring: ∞ for c ≥ 2)"),
              ("max pairwise ε towards the coalition\n(ring: ∞ for c ≥ 2)"),
              ("share of (node → coalition) pairs unprotected (ε = ∞)\n"
               "(0 for the walks on complete, hypercube and gossip)"))
    for ax, y in zip(axes, labels, strict=True):
        ax.set_xscale("log", base=2)
        ax.set_xticks(table["coalition_size"].unique())
        ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.set_xlabel("coalition size c (random members, every run)")
        ax.set_ylabel(y)
        ax.grid(alpha=0.3)
    axes[0].set_yscale("log")
    axes[1].set_yscale("log")
    axes[2].set_ylim(-0.03, 1.03)
    handles: dict = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    fig.legend(handles.values(), handles.keys(), loc="outside lower center", ncol=4,
               fontsize=8)
    n = int(df["nodes"].iloc[0])
    runs = int(table["runs"].max())
    fig.suptitle(f"Collusion: privacy against coalition size, n = {n}, ε0 = 1, {runs} runs "
                 "per point (a new coalition each); dashed: LDP level; theory exists "
                 "per observer only (c = 1)", fontsize=10)
    return fig


def main(argv: Sequence[str] | None = None):
    import pandas as pd

    from netdp.report.figures import save

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=64)
    parser.add_argument("--seeds", type=int, default=8, help="runs (seeds) per point")
    parser.add_argument("--sizes", type=int, nargs="+", default=None,
                        help="coalition sizes (default 1, 2, 4, ..., n/2)")
    parser.add_argument("--settings", nargs="+", choices=list(SETTINGS), default=None)
    parser.add_argument("--out", default="docs/figures/collusion.png")
    parser.add_argument("--csv", default=None)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    df = pd.DataFrame(rows(args.nodes, args.seeds, args.sizes, args.settings),
                      columns=list(COLUMNS))
    if args.csv:
        df.to_csv(args.csv, index=False)
    save(figure(df), Path(args.out), dpi=100)
    table = summary(df)
    with pd.option_context("display.width", 160):
        print(table[["setting", "coalition_size", "runs", "unprotected_fraction", "eps_mean",
                     "eps_min", "eps_max", "ldp", "theory"]].round(3).to_string(index=False))
    print(f"wrote {args.out} ({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    return df


if __name__ == "__main__":
    main()
    raise SystemExit(0)
