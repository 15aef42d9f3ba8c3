"""Pairwise losses of report-based walks on any graph: shuffled windows, per-node rates.

The histogram's window tracker (:mod:`netdp.tracking.shuffle`) on any graph (spec
network-dp.md §3.2, the AISTATS 2022 paper's Alg. 4 on a graph). Observer ``v`` sees the
sum of the ``r`` reports added between its hand-off to ``a`` and its receipt from ``b``:
one shuffle of them, at ``ε_s = shuffled_epsilon(bound, ε0, r, δ)``. Windows with an end
``v`` cannot name (the prefix of a token before ``v`` first holds it, the suffix after it
last does, a token it never holds) are windows too. A pair composes its windows by KOV
(``δ̃ = k δ`` over the observer's ``k`` windows) and is capped at the LDP loss of the
largest count of its node's reports that the observer's view allows
(:mod:`netdp.tracking.view_cap`, spec Correction 6: not at the realised count's).

Under the ``sound`` convention (the default) a window charges node ``u`` its number of
reports ``K = c + I`` (``c`` known ends, ``I`` its hidden positions), through the hybrid
argument of :func:`~netdp.tracking.shuffle_sound.window_entry`: each hidden position is
``u``'s with probability at most ``p_u`` given the holders of all the others
(:mod:`netdp.tracking.holder_rates`: the walk is Markov, so its two neighbours fix it), and
the entry is ``c ε_s + positions · log(1 + p_u (e^{ε_s} - 1))``. On a well-connected graph
``p_u`` is about ``1 / d`` for degree ``d``; where two nodes have ``u`` as their only
common neighbour outside the observer, ``p_u = 1`` and the window is charged every
hidden position (the pure bound ``K ε0`` is taken where lower).

The ``reference`` convention keeps the AISTATS method: ``a`` and ``b`` attributable, a
third node ``u`` present at most once, with probability at most the taboo chain's rate

    ``r_u = Σ_{k=1}^{L-1} (Q^k)_{au} (Q^{L-k})_{ub} / (Q^L)_{ab}``,   ``L = r - 1``

(:mod:`netdp.tracking.taboo`: the expected number of ``u``'s interior visits, a union
bound), so its entry is the shuffle subsampled at ``min(r_u, 1)``; windows with an end
``v`` cannot name take rate 1, and a window's rows beyond
:data:`netdp.tracking.taboo.MEMORY` take rate 1 (counted in ``unamplified``). Several
visits of ``u`` in one window count once: not an upper bound of the loss.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numba
import numba as nb
import numpy as np

from netdp.accounting import _compiled as compiled
from netdp.accounting._arrays import observer_bar
from netdp.core.errors import check
from netdp.engine.trace import Trace
from netdp.tracking._kernels import taboo as kernels
from netdp.tracking.holder_rates import HolderRates
from netdp.tracking.loss_table import (
    CONVENTIONS,
    PairLosses,
    coalition_members,
)
from netdp.tracking.shuffle import (
    at_target,
    most_windows,
    shuffled_at,
    shuffled_epsilon,
    trace_windows,
)
from netdp.tracking.shuffle_sound import sound_entries
from netdp.tracking.taboo import Cycles, cycle_rows, reversible_measure
from netdp.tracking.view_cap import cap_to_view, chain_stays
from netdp.tracking.windows import Windows

PRESENCE = ("taboo", "uniform")
CHUNK_BYTES = 1 << 26  # rates of one chunk of windows (windows x n) held at once
RATE_GRID = 1.01  # sound rates rounded up to powers of this (nodes share their entries)


@nb.njit(cache=True)
def window_rates(ia, ib, b_nodes, L, F, lf, sf, G, lg, sg, scale, factors, out, blocks):
    """Row ``i`` of ``out``: every node's taboo-chain rate in window ``i`` (interior visits
    of a path of ``L[i]`` steps from its first to its last reporter); 1 where
    ``ia[i] = -2`` (unknown end, or beyond the rows kept), 0 where ``-1`` (no interior)."""
    for i in range(ia.size):
        if ia[i] >= 0:
            kernels.interior_visits(F, lf, sf, ia[i], G, lg, sg, ib[i], b_nodes[i], L[i],
                                    scale, factors[i], out[i], blocks)
        else:
            out[i, :] = 1.0 if ia[i] == -2 else 0.0


@nb.njit(cache=True)
def uniform_rates(reports, others, out):
    """Row ``i``: the complete graph's presence law ``1 - (1 - 1/others)^r`` (the
    reference tracker's, :func:`~netdp.tracking.shuffle.walk_histogram_losses`)."""
    for i in range(reports.size):
        q = -math.expm1(reports[i] * math.log1p(-1.0 / others)) if others > 1 else 1.0
        out[i, :] = q


