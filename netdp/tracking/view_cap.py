"""The LDP cap of a pair, read from what the observer sees (spec Correction 6).

A pairwise figure bounds the loss of observer ``v``'s view as a mechanism: over the hidden
path and the noise, given what ``v`` sees. The LDP loss of node ``u``'s *realised*
contributions conditions on the hidden path, which ``v`` does not see, so it bounds
neither that loss nor, in a minimum with a view bound, anything (complete graph, n = 6:
a node that never held the token has realised LDP loss 0, the view's exact loss 0.163).
It stays a baseline column of the report, never a cap.

What does hold. The walk does not depend on the data, so given what ``v`` sees of the
path (its own holds, the node before and after each) the view is the mixture, over the
hidden paths consistent with it (weights that do not depend on the data), of the view
given the whole path; given the whole path the view is a post-processing of ``u``'s
``K`` contributions, at most ``LDP(K)`` (``opti(ε0, δ, K)``, the composition of the
baseline, :func:`~netdp.tracking.loss_table.ldp_at`); and a mixture with data-free
weights of ``(ε, δ)``-DP mechanisms is ``(ε, δ)``-DP (for any event ``S``,
``Σ_p w_p P_p(S | D) <= Σ_p w_p (e^ε P_p(S | D') + δ)``). ``opti`` grows with ``K``, so
the view's loss is at most ``LDP(K*)`` for the **largest** count ``K*`` of ``u``'s
contributions over the consistent hidden paths, and any ``K̄ >= K*`` gives a cap.

The bound used here, :func:`largest_counts`. Node ``u ≠ v`` can only hold positions that
``v`` does not hold; those of one token fall into maximal *runs* between ``v``'s holds (the
run before its first hold, between two holds, after its last; a token ``v`` never holds is
one run of all its steps), ends attributable to a known node included, as they may be
``u``. A run of ``L`` positions holds at most ``L`` of ``u``'s contributions; where the
walk cannot keep the token for a step (no self-moves: consecutive holders differ) at most
``⌈L/2⌉``, as ``u`` never holds two neighbouring positions. ``K̄(v)`` is the sum over
runs: one count per observer, for every ``u`` at once (no pair is ever singled out), in
one pass over the trace, ``O(n + T)``. On the directed ring the path is public and the
count is known exactly; its trackers take no cap. A token's steps lost to a fault count
as positions (the bound only grows: sound). A coalition is one observer whose holds are
its members'.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numba as nb
import numpy as np

from netdp.engine.trace import Trace
from netdp.tracking.loss_table import PairLosses, coalition_members, ldp_at


@nb.njit(cache=True)
def _run_counts(holders, steps, ids, n_ids):
    """Per observer id: the sums over its runs of ``L`` and of ``⌈L/2⌉``, and whether
    the trace ever repeats a holder on consecutive steps (``ids[h]``: the observer id of
    node ``h``, -1 for none; ``holders`` flattened by token, ``-1`` a lost step)."""
    full = np.zeros(n_ids, np.int64)
    half = np.zeros(n_ids, np.int64)
    last = np.full(n_ids, -1, np.int64)  # step of the id's last hold in its token
    tok = np.full(n_ids, -1, np.int64)  # that token
    seen = np.zeros(n_ids, np.int64)  # tokens the id held
    repeats = False
    tokens = holders.size // steps
    for t in range(tokens):
        prev = -1
        for i in range(steps):
            h = holders[t * steps + i]
            if h >= 0 and h == prev:
                repeats = True
            prev = h
            o = ids[h] if h >= 0 else -1
            if o < 0:
                continue
            if tok[o] != t:  # first hold of this token: the run before it
                if tok[o] >= 0:  # close the previous token's last run
                    gap = steps - 1 - last[o]
                    full[o] += gap
                    half[o] += (gap + 1) // 2
                gap = i
                seen[o] += 1
                tok[o] = t
            else:
                gap = i - last[o] - 1
            full[o] += gap
            half[o] += (gap + 1) // 2
            last[o] = i
    for o in range(n_ids):
        if tok[o] >= 0:
            gap = steps - 1 - last[o]
            full[o] += gap
            half[o] += (gap + 1) // 2
        full[o] += (tokens - seen[o]) * steps
        half[o] += (tokens - seen[o]) * ((steps + 1) // 2)
    return full, half, repeats


def largest_counts(trace: Trace, coalition: Sequence[int] | None = None,
                   stays: bool = True) -> np.ndarray:
    """``K̄``: a bound on the largest count of any node's contributions over the hidden
    paths consistent with each observer's view (module docstring), ``(n,)`` by observer,
    or ``(1,)`` for a coalition.

    Parameters
    ----------
    trace
        The walk (one or more tokens).
    coalition
        Nodes observing as one.
    stays
        Whether the walk may keep the token for a step (self-moves, a lazy or Metropolis
        walk). Without, a run of ``L`` hidden positions holds at most ``⌈L/2⌉`` of a
        node's; a trace that repeats a holder anyway is read as ``stays``.
    """
    n = trace.n
    if coalition is None:
        ids, n_ids = np.arange(n, dtype=np.int64), n
    else:
        ids, n_ids = np.full(n, -1, np.int64), 1
        ids[coalition_members(coalition, n)] = 0
    if trace.holders.size == 0:
        return np.zeros(n_ids, np.int64)
    if stays:  # the runs of an observer are every position it does not hold
        held = trace.visits()
        own = held if coalition is None else held[ids >= 0].sum(keepdims=True)
        return trace.holders.size - own
    holders = np.ascontiguousarray(trace.holders).reshape(-1)
    full, half, repeats = _run_counts(holders, trace.steps, ids, n_ids)
    return full if repeats else half


def view_caps(trace: Trace, eps0: float, delta: float,
              coalition: Sequence[int] | None = None, stays: bool = True,
              target: float | None = None,
              noise_multiplier: float | None = None) -> np.ndarray:
    """Each observer's cap ``LDP(K̄(v))`` (the baseline's composition at the largest
    consistent count, :func:`largest_counts`; at the one δ ``target`` where given,
    :func:`~netdp.tracking.loss_table.ldp_at`): ``(n,)``, or ``(1,)`` for a coalition."""
    return ldp_at(eps0, delta, largest_counts(trace, coalition, stays), target,
                  noise_multiplier)


def cap_to_view(losses: PairLosses, trace: Trace, eps0: float, delta: float,
                coalition: Sequence[int] | None = None, stays: bool = True,
                target: float | None = None,
                noise_multiplier: float | None = None,
                in_place: bool = False) -> PairLosses:
    """Every pair's loss capped at its observer's :func:`view_caps`:
    ``min(ε_{u→v}, LDP(K̄(v)))``, both bounds on the loss of ``v``'s view, so the minimum
    is one too. One cap per observer: the base and every corrected pair of it take the
    same, so no pair is singled out and ``nodes`` is not needed. An unamplified pair
    (``inf``, a law too costly to compute) falls back to the cap. ``in_place``: the
    corrected pairs are capped in ``losses.values`` itself (a caller that drops the
    uncapped table: one copy of them at the peak, not two)."""
    if losses.split:
        raise ValueError("cap_to_view caps walk tables (a ring's path is public: no cap)")
    caps = view_caps(trace, eps0, delta, coalition, stays, target, noise_multiplier)
    cap = caps[np.where(losses.observers >= 0, losses.observers, 0)]
    out = losses.values if in_place else np.empty_like(losses.values)
    _capped(losses.values, losses.counts, cap, out)
    return dataclasses.replace(losses, base=np.minimum(losses.base, cap), values=out)


@nb.njit(cache=True)
def _capped(values, counts, cap, out):
    """``out``: ``values`` (grouped by observer, ``counts[o]`` of observer ``o``) each
    capped at its observer's ``cap``, without ``np.repeat``'s array of the caps."""
    i = 0
    for o in range(counts.size):
        for _ in range(counts[o]):
            out[i] = min(values[i], cap[o])
            i += 1


def chain_stays(P: Any) -> bool:
    """Whether a walk with transition matrix ``P`` (dense or scipy sparse) may keep the
    token for a step: any positive diagonal entry."""
    diagonal = P.diagonal() if hasattr(P, "diagonal") else np.diagonal(np.asarray(P))
    return bool((np.asarray(diagonal) > 0).any())
