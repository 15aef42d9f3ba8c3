"""Muffliato on the hypercube (NeurIPS 2022): pairwise Rényi loss of gossip averaging by
hop distance, exact and as the paper and its published script accounted it.

Usage: python experiments/muffliato_hypercube.py [--dim 11] [--sigma 1] [--alpha 2]
       [--steps T] [--out out/muffliato_hypercube]

Setting (spec network-dp.md §3.1): hypercube Q_d (n = 2^d nodes), Metropolis weights
(``W_uv = 1/(d + 1)`` on edges), every node adds ``N(0, σ²)`` once (σ in units of the
sensitivity Δ), then T synchronous gossip steps, T from the rule
(:func:`netdp.graphs.gossip_matrix.default_steps`; d = 11, σ = 1: gap 1/6, T = 19). Observer v
sees its neighbours' states at t = 0..T. Every number is a coefficient ``c`` of the
Rényi divergence ``D_α = α Δ²/(2σ²) · c``: ``c`` is the loss in units of the LDP level
(one Gaussian release, ``c = 1``), and ``α/(2σ²) · c`` is the divergence in nats (at
σ = 1, α = 2 the two are the same numbers). Tables show ``min(c, 1)`` (every view is a
post-processing of ``x_u + η_u``: no pair loses more than the LDP level); the CSV also has
the uncapped sums.

Columns, per hop distance k from the source u to the observer v (the hypercube is
vertex-transitive and Metropolis weights are invariant under its automorphisms, so one
node stands for all: the ``transitive`` paths of :mod:`netdp.tracking.gossip`, seconds):

(a) ``joint``: the exact divergence of v's whole view (:func:`~netdp.tracking.gossip.joint`),
    with the closed form ``d / C(d, k)`` for 1 <= k <= d - 1 and 1 at the antipode
    (valid for T >= d; ``tests/privacy/test_gossip.py`` proves it). The same for the
    accelerated run: its states span the same Krylov space.
(b) ``sum``: the paper's per-message sum over t = 0..T (spec §3.1, "t = 0 included"),
    ``Σ_t Σ_{w ∈ N(v)} (W^t)_{wu}² / ‖(W^t)_{w,:}‖²``
    (:func:`~netdp.tracking.gossip_message_sum.message_sum`).
    Not an upper bound on (a): the messages share their noise.
(c) ``sum 1..T``: the off-by-one of the published script, T terms instead of T + 1. The
    spec's "(t = 0 included)" names the slip: the t = 0 term is dropped. That term is 1
    for the neighbours of u (they receive ``x_u + η_u`` itself) and 0 elsewhere, so (c) is
    (b) minus 1 at distance 1 and equal to (b) beyond; capped at 1, the two agree (the
    uncapped figures are in the CSV). The other way to sum T terms, t = 0..T-1, is in the
    CSV as ``sum_0_to_Tm1``: it lowers every distance a little.
(d) accelerated gossip (Chebyshev, γ from the gap): ``accel P_t``, the sum with the
    polynomial actually applied, ``A_t = P_t(W)`` (the spec's accounting), against
    ``accel W^t``, the sum with ``W^t`` in place of ``P_t(W)`` (the other published slip;
    it is (b)'s numbers, attributed to the accelerated run).

Writes ``muffliato_hypercube.csv`` (one row per distance and a final ``all`` row, the
mean over all ordered pairs) and ``muffliato_hypercube.png`` into ``--out``.
"""

from __future__ import annotations

import argparse
import csv
import math
import time
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from netdp.graphs import gossip_matrix as GM
from netdp.graphs import topologies as topology
from netdp.report.figures import COLORS, LDP_STYLE, MARKERS, save
from netdp.tracking import gossip as G
from netdp.tracking import gossip_message_sum as MS

SHOWN = (("joint", "(a) joint (exact)"), ("closed_form", "d/C(d,k)"),
         ("sum", "(b) sum 0..T"), ("sum_1_to_T", "(c) sum 1..T"),
         ("accel_poly", "(d) accel P_t"), ("accel_wt", "(d) accel W^t"))


