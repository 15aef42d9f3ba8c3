"""Sound per-cycle privacy entries of a walk view (the ``sound`` convention).

Observer ``v`` hands the token on at step ``j`` and gets it back at ``i = j + m``: it sees
the sum of the ``m - 1`` contributions in between, each under its own Gaussian draw, so
``N = m - 1`` draws it does not know (spec network-dp.md, Corrections 1). Node ``u``
contributes ``K = c + I`` of them: ``c`` attributable visits (``u`` is the node ``v``
handed the token to, or the one that handed it back) and ``I`` interior visits whose law
the cycle's public data fixes (Corrections 2, 3). The cycle towards ``u`` is the pair

    ``P = N(0, s²)``  against  ``Q = Σ_k P(K = k) N(k, s²)``,   ``s = z √N``

(``z`` = σ / Δ; values in units of the sensitivity). The stretch before ``v``'s first
visit is one more such view, with ``N = i0`` draws, ``c = [u = b]`` and ``i0 - 1``
interior positions.

This module gives, for a cycle, an entry that bounds that pair soundly for each of the
fast accountants:

* **kov**: the pair is ``(log E[e^{ε_K}], δ)``-DP, where ``ε_k`` is the exact ε(δ) of a
  Gaussian of sensitivity ``k`` and std ``s`` (``ε_0 = 0``): since
  ``Q(S) = Σ_k P(k) N_k(S) <= Σ_k P(k) (e^{ε_k} N_0(S) + δ)``, and backwards
  ``N_0(S) <= Q(S) / E[e^{-ε_K}] + δ`` with ``-log E[e^{-ε_K}] <= log E[e^{ε_K}]``
  (Jensen). With Laplace noise ``ε_k = k ε0`` and ``δ = 0``.
* **rdp**: ``c = 0``: ``u``'s presence ``B ~ Bern(q)``, ``q = P(I >= 1)``, stays hidden
  but the count given presence, ``L ~ I | I >= 1``, is revealed (more than ``v`` sees:
  sound); given ``L = l`` the pair is a Poisson-subsampled Gaussian of rate ``q`` and
  sensitivity ``l``, and a public label mixes Rényi divergences exactly:
  ``D_α = 1/(α-1) log Σ_l P(L = l) e^{(α-1) D_α^{SG}(q, s/l)}``.
  ``c >= 1``: joint convexity of ``e^{(α-1) D_α}`` over the law of ``I`` (both
  directions): ``1/(α-1) log Σ_i P(I = i) e^{α(α-1)(c+i)²/(2 s²)}``.

Cycle lengths are grouped in bins (:func:`cycle_bin`); a bin's entry takes the noise of
its shortest cycle and the count law of its longest. Every entry above is monotone in
both (ε_k and the Rényi terms fall with ``s`` and rise with ``k``; the binomial laws, and
their conditionals on ``I >= 1``, grow in likelihood-ratio order with the number of
positions), so the bin's entry bounds each of its cycles.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numba as nb
import numpy as np

from netdp.accounting import _compiled as compiled
from netdp.accounting._compiled import _gauss_eps_nb, gdp_epsilon  # noqa: F401 (re-exported)
from netdp.tracking._kernels import subsampled

EXACT_M = 32
BIN_RATIO = 2 ** (1 / 32)
_LOG_RATIO = math.log(BIN_RATIO)
KCAP = 1 << 16  # interior counts summed term by term at most; the tail sits at the largest
EXACT_TERMS = 64  # counts whose Gaussian ε(δ) is exact; beyond, its closed-form bound

# Kinds of views and attributable keys of an entry.
REGULAR, FIRST = 0, 1
# u's place in a view: neither end (two keys: the view's ends differ, or are one node),
# the node the observer handed the token to, the one that handed it back, both.
NONE, A_ONLY, B_ONLY, BOTH, NONE_SAME = 0, 1, 2, 3, 4
KEYS = 5


@nb.njit(cache=True)
def cycle_bin(m):
    """Bin id of a length (its own up to :data:`EXACT_M`, then geometric by
    :data:`BIN_RATIO`)."""
    if m <= EXACT_M:
        return m
    return EXACT_M + int(math.ceil(math.log(m / EXACT_M) / _LOG_RATIO - 1e-9))


@nb.njit(cache=True)
def cycle_bins(values):
    """:func:`cycle_bin` of every value."""
    out = np.empty(values.size, np.int64)
    for i in range(values.size):
        out[i] = cycle_bin(values[i])
    return out


def draws(kind: int, length: int) -> int:
    """Noise draws the observer does not know: ``m - 1`` in a cycle, ``i0`` before the
    first visit."""
    return length - 1 if kind == REGULAR else length


def interior(kind: int, length: int) -> int:
    """Positions whose holder the observer does not know: ``m - 3`` in a cycle (none for
    ``m = 2``), ``i0 - 1`` before the first visit."""
    return max(length - 3, 0) if kind == REGULAR else length - 1


def attributable(kind: int, length: int, key: int) -> int:
    """Visits of ``u`` the observer attributes: ``u = a`` and ``u = b`` are one position
    when ``m = 2``, and a first stretch has no ``a``."""
    if key in (NONE, NONE_SAME):
        return 0
    if key == BOTH:
        return 1 if (kind == REGULAR and length == 2) else 2
    return 1


# A count law: (kind, length, key, budget) -> (log P(I = i) for i = 0..len-1, log of a bound
# on P(I >= len)), the second being the mass put at the largest count
# ``interior(kind, length)``; ``budget``: how many nats below the largest term the tail may
# be cut (the caller knows how fast its terms grow with the count).
CountLaw = Callable[..., tuple[np.ndarray, float]]
BUDGET = 60.0  # nats below the sum at which a law's tail is cut, beyond the terms' growth
MAX_GROWTH = 2000.0  # rdp: beyond, a heavier tail is cut (sound: it sits at the largest count)
UNDERFLOW = 5e-324  # a pmf term computed as 0 is below this (the least positive double)
NEAR_UNDERFLOW = 1e-290  # zeros after a term this small may be underflow, not impossible


@nb.njit(cache=True)
def binomial_logpmf(size, p, budget):
    """``log P(I = k)`` for ``I ~ Binomial(size, p)``, ``k = 0..top``, and ``log`` of a bound
    on the tail ``P(I > top)`` (``-inf`` when ``top = size``): terms are added until, past
    the mean, the tail bound ``(size - k) P(I = k)`` (the terms decrease there) is
    ``budget`` nats below the largest term."""
    lp, lq = math.log(p), math.log1p(-p)
    out = np.empty(min(size, KCAP) + 1)
    term = size * lq
    best = term
    out[0] = term
    top = 0
    tail = -np.inf
    for k in range(1, size + 1):
        term += math.log((size - k + 1.0) / k) + lp - lq
        if k >= out.size:
            tail = term + math.log(size - k + 1.0)
            break
        out[k] = term
        top = k
        best = max(best, term)
        if k > size * p and k < size and term + math.log(size - k) < best - budget:
            tail = term + math.log(size - k)
            break
    return out[: top + 1], tail


def truncated_log_law(pmf: np.ndarray, budget: float = BUDGET, rate: float | None = None,
                      positions: int | None = None) -> tuple[np.ndarray, float]:
    """A law given in full as ``(log P(I = i)`` up to where the rest is ``budget`` nats below
    the largest term, ``log P(rest))``.

    Terms that underflowed to 0 (zeros after a term below :data:`NEAR_UNDERFLOW`; zeros
    after larger terms are counts the law cannot reach) are bounded: by
    ``C(positions, i) rate^i`` each when ``rate`` bounds the chance of each of the
    ``positions`` (default ``len(pmf) - 1``) given the others (then
    ``P(I = i) <= C(positions, i) rate^i``, chaining the conditionals; the law's
    mass then exceeds 1 by at most that bound's, at the largest counts), else all of them
    together by the least double each, at the largest count (the tail)."""
    pmf = np.clip(np.asarray(pmf, dtype=float), 0.0, None)
    rest = np.cumsum(pmf[::-1])[::-1]  # P(I >= i)
    limit = pmf.max(initial=0.0) * math.exp(-budget)
    cut = np.flatnonzero(rest <= limit)
    top = int(cut[0]) if cut.size and cut[0] > 0 else pmf.size
    with np.errstate(divide="ignore"):
        logp = np.log(pmf[:top])
        underflow = top < pmf.size and top > 0 and pmf[top - 1] < NEAR_UNDERFLOW
        if top < pmf.size and rest[top] > 0:
            tail = math.log(rest[top])
        elif not underflow:  # exact zeros after terms well inside the doubles: impossible
            tail = -np.inf
        elif rate is not None and 0.0 < rate < 1.0:
            from scipy import special

            size = pmf.size - 1 if positions is None else max(int(positions), pmf.size - 1)
            k = np.arange(top, pmf.size, dtype=float)
            bound = (special.gammaln(size + 1.0) - special.gammaln(k + 1.0)
                     - special.gammaln(size - k + 1.0) + k * math.log(rate))
            logp = np.concatenate([logp, bound])
            tail = -np.inf
        else:  # terms that underflowed: each below the least double
            tail = math.log((pmf.size - top) * UNDERFLOW)
    return logp, tail


def binomial_law(p: float) -> CountLaw:
    """Interior holders iid, each ``u`` w.p. ``p``: ``I ~ Binomial(positions, p)`` (the
    complete graph with self-moves, ``p = 1 / (n - |W|)``)."""

    def law(kind: int, length: int, key: int, budget: float = BUDGET
            ) -> tuple[np.ndarray, float]:
        size = interior(kind, length)
        if size == 0 or p == 0.0:
            return np.zeros(1), -np.inf
        if p >= 1.0:
            out = np.full(size + 1, -np.inf)
            out[size] = 0.0
            return out, -np.inf
        return binomial_logpmf(size, p, float(budget))

    law.p = p  # type: ignore[attr-defined]  # the per-visit bound applies
    law.binned = True  # type: ignore[attr-defined]  # monotone in the length: bins are sound
    return law


@dataclass(frozen=True)
class Noise:
    """What a contribution's noise is: ``z`` = σ / Δ (Gaussian), or ``eps0`` with
    ``laplace`` set (pure ε0-DP per contribution)."""

    z: float
    eps0: float
    laplace: bool = False


def _log_sum(terms: np.ndarray) -> float:
    top = float(np.max(terms))
    if not np.isfinite(top):
        return top
    return top + math.log(float(np.sum(np.exp(terms - top))))


def _gauss_eps(mu: np.ndarray, delta: float) -> np.ndarray:
    out = np.empty(mu.size)
    _gauss_eps_nb(np.ascontiguousarray(mu, dtype=np.float64), float(delta), out)
    return out


#: ``(s, δ) ->`` ε(δ) of the Gaussians of std ``s`` and sensitivity ``k = 0, 1, ...``
EpsMemo = dict[tuple[float, float], np.ndarray]


def _gauss_eps_counts(lo: int, hi: int, s: float, delta: float,
                      memo: EpsMemo | None = None) -> np.ndarray:
    """:func:`gdp_epsilon` of ``k / s`` for the counts ``k = lo .. hi - 1``. With ``memo``,
    each count's value is computed once per ``(s, δ)``: the keys of a view length share
    their noise and differ only in where their counts start (the same doubles ``k / s``,
    so the same numbers)."""
    if memo is None:
        return _gauss_eps(np.arange(lo, hi, dtype=float) / s, delta)
    done = memo.get((s, delta), np.empty(0))
    if done.size < hi:
        more = _gauss_eps(np.arange(done.size, hi, dtype=float) / s, delta)
        done = memo[(s, delta)] = np.concatenate([done, more])
    return done[lo:hi]


def kov_entry(logp: np.ndarray, tail: float, c: int, size: int, s: float, noise: Noise,
              delta: float, memo: EpsMemo | None = None) -> float:
    """``log E[e^{ε_K}]`` for ``K = c + I`` (``I``'s law ``logp``, its tail at ``size``;
    ``memo``: see :func:`_gauss_eps_counts`)."""
    k = c + np.arange(logp.size, dtype=float)
    if noise.laplace:
        eps = k * noise.eps0
        top = (c + size) * noise.eps0
    else:
        eps = np.empty(k.size)
        few = min(k.size, EXACT_TERMS)
        eps[:few] = _gauss_eps_counts(c, c + few, s, delta, memo)
        mu = k[few:] / s  # beyond: the closed-form bound of the Gaussian's ε(δ)
        eps[few:] = mu * mu / 2.0 + mu * math.sqrt(2.0 * math.log(1.0 / delta))
        top = kov_growth(c, size, s, noise, delta)
    terms = logp + eps
    if tail > -np.inf:
        terms = np.append(terms, tail + top)
    return max(_log_sum(terms), 0.0)


@nb.njit(cache=True)
def rdp_entry(logp, tail, c, size, s, orders, out):
    """Rényi entry of a cycle (the label bound, see the module docstring) into ``out``."""
    nf = orders.size
    tmp = np.empty(nf)
    if c == 0:
        # q = P(I >= 1); label law P(I = l) / q for l >= 1 (tail at the largest count).
        lq = -np.inf
        for i in range(1, logp.size):
            lq = compiled._log_add(lq, logp[i])
        lq = compiled._log_add(lq, tail)
        if lq == -np.inf:
            for a in range(nf):
                out[a] = 0.0
            return
        q = min(math.exp(lq), 1.0)
        for a in range(nf):
            out[a] = -np.inf
        # each order's binomial terms without the label (subsampled.subsampled_log_sum)
        base = subsampled.subsampled_base(q, orders) if q < 1.0 else np.empty((0, 0))
        for i in range(1, logp.size + 1):
            if i < logp.size:
                lw, sens = logp[i] - lq, float(i)
            else:
                if tail == -np.inf:
                    break
                lw, sens = tail - lq, float(size)
            negligible = True  # each term is below (α-1) α l²/(2 s²): skip it if far below
            for a in range(nf):
                cap = (orders[a] - 1.0) * orders[a] * sens * sens / (2.0 * s * s)
                if not (lw + cap < out[a] - 50.0):
                    negligible = False
                    break
            if negligible:
                continue
            if q >= 1.0:
                compiled.rdp_gaussian_entry(q, sens, s, orders, tmp)
                for a in range(nf):
                    tmp[a] *= orders[a] - 1.0
            else:
                subsampled.subsampled_log_sum(base, sens * sens / (2.0 * s * s), orders, tmp)
            for a in range(nf):
                out[a] = compiled._log_add(out[a], lw + tmp[a])
        for a in range(nf):
            out[a] = max(out[a] / (orders[a] - 1.0), 0.0)
    else:
        rdp_convex(logp, tail, c, size, s, orders, out)


@nb.njit(cache=True)
def rdp_convex(logp, tail, c, size, s, orders, out):
    """The joint-convexity bound of a cycle (sound for every ``c``, the entry itself for
    ``c >= 1``): ``1/(α-1) log Σ_i P(I = i) e^{α(α-1)(c+i)²/(2 s²)}``, the tail at the
    largest count. A sum of one term per count and order, where the label bound's costs
    ``α + 1``: the high orders take it (for ``c = 0`` they lose next to nothing, the
    subsampled curve nearing the unsubsampled one as ``α`` grows)."""
    nf = orders.size
    for a in range(nf):
        out[a] = -np.inf
    for i in range(logp.size + 1):
        if i < logp.size:
            lw, sens = logp[i], float(c + i)
        else:
            if tail == -np.inf:
                break
            lw, sens = tail, float(c + size)
        for a in range(nf):
            alpha = orders[a]
            out[a] = compiled._log_add(
                out[a], lw + alpha * (alpha - 1.0) * sens * sens / (2.0 * s * s))
    for a in range(nf):
        out[a] = max(out[a] / (orders[a] - 1.0), 0.0)


@nb.njit(cache=True)
def rdp_entries(logp, ltail, c, size, s, orders, out):
    """:func:`rdp_entry` of many nodes of one view: ``logp[r]``, ``ltail[r]``, ``c[r]``
    (row ``r``), into ``out[r]``; the laws' support is cut where it ends."""
    tmp = np.empty(orders.size)
    for r in range(logp.shape[0]):
        top = logp.shape[1]
        while top > 1 and logp[r, top - 1] == -np.inf:
            top -= 1
        rdp_entry(logp[r, :top], ltail[r], c[r], size, s, orders, tmp)
        for a in range(orders.size):
            out[r, a] = tmp[a]


#: Shares ``β`` of a view's noise given to its ``c >= 1`` attributable visits that
#: :func:`rdp_per_visit` tries besides the split of the mean shift, order by order.
SPLITS = np.array([0.25, 0.5, 0.75, 0.9])


@nb.njit(cache=True)
def rdp_per_visit(p, c, size, s, orders, out):
    """Rényi entry of a cycle whose ``size`` interior holders are each ``u`` w.p. at most
    ``p`` given the holders before it (iid on the complete graph with self-moves;
    without, ``1 / (n - |W| - 2)``), visit by visit: the draw ``N(0, s²)`` splits into
    ``β s²`` for the ``c`` attributable visits and ``(1 - β) s² / size`` for each
    interior position, so the view is the sum (a post-processing) of a Gaussian of
    sensitivity ``c`` and ``size`` releases, each, given the ones before it, a
    Poisson-subsampled Gaussian of a rate at most ``p`` (its divergences, both ways, grow
    with the rate), which compose adaptively (Rényi's chain rule with the supremum over
    the past). Any ``β`` in ``(0, 1)`` gives a bound, and each order may take its own:
    ``β = c / (c + size p)`` (the split of the mean shift) and, at the orders up to
    :data:`LABEL_ORDER_MAX`, :data:`SPLITS`, whichever is less (the mean shift's split
    leaves the interior so little noise when ``c >= 1`` that the curve blows up from
    moderate orders on: a view of 48 draws at z = 4.2 gave 25 at order 24)."""
    lam = size * p
    if c == 0:
        _per_visit(p, c, size, s, 0.0, orders, out)
        return
    _per_visit(p, c, size, s, 1.0 if size == 0 else c / (c + lam), orders, out)
    if size == 0:
        return
    low = _label_orders(orders)  # the other splits there (each order above costs 30x)
    tmp = np.empty(low)
    for beta in SPLITS:
        _per_visit(p, c, size, s, beta, orders[:low], tmp)
        for a in range(low):
            out[a] = min(out[a], tmp[a])


@nb.njit(cache=True)
def _label_orders(orders):
    """How many of the increasing ``orders`` are at most :data:`LABEL_ORDER_MAX`."""
    low = 0
    while low < orders.size and orders[low] <= LABEL_ORDER_MAX:
        low += 1
    return low


@nb.njit(cache=True)
def _per_visit(p, c, size, s, beta, orders, out):
    """:func:`rdp_per_visit` at one split ``β`` of the noise."""
    nf = orders.size
    tmp = np.empty(nf)
    for a in range(nf):
        out[a] = 0.0
    if c > 0:
        for a in range(nf):
            out[a] = orders[a] * c * c / (2.0 * beta * s * s)
    if size > 0 and beta < 1.0:
        std = s * math.sqrt((1.0 - beta) / size)
        low = _label_orders(orders)
        compiled.rdp_gaussian_entry(p, 1.0, std, orders[:low], tmp[:low])
        if low < nf:
            subsampled.subsampled_rdp_high(p, std, orders[low:], tmp[low:])
        for a in range(nf):
            out[a] += size * tmp[a]


KOV, RDP = 0, 1
#: The label bound's highest order where a per-visit bound exists (iid holders): its cost
#: is a sum of ``α + 1`` terms per count of the law, which the orders above (the complete
#: graph's, :data:`~netdp.tracking.loss_table.WALK_RDP_ORDERS`) would multiply by 30;
#: there the per-visit bound alone is the entry (a minimum of two bounds, or one of them).
LABEL_ORDER_MAX = 256.0
GROWTH_ORDER = 8.0  # Rényi terms beyond this order may be cut loose (per-visit covers them)


def kov_growth(c: int, size: int, s: float, noise: Noise, delta: float) -> float:
    """An upper bound of ``ε_{c + size}``: how far the terms of :func:`kov_entry` grow."""
    if noise.laplace:
        return (c + size) * noise.eps0
    mu = (c + size) / s
    return mu * mu / 2.0 + mu * math.sqrt(2.0 * math.log(1.0 / delta))


def rdp_growth(c: int, size: int, s: float, a: float = GROWTH_ORDER) -> float:
    """``(α - 1) α (c + size)² / (2 s²)`` at order ``a`` (:data:`GROWTH_ORDER`, where the
    per-visit bound covers the higher orders; the largest order where none does)."""
    return (a - 1.0) * a * (c + size) ** 2 / (2.0 * s * s)


def view_entry(mode: int, law: CountLaw, kind: int, length: int, key: int, s: float,
               noise: Noise, delta: float, orders: np.ndarray, out: np.ndarray,
               law_length: int | None = None, memo: EpsMemo | None = None) -> None:
    """The entry of one view into ``out`` (KOV-het features, or the Rényi curve): noise of
    std ``s``, the count law of a view of ``law_length`` (default ``length``; ``memo``: see
    :func:`_gauss_eps_counts`)."""
    at = length if law_length is None else law_length
    size = interior(kind, at)
    c = attributable(kind, at, key)
    p = getattr(law, "p", None)
    grow = kov_growth(c, size, s, noise, delta) if mode == KOV else rdp_growth(c, size, s)
    logp, tail = law(kind, at, key, BUDGET + min(grow, 1e6 if mode == KOV else MAX_GROWTH))
    if mode == KOV:
        compiled.kov_terms(kov_entry(logp, tail, c, size, s, noise, delta, memo), out)
        return
    # the label bound up to LABEL_ORDER_MAX; above, iid holders: the per-visit bound (at
    # every order), others: the joint-convexity one
    low = _label_orders(orders)
    if p is None:
        _label_and_convex(logp, tail, c, size, s, orders, low, out)
        deep = rdp_growth(c, size, s, float(orders.max()))
        if deep > grow:  # the law kept further too, whichever is less
            logp, tail = law(kind, at, key, BUDGET + min(deep, MAX_GROWTH))
            further = np.empty(orders.size)
            _label_and_convex(logp, tail, c, size, s, orders, low, further)
            np.minimum(out, further, out=out)
    else:
        rdp_entry(logp, tail, c, size, s, orders[:low], out[:low])
        out[low:] = np.inf
    rate = getattr(law, "rate", p)  # each position u's w.p. at most this given the past
    if rate is not None:  # the per-visit bound, whichever is less
        visit = np.empty(orders.size)
        rdp_per_visit(float(rate), c, size, s, orders, visit)
        np.minimum(out, visit, out=out)


def _label_and_convex(logp: np.ndarray, tail: float, c: int, size: int, s: float,
                      orders: np.ndarray, low: int, out: np.ndarray) -> None:
    """:func:`rdp_entry` at the ``low`` first orders, :func:`rdp_convex` above."""
    rdp_entry(logp, tail, c, size, s, orders[:low], out[:low])
    if low < orders.size:
        rdp_convex(logp, tail, c, size, s, orders[low:], out[low:])


def entry_tables(mode: int, lengths: tuple[np.ndarray, np.ndarray], law: CountLaw,
                 noise: Noise, delta: float, orders: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Entries of every (kind, key, length) that occurs, and where each length's sits.

    ``lengths[kind]`` are the view lengths of that kind in the run (cycle lengths ``m``,
    first-visit steps ``i0``). A law with ``binned`` set (the binomial) groups the lengths
    by :func:`cycle_bin`: each bin's entry uses the noise of its shortest and the law of its
    longest (see the module docstring); other laws get one entry per length.

    Returns
    -------
    table, rows
        ``table[kind, key, row]``: the features (``(ε, ε tanh(ε/2), ε²)`` for
        :data:`KOV`, the curve at ``orders`` for :data:`RDP`); ``rows[kind][length]``: the
        row of each length (``-1`` where none occurs).
    """
    nf = 3 if mode == KOV else orders.size
    binned = bool(getattr(law, "binned", False))
    groups = []
    for values in lengths:
        values = values.astype(np.int64)
        ids = cycle_bins(values) if binned else values
        uniq, inv = np.unique(ids, return_inverse=True)
        lo = np.full(uniq.size, np.iinfo(np.int64).max)
        hi = np.zeros(uniq.size, np.int64)
        np.minimum.at(lo, inv, values)
        np.maximum.at(hi, inv, values)
        rows = np.full(int(values.max(initial=0)) + 1, -1, np.int64)
        rows[values] = inv
        groups.append((lo, hi, rows))
    top = max(g[0].size for g in groups)
    table = np.zeros((2, KEYS, max(top, 1), nf))
    for kind, (lo, hi, _) in enumerate(groups):
        for r, (m_lo, m_hi) in enumerate(zip(lo, hi, strict=True)):
            n_draws = draws(kind, int(m_lo))
            if n_draws <= 0:
                continue
            s = noise.z * math.sqrt(n_draws)
            memo: EpsMemo = {}  # the row's keys share its noise, so its Gaussian ε's
            for key in range(KEYS):
                if kind == FIRST and key in (A_ONLY, BOTH, NONE_SAME):
                    continue
                view_entry(mode, law, kind, int(m_lo), key, s, noise, delta, orders,
                           table[kind, key, r], law_length=int(m_hi), memo=memo)
    return table, groups[0][2], groups[1][2]


@dataclass(frozen=True)
class Views:
    """One observer's views in time order (see the module docstring).

    Attributes
    ----------
    kind, length
        :data:`~netdp.tracking.cycle_entries.REGULAR` (``length = m``) or ``FIRST``
        (``length = i0``).
    a, b
        The known ends (``a = -1`` for a first stretch; ``a = b`` when ``m = 2``).
    """

    kind: np.ndarray
    length: np.ndarray
    a: np.ndarray
    b: np.ndarray

    @property
    def size(self) -> int:
        return int(self.kind.size)

    def key(self, e: int, u: int) -> int:
        """Where node ``u`` sits in view ``e`` (a key of
        :mod:`~netdp.tracking.cycle_entries`)."""
        a, b = int(self.a[e]), int(self.b[e])
        if self.kind[e] == FIRST:
            return B_ONLY if u == b else NONE
        if u == a and u == b:
            return A_ONLY if self.length[e] == 2 else BOTH
        if u == a:
            return A_ONLY
        if u == b:
            return B_ONLY
        return NONE_SAME if (a == b and self.length[e] > 2) else NONE


def observer_views(holders: np.ndarray, steps: int, at: np.ndarray) -> Views:
    """The views of an observer that holds the flattened walk at positions ``at``
    (increasing; tokens of ``steps`` positions each)."""
    return timed_views(holders, steps, at)[0]


def timed_views(holders: np.ndarray, steps: int, at: np.ndarray) -> tuple[Views, np.ndarray]:
    """:func:`observer_views`, and the step (within its token) of each view's first hidden
    holder: ``j + 1`` for a cycle from ``j``, ``0`` for a first stretch (what a walk whose
    transitions depend on the step needs: :mod:`netdp.tracking.time_varying`)."""
    at = np.asarray(at, dtype=np.int64)
    token = at // steps
    fresh = np.ones(at.size, bool)
    fresh[1:] = token[1:] != token[:-1]
    i0 = at - token * steps
    first = np.flatnonzero(fresh & (i0 >= 1))
    later = np.flatnonzero(~fresh)
    m = at[later] - at[later - 1]
    later = later[m >= 2]
    m = m[m >= 2]
    kind = np.concatenate([np.full(first.size, FIRST), np.full(later.size, REGULAR)])
    length = np.concatenate([i0[first], m])
    a = np.concatenate([np.full(first.size, -1), holders[at[later - 1] + 1]])
    b = np.concatenate([holders[at[first] - 1], holders[at[later] - 1]])
    t0 = np.concatenate([np.zeros(first.size, np.int64), i0[later - 1] + 1])
    order = np.argsort(np.concatenate([at[first], at[later]]), kind="stable")
    views = Views(kind[order].astype(np.int64), length[order].astype(np.int64),
                  a[order].astype(np.int64), b[order].astype(np.int64))
    return views, t0[order].astype(np.int64)
