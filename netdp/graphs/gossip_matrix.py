"""Gossip matrices: the graph's adjacency, Metropolis and lazy weights, a user's own matrix
from a file (checked symmetric and doubly stochastic on the graph's edges), and the
spectral facts the protocol's defaults read (spectral gap, default steps, Chebyshev γ)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import sparse

from netdp.core import progress
from netdp.core.errors import InputError, check, one_line
from netdp.core.limits import duration, time_limit
from netdp.core.reading import check_regular
from netdp.graphs.walk_kind import TRANSITIVE_NAMES

if TYPE_CHECKING:
    from netdp.graphs.topologies import Topology


TOL = 1e-9
"""Tolerance of the checks on a user gossip matrix (symmetry, row sums)."""
DENSE_EIGEN_NODES = 3000
"""Up to this many nodes :func:`spectral_gap` uses a dense eigensolver."""
ARPACK_SECONDS = 1e-8
"""Seconds of one ARPACK iteration of :func:`spectral_gap` per entry of ``W`` and per
Lanczos vector entry (measured: 0.9 ms an iteration on a 5,001-node path, 2-core VM)."""
MAX_COMPLETE_NODES = 4096
"""Most nodes of a complete gossip graph (its matrices have n² entries)."""


@dataclass(frozen=True, eq=False)
class GossipPlan:
    """What gossip averaging on one graph needs, computed once per simulation.

    Attributes
    ----------
    W
        The gossip matrix (symmetric, doubly stochastic on the graph's edges).
    adj
        The graph's adjacency.
    gap
        The spectral gap of ``W`` (:func:`spectral_gap`).
    gamma
        The Chebyshev parameter (:func:`chebyshev_gamma`); ``None``: plain averaging.
    transitive
        Whether the graph is known to be vertex-transitive (:func:`vertex_transitive`).
    """

    W: sparse.csr_array
    adj: sparse.csr_array
    gap: float
    gamma: float | None
    transitive: bool

    @property
    def accelerated(self) -> bool:
        """Whether the averaging is Chebyshev-accelerated."""
        return self.gamma is not None

    @classmethod
    def build(cls, topology: Topology, matrix: str, accelerated: bool) -> GossipPlan:
        """The plan of ``topology`` with the gossip matrix ``matrix`` (``metropolis``,
        ``lazy`` or a file: :func:`from_file`)."""
        builders = {"metropolis": metropolis, "lazy": lazy}
        W = builders[matrix](topology) if matrix in builders else from_file(matrix, topology)
        gap = spectral_gap(W)
        return cls(W, adjacency(topology), gap, chebyshev_gamma(gap) if accelerated else None,
                   vertex_transitive(topology))


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

    On a weighted graph (edge weights ``w``, weighted degrees ``d_u = Σ_{v≠u} w_uv``, mean
    edge weight ``w̄``): ``W_uv = w_uv / (w̄ + max(d_u, d_v))``. The ``1`` of the unweighted
    rule is one mean edge, so unit weights give the matrix above, scaling every weight
    changes nothing, and the diagonal stays ``>= w̄ / (w̄ + d_u) > 0``.
    """
    if topology.weights is not None:
        rows, cols, w = _weighted_edges(topology)
        deg = np.bincount(rows, weights=w, minlength=topology.n)
        weights = w / (w.mean() + np.maximum(deg[rows], deg[cols]))
        return _with_diagonal(rows, cols, weights, topology.n)
    adj = adjacency(topology)
    deg = np.asarray(adj.sum(axis=1)).ravel()
    rows, cols = adj.nonzero()
    weights = 1.0 / (1.0 + np.maximum(deg[rows], deg[cols]))
    return _with_diagonal(rows, cols, weights, topology.n)


def lazy(topology: Topology) -> sparse.csr_array:
    """Lazy uniform gossip matrix: ``W_uv = 1 / (2 d_max)`` on edges, diagonal completing.

    Symmetric, doubly stochastic, diagonal ``>= 1/2`` (so every eigenvalue is ``>= 0``).
    Weighted: ``W_uv = w_uv / (2 d_max)``, ``d_max`` the largest weighted degree.
    """
    if topology.weights is not None:
        rows, cols, w = _weighted_edges(topology)
        d_max = float(np.bincount(rows, weights=w, minlength=topology.n).max())
        return _with_diagonal(rows, cols, 0.5 * w / d_max, topology.n)
    adj = adjacency(topology)
    d_max = float(np.asarray(adj.sum(axis=1)).max())
    rows, cols = adj.nonzero()
    return _with_diagonal(rows, cols, np.full(len(rows), 0.5 / d_max), topology.n)


def _weighted_edges(topology: Topology) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows, cols, weights)`` of a weighted gossip graph's edges, both directions,
    self-loops left out (checked undirected by :func:`adjacency`)."""
    adjacency(topology)
    assert topology.indptr is not None and topology.weights is not None
    rows = np.repeat(np.arange(topology.n), np.diff(topology.indptr))
    cols = np.asarray(topology.indices)
    off = rows != cols
    return rows[off], cols[off], np.asarray(topology.weights, dtype=float)[off]


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
    check_regular(path, "gossip-matrix", "a .npy file or a text file of 'u v w' lines")
    if path.suffix == ".npy":
        from netdp.core.npy_file import read_npy

        dense = read_npy(path, "gossip-matrix")
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
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError("gossip-matrix", f"{name}: cannot read ({one_line(err)})") from None
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
            raise InputError("gossip-matrix", f"{where}: expected two whole node numbers "
                             "and a weight (a number)") from None
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
    out = ~((coo.data >= 0) & (coo.data <= 1 + TOL))  # NaN too; a weight is a probability
    if out.any():  # (checked first: no sum below can overflow)
        i = int(np.argmax(out))
        raise InputError("gossip-matrix", f"{name}: entries must lie in [0, 1] (entry "
                         f"({coo.row[i]}, {coo.col[i]}) does not)")
    asym = sparse.coo_array(matrix - matrix.T)
    if asym.nnz and np.abs(asym.data).max() > TOL:
        i = int(np.argmax(np.abs(asym.data)))
        u, v = int(asym.row[i]), int(asym.col[i])
        raise InputError("gossip-matrix", f"{name}: must be symmetric within {TOL:g} "
                         f"(W[{u}, {v}] and W[{v}, {u}] differ)")
    sums = np.asarray(matrix.sum(axis=1)).ravel()
    bad = np.abs(sums - 1.0) > TOL
    if bad.any():
        u = int(np.argmax(bad))
        raise InputError("gossip-matrix", f"{name}: every row must sum to 1 within {TOL:g} "
                         f"(row {u} does not)")
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
        # scipy's LAPACK call holds the GIL: announce it at once where it takes seconds
        with progress.step(f"spectral gap of the gossip matrix (dense, n = {n:,})",
                           now=n >= 1000):
            lam = eigvalsh(dense, subset_by_index=[n - 2, n - 1])
        return float(1.0 - lam[0])
    from scipy.sparse.linalg import ArpackNoConvergence, eigsh
    W = sparse.csr_array(W)
    # ARPACK's own bound (10 n iterations), or fewer where they would pass the time limit:
    # a graph that mixes slowly (a long path) has eigenvalues too close to 1 to separate
    limit = time_limit()
    timed = limit / (ARPACK_SECONDS * (W.nnz + 20 * n))  # iterations the limit allows
    maxiter = max(100, int(min(10 * n, timed)))
    v0 = np.random.default_rng(0).standard_normal(n)
    try:
        lam = eigsh(W, k=2, which="LA", v0=v0, tol=0, maxiter=maxiter,
                    return_eigenvectors=False)
    except ArpackNoConvergence:
        bound = (f"the most the {duration(limit)} of NETDP_TIME_LIMIT allow" if timed < 10 * n
                 else "ARPACK's bound")
        raise InputError("topology", f"the spectral gap of the gossip matrix on {n:,} nodes "
                         f"did not converge in {maxiter:,} iterations ({bound}): the graph "
                         "mixes too slowly for gossip") from None
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


def vertex_transitive(topology: Topology) -> bool:
    """Whether a topology is known to be vertex-transitive (conservative: the complete
    graph and the named hypercube; ``False`` otherwise, even where it is, and for any
    weighted graph)."""
    if topology.kind == "complete":
        return True
    return topology.kind == "graph" and topology.name in TRANSITIVE_NAMES and \
        topology.is_regular and not topology.directed and topology.weights is None


def hop_distances(adj: sparse.csr_array, nodes: Any) -> np.ndarray:
    """BFS hop distances from each of ``nodes`` to every node: ``(k, n)`` floats (inf when
    unreachable), the shape of :attr:`GossipLosses.values`."""
    from scipy.sparse import csgraph

    nodes = np.atleast_1d(np.asarray(nodes, dtype=np.int64))
    return np.atleast_2d(csgraph.shortest_path(adj, unweighted=True, directed=False,
                                               indices=nodes))


