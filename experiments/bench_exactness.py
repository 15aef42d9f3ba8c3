"""How far each accountant is from the exact loss of a walk view (docs/accounting-exactness.md).

Usage: python experiments/bench_exactness.py [--cells ring:100 complete:100 ...]
       [--eps0 0.1 1] [--observers 4] [--seed 0] [--out docs/figures/accounting_exactness.csv]

One walk per cell (``T = 100 n`` steps; the ring: 100 full turns), ``delta = 1e-6``. The
same ``--observers`` sampled observers (seeded) are accounted by every accountant: the
reference convention (kov, rdp), the sound one (kov, rdp, pld) and exact; on the ring,
the reference ``ring_losses`` (kov) and ``ring_exact_losses`` (exact) over every observer.
Each row: mean and q99 of ε over the accounted pairs, and the mean over pairs of the ratio
to exact. Rows are appended to the CSV as they finish.
A cell is ``topology:n``; ``complete-noself:n`` is the complete graph without self-moves.
"""

from __future__ import annotations

import argparse
import csv
import os
import time

import numpy as np

from netdp import engine, mechanisms
from netdp.core import seeding
from netdp.graphs import topologies as topology
from netdp.graphs import walk_kind
from netdp.tasks.summation import ring_noise_mask
from netdp.tracking import loss_summary, taboo, walk_views
from netdp.tracking import loss_table as tracker

DELTA, T_PER_NODE = 1e-6, 100
FIELDS = ["topology", "n", "T", "eps0", "observers", "method", "mean", "q99",
          "ratio_to_exact", "min_ratio", "seconds", "seconds_per_observer"]


def _matrix(losses, rows=None) -> np.ndarray:
    m = loss_summary.dense(losses)
    if rows is not None:
        pos = {int(v): i for i, v in enumerate(losses.observers)}
        m = m[[pos[int(v)] for v in rows]]
    return m


def cell(spec: str, eps0: float, n_obs: int, seed: int) -> list[dict]:
    name, n_text = spec.split(":")
    n = int(n_text)
    z = mechanisms.Gaussian(eps0, DELTA).sigma  # range of width 1
    results: dict[str, tuple[np.ndarray, float]] = {}
    if name == "ring":
        rounds = T_PER_NODE
        steps = rounds * n
        mask = ring_noise_mask(n, steps, False)
        for method, fn in (("reference kov", lambda: tracker.ring_losses(
                n, rounds, mask, eps0, DELTA)),
                           ("exact", lambda: tracker.ring_exact_losses(
                n, rounds, mask, z, DELTA))):
            t0 = time.perf_counter()
            losses = fn()
            sec = time.perf_counter() - t0
            s = loss_summary.summarize([losses])
            results[method] = (s, sec)
        rows = []
        ex = results["exact"][0]
        for method, (s, sec) in results.items():
            rows.append(dict(topology="ring", n=n, T=steps, eps0=eps0, observers=f"all {n}",
                             method=method, mean=s["mean"], q99=s.get("q99", float("nan")),
                             ratio_to_exact=s["mean"] / ex["mean"],
                             min_ratio=s["min"] / ex["max"], seconds=sec,
                             seconds_per_observer=sec / n))
        return rows
    self_moves = name != "complete-noself"
    topo_name = "complete" if name.startswith("complete") else name
    topo = (topology.complete(n, self_moves=self_moves) if topo_name == "complete"
            else topology.build(topo_name, n))
    n = topo.n
    steps = T_PER_NODE * n
    router = engine.Router(topo) if topo_name == "complete" else None
    obs = np.sort(np.random.default_rng(seed).choice(n, size=min(n_obs, n), replace=False))
    if topo_name == "complete":
        trace = engine.walk("vector", router, steps, [seeding.generator(seed, "walk", 0, 0)])
        jobs = [("reference kov", lambda: _matrix(tracker.walk_losses(
                    trace, eps0, DELTA, z, "kov", keep_pairs=True, convention="reference",
                    self_moves=self_moves), obs)),
                ("reference rdp", lambda: _matrix(tracker.walk_losses(
                    trace, eps0, DELTA, z, "rdp", keep_pairs=True, convention="reference",
                    self_moves=self_moves), obs))]
        for acct in ("kov", "rdp", "pld", "exact"):
            jobs.append((f"sound {acct}" if acct != "exact" else "exact", lambda acct=acct: _matrix(tracker.walk_losses(  # noqa: E501
                trace, eps0, DELTA, z, acct, keep_pairs=True, self_moves=self_moves,
                observers=obs), obs)))
    else:
        rule = _rule(topo)
        trace = engine.walk("vector", engine.Router(topo, rule), steps,
                            [seeding.generator(seed, "walk", 0, 0)])
        P = walk_kind.transition_matrix(topo, rule)
        jobs = [(f"reference {a}", lambda a=a: _matrix(taboo.graph_walk_losses(
                    trace, P, eps0, DELTA, z, a, observers=obs), obs)) for a in ("kov", "rdp")]
        jobs += [(f"sound {a}" if a != "exact" else "exact", lambda a=a: _matrix(walk_views.sound_graph_losses(  # noqa: E501
                    trace, P, eps0, DELTA, z, a, observers=obs), obs))
                 for a in ("kov", "rdp", "pld", "exact")]
    for method, fn in jobs:
        t0 = time.perf_counter()
        results[method] = (fn(), time.perf_counter() - t0)
    ex = results["exact"][0]
    ok = ~np.isnan(ex) & (ex > 0)
    rows = []
    for method, (m, sec) in results.items():
        vals = m[~np.isnan(m)]
        rows.append(dict(topology=name, n=n, T=steps, eps0=eps0, observers=obs.size,
                         method=method, mean=vals.mean(), q99=np.quantile(vals, 0.99),
                         ratio_to_exact=float(np.mean(m[ok] / ex[ok])),
                         min_ratio=float(np.min(m[ok] / ex[ok])), seconds=sec,
                         seconds_per_observer=sec / obs.size))
    return rows


def _rule(topo):
    from netdp.engine.routing import resolve_walk

    return resolve_walk(topo, "auto")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", nargs="+", default=[
        "ring:100", "complete:100", "complete-noself:100", "ring:1000", "complete:1000",
        "complete-noself:1000", "hypercube:128", "grid:100", "random-geometric:100"])
    parser.add_argument("--eps0", type=float, nargs="+", default=[0.1, 1.0])
    parser.add_argument("--observers", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="docs/figures/accounting_exactness.csv")
    args = parser.parse_args()
    new = not os.path.exists(args.out)
    with open(args.out, "a", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS)
        if new:
            writer.writeheader()
        for spec in args.cells:
            for eps0 in args.eps0:
                t0 = time.perf_counter()
                for row in cell(spec, eps0, args.observers, args.seed):
                    writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v)
                                     for k, v in row.items()})
                    print(row, flush=True)
                fh.flush()
                print(f"# {spec} eps0={eps0}: {time.perf_counter() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
