"""Strict JSON values: what ``json.dumps(..., allow_nan=False)`` accepts."""

from __future__ import annotations

import math
from typing import Any


def jsonable(obj: Any) -> Any:
    """Strict JSON: infinite losses (an exposed node) become the string ``"inf"``.

    Dicts and lists/tuples are converted recursively (tuples become lists); a float
    ``inf``, ``-inf`` or ``nan`` becomes ``"inf"``, ``"-inf"`` or ``"nan"``; anything else
    is returned as it is.
    """
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return "inf" if obj > 0 else ("-inf" if obj < 0 else "nan")
    return obj
