"""The audit curve: ε_lb of one randomizer against the number of trials, beside the
Clopper-Pearson ceiling for that number, and its figure.

Spec accounting.md §5.1. An audit with R held-out trials per world can prove at most
:func:`~netdp.audit.lower_bounds.epsilon_ceiling` ``(R)``, the bound of a test that never
errs, whatever the mechanism. The curve shows how far an audit of a given size is from
the claim, and whether it could reach the claim at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from netdp.audit.auditor import Auditor, SplitThreshold, cell_scores
from netdp.audit.lower_bounds import epsilon_ceiling
from netdp.core import progress
from netdp.core.errors import check
from netdp.mechanisms.noise import Gaussian

if TYPE_CHECKING:
    from collections.abc import Sequence

    from matplotlib.figure import Figure

START = 20  # runs per world of the first rung: 10 held out, a ceiling below ε = 1


@dataclass(frozen=True)
class CurvePoint:
    """One rung of the curve: a full audit on the first ``runs`` trials of each world.

    Attributes
    ----------
    runs
        Trials per world drawn for this rung (half fit the test).
    trials
        Held-out trials per world, which the bounds count.
    epsilon_lower
        ε_lb by Clopper-Pearson.
    ceiling
        The most any audit with ``trials`` held-out trials can prove.
    gdp_epsilon
        The Gaussian-DP fit's ε (Gaussian noise only, else ``None``).
    """

    runs: int
    trials: int
    epsilon_lower: float
    ceiling: float
    gdp_epsilon: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The fields, JSON-safe (``gdp_epsilon`` left out when ``None``)."""
        return {k: v for k, v in self.__dict__.items() if v is not None}


def ladder(trials: int, points: int = 12, start: int = START) -> list[int]:
    """About ``points`` trial counts, geometric from ``start`` (or ``trials`` if fewer) to
    ``trials``, increasing, ``trials`` last."""
    lo = max(4, min(start, trials))
    rungs = np.rint(np.geomspace(lo, trials, points) if points > 1
                    else np.array([trials])).astype(np.int64)
    return [int(r) for r in np.unique(np.append(rungs[rungs >= 4], trials))]


def audit_curve(mechanism: Any, trials: int, seed: int, points: int = 12,
                confidence: float = 0.95, pair: tuple[float, float] | None = None,
                strategy: SplitThreshold | None = None,
                start: int = START) -> list[CurvePoint]:
    """Audit ``mechanism`` at a geometric ladder of trial counts up to ``trials``.

    Both worlds are drawn once from ``seed`` (:func:`~netdp.audit.mechanism.scores`,
    as :func:`~netdp.audit.mechanism.audit_mechanism` draws them), and the rung
    with R runs audits the first R trials of each world: the test is fitted on the first
    half of them and its errors are counted on the rest. Each rung is thus a complete audit
    at ``confidence`` on its own, and the last is the audit of all ``trials``. The rungs
    share their trials, so they are not independent of each other: a statement about all
    rungs at once needs its own correction (Bonferroni: each at
    ``1 - (1 - confidence) / points``).
    """
    from netdp.audit import mechanism as mechanism_audit

    check(trials >= 4, "trials", f"must be at least 4 (got {trials})")
    check(points >= 1, "points", f"must be at least 1 (got {points})")
    strategy = strategy or SplitThreshold()
    gaussian = isinstance(mechanism, Gaussian)
    delta = float(getattr(mechanism, "delta", 0.0) or 0.0)
    f0, f1 = mechanism_audit.scores(mechanism, trials, seed, pair)
    out = []
    for runs in progress.bar(ladder(trials, points, start), desc="audit curve", unit="rung"):
        s0, s1 = f0[:runs], f1[:runs]
        if s0.ndim == 2:  # supports: the cells' ratios where few, else the difference
            cells = cell_scores(s0, s1, strategy.fit_size(runs))
            s0, s1 = cells if cells is not None else (s0[:, 1] - s0[:, 0],
                                                      s1[:, 1] - s1[:, 0])
        r = Auditor(s0, s1, confidence, delta).audit(strategy, gaussian=gaussian)
        out.append(CurvePoint(runs, r.trials, float(r.epsilon_lower), float(r.ceiling),
                              None if r.gdp_epsilon is None else float(r.gdp_epsilon)))
    return out


