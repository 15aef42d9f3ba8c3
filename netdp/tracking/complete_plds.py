"""Report-based walks on the complete graph with self-moves: each observer's windows
composed as privacy loss distributions, every node at once.

As :mod:`netdp.tracking.report_plds` on any graph (the clone pair of
:mod:`netdp.accounting.clone_pld`, node ``u``'s count ``K`` of a window's ``r`` reports
revealed), with the complete graph's law: given what observer ``v`` knows, the hidden
holders of a window are iid uniform over the ``N = n - 1`` other nodes (spec Correction 3),
so ``K = c + Bin(H, 1/N)``, ``H`` the hidden positions and ``c`` the ends ``u`` is known to
hold. A window then has three PMFs (``c = 0, 1, 2``), the same for every node.

Node ``u``'s windows compose to ``⊗_{e} PMF_e(c_e(u))``. It is bounded by the composition
of every window's ``c = 0`` PMF *and* the PMFs of the windows ``u`` ends (``c > 0``): the
true view is a projection of that larger one (the extra ``c = 0`` mechanisms' outputs
forgotten), so its loss is at most the larger one's. The ``c = 0`` part is the same for
every node: its spectrum is built once per observer, and each node multiplies in its few
end windows' spectra (:func:`compose_shared`, the Fourier composition of
:func:`~netdp.accounting.rows_compose.compose_rows` with shared factors). Nodes whose end
windows have the same PMFs (most often none, beyond a few hundred nodes) share one row;
windows with the same reports and hidden positions share their PMFs and spectra across
observers. :func:`run_seconds` estimates the cost before any of it: the caller
(:func:`netdp.tracking.shuffle.walk_histogram_losses`) leaves the PLDs out beyond
:data:`~netdp.tracking.report_plds.RUN_SECONDS` and says so.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from netdp.tracking.report_plds import (
    MAX_STEP,
    MIN_STEP,
    PRECISION,
    RARE,
    RUN_SECONDS,
    step_of,
)

#: :func:`run_seconds`' costs, fitted on n = 30 .. 1000, T / n = 30 .. 300, ε0 = 0.5 .. 2
#: (within 1.5x on an idle 2-core AMD EPYC)
KEY_SECONDS = 5e-3  # a window's PMFs: 100 reports, h = 2^-9 (x (1 + √(r/100)) / 2 (512 h)^-3/4)
POINT_SECONDS = 2.8e-8  # an FFT point of one row's composition
WINDOW_SECONDS = 4.2e-9  # an FFT point of one window's spectrum
NODE_SECONDS = 5e-6  # a node's share of an observer's bookkeeping
SPECTRA = 1024  # windows' spectra kept across observers (about 200 MB at 2^14.6 points)


def hidden_positions(reports: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Each window's positions whose holder the observer does not know."""
    known = (first >= 0).astype(np.int64) + (last >= 0)
    one = (reports == 1) & (first >= 0) & (last >= 0)  # a = b, one position
    return np.maximum(reports - known + one, 0)


def ends_count(first: np.ndarray, last: np.ndarray, reports: np.ndarray,
               u: int) -> np.ndarray:
    """``c_e(u)``: the positions of each window the observer knows ``u`` held."""
    c = (first == u).astype(np.int64) + (last == u)
    return np.where((reports == 1) & (first == u) & (last == u), 1, c)


