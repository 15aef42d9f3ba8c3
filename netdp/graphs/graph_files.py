"""Graph files: the format of a ``--topology`` file, its size counted before anything is
built, and the networkx graph it holds.

Formats (``--format``, or the file's extension):

- ``graphml`` (``.graphml``) and ``gml`` (``.gml``): read by networkx's readers; the file
  declares whether its edges are directed, and its edges may carry attributes (weights:
  ``--weight ATTR``). Both are parsed whole, at about 26 (GraphML) and 15 (GML) bytes of
  memory per byte of file, so they are limited to :data:`MAX_PARSED_BYTES`;
- ``adjlist`` (``.adjlist``): one line per node, ``u v1 v2 ...`` (``u``'s neighbours),
  networkx's adjacency-list format; nodes are numbered in the order of their lines (so a
  file written by ``networkx.write_adjlist`` comes back in its graph's node order), then
  nodes named only as neighbours;
- ``edgelist`` (``.edgelist``, ``.edges``, ``.txt``, ``.csv``, ``.tsv``, or no extension):
  ``u v`` per line, or ``u v w`` with a weight ``w`` on every line (the first edge line
  decides); ``weighted-edgelist``: ``u v w`` on every line. Nodes are numbered in the
  order they first appear. An edge given twice is one edge (with the same weight);
- ``contacts`` (``--format contacts`` only): a contact trace ``t,u,v[,w]``, the edges
  available at each time: a time-varying graph
  (:func:`netdp.graphs.time_varying.read_contact_trace`).

The text formats take whitespace or commas between columns and ``#`` comments, and are
read line by line, so that an error names its line; labels that are integers become
integers. Adjacency and edge lists are undirected unless ``--directed``; a self-loop is
kept (the token may stay). Weights must be finite numbers > 0.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.parsers import expat

import numpy as np

from netdp.core.errors import InputError, check, shorten
from netdp.core.limits import check_seconds
from netdp.graphs import generators
from netdp.graphs.generators import limits, not_text

if TYPE_CHECKING:
    import networkx as nx

FORMATS = ("graphml", "gml", "adjlist", "edgelist", "weighted-edgelist", "contacts")
#: The format of a file by its extension (lower case; ``""``: no extension).
EXTENSIONS = {".graphml": "graphml", ".gml": "gml", ".adjlist": "adjlist",
              ".edgelist": "edgelist", ".edges": "edgelist", ".txt": "edgelist",
              ".csv": "edgelist", ".tsv": "edgelist", "": "edgelist"}
#: Formats whose edges carry named attributes and that declare their direction.
ATTRIBUTED = ("graphml", "gml")
MAX_PARSED_BYTES = 256 * 2**20
"""Largest GraphML or GML file: networkx parses them whole (a 256 MiB GraphML file, about
2.9 million edges, peaks near 6.5 GiB while parsed)."""
#: Seconds networkx takes to parse a byte of each format (measured on a 4.6 MB GraphML and
#: a 2.6 MB GML file: 0.77 s and 2.4 s): a file whose parsing alone would exceed the time
#: limit (NETDP_TIME_LIMIT) is refused before it is parsed.
PARSE_SECONDS = {"graphml": 0.17e-6, "gml": 0.9e-6}
#: Seconds a contact trace's row takes to read into its snapshots (35 us measured at
#: 10^5 rows on a busy machine, lowered: an estimate errs towards the shorter run).
CONTACT_SECONDS = 25e-6
MAX_LINE = 1 << 16  # characters in one line of a text format
_INT = re.compile(r"[+-]?[0-9]+")
_GML_TOKEN = re.compile(r'"[^"]*"|\[|\]|[^\s\[\]"]+')


def file_format(path: Path, fmt: str | None) -> str:
    """The format of ``path``: ``fmt`` if given, else from its extension."""
    if fmt is not None:
        check(fmt in FORMATS, "format", f"must be one of {', '.join(FORMATS)} (got {fmt!r})")
        return fmt
    found = EXTENSIONS.get(path.suffix.lower())
    if found is None:  # the file given is the culprit (--format, not given, is the remedy)
        raise InputError("topology", f"cannot tell the format of {path.name} from its extension "
                         f"{path.suffix!r}: give --format {'|'.join(FORMATS)} (or name it "
                         ".graphml, .gml, .adjlist, .edgelist, .txt or .csv)")
    return found


def check_options(path: Path, fmt: str, weight: str | None, directed: bool) -> None:
    """Refuse ``--weight`` and ``--directed`` where the file's format decides them."""
    if fmt in ATTRIBUTED:
        check(not directed, "directed", f"applies to edge and adjacency lists; {path.name} "
              f"({fmt}) declares whether its edges are directed")
        return
    if fmt == "adjlist":
        check(weight is None, "weight", f"{path.name} is an adjacency list: it has no "
              "weights (weighted graphs: an edge list 'u v w', GraphML or GML)")
    else:
        check(weight in (None, "weight"), "weight", f"{path.name} is an edge list: its "
              "weights are its third column (leave --weight out)")


