"""What an observer of a walk sees: its views, and the sound tracker on any graph.

Observer ``v`` (or a coalition ``W`` observing as one) sees, per token, the sum of the
contributions made before its first hold (the *first stretch*: ``i0`` draws, the last
holder ``b`` known), and between two of its holds ``m >= 2`` steps apart (a *cycle*:
``m - 1`` draws, the next holder ``a`` and the last ``b`` known). A return after one step
shows nothing. Given those ends, the hidden holders are a bridge of the taboo chain
(:mod:`netdp.tracking.count_law`), and the views are independent.

:func:`sound_graph_losses` accounts every pair of a walk on any graph under the sound
convention: for each view and each node ``u``, the exact law of ``u``'s interior visits
(first-passage decomposition, :func:`~netdp.tracking.count_law.bridge_interior_laws_batch`)
gives its contribution count ``K = c + I``, and the view's entry is
:mod:`netdp.tracking.cycle_entries`'s (``kov``: the mixture bound; ``rdp``: the label
bound), or its exact PLD (``pld``, ``exact``: :mod:`netdp.accounting.mixture_pld`).
Where an observer's exact laws cost more than :data:`LAW_WORK`, ``kov`` and ``rdp`` take
(``pld`` beyond :data:`PLD_LAW_WORK`: the PLDs of the laws that dominate them) instead a
sound bound of every node's count in every view (:mod:`netdp.tracking.
law_bound`: a survival bound from the Green function of the chain killed at the observer,
and the mean number of visits), which costs a few sweeps of the walk per observer; the LDP
loss is left only where that bound does not apply (more than
:data:`~netdp.tracking.law_bound.DENSE_LIMIT` nodes, or a closed class of the taboo
chain).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from netdp.accounting import loss_pmf, registry
from netdp.accounting._compiled import kov_epsilon, rdp_epsilon
from netdp.core.errors import check
from netdp.engine.trace import Trace
from netdp.tracking import cycle_entries as ce
from netdp.tracking import law_bound, view_plds
from netdp.tracking._kernels.walk import group_by_holder
from netdp.tracking.cycle_entries import Views, observer_views
from netdp.tracking.observer_map import map_observers
from netdp.tracking.view_plds import view_setting

KMAX = (8, 24, 64, 256)  # visits given in full by the graph laws, tried in turn
VIEW_PAIRS_LIMIT = 400_000  # views x nodes the exact graph tracker accepts
LAW_WORK = 3e7  # estimated flops of one observer's exact laws beyond which kov and rdp bound
# them (netdp.tracking.law_bound)
#: The same for pld, whose dominating laws (netdp.tracking.view_plds) are wide: up to here
#: the exact laws cost less than the rows of the dominating ones, and give figures about
#: half as large (grid, random geometric graph of 100 nodes, hypercubes of 128 and 256:
#: docs/performance.md)
PLD_LAW_WORK = 1e11
EXTEND_BYTES = 256 * 2**20  # at most this much for a round of laws beyond KMAX[-1] visits
#: The exact laws of one observer's views (``views x n x (KMAX[-1] + 1)`` doubles) at most:
#: beyond, the accountants that can bound them take the law bound instead
LAW_BYTES = 1 << 30
EXTEND_WORK = 5e10  # estimated flops of a round of laws beyond KMAX[-1] visits, at most


def view_laws(P: Any, blocked: np.ndarray, start_law: np.ndarray, views: Views,
              slack: np.ndarray | None = None, kmax: tuple[int, ...] = KMAX
              ) -> tuple[list[np.ndarray], np.ndarray]:
    """Every node's law of interior visits in each view: ``laws[e]`` is ``(n, w)`` with
    ``laws[e][u, k] = P(I_u = k)``, and ``(views, n)`` the tails ``P(I_u > w - 1)``.

    The laws are computed up to ``kmax[0]`` visits first; a view whose largest tail is not
    below ``slack[view]`` (how small the caller needs it: its terms grow with the count)
    is computed again with the next ``kmax``, and so on (``w = kmax[-1] + 1``). The views
    still to do after the last ``kmax`` go on with twice the count, up to their interior
    positions (where the tail is 0: the laws are whole), while their laws fit in
    :data:`EXTEND_BYTES` and their cost in :data:`EXTEND_WORK` (:func:`_extended`);
    beyond, their tails stay (at the worst count, or an infinite loss: sound).
    """

    n = P.shape[0]
    width = kmax[-1] + 1
    base = np.zeros((views.size, n, width))
    tails = np.ones((views.size, n))
    todo = np.arange(views.size)
    for km in kmax:
        for sel, got, tail in _batches(P, blocked, start_law, views, todo, km):
            base[sel, :, :km + 1], tails[sel] = got, tail
        if slack is None:
            break
        todo = todo[tails[todo].max(axis=1, initial=0.0) >= slack[todo]]
        if todo.size == 0:
            break
    laws = list(base)
    if slack is not None and todo.size:
        _extended(P, blocked, start_law, views, slack, todo, kmax[-1], laws, tails)
    return laws, tails


def _extended(P: Any, blocked: np.ndarray, start_law: np.ndarray, views: Views,
              slack: np.ndarray, todo: np.ndarray, km: int, laws: list[np.ndarray],
              tails: np.ndarray) -> None:
    """The views ``todo``, whose tails at ``km`` visits are still not below ``slack``, with
    ``2 km``, ``4 km``, ... visits (at most their interior positions), in ``laws`` and
    ``tails``; stops where a round's laws would take more than :data:`EXTEND_BYTES` or its
    estimated cost more than :data:`EXTEND_WORK` flops (those views keep their tails)."""

    n = P.shape[0]
    inner = np.array([ce.interior(int(k), int(m)) for k, m in
                      zip(views.kind, views.length, strict=True)], dtype=np.int64)
    nnz = int(getattr(P, "nnz", n * n))
    while todo.size:
        todo = todo[inner[todo] > km]  # the others' laws are whole: no tail
        if todo.size == 0:
            break
        km = int(min(2 * km, inner[todo].max()))
        lam = float(views.length[todo].max())
        work = n * (3 * lam * nnz + (km + 1) * lam * lam / 2  # sweeps, powers
                    + todo.size * (lam + km + 1) * lam)  # per view: A and the dots
        if 8.0 * todo.size * n * (km + 1) > EXTEND_BYTES or work > EXTEND_WORK:
            break
        for sel, got, tail in _batches(P, blocked, start_law, views, todo, km):
            for j, e in enumerate(sel):
                laws[e], tails[e] = got[j], tail[j]
        todo = todo[tails[todo].max(axis=1, initial=0.0) >= slack[todo]]


def _batches(P: Any, blocked: np.ndarray, start_law: np.ndarray, views: Views,
             todo: np.ndarray, km: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``(views, laws, tails)`` up to ``km`` visits of the views ``todo``, a batch per kind:
    the regular views' bridges, then the first stretches."""
    from netdp.tracking import count_law

    out = []
    reg = todo[views.kind[todo] == ce.REGULAR]
    fst = todo[views.kind[todo] == ce.FIRST]
    if reg.size:
        out.append((reg, *count_law.bridge_interior_laws_batch(
            P, blocked, views.a[reg], views.b[reg], views.length[reg] - 2, km)))
    if fst.size:
        out.append((fst, *count_law.first_stretch_laws_batch(
            P, blocked, start_law, views.b[fst], views.length[fst], km)))
    return out


