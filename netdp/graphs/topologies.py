"""Graphs a token can walk: the directed ring, the complete graph, any networkx graph.

A :class:`Topology` is compact: the ring and the complete graph are implicit (nothing
of size n² or even n is stored), other graphs are kept as CSR adjacency arrays.
Builders are plain functions, in the style of networkx generators.

Sizes are checked before anything is built (:func:`expected_size`, :func:`check_size`):

- the implicit ring and complete graph take any integer ``2 <= n <= 2**62`` (node ids fit
  int64; int32 is used below 2**31, see :func:`netdp.engine.trace.holder_dtype`);
- explicit graphs (CSR arrays, built through networkx) are limited to ``MAX_GRAPH_NODES``
  nodes and ``MAX_GRAPH_EDGES`` edges (:mod:`netdp.graphs.generators`). Building one costs
  about 650 bytes of peak memory per edge and 300 per node (networkx's dicts, the CSR
  arrays, the router's lists; measured on hypercubes, grids, Watts-Strogatz and
  Barabasi-Albert graphs), so a graph at the limits peaks near 7-8 GiB: two sweep
  workers each building one fit in 24 GiB;
- networkx's G(n, p) draws a coin for every pair of nodes (about 55 ns a pair), so
  ``erdos_renyi_graph`` and its aliases are limited to :data:`MAX_GNP_PAIRS` pairs;
- a graph file is counted before it is read (:func:`netdp.graphs.graph_files.count`),
  and GraphML and GML files, parsed whole, are limited in bytes.

A graph of your own comes as a networkx object (:func:`from_networkx`, weighted by an
edge attribute; a config records it with :func:`reference`) or as a file in one of
:data:`netdp.graphs.graph_files.FORMATS` (:func:`read_file`).

A topology spec (``topologies/*.toml``, or a ``.toml`` file given as ``--topology``) has
the keys ``description`` (text), ``generator`` (a function of ``networkx.generators``),
``size`` (``n``, ``log2``, ``sqrt`` or ``fixed``: what the generator's positional
arguments are), and optionally ``random`` (the generator takes a ``seed``),
``default_nodes`` (n without ``--nodes``; 100), ``min_nodes`` (the smallest n the
generator accepts with these parameters; 2) and ``[params]`` (keyword arguments: numbers,
booleans, or arithmetic expressions in ``n``, see :func:`evaluate`).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from netdp.core.errors import InputError, check, shorten
from netdp.core.reading import check_regular
from netdp.graphs import generators, graph_files
from netdp.graphs.generators import (
    check_nodes,
    check_plan,
    generate,
    limits,
    make_plan,
    read_spec,
)
from netdp.graphs.graph_files import check_weights, graph_name, is_graph_object
from netdp.graphs.walk_kind import KINDS, WalkKind, transition_matrix

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    import networkx as nx
    from scipy import sparse

Kind = Literal["ring", "complete", "graph"]
BUILTIN = ("ring", "complete")


_NAME = re.compile(r"[A-Za-z0-9_-]+")  # a named spec: no path separators, no dots
#: How a config names a graph given from Python (:func:`reference`).
NETWORKX = "networkx:"


@dataclass(frozen=True, eq=False)
class Topology:
    """A graph on nodes ``0..n-1`` that a token walks on.

    Attributes
    ----------
    kind
        ``"ring"`` (directed ``u -> u+1``), ``"complete"`` or ``"graph"`` (CSR arrays).
    n
        Number of nodes.
    name
        What the user asked for (``"ring"``, ``"karate"``, a file name, ...).
    self_moves
        Complete graph only: whether the token may be forwarded to its holder.
    indptr, indices
        ``graph`` only: out-neighbours of ``u`` are ``indices[indptr[u]:indptr[u+1]]``.
    directed
        Whether edges are one-way.
    labels
        ``graph`` only: the original node labels, in the order of ``0..n-1``.
    weights
        ``graph`` only: the weight of each edge, aligned with ``indices`` (in [1e-300, 1e300]);
        ``None``: unweighted (every weight alike). A walk moves to a neighbour with
        probability proportional to its edge's weight (:func:`netdp.graphs.walk_kind.
        transition_matrix`), gossip weighs its averages by them
        (:func:`netdp.graphs.gossip_matrix.metropolis`).
    """

    kind: Kind
    n: int
    name: str
    self_moves: bool = True
    indptr: np.ndarray | None = None
    indices: np.ndarray | None = None
    directed: bool = False
    labels: tuple = field(default=(), repr=False)
    weights: np.ndarray | None = field(default=None, repr=False)
    _cache: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    @property
    def walk_kind(self) -> WalkKind:
        """How a token walks on this kind of topology (:mod:`netdp.graphs.walk_kind`)."""
        return KINDS[self.kind]

    @property
    def degrees(self) -> np.ndarray:
        """Out-degree of every node (an array of size n, even for the implicit kinds)."""
        return self.walk_kind.degrees(self)

    @property
    def strengths(self) -> np.ndarray:
        """Weighted out-degree of every node (the sum of its edges' weights; the degree of
        an unweighted graph), as floats."""
        if self.weights is None:
            return self.degrees.astype(float)
        assert self.indptr is not None
        rows = np.repeat(np.arange(self.n), np.diff(self.indptr))
        return np.bincount(rows, weights=self.weights, minlength=self.n)

    @property
    def is_regular(self) -> bool:
        """Whether every node has the same out-degree (weighted: the same strength, to
        1e-12 relative), so that the simple walk's stationary law is uniform on an
        undirected graph."""
        if self.walk_kind.implicit:  # no array of size n
            return True
        if self.weights is not None:
            s = self.strengths
            return bool(s.max() - s.min() <= 1e-12 * s.max())
        d = self.degrees
        return bool(d.min() == d.max())

    @property
    def edge_count(self) -> int:
        """Edges (arcs of a directed graph; an undirected self-loop counts one half)."""
        if self.indptr is None:
            return self.walk_kind.edges(self.n)
        return int(self.indptr[-1]) // (1 if self.directed else 2)

    def describe(self) -> str:
        """One line for reports."""
        return self.walk_kind.describe(self)

    time_varying = False  # the edges change with time (netdp.graphs.time_varying): no

    @property
    def distance_graph(self) -> Topology:
        """The graph on which reports measure hop distances: this one."""
        return self

    def transition(self, walk: str) -> sparse.csr_array:
        """The transition matrix of ``walk`` on this graph (rows sum to 1), built once
        (:func:`netdp.graphs.walk_kind.transition_matrix`)."""
        if walk not in self._cache:
            self._cache[walk] = transition_matrix(self, walk)
        return self._cache[walk]

    def digest(self) -> str:
        """Hex sha256 of the graph: its kind, size, direction, CSR arrays, weights and
        labels (two graphs with the same digest walk alike), computed once."""
        if "digest" not in self._cache:
            h = hashlib.sha256(f"netdp-graph 1 {self.kind} {self.n} {self.directed} "
                               f"{self.self_moves}".encode())
            for array in (self.indptr, self.indices):
                if array is not None:
                    h.update(np.ascontiguousarray(array, dtype=np.int64).tobytes())
            h.update(b"unweighted" if self.weights is None else
                     np.ascontiguousarray(self.weights, dtype=np.float64).tobytes())
            h.update(repr(self.labels).encode())
            self._cache["digest"] = h.hexdigest()
        return self._cache["digest"]


def ring(n: int) -> Topology:
    """Directed ring ``0 -> 1 -> ... -> n-1 -> 0``."""
    return Topology("ring", check_nodes(n), "ring", directed=True)


def complete(n: int, self_moves: bool = True) -> Topology:
    """Complete graph; with ``self_moves`` a holder may forward the token to itself."""
    return Topology("complete", check_nodes(n), "complete", self_moves=self_moves)


def from_networkx(graph: nx.Graph, name: str | None = None,
                  weight: str | None = None, *, quote_labels: bool = True) -> Topology:
    """A topology from a networkx graph (``Graph``, ``DiGraph`` or their multigraphs),
    checked that a walk can visit it all.

    Parameters
    ----------
    graph
        The graph; its direction is the graph's own.
    name
        The topology's name in reports (default: the graph's ``name``, else ``graph``).
    weight
        The edge attribute that holds each edge's weight (in [1e-300, 1e300], on every edge;
        parallel edges of a multigraph add up); ``None``: unweighted (a multigraph's
        parallel edges are refused). Weights that are all alike are the unweighted graph.
    quote_labels
        Whether an error names nodes by their labels (``False`` for a graph read from a
        file, whose labels are its content: by their numbers ``#0..#n-1``).

    Nodes are renumbered ``0..n-1`` in the graph's node order; the original labels (any
    hashable) are kept in :attr:`Topology.labels`. Graphs beyond ``MAX_GRAPH_NODES``
    nodes or ``MAX_GRAPH_EDGES`` edges are refused. Self-loops are kept (the token may
    stay).

    Examples
    --------
    >>> import networkx as nx
    >>> topo = from_networkx(nx.path_graph(["a", "b", "c"]))
    >>> topo.n, topo.labels, topo.degrees.tolist()
    (3, ('a', 'b', 'c'), [1, 2, 1])
    """
    import networkx as nx
    from scipy import sparse

    name = graph_name(graph) if name is None else name
    check(isinstance(graph, nx.Graph), "topology",
          f"{name}: expected a networkx graph (got {type(graph).__name__})")
    n = graph.number_of_nodes()
    check_nodes(n, param="topology", what=f"graph {name!r} has {n} node(s)")
    m = graph.number_of_edges()
    check(n <= generators.MAX_GRAPH_NODES and m <= generators.MAX_GRAPH_EDGES, "topology",
          f"{name} has {n} nodes and {m} edges; {limits()}")
    labels = tuple(graph.nodes)
    weights = None
    if weight is None:
        adj = nx.to_scipy_sparse_array(graph, nodelist=labels, weight=None, format="csr")
        graph_files.check_no_parallel_edges(graph, adj, name)
        adj = sparse.csr_array((np.ones_like(adj.data, dtype=np.int8), adj.indices,
                                adj.indptr), shape=adj.shape)
    else:
        check_weights(graph, weight, name)
        adj = nx.to_scipy_sparse_array(graph, nodelist=labels, weight=weight, dtype=float,
                                       format="csr")
    adj.sort_indices()
    if weight is not None and adj.nnz and np.any(adj.data != adj.data[0]):
        weights = np.ascontiguousarray(adj.data, dtype=np.float64)
    topo = Topology("graph", n, name, indptr=adj.indptr.astype(np.int64),
                    indices=adj.indices.astype(np.int64), directed=graph.is_directed(),
                    labels=labels, weights=weights)
    _check_connected(topo, adj, quote_labels)
    return topo


def reference(topology: Topology) -> str:
    """How a config records a graph given from Python: ``networkx:NAME (n nodes, m edges,
    ..., sha256 PREFIX)``, the prefix of :meth:`Topology.digest` (a networkx object is not
    TOML; :func:`build` refuses the text and asks for the object)."""
    what = [f"{topology.n} nodes", f"{topology.edge_count} edges"]
    what += ["directed"] * topology.directed + ["weighted"] * (topology.weights is not None)
    return f"{NETWORKX}{topology.name} ({', '.join(what)}, sha256 {topology.digest()[:16]})"


def read_edgelist(path: str | Path, directed: bool = False) -> Topology:
    """Read an edge list: ``u v`` per line, or ``u v w`` (a weight) on every line
    (:mod:`netdp.graphs.graph_files`)."""
    return read_file(Path(path), "edgelist", directed)


def read_file(path: Path, fmt: str, directed: bool = False,
              weight: str | None = None) -> Topology:
    """The topology of a graph file in ``fmt`` (:data:`~netdp.graphs.graph_files.FORMATS`):
    GraphML and GML weighted by their edge attribute ``weight``, an edge list by its third
    column."""
    check_regular(path, "topology", "a graph file")
    graph, weight = graph_files.read(path, fmt, directed, weight)
    return from_networkx(graph, name=path.name, weight=weight, quote_labels=False)


def available() -> dict[str, str]:
    """Names the CLI accepts as ``--topology``, with a one-line description each."""
    names = {
        "ring": "Directed ring 0 -> 1 -> ... -> n-1 -> 0 (AISTATS 2022 Algorithms 1, 2).",
        "complete": "Complete graph, uniform forwarding (AISTATS 2022 Algorithms 3-5).",
    }
    for path in sorted(_spec_dir().iterdir(), key=lambda p: p.name):
        if path.name.endswith(".toml"):
            names[path.name[:-5]] = read_spec(path, path.name[:-5])["description"]
    return names


def build(spec: Any, n: int | None = None, *, self_moves: bool = True,
          directed: bool = False, seed: np.random.SeedSequence | int | None = None,
          weight: str | None = None, fmt: str | None = None) -> Topology:
    """Build a topology from a CLI-style spec, or from a graph given from Python.

    Parameters
    ----------
    spec
        ``ring``, ``complete``, a named spec (see :func:`available`), a TOML spec file, a
        graph file (:mod:`netdp.graphs.graph_files`), a networkx graph
        (:func:`from_networkx`) or a :class:`Topology` (returned as it is).
    n
        Number of nodes; ``None`` takes the spec's default (or the fixed size of a real
        graph, a file or an object).
    self_moves
        Complete graph: allow forwarding to oneself.
    directed
        Edge and adjacency lists: read edges as one-way.
    seed
        Seeds random generators (Erdos-Renyi, ...).
    weight
        GraphML, GML and networkx graphs: the edge attribute holding the weights.
    fmt
        Graph files: the format (:data:`~netdp.graphs.graph_files.FORMATS`; default: from
        the file's extension).

    Raises
    ------
    InputError
        For a bad spec or n, before building anything too large (see :func:`check_size`).
    """
    if isinstance(spec, Topology) or is_graph_object(spec):
        n = None if n is None else check_nodes(n)
        _check_object_options(spec, directed, fmt)
        topo = spec if isinstance(spec, Topology) else from_networkx(spec, weight=weight)
        _check_own_size(topo.name, topo.n, n)
        return topo
    kind, where = _resolve(spec)
    n = None if n is None else check_nodes(n)
    fmt = _check_options(spec, kind, where, weight, fmt, directed)
    if kind == "ring":
        return ring(100 if n is None else n)
    if kind == "complete":
        return complete(100 if n is None else n, self_moves=self_moves)
    if kind == "file":
        assert isinstance(where, Path) and fmt is not None
        topo = read_file(where, fmt, directed=directed, weight=weight)
        _check_own_size(where.name, topo.n, n)
        return topo
    assert isinstance(where, tuple)  # kind == "spec"
    plan = make_plan(*where, n)
    check_plan(plan)
    graph = generate(plan, seed)
    if plan.n is None:  # a real graph of its own size
        _check_own_size(plan.name, graph.number_of_nodes(), n)
    return from_networkx(graph, name=plan.name)


def expected_size(spec: Any, n: int | None = None, *,
                  fmt: str | None = None) -> tuple[int, int | None]:
    """Nodes and (expected) edges of ``build(spec, n)``, without building it.

    Edges are undirected edges (arcs for directed graphs), the expectation for random
    generators, and ``None`` where no formula is known (a TOML spec naming another
    generator). The ring counts its n arcs and the complete graph its n(n-1)/2 edges,
    though neither is stored. Fixed-size real graphs are small and are built to be
    counted; a graph file is read once (no graph), counting its distinct labels and its
    edges, and refused past the limits (:func:`netdp.graphs.graph_files.count`).

    Raises
    ------
    InputError
        For a spec or n that :func:`build` refuses whatever the limits.
    """
    if isinstance(spec, Topology):
        return spec.n, spec.edge_count
    if is_graph_object(spec):
        return spec.number_of_nodes(), spec.number_of_edges()
    kind, where = _resolve(spec)
    n = None if n is None else check_nodes(n)
    if kind in BUILTIN:
        n = 100 if n is None else n
        return n, KINDS[kind].edges(n)
    if kind == "file":
        assert isinstance(where, Path)
        return graph_files.count(where, graph_files.file_format(where, fmt))
    assert isinstance(where, tuple)  # kind == "spec"
    plan = make_plan(*where, n)
    if plan.n is None:
        graph = generate(plan, None)
        return graph.number_of_nodes(), graph.number_of_edges()
    return plan.n, plan.edges


def check_size(spec: Any, n: int | None = None, *, weight: str | None = None,
               fmt: str | None = None, directed: bool = False) -> None:
    """Raise the :class:`InputError` that ``build(spec, n, ...)`` would raise before
    building.

    Checks the spec, n, the options (``weight``, ``fmt``, ``directed``) against it, the
    size against ``MAX_GRAPH_NODES`` and ``MAX_GRAPH_EDGES`` and the generator's
    parameters against n, as a sweep may do for every grid point up front. Builds nothing
    large (see :func:`expected_size`); the connectivity of random graphs, and a file's
    content beyond its size, are only known once built.
    """
    if isinstance(spec, Topology) or is_graph_object(spec):
        n = None if n is None else check_nodes(n)
        _check_object_options(spec, directed, fmt)
        nodes = expected_size(spec)[0]
        _check_own_size(getattr(spec, "name", "") or "the graph", nodes, n)
        return
    kind, where = _resolve(spec)
    n = None if n is None else check_nodes(n)
    fmt = _check_options(spec, kind, where, weight, fmt, directed)
    if kind == "file":
        assert isinstance(where, Path) and fmt is not None
        _check_own_size(where.name, graph_files.count(where, fmt)[0], n)
    elif kind == "spec":
        assert isinstance(where, tuple)
        plan = make_plan(*where, n)
        check_plan(plan)
        if plan.n is None and n is not None:
            _check_own_size(plan.name, expected_size(spec)[0], n)


def _check_own_size(name: str, size: int, n: int | None) -> None:
    """A graph of its own size: ``--nodes``, if given, must be it."""
    check(n is None or n == size, "nodes",
          f"{name} has {size} nodes; omit --nodes or pass --nodes {size}")


def _check_options(spec: Any, kind: str, where: Any, weight: str | None, fmt: str | None,
                   directed: bool) -> str | None:
    """Refuse the file options on what is no file; a file's format (checked against
    ``weight`` and ``directed``), else ``None``."""
    if kind != "file":
        check(weight is None, "weight", f"applies to graph files (GraphML, GML) and networkx "
              f"graphs; {shorten(str(spec))} has no weights")
        check(fmt is None, "format", f"applies to topology files; {shorten(str(spec))} is "
              "a named topology")
        return None
    assert isinstance(where, Path)
    fmt = graph_files.file_format(where, fmt)
    graph_files.check_options(where, fmt, weight, directed)
    return fmt


def _check_object_options(spec: Any, directed: bool, fmt: str | None) -> None:
    check(not directed, "directed", "applies to edge and adjacency lists; a networkx graph is "
          "directed when it is a DiGraph")
    check(fmt is None, "format", "applies to topology files, not to a graph given from "
          "Python")


# --------------------------------------------------------------------------- helpers


def _check_connected(topo: Topology, adj: sparse.csr_array, quote_labels: bool = True) -> None:
    """A walk must reach every node from every node (named by number: see from_networkx)."""
    from scipy.sparse import csgraph

    if csgraph.connected_components(adj, directed=topo.directed, connection="strong")[0] == 1:
        return
    numbered = not quote_labels and bool(topo.labels)
    name = (lambda u: f"#{u}") if numbered else (
        lambda u: repr(topo.labels[u]) if topo.labels else str(u))
    reach = csgraph.breadth_first_order(adj, 0, topo.directed, False)  # no predecessors
    missing = np.setdiff1d(np.arange(topo.n), reach)
    problem = f"cannot be reached from node {name(0)}"
    if not missing.size:  # directed: everything reachable from 0, but some cannot get back
        back = csgraph.breadth_first_order(adj.T.tocsr(), 0, directed=True,
                                           return_predecessors=False)
        missing = np.setdiff1d(np.arange(topo.n), back)
        problem = f"cannot reach node {name(0)} again"
    shown = ", ".join(name(int(u)) for u in missing[:10])
    more = f" and {missing.size - 10} more" if missing.size > 10 else ""
    note = " (nodes numbered from 0 in the file's order)" if numbered else ""
    raise InputError("topology", f"{topo.name} is not {'strongly ' if topo.directed else ''}"
                     f"connected: node(s) {shown}{more} {problem}{note}")


def _spec_dir() -> Traversable:
    """The named specs: package data when installed, ``topologies/`` in a source tree."""
    try:
        return resources.files("netdp.topologies")
    except ModuleNotFoundError:  # netdp imported from a checkout (e.g. python -m from its root)
        return Path(__file__).resolve().parents[2] / "topologies"  # netdp/graphs/ -> root


# --------------------------------------------------------------------------- files

#: What a spec names for :func:`plan`: ``(source, name, label, named)``.
_SpecRef = tuple["Traversable", str, str, bool]


def is_named(spec: Any) -> bool:
    """Whether ``spec`` names a graph netdp makes (``ring``, ``complete``, a named spec of
    :func:`available`), not a file: a result or a log may name it, netdp rebuild it."""
    return isinstance(spec, str) and (spec in BUILTIN or (
        len(spec) <= 100 and _NAME.fullmatch(spec) is not None
        and (_spec_dir() / f"{spec}.toml").is_file()))


def _resolve(spec) -> tuple[str, _SpecRef | Path | None]:
    """What ``spec`` names: ``("ring"|"complete", None)``, ``("spec", (source, name,
    label, named))`` or ``("file", path)``; refuses what is neither."""
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if not isinstance(spec, str):
        raise InputError("topology", f"must be a name, a file path or a networkx graph "
                         f"(got {shorten(repr(spec))})")
    if spec in BUILTIN:
        return spec, None
    if spec.startswith(NETWORKX):
        raise InputError("topology", f"{shorten(repr(spec), 120)} records a graph given "
                         "from Python; pass the networkx graph itself: "
                         "netdp.simulate({'topology': graph, ...})")
    if is_named(spec):
        return "spec", (_spec_dir() / f"{spec}.toml", spec, spec, True)
    shown = shorten(repr(spec), 200)
    try:
        mode = os.stat(spec).st_mode if spec else None
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    except OSError as exc:
        raise InputError("topology", f"cannot read {shown}: {exc.strerror}") from None
    except ValueError:  # a NUL in the name
        raise InputError("topology", f"cannot read {shown}: not a valid file name") from None
    if mode is None:
        if spec and (Path(spec).suffix or "/" in spec or os.sep in spec):
            raise InputError("topology", f"cannot read {shown}: no such file")
        raise InputError("topology", f"unknown topology {shown}; choose one of "
                         f"{', '.join(available())}, or give a graph file (GraphML, GML, "
                         "adjacency or edge list) or a TOML spec")
    check_regular(spec, "topology", "a graph file or a TOML spec")
    path = Path(spec)
    if path.suffix == ".toml":
        return "spec", (path, path.stem, path.name, False)
    return "file", path


def hop_distances(topology: Topology, sources: np.ndarray | None = None) -> np.ndarray:
    """``(len(sources), n)`` hop distances from each source ``u`` to every node ``v``, along
    the edges' directions (information flows from ``u`` to ``v``); all sources by default.

    The ring: ``(v - u) mod n``; the complete graph: 1 (0 to itself); other graphs: BFS.
    """
    n = topology.n
    sources = np.arange(n) if sources is None else np.asarray(sources, dtype=np.int64)
    if topology.kind == "ring":
        return (np.arange(n)[None, :] - sources[:, None]) % n
    if topology.kind == "complete":
        out = np.ones((sources.size, n), dtype=np.int64)
        out[np.arange(sources.size), sources] = 0
        return out
    from scipy import sparse
    from scipy.sparse import csgraph

    assert topology.indptr is not None and topology.indices is not None
    adj = sparse.csr_array((np.ones(topology.indices.size), topology.indices, topology.indptr),
                           shape=(n, n))
    dist = csgraph.shortest_path(adj, directed=topology.directed, unweighted=True,
                                 indices=sources)
    return np.asarray(dist, dtype=np.int64)  # the graphs are connected: no inf


def to_networkx(topology: Topology) -> nx.Graph:
    """The topology as a networkx graph (a ``DiGraph`` for the ring and directed graphs)."""
    import networkx as nx
    from scipy import sparse

    n = topology.n
    if topology.kind == "ring":
        return nx.cycle_graph(n, create_using=nx.DiGraph)
    if topology.kind == "complete":
        return nx.complete_graph(n)
    assert topology.indptr is not None and topology.indices is not None
    adj = sparse.csr_array((np.ones(topology.indices.size), topology.indices, topology.indptr),
                           shape=(n, n))
    return nx.from_scipy_sparse_array(adj, create_using=nx.DiGraph if topology.directed
                                      else nx.Graph)


def edges(topology: Topology) -> tuple[np.ndarray, np.ndarray]:
    """The directed edges ``(src, dst)`` that carry messages: both directions of every
    undirected edge, self-loops left out."""
    if topology.kind == "graph":
        assert topology.indptr is not None and topology.indices is not None
        if topology.directed:
            raise InputError("topology", f"gossip needs undirected edges ({topology.name} is "
                                         "directed)")
        src = np.repeat(np.arange(topology.n), np.diff(topology.indptr))
        dst = topology.indices
    elif topology.kind == "complete":
        n = topology.n
        src, dst = np.divmod(np.arange(n * n, dtype=np.int64), n)
    else:
        raise InputError("topology", "gossip needs an undirected graph; the ring is directed "
                                     "(use --protocol walk, or a cycle: --topology cycle.txt)")
    keep = src != dst
    return src[keep].astype(np.int64), dst[keep].astype(np.int64)