def count(path: Path, fmt: str) -> tuple[int, int]:
    """Nodes and edges (lines or elements) of a graph file, read once without a graph and
    refused past the limits (:func:`netdp.graphs.generators.limits`)."""
    if fmt in ATTRIBUTED:
        _check_parsed_size(path, fmt)
        return _count_graphml(path) if fmt == "graphml" else _count_gml(path)
    if fmt == "contacts":
        return _count_contacts(path)
    labels: set = set()
    edges = 0
    lines = _adjacency(path) if fmt == "adjlist" else _edges(path, fmt)
    for lineno, u, vs, _ in lines:
        labels.add(u)
        labels.update(vs)
        edges += len(vs)
        _check_nodes(path, lineno, len(labels))
    return len(labels), edges


def _count_contacts(path: Path) -> tuple[int, int]:
    """Nodes and contacts (lines) of a contact trace ``t,u,v[,w]``, without reading it
    whole (its checks are :func:`netdp.graphs.time_varying.read_contact_trace`'s)."""
    _check_parsed_size(path, "contacts")
    labels: set = set()
    rows = 0
    with path.open(encoding="utf-8-sig", errors="replace") as fh:
        for lineno, line in enumerate(fh, start=1):
            cells = [c.strip() for c in line.split(",")]
            if len(cells) < 3 or line.lstrip().startswith("#") or (
                    lineno == 1 and not _INT.fullmatch(cells[0])):  # a header
                continue
            labels.update(cells[1:3])
            rows += 1
            _check_nodes(path, lineno, len(labels))
    check_seconds({f"reading {path.name} ({rows} contacts)": (rows * CONTACT_SECONDS,
                                                              "topology")})
    return len(labels), rows


def read(path: Path, fmt: str, directed: bool = False,
         weight: str | None = None) -> tuple[nx.Graph, str | None]:
    """The networkx graph of a file, and the edge attribute that holds its weights
    (``weight`` for GraphML and GML; ``"weight"`` for a weighted edge list; ``None``:
    unweighted). GraphML and GML are counted first (:func:`count`)."""
    import networkx as nx

    if fmt in ATTRIBUTED:
        count(path, fmt)
        return _read_parsed(path, fmt), weight
    graph = nx.DiGraph() if directed else nx.Graph()
    if fmt == "adjlist":
        edges: list[tuple[Any, Any]] = []
        for lineno, u, vs, _ in _adjacency(path):
            graph.add_node(u)  # nodes in the order of their lines
            edges += [(u, v) for v in vs]
            _check_nodes(path, lineno, graph.number_of_nodes())
        graph.add_edges_from(edges)
        _check_nodes(path, 0, graph.number_of_nodes())
        return graph, None
    weighted = False
    for lineno, u, (v,), w in _edges(path, fmt):
        weighted = w is not None
        if w is None:
            graph.add_edge(u, v)
        else:
            old = graph.get_edge_data(u, v)
            check(old is None or old["weight"] == w, "topology",
                  f"{path.name} line {lineno}: the edge of this line has another weight on "
                  "an earlier line (give each edge one weight)")
            graph.add_edge(u, v, weight=w)
        _check_nodes(path, lineno, graph.number_of_nodes())
    return graph, "weight" if weighted else None


def graph_name(graph: Any) -> str:
    """A networkx graph's ``name`` on one line (``graph`` when it has none)."""
    text = " ".join(str(getattr(graph, "name", "") or "").split())
    return shorten(text, 60) if text else "graph"


def is_graph_object(spec: Any) -> bool:
    """Whether ``spec`` is a networkx graph (networkx is loaded only for an object that
    could be one)."""
    if spec is None or isinstance(spec, str | os.PathLike | bytes | int | float | list |
                                  tuple | dict):
        return False
    import networkx as nx

    return isinstance(spec, nx.Graph)


