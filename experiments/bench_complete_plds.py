"""Cost and effect of the complete graph's window PLDs (report-based walks).

Usage: python experiments/bench_complete_plds.py [--runs n:T/n:eps0 ...] [--seed 1]
       [--csv out.csv]

For each run: a walk of ``T`` steps on the complete graph with self-moves (the holders
iid uniform), then :func:`netdp.tracking.shuffle.walk_histogram_losses` at the target
δ = 1e-6, every observer, twice in the same process: KOV alone (``plds=False``, the
baseline) and with the windows' PLDs (:mod:`netdp.tracking.complete_plds`, the budget
lifted so that every run computes them). Reported: both timings and their ratio, the
estimate :func:`~netdp.tracking.complete_plds.run_seconds` makes (what decides whether
``simulate`` computes them, against 20 s) over the measured time, and both means with
the LDP baseline (ε0 T / n).
"""

from __future__ import annotations

import argparse
import csv
import platform
import time

import numpy as np

from netdp.engine.trace import Trace
from netdp.tracking import complete_plds, shuffle

RUNS = ["30:100:1", "100:30:1", "100:100:1", "100:100:0.5", "60:100:2", "300:30:1"]
TARGET = 1e-6


def bench(spec: str, seed: int) -> dict:
    n_text, per_text, eps_text = spec.split(":")
    n, per, eps0 = int(n_text), int(per_text), float(eps_text)
    rng = np.random.default_rng(seed)
    trace = Trace(n, rng.integers(0, n, size=(1, per * n)))
    args = dict(keep_pairs=True, target=TARGET)
    start = time.perf_counter()
    kov = shuffle.walk_histogram_losses(trace, eps0, TARGET, plds=False, **args)
    kov_s = time.perf_counter() - start
    w = shuffle.trace_windows(trace, eps0, None)
    estimate = complete_plds.run_seconds(n, w.own, w.reports, w.first, w.last, eps0,
                                         kov.observers)
    budget = complete_plds.RUN_SECONDS
    complete_plds.RUN_SECONDS = float("inf")
    try:
        start = time.perf_counter()
        tight = shuffle.walk_histogram_losses(trace, eps0, TARGET, **args)
        plds_s = time.perf_counter() - start
    finally:
        complete_plds.RUN_SECONDS = budget
    return {"n": n, "steps": per * n, "eps0": eps0, "kov_s": round(kov_s, 3),
            "plds_s": round(plds_s, 2), "ratio": round(plds_s / kov_s, 1),
            "estimate_s": round(estimate, 2), "estimate/measured": round(estimate / plds_s, 2),
            "kov_mean": round(float(kov.values.mean()), 3),
            "plds_mean": round(float(tight.values.mean()), 3), "ldp": eps0 * per}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", default=RUNS, help="n:T/n:eps0 each")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--csv", help="write the rows here too")
    args = parser.parse_args()
    print(f"# {platform.processor() or platform.machine()}, python {platform.python_version()}")
    rows = [bench(spec, args.seed) for spec in args.runs]
    keys = list(rows[0])
    print(" | ".join(keys))
    for row in rows:
        print(" | ".join(str(row[k]) for k in keys), flush=True)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            out = csv.DictWriter(f, fieldnames=keys)
            out.writeheader()
            out.writerows(rows)


if __name__ == "__main__":
    main()