def observer_plds(n: int, v: int, reports: np.ndarray, first: np.ndarray,
                  last: np.ndarray, eps0: float, target: float) -> np.ndarray:
    """Each node's ``ε(target)`` towards observer ``v`` on the complete graph with
    self-moves (``0`` at ``v``), from its windows (module docstring)."""
    from netdp.accounting import clone_pld

    reports, first, last = (np.asarray(x, np.int64) for x in (reports, first, last))
    k = reports.size
    out = np.zeros(n)
    if k == 0:  # no window: no report of anyone else reaches v
        return out
    h = step_of(k)
    spare = clone_pld.floor_of(1e-3 * target / k)
    rare = clone_pld.floor_of(RARE * target / k)
    hidden = hidden_positions(reports, first, last)
    keys = [(r, size, n, float(eps0), h, spare, rare)
            for r, size in zip(reports.tolist(), hidden.tolist(), strict=True)]
    # each node: every window at c = 0, and its end windows at their own c (only the
    # nodes that end a window are visited: the others all take the first row)
    extras: dict[int, list[tuple[int, int]]] = {}
    for e in np.flatnonzero((first >= 0) | (last >= 0)).tolist():
        for u in {int(first[e]), int(last[e])} - {-1, v}:
            c = int(ends_count(first[e:e + 1], last[e:e + 1], reports[e:e + 1], u)[0])
            if c:
                extras.setdefault(u, []).append((e, c))
    # nodes whose end windows have the same PMFs share one row
    rows: dict[tuple[Any, ...], list[int]] = {} if len(extras) == n - 1 else {(): []}
    for u, more in extras.items():
        rows.setdefault(tuple(sorted((keys[e], c) for e, c in more)), []).append(u)
    signatures = list(rows)
    eps = compose_shared(keys, [extras[rows[sig][0]] if sig else [] for sig in signatures],
                         h, target)
    if () in rows:  # every node without an end window
        out[:] = eps[signatures.index(())]
    for sig, value in zip(signatures, eps.tolist(), strict=True):
        out[rows[sig]] = value
    out[v] = 0.0
    return out


class Window(NamedTuple):
    """A window's PMFs for ``c = 0, 1, 2`` known positions of the node (rows of a
    :class:`~netdp.accounting.mixture_rows.ViewRows`) and their log-MGF bounds."""

    rows: Any
    lmgf: np.ndarray


@functools.lru_cache(maxsize=4096)
def window_pmfs(reports: int, hidden: int, n: int, eps0: float, h: float, spare: float,
                rare: float) -> Window:
    """A window's PMFs, ``K = c + Bin(hidden, 1/(n-1))``: the same for every observer
    with such a window (built once a run)."""
    from scipy import stats

    from netdp.accounting import clone_pld
    from netdp.accounting import rows_compose as rc

    law = stats.binom.pmf(np.arange(hidden + 1), hidden, 1.0 / (n - 1))
    w = np.zeros((3, hidden + 3))
    for c in range(3):
        w[c, c:c + hidden + 1] = law
    rows = clone_pld.window_rows(w, np.zeros(3), reports, eps0, h, spare, rare)
    return Window(rows, rc.log_mgf(rows, h))