def _slack(views: Views, accountant: str, noise: ce.Noise, delta: float) -> np.ndarray:
    """How small each view's tails must be not to matter: ``e^{-30}`` below the growth of
    the entry's terms at the largest count (kov, rdp), or ``1e-6 δ`` (pld, exact: the tail
    is mass at an infinite loss)."""
    out = np.empty(views.size)
    mode = registry.entry(accountant).kernel_mode
    for e in range(views.size):
        kind, length = int(views.kind[e]), int(views.length[e])
        size = ce.interior(kind, length)
        s = noise.z * math.sqrt(ce.draws(kind, length))
        if mode == "KOV":
            grow = ce.kov_growth(2, size, s, noise, delta)
        elif mode == "RDP":
            grow = ce.rdp_growth(2, size, s)
        else:
            out[e] = 1e-6 * delta
            continue
        out[e] = math.exp(-30.0 - min(grow, 600.0))
    return out


def _log_law(law: np.ndarray, tail: float) -> tuple[np.ndarray, float]:
    with np.errstate(divide="ignore"):
        logp = np.log(np.clip(law, 0.0, None))
        return logp, (math.log(tail) if tail > 0 else -np.inf)


def sound_graph_losses(trace: Trace, P: Any, eps0: float, delta: float,
                       noise_multiplier: float, accountant: str = "kov",
                       coalition: Sequence[int] | None = None,
                       observers: np.ndarray | None = None, laplace: bool = False,
                       start_law: np.ndarray | None = None,
                       target: float | None = None) -> Any:
    """Pairwise losses of a walk summation on a graph, sound (see the module docstring).

    Parameters
    ----------
    trace
        The walk (one or more tokens).
    P
        Its transition matrix (dense or scipy sparse).
    eps0, delta
        The level of one contribution; ``delta`` of each entry (``kov``).
    noise_multiplier
        σ / Δ of a contribution's Gaussian noise.
    accountant
        ``kov``, ``rdp``, ``pld`` or ``exact``.
    coalition
        Nodes observing as one.
    observers
        The observers accounted (default: every node, or the coalition).
    laplace
        Laplace noise (``kov`` only).
    start_law
        The law of a token's first holder (default uniform).
    target
        Every pair's ε at this one δ (spec Correction 7; :func:`entry_delta_of`). ``None``:
        a pair of ``k`` views at ``2 k δ``.

    Returns
    -------
    PairLosses
        Every accounted pair's loss, nodes kept.
    """
    from scipy import sparse

    allowed = registry.names(kind="graph")
    check(accountant in allowed, "accountant",
          f"must be one of {', '.join(allowed)} on a graph (got {accountant!r})")
    registry.check_noise(accountant, not laplace, "laplace")
    entry = registry.entry(accountant)
    n = trace.n
    P = sparse.csr_array(P)
    pi0 = np.full(n, 1.0 / n) if start_law is None else np.asarray(start_law, float)
    holders, obs_ids, members, start, pos = observer_setup(trace, coalition, observers)
    noise = ce.Noise(float(noise_multiplier), float(eps0), laplace)
    if entry.composes_pld and entry.exact:  # pld builds a view's rows at once, in blocks
        others = n - (members.sum() if coalition is not None else 1)
        budget = 0
        for v in obs_ids:
            budget += observer_views(holders, trace.steps, pos[start[v]:start[v + 1]]).size \
                * others
            check(budget <= VIEW_PAIRS_LIMIT, "accountant",
                  f"{accountant} on a graph composes one PLD per view and node: at most "
                  f"{VIEW_PAIRS_LIMIT:,} of them (fewer steps, nodes or --sources); pld, "
                  "kov and rdp scale further")
    shared = {"holders": holders, "steps": trace.steps, "start": start, "pos": pos,
              "members": members, "coalition": coalition is not None, "P": P, "pi0": pi0,
              "noise": noise, "accountant": accountant, "delta": float(delta),
              "target": target}
    return account_observers(sound_observer, shared, obs_ids, accountant, coalition, delta,
                             target)


