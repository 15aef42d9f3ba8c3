"""Report-based walks on any graph: each observer's windows composed as privacy loss
distributions, from the exact law of each node's count of reports in each window.

Observer ``v`` sees, per window, the multiset of the ``r`` reports added between two of its
holds (and before its first, after its last: the published result). Given the ends it
knows, node ``u`` made ``K = c + I`` of them, ``I`` its visits at the hidden positions, whose
law is that of the sum's views (:func:`~netdp.tracking.walk_views.view_laws`: a bridge of
the chain killed at ``v``, or a first stretch). Revealing ``K`` (and the path) to ``v``
only helps it, and then the window is ``K`` of ``u``'s reports shuffled among ``r - K``
others': bounded by the clone pair of :mod:`netdp.accounting.clone_pld`. The windows are
independent given the view, so their PLDs compose (:func:`~netdp.tracking.view_plds.
rows_pld`, every node of a window at once) to ``ε`` at the target δ.

The stretch after ``v``'s last hold starts at the known ``a`` and ends anywhere: on a
reversible walk (``π_x P_xy = π_y P_yx``, every undirected graph) its reversal is a first
stretch from ``π`` ending at ``a``, whose law the same code gives. Where that does not
hold (a directed walk), where a token never reaches ``v`` (both ends unknown), on a
coalition, or where the exact laws cost more than :data:`LAW_WORK`, :func:`observer_plds`
returns ``None`` and the caller keeps its other bound; so does a run whose PLDs
:func:`run_seconds` estimates beyond :data:`RUN_SECONDS`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from netdp.tracking import cycle_entries as ce
from netdp.tracking import view_plds
from netdp.tracking.cycle_entries import Views

LAW_WORK = 1e10  # estimated flops of one observer's exact laws, at most (else None)
#: The most seconds :func:`run_seconds` may estimate for the windows' PLDs of a run; beyond,
#: the caller keeps its other bound (and says so).
RUN_SECONDS = 20.0
#: Seconds per unit of :func:`run_seconds`' rows (rows x counts x grid levels) and per
#: ``K² r`` of a window's pairs (``K`` its likely counts): fitted to three karate observers
#: at T = 100 n (129, 10 and 33 windows: 7.3, 6.9 and 11.9 s; 2-core VM, load 2-3), and
#: scaled to a middle between them (estimated at 0.7, 1.6 and 0.55 times) and a hypercube
#: of 64 nodes (two observers: 8.3 s, estimated at 1.8 times)
UNIT_SECONDS = 2.6e-8
CLONE_SECONDS = 6e-7
#: Seconds per estimated flop of the exact laws (:func:`~netdp.tracking.walk_views.
#: law_work`): karate's 34 observers, 4.3e8 each, took 2.5 s in all
LAW_SECONDS = 1.7e-10
PAIRS = 200_000  # windows x nodes of one observer, at most (else None)
RARE = 1e-4  # share of the target δ a window's rare counts may add, at most (per count)
PRECISION = 0.25  # the grid's rounding (at most k h over k windows), at most
MAX_STEP = 4e-3
MIN_STEP = 2e-5


def step_of(windows: int) -> float:
    """The loss grid of an observer's PLDs: :data:`PRECISION` over its windows, clipped,
    down to a power of 2 (shared pair PMFs)."""
    from netdp.accounting import clone_pld

    return clone_pld.grid_of(float(np.clip(PRECISION / max(windows, 1), MIN_STEP,
                                           MAX_STEP)))


def run_seconds(P: Any, own: np.ndarray, reports: np.ndarray, first: np.ndarray,
                last: np.ndarray, eps0: float, observers: np.ndarray) -> float:
    """The estimated seconds of the windows' PLDs of the ``observers`` (``own``: each
    window's observer; ``reports``, ``first``, ``last`` as :func:`observer_plds` reads
    them): ``UNIT_SECONDS × Σ (n - 1) K 2 ε0 / h`` over the windows (``h`` each observer's
    grid, ``K`` a node's likely counts in a window of ``r`` reports), ``CLONE_SECONDS × Σ K²
    r`` (their pairs' PMFs) and ``LAW_SECONDS`` per flop of their exact laws."""
    from netdp.tracking import walk_views

    n = P.shape[0]
    total = 0.0
    for v in np.asarray(observers).tolist():
        lo, hi = np.searchsorted(own, v, "left"), np.searchsorted(own, v, "right")
        if hi <= lo:
            continue
        r = np.asarray(reports[lo:hi], np.int64).astype(float)
        mean = r / n  # a node's likely counts: about its mean (uniform law) and 12 sd more
        counts = np.minimum(r, mean + 12.0 * np.sqrt(mean) + 12.0)
        total += UNIT_SECONDS * (n - 1) * float(counts.sum()) * 2.0 * eps0 \
            / step_of(int(hi - lo))
        total += CLONE_SECONDS * float(np.sum(counts ** 2 * r))
        total += LAW_SECONDS * walk_views.law_work(
            _views(r, np.asarray(first[lo:hi]), np.asarray(last[lo:hi])), n, int(P.nnz))
    return total


def _views(reports: np.ndarray, first: np.ndarray, last: np.ndarray) -> Views:
    """The windows as the sum's views: a cycle (both ends known), a first stretch (the
    last reporter known), or the reversal of a last stretch (the first known), whose end
    is then ``b``."""
    cycle = (first >= 0) & (last >= 0)
    suffix = (first >= 0) & (last < 0)
    return Views(np.where(cycle, ce.REGULAR, ce.FIRST).astype(np.int64),
                 np.where(cycle, reports + 1, reports), np.where(cycle, first, -1),
                 np.where(suffix, first, last))


def observer_plds(P: Any, v: int, reports: np.ndarray, first: np.ndarray,
                  last: np.ndarray, eps0: float, target: float,
                  start_law: np.ndarray, stationary: np.ndarray | None
                  ) -> np.ndarray | None:
    """Each node's ``ε(target)`` towards observer ``v`` (``0`` at ``v``), from its windows
    (``reports``, and the ``first`` and ``last`` reporter it knows, ``-1`` where it does
    not); ``None`` where this bound does not apply (module docstring).

    Parameters
    ----------
    P
        The walk's transition matrix (scipy CSR).
    v
        The observer.
    reports, first, last
        Its windows (:func:`~netdp.tracking.windows.walk_windows`).
    eps0
        Each report's LDP level (pure).
    target
        The δ of every figure.
    start_law
        The law of a token's first holder.
    stationary
        A reversing measure of ``P`` (``None``: not reversible).
    """
    from netdp.accounting import clone_pld
    from netdp.tracking import walk_views

    n = P.shape[0]
    reports, first, last = (np.asarray(x, np.int64) for x in (reports, first, last))
    k = reports.size
    if k == 0:
        return np.zeros(n)
    suffix = (first >= 0) & (last < 0)
    if np.any((first < 0) & (last < 0)) or (suffix.any() and stationary is None):
        return None
    if k * (n - 1) > PAIRS:
        return None
    views = _views(reports, first, last)
    kind, length = views.kind, views.length
    if walk_views.law_work(views, n, int(P.nnz)) > LAW_WORK:
        return None
    blocked = np.zeros(n, bool)
    blocked[v] = True
    laws: list[np.ndarray] = [np.zeros((n, 1))] * k
    tails = np.zeros((k, n))
    slack = np.full(k, 1e-6 * target / k)
    for sel, law in ((np.flatnonzero(~suffix), start_law),
                     (np.flatnonzero(suffix), stationary)):
        if sel.size == 0 or law is None:
            continue
        part = Views(kind[sel], length[sel], views.a[sel], views.b[sel])
        got, got_tails = walk_views.view_laws(P, blocked, np.asarray(law, float)
                                              / float(np.sum(law)), part, slack[sel])
        for j, e in enumerate(sel):
            laws[e] = got[j]
        tails[sel] = got_tails
    keep = np.flatnonzero(~blocked)
    h = step_of(k)
    rare = RARE * target / k  # counts this unlikely take the reports alone (cheap)

    def windows(e: int, w: np.ndarray, tail: np.ndarray, spare: float) -> tuple[Any, ...]:
        return (clone_pld.window_rows(w, tail, int(reports[e]), eps0, h, spare, rare),)

    eps = view_plds.rows_pld(views, view_plds.exact_laws(laws, tails, keep), keep,
                             ce.Noise(1.0, eps0, False), h, target, windows,
                             group=suffix.astype(np.int64))
    out = np.zeros(n)
    out[keep] = eps
    return out
