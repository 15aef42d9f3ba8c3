"""The ``pld`` accountant on a graph: every node of a view at once against one pair at a time.

Usage: python experiments/bench_view_plds.py [--graphs karate grid:100 hypercube:128]
       [--epsilon 1] [--seed 0] [--observers 1]

For each graph, ``netdp.simulate`` runs the sum task at ``T = 100 n`` (``--observers``
sampled observers, ``--accountant pld``, δ = 1e-6 at the target). Its tracker's call to
:func:`netdp.tracking.view_plds.rows_pld` (every node of a view at once,
:mod:`netdp.accounting.mixture_rows`, each distinct view once) is timed, and on the very
same views, laws and grid, the construction it replaced is timed as the baseline in the
same process: one :func:`~netdp.accounting.mixture_pld.mixture_pld` per view and node,
composed by :meth:`~netdp.accounting.loss_pmf.PldPair.compose_many`. Reported per graph:
both times per observer, their ratio, and both figures' mean and largest ε over the
observer's nodes (the new one is an upper bound too: the gap is its extra rounding).
"""

from __future__ import annotations

import argparse
import math
import platform
import time

import numpy as np

import netdp
from netdp.accounting import loss_pmf
from netdp.accounting import mixture_pld as mp
from netdp.tracking import cycle_entries as ce
from netdp.tracking import view_plds


def _one_at_a_time(views, law, keep, noise, h, dt) -> np.ndarray:
    """The replaced construction: a PLD per view and node, composed pair by pair."""
    laws = [law(e, slice(0, keep.size)) for e in range(views.size)]
    out = np.empty(keep.size)
    for r, u in enumerate(keep):
        parts = []
        for e in range(views.size):
            kind, length = int(views.kind[e]), int(views.length[e])
            c = ce.attributable(kind, length, views.key(e, int(u)))
            w = np.concatenate([np.zeros(c), laws[e][0][r]])
            s = noise.z * math.sqrt(ce.draws(kind, length))
            parts.append(mp.mixture_pld(w, s, h=h, tail=float(laws[e][1][r])))
        out[r] = max(float(loss_pmf.PldPair.compose_many(parts).epsilon(dt)), 0.0)
    return out


def bench(spec: str, eps0: float, seed: int, observers: int) -> dict:
    rows: list[dict] = []
    real = view_plds.rows_pld

    def timed(views, law, keep, noise, h, dt):
        t0 = time.perf_counter()
        new = real(views, law, keep, noise, h, dt)
        t1 = time.perf_counter()
        old = _one_at_a_time(views, law, keep, noise, h, dt)
        t2 = time.perf_counter()
        rows.append({"new_s": t1 - t0, "old_s": t2 - t1, "new": new, "old": old,
                     "views": views.size})
        return new

    name, _, n_text = spec.partition(":")
    config = {"task": "sum", "topology": name, "epsilon": eps0, "delta": 1e-6, "seed": seed,
              "sources": observers, "accountants": ["pld"]}
    if n_text:
        config.update(nodes=int(n_text), steps=100 * int(n_text))
    view_plds.rows_pld = timed
    try:
        netdp.simulate(config)
    finally:
        view_plds.rows_pld = real
    new = np.concatenate([r["new"] for r in rows])
    old = np.concatenate([r["old"] for r in rows])
    new_s = sum(r["new_s"] for r in rows) / len(rows)
    old_s = sum(r["old_s"] for r in rows) / len(rows)
    return {"graph": spec, "views": sum(r["views"] for r in rows) / len(rows),
            "old_s": old_s, "new_s": new_s, "speedup": old_s / new_s,
            "old_mean": float(old.mean()), "new_mean": float(new.mean()),
            "old_max": float(old.max()), "new_max": float(new.max())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graphs", nargs="+", default=["karate", "grid:100", "hypercube:128"])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--observers", type=int, default=1)
    args = parser.parse_args()
    print(f"# {platform.processor() or platform.machine()}, python {platform.python_version()}"
          f", netdp {netdp.__version__}, eps0 = {args.epsilon}, seed {args.seed}")
    print("| graph | views / observer | one at a time (s / observer) | every node at once "
          "| speed-up | mean ε (old / new) | max ε (old / new) |")
    print("|---|---|---|---|---|---|---|")
    for spec in args.graphs:
        r = bench(spec, args.epsilon, args.seed, args.observers)
        print(f"| {r['graph']} | {r['views']:.0f} | {r['old_s']:.2f} | {r['new_s']:.2f} | "
              f"{r['speedup']:.1f}x | {r['old_mean']:.4f} / {r['new_mean']:.4f} | "
              f"{r['old_max']:.4f} / {r['new_max']:.4f} |", flush=True)


if __name__ == "__main__":
    main()