def account_observers(work: Any, shared: Mapping[str, Any], obs_ids: np.ndarray,
                      accountant: str, coalition: Sequence[int] | None, delta: float,
                      target: float | None = None) -> Any:
    """The :class:`~netdp.tracking.loss_table.PairLosses` of a graph-walk tracker whose
    observer ``v`` gives ``work(shared, v) = (losses, kept nodes, entries, unamplified)``
    (mapped over the observers: :func:`~netdp.tracking.observer_map.map_observers`)."""
    pieces = map_observers(work, shared, obs_ids, "graph-walk tracker",
                           record=coalition is None)
    return pair_losses(accountant, int(shared["P"].shape[0]), coalition, obs_ids,
                       [p[0] for p in pieces], [p[1] for p in pieces],
                       [p[1].size for p in pieces], [p[2] for p in pieces], delta,
                       sum(p[3] for p in pieces), target)


def observer_blocked(shared: Mapping[str, Any], v: int) -> np.ndarray:
    """The nodes observer ``v`` stands for (itself, or the coalition's members)."""
    if shared["coalition"]:
        return shared["members"].copy()
    blocked = np.zeros(shared["P"].shape[0], bool)
    blocked[v] = True
    return blocked


def sound_observer(shared: Mapping[str, Any], v: int) -> tuple[np.ndarray, np.ndarray,
                                                                int, int]:
    """One observer's part of :func:`sound_graph_losses` (a function of ``shared`` and
    ``v`` alone, :mod:`netdp.tracking.observer_map`): the kept nodes' losses, the kept
    nodes, its views and how many of them were not amplified."""
    holders, start, pos, P = shared["holders"], shared["start"], shared["pos"], shared["P"]
    accountant, noise = shared["accountant"], shared["noise"]
    n = P.shape[0]
    blocked = observer_blocked(shared, v)
    views = observer_views(holders, shared["steps"], pos[start[v]:start[v + 1]])
    delta = entry_delta_of(shared["delta"], shared.get("target"), views.size)
    keep = np.flatnonzero(~blocked)
    if _bounds_laws(accountant) and (law_work(views, n, P.nnz) > _law_limit(accountant)
                                     or views.size * n * (KMAX[-1] + 1) * 8 > LAW_BYTES):
        try:
            if registry.entry(accountant).composes_pld:  # pld: the dominating laws' PLDs
                bound = view_plds.dominating_laws(P, blocked, shared["pi0"], views)
                h, cell = view_plds.pld_grid(views, noise)
                eps = view_plds.rows_pld(views, bound, keep, noise, h,
                                         min(2.0 * views.size * delta, 1.0), cell=cell)
            else:
                eps = bounded_losses(P, blocked, shared["pi0"], views, accountant, noise,
                                     delta)
        except law_bound.Unbounded:
            return np.full(keep.size, np.inf), keep, views.size, views.size  # capped
        return eps, keep, views.size, 0
    laws, tails = view_laws(P, blocked, shared["pi0"], views,
                            _slack(views, accountant, noise, delta), KMAX)
    eps = _observer_losses(views, laws, tails, keep, accountant, noise, delta)
    return eps, keep, views.size, 0


