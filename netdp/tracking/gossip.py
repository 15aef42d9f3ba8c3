"""Gossip averaging with local noise (Muffliato) and its pairwise privacy losses.

Muffliato (Cyffers, Even, Bellet, Massoulié, "Muffliato: Peer-to-Peer Privacy
Amplification for Decentralized Optimization and Averaging", NeurIPS 2022, arXiv
2206.05091): every node u adds ``η_u ~ N(0, σ²)`` to its value once, then all nodes run
T synchronous gossip steps ``x ← W x`` (or the Chebyshev-accelerated recursion) with a
symmetric doubly stochastic gossip matrix W. Values lie in a range of width Δ and σ is in
units of Δ (spec ``network-dp.md`` §3.1).

Notation: ``z = x + η`` (the noisy values), ``A_t = W^t`` for plain gossip or
``A_t = P_t(W)`` for the accelerated one; the state after t steps is ``x_t = A_t z``. At
every step t = 0..T, node v receives ``x_t[w]`` from each neighbour ``w ∈ N(v)``.

Two pairwise accountings of the loss of u towards observer v, both of the form
``R(α) = α Δ² / (2σ²) · c[u, v]`` (RDP linear in α, converted to (ε, δ) by
:func:`netdp.tracking.sgd.epsilon_upper`):

``message-sum`` (:func:`message_sum`; the spec's formula, as in the paper)
    ``c = min(1, Σ_{t=0..T} Σ_{w ∈ N(v)} (A_t)_{wu}² / ‖(A_t)_{w,:}‖²)``: every message
    accounted as a separate Gaussian mechanism and the losses added up.
``joint`` (:func:`joint`; exact)
    ``c = ‖Π_v e_u‖²``, the exact Rényi divergence of v's whole view, a linear Gaussian
    mechanism (derivation in :func:`joint`).

**The message sum is not an upper bound on the joint view** (the spec says it is): the
messages share the same noise, so RDP composition, which needs fresh randomness per
mechanism, does not apply. Counterexample: the path 0 - 1 - 2 with Metropolis weights
(all entries 1/3 on row 1), T = 1, observer v = 0, source u = 2. Node 0 receives
``z_1`` at t = 0 and ``(z_0 + z_1 + z_2) / 3`` at t = 1; it knows its own ``z_0``, so it
computes ``z_2 = 3 x_1[1] - z_1 - z_0`` exactly: the joint loss is the LDP level
(``c = 1``), while the message sum gives ``c = 0 + (1/9) / (3/9) = 1/3``. Even without
its own value the joint view gives ``c = 1/2 > 1/3``. On the hypercube of dimension
d with T >= d, the joint loss at distance k is ``d / C(d, k)`` (1 at the antipode), not
decreasing with distance (``tests/privacy/test_gossip.py`` proves both). The message sum is
kept because it is the paper's figure; :func:`joint` is the sound one.

Computation paths (``method`` of :class:`GossipLosses`), which agree where they overlap:
``dense`` (all pairs), ``sources`` (given sources or observers), ``sampled`` (random ones,
mean over pairs with its standard error) and ``transitive`` (one node stands for all on a
vertex-transitive graph with an automorphism-invariant W, e.g. Metropolis or lazy weights
on the hypercube or the complete graph).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import sparse

from netdp.accounting import registry
from netdp.core.errors import check
from netdp.engine.averaging import check_steps, faulty_iterate
from netdp.tracking._modular_rank import full_rank_mod_p, rational_weights
from netdp.tracking.observer_map import map_observers

Role = Literal["source", "observer"]
Bound = Literal["message-sum", "joint", "secldp"]
Method = Literal["dense", "sources", "sampled", "transitive", "coalition"]

MAX_DENSE_NODES = 20000
"""Most nodes of the all-pairs paths (n × n float64 arrays: 3.2 GB each at the limit)."""
MAX_FAULTY_NODES = 2000
"""Largest n of :func:`realised_joint` (``n x n`` maps of the faulty rounds)."""
RANK_TOL = 1e-12
"""Singular values of a view below this fraction of its largest are rounding (:func:`joint`)."""
CLEAN_CUT = 1e-14
"""A certified cut drops no singular value above this (relative) ..."""
GAP = 1e3
"""... and keeps none below ``GAP * RANK_TOL``: else the view's rank is unsure."""


