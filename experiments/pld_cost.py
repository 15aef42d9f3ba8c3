"""What the ``pld`` and ``exact`` accountants of a walk cost: measured, and set against the
estimate that refuses a run up front (:mod:`netdp.tracking.pld_cost`, issue 29).

Runs ``netdp.simulate`` in this process over a grid (ε in {0.3, 1, 4}; the complete graph
at n = 4 to 64 and the hypercube at n = 4 to 16), times the accounting
(``report.timing.accounting_s``), and prints for each run the seconds measured, the
estimate and their ratio, then the least-squares fit (in relative error) of the two
terms of each path, which the accountant's registry entry holds times 3/4
(:class:`netdp.accounting.registry.GridCost`).

``--graphs`` measures ``pld`` on graphs other than the complete one instead (every node
of a view at once: :mod:`netdp.accounting.mixture_rows`): hypercubes, grids, karate, a
random geometric and an Erdős–Rényi graph at ``T = 100 n``, 2 observers (every node at
n = 16), ε in {0.3, 1, 4}, and fits the ``(c₀, c₁)`` of :attr:`GridCost.rows
<netdp.accounting.registry.GridCost>` (``c₀ (1 + c₁ / z²)²`` seconds per view and node:
``c₁`` minimising the spread of the log ratios, ``c₀`` their median, both on the graphs that
are not vertex-transitive; on the hypercubes, whose nodes share laws, the median share of
that model they take: :attr:`GridCost.shared <netdp.accounting.registry.GridCost>`).

Usage::

    OPENBLAS_NUM_THREADS=1 python experiments/pld_cost.py --out pld_cost.jsonl
    python experiments/pld_cost.py --fit-only docs/figures/pld_cost.jsonl  # the fit's runs
    python experiments/pld_cost.py --only complete/exact --out exact.jsonl  # one path
    python experiments/pld_cost.py --graphs --out pld_cost_graphs.jsonl
    python experiments/pld_cost.py --graphs --fit-only docs/figures/pld_cost_graphs.jsonl
    python experiments/pld_cost.py --graphs --fit-only docs/figures/pld_cost_graphs_shared.jsonl

About 12 minutes on the 2-core reference machine (``--graphs``: about 10).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

GRID = {
    ("complete", "exact"): [(4, 16), (4, 64), (4, 192), (8, 32), (8, 128), (8, 384),
                            (16, 64), (16, 256), (16, 768), (6, 600), (32, 3200), (20, 4000),
                            (10, 5000)],
    ("complete", "pld"): [(4, 16), (8, 128), (16, 256), (32, 512), (64, 1024)],
    ("hypercube", "exact"): [(4, 8), (4, 32), (8, 16), (8, 64), (16, 32), (16, 64)],
    ("hypercube", "pld"): [(4, 8), (4, 32), (8, 16), (8, 64), (16, 32), (16, 64)],
}
EPSILONS = (0.3, 1.0, 4.0)
#: ``--graphs``: (topology, n, observers: ``--sources``, ``None`` for every node).
GRAPHS = (("hypercube", 16, None), ("hypercube", 32, 2), ("hypercube", 64, 2),
          ("hypercube", 128, 2), ("grid", 36, 2), ("grid", 100, 2), ("karate", 34, 2),
          ("random-geometric", 100, 2), ("erdos-renyi", 50, 2), ("hypercube", 256, 2),
          ("hypercube", 512, 2), ("hypercube", 1024, 2), ("hypercube", 2048, 1))


def terms(topology: str, accountant: str, n: int, steps: int, eps: float) -> list[float]:
    """The two terms of :func:`netdp.tracking.pld_cost.pld_seconds` (grid points), each
    with unit seconds per point: the fit's regressors."""
    from netdp.mechanisms.noise import analytic_sigma
    from netdp.tracking import pld_cost

    return [pld_cost.pld_seconds(accountant, topology == "complete", n, n, steps / n,
                                 analytic_sigma(eps, 1e-6), seconds=unit)
            for unit in ((1.0, 0.0), (0.0, 1.0))]


def measure(out: Path, only: list[str] | None = None) -> list[dict]:
    """Every run of the grid (``only``: of its ``TOPOLOGY/ACCOUNTANT`` keys), one JSON
    line each in ``out``."""
    import netdp

    netdp.simulate({"nodes": 8, "steps": 16, "topology": "hypercube", "seed": 1,
                    "accountants": ("exact",)})  # imports and compiled kernels warm
    rows = []
    with out.open("w") as fh:
        for (topology, accountant), sizes in GRID.items():
            if only and f"{topology}/{accountant}" not in only:
                continue
            for eps in EPSILONS:
                for n, steps in sizes:
                    report = netdp.simulate({"nodes": n, "steps": steps, "epsilon": eps,
                                             "topology": topology, "seed": 1,
                                             "accountants": (accountant,)})
                    _keep(rows, fh, {"topology": topology, "accountant": accountant,
                                     "nodes": n, "steps": steps, "epsilon": eps,
                                     "seconds": report.timing.accounting_s})
    return rows


