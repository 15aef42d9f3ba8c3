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
:func:`netdp.privacy.sgd.epsilon_upper`):

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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from scipy import sparse

from netdp.errors import InputError, check
from netdp.privacy._arrays import observer_bar

if TYPE_CHECKING:
    from netdp.topology import Topology

Role = Literal["source", "observer"]
Bound = Literal["message-sum", "joint"]
Method = Literal["dense", "sources", "sampled", "transitive", "coalition"]

TOL = 1e-9
"""Tolerance of the checks on a user gossip matrix (symmetry, row sums)."""
DENSE_EIGEN_NODES = 3000
"""Up to this many nodes :func:`spectral_gap` uses a dense eigensolver."""
MAX_COMPLETE_NODES = 4096
"""Most nodes of a complete gossip graph (its matrices have n² entries)."""
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
TRANSITIVE_NAMES = frozenset({"hypercube", "cycle", "torus"})
"""Named topologies that are vertex-transitive (besides the complete graph)."""


# ---------------------------------------------------------------------------------------
# The graph and its gossip matrices
# ---------------------------------------------------------------------------------------


def adjacency(topology: Topology) -> sparse.csr_array:
    """The undirected 0/1 adjacency matrix of a gossip graph (no self-loops).

    Parameters
    ----------
    topology
        ``kind == "graph"`` (undirected) or ``"complete"`` (at most
        :data:`MAX_COMPLETE_NODES` nodes; self-moves play no role in gossip).

    Raises
    ------
    InputError
        ``topology`` for the directed ring or a directed graph (gossip averages over
        undirected edges), ``nodes`` for a complete graph too large to hold.
    """
    n = topology.n
    if topology.kind == "ring":
        raise InputError("topology", "the directed ring is not a gossip graph (gossip "
                         "averages over undirected edges); use complete or a named graph")
    check(not topology.directed, "topology",
          f"{topology.name} is directed; gossip needs undirected edges")
    if topology.kind == "complete":
        check(n <= MAX_COMPLETE_NODES, "nodes",
              f"a complete gossip graph takes at most {MAX_COMPLETE_NODES} nodes (got {n})")
        dense = np.ones((n, n)) - np.eye(n)
        return sparse.csr_array(dense)
    assert topology.indptr is not None and topology.indices is not None
    rows = np.repeat(np.arange(n), np.diff(topology.indptr))
    cols = np.asarray(topology.indices)
    off = rows != cols  # a self-loop is not a neighbour
    adj = sparse.csr_array((np.ones(int(off.sum())), (rows[off], cols[off])), shape=(n, n))
    adj.sum_duplicates()
    adj.sort_indices()
    check(abs(adj - adj.T).sum() == 0, "topology",
          f"{topology.name}: the adjacency is not symmetric; gossip needs undirected edges")
    return adj


def metropolis(topology: Topology) -> sparse.csr_array:
    """Metropolis-Hastings gossip matrix (spec §3.1).

    ``W_uv = 1 / (1 + max(d_u, d_v))`` on every edge, the diagonal completing each row to 1.
    Symmetric, doubly stochastic, nonnegative (Muffliato §3 uses it for arbitrary graphs).
    """
    adj = adjacency(topology)
    deg = np.asarray(adj.sum(axis=1)).ravel()
    rows, cols = adj.nonzero()
    weights = 1.0 / (1.0 + np.maximum(deg[rows], deg[cols]))
    return _with_diagonal(rows, cols, weights, topology.n)


def lazy(topology: Topology) -> sparse.csr_array:
    """Lazy uniform gossip matrix: ``W_uv = 1 / (2 d_max)`` on edges, diagonal completing.

    Symmetric, doubly stochastic, diagonal ``>= 1/2`` (so every eigenvalue is ``>= 0``).
    """
    adj = adjacency(topology)
    d_max = float(np.asarray(adj.sum(axis=1)).max())
    rows, cols = adj.nonzero()
    return _with_diagonal(rows, cols, np.full(len(rows), 0.5 / d_max), topology.n)


def _with_diagonal(rows: np.ndarray, cols: np.ndarray, weights: np.ndarray,
                   n: int) -> sparse.csr_array:
    off = sparse.csr_array((weights, (rows, cols)), shape=(n, n))
    diag = 1.0 - np.asarray(off.sum(axis=1)).ravel()
    out = sparse.csr_array(off + sparse.diags_array(diag, format="csr"))
    out.sort_indices()
    return out