# ---------------------------------------------------------------------------------------
# Acceleration
# ---------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------
# The run and what each node sees
# ---------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------
# Pairwise losses
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class GossipLosses:
    """Pairwise loss coefficients ``c[u, v]`` of a gossip run: ``R(α) = α Δ²/(2σ²) c``.

    Attributes
    ----------
    values
        Shape ``(k, n)``, uncapped. Row i belongs to ``nodes[i]``: with ``role ==
        "source"`` entry ``[i, j]`` is the pair ``nodes[i] → j``; with ``"observer"``
        it is ``j → nodes[i]``. The entry ``[i, nodes[i]]`` is not a pair; every
        summary skips it.
    nodes
        The sources (message sum) or observers (joint) computed, shape ``(k,)``.
    role
        ``"source"`` or ``"observer"``.
    bound
        ``"message-sum"`` (the paper's per-message sum, not an upper bound) or
        ``"joint"`` (exact Rényi divergence of the observer's view).
    method
        ``"dense"``, ``"sources"``, ``"sampled"`` or ``"transitive"`` (one node stands for
        all: every row of the full matrix is a permutation of this one).
    steps
        T.
    gamma
        Chebyshev parameter, ``None`` for plain gossip (the joint loss does not depend
        on it).
    margin
        Joint only: ``(smallest kept, largest dropped)`` singular value of the views,
        relative to each view's largest.
    uncertified
        Joint only: observers whose view's rank floating point could not certify (no
        clean gap at the cut); their rows hold the sound value, 1 for every node within
        ``T + 1`` hops.
    full_rank
        Joint only: observers whose cut was not clean but whose view was proven to have
        full rank on the ball within ``T + 1`` hops, by its rank modulo a prime
        (:func:`full_rank_mod_p`): their rows, 1 on the ball, are exact.
    members
        A coalition observing as one (:func:`coalition`): its one row holds the loss of
        every other node towards it; ``nodes`` is then ``[-1]``.
    """

    values: np.ndarray
    nodes: np.ndarray
    role: Role
    bound: Bound
    method: Method
    steps: int
    gamma: float | None = None
    margin: tuple[float, float] | None = None
    uncertified: int = 0
    full_rank: int = 0
    members: np.ndarray | None = None

    @property
    def n(self) -> int:
        return int(self.values.shape[1])

    def pair_mask(self) -> np.ndarray:
        """``(k, n)`` booleans: which entries are pairs (u != v)."""
        mask = np.ones(self.values.shape, dtype=bool)
        if self.members is not None:
            mask[:, self.members] = False
            return mask
        mask[np.arange(len(self.nodes)), self.nodes] = False
        return mask

    def capped(self) -> np.ndarray:
        """``min(c, 1)``: a pair never loses more than the LDP level.

        Every message is a function of ``z = x + η``; only ``z_u = x_u + η_u`` depends on
        ``x_u`` and the other entries are independent of it, so v's view is a
        post-processing of the Gaussian mechanism ``x_u ↦ z_u``, whose Rényi divergence is
        ``α Δ²/(2σ²)`` (``c = 1``).
        """
        return np.minimum(self.values, 1.0)

    def matrix(self) -> np.ndarray:
        """The full ``n × n`` matrix ``C[u, v]`` (capped), diagonal NaN; all nodes only
        (``dense``, or ``sources`` with every node)."""
        check(len(self.nodes) == self.n and bool((np.sort(self.nodes) == np.arange(self.n)).all()),
              "sources", f"the full matrix needs every node (have {len(self.nodes)} of "
              f"{self.n}; method {self.method})")
        out = np.empty((self.n, self.n))
        out[self.nodes] = self.capped()
        if self.role == "observer":
            out = out.T.copy()
        np.fill_diagonal(out, np.nan)
        return out

    def rdp(self, alpha: float, sigma: float) -> np.ndarray:
        """RDP of order α per entry: ``α / (2σ²) · min(c, 1)`` (σ in units of Δ)."""
        check(alpha > 1, "alpha", f"must be > 1 (got {alpha})")
        check(sigma > 0, "sigma", f"must be > 0 (got {sigma})")
        return alpha / (2.0 * sigma**2) * self.capped()

    def epsilon(self, sigma: float, delta: float, accountant: str = "rdp") -> np.ndarray:
        """(ε, δ) per entry, by :func:`coefficient_epsilon` of ``min(c, 1)``."""
        return coefficient_epsilon(self.capped(), sigma, delta, accountant)

    def mean(self) -> float:
        """Mean of ``min(c, 1)`` over the pairs held (over all pairs for ``dense`` and
        ``transitive``)."""
        return float(self.capped()[self.pair_mask()].mean())

    def stderr(self) -> float:
        """Standard error of :meth:`mean` as an estimate of the all-pairs mean: 0 where
        exact (``dense``, ``transitive``), NaN for hand-picked ``sources``; for
        ``sampled``, the std of the k per-node means over ``sqrt(k)``, times the
        finite-population factor ``sqrt(1 - k/n)`` (nodes drawn without replacement)."""
        if self.method in ("dense", "transitive", "coalition"):
            return 0.0
        k = len(self.nodes)
        if self.method == "sources" or k < 2:
            return math.nan
        c = np.where(self.pair_mask(), self.capped(), 0.0)
        per_node = c.sum(axis=1) / (self.n - 1)
        return float(per_node.std(ddof=1) / math.sqrt(k) * math.sqrt(1.0 - k / self.n))


