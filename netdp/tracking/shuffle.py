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

import dataclasses
import math
from collections.abc import Callable, Sequence

import numba as nb
import numpy as np

from netdp.accounting import _compiled as compiled
from netdp.accounting._arrays import geometric_bins
from netdp.accounting.amplification import blanket_epsilon, fmt_closed_epsilon
from netdp.accounting.composition import kov_het_epsilon
from netdp.accounting.fmt_numeric import fmt_numeric_epsilon
from netdp.core.errors import check
from netdp.core.roots import largest_within
from netdp.core.simulation_config import SHUFFLE_BOUNDS
from netdp.engine.trace import Trace
from netdp.tracking._kernels import walk as kernels
from netdp.tracking.loss_table import (
    CONVENTIONS,
    PairLosses,
    coalition_members,
    kov_homogeneous_array,
    observer_view,
)
from netdp.tracking.shuffle_sound import (
    CountLaw,
    binomial_law,
    holder_rate,
    pairwise_sound,
    sound_entries,
)
from netdp.tracking.view_cap import cap_to_view
from netdp.tracking.windows import (
    EXACT_R,
    R_RATIO,
    Windows,
    walk_windows,
)

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



def trace_windows(trace: Trace, eps0: float, delta: float | None,
                  bound: str = "fmt-numeric", domain: int = 2,
                  coalition: Sequence[int] | None = None) -> Windows:
    """The windows every observer (or the coalition) sees of ``trace``, each with the ε of
    one report shuffled among the window's (``bound``; large windows binned) at ``delta``
    (``None``: none yet, :func:`shuffled_at` adds them)."""
    check(bound in SHUFFLE_BOUNDS, "shuffle",
          f"must be one of {', '.join(SHUFFLE_BOUNDS)} (got {bound!r})")
    holders, n_ids, observers, others = observer_view(trace, coalition)
    holders = holders.astype(np.int64)
    own, reports, first, last = walk_windows(holders, trace.steps, n_ids, observers)
    if (trace.holders < 0).any():  # a lost token's steps that never happened: no node
        phantom = n_ids - 1
        first, last = (np.where(x == phantom, -1, x) for x in (first, last))
    eps_s = (np.empty(0) if delta is None
             else _binned_epsilon(bound, eps0, reports, delta, domain))
    return Windows(own, reports, first, last, eps_s, n_ids, observers, others)


def shuffled_at(w: Windows, eps0: float, delta: float, bound: str, domain: int) -> Windows:
    """``w`` with each window's shuffled ε at ``delta`` (the windows themselves kept)."""
    return dataclasses.replace(w, eps_s=_binned_epsilon(bound, eps0, w.reports, delta, domain))


def most_windows(w: Windows, index: np.ndarray | None = None) -> int:
    """The most windows one observer (or the coalition) composes, among the observers
    ``index`` (default: all)."""
    per = np.bincount(w.own, minlength=w.observers.size)
    if index is not None:
        per = per[index]
    return int(per.max()) if per.size else 0


TARGET_TRIES = 4  # entry deltas tried before a tracker keeps its pairs' own delta


def ring_entry_delta(target: float, entries: int) -> float:
    """``target / (2 k)``, rounded down so that ``k`` entries and KOV's slack ``k δ`` stay
    within ``target`` in floating point: the ring's entries' δ at one target δ (its ``K``
    windows are certain, so this is where :func:`at_target` stops)."""
    return target / (2.0 * max(entries, 1)) * (1.0 - 1e-12)


def at_target(account: Callable[[float], PairLosses], target: float,
              entries: int) -> PairLosses:
    """``account(δ_e)`` at one target δ (spec Correction 7): the pairs' figures with each
    entry's shuffle bound at ``δ_e``, whose largest total δ (``.delta``: the entries' δ
    and KOV's slack) must not exceed ``target``.

    ``δ_e`` starts at ``target / (2 k)`` (``k = entries``, the most windows of a pair): KOV's
    slack ``k δ_e`` takes half the target, the entries the other half. An entry whose node
    may hold several reports of a window spends more than ``δ_e`` (group privacy,
    :func:`~netdp.tracking.shuffle_sound.window_entry`); while the total is over the
    target, ``δ_e`` shrinks in proportion and the figures are made again (at most
    :data:`TARGET_TRIES` times; then the table keeps its own δ, shown in its row). A table
    within the target is an ε at the target itself (a smaller δ only makes it stronger).
    """
    d = ring_entry_delta(target, entries)
    for _ in range(TARGET_TRIES):
        out = account(d)
        if out.delta <= target:
            return dataclasses.replace(out, delta=target)
        d *= 0.999 * target / out.delta
    return out


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
    target: float | None = None,
    plds: bool = True,
) -> PairLosses:
    """Pairwise losses of the random-walk histogram (AISTATS 2022 Alg. 4), each capped at
    the LDP loss of the largest count of its node's reports that the observer's view
    allows (:func:`~netdp.tracking.view_cap.cap_to_view`) unless ``cap`` is off.

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
    target
        The sound convention at one δ (spec Correction 7): every pair's figure at
        ``target``, ``delta`` unused (:func:`at_target` chooses the entries' δ), the cap
        at ``target`` too. ``None``: each pair at its own total δ.
    plds
        At ``target`` (sound, self-moves, the default law, no coalition, no faults): each
        pair takes the smaller of that figure and its windows' PLDs
        (:mod:`netdp.tracking.complete_plds`) where those are affordable. They read every
        token as a walk from the uniform start: a trace cut into phases must pass
        ``False``.
    """
    check(convention in CONVENTIONS, "convention",
          f"must be one of {', '.join(CONVENTIONS)} (got {convention!r})")
    n = trace.n
    if convention == "sound" and target is not None:
        w = trace_windows(trace, eps0, None, bound, domain, coalition)
        table = at_target(lambda d: _sound_walk_histogram(
            trace, shuffled_at(w, eps0, d, bound, domain), eps0, d, bound, domain, coalition,
            cap, self_moves, law, target), target, most_windows(w))
        if plds and coalition is None and self_moves and law is None and trace.faults is None:
            return _complete_tightened(table, w, eps0, target)
        return table
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
    return cap_to_view(raw, trace, eps0, delta, coalition, self_moves) if cap else raw


