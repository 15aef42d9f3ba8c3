"""Synchronous gossip, pairwise gossip, DECOR and the random walk on the same graphs, at
equal utility: the exact pairwise loss by hop distance, with the published bounds beside
it (issue 42, item 4).

Usage: python experiments/compare_protocols.py [--cells hypercube:64 grid:64
       random-geometric:64 karate graphml:florentine] [--decor-ratio 3.2] [--walk-sources 8]
       [--delta 1e-6] [--seed 1] [--out docs/figures/protocols_compared.csv] [--markdown]

**Equal utility.** Every protocol estimates the mean of the nodes' values (in a range of
width Δ = 1), and each one's noise is set so that the noise in its estimate has the same
root mean square ``s* = 1 / sqrt(n)``: the error of the local model where every node
releases its value once with σ = 1 and the mean of the releases is taken.

- ``gossip`` (Muffliato, synchronous): T from Muffliato's rule at σ = 1 (the same T for the
  three gossip protocols), σ such that ``σ sqrt(mean_v ‖(W^T)_{v,:}‖²) = s*``.
- ``pairwise`` (randomized pairwise gossip, T time units of n exchanges): σ from the
  run's own realised map ``B_T`` (the schedule of ``--seed``), ``σ sqrt(mean ‖(B_T)_{v,:}‖²)
  = s*``.
- ``decor`` (synchronous, σ_cor = ``--decor-ratio`` · σ): σ such that the final states'
  noise, ``sqrt(mean (W^T Σ W^T)_vv)`` with ``Σ = σ² I + σ_cor² L``, is ``s*``.
- ``walk`` (netdp's walk sum, T = 100 n, fresh Gaussian noise at every contribution):
  the estimate is the mean of the T noisy contributions, std ``σ_w / sqrt(T)``, so
  ``σ_w = s* sqrt(T)``; ε0 is that Gaussian's exact ε at δ (the walk's parameter).

**Privacy.** ``pld`` at the one target δ: the exact ε of each gossip view (one Gaussian
shift; the view given what the observer knows for DECOR), and the walk's sound pld bound
of the observer's view (``--walk-sources`` sampled observers, the same for every cell's
walk). **Published bounds** beside, by distance: Muffliato's per-message sum (gossip; not
an upper bound), DECOR's SecLDP accountant (an eavesdropper knowing no secret), the ICML
2024 closed form and the pairwise network f-DP bound (walk; netdp's ``theory_by_distance``).

Writes one CSV row per (graph, protocol, line, distance) and prints the summary (and with
``--markdown`` the tables by distance).
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _table import write_csv  # noqa: E402

FIELDS = ("graph", "nodes", "protocol", "line", "distance", "pairs", "mean", "max",
          "sigma", "noise_std", "target_std", "steps")
PROTOCOLS = ("gossip", "pairwise", "decor", "walk")


def topology_of(spec: str) -> tuple[str | Path, int | None, str]:
    """(topology, nodes, label) of a cell: ``name[:n]``, or ``graphml:NAME`` for a
    networkx graph written to a GraphML file."""
    name, _, size = spec.partition(":")
    if name == "graphml":
        import networkx as nx

        graph = {"florentine": nx.florentine_families_graph,
                 "karate": nx.karate_club_graph}[size]()
        path = Path(tempfile.mkdtemp()) / f"{size}.graphml"
        nx.write_graphml(graph, path)
        return path, None, f"GraphML ({size})"
    return name, (int(size) if size else None), spec


def summaries(graph: str, protocol: str, n: int, sigma: float, noise: float,
              target: float, steps: int, privacy: dict) -> list[dict]:
    """The exact rows and each published line, by distance."""
    base = {"graph": graph, "nodes": n, "protocol": protocol, "sigma": sigma,
            "noise_std": noise, "target_std": target, "steps": steps}
    out = []
    emp = privacy["empirical"][0]
    lines = {"exact" if protocol != "walk" else "pld (sound)": emp["by_distance"],
             **privacy.get("theory_by_distance", {})}
    for line, rows in lines.items():
        out += [{**base, "line": line, "distance": r["distance"], "pairs": r["pairs"],
                 "mean": r["mean"], "max": r["max"]} for r in rows]
    total = sum(r["pairs"] for r in emp["by_distance"])
    out.append({**base, "line": "exact" if protocol != "walk" else "pld (sound)",
                "distance": "all", "pairs": total, "mean": emp["mean"], "max": emp["max"]})
    return out


def cell(spec: str, ratio: float, walk_sources: int, delta: float, seed: int) -> list[dict]:
    from netdp import simulate
    from netdp.accounting.gdp import gaussian_epsilon
    from netdp.core.setup import Streams
    from netdp.engine import async_gossip as AG
    from netdp.graphs import gossip_matrix as GM
    from netdp.tasks import make_config, task_of
    from netdp.tasks.gossip_sum import final_variances
    from netdp.tracking import gossip_message_sum as MS

    topo, nodes, label = topology_of(spec)
    common = {"task": "sum", "topology": str(topo), "seed": seed, "accountants": ("pld",),
              "target_delta": delta}
    if nodes is not None:
        common["nodes"] = nodes
    probe = make_config(**common, protocol="gossip", sigma=1.0)
    setup = task_of(probe).prepare(probe)
    n, plan = setup.topology.n, setup.plan
    steps = GM.default_steps(plan.gap, 1.0, n)
    target = 1.0 / math.sqrt(n)
    rows: list[dict] = []

    norms = float(MS.row_norms(plan.W, steps)[-1].mean())
    sigma = target / math.sqrt(norms)
    report = simulate(make_config(**common, protocol="gossip", sigma=sigma, steps=steps))
    rows += summaries(label, "gossip", n, sigma, sigma * math.sqrt(norms), target, steps,
                      report.to_json()["privacy"])

    cfg = make_config(**common, protocol="gossip", sigma=1.0, steps=steps,
                      gossip_schedule="pairwise")
    task = task_of(cfg)
    pair_setup = task.prepare(cfg)
    rounds = task.trace(pair_setup, Streams(pair_setup.seed, 0)).gossip
    final = AG.scheduled_states(plan.W, np.eye(n), rounds)[-1]
    norms = float(np.einsum("ij,ij->i", final, final).mean())
    sigma = target / math.sqrt(norms)
    report = simulate(make_config(**common, protocol="gossip", sigma=sigma, steps=steps,
                                  gossip_schedule="pairwise"))
    rows += summaries(label, "pairwise", n, sigma, sigma * math.sqrt(norms), target, steps,
                      report.to_json()["privacy"])

    cfg = make_config(**common, protocol="gossip", sigma=1.0, correlated_noise=ratio,
                      steps=steps)
    variance = float(final_variances(task_of(cfg).prepare(cfg)).mean())
    sigma = target / math.sqrt(variance)
    report = simulate(make_config(**common, protocol="gossip", sigma=sigma, steps=steps,
                                  correlated_noise=ratio * sigma))
    rows += summaries(label, "decor", n, sigma, sigma * math.sqrt(variance), target, steps,
                      report.to_json()["privacy"])

    walk_steps = 100 * n
    sigma = target * math.sqrt(walk_steps)
    epsilon = float(gaussian_epsilon(1.0 / sigma, delta))
    report = simulate(make_config(**common, protocol="walk", epsilon=epsilon, delta=delta,
                                  steps=walk_steps, sources=walk_sources))
    out = report.to_json()
    rows += summaries(label, "walk", n, sigma, out["utility"]["theoretical_std"], target,
                      walk_steps, out["privacy"])
    return rows


def markdown(rows: list[dict]) -> str:
    """The summary: per graph and protocol, the noise std achieved and the mean ε."""
    out = ["| graph | n | protocol | σ | noise std (target) | exact mean ε | max ε | "
           "published mean ε |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["distance"] != "all":
            continue
        theory = sorted({x["line"] for x in rows if x["graph"] == r["graph"]
                         and x["protocol"] == r["protocol"] and x["line"] != r["line"]})
        shown = []
        for line in theory:
            parts = [x for x in rows if x["graph"] == r["graph"] and x["line"] == line
                     and x["protocol"] == r["protocol"]]
            mean = sum(x["mean"] * x["pairs"] for x in parts) / sum(x["pairs"] for x in parts)
            shown.append(f"{line} {mean:.3g}")
        out.append(f"| {r['graph']} | {r['nodes']} | {r['protocol']} | {r['sigma']:.3g} | "
                   f"{r['noise_std']:.3g} ({r['target_std']:.3g}) | {r['mean']:.3g} | "
                   f"{r['max']:.3g} | {', '.join(shown) or '–'} |")
    return "\n".join(out)


def by_distance(rows: list[dict], graph: str) -> str:
    """Mean ε by hop distance, one column per protocol's exact line and published line."""
    mine = [r for r in rows if r["graph"] == graph and r["distance"] != "all"]
    columns = sorted({(r["protocol"], r["line"]) for r in mine},
                     key=lambda c: (PROTOCOLS.index(c[0]), c[1] not in ("exact", "pld (sound)"),
                                    c[1]))
    distances = sorted({r["distance"] for r in mine})
    head = "| distance | " + " | ".join(f"{p}: {line}" for p, line in columns) + " |"
    out = [head, "|---" * (len(columns) + 1) + "|"]
    for d in distances:
        cells = []
        for p, line in columns:
            hit = [r for r in mine if r["protocol"] == p and r["line"] == line
                   and r["distance"] == d]
            cells.append(f"{hit[0]['mean']:.3g}" if hit else "–")
        out.append(f"| {d} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", nargs="+", default=["hypercube:64", "grid:64",
                                                    "random-geometric:64", "karate",
                                                    "graphml:florentine"])
    ap.add_argument("--decor-ratio", type=float, default=3.2)
    ap.add_argument("--walk-sources", type=int, default=8)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="docs/figures/protocols_compared.csv")
    ap.add_argument("--markdown", action="store_true", help="also the tables by distance")
    args = ap.parse_args(argv)
    rows: list[dict] = []
    for spec in args.cells:
        rows += cell(spec, args.decor_ratio, args.walk_sources, args.delta, args.seed)
    write_csv(args.out, rows, FIELDS)
    print(markdown(rows))
    if args.markdown:
        for graph in dict.fromkeys(r["graph"] for r in rows):
            print(f"\n{graph}\n")
            print(by_distance(rows, graph))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
