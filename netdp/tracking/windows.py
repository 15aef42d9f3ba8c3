"""The windows of a walk: for each observer and each node, the stretches of the trace between
two visits of the observer, and what the observer can attribute in each (the first and last
window's key, the reports of the node it sees, the positions it cannot see)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from netdp.tracking._kernels import walk as kernels

END_NONE, END_OTHER, END_U = 0, 1, 2  # a window's end: not known, another node, the node
EXACT_R = 64  # windows up to this many reports get their own bound; larger ones share bins
R_RATIO = 1.05


def walk_windows(holders: np.ndarray, steps: int, n_ids: int, observers: np.ndarray):
    """Every window of every observer: (owner index, reports, first, last) arrays.

    ``first`` is the node whose report opens the window if the observer knows it (the
    node it handed the token to), ``last`` the node that handed the token back, ``-1``
    where the observer cannot tell.
    """
    start, pos = kernels.group_by_holder(holders, n_ids)
    owner = np.repeat(np.arange(n_ids), np.diff(start))
    token = pos // steps
    offset = pos - token * steps
    head = np.ones(pos.size, bool)
    head[1:] = (owner[1:] != owner[:-1]) | (token[1:] != token[:-1])
    tail = np.ones(pos.size, bool)
    tail[:-1] = head[1:]
    obs_index = np.full(n_ids, -1, np.int64)
    obs_index[observers] = np.arange(observers.size)
    padded = np.append(holders, -1)

    # cycles: consecutive holds of one observer in one token, with reports in between
    e = np.flatnonzero(~head)
    r_cyc = pos[e] - pos[e - 1] - 1
    keep = r_cyc > 0
    e, r_cyc = e[keep], r_cyc[keep]
    cyc = (owner[e], r_cyc, padded[pos[e - 1] + 1], padded[pos[e] - 1])
    # prefixes: the reports of a token before the observer first holds it
    e = np.flatnonzero(head & (offset > 0))
    pre = (owner[e], offset[e], np.full(e.size, -1), padded[pos[e] - 1])
    # suffixes: the reports after the observer last holds a token (the result is public)
    e = np.flatnonzero(tail & (offset < steps - 1))
    suf = (owner[e], steps - 1 - offset[e], padded[pos[e] + 1], np.full(e.size, -1))
    # tokens an observer never holds: all their reports reach it only through the result
    tokens = holders.size // steps
    seen = np.zeros((n_ids, tokens), bool)
    seen[owner, token] = True
    never_v, _ = np.nonzero(~seen)
    unseen = (never_v, np.full(never_v.size, steps), np.full(never_v.size, -1),
              np.full(never_v.size, -1))
    parts = [cyc, pre, suf, unseen]
    own = np.concatenate([p[0] for p in parts])
    sel = obs_index[own] >= 0
    cols = [np.concatenate([p[i] for p in parts])[sel] for i in range(4)]
    cols[0] = obs_index[cols[0]]
    order = np.argsort(cols[0], kind="stable")
    return tuple(np.ascontiguousarray(c[order]).astype(np.int64) for c in cols)


def window_key(first: int, last: int) -> int:
    """Key of a window towards a node: ``3 first + last``, each end :data:`END_NONE` (the
    observer does not know its holder: a prefix has no known first holder, a suffix no
    known last one, an unseen token neither), :data:`END_OTHER` (another node) or
    :data:`END_U` (the node itself)."""
    return 3 * first + last


def attributable(key: int, reports: int) -> int:
    """The node's positions the observer knows: its known ends (one position when the
    window has one report: then its first and last holder are the same)."""
    first, last = divmod(key, 3)
    return min(int(first == END_U) + int(last == END_U), reports)


def unknown_positions(key: int, reports: int) -> int:
    """Positions whose holder the observer does not know: ``r - 2`` in a cycle (none when
    ``r = 1``), ``r - 1`` in a prefix or a suffix, ``r`` in a token it never holds."""
    first, last = divmod(key, 3)
    return max(reports - int(first != END_NONE) - int(last != END_NONE), 0)


@dataclass(frozen=True)
class Windows:
    """Every window of every observer of a walk (:func:`walk_windows`), sorted by
    observer, with its shuffled ε: ``own`` (observer index), ``reports``, ``first``,
    ``last`` (``-1``: unknown), ``eps_s``; the view's ``n_ids``, ``observers`` and
    ``others`` (:func:`~netdp.tracking.loss_table.observer_view`)."""

    own: np.ndarray
    reports: np.ndarray
    first: np.ndarray
    last: np.ndarray
    eps_s: np.ndarray
    n_ids: int
    observers: np.ndarray
    others: np.ndarray