def from_file(path: str | Path, topology: Topology) -> sparse.csr_array:
    """Read and check a user gossip matrix.

    Parameters
    ----------
    path
        ``.npy``: a dense n × n array. Anything else: text triplets ``u v w`` (whitespace
        or commas, ``#`` comments), nodes numbered ``0..n-1`` in the topology's order, each
        ``(u, v)`` at most once, every nonzero entry listed (both ``(u, v)`` and ``(v, u)``).
    topology
        The graph the matrix must live on.

    Raises
    ------
    InputError
        ``gossip-matrix``, with one line: the first failed check of: readable, n × n,
        finite, nonnegative, symmetric and rows summing to 1 (within :data:`TOL`), nonzero
        only on the graph's edges and the diagonal, connected (otherwise gossip does not
        reach consensus).
    """
    adj = adjacency(topology)
    n = topology.n
    path = Path(path)
    name = path.name
    if path.suffix == ".npy":
        try:
            dense = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as err:
            raise InputError("gossip-matrix", f"{name}: cannot read ({_one_line(err)})") from None
        check(dense.ndim == 2 and dense.shape == (n, n), "gossip-matrix",
              f"{name}: expected a {n} x {n} matrix for {topology.name} (got shape "
              f"{' x '.join(map(str, dense.shape))})")
        check(np.issubdtype(dense.dtype, np.number) and not np.iscomplexobj(dense),
              "gossip-matrix", f"{name}: expected real numbers (got {dense.dtype})")
        check(bool(np.isfinite(dense).all()), "gossip-matrix",
              f"{name}: every entry must be finite")
        matrix = sparse.csr_array(dense.astype(np.float64))
    else:
        matrix = _read_triplets(path, n)
    _check_matrix(matrix, adj, name)
    return matrix


def _read_triplets(path: Path, n: int) -> sparse.csr_array:
    name = path.name
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError("gossip-matrix", f"{name}: cannot read ({_one_line(err)})") from None
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    seen: dict[tuple[int, int], int] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].replace(",", " ").split()
        if not line:
            continue
        where = f"{name} line {lineno}"
        check(len(line) == 3, "gossip-matrix",
              f"{where}: expected 'u v w' (3 columns, got {len(line)})")
        try:
            u, v, w = int(line[0]), int(line[1]), float(line[2])
        except ValueError:
            raise InputError("gossip-matrix", f"{where}: expected two node numbers and a "
                             f"weight (got {_short(raw)!r})") from None
        check(0 <= u < n and 0 <= v < n, "gossip-matrix",
              f"{where}: nodes are numbered 0..{n - 1} (got {u} {v})")
        check(math.isfinite(w), "gossip-matrix", f"{where}: the weight must be finite")
        check((u, v) not in seen, "gossip-matrix",
              f"{where}: entry ({u}, {v}) already given on line {seen.get((u, v))}")
        seen[(u, v)] = lineno
        rows.append(u)
        cols.append(v)
        vals.append(w)
    check(bool(rows), "gossip-matrix", f"{name}: no entries")
    return sparse.csr_array((np.array(vals), (np.array(rows), np.array(cols))), shape=(n, n))


def _check_matrix(matrix: sparse.csr_array, adj: sparse.csr_array, name: str) -> None:
    from scipy.sparse import csgraph

    n = adj.shape[0]
    coo = sparse.coo_array(matrix)
    neg = coo.data < 0
    if neg.any():
        i = int(np.argmax(neg))
        raise InputError("gossip-matrix", f"{name}: entries must be >= 0 (entry "
                         f"({coo.row[i]}, {coo.col[i]}) = {coo.data[i]:.6g})")
    asym = sparse.coo_array(matrix - matrix.T)
    if asym.nnz and np.abs(asym.data).max() > TOL:
        i = int(np.argmax(np.abs(asym.data)))
        u, v = int(asym.row[i]), int(asym.col[i])
        raise InputError("gossip-matrix", f"{name}: must be symmetric within {TOL:g} "
                         f"(W[{u}, {v}] = {matrix[u, v]:.6g}, W[{v}, {u}] = "
                         f"{matrix[v, u]:.6g})")
    sums = np.asarray(matrix.sum(axis=1)).ravel()
    bad = np.abs(sums - 1.0) > TOL
    if bad.any():
        u = int(np.argmax(bad))
        raise InputError("gossip-matrix", f"{name}: every row must sum to 1 within {TOL:g} "
                         f"(row {u} sums to {sums[u]:.12g})")
    nonzero = coo.data != 0
    off = nonzero & (coo.row != coo.col)
    adj_coo = sparse.coo_array(adj)
    on_edge = np.isin(coo.row[off].astype(np.int64) * n + coo.col[off],
                      adj_coo.row.astype(np.int64) * n + adj_coo.col)
    if not on_edge.all():
        i = int(np.flatnonzero(off)[np.argmin(on_edge)])
        raise InputError("gossip-matrix", f"{name}: entry ({coo.row[i]}, {coo.col[i]}) = "
                         f"{coo.data[i]:.6g} is neither on an edge of the graph nor on the "
                         "diagonal")
    support = sparse.csr_array((np.ones(int(off.sum())), (coo.row[off], coo.col[off])),
                               shape=(n, n))
    parts, _ = csgraph.connected_components(support, directed=False)
    check(parts == 1, "gossip-matrix",
          f"{name}: its nonzero entries split the graph into {parts} parts; gossip would "
          "not reach consensus")


def _one_line(err: BaseException) -> str:
    return _short(" ".join(str(err).split()), 120)


def _short(text: str, limit: int = 60) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------------------------------
# Spectral gap, step count, acceleration
# ---------------------------------------------------------------------------------------


