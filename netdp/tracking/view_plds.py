"""An observer's views composed as privacy loss distributions, every node at once.

View ``e`` of observer ``v`` (noise std ``s_e``) towards node ``u`` is the mixture
``Σ_k w_k N(k / s_e, 1)`` against ``N(0, 1)``, ``w`` the law of ``u``'s count ``K = c + I``
there (:mod:`netdp.tracking.walk_views`); :mod:`netdp.accounting.mixture_rows` builds a
view's PLDs towards all nodes in one pass and composes each node's views in the Fourier
domain. Views with the same ends and length have the same laws: each is built once and
composed with its multiplicity. Within a view, nodes whose counts have the same law (on a
vertex-transitive graph, most of them) share its PMFs (:func:`distinct_rows`): built,
transformed and powered once.

The laws come from one of two sources:

* :func:`exact_laws`: the exact laws of :func:`~netdp.tracking.walk_views.view_laws`;
* :func:`dominating_laws`: where those cost too much, the law whose survival function is
  the sound bound ``S_u(k) >= P(I_u >= k)`` of :mod:`netdp.tracking.law_bound` with its
  Chernoff family (:mod:`netdp.tracking.law_chernoff`; the minimum of its members) (made
  nonincreasing by a running minimum, which keeps it a bound), so that the bound's ``I'``
  is stochastically larger than ``I``. That is sound for the PLD too: the likelihood ratio
  of ``Σ_k w_k N(k / s, 1)`` to ``N(0, 1)`` is increasing in ``y`` whatever ``w`` (shifts
  ``k >= 0``), so the most powerful tests are half-lines ``y > t`` whatever ``w``, and the
  trade-off function ``T(P, Q_w)(α) = Σ_k w_k Φ(z_{1-α} - k / s)`` decreases when ``w``
  moves up in the stochastic order (``Φ(z - k / s)`` decreases in ``k``); its inverse,
  the other direction, too. Composition (the tensor product of trade-off functions) keeps
  that order (Dong, Roth and Su 2019), so every ``ε(δ)`` of the dominating laws is at least
  the true one. Counts beyond :data:`BOUND_COUNTS` go to an infinite count (the tail at
  ``+∞``, more informative still).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from netdp.tracking import cycle_entries as ce
from netdp.tracking.cycle_entries import Views

ROWS_BYTES = 128 * 2**20  # the views' PMFs of one block of nodes, at most
BOUND_COUNTS = 512  # the dominating laws' counts given in full (beyond: an infinite count)
#: The survival bounds' logs are raised to a multiple of it, so that nodes whose bounds
#: differ by rounding alone (a symmetric graph's) share one law, built once
SNAP = 1e-9
#: The finer grid of the law bound's rows (kov and rdp, :func:`netdp.tracking.walk_views.
#: bounded_losses`): their figures are functions of these logs alone, not of PMFs.
ROW_SNAP = 1e-12
#: The pld grid over :func:`step_of`'s (:func:`pld_grid`)
SPLIT_COARSEN = 8
#: A view's rows share PMFs where its distinct laws are at most this share of them (else
#: each row is built alone, in blocks that keep each block's grid fitted to its rows)
SHARED_LAWS = 0.25
#: ``law(e, rows) -> (w, tail, index)``: view ``e``'s interior-count law of the kept nodes
#: at the positions ``rows`` (``(r, w)`` and ``(r,)``), or with ``index`` the distinct laws
#: and each row's place among them.
LawSource = Callable[[int, slice], tuple[np.ndarray, np.ndarray, np.ndarray | None]]


def exact_laws(laws: Sequence[np.ndarray], tails: np.ndarray, keep: np.ndarray) -> LawSource:
    """The source of :func:`~netdp.tracking.walk_views.view_laws`'s laws (by node id)."""
    def law(e: int, rows: slice) -> tuple[np.ndarray, np.ndarray, None]:
        ids = keep[rows]
        return laws[e][ids], tails[e, ids], None
    return law


