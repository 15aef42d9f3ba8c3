"""``pld`` on a graph by its two routes to a view's count laws: the exact laws, and the laws
that dominate them (:mod:`netdp.tracking.view_plds`), which ``pld`` takes beyond
:data:`netdp.tracking.walk_views.PLD_LAW_WORK` (issue 38).

Runs ``netdp.simulate`` of the sum (T = 100 n, δ = 1e-6, seed 0, 2 sampled observers,
``--accountant pld``) once with the threshold at 0 (every observer on the dominating laws)
and once at infinity (every observer on the exact laws), in this process, and prints the
observers' largest law work (:func:`netdp.tracking.walk_views.law_work`), the mean and q99
and the seconds of the whole call.

Usage::

    python experiments/pld_law_routes.py karate grid:100 hypercube:128 hypercube:512
"""

from __future__ import annotations

import argparse
import time
from typing import Any


def run(topology: str, n: int | None, eps0: float, limit: float) -> dict[str, Any]:
    """One call on the route that ``limit`` (``PLD_LAW_WORK``) picks."""
    import netdp
    import netdp.tracking.walk_views as wv

    seen: list[float] = []
    original = wv.law_work

    def law_work(views: Any, nodes: int, nnz: int) -> float:
        seen.append(original(views, nodes, nnz))
        return seen[-1]

    config: dict[str, Any] = {"task": "sum", "topology": topology, "epsilon": eps0,
                              "delta": 1e-6, "seed": 0, "sources": 2, "accountants": ["pld"]}
    if n is not None:
        config.update(nodes=n, steps=100 * n)
    saved = wv.PLD_LAW_WORK
    wv.law_work, wv.PLD_LAW_WORK = law_work, limit
    try:
        start = time.perf_counter()
        report = netdp.simulate(config)
        seconds = time.perf_counter() - start
    finally:
        wv.law_work, wv.PLD_LAW_WORK = original, saved
    row = report.privacy.empirical[0]
    return {"law_work": max(seen, default=0.0), "mean": row.mean,
            "q99": row.quantiles["q99"], "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cells", nargs="+", help="TOPOLOGY or TOPOLOGY:N")
    parser.add_argument("--eps0", type=float, default=1.0)
    args = parser.parse_args()
    print("| graph | law work | dominating laws: mean / q99, s | exact laws: mean / q99, s |")
    print("|---|---|---|---|")
    for cell in args.cells:
        name, _, size = cell.partition(":")
        n = int(size) if size else None
        if n is None:  # a named graph of its own size: T = 100 n all the same
            import netdp

            n = netdp.simulate({"topology": name, "steps": 2, "seed": 0,
                                "no_tracking": True}).config.nodes
        routes = [run(name, n, args.eps0, limit) for limit in (0.0, float("inf"))]
        print(f"| {cell} | {routes[0]['law_work']:.2g} | " + " | ".join(
            f"{r['mean']:.3g} / {r['q99']:.3g}, {r['seconds']:.1f}" for r in routes) + " |",
              flush=True)


if __name__ == "__main__":
    main()
