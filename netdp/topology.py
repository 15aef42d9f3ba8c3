"""Graphs a token can walk: the directed ring, the complete graph, any networkx graph.

A :class:`Topology` is compact: the ring and the complete graph are implicit (nothing
of size n² or even n is stored), other graphs are kept as CSR adjacency arrays.
Builders are plain functions, in the style of networkx generators.
"""

from __future__ import annotations

import ast
import math
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal

import networkx as nx
import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

from netdp.errors import InputError, check

Kind = Literal["ring", "complete", "graph"]
BUILTIN = ("ring", "complete")


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

    @property
    def degrees(self) -> np.ndarray:
        """Out-degree of every node."""
        if self.kind == "ring":
            return np.ones(self.n, dtype=np.int64)
        if self.kind == "complete":
            return np.full(self.n, self.n if self.self_moves else self.n - 1, dtype=np.int64)
        return np.diff(self.indptr)

    @property
    def is_regular(self) -> bool:
        """Whether every node has the same out-degree."""
        d = self.degrees
        return bool(d.min() == d.max())

    def describe(self) -> str:
        """One line for reports."""
        if self.kind == "ring":
            return f"directed ring (n={self.n})"
        if self.kind == "complete":
            moves = "self-moves allowed" if self.self_moves else "no self-moves"
            return f"complete graph (n={self.n}, {moves})"
        m = int(self.indptr[-1]) // (1 if self.directed else 2)
        return f"{self.name} ({'directed, ' if self.directed else ''}n={self.n}, {m} edges)"


def ring(n: int) -> Topology:
    """Directed ring ``0 -> 1 -> ... -> n-1 -> 0``."""
    _check_nodes(n)
    return Topology("ring", n, "ring", directed=True)


def complete(n: int, self_moves: bool = True) -> Topology:
    """Complete graph; with ``self_moves`` a holder may forward the token to itself."""
    _check_nodes(n)
    return Topology("complete", n, "complete", self_moves=self_moves)


def from_networkx(graph: nx.Graph, name: str = "graph") -> Topology:
    """Convert a networkx graph (directed or not) and check that a walk can visit it all.

    Nodes are renumbered ``0..n-1`` in the graph's node order; the original labels are
    kept in :attr:`Topology.labels`.
    """
    n = graph.number_of_nodes()
    _check_nodes(n, param="topology", what=f"graph {name!r} has {n} node(s)")
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
    """Read a whitespace- or comma-separated edge list (``u v`` per line, ``#`` comments)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise InputError("topology", f"cannot read edge list {str(path)!r}: {exc.strerror}")\
            from None
    graph = nx.DiGraph() if directed else nx.Graph()
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].replace(",", " ").strip()
        if not line:
            continue
        parts = line.split()
        check(len(parts) >= 2, "topology",
              f"{path.name} line {lineno}: expected 'u v', got {line!r}")
        graph.add_edge(*(_label(p) for p in parts[:2]))
    return from_networkx(graph, name=path.name)


def available() -> dict[str, str]:
    """Names the CLI accepts as ``--topology``, with a one-line description each."""
    names = {
        "ring": "Directed ring 0 -> 1 -> ... -> n-1 -> 0 (AISTATS 2022 Algorithms 1, 2).",
        "complete": "Complete graph, uniform forwarding (AISTATS 2022 Algorithms 3-5).",
    }
    for path in sorted(_spec_dir().iterdir(), key=lambda p: p.name):
        if path.name.endswith(".toml"):
            names[path.name[:-5]] = _read_spec(path)["description"]
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
    """
    if spec == "ring":
        return ring(100 if n is None else n)
    if spec == "complete":
        return complete(100 if n is None else n, self_moves=self_moves)
    named = _spec_dir() / f"{spec}.toml"
    if named.is_file():
        return _from_spec(_read_spec(named), spec, n, seed)
    path = Path(spec)
    if path.suffix == ".toml" and path.is_file():
        return _from_spec(_read_spec(path), path.stem, n, seed)
    if path.is_file():
        topo = read_edgelist(path, directed=directed)
        check(n is None or n == topo.n, "nodes",
              f"{path.name} has {topo.n} nodes; omit --nodes or pass --nodes {topo.n}")
        return topo
    if path.suffix or "/" in spec:
        raise InputError("topology", f"cannot read {spec!r}: no such file")
    raise InputError("topology", f"unknown topology {spec!r}; choose one of "
                     f"{', '.join(available())}, or give an edge-list / TOML file")