def spectral_gap(W: Any, dense_limit: int = DENSE_EIGEN_NODES) -> float:
    """``1 - λ_2(W)``, with ``λ_2`` the second largest eigenvalue of the symmetric W.

    Dense ``eigvalsh`` (O(n³)) up to ``dense_limit`` nodes, ARPACK ``eigsh`` (two largest
    algebraic eigenvalues, deterministic start) beyond.
    """
    n = W.shape[0]
    check(n >= 2, "gossip-matrix", f"needs at least 2 nodes (got {n})")
    if n <= dense_limit:
        from scipy.linalg import eigvalsh

        dense = W.toarray() if sparse.issparse(W) else np.asarray(W, dtype=np.float64)
        lam = eigvalsh(dense, subset_by_index=[n - 2, n - 1])
        return float(1.0 - lam[0])
    from scipy.sparse.linalg import eigsh

    v0 = np.random.default_rng(0).standard_normal(n)
    lam = eigsh(sparse.csr_array(W), k=2, which="LA", v0=v0, tol=0,
                return_eigenvectors=False)
    return float(1.0 - np.sort(lam)[0])


def default_steps(gap: float, sigma: float, n: int) -> int:
    """Muffliato's step count ``T = ⌈gap^{-1/2} · ln(n / σ² · max(1/4, σ²))⌉`` (spec §3.1).

    ``gap^{-1/2}`` is the rate of the accelerated (Chebyshev) iteration; plain gossip
    contracts by ``λ_2`` per step and is usually further from consensus after T steps.
    Hypercube of dimension 11 with Metropolis weights, σ = 1: gap = 1/6, T = 19.
    """
    check(isinstance(n, int | np.integer) and n >= 2, "nodes", f"must be >= 2 (got {n})")
    check(0.0 < gap <= 2.0, "gap", f"the spectral gap must be in (0, 2] (got {gap})")
    check(0.0 < sigma < math.inf, "sigma", f"must be > 0 and finite (got {sigma})")
    return max(1, math.ceil(gap**-0.5 * math.log(n / sigma**2 * max(0.25, sigma**2))))


def chebyshev_gamma(gap: float) -> float:
    """``γ = 2 (1 - sqrt(gap (1 - gap/4))) / (1 - gap/2)²`` (spec §3.1).

    Equal to ``2 / (1 + sqrt(1 - c²))`` with ``c = 1 - gap/2``: the optimal Chebyshev
    (heavy-ball) parameter for a spectrum in ``[-c, c]``; ``γ ∈ [1, 2)``.
    """
    check(0.0 < gap < 2.0, "gap", f"the spectral gap must be in (0, 2) (got {gap})")
    return 2.0 * (1.0 - math.sqrt(gap * (1.0 - gap / 4.0))) / (1.0 - gap / 2.0) ** 2


def _gamma(W: Any, accelerated: bool, gamma: float | None) -> float | None:
    if not accelerated:
        check(gamma is None, "gamma", "only an accelerated run takes gamma")
        return None
    if gamma is None:
        return chebyshev_gamma(spectral_gap(W))
    check(0.0 < gamma < 2.0, "gamma", f"must be in (0, 2) (got {gamma})")
    return float(gamma)


def _iterate(W: Any, X: np.ndarray, steps: int, gamma: float | None) -> Iterator[np.ndarray]:
    """``A_t X`` for t = 0..steps: ``W^t X``, or ``P_t(W) X`` with ``P_0 = I``, ``P_1 = W``,
    ``P_{t+1} = γ W P_t + (1 - γ) P_{t-1}`` when ``gamma`` is given."""
    prev, cur = None, X
    yield cur
    for _ in range(steps):
        nxt = W @ cur
        if gamma is not None and prev is not None:
            nxt *= gamma
            nxt += (1.0 - gamma) * prev
        prev, cur = cur, nxt
        yield cur


# ---------------------------------------------------------------------------------------
# The run and what each node sees
# ---------------------------------------------------------------------------------------


def gossip(W: Any, x0: np.ndarray, steps: int, accelerated: bool = False,
           gamma: float | None = None) -> np.ndarray:
    """Run T synchronous gossip steps from the (noisy) values ``x0``.

    Parameters
    ----------
    W
        Symmetric doubly stochastic n × n matrix (sparse or dense).
    x0
        Shape ``(n,)``, or ``(n, k)`` for k independent runs at once.
    steps
        T >= 0.
    accelerated
        Chebyshev acceleration (spec §3.1): ``x_1 = W x_0``,
        ``x_{t+1} = γ W x_t + (1 - γ) x_{t-1}``; the state after t steps is ``P_t(W) x_0``.
    gamma
        The acceleration parameter; default :func:`chebyshev_gamma` of
        :func:`spectral_gap` (an eigensolve: pass it when known).

    Returns
    -------
    np.ndarray
        The states ``x_0..x_T``, shape ``(steps + 1, *x0.shape)``. One sparse
        mat-vec per step.
    """
    _check_steps(steps)
    x0 = np.asarray(x0, dtype=np.float64)
    check(x0.ndim in (1, 2) and x0.shape[0] == W.shape[0], "x0",
          f"expected shape ({W.shape[0]},) or ({W.shape[0]}, k) (got {x0.shape})")
    g = _gamma(W, accelerated, gamma)
    out = np.empty((steps + 1, *x0.shape))
    for t, state in enumerate(_iterate(W, x0, steps, g)):
        out[t] = state
    return out


