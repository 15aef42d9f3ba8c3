"""The table of ``netdp bounds``: every curve of :data:`netdp.bounds.curves.CURVES` over a
grid of ``n``, validated, with its text, CSV and JSON renderings."""

from __future__ import annotations

import math
import numbers
import reprlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from netdp.bounds.curves import CURVES
from netdp.core.errors import InputError
from netdp.core.jsonable import jsonable

__all__ = ["BoundsTable", "bounds_table"]


#: Allowed ranges of :func:`bounds_table` (beyond them the curves overflow, lose all
#: precision or need absurd work).
EPS0_RANGE = (1e-6, 100.0)
DELTA_MIN = 1e-300
#: ``histogram-ring`` needs more: the FMT numeric bound drops up to ``2e-17`` of binomial
#: tail mass, and its delta must exceed that.
HISTOGRAM_DELTA_MIN = 1e-15
STEPS_PER_NODE_MAX = 1e12
ROUNDS_MAX = 10**9
N_RANGE = (2.0, 1e15)
N_MAX = 1e10  # the default largest n
POINTS_MAX = 10_000


@dataclass(frozen=True, eq=False)
class BoundsTable:
    """Theoretical epsilon of each curve over a grid of ``n`` (see :func:`bounds_table`).

    Attributes
    ----------
    eps0, delta, steps_per_node, rounds
        The setting: LDP level of one contribution, delta, ``T / n`` on the complete
        graph, ``K`` turns on the ring.
    n
        The grid (distinct integers, ascending, as floats).
    curves
        Epsilon per curve name, one value per ``n``.
    descriptions
        One line per curve name.
    """

    eps0: float
    delta: float
    steps_per_node: float
    rounds: int
    n: np.ndarray
    curves: dict[str, np.ndarray] = field(default_factory=dict)
    descriptions: dict[str, str] = field(default_factory=dict)
    target_delta: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``netdp bounds --json`` (infinite values as ``"inf"``)."""
        at = {} if self.target_delta is None else {"target_delta": self.target_delta}
        return jsonable({
            "eps0": self.eps0,
            "delta": self.delta,
            **at,
            "steps_per_node": self.steps_per_node,
            "rounds": self.rounds,
            "n": self.n.tolist(),
            "curves": {k: v.tolist() for k, v in self.curves.items()},
            "descriptions": dict(self.descriptions),
        })

    def rows(self) -> list[tuple[float, str, float]]:
        """Tidy rows ``(n, curve, epsilon)``, curve by curve."""
        return [(float(x), name, float(e)) for name, eps in self.curves.items()
                for x, e in zip(self.n, eps, strict=True)]

    def csv(self) -> str:
        """The tidy CSV of ``netdp bounds --csv`` (header ``n,curve,epsilon``)."""
        lines = ["n,curve,epsilon"]
        lines += [f"{x:.0f},{name},{e:.10g}" for x, name, e in self.rows()]
        return "\n".join(lines)

    def text(self) -> str:
        """The table ``netdp bounds`` prints: one row per ``n``, then the descriptions."""
        widths = {k: max(len(k), 10) for k in self.curves}
        spent = (f"every curve at delta = {self.target_delta:g} in all"
                 if self.target_delta is not None else
                 f"delta = {self.delta:g} as each paper spends it")
        lines = [
            f"theoretical epsilon; eps0 = {self.eps0:g}, {spent}, "
            f"T = {self.steps_per_node:g} n (complete), K = {self.rounds} (ring)",
            f"{'n':>12}  " + "  ".join(f"{k:>{w}}" for k, w in widths.items()),
        ]
        for i, x in enumerate(self.n):
            lines.append(f"{x:>12.4g}  " + "  ".join(f"{self.curves[k][i]:>{w}.4g}"
                                                     for k, w in widths.items()))
        lines.append("")
        lines += [f"  {name}: {text}" for name, text in self.descriptions.items()]
        if self.target_delta is not None:
            lines += ["", "  delta spent (each curve's share of the target):"]
            lines += [f"  {name}: {CURVES[name].spending.text}"  # type: ignore[union-attr]
                      for name in self.descriptions]
        return "\n".join(lines)


def _show(x: float, whole: bool = False) -> str:
    """``x`` briefly: ``1e+13``, ``0.1``, ``1e-320`` (the shorter exact form)."""
    if whole and math.isfinite(x) and x == math.floor(x):
        return str(int(x))
    short = f"{x:g}"
    return short if math.isnan(x) or (float(short) == x and len(short) <= len(repr(x))) else (
        repr(x))


def _number(param: str, value: Any, lo: float, hi: float, *, lo_open: bool = False,
            hi_open: bool = False, whole: bool = False) -> float:
    """``value`` as a float, or :class:`InputError` naming ``param``, the range and the value."""
    try:
        x = float(value)
        shown = _show(x, whole) if isinstance(value, numbers.Real) else reprlib.repr(value)
    except (TypeError, ValueError, OverflowError):
        x, shown = math.nan, reprlib.repr(value)
    ok = (lo < x if lo_open else lo <= x) and (x < hi if hi_open else x <= hi)
    if ok and (not whole or x == math.floor(x)):
        return x
    kind = "a whole number" if whole else "a number"
    raise InputError(param, f"must be {kind} with {_show(lo, whole)} {'<' if lo_open else '<='} "
                            f"{param} {'<' if hi_open else '<='} {_show(hi, whole)} "
                            f"(got {shown})")


def bounds_table(
    eps0: float = 0.1,
    delta: float = 1e-7,
    steps_per_node: float = 100.0,
    rounds: int = 1,
    n_min: float = 10.0,
    n_max: float = N_MAX,
    points: int = 10,
    curves: Iterable[str] | None = None,
    target_delta: float | None = None,
) -> BoundsTable:
    """Evaluate the :data:`CURVES` over ``points`` log-spaced values of ``n``.

    Parameters
    ----------
    eps0
        LDP level of one contribution, in ``[1e-6, 100]``.
    delta
        Delta, in ``[1e-300, 1)`` (``[1e-15, 1)`` with ``histogram-ring``).
    steps_per_node
        Complete graph: ``T = steps_per_node * n``, in ``(0, 1e12]``.
    rounds
        Ring: turns ``K``, a whole number in ``[1, 1e9]``.
    n_min, n_max
        Range of ``n``, ``2 <= n_min <= n_max <= 1e15``; the grid is
        ``unique(round(geomspace(n_min, n_max, points)))``.
    points
        Number of log-spaced values, a whole number in ``[1, 10000]``.
    curves
        Curve names (default, or empty: all, in registry order).
    target_delta
        Every curve at this one δ in all (:meth:`Curve.at_target`, contributions
        ``eps0``-DP), in ``[1e-300, 1)``; ``None``: at ``delta`` as its paper spends it.

    Raises
    ------
    InputError
        Naming the parameter as the CLI flag (``eps0``, ``delta``, ``steps-per-node``,
        ``rounds``, ``n-min``, ``n-max``, ``points``, ``curve``) with the allowed range
        and the value given.
    """
    eps0 = _number("eps0", eps0, *EPS0_RANGE)
    delta = _number("delta", delta, DELTA_MIN, 1.0, hi_open=True)
    steps_per_node = _number("steps-per-node", steps_per_node, 0.0, STEPS_PER_NODE_MAX,
                             lo_open=True)
    rounds = int(_number("rounds", rounds, 1, ROUNDS_MAX, whole=True))
    n_min = _number("n-min", n_min, *N_RANGE)
    if n_max == N_MAX and n_min > N_MAX:  # the default n-max: --n-min is the one given
        raise InputError("n-min", f"must be at most --n-max {_show(N_MAX)} (got "
                                  f"{_show(n_min)}); give a larger --n-max")
    n_max = _number("n-max", n_max, n_min, N_RANGE[1])
    points = int(_number("points", points, 1, POINTS_MAX, whole=True))
    if isinstance(curves, str):
        curves = [curves]
    names = list(dict.fromkeys(curves or CURVES))  # in order, each once
    for name in names:
        if name not in CURVES:
            raise InputError("curve", f"unknown curve {name!r}; choose from "
                                      f"{', '.join(CURVES)}")
    if "histogram-ring" in names and delta < HISTOGRAM_DELTA_MIN:
        raise InputError("delta", f"must be a number with {_show(HISTOGRAM_DELTA_MIN)} <= delta "
                                  f"< 1 for the histogram-ring curve (got {_show(delta)}); the "
                                  f"other curves take delta >= {_show(DELTA_MIN)}")

    if target_delta is not None:
        target_delta = _number("target-delta", target_delta, DELTA_MIN, 1.0, hi_open=True)
        if "histogram-ring" in names:  # its windows' delta: the target over 2 K
            low = HISTOGRAM_DELTA_MIN * 2 * rounds
            if target_delta < low:
                raise InputError("target-delta", f"must be a number with {_show(low)} <= "
                                 f"target-delta < 1 for the histogram-ring curve at K = "
                                 f"{rounds} (got {_show(target_delta)})")

    n = np.unique(np.round(np.geomspace(n_min, n_max, points)))
    table = {}
    for name in names:
        params: dict[str, npt.ArrayLike] = {"n": n, "eps0": eps0, "delta": delta,
                                            "T": steps_per_node * n, "K": rounds}
        curve = CURVES[name]
        value = (curve(**params) if target_delta is None
                 else curve.at_target(target_delta, None, **params))
        eps = np.asarray(value, dtype=float) * np.ones_like(n)
        eps.setflags(write=False)
        table[name] = eps
    n.setflags(write=False)
    return BoundsTable(eps0, delta, steps_per_node, rounds, n, table,
                       {name: CURVES[name].description for name in names}, target_delta)
