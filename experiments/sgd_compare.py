"""Decentralized SGD: local vs network vs central DP at equal (ε, δ) (AISTATS 2022 §5).

Usage: python experiments/sgd_compare.py [--seeds 5] [--nodes 2000] [--steps 20000]
       [--epsilon 10] [--delta 1e-6] [--lipschitz 0.4] [--lr 0.1 ...] [--out out/sgd]

Runs ``netdp.simulate`` with ``task = "sgd"`` on the default dataset (randhie) once per seed
and learning rate, the regimes local, network, central and nonprivate on the same walk
and noise. Prints, per learning rate and regime, σ and the final training objective and
test accuracy (mean and standard deviation over seeds) and checks the expected ordering.
Writes ``sgd_compare.csv`` (one row per seed, lr and regime) and ``sgd_compare.png``
(the learning curves of the first lr, mean over seeds) into ``--out``.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import time
from pathlib import Path

import numpy as np

from netdp import simulate
from netdp.learning.curves import curves_figure

REGIMES = ("local", "network", "central", "nonprivate")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--epsilon", type=float, default=10.0)
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--lipschitz", type=float, default=0.4)
    parser.add_argument("--lr", type=float, nargs="+", default=[0.1])
    parser.add_argument("--out", type=Path, default=Path("out/sgd"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows, first = [], []
    for lr in args.lr:
        for seed in range(args.seeds):
            start = time.perf_counter()
            res = simulate({
                "task": "sgd", "nodes": args.nodes, "steps": args.steps,
                "epsilon": args.epsilon, "delta": args.delta, "lipschitz": args.lipschitz,
                "lr": lr, "regimes": REGIMES, "seed": seed, "accountants": ()})
            util = res.to_dict()["utility"]
            for regime in REGIMES:
                rows.append({"lr": lr, "seed": seed, "regime": regime,
                             "sigma": util[regime]["sigma"],
                             "final_objective": util[regime]["final_objective"],
                             "final_accuracy": util[regime]["final_accuracy"],
                             "optimum": util["optimum"]["objective"],
                             "seconds": time.perf_counter() - start})
            if lr == args.lr[0]:
                first.append(res)
    with (args.out / "sgd_compare.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"n = {args.nodes}, T = {args.steps}, eps = {args.epsilon:g}, "
          f"delta = {args.delta:g}, L = {args.lipschitz:g}, {args.seeds} seeds")
    print(f"{'lr':>6} {'regime':11}{'sigma':>9}{'objective':>20}{'accuracy':>20}")
    by = {(r["lr"], r["regime"], r["seed"]): r for r in rows}
    seeds = range(args.seeds)
    for lr in args.lr:
        final = {g: np.array([by[lr, g, s]["final_objective"] for s in seeds]) for g in REGIMES}
        for regime in REGIMES:
            acc = np.array([by[lr, regime, s]["final_accuracy"] for s in seeds])
            obj = final[regime]
            print(f"{lr:>6g} {regime:11}{by[lr, regime, 0]['sigma']:>9.4g}"
                  f"{obj.mean():>12.5f} ± {obj.std(ddof=1):.5f}"
                  f"{acc.mean():>12.4f} ± {acc.std(ddof=1):.4f}")
        paired = final["network"] - final["central"]
        print(f"{'':6} network - central, paired by seed: {paired.mean():.5f} ± "
              f"{paired.std(ddof=1):.5f}")
        means = {g: f.mean() for g, f in final.items()}
        ok = means["central"] < means["network"] < means["local"]
        ratio = (means["local"] - means["network"]) / (means["network"] - means["central"])
        print(f"{'':6} central < network < local: {ok}; (local - network) / "
              f"(network - central) = {ratio:.1f}; optimum {by[lr, 'local', 0]['optimum']:.5f}")
    # learning curves of the first lr, mean over seeds (and their optima)
    curves = dict(first[0].sections["curves"])
    for regime in REGIMES:
        curves[regime] = {key: np.mean([r.sections["curves"][regime][key] for r in first],
                                       axis=0).tolist() for key in ("objective", "score")}
    optimum = {**first[0].utility.optimum,
               **{key: float(np.mean([r.utility.optimum[key] for r in first]))
                  for key in ("objective", "score")}}
    merged = dataclasses.replace(first[0], sections={**first[0].sections, "curves": curves},
                                 utility=dataclasses.replace(first[0].utility, optimum=optimum))
    fig = curves_figure(merged, suffix=f", lr = {args.lr[0]:g}, mean of {len(first)} seeds")
    fig.savefig(args.out / "sgd_compare.png", dpi=120)
    print(f"wrote {args.out / 'sgd_compare.csv'} and {args.out / 'sgd_compare.png'}")


if __name__ == "__main__":
    main()
