"""Graphs a token can walk: the directed ring, the complete graph, any networkx graph.

A :class:`Topology` is compact: the ring and the complete graph are implicit (nothing
of size n² or even n is stored), other graphs are kept as CSR adjacency arrays.
Builders are plain functions, in the style of networkx generators.

Sizes are checked before anything is built (:func:`expected_size`, :func:`check_size`):

- the implicit ring and complete graph take any integer ``2 <= n <= 2**62`` (node ids fit
  int64; int32 is used below 2**31, see :func:`netdp.engine.trace.holder_dtype`);
- explicit graphs (CSR arrays, built through networkx) are limited to
  :data:`MAX_GRAPH_NODES` nodes and :data:`MAX_GRAPH_EDGES` edges. Building one costs
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
booleans, or arithmetic expressions in ``n``, see :func:`_evaluate`).
"""

from __future__ import annotations

import ast
import math
import operator
import os
import re
import stat
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeGuard

import numpy as np

from netdp.core.errors import InputError, check

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    import networkx as nx
    from scipy import sparse

Kind = Literal["ring", "complete", "graph"]
BUILTIN = ("ring", "complete")

MAX_IMPLICIT_NODES = 2**62
"""Most nodes of the implicit ring and complete graph (node ids fit int64 with room)."""
MAX_GRAPH_NODES = 5_000_000
"""Most nodes of an explicit (CSR) graph: about 1.5 GiB of networkx nodes at the peak."""
MAX_GRAPH_EDGES = 10_000_000
"""Most edges of an explicit (CSR) graph: about 6.5 GiB of peak memory while building."""
MAX_GNP_PAIRS = 2_000_000_000
"""Most node pairs networkx's quadratic G(n, p) may visit (about 2 minutes; n <= 63246)."""

_NAME = re.compile(r"[A-Za-z0-9_-]+")  # a named spec: no path separators, no dots
_MAX_SPEC_BYTES = 1 << 16  # a topology spec is a few lines
_MAX_LINE = 1 << 16  # characters in one edge-list line
_SPEC_KEYS = {"description": str, "generator": str, "size": str, "random": bool,
              "default_nodes": int, "min_nodes": int, "params": dict}
_SIZES = ("n", "log2", "sqrt", "fixed")


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
        """Out-degree of every node (an array of size n, even for the implicit kinds)."""
        if self.kind == "ring":
            return np.ones(self.n, dtype=np.int64)
        if self.kind == "complete":
            return np.full(self.n, self.n if self.self_moves else self.n - 1, dtype=np.int64)
        assert self.indptr is not None  # a graph has its CSR arrays
        return np.diff(self.indptr)

    @property
    def is_regular(self) -> bool:
        """Whether every node has the same out-degree."""
        if self.kind != "graph":  # implicit: no array of size n
            return True
        d = self.degrees
        return bool(d.min() == d.max())

    def describe(self) -> str:
        """One line for reports."""
        if self.kind == "ring":
            return f"directed ring (n={self.n})"
        if self.kind == "complete":
            moves = "self-moves allowed" if self.self_moves else "no self-moves"
            return f"complete graph (n={self.n}, {moves})"
        assert self.indptr is not None  # a graph has its CSR arrays
        m = int(self.indptr[-1]) // (1 if self.directed else 2)
        return f"{self.name} ({'directed, ' if self.directed else ''}n={self.n}, {m} edges)"


def ring(n: int) -> Topology:
    """Directed ring ``0 -> 1 -> ... -> n-1 -> 0``."""
    return Topology("ring", _check_nodes(n), "ring", directed=True)


def complete(n: int, self_moves: bool = True) -> Topology:
    """Complete graph; with ``self_moves`` a holder may forward the token to itself."""
    return Topology("complete", _check_nodes(n), "complete", self_moves=self_moves)