def coefficient_epsilon(c: np.ndarray, sigma: float, delta: float,
                        accountant: str = "rdp") -> np.ndarray:
    """(ε, δ) of loss coefficients ``c`` (at most 1; ``R(α) = α c / (2σ²)``, σ in units of
    the sensitivity).

    The accountant's :attr:`~netdp.accounting.registry.Entry.gaussian_shift` says how:
    ``renyi`` (``rdp``): the linear RDP curve ``ρ α``, ``ρ = c / (2σ²)``, converted
    (:func:`netdp.tracking.sgd.epsilon_upper`: ρ rounded up to a 0.6 % log grid).
    ``curve`` (``pld``): the exact privacy curve. The view of a linear Gaussian mechanism, whitened,
    is one Gaussian shift of ``μ = √c / σ`` (Balle and Wang, ICML 2018, Theorem 8), so ε
    is the exact ε(δ) of μ-Gaussian DP (:func:`netdp.accounting.gdp.gaussian_epsilon`):
    the tightest figure, below the RDP conversion.
    """
    check(sigma > 0, "sigma", f"must be > 0 (got {sigma})")
    offered = registry.names(protocol="gossip")
    check(accountant in offered, "accountant",
          f"gossip converts by {' or '.join(offered)} (got {accountant!r})")
    c = np.asarray(c, dtype=np.float64)
    if registry.entry(accountant).gaussian_shift == "curve":
        from netdp.accounting.gdp import gaussian_epsilon

        levels, inverse = np.unique(c, return_inverse=True)
        eps = np.asarray(gaussian_epsilon(np.sqrt(levels) / sigma, delta), dtype=float)
        return eps[inverse].reshape(c.shape)
    from netdp.tracking.sgd import epsilon_upper

    return epsilon_upper(c / (2.0 * sigma**2), delta)


