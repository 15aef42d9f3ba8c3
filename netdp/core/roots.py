"""The one scalar root-finder: where a monotone figure meets its target.

Every calibration asks the same question: the parameter at which a monotone privacy
figure (δ of a noise scale σ, ε of a randomizer's ε0, ...) meets a target. The answer is
the edge of ``{x in [low, high] : figure(x) <= target}``:

* :func:`largest_within` for a non-decreasing figure (the set is ``[low, edge]``),
* :func:`smallest_within` for a non-increasing one (the set is ``[edge, high]``).

Soundness. A search keeps a bracket: one end evaluated within the target, the other
outside. The answer is the end within, so its figure never exceeds the target, at any
precision: a σ calibrated to δ is rounded toward more noise, an ε read off a falling δ
curve toward larger ε. (A lower bound, such as an audit's, is the largest x whose figure
is still at least the target: negate the figure and the target.)

Precision. ``tol`` bounds the final bracket in the scale: in ``x`` on the ``linear``
scale, in ``ln x`` (relative) on the ``log`` scale, plus 4 ulps of that coordinate (as
``brentq``). A point found exactly on the target ends the search there. ``tol = 0`` goes
down to adjacent floats: the answer is within the target, the next float past it is not.

Steps. With ``tol = 0``, bisection in the scale (the arithmetic midpoint where the
scale's cannot be placed strictly inside). With ``tol > 0``, Brent's method in the scale
(Brent 1973, ch. 4), step for step ``scipy.optimize.brentq``: secant and inverse quadratic
steps, bisection when they stall, so a handful of evaluations where bisection takes 20
to 40 (costly figures), and the points ``brentq`` visited before (calibrated values that
feed recorded outputs). Plain ``math``: mechanisms calibrate with it, and the default run
loads no scipy.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Literal

from netdp.core.errors import InputError

Scale = Literal["linear", "log"]


def largest_within(figure: Callable[[float], float], target: float, low: float, high: float,
                   *, param: str, scale: Scale = "linear", tol: float = 0.0) -> float:
    """The largest ``x`` in ``[low, high]`` with ``figure(x) <= target``, figure rising.

    Parameters
    ----------
    figure
        Non-decreasing in ``x``.
    target
        The figure's bound.
    low, high
        The bracket, ``low < high`` (both > 0 on the ``log`` scale).
    param
        The parameter the target comes from, named in the error.
    scale
        ``linear`` or ``log``: where the steps and ``tol`` are measured.
    tol
        The final bracket's width in the scale; 0: adjacent floats.

    Returns
    -------
    float
        A point whose figure is within the target, at most ``tol`` below the edge;
        ``high`` when its figure is within.

    Raises
    ------
    InputError
        On ``param`` when even ``figure(low)`` exceeds the target.

    Examples
    --------
    >>> largest_within(lambda x: x * x, 2.0, 0.0, 2.0, param="epsilon")
    1.414213562373095
    """
    return _edge(figure, target, low, high, True, param, scale, tol)


def smallest_within(figure: Callable[[float], float], target: float, low: float, high: float,
                    *, param: str, scale: Scale = "linear", tol: float = 0.0) -> float:
    """The smallest ``x`` in ``[low, high]`` with ``figure(x) <= target``, figure falling.

    As :func:`largest_within` (same parameters), mirrored: ``figure`` is non-increasing,
    the answer at most ``tol`` above the edge, ``low`` when its figure is within, and
    the error raised when even ``figure(high)`` exceeds the target.

    Examples
    --------
    >>> smallest_within(lambda s: 1 / s, 0.3, 1.0, 10.0, param="delta", scale="log")
    3.3333333333333335
    """
    return _edge(figure, target, low, high, False, param, scale, tol)


def _edge(figure: Callable[[float], float], target: float, low: float, high: float,
          rising: bool, param: str, scale: Scale, tol: float) -> float:
    """The search of both; ``rising``: the within end is ``low``."""
    if scale not in ("linear", "log"):
        raise ValueError(f"scale must be linear or log (got {scale!r})")
    if not (low < high and tol >= 0 and (scale == "linear" or low > 0)):
        raise ValueError(f"need low < high (> 0 on the log scale) and tol >= 0 "
                         f"(got {low}, {high}, {tol})")
    y_lo, y_hi = figure(low), figure(high)
    if (y_hi if rising else y_lo) <= target:  # the whole bracket is within
        return high if rising else low
    if not (y_lo if rising else y_hi) <= target:
        raise InputError(param, f"the target {target:g} is not met anywhere in "
                                f"[{low:g}, {high:g}]")
    to_t, from_t = (math.log, math.exp) if scale == "log" else (float, float)
    if tol > 0:
        return _brent(figure, target, (to_t(low), low, y_lo - target),
                      (to_t(high), high, y_hi - target), to_t, from_t, tol)
    lo, hi = low, high
    while True:  # bisection in the scale, down to adjacent floats
        x = from_t(0.5 * (to_t(lo) + to_t(hi)))
        if not lo < x < hi:
            x = 0.5 * lo + 0.5 * hi
            if not lo < x < hi:
                return lo if rising else hi
        if (figure(x) <= target) == rising:
            lo = x
        else:
            hi = x


Point = tuple[float, float, float]  # (t, x, figure(x) - target): t is x in the scale
_RTOL = 4 * sys.float_info.epsilon  # scipy's least rtol: a bracket of a few ulps of t


def _brent(figure: Callable[[float], float], target: float, pre: Point, cur: Point,
           to_t: Callable[[float], float], from_t: Callable[[float], float],
           tol: float) -> float:
    """Brent's method in the scale, step for step ``scipy.optimize.brentq`` with ``xtol =
    tol`` (same points, same stop), from ends on either side of the edge; the end within."""
    blk, s_pre, s_cur = pre, 0.0, 0.0
    while True:
        if (pre[2] <= 0) != (cur[2] <= 0):  # blk: the end across the edge from cur
            blk = pre
            s_pre = s_cur = cur[0] - pre[0]
        if abs(blk[2]) < abs(cur[2]):  # cur: the end nearer the target
            pre, cur, blk = cur, blk, cur
        half = 0.5 * (tol + _RTOL * abs(cur[0]))
        s_bis = 0.5 * (blk[0] - cur[0])
        if cur[2] == 0 or abs(s_bis) < half:  # on the target, or the bracket is narrow
            return cur[1] if cur[2] <= 0 else blk[1]
        if abs(s_pre) > half and abs(cur[2]) < abs(pre[2]):
            if pre[0] == blk[0]:  # secant
                trial = -cur[2] * (cur[0] - pre[0]) / (cur[2] - pre[2])
            else:  # inverse quadratic interpolation
                d_pre = (pre[2] - cur[2]) / (pre[0] - cur[0])
                d_blk = (blk[2] - cur[2]) / (blk[0] - cur[0])
                den = d_blk * d_pre * (blk[2] - pre[2])
                trial = -cur[2] * (blk[2] * d_blk - pre[2] * d_pre) / den if den else math.inf
            if 2 * abs(trial) < min(abs(s_pre), 3 * abs(s_bis) - half):  # short: take it
                s_pre, s_cur = s_cur, trial
            else:
                s_pre = s_cur = s_bis
        else:
            s_pre = s_cur = s_bis
        t = cur[0] + (s_cur if abs(s_cur) > half else math.copysign(half, s_bis))
        x, ends = from_t(t), sorted((cur[1], blk[1]))
        if not ends[0] < x < ends[1]:  # rounding in from_t: the midpoint in x
            x = 0.5 * ends[0] + 0.5 * ends[1]
            if not ends[0] < x < ends[1]:  # adjacent floats
                return cur[1] if cur[2] <= 0 else blk[1]
            t = to_t(x)
        pre, cur = cur, (t, x, figure(x) - target)
