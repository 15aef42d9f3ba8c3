"""Per-hop latency: how long a forwarded token takes to reach the next holder."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netdp.errors import InputError


@dataclass(frozen=True)
class Latency:
    """A latency law.

    Attributes
    ----------
    law
        ``const`` (every hop takes ``a``), ``exp`` (exponential of mean ``a``) or
        ``uniform`` (uniform on ``[a, b]``).
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
        """Mean hop time."""
        return (self.a + self.b) / 2 if self.law == "uniform" else self.a

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` hop times."""
        if self.law == "const":
            return np.full(size, self.a)
        if self.law == "exp":
            return rng.exponential(self.a, size)
        return rng.uniform(self.a, self.b, size)

    def __str__(self) -> str:
        return {"const": f"{self.a:g}", "exp": f"exp:{self.a:g}",
                "uniform": f"uniform:{self.a:g}:{self.b:g}"}[self.law]


CONSTANT = Latency()  # one time unit per hop


def parse_latency(text: str) -> Latency:
    """Parse ``1.5`` | ``const:1.5`` | ``exp:MEAN`` | ``uniform:LOW:HIGH``."""
    parts = str(text).split(":")
    bad = InputError("latency", f"expected a number, const:X, exp:MEAN or uniform:LOW:HIGH "
                                f"with 0 <= LOW <= HIGH and X, MEAN >= 0 (got {text!r})")
    try:
        nums = [float(p) for p in parts[1:]] if not _is_number(parts[0]) else [float(parts[0])]
    except ValueError:
        raise bad from None
    law = "const" if _is_number(parts[0]) else parts[0]
    if law in ("const", "exp") and len(nums) == 1 and nums[0] >= 0 and np.isfinite(nums[0]):
        return Latency(law, nums[0])
    if law == "uniform" and len(nums) == 2 and 0 <= nums[0] <= nums[1] < np.inf:
        return Latency(law, nums[0], nums[1])
    raise bad


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
