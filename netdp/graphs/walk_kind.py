"""The walk kind: what a token's walk is on each kind of topology, in one object.

netdp knows three kinds of topology (spec ``network-dp.md`` §1): the directed ring
(Algorithms 1 and 2 of AISTATS 2022: the token goes round in a fixed order), the complete
graph (Algorithms 3 and 4: a uniform next holder) and any other graph (a random walk on
its CSR arrays). Everything that differs between them and is not a task's own protocol is
a method or an attribute of :class:`WalkKind`: how the token starts and moves, how many
steps a run makes, what the graph stores, what an observer knows of the path. Code asks
the kind (``topology.walk_kind``, or :func:`kind_of` for a topology's name before it is
built) instead of comparing its name.

>>> kind_of("ring").public_schedule, kind_of("karate").implicit
(True, False)
>>> kind_of("complete").steps_per_token(n=10, rounds=1, steps=None, steps_per_node=100)
1000
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, cast

import numpy as np

from netdp.core.errors import InputError, check
from netdp.core.simulation_config import WALKS

if TYPE_CHECKING:
    from scipy import sparse


class Topology(Protocol):
    """What a walk kind reads of a graph (:class:`netdp.graphs.topologies.Topology` has it;
    the kinds are defined below the topologies, which carry them)."""

    @property
    def kind(self) -> str: ...
    @property
    def n(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def self_moves(self) -> bool: ...
    @property
    def directed(self) -> bool: ...
    @property
    def indptr(self) -> np.ndarray | None: ...
    @property
    def indices(self) -> np.ndarray | None: ...
    @property
    def is_regular(self) -> bool: ...
    @property
    def weights(self) -> np.ndarray | None: ...

Walk = Literal["simple", "metropolis", "lazy"]
#: The walk rules on an explicit graph (``auto`` picks one).
WALK_RULES = tuple(w for w in WALKS if w != "auto")


def resolve_walk(topology: Topology, walk: str = "auto") -> Walk:
    """Pick the walk rule: Metropolis-Hastings (uniform stationary law) where possible.

    ``metropolis`` proposes a uniform neighbour ``w`` and moves there with probability
    ``min(1, d_u / d_w)`` (else stays), so every step's holder is uniform when the start
    is: summation estimates stay unbiased on irregular graphs. It needs undirected edges;
    on regular graphs it is the simple walk. ``lazy`` stays with probability 1/2, else
    moves to a uniform neighbour (any graph; ``auto`` never picks it). On a weighted
    graph "uniform neighbour" reads "a neighbour with probability proportional to its
    edge's weight" and ``d`` the weighted degree (:func:`transition_matrix`); ``auto``
    takes the simple walk where the weighted degrees are all alike.
    """
    if walk == "auto":
        return "simple" if topology.directed or topology.is_regular else "metropolis"
    if walk not in WALK_RULES:
        raise InputError("walk", f"must be auto, simple, lazy or metropolis (got {walk!r})")
    if walk == "metropolis" and topology.directed:
        raise InputError("walk", "metropolis needs an undirected graph; use --walk simple")
    return cast(Walk, walk)  # one of the three, checked above


class WalkKind(ABC):
    """How a token walks on one kind of topology.

    Attributes
    ----------
    name
        ``ring``, ``complete`` or ``graph``: the kind a
        :class:`~netdp.graphs.topologies.Topology` declares and a task's tracking records
        name.
    implicit
        The graph stores nothing of size n (its neighbours are a formula).
    public_schedule
        The order of the holders is fixed and public (the ring): node 0 opens and closes
        the token, an observer knows who contributed between two of its visits, a run is
        counted in full turns (``--rounds``) and one token goes round.
    uniform
        Every hop picks a uniform next holder (the complete graph): the closed forms of
        Algorithms 3 and 4 apply, and ``--no-self-moves`` means something.
    """

    name: ClassVar[str]
    implicit: ClassVar[bool]
    public_schedule: ClassVar[bool] = False
    uniform: ClassVar[bool] = False

    def steps_per_token(self, *, n: int, rounds: int, steps: int | None,
                        steps_per_node: int) -> int:
        """Contributions per token: ``steps`` if given, else ``steps_per_node · n``."""
        return steps or steps_per_node * n

    def walk_rule(self, topology: Topology, requested: str) -> str:
        """The walk rule the run uses (``simple``: a uniform next holder)."""
        return "simple"

    def edges(self, n: int) -> int:
        """Undirected edges of the kind's graph on ``n`` nodes (before it is built)."""
        return n * (n - 1) // 2

    def start(self, rng: np.random.Generator, n: int) -> int:
        """The first holder: uniform."""
        return int(rng.random() * n)

    def start_law(self, n: int) -> np.ndarray:
        """The law of :meth:`start`: ``(n,)`` probabilities."""
        return np.full(n, 1.0 / n)

    def uniforms(self, rng: np.random.Generator, size: int, width: int) -> np.ndarray:
        """The uniforms that route ``size`` hops, ``width`` per hop."""
        return rng.random((size, width))

    def route(self, topology: Topology, current: int, u: np.ndarray) -> np.ndarray:
        """The next ``len(u)`` holders after ``current`` from their uniforms ``u`` (an
        implicit kind: a formula; an explicit graph is routed by the engine's compiled
        loop, :class:`netdp.engine.routing.Router`)."""
        raise NotImplementedError(f"the {self.name} kind is routed by the engine's kernel")

    @abstractmethod
    def degrees(self, topology: Topology) -> np.ndarray:
        """Out-degree of every node (an array of size n, even for an implicit kind)."""

    @abstractmethod
    def describe(self, topology: Topology) -> str:
        """One line for reports."""

    def check_config(self, config: Any) -> None:
        """Refuse the common parameters this kind does not use (``--rounds`` off the ring,
        ``--steps`` on it, ``--no-self-moves`` off the complete graph, ``--walk`` on an
        implicit kind), naming the one to use instead."""
        topology = config.topology
        if self.public_schedule:
            check(config.tokens == 1, "tokens", f"the ring protocol moves one token (got "
                  f"{config.tokens})")
            check(config.steps is None, "steps", "the ring runs full turns: use --rounds K")
        elif config.rounds != 1:
            raise InputError("rounds", f"applies to the ring (full turns of the token); on "
                             f"{topology} give --steps (got --rounds {config.rounds})")
        if not config.self_moves and not self.uniform:
            raise InputError("no-self-moves", f"applies to the complete graph only (the "
                             f"topology is {topology})")
        if config.walk in ("metropolis", "lazy") and self.implicit:
            raise InputError("walk", f"chooses the walk rule on other graphs; the {topology} "
                             "forwards the token uniformly (leave --walk out)")


