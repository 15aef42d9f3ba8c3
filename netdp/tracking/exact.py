"""The exact privacy loss of a walk view (``--accountant exact``), and the sound ``pld``.

Given what observer ``v`` sees, the hidden stretches of different cycles are independent
(the walk is Markov at ``v``'s visits), so the likelihood ratio of ``v``'s view is a
product over its views (cycles, and the stretch before its first visit of each token),
and ε(δ) of the whole view is the exact composition of one mechanism per view (spec
network-dp.md, Corrections 5). The mechanism of a view towards ``u`` is the pair

    ``N(0, s²)``  against  ``Σ_k P(K = k) N(k, s²)``,   ``s = z √(draws)``,

with ``K = c + I`` the contributions of ``u`` (:mod:`netdp.tracking.cycle_entries`). Each
is discretised as a privacy loss distribution (:mod:`netdp.accounting.mixture_pld`, rounding
every loss up: the figure is an upper bound, above the exact ε by at most about the
number of views times the grid step) and composed.

Both accountants compose each pair's own views: the observer's views, with the views
that attribute ``u`` (``u`` is one of their ends) *replacing* their ``c = 0`` copies. They
share one machinery (:mod:`netdp.accounting.pld_fourier`): each distinct mechanism is
discretised once per run, rounding every loss up, and its log transform kept; an
observer's base is the sum of its views' log transforms with their multiplicities; a pair
is the base with one log transform subtracted and another added per attributable view;
pairs with the same replacements share one result; and ε(δ) is solved on the transforms
(Parseval), with the mass outside the composition's window bounded by Chernoff and put
at ``+∞``. With iid holders (the binomial law) the two keys of a view where ``u`` is not
attributable, and the keys ``a`` and ``b``, are one mechanism (the same law). They
differ in two places:

* ``exact``: every view is its own mechanism (its length, its law), on the grid of
  :func:`~netdp.tracking.view_plds.grid_step` that keeps the rounding within half a
  percent of the loss's scale. The figure is the pessimistic discretisation's ε(δ) up to
  the windows' Chernoff tails (at most ``2 TAIL_SHARE δ``) and the FFT's rounding, both
  added at ``+∞`` (the same figures as composing the PMFs directly, to about 1e-7
  relative: ``tests/tracking/test_exact.py``).
* ``pld``: a grid ten times coarser, and view lengths above :data:`PLD_EXACT_M` share a
  mechanism per bin of ratio :data:`PLD_BIN_RATIO` (fixed edges, :func:`length_bin`;
  iid holders only) that has the noise of the bin's shortest length and the count law of
  its longest: fewer draws and a stochastically larger count each dominate (a mixture
  with a monotone likelihood ratio: both hockey-stick curves grow), so the bin's
  mechanism bounds each of its views.

Cost: one PLD per distinct mechanism, then per observer a window of the transforms of its
``C`` views and a bisection of inner products on its few live frequencies, for all its
pairs at once. :data:`EXACT_LIMIT` bounds the work of ``exact``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from netdp.accounting import mixture_pld as mp
from netdp.accounting import pld_fourier as pf
from netdp.accounting import registry
from netdp.core.errors import check
from netdp.tracking import cycle_entries as ce
from netdp.tracking import view_plds
from netdp.tracking._kernels.walk import group_by_holder

EXACT_LIMIT = 2_000_000  # views x observers accounted by the exact accountant


def _attributable(views: ce.Views) -> dict[int, list[tuple[int, int]]]:
    """``u -> [(view, key), ...]`` for every node some view attributes."""
    out: dict[int, list[tuple[int, int]]] = {}
    for e in range(views.size):
        for u in {int(views.a[e]), int(views.b[e])} - {-1}:
            out.setdefault(u, []).append((e, views.key(e, u)))
    return out


def view_pld(kind: int, length: int, key: int, law: ce.CountLaw, noise: ce.Noise,
             step: float, pessimistic: bool = True, law_length: int | None = None) -> Any:
    """The discretised PLD of one view towards a node with this attributable key (the
    noise of a view of ``length``, the count law of one of ``law_length``, default
    the same)."""
    at = length if law_length is None else law_length
    logp, tail = law(kind, at, key)
    c = ce.attributable(kind, at, key)
    w = np.concatenate([np.zeros(c), np.exp(logp)])
    total = float(w.sum())
    if total > 1.0:
        w /= total
    s = noise.z * np.sqrt(ce.draws(kind, length))
    # the laws' tail: what the listed counts leave (their cut bound is an upper bound)
    return mp.mixture_pld(w, float(s), h=step, tail=max(1.0 - float(w.sum()), 0.0),
                          pessimistic=pessimistic)


PLD_EXACT_M = 64  # pld: view lengths up to it have their own mechanism, then bins of
PLD_BIN_RATIO = 2 ** (1 / 64)  # this ratio (iid holders only: module docstring)


def _bin_of(m: int) -> int:
    if m <= PLD_EXACT_M:
        return m
    return PLD_EXACT_M + math.ceil(math.log(m / PLD_EXACT_M) / math.log(PLD_BIN_RATIO) - 1e-9)


@functools.lru_cache(maxsize=1 << 16)
def length_bin(m: int) -> tuple[int, int]:
    """The shortest and the longest length of ``m``'s bin (fixed edges: a bin's
    mechanism does not depend on which lengths a run holds)."""
    if m <= PLD_EXACT_M:
        return m, m
    b = _bin_of(m)
    lo = max(int(PLD_EXACT_M * PLD_BIN_RATIO ** (b - PLD_EXACT_M - 1)) - 1, PLD_EXACT_M + 1)
    while _bin_of(lo) < b:
        lo += 1
    hi = int(PLD_EXACT_M * PLD_BIN_RATIO ** (b - PLD_EXACT_M)) + 2
    while _bin_of(hi) > b:
        hi -= 1
    return lo, hi


def pair_delta(views: ce.Views, delta: float, target: float | None = None) -> float:
    """The δ at which an observer's pairs are reported (the one place that says it): the
    one target δ (spec Correction 7), else ``min(2 k δ, 1)`` for its ``k`` views."""
    return min(2.0 * views.size * delta, 1.0) if target is None else target


class _Banks:
    """The mechanisms of a run: each distinct (kind, length, key) built once
    (:func:`view_pld`) and kept in both directions' :class:`~netdp.accounting.
    pld_fourier.Bank`. With iid holders (the binomial law) the two keys of a view where
    ``u`` is not attributable are one mechanism, and with ``binned`` (pld) the lengths of
    a bin (:func:`length_bin`) are one too."""

    def __init__(self, law: ce.CountLaw, noise: ce.Noise, step: float,
                 binned: bool) -> None:
        self.law, self.noise, self.step = law, noise, step
        self.iid = getattr(law, "p", None) is not None
        self.binned = binned and self.iid
        self.ids: dict[tuple[int, int, int], int] = {}
        self.qp, self.pq = pf.Bank(step), pf.Bank(step)

    def get(self, kind: int, length: int, key: int) -> int:
        law_length = length
        if self.iid:
            key = ce.NONE if key == ce.NONE_SAME else key
            key = ce.A_ONLY if (key == ce.B_ONLY and kind == ce.REGULAR) else key
        if self.binned:
            length, law_length = length_bin(length)
        item = (kind, length, key)
        if item not in self.ids:
            pld = view_pld(kind, length, key, self.law, self.noise, self.step,
                           law_length=law_length)
            self.ids[item] = self.qp.add(pld.qp)
            self.pq.add(pld.pq)
        return self.ids[item]

    def epsilons(self, base: dict[int, int], rows: list[tuple[tuple[int, int], ...]],
                 delta: float) -> np.ndarray:
        return np.maximum(self.qp.epsilons(base, rows, delta),
                          self.pq.epsilons(base, rows, delta))


def _observer(views: ce.Views, banks: _Banks, delta: float
              ) -> tuple[float, list[int], list[float]]:
    """The base loss of one observer and each attributable node's: each pair is
    the observer's views with the attributable ones at their own key (module
    docstring); pairs with the same replacements share one composition."""
    plain = [banks.get(int(views.kind[e]), int(views.length[e]), views.key(e, -2))
             for e in range(views.size)]
    base: dict[int, int] = {}
    for j in plain:
        base[j] = base.get(j, 0) + 1
    pairs = _attributable(views)
    signature: dict[tuple[tuple[int, int], ...], int] = {(): 0}
    which = []
    for marks in pairs.values():
        row = tuple(sorted((plain[e], banks.get(int(views.kind[e]), int(views.length[e]),
                                                 key)) for e, key in marks))
        which.append(signature.setdefault(row, len(signature)))
    eps = banks.epsilons(base, list(signature), delta)
    return float(eps[0]), list(pairs), [float(eps[i]) for i in which]


def walk_pld_losses(holders: np.ndarray, steps: int, n_ids: int, observers: np.ndarray,
                    others: np.ndarray, lengths: tuple[np.ndarray, np.ndarray],
                    law: ce.CountLaw, noise: ce.Noise, delta: float, accountant: str,
                    keep_pairs: bool, target: float | None = None) -> tuple[Any, ...]:
    """Base and attributable losses of every observer (see the module docstring):
    ``base, weight, k, counts, values, nodes`` as the walk kernels give them; each pair
    at the one δ ``target``, else at ``2 k δ`` for an observer of ``k`` views."""
    views_total = sum(x.size for x in lengths)
    exact = registry.entry(accountant).exact
    if exact:
        check(views_total <= EXACT_LIMIT, "accountant",
              f"exact accounts at most {EXACT_LIMIT:,} views over all observers (this run "
              f"has {views_total:,}: fewer steps, nodes or observers); kov, rdp and pld are "
              f"sound and scale further")
    step = view_plds.grid_step(lengths, observers.size, noise.z, exact)
    banks = _Banks(law, noise, step, binned=not exact)
    start, pos = group_by_holder(holders, n_ids)
    n_obs = observers.size
    base = np.zeros(n_obs)
    weight = np.zeros(n_obs, np.int64)
    k = np.zeros(n_obs, np.int64)
    counts = np.zeros(n_obs, np.int64)
    values: list[float] = []
    nodes: list[int] = []
    for o, v in enumerate(observers):
        views = ce.observer_views(holders, steps, pos[start[v]:start[v + 1]])
        k[o] = views.size
        if views.size == 0:
            weight[o] = others[o]
            continue
        base[o], us, eps = _observer(views, banks, pair_delta(views, delta, target))
        weight[o] = others[o] - len(us)
        counts[o] = len(us)
        values += eps
        nodes += us
    return (base, weight, k, counts, np.array(values, float),
            np.array(nodes, np.int64) if keep_pairs else None)
