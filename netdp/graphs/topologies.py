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
  ``erdos_renyi_graph`` and its aliases are limited to :data:`MAX_GNP_PAIRS` pairs.

A topology spec (``topologies/*.toml``, or a ``.toml`` file given as ``--topology``) has
the keys ``description`` (text), ``generator`` (a function of ``networkx.generators``),
``size`` (``n``, ``log2``, ``sqrt`` or ``fixed``: what the generator's positional
arguments are), and optionally ``random`` (the generator takes a ``seed``),
``default_nodes`` (n without ``--nodes``; 100), ``min_nodes`` (the smallest n the
generator accepts with these parameters; 2) and ``[params]`` (keyword arguments: numbers,
booleans, or arithmetic expressions in ``n``, see :func:`evaluate`).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from netdp.core.errors import InputError, check, shorten
from netdp.graphs import generators
from netdp.graphs.generators import (
    check_nodes,
    check_plan,
    generate,
    limits,
    make_plan,
    not_text,
    read_spec,
)
from netdp.graphs.walk_kind import KINDS, WalkKind, transition_matrix

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    import networkx as nx
    from scipy import sparse

Kind = Literal["ring", "complete", "graph"]
BUILTIN = ("ring", "complete")


_NAME = re.compile(r"[A-Za-z0-9_-]+")  # a named spec: no path separators, no dots
_MAX_LINE = 1 << 16  # characters in one edge-list line


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
    """

    kind: Kind
    n: int
    name: str
    self_moves: bool = True
    indptr: np.ndarray | None = None
    indices: np.ndarray | None = None
    directed: bool = False
    labels: tuple = field(default=(), repr=False)
    _transitions: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    @property
    def walk_kind(self) -> WalkKind:
        """How a token walks on this kind of topology (:mod:`netdp.graphs.walk_kind`)."""
        return KINDS[self.kind]

    @property
    def degrees(self) -> np.ndarray:
        """Out-degree of every node (an array of size n, even for the implicit kinds)."""
        return self.walk_kind.degrees(self)

    @property
    def is_regular(self) -> bool:
        """Whether every node has the same out-degree."""
        if self.walk_kind.implicit:  # no array of size n
            return True
        d = self.degrees
        return bool(d.min() == d.max())

    def describe(self) -> str:
        """One line for reports."""
        return self.walk_kind.describe(self)

    def transition(self, walk: str) -> sparse.csr_array:
        """The transition matrix of ``walk`` on this graph (rows sum to 1), built once
        (:func:`netdp.graphs.walk_kind.transition_matrix`)."""
        if walk not in self._transitions:
            self._transitions[walk] = transition_matrix(self, walk)
        return self._transitions[walk]


def ring(n: int) -> Topology:
    """Directed ring ``0 -> 1 -> ... -> n-1 -> 0``."""
    return Topology("ring", check_nodes(n), "ring", directed=True)


def complete(n: int, self_moves: bool = True) -> Topology:
    """Complete graph; with ``self_moves`` a holder may forward the token to itself."""
    return Topology("complete", check_nodes(n), "complete", self_moves=self_moves)


def from_networkx(graph: nx.Graph, name: str = "graph") -> Topology:
    """Convert a networkx graph (directed or not) and check that a walk can visit it all.

    Nodes are renumbered ``0..n-1`` in the graph's node order; the original labels are
    kept in :attr:`Topology.labels`. Graphs beyond ``MAX_GRAPH_NODES`` nodes or
    ``MAX_GRAPH_EDGES`` edges are refused.
    """
    import networkx as nx
    from scipy import sparse

    check(isinstance(graph, nx.Graph), "topology",
          f"{name}: expected a networkx graph (got {type(graph).__name__})")
    n = graph.number_of_nodes()
    check_nodes(n, param="topology", what=f"graph {name!r} has {n} node(s)")
    m = graph.number_of_edges()
    check(n <= generators.MAX_GRAPH_NODES and m <= generators.MAX_GRAPH_EDGES, "topology",
          f"{name} has {n} nodes and {m} edges; {limits()}")
    labels = tuple(graph.nodes)
    adj = nx.to_scipy_sparse_array(graph, nodelist=labels, weight=None, format="csr")
    adj = sparse.csr_array((np.ones_like(adj.data, dtype=np.int8), adj.indices, adj.indptr),
                           shape=adj.shape)
    adj.sort_indices()
    topo = Topology("graph", n, name, indptr=adj.indptr.astype(np.int64),
                    indices=adj.indices.astype(np.int64), directed=graph.is_directed(),
                    labels=labels)
    _check_connected(topo, adj)
    return topo


def read_edgelist(path: str | Path, directed: bool = False) -> Topology:
    """Read a whitespace- or comma-separated edge list (``u v`` per line, ``#`` comments).

    Every non-blank line holds exactly two labels (integers or names); a line with another
    number of columns (a weight, say) is refused with its line number.
    """
    import networkx as nx

    path = Path(path)
    graph = nx.DiGraph() if directed else nx.Graph()
    for lineno, u, v in _edge_lines(path):
        graph.add_edge(u, v)
        _check_edgelist_nodes(path, lineno, graph.number_of_nodes())
    return from_networkx(graph, name=path.name)


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


def build(spec: str, n: int | None = None, *, self_moves: bool = True,
          directed: bool = False, seed: np.random.SeedSequence | int | None = None) -> Topology:
    """Build a topology from a CLI-style spec.

    Parameters
    ----------
    spec
        ``ring``, ``complete``, a named spec (see :func:`available`), a TOML spec file, or
        an edge-list file.
    n
        Number of nodes; ``None`` takes the spec's default (or the fixed size of a real
        graph).
    self_moves
        Complete graph: allow forwarding to oneself.
    directed
        Edge-list files: read edges as one-way.
    seed
        Seeds random generators (Erdos-Renyi, ...).

    Raises
    ------
    InputError
        For a bad spec or n, before building anything too large (see :func:`check_size`).
    """
    kind, where = _resolve(spec)
    n = None if n is None else check_nodes(n)
    if kind == "ring":
        return ring(100 if n is None else n)
    if kind == "complete":
        return complete(100 if n is None else n, self_moves=self_moves)
    if kind == "file":
        assert isinstance(where, Path)
        topo = read_edgelist(where, directed=directed)
        check(n is None or n == topo.n, "nodes",
              f"{where.name} has {topo.n} nodes; omit --nodes or pass --nodes {topo.n}")
        return topo
    assert isinstance(where, tuple)  # kind == "spec"
    plan = make_plan(*where, n)
    check_plan(plan)
    graph = generate(plan, seed)
    if plan.n is None:  # a real graph of its own size
        size = graph.number_of_nodes()
        check(n is None or n == size, "nodes",
              f"{plan.name} has {size} nodes; omit --nodes or pass --nodes {size}")
    return from_networkx(graph, name=plan.name)


def expected_size(spec: str, n: int | None = None) -> tuple[int, int | None]:
    """Nodes and (expected) edges of ``build(spec, n)``, without building it.

    Edges are undirected edges (arcs for directed graphs), the expectation for random
    generators, and ``None`` where no formula is known (a TOML spec naming another
    generator). The ring counts its n arcs and the complete graph its n(n-1)/2 edges,
    though neither is stored. Fixed-size real graphs are small and are built to be
    counted; an edge-list file is read once (no graph), counting its distinct labels and
    its edge lines, and refused past the limits.

    Raises
    ------
    InputError
        For a spec or n that :func:`build` refuses whatever the limits.
    """
    kind, where = _resolve(spec)
    n = None if n is None else check_nodes(n)
    if kind in BUILTIN:
        n = 100 if n is None else n
        return n, KINDS[kind].edges(n)
    if kind == "file":
        assert isinstance(where, Path)
        return _count_edgelist(where)
    assert isinstance(where, tuple)  # kind == "spec"
    plan = make_plan(*where, n)
    if plan.n is None:
        graph = generate(plan, None)
        return graph.number_of_nodes(), graph.number_of_edges()
    return plan.n, plan.edges


def check_size(spec: str, n: int | None = None) -> None:
    """Raise the :class:`InputError` that ``build(spec, n)`` would raise before building.

    Checks the spec, n, the size against ``MAX_GRAPH_NODES`` and
    ``MAX_GRAPH_EDGES`` and the generator's parameters against n, as a sweep may do
    for every grid point up front. Builds nothing large (see :func:`expected_size`); the
    connectivity of random graphs is only known once built.
    """
    kind, where = _resolve(spec)
    n = None if n is None else check_nodes(n)
    if kind == "file":
        assert isinstance(where, Path)
        size = _count_edgelist(where)[0]
        check(n is None or n == size, "nodes",
              f"{where.name} has {size} nodes; omit --nodes or pass --nodes {size}")
    elif kind == "spec":
        assert isinstance(where, tuple)
        plan = make_plan(*where, n)
        check_plan(plan)
        if plan.n is None and n is not None:
            size = expected_size(spec)[0]
            check(n == size, "nodes",
                  f"{plan.name} has {size} nodes; omit --nodes or pass --nodes {size}")


# --------------------------------------------------------------------------- helpers


def _check_connected(topo: Topology, adj: sparse.csr_array) -> None:
    """A walk must be able to reach every node from every node."""
    from scipy.sparse import csgraph

    n_comp, _ = csgraph.connected_components(adj, directed=topo.directed, connection="strong")
    if n_comp == 1:
        return
    reach = csgraph.breadth_first_order(adj, 0, directed=topo.directed,
                                        return_predecessors=False)
    missing = np.setdiff1d(np.arange(topo.n), reach)
    if missing.size:
        problem = f"cannot be reached from node {_name(topo, 0)}"
    else:  # directed: everything reachable from 0, but some nodes cannot get back
        back = csgraph.breadth_first_order(adj.T.tocsr(), 0, directed=True,
                                           return_predecessors=False)
        missing = np.setdiff1d(np.arange(topo.n), back)
        problem = f"cannot reach node {_name(topo, 0)} again"
    shown = ", ".join(_name(topo, int(u)) for u in missing[:10])
    more = f" and {missing.size - 10} more" if missing.size > 10 else ""
    raise InputError("topology", f"{topo.name} is not {'strongly ' if topo.directed else ''}"
                     f"connected: node(s) {shown}{more} {problem}")


def _name(topo: Topology, u: int) -> str:
    return repr(topo.labels[u]) if topo.labels else str(u)


def _label(text: str) -> int | str:
    try:
        return int(text)
    except ValueError:
        return text


def _spec_dir() -> Traversable:
    """The named specs: package data when installed, ``topologies/`` in a source tree."""
    try:
        return resources.files("netdp.topologies")
    except ModuleNotFoundError:  # netdp imported from a checkout (e.g. python -m from its root)
        return Path(__file__).resolve().parents[2] / "topologies"  # netdp/graphs/ -> root


# --------------------------------------------------------------------------- files

#: What a spec names for :func:`plan`: ``(source, name, label, named)``.
_SpecRef = tuple["Traversable", str, str, bool]


def _resolve(spec) -> tuple[str, _SpecRef | Path | None]:
    """What ``spec`` names: ``("ring"|"complete", None)``, ``("spec", (source, name,
    label, named))`` or ``("file", path)``; refuses what is neither."""
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if not isinstance(spec, str):
        raise InputError("topology",
                         f"must be a name or a file path (got {shorten(repr(spec))})")
    if spec in BUILTIN:
        return spec, None
    if len(spec) <= 100 and _NAME.fullmatch(spec):
        named = _spec_dir() / f"{spec}.toml"
        if named.is_file():
            return "spec", (named, spec, spec, True)
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
                         f"{', '.join(available())}, or give an edge-list / TOML file")
    check(not stat.S_ISDIR(mode), "topology", f"cannot read {shown}: it is a directory")
    check(stat.S_ISREG(mode), "topology", f"cannot read {shown}: not a regular file")
    path = Path(spec)
    if path.suffix == ".toml":
        return "spec", (path, path.stem, path.name, False)
    return "file", path


def _edge_lines(path: Path) -> Iterator[tuple[int, int | str, int | str]]:
    """``(line number, u, v)`` for every edge line of an edge-list file, checked."""
    try:
        handle = path.open(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError("topology", f"cannot read edge list {shorten(repr(str(path)), 200)}: "
                         f"{exc.strerror}") from None
    count = 0
    with handle:
        lineno = 0
        while True:
            try:
                line = handle.readline(_MAX_LINE)
            except UnicodeDecodeError:
                raise not_text(path) from None
            except OSError as exc:
                raise InputError("topology", f"cannot read edge list "
                                 f"{shorten(repr(str(path)), 200)}: {exc.strerror}") from None
            if not line:
                return
            lineno += 1
            if "\x00" in line:
                raise not_text(path)
            check(len(line) < _MAX_LINE or line.endswith("\n"), "topology",
                  f"{path.name} line {lineno}: longer than {_MAX_LINE} characters")
            body = line.split("#", 1)[0].replace(",", " ").strip()
            if not body:
                continue
            parts = body.split()
            check(len(parts) == 2, "topology",
                  f"{path.name} line {lineno}: expected 'u v' (two columns), "
                  f"got {len(parts)}: {shorten(body)!r}")
            count += 1
            check(count <= generators.MAX_GRAPH_EDGES, "topology",
                  f"{path.name} holds more than {generators.MAX_GRAPH_EDGES} edges "
                  f"(line {lineno}); {limits()}")
            yield lineno, _label(parts[0]), _label(parts[1])


def _check_edgelist_nodes(path: Path, lineno: int, nodes: int) -> None:
    check(nodes <= generators.MAX_GRAPH_NODES, "topology",
          f"{path.name} holds more than {generators.MAX_GRAPH_NODES} nodes "
          f"(line {lineno}); {limits()}")


def _count_edgelist(path: Path) -> tuple[int, int]:
    """Distinct labels and edge lines of an edge-list file, read once without a graph."""
    labels: set = set()
    edges = 0
    for lineno, u, v in _edge_lines(path):
        labels.update((u, v))
        edges += 1
        _check_edgelist_nodes(path, lineno, len(labels))
    return len(labels), edges


# --------------------------------------------------------------------------- generators


# --------------------------------------------------------------------------- expressions


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
