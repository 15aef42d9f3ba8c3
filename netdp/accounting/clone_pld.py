"""The privacy loss distribution of ``k`` of one node's ε0-LDP reports shuffled among ``m``
other reports, and of a window whose count of the node's reports has a known law.

**Clones** (Feldman, McMillan and Talwar 2021, "Hiding among the clones", extended to
``k`` reports of one node). Let ``R`` be an ε0-LDP randomizer and ``x⁰, x¹`` the node's two
values. With ``q = e^ε0 / (1 + e^ε0)`` there are laws ``Q⁰, Q¹`` with ``R(x⁰) = q Q⁰ +
(1 - q) Q¹`` and ``R(x¹) = (1 - q) Q⁰ + q Q¹`` (they are non-negative because
``R(x⁰) >= e^-ε0 R(x¹)``), and every other input ``y`` has ``R(y) = (β / 2) (Q⁰ + Q¹) +
(1 - β) L_y`` with ``β = e^-ε0`` and some law ``L_y`` (``R(y) >= β R(x^b)``). So a
multiset of the node's ``k`` reports and ``m`` others' is a post-processing (draw that many
samples of each law, shuffle) of: which others are clones (``C ~ Bin(m, β)`` of them, a law
that does not depend on the node's value), and ``X``, the number of ``Q⁰`` samples:

    ``X = A + S`` under ``x⁰``, ``X = A + k - S`` under ``x¹``,
    ``A ~ Bin(C, 1/2)``, ``S ~ Bin(k, q)``

(``k = 1`` is the pair of :mod:`netdp.accounting.fmt_numeric`). The node's ``k`` reports
alone dominate the pair (the shuffle is a post-processing of them: the others' reports do
not depend on the node's value): ``k`` randomized responses at ε0, whose loss ``(2 j - k)
ε0`` has ``j ~ Bin(k, q)`` (:func:`alone_pmf`), which costs nothing; a window takes them for
the counts too unlikely to matter. The pair is symmetric
(``x ↦ C + k - x`` maps one to the other), so its loss has the same law in both directions;
the loss is within ``[-k ε0, k ε0]``.

**Fewer others** is sound: the pair with ``m`` others is the pair with ``m' < m`` and
``Bin(m - m', β)`` more clones, each a fair coin, added (a post-processing); so the others
are rounded down to a grid (:func:`others_down`) and windows share their pairs.

**A window** of ``r`` reports in which the node made ``K`` (a law known from the walk, not
from the data) is bounded by the pair in which ``K`` and the hidden path are revealed too
(post-processing the other way: forget them): the mixture ``Σ_k P(K = k)`` of the pairs
``(k, r - k)`` (:func:`window_rows`); a count beyond the law's width sits at an infinite
loss. No order of the pairs in ``k`` is used, so every count is given one by one.

**Discretisation** (every step raises a loss or adds mass, so ``δ(ε)`` only grows, before
and after composition): losses are rounded up to the grid ``{i h}`` (with a margin for their
float error); ``C`` outside the central range of its law (``scipy``'s exact tails) and
``A`` outside ``c / 2 ± t`` (Hoeffding: at most ``2 e^{-2 t² / c}``, :data:`TAIL`) sit at
``+∞``; every mass is raised by a factor :data:`MASS_UP` (above the float error of the
binomial terms); the top levels of a pair whose ``P`` mass is at most ``spare`` go to ``+∞`` and
its lowest, up to ``spare``, are raised to the first level above them; losses below
``-LOWER_CUT`` are raised to it.
"""

from __future__ import annotations

import functools
import math

import numba as nb
import numpy as np

from netdp.accounting.mixture_rows import ViewRows

TAIL = 1e-22  # the mass each Hoeffding or binomial tail may leave at +∞ (per side)
#: Masses raised by it: above the float error of the binomial terms (measured: 2.4e-10
#: relative at counts of 1e5, 1.1e-8 at 1e7)
MASS_UP = 1.0 + 1e-7
LOWER_CUT = 8.0  # losses below -LOWER_CUT are raised to it (narrower PMFs; sound)
EXACT_OTHERS = 64  # other reports counted one by one; beyond, rounded down on a grid
OTHERS_RATIO = 1.05  # that grid's ratio (others_down)
_MARGIN = 1e-7  # float error of a loss (as MASS_UP's), covered by rounding it up


