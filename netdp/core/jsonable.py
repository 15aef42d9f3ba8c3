"""Strict JSON for results: non-finite floats become strings, arrays lists."""

from __future__ import annotations

import math
from typing import Any


def jsonable(obj: Any) -> Any:
    """``obj`` with infinite losses as ``"inf"`` (an exposed node), NaN as ``"nan"``,
    tuples and numpy arrays as lists and numpy scalars as Python numbers."""
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    if hasattr(obj, "tolist") and not isinstance(obj, str):  # numpy arrays and scalars
        return jsonable(obj.tolist())
    if isinstance(obj, float) and not math.isfinite(obj):
        return "inf" if obj > 0 else ("-inf" if obj < 0 else "nan")
    return obj