def entry_delta_of(delta: float, target: float | None, views: int) -> float:
    """The δ an observer of ``views`` views accounts each with: ``δ``, or at the one δ
    ``target`` (spec Correction 7) ``target / (2 k)``, so that KOV's ``k`` entries and
    its slack ``k δ_e`` each spend half of it, and Rényi, PLD and the exact loss are read
    at ``2 k δ_e = target`` (:mod:`netdp.accounting.target_delta`)."""
    return delta if target is None else target / (2.0 * max(views, 1))


def bounded_losses(P: Any, blocked: np.ndarray, start_law: np.ndarray, views: Views,
                   accountant: str, noise: ce.Noise, delta: float) -> np.ndarray:
    """Each free node's loss towards one observer from the survival bounds of
    :mod:`netdp.tracking.law_bound` (``kov`` or ``rdp``; raises
    :class:`~netdp.tracking.law_bound.Unbounded` where they do not apply)."""
    keep = np.flatnonzero(~blocked)
    k = views.size
    if k == 0:
        return np.zeros(keep.size)
    logB, logrho, logmu, free = law_bound.survival_logs(P, blocked, start_law, views.kind,
                                                 views.a, views.b, views.length)
    # raised a little (sound: a larger survival bound), so that nodes whose bounds differ
    # by rounding alone (a symmetric graph's) share one row: each distinct row computed once
    step = view_plds.ROW_SNAP
    logB, logmu = view_plds.snapped(logB, step), view_plds.snapped(logmu, step)
    logrho = np.minimum(view_plds.snapped(logrho, step), 0.0)
    orders = _orders()
    kov = registry.entry(accountant).kernel_mode == "KOV"
    feats = np.zeros((keep.size, 3 if kov else orders.size))
    for e in range(k):
        s, size, cu = view_setting(views, e, keep, noise)
        held, index = view_plds.distinct(np.column_stack([logB[e], logrho, logmu[e], cu]))
        rows = (logB[e, held], logrho[held], logmu[e, held], cu[held])
        if kov:
            eps = law_bound.kov_loss(*rows, size, s, noise, delta)
            eps = eps if index is None else eps[index]
            feats[:, 0] += eps
            feats[:, 1] += eps * np.tanh(eps / 2.0)
            feats[:, 2] += eps * eps
        else:
            got = law_bound.rdp_curve(*rows, size, s, orders)
            feats += got if index is None else got[index]
    if kov:
        return np.array([kov_epsilon(f, k, delta) for f in feats])
    dt = min(2.0 * k * delta, 1.0)
    return np.array([rdp_epsilon(f, dt, orders) for f in feats])