def compose_shared(keys: list[tuple[Any, ...]], extras: list[list[tuple[int, int]]],
                   h: float, delta: float) -> np.ndarray:
    """``ε(δ)`` of ``⊗_e W_e row 0 ⊗ ⊗_{(e, c) in extras[i]} W_e row c`` for each ``i``
    (``W_e = window_pmfs(*keys[e])``): :func:`~netdp.accounting.rows_compose.compose_rows`
    with its Chernoff windows and its bound of the inverse (``chernoff_windows``,
    ``window_epsilon``), the shared factors' spectrum built once per FFT length (and each
    window's spectrum once per run)."""
    from scipy import fft as sfft

    from netdp.accounting import rows_compose as rc

    rows = len(extras)
    wins = [window_pmfs(*key) for key in keys]
    top_of = [w.rows.lower + w.rows.probs.shape[1] - 1 for w in wins]
    lmgf = np.tile(np.sum([w.lmgf[0] for w in wins], axis=0), (rows, 1))
    lo = np.full(rows, sum(int(w.rows.lower[0]) for w in wins), np.int64)
    hi = np.full(rows, sum(int(t[0]) for t in top_of), np.int64)
    inf = np.full(rows, float(sum(float(w.rows.inf[0]) for w in wins)))
    for i, more in enumerate(extras):
        for e, c in more:
            lmgf[i] += wins[e].lmgf[c]
            lo[i] += int(wins[e].rows.lower[c])
            hi[i] += int(top_of[e][c])
            inf[i] += float(wins[e].rows.inf[c])
    a, sizes = rc.chernoff_windows(lmgf, lo, hi, h, delta)
    out = np.empty(rows)
    factors = len(wins) + max((len(m) for m in extras), default=0)
    for size in np.unique(sizes).tolist():
        sel = np.flatnonzero(sizes == size)
        shared = np.ones(size // 2 + 1, complex)
        for key in keys:
            with np.errstate(under="ignore"):
                shared = shared * _spectrum(key, 0, size)
        phi = np.empty((sel.size, size // 2 + 1), complex)
        for j, i in enumerate(sel.tolist()):
            row = shared
            for e, c in extras[i]:
                with np.errstate(under="ignore"):
                    row = row * _spectrum(keys[e], c, size)
            phi[j] = row
        dens = sfft.irfft(phi, n=size, axis=1)
        # the lowest loss lo[i] to the window's a[i]: a circular shift of each row
        for j, shift in enumerate(np.mod(lo[sel] - a[sel], size).tolist()):
            dens[j] = np.roll(dens[j], shift)
        out[sel] = rc.window_epsilon(dens, a[sel], hi[sel], lmgf[sel], inf[sel], size, h,
                                     delta, factors)
    return out


@functools.lru_cache(maxsize=SPECTRA)
def _spectrum(key: tuple[Any, ...], c: int, size: int) -> np.ndarray:
    """The real FFT of row ``c`` of the window ``window_pmfs(*key)`` on ``size`` points
    (folded modulo the window where wider): shared by every observer with such a window
    (:func:`clear` drops them after a run)."""
    from scipy import fft as sfft

    row = window_pmfs(*key).rows.probs[c]
    live = np.flatnonzero(row)
    row = row[:int(live[-1]) + 1] if live.size else row[:1]
    if row.size > size:  # fold modulo the window
        pad = np.zeros(-(-row.size // size) * size)
        pad[:row.size] = row
        row = pad.reshape(-1, size).sum(axis=0)
    return sfft.rfft(row, n=size)


def clear() -> None:
    """Drop the windows' PMFs and spectra kept for a run (memory)."""
    _spectrum.cache_clear()
    window_pmfs.cache_clear()


def fft_points(n: int, windows: np.ndarray, eps0: float) -> np.ndarray:
    """The estimated FFT length of an observer's composition of ``windows`` windows: the
    span of its composed loss, about ``e^4.18 k^0.346 n^-0.394 ε0^1.22`` (a fit to
    n = 30 .. 1000, k = 30 .. 300, ε0 = 0.5 .. 2, within 8%), over the grid step."""
    k = np.maximum(np.asarray(windows, dtype=np.float64), 1.0)
    return np.exp(4.18) * k ** 0.346 * n ** -0.394 * eps0 ** 1.22 / steps_of(k)


def steps_of(windows: np.ndarray) -> np.ndarray:
    """:func:`~netdp.tracking.report_plds.step_of` of each count of windows."""
    k = np.maximum(np.asarray(windows, dtype=np.float64), 1.0)
    return 2.0 ** np.floor(np.log2(np.clip(PRECISION / k, MIN_STEP, MAX_STEP)))


def run_seconds(n: int, own: np.ndarray, reports: np.ndarray, first: np.ndarray,
                last: np.ndarray, eps0: float, observers: np.ndarray) -> float:
    """The estimated seconds of every observer's windows' PLDs (``own``: each window's
    observer): per observer, :data:`POINT_SECONDS` per row (a node with end windows, and
    one for all the others) and FFT point (:func:`fft_points`), :data:`WINDOW_SECONDS`
    per window and point, :data:`NODE_SECONDS` per node; and :data:`KEY_SECONDS` per
    distinct window (its PMFs, built once a run, dearer for longer windows), counted only
    when the rest is within :data:`~netdp.tracking.report_plds.RUN_SECONDS` (it sorts
    every window)."""
    own, observers = np.asarray(own), np.asarray(observers)
    counts = np.bincount(own, minlength=int(max(observers.max(initial=0), own.max(
        initial=0))) + 1)
    k = counts[observers]
    k = k[k > 0]
    rows = np.minimum(n - 1, 1 + 2 * k)  # nodes without end windows share one row
    total = float(np.sum((POINT_SECONDS * rows + WINDOW_SECONDS * k)
                         * fft_points(n, k, eps0) + NODE_SECONDS * n))
    if total > RUN_SECONDS:
        return total
    at = np.isin(own, observers)
    h = steps_of(counts[own[at]])
    hidden = hidden_positions(np.asarray(reports)[at], np.asarray(first)[at],
                              np.asarray(last)[at])
    keys = np.unique(np.column_stack([np.asarray(reports)[at], hidden, h]), axis=0)
    cost = (1.0 + np.sqrt(keys[:, 0] / 100.0)) / 2.0 * (keys[:, 2] * 512.0) ** -0.75
    return total + KEY_SECONDS * float(np.sum(cost))
