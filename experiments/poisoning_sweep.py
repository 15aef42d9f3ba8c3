"""Frequency gain against the fraction of fake users β and the number of targets r, per
oracle and attack, beside the closed forms (docs/attacks.md, figure
docs/figures/poisoning_sweep.png).

Usage: python experiments/poisoning_sweep.py [--users 100000] [--trials 10] [--seed 1]
       [--out docs/figures/poisoning_sweep.png] [--csv poisoning_sweep.csv]

d = 128 categories (zipf data), ε = 1. Top row: β from 0.01 to 0.2 with r = 10; bottom
row: r from 1 to 40 with β = 0.05. For GRR, OUE, OLH, CMS and HCMS and the attacks RPA,
RIA and MGA: the mean gain over ``--trials`` repetitions (points) and the closed form
β (Σ_t (s_t - q*)/(p* - q*) - f_T) (lines); error bars are 2 standard errors from the
trials, rough with so few. The CSV is tidy: one row per oracle, attack, β and r. About
80 s.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from netdp import mechanisms
from netdp.adversary.poisoning import choose_targets, poison
from netdp.core import seeding
from netdp.data.values import categories

ORACLES = ("grr", "oue", "olh", "cms", "hcms")
ATTACKS = ("rpa", "ria", "mga")
BETAS = (0.01, 0.02, 0.05, 0.1, 0.2)
RS = (1, 5, 10, 20, 40)
D, EPS, BETA, R = 128, 1.0, 0.05, 10


def rows(users: int, trials: int, seed: int) -> list[dict]:
    out = []
    rng = seeding.generator(seed, "attack", 1)
    grid = [(b, R) for b in BETAS] + [(BETA, r) for r in RS if r != R]
    for beta, r in grid:
        fake = round(beta * users)
        values = categories("zipf", users - fake, D, seeding.generator(seed, "data"))
        targets = choose_targets(values, D, r, "random", seeding.generator(seed, "attack", 0))
        for name in ORACLES:
            oracle = mechanisms.frequency_oracle(name, EPS, D)
            for attack in ATTACKS:
                got = poison(oracle, values, attack, targets, beta, trials, rng)
                out.append({"oracle": name, "attack": attack, "beta": beta, "targets": r,
                            "gain": got.gain, "std": got.gain_std, "theory": got.theory,
                            "supported": got.supported})
    return out


def figure(df):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(15, 6), layout="constrained")
    axes = fig.subplots(2, len(ORACLES), sharey="row")
    colours = dict(zip(ATTACKS, ("tab:blue", "tab:orange", "tab:red"), strict=True))
    for col, name in enumerate(ORACLES):
        for row, (x, fixed, value) in enumerate((("beta", "targets", R),
                                                 ("targets", "beta", BETA))):
            ax = axes[row, col]
            for attack in ATTACKS:
                sub = df[(df["oracle"] == name) & (df["attack"] == attack)
                         & np.isclose(df[fixed], value)].sort_values(x)
                ax.plot(sub[x], sub["theory"], color=colours[attack], lw=1,
                        label=f"{attack} (theory)")
                ax.errorbar(sub[x], sub["gain"], yerr=2 * sub["std"], fmt="o", ms=4,
                            color=colours[attack], label=f"{attack} (measured)")
            ax.set_xscale("log")
            ax.set_yscale("symlog", linthresh=0.01)
            ax.grid(alpha=0.3)
            ax.set_xlabel("β (r = 10)" if row == 0 else "r (β = 0.05)")
            if row == 0:
                ax.set_title(name.upper())
    axes[0, 0].set_ylabel("frequency gain")
    axes[1, 0].set_ylabel("frequency gain")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"Poisoning: gain against β and r (d = {D}, ε = {EPS:g}; lines: closed "
                 "forms)")
    return fig


def main() -> int:
    import pandas as pd

    from netdp.report.figures import save

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="docs/figures/poisoning_sweep.png")
    parser.add_argument("--csv", default=None)
    args = parser.parse_args()
    df = pd.DataFrame(rows(args.users, args.trials, args.seed))
    if args.csv:
        df.to_csv(args.csv, index=False)
    save(figure(df), Path(args.out), dpi=100)
    df["z"] = (df["gain"] - df["theory"]) / df["std"]
    print(df.round(4).to_string(index=False))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