class Ring(WalkKind):
    """The directed ring ``0 -> 1 -> ... -> n-1 -> 0`` (Algorithms 1 and 2)."""

    name = "ring"
    implicit = True
    public_schedule = True

    def steps_per_token(self, *, n: int, rounds: int, steps: int | None,
                        steps_per_node: int) -> int:
        """``rounds · n``: the ring runs full turns."""
        return rounds * n

    def edges(self, n: int) -> int:
        return n

    def start(self, rng: np.random.Generator, n: int) -> int:
        """Node 0: the schedule is public."""
        return 0

    def start_law(self, n: int) -> np.ndarray:
        return np.eye(n)[0]

    def uniforms(self, rng: np.random.Generator, size: int, width: int) -> np.ndarray:
        """None: the ring's next holder is fixed."""
        return np.empty((size, 0))

    def route(self, topology: Topology, current: int, u: np.ndarray) -> np.ndarray:
        """``current + 1, current + 2, ...`` modulo n."""
        return (current + 1 + np.arange(len(u), dtype=np.int64)) % topology.n

    def degrees(self, topology: Topology) -> np.ndarray:
        return np.ones(topology.n, dtype=np.int64)

    def describe(self, topology: Topology) -> str:
        return f"directed ring (n={topology.n})"


class Complete(WalkKind):
    """The complete graph: the next holder is uniform (with or without self-moves)."""

    name = "complete"
    implicit = True
    uniform = True

    def route(self, topology: Topology, current: int, u: np.ndarray) -> np.ndarray:
        """A uniform node per hop; without self-moves a uniform other node (a uniform
        shift in ``1..n-1`` from the current holder)."""
        n = topology.n
        if topology.self_moves:
            return (u[:, 0] * n).astype(np.int64)
        steps = 1 + (u[:, 0] * (n - 1)).astype(np.int64)
        return (current + np.cumsum(steps)) % n

    def degrees(self, topology: Topology) -> np.ndarray:
        return np.full(topology.n, topology.n if topology.self_moves else topology.n - 1,
                       dtype=np.int64)

    def describe(self, topology: Topology) -> str:
        moves = "self-moves allowed" if topology.self_moves else "no self-moves"
        return f"complete graph (n={topology.n}, {moves})"


