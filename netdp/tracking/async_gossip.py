"""The exact loss of each observer's view of partial or pairwise gossip, from the messages
that fired (:mod:`netdp.engine.async_gossip`).

Every schedule is linear: the states are ``x_k = B_k z`` with ``z = x + η`` the noisy
values and ``B_k`` the realised product of the steps so far (a partial round's matrix
``W_t``, or an exchange's ``I - ½ (e_i - e_j)(e_i - e_j)ᵀ``). A message from ``w`` at
``k`` carries ``(B_k)_{w,:} z``. Observer v (a coalition V: every member) knows its own
``z_v`` and receives the messages sent to it: a linear Gaussian view ``y = M z``, the rows
of M ``e_v`` and ``(B_k)_{w,:}`` for each message ``w -> v`` that happened. Its own states
add nothing: each is a combination of its previous state and the messages it just
received (in a round, ``x_{t+1}[v] = x_t[v] + Σ W_vw (x_t[w] - x_t[v])`` over the
messages that fired; in an exchange, the mean of its state and the one it received).

So, as for synchronous rounds (:func:`netdp.tracking.gossip.joint`), between
``x_u = 0`` and ``x_u = Δ`` the mean moves by ``Δ M e_u``, the covariance ``σ² M Mᵀ``
stays, and ``D_α = α Δ²/(2σ²) · c[u, v]`` with ``c[u, v] = ‖Π_v e_u‖²`` (``Π_v`` the
projection onto M's row space), never above the local level. The schedule is drawn
independently of the data: the loss is that of the view given the messages that
happened in the run (as for faults, per run).

Computation: the rows of the messages the observers receive, from the realised map
built on the identity (``n x n``, up to :data:`MAX_NODES` nodes): one sparse product per
round, or the compiled exchange loop on the identity; then one SVD per view with the
rank cut of :func:`netdp.tracking.gossip.view_coefficients`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from netdp.core.errors import check
from netdp.engine import async_gossip as AG
from netdp.engine.trace import GossipRounds
from netdp.tracking.gossip import RANK_TOL, GossipLosses, Method, view_coefficients

MAX_NODES = 2000
"""Largest n (the realised map is ``n x n``)."""


def sent_rows(W: Any, rounds: GossipRounds, keep: np.ndarray) -> np.ndarray:
    """``(keep.size, n)``: the row ``(B_k)_{w,:}`` that message ``keep[i]`` (an index into
    ``rounds.all_messages()``) carried, its sender ``w``, its round or tick ``k``."""
    n = AG.nodes_of(W)
    check(n <= MAX_NODES, "nodes", f"the exact loss of asynchronous or partial gossip holds "
          f"n x n maps: up to n = {MAX_NODES} (got {n}); pass --no-tracking")
    if isinstance(rounds, AG.PairwiseGossip):
        return AG.pairwise_states(rounds, np.eye(n), n, keep=keep, record=False)[1]
    when, src, _ = rounds.all_messages()
    out = np.empty((keep.size, n))
    weights = AG.edge_weights(W, rounds)
    B = np.eye(n)
    at = np.searchsorted(when[keep], np.arange(rounds.steps + 2))  # keep is in time order
    for t in range(rounds.steps + 1):
        mine = keep[at[t]:at[t + 1]]
        out[at[t]:at[t + 1]] = B[src[mine]]
        if t < rounds.steps and at[t + 1] < keep.size:
            B = np.asarray(AG.round_matrix(n, rounds, weights, t) @ B)
    return out


def view_rows(W: Any, rounds: GossipRounds, groups: list[np.ndarray]) -> list[np.ndarray]:
    """Each group's view ``M``: ``e_v`` for its members, then the rows of every message a
    member received, in time order."""
    n = AG.nodes_of(W)
    _, _, dst = rounds.all_messages()
    keep = np.flatnonzero(np.isin(dst, np.concatenate(groups)))
    rows = sent_rows(W, rounds, keep)
    order = np.argsort(dst[keep], kind="stable")  # each receiver's messages, in time order
    starts = np.searchsorted(dst[keep][order], np.arange(n + 1))
    out = []
    for g in groups:
        got = np.sort(np.concatenate([order[starts[v]:starts[v + 1]] for v in g]))
        own = np.zeros((g.size, n))
        own[np.arange(g.size), g] = 1.0
        out.append(np.vstack([own, rows[got]]))
    return out


def joint(W: Any, rounds: GossipRounds, observers: Any, method: Method = "dense",
          tol: float = RANK_TOL, noise: Any = None) -> GossipLosses:
    """Exact ``c[u, v] = ‖Π_v e_u‖²`` of each observer's view of one run of partial or
    pairwise gossip (module docstring). A view without a clean rank cut holds the sound
    value 1 on every node it touches (counted in ``uncertified``). A correlated ``noise``:
    :func:`netdp.tracking.correlated_view.coefficients` of each view."""
    nodes = np.asarray(observers, dtype=np.int64)
    groups = [nodes[i:i + 1] for i in range(nodes.size)]
    values, lo, hi, unsure = _coefficients(view_rows(W, rounds, groups), groups,
                                           AG.nodes_of(W), tol, noise)
    return GossipLosses(values, nodes, "observer", "joint", method, rounds.steps, None,
                        (lo, hi), unsure)


def coalition(W: Any, rounds: GossipRounds, members: Any,
              tol: float = RANK_TOL, noise: Any = None) -> GossipLosses:
    """Exact ``c[u, C]`` of a coalition C observing as one (every member's own value and
    every message a member received, pooled); one row, ``nodes`` ``[-1]``."""
    n = AG.nodes_of(W)
    ids = np.unique(np.asarray(members, dtype=np.int64))
    check(ids.size >= 1 and ids.size == np.asarray(members).size and ids.size < n
          and ids.min() >= 0 and ids.max() < n, "coalition",
          f"needs 1 to {n - 1} distinct node ids in 0..{n - 1}")
    values, lo, hi, unsure = _coefficients(view_rows(W, rounds, [ids]), [ids], n, tol, noise)
    return GossipLosses(values, np.array([-1]), "observer", "joint", "coalition",
                        rounds.steps, None, (lo, hi), unsure, 0, ids)


def _coefficients(views: list[np.ndarray], groups: list[np.ndarray], n: int, tol: float,
                  noise: Any) -> tuple[np.ndarray, float, float, int]:
    values = np.zeros((len(views), n))
    kept, dropped, unsure = math.inf, 0.0, 0
    for i, (A, group) in enumerate(zip(views, groups, strict=True)):
        values[i], lo, hi, certified = view_coefficients(A, tol, noise, group)
        kept, dropped = min(kept, lo), max(dropped, hi)
        unsure += not certified
    return values, kept, dropped, unsure
