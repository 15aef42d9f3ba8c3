"""Pairwise losses of the histogram protocols: amplification by shuffling, per window.

A token that carries a count vector shows an observer only the *sum* of the reports
added since it last saw the token: a multiset, i.e. the reports shuffled. Each such
*window* is one release; node ``u``'s report in it is hidden among the ``r`` reports of
the window (``shuffled_epsilon``), and where ``u``'s presence is uncertain (the random
walk) the release is also subsampled, at rate ``1 - (1 - 1/others)^r``. A pair composes
its windows with KOV heterogeneous composition and ``δ̃ = k δ`` (as the reference
tracker of the summation does), so ``kov`` is the one accountant here.

Windows, beyond the cycles between two visits of the observer: the prefix of a token
before the observer first holds it, and the suffix after it last holds it (the final
count is published). A window whose last report was handed to the observer, or whose
first report came from the node the observer handed the token to, has those nodes'
presence certain (*attributable*, as in the summation tracker).

That is the ``reference`` convention (the AISTATS 2022 method): a node's presence in a
window counts once. Under the ``sound`` convention (the default) a window charges node
``u`` the law of its number ``K`` of reports in the window, every report counted
(:func:`window_entry`, :func:`sound_entries`), so that each figure bounds the loss of the
observer's view from above. A cycle of ``m`` hops (the observer hands the token on at
step ``j`` and gets it back at ``j + m``) holds the ``m - 1`` reports of the holders in
between (:func:`walk_windows`), under both conventions. The ring's windows hold each node
once, with certainty: its tracker is sound as it is (:func:`ring_histogram_losses`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numba as nb
import numpy as np
from scipy import stats

from netdp.accounting import _compiled as compiled
from netdp.accounting._arrays import geometric_bins
from netdp.accounting.amplification import blanket_epsilon, fmt_closed_epsilon, fmt_numeric_epsilon
from netdp.accounting.calibrate import largest_within
from netdp.accounting.composition import kov_het_epsilon
from netdp.core.errors import check
from netdp.engine.trace import Trace
from netdp.tracking._kernels import walk as kernels
from netdp.tracking.loss_table import (
    CONVENTIONS,
    PairLosses,
    _coalition,
    _kov_homogeneous_array,
    clip_to_ldp,
    ldp_losses,
    observer_view,
)

SHUFFLE_BOUNDS = ("fmt-numeric", "fmt-closed", "blanket")
EXACT_R = 64  # windows up to this many reports get their own bound; larger ones share bins
R_RATIO = 1.05
RTOL = 1e-6  # relative precision of the FMT numeric ε (rounded up: still sound)
NUMERIC_MAX_R = 10**6  # FMT numeric costs O(sqrt r) per step; beyond, see shuffled_epsilon


def shuffled_epsilon(bound: str, eps0: float, reports: np.ndarray, delta: float,
                     domain: int = 2) -> np.ndarray:
    """ε of one report hidden among ``reports`` shuffled ε0-LDP reports (its own included).

    Never above ``eps0`` (the report alone is ε0-DP); outside a bound's validity the bound
    falls back to ``eps0``. ``blanket`` holds for k-ary randomized response only.
    ``fmt-numeric`` is evaluated up to :data:`NUMERIC_MAX_R` reports; more reports get the
    smaller of its value there (bounds fall as reports are added) and the closed form.
    """
    r = np.asarray(reports, dtype=float)
    out = np.full(r.shape, float(eps0))
    many = r >= 2
    if not many.any():
        return out
    rr = r[many]
    if bound == "fmt-numeric":
        uniq, inv = np.unique(np.minimum(rr, NUMERIC_MAX_R), return_inverse=True)
        val = np.asarray(fmt_numeric_epsilon(eps0, uniq, delta, rtol=RTOL))[inv]
        huge = rr > NUMERIC_MAX_R
        if huge.any():
            closed = fmt_closed_epsilon(eps0, rr[huge], delta, strict=False)
            val[huge] = np.fmin(val[huge], np.nan_to_num(closed, nan=np.inf))
    elif bound == "fmt-closed":
        val = np.asarray(fmt_closed_epsilon(eps0, rr, delta, strict=False))
    elif bound == "blanket":
        val = np.asarray(blanket_epsilon(eps0, rr, delta, domain, strict=False))
    else:
        raise ValueError(f"unknown shuffle bound {bound!r}")
    out[many] = np.fmin(np.nan_to_num(val, nan=np.inf), eps0)
    return out


def _binned_epsilon(bound, eps0, reports, delta, domain) -> np.ndarray:
    """``shuffled_epsilon`` per window, with large windows binned (each bin takes the
    bound of its smallest window: bounds fall as windows grow, so this stays sound)."""
    reports = np.asarray(reports, dtype=np.int64)
    if reports.size == 0:
        return np.empty(0)
    ids, inv = np.unique(geometric_bins(reports, EXACT_R, R_RATIO), return_inverse=True)
    smallest = np.full(ids.size, np.iinfo(np.int64).max)
    np.minimum.at(smallest, inv, reports)
    return shuffled_epsilon(bound, eps0, smallest, delta, domain)[inv]


def walk_windows(holders: np.ndarray, steps: int, n_ids: int, observers: np.ndarray):
    """Every window of every observer: (owner index, reports, first, last) arrays.

    ``first`` is the node whose report opens the window if the observer knows it (the
    node it handed the token to), ``last`` the node that handed the token back, ``-1``
    where the observer cannot tell.
    """
    start, pos = kernels.group_by_holder(holders, n_ids)
    owner = np.repeat(np.arange(n_ids), np.diff(start))
    token = pos // steps
    offset = pos - token * steps
    head = np.ones(pos.size, bool)
    head[1:] = (owner[1:] != owner[:-1]) | (token[1:] != token[:-1])
    tail = np.ones(pos.size, bool)
    tail[:-1] = head[1:]
    obs_index = np.full(n_ids, -1, np.int64)
    obs_index[observers] = np.arange(observers.size)
    padded = np.append(holders, -1)

    # cycles: consecutive holds of one observer in one token, with reports in between
    e = np.flatnonzero(~head)
    r_cyc = pos[e] - pos[e - 1] - 1
    keep = r_cyc > 0
    e, r_cyc = e[keep], r_cyc[keep]
    cyc = (owner[e], r_cyc, padded[pos[e - 1] + 1], padded[pos[e] - 1])
    # prefixes: the reports of a token before the observer first holds it
    e = np.flatnonzero(head & (offset > 0))
    pre = (owner[e], offset[e], np.full(e.size, -1), padded[pos[e] - 1])
    # suffixes: the reports after the observer last holds a token (the result is public)
    e = np.flatnonzero(tail & (offset < steps - 1))
    suf = (owner[e], steps - 1 - offset[e], padded[pos[e] + 1], np.full(e.size, -1))
    # tokens an observer never holds: all their reports reach it only through the result
    tokens = holders.size // steps
    seen = np.zeros((n_ids, tokens), bool)
    seen[owner, token] = True
    never_v, _ = np.nonzero(~seen)
    unseen = (never_v, np.full(never_v.size, steps), np.full(never_v.size, -1),
              np.full(never_v.size, -1))
    parts = [cyc, pre, suf, unseen]
    own = np.concatenate([p[0] for p in parts])
    sel = obs_index[own] >= 0
    cols = [np.concatenate([p[i] for p in parts])[sel] for i in range(4)]
    cols[0] = obs_index[cols[0]]
    order = np.argsort(cols[0], kind="stable")
    return tuple(np.ascontiguousarray(c[order]).astype(np.int64) for c in cols)


@nb.njit(cache=True)
def _entry_loss(eps_s, r, c, others):
    if c == 0:
        q = -math.expm1(r * math.log1p(-1.0 / others)) if others > 1 else 1.0
        if eps_s < 1.0:
            return math.log1p(q * math.expm1(eps_s))
        return eps_s + math.log(q + (1.0 - q) * math.exp(-eps_s))
    return c * eps_s


@nb.njit(cache=True)
def _pairwise_windows(own, reports, first, last, eps_s, n_obs, n_ids, others, delta, keep):
    """Base loss per observer (every node absent-or-hidden in each window) and the
    corrected losses of the nodes an observer can place in some window."""
    k = np.zeros(n_obs, np.int64)
    lo = np.zeros(n_obs + 1, np.int64)
    for i in range(own.size):
        lo[own[i] + 1] += 1
    for o in range(n_obs):
        lo[o + 1] += lo[o]
    offsets = np.zeros(n_obs + 1, np.int64)
    for o in range(n_obs):
        offsets[o + 1] = offsets[o] + 2 * (lo[o + 1] - lo[o])
    values = np.empty(offsets[-1])
    ids = np.empty(offsets[-1] if keep else 0, np.int64)
    base = np.zeros(n_obs)
    weight = np.zeros(n_obs, np.int64)
    counts = np.zeros(n_obs, np.int64)
    acc = np.zeros((n_ids, 3))
    seen = np.zeros(n_ids, np.bool_)
    f0 = np.empty(3)
    fc = np.empty(3)
    total = np.empty(3)
    touched = np.empty(2 * own.size + 2, np.int64)
    for o in range(n_obs):
        basef = np.zeros(3)
        nt = 0
        for i in range(lo[o], lo[o + 1]):
            k[o] += 1
            compiled.kov_terms(_entry_loss(eps_s[i], reports[i], 0, others[o]), f0)
            for f in range(3):
                basef[f] += f0[f]
            a, b = first[i], last[i]
            for r in range(2):
                u = a if r == 0 else b
                if u < 0 or (r == 1 and u == a):
                    continue
                c = 2 if (r == 0 and u == b and reports[i] >= 2) else 1
                compiled.kov_terms(_entry_loss(eps_s[i], reports[i], c, others[o]), fc)
                for f in range(3):
                    acc[u, f] += fc[f] - f0[f]
                if not seen[u]:
                    seen[u] = True
                    touched[nt] = u
                    nt += 1
        base[o] = compiled.kov_epsilon(basef, k[o], delta)
        weight[o] = others[o] - nt
        out = offsets[o]
        for r in range(nt):
            u = touched[r]
            for f in range(3):
                total[f] = basef[f] + acc[u, f]
                acc[u, f] = 0.0
            seen[u] = False
            values[out + r] = compiled.kov_epsilon(total, k[o], delta)
            if keep:
                ids[out + r] = u
        counts[o] = nt
    return base, weight, k, offsets, counts, values, ids


# ------------------------------------------------------------------ the sound convention

END_NONE, END_OTHER, END_U = 0, 1, 2  # a window's end: not known, another node, the node

# A count law: ``law(positions, key) -> (log P(I = i) for i = 0..len-1, log P(I >= len))``,
# the law of the node's reports at a window's ``positions`` unknown positions (the tail
# is put at the largest count, ``positions``); ``key`` (:func:`window_key`) says which
# ends of the window the observer knows and whether the node is one of them.
CountLaw = Callable[[int, int], tuple[np.ndarray, float]]


def window_key(first: int, last: int) -> int:
    """Key of a window towards a node: ``3 first + last``, each end :data:`END_NONE` (the
    observer does not know its holder: a prefix has no known first holder, a suffix no
    known last one, an unseen token neither), :data:`END_OTHER` (another node) or
    :data:`END_U` (the node itself)."""
    return 3 * first + last


def attributable(key: int, reports: int) -> int:
    """The node's positions the observer knows: its known ends (one position when the
    window has one report: then its first and last holder are the same)."""
    first, last = divmod(key, 3)
    return min(int(first == END_U) + int(last == END_U), reports)


def unknown_positions(key: int, reports: int) -> int:
    """Positions whose holder the observer does not know: ``r - 2`` in a cycle (none when
    ``r = 1``), ``r - 1`` in a prefix or a suffix, ``r`` in a token it never holds."""
    first, last = divmod(key, 3)
    return max(reports - int(first != END_NONE) - int(last != END_NONE), 0)


def holder_rate(others: int, self_moves: bool = True) -> float:
    """The largest chance that one unknown position of a window is the node's, given the
    holders of all the other positions: ``1 / N`` with self-moves (the holders are iid
    uniform over the ``N = others`` nodes outside the observer), ``1 / (N - 2)`` without
    (uniform over the ``N`` minus the position's two neighbours' holders)."""
    if self_moves:
        return 1.0 / others
    return 1.0 / (others - 2) if others > 2 else 1.0


def binomial_law(p: float) -> CountLaw:
    """``I ~ Binomial(positions, p)``: each unknown position the node's with probability
    at most ``p``, given the others (:func:`holder_rate`); the key does not matter."""

    def law(positions: int, key: int) -> tuple[np.ndarray, float]:
        if positions == 0 or p <= 0.0:
            return np.zeros(1), -np.inf
        if p >= 1.0:
            out = np.full(positions + 1, -np.inf)
            out[-1] = 0.0
            return out, -np.inf
        return stats.binom.logpmf(np.arange(positions + 1), positions, p), -np.inf

    law.p = p  # type: ignore[attr-defined]  # iid positions: the closed form applies
    return law


def window_entry(eps_s: float, delta_s: float, c: int, positions: int, logp: np.ndarray,
                 tail: float) -> tuple[float, float]:
    """``(ε, δ)`` of a window towards a node with ``K = c + I`` reports in it (``I``'s law
    ``logp``, its tail put at ``positions``), one report among the window's shuffled at
    ``(eps_s, delta_s)``.

    ``ε = log E[e^{ε_K}]`` with ``ε_k = k ε_s``, and ``δ = E[δ_K]`` with
    ``δ_k = δ_s (e^{k ε_s} - 1) / (e^{ε_s} - 1)`` (``k δ_s`` when ``ε_s = 0``), i.e.
    ``δ = δ_s (e^ε - 1) / (e^{ε_s} - 1)``.

    *Branches.* Given the holders, ``k`` of the node's reports among the ``r`` are
    ``(ε_k, δ_k)``-indistinguishable for data ``x`` against ``x'``: change them one at a
    time; each step replaces one report in a shuffle of ``r`` independent ε0-LDP reports
    (the others', and the node's other reports under ``x`` or ``x'``), which the shuffle
    bound makes ``(ε_s, δ_s)``; ``k`` steps chain to ``k ε_s`` and
    ``Σ_{j<k} e^{j ε_s} δ_s = δ_k`` (group privacy). ``ε_s = ε0`` (no amplification) is
    pure, ``δ_s = 0``; ``ε_k = k ε0`` then.

    *Mixture.* If every branch ``k`` is ``(ε_k, δ_k)``-DP against a branch ``Q`` that does
    not depend on ``k`` (``P_k(S) <= e^{ε_k} Q(S) + δ_k`` and
    ``Q(S) <= e^{ε_k} P_k(S) + δ_k``), the mixture ``P = Σ_k P(K = k) P_k`` is
    ``(log E e^{ε_K}, E δ_K)``-DP against ``Q``, both ways:
    ``P(S) <= Σ_k P(k) (e^{ε_k} Q(S) + δ_k) = E[e^{ε_K}] Q(S) + E δ_K``; and
    ``P(S) >= Σ_k P(k) e^{-ε_k} (Q(S) - δ_k)`` gives
    ``Q(S) <= P(S) / E[e^{-ε_K}] + E[e^{-ε_K} δ_K] / E[e^{-ε_K}]``, where
    ``1 / E[e^{-ε_K}] <= e^{E ε_K} <= E[e^{ε_K}]`` (Jensen) and, ``δ_k`` growing and
    ``e^{-ε_k}`` falling in ``k``, ``E[e^{-ε_K} δ_K] <= E[e^{-ε_K}] E[δ_K]`` (Chebyshev's
    sum inequality).

    *The replace-one pair.* The views under ``x`` and under ``x'`` are two such
    mixtures with the same law of ``K``; the lemma compares each with ``Q`` (the node's
    reports replaced by random other nodes', ``k``-free when the holders are iid), which
    is two steps from ``x`` to ``x'``. One step, by a hybrid over the window's positions,
    when each unknown position is the node's with probability at most ``p`` given the
    holders of all the other positions (:func:`holder_rate`), ``K`` then at most
    ``c + Binomial(positions, p)`` in law: change the node's reports from ``x`` to ``x'``
    position by position. Given the other positions' holders, the step at an unknown
    position is ``(1 - q) C + q A`` against ``(1 - q) C + q B`` (``q <= p``, ``C``: another
    node holds it), where ``A`` against ``B`` and ``A`` against ``C`` each replace one
    report in a shuffle of ``r`` ε0-LDP reports, ``(ε_s, δ_s)``; advanced joint convexity
    (Balle, Barthe, Gaboardi 2018, Thm 2) makes it ``(log(1 + p (e^{ε_s} - 1)), p δ_s)``,
    which averaging over the holders keeps (joint convexity). A known position of the
    node is one ``(ε_s, δ_s)`` step. The steps chain (both ways) to
    ``ε = c ε_s + positions · log(1 + p (e^{ε_s} - 1)) = log E[e^{ε_s K}]`` for
    ``K = c + Binomial(positions, p)``, and, as ``e^{ε_i} - 1 = p_i (e^{ε_s} - 1)`` for
    each step's ``p_i`` (1 at a known position), ``Σ_i p_i δ_s e^{ε_1 + ... + ε_{i-1}}``
    telescopes to ``δ_s (e^ε - 1) / (e^{ε_s} - 1)``: this function's figure, for the
    binomial law. Any ``ε_k >= k ε_s`` (``k ε0`` for ``k >= 2``, say) gives a larger ε
    with the same δ. A law of another form (the exact law of ``K`` without self-moves)
    needs its own argument for the replace-one pair: the lemma alone gives the two-step
    bound.
    """
    if getattr(logp, "size", 0) == 0:
        logp = np.zeros(1)
    k = c + np.arange(logp.size, dtype=float)
    terms = np.append(logp, tail) if tail > -np.inf else logp
    counts = np.append(k, float(c + positions)) if tail > -np.inf else k
    top = float(np.max(terms))
    weights = np.exp(terms - top)
    weights /= weights.sum()  # a law: its mass is 1
    eps = max(_log_mean_exp(weights, counts * eps_s), c * eps_s, 0.0)
    return eps, _chained_delta(eps, eps_s, delta_s, float(weights @ counts))


def _log_mean_exp(weights: np.ndarray, values: np.ndarray) -> float:
    top = float(np.max(values[weights > 0])) if np.any(weights > 0) else 0.0
    return top + math.log(float(weights @ np.exp(values - top)))


def _chained_delta(eps, eps_s, delta_s, mean_k):
    """``δ_s (e^ε - 1) / (e^{ε_s} - 1)`` (``δ_s E[K]`` when ``ε_s = 0``), elementwise."""
    eps, eps_s, delta_s, mean_k = np.broadcast_arrays(*(np.asarray(x, float) for x in (
        eps, eps_s, delta_s, mean_k)))
    out = np.zeros(eps.shape)
    on = delta_s > 0
    with np.errstate(over="ignore"):  # e^ε past the floats: an infinite δ, over any budget
        grow = np.expm1(eps[on])
        ratio = np.where(eps_s[on] > 0, grow / np.expm1(np.maximum(eps_s[on], 1e-300)),
                         mean_k[on])
    out[on] = delta_s[on] * ratio
    return float(out) if out.ndim == 0 else out


def entry_delta_budget(eps0: float, delta: float) -> float:
    """The largest δ a window's sound entry may take: ``(1 + e^{ε0}) δ``, the reference
    convention's for a window with two attributable reports (:func:`sound_entries`)."""
    return (1.0 + math.exp(eps0)) * delta


DELTA_LEVELS = 8  # shuffle bounds tried at δ, δ/10, ..., δ/10^8 for a window's entry


def sound_entries(w: Windows, eps0: float, delta: float, law: CountLaw | None,
                  eps_at: Callable[[np.ndarray, float], np.ndarray] | None = None,
                  rates: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """Per window of ``w``, the sound ``(ε, δ)`` entries (:func:`window_entry`) towards
    every node the observer cannot place (``base``), towards its known first holder
    ``a`` (``first``: also its last when ``a = b``) and towards its known last holder
    ``b != a`` (``last``): six arrays, ``(ε_base, ε_first, ε_last, δ_base, δ_first,
    δ_last)`` (0 where the window has no such end).

    ``rates`` (instead of ``law``): the entries of ``Binomial(positions, p)`` for each
    ``p`` of ``rates``, every array then of shape ``(len(rates), windows)`` (the graph
    tracker's nodes, each with its own rate: :mod:`netdp.tracking.graph_shuffle`).

    Windows share an entry by bin of their number of reports ``r`` (the bins of
    ``w.eps_s``): the entry takes the shuffled ε of the bin's smallest ``r`` (the window
    holds that many reports or more, and the shuffle bounds fall with ``r``) and the law
    of its largest (``Binomial(positions, p)`` grows in ``positions`` in the usual
    stochastic order, and ``ε``, ``δ`` grow with ``ε_s`` and with ``K`` in that order), so
    it bounds each window in its bin.

    The chained δ of an entry grows as ``e^ε`` (a long window with many of the node's
    reports); each entry keeps its δ within :func:`entry_delta_budget`, so that a pair's
    total δ stays at most ``k δ (2 + e^{ε0})`` for its ``k`` windows: the shuffle bound is
    taken at ``δ_s = δ``, else at ``δ / 10^j`` (``eps_at(r, δ_s)``, the larger ``ε_s`` of
    a smaller ``δ_s``), the first ``j <= DELTA_LEVELS`` within the budget, else the pure
    bound (every report ε0-DP: ``ε_s = ε0``, ``δ = 0``). Each of them holds.
    """
    r = w.reports.astype(np.int64)
    groups = 1 if rates is None else int(np.size(rates))
    shape = (r.size,) if rates is None else (groups, r.size)
    if r.size == 0 or groups == 0:
        z = np.zeros(shape)
        return z, z, z, z, z, z
    fs = np.where(w.first >= 0, END_OTHER, END_NONE)
    ls = np.where(w.last >= 0, END_OTHER, END_NONE)
    keys = np.stack([3 * fs + ls,
                     np.where(w.first >= 0,
                              3 * END_U + np.where(w.last == w.first, END_U, ls), -1),
                     np.where((w.last >= 0) & (w.last != w.first), 3 * fs + END_U, -1)])
    bins = geometric_bins(r, EXACT_R, R_RATIO)
    ids, inv = np.unique(bins, return_inverse=True)
    lo = np.full(ids.size, np.iinfo(np.int64).max)
    hi = np.zeros(ids.size, np.int64)
    np.minimum.at(lo, inv, r)
    np.maximum.at(hi, inv, r)
    eps_bin = np.zeros(ids.size)
    eps_bin[inv] = w.eps_s  # one value per bin (its smallest window's)
    valid = keys >= 0
    pair = np.where(valid, keys * ids.size + inv[None, :], -1)
    uniq, pinv = np.unique(pair[valid], return_inverse=True)
    key_u, bin_u = np.divmod(uniq, ids.size)
    c = np.array([attributable(int(k), int(hi[b])) for k, b in zip(key_u, bin_u,
                                                                    strict=True)])
    pos = np.array([unknown_positions(int(k), int(hi[b]))
                    for k, b in zip(key_u, bin_u, strict=True)], dtype=np.int64)
    if rates is not None:  # one item per (rate, key and bin)
        rate = np.repeat(np.clip(np.asarray(rates, float), 0.0, 1.0), uniq.size)
        c, pos, bin_u = (np.tile(x, groups) for x in (c, pos, bin_u))
        laws = None
    else:
        p = getattr(law, "p", None)
        rate = np.full(uniq.size, min(max(float(p), 0.0), 1.0) if p is not None else 0.0)
        laws = None if p is not None else [law(int(m), int(k))  # type: ignore[misc]
                                           for m, k in zip(pos, key_u, strict=True)]

    def entries(sel: np.ndarray, es: np.ndarray, ds: np.ndarray) -> tuple[np.ndarray, ...]:
        if laws is None:  # iid positions: log E e^{ε_s K} in closed form
            q = rate[sel]
            eps = c[sel] * es + pos[sel] * np.log1p(q * np.expm1(es))
            return eps, _chained_delta(eps, es, ds, c[sel] + pos[sel] * q)
        eps, dlt = np.empty(sel.size), np.empty(sel.size)
        for j, i in enumerate(sel):
            logp, tail = laws[i]
            eps[j], dlt[j] = window_entry(float(es[j]), float(ds[j]), int(c[i]), int(pos[i]),
                                          np.asarray(logp, float), float(tail))
        return eps, dlt

    every = np.arange(c.size)
    best_e = entries(every, np.full(c.size, float(eps0)), np.zeros(c.size))[0]
    best_d = np.zeros(c.size)
    budget = entry_delta_budget(eps0, delta)
    pending = every
    for level in range(DELTA_LEVELS + 1 if eps_at is not None else 1):
        if pending.size == 0:
            break
        d = delta * 10.0 ** -level
        if level == 0:
            es = eps_bin[bin_u[pending]]
        else:
            need, back = np.unique(bin_u[pending], return_inverse=True)
            es = np.asarray(eps_at(lo[need], d), float)[back]  # type: ignore[misc]
        eps, dlt = entries(pending, es, np.where(es < eps0, d, 0.0))
        ok = dlt <= budget
        take = ok & (eps < best_e[pending])
        best_e[pending[take]], best_d[pending[take]] = eps[take], dlt[take]
        pending = pending[~ok]  # a smaller δ_s has a larger ε_s: done once within budget
    table_e, table_d = best_e.reshape(groups, uniq.size), best_d.reshape(groups, uniq.size)
    out_e = np.zeros((groups, *pair.shape))
    out_d = np.zeros((groups, *pair.shape))
    out_e[:, valid], out_d[:, valid] = table_e[:, pinv], table_d[:, pinv]
    if rates is None:
        out_e, out_d = out_e[0], out_d[0]
    return (out_e[..., 0, :], out_e[..., 1, :], out_e[..., 2, :], out_d[..., 0, :],
            out_d[..., 1, :], out_d[..., 2, :])


@nb.njit(cache=True)
def _pairwise_sound(own, first, last, e_base, e_first, e_last, d_base, d_first, d_last,
                    n_obs, n_ids, others, delta, keep):
    """:func:`_pairwise_windows` with each window's entries given (the sound
    convention), and the largest total δ of a pair of each observer: its entries' δ plus
    KOV's ``δ̃ = min(k δ, 1)``."""
    k = np.zeros(n_obs, np.int64)
    lo = np.zeros(n_obs + 1, np.int64)
    for i in range(own.size):
        lo[own[i] + 1] += 1
    for o in range(n_obs):
        lo[o + 1] += lo[o]
    offsets = np.zeros(n_obs + 1, np.int64)
    for o in range(n_obs):
        offsets[o + 1] = offsets[o] + 2 * (lo[o + 1] - lo[o])
    values = np.empty(offsets[-1])
    ids = np.empty(offsets[-1] if keep else 0, np.int64)
    base = np.zeros(n_obs)
    weight = np.zeros(n_obs, np.int64)
    counts = np.zeros(n_obs, np.int64)
    pair_delta = np.zeros(n_obs)
    acc = np.zeros((n_ids, 4))
    seen = np.zeros(n_ids, np.bool_)
    f0 = np.empty(3)
    fc = np.empty(3)
    total = np.empty(3)
    touched = np.empty(2 * own.size + 2, np.int64)
    for o in range(n_obs):
        basef = np.zeros(3)
        base_d = 0.0
        nt = 0
        for i in range(lo[o], lo[o + 1]):
            k[o] += 1
            compiled.kov_terms(e_base[i], f0)
            for f in range(3):
                basef[f] += f0[f]
            base_d += d_base[i]
            a, b = first[i], last[i]
            for r in range(2):
                u = a if r == 0 else b
                if u < 0 or (r == 1 and u == a):
                    continue
                loss = e_first[i] if r == 0 else e_last[i]
                compiled.kov_terms(loss, fc)
                for f in range(3):
                    acc[u, f] += fc[f] - f0[f]
                acc[u, 3] += (d_first[i] if r == 0 else d_last[i]) - d_base[i]
                if not seen[u]:
                    seen[u] = True
                    touched[nt] = u
                    nt += 1
        base[o] = compiled.kov_epsilon(basef, k[o], delta)
        weight[o] = others[o] - nt
        slack = min(k[o] * delta, 1.0)
        worst = base_d if weight[o] > 0 else 0.0
        out = offsets[o]
        for r in range(nt):
            u = touched[r]
            for f in range(3):
                total[f] = basef[f] + acc[u, f]
                acc[u, f] = 0.0
            worst = max(worst, base_d + acc[u, 3])
            acc[u, 3] = 0.0
            seen[u] = False
            values[out + r] = compiled.kov_epsilon(total, k[o], delta)
            if keep:
                ids[out + r] = u
        counts[o] = nt
        pair_delta[o] = worst + slack if k[o] > 0 else 0.0
    return base, weight, k, offsets, counts, values, ids, pair_delta


@dataclass(frozen=True)
class Windows:
    """Every window of every observer of a walk (:func:`walk_windows`), sorted by
    observer, with its shuffled ε: ``own`` (observer index), ``reports``, ``first``,
    ``last`` (``-1``: unknown), ``eps_s``; the view's ``n_ids``, ``observers`` and
    ``others`` (:func:`~netdp.tracking.loss_table.observer_view`)."""

    own: np.ndarray
    reports: np.ndarray
    first: np.ndarray
    last: np.ndarray
    eps_s: np.ndarray
    n_ids: int
    observers: np.ndarray
    others: np.ndarray


def trace_windows(trace: Trace, eps0: float, delta: float, bound: str = "fmt-numeric",
                  domain: int = 2, coalition: Sequence[int] | None = None) -> Windows:
    """The windows every observer (or the coalition) sees of ``trace``, each with the ε of
    one report shuffled among the window's (``bound``; large windows binned)."""
    check(bound in SHUFFLE_BOUNDS, "shuffle",
          f"must be one of {', '.join(SHUFFLE_BOUNDS)} (got {bound!r})")
    holders, n_ids, observers, others = observer_view(trace, coalition)
    holders = holders.astype(np.int64)
    own, reports, first, last = walk_windows(holders, trace.steps, n_ids, observers)
    if (trace.holders < 0).any():  # a lost token's steps that never happened: no node
        phantom = n_ids - 1
        first, last = (np.where(x == phantom, -1, x) for x in (first, last))
    eps_s = _binned_epsilon(bound, eps0, reports, delta, domain)
    return Windows(own, reports, first, last, eps_s, n_ids, observers, others)


def walk_histogram_losses(
    trace: Trace,
    eps0: float,
    delta: float,
    bound: str = "fmt-numeric",
    domain: int = 2,
    coalition: Sequence[int] | None = None,
    keep_pairs: bool = False,
    cap: bool = True,
    convention: str = "sound",
    self_moves: bool = True,
    law: CountLaw | None = None,
) -> PairLosses:
    """Pairwise losses of the random-walk histogram (AISTATS 2022 Alg. 4), each capped at
    its node's LDP loss (:func:`~netdp.tracking.loss_table.clip_to_ldp`) unless ``cap`` is off.

    Parameters
    ----------
    trace
        The walk (one or more tokens) on the complete graph.
    eps0
        LDP level of one report.
    delta
        δ of each shuffle bound and of each entry's share of KOV's ``δ̃ = k δ``.
    bound
        Shuffle bound: ``fmt-numeric`` (default), ``fmt-closed`` or ``blanket``.
    domain
        Domain size (``blanket`` only).
    coalition
        Nodes observing as one.
    keep_pairs
        Keep the node of each corrected pair (for :meth:`PairLosses.matrix`).
    convention
        ``sound`` (default): each window charges a node the law of its number of reports
        in it, all of them counted (:func:`window_entry`); ``delta`` is then the largest
        total δ of a pair (its entries' δ and KOV's ``δ̃``). ``reference``: the AISTATS
        2022 method exactly (a node's presence counted once, at the rate
        ``1 - (1 - 1/N)^r``); not an upper bound of the loss.
    self_moves
        Whether the walk may forward the token to its holder (the sound convention's law
        of a node's reports: :func:`holder_rate`).
    law
        The sound convention's law of a node's reports at a window's unknown positions
        (:data:`CountLaw`); default ``Binomial(positions, holder_rate(N, self_moves))``
        for the ``N`` nodes outside the observer.
    """
    check(convention in CONVENTIONS, "convention",
          f"must be one of {', '.join(CONVENTIONS)} (got {convention!r})")
    n = trace.n
    w = trace_windows(trace, eps0, delta, bound, domain, coalition)
    if convention == "sound":
        return _sound_walk_histogram(trace, w, eps0, delta, bound, domain, coalition, cap,
                                     self_moves, law)
    own, reports, first, last, eps_s = w.own, w.reports, w.first, w.last, w.eps_s
    observers, n_ids, others = w.observers, w.n_ids, w.others
    base, weight, k, offsets, counts, values, nodes = _pairwise_windows(
        own, reports, first, last, eps_s, observers.size, n_ids, others, float(delta),
        True)
    used = kernels.compact(values, nodes, offsets, counts, True)
    k_max = int(k.max()) if k.size else 0
    raw = PairLosses(
        "kov", n, np.array([-1]) if coalition is not None else observers, base, weight, k,
        values[:used], counts, nodes[:used], k_max * delta * (2 + math.exp(eps0)),
    )
    return clip_to_ldp(raw, ldp_losses(trace, eps0, delta), coalition) if cap else raw


def _sound_walk_histogram(trace: Trace, w: Windows, eps0: float, delta: float, bound: str,
                          domain: int, coalition: Sequence[int] | None, cap: bool,
                          self_moves: bool, law: CountLaw | None) -> PairLosses:
    """:func:`walk_histogram_losses` under the sound convention."""
    n = trace.n
    observers, others = w.observers, w.others
    if law is None:
        law = binomial_law(holder_rate(int(others[0]) if others.size else n - 1, self_moves))
    e_base, e_first, e_last, d_base, d_first, d_last = sound_entries(
        w, eps0, delta, law, lambda r, d: shuffled_epsilon(bound, eps0, r, d, domain))
    base, weight, k, offsets, counts, values, nodes, pair_delta = _pairwise_sound(
        w.own, w.first, w.last, e_base, e_first, e_last, d_base, d_first, d_last,
        observers.size, w.n_ids, others, float(delta), True)
    used = kernels.compact(values, nodes, offsets, counts, True)
    raw = PairLosses(
        "kov", n, np.array([-1]) if coalition is not None else observers, base, weight, k,
        values[:used], counts, nodes[:used], float(pair_delta.max(initial=0.0)),
    )
    return clip_to_ldp(raw, ldp_losses(trace, eps0, delta), coalition) if cap else raw


def ring_histogram_losses(
    n: int,
    rounds: int,
    eps0: float,
    delta: float,
    bound: str = "fmt-numeric",
    domain: int = 2,
    dummies: int = 0,
    coalition: Sequence[int] | None = None,
    convention: str = "sound",
) -> PairLosses:
    """Pairwise losses of the ring histogram (AISTATS 2022 Alg. 2).

    Node 0 starts the token with ``dummies`` reports of uniform values and adds as many
    again before publishing; it knows them, every other observer counts them as reports.
    Observer ``v`` sees ``K + 1`` windows: the first (dummies and nodes ``0..v-1``), the
    ``K - 1`` full turns of the ``n - 1`` others, and the last (nodes ``v+1..n-1`` and the
    closing dummies). Every node sits in ``K`` of them, with certainty.

    The ``sound`` convention (default) gives the same losses as ``reference``, which is
    already an upper bound here, and reports the pairs' total δ as it is (``2 K δ``: the
    ``K`` entries' ``δ`` and KOV's ``δ̃ = K δ``; ``reference`` keeps its looser
    ``K δ (2 + e^{ε0})``). Why the losses are sound: the ring's order is public and every
    node holds the token exactly once per turn, so a node has exactly one report in each
    window that holds it (a window spans fewer than ``n`` consecutive hops) and none in
    the others: ``K`` is certain and the multiplicity of the walk does not arise. Each
    window is the sum (a post-processing of the shuffle) of its reports, the window's
    reports are disjoint and independent, so its entry is the shuffled ε of one report
    among them (the bin's smallest count, as the bounds fall with the count); every view
    is one of the windows: the stretch before the observer's first visit (with the head
    dummies), the turns between its visits, and the stretch after its last visit up to
    the published result (with the tail dummies); the dummies are reports of the oracle
    on uniform inputs, ε0-LDP reports as the shuffle bounds ask, that node 0 alone knows
    (its windows do not count them). A coalition's windows (:func:`_ring_coalition`) are
    the stretches between any two members' visits, each node once in at most one per
    turn, likewise.
    """
    check(bound in SHUFFLE_BOUNDS, "shuffle",
          f"must be one of {', '.join(SHUFFLE_BOUNDS)} (got {bound!r})")
    check(convention in CONVENTIONS, "convention",
          f"must be one of {', '.join(CONVENTIONS)} (got {convention!r})")
    if convention == "sound":
        import dataclasses

        ref = ring_histogram_losses(n, rounds, eps0, delta, bound, domain, dummies, coalition,
                                    "reference")
        return dataclasses.replace(ref, delta=min(rounds * delta, 1.0) + rounds * delta)
    if coalition is not None:
        return _ring_coalition(n, rounds, eps0, delta, bound, domain, dummies,
                               _coalition(coalition, n))
    v = np.arange(n)
    pad = np.where(v > 0, dummies, 0)
    full = _binned_epsilon(bound, eps0, np.array([n - 1]), delta, domain)[0]
    first = _binned_epsilon(bound, eps0, v + pad, delta, domain)  # u < v, turn 1
    last = _binned_epsilon(bound, eps0, n - 1 - v + pad, delta, domain)  # u > v, turn K
    lt = _kov(_features(first) + (rounds - 1) * _features(full)[:, None], rounds, delta)
    gt = _kov(_features(last) + (rounds - 1) * _features(full)[:, None], rounds, delta)
    return PairLosses("kov", n, np.concatenate([v, v]), np.concatenate([gt, lt]),
                      np.concatenate([n - 1 - v, v]), np.full(2 * n, rounds + 1),
                      np.empty(0), np.zeros(2 * n, np.int64), None,
                      rounds * delta * (2 + math.exp(eps0)), split=True)


def _features(loss) -> np.ndarray:
    """KOV-het sums of one entry per element: ``(ε, ε tanh(ε/2), ε²)`` stacked."""
    loss = np.asarray(loss, dtype=float)
    return np.stack([loss, loss * np.tanh(loss / 2), loss * loss])


def _kov(feats: np.ndarray, k: int, delta: float) -> np.ndarray:
    """KOV-het of summed features (δ̃ = k δ)."""
    return np.asarray(kov_het_epsilon(feats[0], feats[1], feats[2], min(k * delta, 1.0)))


def _ring_coalition(n, rounds, eps0, delta, bound, domain, dummies, members) -> PairLosses:
    """Windows between the coalition's visits, each node's K windows composed."""
    holder = np.tile(np.arange(n), rounds)
    in_w = np.isin(holder, members)
    window = np.cumsum(in_w)
    size = np.bincount(window, weights=~in_w).astype(np.int64)
    if 0 not in members:  # the observers do not know node 0's dummies
        size[0] += dummies
        size[-1] += dummies
    hop = ~in_w
    eps_s = _binned_epsilon(bound, eps0, size[window[hop]], delta, domain)
    u = holder[hop]
    feats = np.stack([np.bincount(u, weights=f, minlength=n) for f in _features(eps_s)])
    outside = np.setdiff1d(np.arange(n), members)
    best = _kov(feats[:, outside], rounds, delta)
    return PairLosses("kov", n, np.array([-1]), np.zeros(1), np.zeros(1, np.int64),
                      np.array([int(window.max()) + 1]), best, np.array([best.size]),
                      outside, rounds * delta * (2 + math.exp(eps0)))


def ring_histogram_theory(n: int, rounds: int, eps0: float, delta: float,
                          bound: str = "fmt-numeric", domain: int = 2) -> float:
    """Every window of ``n - 1`` reports: K shuffled releases of ``ε_s(n - 1)``, KOV."""
    eps_s = _binned_epsilon(bound, eps0, np.array([n - 1]), delta, domain)
    return float(_kov_homogeneous_array(eps_s[0], np.array([rounds]), delta)[0])


def ring_histogram_eps0(target: float, n: int, rounds: int, delta: float,
                        bound: str = "fmt-numeric", domain: int = 2,
                        eps0_max: float = 30.0) -> float:
    """Largest ε0 (to 1e-6) whose ring histogram meets ``target`` network ε, every pair.

    The theory curve (:func:`ring_histogram_theory`) is increasing in ε0; the returned ε0
    is on the safe side (its curve value is <= target).
    """
    return largest_within(lambda eps0: ring_histogram_theory(n, rounds, eps0, delta, bound,
                                                             domain),
                          target, 1e-9, eps0_max, param="epsilon")