def received(states: np.ndarray, adj: sparse.csr_array, v: int) -> tuple[np.ndarray, np.ndarray]:
    """What node v receives (spec "What v sees"): ``x_t[w]`` from each neighbour w.

    Returns
    -------
    neighbours, values
        The neighbours of v (sorted), and ``values[t, j] = states[t, neighbours[j]]``
        for t = 0..T (v's own state excluded: it knows it).
    """
    neighbours = adj.indices[adj.indptr[v]:adj.indptr[v + 1]]
    return neighbours, states[:, neighbours]


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

    ``rdp``: the linear RDP curve ``ρ α``, ``ρ = c / (2σ²)``, converted
    (:func:`netdp.privacy.sgd.epsilon_upper`: ρ rounded up to a 0.6 % log grid).
    ``pld``: the exact privacy curve. The view of a linear Gaussian mechanism, whitened,
    is one Gaussian shift of ``μ = √c / σ`` (Balle and Wang, ICML 2018, Theorem 8), so ε
    is the exact ε(δ) of μ-Gaussian DP (:func:`netdp.privacy.accountants.gaussian_epsilon`):
    the tightest figure, below the RDP conversion.
    """
    check(sigma > 0, "sigma", f"must be > 0 (got {sigma})")
    check(accountant in ("rdp", "pld"), "accountant",
          f"gossip converts by rdp or pld (got {accountant!r})")
    c = np.asarray(c, dtype=np.float64)
    if accountant == "pld":
        from netdp.privacy.accountants import gaussian_epsilon

        levels, inverse = np.unique(c, return_inverse=True)
        eps = np.asarray(gaussian_epsilon(np.sqrt(levels) / sigma, delta), dtype=float)
        return eps[inverse].reshape(c.shape)
    from netdp.privacy.sgd import epsilon_upper

    return epsilon_upper(c / (2.0 * sigma**2), delta)


def message_sum(W: Any, adj: sparse.csr_array, steps: int, *, accelerated: bool = False,
                gamma: float | None = None, sources: Any = None, samples: int | None = None,
                rng: np.random.Generator | None = None, transitive: bool = False,
                block: int = 256) -> GossipLosses:
    """The paper's pairwise coefficients (spec §3.1), for every ordered pair u → v:

    ``C[u, v] = Σ_{t=0..T} Σ_{w ∈ N(v)} (A_t)_{wu}² / ‖(A_t)_{w,:}‖²`` (v excluded from
    the w's), with ``A_t = W^t``, or ``P_t(W)`` when accelerated (the polynomial actually
    applied). The term is u's weight in the message ``x_t[w]`` over that message's noise
    variance ``σ² ‖(A_t)_{w,:}‖²`` (the Rényi divergence of that one message, in units of
    ``α Δ²/(2σ²)``). Use :meth:`GossipLosses.capped` for ``min(C, 1)``. This sum is **not**
    an upper bound on the loss of v's joint view (module docstring): see :func:`joint`.
    On the hypercube it falls with distance for plain gossip; accelerated, it does not
    (far pairs get more than middle ones: ``P_t(W)`` has negative entries).

    Parameters
    ----------
    W, adj
        Gossip matrix and adjacency (:func:`adjacency`), n × n.
    steps
        T; the sum runs over t = 0..T (T + 1 states, t = 0 included: the neighbours of u
        receive ``z_u`` itself, so ``C = 1`` for them).
    accelerated, gamma
        As in :func:`gossip`.
    sources, samples, rng, transitive
        Which sources (rows) to compute, one of:

        - none of them: ``dense``, all pairs. Every ``A_t`` as a dense n × n array (W
          times the previous one: ``O(T n nnz(W))`` flops, ``O(T n²)`` elementwise work,
          about five n × n float64 arrays of memory); row norms are row sums of ``A_t²``.
        - ``sources`` (node ids): ``sources``. u's column ``A_t e_u`` by sparse mat-vecs
          (``O(T nnz)`` per source), but the row norms ``‖(A_t)_{w,:}‖²`` are needed for
          every w: computed exactly (:func:`row_norms`), which costs as much as the dense
          path (``O(T n nnz)`` flops) with ``O(n · block)`` memory, once for all sources.
        - ``samples`` = k with ``rng``: ``sampled``, k distinct sources drawn uniformly;
          :meth:`GossipLosses.mean` and :meth:`~GossipLosses.stderr` estimate the
          all-pairs mean. Same cost as ``sources``.
        - ``transitive=True``: ``transitive``, one source (``sources[0]``, default 0). The
          caller asserts that the graph is vertex-transitive and W invariant under its
          automorphisms (Metropolis or lazy weights on a hypercube, cycle, torus, complete
          graph: :func:`vertex_transitive`); then every row norm equals
          ``‖A_t e_u‖²`` and the cost is ``O(T nnz)``. Checked (necessary conditions):
          regular degrees, and a second source gives the same row norms and the same
          sorted row; otherwise ``InputError("topology", ...)``.
    block
        Sources per block of mat-vecs (memory ``O(n · block)``).
    """
    n = _check_inputs(W, adj, steps)
    g = _gamma(W, accelerated, gamma)
    nodes, method = _choose(n, sources, samples, rng, transitive)
    if method == "dense":
        check(n <= MAX_DENSE_NODES, "nodes", f"all pairs at once take n <= {MAX_DENSE_NODES} "
              f"(got {n}); pass sources, samples or transitive")
        values = _dense_sum(W, adj, steps, g)
    elif method == "transitive":
        values = _transitive_sum(W, adj, steps, g, int(nodes[0]))
    else:
        rn = row_norms(W, steps, accelerated=g is not None, gamma=g, block=block)
        values = np.concatenate([_source_rows(W, adj, nodes[i:i + block], steps, g, rn)
                                 for i in range(0, len(nodes), block)])
    return GossipLosses(values, nodes, "source", "message-sum", method, steps, g)


def row_norms(W: Any, steps: int, accelerated: bool = False, gamma: float | None = None,
              block: int = 256) -> np.ndarray:
    """``‖(A_t)_{w,:}‖²`` for t = 0..T and every w, exactly: shape ``(steps + 1, n)``.

    ``A_t`` is symmetric, so this is the squared norm of its column ``A_t e_w``
    (``(W^{2t})_{ww}`` for plain gossip). Computed on blocks of unit vectors: ``O(T n nnz)``
    flops, ``O(n · block)`` memory.
    """
    n = _check_inputs(W, None, steps)
    g = _gamma(W, accelerated, gamma)
    out = np.empty((steps + 1, n))
    for start in range(0, n, block):
        cols = np.arange(start, min(n, start + block))
        for t, Y in enumerate(_iterate(W, _units(n, cols), steps, g)):
            out[t, cols] = np.einsum("ij,ij->j", Y, Y)
    return out


def _dense_sum(W: Any, adj: sparse.csr_array, steps: int, gamma: float | None) -> np.ndarray:
    n = W.shape[0]
    S = np.zeros((n, n))  # S[w, u] = Σ_t (A_t)_{wu}² / ‖(A_t)_{w,:}‖²
    buf = np.empty((n, n))
    for A in _iterate(W, np.eye(n), steps, gamma):
        np.square(A, out=buf)
        norms = buf.sum(axis=1)  # row norms, from the rows themselves
        np.divide(buf, norms[:, None], out=buf, where=norms[:, None] > 0)
        buf[norms == 0] = 0.0  # a message with no noise is a constant: no information
        S += buf
    del buf, A  # the iteration's arrays go before the last product
    out = adj @ S  # out[v, u] = Σ_{w ∈ N(v)} S[w, u] = C[u, v]
    del S
    return out.T


def _source_rows(W: Any, adj: sparse.csr_array, nodes: np.ndarray, steps: int,
                 gamma: float | None, norms: np.ndarray) -> np.ndarray:
    n = W.shape[0]
    S = np.zeros((n, len(nodes)))
    for t, Y in enumerate(_iterate(W, _units(n, nodes), steps, gamma)):
        rn = norms[t][:, None]
        S += np.divide(Y * Y, rn, out=np.zeros_like(Y), where=rn > 0)
    return np.ascontiguousarray((adj @ S).T)


def _transitive_sum(W: Any, adj: sparse.csr_array, steps: int, gamma: float | None,
                    u: int) -> np.ndarray:
    n = W.shape[0]
    _check_regular(adj)
    other = (u + n // 2 + 1) % n if n > 2 else 1 - u
    cols = np.array([u, other])
    norms = np.empty((steps + 1, 2))
    for t, Y in enumerate(_iterate(W, _units(n, cols), steps, gamma)):
        norms[t] = np.einsum("ij,ij->j", Y, Y)
    check(bool(np.allclose(norms[:, 0], norms[:, 1], rtol=1e-12, atol=0)), "topology",
          f"not vertex-transitive for this gossip matrix: nodes {u} and {other} have "
          "different row norms; pass sources or samples instead")
    rn = np.repeat(norms[:, :1], n, axis=1)  # ‖(A_t)_{w,:}‖² is the same for every w
    rows = _source_rows(W, adj, cols, steps, gamma, rn)
    _check_same_rows(rows[0], rows[1], u, other)
    return rows[:1]


def joint(W: Any, adj: sparse.csr_array, steps: int, *, observers: Any = None,
          samples: int | None = None, rng: np.random.Generator | None = None,
          transitive: bool = False, tol: float = RANK_TOL) -> GossipLosses:
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
    """
    n = _check_inputs(W, adj, steps)
    nodes, method = _choose(n, observers, samples, rng, transitive)
    check(method != "dense" or n <= MAX_DENSE_NODES, "nodes",
          f"all pairs at once take n <= {MAX_DENSE_NODES} (got {n}); pass observers, samples "
          "or transitive")
    if method == "transitive":
        _check_regular(adj)
        other = (int(nodes[0]) + n // 2 + 1) % n if n > 2 else 1 - int(nodes[0])
        nodes_run = np.array([int(nodes[0]), other])
    else:
        nodes_run = nodes
    values = np.empty((len(nodes_run), n))
    kept, dropped = math.inf, 0.0
    status: list[str] = []
    exact = rational_weights(W)
    for i, v in enumerate(observer_bar(nodes_run, "exact gossip loss")):
        values[i], lo, hi, how = _krylov_diag(W, adj, int(v), steps, tol, exact)
        kept, dropped = min(kept, lo), max(dropped, hi)
        status.append(how)
    if method == "transitive":
        _check_same_rows(values[0], values[1], int(nodes_run[0]), int(nodes_run[1]))
        values = values[:1]
        status = status[:1]
    return GossipLosses(values, nodes, "observer", "joint", method, steps, None,
                        (kept, dropped), status.count("uncertified"),
                        status.count("full-rank"))


def faulty_iterate(W: Any, X: np.ndarray, rounds: Any) -> Iterator[np.ndarray]:
    """``X_t`` for t = 0..steps of plain gossip with the rounds' faults: a receiver that
    misses a message uses the last value it got from that sender (its own current state
    before the first), and a frozen node keeps its state. Without a fault this is
    ``W^t X``.

    ``x_{t+1}[i] = W_ii x_t[i] + Σ_j W_ij y_t[j → i]``, ``y`` the delivered or the stale
    value. The weights of every row still sum to 1, so the states stay in the range of
    the values, but the columns no longer do: the mean of the states drifts towards the
    nodes whose messages got through, which is the bias of this rule.
    """
    W = sparse.csr_array(W)
    n = W.shape[0]
    src, dst = rounds.src, rounds.dst
    weight = np.asarray(W[dst, src]).ravel()
    spread = sparse.csr_array((weight, (dst, np.arange(src.size))), shape=(n, src.size))
    diag = W.diagonal()
    X = np.asarray(X, dtype=np.float64)
    cols = (slice(None),) + (None,) * (X.ndim - 1)
    last = np.zeros((src.size, *X.shape[1:]))
    got = np.zeros(src.size, dtype=bool)
    yield X
    for t in range(rounds.steps):
        lost = rounds.lost[t]
        stale = np.where(got[cols], last, X[dst])
        y = np.where(lost[cols], stale, X[src])
        last, got = np.where(lost[cols], last, y), got | ~lost
        new = diag[cols] * X + spread @ y
        frozen = rounds.frozen[t]
        new[frozen] = X[frozen]
        X = new
        yield X


def faulty_gossip(W: Any, x0: np.ndarray, rounds: Any) -> np.ndarray:
    """The states ``x_0..x_T`` of plain gossip with the rounds' faults
    (:func:`faulty_iterate`), shape ``(steps + 1, *x0.shape)``."""
    return np.stack(list(faulty_iterate(W, x0, rounds)))


def realised_joint(W: Any, rounds: Any, observers: np.ndarray, method: Method = "dense",
                   tol: float = RANK_TOL) -> GossipLosses:
    """Exact pairwise coefficients of each observer's view of a gossip run with faults.

    As :func:`joint`, for the messages that did arrive: observer v knows ``z_v`` and the
    states its neighbours sent it that it received, each a row of the realised linear
    map of :func:`faulty_iterate` (built on the identity, so ``n x n`` per step: up to
    :data:`MAX_FAULTY_NODES` nodes). ``c[u, v] = ‖Π_v e_u‖²`` from one SVD of the rows,
    with the same rank cut; where the cut is not clean, the sound value 1 on every node
    the rows touch (counted in :attr:`GossipLosses.uncertified`). A node whose value
    reached v alone in some message (a row that is a unit vector) has ``c = 1``.
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
        A = np.vstack(blocks)
        ball = np.flatnonzero(np.abs(A).max(axis=0) > 0)
        _, sv, vt = np.linalg.svd(A[:, ball], full_matrices=False)
        keep = sv > sv[0] * tol
        lo = float(sv[keep].min() / sv[0])
        hi = float(sv[~keep].max() / sv[0]) if (~keep).any() else 0.0
        kept, dropped = min(kept, lo), max(dropped, hi)
        if hi > CLEAN_CUT or lo < tol * GAP:
            values[i, ball] = 1.0
            unsure += 1
            continue
        values[i, ball] = np.minimum(np.einsum("ij,ij->j", vt[keep], vt[keep]), 1.0)
        alone = (A != 0).sum(axis=1) == 1
        values[i, np.flatnonzero((A[alone] != 0).any(axis=0))] = 1.0
    return GossipLosses(values, observers, "observer", "joint", method, rounds.steps, None,
                        (kept, dropped), unsure)


def coalition(W: Any, adj: sparse.csr_array, steps: int, members: Any, *,
              tol: float = RANK_TOL) -> GossipLosses:
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
    tol
        As in :func:`joint`.
    """
    n = _check_inputs(W, adj, steps)
    ids = np.unique(np.asarray(members, dtype=np.int64))
    check(ids.size >= 1 and ids.size == np.asarray(members).size and ids.size < n
          and ids.min() >= 0 and ids.max() < n, "coalition",
          f"needs 1 to {n - 1} distinct node ids in 0..{n - 1}")
    values, lo, hi, how = _krylov_diag(W, adj, ids, steps, tol, rational_weights(W))
    return GossipLosses(values[None, :], np.array([-1]), "observer", "joint", "coalition",
                        steps, None, (lo, hi), int(how == "uncertified"),
                        int(how == "full-rank"), ids)


def _krylov_diag(W: Any, adj: sparse.csr_array, v: Any, steps: int, tol: float,
                 exact: sparse.csr_array | None) -> tuple[np.ndarray, float, float, str]:
    """``(‖Π_v e_u‖²)_u``, the smallest kept / largest dropped singular value of the
    view, relative to its largest, and how the rank was settled: ``certified`` (a clean
    cut), ``full-rank`` (proven modulo a prime from the rational weights ``exact``) or
    ``uncertified``. ``v`` is one observer or an array of them observing as one.

    The view's rows are ``e_v`` and ``(W^t)_{w,:}`` for ``w ∈ N(v)``, ``t <= T``; they
    vanish exactly beyond ``T + 1`` hops of v, so the rows are built on that ball only
    (``W`` restricted to it, row by row: ``R_{t+1} = R_t W``), which keeps rounding from
    ever reaching a node the view cannot depend on. The row space then comes from one SVD
    of the stacked rows with a cut relative to the largest singular value (``tol``), not
    from normalised Krylov residuals, whose small denominators amplified rounding.
    """
    from scipy.sparse import csgraph

    n = W.shape[0]
    vs = np.atleast_1d(np.asarray(v, dtype=np.int64))
    neighbours = np.unique(np.concatenate([adj.indices[adj.indptr[x]:adj.indptr[x + 1]]
                                           for x in vs]))
    closed = np.union1d(neighbours, vs)
    if len(closed) == n:  # v sees every z_w at t = 0 (complete graph)
        return np.ones(n), math.inf, 0.0, "certified"
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
    if dropped > CLEAN_CUT or kept < tol * GAP:
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


PRIME = 1_048_573
"""The largest prime below 2^20: products of two residues and sums of 2^12 of them stay
exact in float64, so the modular matrix products run on BLAS."""
MAX_RANK_BALL = 5000
"""Largest ball (nodes within ``T + 1`` hops) on which :func:`full_rank_mod_p` runs."""


def rational_weights(W: Any, prime: int = PRIME) -> sparse.csr_array | None:
    """The gossip matrix as residues modulo ``prime``, where its weights are the rationals
    they stand for: every off-diagonal weight ``1/k`` for an integer k (Metropolis
    ``1/(1 + max(d_u, d_v))``, lazy ``1/(2 d_max)``, or a user file of such weights),
    the diagonal ``1 - Σ`` of its row; ``None`` otherwise.

    Parameters
    ----------
    W
        The float gossip matrix.
    prime
        The modulus (larger than every k).
    """
    M = sparse.csr_array(W)
    rows = np.repeat(np.arange(M.shape[0]), np.diff(M.indptr))
    off = rows != M.indices
    w = M.data[off]
    k = np.rint(1.0 / w)
    if w.size == 0 or not np.all((k >= 1) & (k < prime) & (1.0 / k == w)):
        return None
    denominators, which = np.unique(k, return_inverse=True)
    inv = np.array([pow(int(x), prime - 2, prime) for x in denominators], dtype=np.int64)
    residues = inv[which]
    off_sum = np.zeros(M.shape[0], dtype=np.int64)
    np.add.at(off_sum, rows[off], residues)
    data = np.empty(M.data.size, dtype=np.int64)
    data[off] = residues
    diag_rows = rows[~off]
    data[~off] = (1 - off_sum[diag_rows]) % prime
    exact = sparse.csr_array((data, M.indices.copy(), M.indptr.copy()), shape=M.shape)
    missing = np.setdiff1d(np.arange(M.shape[0]), diag_rows)
    if missing.size and np.any(off_sum[missing] % prime != 1):
        return None  # a row without a stored diagonal whose weights do not sum to 1
    return exact


def full_rank_mod_p(exact: sparse.csr_array, v: Any, ball: np.ndarray, steps: int,
                    prime: int = PRIME) -> bool:
    """Whether observer v's view has full rank on ``ball`` (the nodes within ``T + 1``
    hops), proven by its rank modulo ``prime`` (:func:`view_rank_mod_p`).

    Reducing modulo p (every denominator of W prime to p) is a ring map, so a nonzero
    minor modulo p is a nonzero minor over the rationals: rank mod p <= rank. Full rank
    modulo p therefore proves that the row space is the whole ball, so
    ``c[u, v] = ‖Π_v e_u‖² = 1`` exactly for every u in it. A rank below full proves
    nothing (p may divide a minor): False. Skipped (False) on a ball above
    :data:`MAX_RANK_BALL` nodes or with fewer rows than nodes.
    """
    m = ball.size
    vs = np.atleast_1d(np.asarray(v, dtype=np.int64))
    degree = int((exact.indptr[vs + 1] - exact.indptr[vs]).sum())  # with diagonals: more
    if m > MAX_RANK_BALL or vs.size + degree * (steps + 1) < m:
        return False
    return view_rank_mod_p(exact, v, ball, steps, prime) == m


def view_rank_mod_p(exact: sparse.csr_array, v: Any, ball: np.ndarray, steps: int,
                    prime: int = PRIME) -> int:
    """Rank modulo ``prime`` of observer v's view restricted to ``ball``: the rows
    ``e_v`` and ``(W^t)_{w,:}``, ``w ∈ N(v)``, ``t <= T``, of the rational W whose
    residues are ``exact`` (:func:`rational_weights`).

    The rows are reduced one step t at a time against a reduced echelon basis (BLAS
    products, exact in float64 below 2^53); it stops when the basis spans the ball, or
    when a whole step adds nothing (the Krylov space is then invariant under W).
    """
    m = ball.size
    vs = np.atleast_1d(np.asarray(v, dtype=np.int64))
    local = exact[ball][:, ball].astype(np.float64)
    adjacent = np.unique(np.concatenate([exact.indices[exact.indptr[x]:exact.indptr[x + 1]]
                                         for x in vs]))
    neighbours = np.searchsorted(ball, np.setdiff1d(adjacent, vs))
    rows = np.zeros((neighbours.size, m))
    rows[np.arange(neighbours.size), neighbours] = 1.0
    start = np.zeros((vs.size, m))
    start[np.arange(vs.size), np.searchsorted(ball, vs)] = 1.0
    basis, pivots, _ = _insert(np.zeros((0, m)), np.zeros(0, dtype=np.int64), start, prime)
    for _ in range(steps + 1):
        basis, pivots, grew = _insert(basis, pivots, rows, prime)
        if pivots.size == m or not grew:
            break
        rows = np.asarray(local.T @ rows.T).T % prime  # the next step's rows, mod p
    return int(pivots.size)


def _mulmod(a: np.ndarray, b: np.ndarray, prime: int) -> np.ndarray:
    """``a @ b mod p`` exactly in float64: the inner dimension in chunks of 2^12."""
    out = np.zeros((a.shape[0], b.shape[1]))
    for lo in range(0, a.shape[1], 4096):
        out = (out + a[:, lo:lo + 4096] @ b[lo:lo + 4096]) % prime
    return out


def _insert(basis: np.ndarray, pivots: np.ndarray, rows: np.ndarray,
            prime: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """Add a block of ``rows`` to a reduced row echelon basis modulo ``prime``: the new
    basis, its pivot columns and whether it grew."""
    if pivots.size:  # the block against the basis: zero on its pivots
        rows = (rows - _mulmod(rows[:, pivots], basis, prime)) % prime
    new: list[np.ndarray] = []
    cols: list[int] = []
    for r in rows:  # reduced echelon form of the block itself (a few rows)
        for c, q in zip(cols, new, strict=True):
            if r[c]:
                r = (r - r[c] * q) % prime
        nz = np.flatnonzero(r)
        if not nz.size:
            continue
        col = int(nz[0])
        r = r * pow(int(r[col]), prime - 2, prime) % prime
        new = [(q - q[col] * r) % prime for q in new]
        new.append(r)
        cols.append(col)
    if not cols:
        return basis, pivots, False
    block, added = np.array(new), np.array(cols, dtype=np.int64)
    if pivots.size:  # clear the new pivot columns from the basis
        basis = (basis - _mulmod(basis[:, added], block, prime)) % prime
    return np.vstack([basis, block]), np.concatenate([pivots, added]), True


# ---------------------------------------------------------------------------------------
# Summaries
# ---------------------------------------------------------------------------------------


def vertex_transitive(topology: Topology) -> bool:
    """Whether a topology is known to be vertex-transitive (conservative: the complete
    graph and the named hypercube; ``False`` otherwise, even where it is)."""
    if topology.kind == "complete":
        return True
    return topology.kind == "graph" and topology.name in TRANSITIVE_NAMES and \
        topology.is_regular and not topology.directed


def hop_distances(adj: sparse.csr_array, nodes: Any) -> np.ndarray:
    """BFS hop distances from each of ``nodes`` to every node: ``(k, n)`` floats (inf when
    unreachable), the shape of :attr:`GossipLosses.values`."""
    from scipy.sparse import csgraph

    nodes = np.atleast_1d(np.asarray(nodes, dtype=np.int64))
    return np.atleast_2d(csgraph.shortest_path(adj, unweighted=True, directed=False,
                                               indices=nodes))


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


def _units(n: int, cols: np.ndarray) -> np.ndarray:
    X = np.zeros((n, len(cols)))
    X[cols, np.arange(len(cols))] = 1.0
    return X


def _check_steps(steps: int) -> None:
    check(isinstance(steps, int | np.integer) and steps >= 0, "steps",
          f"must be an integer >= 0 (got {steps!r})")


def _check_inputs(W: Any, adj: sparse.csr_array | None, steps: int) -> int:
    _check_steps(steps)
    check(len(W.shape) == 2 and W.shape[0] == W.shape[1] and W.shape[0] >= 2,
          "gossip-matrix", f"expected a square matrix of >= 2 nodes (got {W.shape})")
    n = int(W.shape[0])
    check(adj is None or adj.shape == (n, n), "gossip-matrix",
          f"a {n} x {n} matrix does not fit a graph of {adj.shape[0] if adj is not None else 0}"
          " nodes")
    return n


def _choose(n: int, nodes: Any, samples: int | None, rng: np.random.Generator | None,
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


def _check_regular(adj: sparse.csr_array) -> None:
    deg = np.diff(adj.indptr)
    check(bool(deg.min() == deg.max()), "topology",
          "not vertex-transitive: the degrees differ; pass sources or samples instead")


def _check_same_rows(a: np.ndarray, b: np.ndarray, u: int, other: int) -> None:
    ok = np.allclose(np.sort(np.delete(a, u)), np.sort(np.delete(b, other)), rtol=0,
                     atol=1e-10)
    check(bool(ok), "topology", f"not vertex-transitive for this gossip matrix: nodes {u} "
          f"and {other} have different losses; pass sources or samples instead")