@nb.njit(parallel=True, cache=True)
def compose_windows(rates, reports, first, last, eps_s, blocked, acc, blocks):
    """Add every node's KOV terms of the windows to ``acc`` (``(n, 3)``): ``c ε_s`` for
    an attributable end, else the shuffle subsampled at ``min(rate, 1)``."""
    n = blocked.size
    size = (n + blocks - 1) // blocks
    for t in nb.prange(blocks):
        f = np.empty(3)
        for i in range(reports.size):
            a, b, eg = first[i], last[i], eps_s[i]
            for u in range(t * size, min(n, (t + 1) * size)):
                if blocked[u]:
                    continue
                if u == a:
                    loss = 2.0 * eg if (u == b and reports[i] >= 2) else eg
                elif u == b:
                    loss = eg
                else:
                    loss = kernels._subsampled_kov(min(rates[i, u], 1.0), eg)
                    if loss == 0.0:
                        continue
                compiled.kov_terms(loss, f)
                acc[u, 0] += f[0]
                acc[u, 1] += f[1]
                acc[u, 2] += f[2]


@nb.njit(cache=True)
def finish(acc, k, delta, blocked, out):
    """Each node's KOV ε from its summed terms over the observer's ``k`` windows."""
    for u in range(blocked.size):
        out[u] = 0.0 if blocked[u] else compiled.kov_epsilon(acc[u], k, delta)