def snapped_laws(laws: Sequence[np.ndarray], tails: np.ndarray,
                 keep: np.ndarray) -> LawSource:
    """:func:`exact_laws` made stochastically (a little) larger: each survival function
    ``P(I >= k)`` raised to the grid of :func:`snapped` (nonincreasing: a running minimum),
    so that nodes whose laws differ by rounding alone (a symmetric graph's) share one. A
    count stochastically larger bounds the Gaussian view's loss (module docstring)."""
    def law(e: int, rows: slice) -> tuple[np.ndarray, np.ndarray, None]:
        ids = keep[rows]
        w, tail = laws[e][ids], tails[e, ids]
        surv = tail[:, None] + np.cumsum(w[:, :0:-1], axis=1)[:, ::-1]  # P(I >= 1..K-1)
        surv = np.concatenate([surv, tail[:, None]], axis=1)  # .. and P(I >= K)
        with np.errstate(divide="ignore"):
            up = np.exp(np.minimum(snapped(np.log(surv)), 0.0))
        up = np.minimum.accumulate(up, axis=1)
        full = np.concatenate([np.ones((w.shape[0], 1)), up], axis=1)
        return -np.diff(full, axis=1), up[:, -1], None
    return law


def dominating_laws(P: Any, blocked: np.ndarray, start_law: np.ndarray,
                    views: Views) -> LawSource:
    """The source of the laws dominating each free node's count in each view (module
    docstring); :class:`~netdp.tracking.law_bound.Unbounded` where the bound does not
    apply."""
    from netdp.tracking import law_bound

    logB, logrho, logmu, _ = law_bound.survival_logs(P, blocked, start_law, views.kind,
                                                     views.a, views.b, views.length,
                                                     chernoff=True)
    logB, logmu, logrho = snapped(logB), snapped(logmu), np.minimum(snapped(logrho), 0.0)

    def law(e: int, rows: slice) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        size = ce.interior(int(views.kind[e]), int(views.length[e]))
        top = min(size, BOUND_COUNTS)
        k = np.arange(1, top + 2, dtype=np.float64)  # counts 1 .. top + 1
        # each distinct bound once (a symmetric graph's nodes share most)
        held, index = distinct(np.column_stack([logB[:, e, rows].T, logrho[:, rows].T,
                                                logmu[e, rows]]))
        at = np.arange(rows.start, rows.stop)[held]
        with np.errstate(divide="ignore", invalid="ignore"):
            geo = (logB[:, e, at][:, :, None] + (k - 1) * logrho[:, at][:, :, None]).min(axis=0)
            logS = np.minimum(geo, logmu[e, at][:, None] - np.log(k))
        logS = np.minimum.accumulate(np.minimum(np.nan_to_num(logS, nan=0.0), 0.0), axis=1)
        surv = np.exp(logS)  # S(1) .. S(top + 1), nonincreasing
        if top == size:
            surv[:, -1] = 0.0  # no count beyond the interior positions
        full = np.concatenate([np.ones((surv.shape[0], 1)), surv], axis=1)
        return -np.diff(full, axis=1)[:, :top + 1], surv[:, -1], index
    return law


def snapped(logx: np.ndarray, step: float = SNAP) -> np.ndarray:
    """``log x`` raised to a multiple of ``step`` (by ``step`` to ``2 step``)."""
    with np.errstate(invalid="ignore"):
        out = (np.floor(logx / step) + 2.0) * step
    return np.where(np.isfinite(logx), out, logx)


#: ``mechanism(e, w, tail, spare) -> PMFs``: view ``e``'s loss distributions towards the
#: rows whose count laws are ``w`` (``(r, K)``) and ``tail`` (``(r,)``): one per direction,
#: or one for both where the pair is symmetric.
Mechanism = Callable[[int, np.ndarray, np.ndarray, float], tuple[Any, ...]]


