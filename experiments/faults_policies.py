"""Where each --on-loss policy breaks: completion, pairwise ε and error against message
loss and churn (docs/faults.md, figure docs/figures/faults_policies.png).

Usage: python experiments/faults_policies.py [--seeds 20] [--out docs/figures/faults_policies.png]
       [--csv faults_policies.csv]

The grids of experiments/sweeps/faults_loss.toml and faults_churn.toml (a walk sum on
the complete graph, n = 50, T = 1000), and gossip averaging on a hypercube of 64 nodes
under message loss, run here in one process (about 35 s). The walk's four panels: the
share of runs that completed, and the mean pairwise ε (kov) of those that did, against
the loss rate (3 retries); the share completed, and how much larger the
estimate's absolute error is than the fault-free run's of the same seed (completed runs),
against exponential churn (mean 200 up, 5 to 160 down, default retries). Gossip: the
mean pairwise ε (rdp, the realised exact loss) and the states' error and noise against
the loss rate. Dashed: the fault-free run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from netdp import simulate
from netdp.run.sweep.table import flatten

POLICIES = ("resend", "skip", "regenerate")
LOSS = ("0.05", "0.1", "0.2", "0.3", "0.4")
DOWN = (5, 20, 40, 80, 160)
BASE = {"task": "sum", "topology": "complete", "nodes": 50, "steps": 1000}


GOSSIP = {"task": "sum", "protocol": "gossip", "topology": "hypercube", "nodes": 64}


def rows(seeds: int) -> list[dict]:
    out = []
    for loss in ("0", *LOSS):  # gossip: plain steps, the default T for the graph
        for seed in range(max(seeds // 2, 2)):
            params = {**GOSSIP, "seed": seed} if loss == "0" else \
                {**GOSSIP, "seed": seed, "loss": loss}
            out.append({**flatten(simulate(params).to_json()), "protocol": "gossip"})
    for policy in POLICIES:
        for loss in LOSS:
            for seed in range(seeds):
                out.append(flatten(simulate({**BASE, "seed": seed, "loss": loss,
                                             "retries": 3, "on_loss": policy}).to_json()))
        for down in DOWN:
            for seed in range(seeds):
                out.append(flatten(simulate({**BASE, "seed": seed, "on_loss": policy,
                                             "churn": f"exp:200:{down}"}).to_json()))
    return out


def figure(df):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 10), layout="constrained")
    axes = fig.subplots(3, 2)
    walks = df[df["protocol"] == "walk"]
    loss = walks[walks["loss"] != "0"].assign(rate=lambda d: d["loss"].astype(float))
    churn = walks[walks["churn"] != "none"].assign(
        down=lambda d: d["churn"].str.split(":").str[2].astype(float),
        excess=lambda d: d["abs_error"] - d["fault_free_abs_error"])
    marks = dict(zip(POLICIES, ("o", "s", "^"), strict=True))
    for policy in POLICIES:
        a = loss[loss["on_loss"] == policy].groupby("rate")
        b = churn[churn["on_loss"] == policy].groupby("down")
        kw = {"marker": marks[policy], "label": policy}
        axes[0, 0].plot(a["faults_completed"].mean(), **kw)
        axes[0, 1].plot(a["kov_mean"].mean(), **kw)
        axes[1, 0].plot(b["faults_completed"].mean(), **kw)
        axes[1, 1].plot(b["excess"].mean(), **kw)
    axes[0, 1].plot(loss.groupby("rate")["fault_free_kov_mean"].mean(), "k--",
                    label="fault-free")
    axes[1, 1].axhline(0.0, color="k", ls="--", label="fault-free")
    g = df[df["protocol"] == "gossip"].assign(rate=lambda d: d["loss"].astype(float))
    by = g.groupby("rate")
    axes[2, 0].plot(by["rdp_mean"].mean(), marker="o", label="gossip, loss")
    axes[2, 0].plot(by["fault_free_rdp_mean"].mean(), "k--", label="fault-free")
    axes[2, 1].plot(by["abs_error"].mean(), marker="o", label="mean |error|, loss")
    axes[2, 1].plot(by["fault_free_abs_error"].mean(), "k--", label="fault-free |error|")
    axes[2, 1].plot(by["faults_noise_std"].mean(), marker="s", label="noise std, loss")
    labels = [("message loss rate (3 retries)", "share of runs completed"),
              ("message loss rate (3 retries)", "mean pairwise ε (kov), completed runs"),
              ("mean down time (mean up 200)", "share of runs completed"),
              ("mean down time (mean up 200)",
               "|error| minus the fault-free |error|\n(same seeds, completed runs)"),
              ("message loss rate (gossip, hypercube n = 64)", "mean pairwise ε (rdp)"),
              ("message loss rate (gossip, hypercube n = 64)", "error and noise of the states")]
    for ax, (x, y) in zip(axes.flat, labels, strict=True):
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    axes[1, 0].set_xscale("log")
    axes[1, 1].set_xscale("log")
    fig.suptitle("Faults: the --on-loss policies of a walk sum (rows 1-2), gossip under "
                 "loss (row 3)")
    return fig


def main() -> int:
    import pandas as pd

    from netdp.report.figures import save

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--out", default="docs/figures/faults_policies.png")
    parser.add_argument("--csv", default=None)
    args = parser.parse_args()
    df = pd.DataFrame(rows(args.seeds))
    df["loss"] = df["loss"].astype(str)
    df["protocol"] = df["protocol"].fillna("walk")
    if args.csv:
        df.to_csv(args.csv, index=False)
    save(figure(df), Path(args.out), dpi=110)
    summary = df.groupby(["protocol", "on_loss", "loss", "churn"])[["faults_completed", "kov_mean",
                                                          "abs_error"]].mean()
    print(summary.round(3).to_string())
    print(f"wrote {args.out}", file=sys.stderr)
    return 0 if np.isfinite(df["faults_completed"]).all() else 1


if __name__ == "__main__":
    raise SystemExit(main())
