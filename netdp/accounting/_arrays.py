"""Array helpers shared by the vectorized closed forms of :mod:`netdp.accounting`."""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from netdp.core import progress

_Scalar = TypeVar("_Scalar", bound=np.generic)


def _f(x: npt.ArrayLike) -> np.ndarray:
    """As a float64 array."""
    return np.asarray(x, dtype=np.float64)


def _out(x: npt.NDArray[_Scalar]) -> npt.NDArray[_Scalar] | _Scalar:
    """A numpy scalar for 0-d results, the array otherwise."""
    return x[()] if isinstance(x, np.ndarray) and x.ndim == 0 else x


def _check(cond: np.ndarray | bool, msg: str) -> None:
    """Raise ``ValueError(msg)`` unless every element of ``cond`` holds."""
    if not np.all(cond):
        raise ValueError(msg)


def geometric_bins(values: np.ndarray, exact: int, ratio: float) -> np.ndarray:
    """Bin id of each positive integer: its own bin up to ``exact``, then bins whose
    edges grow by ``ratio`` (``exact + ceil(log_ratio(v / exact))``)."""
    values = np.asarray(values, dtype=np.int64)
    out = values.copy()
    big = values > exact
    out[big] = exact + np.ceil(np.log(values[big] / exact) / np.log(ratio) - 1e-9).astype(
        np.int64
    )
    return out


def observer_bar(nodes: Any, desc: str) -> Any:
    """The observers, with a progress bar when the loop runs long
    (:func:`netdp.core.progress.bar`: a terminal, not quiet, after 2 s)."""
    return progress.bar(nodes, total=len(nodes), desc=desc, unit="observer")