def rows_pld(views: Views, law: LawSource, keep: np.ndarray, noise: ce.Noise, h: float,
             dt: float, mechanism: Mechanism | None = None,
             group: np.ndarray | None = None, cell: float | None = None) -> np.ndarray:
    """Each kept node's ``ε(dt)`` of its views' mixture PLDs (module docstring), in blocks of
    nodes whose PMFs fit in :data:`ROWS_BYTES` (a block is halved, keeping what is built,
    when they do not).

    ``mechanism`` builds a view's PMFs from its count laws (default: the Gaussian mixture
    of :func:`~netdp.accounting.mixture_rows.view_rows` at the view's noise); views with
    the same ends, length and ``group`` (default 0) are built once; ``cell`` is its
    t-cells' scale (default ``h``; :func:`pld_grid`)."""
    from netdp.accounting import mixture_rows as mr
    from netdp.accounting import rows_compose as rc

    k = views.size
    if k == 0:
        return np.zeros(keep.size)
    tag = np.zeros(k, np.int64) if group is None else np.asarray(group, np.int64)
    ends = np.stack([views.kind, views.length, views.a, views.b, tag], axis=1)
    _, distinct, times = np.unique(ends, axis=0, return_index=True, return_counts=True)
    if mechanism is None:
        def mechanism(e: int, w: np.ndarray, tail: np.ndarray, spare: float
                      ) -> tuple[Any, ...]:
            return mr.view_rows(w, tail, noise.z * math.sqrt(ce.draws(
                int(views.kind[e]), int(views.length[e]))), h, spare, cell)
    settings = [(int(e), *view_setting(views, int(e), keep, noise)) for e in distinct]
    spare = 1e-3 * dt / k  # each view's mass moved to +∞ or raised by the cuts
    out = np.empty(keep.size)
    r0 = 0
    while r0 < keep.size:
        r1 = keep.size
        parts: list[tuple[mr.ViewRows, ...]] = []
        used = 0
        for e, _, _, cu_all in settings:
            cu = cu_all[r0:r1]
            w_law, tail, index = law(e, slice(r0, r1))
            if index is not None:  # distinct laws given: distinct (law, count) pairs
                _, first, pair = np.unique(index * (int(cu.max(initial=0)) + 1) + cu,
                                           return_index=True, return_inverse=True)
                w_law, tail, cu = w_law[index[first]], tail[index[first]], cu[first]
                index = pair.reshape(-1)
            w = np.zeros((cu.size, int(cu.max(initial=0)) + w_law.shape[1]))
            for c in np.unique(cu):
                sel = cu == c
                w[sel, c:c + w_law.shape[1]] = w_law[sel]
            if index is None:
                held, index = distinct_rows(w, tail)
                if index is not None:
                    w, tail = w[held], tail[held]
            parts.append(tuple(mr.shared_rows(p, index)
                               for p in mechanism(e, w, tail, spare)))
            used += sum(p.probs.nbytes for p in parts[-1])
            while used > ROWS_BYTES and r1 - r0 > 1:  # keep the block's first half
                r1 = r0 + (r1 - r0) // 2
                parts = [tuple(mr.first_rows(p, r1 - r0) for p in pair) for pair in parts]
                used = sum(p.probs.nbytes for pair in parts for p in pair)
        eps = [rc.compose_rows([p[d] for p in parts], h, dt, times.tolist())
               for d in range(len(parts[0]))]
        out[r0:r1] = np.max(eps, axis=0)
        r0 = r1
    return out


