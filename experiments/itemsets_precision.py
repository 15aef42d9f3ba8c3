"""Frequent items of set-valued data (PSFO, S&P 2018 §IV-§V): precision of the top K
against epsilon, on the walk and for the LDP baseline (docs/itemsets.md, figure
docs/figures/itemsets_precision.png).

Usage: python experiments/itemsets_precision.py [--svsm] [--runs 20] [--nodes 2000]
       [--steps 20000] [--out docs/figures/itemsets_precision.png] [--csv FILE]

n nodes on the complete graph, each with a synthetic set (size 1 + Poisson(3), items
from a Zipf law over d = 100), l = 6 (the 90th percentile of the size law), top K = 10.
Series: the walk (T PSFO reports in the token) with GRR at the amplified eps', with OLH,
and adaptive with l = 2 (shorter padding: more sets cut, less noise per item); and the
LDP baseline (one adaptive PSFO report per node to an untrusted server). Each point is
the mean precision over --runs runs (error bars: 2 standard errors). About 45 seconds.

With --svsm (figure docs/figures/itemsets_svsm_precision.png, about 10 seconds at 50
runs): ``--mining svsm`` (S&P 2018 §VI), the walk's steps split into five equal blocks
(PSFO over the items, a size round, PSFO over the 2K candidates, a size round, PSFO over
the 45 pairs of the K items found): the precision of its top-10 pairs and of its top-10
items (SVIM), beside the one-round top-10 items from the same number of steps.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from netdp import simulate
from netdp.core import seeding
from netdp.mechanisms.set_valued import PSFO, precision_recall, top_k
from netdp.tasks import get_task, make_config

EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
SERIES = (("walk, grr", {"oracle": "grr"}), ("walk, olh", {"oracle": "olh"}),
          ("walk, adaptive, l=2", {"set_size": 2}))
COLUMNS = ("series", "epsilon", "oracle", "set_size", "reports", "precision", "precision_se",
           "recall", "mse")
SVSM_COLUMNS = ("series", "epsilon", "reports", "precision", "precision_se", "recall")


def rows(runs: int, nodes: int, steps: int) -> list[dict]:
    """The table: one row per series and epsilon."""
    common = {"task": "itemsets", "nodes": nodes, "steps": steps, "domain": 100, "top": 10,
              "mean_size": 4.0, "runs": runs, "accountants": (), "seed": 2018}
    table = []
    for eps in EPSILONS:
        for label, extra in SERIES:
            report = simulate(make_config(**common, epsilon=eps, **extra))
            prec = np.array([o.precision for o in report.outcomes])
            table.append({"series": label, "epsilon": eps,
                          "oracle": report.mechanism["oracle"],
                          "set_size": report.utility.length, "reports": steps,
                          "precision": prec.mean(),
                          "precision_se": prec.std(ddof=1) / np.sqrt(runs),
                          "recall": report.utility.recall, "mse": report.utility.mse})
        config = make_config(**common, epsilon=eps)
        setup = get_task("itemsets").prepare(config)
        sets, psfo = setup.data, PSFO(eps, 100, setup.mechanism.length)
        prec_l, rec_l, mse_l = [], [], []
        for r in range(runs):
            rng = seeding.generator(2018, "noise", r)
            est = psfo.estimate_counts(psfo.aggregate(psfo.perturb(sets, rng)), sets.n) / sets.n
            p, rc = precision_recall(top_k(est, 10), sets.frequencies(), 10)
            prec_l.append(p)
            rec_l.append(rc)
            mse_l.append(float(np.mean((est - sets.frequencies()) ** 2)))
        table.append({"series": "LDP baseline (1 report/node)", "epsilon": eps,
                      "oracle": psfo.chosen, "set_size": psfo.length, "reports": sets.n,
                      "precision": float(np.mean(prec_l)),
                      "precision_se": float(np.std(prec_l, ddof=1) / np.sqrt(runs)),
                      "recall": float(np.mean(rec_l)), "mse": float(np.mean(mse_l))})
    return table


def svsm_rows(runs: int, nodes: int, steps: int) -> list[dict]:
    """The --svsm table: one row per series and epsilon."""
    common = {"task": "itemsets", "nodes": nodes, "steps": steps, "domain": 100, "top": 10,
              "mean_size": 4.0, "runs": runs, "accountants": (), "seed": 2018}
    table = []
    for eps in EPSILONS:
        svsm = simulate(make_config(**common, epsilon=eps, mining="svsm", itemset_size=2))
        one = simulate(make_config(**common, epsilon=eps))
        for label, report, prefix in (("svsm: top-10 pairs", svsm, "itemset_"),
                                      ("svsm: top-10 items (svim)", svsm, ""),
                                      ("one round: top-10 items", one, "")):
            prec = np.array([getattr(o, prefix + "precision") for o in report.outcomes])
            rec = np.array([getattr(o, prefix + "recall") for o in report.outcomes])
            table.append({"series": label, "epsilon": eps, "reports": report.config.steps,
                          "precision": prec.mean(),
                          "precision_se": prec.std(ddof=1) / np.sqrt(runs),
                          "recall": rec.mean()})
    return table


def plot(table: list[dict], path: Path, nodes: int, steps: int,
         what: str = "frequent items") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from netdp.report.figures import save

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for i, label in enumerate(dict.fromkeys(r["series"] for r in table)):
        pts = [r for r in table if r["series"] == label]
        ax.errorbar([r["epsilon"] for r in pts], [r["precision"] for r in pts],
                    yerr=[2 * r["precision_se"] for r in pts], fmt="-o", ms=4, capsize=2,
                    color=f"C{i}", label=label)
    ax.set(xscale="log", xlabel="epsilon (one PSFO report)", ylabel="precision of the top 10",
           ylim=(-0.05, 1.05),
           title=f"{what}, d = 100, n = {nodes:,}, walk of {steps:,} reports")
    ax.set_xticks(EPSILONS, [f"{e:g}" for e in EPSILONS])
    ax.minorticks_off()
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    save(fig, path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--svsm", action="store_true", help="the itemsets figure (svsm)")
    parser.add_argument("--runs", type=int, default=None,
                        help="runs per point (default 20; 50 with --svsm)")
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--out", default=None, help="default docs/figures/"
                        "itemsets_precision.png (itemsets_svsm_precision.png with --svsm)")
    parser.add_argument("--csv", default=None, help="also write the tidy table here")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    runs = args.runs or (50 if args.svsm else 20)
    out = args.out or ("docs/figures/itemsets_svsm_precision.png" if args.svsm
                       else "docs/figures/itemsets_precision.png")
    table = (svsm_rows if args.svsm else rows)(runs, args.nodes, args.steps)
    frame = pd.DataFrame(table, columns=list(SVSM_COLUMNS if args.svsm else COLUMNS))
    print(frame.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    plot(frame.to_dict("records"), Path(out), args.nodes, args.steps,
         "frequent itemsets (svsm)" if args.svsm else "frequent items")
    if args.csv:
        frame.to_csv(args.csv, index=False)
    print(f"{len(frame)} points in {time.perf_counter() - start:.0f} s -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
