"""What a run will need, checked before anything is built.

A task states its peak memory by part (:meth:`netdp.tasks.base.Sized.footprint`) and the
seconds one run takes by part (:meth:`netdp.tasks.base.Timed.work`); a run whose total
exceeds this machine's memory limit, or whose runs together exceed the time limit, is
refused with one line naming the part, the parameter that drives it, the estimate and the
limit, instead of a ``MemoryError`` (or swapping) half-way or a run without end.

The memory limit is the smallest of 80 % of the physical memory (or ``NETDP_MEMORY_LIMIT``
in its place: bytes, or with a ``K``/``M``/``G``/``T`` suffix), the cgroup's limit
(``memory.max``, v1 ``memory.limit_in_bytes``) and the address space limit (``ulimit
-v``). The time limit is ``NETDP_TIME_LIMIT`` (seconds, or with an ``s``/``m``/``h``
suffix; ``inf`` for none), one hour by default. See docs/performance.md.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from netdp.core.errors import InputError
from netdp.core.limits import (  # noqa: F401  (re-exported: the limits live in core)
    DEFAULT_TIME_LIMIT,
    SECONDS,
    Parts,
    check_seconds,
    duration,
    time_limit,
)
from netdp.graphs.time_varying import names_time_varying, snapshot_nodes
from netdp.graphs.topologies import check_size, expected_size
from netdp.graphs.walk_kind import kind_of
from netdp.tasks.base import footprint, theory_work, work
from netdp.tasks.preparation import topology_source

if TYPE_CHECKING:
    from netdp.core.simulation_config import SimulationConfig
    from netdp.tasks.base import Task

UNITS = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
#: Seconds networkx and the CSR conversion take per edge and per node of an explicit graph
#: (halved, as :data:`netdp.tasks.base.HOP_SECONDS`).
GRAPH_EDGE_SECONDS, GRAPH_NODE_SECONDS = 1e-6, 1e-6
#: Where a cgroup states its memory limit (v2, then v1).
CGROUP_FILES = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def memory_limit() -> int:
    """Bytes a run may hold: the smallest of :func:`memory_limits`."""
    return min(memory_limits().values())


def memory_limits() -> dict[str, int]:
    """Each limit on the bytes a run may hold, by its name in the messages."""
    out = {"NETDP_MEMORY_LIMIT" if os.environ.get("NETDP_MEMORY_LIMIT", "").strip()
           else "80 % of the physical memory": _own_limit()}
    for path in CGROUP_FILES:
        try:
            text = Path(path).read_text().strip()
        except (OSError, UnicodeDecodeError):
            continue
        if text.isdigit() and int(text) < 2**62:
            out["the cgroup's memory limit"] = int(text)
        break
    try:
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ValueError, OSError):
        soft = resource.RLIM_INFINITY
    if soft != resource.RLIM_INFINITY and soft > 0:
        out["ulimit -v"] = int(soft)
    return out


def _own_limit() -> int:
    """``NETDP_MEMORY_LIMIT`` or 80 % of the physical memory."""
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


def peak_resident_bytes() -> int:
    """This process's peak resident memory so far, in bytes.

    Linux's ``VmHWM`` of ``/proc/self/status``: the high-water mark of this process's own
    memory since it started. ``getrusage``'s ``ru_maxrss`` is not that: a child started by
    ``subprocess`` (vfork, then exec) inherits its parent's peak there, so a small run
    started from a large process reports the parent's peak (seen in CI, where both sizes of
    a benchmark then "peaked" at the test worker's memory). Elsewhere ``ru_maxrss``, in
    bytes (macOS reports bytes, Linux KiB).
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if os.uname().sysname == "Darwin" else peak * 1024


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


def check_footprint(task: Task, config: SimulationConfig, runs: int | None = None,
                    runs_flag: str = "runs",
                    extra: Callable[[int, int], Parts] | None = None) -> None:
    """Raise :class:`InputError` when the run would not fit in :func:`memory_limit`, or
    its ``runs`` (default ``config.runs``; ``runs_flag`` names them), with the ``extra``
    work of a command around them (seconds by part, from n and the steps), would take
    longer than :func:`time_limit`."""
    n, steps = planned_size(task, config)
    n, steps = min(n, 10**300), min(steps, 10**300)  # float-safe: beyond, any estimate
    # is over any limit
    if config.tokens > 10**300:
        config = config.replace(tokens=10**300)
    once = extra(n, steps) if extra is not None else {}
    once.update(theory_work(task, config, n))  # a report's theory lines: once, not per run
    if not kind_of(config.topology).implicit and not names_time_varying(
            topology_source(config), config.graph_format):

        check_size(topology_source(config), config.nodes, weight=None if config.graph
                   is not None else config.weight, fmt=config.graph_format,
                   directed=config.directed)  # the graph's own limits, named first
        edges = expected_size(topology_source(config), config.nodes,
                              fmt=config.graph_format)[1] or 0
        once["building the graph"] = (GRAPH_EDGE_SECONDS * edges + GRAPH_NODE_SECONDS * n,
                                      "nodes")
    check_time(task, config, n, steps, config.runs if runs is None else runs, runs_flag, once)
    parts = footprint(task, config, n, steps)  # after the time: a footprint may take a while
    total = sum(size for size, _ in parts.values())
    limits = memory_limits()
    which, limit = min(limits.items(), key=lambda item: item[1])
    tokens = f" x {shown(config.tokens)} tokens" if config.tokens > 1 else ""
    size_note = f"n = {shown(n)}, {shown(steps)} steps per token{tokens}"
    if total > limit:
        what, (size, param) = max(parts.items(), key=lambda item: item[1][0])
        raise InputError(_given(param, config),
                         f"this run would hold about {human(total)} ({what}: {human(size)}; "
                         f"{size_note}), more than the {human(limit)} this machine allows "
                         f"({which})")


def check_time(task: Task, config: SimulationConfig, n: int, steps: int, runs: int,
               runs_flag: str = "runs", extra: Parts | None = None) -> None:
    """Raise :class:`InputError` when ``runs`` runs (and the ``extra`` parts, seconds once)
    would take longer than :func:`time_limit`."""
    parts = {what: (runs * seconds, runs_flag if runs > 1 and seconds * 10 <= time_limit()
                    else param) for what, (seconds, param) in work(task, config, n,
                                                                  steps).items()}
    parts.update(extra or {})
    largest = max(parts, key=lambda what: parts[what][0])
    many = f" over {shown(runs)} runs" if runs > 1 and largest not in (extra or {}) else ""
    check_seconds({what: (seconds, _given(param, config)) for what, (seconds, param)
                   in parts.items()}, f"{many}; n = {shown(n)}, {shown(steps)} steps per token")


def _given(param: str, config: SimulationConfig) -> str:
    """``param``, or ``nodes`` where it is the steps and they follow from the nodes (no
    ``--steps`` given)."""
    return "nodes" if param == "steps" and config.steps is None and config.nodes is not None \
        else param


def shown(x: float) -> str:
    """``12,000`` below a billion, else ``1.2e+30``: a huge number stays short."""
    return f"{x:,}" if isinstance(x, int) and abs(x) < 10**9 else f"{float(x):.3g}"
