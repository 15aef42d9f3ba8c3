"""The sound pairwise tracker of a walk summation on a time-varying graph (exact laws).

The derivation (docs/time-varying.md has it at length). The walk is a
time-inhomogeneous Markov chain: the holder at step ``t`` moves with ``P_t``. Observer
set ``W`` sees the token at its own holds, with their times, and the node before and after
each. Between two holds at steps ``j`` and ``i = j + m`` (a *cycle*) the hidden holders
``x_{j+1} = a, ..., x_{i-1} = b`` avoid ``W`` and have the weight
``Π_{t=j+1}^{i-2} P_t[x_t, x_{t+1}]`` (the moves ``v -> a`` and ``b -> v`` are known
factors): a bridge of the *time-indexed taboo chain* ``Q_t`` (``P_t`` with the rows and
columns of ``W`` set to zero), normalised by ``(Q_{j+1} ⋯ Q_{i-2})[a, b]``. The stretch
before a token's first hold at ``i0`` is the same with the start law ``π0`` in place of
``a``: weight ``π0[x_0] Π_{t=0}^{i0-2} Q_t[x_t, x_{t+1}]``, ``x_{i0-1} = b``. The chain
is Markov at ``W``'s holds whatever ``P_t`` is, so the views stay independent given what
``W`` sees and their losses compose (spec network-dp.md, Corrections 5); only the law of
node ``u``'s interior visits changes: it is computed here exactly, by a forward pass over
``(node, count)`` with the realised products ``Q_t``, for every ``u`` at once. Each view's
entry is then :mod:`netdp.tracking.walk_views`'s (``kov``, ``rdp``, ``pld``, ``exact``).

Cost per observer: ``O(Σ_views L · n · nnz(P) · (L + 1))`` flops and ``n² (L + 1)``
floats for the longest hidden stretch ``L``: exact up to a few thousand nodes for short
views. Beyond :data:`EXACT_WORK` an observer's pairs are not amplified (``inf``: the
caller caps them at the LDP loss of the largest count of a node's contributions that the
observer's view allows, :mod:`netdp.tracking.view_cap`), which is sound, and counted in
``unamplified``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from netdp.accounting import registry
from netdp.accounting._arrays import observer_bar
from netdp.core.errors import check
from netdp.engine.trace import Trace
from netdp.tracking import cycle_entries as ce
from netdp.tracking import walk_views
from netdp.tracking.walk_views import (
    _observer_losses,
    _slack,
    entry_delta_of,
    observer_setup,
    pair_losses,
)

EXACT_WORK = 3e10  # flops of one observer's laws beyond which its pairs are not amplified
DENSE_NODES = 512  # taboo matrices dense (BLAS) up to this many nodes, CSR beyond
KMAX = (8, 24, 64)  # visits given in full, tried in turn; beyond: a tail at the worst count
CACHED = 256  # taboo matrices kept per observer


def _taboo(P: Any, blocked: np.ndarray) -> Any:
    """``P`` with the rows and columns of ``blocked`` zeroed: dense (BLAS) up to
    :data:`DENSE_NODES` nodes when a fifth of it or more is filled, else CSR."""
    from scipy import sparse

    n = blocked.size
    keep = np.where(blocked, 0.0, 1.0)
    filled = (P.nnz if sparse.issparse(P) else np.count_nonzero(P)) / (n * n)
    if n <= DENSE_NODES and filled >= 0.2:
        Q = sparse.csr_array(P).toarray() if sparse.issparse(P) else np.array(P, dtype=float)
        return Q * keep[:, None] * keep[None, :]
    D = sparse.dia_array((keep, 0), shape=(n, n))
    return sparse.csr_array(D @ sparse.csr_array(P) @ D)


def view_law(transitions: Sequence[Any], blocked: np.ndarray, start_law: np.ndarray,
             kind: int, length: int, a: int, b: int, t0: int, width: int,
             cache: dict[int, Any] | None = None) -> np.ndarray:
    """``(n, width)``: the law of every node's interior visits in one view; the last
    column holds ``P(count >= width - 1)`` (the exact law when ``width`` exceeds the
    view's interior positions, :func:`~netdp.tracking.cycle_entries.interior`).

    The forward pass carries, for each node ``u``, the weight of the hidden paths so far
    by their end ``x`` and the visits of ``u`` among their interior positions
    (``g[x, u, count]``); step ``s`` multiplies by the taboo chain ``Q_{t0+s-1}``
    (``g <- Qᵀ g``), one matrix product for every ``u`` at once. Cost:
    ``O(L · n · width · nnz(Q))``.
    """
    n = blocked.size
    cache = {} if cache is None else cache

    def QT(t: int) -> Any:
        """``Q_tᵀ`` (CSR, or dense), built once per snapshot."""
        key = id(transitions[t])
        if key not in cache:
            if len(cache) >= CACHED:  # many snapshots: keep the memory bounded
                cache.clear()
            Q = _taboo(transitions[t], blocked)
            cache[key] = np.ascontiguousarray(Q.T) if isinstance(Q, np.ndarray) else \
                type(Q)(Q.T.tocsr())
        return cache[key]

    laws = np.zeros((n, width))
    laws[:, 0] = 1.0
    if ce.interior(kind, length) == 0:
        return laws
    check(width >= 2, "width", f"must be at least 2 for a view with interior positions "
          f"(got {width})")
    u = np.arange(n)

    def visit(g: np.ndarray) -> None:
        """The end ``x = u`` is an interior position: ``u``'s count goes up by one (the
        last column keeps every count at or beyond ``width - 1``)."""
        seen = g[u, u, :]
        g[u, u, 1:] = seen[:, :-1]
        g[u, u, -1] += seen[:, -1]
        g[u, u, 0] = 0.0

    g = np.zeros((n, n, width))  # [x, u, count of u]
    if kind == ce.FIRST:
        g[:, :, 0] = np.where(blocked, 0.0, start_law)[:, None]
        visit(g)  # position 0 is interior
        moves = range(0, length - 2)  # positions 1..i0-2 are interior too
        last = length - 2
    else:
        g[a, :, 0] = 1.0
        moves = range(t0, t0 + length - 3)  # to positions t0+1..t0+L-1 (interior)
        last = t0 + length - 3
    for t in moves:
        g = np.asarray(QT(t) @ g.reshape(n, n * width)).reshape(n, n, width)
        visit(g)
        total = g[:, 0].sum()
        check(total > 0, "trace", "a view's hidden path is impossible under the snapshots")
        g /= total
    row = QT(last)[[b], :]
    dense = row.toarray() if hasattr(row, "toarray") else np.asarray(row)
    end = (dense.ravel() @ g.reshape(n, n * width)).reshape(n, width)
    z = end[0].sum()
    check(z > 0, "trace", "a view's hidden path is impossible under the snapshots")
    return end / z


def _observer_laws(transitions: Sequence[Any], blocked: np.ndarray, start_law: np.ndarray,
                   views: ce.Views, t0: np.ndarray, widest: int, slack: np.ndarray,
                   per_step: float | None = None) -> tuple[list[np.ndarray], np.ndarray]:
    """Every node's law of interior visits in each view (``laws[e]``, ``(n, w)``: ``w =
    widest`` unless the view went beyond ``KMAX``) and ``(views, n)`` their tails
    ``P(I >= w)`` where a view's law was cut: each view is computed with the counts up to
    ``KMAX[0]``, again up to the next ``KMAX`` while its largest tail is not below
    ``slack`` (as :func:`netdp.tracking.walk_views.view_laws`), then with twice the count
    while the pass (``n² w`` floats, ``L n w`` times ``per_step`` flops, default ``n²``)
    fits in :data:`~netdp.tracking.walk_views.EXTEND_BYTES` and
    :data:`~netdp.tracking.walk_views.EXTEND_WORK`; exact (no tail) once the width exceeds
    the view's interior positions."""
    n = blocked.size
    per_step = float(n * n) if per_step is None else per_step
    base = np.zeros((views.size, n, widest))
    tails = np.zeros((views.size, n))
    laws = list(base)
    cache: dict[int, Any] = {}
    for e in range(views.size):
        kind, length = int(views.kind[e]), int(views.length[e])
        inner = ce.interior(kind, length)
        km = KMAX[0]
        while True:
            width = max(min(inner, km + 1) + 1, 2)
            law = view_law(transitions, blocked, start_law, kind, length, int(views.a[e]),
                           int(views.b[e]), int(t0[e]), width, cache)
            wide = width > widest
            if wide:
                laws[e] = law if inner <= km else law[:, :-1]
            elif inner <= km:  # exact: the last column is a count, not a tail
                base[e, :, :width] = law
            else:
                base[e, :, :width - 1] = law[:, :-1]
                base[e, :, width - 1:] = 0.0
            tails[e] = 0.0 if inner <= km else law[:, -1]
            if inner <= km or tails[e].max() < slack[e]:
                break
            bigger = [k for k in KMAX if k > km]
            km = bigger[0] if bigger else min(2 * km, inner)
            width = min(inner, km + 1) + 1
            if not bigger and (8.0 * n * n * width > walk_views.EXTEND_BYTES
                               or length * n * width * per_step > walk_views.EXTEND_WORK):
                break  # beyond: the tail at an infinite loss (sound)
    return laws, tails


