"""Learning curves of an SGD result: a tidy CSV and a two-panel figure."""

from __future__ import annotations

import csv
import io

STYLES = {"local": ("-", "o"), "network": ("--", "s"), "central": (":", "^"),
          "nonprivate": ("-.", "x")}
LABELS = {"local": "local DP", "network": "network DP", "central": "central DP",
          "nonprivate": "non-private"}


def curves_csv(result) -> str:
    """``regime, step, objective, <metric>, sigma, epsilon`` rows (one per eval point)."""
    rows = result.curve_rows()
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def curves_figure(result, suffix: str = ""):
    """Excess training objective and test score against steps, one line per regime."""
    from matplotlib.figure import Figure

    cfg, curves = result.config, result.curves()
    metric = "test accuracy" if result.model.metric == "accuracy" else "test R²"
    fig = Figure(figsize=(10, 4), layout="constrained")  # no pyplot state to clean up
    ax_obj, ax_acc = fig.subplots(1, 2)
    steps = curves["steps"]
    every = max(1, len(steps) // 10)
    for regime in cfg.regimes:
        style, marker = STYLES[regime]
        cal = result.calibrations[regime]
        label = LABELS[regime] + ("" if regime == "nonprivate" else f" (σ = {cal.sigma:.3g})")
        kw = {"linestyle": style, "marker": marker, "markevery": every, "label": label}
        excess = [max(f - result.optimum["objective"], 1e-12)
                  for f in curves[regime]["objective"]]
        ax_obj.plot(steps, excess, **kw)
        ax_acc.plot(steps, curves[regime]["score"], **kw)
    ax_acc.axhline(result.optimum["score"], color="grey", linewidth=0.8,
                   label="optimum (scipy)")
    ax_obj.set_yscale("log")
    ax_obj.set_xlabel("steps t (model updates)")
    ax_obj.set_ylabel("excess training objective f(w_t) - f(w*)")
    ax_acc.set_xlabel("steps t (model updates)")
    ax_acc.set_ylabel(metric)
    ax_obj.legend(fontsize="small")
    ax_acc.legend(fontsize="small")
    fig.suptitle(f"{cfg.model} regression on {result.data.name}: n = {cfg.nodes}, "
                 f"ε = {cfg.epsilon:g}, δ = {cfg.delta:g}, L = {cfg.lipschitz:g}{suffix}")
    return fig