def compute(dim: int, sigma: float, steps: int | None = None) -> dict:
    """Every coefficient by distance (uncapped ``*_raw`` and capped), and the setting."""
    n = 2**dim
    start = time.perf_counter()
    topo = topology.build("hypercube", n)
    W = GM.metropolis(topo)
    adj = GM.adjacency(topo)
    gap = GM.spectral_gap(W)
    T = steps if steps is not None else GM.default_steps(gap, sigma, n)
    gamma = GM.chebyshev_gamma(gap)
    joint = G.joint(W, adj, T, transitive=True)
    plain = MS.message_sum(W, adj, T, transitive=True)
    shorter = MS.message_sum(W, adj, T - 1, transitive=True) if T >= 1 else None
    accel = MS.message_sum(W, adj, T, accelerated=True, gamma=gamma, transitive=True)
    seconds = time.perf_counter() - start
    u = int(plain.nodes[0])
    dist = GM.hop_distances(adj, [u])[0].astype(int)
    assert int(joint.nodes[0]) == u
    raw = {
        "joint": joint.values[0],
        "sum": plain.values[0],
        "sum_1_to_T": plain.values[0] - (dist == 1),  # the t = 0 term: 1 on N(u), else 0
        "sum_0_to_Tm1": (shorter.values[0] if shorter is not None
                         else np.zeros(n)),
        "accel_poly": accel.values[0],
        "accel_wt": plain.values[0],
    }
    rows = []
    for k in range(1, dim + 1):
        at = dist == k
        row: dict = {"distance": k, "pairs_per_node": int(at.sum())}
        for name, values in raw.items():
            row[f"{name}_raw"] = float(values[at].mean())
            row[name] = float(np.minimum(values[at], 1.0).mean())
        row["closed_form"] = (min(1.0, dim / math.comb(dim, k)) if dim <= T else math.nan)
        rows.append(row)
    total = n - 1
    mean_row: dict = {"distance": "all", "pairs_per_node": total}
    for key in rows[0]:
        if key not in ("distance", "pairs_per_node"):
            mean_row[key] = sum(r[key] * r["pairs_per_node"] for r in rows) / total
    return {"dim": dim, "n": n, "sigma": sigma, "gap": gap, "steps": T, "gamma": gamma,
            "margin": joint.margin, "seconds": seconds, "rows": rows, "mean": mean_row}


def table(result: dict, alpha: float) -> str:
    """The printed table: capped coefficients (units of LDP), then nats at α."""
    scale = alpha / (2.0 * result["sigma"] ** 2)
    head = f"{'k':>4} {'pairs':>6}" + "".join(f"{label:>18}" for _, label in SHOWN)
    lines = [head]
    for row in [*result["rows"], result["mean"]]:
        cells = "".join(f"{row[key]:>18.4g}" for key, _ in SHOWN)
        lines.append(f"{row['distance']!s:>4} {row['pairs_per_node']:>6}{cells}")
    lines.append(f"nats at alpha = {alpha:g}: multiply by alpha / (2 sigma^2) = {scale:.4g}")
    lines += ["", "uncapped message sums (the cap at 1 hides the off-by-one, "
              "which only changes distance 1):",
              f"{'k':>4}" + "".join(f"{label:>16}" for label in (
                  "(b) 0..T", "(c) 1..T", "0..T-1", "(d) P_t"))]
    for row in [*result["rows"], result["mean"]]:
        lines.append(f"{row['distance']!s:>4}" + "".join(
            f"{row[key]:>16.4g}" for key in ("sum_raw", "sum_1_to_T_raw",
                                              "sum_0_to_Tm1_raw", "accel_poly_raw")))
    return "\n".join(lines)


def write_csv(path: Path, result: dict, alpha: float) -> None:
    scale = alpha / (2.0 * result["sigma"] ** 2)
    keys = [k for k in result["rows"][0] if k not in ("distance", "pairs_per_node")]
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["dim", "n", "sigma", "alpha", "steps", "distance", "pairs_per_node",
                         *keys, *(f"{k}_nats" for k in keys if not k.endswith("_raw"))])
        for row in [*result["rows"], result["mean"]]:
            writer.writerow([result["dim"], result["n"], result["sigma"], alpha,
                             result["steps"], row["distance"], row["pairs_per_node"],
                             *(f"{row[k]:.10g}" for k in keys),
                             *(f"{row[k] * scale:.10g}" for k in keys
                               if not k.endswith("_raw"))])


