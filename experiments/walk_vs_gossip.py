"""Gossip averaging against a random walk on a random geometric graph: pairwise Rényi loss
by hop distance, and the distance where one overtakes the other (spec network-dp.md §3.3).

Usage: python experiments/walk_vs_gossip.py [--nodes 500] [--seed 1] [--sigma 1]
       [--alpha 2] [--steps T] [--extra-steps 5 10] [--walks 200] [--contributions 1]
       [--out out/walk_vs_gossip]

The graph: ``--topology random-geometric`` on ``--nodes`` nodes, drawn from
``seeding.seed_sequence(seed, "topology")`` (the graph of ``netdp simulate --topology
random-geometric -n N --seed S``).

The fair comparison, as chosen here:

- the same noise per contribution: σ in units of the sensitivity Δ of one contribution
  (gossip: a value in a range of width Δ; walk: a clipped gradient, Δ = 2L);
- the same number of contributions per node: one. Gossip adds noise once per node; the
  walk takes T_walk = n steps (``--contributions K`` gives K each: K gossip rounds with
  fresh noise, whose divergences add up, against a walk of K n steps);
- the same measure: Rényi divergences at the same order α, not (ε, δ). Both are Gaussian
  mechanisms, linear in α, so every number is given as the coefficient ``c`` of
  ``D_α = α Δ²/(2σ²) · c``: the loss in units of the LDP level of one contribution, and
  also the divergence in nats when α/(2σ²) = 1 (σ = 1, α = 2, the default). The ratio of
  gossip to walk, hence the crossing, does not depend on α or σ (only T does, through
  the rule).

Gossip (Muffliato, spec §3.1): Metropolis weights, T from the rule
(:func:`netdp.graphs.gossip_matrix.default_steps`) unless ``--steps``; every ordered pair
(``dense`` paths): ``joint``, the exact divergence of the observer's whole view (the
sound figure, :func:`~netdp.tracking.gossip.joint`), and ``sum``, the paper's per-message
sum over t = 0..T (:func:`~netdp.tracking.gossip_message_sum.message_sum`; not an upper bound), both
capped at 1. ``--extra-steps`` repeats both at other T (cheaper, further from consensus).
Pairs more than T + 1 hops apart have ``joint = 0`` exactly (no message the observer sees
depends on the source; the script checks it). An observer whose view's rank floating
point cannot certify (no gap at the rank cut) gets the sound value, the LDP level for
every node within T + 1 hops; the script prints how many observers that was and the
margin of the cut (smallest kept, largest dropped singular value, relative).

Walk (spec §3.2, the sgd task's network regime): Metropolis walk (the rule ``auto`` picks
on an irregular graph), ``--walks`` independent walks of T_walk steps drawn by the vector
engine from ``seeding.generator(seed, "walk", r, 0)``. ``walk`` is the per-pair coefficient
of the sgd tracker, ``C[u, v] = Σ 1/j`` over u's updates, j the steps until v next holds
the model (:func:`netdp.tracking.sgd.pair_coefficients`; divergence ``α (2L)² C/(2σ²)``),
averaged over the walks; ``icml`` is its closed form (ICML 2024,
:func:`netdp.tracking.graph_walk.icml_coefficients`). Not capped (they stay far below 1).

Per hop distance: pairs, and the mean, min and max over the pairs (for the walk: of the
walk-averaged coefficient). The crossing: the first distance at which the gossip mean
falls below the walk's, interpolated linearly in log(loss) between the two integer
distances around it; "none" when one stays above the other at every distance.

Writes ``walk_vs_gossip.csv`` (steps, distance, pairs, then mean/min/max of joint, sum,
walk, icml) and ``walk_vs_gossip.png`` into ``--out``.
"""

from __future__ import annotations

import argparse
import csv
import math
import time
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from netdp import engine
from netdp.core import seeding
from netdp.engine.routing import Router, resolve_walk
from netdp.graphs import gossip_matrix, walk_kind
from netdp.graphs import topologies as topology
from netdp.report.figures import COLORS, LDP_STYLE, MARKERS, save
from netdp.tracking import gossip as G
from netdp.tracking import gossip_message_sum, graph_walk
from netdp.tracking.sgd import pair_coefficients

MEASURES = ("joint", "sum", "walk", "icml")


