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

* ``exact``: each pair composes exactly its own views: the views where ``u`` is not
  attributable at ``c = 0`` and the others at their ``c``; the observer's views are kept
  in a balanced tree of partial compositions so that a pair leaves out its few
  attributable views at ``O(log C)`` compositions each. The grid
  (:func:`~netdp.tracking.cycle_entries.grid_step`) keeps the rounding within half a
  percent of the loss's scale.
* ``pld``: the same composition for each pair (its attributable views *replace* their
  ``c = 0`` copies), on a grid ten times coarser, in the Fourier domain
  (:mod:`netdp.accounting.pld_fourier`): each distinct mechanism is built once per run
  and its log transform kept; with iid holders (the binomial law) the two keys where
  ``u`` is not attributable, and the keys ``a`` and ``b``, are one mechanism, and view
  lengths above :data:`PLD_EXACT_M` share a mechanism per bin of ratio
  :data:`PLD_BIN_RATIO` (fixed edges, :func:`length_bin`) that has the noise of the
  bin's shortest length and the count law of its longest: fewer draws and a
  stochastically larger count each dominate (a mixture with a monotone likelihood
  ratio: both hockey-stick curves grow), so the bin's mechanism bounds each of its views.
  An observer's base is the sum of its views' log transforms with their multiplicities;
  a pair is the base with one log transform subtracted and another added per
  attributable view; pairs with the same replacements share one result.

Cost: one PLD per distinct view (length or bin, key), then per observer ``C`` compositions
(its views), and per attributable pair ``O(log C)`` (exact) compositions of PLDs whose
support grows with ``C``, or (pld) a window of the transforms and a bisection of
inner products on its few live frequencies. :data:`EXACT_LIMIT` bounds the work of ``exact``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from netdp.accounting import loss_pmf, registry
from netdp.accounting import mixture_pld as mp
from netdp.accounting import pld_fourier as pf
from netdp.core.errors import check
from netdp.tracking import cycle_entries as ce
from netdp.tracking._kernels.walk import group_by_holder

EXACT_LIMIT = 2_000_000  # views x observers accounted by the exact accountant


def _attributable(views: ce.Views) -> dict[int, list[tuple[int, int]]]:
    """``u -> [(view, key), ...]`` for every node some view attributes."""
    out: dict[int, list[tuple[int, int]]] = {}
    for e in range(views.size):
        for u in {int(views.a[e]), int(views.b[e])} - {-1}:
            out.setdefault(u, []).append((e, views.key(e, u)))
    return out


class _Cache:
    """PLD of each (kind, length, key) of a run, built once."""

    def __init__(self, law: ce.CountLaw, noise: ce.Noise, step: float) -> None:
        self.law, self.noise, self.step = law, noise, step
        self.plds: dict[tuple[int, int, int], Any] = {}

    def get(self, kind: int, length: int, key: int) -> Any:
        item = (kind, length, key)
        if item not in self.plds:
            self.plds[item] = view_pld(kind, length, key, self.law, self.noise, self.step)
        return self.plds[item]


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


class _Tree:
    """Partial compositions of a list of PLDs over a balanced binary tree."""

    def __init__(self, items: Sequence[Any]) -> None:
        self.size = 1
        while self.size < max(len(items), 1):
            self.size *= 2
        self.node: list[Any] = [None] * (2 * self.size)
        for i, item in enumerate(items):
            self.node[self.size + i] = item
        for i in range(self.size - 1, 0, -1):
            self.node[i] = _compose(self.node[2 * i], self.node[2 * i + 1])

    def total(self) -> Any:
        return self.node[1]

    def range(self, lo: int, hi: int) -> list[Any]:
        """The nodes that cover ``[lo, hi)``."""
        out = []
        lo += self.size
        hi += self.size
        while lo < hi:
            if lo & 1:
                out.append(self.node[lo])
                lo += 1
            if hi & 1:
                hi -= 1
                out.append(self.node[hi])
            lo //= 2
            hi //= 2
        return [x for x in out if x is not None]


def _compose(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return a.compose(b)


def _compose_all(items: Sequence[Any]) -> Any:
    items = [x for x in items if x is not None]
    if not items:
        return None
    return loss_pmf.PldPair.compose_many(items)


def _epsilon(pld: Any, delta: float) -> float:
    return 0.0 if pld is None else max(float(pld.epsilon(delta)), 0.0)


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
    """The pld accountant's mechanisms of a run: each distinct (kind, length, key) built
    once (:func:`view_pld`) and kept in both directions' :class:`~netdp.accounting.
    pld_fourier.Bank`. With iid holders (the binomial law) the two keys of a view where
    ``u`` is not attributable are one mechanism."""

    def __init__(self, law: ce.CountLaw, noise: ce.Noise, step: float) -> None:
        self.law, self.noise, self.step = law, noise, step
        self.iid = getattr(law, "p", None) is not None
        self.ids: dict[tuple[int, int, int], int] = {}
        self.qp, self.pq = pf.Bank(step), pf.Bank(step)

    def get(self, kind: int, length: int, key: int) -> int:
        law_length = length
        if self.iid:
            key = ce.NONE if key == ce.NONE_SAME else key
            key = ce.A_ONLY if (key == ce.B_ONLY and kind == ce.REGULAR) else key
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


def _pld_observer(views: ce.Views, banks: _Banks, delta: float
                  ) -> tuple[float, list[int], list[float]]:
    """The base loss of one observer and each attributable node's (pld): each pair is
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
    step = ce.grid_step(lengths, observers.size, noise.z, exact)
    cache = _Cache(law, noise, step) if exact else None
    banks = None if exact else _Banks(law, noise, step)
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
        dt = pair_delta(views, delta, target)
        if banks is not None:
            if views.size == 0:
                weight[o] = others[o]
                continue
            base[o], us, eps = _pld_observer(views, banks, dt)
            weight[o] = others[o] - len(us)
            counts[o] = len(us)
            values += eps
            nodes += us
            continue
        assert cache is not None
        plain = [cache.get(int(views.kind[e]), int(views.length[e]), views.key(e, -2))
                 for e in range(views.size)]
        tree = _Tree(plain)
        base[o] = _epsilon(tree.total(), dt)
        pairs = _attributable(views)
        weight[o] = others[o] - len(pairs)
        counts[o] = len(pairs)
        for u, marks in pairs.items():
            own = [cache.get(int(views.kind[e]), int(views.length[e]), key)
                   for e, key in marks]
            cut = sorted({e for e, _ in marks})
            rest: list[Any] = []
            lo = 0
            for e in cut + [views.size]:
                rest += tree.range(lo, e)
                lo = e + 1
            values.append(_epsilon(_compose_all(rest + own), dt))
            nodes.append(u)
    return (base, weight, k, counts, np.array(values, float),
            np.array(nodes, np.int64) if keep_pairs else None)