def curve_figure(points: Sequence[CurvePoint], claim: float, title: str = "", *,
                 delta: float | None = None, confidence: float | None = None) -> Figure:
    """ε_lb against held-out trials (log x), with the Gaussian-DP fit where there is one,
    the Clopper-Pearson ceiling (dashed, the region above it shaded: no audit with that
    many trials can prove more) and the claim (a horizontal line). Given the audit's
    ``delta`` and ``confidence``, the ceiling is drawn at every trial count between the
    rungs, else through the rungs. The y axis is linear up to a round number just above
    the claim and the bounds, logarithmic above (symlog), as its label says, with a faint
    line at the switch. Built without pyplot; write it with
    :func:`netdp.report.figures.save`."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import FixedLocator, FormatStrFormatter, MaxNLocator, NullLocator

    check(len(points) > 0, "points", "need at least one point")
    x = np.array([p.trials for p in points], dtype=float)
    lower = np.array([p.epsilon_lower for p in points])
    ceiling = np.array([p.ceiling for p in points])
    gdp = [p.gdp_epsilon for p in points]
    # linear up to a round number just above the claim and the bounds, logarithmic above
    knee = _round_up(1.25 * max(claim, float(lower.max()),
                                max((g for g in gdp if g is not None), default=0.0), 0.1))
    top = max(1.3 * float(ceiling.max()), 2 * knee)
    fig = Figure(figsize=(6.4, 4.8), layout="constrained")
    ax = fig.subplots()
    span = x if x.size > 1 else np.array([x[0] / 2, x[0] * 2])
    cap = ceiling if x.size > 1 else np.repeat(ceiling, 2)
    if delta is not None and confidence is not None:  # the exact ceiling between rungs
        span = np.unique(np.rint(np.geomspace(max(1.0, span[0]), span[-1], 200)))
        cap = np.array([epsilon_ceiling(int(r), delta, confidence) for r in span])
    ax.fill_between(span, cap, top, color="#D55E00", alpha=0.12, linewidth=0,
                    label="no audit with R trials can prove more")
    ax.plot(span, cap, color="#D55E00", linestyle="--", linewidth=1.5,
            label="Clopper–Pearson ceiling (no error at all)")
    ax.axhline(claim, color="#000000", linestyle=":", linewidth=1.2,
               label=f"claim ε = {claim:g}")
    ax.plot(x, lower, color="#0072B2", marker="o", markersize=4, linewidth=1.5,
            label="ε_lb (Clopper–Pearson)")
    if any(g is not None for g in gdp):
        ax.plot(x, [np.nan if g is None else g for g in gdp], color="#009E73", marker="s",
                markersize=4, linestyle=(0, (5, 1, 1, 1)), linewidth=1.5,
                label="ε of the Gaussian-DP fit")
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=knee, linscale=1.0)
    ax.set_xlim(float(span[0]), float(span[-1]))
    ax.set_ylim(0, top)
    linear = np.asarray(MaxNLocator(5, steps=[1, 2, 2.5, 5, 10]).tick_values(0, knee))
    above = [v for k in range(-2, 4) for v in (10.0**k, 2 * 10.0**k, 5 * 10.0**k)
             if 1.2 * knee < v <= top]
    ax.yaxis.set_major_locator(FixedLocator([*linear[linear <= knee], *above]))
    ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("R (held-out trials per input)")
    ax.set_ylabel(f"ε (linear scale up to {knee:g}, logarithmic above)")
    ax.axhline(knee, color="0.6", linewidth=0.6, linestyle=(0, (1, 3)))
    ax.grid(True, which="major", color="#DDDDDD", linewidth=0.6)
    fig.legend(loc="outside lower center", ncols=2, fontsize="small", frameon=False)
    ax.set_title(title or "audit: ε_lb against trials", fontsize="medium")
    return fig


def _round_up(value: float) -> float:
    """The smallest of 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 (times a power of 10) at least
    ``value`` (> 0): a threshold that reads in an axis label."""
    power = 10.0 ** np.floor(np.log10(value))
    return float(next(m * power for m in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10)
                      if m * power >= value * (1 - 1e-12)))