@functools.lru_cache(maxsize=8192)
def clone_pmf(k: int, m: int, eps0: float, h: float,
              spare: float = 0.0) -> tuple[int, np.ndarray, float]:
    """The loss distribution of ``k`` reports of one node among ``m`` others' (module
    docstring), on the grid ``h``: ``(lower, probs, inf)``, ``probs[i]`` the mass at loss
    ``(lower + i) h`` and ``inf`` at ``+∞``.

    Examples
    --------
    >>> lower, probs, inf = clone_pmf(0, 10, 1.0, 1e-3)
    >>> lower, probs.tolist(), inf
    (0, [1.0], 0.0)
    >>> lower, probs, inf = clone_pmf(1, 0, 1.0, 0.5)  # randomized response at ε0 = 1
    >>> lower, [round(float(p), 4) for p in probs if p], inf  # -1 and 1, each a step up
    (-1, [0.2689, 0.7311], 0.0)
    """
    if k == 0:
        return 0, np.ones(1), 0.0
    from scipy import stats

    beta = math.exp(-eps0)
    if m == 0:
        c_lo = c_hi = 0
        logw = np.zeros(1)
        dropped = 0.0
    else:
        c_lo = max(int(stats.binom.ppf(TAIL, m, beta)) - 1, 0)
        c_hi = min(m - max(int(stats.binom.ppf(TAIL, m, 1.0 - beta)) - 1, 0), m)
        cs = np.arange(c_lo, c_hi + 1)
        logw = stats.binom.logpmf(cs, m, beta)
        dropped = float(stats.binom.cdf(c_lo - 1, m, beta) + stats.binom.sf(c_hi, m, beta))
    q = 1.0 / (1.0 + math.exp(-eps0))
    top = int(math.ceil(k * eps0 / h)) + 2
    probs = np.zeros(2 * top + 1)
    span = np.array([2 * top, 0])
    tails = _clone_levels(k, q, c_lo, logw, h, top, probs, span)
    inf = (dropped + tails) * MASS_UP
    lower = int(span[0]) - top
    probs = probs[span[0]:span[1] + 1] * MASS_UP
    return _trim(probs, lower, inf, spare)


