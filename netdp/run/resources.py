"""What a run will need, checked before anything is built.

A task states its peak memory by part (:meth:`netdp.tasks.base.Task.footprint`); a run
whose total exceeds this machine's memory limit is refused with one line naming the part
and the parameter that drives it, instead of a ``MemoryError`` (or swapping) half-way.
The limit is 80 % of the physical memory, or ``NETDP_MEMORY_LIMIT`` (bytes, or with a
``K``/``M``/``G``/``T`` suffix).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from netdp.core.errors import InputError
from netdp.graphs.time_varying import names_time_varying, snapshot_nodes
from netdp.graphs.topologies import check_size, expected_size
from netdp.graphs.walk_kind import kind_of
from netdp.tasks.base import footprint
from netdp.tasks.preparation import topology_source

if TYPE_CHECKING:
    from netdp.core.simulation_config import SimulationConfig
    from netdp.tasks.base import Task

UNITS = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def memory_limit() -> int:
    """Bytes a run may hold: ``NETDP_MEMORY_LIMIT`` or 80 % of the physical memory."""
    text = os.environ.get("NETDP_MEMORY_LIMIT", "").strip().upper().removesuffix("B")
    if text:
        try:
            limit = float(text[:-1]) * UNITS[text[-1]] if text[-1] in UNITS else float(text)
            if not 0 < limit < 2.0**63:
                raise ValueError(limit)
            return int(limit)
        except ValueError:
            raise InputError("NETDP_MEMORY_LIMIT", f"expected bytes like 16G, above 0 and "
                                                   f"below 8E (got "
                                                   f"{os.environ['NETDP_MEMORY_LIMIT']!r})")\
                from None
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX: assume 16 GiB
        total = 16 * 2**30
    return int(0.8 * total)


def human(nbytes: float) -> str:
    """``3.1 GiB``."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{nbytes:.0f} B"


def planned_size(task: Task, config: SimulationConfig) -> tuple[int, int]:
    """Nodes and steps per token the run will have, from the config alone."""
    n, kind = config.nodes, kind_of(config.topology)
    if n is None:
        n = task.default_nodes
        source = topology_source(config)
        if names_time_varying(source, config.graph_format):
            n = snapshot_nodes(source, config.graph_format)
        elif not kind.implicit:

            n = expected_size(source, None, fmt=config.graph_format)[0]
    steps = kind.steps_per_token(n=n, rounds=config.rounds, steps=config.steps,
                                 steps_per_node=task.steps_per_node)
    return n, steps


def check_footprint(task: Task, config: SimulationConfig) -> None:
    """Raise :class:`InputError` when the run would not fit in :func:`memory_limit`."""
    n, steps = planned_size(task, config)
    if not kind_of(config.topology).implicit and not names_time_varying(
            topology_source(config), config.graph_format):

        check_size(topology_source(config), config.nodes, weight=None if config.graph
                   is not None else config.weight, fmt=config.graph_format,
                   directed=config.directed)  # the graph's own limits, named first
    parts = footprint(task, config, n, steps)
    total = sum(size for size, _ in parts.values())
    limit = memory_limit()
    if total <= limit:
        return
    what, (size, param) = max(parts.items(), key=lambda item: item[1][0])
    tokens = f" x {config.tokens:,} tokens" if config.tokens > 1 else ""
    raise InputError(param, f"this run would hold about {human(total)} ({what}: "
                            f"{human(size)}; n = {n:,}, {steps:,} steps per token{tokens}), "
                            f"more than the {human(limit)} this machine allows "
                            f"(NETDP_MEMORY_LIMIT)")
