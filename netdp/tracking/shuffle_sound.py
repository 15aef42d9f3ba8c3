"""The sound convention of the histogram trackers: each window of a walk charges what its
hidden positions could hold (a count law of the node's reports among them), composed over
the windows by the hybrid argument (spec ``network-dp.md``, Corrections; proofs in
``docs/accounting-exactness.md``)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numba as nb
import numpy as np
from scipy import stats

from netdp.accounting import _compiled as compiled
from netdp.accounting._arrays import geometric_bins
from netdp.tracking.windows import (
    END_NONE,
    END_OTHER,
    END_U,
    EXACT_R,
    R_RATIO,
    Windows,
    attributable,
    unknown_positions,
)

# A count law: ``law(positions, key) -> (log P(I = i) for i = 0..len-1, log P(I >= len))``,
# the law of the node's reports at a window's ``positions`` unknown positions (the tail
# is put at the largest count, ``positions``); ``key`` (:func:`window_key`) says which
# ends of the window the observer knows and whether the node is one of them.
CountLaw = Callable[[int, int], tuple[np.ndarray, float]]
DELTA_LEVELS = 8  # shuffle bounds tried at δ, δ/10, ..., δ/10^8 for a window's entry


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
def pairwise_sound(own, first, last, e_base, e_first, e_last, d_base, d_first, d_last,
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
