"""Frozen records describing *what happened* to one user's data.

The accountants of :mod:`netdp.accounting.accountants` turn a tree of these events into an
``(epsilon, delta)`` guarantee. The design follows ``dp_accounting.dp_event``: the events
hold parameters only (validated on construction) and no accounting logic.

Neighbouring relation: replace-one (the user's value changes), as in the spec. For
:class:`Subsampled` the user's record takes part with probability ``probability``
(Poisson subsampling) and the amplified guarantee is the one of accounting.md §3.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

__all__ = [
    "DpEvent",
    "PureDP",
    "ApproxDP",
    "Gaussian",
    "Laplace",
    "RandomizedResponse",
    "Composed",
    "Repeated",
    "Subsampled",
    "PrivacyLoss",
]


def _real(
    name: str,
    value: object,
    *,
    low: float,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Validate a real parameter and return it as a float."""
    lo = "(" if low_open else "["
    hi = ")" if high_open or math.isinf(high) else "]"
    allowed = f"{lo}{low}, {high}{hi}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number in {allowed}, got {value!r}")
    v = float(value)
    if math.isnan(v):
        raise ValueError(f"{name} must be a real number in {allowed}, got nan")
    if v < low or (low_open and v == low) or v > high or (high_open and v == high):
        raise ValueError(f"{name} must be in {allowed}, got {v!r}")
    if math.isinf(v) and (high_open or math.isinf(high)):
        raise ValueError(f"{name} must be finite, in {allowed}, got {v!r}")
    return v


