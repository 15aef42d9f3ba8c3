"""A theory curve's values on the rows of a result table (:func:`netdp.run.sweep.plots.
theory_columns` fills the rows that lack them): the rows it bounds and its value at each
row's setting."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["curve_applies", "curve_values"]


def curve_applies(df: pd.DataFrame, curve: str) -> pd.Series:
    """The rows the curve bounds, as the curve declares (:meth:`Curve.applies`)."""
    from netdp.bounds.curves import CURVES

    topo = df.get("topology", pd.Series("complete", index=df.index)).astype(str)
    task = df.get("task", pd.Series("sum", index=df.index)).astype(str)
    found = CURVES[curve]
    return (task == found.task) & (topo == found.topology)


def curve_values(rows: pd.DataFrame, name: str) -> np.ndarray:
    """The curve at each row's setting: at the row's one target δ where the report had one
    (``privacy_target_delta``; Gaussian contributions read from ``mechanism_sigma`` /
    ``mechanism_sensitivity``), else at ``delta`` as its paper spends it."""
    from netdp.bounds.curves import CURVES

    n = rows["nodes"].to_numpy(float)
    eps0 = rows["eps0" if "eps0" in rows else "epsilon"].to_numpy(float)
    params = {"n": n, "eps0": eps0, "delta": rows["delta"].to_numpy(float)}
    steps = pd.to_numeric(rows.get("steps"), errors="coerce") if "steps" in rows else None
    params["T"] = (steps.fillna(pd.Series(100 * n, index=rows.index)).to_numpy(float)
                   if steps is not None else 100 * n)
    params["K"] = rows["rounds"].to_numpy(float) if "rounds" in rows else np.ones_like(n)
    curve = CURVES[name]
    with np.errstate(all="ignore"):
        out = np.asarray(curve(**params), dtype=float) * np.ones_like(n)
        target = _numbers(rows, "privacy_target_delta")  # the report's, not the config's
        sigma = _numbers(rows, "mechanism_sigma") / _numbers(rows, "mechanism_sensitivity")
        for i in np.flatnonzero(np.isfinite(target)):
            z = float(sigma[i]) if np.isfinite(sigma[i]) and sigma[i] > 0 else None
            out[i] = float(curve.at_target(float(target[i]), z,
                                           **{k: v[i] for k, v in params.items()}))
    return out


def _numbers(rows: pd.DataFrame, column: str) -> np.ndarray:
    """``rows[column]`` as floats (NaN where absent or not a number)."""
    if column not in rows:
        return np.full(len(rows), np.nan)
    return pd.to_numeric(rows[column], errors="coerce").to_numpy(float)
