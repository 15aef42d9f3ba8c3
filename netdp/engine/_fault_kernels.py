"""Compiled walk of one token with faults (numba; compiled once, cached on disk).

The same hand-offs as the event engine's Python path (:func:`netdp.engine.event_walk.
run_faulty`, which is this kernel's oracle in ``tests/test_faults.py``), for the runs
where tokens never wait for each other (no service time): each token walks on its own.
Every draw comes from arrays filled from the run's streams beforehand, in the order the
Python path draws them one by one, so both give the same walk, time for time.

The kernel stops at the start of a hop when a buffer of draws may run short, or when a
node's drawn sessions end before the time it asks about (the hop is then undone), and
says why; the caller draws more and calls it again from where it stopped.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from netdp.engine._kernels import graph_walk, weighted_walk

RING, COMPLETE, GRAPH = 0, 1, 2
DONE, MORE, GROW, CRASHED, NO_COPY = 0, 1, 2, 3, 4
SENT, RESENT, LOST, DUPLICATED, SKIPPED = 0, 1, 2, 3, 4
STEP, H, T, P_LOSS, P_DELAY, P_SKIP, NODE = 0, 1, 2, 3, 4, 5, 6  # the state vector


@nb.njit(cache=True, nogil=True)
def _route(kind, n, self_moves, indptr, indices, cum, rule, h, u):
    if kind == RING:
        return (h + 1) % n
    if kind == COMPLETE:
        if self_moves:
            return int(u[0] * n)
        return (h + 1 + int(u[0] * (n - 1))) % n
    out = np.empty(1, np.int64)
    if cum.size:  # weighted: cum holds each row's cumulative weights
        weighted_walk(indptr, indices, cum, h, u.reshape(1, u.size), rule, out)
    else:
        graph_walk(indptr, indices, h, u.reshape(1, u.size), rule, out)
    return out[0]


@nb.njit(cache=True, nogil=True)
def _flips(bounds, node, t):
    """How many session ends of ``node`` are at or before ``t``; -1 when its drawn
    sessions end before ``t`` (the caller must draw more)."""
    row = bounds[node]
    if row[row.size - 1] <= t:
        return -1
    return np.searchsorted(row, t, side="right")


@nb.njit(cache=True, nogil=True)
def _up(churn, bounds, up0, crash, node, t):
    """1 up, 0 down, -1 unknown (more sessions needed)."""
    if t >= crash[node]:
        return 0
    if not churn:
        return 1
    f = _flips(bounds, node, t)
    if f < 0:
        return -1
    return 1 if (up0[node] == (f % 2 == 0)) else 0


@nb.njit(cache=True, nogil=True)
def _next_up(churn, bounds, up0, crash, node, t):
    """The first time >= t that ``node`` is up (inf: never); -1.0: unknown."""
    if t >= crash[node]:
        return np.inf
    if not churn:
        return t
    f = _flips(bounds, node, t)
    if f < 0:
        return -1.0
    if up0[node] == (f % 2 == 0):
        return t
    end = bounds[node, f]
    return end if end < crash[node] else np.inf


@nb.njit(cache=True, nogil=True)
def _arrives(loss_p, loss_u, pl, churn, bounds, up0, crash, node, t):
    """Whether a message reaches ``node`` at ``t`` (1, 0; -1: more sessions needed), and
    the position in the loss draws after it: a draw only where messages can be lost."""
    if loss_p > 0:
        lost = loss_u[pl] < loss_p
        pl += 1
        if lost:
            return 0, pl
    return _up(churn, bounds, up0, crash, node, t), pl


@nb.njit(cache=True, nogil=True)
def walk(kind, n, self_moves, indptr, indices, cum, rule, steps, walk_u, first_lat,
         loss_p, loss_u, fresh_lat, skip_u, skip, retries, timeout,
         churn, bounds, up0, crash, slow, state, counts, holders, times, reached):
    """Walk one token from ``state`` (step ``STEP``, holder ``H`` at time ``T``, the buffer
    positions) until it is done, lost, or needs more draws or sessions; returns
    ``DONE``, ``CRASHED``, ``NO_COPY`` (``state[NODE]``: the receiver, ``state[T]``: when
    the sender gave up), ``MORE`` or ``GROW`` (``state[NODE]``: the node)."""
    need = 2 * (retries + 1)
    while True:
        i, h, t = int(state[STEP]), int(state[H]), state[T]
        pl, pd, ps = int(state[P_LOSS]), int(state[P_DELAY]), int(state[P_SKIP])
        reached[h] = True
        wake = _next_up(churn, bounds, up0, crash, h, t)
        if wake < 0:
            state[NODE] = h
            return GROW
        if wake == np.inf:
            state[T] = crash[h]
            return CRASHED
        t = wake
        holders[i], times[i] = h, t
        if i + 1 == steps:
            state[T] = t
            return DONE
        if (loss_p > 0 and loss_u.size - pl < need) or fresh_lat.size - pd < need or \
                (skip and skip_u.shape[0] - ps < retries + 1):
            state[T] = t
            return MORE
        nxt = _route(kind, n, self_moves, indptr, indices, cum, rule, h, walk_u[i])
        first = first_lat[i] * slow[h]
        saved = counts.copy()
        # the hand-off
        arrival, end, sends, send_t = np.inf, t, 0, t
        grow = -1
        if nxt == h:
            arrival = t + first
        else:
            while sends <= retries:
                reached[nxt] = True
                if skip:
                    up = _up(churn, bounds, up0, crash, nxt, send_t)
                    if up < 0:
                        grow = nxt
                        break
                    if up == 0:
                        counts[SKIPPED] += 1
                        sends += 1
                        nxt = _route(kind, n, self_moves, indptr, indices, cum, rule, h,
                                     skip_u[ps])
                        ps += 1
                        if nxt == h:
                            arrival = send_t + first
                            break
                        continue
                if sends == 0:
                    lat = first
                else:
                    lat = fresh_lat[pd] * slow[h]
                    pd += 1
                counts[SENT] += 1
                if sends > 0:
                    counts[RESENT] += 1
                sends += 1
                got = send_t + lat
                came, pl = _arrives(loss_p, loss_u, pl, churn, bounds, up0, crash, nxt, got)
                if came < 0:
                    grow = nxt
                    break
                if came == 0:
                    counts[LOST] += 1
                else:
                    if arrival == np.inf:
                        arrival = got
                    else:
                        counts[DUPLICATED] += 1
                    ack = got + fresh_lat[pd] * slow[nxt]
                    pd += 1
                    back, pl = _arrives(loss_p, loss_u, pl, churn, bounds, up0, crash, h, ack)
                    if back < 0:
                        grow = h
                        break
                    if back == 0:
                        counts[LOST] += 1
                    elif ack <= send_t + timeout:
                        end = ack
                        break
                nu = _next_up(churn, bounds, up0, crash, h, send_t + timeout)
                if nu < 0:
                    grow = h
                    break
                send_t = nu
                end = send_t
                if send_t == np.inf:
                    end = crash[h]
                    break
        if grow >= 0:  # undo the hop: the caller draws more sessions, then redoes it
            counts[:] = saved
            state[NODE] = grow
            state[T] = t
            return GROW
        state[P_LOSS], state[P_DELAY], state[P_SKIP] = pl, pd, ps
        if arrival == np.inf:
            state[NODE] = nxt
            state[T] = end
            return NO_COPY
        state[STEP], state[H], state[T] = i + 1, nxt, arrival