def from_networkx(graph: nx.Graph, name: str = "graph") -> Topology:
    """Convert a networkx graph (directed or not) and check that a walk can visit it all.

    Nodes are renumbered ``0..n-1`` in the graph's node order; the original labels are
    kept in :attr:`Topology.labels`. Graphs beyond :data:`MAX_GRAPH_NODES` nodes or
    :data:`MAX_GRAPH_EDGES` edges are refused.
    """
    import networkx as nx
    from scipy import sparse

    check(isinstance(graph, nx.Graph), "topology",
          f"{name}: expected a networkx graph (got {type(graph).__name__})")
    n = graph.number_of_nodes()
    _check_nodes(n, param="topology", what=f"graph {name!r} has {n} node(s)")
    m = graph.number_of_edges()
    check(n <= MAX_GRAPH_NODES and m <= MAX_GRAPH_EDGES, "topology",
          f"{name} has {n} nodes and {m} edges; {_limits()}")
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
            names[path.name[:-5]] = _read_spec(path, path.name[:-5])["description"]
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
    n = None if n is None else _check_nodes(n)
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
    plan = _plan(*where, n)
    _check_plan(plan)
    graph = _generate(plan, seed)
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
    n = None if n is None else _check_nodes(n)
    if kind in BUILTIN:
        n = 100 if n is None else n
        return n, (n if kind == "ring" else n * (n - 1) // 2)
    if kind == "file":
        assert isinstance(where, Path)
        return _count_edgelist(where)
    assert isinstance(where, tuple)  # kind == "spec"
    plan = _plan(*where, n)
    if plan.n is None:
        graph = _generate(plan, None)
        return graph.number_of_nodes(), graph.number_of_edges()
    return plan.n, plan.edges


def check_size(spec: str, n: int | None = None) -> None:
    """Raise the :class:`InputError` that ``build(spec, n)`` would raise before building.

    Checks the spec, n, the size against :data:`MAX_GRAPH_NODES` and
    :data:`MAX_GRAPH_EDGES` and the generator's parameters against n, as a sweep may do
    for every grid point up front. Builds nothing large (see :func:`expected_size`); the
    connectivity of random graphs is only known once built.
    """
    kind, where = _resolve(spec)
    n = None if n is None else _check_nodes(n)
    if kind == "file":
        assert isinstance(where, Path)
        size = _count_edgelist(where)[0]
        check(n is None or n == size, "nodes",
              f"{where.name} has {size} nodes; omit --nodes or pass --nodes {size}")
    elif kind == "spec":
        assert isinstance(where, tuple)
        plan = _plan(*where, n)
        _check_plan(plan)
        if plan.n is None and n is not None:
            size = expected_size(spec)[0]
            check(n == size, "nodes",
                  f"{plan.name} has {size} nodes; omit --nodes or pass --nodes {size}")


# --------------------------------------------------------------------------- helpers

def _check_nodes(n: int, param: str = "nodes", what: str | None = None) -> int:
    """``n`` as an int, if it is an integer in ``[2, MAX_IMPLICIT_NODES]``."""
    check(isinstance(n, int | np.integer) and not isinstance(n, bool), param,
          f"must be an integer >= 2 (got {_short(repr(n))})")
    check(n >= 2, param, f"{what or f'got {n!r}'}; a walk needs at least 2 nodes")
    check(n <= MAX_IMPLICIT_NODES, param,
          f"{what or f'got {n}'}; node ids are limited to n <= 2**62 = {MAX_IMPLICIT_NODES}")
    return int(n)


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


def _limits() -> str:
    return f"explicit graphs are limited to {MAX_GRAPH_NODES} nodes and {MAX_GRAPH_EDGES} edges"


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _spec_dir() -> Traversable:
    """The named specs: package data when installed, ``topologies/`` in a source tree."""
    try:
        return resources.files("netdp.topologies")
    except ModuleNotFoundError:  # netdp imported from a checkout (e.g. python -m from its root)
        return Path(__file__).resolve().parent.parent / "topologies"


# --------------------------------------------------------------------------- files

#: What a spec names for :func:`_plan`: ``(source, name, label, named)``.
_SpecRef = tuple["Traversable", str, str, bool]


def _resolve(spec) -> tuple[str, _SpecRef | Path | None]:
    """What ``spec`` names: ``("ring"|"complete", None)``, ``("spec", (source, name,
    label, named))`` or ``("file", path)``; refuses what is neither."""
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if not isinstance(spec, str):
        raise InputError("topology",
                         f"must be a name or a file path (got {_short(repr(spec))})")
    if spec in BUILTIN:
        return spec, None
    if len(spec) <= 100 and _NAME.fullmatch(spec):
        named = _spec_dir() / f"{spec}.toml"
        if named.is_file():
            return "spec", (named, spec, spec, True)
    shown = _short(repr(spec), 200)
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


def _not_text(path) -> InputError:
    return InputError("topology", f"cannot read {_short(repr(str(path)), 200)}: "
                      "not a UTF-8 text file")


def _edge_lines(path: Path) -> Iterator[tuple[int, int | str, int | str]]:
    """``(line number, u, v)`` for every edge line of an edge-list file, checked."""
    try:
        handle = path.open(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError("topology", f"cannot read edge list {_short(repr(str(path)), 200)}: "
                         f"{exc.strerror}") from None
    count = 0
    with handle:
        lineno = 0
        while True:
            try:
                line = handle.readline(_MAX_LINE)
            except UnicodeDecodeError:
                raise _not_text(path) from None
            except OSError as exc:
                raise InputError("topology", f"cannot read edge list "
                                 f"{_short(repr(str(path)), 200)}: {exc.strerror}") from None
            if not line:
                return
            lineno += 1
            if "\x00" in line:
                raise _not_text(path)
            check(len(line) < _MAX_LINE or line.endswith("\n"), "topology",
                  f"{path.name} line {lineno}: longer than {_MAX_LINE} characters")
            body = line.split("#", 1)[0].replace(",", " ").strip()
            if not body:
                continue
            parts = body.split()
            check(len(parts) == 2, "topology",
                  f"{path.name} line {lineno}: expected 'u v' (two columns), "
                  f"got {len(parts)}: {_short(body)!r}")
            count += 1
            check(count <= MAX_GRAPH_EDGES, "topology",
                  f"{path.name} holds more than {MAX_GRAPH_EDGES} edges (line {lineno}); "
                  f"{_limits()}")
            yield lineno, _label(parts[0]), _label(parts[1])


def _check_edgelist_nodes(path: Path, lineno: int, nodes: int) -> None:
    check(nodes <= MAX_GRAPH_NODES, "topology",
          f"{path.name} holds more than {MAX_GRAPH_NODES} nodes (line {lineno}); {_limits()}")


def _count_edgelist(path: Path) -> tuple[int, int]:
    """Distinct labels and edge lines of an edge-list file, read once without a graph."""
    labels: set = set()
    edges = 0
    for lineno, u, v in _edge_lines(path):
        labels.update((u, v))
        edges += 1
        _check_edgelist_nodes(path, lineno, len(labels))
    return len(labels), edges


def _read_spec(source, label: str) -> dict:
    """A topology spec's keys, with their types and values checked."""
    try:
        with source.open("rb") as handle:
            data = handle.read(_MAX_SPEC_BYTES + 1)
    except OSError as exc:
        raise InputError("topology", f"cannot read topology spec {label}: "
                         f"{exc.strerror or exc}") from None
    check(len(data) <= _MAX_SPEC_BYTES, "topology",
          f"{label}: larger than {_MAX_SPEC_BYTES} bytes; not a topology spec")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _not_text(source) from None
    try:
        spec = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        raise InputError("topology", f"cannot read topology spec {label}: {exc}") from None
    for key in ("description", "generator", "size"):
        check(key in spec, "topology", f"topology spec {label} lacks the key {key!r}")
    for key, value in spec.items():
        check(key in _SPEC_KEYS, "topology", f"{label}: unknown key {key!r}; a topology "
              f"spec has the keys {', '.join(_SPEC_KEYS)}")
        want = _SPEC_KEYS[key]
        ok = isinstance(value, want) and not (want is int and isinstance(value, bool))
        check(ok, "topology", f"{label}: {key} must be {_TYPE_NAMES[want]} "
              f"(got {_toml_type(value)} {_short(repr(value))})")
    check(spec["size"] in _SIZES, "topology",
          f"{label}: size must be one of {', '.join(_SIZES)} (got {_short(spec['size'])!r})")
    _generator(spec["generator"], label)
    low = spec.get("min_nodes", 2)
    check(low >= 2, "topology", f"{label}: min_nodes must be >= 2 (got {low})")
    default = spec.get("default_nodes", 100)
    check(default >= low, "topology",
          f"{label}: default_nodes must be >= min_nodes = {low} (got {default})")
    for key in spec.get("params", {}):
        check(key.isidentifier(), "topology", f"{label}: {key!r} is not a parameter name")
    return spec


_TYPE_NAMES = {str: "a string", bool: "true or false", int: "an integer", dict: "a table"}


def _toml_type(value) -> str:
    kinds = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
             list: "an array", dict: "a table"}
    return kinds.get(type(value), "a date/time")


def _generator(name: str, label: str):
    """The networkx graph generator called ``name``; nothing else of networkx."""
    import networkx as nx

    gen = getattr(nx.generators, name, None) if name.isidentifier() else None
    module = getattr(gen, "__module__", None) or ""
    ok = (not name.startswith("_") and callable(gen) and not isinstance(gen, type)
          and module.startswith("networkx.generators"))
    check(ok, "topology",
          f"{label}: {_short(name)!r} is not a graph generator of networkx.generators")
    return gen


# --------------------------------------------------------------------------- generators

@dataclass(frozen=True)
class _Plan:
    """A spec resolved for one n, before its generator runs."""

    spec: dict
    name: str  # the topology's name (spec name, or the file's stem)
    label: str  # for messages (spec name, or the file's name)
    named: bool  # shipped with netdp (so only n can be wrong)
    n: int | None  # None: a fixed-size graph
    args: tuple = ()
    params: dict | None = None  # None: not evaluated (n beyond the limits)
    edges: int | None = None


def _plan(source, name: str, label: str, named: bool, n: int | None) -> _Plan:
    """Read a spec and work out the generator's arguments and the graph's size for n."""
    spec = _read_spec(source, label)
    size = spec["size"]
    if size == "fixed":
        return _Plan(spec, name, label, named, None)
    n = _check_nodes(spec.get("default_nodes", 100)) if n is None else n
    low = spec.get("min_nodes", 2)
    check(n >= low, "nodes", f"{label} needs --nodes >= {low} (got {n})")
    if size == "log2":
        d = n.bit_length() - 1
        check(n == 1 << d, "nodes", f"{label} needs a power of two, got {n}")
        args: tuple = (d,)
    elif size == "sqrt":
        side = math.isqrt(n)
        check(side * side == n, "nodes", f"{label} needs a perfect square, got {n}")
        args = (side, side)
    else:
        args = (n,)
    try:
        params = {k: _evaluate(v, n, label, k) for k, v in spec.get("params", {}).items()}
    except InputError:
        if n <= MAX_GRAPH_NODES:
            raise
        params = None  # refused for its size anyway: say that first
    edges = None if params is None else _expected_edges(spec["generator"], args, params)
    return _Plan(spec, name, label, named, n, args, params, edges)


def _check_plan(plan: _Plan) -> None:
    """Refuse a plan beyond the limits, or whose parameters the generator would refuse."""
    if plan.n is None:
        return
    n, edges, gen = plan.n, plan.edges, plan.spec["generator"]
    if n > MAX_GRAPH_NODES or (edges is not None and edges > MAX_GRAPH_EDGES):
        about = "about " if plan.spec.get("random") else ""
        has = "" if edges is None else f" has {about}{edges} edges"
        raise InputError("nodes", f"{plan.label} with n = {n} nodes{has}; {_limits()}")
    assert plan.params is not None  # evaluated for every n within the limits
    _check_params(plan)
    prob = plan.params.get("p")
    if gen in _GNP and _is_real(prob) and 0 < prob < 1:
        pairs = n * (n - 1) // (1 if plan.params.get("directed") else 2)
        check(pairs <= MAX_GNP_PAIRS, "nodes",
              f"{plan.label} with n = {n} nodes: networkx's G(n, p) draws a coin for each "
              f"of its {pairs} node pairs; it is limited to {MAX_GNP_PAIRS} pairs")


# generators whose parameters are checked against n, and whose size is known
_LATTICE = {"watts_strogatz_graph", "connected_watts_strogatz_graph",
            "newman_watts_strogatz_graph"}
_GNP = {"erdos_renyi_graph", "gnp_random_graph", "binomial_graph"}  # quadratic time
_ANY_GNP = _GNP | {"fast_gnp_random_graph"}


def _check_params(plan: _Plan) -> None:
    """Check the parameters of the generators networkx would refuse, against n."""
    gen, n, params, raw = plan.spec["generator"], plan.n, plan.params, plan.spec.get("params", {})
    assert params is not None  # see _check_plan

    def shown(key: str) -> str:
        value = raw[key]
        return f"{key} = {value!r} = {params[key]}" if isinstance(value, str) else \
            f"{key} = {params[key]}"

    def need(ok: bool, key: str, what: str) -> None:
        check(ok, "topology", f"{plan.label}: parameter {shown(key)} at n = {n}: {what}")

    if gen in _LATTICE and "k" in params:
        k = params["k"]
        need(_is_int(k) and k >= 2, "k", "the lattice degree must be an integer >= 2")
        check(k < n, "nodes", f"{plan.label} needs --nodes >= {k + 1} for {shown('k')} "
              f"(got {n}; the ring lattice needs k < n)")
    if gen == "barabasi_albert_graph" and "m" in params:
        m = params["m"]
        need(_is_int(m) and m >= 1, "m", "must be an integer >= 1")
        check(m < n, "nodes", f"{plan.label} needs --nodes >= {m + 1} for {shown('m')} "
              f"(got {n}; networkx needs m < n)")
    if (gen in _LATTICE | _ANY_GNP) and "p" in params:
        p = params["p"]
        need(_is_real(p) and 0 <= p <= 1, "p", "a probability must lie in [0, 1]")
    if gen == "random_geometric_graph":
        if "radius" in params:
            need(_is_real(params["radius"]) and params["radius"] >= 0, "radius",
                 "must be a number >= 0")
        if "dim" in params:
            need(_is_int(params["dim"]) and params["dim"] >= 1, "dim",
                 "must be an integer >= 1")


def _is_int(x) -> TypeGuard[int]:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_real(x) -> TypeGuard[int | float]:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _expected_edges(gen: str, args: tuple, params: dict) -> int | None:
    """Edges (expected, for random generators) of ``gen(*args, **params)``; None: unknown."""
    get: Callable[..., Any] = params.get  # a missing key gives None: TypeError below
    try:
        if gen == "hypercube_graph":
            (d,) = args
            return d * 2 ** (d - 1)
        if gen == "grid_2d_graph":
            a, b = args
            return 2 * a * b if get("periodic") else a * (b - 1) + b * (a - 1)
        if len(args) != 1:
            return None
        (n,) = args
        pairs = n * (n - 1) // 2
        if gen == "complete_graph":
            return pairs
        if gen == "cycle_graph":
            return n
        if gen == "path_graph":
            return n - 1
        if gen in _LATTICE:
            k = int(get("k"))
            if k >= n:
                return pairs
            extra = float(get("p", 0)) if gen == "newman_watts_strogatz_graph" else 0.0
            return math.ceil(n * (k // 2) * (1 + extra))
        if gen == "barabasi_albert_graph":
            m = int(get("m"))
            return m * (n - m)
        if gen in _ANY_GNP:
            p = min(1.0, max(0.0, float(get("p"))))
            return round(p * pairs * (2 if get("directed") else 1))
        if gen == "random_geometric_graph" and get("dim", 2) == 2 and get("p", 2) == 2:
            return round(pairs * _close_pair_probability(float(get("radius"))))
    except (TypeError, ValueError, OverflowError):  # parameters _check_params refuses
        return None
    return None


def _close_pair_probability(r: float) -> float:
    """Probability that two uniform points of the unit square lie within ``r``."""
    if r <= 0:
        return 0.0
    if r >= 1:  # exact up to 1, then an upper bound
        return 1.0
    return math.pi * r**2 - 8 * r**3 / 3 + r**4 / 2


def _generate(plan: _Plan, seed: np.random.SeedSequence | int | None) -> nx.Graph:
    """Run the spec's generator; any failure of networkx becomes an :class:`InputError`."""
    import networkx as nx

    name = plan.spec["generator"]
    gen = _generator(name, plan.label)
    params = dict(plan.params or {})
    if plan.spec.get("random"):
        ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        params["seed"] = int(ss.generate_state(1)[0])
    try:
        graph = gen(*plan.args, **params)
    except Exception as exc:  # noqa: BLE001 - NetworkXError, ValueError, TypeError, ...
        at = "" if plan.n is None else f" with n = {plan.n}"
        raise InputError("nodes" if plan.named else "topology",
                         f"{plan.label}{at}: networkx {name}() failed: "
                         f"{type(exc).__name__}: {_short(str(exc), 200)}") from None
    check(isinstance(graph, nx.Graph), "topology",
          f"{plan.label}: networkx {name}() returned {type(graph).__name__}, not a graph")
    return graph


# --------------------------------------------------------------------------- expressions

_FUNCTIONS: dict[str, tuple[Callable[..., Any], int, int | None]] = {
    "log": (math.log, 1, 2), "sqrt": (math.sqrt, 1, 1), "min": (min, 2, None),
    "max": (max, 2, None), "ceil": (math.ceil, 1, 1), "floor": (math.floor, 1, 1)}
_CONSTANTS = {"pi": math.pi, "e": math.e}
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
              ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv,
              ast.Mod: operator.mod, ast.Pow: operator.pow}
_GRAMMAR = ("numbers, n, pi, e, + - * / // % ** and " + ", ".join(_FUNCTIONS) + "()")
_MAX_EXPRESSION = 256  # characters
_MAX_EXPONENT = 64
_MAX_MAGNITUDE = 1e18  # of every value met while evaluating


class _NotArithmetic(Exception):
    """The expression uses something else than arithmetic in n."""


class _Refused(Exception):
    """The expression is arithmetic, but its value is out of bounds at this n."""


def _evaluate(value, n: int, label: str, key: str):
    """Evaluate a spec parameter: a number, a boolean, or an arithmetic expression in ``n``.

    Expressions are evaluated over their syntax tree, never by ``eval``: numbers, ``n``,
    ``pi``, ``e``, ``+ - * / // % **``, unary minus and the functions ``log`` (with an
    optional base), ``sqrt``, ``min``, ``max``, ``ceil``, ``floor``. Every value met must
    be a finite real number of magnitude at most 1e18, and exponents at most 64 in
    magnitude, so no expression can take long or grow a huge number.
    """
    if isinstance(value, bool):
        return value
    head = f"{label}: parameter {key} = {_short(repr(value))}"
    if isinstance(value, int | float):
        try:
            return _real(value)
        except _Refused as exc:
            raise InputError("topology", f"{head}: {exc}") from None
    check(isinstance(value, str), "topology", f"{label}: parameter {key} must be a number, "
          f"a boolean or an expression in n (got {_toml_type(value)})")
    check(len(value) <= _MAX_EXPRESSION, "topology",
          f"{head}: longer than {_MAX_EXPRESSION} characters")
    try:
        tree = ast.parse(value.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # ValueError: a NUL
        raise InputError("topology", f"{head} is not an expression in n") from None
    try:
        return _arithmetic(tree.body, n)
    except _NotArithmetic as exc:
        raise InputError("topology", f"{head} is not an expression in n: {exc}") from None
    except (_Refused, ArithmeticError, ValueError) as exc:  # ValueError: math domain error
        raise InputError("topology", f"{head} at n = {n}: {exc}") from None
    except RecursionError:
        raise InputError("topology", f"{head} is nested too deeply") from None


def _arithmetic(node: ast.AST, n: int) -> int | float:
    """The value of one node of an expression's syntax tree (see :func:`_evaluate`)."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise _NotArithmetic(f"{_short(repr(node.value))} is not a number")
        return _real(node.value)
    if isinstance(node, ast.Name):
        if node.id == "n":
            return n
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise _NotArithmetic(f"unknown name {_short(node.id)!r}; allowed: {_GRAMMAR}")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _arithmetic(node.operand, n)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        a, b = _arithmetic(node.left, n), _arithmetic(node.right, n)
        if isinstance(node.op, ast.Pow):
            if abs(b) > _MAX_EXPONENT:
                raise _Refused(f"the exponent {b} is beyond +-{_MAX_EXPONENT}")
            if a != 0 and b * math.log10(abs(a)) > 19:
                raise _Refused(f"{a} ** {b} exceeds {_MAX_MAGNITUDE:g} in magnitude")
        return _real(_OPERATORS[type(node.op)](a, b))
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCTIONS and not node.keywords):
        fn, least, most = _FUNCTIONS[node.func.id]
        count = len(node.args)
        if count < least or (most is not None and count > most):
            takes = least if most == least else f"{least} or more" if most is None \
                else f"{least} or {most}"
            raise _NotArithmetic(f"{node.func.id}() takes {takes} argument(s) (got {count})")
        return _real(fn(*(_arithmetic(arg, n) for arg in node.args)))
    raise _NotArithmetic(f"{_short(ast.unparse(node))!r} is not allowed; use {_GRAMMAR}")


def _real(value) -> int | float:
    """``value`` if it is a finite real number within the magnitude bound."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Refused(f"the value {_short(repr(value))} is not a real number")
    if not math.isfinite(value):
        raise _Refused(f"the value {value} is not finite")
    if abs(value) > _MAX_MAGNITUDE:
        raise _Refused(f"the value {_short(repr(value))} exceeds {_MAX_MAGNITUDE:g} in magnitude")
    return value


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