def _integer(name: str, value: object, *, low: int) -> int:
    """Validate an integer parameter (``bool`` excluded)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    v = int(value)
    if v < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {v}")
    return v


class DpEvent:
    """Base class of all privacy events (for ``isinstance`` checks only)."""

    __slots__ = ()


@dataclass(frozen=True)
class PureDP(DpEvent):
    """A mechanism known only to be ``epsilon``-DP (worst case: binary RR).

    Parameters
    ----------
    epsilon : float
        Privacy parameter, finite, ``>= 0``.
    """

    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _real("epsilon", self.epsilon, low=0.0))


@dataclass(frozen=True)
class ApproxDP(DpEvent):
    """A mechanism known only to be ``(epsilon, delta)``-DP.

    Parameters
    ----------
    epsilon : float
        Finite, ``>= 0``.
    delta : float
        In ``[0, 1]``.
    """

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _real("epsilon", self.epsilon, low=0.0))
        object.__setattr__(self, "delta", _real("delta", self.delta, low=0.0, high=1.0))


@dataclass(frozen=True)
class Gaussian(DpEvent):
    """Gaussian mechanism: adds ``N(0, sigma**2)`` to a query of L2 sensitivity ``sensitivity``.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, ``> 0``, finite.
    sensitivity : float
        L2 sensitivity, finite, ``>= 0`` (0: the release does not depend on the user).
    """

    sigma: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", _real("sigma", self.sigma, low=0.0, low_open=True))
        object.__setattr__(self, "sensitivity", _real("sensitivity", self.sensitivity, low=0.0))

    @property
    def mu(self) -> float:
        """Gaussian-DP parameter ``sensitivity / sigma``."""
        return self.sensitivity / self.sigma


@dataclass(frozen=True)
class Laplace(DpEvent):
    """Laplace mechanism: adds ``Lap(scale)`` to a query of L1 sensitivity ``sensitivity``.

    Parameters
    ----------
    scale : float
        Laplace scale ``b``, ``> 0``, finite.
    sensitivity : float
        L1 sensitivity, finite, ``>= 0``.
    """

    scale: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", _real("scale", self.scale, low=0.0, low_open=True))
        object.__setattr__(self, "sensitivity", _real("sensitivity", self.sensitivity, low=0.0))

    @property
    def epsilon(self) -> float:
        """Pure-DP level ``sensitivity / scale``."""
        return self.sensitivity / self.scale


@dataclass(frozen=True)
class RandomizedResponse(DpEvent):
    """k-ary randomized response with privacy level ``epsilon``.

    Keeps the true value with probability ``1 - gamma`` and otherwise outputs a uniform
    value of ``{0..domain-1}`` (true one included), ``gamma = domain/(e^eps + domain - 1)``:
    the ratio of output probabilities is at most ``e^epsilon``.

    Parameters
    ----------
    epsilon : float
        Finite, ``>= 0``.
    domain : int
        Number of values ``k >= 2``.
    """

    epsilon: float
    domain: int = 2

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _real("epsilon", self.epsilon, low=0.0))
        object.__setattr__(self, "domain", _integer("domain", self.domain, low=2))

    @property
    def gamma(self) -> float:
        """Probability of replying uniformly at random (the 'blanket' probability)."""
        return self.domain / (math.exp(self.epsilon) + self.domain - 1)


@dataclass(frozen=True)
class Composed(DpEvent):
    """Adaptive composition of several events (order irrelevant).

    Parameters
    ----------
    events : tuple of DpEvent
        The composed events (a list is converted to a tuple); may be empty.
    """

    events: tuple[DpEvent, ...]

    def __post_init__(self) -> None:
        events = self.events
        if isinstance(events, DpEvent) or not isinstance(events, (tuple, list)):
            raise ValueError(f"events must be a tuple of DpEvent, got {events!r}")
        events = tuple(events)
        for e in events:
            if not isinstance(e, DpEvent):
                raise ValueError(f"events must contain only DpEvent instances, got {e!r}")
        object.__setattr__(self, "events", events)


@dataclass(frozen=True)
class Repeated(DpEvent):
    """``count`` adaptive repetitions of the same event.

    Parameters
    ----------
    event : DpEvent
        The repeated event.
    count : int
        Number of repetitions, ``>= 0``.
    """

    event: DpEvent
    count: int

    def __post_init__(self) -> None:
        if not isinstance(self.event, DpEvent):
            raise ValueError(f"event must be a DpEvent, got {self.event!r}")
        object.__setattr__(self, "count", _integer("count", self.count, low=0))


@dataclass(frozen=True)
class Subsampled(DpEvent):
    """Poisson subsampling: the user takes part in ``event`` with probability ``probability``.

    Parameters
    ----------
    event : DpEvent
        The mechanism run on the subsample.
    probability : float
        Inclusion probability ``q`` in ``[0, 1]``.
    """

    event: DpEvent
    probability: float

    def __post_init__(self) -> None:
        if not isinstance(self.event, DpEvent):
            raise ValueError(f"event must be a DpEvent, got {self.event!r}")
        object.__setattr__(
            self, "probability", _real("probability", self.probability, low=0.0, high=1.0)
        )


@dataclass(frozen=True)
class PrivacyLoss(DpEvent):
    """A mechanism given by its privacy loss distribution: the loss is ``index[i] * step``
    with probability ``probs[i]``, and ``+∞`` with probability ``infinity`` (the same in
    both directions, as :mod:`netdp.accounting.profile_pld` builds one; a user's own
    PLD). netdp's ``pld`` and ``rdp`` accountants take it.

    Parameters
    ----------
    index : tuple of int
        The losses, in units of ``step``.
    probs : tuple of float
        Their probabilities, ``>= 0``, adding up to ``1 - infinity``.
    infinity : float
        The mass at ``+∞``, in ``[0, 1]``.
    step : float
        The grid step of the losses, ``> 0``.
    """

    index: tuple[int, ...]
    probs: tuple[float, ...]
    infinity: float = 0.0
    step: float = 1e-4

    def __post_init__(self) -> None:
        index = tuple(int(i) for i in self.index)
        probs = tuple(_real("probs", p, low=0.0, high=1.0) for p in self.probs)
        if len(index) != len(probs) or not index:
            raise ValueError("give as many probs as losses, at least one")
        infinity = _real("infinity", self.infinity, low=0.0, high=1.0)
        if abs(sum(probs) + infinity - 1.0) > 1e-9:
            raise ValueError(f"probs and infinity must add up to 1 (got "
                             f"{sum(probs) + infinity!r})")
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "probs", probs)
        object.__setattr__(self, "infinity", infinity)
        object.__setattr__(self, "step", _real("step", self.step, low=0.0, low_open=True))
