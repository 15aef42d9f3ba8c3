"""Time-varying graphs: a sequence of snapshots on one node set, each in force for a while.

A :class:`TimeVaryingTopology` is a tuple of :class:`~netdp.graphs.topologies.Topology`
snapshots on the same nodes ``0..n-1`` and a schedule: snapshot ``k`` is in force at the
steps ``t`` in ``[k·period, (k+1)·period)``; after the last one the schedule starts again
(``after="cycle"``) or the last snapshot stays (``after="last"``). The token's move from
its holder at step ``t`` to the holder at step ``t + 1`` uses the snapshot in force at
``t`` (:meth:`TimeVaryingTopology.snapshot_at`): the walk's transition matrices are
``P_t = P(snapshot_at(t))``. Step ``t`` is the position in a token's walk, the same
clock for every token.

Rules, checked with one-line errors (parameter ``topology``):

- every snapshot has the same node set (the first snapshot's order numbers them);
- a node with no out-neighbour in a snapshot keeps the token there (``isolated="stay"``:
  a self-loop is added in that snapshot), or the input is refused (``"error"``);
- the union of the snapshots is (strongly) connected, so that a walk can reach every
  node over time (a snapshot alone need not be).

Builders: :func:`from_networkx_sequence` (a list of networkx graphs) and
:func:`read_contact_trace` (a CSV file ``t,u,v[,w]``: the edges available at each time).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from netdp.core.errors import InputError, check, shorten
from netdp.core.files import path_kind
from netdp.core.limits import check_seconds
from netdp.core.params import MAX_PERIOD
from netdp.core.reading import check_regular, read_csv_rows
from netdp.graphs import graph_files
from netdp.graphs.topologies import _NAME, BUILTIN, Topology, _check_connected, _spec_dir
from netdp.graphs.walk_kind import KINDS, WalkKind, transition_matrix

if TYPE_CHECKING:
    import networkx as nx
    from scipy import sparse

After = Literal["cycle", "last"]
Isolated = Literal["stay", "error"]
MAX_SNAPSHOTS = 100_000
#: Distinct snapshots x nodes of a contact trace (each snapshot holds its nodes' rows:
#: about 50 bytes a node-snapshot once walked, 1 GB at this bound).
MAX_SNAPSHOT_NODES = 20_000_000
#: Seconds to build a contact trace's snapshot, and each node's part of it (0.2 ms and
#: 0.8 us measured at 200-20,000 nodes; lowered: an estimate errs towards the shorter run).
SNAPSHOT_SECONDS = 1e-4
NODE_SNAPSHOT_SECONDS = 0.5e-6


@dataclass(frozen=True, eq=False)
class TimeVaryingTopology:
    """Snapshots on one node set and the schedule that says which is in force when.

    Attributes
    ----------
    snapshots
        The graphs (``kind == "graph"``), all on ``n`` nodes with the same labels.
    period
        Steps each snapshot is in force (>= 1).
    after
        ``cycle``: slot ``(t // period) mod K`` at step ``t``, ``K`` the number of slots;
        ``last``: the last slot stays after the schedule ends.
    name
        The topology's name in reports.
    schedule
        The snapshot in force in each slot (``None``: snapshot ``k`` in slot ``k``). A
        contact trace's times without contacts share one empty snapshot this way, so that
        a gap in its times costs a slot, not a graph.
    """

    snapshots: tuple[Topology, ...]
    period: int = 1
    after: After = "cycle"
    name: str = "time-varying"
    schedule: np.ndarray | None = None
    _cache: dict[Any, Any] = field(default_factory=dict, init=False, repr=False,
                                   compare=False)

    @property
    def n(self) -> int:
        """Number of nodes."""
        return self.snapshots[0].n

    @property
    def labels(self) -> tuple:
        """The original node labels, in the order of ``0..n-1``."""
        return self.snapshots[0].labels

    @property
    def directed(self) -> bool:
        """Whether edges are one-way (any snapshot's)."""
        return any(s.directed for s in self.snapshots)

    # What a walk kind reads of a graph (netdp.graphs.walk_kind.Topology): a time-varying
    # graph walks as a ``graph`` whose CSR arrays are the snapshots' (no single one).
    kind = "graph"
    time_varying = True
    self_moves = True
    indptr = None
    indices = None
    weights = None

    @property
    def walk_kind(self) -> WalkKind:
        """The ``graph`` kind: a walk rule per snapshot (:func:`netdp.graphs.walk_kind.
        resolve_walk`; ``auto`` picks Metropolis on undirected snapshots, whose
        transition matrices are then each doubly stochastic: the uniform start stays the
        holder's law at every step)."""
        return KINDS["graph"]

    @property
    def is_regular(self) -> bool:
        """Whether every snapshot is regular (then ``auto`` picks the simple walk)."""
        return all(s.is_regular for s in self.snapshots)

    @property
    def union(self) -> Topology:
        """The static graph of every edge of any snapshot (its hop distances are the
        reports' "distance"; the walk never uses it)."""
        if "union" not in self._cache:
            self._cache["union"] = _union(self.snapshots, self.name)
        return self._cache["union"]

    @property
    def distance_graph(self) -> Topology:
        """The union of the snapshots: reports' hop distances are measured on it."""
        return self.union

    @property
    def edge_count(self) -> int:
        """Edges of the union of the snapshots."""
        return self.union.edge_count

    @property
    def slots(self) -> np.ndarray:
        """The snapshot in force in each slot of ``period`` steps (``int64``)."""
        if "slots" not in self._cache:
            self._cache["slots"] = np.ascontiguousarray(
                np.arange(len(self.snapshots)) if self.schedule is None else self.schedule,
                dtype=np.int64)
        out: np.ndarray = self._cache["slots"]
        return out

    def digest(self) -> str:
        """Hex sha256 of the snapshots' digests and the schedule, computed once."""
        if "digest" not in self._cache:
            h = hashlib.sha256(f"netdp-time-varying 1 {self.period} {self.after}".encode())
            for snap in self.snapshots:
                h.update(snap.digest().encode())
            if self.schedule is not None:
                h.update(self.slots.tobytes())
            self._cache["digest"] = h.hexdigest()
        return self._cache["digest"]

    def snapshot_at(self, t: Any) -> Any:
        """Index of the snapshot in force at step ``t`` (an int or an integer array)."""
        k = np.asarray(t) // self.period
        size = self.slots.size
        slot = k % size if self.after == "cycle" else np.minimum(k, size - 1)
        out = slot if self.schedule is None else self.slots[slot]
        return int(out) if np.ndim(out) == 0 else out

    def transition(self, walk: str, t: int) -> sparse.csr_array:
        """``P_t``: the transition matrix of ``walk`` for the move from step ``t`` to
        ``t + 1`` (each snapshot's built once)."""
        return self.snapshots[self.snapshot_at(t)].transition(walk)

    def transitions(self, walk: str, steps: int) -> list[sparse.csr_array]:
        """``[P_0, ..., P_{steps-1}]`` (shared objects, one per snapshot)."""
        return [self.transition(walk, t) for t in range(steps)]

    def describe(self) -> str:
        """One line for reports."""
        edges = [s.edge_count for s in self.snapshots]
        distinct = "" if self.schedule is None else f" ({len(self.snapshots)} distinct)"
        return (f"{self.name}: {self.slots.size} snapshots{distinct} on {self.n} nodes "
                f"({min(edges)}-{max(edges)} edges), {self.period} step(s) each, "
                f"then {'cycling' if self.after == 'cycle' else 'the last one'}")


def from_networkx_sequence(graphs: Sequence[nx.Graph], period: int = 1,
                           after: After = "cycle", weight: str | None = None,
                           isolated: Isolated = "stay",
                           name: str = "time-varying",
                           quote_labels: bool = True) -> TimeVaryingTopology:
    """A time-varying topology from networkx graphs, one per snapshot.

    Parameters
    ----------
    graphs
        The snapshots, in order; each on the same node set (the first's node order
        numbers the nodes ``0..n-1``); all directed or all undirected.
    period, after
        The schedule (:class:`TimeVaryingTopology`).
    weight
        The edge attribute holding the weights (``None``: unweighted).
    isolated
        ``stay``: a node without an out-neighbour in a snapshot keeps the token (a
        self-loop is added there); ``error``: refused.
    name
        The topology's name in reports.
    quote_labels
        Whether an error may quote the nodes' labels (from Python); a file's are its
        content, and an error numbers its nodes instead.

    Examples
    --------
    >>> import networkx as nx
    >>> tv = from_networkx_sequence([nx.path_graph(3), nx.cycle_graph(3)], period=2)
    >>> tv.n, [tv.snapshot_at(t) for t in range(5)]
    (3, [0, 0, 1, 1, 0])
    """
    import networkx as nx

    check(isinstance(graphs, Sequence) and len(graphs) > 0, "topology",
          "expected a non-empty list of networkx graphs")
    check(len(graphs) <= MAX_SNAPSHOTS, "topology",
          f"at most {MAX_SNAPSHOTS} snapshots (got {len(graphs)})")
    _check_schedule(period, after, isolated)
    for k, g in enumerate(graphs):
        check(isinstance(g, nx.Graph), "topology",
              f"snapshot {k}: expected a networkx graph (got {type(g).__name__})")
    labels = tuple(graphs[0].nodes)
    check(len(labels) >= 2, "topology", f"snapshot 0 has {len(labels)} node(s); at least 2")
    directed = graphs[0].is_directed()
    known = set(labels)
    snaps = []
    for k, g in enumerate(graphs):
        check(g.is_directed() == directed, "topology",
              f"snapshot {k} is {'' if g.is_directed() else 'un'}directed, snapshot 0 is not")
        extra, missing = set(g.nodes) - known, known - set(g.nodes)
        check(not extra and not missing, "topology",
              f"snapshot {k} has not the node set of snapshot 0 ("
              + (f"extra {sorted(map(str, extra))[:3]}" if extra else
                 f"missing {sorted(map(str, missing))[:3]}") + ")")
        snaps.append(_snapshot(g, labels, weight, isolated, f"{name}[{k}]"))
    return _assemble(snaps, None, period, after, name, quote_labels)


def _check_schedule(period: Any, after: Any, isolated: Any) -> None:
    """One line naming ``period``, ``after`` or ``isolated`` where it is out of range."""
    check(isinstance(period, int | np.integer) and bool(1 <= period <= MAX_PERIOD), "period",
          f"must be an integer in the range [1, {MAX_PERIOD}] (got {shorten(repr(period), 40)})")
    check(after in ("cycle", "last"), "after",
          f"must be cycle or last (got {shorten(repr(after), 40)})")
    check(isolated in ("stay", "error"), "isolated",
          f"must be stay or error (got {shorten(repr(isolated), 40)})")


def _assemble(snaps: list[Topology], schedule: np.ndarray | None, period: int,
              after: After, name: str, quote_labels: bool) -> TimeVaryingTopology:
    """The time-varying graph of checked snapshots, once their union is connected."""
    union = _union(snaps, name)
    _check_connected(union, _csr(union), quote_labels)
    return TimeVaryingTopology(tuple(snaps), int(period), after, name, schedule)


def _named(spec: str) -> bool:
    """Whether ``spec`` names a built-in topology or a shipped spec (no file)."""
    return spec in BUILTIN or len(spec) <= 100 and bool(_NAME.fullmatch(spec)) and (
        _spec_dir() / f"{spec}.toml").is_file()


def contact_file(spec: str | Path) -> Path:
    """The path of the contact trace ``spec`` names (``--format contacts``), or one line:
    a named topology names ``--format``, a missing file or a folder ``--topology``."""
    path = Path(spec)
    kind = path_kind(path)
    check(kind is not None or not _named(str(spec)), "format", f"contacts reads a contact "
          f"trace file; {spec} is a named topology (give --topology FILE.csv)")
    check(kind == "file", "topology", f"{shorten(str(path))}: "
          f"{'no such file' if kind is None else 'not a file (a contact trace is one CSV)'}")
    return path


def read_contact_trace(path: str | Path, period: int = 1, after: After = "cycle",
                       directed: bool = False, isolated: Isolated = "stay",
                       name: str | None = None) -> TimeVaryingTopology:
    """A time-varying topology from a contact trace: CSV rows ``t,u,v[,w]``.

    Each row says that edge ``u - v`` (``u -> v`` when ``directed``) is available at time
    ``t`` (an integer >= 0), with weight ``w`` (in [1e-300, 1e300]; default 1). A first row that
    does not start with an integer is a header. Snapshot ``k`` holds the edges of time
    ``t_min + k``; times without contacts are empty snapshots (every node stays). Nodes
    are every label seen in the file (integers if all are, else text), sorted.
    """
    _check_schedule(period, after, isolated)
    path = contact_file(path)
    graph_files.count(path, "contacts")  # the size, before the rows are held
    rows: list[tuple[int, str, str, float]] = []
    weighted = False
    for line, row in enumerate(read_csv_rows(path, "topology"), start=1):
        row = [c.strip() for c in row]
        if not row or not "".join(row) or row[0].startswith("#"):
            continue
        if line == 1 and not _is_int(row[0]):
            continue  # header
        check(len(row) in (3, 4), "topology",
              f"{path.name} line {line}: expected t,u,v[,w] (got {len(row)} fields)")
        check(_is_int(row[0]) and int(row[0]) >= 0, "topology",
              f"{path.name} line {line}: time (the first field) must be an integer >= 0")
        check(bool(row[1]) and bool(row[2]), "topology",
              f"{path.name} line {line}: empty node label")
        w = 1.0
        if len(row) == 4:
            try:
                w = float(row[3])
            except ValueError:
                w = float("nan")
            check(graph_files.weight_ok(w), "topology", f"{path.name} line {line}: weight "
                  f"(the fourth field) must be {graph_files.WEIGHT_RANGE}")
            weighted = True
        rows.append((int(row[0]), row[1], row[2], w))
    check(bool(rows), "topology", f"{path.name}: no contacts")
    names = {x for r in rows for x in r[1:3]}
    as_int = all(_is_int(x) for x in names)
    key = (lambda x: int(x)) if as_int else (lambda x: x)
    labels = sorted({key(x) for x in names})
    times = sorted({r[0] for r in rows})
    t0, count = times[0], times[-1] - times[0] + 1
    check(count <= MAX_SNAPSHOTS, "topology",
          f"{path.name}: times span {count} snapshots; at most {MAX_SNAPSHOTS}")
    gap = count > len(times)  # times without contacts: one shared empty snapshot
    graphs = len(times) + gap
    check(graphs * len(labels) <= MAX_SNAPSHOT_NODES, "topology",
          f"{path.name}: {len(times)} times with contacts on {len(labels)} nodes make "
          f"{graphs * len(labels)} node-snapshots; at most {MAX_SNAPSHOT_NODES}")
    check_seconds({f"building {graphs} snapshots of {path.name}": (
        graphs * (SNAPSHOT_SECONDS + len(labels) * NODE_SNAPSHOT_SECONDS), "topology")})
    slot = {t: k for k, t in enumerate(times)}
    contacts: list[list[tuple[Any, Any, float]]] = [[] for _ in times]
    for t, u, v, w in rows:
        contacts[slot[t]].append((key(u), key(v), w))
    snaps = [_contact_snapshot(edges, labels, directed, weighted, isolated,
                               f"{name or path.stem}[{t - t0}]")
             for t, edges in zip(times, contacts, strict=True)]
    schedule = None
    if gap:
        empty = next(k for k in range(count) if k + t0 not in slot)
        snaps.append(_contact_snapshot([], labels, directed, weighted, isolated,
                                       f"{name or path.stem}[{empty}]"))
        schedule = np.full(count, len(times), dtype=np.int64)
        schedule[np.asarray(times) - t0] = np.arange(len(times))
    return _assemble(snaps, schedule, period, after, name or path.stem, quote_labels=False)


def _contact_snapshot(edges: list[tuple[Any, Any, float]], labels: list, directed: bool,
                      weighted: bool, isolated: Isolated, name: str) -> Topology:
    """The snapshot of one time of a contact trace (repeated contacts add up)."""
    import networkx as nx

    g = nx.DiGraph() if directed else nx.Graph()
    g.add_nodes_from(labels)
    for a, b, w in edges:
        old = g.get_edge_data(a, b, default={}).get("weight", 0.0)
        g.add_edge(a, b, weight=old + w)
    return _snapshot(g, tuple(labels), "weight" if weighted else None, isolated, name)


def _in_order(graph: nx.Graph, labels: list) -> nx.Graph:
    """``graph`` with its nodes in the order of ``labels`` (edges and attributes kept)."""
    out = graph.__class__()
    out.add_nodes_from(labels)
    out.add_edges_from(graph.edges(data=True))
    return out


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def _snapshot(graph: nx.Graph, labels: tuple, weight: str | None, isolated: Isolated,
              name: str) -> Topology:
    """One snapshot's CSR topology (no connectivity check; isolated nodes handled)."""
    import networkx as nx
    from scipy import sparse

    if weight is not None and graph.number_of_edges():
        graph_files.check_weights(graph, weight, name)
        adj = nx.to_scipy_sparse_array(graph, nodelist=labels, weight=weight, dtype=float,
                                       format="csr")
    else:
        adj = nx.to_scipy_sparse_array(graph, nodelist=labels, weight=None, dtype=float,
                                       format="csr")
        adj.data[:] = 1.0
    lonely = np.flatnonzero(np.diff(adj.indptr) == 0)
    if lonely.size:
        if isolated == "error":
            raise InputError("topology", f"{name}: node {int(lonely[0])} (in the sorted "
                             "order of the labels) has no out-neighbour (use isolated='stay' "
                             "to let it keep the token)")
        n = len(labels)
        adj = (adj + sparse.csr_array((np.ones(lonely.size), (lonely, lonely)),
                                      shape=(n, n))).tocsr()
    adj.sort_indices()
    weights = None
    if weight is not None and adj.nnz and np.any(adj.data != adj.data[0]):
        weights = np.ascontiguousarray(adj.data, dtype=np.float64)
    return Topology("graph", len(labels), name, indptr=adj.indptr.astype(np.int64),
                    indices=adj.indices.astype(np.int64), directed=graph.is_directed(),
                    labels=labels, weights=weights)


def _csr(topo: Topology) -> Any:
    from scipy import sparse

    assert topo.indptr is not None and topo.indices is not None
    return sparse.csr_array((np.ones(topo.indices.size), topo.indices, topo.indptr),
                            shape=(topo.n, topo.n))


def _union(snaps: Sequence[Topology], name: str) -> Topology:
    adj = sum((_csr(s) for s in snaps[1:]), _csr(snaps[0])).tocsr()
    adj.sort_indices()
    return Topology("graph", snaps[0].n, name, indptr=adj.indptr.astype(np.int64),
                    indices=adj.indices.astype(np.int64), directed=snaps[0].directed,
                    labels=snaps[0].labels)


def dense_transitions(tv: TimeVaryingTopology, walk: str, steps: int) -> np.ndarray:
    """``(steps, n, n)`` dense ``P_t`` (small graphs: tests and exact enumeration)."""
    mats = {k: transition_matrix(s, walk).toarray() for k, s in enumerate(tv.snapshots)}
    return np.stack([mats[tv.snapshot_at(t)] for t in range(steps)])


def is_snapshot_list(spec: Any) -> bool:
    """Whether ``spec`` is a list or tuple of networkx graphs (snapshots from Python)."""
    if not isinstance(spec, list | tuple) or not spec:
        return False
    import networkx as nx

    return all(isinstance(g, nx.Graph) for g in spec)


def names_time_varying(spec: Any, fmt: str | None) -> bool:
    """Whether ``spec`` (a ``topology`` value) is a time-varying graph: a
    :class:`TimeVaryingTopology`, a list of networkx graphs, a contact trace
    (``fmt == "contacts"``) or a folder of graph files."""
    if isinstance(spec, TimeVaryingTopology) or is_snapshot_list(spec):
        return True
    if isinstance(spec, str | Path) and not str(spec).startswith("networkx:"):
        return fmt == "contacts" or path_kind(spec) == "dir"
    return False


def snapshot_nodes(spec: Any, fmt: str | None) -> int:
    """The nodes of the time-varying graph ``spec`` names, counted without building it
    (a contact trace's labels; a folder's largest file's, at most their union's: a
    folder's files may have other node sets, so its first file's alone may be far
    fewer)."""
    if isinstance(spec, TimeVaryingTopology):
        return spec.n
    if is_snapshot_list(spec):
        return int(spec[0].number_of_nodes())
    path = Path(spec)
    if fmt == "contacts":
        return graph_files.count(contact_file(spec), "contacts")[0]
    files = snapshot_files(path)
    return max(graph_files.count(f, graph_files.file_format(f, fmt))[0] for f in files)


def snapshot_files(path: Path) -> list[Path]:
    """The graph files of a folder of snapshots, in the order of their names (hidden
    names and subfolders skipped); anything else in it (a FIFO, a device, a link to one,
    a link to nothing) is refused before anything is read, naming ``--topology``."""
    files = sorted(p for p in path.iterdir() if not p.name.startswith(".") and not p.is_dir())
    check(len(files) <= MAX_SNAPSHOTS, "topology",
          f"{path.name} holds {len(files)} files; at most {MAX_SNAPSHOTS} snapshots")
    for file in files:
        check_regular(file, "topology", "graph files in a folder of snapshots")
        check(file.exists(), "topology", f"{path.name}: {shorten(repr(file.name), 80)} is "
              "a link to nothing (dangling, or a loop of links); give graph files")
    check(bool(files), "topology", f"{path.name}: a folder of snapshots holds no file")
    return files


def build_time_varying(spec: Any, *, period: int = 1, after: After = "cycle",
                       directed: bool = False, weight: str | None = None,
                       fmt: str | None = None) -> TimeVaryingTopology:
    """The time-varying graph that ``spec`` names (:func:`names_time_varying`).

    A folder holds one graph file per snapshot, in the order of their names (hidden files
    skipped), each read as ``--topology`` reads a file (``fmt``: their format, default
    from each extension); the nodes are every label of any file (in the order first
    seen), a node missing from a file being isolated in that snapshot (it keeps the
    token there).

    Examples
    --------
    >>> import networkx as nx
    >>> build_time_varying([nx.path_graph(3), nx.cycle_graph(3)]).describe()
    'time-varying: 2 snapshots on 3 nodes (2-3 edges), 1 step(s) each, then cycling'
    """
    if isinstance(spec, TimeVaryingTopology):
        return spec
    if is_snapshot_list(spec):
        return from_networkx_sequence(list(spec), period, after, weight)
    path = Path(spec)
    if fmt == "contacts":
        contact_file(spec)
        check(weight is None, "weight", "a contact trace's weights are its fourth column")
        return read_contact_trace(path, period, after, directed)
    files = snapshot_files(path)
    graphs, weights = [], set()
    for file in files:
        kind = graph_files.file_format(file, fmt)
        check(kind != "contacts", "format", "a folder of snapshots holds graph files")
        graph_files.check_options(file, kind, weight, directed)
        graph, attr = graph_files.read(file, kind, directed, weight)
        graphs.append(graph)
        weights.add(attr)
    check(len(weights) == 1, "topology", f"{path.name}: some snapshots are weighted, "
          "others not")
    labels = list(dict.fromkeys(node for graph in graphs for node in graph))
    for graph in graphs:  # a node without a contact in a file is isolated there
        graph.add_nodes_from(labels)
    graphs = [_in_order(graph, labels) for graph in graphs]
    return from_networkx_sequence(graphs, period, after, weights.pop(), name=path.name,
                                  quote_labels=False)
