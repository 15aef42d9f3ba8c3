"""Walks drawn again given what an observer sees of them: the hidden paths of an audit.

An observer ``v`` (or a coalition) of a walk sees the steps at which it holds the token,
the node that handed it the token and the node it hands it to. Everything between is
hidden: a stretch of steps whose holders avoid ``v``, from a known node ``a`` to a known
node ``b`` (or from the walk's start, or to its end). The trackers bound what ``v`` learns
when those paths are secret, so an audit of their figure must draw them again in every
trial, from the walk's law given ``v``'s view (spec network-dp.md §2.3: "the path is
secret").

Given its ends, a hidden stretch is a Markov bridge of the taboo chain ``Q`` (``P``
without the observers' rows and columns). With ``h_e(x) = P[x, b]`` on the last step and
``h_t = Q h_{t+1}`` before it (``h_e = 1`` where the walk simply ends), the next holder
is drawn with probability proportional to ``P[x_t, y] h_{t+1}(y)``: forward sampling of
the backward messages, exact for any walk given as a transition matrix.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from netdp.core.errors import check

MAX_NODES = 4096  # dense transition matrices


def known_steps(holders: np.ndarray, observers: Sequence[int]) -> np.ndarray:
    """``(steps,)`` mask of the steps ``v`` sees: its own, and one on either side."""
    own = np.isin(holders, observers)
    known = own.copy()
    known[1:] |= own[:-1]
    known[:-1] |= own[1:]
    return known


def resample(holders: np.ndarray, transition: np.ndarray, start: np.ndarray,
             observers: Sequence[int], rng: np.random.Generator, trials: int) -> np.ndarray:
    """``trials`` walks with the law of ``holders`` given the observers' view of it.

    Parameters
    ----------
    holders
        ``(steps,)`` one token's walk.
    transition
        ``(n, n)`` dense transition matrix ``P`` of the walk.
    start
        ``(n,)`` law of the first holder.
    observers
        The observing node, or a coalition's members.
    rng
        Draws the hidden holders.
    trials
        How many walks to draw.

    Returns
    -------
    ``(trials, steps)``: every walk agrees with ``holders`` on the steps the observers see
    (:func:`known_steps`), and its hidden holders avoid the observers.
    """
    holders = np.asarray(holders, dtype=np.int64)
    n = transition.shape[0]
    check(n <= MAX_NODES, "nodes", f"resampling hidden paths holds an n x n matrix: up to "
          f"{MAX_NODES} nodes (got {n})")
    out = np.tile(holders, (trials, 1))
    known = known_steps(holders, observers)
    allowed = np.ones(n, dtype=bool)
    allowed[list(observers)] = False
    hidden = np.flatnonzero(~known)
    if hidden.size == 0:
        return out
    breaks = np.flatnonzero(np.diff(hidden) > 1)
    for lo, hi in zip(np.r_[0, breaks + 1], np.r_[breaks, hidden.size - 1], strict=True):
        s, e = int(hidden[lo]), int(hidden[hi])
        out[:, s:e + 1] = _bridge(transition, start, allowed,
                                  int(holders[s - 1]) if s > 0 else None,
                                  int(holders[e + 1]) if e + 1 < holders.size else None,
                                  e - s + 1, rng, trials)
    return out


#: Seconds of one multiply-add of the bridges' backward pass (dense ``P @ h``) and of one
#: weight of the draws (a cumulative sum over n per trial and hidden step), halved as
#: :data:`netdp.tasks.base.HOP_SECONDS` is.
BRIDGE_SECONDS, DRAW_SECONDS = 1e-9, 5e-9


def resample_seconds(n: int, steps: int, tokens: int, trials: int) -> float:
    """Seconds :func:`resample` takes at most for ``tokens`` walks of ``steps`` steps on
    ``n`` nodes (every step hidden)."""
    return float(tokens) * steps * n * (BRIDGE_SECONDS * n + DRAW_SECONDS * trials)


def _bridge(P: np.ndarray, start: np.ndarray, allowed: np.ndarray, a: int | None,
            b: int | None, length: int, rng: np.random.Generator, trials: int) -> np.ndarray:
    """``(trials, length)`` paths of the walk through allowed nodes only, from ``a`` (or
    ``start``) into ``b`` (or free at the end)."""
    n = P.shape[0]
    h = np.empty((length, n))
    h[-1] = np.where(allowed, P[:, b] if b is not None else 1.0, 0.0)
    for t in range(length - 2, -1, -1):
        nxt = np.where(allowed, P @ h[t + 1], 0.0)
        top = nxt.max()
        check(top > 0, "walk", "the observer's view has no hidden path (inconsistent walk)")
        h[t] = nxt / top  # a scale per step: only proportions matter
    first = start if a is None else P[a]
    path = np.empty((trials, length), dtype=np.int64)
    path[:, 0] = _draw(np.broadcast_to(first * h[0], (trials, n)), rng)
    for t in range(1, length):
        path[:, t] = _draw(P[path[:, t - 1]] * h[t], rng)
    return path


def _draw(weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One index per row, with probability proportional to the row's weights."""
    cum = np.cumsum(weights, axis=1)
    u = rng.random(weights.shape[0]) * cum[:, -1]
    return np.minimum((cum <= u[:, None]).sum(axis=1), weights.shape[1] - 1)
