"""The sound pairwise tracker of a walk summation on a time-varying graph (exact laws).

The derivation (docs/time-varying-status.md has it at length). The walk is a
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
caller caps them at the local DP loss of the realised contributions), which is sound,
and counted in ``unamplified``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from netdp.accounting._arrays import observer_bar
from netdp.core.errors import check
from netdp.engine.trace import Trace
from netdp.tracking import cycle_entries as ce
from netdp.tracking.walk_views import _observer_losses, observer_setup, pair_losses

EXACT_WORK = 3e8  # flops of one observer's laws beyond which its pairs are not amplified


def _taboo(P: Any, blocked: np.ndarray) -> np.ndarray:
    from scipy import sparse

    Q = sparse.csr_array(P).toarray() if sparse.issparse(P) else np.array(P, dtype=float)
    Q[blocked, :] = 0.0
    Q[:, blocked] = 0.0
    return Q


def view_law(transitions: Sequence[Any], blocked: np.ndarray, start_law: np.ndarray,
             kind: int, length: int, a: int, b: int, t0: int, width: int,
             cache: dict[int, np.ndarray] | None = None) -> np.ndarray:
    """``(n, width)``: the exact law of every node's interior visits in one view.

    The forward pass carries, for each node ``u``, the weight of the hidden paths so far
    by their end ``x`` and the visits of ``u`` among their interior positions; step ``s``
    multiplies by the taboo chain ``Q_{t0+s-1}``. ``width`` must exceed the view's
    interior positions (:func:`~netdp.tracking.cycle_entries.interior`).
    """
    n = blocked.size
    cache = {} if cache is None else cache

    def Q(t: int) -> np.ndarray:
        key = id(transitions[t])
        if key not in cache:
            cache[key] = _taboo(transitions[t], blocked)
        return cache[key]

    laws = np.zeros((n, width))
    laws[:, 0] = 1.0
    inner = ce.interior(kind, length)
    if inner == 0:
        return laws
    check(width > inner, "width", f"must exceed the view's {inner} interior positions")
    u = np.arange(n)
    f = np.zeros((n, n, width))  # [u, x, count of u]
    if kind == ce.FIRST:
        x0 = np.where(blocked, 0.0, start_law)
        f[:, :, 0] = x0[None, :]
        f[u, u, 1] = f[u, u, 0]  # position 0 is interior
        f[u, u, 0] = 0.0
        moves = range(0, length - 2)  # positions 1..i0-2 are interior too
        last = length - 2
    else:
        f[:, a, 0] = 1.0
        moves = range(t0, t0 + length - 3)  # to positions t0+1..t0+L-1 (interior)
        last = t0 + length - 3
    for t in moves:
        f = np.einsum("uxk,xy->uyk", f, Q(t))
        f[u, u, 1:] = f[u, u, :-1].copy()
        f[u, u, 0] = 0.0
        total = f[0].sum()
        check(total > 0, "trace", "a view's hidden path is impossible under the snapshots")
        f /= total
    end = np.einsum("uxk,x->uk", f, Q(last)[:, b])
    z = end[0].sum()
    check(z > 0, "trace", "a view's hidden path is impossible under the snapshots")
    return end / z


def time_varying_losses(trace: Trace, transitions: Sequence[Any], eps0: float, delta: float,
                        noise_multiplier: float, accountant: str = "kov",
                        coalition: Sequence[int] | None = None,
                        observers: np.ndarray | None = None,
                        start_law: np.ndarray | None = None) -> Any:
    """Pairwise losses of a walk summation on a time-varying graph, sound.

    Parameters
    ----------
    trace
        The walk (tokens share the clock: step ``t`` is position ``t``).
    transitions
        ``[P_0, ..., P_{steps-2}]`` at least (``P_t`` moves step ``t`` to ``t + 1``).
    eps0, delta, noise_multiplier, accountant, coalition, observers, start_law
        As :func:`netdp.tracking.walk_views.sound_graph_losses`.

    Returns
    -------
    PairLosses
        Every accounted pair's loss, nodes kept; ``unamplified``: views of observers
        beyond :data:`EXACT_WORK` (their pairs ``inf``).
    """
    check(accountant in ("kov", "rdp", "pld", "exact"), "accountant",
          f"must be one of kov, rdp, pld, exact on a graph (got {accountant!r})")
    n = trace.n
    check(len(transitions) >= trace.steps - 1, "topology",
          f"{len(transitions)} transition matrices for a walk of {trace.steps} steps")
    pi0 = np.full(n, 1.0 / n) if start_law is None else np.asarray(start_law, float)
    holders, obs_ids, members, start, pos = observer_setup(trace, coalition, observers)
    noise = ce.Noise(float(noise_multiplier), float(eps0), False)
    nnz = max(int(np.count_nonzero(np.asarray(_taboo(transitions[0], members)))), n)
    losses, nodes, counts, entries = [], [], [], []
    unamplified = 0
    for v in observer_bar(obs_ids.tolist(), "time-varying tracker"):
        blocked = members.copy() if coalition is not None else np.zeros(n, bool)
        if coalition is None:
            blocked[v] = True
        views, t0 = ce.timed_views(holders, trace.steps, pos[start[v]:start[v + 1]])
        keep = np.flatnonzero(~blocked)
        width = int(max((ce.interior(int(k), int(m)) for k, m in
                         zip(views.kind, views.length, strict=True)), default=0)) + 1
        work = float(np.sum(views.length.astype(float))) * n * nnz * width
        if work > EXACT_WORK:
            eps = np.full(keep.size, np.inf)
            unamplified += views.size
        else:
            cache: dict[int, np.ndarray] = {}
            laws = np.stack([view_law(transitions, blocked, pi0, int(views.kind[e]),
                                      int(views.length[e]), int(views.a[e]),
                                      int(views.b[e]), int(t0[e]), width, cache)
                             for e in range(views.size)]) if views.size else \
                np.zeros((0, n, width))
            eps = _observer_losses(views, laws, np.zeros(laws.shape[:2]), keep, accountant,
                                   noise, delta)
        losses.append(eps)
        nodes.append(keep)
        counts.append(keep.size)
        entries.append(views.size)
    return pair_losses(accountant, n, coalition, obs_ids, losses, nodes, counts, entries,
                       delta, unamplified)
