"""Frequency gain of each poisoning attack against ε, per oracle: measurements as points,
the closed forms as lines (docs/attacks.md, figure docs/figures/poisoning_gain.png).

Usage: python experiments/poisoning_gain.py [--users 100000] [--trials 5] [--seed 1]
       [--out docs/figures/poisoning_gain.png] [--csv poisoning_gain.csv]

The setting of the issue: d = 128 categories (zipf data), β = 0.05 fake users, r = 10
random targets. For GRR, SUE, OUE, BLH, OLH, HR, CMS, HCMS and RAPPOR, and the attacks
RPA, RIA and MGA, at ε from 0.5 to 8: the mean gain over ``--trials`` repetitions (error
bars: 2 standard errors), and the closed form β (Σ_t e_t - f_T) as a line (e_t: one fake
report's expected estimate of target t, (s_t - q*)/(p* - q*) for a pure oracle); for HR and
RAPPOR the line joins the closed form at the measured ε, the report's ``theory`` (RAPPOR's
default parameters reach ε < 2.2 only: its larger ε are skipped). MGA on local
hashing assumes a hash that maps every target to one value; where the search of 2^20
keys finds none (large g), the point falls below that line, and the printed table gives
how many targets the hash found supports. About 1 minute.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from netdp import mechanisms
from netdp.adversary.poisoning import choose_targets, poison, theory_gain
from netdp.core import seeding
from netdp.core.errors import InputError
from netdp.data.values import categories

ORACLES = ("grr", "sue", "oue", "blh", "olh", "hr", "cms", "hcms", "rappor")
IDEAL = ("grr", "sue", "oue", "blh", "olh", "cms", "hcms")  # closed forms drawn on a grid
ATTACKS = ("rpa", "ria", "mga")
EPSILONS = (0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0)
D, BETA, R = 128, 0.05, 10


def ideal_support(oracle, attack: str) -> np.ndarray:
    """``s_t`` of each attack with every target supported (the paper's closed forms)."""
    p, q = oracle.p_star, oracle.q_star
    if attack == "ria":
        return np.full(R, (p + (R - 1) * q) / R)
    if attack == "rpa":
        return np.full(R, {"grr": 1 / D, "sue": 0.5, "oue": 0.5, "cms": 0.5,
                           "hcms": 0.5}.get(oracle.name, q))
    return np.full(R, 1 / R) if oracle.name == "grr" else np.ones(R)


def main() -> int:
    import pandas as pd

    from netdp.report.figures import save

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="docs/figures/poisoning_gain.png")
    parser.add_argument("--csv", default=None)
    args = parser.parse_args()
    fake = round(BETA * args.users)
    values = categories("zipf", args.users - fake, D, seeding.generator(args.seed, "data"))
    targets = choose_targets(values, D, R, "random", seeding.generator(args.seed, "attack", 0))
    f_t = float(np.bincount(values, minlength=D)[targets].sum() / values.size)
    rows = []
    rng = seeding.generator(args.seed, "attack", 1)
    for name in ORACLES:
        for eps in EPSILONS:
            try:
                oracle = mechanisms.frequency_oracle(name, eps, D)
            except InputError as err:  # RAPPOR's defaults reach eps < 2.2 only
                print(f"{name} at eps = {eps:g}: skipped ({err})", file=sys.stderr)
                continue
            for attack in ATTACKS:
                got = poison(oracle, values, attack, targets, BETA, args.trials, rng)
                rows.append({"oracle": name, "epsilon": eps, "attack": attack,
                             "gain": got.gain, "std": got.gain_std, "theory": got.theory,
                             "supported": got.supported})
    df = pd.DataFrame(rows)
    if args.csv:
        df.to_csv(args.csv, index=False)
    save(figure(df, f_t), Path(args.out), dpi=110)
    print(df.round(4).to_string(index=False))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def figure(df, f_t: float):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter

    fig = Figure(figsize=(21, 4), layout="constrained")
    axes = fig.subplots(1, len(ORACLES), sharey=True)
    grid = np.geomspace(EPSILONS[0], EPSILONS[-1], 60)
    colours = dict(zip(ATTACKS, ("tab:blue", "tab:orange", "tab:red"), strict=True))
    for ax, name in zip(axes, ORACLES, strict=True):
        for attack in ATTACKS:
            sub = df[(df["oracle"] == name) & (df["attack"] == attack)]
            if name in IDEAL:
                line = [theory_gain(mechanisms.frequency_oracle(name, e, D),
                                    ideal_support(mechanisms.frequency_oracle(name, e, D),
                                                  attack), BETA, f_t) for e in grid]
                ax.plot(grid, line, color=colours[attack], lw=1, label=f"{attack} (theory)")
            else:
                ax.plot(sub["epsilon"], sub["theory"], color=colours[attack], lw=1)
            ax.errorbar(sub["epsilon"], sub["gain"], yerr=2 * sub["std"], fmt="o", ms=4,
                        color=colours[attack], label=f"{attack} (measured)")
        ax.set_xscale("log")
        ax.set_xticks(EPSILONS, [f"{e:g}" for e in EPSILONS])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_yscale("symlog", linthresh=0.01)
        ax.set_title(name.upper())
        ax.set_xlabel("ε")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("frequency gain of the 10 targets")
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Poisoning: gain against ε (d = {D}, β = {BETA}, r = {R}; lines: closed "
                 "forms of Cao, Jia and Gong 2021)")
    return fig


if __name__ == "__main__":
    raise SystemExit(main())
