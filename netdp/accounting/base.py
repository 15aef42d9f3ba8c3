"""The accountant interface: ``epsilon(event, delta)`` and ``delta(event, epsilon)`` over the
frozen events of :mod:`netdp.accounting.events` (the two methods of dp-accounting's
``PrivacyAccountant``), and the checks every accountant shares."""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from netdp.accounting.amplification import subsampled_delta, subsampled_epsilon
from netdp.accounting.dp_events import as_netdp_event
from netdp.accounting.events import (
    ApproxDP,
    Composed,
    DpEvent,
    Gaussian,
    Laplace,
    PureDP,
    RandomizedResponse,
    Repeated,
    Subsampled,
)


class Accountant(ABC):
    """Interface: ``name``, ``epsilon(event, delta)`` and ``delta(event, epsilon)``.

    Both take netdp's events or dp-accounting's ``DpEvent``\\ s: a subclass's two methods
    are wrapped to convert the latter (:mod:`netdp.accounting.dp_events`)."""

    name: str = ""
    description: str = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for method in ("epsilon", "delta"):
            if method in cls.__dict__:
                setattr(cls, method, _converting(cls.__dict__[method]))

    @abstractmethod
    def epsilon(self, event: DpEvent, delta: float) -> float:
        """Smallest epsilon this method certifies for ``event`` at total ``delta``."""

    def delta(self, event: DpEvent, epsilon: float) -> float:
        """Smallest total delta this method certifies for ``event`` at ``epsilon``."""
        raise NotImplementedError(f"accountant {self.name!r} does not compute delta(epsilon)")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def _converting(method: Callable[..., float]) -> Callable[..., float]:
    """``method(self, event, ...)`` taking dp-accounting's events too."""
    if getattr(method, "_converts", False):
        return method

    @functools.wraps(method)
    def wrapped(self: Any, event: Any, *args: Any, **kwargs: Any) -> float:
        if not isinstance(event, DpEvent):
            event = as_netdp_event(event)
        return method(self, event, *args, **kwargs)

    wrapped._converts = True  # type: ignore[attr-defined]
    return wrapped


def check_delta(delta: float) -> float:
    d = float(delta)
    if not 0.0 < d <= 1.0:
        raise ValueError(f"delta must be in (0, 1], got {delta!r}")
    return d


def check_epsilon(epsilon: float) -> float:
    e = float(epsilon)
    if not e >= 0.0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
    return e


def approx_units(event: DpEvent, who: str) -> dict[tuple[float, float], int]:
    """Flatten ``event`` into ``{(eps_i, delta_i): count}`` of (eps, delta)-DP steps."""
    units: dict[tuple[float, float], int] = {}

    def add(key: tuple[float, float], count: int) -> None:
        if count:
            units[key] = units.get(key, 0) + count

    def walk(e: DpEvent, mult: int) -> None:
        if isinstance(e, (PureDP, RandomizedResponse, Laplace)):
            add((float(e.epsilon), 0.0), mult)
        elif isinstance(e, ApproxDP):
            add((e.epsilon, e.delta), mult)
        elif isinstance(e, Composed):
            for sub in e.events:
                walk(sub, mult)
        elif isinstance(e, Repeated):
            walk(e.event, mult * e.count)
        elif isinstance(e, Subsampled):
            inner = approx_units(e.event, who)
            eps_tot = sum(k[0] * c for k, c in inner.items())
            del_tot = min(1.0, sum(k[1] * c for k, c in inner.items()))
            if inner:
                add(
                    (
                        float(subsampled_epsilon(eps_tot, e.probability)),
                        float(subsampled_delta(del_tot, e.probability)),
                    ),
                    mult,
                )
        elif isinstance(e, Gaussian):
            raise TypeError(
                f"accountant {who!r} needs (eps, delta)-DP steps; a Gaussian event has no "
                "single (eps, delta): use 'gdp', 'rdp' or 'pld', or wrap it as ApproxDP"
            )
        else:
            raise TypeError(f"accountant {who!r} cannot handle event {e!r}")

    walk(event, 1)
    return units


def homogeneous(units: dict[tuple[float, float], int], who: str) -> tuple[float, float, int]:
    """The single ``(eps, delta)`` of a homogeneous composition, and the count."""
    if not units:
        return 0.0, 0.0, 0
    keys = list(units)
    e0, d0 = keys[0]
    for e, d in keys[1:]:
        if not (math.isclose(e, e0, rel_tol=1e-12) and math.isclose(d, d0, rel_tol=1e-12)):
            raise ValueError(
                f"accountant {who!r} needs a homogeneous composition (identical steps); "
                f"got {len(keys)} different (eps, delta) values: use 'kov' or 'rdp'"
            )
    return e0, d0, sum(units.values())
