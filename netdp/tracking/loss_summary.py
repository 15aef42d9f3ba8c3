"""Summaries of loss tables without n×n: exact weighted statistics (mean, min, max, quantiles)
over all ordered pairs of all runs, a dense matrix where one is asked for, and the ratio
of a tracker's figures to the exact ones."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from netdp.core.errors import InputError
from netdp.report.types import QUANTILES
from netdp.tracking.loss_table import PairLosses


def dense(losses: PairLosses, members: Sequence[int] = ()) -> np.ndarray:
    """``(observers, n)`` losses of every pair, NaN where ``u`` is the observer (or one of
    the coalition's ``members``). Needs the corrected pairs' nodes; for small runs (the
    exact accountant's)."""
    if losses.nodes is None or losses.split:
        raise ValueError("dense needs the corrected pairs' nodes (keep_pairs=True)")
    out = np.repeat(losses.base[:, None], losses.n, axis=1)
    owner = np.repeat(np.arange(losses.observers.size), losses.counts)
    out[owner, losses.nodes] = losses.values
    mine = np.flatnonzero(losses.observers >= 0)
    out[mine, losses.observers[mine]] = np.nan
    if len(members):
        out[:, np.asarray(members, dtype=np.int64)] = np.nan
    return out


def ratio_to_exact(runs: Sequence[PairLosses], exact: Sequence[PairLosses],
                   coalitions: Sequence[Sequence[int]] = ()) -> dict:
    """Each pair's loss over its exact loss, summarised over all pairs of all runs: mean,
    q90 and max (a pair whose exact loss is 0 counts 1 when its own is 0 too)."""
    ratios = []
    for i, (a, b) in enumerate(zip(runs, exact, strict=True)):
        members = coalitions[i] if i < len(coalitions) else ()
        da, db = dense(a, members), dense(b, members)
        ok = np.isfinite(db) & np.isfinite(da)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(db[ok] > 0, da[ok] / db[ok], np.where(da[ok] > 0, np.inf, 1.0))
        ratios.append(r)
    r = np.concatenate(ratios)
    return {"mean": float(r.mean()), "q90": float(np.quantile(r, 0.9)),
            "max": float(r.max())}


def summarize(runs: Sequence[PairLosses], quantiles: Sequence[float] = QUANTILES) -> dict:
    """Exact weighted mean, min, max and quantiles over all pairs of all runs."""
    base = np.concatenate([r.base[r.weight > 0] for r in runs])
    weight = np.concatenate([r.weight[r.weight > 0] for r in runs]).astype(np.float64)
    values = np.concatenate([r.values for r in runs])
    total = weight.sum() + values.size
    if total == 0:
        raise InputError("steps", "the walk is too short: no node saw the token twice")
    finite_sum = (base * weight).sum() + values.sum()
    out = {
        "accountant": runs[0].accountant,
        "delta": max(r.delta for r in runs),
        "pairs": int(total),
        "unprotected": int(np.isinf(values).sum()),
        "mean": float(finite_sum / total),
        "min": float(min(base.min(initial=np.inf), values.min(initial=np.inf))),
        "max": float(max(base.max(initial=-np.inf), values.max(initial=-np.inf))),
    }
    order = np.argsort(base, kind="stable")
    base, cum = base[order], np.cumsum(weight[order])
    values.sort()  # in place: values is already a fresh concatenated copy
    for q in quantiles:
        out[f"q{round(q * 100):d}"] = _weighted_quantile(base, cum, values, q * total)
    return out


def _weighted_quantile(base: np.ndarray, cum: np.ndarray, values: np.ndarray, rank: float) -> float:
    """Smallest t with (#pairs whose loss <= t) >= rank, over both sorted parts."""

    def count(t: float) -> float:
        i = np.searchsorted(base, t, side="right")
        return (cum[i - 1] if i else 0.0) + np.searchsorted(values, t, side="right")

    def first_reaching(sorted_values: np.ndarray) -> list[float]:
        """The smallest element whose count reaches the rank (binary search), if any."""
        if not sorted_values.size or count(sorted_values[-1]) < rank:
            return []
        lo, hi = 0, sorted_values.size - 1
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if count(sorted_values[mid]) >= rank else (mid + 1, hi)
        return [sorted_values[lo]]

    rank = max(rank, 1e-9)
    return float(min(first_reaching(base) + first_reaching(values)))