def by_distance(matrix: np.ndarray, dist: np.ndarray) -> dict[int, dict]:
    """Per distance >= 1: pairs, mean, min, max of ``matrix[u, v]`` (u != v)."""
    off = ~np.eye(matrix.shape[0], dtype=bool)
    out = {}
    for k in np.unique(dist[off]):
        at = off & (dist == k)
        vals = matrix[at]
        out[int(k)] = {"pairs": int(at.sum()), "mean": float(vals.mean()),
                       "min": float(vals.min()), "max": float(vals.max())}
    return out


def crossing(gossip: dict[int, float], walk: dict[int, float]) -> tuple[float | None, str]:
    """Where the gossip curve first falls below the walk's (log-linear interpolation)."""
    ks = sorted(set(gossip) & set(walk))
    above = [gossip[k] > walk[k] for k in ks]
    if all(above):
        return None, "none: gossip above the walk at every distance"
    if not any(above):
        return None, "none: gossip below the walk at every distance"
    if not above[0]:
        return None, "none: gossip starts below the walk"
    i = above.index(False)
    k0, k1 = ks[i - 1], ks[i]
    g0, g1, w0, w1 = gossip[k0], gossip[k1], walk[k0], walk[k1]
    tiny = 1e-300
    d0 = math.log(max(g0, tiny)) - math.log(max(w0, tiny))
    d1 = math.log(max(g1, tiny)) - math.log(max(w1, tiny))
    at = k0 + (k1 - k0) * d0 / (d0 - d1) if d0 != d1 else float(k1)
    return at, f"{at:.2f} (between distances {k0} and {k1})"


def walk_coefficients(topo, steps: int, walks: int, seed: int) -> tuple[np.ndarray, str]:
    """Mean over ``walks`` walks of the sgd tracker's coefficients, and the walk rule."""
    rule = resolve_walk(topo, "auto")
    router = Router(topo, rule)
    total = np.zeros((topo.n, topo.n))
    for r in range(walks):
        trace = engine.walk("vector", router, steps, [seeding.generator(seed, "walk", r, 0)])
        total += pair_coefficients(trace.holders[0], topo.n)
    return total / walks, rule


def gossip_losses(W, adj, steps: int, contributions: int) -> tuple[dict, tuple, int, int]:
    joint = G.joint(W, adj, steps)
    msum = gossip_message_sum.message_sum(W, adj, steps)
    return ({"joint": contributions * joint.matrix(), "sum": contributions * msum.matrix()},
            joint.margin, joint.uncertified, joint.full_rank)


def compute(nodes: int, seed: int, sigma: float, steps: int | None, extra: list[int],
            walks: int, contributions: int) -> dict:
    seconds = {}
    start = time.perf_counter()
    topo = topology.build("random-geometric", nodes,
                          seed=seeding.seed_sequence(seed, "topology"))
    n = topo.n
    W = gossip_matrix.metropolis(topo)
    adj = gossip_matrix.adjacency(topo)
    gap = gossip_matrix.spectral_gap(W)
    T = steps if steps is not None else gossip_matrix.default_steps(gap, sigma, n)
    dist = topology.hop_distances(topo)
    deg = np.diff(adj.indptr)
    seconds["graph"] = time.perf_counter() - start
    begin = time.perf_counter()
    walk, rule = walk_coefficients(topo, contributions * n, walks, seed)
    seconds["walks"] = time.perf_counter() - begin
    begin = time.perf_counter()
    P = walk_kind.transition_matrix(topo, rule)
    icml = graph_walk.icml_coefficients(P, contributions * n)
    seconds["icml"] = time.perf_counter() - begin
    walk_rows = {"walk": by_distance(walk, dist), "icml": by_distance(icml, dist)}
    runs = {}
    for t in [T, *[s for s in extra if s != T]]:
        begin = time.perf_counter()
        mats, margin, uncertified, full = gossip_losses(W, adj, t, contributions)
        out_of_reach = dist > t + 1
        if out_of_reach.any() and mats["joint"][out_of_reach].max() != 0.0:
            raise AssertionError("joint gave a loss to a pair out of reach")
        rows = {name: by_distance(m, dist) for name, m in mats.items()}
        cross = {f"{g} vs {w}": crossing({k: r["mean"] for k, r in rows[g].items()},
                                         {k: r["mean"] for k, r in walk_rows[w].items()})
                 for g in ("joint", "sum") for w in ("walk", "icml")}
        runs[t] = {"rows": {**rows, **walk_rows}, "margin": margin, "crossing": cross,
                   "uncertified": uncertified, "full_rank": full,
                   "out_of_reach": int(out_of_reach.sum()),
                   "seconds": time.perf_counter() - begin}
    return {"n": n, "edges": int(adj.nnz // 2), "degree": float(deg.mean()), "seed": seed,
            "sigma": sigma, "gap": gap, "steps": T, "rule": rule, "walks": walks,
            "contributions": contributions, "diameter": int(dist.max()), "runs": runs,
            "seconds": seconds}


def table(result: dict, steps: int) -> str:
    run = result["runs"][steps]
    rows = run["rows"]
    lines = [f"{'k':>3} {'pairs':>7}" + "".join(f"{m + ' mean':>13}" for m in MEASURES)
             + f"{'joint min':>11}{'joint max':>11}"]
    for k in sorted(rows["joint"]):
        lines.append(f"{k:>3} {rows['joint'][k]['pairs']:>7}"
                     + "".join(f"{rows[m][k]['mean']:>13.4g}" for m in MEASURES)
                     + f"{rows['joint'][k]['min']:>11.3g}{rows['joint'][k]['max']:>11.3g}")
    return "\n".join(lines)


def write_csv(path: Path, result: dict) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["n", "seed", "sigma", "contributions", "steps", "distance", "pairs",
                         *(f"{m}_{s}" for m in MEASURES for s in ("mean", "min", "max"))])
        for t, run in result["runs"].items():
            rows = run["rows"]
            for k in sorted(rows["joint"]):
                writer.writerow([result["n"], result["seed"], result["sigma"],
                                 result["contributions"], t, k, rows["joint"][k]["pairs"],
                                 *(f"{rows[m][k][s]:.10g}" for m in MEASURES
                                   for s in ("mean", "min", "max"))])


