"""Reproduce Figure 1 of Cyffers & Bellet (AISTATS 2022): complete graph, real summation.

Usage: python experiments/figure1.py [--out out/figure1] [--max-n 100000 | --quick]
       [--runs 10] [--seed 0] [--eps0 0.1 0.4] [--accountants kov rdp] [--rdp-max-n N]

(a) Theoretical privacy loss vs ``n`` (``eps0 = 0.1``, ``delta = 1e-7``, ``T = 100 n``,
``n`` log-spaced from 1 to 1e10): the LDP and NDP curves of
:data:`netdp.bounds.curves.CURVES` with the Chernoff bound on a node's contributions, the
reference script's variant of it, and fixed contributions.

(b) Empirical pairwise loss vs ``n`` (spec network-dp.md §2.3): ``--runs`` walks of
``T = 100 n`` steps (walk ``r`` drawn from ``seeding.generator(seed, "walk", r, 0)``),
for each ``eps0``: mean over all ordered pairs and runs with the min-max band, from the
``kov`` accountant (the reference method) and the ``rdp`` accountant; the LDP line (mean
over nodes and runs of ``ldp_losses``); and the theoretical NDP curve (Chernoff bound).

Writes ``figure1a.png``, ``figure1b.png``, ``figure1a.csv``, ``figure1b.csv`` into ``--out``.
CSV columns: panel, kind (``curve`` or ``accountant``), name, n, eps0, mean, min, max, q50,
q90, q99, ldp, runs, seconds. A curve's value is in ``mean``; the ``ldp`` accountant row
holds the LDP loss over nodes (mean, min, max); ``seconds`` is the wall time of the row
(for ``ldp``: drawing the walks).
"""

from __future__ import annotations

import argparse
import csv
import math
import time
from pathlib import Path

import matplotlib

from netdp.tracking import loss_summary

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from netdp import engine, mechanisms  # noqa: E402
from netdp.bounds import curves as bounds  # noqa: E402
from netdp.core import seeding
from netdp.graphs import topologies as topology
from netdp.tracking import loss_table as tracker

DELTA, T_PER_NODE = 1e-7, 100
EPS0_A = 0.1
COLUMNS = ("panel", "kind", "name", "n", "eps0", "mean", "min", "max", "q50", "q90", "q99",
           "ldp", "runs", "seconds")
BOUND_STYLE = {"chernoff": ("-", "Chernoff $N_v$"),
               "chernoff-ref-variant": ("--", "reference-script $N_v$ ($3T/2$ in the root)"),
               "fixed": (":", "fixed contributions $N_v = T/n$")}
THEORY_B = "complete-ndp-chernoff"


def grid(max_n: int) -> list[int]:
    """The 1-2-5 grid from 5 up to ``max_n`` (5, 10, 20, 50, 100, ...)."""
    out, scale = [], 1
    while True:
        for m in (1, 2, 5):
            if 5 <= m * scale <= max_n:
                out.append(m * scale)
        if scale > max_n:
            return out
        scale *= 10


def _row(panel: str, kind: str, name: str, n: float, eps0: float, **values) -> dict:
    row = dict.fromkeys(COLUMNS, "")
    row.update(panel=panel, kind=kind, name=name, n=n, eps0=eps0, **values)
    return row


def _write_csv(path: Path, rows: list[dict]) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def panel_a(out: Path) -> None:
    """Theoretical curves vs n: figure1a.png and figure1a.csv."""
    start = time.perf_counter()
    ns = np.logspace(0, 10, 61)
    names = [f"complete-{kind}-{bound}" for kind in ("ldp", "ndp") for bound in BOUND_STYLE]
    table = bounds.curve_table(ns, names=names, eps0=EPS0_A, delta=DELTA, T_per_node=T_PER_NODE)
    secs = time.perf_counter() - start
    rows = [_row("a", "curve", name, float(n), EPS0_A, mean=float(eps), seconds=secs)
            for name in names for n, eps in zip(ns, table[name], strict=True)]
    _write_csv(out / "figure1a.csv", rows)

    fig, ax = plt.subplots(figsize=(7.5, 5.5))
    for kind, color, marker in (("ldp", "tab:blue", "s"), ("ndp", "tab:green", "o")):
        for bound, (ls, label) in BOUND_STYLE.items():
            name = f"complete-{kind}-{bound}"
            ax.plot(ns, table[name], ls=ls, color=color, marker=marker, markevery=6,
                    markersize=5, markerfacecolor="none" if bound != "chernoff" else color,
                    label=f"{kind.upper()}, {label}  [{name}]")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of nodes $n$ (nodes; $T = 100\\,n$ steps)")
    ax.set_ylabel(r"privacy loss $\varepsilon$ (nats, at $\delta = 10^{-7}$)")
    ax.set_title(rf"(a) theoretical bounds, complete graph, $\varepsilon_0 = {EPS0_A}$")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7.5, loc="lower left")
    fig.tight_layout()
    fig.savefig(out / "figure1a.png", dpi=150)
    plt.close(fig)


def _walks(n: int, runs: int, seed: int) -> list[engine.Trace]:
    router = engine.Router(topology.complete(n))
    return [engine.walk("vector", router, T_PER_NODE * n, [seeding.generator(seed, "walk", r, 0)])
            for r in range(runs)]