def distinct_rows(w: np.ndarray, tail: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The rows of ``(w, tail)`` to build (one of each distinct law) and each row's place
    among them (``None``: every row is its own, where few rows share a law:
    :data:`SHARED_LAWS`)."""
    return distinct(np.column_stack([w, tail]))


def distinct(key: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The rows of the float array ``key`` to keep (one of each distinct row, bit for bit)
    and each row's place among them, or ``(every row, None)`` where more than
    :data:`SHARED_LAWS` of the rows are distinct (or a hash collides)."""
    key = np.ascontiguousarray(key, dtype=np.float64)
    bits = key.view(np.uint64)
    mix = np.random.default_rng(0).integers(1, 2**63, size=bits.shape[1], dtype=np.uint64)
    with np.errstate(over="ignore"):
        digest = (bits * mix).sum(axis=1)  # a hash of each row's bytes (mod 2**64)
    _, held, index = np.unique(digest, return_index=True, return_inverse=True)
    index = index.reshape(-1)
    if held.size > SHARED_LAWS * key.shape[0] or not np.array_equal(key[held][index], key):
        return np.arange(key.shape[0]), None  # few shared, or a collision: each its own
    return held, index


def step_of(views: Views, noise: ce.Noise, exact: bool) -> float:
    """The loss grid of an observer's PLDs (:func:`grid_step` of its views)."""
    regular = views.kind == ce.REGULAR
    return grid_step((views.length[regular], views.length[~regular]), 1, noise.z, exact)


def pld_grid(views: Views, noise: ce.Noise) -> tuple[float, float]:
    """``(h, cell)``: the pld accountant's loss grid for an observer's views and the scale
    of their t-cells (:func:`rows_pld`). The masses are split between the grid losses
    around them (:func:`netdp.accounting.mixture_rows.split_up`), which costs about
    ``h² / 6`` of variance a view where rounding up cost ``h / 2`` of mean, so the grid is
    :data:`SPLIT_COARSEN` times :func:`step_of`'s and the cells keep that step."""
    fine = step_of(views, noise, False)
    return SPLIT_COARSEN * fine, fine


def view_setting(views: Views, e: int, keep: np.ndarray,
                  noise: ce.Noise) -> tuple[float, int, np.ndarray]:
    """View ``e``'s noise std, its interior positions and each kept node's attributable
    count there."""
    kind, length = int(views.kind[e]), int(views.length[e])
    cu = np.zeros(keep.size, np.int64)
    for u in {int(views.a[e]), int(views.b[e])} - {-1}:
        cu[np.searchsorted(keep, u)] = ce.attributable(kind, length, views.key(e, u))
    return noise.z * math.sqrt(ce.draws(kind, length)), ce.interior(kind, length), cu


EXACT_STEP = 1e-4  # the coarsest grids; finer where the losses are small (grid_step)
PLD_STEP = 1e-3
EXACT_PRECISION = 0.005  # the rounding's share of the loss's scale, at most
PLD_PRECISION = 0.05
MIN_STEP = 1e-7


def grid_step(lengths: tuple[np.ndarray, np.ndarray], observers: int, z: float,
              exact: bool) -> float:
    """The PLD grid of a run: fine enough that the pessimistic rounding (about ``k h / 2``
    for ``k`` views) stays within :data:`EXACT_PRECISION` (exact) or :data:`PLD_PRECISION`
    (pld) of the loss's scale, the root of the sum of the views' ``μ² = 1 / (z² draws)``
    of a mean observer; at most :data:`EXACT_STEP` or :data:`PLD_STEP`, at least
    :data:`MIN_STEP`."""
    views = sum(x.size for x in lengths)
    if views == 0 or observers == 0:
        return EXACT_STEP if exact else PLD_STEP
    draws = np.concatenate([lengths[0] - 1, lengths[1]]).astype(float)
    mu2 = float(np.sum(1.0 / (z * z * draws))) / observers
    k = views / observers
    rel = EXACT_PRECISION if exact else PLD_PRECISION
    step = 2.0 * rel * np.sqrt(mu2) / max(k, 1.0)
    return float(np.clip(step, MIN_STEP, EXACT_STEP if exact else PLD_STEP))
