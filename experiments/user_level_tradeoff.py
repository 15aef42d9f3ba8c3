"""User-level DP: the bias/noise trade-off of the contribution bound T (docs/user-level.md,
figure docs/figures/user_level_tradeoff.png).

Usage: python experiments/user_level_tradeoff.py [--nodes 100] [--records 20] [--steps 100]
       [--seeds 8] [--runs 60] [--out docs/figures/user_level_tradeoff.png]
       [--csv user_level_tradeoff.csv]

``--task sum`` on the complete graph, Gaussian noise at ε = 1, δ = 1e-6, K records per
node uniform on [0, 1]; for T = 1 … K, the closed forms of the report's ``user_level``
object on the mean per record: bias² (the expected dropped mass over N, squared), the
variance (noise, walk sampling and the draw of the kept records) and their sum, the MSE;
the naive approach (no bound: noise of sensitivity K, the c-fold scaling with c = K) as a
reference line; and the MSE measured over ``--seeds`` seeds (data, kept records) times
``--runs`` runs (walk and noise). The optimum T is marked. About 1 minute.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np


def measure(args: argparse.Namespace) -> list[dict[str, float]]:
    """One row per T: the closed forms (first seed) and the MSE measured over seeds."""
    from netdp import simulate
    from netdp.tasks import make_config

    rows = []
    for t in range(1, args.records + 1):
        errors, closed = [], None
        for seed in range(args.seed, args.seed + args.seeds):
            report = simulate(make_config(task="sum", nodes=args.nodes, steps=args.steps,
                                          records_per_node=args.records, bound=t,
                                          runs=args.runs, accountants=(), seed=seed))
            errors += [(o.estimate - o.truth) ** 2 for o in report.outcomes]
            ul = report.utility.user_level
            closed = closed or ul
        assert closed is not None
        rows.append({"bound": t, "records_per_node": args.records, "bias_sq": closed.bias_sq,
                     "noise_var": closed.noise_var, "sampling_var": closed.sampling_var,
                     "draw_var": closed.draw_var, "mse": closed.mse,
                     "naive_mse": closed.naive_mse, "noise_std_ratio": closed.noise_std_ratio,
                     "measured_mse": float(np.mean(errors)),
                     "measured_mse_se": float(np.std(errors, ddof=1) / np.sqrt(len(errors)))})
    return rows


def figure(df):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(7, 4.2), layout="constrained")
    ax = fig.subplots()
    t = df["bound"]
    variance = df["noise_var"] + df["sampling_var"] + df["draw_var"]
    ax.plot(t, df["bias_sq"], color="tab:orange", label="bias² (dropped mass)")
    ax.plot(t, variance, color="tab:blue", label="variance (noise ∝ T²)")
    ax.plot(t, df["mse"], color="black", lw=2, label="MSE (closed form)")
    ax.errorbar(t, df["measured_mse"], yerr=2 * df["measured_mse_se"], fmt="o", ms=4,
                color="black", label="MSE (measured, ±2 se)")
    ax.axhline(df["naive_mse"].iloc[0], color="tab:red", ls="--",
               label=f"naive: no bound, c = K = {df['records_per_node'].iloc[0]}")
    best = df.loc[df["mse"].idxmin()]
    ax.plot([best["bound"]], [best["mse"]], marker="*", ms=16, color="tab:green",
            ls="none", label=f"optimum T = {int(best['bound'])}")
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("contribution bound T (records kept per node)")
    ax.set_ylabel("squared error of the mean per record")
    ax.set_title("User-level DP: bounding trades bias for noise", fontsize=10)
    ax.legend(fontsize=8)
    return fig


def main() -> int:
    import pandas as pd

    from netdp.report.figures import save

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--records", type=int, default=20)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="docs/figures/user_level_tradeoff.png")
    parser.add_argument("--csv", default=None)
    args = parser.parse_args()
    df = pd.DataFrame(measure(args))
    with pd.option_context("display.width", 160, "display.float_format", "{:.3g}".format):
        print(df[["bound", "bias_sq", "noise_var", "draw_var", "mse", "measured_mse",
                  "naive_mse"]].to_string(index=False))
    best = df.loc[df["mse"].idxmin()]
    print(f"optimum T = {int(best['bound'])}: MSE {best['mse']:.3g} (measured "
          f"{best['measured_mse']:.3g}); naive {best['naive_mse']:.3g}")
    if args.csv:
        df.to_csv(args.csv, index=False)
    save(figure(df), Path(args.out), dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