def observer_setup(trace: Trace, coalition: Sequence[int] | None,
                   observers: Any) -> tuple[np.ndarray, ...]:
    """What a graph-walk tracker loops over: the flattened holders (a coalition as one id,
    :func:`~netdp.tracking.loss_table.observer_view`), the observers' ids (``observers``
    where given), the coalition's members as a mask, and the holders grouped by id
    (``start``, ``pos``)."""
    from netdp.tracking.loss_table import observer_view

    n = trace.n
    holders, n_ids, obs_ids, _ = observer_view(trace, coalition)
    members = np.zeros(n, bool)
    if coalition is not None:
        members[list(coalition)] = True
    elif observers is not None:
        obs_ids = np.asarray(observers, dtype=np.int64)
    start, pos = group_by_holder(holders, n_ids)
    return holders, obs_ids, members, start, pos


def pair_losses(accountant: str, n: int, coalition: Sequence[int] | None, obs_ids: Any,
                losses: list, nodes: list, counts: list, entries: list, delta: float,
                unamplified: int, target: float | None = None) -> Any:
    """The :class:`~netdp.tracking.loss_table.PairLosses` of the per-observer pieces a
    graph-walk tracker collected (one entry per observer; a coalition as observer -1)."""
    from netdp.tracking.loss_table import PairLosses

    k = np.array(entries, dtype=np.int64)
    k_max = int(k.max()) if k.size else 0
    out = np.array([-1]) if coalition is not None else np.asarray(obs_ids)
    return PairLosses(accountant, n, out, np.zeros(k.size), np.zeros(k.size, np.int64), k,
                      np.concatenate(losses), np.array(counts, dtype=np.int64),
                      np.concatenate(nodes), 2 * k_max * delta if target is None else target,
                      unamplified=unamplified)


def law_work(views: Views, n: int, nnz: int) -> float:
    """The flops of an observer's laws (:func:`~netdp.tracking.count_law.
    bridge_interior_laws_batch`'s cost, at the first ``kmax``): ``n (3 Λ nnz + S k Λ² / 2
    + C k Λ)`` for the longest hidden stretch Λ, S distinct first holders, C views."""
    if views.size == 0:
        return 0.0
    lam = float(views.length.max())
    k = KMAX[0] + 1
    sources = np.unique(views.a).size
    return n * (3 * lam * nnz + sources * k * lam * lam / 2 + views.size * k * lam)


