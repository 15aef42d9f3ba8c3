"""A node's randomizer given as a privacy event: dp-accounting's or netdp's.

A user who describes a mechanism as a dp-accounting event can put it on the walk (or in
gossip) as it is: ``netdp.simulate({"mechanism": dp_accounting.GaussianDpEvent(2.0)})``,
or in a TOML config, ``mechanism = {event = "GaussianDpEvent", noise_multiplier = 2.0}``
(dp-accounting's class and field names). Each
becomes the built-in randomizer with the same noise, and so the same figures:

=========================================  ==================================================
event                                      the run's parameters
=========================================  ==================================================
``GaussianDpEvent(z)``, ``Gaussian(σ, Δ)``  ``mechanism = "gaussian"``, ``calibration =
                                           "analytic"``, ``epsilon`` the Gaussian's exact ε
                                           at the run's δ (its σ is then ``z`` times the
                                           range's width, to 1e-9); gossip averaging:
                                           ``sigma = z``
``LaplaceDpEvent(b)``, ``Laplace(b, Δ)``    ``mechanism = "laplace"``, ``epsilon = 1 / b``
``RandomizedResponseDpEvent(p, k)``,       ``--task histogram``, ``mechanism = "grr"``,
``RandomizedResponse(ε, k)``               ``domain = k``, ``epsilon = ln(k / p - k + 1)``
=========================================  ==================================================

A noise multiplier is in units of the sensitivity, as in dp-accounting and Opacus: the
sum's sensitivity is its range's width. Other events (subsampling, composition, a
privacy loss distribution of one's own) describe more than one node's perturbation, and
are refused.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Any

from netdp.accounting.dp_events import as_netdp_event, is_dp_accounting_event
from netdp.accounting.events import DpEvent, Gaussian, Laplace, RandomizedResponse
from netdp.core.errors import InputError

#: The keys of a TOML ``mechanism = {event = ...}`` table, by event.
TABLE_KEYS = {"GaussianDpEvent": ("noise_multiplier",),
              "LaplaceDpEvent": ("noise_multiplier",),
              "RandomizedResponseDpEvent": ("noise_parameter", "num_buckets")}


def is_event(value: Any) -> bool:
    """Whether a ``mechanism`` value is an event (netdp's, dp-accounting's, or a TOML
    table naming one) rather than a randomizer's name."""
    return isinstance(value, DpEvent | Mapping) or is_dp_accounting_event(value)


def event_params(value: Any, delta: float, own: Collection[str] = ()) -> dict[str, Any]:
    """The run's parameters for the event ``value`` (module docstring), at the run's
    ``delta``, for a task whose own parameters are ``own`` (gossip averaging takes a
    Gaussian's ``sigma`` itself); :class:`InputError` on ``mechanism`` for anything
    else."""
    from netdp.accounting.gdp import gaussian_epsilon

    event = _from_table(value) if isinstance(value, Mapping) else value
    try:
        event = as_netdp_event(event)
    except (TypeError, ValueError) as exc:
        raise InputError("mechanism", f"not an event netdp can put on a node: {exc}") from None
    if isinstance(event, Gaussian) and event.sensitivity > 0:
        z = event.sigma / event.sensitivity
        if "sigma" in own and "mechanism" not in own:  # gossip: σ in units of the width
            return {"sigma": z}
        return {"mechanism": "gaussian", "calibration": "analytic",
                "epsilon": _above(float(gaussian_epsilon(1.0 / z, delta)), z, delta)}
    if isinstance(event, Laplace) and event.sensitivity > 0:
        return {"mechanism": "laplace", "epsilon": event.sensitivity / event.scale}
    if isinstance(event, RandomizedResponse) and event.epsilon > 0:
        return {"task": "histogram", "mechanism": "grr", "domain": event.domain,
                "epsilon": event.epsilon}
    raise InputError("mechanism", f"must be one node's Gaussian, Laplace or randomized "
                     f"response with some noise and some privacy loss (got {event!r})")


def _above(epsilon: float, z: float, delta: float) -> float:
    """An ε at or just above ``epsilon`` whose analytic σ at ``delta`` is at most ``z``
    (the root-finders' rounding: the run's noise then never exceeds the event's)."""
    from netdp.mechanisms.noise import analytic_sigma

    step = math.ulp(epsilon)
    while analytic_sigma(epsilon, delta) > z:  # steps doubling: at most twice the need
        epsilon += step
        step *= 2.0
    return epsilon


def _from_table(table: Mapping[str, Any]) -> Any:
    """dp-accounting's event for ``{event = CLASS, FIELD = VALUE, ...}``
    (:data:`TABLE_KEYS`)."""
    import dp_accounting as dpa

    name = table.get("event")
    if name not in TABLE_KEYS:
        raise InputError("mechanism", f"a table names its event: event = one of "
                         f"{', '.join(TABLE_KEYS)} (got {name!r})")
    keys = set(table) - {"event"}
    if keys != set(TABLE_KEYS[name]):
        raise InputError("mechanism", f"event = {name!r} takes "
                         f"{', '.join(TABLE_KEYS[name])} (got {', '.join(sorted(keys))})")
    try:
        if name == "GaussianDpEvent":
            return dpa.GaussianDpEvent(_positive(table["noise_multiplier"]))
        if name == "LaplaceDpEvent":
            return dpa.LaplaceDpEvent(_positive(table["noise_multiplier"]))
        buckets = table["num_buckets"]
        if isinstance(buckets, bool) or not isinstance(buckets, int) or buckets < 2:
            raise ValueError(f"num_buckets must be an integer >= 2 (got {buckets!r})")
        p = float(table["noise_parameter"])
        if not 0 < p <= 1:
            raise ValueError(f"noise_parameter must lie in (0, 1] (got {p!r})")
        return dpa.RandomizedResponseDpEvent(p, buckets)
    except (TypeError, ValueError) as exc:
        raise InputError("mechanism", str(exc)) from None


def _positive(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            0 < float(value) < math.inf):
        raise ValueError(f"noise_multiplier must be a positive number (got {value!r})")
    return float(value)