def graph_histogram_losses(
    trace: Trace,
    P,
    eps0: float,
    delta: float,
    bound: str = "fmt-numeric",
    domain: int = 2,
    coalition: Sequence[int] | None = None,
    observers: np.ndarray | None = None,
    cap: bool = True,
    presence: str = "taboo",
    convention: str = "sound",
    target: float | None = None,
    plds: bool = True,
) -> PairLosses:
    """Pairwise losses of a report-based walk (histogram, Alg. 4) on any graph.

    Parameters
    ----------
    trace
        The walk (one or more tokens).
    P
        The walk's transition matrix (sparse CSR, rows sum to 1).
    eps0, delta, bound, domain
        As in :func:`~netdp.tracking.shuffle.walk_histogram_losses`.
    coalition
        Nodes observing as one (the taboo chain avoids all of them).
    observers
        The observers accounted (default: every node, or the coalition).
    cap
        Cap each pair at the LDP loss of the largest count of its node's reports that the
        observer's view allows (:func:`~netdp.tracking.view_cap.cap_to_view`).
    presence
        The reference convention's presence rates: ``taboo`` (the walk's) or ``uniform``
        (the complete graph's law of the reference tracker: for comparison only).
    convention
        ``sound`` (default): each window charges node ``u`` its number of reports, every
        position at the rate of :func:`~netdp.tracking.holder_rates.holder_rates` given
        the others (:func:`_sound_observer`); ``delta`` is then the largest total δ of a
        pair. ``reference``: presence counted once at the taboo-chain rate (the AISTATS
        2022 method on a graph; not an upper bound of the loss).
    target
        The sound convention at one δ (spec Correction 7): every pair's figure and the
        cap at ``target``, ``delta`` unused
        (:func:`~netdp.tracking.shuffle.at_target`). ``None``: each pair at its own δ.
    plds
        At ``target`` (sound, no coalition, no faults): each pair takes the smaller of that
        figure and its windows' clone PLDs composed (:mod:`netdp.tracking.report_plds`: the
        exact law of its count of reports in each window), where those apply. They read
        every token as a walk of ``P`` from the uniform start: a trace cut into phases, or
        otherwise not so, must pass ``False``.

    Returns
    -------
    Every accounted pair's loss (``nodes`` kept), with the number of windows whose rows
    were beyond those kept (``unamplified``).
    """
    check(presence in PRESENCE, "presence", f"must be one of {', '.join(PRESENCE)}")
    check(convention in CONVENTIONS, "convention",
          f"must be one of {', '.join(CONVENTIONS)} (got {convention!r})")
    from scipy import sparse

    n = trace.n
    P = sparse.csr_array(P)
    members = np.zeros(n, bool)
    if coalition is not None:
        members[coalition_members(coalition, n)] = True
        index = np.zeros(1, np.int64)
    else:
        index = np.arange(n) if observers is None else np.asarray(observers, np.int64)
    if convention == "sound" and target is not None:
        w = trace_windows(trace, eps0, None, bound, domain, coalition)
        table = at_target(lambda d: _graph_histogram(
            trace, P, shuffled_at(w, eps0, d, bound, domain), eps0, d, bound, domain,
            coalition, members, index, cap, presence, convention, target), target,
            most_windows(w, index))
        if coalition is not None or not plds or trace.faults is not None:
            return table
        return _tightened(table, w, P, eps0, target)
    w = trace_windows(trace, eps0, delta, bound, domain, coalition)
    return _graph_histogram(trace, P, w, eps0, delta, bound, domain, coalition, members,
                            index, cap, presence, convention)


def _tightened(table: PairLosses, w: Windows, P: Any, eps0: float,
               target: float) -> PairLosses:
    """``table`` with each pair at the smaller of its figure and the observer's window PLDs
    (:func:`~netdp.tracking.report_plds.observer_plds`, where they apply): two bounds of
    the same view's loss at the same δ."""
    from netdp.tracking import report_plds

    n = P.shape[0]
    seconds = report_plds.run_seconds(P, w.own, w.reports, w.first, w.last, eps0,
                                      table.observers)
    if seconds > report_plds.RUN_SECONDS:
        return dataclasses.replace(table, plds_left=seconds)
    start = np.full(n, 1.0 / n)
    stationary = reversible_measure(P)
    values = table.values.copy()
    at = np.concatenate(([0], np.cumsum(table.counts)))
    for o, v in enumerate(table.observers.tolist()):
        lo, hi = np.searchsorted(w.own, v, side="left"), np.searchsorted(w.own, v, "right")
        eps = report_plds.observer_plds(P, int(v), w.reports[lo:hi], w.first[lo:hi],
                                        w.last[lo:hi], eps0, target, start, stationary)
        if eps is not None and table.nodes is not None:
            part = slice(int(at[o]), int(at[o + 1]))
            values[part] = np.minimum(values[part], eps[table.nodes[part]])
    return dataclasses.replace(table, values=values)


