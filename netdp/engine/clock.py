"""Per-hop latency: how long a forwarded token takes to reach the next holder."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netdp.core.errors import InputError


@dataclass(frozen=True)
class Latency:
    """A latency law.

    Attributes
    ----------
    law
        ``const`` (every hop takes ``a``), ``exp`` (exponential of mean ``a``),
        ``uniform`` (uniform on ``[a, b]``), or heavy-tailed: ``pareto`` (Pareto of scale
        ``a`` and shape ``b``: ``P[X > x] = (a / x)^b`` for ``x >= a``) or ``lognormal``
        (median ``a``, log-scale ``b``).
    a, b
        The law's parameters.
    """

    law: str = "const"
    a: float = 1.0
    b: float = 0.0

    @property
    def is_constant(self) -> bool:
        """Whether every hop takes the same time."""
        return self.law == "const"

    @property
    def mean(self) -> float:
        """Mean hop time (``inf`` for a Pareto of shape at most 1)."""
        if self.law == "pareto":
            return self.a * self.b / (self.b - 1) if self.b > 1 else float("inf")
        if self.law == "lognormal":
            return self.a * float(np.exp(self.b**2 / 2))
        return (self.a + self.b) / 2 if self.law == "uniform" else self.a

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` hop times."""
        if self.law == "const":
            return np.full(size, self.a)
        if self.law == "exp":
            return rng.exponential(self.a, size)
        if self.law == "pareto":
            return self.a * (1.0 + rng.pareto(self.b, size))
        if self.law == "lognormal":
            return self.a * np.exp(self.b * rng.standard_normal(size))
        return rng.uniform(self.a, self.b, size)

    def __str__(self) -> str:
        if self.law in ("const", "exp"):
            return f"{self.a:g}" if self.law == "const" else f"exp:{self.a:g}"
        return f"{self.law}:{self.a:g}:{self.b:g}"


CONSTANT = Latency()  # one time unit per hop


def parse_latency(text: str) -> Latency:
    """Parse ``1.5`` | ``const:1.5`` | ``exp:MEAN`` | ``uniform:LOW:HIGH`` |
    ``pareto:SCALE:SHAPE`` | ``lognormal:MEDIAN:SIGMA``."""
    parts = str(text).split(":")
    bad = InputError("latency", f"expected a number, const:X, exp:MEAN, uniform:LOW:HIGH, "
                                f"pareto:SCALE:SHAPE or lognormal:MEDIAN:SIGMA with 0 <= LOW "
                                f"<= HIGH, X, MEAN >= 0 and SCALE, SHAPE, MEDIAN, SIGMA > 0 "
                                f"(got {text!r})")
    try:
        nums = [float(p) for p in parts[1:]] if not is_number(parts[0]) else [float(parts[0])]
    except ValueError:
        raise bad from None
    law = "const" if is_number(parts[0]) else parts[0]
    if law in ("const", "exp") and len(nums) == 1 and nums[0] >= 0 and np.isfinite(nums[0]):
        return Latency(law, nums[0])
    if law == "uniform" and len(nums) == 2 and 0 <= nums[0] <= nums[1] < np.inf:
        return Latency(law, nums[0], nums[1])
    if law in ("pareto", "lognormal") and len(nums) == 2 and all(0 < x < np.inf for x in nums):
        return Latency(law, nums[0], nums[1])
    raise bad


def is_number(text: str) -> bool:
    """Whether ``text`` parses as a float."""
    try:
        float(text)
    except ValueError:
        return False
    return True