def time_varying_losses(trace: Trace, transitions: Sequence[Any], eps0: float, delta: float,
                        noise_multiplier: float, accountant: str = "kov",
                        coalition: Sequence[int] | None = None,
                        observers: np.ndarray | None = None,
                        start_law: np.ndarray | None = None,
                        target: float | None = None) -> Any:
    """Pairwise losses of a walk summation on a time-varying graph, sound.

    Parameters
    ----------
    trace
        The walk (tokens share the clock: step ``t`` is position ``t``).
    transitions
        ``[P_0, ..., P_{steps-2}]`` at least (``P_t`` moves step ``t`` to ``t + 1``).
    eps0, delta, noise_multiplier, accountant, coalition, observers, start_law, target
        As :func:`netdp.tracking.walk_views.sound_graph_losses`.

    Returns
    -------
    PairLosses
        Every accounted pair's loss, nodes kept; ``unamplified``: views of observers
        beyond :data:`EXACT_WORK` (their pairs ``inf``).
    """
    offered = registry.names(kind="time-varying")
    check(accountant in offered, "accountant",
          f"must be one of {', '.join(offered)} on a graph (got {accountant!r})")
    n = trace.n
    check(len(transitions) >= trace.steps - 1, "topology",
          f"{len(transitions)} transition matrices for a walk of {trace.steps} steps")
    pi0 = np.full(n, 1.0 / n) if start_law is None else np.asarray(start_law, float)
    holders, obs_ids, members, start, pos = observer_setup(trace, coalition, observers)
    noise = ce.Noise(float(noise_multiplier), float(eps0), False)
    from scipy import sparse

    distinct = {id(P): P for P in transitions}.values()
    nnz = max(max(sparse.csr_array(P).nnz for P in distinct), n)
    losses, nodes, counts, entries = [], [], [], []
    unamplified = 0
    for v in observer_bar(obs_ids.tolist(), "time-varying tracker"):
        blocked = members.copy() if coalition is not None else np.zeros(n, bool)
        if coalition is None:
            blocked[v] = True
        views, t0 = ce.timed_views(holders, trace.steps, pos[start[v]:start[v + 1]])
        keep = np.flatnonzero(~blocked)
        d = entry_delta_of(delta, target, views.size)
        inner = int(max((ce.interior(int(k), int(m)) for k, m in
                         zip(views.kind, views.length, strict=True)), default=0))
        widest = max(min(inner, KMAX[-1] + 1) + 1, 2)
        per_step = float(n * n if n <= DENSE_NODES and nnz >= 0.2 * n * n else nnz)
        work = float(np.sum(views.length.astype(float))) * n * (KMAX[0] + 2) * per_step
        if work > EXACT_WORK:
            eps = np.full(keep.size, np.inf)
            unamplified += views.size
        else:
            laws, tails = _observer_laws(transitions, blocked, pi0, views, t0, widest,
                                         _slack(views, accountant, noise, d), per_step)
            eps = _observer_losses(views, laws, tails, keep, accountant, noise, d)
        losses.append(eps)
        nodes.append(keep)
        counts.append(keep.size)
        entries.append(views.size)
    return pair_losses(accountant, n, coalition, obs_ids, losses, nodes, counts, entries,
                       delta, unamplified, target)