def joint(W: Any, adj: sparse.csr_array, steps: int, *, observers: Any = None,
          samples: int | None = None, rng: np.random.Generator | None = None,
          transitive: bool = False, tol: float = RANK_TOL, noise: Any = None) -> GossipLosses:
    """Exact pairwise coefficients of the observer's whole view (sound; replaces the sum).

    Observer v knows its own noisy value ``z_v`` and receives ``x_t[w] = (A_t z)_w`` for
    ``w ∈ N(v)``, t = 0..T: a linear Gaussian mechanism ``y = M z = M x + M η``, with the
    rows of M the ``(A_t)_{w,:}`` and ``e_v``. Between the worlds ``x_u = 0`` and
    ``x_u = Δ`` the mean moves by ``δμ = Δ M e_u`` and the covariance ``σ² M Mᵀ`` is the
    same, so the Rényi divergence of order α is ``α/2 · δμᵀ (σ² M Mᵀ)⁺ δμ`` on the common
    support. ``δμ ∈ range(M) = range(M Mᵀ)`` always (it is M applied to a vector), so it
    never leaves the support (the divergence is never infinite), and
    ``δμᵀ (M Mᵀ)⁺ δμ = Δ² e_uᵀ Mᵀ (M Mᵀ)⁺ M e_u = Δ² ‖Π_v e_u‖²``, with ``Π_v`` the
    orthogonal projection onto the row space of M. Hence ``c[u, v] = ‖Π_v e_u‖² <= 1``.

    The row space is the block Krylov space ``K_v = span{W^t e_w : w ∈ N(v) ∪ {v},
    t <= T}``: v's own states are functions of its messages and ``z_v``, and the
    ``P_t`` of the accelerated recursion have degree exactly t (leading coefficient
    ``γ^{t-1}``), so they span the same polynomials as ``W^t``. **The joint loss of
    accelerated gossip equals that of plain gossip with the same T**, and this function
    takes no ``gamma``. (The same linear-systems view of gossip is taken by Koskela and
    Kulkarni, "Differential Privacy Analysis of Decentralized Gossip Averaging under
    Varying Threat Models", arXiv 2505.19969.)

    Computed per observer from the view's rows restricted to the ball of radius ``T + 1``
    around v (exactly zero beyond), by one SVD: ``O(T nnz_B b + (T+1) b m²)`` for
    ``b = d_v``, ``m`` the ball's size; all observers (``dense``) cost n times that.
    Singular values below ``tol`` times the largest are rounding and are cut;
    :attr:`GossipLosses.margin` says how clean the cut was. Where there is no clean gap
    (largest dropped above ``CLEAN_CUT`` or smallest kept below ``GAP · tol``) the rank
    cannot be certified in floating point, and the observer's row is the sound value,
    1 for every node within ``T + 1`` hops (counted in
    :attr:`GossipLosses.uncertified`).

    Parameters
    ----------
    W, adj, steps
        As in :func:`message_sum`.
    observers, samples, rng, transitive
        As ``sources`` ... ``transitive`` in :func:`message_sum`, for observers (columns):
        none: every observer; ``transitive``: one observer (checked against a second one).
    tol
        Rank cut on the residual singular values (W has norm <= 1).
    noise
        Correlated noise (:class:`~netdp.mechanisms.correlated_noise.CorrelatedNoise`),
        or ``None``: independent (:mod:`netdp.tracking.correlated_view`).
    """
    n = check_inputs(W, adj, steps)
    nodes, method = choose_nodes(n, observers, samples, rng, transitive)
    check(method != "dense" or n <= MAX_DENSE_NODES, "nodes",
          f"all pairs at once take n <= {MAX_DENSE_NODES} (got {n}); pass observers, samples "
          "or transitive")
    if method == "transitive":
        check_regular(adj)
        other = (int(nodes[0]) + n // 2 + 1) % n if n > 2 else 1 - int(nodes[0])
        nodes_run = np.array([int(nodes[0]), other])
    else:
        nodes_run = nodes
    shared = {"W": W, "adj": adj, "steps": steps, "tol": tol, "exact": rational_weights(W),
              "noise": noise}
    pieces = map_observers(joint_observer, shared, nodes_run, "exact gossip loss",
                           record=method != "transitive")
    values = np.empty((len(nodes_run), n))
    kept, dropped = math.inf, 0.0
    status: list[str] = []
    for i, (row, lo, hi, how) in enumerate(pieces):
        values[i] = row
        kept, dropped = min(kept, lo), max(dropped, hi)
        status.append(how)
    if method == "transitive":
        check_same_rows(values[0], values[1], int(nodes_run[0]), int(nodes_run[1]))
        values = values[:1]
        status = status[:1]
    return GossipLosses(values, nodes, "observer", "joint", method, steps, None,
                        (kept, dropped), status.count("uncertified"),
                        status.count("full-rank"))


def joint_observer(shared: Any, v: int) -> tuple[np.ndarray, float, float, str]:
    """One observer's row of :func:`joint` and its rank cut (a function of ``shared`` and
    ``v`` alone, :mod:`netdp.tracking.observer_map`)."""
    return _krylov_diag(shared["W"], shared["adj"], int(v), shared["steps"], shared["tol"],
                        shared["exact"], shared.get("noise"))


def realised_joint(W: Any, rounds: Any, observers: np.ndarray, method: Method = "dense",
                   tol: float = RANK_TOL, noise: Any = None) -> GossipLosses:
    """Exact pairwise coefficients of each observer's view of a gossip run with faults.

    As :func:`joint`, for the messages that did arrive: observer v knows ``z_v`` and the
    states its neighbours sent it that it received, each a row of the realised linear
    map of :func:`faulty_iterate` (built on the identity, so ``n x n`` per step: up to
    :data:`MAX_FAULTY_NODES` nodes). ``c[u, v] = ‖Π_v e_u‖²`` from one SVD of the rows,
    with the same rank cut; where the cut is not clean, the sound value 1 on every node
    the rows touch (counted in :attr:`GossipLosses.uncertified`). A node whose value
    reached v alone in some message (a row that is a unit vector) has ``c = 1``; a
    correlated ``noise`` as in :func:`view_coefficients`.
    """
    n = W.shape[0]
    check(n <= MAX_FAULTY_NODES, "nodes", f"the loss of a gossip run with faults holds n x n "
          f"maps: up to n = {MAX_FAULTY_NODES} (got {n}); pass --no-tracking")
    observers = np.asarray(observers, dtype=np.int64)
    incoming = [np.flatnonzero(rounds.dst == v) for v in observers]
    rows: list[list[np.ndarray]] = [[np.eye(1, n, int(v))] for v in observers]
    for t, X in enumerate(faulty_iterate(W, np.eye(n), rounds)):
        for i, edges_in in enumerate(incoming):
            got = edges_in[~rounds.lost[t, edges_in]]
            if got.size:
                rows[i].append(X[rounds.src[got]])
    values = np.zeros((observers.size, n))
    kept, dropped, unsure = math.inf, 0.0, 0
    for i, blocks in enumerate(rows):
        values[i], lo, hi, certified = view_coefficients(np.vstack(blocks), tol, noise,
                                                         observers[i:i + 1])
        kept, dropped = min(kept, lo), max(dropped, hi)
        unsure += not certified
    return GossipLosses(values, observers, "observer", "joint", method, rounds.steps, None,
                        (kept, dropped), unsure)


def view_coefficients(A: np.ndarray, tol: float = RANK_TOL, noise: Any = None,
                      known: Any = None) -> tuple[np.ndarray, float, float, bool]:
    """``‖Π e_u‖²`` for every column u of a view's rows ``A`` (``Π`` the projection onto
    their span), from one SVD of the columns the rows touch, with the rank cut of
    :func:`joint`; the smallest kept and largest dropped singular value (relative to the
    largest), and whether the cut was clean. Not clean: the sound value 1 on every
    touched column. A column that some row holds alone (a unit row: that value reached
    the observer by itself) is exactly 1; an untouched column is exactly 0. With a
    correlated ``noise`` (and the ``known`` observer or members, whose own rows ``A``
    holds): :func:`netdp.tracking.correlated_view.coefficients` of the kept rows (not
    clean: of every noisy value touched)."""
    out = np.zeros(A.shape[1])
    ball = np.flatnonzero(np.abs(A).max(axis=0) > 0)
    _, sv, vt = np.linalg.svd(A[:, ball], full_matrices=False)
    keep = sv > sv[0] * tol
    lo = float(sv[keep].min() / sv[0])
    hi = float(sv[~keep].max() / sv[0]) if (~keep).any() else 0.0
    clean = hi <= CLEAN_CUT and lo >= tol * GAP
    if noise is not None:
        from netdp.tracking.correlated_view import coefficients

        out[ball] = coefficients(vt[keep] if clean else None, ball, known, noise)
        return np.minimum(out, 1.0), lo, hi, clean
    if not clean:
        out[ball] = 1.0
        return out, lo, hi, False
    out[ball] = np.minimum(np.einsum("ij,ij->j", vt[keep], vt[keep]), 1.0)
    alone = (A != 0).sum(axis=1) == 1
    out[np.flatnonzero((A[alone] != 0).any(axis=0))] = 1.0
    return out, lo, hi, True


def coalition(W: Any, adj: sparse.csr_array, steps: int, members: Any, *,
              tol: float = RANK_TOL, noise: Any = None) -> GossipLosses:
    """Exact coefficients ``c[u, C] = ‖Π_C e_u‖²`` of a coalition C observing as one.

    The coalition pools its members' views: every member's own noisy value and every
    message any member receives, so its row space is the sum of theirs (the block
    Krylov space of ``C ∪ N(C)``), and the argument of :func:`joint` holds unchanged:
    ``D_α(u → C) = α/(2σ²) · c[u, C]``, never above the LDP level, never below any
    member's own loss. Same certification as :func:`joint` (one view: ``uncertified``
    and ``full_rank`` are 0 or 1).

    Parameters
    ----------
    W, adj, steps
        As in :func:`joint`.
    members
        The coalition's node ids (at least one, all distinct, fewer than n).
    tol, noise
        As in :func:`joint` (the members pool what they know of the noise).
    """
    n = check_inputs(W, adj, steps)
    ids = np.unique(np.asarray(members, dtype=np.int64))
    check(ids.size >= 1 and ids.size == np.asarray(members).size and ids.size < n
          and ids.min() >= 0 and ids.max() < n, "coalition",
          f"needs 1 to {n - 1} distinct node ids in 0..{n - 1}")
    values, lo, hi, how = _krylov_diag(W, adj, ids, steps, tol, rational_weights(W), noise)
    return GossipLosses(values[None, :], np.array([-1]), "observer", "joint", "coalition",
                        steps, None, (lo, hi), int(how == "uncertified"),
                        int(how == "full-rank"), ids)


def _krylov_diag(W: Any, adj: sparse.csr_array, v: Any, steps: int, tol: float,
                 exact: sparse.csr_array | None,
                 noise: Any = None) -> tuple[np.ndarray, float, float, str]:
    """``(‖Π_v e_u‖²)_u``, the smallest kept / largest dropped singular value of the
    view, relative to its largest, and how the rank was settled: ``certified`` (a clean
    cut), ``full-rank`` (proven modulo a prime from the rational weights ``exact``) or
    ``uncertified``. ``v`` is one observer or an array of them observing as one.

    The view's rows are ``e_v`` and ``(W^t)_{w,:}`` for ``w ∈ N(v)``, ``t <= T``; they
    vanish exactly beyond ``T + 1`` hops of v, so the rows are built on that ball only
    (``W`` restricted to it, row by row: ``R_{t+1} = R_t W``), which keeps rounding from
    ever reaching a node the view cannot depend on. The row space then comes from one SVD
    of the stacked rows with a cut relative to the largest singular value (``tol``), not
    from normalised Krylov residuals, whose small denominators amplified rounding. A
    correlated ``noise``: :func:`netdp.tracking.correlated_view.coefficients` of the row
    space (where not certified, of every noisy value on the ball).
    """
    from scipy.sparse import csgraph

    from netdp.tracking.correlated_view import coefficients

    n = W.shape[0]
    vs = np.atleast_1d(np.asarray(v, dtype=np.int64))
    neighbours = np.unique(np.concatenate([adj.indices[adj.indptr[x]:adj.indptr[x + 1]]
                                           for x in vs]))
    closed = np.union1d(neighbours, vs)
    if len(closed) == n:  # v sees every z_w at t = 0 (complete graph)
        every = np.ones(n) if noise is None else coefficients(None, np.arange(n), vs, noise)
        return every, math.inf, 0.0, "certified"
    hops = csgraph.shortest_path(adj, unweighted=True, directed=False, indices=vs)
    ball = np.flatnonzero(np.atleast_2d(hops).min(axis=0) <= steps + 1)
    local = sparse.csr_array(W)[ball][:, ball]
    where = np.searchsorted(ball, neighbours)
    rows = np.zeros((neighbours.size, ball.size))
    rows[np.arange(neighbours.size), where] = 1.0
    own = np.zeros((vs.size, ball.size))
    own[np.arange(vs.size), np.searchsorted(ball, vs)] = 1.0
    blocks = [own, rows]
    for _ in range(steps):
        rows = np.asarray((local.T @ rows.T).T)  # the rows of W^t, restricted to the ball
        blocks.append(rows)
    _, sv, vt = np.linalg.svd(np.vstack(blocks), full_matrices=False)
    cut = sv[0] * tol
    keep = sv > cut
    kept = float(sv[keep].min() / sv[0])
    dropped = float(sv[~keep].max() / sv[0]) if (~keep).any() else 0.0
    out = np.zeros(n)
    clean = dropped <= CLEAN_CUT and kept >= tol * GAP
    if noise is not None:
        out[ball] = coefficients(vt[keep] if clean else None, ball, vs, noise)
        how = "certified" if clean else "full-rank" if exact is not None \
            and full_rank_mod_p(exact, vs, ball, steps) else "uncertified"
        return np.minimum(out, 1.0), kept, dropped, how
    if not clean:
        # No clean gap at the cut: floating point cannot certify the view's rank, and in
        # exact arithmetic the missing directions may be there (a generic graph's view
        # reaches full rank on the ball once (T + 1) d_v >= its size, exposing every
        # node in it). Sound: every node within reach at the local level; exact when the
        # rank modulo a prime proves the view full on the ball.
        out[ball] = 1.0
        full = exact is not None and full_rank_mod_p(exact, vs, ball, steps)
        return out, kept, dropped, "full-rank" if full else "uncertified"
    out[ball] = np.einsum("ij,ij->j", vt[keep], vt[keep])
    out[closed] = 1.0  # seen in the clear at t = 0 (exactly 1, not 1 - rounding)
    return np.minimum(out, 1.0), kept, dropped, "certified"


# ---------------------------------------------------------------------------------------
# Summaries
# ---------------------------------------------------------------------------------------


def by_distance(losses: GossipLosses, distances: np.ndarray,
                values: np.ndarray | None = None) -> list[dict]:
    """Pairwise summary by hop distance (spec §3.3).

    Parameters
    ----------
    losses
        The coefficients.
    distances
        ``hop_distances(adj, losses.nodes)``: same shape as ``losses.values``.
    values
        What to summarise, same shape (default ``losses.capped()``; e.g.
        ``losses.epsilon(sigma, delta)``).

    Returns
    -------
    list of dict
        One ``{"distance", "pairs", "mean", "min", "max"}`` per distance >= 1, in order.
        ``pairs`` counts the ordered pairs the rows stand for: those held (``dense``,
        ``sources``, ``coalition``), every pair of the graph where one row stands for all
        (``transitive``), their estimate ``held · n / k`` for ``k`` sampled rows.
    """
    values = losses.capped() if values is None else np.asarray(values, dtype=np.float64)
    distances = np.asarray(distances)
    check(distances.shape == losses.values.shape and values.shape == losses.values.shape,
          "distances", f"expected shape {losses.values.shape} (got {distances.shape} and "
          f"{values.shape})")
    mask = losses.pair_mask() & np.isfinite(distances)
    d = distances[mask].astype(np.int64)
    x = values[mask]
    order = np.argsort(d, kind="stable")
    d, x = d[order], x[order]
    keys, starts, counts = np.unique(d, return_index=True, return_counts=True)
    if not len(keys):
        return []
    sums = np.add.reduceat(x, starts)
    mins = np.minimum.reduceat(x, starts)
    maxs = np.maximum.reduceat(x, starts)
    scale = losses.n / len(losses.nodes) if losses.method in ("transitive", "sampled") else 1
    return [{"distance": int(k), "pairs": int(round(c * scale)), "mean": float(s / c),
             "min": float(lo), "max": float(hi)}
            for k, c, s, lo, hi in zip(keys, counts, sums, mins, maxs, strict=True)]


# ---------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------


def unit_columns(n: int, cols: np.ndarray) -> np.ndarray:
    X = np.zeros((n, len(cols)))
    X[cols, np.arange(len(cols))] = 1.0
    return X


def check_inputs(W: Any, adj: sparse.csr_array | None, steps: int) -> int:
    check_steps(steps)
    check(len(W.shape) == 2 and W.shape[0] == W.shape[1] and W.shape[0] >= 2,
          "gossip-matrix", f"expected a square matrix of >= 2 nodes (got {W.shape})")
    n = int(W.shape[0])
    check(adj is None or adj.shape == (n, n), "gossip-matrix",
          f"a {n} x {n} matrix does not fit a graph of {adj.shape[0] if adj is not None else 0}"
          " nodes")
    return n


def choose_nodes(n: int, nodes: Any, samples: int | None, rng: np.random.Generator | None,
            transitive: bool) -> tuple[np.ndarray, Method]:
    given = sum(x is not None for x in (nodes, samples))
    check(given <= 1 and not (transitive and samples is not None), "sources",
          "give at most one of sources/observers, samples, transitive")
    if samples is not None:
        check(isinstance(samples, int | np.integer) and 1 <= samples <= n, "samples",
              f"must be in 1..{n} (got {samples!r})")
        check(isinstance(rng, np.random.Generator), "samples",
              "sampling needs rng, a numpy.random.Generator")
        assert rng is not None
        return np.sort(rng.choice(n, size=int(samples), replace=False)), "sampled"
    if nodes is not None:
        arr = np.atleast_1d(np.asarray(nodes))
        check(arr.ndim == 1 and arr.size >= 1 and np.issubdtype(arr.dtype, np.integer)
              and bool(((arr >= 0) & (arr < n)).all()) and len(np.unique(arr)) == arr.size,
              "sources", f"expected distinct node ids in 0..{n - 1}")
        arr = arr.astype(np.int64)
        return (arr[:1], "transitive") if transitive else (arr, "sources")
    if transitive:
        return np.zeros(1, dtype=np.int64), "transitive"
    return np.arange(n, dtype=np.int64), "dense"


def check_regular(adj: sparse.csr_array) -> None:
    deg = np.diff(adj.indptr)
    check(bool(deg.min() == deg.max()), "topology",
          "not vertex-transitive: the degrees differ; pass sources or samples instead")


def check_same_rows(a: np.ndarray, b: np.ndarray, u: int, other: int) -> None:
    ok = np.allclose(np.sort(np.delete(a, u)), np.sort(np.delete(b, other)), rtol=0,
                     atol=1e-10)
    check(bool(ok), "topology", f"not vertex-transitive for this gossip matrix: nodes {u} "
          f"and {other} have different losses; pass sources or samples instead")
