"""The rows of the text report: numbers formatted to a width, and the pairwise losses
summarised by hop distance."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class DistanceRow:
    """The losses of the ordered pairs at one hop distance from ``u`` to ``v``."""

    distance: int
    pairs: int
    mean: float
    min: float
    max: float

    def to_dict(self) -> dict[str, Any]:
        """``{distance, pairs, mean, min, max}``."""
        return {"distance": self.distance, "pairs": self.pairs, "mean": self.mean,
                "min": self.min, "max": self.max}


def by_distance(values: np.ndarray, distances: np.ndarray,
                weight: float = 1.0) -> tuple[DistanceRow, ...]:
    """Summaries of ``values`` grouped by ``distances`` (same shape; the pairs to count,
    the diagonal left out by the caller). ``weight``: pairs each value stands for
    (sampled sources)."""
    values, distances = np.asarray(values).ravel(), np.asarray(distances).ravel()
    order = np.argsort(distances, kind="stable")
    values, distances = values[order], distances[order]
    keys, start = np.unique(distances, return_index=True)
    stop = np.append(start[1:], distances.size)
    return tuple(DistanceRow(int(d), int(round((b - a) * weight)),
                             float(values[a:b].mean()), float(values[a:b].min()),
                             float(values[a:b].max()))
                 for d, a, b in zip(keys, start, stop, strict=True))


def quantiles_of(values: np.ndarray, quantiles: Sequence[float]) -> dict[str, float]:
    """``{"q50": ..., "q90": ...}``: the quantiles of ``values`` at the levels given."""
    return {f"q{round(q * 100):d}": float(np.quantile(values, q)) for q in quantiles}


def distance_lines(rows: Sequence[DistanceRow], label: str, shown: int = 12) -> list[str]:
    """The text table of a pairwise summary by distance: a header naming ``label``, the
    first ``shown`` rows, and how many more ``--json`` holds."""
    if not rows:
        return []
    lines = ["", f"  {'distance':>10} {'pairs':>9} {'mean':>9} {'min':>9} {'max':>9}"
                 f"  ({label})"]
    lines += [f"  {r.distance:>10} {r.pairs:>9} {fmt(r.mean):>9} {fmt(r.min):>9} "
              f"{fmt(r.max):>9}" for r in rows[:shown]]
    if len(rows) > shown:
        lines.append(f"  {'...':>10}  ({len(rows) - shown} more in --json)")
    return lines


def theory_distance_lines(rows: Sequence[DistanceRow], theory: Mapping[str, Sequence[DistanceRow]],
                          info: Mapping[str, Mapping[str, Any]], label: str,
                          shown: int = 12) -> list[str]:
    """The text table of a pairwise summary by distance beside theory lines: per distance
    the pairs and mean of ``rows``, then each line's mean and max; below, one line per
    theory (its δ, the pairs evaluated, whether it bounds this view)."""
    if not rows:
        return []
    names = list(theory)
    by_name = {name: {r.distance: r for r in theory[name]} for name in names}
    head = f"  {'distance':>10} {'pairs':>9} {'mean':>9}"
    head += "".join(f" {name[:13] + ' mean':>18} {'max':>9}" for name in names)
    lines = ["", head + f"  ({label}; theory lines beside it)"]
    for r in rows[:shown]:
        cells = f"  {r.distance:>10} {r.pairs:>9} {fmt(r.mean):>9}"
        for name in names:
            t = by_name[name].get(r.distance)
            cells += (f" {fmt(t.mean):>18} {fmt(t.max):>9}" if t is not None
                      else f" {'-':>18} {'-':>9}")
        lines.append(cells)
    if len(rows) > shown:
        lines.append(f"  {'...':>10}  ({len(rows) - shown} more in --json)")
    for name in [*names, *(k for k in info if k not in theory)]:
        about = info.get(name, {})
        if "skipped" in about:
            lines.append(f"  {name}: {about['skipped']}")
            continue
        sound = ("a bound of this view" if about.get("sound_for_netdp_view")
                 else "a bound of another model, not of this view (docs/published-bounds.md)")
        sampled = f", {about['sampled']}" if "sampled" in about else ""
        lines.append(f"  {name}: {about.get('reference', '')}; delta "
                     f"{about.get('delta', float('nan')):.2g}{sampled}; {sound}")
    return lines


# --------------------------------------------------------------------------- text

def accountant_lines(empirical: Sequence[Any], bound: str | None,
                     marked: Callable[[str], bool], widths: Sequence[int]) -> list[str]:
    """One row per accountant's summary (``marked``: shown as the published method's
    ``(ref.)``; ``bound``: the histogram's shuffle bound, named beside it)."""
    lines = []
    for emp in empirical:
        label = f"{emp.accountant}+{bound}" if bound else (
            emp.accountant + (" (ref.)" if marked(emp.accountant) else ""))
        cells = [emp.mean, emp.min, emp.max, *emp.quantiles.values()]
        lines.append(row((label, *map(fmt, cells)), widths) + f"  {emp.delta:.2g}")
        if emp.to_exact is not None:
            lines.append(f"  {'':14}/ exact: mean {emp.to_exact['mean']:.3f}, "
                         f"q90 {emp.to_exact['q90']:.3f}, max {emp.to_exact['max']:.3f}")
        if emp.unprotected:
            lines.append(f"  {'':14}{emp.unprotected} pair(s) unprotected (infinite "
                         "loss): the coalition sees their contributions in the clear")
    return lines


def fmt(x: Any, digits: int = 4) -> str:
    """A number for a text table: fixed point where readable, else scientific."""
    if x is None:
        return "-"
    if isinstance(x, float | np.floating):
        x = float(x)
        if x != x or x in (float("inf"), float("-inf")):
            return str(x)
        return f"{x:.{digits}g}" if abs(x) < 1e-3 or abs(x) >= 1e5 else f"{x:.{digits}f}"
    return str(x)


def row(cells: Sequence[str], widths: Sequence[int]) -> str:
    """Cells right-aligned in their widths (the first left-aligned), always at least one
    space apart, however long a cell is."""
    out = "  " + f"{cells[0]:{widths[0]}}"
    for cell, width in zip(cells[1:], widths[1:], strict=False):
        out += " " + f"{cell:>{width - 1}}"
    return out