def figure(result: dict, alpha: float) -> Figure:
    T = result["steps"]
    extra = sorted(t for t in result["runs"] if t != T)
    fig = Figure(figsize=(11.5 if extra else 6.8, 4.8), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True) if extra else [fig.subplots()]
    styles = {"joint": ("-", 0, "gossip, exact joint view"),
              "sum": ("--", 1, "gossip, per-message sum (paper)"),
              "walk": ((0, (5, 1, 1, 1)), 2, "walk, sgd tracker (mean over walks)"),
              "icml": ((0, (1, 1)), 3, "walk, ICML 2024 closed form")}
    rows = result["runs"][T]["rows"]
    ax = axes[0]
    for m in MEASURES:
        style, c, label = styles[m]
        ks = sorted(rows[m])
        ax.plot(ks, [rows[m][k]["mean"] for k in ks], color=COLORS[c], marker=MARKERS[c],
                markersize=4, linestyle=style, linewidth=1.6, label=label,
                markerfacecolor="white" if m in ("icml",) else COLORS[c])
        if m in ("joint", "sum"):  # min-max over pairs (the walk's reaches 0: not drawn)
            ax.fill_between(ks, [rows[m][k]["min"] for k in ks],
                            [rows[m][k]["max"] for k in ks], color=COLORS[c], alpha=0.10,
                            linewidth=0)
    for name, (at, _) in result["runs"][T]["crossing"].items():
        if at is not None and name.endswith("vs walk"):
            g = name.split()[0]
            ax.axvline(at, color=COLORS[styles[g][1]], linestyle=(0, (2, 3)), linewidth=1.0,
                       label=f"crossing, {styles[g][2].split(', ')[1]}: k = {at:.1f}")
    ax.set_title(f"gossip T = {T} (rule) vs walk of {result['contributions'] * result['n']} "
                 "steps", fontsize="medium")
    for ax_extra, t in zip(axes[1:], extra[:1], strict=False):
        ax2 = ax_extra
        for i, tt in enumerate(sorted([T, *extra])):
            r = result["runs"][tt]["rows"]
            ks = sorted(r["joint"])
            ax2.plot(ks, [r["joint"][k]["mean"] for k in ks], color=COLORS[(i + 4) % 8],
                     marker=MARKERS[(i + 4) % 8], markersize=4, linewidth=1.4,
                     label=f"gossip joint, T = {tt}")
        w = result["runs"][t]["rows"]["walk"]
        ks = sorted(w)
        ax2.plot(ks, [w[k]["mean"] for k in ks], color=COLORS[2], marker=MARKERS[2],
                 markersize=4, linestyle=styles["walk"][0], linewidth=1.6,
                 label=styles["walk"][2])
        ax2.set_title("exact joint loss at other T (mean by distance)", fontsize="medium")
    for a in axes:
        a.axhline(float(result["contributions"]), color=COLORS[4], linestyle=LDP_STYLE,
                  linewidth=1.6, label="LDP level")
        a.set_yscale("log", nonpositive="clip")
        a.set_ylim(1e-4, 2.0 * result["contributions"])
        a.set_xlabel("hop distance k from source u to observer v")
        a.grid(True, color="0.88", linewidth=0.6)
        a.legend(fontsize="small", framealpha=0.9, loc="lower left")
    scale = alpha / (2 * result["sigma"] ** 2)
    axes[0].set_ylabel("mean Rényi loss, units of the LDP level of one contribution"
                       + (f"\n(= nats at α = {alpha:g}, σ = {result['sigma']:g})"
                          if scale == 1 else ""))
    fig.suptitle(f"Random geometric graph, n = {result['n']} (mean degree "
                 f"{result['degree']:.1f}, seed {result['seed']}), σ = {result['sigma']:g} "
                 f"per contribution: gossip vs random walk", fontsize="medium")
    return fig


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=500, help="graph size (default 500)")
    parser.add_argument("--seed", type=int, default=1, help="graph and walks (default 1)")
    parser.add_argument("--sigma", type=float, default=1.0,
                        help="noise std per contribution, units of the sensitivity")
    parser.add_argument("--alpha", type=float, default=2.0, help="Rényi order (default 2)")
    parser.add_argument("--steps", type=int, default=None,
                        help="gossip steps T (default: the rule of spec §3.1)")
    parser.add_argument("--extra-steps", type=int, nargs="*", default=[5, 10],
                        help="other gossip T to show (default 5 10; none: --extra-steps)")
    parser.add_argument("--walks", type=int, default=200,
                        help="walks averaged for the empirical walk (default 200)")
    parser.add_argument("--contributions", type=int, default=1,
                        help="contributions per node, both protocols (default 1)")
    parser.add_argument("--out", type=Path, default=Path("out/walk_vs_gossip"))
    args = parser.parse_args(argv)
    if (args.nodes < 10 or args.sigma <= 0 or args.alpha <= 1 or args.walks < 1
            or args.contributions < 1 or any(t < 1 for t in args.extra_steps)):
        parser.error("needs --nodes >= 10, --sigma > 0, --alpha > 1, --walks >= 1, "
                     "--contributions >= 1, --extra-steps >= 1")
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    result = compute(args.nodes, args.seed, args.sigma, args.steps, args.extra_steps,
                     args.walks, args.contributions)
    print(f"random geometric graph, n = {result['n']}, {result['edges']} edges (mean degree "
          f"{result['degree']:.1f}, diameter {result['diameter']}), seed {result['seed']}; "
          f"gossip: Metropolis, gap {result['gap']:.4g}, T = {result['steps']} (rule), sigma "
          f"{args.sigma:g}; walk: {result['rule']}, {result['contributions'] * result['n']} "
          f"steps, {result['walks']} walks")
    print("units: the LDP level of one contribution (alpha Delta^2 / (2 sigma^2)); nats at "
          f"alpha = {args.alpha:g}: times {args.alpha / (2 * args.sigma**2):.4g}")
    for t, run in result["runs"].items():
        kept, dropped = run["margin"]
        print(f"\ngossip T = {t}{' (rule)' if t == result['steps'] else ''}: "
              f"{run['seconds']:.1f} s; rank cut: smallest kept {kept:.3g}, largest "
              f"dropped {dropped:.3g}; {run['uncertified']} of {result['n']} observers "
              f"uncertified, {run['full_rank']} proven full rank (their pairs within T + 1 "
              "hops at the LDP level); "
              f"{run['out_of_reach']} pairs out of reach, all exactly 0")
        print(table(result, t))
        for name, (_, text) in run["crossing"].items():
            print(f"  crossing, gossip {name}: {text}")
    write_csv(args.out / "walk_vs_gossip.csv", result)
    save(figure(result, args.alpha), args.out / "walk_vs_gossip.png")
    timing = ", ".join(f"{k} {v:.1f} s" for k, v in result["seconds"].items())
    print(f"\nwrote {args.out}/walk_vs_gossip.csv, walk_vs_gossip.png in "
          f"{time.perf_counter() - start:.0f} s ({timing})")
    return result


if __name__ == "__main__":
    main()