@nb.njit(cache=True)
def _clone_levels(k, q, c_lo, logw, h, top, probs, span):
    """Add each ``(c, x)``'s ``P`` mass at its rounded-up loss level (``probs[level +
    top]``; ``span``: the lowest and highest index touched); the mass of the ``x`` left out
    (``A`` beyond its Hoeffding range)."""
    ps = np.empty(k + 1)
    ps_q = np.empty(k + 1)
    lq, l1q = math.log(q), math.log1p(-q)
    lk = math.lgamma(k + 1.0)
    for s in range(k + 1):
        binom = lk - math.lgamma(s + 1.0) - math.lgamma(k - s + 1.0)
        ps[s] = math.exp(binom + s * lq + (k - s) * l1q)  # S ~ Bin(k, q): P's
        ps_q[s] = math.exp(binom + s * l1q + (k - s) * lq)  # Bin(k, 1 - q): Q's
    left = 0.0
    c_top = c_lo + logw.size - 1
    pa = np.zeros(c_top + 1)
    for j in range(logw.size):
        c = c_lo + j
        wc = math.exp(logw[j])
        # P(|A - c/2| >= t) <= 2 exp(-2 t^2 / c) <= 2 TAIL: the x beyond go to +inf
        t = int(math.ceil(math.sqrt(0.5 * c * math.log(1.0 / TAIL)))) if c > 0 else 0
        a_lo = max(0, (c + 1) // 2 - t - 1)
        a_hi = min(c, c // 2 + t + 1)
        if a_lo > 0 or a_hi < c:
            left += wc * 2.0 * TAIL
        lc = math.lgamma(c + 1.0) - c * math.log(2.0)
        # P(A = a) for every a the x need: a_lo - k .. a_hi + k (within 0 .. c)
        for a in range(max(0, a_lo - k), min(c, a_hi + k) + 1):
            pa[a] = math.exp(lc - math.lgamma(a + 1.0) - math.lgamma(c - a + 1.0))
        for x in range(a_lo, a_hi + k + 1):
            # the exact P(x | c) and Q(x | c): every a = x - s in [0, c]
            acc = 0.0
            acc_q = 0.0
            for s in range(max(0, x - c), min(k, x) + 1):
                acc += ps[s] * pa[x - s]
                acc_q += ps_q[s] * pa[x - s]
            if acc_q <= 0.0 or acc <= 0.0:  # below the doubles: at +inf (sound)
                left += wc * (acc + 1e-300)
                continue
            loss = max(math.log(acc) - math.log(acc_q), -LOWER_CUT)
            lev = int(math.ceil((loss + _MARGIN * (1.0 + abs(loss))) / h))
            i = min(max(lev, -top), top) + top
            probs[i] += wc * acc
            span[0] = min(span[0], i)
            span[1] = max(span[1], i)
    return left


@functools.lru_cache(maxsize=2048)
def alone_pmf(k: int, eps0: float, h: float,
              spare: float = 0.0) -> tuple[int, np.ndarray, float]:
    """The node's ``k`` reports alone, ``k`` randomized responses at ε0 (loss ``(2 j - k)
    ε0``, ``j ~ Bin(k, q)``): dominates :func:`clone_pmf` (module docstring), as
    ``(lower, probs, inf)`` on the grid ``h``.

    Examples
    --------
    >>> lower, probs, inf = alone_pmf(2, 1.0, 0.5)
    >>> lower, [round(float(p), 4) for p in probs if p]
    (-3, [0.0723, 0.3932, 0.5344])
    """
    from scipy import stats

    if k == 0:
        return 0, np.ones(1), 0.0
    j = np.arange(k + 1)
    loss = (2 * j - k) * eps0
    level = np.ceil((loss + _MARGIN * (1.0 + np.abs(loss))) / h).astype(np.int64)
    probs = np.zeros(int(level[-1] - level[0]) + 1)
    np.add.at(probs, level - level[0],
              stats.binom.pmf(j, k, 1.0 / (1.0 + math.exp(-eps0))) * MASS_UP)
    return _trim(probs, int(level[0]), 0.0, spare)


def _trim(probs: np.ndarray, lower: int, inf: float,
          spare: float) -> tuple[int, np.ndarray, float]:
    """``probs`` (at levels ``lower + i``) cut to its support by :func:`_cut` (one row)."""
    if not probs.any():
        return 0, np.zeros(1), inf
    (lower,), kept, (extra,) = _cut(probs[None, :], np.array([lower]), spare)
    return int(lower), kept[0], inf + float(extra)


def _cut(mass: np.ndarray, lower: np.ndarray,
         spare: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row of ``mass`` (at levels ``lower[r] + i``) cut to where it matters: its top
    levels holding at most ``spare`` go to ``+∞`` (their mass returned), its lowest levels
    holding at most ``spare`` are raised to the first level above them (zero levels at
    either end go with ``spare = 0``); the rows' new lowest levels and the kept masses,
    left-aligned."""
    rows, width = mass.shape
    at = np.arange(rows)
    upper = np.cumsum(mass[:, ::-1], axis=1)[:, ::-1]  # mass at or above each level
    stop = np.maximum((upper > spare).sum(axis=1), 1)
    extra = np.where(stop < width, upper[at, np.minimum(stop, width - 1)], 0.0)
    below = np.cumsum(mass, axis=1)
    start = np.minimum((below <= spare).sum(axis=1), stop - 1)
    mass = mass.copy()
    mass[at, start] += np.where(start > 0, below[at, np.maximum(start - 1, 0)], 0.0)
    cols = start[:, None] + np.arange(int((stop - start).max(initial=1)))
    kept = np.where(cols < stop[:, None],
                    np.take_along_axis(mass, np.minimum(cols, width - 1), axis=1), 0.0)
    return (np.asarray(lower) + start).astype(np.int64), kept, extra


def window_rows(w: np.ndarray, tail: np.ndarray, reports: int, eps0: float, h: float,
                spare: float = 0.0, rare: float = 0.0) -> ViewRows:
    """The loss distributions of one window of ``reports`` reports towards many nodes:
    row ``r``'s count of its node's reports has the law ``w[r]`` (``w[r, k] = P(K = k)``)
    plus ``tail[r]`` beyond (at ``+∞``); the mixture of the clone pairs ``(k, reports -
    k)`` with ``K`` revealed (module docstring). One direction serves both (symmetric).
    Counts whose weight is at most ``rare`` in every row take :func:`alone_pmf` instead
    (dominating: sound, and at most ``rare`` of δ each).

    Examples
    --------
    >>> rows = window_rows(np.array([[1.0, 0.0], [0.5, 0.5]]), np.zeros(2), 5, 1.0, 0.1)
    >>> rows.lower.tolist(), float(rows.probs[0, 0]), round(float(rows.probs[1].sum()), 6)
    ([0, -9], 1.0, 1.0)
    """
    w = np.asarray(w, dtype=np.float64)
    spare = floor_of(spare)
    rows, width = w.shape
    tail = np.array(tail, dtype=np.float64)
    # counts no row needs (each below spare / width) go to an infinite loss: sound
    small = w.max(axis=0, initial=0.0) < spare / max(width, 1)
    small[0] = False
    if small.any():
        tail += w[:, small].sum(axis=1)
        w = np.where(small[None, :], 0.0, w)
    top = w.max(axis=0, initial=0.0)
    live = np.flatnonzero(top > 0)
    pmfs = {int(k): (clone_pmf(int(k), others_down(reports - int(k)), float(eps0),
                               float(h), spare)
                     if top[k] > rare else alone_pmf(int(k), float(eps0), float(h), spare))
            for k in live if k <= reports}
    lo = min((p[0] for p in pmfs.values()), default=0)
    hi = max((p[0] + p[1].size - 1 for p in pmfs.values()), default=0)
    basis = np.zeros((len(pmfs), hi - lo + 1))
    infs = np.zeros(len(pmfs))
    for i, (lower, probs, inf) in enumerate(pmfs.values()):
        basis[i, lower - lo:lower - lo + probs.size] = probs
        infs[i] = inf
    ks = np.array(list(pmfs), dtype=np.int64)
    weights = w[:, ks] if ks.size else np.zeros((rows, 0))
    impossible = w[:, reports + 1:].sum(axis=1)  # counts beyond the window's reports
    lowest, kept, extra = _cut(weights @ basis, np.full(rows, lo), spare)
    inf_rows = np.minimum(tail + impossible + weights @ infs + extra, 1.0)
    return ViewRows(lowest, kept, inf_rows)


def others_down(m: int) -> int:
    """``m`` other reports rounded down to a grid (every count up to :data:`EXACT_OTHERS`,
    then :data:`OTHERS_RATIO` apart): fewer others is sound (the pair with more is the
    pair with fewer and more clones added, a post-processing), and windows then share
    their pairs.

    Examples
    --------
    >>> others_down(40), others_down(100), others_down(others_down(1000)) == others_down(1000)
    (40, 99, True)
    """
    if m <= EXACT_OTHERS:
        return m
    # the largest grid point floor(EXACT_OTHERS * OTHERS_RATIO^s) at most m
    step = math.floor(math.log(m / EXACT_OTHERS) / math.log(OTHERS_RATIO)) + 1
    while math.floor(EXACT_OTHERS * OTHERS_RATIO ** step) > m:
        step -= 1
    return max(EXACT_OTHERS, math.floor(EXACT_OTHERS * OTHERS_RATIO ** step))


def grid_of(h: float) -> float:
    """``h`` down to a power of 2 (runs and observers then share their pairs' PMFs: the
    caller composes on this grid)."""
    return 2.0 ** math.floor(math.log2(h))


def floor_of(spare: float) -> float:
    """``spare`` down to a power of 10 (the pairs' PMFs shared again; 0 stays)."""
    return 10.0 ** math.floor(math.log10(spare)) if spare > 0 else 0.0