# --------------------------------------------------------------------------- helpers

def _check_nodes(n: int, param: str = "nodes", what: str | None = None) -> None:
    ok = isinstance(n, int | np.integer) and not isinstance(n, bool) and n >= 2
    check(ok, param, f"{what or f'got {n!r}'}; a walk needs at least 2 nodes")


def _check_connected(topo: Topology, adj: sparse.csr_array) -> None:
    """A walk must be able to reach every node from every node."""
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


def _spec_dir():
    """The named specs: package data when installed, ``topologies/`` in a source tree."""
    try:
        return resources.files("netdp.topologies")
    except ModuleNotFoundError:  # netdp imported from a checkout (e.g. python -m from its root)
        return Path(__file__).resolve().parent.parent / "topologies"


def _read_spec(path) -> dict:
    try:
        spec = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError("topology", f"cannot read topology spec {path.name}: {exc}") from None
    for key in ("description", "generator", "size"):
        check(key in spec, "topology", f"topology spec {path.name} lacks the key {key!r}")
    check(spec["size"] in ("n", "log2", "sqrt", "fixed"), "topology",
          f"{path.name}: size must be one of n, log2, sqrt, fixed")
    check(hasattr(nx, spec["generator"]), "topology",
          f"{path.name}: networkx has no generator {spec['generator']!r}")
    return spec


def _from_spec(spec: dict, name: str, n: int | None,
               seed: np.random.SeedSequence | int | None) -> Topology:
    gen = getattr(nx, spec["generator"])
    size = spec["size"]
    if size == "fixed":
        graph = gen()
        check(n is None or n == graph.number_of_nodes(), "nodes",
              f"{name} has {graph.number_of_nodes()} nodes; omit --nodes or pass "
              f"--nodes {graph.number_of_nodes()}")
        return from_networkx(graph, name=name)
    n = int(spec.get("default_nodes", 100)) if n is None else n
    _check_nodes(n)
    if size == "log2":
        d = int(round(math.log2(n)))
        check(2**d == n, "nodes", f"{name} needs a power of two, got {n}")
        args: tuple = (d,)
    elif size == "sqrt":
        side = math.isqrt(n)
        check(side * side == n, "nodes", f"{name} needs a perfect square, got {n}")
        args = (side, side)
    else:
        args = (n,)
    params = {k: _evaluate(v, n, name, k) for k, v in spec.get("params", {}).items()}
    if spec.get("random"):
        ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        params["seed"] = int(ss.generate_state(1)[0])
    return from_networkx(gen(*args, **params), name=name)


_ALLOWED = {"log": math.log, "sqrt": math.sqrt, "min": min, "max": max, "pi": math.pi,
            "e": math.e, "ceil": math.ceil, "floor": math.floor}


def _evaluate(value, n: int, name: str, key: str):
    """Evaluate a spec parameter: a number, or an arithmetic expression in ``n``."""
    if not isinstance(value, str):
        return value
    tree = ast.parse(value, mode="eval")
    for node in ast.walk(tree):
        ok = isinstance(node, ast.Expression | ast.BinOp | ast.UnaryOp | ast.Constant
                        | ast.Call | ast.Name | ast.Load | ast.operator | ast.unaryop)
        if isinstance(node, ast.Name):
            ok = node.id == "n" or node.id in _ALLOWED
        check(ok, "topology", f"{name}: parameter {key} = {value!r} is not an expression in n")
    return eval(compile(tree, key, "eval"), {"__builtins__": {}}, {"n": n, **_ALLOWED})