def check_no_parallel_edges(graph: nx.Graph, adj: Any, name: str) -> None:
    """Refuse an unweighted multigraph with parallel edges (``adj``: its edge counts),
    which the walk's graph would merge into one edge without a word."""
    from scipy import sparse

    if not graph.is_multigraph() or not adj.nnz or adj.data.max() <= 1:
        return
    counted = adj if graph.is_directed() else sparse.triu(adj, format="csr")
    parallel = int((counted.data - 1).sum())
    raise InputError("topology", f"{name}: a multigraph with {parallel:,} parallel edge(s), "
                     "which an unweighted graph would merge into one; give its weight "
                     "attribute (weight, --weight: parallel edges' weights add up) or merge "
                     "them first (networkx.Graph(G))")


#: The range of an edge weight: beyond, a node's strength or its inverse leaves the normal
#: doubles (a weight of 5e-324 made the walk take an edge that the tracker's transition
#: matrix gave probability 0, and the run end in "a view's hidden path is impossible").
MIN_WEIGHT, MAX_WEIGHT = 1e-300, 1e300
WEIGHT_RANGE = f"a finite number in [{MIN_WEIGHT:g}, {MAX_WEIGHT:g}]"


def weight_ok(w: float) -> bool:
    """Whether ``w`` is an edge weight netdp takes (:data:`MIN_WEIGHT` to
    :data:`MAX_WEIGHT`)."""
    return bool(MIN_WEIGHT <= w <= MAX_WEIGHT)


def check_weights(graph: nx.Graph, weight: str, name: str) -> None:
    """Every edge has the attribute ``weight``, a number in ``[MIN_WEIGHT, MAX_WEIGHT]``."""
    missing = object()
    for _, _, w in graph.edges(data=weight, default=missing):
        if w is missing:
            raise InputError("weight", f"{name}: an edge has no {weight!r} attribute; with "
                             f"--weight {weight} every edge needs one")
        number = isinstance(w, int | float | np.integer | np.floating) and \
            not isinstance(w, bool | np.bool_)
        if not (number and weight_ok(w)):
            text = " (text: declare the attribute a number, attr.type=\"double\" in " \
                "GraphML)" if isinstance(w, str) else ""
            raise InputError("weight", f"{name}: an edge's {weight} is not {WEIGHT_RANGE}"
                             f"{text}; weights must be such numbers")


# --------------------------------------------------------------------------- text formats