def _graph_histogram(trace: Trace, P: Any, w: Windows, eps0: float, delta: float,
                     bound: str, domain: int, coalition: Sequence[int] | None,
                     members: np.ndarray, index: np.ndarray, cap: bool, presence: str,
                     convention: str, target: float | None = None) -> PairLosses:
    """:func:`graph_histogram_losses` with the windows' shuffled ε at ``delta``."""
    n = trace.n
    lo = np.searchsorted(w.own, index, side="left")
    hi = np.searchsorted(w.own, index, side="right")
    sound = convention == "sound"
    if sound:
        holder = HolderRates.of(P)
        pair_delta = 0.0

        memo: dict[tuple[int, float], float] = {}  # the observers share their bins

        def eps_at(r: np.ndarray, d: float) -> np.ndarray:
            r = np.asarray(r, np.int64)
            need = np.unique([x for x in r.tolist() if (x, d) not in memo])
            if need.size:
                for x, e in zip(need.tolist(), shuffled_epsilon(bound, eps0, need, d, domain),
                                strict=True):
                    memo[(x, d)] = float(e)
            return np.array([memo[(x, d)] for x in r.tolist()])
    else:
        pi = reversible_measure(P)
        scale = np.ones(n) if pi is None else 1.0 / pi
        blocks = numba.get_num_threads()
    losses, nodes, counts, entries = [], [], [], []
    unamplified = 0
    for o in observer_bar(range(index.size), "graph-report tracker"):
        blocked = members.copy()
        if coalition is None:
            blocked[index[o]] = True
        sel = slice(int(lo[o]), int(hi[o]))
        eps = np.empty(n)
        if sound:
            pair_delta = max(pair_delta, _sound_observer(
                w, sel, holder.rates(np.flatnonzero(blocked)), eps0, float(delta), eps_at,
                blocked, eps))
        else:
            acc = np.zeros((n, 3))
            unamplified += _observer_terms(w, sel, P, pi, scale, blocked, presence,
                                           int(w.others[index[o]]), acc, blocks)
            finish(acc, int(hi[o] - lo[o]), float(delta), blocked, eps)
        keep = np.flatnonzero(~blocked)
        losses.append(eps[keep])
        nodes.append(keep)
        counts.append(keep.size)
        entries.append(int(hi[o] - lo[o]))
    k = np.array(entries, dtype=np.int64)
    k_max = int(k.max()) if k.size else 0
    raw = PairLosses("kov", n, np.array([-1]) if coalition is not None else index,
                     np.zeros(k.size), np.zeros(k.size, np.int64), k, np.concatenate(losses),
                     np.array(counts, dtype=np.int64), np.concatenate(nodes),
                     pair_delta if sound else k_max * delta * (2 + math.exp(eps0)),
                     unamplified=unamplified)
    if not cap:
        return raw
    return cap_to_view(raw, trace, eps0, delta, coalition, chain_stays(P), target)


