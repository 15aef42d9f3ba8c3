"""Calibrate a parameter to a privacy target: one root-finder for every curve.

A privacy figure that grows with a parameter (ε0 of a randomizer, the number of steps)
meets a target up to the largest parameter whose figure is at most the target. The
answer is always on the safe side: its figure never exceeds the target.
"""

from __future__ import annotations

from collections.abc import Callable

from scipy import optimize

from netdp.core.errors import check


def largest_within(figure: Callable[[float], float], target: float, low: float, high: float,
                   *, param: str, xtol: float = 1e-6) -> float:
    """The largest ``x`` in ``[low, high]`` (to ``xtol``) with ``figure(x) <= target``.

    ``figure`` must be non-decreasing. Brent's method finds the crossing, then the answer
    steps back by ``xtol`` until its figure is within the target.

    Raises
    ------
    InputError
        On ``param`` when the target is not positive, or when even ``low`` exceeds it.

    Examples
    --------
    >>> round(largest_within(lambda x: 2 * x, 1.0, 1e-9, 10.0, param="epsilon"), 5)
    0.5
    """
    check(target > 0, param, f"target must be > 0 (got {target})")

    def excess(x: float) -> float:
        return figure(x) - target

    check(excess(low) <= 0, param, f"target {target} is below what any value reaches")
    if excess(high) <= 0:
        return high
    x = optimize.brentq(excess, low, high, xtol=xtol)
    while excess(x) > 0:
        x -= xtol
    return x
