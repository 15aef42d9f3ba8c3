"""DECOR's correlated noise on gossip averaging: the exact loss of each node's view beside
DECOR's SecLDP accountant, by hop distance, and the utility against independent noise at
equal exact privacy (issue 42, item 2).

Usage: python experiments/decor_gossip.py [--cells hypercube:64 grid:64 cycle:64
       random-geometric:64 karate] [--decor 1 3.2] [--sigma 1] [--delta 1e-6] [--seed 1]
       [--out docs/figures/decor_gossip.csv] [--markdown]

Each cell is ``netdp simulate --task sum --protocol gossip --topology G --nodes N --sigma S
--correlated-noise C --accountant pld --target-delta D --seed SEED`` with every ordered
pair kept (``keep_pairs``; every observer up to 200 nodes), Muffliato's step rule at σ.

- ``exact``: the pair's ε of the observer's whole view, given what it knows (its own
  draws and the secrets of its edges; :mod:`netdp.tracking.correlated_view`), exact
  (one Gaussian shift, the pld accountant).
- ``secldp``: DECOR's SecLDP accountant (Allouah et al., ICML 2024; the code released
  with the paper), an eavesdropper who sees every noisy value and knows no secret:
  ``c = σ² (Σ⁻¹)_uu`` with ``Σ = σ² I + σ_cor² L``, per source u, at the same δ.
- ``ratio``: secldp over exact per pair, by hop distance (mean, min); ``below``: the pairs
  whose SecLDP figure is below the exact loss of the observer's view (by more than
  :data:`TIE` relative).
- ``independent``: the same run without secrets (Muffliato, σ), its mean ε.
- Utility at equal exact privacy: the independent σ' whose mean pairwise ε equals DECOR's
  (bisection), and the root mean square over nodes of the noise in the final states,
  ``σ' ‖(A_T)_{v,:}‖`` against DECOR's ``sqrt((A_T Σ A_T)_vv)`` (same T, same bias).

Writes one CSV row per (cell, σ_cor, distance) with the cell's summary repeated, and
prints (``--markdown``: as a table) the cell summaries.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _table import write_csv  # noqa: E402

#: Relative difference below which SecLDP and the exact loss count as equal (the exact
#: figure's rounding margin is about 1e-12 relative).
TIE = 1e-9
FIELDS = ("graph", "nodes", "steps", "sigma", "decor", "distance", "pairs", "exact_mean",
          "exact_max", "secldp_mean", "ratio_mean", "ratio_min", "below", "cell_exact_mean",
          "cell_secldp_mean", "cell_below", "cell_pairs", "independent_mean",
          "equal_sigma", "decor_noise_rmse", "independent_noise_rmse")


def parse_cell(text: str) -> tuple[str, int | None]:
    name, _, size = text.partition(":")
    return name, (int(size) if size else None)


def cell(name: str, nodes: int | None, sigma: float, decor: float, delta: float,
         seed: int) -> list[dict]:
    """The rows of one cell (one per hop distance)."""
    from netdp import simulate
    from netdp.graphs import gossip_matrix as GM
    from netdp.tasks import make_config, task_of
    from netdp.tasks.gossip_sum import final_variances
    from netdp.tracking import gossip
    from netdp.tracking import gossip_message_sum as MS
    from netdp.tracking.gossip import coefficient_epsilon

    params = dict(task="sum", protocol="gossip", topology=name, sigma=sigma, seed=seed,
                  accountants=("pld",), target_delta=delta)
    if nodes is not None:
        params["nodes"] = nodes
    report = simulate(make_config(**params, correlated_noise=decor), keep_pairs=True)
    setup = task_of(report.config).prepare(report.config)
    n, steps = setup.topology.n, setup.steps
    exact = report.pairs
    cov = setup.noise.covariance_matrix(n)
    secldp = coefficient_epsilon(sigma**2 * np.diag(np.linalg.inv(cov)), sigma, delta, "pld")
    hops = GM.hop_distances(setup.plan.adj, np.arange(n))  # [v, u]
    off = ~np.eye(n, dtype=bool)
    eav = np.broadcast_to(secldp[:, None], (n, n))  # [u, v]: the source's figure
    dist = hops.T  # [u, v]
    ratio = eav / exact
    plain = gossip.joint(setup.plan.W, setup.plan.adj, steps)
    coef = plain.matrix()[off]
    independent = coefficient_epsilon(coef, sigma, delta, "pld")
    target = float(exact[off].mean())

    def mean_eps(s: float) -> float:
        return float(coefficient_epsilon(coef, s, delta, "pld").mean())

    lo, hi = math.log(sigma) - 8.0, math.log(sigma) + 8.0
    for _ in range(80):  # mean ε falls with σ'
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if mean_eps(math.exp(mid)) > target else (lo, mid)
    equal = math.exp(hi)
    norms = MS.row_norms(setup.plan.W, steps)[-1]
    decor_rmse = sigma * math.sqrt(float(final_variances(setup).mean()))
    summary = {"graph": name, "nodes": n, "steps": steps, "sigma": sigma, "decor": decor,
               "cell_exact_mean": target, "cell_secldp_mean": float(eav[off].mean()),
               "cell_below": int((eav[off] < exact[off] * (1 - TIE)).sum()),
               "cell_pairs": int(off.sum()), "independent_mean": float(independent.mean()),
               "equal_sigma": equal, "decor_noise_rmse": decor_rmse,
               "independent_noise_rmse": equal * math.sqrt(float(norms.mean()))}
    rows = []
    for d in np.unique(dist[off]).astype(int):
        at = off & (dist == d)
        rows.append({**summary, "distance": d, "pairs": int(at.sum()),
                     "exact_mean": float(exact[at].mean()), "exact_max": float(exact[at].max()),
                     "secldp_mean": float(eav[at].mean()),
                     "ratio_mean": float(ratio[at].mean()), "ratio_min": float(ratio[at].min()),
                     "below": int((eav[at] < exact[at] * (1 - TIE)).sum())})
    return rows


def markdown(rows: list[dict]) -> str:
    """One line per cell: the summary."""
    out = ["| graph | n | T | σ_cor | exact mean ε | SecLDP mean ε | pairs SecLDP < exact | "
           "independent mean ε (σ) | equal-privacy σ' | noise rmse DECOR / independent σ' |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    seen = set()
    for r in rows:
        key = (r["graph"], r["decor"])
        if key in seen:
            continue
        seen.add(key)
        out.append(f"| {r['graph']} | {r['nodes']} | {r['steps']} | {r['decor']:g} | "
                   f"{r['cell_exact_mean']:.3g} | {r['cell_secldp_mean']:.3g} | "
                   f"{r['cell_below']} of {r['cell_pairs']} | {r['independent_mean']:.3g} | "
                   f"{r['equal_sigma']:.3g} | {r['decor_noise_rmse']:.3g} / "
                   f"{r['independent_noise_rmse']:.3g} |")
    return "\n".join(out)


def by_distance(rows: list[dict], graph: str, decor: float) -> str:
    """The ratio of SecLDP to exact by hop distance, for one cell."""
    out = ["| distance | pairs | exact mean ε | SecLDP mean ε | ratio mean | ratio min | "
           "pairs SecLDP < exact |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["graph"] == graph and r["decor"] == decor:
            out.append(f"| {r['distance']} | {r['pairs']} | {r['exact_mean']:.3g} | "
                       f"{r['secldp_mean']:.3g} | {r['ratio_mean']:.3g} | "
                       f"{r['ratio_min']:.3g} | {r['below']} |")
    return "\n".join(out)


def run(cells: list[str], decors: list[float], sigma: float, delta: float,
        seed: int) -> list[dict]:
    rows: list[dict] = []
    for text in cells:
        name, nodes = parse_cell(text)
        for decor in decors:
            rows += cell(name, nodes, sigma, decor, delta, seed)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", nargs="+", default=["hypercube:64", "grid:64", "cycle:64",
                                                    "random-geometric:64", "karate"])
    ap.add_argument("--decor", nargs="+", type=float, default=[1.0, 3.2])
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="docs/figures/decor_gossip.csv")
    ap.add_argument("--markdown", action="store_true", help="print tables for the docs")
    args = ap.parse_args(argv)
    rows = run(args.cells, args.decor, args.sigma, args.delta, args.seed)
    write_csv(args.out, rows, FIELDS)
    print(markdown(rows))
    if args.markdown:
        for text in args.cells:
            for decor in args.decor:
                print(f"\n{text}, σ_cor = {decor:g}\n")
                print(by_distance(rows, parse_cell(text)[0], decor))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
