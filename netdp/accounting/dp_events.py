"""netdp's events and dp-accounting's ``DpEvent``\\ s, converted both ways.

netdp keeps its own frozen events (:mod:`netdp.accounting.events`): they name a
mechanism's sensitivity beside its noise, and :class:`~netdp.accounting.events.ApproxDP`
(a mechanism known only by its ``(ε, δ)``) and
:class:`~netdp.accounting.events.PrivacyLoss` (one given by its privacy loss
distribution: in dp-accounting, a ``PrivacyLossDistribution`` rather than an event) have no
dp-accounting twin. Every other event
maps one to one, with the same privacy:

======================================  ==============================================
netdp                                   dp-accounting
======================================  ==============================================
``Gaussian(sigma, sensitivity)``        ``GaussianDpEvent(sigma / sensitivity)``
``Laplace(scale, sensitivity)``         ``LaplaceDpEvent(scale / sensitivity)``
``RandomizedResponse(epsilon, k)``      ``RandomizedResponseDpEvent(gamma, k)``
``PureDP(epsilon)``                     ``RandomizedResponseDpEvent(gamma, 2)`` (its worst
                                        case, binary randomized response)
``Composed(events)``                    ``ComposedDpEvent(events)``
``Repeated(event, count)``              ``SelfComposedDpEvent(event, count)``
``Subsampled(event, q)``                ``PoissonSampledDpEvent(q, event)``
a sensitivity of 0, ``Composed(())``    ``NoOpDpEvent()``
======================================  ==============================================

``gamma = k / (e^ε + k - 1)`` is the probability of answering uniformly at random. A
Gaussian or Laplace event comes back with sensitivity 1 and the noise in its units (the
same mechanism up to scale). Every accountant of :mod:`netdp.accounting` also takes
dp-accounting's events directly (:class:`~netdp.accounting.base.Accountant` converts them).

Examples
--------
>>> import dp_accounting
>>> from netdp.accounting.events import Gaussian, Repeated
>>> to_dp_accounting(Repeated(Gaussian(sigma=2.0, sensitivity=0.5), 3))
SelfComposedDpEvent(event=GaussianDpEvent(noise_multiplier=4.0), count=3)
>>> from_dp_accounting(dp_accounting.PoissonSampledDpEvent(0.01,
...                    dp_accounting.GaussianDpEvent(1.1)))
Subsampled(event=Gaussian(sigma=1.1, sensitivity=1.0), probability=0.01)
"""

from __future__ import annotations

import math
import sys
from typing import Any

from netdp.accounting.events import (
    ApproxDP,
    Composed,
    DpEvent,
    Gaussian,
    Laplace,
    PrivacyLoss,
    PureDP,
    RandomizedResponse,
    Repeated,
    Subsampled,
)


def is_dp_accounting_event(event: object) -> bool:
    """Whether ``event`` is a dp-accounting ``DpEvent`` (without importing dp-accounting
    when it is not loaded yet: then it cannot be one)."""
    module = sys.modules.get("dp_accounting.dp_event")
    return module is not None and isinstance(event, module.DpEvent)


def to_dp_accounting(event: DpEvent) -> Any:
    """dp-accounting's ``DpEvent`` for netdp's ``event`` (the table of the module
    docstring); ``ValueError`` for :class:`~netdp.accounting.events.ApproxDP`, which
    dp-accounting has no event for."""
    import dp_accounting as dpa

    if isinstance(event, Gaussian):
        if event.sensitivity == 0:
            return dpa.NoOpDpEvent()
        return dpa.GaussianDpEvent(event.sigma / event.sensitivity)
    if isinstance(event, Laplace):
        if event.sensitivity == 0:
            return dpa.NoOpDpEvent()
        return dpa.LaplaceDpEvent(event.scale / event.sensitivity)
    if isinstance(event, RandomizedResponse):
        return dpa.RandomizedResponseDpEvent(event.gamma, event.domain)
    if isinstance(event, PureDP):
        return dpa.RandomizedResponseDpEvent(RandomizedResponse(event.epsilon, 2).gamma, 2)
    if isinstance(event, Composed):
        if not event.events:
            return dpa.NoOpDpEvent()
        return dpa.ComposedDpEvent([to_dp_accounting(e) for e in event.events])
    if isinstance(event, Repeated):
        return dpa.SelfComposedDpEvent(to_dp_accounting(event.event), event.count)
    if isinstance(event, Subsampled):
        return dpa.PoissonSampledDpEvent(event.probability, to_dp_accounting(event.event))
    if isinstance(event, ApproxDP):
        raise ValueError(f"dp-accounting has no event for a mechanism known only by its "
                         f"(epsilon, delta): {event!r}")
    if isinstance(event, PrivacyLoss):
        raise ValueError("dp-accounting has no event for a privacy loss distribution: "
                         "compose it as a PrivacyLossDistribution")
    raise TypeError(f"not a netdp event: {event!r}")


def from_dp_accounting(event: Any) -> DpEvent:
    """netdp's event for dp-accounting's ``event`` (the table of the module docstring);
    ``ValueError`` for the events netdp has no twin of (a tree aggregation, sampling
    without replacement, a truncated subsampled Gaussian, zCDP, a non-private or an
    unsupported event)."""
    import dp_accounting as dpa

    if isinstance(event, dpa.GaussianDpEvent):
        return Gaussian(sigma=event.noise_multiplier, sensitivity=1.0)
    if isinstance(event, dpa.LaplaceDpEvent):
        return Laplace(scale=event.noise_multiplier, sensitivity=1.0)
    if isinstance(event, dpa.RandomizedResponseDpEvent):
        return RandomizedResponse(_rr_epsilon(event.noise_parameter, event.num_buckets),
                                  event.num_buckets)
    if isinstance(event, dpa.NoOpDpEvent):
        return Composed(())
    if isinstance(event, dpa.ComposedDpEvent):
        return Composed(tuple(from_dp_accounting(e) for e in event.events))
    if isinstance(event, dpa.SelfComposedDpEvent):
        return Repeated(from_dp_accounting(event.event), event.count)
    if isinstance(event, dpa.PoissonSampledDpEvent):
        return Subsampled(from_dp_accounting(event.event), event.sampling_probability)
    if isinstance(event, dpa.DpEvent):
        raise ValueError(f"netdp has no event for dp-accounting's {type(event).__name__}")
    raise TypeError(f"not a dp-accounting DpEvent: {event!r}")


def as_netdp_event(event: Any) -> DpEvent:
    """``event`` itself if it is netdp's, else :func:`from_dp_accounting` of it."""
    if isinstance(event, DpEvent):
        return event
    if is_dp_accounting_event(event):
        return from_dp_accounting(event)
    raise TypeError(f"not a privacy event (netdp's or dp-accounting's): {event!r}")


def _rr_epsilon(gamma: float, k: int) -> float:
    """``ε`` of ``k``-ary randomized response answering at random with probability
    ``gamma``: ``ln(k / gamma - k + 1)`` (``inf`` at ``gamma = 0``)."""
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"noise_parameter must lie in [0, 1] (got {gamma!r})")
    return math.inf if gamma == 0 else math.log(k / gamma - k + 1)
