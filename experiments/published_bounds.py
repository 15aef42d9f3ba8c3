"""The published bounds beside the exact loss, by hop distance (docs/published-bounds.md).

Each case runs ``netdp simulate`` (the sum, Gaussian noise, seed 1) with ``--accountant
exact --accountant rdp`` (rdp: netdp's default accountant of a Gaussian sum walk on a
graph), keeps every pair's exact loss, and evaluates the two published bounds
(:mod:`netdp.bounds.published`) on every pair at the one target δ that every pairwise
figure is reported at (``exact.pair_delta``, :func:`netdp.bounds.by_distance.target_delta`),
so that each comparison is at one δ. Per hop distance: the pairs, the mean of exact,
ICML 2024, PN-f-DP and rdp, and how many pairs each bound puts below their exact loss.

    python experiments/published_bounds.py            # every case, the docs' table
    python experiments/published_bounds.py cycle-4-40 # one case
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from netdp.bounds.by_distance import target_delta
from netdp.bounds.published import icml_epsilon, pnfdp_epsilon
from netdp.graphs.topologies import hop_distances
from netdp.run.api import run
from netdp.tasks import make_config, task_of
from netdp.tracking import cycle_entries as ce
from netdp.tracking.graph_observers import transition

DEFAULT = "rdp"  # netdp's default accountant of a Gaussian sum walk on a graph


@dataclass(frozen=True)
class Case:
    name: str
    topology: str
    nodes: int
    steps: int
    epsilon: float = 1.0
    walk: str = "auto"


CASES = (
    Case("cycle-4-40", "cycle", 4, 40),
    Case("cycle-4-400", "cycle", 4, 400),
    Case("cycle-6-60", "cycle", 6, 60),
    Case("hypercube-8-80", "hypercube", 8, 80),
    Case("hypercube-16-64", "hypercube", 16, 64),
    Case("karate-34", "karate", 34, 34),
    Case("cycle-4-lazy-200", "cycle", 4, 200, walk="lazy"),
    Case("hypercube-8-lazy-80", "hypercube", 8, 80, walk="lazy"),
)


def _views(trace, observers: np.ndarray) -> np.ndarray:
    holders = np.asarray(trace.holders).ravel()
    return np.array([ce.observer_views(holders, trace.steps,
                                       np.flatnonzero(holders == v)).size for v in observers])


def compare(case: Case) -> list[dict]:
    """One row per hop distance (see the module docstring)."""
    config = make_config({"topology": case.topology, "nodes": case.nodes, "steps": case.steps,
                          "epsilon": case.epsilon, "accountants": ("exact", DEFAULT),
                          "walk": case.walk,
                          "seed": 1})
    setup = task_of(config).prepare(config)
    traces = []
    report = run(setup, progress=False, keep_pairs=True,
                 on_trace=lambda _, trace: traces.append(trace))
    exact = np.asarray(report.pairs)  # exact[u, v]
    default = {e.accountant: e for e in report.privacy.empirical}[DEFAULT]
    n = setup.topology.n
    observers = np.arange(n)
    # every pair's exact loss is at the one target δ (exact.pair_delta): the bounds too
    deltas = np.full(n, target_delta(setup.config))
    P = transition(setup)
    z = setup.mechanism.sigma / setup.mechanism.sensitivity
    icml = np.full((n, n), np.nan)
    pnf = np.full((n, n), np.nan)
    for d in np.unique(deltas):
        obs = observers[deltas == d]
        icml[obs] = icml_epsilon(P, setup.steps, z, float(d), config.tokens, obs)
        pnf[obs] = pnfdp_epsilon(P, setup.steps, z, float(d), config.tokens, obs)[0]
    hops = hop_distances(setup.topology.distance_graph, observers)  # hops[v, u]
    ex = exact.T  # ex[v, u]
    kov = {r.distance: r.mean for r in default.by_distance}
    rows = []
    for dist in np.unique(hops[hops > 0]):
        sel = hops == dist
        rows.append({"case": case.name, "distance": int(dist), "pairs": int(sel.sum()),
                     "exact": float(ex[sel].mean()), "exact_max": float(ex[sel].max()),
                     "icml2024": float(icml[sel].mean()), "pn-f-dp": float(pnf[sel].mean()),
                     DEFAULT: kov[int(dist)],
                     "icml_below": int(np.sum(icml[sel] < ex[sel])),
                     "pnfdp_below": int(np.sum(pnf[sel] < ex[sel]))})
    return rows


def markdown(rows: list[dict]) -> str:
    """The docs' table."""
    lines = ["| case | distance | pairs | exact (mean) | exact (max) | ICML 2024 (mean) | "
             "PN-f-DP (mean) | default rdp (mean) | ICML below exact | PN-f-DP below exact |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['distance']} | {r['pairs']} | {r['exact']:.4g} | "
                     f"{r['exact_max']:.4g} | {r['icml2024']:.4g} | {r['pn-f-dp']:.4g} | "
                     f"{r[DEFAULT]:.4g} | {r['icml_below']} | {r['pnfdp_below']} |")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    chosen = [c for c in CASES if not argv or c.name in argv]
    print("\n".join(markdown([]).splitlines()[:2]), flush=True)
    for case in chosen:  # row by row as each case ends
        print("\n".join(markdown(compare(case)).splitlines()[2:]), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
