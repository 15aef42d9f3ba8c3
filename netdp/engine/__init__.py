"""Engines that move tokens: a vectorized one and a discrete-event one (simpy).

Light to import: the engines themselves (simpy, the routing of explicit graphs) load when
a walk runs. ``Router`` and ``resolve_walk`` come from :mod:`netdp.engine.routing`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from netdp.core.errors import InputError, check
from netdp.core.simulation_config import ENGINES
from netdp.engine import routing
from netdp.engine.clock import CONSTANT, Latency, parse_latency
from netdp.engine.faults import from_config
from netdp.engine.trace import Trace
from netdp.engine.vector_walk import run as vector_run
from netdp.graphs.walk_kind import kind_of

if TYPE_CHECKING:
    from netdp.engine.routing import Router

__all__ = ["ENGINES", "Latency", "Router", "Trace", "check_config", "choose", "parse_latency",
           "resolve_walk", "walk"]


def choose(engine: str, tokens: int, service_time: float, faults: bool = False) -> str:
    """Resolve ``auto``: the vector engine whenever it is exact.

    It is exact unless tokens can queue at a node (several tokens and a service time) or
    faults are on (only the event engine has them).
    """
    if engine not in ENGINES:
        raise InputError("engine", f"must be one of {', '.join(ENGINES)} (got {engine!r})")
    contention = tokens > 1 and service_time > 0
    if engine == "vector" and contention:
        raise InputError("engine", "vector cannot queue tokens at busy nodes "
                         "(several tokens with --service-time > 0); use event or auto")
    if engine == "auto":
        return "event" if contention or faults else "vector"
    return engine


def check_config(config: Any) -> None:
    """Refuse what the engines cannot run: a malformed latency, faults on the vector engine,
    stragglers or a recovery rule on gossip, a recovery rule that breaks the ring's schedule.

    Called by :func:`netdp.tasks.make_config` once the config's own fields are checked.
    """

    parse_latency(config.latency)
    if from_config(config) is None:
        return
    if config.protocol == "gossip":
        check(config.slow is None, "slow", "synchronous gossip rounds have no stragglers "
              "(leave --slow out)")
        check(config.on_loss == "resend", "on-loss", "gossip moves no token: a receiver "
              "that misses a message uses the last value it got (leave --on-loss out)")
    else:
        check(config.engine != "vector", "engine", "vector has no faults; use event or auto")
        check(not (kind_of(config.topology).public_schedule and config.on_loss != "resend"),
              "on-loss",
              "the ring's schedule is fixed: a skipped node or a new token breaks it; "
              "use resend")


def walk(engine: str, router: Router, steps: int, walk_rngs: Sequence[np.random.Generator],
         latency: Latency = CONSTANT, latency_rngs: Sequence[np.random.Generator] = (),
         service_time: float = 0.0, faults: Any = None) -> Trace:
    """Run the named engine (``event`` or ``vector``) and return its trace. ``faults``:
    the run's :class:`~netdp.engine.faults.FaultRun` (event engine only)."""
    if engine == "event":
        from netdp.engine.event_walk import run

        if isinstance(router, routing.TimedRouter):
            raise InputError("engine", "a time-varying graph runs on the vector engine (its "
                             "clock is the walk's steps); drop --engine event, --latency "
                             "and --service-time")

        return run(router, steps, walk_rngs, latency, latency_rngs, service_time, faults)

    return vector_run(router, steps, walk_rngs, latency, latency_rngs, service_time)


def __getattr__(name: str) -> Any:
    if name in ("Router", "resolve_walk"):

        return getattr(routing, name)
    raise AttributeError(f"module 'netdp.engine' has no attribute {name!r}")