class Graph(WalkKind):
    """Any other graph: a random walk on its CSR arrays (simple, lazy or Metropolis)."""

    name = "graph"
    implicit = False

    def walk_rule(self, topology: Topology, requested: str) -> str:
        """``auto``: Metropolis on an irregular undirected graph (uniform stationary law),
        else the simple walk (:func:`resolve_walk`)."""
        return resolve_walk(topology, requested)

    def degrees(self, topology: Topology) -> np.ndarray:
        assert topology.indptr is not None  # a graph has its CSR arrays
        return np.diff(topology.indptr)

    def describe(self, topology: Topology) -> str:
        assert topology.indptr is not None
        m = int(topology.indptr[-1]) // (1 if topology.directed else 2)
        weighted = ", weighted" if topology.weights is not None else ""
        return (f"{topology.name} ({'directed, ' if topology.directed else ''}n={topology.n}, "
                f"{m} edges{weighted})")


#: Named topologies that are vertex-transitive (besides the complete graph).
TRANSITIVE_NAMES = frozenset({"hypercube", "cycle", "torus"})
#: The kinds by name.
KINDS: dict[str, WalkKind] = {k.name: k for k in (Ring(), Complete(), Graph())}


def kind_of(topology: str) -> WalkKind:
    """The walk kind of a topology by its name (``ring``, ``complete``; anything else, a
    named spec or a file, is a ``graph``), before the graph is built."""
    return KINDS.get(topology, KINDS["graph"])


def transition_matrix(topology: Topology, walk: str) -> sparse.csr_array:
    """The walk's transition matrix ``P`` (rows sum to 1) as a sparse array.

    On an explicit graph with edge weights ``w`` (unweighted: all 1) and weighted degrees
    ``d_u = Σ_v w_uv``: ``simple`` ``P_uv = w_uv / d_u``; ``lazy`` ``(I + P_simple) / 2``;
    ``metropolis`` ``P_uv = w_uv / max(d_u, d_v)`` off the diagonal, the rest of each row on
    it (a proposal ``∝ w_uv`` accepted with probability ``min(1, d_u / d_v)``: ``P`` is
    symmetric, so its stationary law is uniform).
    """
    from scipy import sparse

    if walk not in WALK_RULES:
        raise InputError("walk", f"must be one of {', '.join(WALK_RULES)} (got {walk!r})")
    n = topology.n
    if topology.kind == "complete":
        dense = np.full((n, n), 1.0 / n) if topology.self_moves else \
            (np.ones((n, n)) - np.eye(n)) / (n - 1)
        if walk == "lazy":
            dense = 0.5 * (np.eye(n) + dense)
        return sparse.csr_array(dense)
    if topology.kind == "ring":
        nxt = (np.arange(n) + 1) % n
        step = sparse.csr_array((np.ones(n), (np.arange(n), nxt)), shape=(n, n))
        return 0.5 * (sparse.eye_array(n, format="csr") + step) if walk == "lazy" else step
    assert topology.indptr is not None and topology.indices is not None
    rows = np.repeat(np.arange(n), np.diff(topology.indptr))
    cols = topology.indices
    if topology.weights is None:
        deg = np.diff(topology.indptr).astype(float)
        edge: Any = 1.0
    else:
        edge = topology.weights
        deg = np.bincount(rows, weights=edge, minlength=n)
    if walk == "metropolis":
        weight = edge / np.maximum(deg[rows], deg[cols])
        adj = sparse.csr_array((weight, (rows, cols)), shape=(n, n))
        stay = np.maximum(1.0 - np.asarray(adj.sum(axis=1)).ravel(), 0.0)  # no -1e-16
        return (adj + sparse.diags_array(stay)).tocsr()
    adj = sparse.csr_array((edge / deg[rows], (rows, cols)), shape=(n, n))
    return (0.5 * (sparse.eye_array(n, format="csr") + adj)).tocsr() if walk == "lazy" \
        else adj