def _lines(path: Path, what: str) -> Iterator[tuple[int, list[str]]]:
    """``(line number, columns)`` of every line with content of the ``what`` (an edge or
    adjacency list), checked (UTF-8, no NUL, lines within :data:`MAX_LINE` characters)."""
    shown = f"{what} {shorten(repr(str(path)), 200)}"
    try:
        handle = path.open(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError("topology", f"cannot read {shown}: {exc.strerror}") from None
    with handle:
        lineno = 0
        while True:
            try:
                line = handle.readline(MAX_LINE)
            except UnicodeDecodeError:
                raise not_text(path) from None
            except OSError as exc:
                raise InputError("topology", f"cannot read {shown}: {exc.strerror}") from None
            if not line:
                return
            lineno += 1
            if "\x00" in line:
                raise not_text(path)
            check(len(line) < MAX_LINE or line.endswith("\n"), "topology",
                  f"{path.name} line {lineno}: longer than {MAX_LINE} characters")
            body = line.split("#", 1)[0].replace(",", " ").strip()
            if body:
                _not_markup(path, lineno, body)
                yield lineno, body.split()


def _not_markup(path: Path, lineno: int, body: str) -> None:
    """Refuse GraphML or GML read as a text list, saying which it looks like."""
    if body.startswith("<"):
        raise InputError("topology", f"{path.name} line {lineno}: looks like XML (GraphML), "
                         "not a list of edges: name it .graphml or give --format graphml")
    if re.match(r"(graph|Creator|Version)\b\s*(\[|\")", body):
        raise InputError("topology", f"{path.name} line {lineno}: looks like GML, not a list "
                         "of edges: name it .gml or give --format gml")


def _edges(path: Path, fmt: str) -> Iterator[tuple[int, Any, tuple[Any], float | None]]:
    """``(line, u, (v,), weight or None)`` per edge line of an edge list."""
    columns = 3 if fmt == "weighted-edgelist" else None
    first = 0
    for edges, (lineno, parts) in enumerate(_lines(path, "edge list"), start=1):
        if columns is None:
            check(len(parts) in (2, 3), "topology", f"{path.name} line {lineno}: expected "
                  f"'u v' or 'u v w' (two or three columns), got {len(parts)}")
            columns, first = len(parts), lineno
        if len(parts) != columns:
            want = "'u v' (two columns)" if columns == 2 else "'u v w' (three columns)"
            why = (f"as line {first}" if first else "a weighted edge list")
            raise InputError("topology", f"{path.name} line {lineno}: expected {want}, got "
                             f"{len(parts)} ({why})")
        _check_edges(path, lineno, edges)
        weight = _weight(path, lineno, parts[2]) if columns == 3 else None
        yield lineno, _label(parts[0]), (_label(parts[1]),), weight


def _adjacency(path: Path) -> Iterator[tuple[int, Any, list[Any], None]]:
    """``(line, u, neighbours, None)`` per line of an adjacency list."""
    edges = 0
    for lineno, parts in _lines(path, "adjacency list"):
        edges += len(parts) - 1
        _check_edges(path, lineno, edges)
        yield lineno, _label(parts[0]), [_label(p) for p in parts[1:]], None


def _weight(path: Path, lineno: int, text: str) -> float:
    try:
        w = float(text)
    except ValueError:
        raise InputError("topology", f"{path.name} line {lineno}: the weight (third "
                         "column) is not a number") from None
    check(weight_ok(w), "topology", f"{path.name} line {lineno}: the weight "
          f"(third column) must be {WEIGHT_RANGE}")
    return w


def _label(text: str) -> int | str:
    """An integer label as an int, anything else as its text."""
    return int(text) if _is_label_int(text) else text


def _is_label_int(text: str) -> bool:
    """Whether a label is an integer netdp reads as one: at most 18 digits (an int64);
    a longer one (10**400, beyond Python's 4300-digit limit) stays a text label."""
    return bool(_INT.fullmatch(text)) and len(text.lstrip("+-")) <= 18


def _check_nodes(path: Path, lineno: int, nodes: int) -> None:
    at = f" (line {lineno})" if lineno else ""
    check(nodes <= generators.MAX_GRAPH_NODES, "topology",
          f"{path.name} holds more than {generators.MAX_GRAPH_NODES} nodes{at}; {limits()}")


def _check_edges(path: Path, lineno: int, edges: int) -> None:
    check(edges <= generators.MAX_GRAPH_EDGES, "topology",
          f"{path.name} holds more than {generators.MAX_GRAPH_EDGES} edges (line "
          f"{lineno}); {limits()}")


# --------------------------------------------------------------------------- GraphML, GML


def _check_parsed_size(path: Path, fmt: str) -> None:
    size = os.stat(path).st_size
    check(size <= MAX_PARSED_BYTES, "topology", f"{path.name} is {size} bytes; {fmt} files "
          f"are parsed whole and limited to {MAX_PARSED_BYTES} bytes (write the graph as an "
          "edge list instead)")
    check(size > 0, "topology", f"{path.name} is empty; expected a {fmt} graph")
    check_seconds({f"parsing {path.name} ({fmt}, {size} bytes)": (
        size * PARSE_SECONDS.get(fmt, 0.0), "topology")})


def _count_graphml(path: Path) -> tuple[int, int]:
    """Nodes and edges of a GraphML file, streamed through expat: well-formed XML, every
    node with an id, every edge with a declared source and target, the sizes the graph
    declares (``parse.nodes``, ``parse.edges``) and finds within the limits."""
    nodes: set[str] = set()
    ends: dict[str, int] = {}  # an edge's end not declared (yet): its line
    state = {"edges": 0, "graphs": 0}
    parser = expat.ParserCreate()

    def where() -> str:
        return f"{path.name} line {parser.CurrentLineNumber}"

    def start(name: str, attrs: dict[str, str]) -> None:
        tag = name.rpartition(":")[2]
        if tag == "graph":
            state["graphs"] += 1
            for key, most in (("parse.nodes", generators.MAX_GRAPH_NODES),
                              ("parse.edges", generators.MAX_GRAPH_EDGES)):
                declared = attrs.get(key, "0").strip()
                check(not _INT.fullmatch(declared) or (
                    len(declared) <= 18 and int(declared) <= most), "topology",
                      f"{where()}: <graph {key}=...> declares more than {most}; "
                      f"{limits()}")
        elif tag == "node":
            check("id" in attrs, "topology", f"{where()}: a <node> without an id")
            nodes.add(attrs["id"])
            ends.pop(attrs["id"], None)
            check(len(nodes) <= generators.MAX_GRAPH_NODES, "topology",
                  f"{where()}: more than {generators.MAX_GRAPH_NODES} nodes; {limits()}")
        elif tag == "edge":
            for end in ("source", "target"):
                check(end in attrs, "topology", f"{where()}: an <edge> without a {end}")
                if attrs[end] not in nodes:
                    ends.setdefault(attrs[end], parser.CurrentLineNumber)
            state["edges"] += 1
            check(state["edges"] <= generators.MAX_GRAPH_EDGES, "topology",
                  f"{where()}: more than {generators.MAX_GRAPH_EDGES} edges; {limits()}")
        elif tag == "hyperedge":
            raise InputError("topology", f"{where()}: a <hyperedge>; netdp reads graphs "
                             "(edges between two nodes)")

    parser.StartElementHandler = start
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                parser.Parse(chunk, False)
            parser.Parse(b"", True)
    except expat.ExpatError as exc:
        raise InputError("topology", f"{path.name} line {exc.lineno}, column "
                         f"{exc.offset + 1}: not well-formed XML "
                         f"({expat.errors.messages[exc.code]}); expected GraphML") from None
    except LookupError:  # <?xml encoding="..."?> names no codec Python has
        raise InputError("topology", f"{path.name}: its XML declaration names an encoding "
                         "Python does not know; expected GraphML in UTF-8") from None
    except OSError as exc:
        raise InputError("topology", f"cannot read {path.name}: {exc.strerror}") from None
    check(state["graphs"] > 0, "topology", f"{path.name}: no <graph> element; expected "
          "GraphML")
    if ends:
        label, line = min(ends.items(), key=lambda item: item[1])
        raise InputError("topology", f"{path.name} line {line}: an <edge> names a node "
                         "that no <node> element declares")
    return len(nodes), state["edges"]


def _count_gml(path: Path) -> tuple[int, int]:
    """Nodes and edges of a GML file (``node [`` and ``edge [`` tokens), streamed."""
    counts = {"node": 0, "edge": 0}
    before = ""
    for lineno, line in _raw_lines(path):
        for token in _GML_TOKEN.findall(line):
            if token == "[" and before in counts:
                counts[before] += 1
                most = generators.MAX_GRAPH_NODES if before == "node" else \
                    generators.MAX_GRAPH_EDGES
                check(counts[before] <= most, "topology", f"{path.name} line {lineno}: more "
                      f"than {most} {before}s; {limits()}")
            before = token
    return counts["node"], counts["edge"]


def _raw_lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        with path.open(encoding="utf-8-sig") as handle:
            for lineno, line in enumerate(handle, start=1):
                if "\x00" in line:
                    raise not_text(path)
                yield lineno, line
    except UnicodeDecodeError:
        raise not_text(path) from None
    except OSError as exc:
        raise InputError("topology", f"cannot read {path.name}: {exc.strerror}") from None


def _read_parsed(path: Path, fmt: str) -> nx.Graph:
    """GraphML or GML through networkx; its errors as one line."""
    import networkx as nx

    try:
        if fmt == "graphml":
            graph = nx.read_graphml(path)
        else:
            try:
                graph = nx.read_gml(path)
            except nx.NetworkXError as exc:  # no labels: the nodes' ids name them
                if "no 'label' attribute" not in str(exc):
                    raise
                graph = nx.read_gml(path, label=None)
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - ParseError, NetworkXError, KeyError, ...
        what = "GraphML" if fmt == "graphml" else "GML"
        raise InputError("topology", f"{path.name}: not a {what} graph networkx can read "
                         f"({type(exc).__name__})") from None
    check(isinstance(graph, nx.Graph), "topology", f"{path.name}: no graph in it")
    return _integer_labels(graph)


def _integer_labels(graph: nx.Graph) -> nx.Graph:
    """The graph with its labels as integers where every label is one (``"0"`` -> 0);
    node order kept."""
    import networkx as nx

    labels = list(graph.nodes)
    if not labels or not all(isinstance(u, str) and _is_label_int(u) and str(int(u)) == u
                             for u in labels):
        return graph
    return nx.relabel_nodes(graph, {u: int(u) for u in labels}, copy=True)