def _keep(rows: list[dict], fh: Any, row: dict) -> None:
    """``row`` into ``rows``, a line of ``fh`` and stdout."""
    rows.append(row)
    fh.write(json.dumps(row) + "\n")
    fh.flush()
    print(json.dumps(row), flush=True)


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
        # the least largest ratio either way (what exact's complete-graph entry holds)
        grid = [(b, q) for b in np.geomspace(5e-8, 1e-6, 40) for q in np.geomspace(1e-10, 1e-6, 60)]
        worst = [max(np.log((s / (a @ g)).max()), -np.log((s / (a @ g)).min())) for g in grid]
        b, q = grid[int(np.argmin(worst))]
        ratio = s / (a @ [b, q])
        print(f"   minimax: {b:.2g}, {q:.2g} s per point; measured / fit {ratio.min():.2f} .. "
              f"{ratio.max():.2f}")
        print("   n  steps   eps  measured  estimate  ratio")
        for r, m, e in zip(sel, s, est, strict=True):
            print(f"{r['nodes']:4d} {r['steps']:6d} {r['epsilon']:5.1f} {m:9.2f} {e:9.2f} "
                  f"{m / e if e else math.inf:6.2f}")


def measure_graphs(out: Path) -> list[dict]:
    """Every run of :data:`GRAPHS` with ``pld``, one JSON line each in ``out``."""
    import netdp

    netdp.simulate({"nodes": 8, "steps": 16, "topology": "hypercube", "seed": 1,
                    "accountants": ("pld",)})
    rows = []
    with out.open("w") as fh:
        for eps in (1.0, 0.3, 4.0):
            for topology, n, sources in GRAPHS:
                config = {"topology": topology, "nodes": n, "steps": 100 * n,
                          "epsilon": eps, "seed": 3, "accountants": ["pld"]}
                if sources:
                    config["sources"] = sources
                report = netdp.simulate(config)
                _keep(rows, fh, {"topology": topology, "nodes": n, "observers": sources or n,
                                 "epsilon": eps, "seconds": report.timing.accounting_s})
    return rows


def fit_graphs(rows: list[dict]) -> None:
    """Print the ``(c₀, c₁)`` of the rows model (fitted on the graphs that are not
    vertex-transitive), the share of it the vertex-transitive ones take (``shared``: the
    median ratio), and measured / fitted per run."""
    from netdp.graphs.walk_kind import TRANSITIVE_NAMES
    from netdp.mechanisms.noise import analytic_sigma

    def units(c1: float, sel: list[dict]) -> np.ndarray:
        return np.array([r["observers"] * 100 * (r["nodes"] - 1)
                         * (1 + c1 / analytic_sigma(r["epsilon"], 1e-6) ** 2) ** 2
                         for r in sel])

    plain = [r for r in rows if r["topology"] not in TRANSITIVE_NAMES]
    tight = [r for r in rows if r["topology"] in TRANSITIVE_NAMES]
    s = np.array([r["seconds"] for r in plain])
    c1 = min(np.arange(0.0, 20.0, 0.5),
             key=lambda c: float(np.std(np.log(s / units(c, plain)))))
    c0 = float(np.exp(np.median(np.log(s / units(c1, plain)))))
    ratio = s / (c0 * units(c1, plain))
    print(f"rows: c0 = {c0:.3g} s, c1 = {c1:g}; measured / fit {ratio.min():.2f} .. "
          f"{ratio.max():.2f}")
    shared = 1.0
    if tight:
        st = np.array([r["seconds"] for r in tight])
        shared = float(np.exp(np.median(np.log(st / (c0 * units(c1, tight))))))
        print(f"vertex-transitive graphs: shared = {shared:.3g} of the rows model")
    print("topology            n   eps  measured  fit  ratio")
    for r in rows:
        fitted = c0 * units(c1, [r])[0] * (shared if r in tight else 1.0)
        print(f"{r['topology']:17s} {r['nodes']:4d} {r['epsilon']:5.1f} {r['seconds']:9.2f} "
              f"{fitted:6.2f} {r['seconds'] / fitted:6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("pld_cost.jsonl"),
                        help="the measured runs, one JSON line each")
    parser.add_argument("--fit-only", type=Path, metavar="JSONL",
                        help="fit the runs of an earlier --out instead of measuring")
    parser.add_argument("--only", nargs="+", metavar="TOPOLOGY/ACCOUNTANT",
                        help="measure only these paths of the grid (e.g. complete/exact)")
    parser.add_argument("--graphs", action="store_true",
                        help="pld on graphs other than the complete one (the rows model)")
    args = parser.parse_args()
    if args.fit_only is not None:
        rows = [json.loads(line) for line in args.fit_only.read_text().splitlines() if line]
    else:
        rows = measure_graphs(args.out) if args.graphs else measure(args.out, args.only)
    (fit_graphs if args.graphs else fit)(rows)


if __name__ == "__main__":
    main()
