"""What the ``pld`` and ``exact`` accountants of a walk cost: measured, and set against the
estimate that refuses a run up front (:mod:`netdp.tracking.pld_cost`, issue 29).

Runs ``netdp.simulate`` in this process over a grid (ε in {0.3, 1, 4}; the complete graph
at n = 4 to 64 and the hypercube at n = 4 to 16), times the accounting
(``report.timing.accounting_s``), and prints for each run the seconds measured, the
estimate and their ratio, then the least-squares fit (in relative error) of the two
terms of each path, which the accountant's registry entry holds times 3/4
(:class:`netdp.accounting.registry.GridCost`).

Usage::

    OPENBLAS_NUM_THREADS=1 python experiments/pld_cost.py --out pld_cost.jsonl
    python experiments/pld_cost.py --fit-only docs/figures/pld_cost.jsonl  # the fit's runs

About 12 minutes on the 2-core reference machine.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

GRID = {
    ("complete", "exact"): [(4, 16), (4, 64), (4, 192), (8, 32), (8, 128), (8, 384),
                            (16, 64), (16, 256), (16, 768)],
    ("complete", "pld"): [(4, 16), (8, 128), (16, 256), (32, 512), (64, 1024)],
    ("hypercube", "exact"): [(4, 8), (4, 32), (8, 16), (8, 64), (16, 32), (16, 64)],
    ("hypercube", "pld"): [(4, 8), (4, 32), (8, 16), (8, 64), (16, 32), (16, 64)],
}
EPSILONS = (0.3, 1.0, 4.0)


def terms(topology: str, accountant: str, n: int, steps: int, eps: float) -> list[float]:
    """The two terms of :func:`netdp.tracking.pld_cost.pld_seconds` (grid points), each
    with unit seconds per point: the fit's regressors."""
    from netdp.mechanisms.noise import analytic_sigma
    from netdp.tracking import pld_cost

    return [pld_cost.pld_seconds(accountant, topology == "complete", n, n, steps / n,
                                 analytic_sigma(eps, 1e-6), seconds=unit)
            for unit in ((1.0, 0.0), (0.0, 1.0))]


def measure(out: Path) -> list[dict]:
    """Every run of the grid, one JSON line each in ``out``."""
    import netdp

    netdp.simulate({"nodes": 8, "steps": 16, "topology": "hypercube", "seed": 1,
                    "accountants": ("exact",)})  # imports and compiled kernels warm
    rows = []
    with out.open("w") as fh:
        for (topology, accountant), sizes in GRID.items():
            for eps in EPSILONS:
                for n, steps in sizes:
                    report = netdp.simulate({"nodes": n, "steps": steps, "epsilon": eps,
                                             "topology": topology, "seed": 1,
                                             "accountants": (accountant,)})
                    row = {"topology": topology, "accountant": accountant, "nodes": n,
                           "steps": steps, "epsilon": eps,
                           "seconds": report.timing.accounting_s}
                    rows.append(row)
                    fh.write(json.dumps(row) + "\n")
                    fh.flush()
                    print(json.dumps(row), flush=True)
    return rows


def fit(rows: list[dict]) -> None:
    """Print measured / estimated per run, and the fitted seconds per point per path."""
    from scipy.optimize import nnls

    from netdp.mechanisms.noise import analytic_sigma
    from netdp.tracking.pld_cost import pld_seconds

    for key in GRID:
        sel = [r for r in rows if (r["topology"], r["accountant"]) == key]
        if not sel:
            continue
        a = np.array([terms(r["topology"], r["accountant"], r["nodes"], r["steps"],
                            r["epsilon"]) for r in sel])
        s = np.array([r["seconds"] for r in sel])
        coef = nnls(a / s[:, None], np.ones(s.size))[0]
        est = np.array([pld_seconds(r["accountant"], r["topology"] == "complete", r["nodes"],
                                    r["nodes"], r["steps"] / r["nodes"],
                                    analytic_sigma(r["epsilon"], 1e-6)) for r in sel])
        print(f"\n{key[0]} / {key[1]}: fit {coef[0]:.3g}, {coef[1]:.3g} s per point "
              f"(x 3/4: {0.75 * coef[0]:.2g}, {0.75 * coef[1]:.2g}); measured / fit "
              f"{(s / (a @ coef)).min():.2f} .. {(s / (a @ coef)).max():.2f}")
        print("   n  steps   eps  measured  estimate  ratio")
        for r, m, e in zip(sel, s, est, strict=True):
            print(f"{r['nodes']:4d} {r['steps']:6d} {r['epsilon']:5.1f} {m:9.2f} {e:9.2f} "
                  f"{m / e if e else math.inf:6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("pld_cost.jsonl"),
                        help="the measured runs, one JSON line each")
    parser.add_argument("--fit-only", type=Path, metavar="JSONL",
                        help="fit the runs of an earlier --out instead of measuring")
    args = parser.parse_args()
    if args.fit_only is not None:
        rows = [json.loads(line) for line in args.fit_only.read_text().splitlines() if line]
    else:
        rows = measure(args.out)
    fit(rows)


if __name__ == "__main__":
    main()