def _observer_terms(w: Windows, sel: slice, P, pi, scale, blocked, presence: str,
                    others: int, acc: np.ndarray, blocks: int) -> int:
    """Sum one observer's window terms into ``acc``, a chunk of windows at a time; how
    many windows outlasted the rows kept."""
    reports, first, last, eps_s = (x[sel] for x in (w.reports, w.first, w.last, w.eps_s))
    both = (first >= 0) & (last >= 0)
    m = np.where(both, reports + 1, 1)
    cut = 0
    if presence == "taboo":
        rows = cycle_rows(P, pi, blocked, Cycles(m, np.where(both, first, -1),
                                                 np.where(both, last, -1)))
        ia, ib, cut = rows.ia.copy(), rows.ib, rows.cut
        unknown = reports > (first >= 0).astype(np.int64) + (last >= 0)
        ia[~both] = np.where(unknown[~both], -2, -1)
    n = blocked.size
    chunk = max(1, CHUNK_BYTES // (8 * n))
    for s in range(0, reports.size, chunk):
        part = slice(s, s + chunk)
        rates = np.empty((reports[part].size, n))
        if presence == "taboo":
            window_rates(ia[part], ib[part], last[part], m[part] - 2, *rows.arrays, scale,
                         rows.factors[part], rates, blocks)
        else:
            uniform_rates(reports[part], others, rates)
        compose_windows(rates, reports[part], first[part], last[part], eps_s[part],
                        blocked, acc, blocks)
    return cut


def _sound_observer(w: Windows, sel: slice, rates: tuple[np.ndarray, np.ndarray],
                    eps0: float, delta: float, eps_at, blocked: np.ndarray,
                    eps: np.ndarray) -> float:
    """One observer's sound losses into ``eps``; the largest total δ of its pairs.

    Each window's entry towards node ``u`` is
    :func:`~netdp.tracking.shuffle_sound.window_entry`'s for ``K = c + Binomial(positions,
    p_u)``: ``p_u`` bounds the chance that one hidden position is ``u``'s given the holders
    of all the others (:func:`~netdp.tracking.holder_rates.holder_rates`: ``interior`` in a
    cycle, whose hidden positions all lie between two others; ``edge`` in a window with an
    unknown end), which is the hybrid argument's premise. Rates are rounded up to powers
    of :data:`RATE_GRID` (an entry grows with its rate), and nodes with the same rates
    share their entries.
    """
    interior, edge = rates
    grid = math.log(RATE_GRID)
    q_int, q_edge = (_round_up(x, grid) for x in (interior, edge))
    values = np.unique(np.concatenate([q_int, q_edge]))
    part = Windows(w.own[sel], w.reports[sel], w.first[sel], w.last[sel], w.eps_s[sel],
                   w.n_ids, w.observers, w.others)
    e_base, e_first, e_last, d_base, d_first, d_last = sound_entries(
        part, eps0, delta, None, eps_at, rates=values)
    cycle = (part.first >= 0) & (part.last >= 0)
    return _rated_pairs(part.first, part.last, cycle, e_base, e_first, e_last, d_base,
                        d_first, d_last, np.searchsorted(values, q_int),
                        np.searchsorted(values, q_edge), blocked, delta, eps)


def _round_up(rates: np.ndarray, grid: float) -> np.ndarray:
    """Each rate up to the next power of ``e^grid`` (never below it, at most 1; 0 stays)."""
    with np.errstate(divide="ignore"):
        up = np.exp(np.ceil(np.log(rates) / grid) * grid)
    return np.where(rates > 0, np.minimum(np.maximum(up, rates), 1.0), 0.0)


@nb.njit(cache=True)
def _rated_pairs(first, last, cycle, e_base, e_first, e_last, d_base, d_first, d_last,
                 j_int, j_edge, blocked, delta, eps):
    """KOV over one observer's windows for every node, each at its rates' entries
    (``e_*[j, i]``: rate ``j``, window ``i``; node ``u`` takes ``j_int[u]`` in a cycle,
    ``j_edge[u]`` elsewhere); the largest total δ of a pair (entries' δ and
    ``δ̃ = min(k δ, 1)``)."""
    n_rates, k = e_base.shape
    n = blocked.size
    base_c = np.zeros((n_rates, 3))
    base_e = np.zeros((n_rates, 3))
    dc = np.zeros(n_rates)
    de = np.zeros(n_rates)
    f0 = np.empty(3)
    fc = np.empty(3)
    for j in range(n_rates):
        for i in range(k):
            compiled.kov_terms(e_base[j, i], f0)
            if cycle[i]:
                base_c[j] += f0
                dc[j] += d_base[j, i]
            else:
                base_e[j] += f0
                de[j] += d_base[j, i]
    acc = np.zeros((n, 3))
    acc_d = np.zeros(n)
    for i in range(k):
        a, b = first[i], last[i]
        for r in range(2):
            u = a if r == 0 else b
            if u < 0 or u >= n or (r == 1 and u == a) or blocked[u]:
                continue
            j = j_int[u] if cycle[i] else j_edge[u]
            compiled.kov_terms(e_first[j, i] if r == 0 else e_last[j, i], fc)
            compiled.kov_terms(e_base[j, i], f0)
            acc[u] += fc - f0
            acc_d[u] += (d_first[j, i] if r == 0 else d_last[j, i]) - d_base[j, i]
    worst = 0.0
    total = np.empty(3)
    for u in range(n):
        if blocked[u]:
            eps[u] = 0.0
            continue
        total[:] = base_c[j_int[u]] + base_e[j_edge[u]] + acc[u]
        eps[u] = compiled.kov_epsilon(total, k, delta)
        worst = max(worst, dc[j_int[u]] + de[j_edge[u]] + acc_d[u])
    return worst + min(k * delta, 1.0) if k > 0 else 0.0
