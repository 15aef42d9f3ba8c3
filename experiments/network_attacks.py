"""Attacks inside the network protocols: the gain of malicious holders against epsilon, and
what honest holders detect against the number of malicious nodes (issue 16, item 2;
docs/network-attacks.md, figure docs/figures/network_attacks.png).

Usage: python experiments/network_attacks.py [--runs 12] [--out docs/figures/network_attacks.png]
       [--csv network_attacks.csv]

Left: a histogram on the complete graph (n = 100, T = 2000 steps, d = 32, r = 5 targets),
5 malicious holders forging their reports (rpa, ria, mga) on grr, oue and olh, at
epsilon = 0.5 ... 4: the measured frequency gain (points, 2 standard errors) against
its expectation given the walk (lines; the generic closed form of Cao, Jia and Gong with
the share of forged reports as beta). Middle and right: a walk sum (Gaussian noise,
epsilon = 1) and a grr / oue histogram, K = 1 ... 20 malicious holders tampering with the
token (drop, replay, inflate) or forging a value (max, beyond:5): the share of runs in
which an honest holder's check (flow or conservation) raised the alarm. About 70 s.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

from netdp import simulate

EPSILONS = (0.5, 1.0, 2.0, 4.0)
ORACLES = ("grr", "oue", "olh")
FORGE = ("rpa", "ria", "mga")
KS = (1, 2, 5, 10, 20)
SUM_ATTACKS = ("drop", "replay", "inflate:1", "beyond:5", "max")
HIST_ATTACKS = (("grr", "inflate:1"), ("grr", "drop"), ("oue", "mga"), ("oue", "rpa"),
                ("oue", "ria"), ("oue", "replay"))
BASE = {"topology": "complete", "nodes": 100, "steps": 2000}
COLUMNS = ("panel", "mechanism", "attack", "epsilon", "malicious", "runs", "share", "gain",
           "gain_std", "expected", "conservation_rate", "flow_rate", "seconds")


def measure(panel: str, runs: int, **params) -> dict:
    """One point: ``runs`` runs of one attack, the gain against its expectation and the
    checks' detection rates."""
    start = time.perf_counter()
    report = simulate({**BASE, "seed": 1, "runs": runs, **params}, progress=False)
    attack = report.attack
    assert attack is not None
    gain = attack.gain()
    rates = {d["check"]: d["rate"] for d in attack.detection()}
    return {"panel": panel, "mechanism": params.get("mechanism", "gaussian"),
            "attack": params["attack"], "epsilon": params.get("epsilon", 1.0),
            "malicious": params["malicious"], "runs": runs,
            "share": float(np.mean([r.share for r in attack.runs])),
            "gain": gain["empirical"], "gain_std": gain["std"], "expected": gain["theory"],
            "conservation_rate": rates.get("conservation"), "flow_rate": rates.get("flow"),
            "seconds": time.perf_counter() - start}


def rows(runs: int) -> list[dict]:
    """Every point of the three panels."""
    out = []
    for mechanism in ORACLES:
        for attack in FORGE:
            for eps in EPSILONS:
                out.append(measure("gain", runs, task="histogram", mechanism=mechanism,
                                   domain=32, targets=5, attack=attack, epsilon=eps,
                                   malicious="random:5"))
    for k in KS:
        for attack in SUM_ATTACKS:
            out.append(measure("sum", runs, attack=attack, malicious=f"random:{k}"))
        for mechanism, attack in HIST_ATTACKS:
            out.append(measure("histogram", runs, task="histogram", mechanism=mechanism,
                               domain=32, targets=5, attack=attack, malicious=f"random:{k}"))
    return out


def plot(table: list[dict], path: Path) -> None:
    """Gain against epsilon (left); detection against K (middle, right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    colors = dict(zip(ORACLES, ("C0", "C1", "C2"), strict=True))
    marks = dict(zip(FORGE, ("s", "^", "o"), strict=True))
    ax = axes[0]
    for mechanism in ORACLES:
        for attack in FORGE:
            pts = [r for r in table if r["panel"] == "gain" and r["mechanism"] == mechanism
                   and r["attack"] == attack]
            eps = [r["epsilon"] for r in pts]
            ax.errorbar(eps, [r["gain"] for r in pts], yerr=[2 * r["gain_std"] for r in pts],
                        fmt=marks[attack], color=colors[mechanism], ms=5, capsize=2,
                        label=f"{mechanism} {attack}")
            ax.plot(eps, [r["expected"] for r in pts], "-", color=colors[mechanism], lw=1,
                    alpha=0.7)
    ax.set(xscale="log", xlabel="epsilon", ylabel="frequency gain of the 5 targets",
           title="forged reports in the walk (5 of 100 holders)")
    ax.legend(fontsize=7, ncol=3)
    for ax, panel, keys in ((axes[1], "sum", SUM_ATTACKS),
                            (axes[2], "histogram", [f"{m} {a}" for m, a in HIST_ATTACKS])):
        for i, key in enumerate(keys):
            mech, _, attack = key.rpartition(" ") if panel == "histogram" else ("", "", key)
            pts = [r for r in table if r["panel"] == panel and r["attack"] == attack
                   and (not mech or r["mechanism"] == mech)]
            ks = [int(r["malicious"].split(":")[1]) for r in pts]
            ax.plot(ks, [r["flow_rate"] for r in pts], "-o", color=f"C{i}", ms=4,
                    label=f"{key}: flow")
            ax.plot(ks, [r["conservation_rate"] for r in pts], "--x", color=f"C{i}", ms=5,
                    label=f"{key}: conservation")
        ax.set(xscale="log", xlabel="malicious holders K (of 100)",
               ylabel="share of runs detected", ylim=(-0.05, 1.05),
               title=f"what honest holders detect: {panel}")
        ax.legend(fontsize=6.5, ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=12, help="runs per point (default 12)")
    parser.add_argument("--out", default="docs/figures/network_attacks.png")
    parser.add_argument("--csv", default=None, help="also write the tidy table here")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    table = rows(args.runs)
    plot(table, Path(args.out))
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, COLUMNS)
            writer.writeheader()
            writer.writerows(table)
    for r in table:
        if r["panel"] != "gain":
            print(f"{r['panel']:9} {r['mechanism']:8} {r['attack']:9} K={r['malicious']:10} "
                  f"gain {r['gain']:+.4f} (expected {r['expected']:+.4f}) flow "
                  f"{r['flow_rate']} conservation {r['conservation_rate']}")
    print(f"{len(table)} points in {time.perf_counter() - start:.0f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