def figure(result: dict, alpha: float) -> Figure:
    """Two panels, capped coefficients by distance, log y: plain gossip (joint, sum,
    the off-by-one) and accelerated (P_t vs W^t, with the joint)."""
    rows = result["rows"]
    k = np.array([r["distance"] for r in rows])
    fig = Figure(figsize=(11.5, 4.6), layout="constrained")
    left, right = fig.subplots(1, 2, sharey=True)
    panels = (
        (left, "plain gossip", (("joint", "(a) exact joint view", "-"),
                                ("sum", "(b) per-message sum, t = 0..T (paper)", "--"),
                                ("sum_1_to_T", "(c) sum t = 1..T (script's off-by-one)",
                                 (0, (1, 1))))),
        (right, "accelerated gossip (Chebyshev)", (
            ("joint", "(a) exact joint view (same as plain)", "-"),
            ("accel_poly", "(d) sum with P_t(W) (applied)", "--"),
            ("accel_wt", "(d) sum with W^t (script's slip)", (0, (5, 1, 1, 1))))),
    )
    for ax, name, series in panels:
        for i, (key, label, style) in enumerate(series):
            ax.plot(k, [r[key] for r in rows], color=COLORS[i], marker=MARKERS[i],
                    linestyle=style, linewidth=1.6, markersize=5, label=label,
                    markerfacecolor="white" if key == "sum_1_to_T" else COLORS[i])
        if name == "plain gossip" and result["steps"] >= result["dim"]:
            ax.plot(k, [r["closed_form"] for r in rows], linestyle="none", marker="x",
                    color="0.3", markersize=8, label="closed form d / C(d, k)")
        nats = alpha / (2 * result["sigma"] ** 2)
        ax.axhline(1.0, color=COLORS[4], linestyle=LDP_STYLE, linewidth=1.6,
                   label=f"LDP level ({nats:.3g} nat{'' if nats == 1 else 's'})")
        ax.set_yscale("log")
        low = min(r[key] for r in rows for key in ("joint", "sum", "accel_poly"))
        ax.set_ylim(10.0 ** (math.floor(math.log10(max(low, 1e-12))) - 1), 1.5)
        ax.set_xticks(k)
        ax.set_xlabel("hop distance k from source u to observer v")
        ax.set_title(name, fontsize="medium")
        ax.grid(True, color="0.88", linewidth=0.6)
        ax.legend(fontsize="small", framealpha=0.9, loc="lower left")
    left.set_ylabel(f"mean Rényi loss, units of the LDP level (= nats at α = {alpha:g}, "
                    f"σ = {result['sigma']:g})" if alpha / (2 * result["sigma"] ** 2) == 1
                    else "mean Rényi loss, units of the LDP level")
    fig.suptitle(f"Muffliato, hypercube d = {result['dim']} (n = {result['n']}), Metropolis, "
                 f"σ = {result['sigma']:g}, T = {result['steps']}: pairwise loss by "
                 "distance (capped at LDP)", fontsize="medium")
    return fig


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dim", type=int, default=11, help="hypercube dimension d (n = 2^d)")
    parser.add_argument("--sigma", type=float, default=1.0,
                        help="noise std in units of the sensitivity (default 1)")
    parser.add_argument("--alpha", type=float, default=2.0, help="Rényi order (default 2)")
    parser.add_argument("--steps", type=int, default=None,
                        help="gossip steps T (default: the rule of spec §3.1)")
    parser.add_argument("--out", type=Path, default=Path("out/muffliato_hypercube"))
    args = parser.parse_args(argv)
    if args.dim < 2 or args.sigma <= 0 or args.alpha <= 1:
        parser.error("needs --dim >= 2, --sigma > 0, --alpha > 1")
    args.out.mkdir(parents=True, exist_ok=True)
    result = compute(args.dim, args.sigma, args.steps)
    print(f"hypercube d = {result['dim']}, n = {result['n']}, Metropolis, sigma = "
          f"{result['sigma']:g}, alpha = {args.alpha:g}: gap = {result['gap']:.6f}, T = "
          f"{result['steps']}, gamma = {result['gamma']:.6f}; accounting in "
          f"{result['seconds']:.2f} s (rank cut: kept >= {result['margin'][0]:.2g}, "
          f"dropped <= {result['margin'][1]:.2g})")
    print("mean pairwise loss by distance, units of the LDP level, capped at 1:")
    print(table(result, args.alpha))
    write_csv(args.out / "muffliato_hypercube.csv", result, args.alpha)
    save(figure(result, args.alpha), args.out / "muffliato_hypercube.png")
    print(f"wrote {args.out}/muffliato_hypercube.csv, muffliato_hypercube.png")
    return result


if __name__ == "__main__":
    main()
