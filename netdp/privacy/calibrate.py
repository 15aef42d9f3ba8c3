"""Calibrate a local randomizer to a target network-DP level (the ring histogram)."""

from __future__ import annotations

from scipy import optimize

from netdp.errors import check
from netdp.privacy.shuffle_tracker import ring_histogram_theory


def ring_histogram_eps0(target: float, n: int, rounds: int, delta: float,
                        bound: str = "fmt-numeric", domain: int = 2,
                        eps0_max: float = 30.0) -> float:
    """Largest ε0 (to 1e-6) whose ring histogram meets ``target`` network ε, every pair.

    The theory curve is increasing in ε0, so the answer is found by bisection; the
    returned ε0 is on the safe side (its curve value is <= target).
    """
    check(target > 0, "epsilon", f"target must be > 0 (got {target})")

    def excess(eps0: float) -> float:
        return ring_histogram_theory(n, rounds, eps0, delta, bound, domain) - target

    lo = 1e-9
    check(excess(lo) <= 0, "epsilon", f"target {target} is below what any eps0 reaches")
    if excess(eps0_max) <= 0:
        return eps0_max
    eps0 = optimize.brentq(excess, lo, eps0_max, xtol=1e-6)
    while excess(eps0) > 0:
        eps0 -= 1e-6
    return eps0