def _complete_tightened(table: PairLosses, w: Windows, eps0: float,
                        target: float) -> PairLosses:
    """``table`` with each pair at the smaller of its figure and its observer's window PLDs
    (:func:`~netdp.tracking.complete_plds.observer_plds`): two bounds of one view's loss
    at one δ; the pairs ``base`` stands for take the largest of their nodes'."""
    from netdp.tracking import complete_plds

    n = table.n
    if table.nodes is None:  # the sound tables keep their nodes: never so today
        return table
    seconds = complete_plds.run_seconds(n, w.own, w.reports, w.first, w.last, eps0,
                                        table.observers)
    if seconds > complete_plds.RUN_SECONDS:
        return dataclasses.replace(table, plds_left=seconds)
    base, values = table.base.copy(), table.values.copy()
    at = np.concatenate(([0], np.cumsum(table.counts)))
    try:
        _complete_plds_into(base, values, at, table, w, eps0, target)
    finally:
        complete_plds.clear()
    return dataclasses.replace(table, base=base, values=values)


def _complete_plds_into(base: np.ndarray, values: np.ndarray, at: np.ndarray,
                        table: PairLosses, w: Windows, eps0: float, target: float) -> None:
    """:func:`_complete_tightened`'s loop over the observers (in place)."""
    from netdp.tracking import complete_plds

    n = table.n
    assert table.nodes is not None
    for o, v in enumerate(table.observers.tolist()):
        lo, hi = np.searchsorted(w.own, v, "left"), np.searchsorted(w.own, v, "right")
        eps = complete_plds.observer_plds(n, int(v), w.reports[lo:hi], w.first[lo:hi],
                                          w.last[lo:hi], eps0, target)
        part = slice(int(at[o]), int(at[o + 1]))
        listed = table.nodes[part]
        values[part] = np.minimum(values[part], eps[listed])
        rest = np.ones(n, bool)
        rest[listed] = False
        rest[v] = False
        if rest.any():
            base[o] = min(float(base[o]), float(eps[rest].max()))


def _sound_walk_histogram(trace: Trace, w: Windows, eps0: float, delta: float, bound: str,
                          domain: int, coalition: Sequence[int] | None, cap: bool,
                          self_moves: bool, law: CountLaw | None,
                          target: float | None = None) -> PairLosses:
    """:func:`walk_histogram_losses` under the sound convention (the cap at ``target``
    where given)."""
    n = trace.n
    observers, others = w.observers, w.others
    if law is None:
        law = binomial_law(holder_rate(int(others[0]) if others.size else n - 1, self_moves))
    e_base, e_first, e_last, d_base, d_first, d_last = sound_entries(
        w, eps0, delta, law, lambda r, d: shuffled_epsilon(bound, eps0, r, d, domain))
    base, weight, k, offsets, counts, values, nodes, pair_delta = pairwise_sound(
        w.own, w.first, w.last, e_base, e_first, e_last, d_base, d_first, d_last,
        observers.size, w.n_ids, others, float(delta), True)
    used = kernels.compact(values, nodes, offsets, counts, True)
    raw = PairLosses(
        "kov", n, np.array([-1]) if coalition is not None else observers, base, weight, k,
        values[:used], counts, nodes[:used], float(pair_delta.max(initial=0.0)),
    )
    return cap_to_view(raw, trace, eps0, delta, coalition, self_moves, target) if cap else raw


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
    target: float | None = None,
) -> PairLosses:
    """Pairwise losses of the ring histogram (AISTATS 2022 Alg. 2); under the sound
    convention with a ``target``, every pair at that one δ (:func:`at_target`: each of the
    ``K`` entries at ``target / (2 K)``, ``delta`` unused).

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
    if convention == "sound" and target is not None:
        return at_target(lambda d: ring_histogram_losses(
            n, rounds, eps0, d, bound, domain, dummies, coalition, "sound"), target, rounds)
    if convention == "sound":
        ref = ring_histogram_losses(n, rounds, eps0, delta, bound, domain, dummies, coalition,
                                    "reference")
        return dataclasses.replace(ref, delta=min(rounds * delta, 1.0) + rounds * delta)
    if coalition is not None:
        return _ring_coalition(n, rounds, eps0, delta, bound, domain, dummies,
                               coalition_members(coalition, n))
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
    return float(kov_homogeneous_array(eps_s[0], np.array([rounds]), delta)[0])


def ring_histogram_eps0(target: float, n: int, rounds: int, delta: float,
                        bound: str = "fmt-numeric", domain: int = 2,
                        eps0_max: float = 30.0) -> float:
    """Largest ε0 (to 1e-6) whose ring histogram meets ``target`` network ε, every pair.

    The theory curve (:func:`ring_histogram_theory`) is increasing in ε0; the returned ε0
    is on the safe side (its curve value is <= target).
    """
    return largest_within(lambda eps0: ring_histogram_theory(n, rounds, eps0, delta, bound,
                                                             domain),
                          target, 1e-9, eps0_max, param="epsilon", tol=1e-6)