def panel_b(out: Path, ns: list[int], eps0s: list[float], accts: list[str], runs: int,
            seed: int, rdp_max_n: float) -> list[dict]:
    """Empirical pairwise losses vs n: figure1b.csv rows (the plot is drawn from them)."""
    rows: list[dict] = []
    for n in ns:
        start = time.perf_counter()
        traces = _walks(n, runs, seed)
        walk_secs = time.perf_counter() - start
        for eps0 in eps0s:
            start = time.perf_counter()
            ldp = np.concatenate([tracker.ldp_losses(t, eps0, DELTA) for t in traces])
            secs = walk_secs + time.perf_counter() - start
            ldp_mean = float(ldp.mean())
            rows.append(_row("b", "accountant", "ldp", n, eps0, mean=ldp_mean,
                             min=float(ldp.min()), max=float(ldp.max()), ldp=ldp_mean,
                             runs=runs, seconds=round(secs, 3)))
            sigma = mechanisms.Gaussian(eps0, DELTA).sigma
            for acct in accts:
                if acct == "rdp" and n > rdp_max_n:
                    continue
                start = time.perf_counter()
                losses = [tracker.walk_losses(t, eps0, DELTA, sigma, accountant=acct,
                                              convention="reference")
                          for t in traces]
                s = loss_summary.summarize(losses)
                secs = time.perf_counter() - start
                rows.append(_row("b", "accountant", acct, n, eps0, runs=runs, ldp=ldp_mean,
                                 seconds=round(secs, 3),
                                 **{k: s[k] for k in ("mean", "min", "max", "q50", "q90",
                                                      "q99")}))
                print(f"n = {n:>7}  eps0 = {eps0}  {acct:3}  mean {s['mean']:.4g}  "
                      f"[{s['min']:.4g}, {s['max']:.4g}]  ldp {ldp_mean:.4g}  {secs:8.2f} s",
                      flush=True)
        del traces
    for eps0 in eps0s:
        theory = bounds.CURVES[THEORY_B](n=np.array(ns, float), T=T_PER_NODE * np.array(ns, float),
                                         eps0=eps0, delta=DELTA)
        rows += [_row("b", "curve", THEORY_B, n, eps0, mean=float(v))
                 for n, v in zip(ns, theory, strict=True)]
    _write_csv(out / "figure1b.csv", rows)
    return rows


def plot_b(out: Path, rows: list[dict], eps0s: list[float], runs: int) -> None:
    """Draw figure1b.png from the panel-b rows."""
    fig, axes = plt.subplots(1, len(eps0s), figsize=(6.0 * len(eps0s), 5.5), sharey=True,
                             squeeze=False)
    styles = {"kov": ("-", "o", "tab:green",
                      f"NDP, tracker, kov (reference method): mean, min-max band ({runs} walks)"),
              "rdp": ("--", "s", "tab:orange",
                      f"NDP, tracker, rdp accountant: mean, min-max band ({runs} walks)"),
              "ldp": (":", "^", "tab:blue",
                      r"LDP: mean over nodes of $\min(k\varepsilon_0, \mathrm{DRV})$"),
              THEORY_B: ("-.", "", "black", f"NDP theory [{THEORY_B}]")}
    for ax, eps0 in zip(axes[0], eps0s, strict=True):
        for name, (ls, marker, color, label) in styles.items():
            sel = [r for r in rows if r["name"] == name and r["eps0"] == eps0]
            if not sel:
                continue
            n = np.array([r["n"] for r in sel], float)
            mean = np.array([r["mean"] for r in sel], float)
            ax.plot(n, mean, ls=ls, marker=marker or None, color=color, markersize=5,
                    label=label)
            if name in ("kov", "rdp"):
                ax.fill_between(n, [r["min"] for r in sel], [r["max"] for r in sel],
                                color=color, alpha=0.18, lw=0,
                                hatch="//" if name == "rdp" else None)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(r"number of nodes $n$ (nodes; $T = 100\,n$ steps)")
        ax.set_title(rf"(b) empirical pairwise loss, $\varepsilon_0 = {eps0}$")
        ax.grid(True, which="major", alpha=0.3)
    axes[0][0].set_ylabel(r"pairwise privacy loss $\varepsilon_{u\to v}$ (nats)")
    fig.text(0.01, 0.01, r"$\delta_0 = 10^{-7}$ per contribution; tracker pairs hold at "
             r"$\delta = 2k\delta_0$ ($k$: entries of the pair)", fontsize=7)
    axes[0][0].legend(fontsize=7.5, loc="upper right")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(out / "figure1b.png", dpi=150)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("out/figure1"))
    parser.add_argument("--max-n", type=float, default=100_000,
                        help="largest n of panel (b), grid 5, 10, 20, 50, ... (default 1e5)")
    parser.add_argument("--quick", action="store_true", help="panel (b) up to n = 1000 only")
    parser.add_argument("--runs", type=int, default=10, help="walks per n (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="base seed of the walks")
    parser.add_argument("--eps0", type=float, nargs="+", default=[0.1, 0.4])
    parser.add_argument("--accountants", nargs="+", choices=tracker.WALK_ACCOUNTANTS,
                        default=["kov", "rdp"])
    parser.add_argument("--rdp-max-n", type=float, default=math.inf,
                        help="largest n given to the (slower) rdp accountant (default: all)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    panel_a(args.out)
    ns = grid(1000 if args.quick else int(args.max_n))
    print(f"panel (b): n in {ns}, eps0 in {args.eps0}, {args.runs} walks, "
          f"accountants {args.accountants}", flush=True)
    rows = panel_b(args.out, ns, args.eps0, args.accountants, args.runs, args.seed,
                   args.rdp_max_n)
    plot_b(args.out, rows, args.eps0, args.runs)
    print(f"wrote {args.out}/figure1a.png, figure1b.png, figure1a.csv, figure1b.csv "
          f"in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
