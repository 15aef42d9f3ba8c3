"""The time limit of a run (``NETDP_TIME_LIMIT``) and the check of estimated seconds
against it: in the lowest layer, so that a reader (a graph file's parser) can refuse a
file whose parsing alone would exceed it, before parsing (docs/performance.md, "Limits").
:mod:`netdp.run.resources` holds the estimates of the runs themselves."""

from __future__ import annotations

import math
import os

from netdp.core.errors import InputError

SECONDS = {"S": 1, "M": 60, "H": 3600}
DEFAULT_TIME_LIMIT = 3600.0
#: Estimated seconds of each part of a run, and the parameter that drives it.
Parts = dict[str, tuple[float, str]]


def time_limit() -> float:
    """Seconds a run may take: ``NETDP_TIME_LIMIT`` (``inf``: none) or an hour."""
    raw = os.environ.get("NETDP_TIME_LIMIT", "").strip()
    text = raw.upper()
    if not text:
        return DEFAULT_TIME_LIMIT
    try:
        limit = float(text[:-1]) * SECONDS[text[-1]] if text[-1] in SECONDS else float(text)
        if not limit > 0 or math.isnan(limit):
            raise ValueError(limit)
        return limit
    except ValueError:
        raise InputError("NETDP_TIME_LIMIT", f"expected seconds like 600, 10m or 2h, above 0, "
                                             f"or inf (got {raw!r})") from None


def duration(seconds: float) -> str:
    """``2.5 h``."""
    for unit, size in (("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.2g} s"


def check_seconds(parts: Parts, note: str = "") -> None:
    """Raise :class:`InputError` when the ``parts`` (seconds, parameter) together exceed
    :func:`time_limit`, naming the largest part's parameter (``note`` follows its time)."""
    total = sum(seconds for seconds, _ in parts.values())
    limit = time_limit()
    if total <= limit:
        return
    what, (seconds, param) = max(parts.items(), key=lambda item: item[1][0])
    if total < 1.0:  # a run this small has no size to lower: the limit is what to change
        param = "NETDP_TIME_LIMIT"
    raise InputError(param, f"this run would take about {duration(total)} ({what}: "
                            f"{duration(seconds)}{note}), more than the {duration(limit)} "
                            f"allowed (NETDP_TIME_LIMIT)")