def _observer_losses(views: Views, laws: Sequence[np.ndarray], tails: np.ndarray,
                     keep: np.ndarray, accountant: str, noise: ce.Noise,
                     delta: float) -> np.ndarray:
    """Each kept node's loss towards one observer, from ``laws[e]`` (``(n, w)``, ``w``
    view by view, :func:`view_laws`) and the ``(views, n)`` tails beyond them."""
    k = views.size
    if k == 0:
        return np.zeros(keep.size)
    dt = min(2.0 * k * delta, 1.0)
    orders = _orders()
    entry = registry.entry(accountant)
    if entry.composes_pld:
        from netdp.accounting import mixture_pld as mp
        if not entry.exact:
            h, cell = view_plds.pld_grid(views, noise)
            return view_plds.rows_pld(views, view_plds.snapped_laws(laws, tails, keep), keep,
                                      noise, h, dt, cell=cell)
        step = view_plds.step_of(views, noise, True)
        out = np.empty(keep.size)
        for r, u in enumerate(keep):
            parts = []
            for e in range(k):
                key = views.key(e, int(u))
                c = ce.attributable(int(views.kind[e]), int(views.length[e]), key)
                w = np.concatenate([np.zeros(c), laws[e][u]])
                s = noise.z * math.sqrt(ce.draws(int(views.kind[e]), int(views.length[e])))
                parts.append(mp.mixture_pld(w, s, h=step, tail=float(tails[e, u])))
            out[r] = max(float(loss_pmf.PldPair.compose_many(parts).epsilon(dt)), 0.0)
        return out
    kov = entry.kernel_mode == "KOV"
    nf = 3 if kov else orders.size
    feats = np.zeros((keep.size, nf))
    tmp = np.empty((keep.size, nf))
    for e in range(k):
        s, size, cu = view_setting(views, e, keep, noise)
        span = np.arange(laws[e].shape[1])
        with np.errstate(divide="ignore"):
            logp = np.log(np.clip(laws[e][keep], 0.0, None))
            ltail = np.log(np.clip(tails[e, keep], 0.0, None))
        if kov:
            top = int(cu.max(initial=0)) + span.size
            if noise.laplace:
                eps_j = np.arange(top) * noise.eps0
            else:
                eps_j = ce._gauss_eps(np.arange(top) / s, delta)
            terms = logp + eps_j[cu[:, None] + span[None, :]]
            grow = np.array([ce.kov_growth(int(x), size, s, noise, delta) for x in cu])
            terms = np.concatenate([terms, (ltail + grow)[:, None]], axis=1)
            peak = terms.max(axis=1)
            eps = np.maximum(peak + np.log(np.exp(terms - peak[:, None]).sum(axis=1)), 0.0)
            feats[:, 0] += eps
            feats[:, 1] += eps * np.tanh(eps / 2.0)
            feats[:, 2] += eps * eps
        else:
            ce.rdp_entries(logp, ltail, cu, size, s, orders, tmp)
            feats += tmp
    if kov:
        return np.array([kov_epsilon(f, k, delta) for f in feats])
    return np.array([rdp_epsilon(f, dt, orders) for f in feats])


def _bounds_laws(accountant: str) -> bool:
    """Whether the accountant takes the law bound (:mod:`netdp.tracking.law_bound`) where
    the exact laws cost too much: the kernels' KOV and Rényi entries and the PLDs of the
    dominating laws (:mod:`netdp.tracking.view_plds`), not the exact accountant's."""
    e = registry.entry(accountant)
    return e.kernel_mode in ("KOV", "RDP") or (e.composes_pld and not e.exact)


def _law_limit(accountant: str) -> float:
    """The exact laws' work beyond which ``accountant`` takes the law bound."""
    return PLD_LAW_WORK if registry.entry(accountant).composes_pld else LAW_WORK


def _orders() -> np.ndarray:
    from netdp.tracking.loss_table import RDP_ORDERS

    return RDP_ORDERS
