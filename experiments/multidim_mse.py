"""MSE of multidimensional mean estimation against ε (Wang et al., ICDE 2019, §6 shape).

Usage: python experiments/multidim_mse.py [--epsilons 0.5 1 1.5 2 2.5 3 3.5 4]
       [--trials 100] [--seed 0] [--out docs/figures/multidim_mse.png]
       [--csv out/multidim_mse.csv]

Central collection: every row of Fair's affairs table (statsmodels, 6366 rows) reports
once. Left panel, the nine columns as numbers (``fair-numeric``, d = 9): the MSE of the
nine means, averaged over the attributes and ``--trials`` trials, for the paper's
sampling solution with PM and with HM (k = max(1, min(d, floor(ε/2.5))) attributes at
ε/k, scaled by d/k), Duchi et al.'s multidimensional solution (``joint``), and the naive
split (every attribute at ε/d) with HM and with Duchi's one-dimensional randomizer. Right
panel, the mixed schema (``fair``: 5 numeric, 4 categorical): the MSE of the numeric
means and of the category frequencies (OUE) under sampling and the naive split, with HM.
Markers are measured, lines are the closed forms (:meth:`Multidim.variance`). Prints the
table, and writes the figure and the tidy CSV (one row per panel, method, ε).
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np

from netdp.core import seeding
from netdp.data.attributes import load_table
from netdp.mechanisms.multidim import Multidim, Table

NUMERIC = (("HM, sampling", "hybrid", "sample"), ("PM, sampling", "piecewise", "sample"),
           ("Duchi multidim.", "duchi", "joint"), ("HM, naive eps/d", "hybrid", "naive"),
           ("Duchi, naive eps/d", "duchi", "naive"))
MIXED = (("HM+OUE, sampling", "sample"), ("HM+OUE, naive eps/d", "naive"))


def measure(mech: Multidim, table: Table, trials: int, seed: int,
            key: tuple[int, ...]) -> np.ndarray:
    """``(trials, width)`` squared errors of the estimates, one report per row per trial."""
    truth = table.truth().mean(axis=0)
    out = np.empty((trials, table.width))
    for r in range(trials):
        est = mech.contributions(table, seeding.generator(seed, "noise", *key, r)).mean(axis=0)
        out[r] = (est - truth) ** 2
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", type=float, nargs="+",
                        default=[0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="docs/figures/multidim_mse.png")
    parser.add_argument("--csv", default=None)
    args = parser.parse_args()
    start = time.perf_counter()
    numeric, mixed = load_table("fair-numeric"), load_table("fair")
    rows = []
    for e, eps in enumerate(args.epsilons):
        for i, (label, mech_name, split) in enumerate(NUMERIC):
            mech = Multidim(eps, numeric.attributes, (), mech_name, split=split)
            err = measure(mech, numeric, args.trials, args.seed, (0, e, i))
            rows.append({"panel": "fair-numeric", "method": label, "epsilon": eps,
                         "k": mech.k, "quantity": "means", "mse": float(err.mean()),
                         "mse_se": float(err.mean(axis=1).std(ddof=1) / np.sqrt(args.trials)),
                         "theory": float(mech.variance(numeric).mean())})
        for i, (label, split) in enumerate(MIXED):
            mech = Multidim(eps, 5, mixed.domains, "hybrid", "oue", split)
            err, var = measure(mech, mixed, args.trials, args.seed, (1, e, i)), \
                mech.variance(mixed)
            for quantity, part in (("means", slice(0, 5)), ("frequencies", slice(5, None))):
                rows.append({"panel": "fair", "method": label, "epsilon": eps, "k": mech.k,
                             "quantity": quantity, "mse": float(err[:, part].mean()),
                             "mse_se": float(err[:, part].mean(axis=1).std(ddof=1)
                                             / np.sqrt(args.trials)),
                             "theory": float(var[part].mean())})
    print(f"{'panel':>13} {'method':>20} {'quantity':>11} " +
          " ".join(f"{'eps=' + format(x, 'g'):>10}" for x in args.epsilons))
    for panel, label, quantity in dict.fromkeys((r["panel"], r["method"], r["quantity"])
                                                for r in rows):
        mine = [r for r in rows if (r["panel"], r["method"], r["quantity"]) ==
                (panel, label, quantity)]
        print(f"{panel:>13} {label:>20} {quantity:>11} " +
              " ".join(f"{r['mse']:>10.3e}" for r in mine))
        print(f"{'':>13} {'(closed form)':>20} {'':>11} " +
              " ".join(f"{r['theory']:>10.3e}" for r in mine))
    plot(rows, Path(args.out))
    print(f"wrote {args.out}")
    if args.csv:
        path = Path(args.csv)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        print(f"wrote {path}")
    print(f"{time.perf_counter() - start:.1f} s")


def plot(rows: list[dict], out: Path) -> None:
    """Two panels, log MSE against ε: measured markers, closed-form lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from netdp.report.figures import save

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, panel, title in ((axes[0], "fair-numeric", "fair, 9 numeric attributes: means"),
                             (axes[1], "fair", "fair, 5 numeric + 4 categorical")):
        keys = dict.fromkeys((r["method"], r["quantity"]) for r in rows if r["panel"] == panel)
        for c, (method, quantity) in enumerate(keys):
            mine = [r for r in rows if r["panel"] == panel and r["method"] == method
                    and r["quantity"] == quantity]
            eps = [r["epsilon"] for r in mine]
            label = method if panel == "fair-numeric" else f"{method}: {quantity}"
            line = ax.plot(eps, [r["theory"] for r in mine], "-", color=f"C{c}", lw=1)[0]
            ax.plot(eps, [r["mse"] for r in mine], "o", color=line.get_color(), ms=4,
                    label=label)
        ax.set_yscale("log")
        ax.set_xlabel("epsilon")
        ax.set_ylabel("MSE (markers measured, lines closed form)")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, out)
    plt.close(fig)


if __name__ == "__main__":
    main()
