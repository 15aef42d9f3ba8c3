"""The exact loss of each observer's view of gossip on a time-varying graph.

Round ``t`` uses the gossip matrix ``W_t := W_{s(t)}`` of the snapshot in force
(:mod:`netdp.engine.time_varying_gossip`), so the states are ``x_t = B_t z`` with the
realised products ``B_t = W_{t-1} ⋯ W_0`` (``B_0 = I``) and ``z = x + η`` the noisy values.
Observer v (or a coalition V observing as one) knows its own ``z_v`` and receives, at
every round ``t = 0..T``, ``x_t[w]`` from each neighbour ``w ∈ N_t(v)`` in that round's
snapshot. Its view is the linear Gaussian mechanism ``y = M z``, the rows of M being
``e_v`` and ``(B_t)_{w,:}`` for ``w ∈ N_t(v)``, ``t <= T``. Its own states add nothing:
``x_{t+1}[v] = W_t[v, v] x_t[v] + Σ_{w ∈ N_t(v)} W_t[v, w] x_t[w]`` is a combination of
what it already holds (by induction on t), and the messages of round t come from exactly
the neighbours that step uses.

Between ``x_u = 0`` and ``x_u = Δ`` the mean moves by ``Δ M e_u`` and the covariance
``σ² M Mᵀ`` stays, so, as in the static case (:func:`netdp.tracking.gossip.joint`),
``D_α = α Δ²/(2σ²) · c[u, v]`` with ``c[u, v] = e_uᵀ Mᵀ (M Mᵀ)⁺ M e_u = ‖Π_v e_u‖²``,
``Π_v`` the projection onto the row space of M: never above 1 (the local level), exactly
0 when column u of M is zero (u's value never reached v). Only the rows change: the
static view's ``(W^t)_{w,:}`` become the realised ``(B_t)_{w,:}``, with a neighbour set
that changes with t. (Building them by ``R ← R W_t`` from the right, as the static
code does for powers, would give ``W_0 ⋯ W_{t-1}``: the wrong order.)

Computation, per observer: the rows vanish beyond ``T + 1`` hops of v in the union of
the snapshots (every ``W_t`` lives on the union's edges), so they are built on that ball
of m nodes only: the block of round t as ``B_tᵀ E_t = W_0ᵀ (W_1ᵀ ⋯ (W_{t-1}ᵀ E_t))`` on
the unit columns ``E_t`` of ``N_t(v)`` (exact on the ball: t products reach at most
``t + 1 <= T + 1`` hops). Then one SVD of the rows with the static rank cut
(:func:`netdp.tracking.gossip.view_coefficients`). Cost per observer
``O(T²/2 · b · nnz_ball + k² m)`` for ``b`` neighbours per round and
``k = |V| + Σ_t |N_t(V)|`` rows; memory ``k m`` floats.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import sparse

from netdp.accounting._arrays import observer_bar
from netdp.core.errors import check
from netdp.engine.averaging import check_steps
from netdp.graphs.gossip_snapshots import SnapshotGossip
from netdp.tracking._modular_rank import MAX_RANK_BALL, PRIME, _insert, rational_weights
from netdp.tracking.gossip import (
    MAX_DENSE_NODES,
    RANK_TOL,
    GossipLosses,
    choose_nodes,
    view_coefficients,
)

EXACT_ROW = 8192
"""A residue matrix row with this many entries or more could round in float products."""


def joint(plan: SnapshotGossip, steps: int, *, observers: Any = None,
          samples: int | None = None, rng: np.random.Generator | None = None,
          tol: float = RANK_TOL) -> GossipLosses:
    """Exact pairwise coefficients ``c[u, v] = ‖Π_v e_u‖²`` of each observer's view of
    ``steps`` gossip rounds on a time-varying graph (the derivation: module docstring).

    Parameters
    ----------
    plan
        The per-snapshot gossip matrices (:func:`netdp.graphs.gossip_snapshots.gossip_plan`).
    steps
        T: messages at rounds ``0..T``, averaging steps ``0..T-1``.
    observers, samples, rng
        As in :func:`netdp.tracking.gossip.joint`: given observers, ``samples`` of them
        drawn with ``rng``, or (none) every observer.
    tol
        The rank cut (:func:`netdp.tracking.gossip.view_coefficients`).

    Returns
    -------
    GossipLosses
        ``role="observer"``, ``bound="joint"``. A view without a clean rank cut has the
        sound value 1 on every node it touches; it is counted in ``full_rank`` when its
        rank modulo a prime proves it full on those nodes (the 1s are then exact, the
        static tracker's certificate on the realised products), else in
        ``uncertified``.
    """
    check_steps(steps)
    n = plan.n
    nodes, method = choose_nodes(n, observers, samples, rng, False)
    check(method != "dense" or n <= MAX_DENSE_NODES, "nodes",
          f"all pairs at once take n <= {MAX_DENSE_NODES} (got {n}); pass observers or "
          "samples")
    views = _Views(plan, steps)
    values = np.empty((nodes.size, n))
    kept, dropped = math.inf, 0.0
    status: list[str] = []
    for i, v in enumerate(observer_bar(nodes, "exact time-varying gossip loss")):
        values[i], lo, hi, how = views.coefficients(np.array([int(v)]), tol)
        kept, dropped = min(kept, lo), max(dropped, hi)
        status.append(how)
    return GossipLosses(values, nodes, "observer", "joint", method, steps, None,
                        (kept, dropped), status.count("uncertified"),
                        status.count("full-rank"))


def coalition(plan: SnapshotGossip, steps: int, members: Any, *,
              tol: float = RANK_TOL) -> GossipLosses:
    """Exact coefficients ``c[u, C]`` of a coalition C observing as one on a time-varying
    graph: the rows of every member's view pooled (each member's ``e_v``, and ``(B_t)_{w,:}``
    for every neighbour ``w`` of a member in round t's snapshot); otherwise as
    :func:`joint`. One row; ``nodes`` is ``[-1]`` and ``members`` the coalition."""
    check_steps(steps)
    n = plan.n
    ids = np.unique(np.asarray(members, dtype=np.int64))
    check(ids.size >= 1 and ids.size == np.asarray(members).size and ids.size < n
          and ids.min() >= 0 and ids.max() < n, "coalition",
          f"needs 1 to {n - 1} distinct node ids in 0..{n - 1}")
    values, lo, hi, how = _Views(plan, steps).coefficients(ids, tol)
    return GossipLosses(values[None, :], np.array([-1]), "observer", "joint", "coalition",
                        steps, None, (lo, hi), int(how == "uncertified"),
                        int(how == "full-rank"), ids)


def view_matrix(plan: SnapshotGossip, steps: int, members: Any) -> tuple[np.ndarray, np.ndarray]:
    """The view of observer(s) ``members`` restricted to the nodes it can touch:
    ``(ball, A)``, ``A[:, j]`` the column of node ``ball[j]`` (every other column is 0)."""
    check_steps(steps)
    views = _Views(plan, steps)
    return views.rows(np.atleast_1d(np.asarray(members, dtype=np.int64)), views.transposed)


def view_rank_mod_p(plan: SnapshotGossip, steps: int, members: Any) -> int | None:
    """Rank modulo :data:`~netdp.tracking._modular_rank.PRIME` of the view of observer(s)
    ``members`` (a lower bound of its rational rank; equal to it but for a prime dividing
    a minor), ``None`` where some matrix has weights other than ``1/k``."""
    check_steps(steps)
    views = _Views(plan, steps)
    vs = np.atleast_1d(np.asarray(members, dtype=np.int64))
    _, A = views.rows(vs, views.transposed)
    return views.rank_mod_p(vs, np.abs(A).max(axis=0) > 0)


class _Views:
    """Builds the observers' views of one plan and T (in floats, or modulo a prime)."""

    def __init__(self, plan: SnapshotGossip, steps: int) -> None:
        self.plan, self.steps = plan, steps
        self.adjs = plan.round_adjacencies(steps)
        self.used = sorted({plan.snapshot(t) for t in range(steps)})
        self.transposed = {k: sparse.csr_array(plan.matrices[k].T) for k in self.used}
        self.residues: dict[int, sparse.csr_array] | None = None  # W_kᵀ mod p, lazily

    def coefficients(self, vs: np.ndarray, tol: float) -> tuple[np.ndarray, float, float,
                                                                 str]:
        """``(c, lo, hi, how)``: the coefficients of the view of ``vs``, the cut's margins,
        and ``certified``, ``full-rank`` (no clean cut, but full rank on the touched nodes
        proven modulo a prime: the 1s are exact) or ``uncertified`` (the 1s are sound)."""
        ball, A = self.rows(vs, self.transposed)
        local, lo, hi, certified = view_coefficients(A, tol)
        out = np.zeros(self.plan.n)
        out[ball] = local
        if certified:
            return out, lo, hi, "certified"
        full = self.full_rank_mod_p(vs, local > 0, A.shape[0])
        return out, lo, hi, "full-rank" if full else "uncertified"

    def rows(self, vs: np.ndarray, transposed: dict[int, sparse.csr_array],
             prime: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(ball, A)``: the nodes within ``T + 1`` hops of ``vs`` in the union, and the
        view's rows on them: ``e_v`` for v in ``vs``, then round by round ``(B_t)_{w,:}``
        for the neighbours w of ``vs`` in round t's snapshot (module docstring), from the
        matrices ``W_kᵀ`` given (residues: every product reduced modulo ``prime``)."""
        from scipy.sparse import csgraph

        plan, steps = self.plan, self.steps
        hops = np.atleast_2d(csgraph.shortest_path(plan.union, unweighted=True,
                                                   directed=False, indices=vs))
        ball = np.flatnonzero(hops.min(axis=0) <= steps + 1)
        m = ball.size
        local = transposed if m == plan.n else {k: transposed[k][ball][:, ball]
                                                for k in self.used}
        # one backward pass: at s = T..0 the unit columns of round s join, then every
        # column so far is multiplied by W_{s-1}ᵀ, so round t's end as W_0ᵀ ⋯ W_{t-1}ᵀ E_t
        cols = np.zeros((m, 0))
        for s in range(steps, -1, -1):
            adj = self.adjs[s]
            nb = np.unique(np.concatenate([adj.indices[adj.indptr[x]:adj.indptr[x + 1]]
                                           for x in vs]))
            cols = np.hstack([_units(m, np.searchsorted(ball, nb)).T, cols])
            if s:
                cols = np.asarray(local[plan.snapshot(s - 1)] @ cols)
                if prime is not None:
                    cols %= prime
        return ball, np.vstack([_units(m, np.searchsorted(ball, vs)), cols.T])

    def full_rank_mod_p(self, vs: np.ndarray, touched: np.ndarray, rows: int) -> bool:
        """Whether the view of ``vs`` has full rank on the nodes it touches (``touched``,
        a mask on its ball), proven by its rank modulo :data:`PRIME` (a nonzero minor
        modulo p is a nonzero minor over the rationals; see
        :func:`netdp.tracking._modular_rank.full_rank_mod_p`). False where it cannot be
        tried: some matrix not of weights ``1/k``, a ball over :data:`MAX_RANK_BALL`,
        fewer rows than touched nodes, or rows too dense for exact float products."""
        m = int(touched.sum())
        if m > MAX_RANK_BALL or rows < m:
            return False
        return self.rank_mod_p(vs, touched) == m

    def rank_mod_p(self, vs: np.ndarray, touched: np.ndarray) -> int | None:
        """Rank modulo :data:`PRIME` of the view of ``vs`` on the ``touched`` nodes of its
        ball (row blocks inserted into a reduced echelon basis until it is full);
        ``None`` where the matrices have no exact residues (:meth:`_residues`)."""
        if not self._residues():
            return None
        assert self.residues is not None
        _, A = self.rows(vs, self.residues, PRIME)
        A = A[:, touched]
        m = A.shape[1]
        basis, pivots = np.zeros((0, m)), np.zeros(0, dtype=np.int64)
        for lo in range(0, A.shape[0], 64):
            basis, pivots, _ = _insert(basis, pivots, A[lo:lo + 64], PRIME)
            if pivots.size == m:
                break
        return int(pivots.size)

    def _residues(self) -> bool:
        """Build ``W_kᵀ mod p`` for the snapshots used (once); whether every one is
        rational (an empty snapshot: the identity) and sparse enough for exact float
        products (fewer than :data:`EXACT_ROW` entries a row: sums of products of two
        residues below 2^53)."""
        if self.residues is None:
            out = {}
            for k in self.used:
                W = self.plan.matrices[k]
                exact = rational_weights(W) if self.plan.adjacencies[k].nnz else \
                    sparse.csr_array(sparse.identity(self.plan.n, dtype=np.int64,
                                                     format="csr"))
                if exact is None or np.diff(exact.indptr).max() >= EXACT_ROW:
                    self.residues = {}
                    return False
                out[k] = sparse.csr_array(exact.T.astype(np.float64))
            self.residues = out
        return bool(self.residues) or not self.used


def _units(m: int, at: np.ndarray) -> np.ndarray:
    """Rows ``e_j`` (length m) for j in ``at``."""
    out = np.zeros((at.size, m))
    out[np.arange(at.size), at] = 1.0
    return out
