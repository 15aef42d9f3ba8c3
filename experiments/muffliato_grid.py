"""Muffliato on the 2-D grid (NeurIPS 2022): pairwise Rényi loss of gossip averaging by hop
distance from a centre source and from a corner source, exact and as the paper summed it.

Usage: python experiments/muffliato_grid.py [--side 45] [--sigma 1] [--alpha 2]
       [--steps T] [--centre sample|exact] [--corner sample|exact|skip]
       [--per-distance 2]
       [--out out/muffliato_grid]

Setting (spec network-dp.md §3.1): the grid ``side × side`` (45 × 45, n = 2025), 4-neighbour
lattice without wrap-around (``--topology grid``; node ``i · side + j`` is the point
``(i, j)``), Metropolis weights, σ = 1 in units of the sensitivity Δ, α = 2, T from the rule
(:func:`netdp.graphs.gossip_matrix.default_steps`; here gap 9.85e-4, T = 243). Every number is
the coefficient ``c`` of ``D_α = α Δ²/(2σ²) · c``, capped at 1: the loss in units of the LDP
level, and also the Rényi divergence in nats at σ = 1, α = 2.

What each number is: for a source u (the centre ``(side // 2, side // 2)``, node 1012 on
45 × 45, or the corner ``(0, 0)``, node 0) and every observer v at hop distance k,

``joint``
    ``c[u, v] = ‖Π_v e_u‖²``, the exact divergence of v's whole view
    (:func:`~netdp.tracking.gossip.joint`). ``joint`` works per observer: it returns the
    row of an observer v (its loss about every u), at the cost of one SVD of its view
    (about 0.3 s here at T = 243). The losses of one source u towards every v are the
    column u of all observers' rows, so they need every observer; the grid is not
    vertex-transitive, so the ``transitive`` path does not apply. The exact cheap way is
    the grid's own symmetry: its 8 automorphisms (rotations, reflections) map W to
    itself, so ``c[u, v] = c[g u, g v]`` for each of them, and the automorphisms that fix
    u split the observers into orbits with one value each. Only one observer per orbit
    is computed (``joint(..., observers=representatives)``) and its value is copied to
    its orbit: 275 observers for the centre (all 8 symmetries fix it), 1,035 for the
    corner (only the diagonal reflection fixes it). ``--centre exact`` and ``--corner
    exact`` do that (about 0.3 s an observer at T = 243 on 2 cores: 1.4 and 5 minutes;
    at T = 243 no view's rank is certified, so every value is the sound 1).
    ``sample`` (the default for both, 77 s in all) computes ``--per-distance``
    orbit representatives per distance, spread evenly from the axis (centre) or the edge
    (corner) to the diagonal, extremes included, and reports their plain mean, min and
    max (labelled "sampled": an estimate, not the mean over all the pairs at that
    distance). ``--corner skip`` leaves the corner's joint loss out.
``sum``
    the paper's per-message sum over t = 0..T (spec §3.1), for the source's row:
    ``message_sum(..., sources=[u])``, exact for every observer at once (the row norms of
    ``W^t`` are computed once for all nodes).

Per distance: the number of observers (pairs with this source), and the mean, min and max
of ``min(c, 1)`` over them. Writes ``muffliato_grid.csv`` (source, method, distance,
observers, mean, min, max, nats_mean) and ``muffliato_grid.png`` (one panel per source)
into ``--out``.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from netdp.graphs import gossip_matrix as GM
from netdp.graphs import topologies as topology
from netdp.report.figures import COLORS, LDP_STYLE, MARKERS, save
from netdp.tracking import gossip as G
from netdp.tracking import gossip_message_sum as MS

SHOWN_K = (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 35, 40, 44, 50, 60, 70, 80, 88)


def symmetries(side: int) -> list:
    """The 8 automorphisms of the square grid as maps of ``(i, j)``."""
    m = side - 1
    return [lambda i, j: (i, j), lambda i, j: (j, i), lambda i, j: (m - i, j),
            lambda i, j: (i, m - j), lambda i, j: (m - i, m - j), lambda i, j: (m - j, m - i),
            lambda i, j: (j, m - i), lambda i, j: (m - j, i)]


def orbits(side: int, source: tuple[int, int]) -> np.ndarray:
    """``rep[v]``: the representative (smallest id) of v's orbit under the automorphisms
    that fix ``source`` (node id ``i · side + j``)."""
    fixing = [g for g in symmetries(side) if g(*source) == source]
    n = side * side
    rep = np.empty(n, dtype=np.int64)
    for v in range(n):
        i, j = divmod(v, side)
        rep[v] = min(a * side + b for a, b in (g(i, j) for g in fixing))
    return rep


def summarise(values: np.ndarray, dist: np.ndarray, observers: np.ndarray) -> list[dict]:
    """Per distance >= 1 over the given observers: count, mean, min, max of min(c, 1)."""
    c = np.minimum(values, 1.0)
    out = []
    for k in np.unique(dist[observers]):
        if k < 1:
            continue
        at = observers[dist[observers] == k]
        out.append({"distance": int(k), "observers": int(at.size), "mean": float(c[at].mean()),
                    "min": float(c[at].min()), "max": float(c[at].max())})
    return out


def spread(ring: np.ndarray, side: int, count: int) -> list[int]:
    """``count`` nodes of ``ring`` evenly spread by ``|i - j|`` (from the axis or edge to the
    diagonal), extremes included."""
    ii, jj = np.divmod(ring, side)
    order = ring[np.lexsort((ring, -np.abs(ii - jj)))]
    if len(order) <= count:
        return order.tolist()
    picks = np.unique(np.round(np.linspace(0, len(order) - 1, count)).astype(int))
    return order[picks].tolist()


def compute(side: int, sigma: float, steps: int | None, centre_mode: str, corner: str,
            per_distance: int) -> dict:
    n = side * side
    start = time.perf_counter()
    topo = topology.build("grid", n)
    assert topo.labels is not None and topo.labels[1] == (0, 1)  # id = i * side + j
    W = GM.metropolis(topo)
    adj = GM.adjacency(topo)
    gap = GM.spectral_gap(W)
    T = steps if steps is not None else GM.default_steps(gap, sigma, n)
    centre, corner_node = (side // 2) * side + side // 2, 0
    sources = {"centre": centre, "corner": corner_node}
    msum = MS.message_sum(W, adj, T, sources=[centre, corner_node])
    seconds = {"sum": time.perf_counter() - start}
    dist = {name: GM.hop_distances(adj, [u])[0].astype(int) for name, u in sources.items()}
    everyone = np.arange(n)
    out: dict = {"side": side, "n": n, "sigma": sigma, "gap": gap, "steps": T,
                 "sources": sources, "rows": {}, "margins": {}, "computed": {}}
    for i, name in enumerate(sources):
        out["rows"][(name, "sum")] = summarise(msum.values[i], dist[name], everyone)
    for name, u in sources.items():
        mode = centre_mode if name == "centre" else corner
        if mode == "skip":
            continue
        begin = time.perf_counter()
        rep = orbits(side, divmod(u, side))
        if mode == "sample":
            chosen = []
            for k in range(1, int(dist[name].max()) + 1):
                ring = np.flatnonzero((dist[name] == k) & (rep == everyone))
                chosen += spread(ring, side, per_distance)
            observers = np.array(sorted(chosen))
            label = "joint (sampled)"
        else:
            observers = np.flatnonzero((rep == everyone) & (everyone != u))
            label = "joint"
        joint = G.joint(W, adj, T, observers=observers)
        column = np.full(n, np.nan)
        column[observers] = joint.values[:, u]
        if label == "joint":  # exact: copy each representative's value to its orbit
            column = column[rep]
            column[u] = np.nan
            keep = everyone[everyone != u]
        else:
            keep = observers
        out["rows"][(name, label)] = summarise(column, dist[name], keep)
        out["margins"][name] = joint.margin
        out["computed"][name] = int(observers.size)
        seconds[f"joint {name}"] = time.perf_counter() - begin
    if side % 2 == 1:  # the symmetry the centre's orbits rely on, measured
        m = side - 1
        pairs = [((side // 2) * side, side // 2), (m * side + side // 2, (side // 2) * side + m)]
        nodes = [v for pair in pairs for v in pair]  # (c, 0) ~ (0, c), (m, c) ~ (c, m)
        check = G.joint(W, adj, T, observers=nodes).values[:, centre]
        out["symmetry_gap"] = float(max(abs(check[0] - check[1]), abs(check[2] - check[3])))
        out["symmetry_values"] = check.tolist()
    out["seconds"] = seconds
    return out


def table(result: dict, alpha: float) -> str:
    scale = alpha / (2.0 * result["sigma"] ** 2)
    lines = []
    for name, u in result["sources"].items():
        found = {label: rows for (src, label), rows in result["rows"].items() if src == name}
        i, j = divmod(u, result["side"])
        lines.append(f"source {name} ({i}, {j}) = node {u}: mean [min, max] of min(c, 1) "
                     "by distance")
        labels = list(found)
        lines.append(f"{'k':>4} {'obs.':>6}" + "".join(f"{lab:>30}" for lab in labels))
        by_k = {lab: {r["distance"]: r for r in rows} for lab, rows in found.items()}
        ks = sorted(by_k["sum"])
        shown = ks if len(ks) <= 20 else [k for k in ks if k in SHOWN_K or k == ks[-1]]
        for k in shown:
            cells = ""
            for lab in labels:
                r = by_k[lab].get(k)
                cells += (f"{r['mean']:>12.4g} [{r['min']:.3g}, {r['max']:.3g}]".rjust(30)
                          if r else f"{'':>30}")
            lines.append(f"{k:>4} {by_k['sum'][k]['observers']:>6}" + cells)
        lines.append("")
    lines.append(f"nats at alpha = {alpha:g}: multiply by alpha / (2 sigma^2) = {scale:.4g}")
    return "\n".join(lines)


def write_csv(path: Path, result: dict, alpha: float) -> None:
    scale = alpha / (2.0 * result["sigma"] ** 2)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["side", "n", "sigma", "alpha", "steps", "source", "node", "method",
                         "distance", "observers", "mean", "min", "max", "nats_mean"])
        for (name, label), rows in result["rows"].items():
            for r in rows:
                writer.writerow([result["side"], result["n"], result["sigma"], alpha,
                                 result["steps"], name, result["sources"][name], label,
                                 r["distance"], r["observers"], f"{r['mean']:.10g}",
                                 f"{r['min']:.10g}", f"{r['max']:.10g}",
                                 f"{r['mean'] * scale:.10g}"])


def figure(result: dict, alpha: float) -> Figure:
    fig = Figure(figsize=(11.5, 4.6), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    styles = {"joint": ("-", 0), "joint (sampled)": ("-", 0), "sum": ("--", 1)}
    for ax, (name, u) in zip(axes, result["sources"].items(), strict=True):
        i, j = divmod(u, result["side"])
        for (src, label), rows in result["rows"].items():
            if src != name:
                continue
            style, c = styles[label]
            k = np.array([r["distance"] for r in rows])
            mean = np.array([r["mean"] for r in rows])
            text = {"joint": "exact joint view (mean, min–max)",
                    "joint (sampled)": "exact joint view, sampled observers (mean, "
                                       "min–max)",
                    "sum": "per-message sum t = 0..T (paper; mean, min–max)"}[label]
            ax.plot(k, mean, color=COLORS[c], linestyle=style, marker=MARKERS[c],
                    markersize=3.5, linewidth=1.6, label=text)
            ax.fill_between(k, [r["min"] for r in rows], [r["max"] for r in rows],
                            color=COLORS[c], alpha=0.15, linewidth=0)
        ax.axhline(1.0, color=COLORS[4], linestyle=LDP_STYLE, linewidth=1.6, label="LDP level")
        ax.set_yscale("log", nonpositive="clip")
        low = min(r["mean"] for (src, _), rs in result["rows"].items() if src == name
                  for r in rs if r["mean"] > 0)
        ax.set_ylim(max(low, 1e-12) / 3, 1.6)
        ax.set_xlabel(f"hop distance k from the source ({i}, {j}) to the observer")
        ax.set_title(f"source: {name} ({i}, {j})", fontsize="medium")
        ax.grid(True, color="0.88", linewidth=0.6)
        ax.legend(fontsize="small", framealpha=0.9, loc="lower left")
    scale = alpha / (2.0 * result["sigma"] ** 2)
    axes[0].set_ylabel("Rényi loss, units of the LDP level" + (
        f" (= nats at α = {alpha:g})" if scale == 1 else ""))
    fig.suptitle(f"Muffliato, grid {result['side']} × {result['side']} (n = {result['n']}), "
                 f"Metropolis, σ = {result['sigma']:g}, T = {result['steps']}: loss of one "
                 "source towards each observer, capped at LDP", fontsize="medium")
    return fig


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=45, help="grid side (n = side^2; 45)")
    parser.add_argument("--sigma", type=float, default=1.0,
                        help="noise std in units of the sensitivity (default 1)")
    parser.add_argument("--alpha", type=float, default=2.0, help="Rényi order (default 2)")
    parser.add_argument("--steps", type=int, default=None,
                        help="gossip steps T (default: the rule of spec §3.1)")
    parser.add_argument("--centre", choices=("sample", "exact"), default="sample",
                        help="joint loss from the centre: sampled observers (default) or "
                        "all (exact, by orbits: about 2.5 minutes at side 45)")
    parser.add_argument("--corner", choices=("sample", "exact", "skip"), default="sample",
                        help="joint loss from the corner: sampled observers (default), all "
                        "(exact, by orbits: about 9 minutes at side 45) or none")
    parser.add_argument("--per-distance", type=int, default=2,
                        help="sample: observers per distance (default 2)")
    parser.add_argument("--out", type=Path, default=Path("out/muffliato_grid"))
    args = parser.parse_args(argv)
    if args.side < 3 or args.sigma <= 0 or args.alpha <= 1 or args.per_distance < 1:
        parser.error("needs --side >= 3, --sigma > 0, --alpha > 1, --per-distance >= 1")
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    result = compute(args.side, args.sigma, args.steps, args.centre, args.corner,
                     args.per_distance)
    timing = ", ".join(f"{k} {v:.1f} s" for k, v in result["seconds"].items())
    print(f"grid {args.side} x {args.side}, n = {result['n']}, Metropolis, sigma = "
          f"{args.sigma:g}, alpha = {args.alpha:g}: gap = {result['gap']:.4g}, T = "
          f"{result['steps']}; joint observers computed {result['computed']}; {timing}")
    if "symmetry_gap" in result:
        print(f"  symmetry check: observers mirrored through the centre get "
              f"{', '.join(f'{x:.6g}' for x in result['symmetry_values'])} (largest "
              f"difference {result['symmetry_gap']:.2g}; 0 in exact arithmetic: the "
              "numerical accuracy of joint here)")
    for name, (kept, dropped) in result["margins"].items():
        print(f"  rank cut ({name}): smallest kept singular value (relative) {kept:.3g}, "
              f"largest dropped {dropped:.3g}")
    print(table(result, args.alpha))
    write_csv(args.out / "muffliato_grid.csv", result, args.alpha)
    save(figure(result, args.alpha), args.out / "muffliato_grid.png")
    print(f"wrote {args.out}/muffliato_grid.csv, muffliato_grid.png in "
          f"{time.perf_counter() - start:.0f} s")
    return result


if __name__ == "__main__":
    main()
