"""Summaries of loss tables without n×n: exact weighted statistics (mean, min, max, quantiles)
over all ordered pairs of all runs, a dense matrix where one is asked for, and the ratio
of a tracker's figures to the exact ones."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numba as nb
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


def summarize(runs: Sequence[PairLosses], quantiles: Sequence[float] = QUANTILES,
              below: float | None = None) -> dict:
    """Exact weighted mean, min, max and quantiles over all pairs of all runs; with
    ``below`` (the LDP baseline's mean), the share of pairs whose loss is under it
    (``below_ldp``).

    The corrected pairs (``10^8`` at n = 10^6) are read in place, never copied or sorted:
    each quantile is selected by narrowing a range of keys, 16 bits a pass
    (:func:`_quantile`).
    """
    base = np.concatenate([r.base[r.weight > 0] for r in runs])
    weight = np.concatenate([r.weight[r.weight > 0] for r in runs]).astype(np.float64)
    parts = [np.ascontiguousarray(r.values, dtype=np.float64) for r in runs]
    size = sum(v.size for v in parts)
    total = weight.sum() + size
    if total == 0:
        raise InputError("steps", "the walk is too short: no node saw the token twice")
    values_sum = sum(float(v.sum()) for v in parts)
    low = min([base.min(initial=np.inf), *(v.min(initial=np.inf) for v in parts)])
    high = max([base.max(initial=-np.inf), *(v.max(initial=-np.inf) for v in parts)])
    unprotected = 0 if math.isfinite(values_sum) else sum(
        int(np.count_nonzero(np.isinf(v))) for v in parts)
    out = {
        "accountant": runs[0].accountant,
        "delta": max(r.delta for r in runs),
        "pairs": int(total),
        "unprotected": unprotected,
        "mean": float(((base * weight).sum() + values_sum) / total),
        "min": float(low),
        "max": float(high),
    }
    if below is not None:
        under = float(weight[base < below].sum()) + sum(int(np.count_nonzero(v < below))
                                                         for v in parts)
        out["below_ldp"] = under / total
    keys = _keys(base)
    order = np.argsort(keys, kind="stable")
    ranked = _Ranked(keys[order], np.concatenate([[0.0], np.cumsum(weight[order])]),
                     [v.view(np.uint64) for v in parts])
    for q in quantiles:
        out[f"q{round(q * 100):d}"] = _quantile(ranked, _keys(np.array([low, high])),
                                                max(q * total, 1e-9))
    return out


#: The sign bit of a float64's bits.
_TOP = np.uint64(1 << 63)
_ZERO = np.uint64(0)
_BIN_BITS = 16  # a pass splits the range of keys in 2^16 bins
_GATHER = 1 << 16  # a bin of at most this many corrected pairs is sorted outright


def _keys(x: np.ndarray) -> np.ndarray:
    """Order-preserving ``uint64`` keys of floats (``-0.0`` as ``0.0``)."""
    bits = (np.asarray(x, dtype=np.float64) + 0.0).view(np.uint64)
    return np.where(bits & _TOP, ~bits, bits | _TOP)


def _float(key: np.uint64) -> float:
    """The float of a key of :func:`_keys`."""
    bits = key ^ _TOP if key & _TOP else ~key
    return float(np.array([bits], np.uint64).view(np.float64)[0])


@nb.njit(cache=True)
def _key(bits):
    if bits == _TOP:  # -0.0
        bits = _ZERO
    return bits | _TOP if bits & _TOP == _ZERO else ~bits


@nb.njit(cache=True)
def _bin_counts(bits, lo, hi, shift, hist):
    """Add to ``hist`` the keys in ``[lo, hi]`` by bin ``(key - lo) >> shift``; return how
    many keys are below ``lo``."""
    below = 0
    for b in bits:
        k = _key(b)
        if k < lo:
            below += 1
        elif k <= hi:
            hist[(k - lo) >> shift] += 1
    return below


@nb.njit(cache=True)
def _keys_between(bits, lo, hi, out, at):
    """Write the keys in ``[lo, hi]`` to ``out`` from ``at``; return the next free slot."""
    for b in bits:
        k = _key(b)
        if lo <= k <= hi:
            out[at] = k
            at += 1
    return at


class _Ranked:
    """Both parts of a summary as keys: the base's sorted, with their cumulative weights
    (``cum[i]``: the weight of the first ``i``), and the corrected pairs' bits."""

    def __init__(self, base: np.ndarray, cum: np.ndarray, parts: list[np.ndarray]):
        self.base, self.cum, self.parts = base, cum, parts
        self._passes: dict[tuple[int, int], tuple[int, np.ndarray]] = {}

    def histogram(self, lo: np.uint64, hi: np.uint64, shift: int) -> tuple[int, np.ndarray]:
        """The corrected pairs below ``lo``, and those in ``[lo, hi]`` by bin of ``2^shift``
        keys: one pass over them, kept (every quantile's first pass is the same)."""
        key = (int(lo), int(hi))
        if key not in self._passes:
            hist = np.zeros(((int(hi) - int(lo)) >> shift) + 1, np.int64)
            below = sum(_bin_counts(b, lo, hi, np.uint64(shift), hist) for b in self.parts)
            self._passes[key] = int(below), hist
        return self._passes[key]

    def base_weight(self, keys: np.ndarray) -> np.ndarray:
        """The base's weight at or below each key."""
        return self.cum[np.searchsorted(self.base, keys, side="right")]


def _quantile(ranked: _Ranked, span: np.ndarray, rank: float) -> float:
    """The smallest loss ``t`` whose weighted count of pairs at or below it reaches
    ``rank``. The range of keys ``[lo, hi]`` that holds ``t`` is cut in ``2^16`` bins by
    one pass over the corrected pairs, and narrowed to the first bin whose end reaches the
    rank, until a bin is one key or few enough pairs to sort."""
    lo, hi = np.uint64(span[0]), np.uint64(span[1])
    while True:
        shift = max(0, (int(hi) - int(lo)).bit_length() - _BIN_BITS)
        below, hist = ranked.histogram(lo, hi, shift)
        ends = lo + np.minimum((np.arange(hist.size, dtype=np.uint64) << np.uint64(shift))
                               + np.uint64((1 << shift) - 1), hi - lo)
        reached = below + np.cumsum(hist) + ranked.base_weight(ends) >= rank
        i = int(np.argmax(reached))
        lo, hi = lo + (np.uint64(i) << np.uint64(shift)), ends[i]
        if shift == 0:
            return _float(lo)
        if hist[i] <= _GATHER:
            break
    under = below + int(hist[:i].sum())  # corrected pairs below the bin
    inside = np.empty(int(hist[i]), np.uint64)
    at = 0
    for b in ranked.parts:
        at = _keys_between(b, lo, hi, inside, at)
    inside.sort()
    first = np.searchsorted(ranked.base, lo, side="left")
    last = np.searchsorted(ranked.base, hi, side="right")
    candidates = np.union1d(inside, ranked.base[first:last])
    count = (under + np.searchsorted(inside, candidates, side="right")
             + ranked.base_weight(candidates))
    return _float(candidates[int(np.argmax(count >= rank))])
