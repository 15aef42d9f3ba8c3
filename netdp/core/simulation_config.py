"""The parameters every run has, plus the section of its task.

A :class:`SimulationConfig` is frozen and validated on construction: common fields by
their declarations, then the topology-dependent rules (a flag that the chosen topology
does not use is refused rather than ignored), then the task's own section. Build one
from a flat mapping (CLI flags, TOML keys, sweep axes) with
:func:`netdp.tasks.make_config`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from netdp.core.errors import InputError, check
from netdp.core.files import path_kind
from netdp.core.params import (
    MAX_EPSILON,
    MAX_PERIOD,
    MAX_TIME,
    MIN_EPSILON,
    Section,
    check_value,
    param,
    params_of,
)

ENGINES = ("auto", "event", "vector")
WALKS = ("auto", "simple", "lazy", "metropolis")
CONVENTIONS = ("sound", "reference")
#: Amplification-by-shuffling bounds a window of reports may use; the clone bounds (Feldman,
#: McMillan and Talwar) hold for any ε0-LDP randomizer, the blanket bound for k-ary RR.
SHUFFLE_BOUNDS = ("fmt-numeric", "fmt-closed", "blanket")
CLONE_BOUNDS = SHUFFLE_BOUNDS[:2]
PROTOCOLS = ("walk", "gossip")
#: Graph file formats (``--format``; :mod:`netdp.graphs.graph_files` reads them).
GRAPH_FORMATS = ("graphml", "gml", "adjlist", "edgelist", "weighted-edgelist", "contacts")
IMPLICIT = ("ring", "complete")  # topologies that store nothing of size n

S = TypeVar("S", bound=Section)

RUN, PRIVACY, TRACKING, TIME, FAULTS, ADVERSARY, OUTPUT = (
    "what to run", "local randomizer", "privacy tracking", "time and engines",
    "faults (walks: event engine; gossip: loss and churn)",
    "adversaries (malicious holders; see netdp attack for collection)",
    "reproducibility and output")
ON_LOSS = ("resend", "skip", "regenerate")


@dataclass(frozen=True)
class SimulationConfig:
    """Every parameter of one simulation: the common fields and the task's section.

    ``None`` means "resolve from the others" (``nodes`` from the topology, the data or
    the task; ``steps`` from ``nodes``; ``seed`` fresh from the OS; ``accountants`` as the
    task's default). ``accountants = ()`` skips pairwise tracking. The resolved values
    are recorded in every result.

    ``graph`` holds a graph given from Python (a networkx graph, converted once by
    :func:`netdp.tasks.make_config` into a :class:`netdp.graphs.topologies.Topology`);
    ``topology`` then records it as ``networkx:NAME (n nodes, m edges, sha256 ...)``
    (:func:`netdp.graphs.topologies.reference`), which is what the results show.
    """

    task: str = param("sum", "the computation (see the task table below)", group=RUN,
                      metavar="TASK")
    protocol: str = param("walk", "how information moves: walk (a token visits one node at a "
                          "time) or gossip (every node averages with its neighbours, "
                          "synchronously; --task sum or sgd)", choices=PROTOCOLS, group=RUN)
    topology: str = param("complete", "ring, complete, a named topology (list them with "
                          "`netdp topologies`), a graph file (GraphML, GML, adjacency list, "
                          "edge list 'u v' or weighted 'u v w') or a TOML topology spec; "
                          "from Python, also a networkx graph",
                          group=RUN, metavar="NAME|FILE", expects="a name or a file path")
    nodes: int | None = param(None, "number of nodes", kind=int, low=2, short=("-n",),
                              metavar="N", group=RUN,
                              default_text="100, or the topology's, data's or task's own")
    steps: int | None = param(None, "random-walk steps per token (not on the ring: it runs "
                              "--rounds); gossip: averaging steps (sum) or rounds of gradient "
                              "descent (sgd)", kind=int, low=1, short=("-T",), metavar="T",
                              group=RUN, default_text="100 n (sgd: 10 n; gossip: Muffliato's "
                              "T for sum, 1000 rounds for sgd)")
    rounds: int = param(1, "ring only: full turns of the token", low=1, short=("-K",),
                        metavar="K", group=RUN)
    tokens: int = param(1, "tokens walking at once, averaged at the end", low=1,
                        metavar="K", group=RUN)
    self_moves: bool = param(True, "complete graph only: never forward the token to "
                             "oneself", flag="no-self-moves", group=RUN)
    walk: str = param("auto", "walk rule on graphs other than the ring and the complete "
                      "graph: simple (uniform neighbour), lazy (stay w.p. 1/2, else a uniform "
                      "neighbour) or metropolis (uniform stationary law; auto takes it on "
                      "irregular undirected graphs)", choices=WALKS, group=RUN)
    directed: bool = param(False, "edge and adjacency lists only: read edges as one-way "
                           "(GraphML and GML files say it themselves)", group=RUN)
    graph_format: str | None = param(None, "the format of a --topology file", kind=str,
                                     choices=GRAPH_FORMATS, flag="format", group=RUN,
                                     default_text="from the extension: .graphml, .gml, "
                                     ".adjlist; .edgelist, .txt, .csv or none: an edge list")
    weight: str | None = param(None, "the edge attribute holding edge weights (GraphML, GML, "
                               "a networkx graph); a weighted walk moves in proportion to "
                               "the weights, weighted gossip averages with them (an edge "
                               "list's weights are its third column)", kind=str,
                               metavar="ATTR", group=RUN, default_text="unweighted")
    snapshot_period: int = param(1, "time-varying graphs (--format contacts, a folder of "
                                 "graph files, a list of networkx graphs): walk steps or "
                                 "gossip rounds each snapshot is in force", low=1,
                                 high=MAX_PERIOD, metavar="L", group=RUN)
    after_snapshots: str = param("cycle", "time-varying graphs: after the last snapshot, "
                                 "start again from the first (cycle) or keep the last one "
                                 "(last)", choices=("cycle", "last"), flag="after", group=RUN)
    epsilon: float = param(1.0, "LDP level of one noisy contribution or report (sgd: the "
                           "target of every regime)", low=MIN_EPSILON, high=MAX_EPSILON,
                           short=("-e",), metavar="EPS", group=PRIVACY)
    delta: float = param(1e-6, "delta of one contribution (Gaussian noise; sgd: the "
                         "target)", low=0.0, high=1.0, low_open=True, high_open=True,
                         short=("-d",), metavar="DELTA", group=PRIVACY)
    target_delta: float | None = param(None, "the one delta of every pairwise figure, "
                                       "accountant, LDP baseline and theory line of the "
                                       "report; an accountant that composes (eps, delta) "
                                       "entries splits it itself", kind=float, low=0.0,
                                       high=1.0, low_open=True, high_open=True,
                                       metavar="DELTA", group=TRACKING,
                                       default_text="--delta")
    # the names, their choices and help: the accountant registry (netdp.accounting.
    # registry), which netdp.tasks.make_config checks them against, as it checks the task
    accountants: tuple[str, ...] | None = param(
        None, "how pairwise losses are composed", kind=tuple, flag="accountant",
        metavar="NAME", group=TRACKING, default_text="the task's (see the table below)")
    convention: str = param("sound", "what a walk tracker models: sound (each view as it "
                            "is: m - 1 unknown draws per cycle of m hops, every visit "
                            "counted, the exact law of a node's visits; an upper bound of the "
                            "true loss) or reference (the AISTATS 2022 Fig. 1b method: m "
                            "draws, presence counted once; can fall below the true loss)",
                            choices=CONVENTIONS, group=TRACKING)
    coalition: str | None = param(None, "nodes observing as one, e.g. 3,7,9, or by a "
                                  "labelled graph's node labels (Medici,Strozzi), or C "
                                  "random nodes per run (random:C); reports every other "
                                  "node's loss towards the coalition", kind=str,
                                  metavar="IDS|random:C", group=TRACKING)
    engine: str = param("auto", "event (simpy), vector (numpy) or auto: vector whenever it "
                        "is exact", choices=ENGINES, group=TIME)
    latency: str = param("1", "hop latency: a number, exp:MEAN, uniform:LOW:HIGH, or "
                         "heavy-tailed pareto:SCALE:SHAPE or lognormal:MEDIAN:SIGMA",
                         metavar="LAW", group=TIME)
    service_time: float = param(0.0, "time a node keeps a token; with several tokens, "
                                "tokens queue at busy nodes (event engine)", low=0.0,
                                high=MAX_TIME, metavar="S", group=TIME)
    loss: str = param("0", "message loss on every link: P (iid), ge:P_GB:P_BG[:BAD[:GOOD]] "
                      "(Gilbert-Elliott bursts) or file:LINKS.csv (src,dst,p)", metavar="LAW",
                      group=FAULTS)
    churn: str = param("none", "node on/off sessions: exp:MEAN_UP:MEAN_DOWN, "
                       "weibull:SHAPE:MEAN_UP:MEAN_DOWN (SHAPE in [0.25, 100]) or "
                       "file:DOWN.csv (node,down,up)",
                       metavar="LAW", group=FAULTS)
    crash: float | None = param(None, "mean time to a crash-stop failure of each node "
                                "(exponential)", kind=float, low=0.0, low_open=True,
                                high=MAX_TIME, metavar="MEAN", group=FAULTS,
                                default_text="no crashes")
    slow: str | None = param(None, "stragglers: each node is slow with probability F and "
                             "serves and forwards X times slower", kind=str,
                             metavar="F:X", group=FAULTS, default_text="none")
    on_loss: str = param("resend", "when a hand-off fails: resend (to the same node until it "
                         "acks; duplicates dropped), skip (route around down nodes: biased "
                         "towards nodes that are up) or regenerate (a node that gave up, or "
                         "saw the next one crash, starts a new token; the lost one's "
                         "exposures stay)", choices=ON_LOSS, group=FAULTS)
    timeout: float = param(4.0, "time a sender waits for the ack before it sends again",
                           low=0.0, low_open=True, high=MAX_TIME, metavar="S",
                           group=FAULTS)
    retries: int = param(20, "sends after the first before the token counts as lost",
                         low=0, high=10**6, metavar="R", group=FAULTS)
    malicious: str | None = param(None, "malicious holders: node ids like 3,7,9 (or node "
                                  "labels of a labelled graph), or K nodes drawn per run "
                                  "(random:K); they run --attack", kind=str,
                                  metavar="IDS|random:K", group=ADVERSARY,
                                  default_text="none")
    attack: str | None = param(None, "what the malicious holders do (the task's attacks: "
                               "histogram rpa ria mga, sum max beyond:X; both drop, replay, "
                               "inflate:K); the report gives the gain and what honest nodes "
                               "detect", kind=str, metavar="NAME", group=ADVERSARY,
                               default_text="none")
    seed: int | None = param(None, "seed of the run", kind=int, low=0, high=2**64 - 1,
                             metavar="INT", group=OUTPUT,
                             default_text="fresh from the OS, printed in the output")
    runs: int = param(1, "independent runs of the walk and noise on the same data", low=1,
                      high=100_000, short=("-r",), metavar="R", group=OUTPUT)
    section: Section | None = None
    graph: Any = dataclasses.field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        for name, spec, _ in params_of(self):
            object.__setattr__(self, name, check_value(name, spec, getattr(self, name)))
        check(self.section is not None and isinstance(self.section, Section), "task",
              "a config needs its task's section: build it with netdp.tasks.make_config")
        assert self.section is not None
        check(self.section.task == self.task and self.section.protocol == self.protocol,
              "task", f"the section belongs to task {self.section.task!r} on "
              f"{self.section.protocol!r}, not {self.task!r} on {self.protocol!r}")
        self._validate_topology()
        self.section.validate(self)

    def _validate_topology(self) -> None:
        """Refuse what the chosen topology does not use, instead of ignoring it (what
        differs by walk kind: :meth:`netdp.graphs.walk_kind.WalkKind.check_config`, run by
        :func:`netdp.tasks.make_config`)."""
        topology = self.topology
        check(bool(topology.strip()), "topology", "must name a topology or a file (got '')")
        if self.graph is not None:
            check(not self.directed, "directed", "applies to edge and adjacency lists; a networkx "
                  "graph is directed when it is a DiGraph")
        elif self.directed and not _is_edge_list(topology):
            raise InputError("directed", f"applies to edge-list files only (the topology is "
                             f"{topology})")
        if self.coalition is not None:
            parse_coalition(self.coalition)
        given, other = ("malicious", "attack") if self.attack is None else ("attack",
                                                                           "malicious")
        check((self.malicious is None) == (self.attack is None), given,  # the one given
              f"needs --{other} too (--malicious and --attack go together: who attacks, "
              "and how)")
        if self.malicious is not None:
            parse_nodes(self.malicious, "malicious")

    @property
    def report_delta(self) -> float:
        """The δ every figure of the report is at (spec Correction 7): ``target_delta``,
        else ``delta``."""
        return self.delta if self.target_delta is None else self.target_delta

    def section_as(self, kind: type[S]) -> S:
        """The task's section, typed: how a task reads its own parameters.

        Examples
        --------
        >>> from netdp.tasks import make_config
        >>> from netdp.tasks.sum import SumConfig
        >>> make_config({"high": 3.0}).section_as(SumConfig).high
        3.0
        """
        check(isinstance(self.section, kind), "task", f"the section of task {self.task!r} "
              f"is a {type(self.section).__name__}, not a {kind.__name__}")
        return self.section  # type: ignore[return-value]

    def get(self, name: str) -> Any:
        """A parameter by a name held in a variable (a sweep axis, a CLI flag), common or
        of the task's section; code that knows the name reads ``config.name`` (common) or
        :meth:`section_as` (the task's)."""
        if name in _COMMON:
            return getattr(self, name)
        assert self.section is not None
        if name in {n for n, _, _ in params_of(self.section)}:
            return getattr(self.section, name)
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """Flat dict of every parameter (common, then the section's): JSON / TOML ready."""
        out: dict[str, Any] = {}
        for name in _COMMON:
            value = getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        assert self.section is not None
        return {**out, **self.section.to_dict()}

    def replace(self, **changes: Any) -> SimulationConfig:
        """A copy with some parameters changed (common or of the section; validated).

        ``graph=`` sets the graph given from Python (with its ``topology`` record); a new
        ``topology`` without it drops the one held."""
        assert self.section is not None
        given = "graph" in changes
        graph = changes.pop("graph", self.graph if "topology" not in changes
                            or changes["topology"] == self.topology else None)
        check(graph is None or given or changes.get("weight", self.weight)
              == self.weight, "weight", "the graph given from Python was weighted when it was "
              "given: give it again with its weight (make_config(config, topology=graph, "
              "weight=...))")
        check("task" not in changes or changes["task"] == self.task, "task",
              "replace keeps the task; build a new config for another task")
        mine = {n for n, _, _ in params_of(self.section)}
        common = {k: v for k, v in changes.items() if k in _COMMON}
        own = {k: v for k, v in changes.items() if k in mine}
        unknown = sorted(set(changes) - set(common) - mine)
        check(not unknown, unknown[0] if unknown else "", f"is not a parameter of task "
              f"{self.task!r}")
        section = dataclasses.replace(self.section, **own) if own else self.section
        return dataclasses.replace(self, **common, section=section, graph=graph)


_COMMON = tuple(name for name, _, _ in params_of(SimulationConfig))


def common_fields() -> tuple[str, ...]:
    """Names of the common parameters, in order."""
    return _COMMON


def parse_coalition(text: str) -> tuple[str, list[int] | list[str] | int]:
    """``"3,7,9"`` (those nodes), ``"Medici,Strozzi"`` (those labels) or ``"random:C"``
    (C nodes drawn per run)."""
    return parse_nodes(text, "coalition")


def parse_nodes(text: str, name: str) -> tuple[str, list[int] | list[str] | int]:
    """A set of nodes given as ``"3,7,9"`` (``("nodes", ids)``), ``"random:C"`` (C nodes
    drawn per run: ``("random", C)``) or by the graph's labels, a list with an item that
    is no whole number (``("labels", texts)``, mapped to ids with the graph:
    :func:`netdp.graphs.node_names.node_set`), for the parameter ``name``
    (``coalition``, ``malicious``)."""
    text = str(text).strip()
    bad = InputError(name, f"expected node ids like 3,7,9, node labels like a,b or random:C "
                           f"with C >= 1 (got {text!r})")
    if text.startswith("random:"):
        try:
            size = int(text[7:])
        except ValueError:
            raise bad from None
        if size < 1:
            raise bad
        return "random", size
    parts = [p.strip() for p in text.split(",")]
    if not all(parts):
        raise bad
    try:
        ids = [int(p) for p in parts]
    except ValueError:
        return "labels", parts
    if min(ids) < 0:
        raise bad
    return "nodes", ids


def _is_edge_list(topology: str) -> bool:
    """Whether ``topology`` names an edge-list file (not a built-in, named or TOML spec)."""
    if topology in IMPLICIT or topology.endswith(".toml"):
        return False
    return (Path(topology).suffix != "" or "/" in topology
            or path_kind(topology) in ("file", "dir"))
