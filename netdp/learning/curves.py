"""Learning curves: the record of one run, and an SGD result's tidy CSV and two-panel
figure."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from netdp.report.types import Report

@dataclass(frozen=True, eq=False)
class LearningCurve:
    """Training objective and test score (accuracy or R²) of a model at evaluation points
    (``steps``: model updates of a walk, or rounds of gossip GD; 0 and the end included)."""

    steps: np.ndarray
    objective: np.ndarray
    score: np.ndarray

    @property
    def final_objective(self) -> float:
        """Training objective of the final model."""
        return float(self.objective[-1])

    @property
    def final_score(self) -> float:
        """Test score of the final model."""
        return float(self.score[-1])



STYLES = {"local": ("-", "o"), "network": ("--", "s"), "central": (":", "^"),
          "nonprivate": ("-.", "x"), "local-hm": ("-", "D"), "local-pm": ("-", "v")}
LABELS = {"local": "local DP", "network": "network DP", "central": "central DP",
          "nonprivate": "non-private", "local-hm": "local DP, sampled HM",
          "local-pm": "local DP, sampled PM"}


def curves_csv(report: Report) -> str:
    """``regime, step, objective, <metric>, sigma, epsilon`` rows (one per eval point) of an
    sgd report."""
    rows = report.utility.curve_rows()  # type: ignore[attr-defined]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def curves_figure(report: Report, suffix: str = "") -> Figure:
    """Excess training objective and test score against steps, one line per regime."""
    from matplotlib.figure import Figure

    cfg, utility = report.config, report.utility
    curves, optimum = report.sections["curves"], utility.optimum  # type: ignore[attr-defined]
    metric = "test accuracy" if utility.metric == "accuracy" else "test R²"  # type: ignore[attr-defined]
    fig = Figure(figsize=(10, 4), layout="constrained")  # no pyplot state to clean up
    ax_obj, ax_acc = fig.subplots(1, 2)
    steps = curves["steps"]
    every = max(1, len(steps) // 10)
    for regime in utility.calibrations:  # type: ignore[attr-defined]
        style, marker = STYLES[regime]
        cal = utility.calibrations[regime]  # type: ignore[attr-defined]
        label = LABELS[regime] + ("" if regime == "nonprivate" else f" (σ = {cal.sigma:.3g})")
        kw = {"linestyle": style, "marker": marker, "markevery": every, "label": label}
        excess = [max(f - optimum["objective"], 1e-12)
                  for f in curves[regime]["objective"]]
        ax_obj.plot(steps, excess, **kw)
        ax_acc.plot(steps, curves[regime]["score"], **kw)
    ax_acc.axhline(optimum["score"], color="grey", linewidth=0.8,
                   label="optimum (scipy)")
    ax_obj.set_yscale("log")
    xlabel = ("rounds (a noisy step at every node, then the gossip steps)"
              if curves.get("unit") == "rounds" else "steps t (model updates)")
    ax_obj.set_xlabel(xlabel)
    ax_obj.set_ylabel("excess training objective f(w_t) - f(w*)")
    ax_acc.set_xlabel(xlabel)
    ax_acc.set_ylabel(metric)
    ax_obj.legend(fontsize="small")
    ax_acc.legend(fontsize="small")
    fig.suptitle(f"{cfg.get('model')} regression on {report.sections['dataset']['name']}: "
                 f"n = {cfg.nodes}, ε = {cfg.epsilon:g}, δ = {cfg.delta:g}, "
                 f"L = {cfg.get('lipschitz'):g}{suffix}")
    return fig
