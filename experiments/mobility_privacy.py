"""Pairwise privacy on a mobility contact trace against the static graph of all contacts.

A random-waypoint trace (``experiments/mobility_contacts.py``: n walkers in the unit
square, in contact within a radius, one snapshot per tick) is read as a time-varying
graph (``--format contacts``). Two protocols run on it and on the union of its contacts
(the static graph a user would get by ignoring time):

- the walk summation (sound tracker, kov): on the trace the token moves only along the
  contacts of its step; on the union, along any edge that ever existed. Both are
  accounted by the same exact laws (``netdp.tracking.time_varying``, the union as one
  snapshot in force throughout), so the difference is the time alone. (The fixed-graph
  tracker, ``netdp.tracking.walk_views``, would give the union's pairs their LDP loss:
  at this size its laws pass its cost cap.) Observers are sampled (the exact laws cost
  about 10 s per observer here);
- gossip averaging (exact loss of every observer's view, rdp): every round on the
  snapshot in force, against every round on the union.

Each pair's loss is binned by how many ticks the two nodes were in contact; the table
(CSV) and the figure show the mean loss per bin for the four runs.

    python experiments/mobility_privacy.py --out out/mobility
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

BINS = (0, 1, 5, 20, 80, 10**9)  # contact ticks: [0], [1, 5), [5, 20), [20, 80), [80, ...)


def contact_counts(contacts: list[np.ndarray], n: int) -> np.ndarray:
    """``(n, n)`` ticks each pair was in contact."""
    counts = np.zeros((n, n), dtype=np.int64)
    for pairs in contacts:
        if len(pairs):
            np.add.at(counts, (pairs[:, 0], pairs[:, 1]), 1)
    return counts + counts.T


def walk_pairs(tv, steps: int, observers: np.ndarray, seed: int, eps0: float, delta: float
               ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
                          dict[str, str]]:
    """``{"trace"|"union": (observer, node, loss)}`` of the walk on the trace and on the
    union (kov, capped at the LDP loss of the largest count of a node's contributions the
    observer's view allows, :mod:`netdp.tracking.view_cap`), and a line per run on what
    the observers saw: views (returns of the token) per observer, hidden steps per view,
    and the nodes' mean LDP loss (the realised baseline)."""
    from netdp.engine.routing import Router, TimedRouter
    from netdp.engine.vector_walk import run
    from netdp.mechanisms.noise import analytic_sigma
    from netdp.tracking.loss_table import ldp_losses
    from netdp.tracking.time_varying import time_varying_losses
    from netdp.tracking.view_cap import cap_to_view

    z = analytic_sigma(eps0, delta)
    out, facts = {}, {}
    for name in ("trace", "union"):
        rng = np.random.default_rng(seed)
        if name == "trace":
            trace = run(TimedRouter(tv, "metropolis"), steps, [rng])
            table = time_varying_losses(trace, tv.transitions("metropolis", steps), eps0,
                                        delta, z, "kov", None, observers, target=delta)
        else:
            union = tv.union
            trace = run(Router(union, "metropolis"), steps, [rng])
            table = time_varying_losses(trace, [union.transition("metropolis")] * steps,
                                        eps0, delta, z, "kov", None, observers,
                                        target=delta)
        ldp = ldp_losses(trace, eps0, delta, target=delta)
        # metropolis: the token may stay; every figure at the one target δ
        table = cap_to_view(table, trace, eps0, delta, target=delta)
        obs = np.repeat(table.observers, table.counts)
        out[name] = (obs, table.nodes, table.values)
        views = float(np.mean(table.entries))
        facts[name] = (f"{views:.1f} views per observer, {steps / max(views, 1):.0f} hidden "
                       f"steps per view, nodes' mean LDP loss {float(np.mean(ldp)):.2f}")
    return out, facts


def gossip_pairs(tv, steps: int, seed: int) -> tuple[dict[str, np.ndarray],
                                                      dict[str, float]]:
    """``{"trace"|"union": (n, n)}`` ε(u → v) of gossip averaging (rdp, every observer),
    and each run's theoretical rmse of the nodes' estimates."""
    import networkx as nx

    import netdp
    from netdp.graphs.topologies import to_networkx

    snapshots = [to_networkx(s) for s in tv.snapshots]
    for g in snapshots:
        g.remove_edges_from(nx.selfloop_edges(g))
    union = to_networkx(tv.union)
    out, rmse = {}, {}
    for name, topology in (("trace", snapshots), ("union", union)):
        report = netdp.simulate({"protocol": "gossip", "topology": topology, "steps": steps,
                                 "seed": seed}, keep_pairs=True)
        out[name] = np.asarray(report.pairs, dtype=float)
        rmse[name] = float(report.utility.to_dict()["theoretical_rmse"])
    return out, rmse


def binned(values: np.ndarray, counts: np.ndarray) -> list[tuple[int, float, float]]:
    """``(pairs, mean, max)`` of ``values`` per contact-count bin."""
    rows = []
    for lo, hi in zip(BINS[:-1], BINS[1:], strict=True):
        mask = (counts >= lo) & (counts < hi) & np.isfinite(values)
        v = values[mask]
        rows.append((int(mask.sum()), float(v.mean()) if v.size else float("nan"),
                     float(v.max()) if v.size else float("nan")))
    return rows


def plot(table: Path, figure: Path, what: str, delta: float) -> None:
    """The figure of the table: mean loss per contact-count bin, walk and gossip."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    data = pd.read_csv(table, dtype={"contact_ticks": str}).dropna()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.4))
    ylabels = {"walk": f"mean ε(u → v), kov at δ = {delta:g}",
               "gossip": f"mean ε(u → v), rdp at δ = {delta:g}"}
    for ax, protocol in zip(axes, ("walk", "gossip"), strict=True):
        runs = [(name, rows) for name, rows in data.groupby("run", sort=False)
                if str(name).startswith(protocol)]
        for (name, rows), marker in zip(runs, ("o", "s"), strict=False):
            ax.plot(rows["contact_ticks"], rows["mean_epsilon"], marker=marker,
                    color="#0072B2" if "trace" in str(name) else "#D55E00",
                    ls="-" if "trace" in str(name) else "--", label=str(name))
        # each bin's count of pairs under its label: the last bins hold few
        first = runs[0][1]
        ax.set_xticks(range(len(first)), [f"{t}\n({p:,} pairs)" for t, p in zip(
            first["contact_ticks"], first["pairs"], strict=True)], fontsize=8)
        ax.set_ylim(bottom=0)
        ax.grid(True, axis="y", color="0.85", linewidth=0.6)
        ax.set_xlabel("ticks the pair was in contact")
        ax.set_ylabel(ylabels[protocol])
        ax.set_title(f"{protocol}: {what}", fontsize=10)
        ax.legend(fontsize=9)
    fig.tight_layout()
    fig.savefig(figure, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from mobility_contacts import connected, random_waypoint, write

    from netdp.graphs.time_varying import read_contact_trace

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--ticks", type=int, default=40)
    ap.add_argument("--radius", type=float, default=0.08)
    ap.add_argument("--walk-steps", type=int, default=1000)
    ap.add_argument("--observers", type=int, default=16)
    ap.add_argument("--gossip-steps", type=int, default=10)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("out/mobility"))
    ap.add_argument("--plot-only", action="store_true",
                    help="redraw the figure from OUT/mobility_privacy.csv")
    args = ap.parse_args(argv)
    if args.plot_only:
        plot(args.out / "mobility_privacy.csv", args.out / "mobility_privacy.png",
             f"n = {args.nodes}, random waypoint, {args.ticks} ticks", args.delta)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    n = args.nodes
    contacts, _ = random_waypoint(n, args.ticks, args.radius, 0.005, 0.02, 5,
                                  np.random.default_rng(args.seed))
    if not connected(n, contacts):
        raise SystemExit("the union of the contacts is not connected: raise --radius")
    path = args.out / "contacts.csv"
    rows = write(path, contacts)
    tv = read_contact_trace(path)
    counts = contact_counts(contacts, n)
    print(f"{path}: {rows} contacts, {args.ticks} ticks; {tv.describe()}; union: "
          f"{tv.union.edge_count} edges (mean degree {2 * tv.union.edge_count / n:.1f})")

    observers = np.sort(np.random.default_rng(args.seed).choice(n, args.observers, False))
    began = time.perf_counter()
    walks, facts = walk_pairs(tv, args.walk_steps, observers, args.seed, args.epsilon,
                              args.delta)
    walk_s = time.perf_counter() - began
    began = time.perf_counter()
    gossip, rmse = gossip_pairs(tv, args.gossip_steps, args.seed)
    gossip_s = time.perf_counter() - began

    series = {}
    for name, (obs, nodes, values) in walks.items():
        series[f"walk on the {name}"] = binned(values, counts[obs, nodes])
    off = ~np.eye(n, dtype=bool)
    for name, matrix in gossip.items():
        series[f"gossip on the {name}"] = binned(matrix[off], counts[off])

    labels = ["0", "1-4", "5-19", "20-79", "80+"]
    table = args.out / "mobility_privacy.csv"
    with table.open("w") as fh:
        fh.write("run,contact_ticks,pairs,mean_epsilon,max_epsilon\n")
        for name, rows_ in series.items():
            for label, (pairs, mean, top) in zip(labels, rows_, strict=True):
                fh.write(f"{name},{label},{pairs},{mean:.6g},{top:.6g}\n")
    print(f"walk: T = {args.walk_steps}, {args.observers} observers, {walk_s:.0f} s; "
          f"gossip: T = {args.gossip_steps}, every observer, {gossip_s:.0f} s; gossip's "
          f"rmse of the nodes' estimates: {rmse['trace']:.4g} on the trace, "
          f"{rmse['union']:.4g} on the union")
    for name, line in facts.items():
        print(f"walk on the {name}: {line}")
    print(f"{'contact ticks':>14} " + " ".join(f"{k:>22}" for k in series))
    for i, label in enumerate(labels):
        cells = [f"{rows_[i][1]:10.3f} ({rows_[i][0]:>6})" for rows_ in series.values()]
        print(f"{label:>14} " + " ".join(f"{c:>22}" for c in cells))

    figure = args.out / "mobility_privacy.png"
    plot(table, figure, f"n = {n}, random waypoint, {args.ticks} ticks", args.delta)
    print(f"{table}, {figure}")


if __name__ == "__main__":
    main()
