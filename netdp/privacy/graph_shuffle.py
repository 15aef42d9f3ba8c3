"""Pairwise losses of report-based walks on any graph: shuffled windows, taboo-chain rates.

The histogram's window tracker (:mod:`netdp.privacy.shuffle_tracker`) with the complete
graph's uniform presence law replaced by the walk's own (spec network-dp.md §3.2, the
AISTATS 2022 paper's Alg. 4 on any graph). Observer ``v`` sees the sum of the ``r``
reports added between its hand-off to ``a`` and its receipt from ``b``: one shuffle of
them, at ``ε_s = shuffled_epsilon(bound, ε0, r, δ)``. ``a`` and ``b`` are attributable
(``c ε_s``, ``c = 2`` when ``a = b`` reported twice); a third node ``u`` was present with
probability at most the taboo chain's rate

    ``r_u = Σ_{k=1}^{L-1} (Q^k)_{au} (Q^{L-k})_{ub} / (Q^L)_{ab}``,   ``L = r - 1``

(:mod:`netdp.privacy.taboo`: the expected number of ``u``'s interior visits, a union
bound), so its entry is the shuffle subsampled at ``min(r_u, 1)``. Subsampling at a
larger rate only raises the entry's loss, so an upper bound on the presence gives an
upper bound on the loss. Windows with an end ``v`` cannot name (the prefix of a token
before ``v`` first holds it, the suffix after it last does, a token it never holds)
take rate 1 for their unknown reports: sound, not amplified by subsampling. A pair's
entries compose by KOV exactly as on the complete graph (``δ̃ = k δ`` over the ``k``
windows of the observer), and the pair is capped at its node's LDP loss.

Limits, as for the sum's graph tracker: a node's presence is what is subsampled (several
interior visits of ``u`` in one window count once, as does an attributable end's
interior visits beyond its ``c`` reports: the reference method's convention), and a
window's rows beyond :data:`netdp.privacy.taboo.MEMORY` take rate 1 (counted in
``unamplified``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numba
import numba as nb
import numpy as np

from netdp.engine.trace import Trace
from netdp.errors import check
from netdp.privacy import _compiled as compiled
from netdp.privacy import _taboo_kernels as kernels
from netdp.privacy._arrays import observer_bar
from netdp.privacy.shuffle_tracker import Windows, trace_windows
from netdp.privacy.taboo import Cycles, cycle_rows, reversible_measure
from netdp.privacy.tracker import PairLosses, _coalition, clip_to_ldp, ldp_losses

PRESENCE = ("taboo", "uniform")
CHUNK_BYTES = 1 << 26  # rates of one chunk of windows (windows x n) held at once


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
    reference tracker's, :func:`~netdp.privacy.shuffle_tracker.walk_histogram_losses`)."""
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
) -> PairLosses:
    """Pairwise losses of a report-based walk (histogram, Alg. 4) on any graph.

    Parameters
    ----------
    trace
        The walk (one or more tokens).
    P
        The walk's transition matrix (sparse CSR, rows sum to 1).
    eps0, delta, bound, domain
        As in :func:`~netdp.privacy.shuffle_tracker.walk_histogram_losses`.
    coalition
        Nodes observing as one (the taboo chain avoids all of them).
    observers
        The observers accounted (default: every node, or the coalition).
    cap
        Cap each pair at its node's LDP loss.
    presence
        ``taboo`` (the walk's rates, sound on any graph) or ``uniform`` (the complete
        graph's law of the reference tracker: for comparison only).

    Returns
    -------
    Every accounted pair's loss (``nodes`` kept), with the number of windows whose rows
    were beyond those kept (``unamplified``).
    """
    check(presence in PRESENCE, "presence", f"must be one of {', '.join(PRESENCE)}")
    from scipy import sparse

    n = trace.n
    P = sparse.csr_array(P)
    w = trace_windows(trace, eps0, delta, bound, domain, coalition)
    members = np.zeros(n, bool)
    if coalition is not None:
        members[_coalition(coalition, n)] = True
        index = np.zeros(1, np.int64)
    else:
        index = np.arange(n) if observers is None else np.asarray(observers, np.int64)
    lo = np.searchsorted(w.own, index, side="left")
    hi = np.searchsorted(w.own, index, side="right")
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
        acc = np.zeros((n, 3))
        unamplified += _observer_terms(w, sel, P, pi, scale, blocked, presence,
                                       int(w.others[index[o]]), acc, blocks)
        eps = np.empty(n)
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
                     k_max * delta * (2 + math.exp(eps0)), unamplified=unamplified)
    return clip_to_ldp(raw, ldp_losses(trace, eps0, delta), coalition) if cap else raw


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
