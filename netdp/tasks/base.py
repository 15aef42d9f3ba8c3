"""The Task protocol: what a computation declares once, for the one run loop to use.

A task is one module with a :class:`Task` subclass and a :class:`~netdp.core.config.Section`
subclass, registered by one line in :mod:`netdp.tasks`. It declares ``section`` (the
parameters it reads, with their ranges and help) and ``tracking`` (which pairwise tracker
applies on which topology), and implements the protocol:

* ``prepare``: load the data, build the graph, pick the randomizer (its typed setup);
* ``trace``: the engine's record of one run (the walk, unless the task says otherwise);
* ``run``: what the holders do along the trace, and ``record``: a run's figures;
* ``utility``: the utility report over the runs;
* ``view``: what one observer sees of one run;
* ``tracker``: the pairwise tracker (the one ``tracking`` picks, by default).

The rest are capabilities a task declares by naming them among its bases:
:class:`Attackable` (malicious holders: :mod:`netdp.adversary.network`), :class:`Auditable`
(two neighbouring worlds for a protocol audit), :class:`NoisyOutput` (the noise of the
published result), :class:`Sized` (memory beyond the trace), :class:`Reported` (report
parts of its own) and :class:`PairwiseDetails` (what the default tracker reads). The run
loop (:func:`netdp.run.api.simulate`) asks through the functions at the end of this module
and never branches on the task.
"""

from __future__ import annotations

import math
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from netdp import engine
from netdp.accounting import registry
from netdp.adversary.network import Adversary, AttackRun
from netdp.core.errors import check
from netdp.core.files import path_kind
from netdp.core.limits import time_limit
from netdp.core.params import Section
from netdp.core.setup import Setup, Streams, View
from netdp.core.simulation_config import SimulationConfig
from netdp.engine.faults import fault_run
from netdp.engine.routing import router as make_router
from netdp.engine.trace import Trace
from netdp.graphs.walk_kind import kind_of
from netdp.report.types import Report, Utility
from netdp.tracking.base import KIND_NAMES, PairwiseTracker, Tracker, Tracking, coverage_note
from netdp.tracking.law_bound_cost import law_bound_footprint, law_bound_work
from netdp.tracking.observer_sampling import observers_of
from netdp.tracking.pld_cost import pld_seconds, shares_laws


@dataclass(frozen=True)
class Output:
    """Files a task can write beside its report, asked for by a flag of their own.

    Attributes
    ----------
    flag
        The flag (without dashes), e.g. ``curves``.
    metavar, help
        For ``--help``.
    suffixes
        The files written for a given ``PREFIX``: ``PREFIX + suffix`` each.
    write
        ``write(report, paths)`` writes them (atomically).
    default
        The prefix used without the flag when ``when(config)`` holds (``None``: never).
    when
        When the default applies.
    """

    flag: str
    metavar: str
    help: str
    suffixes: tuple[str, ...]
    write: Callable[[Report, Sequence[Path]], None]
    default: str | None = None
    when: Callable[[dict[str, Any]], bool] | None = None


S = TypeVar("S", bound=Setup)


class Task(ABC, Generic[S]):
    """A computation the token (or gossip) carries out. See the module docstring.

    ``S`` is the task's setup: :class:`~netdp.core.setup.Setup`, or a subclass with the
    typed figures the task prepares once (a gossip plan, a calibration).
    """

    name: ClassVar[str]
    protocol: ClassVar[str] = "walk"
    summary: ClassVar[str]
    section: ClassVar[type[Section]]
    tracking: ClassVar[tuple[Tracking, ...]] = ()
    outputs: ClassVar[tuple[Output, ...]] = ()
    default_nodes: ClassVar[int] = 100
    steps_per_node: ClassVar[int] = 100
    #: The error measure the sweep plots draw against ε: the data columns of a result row
    #: (the first labels the axis) and its references, ``(role, column, label)``; ``None``:
    #: the task has none (the learning tasks plot their objective).
    utility_columns: ClassVar[tuple[tuple[str, ...], tuple[tuple[str, str, str], ...]]
                              | None] = None
    #: Why a deployment's log of the trace cannot drive the task's tracker (``netdp
    #: account``); ``None``: the tracker reads the trace alone, and a log can.
    unlogged: ClassVar[str | None] = None

    @property
    def key(self) -> str:
        """The registry key: the name, and the protocol where it is not the walk."""
        return self.name if self.protocol == "walk" else f"{self.name}/{self.protocol}"

    @property
    def default_accountants(self) -> tuple[str, ...]:
        """The accountant a run of the task uses when none is given: the first that the
        registry (:mod:`netdp.accounting.registry`) says composes with its trackers."""
        return registry.names(task=self.key)[:1]

    @property
    def label(self) -> str:
        """How messages name it: ``sum``, ``sum --protocol gossip``."""
        return self.name if self.protocol == "walk" else f"{self.name} --protocol {self.protocol}"

    @abstractmethod
    def prepare(self, config: SimulationConfig) -> S:
        """Load the data, build the graph, pick the randomizer; resolve the config.

        ``config.seed`` is set. Raises :class:`~netdp.core.errors.InputError` on bad input.
        """

    def trace(self, setup: S, streams: Streams) -> Trace:
        """The engine's record of one run: here the walk of ``config.tokens`` tokens (a
        protocol that is not a walk asks its own engine)."""

        config = setup.config
        router = make_router(setup.topology, config.walk)  # type: ignore[arg-type]
        tokens = range(config.tokens)
        faults = fault_run(setup, streams, config.tokens)
        return engine.walk(config.engine, router, setup.steps,
                           [streams.generator("walk", k) for k in tokens],
                           engine.parse_latency(config.latency),
                           [streams.generator("latency", k) for k in tokens],
                           config.service_time, faults)

    @abstractmethod
    def run(self, setup: S, trace: Trace, streams: Streams) -> Any:
        """What the holders do with the token along ``trace``: the run's outcome."""

    @abstractmethod
    def record(self, outcome: Any) -> dict[str, float]:
        """The figures of one run for its record (``estimate``, ``abs_error``, ...)."""

    @abstractmethod
    def utility(self, setup: S, outcomes: Sequence[Any]) -> Utility:
        """The utility report over all runs."""

    @abstractmethod
    def view(self, setup: S, trace: Trace, streams: Streams, observer: int) -> View:
        """What ``observer`` sees of the run: the token on each arrival, and the result.

        Uses the same streams as :meth:`run`, so the view is the run's own.
        """

    def tracker(self, setup: S, keep_pairs: bool = False) -> Tracker:
        """The pairwise tracker: by default the one the declarations in :attr:`tracking`
        pick for this setup (:class:`PairwiseDetails` adds to what it reads)."""
        details = self if isinstance(self, PairwiseDetails) else _NO_DETAILS
        kind, mechanism = setup.topology.kind, details.mechanism_name(setup)
        chosen = next((t for t in self.tracking if t.covers(kind, mechanism)), None)
        if chosen is not None:
            composes = chosen.composes(self.key)
            extra = [a for a in setup.config.accountants or () if a not in composes]
            check(not extra, "accountant", f"the {self.label} tracker on {KIND_NAMES[kind]} "
                  f"composes with {', '.join(composes)} (got {', '.join(extra)})")
        note = None if chosen else details.untracked_note(setup, self)
        theory: dict[str, float] | None = None if chosen or not setup.config.accountants \
            else {}
        return PairwiseTracker(setup, chosen, details.epsilon0(setup), note, keep_pairs,
                               details.privacy_details(setup), self.tracking, theory)


# -- capabilities: what a task declares beyond the protocol, by naming the class ------------


class Attackable(ABC):
    """A task whose malicious holders can attack (``--malicious``, ``--attack``)."""

    #: The ``--attack`` names its malicious holders can run.
    attacks: ClassVar[tuple[str, ...]]

    @abstractmethod
    def attacked(self, setup: Any, trace: Trace, streams: Streams,
                 adversary: Adversary) -> tuple[Any, AttackRun]:
        """One run with malicious holders: the outcome they leave behind, and the attack's
        record against the same run with every holder honest (the same draws)."""

    def attack_targets(self, setup: Any) -> tuple[int, ...]:
        """The items the attack promotes, for the report (none by default)."""
        return ()


class Auditable(ABC):
    """A task whose protocol can be audited (spec accounting.md §5.1)."""

    @abstractmethod
    def audit_worlds(self, setup: Any, node: int) -> tuple[Any, Any]:
        """The data of two neighbouring worlds that differ in ``node``'s data only: the
        pair a protocol audit replays, the one its claim must cover at its worst (the ends
        of the range, say)."""

    def gaussian_view(self, setup: Any) -> bool:
        """Whether the observer's view is a Gaussian shift between the two audit worlds
        (a linear map of Gaussian noise): the Gaussian-DP fit is then the tight test."""
        return False


class NoisyOutput(ABC):
    """A task that can say how much noise its published result carries."""

    @abstractmethod
    def output_noise(self, setup: Any, trace: Trace | None, outcome: Any) -> float | None:
        """The std of the noise in one run's published result, as the run went (faults
        change it; ``trace`` ``None``: a fault-free run); the ``faults`` report sets it
        beside the fault-free run's."""


class Sized(ABC):
    """A task that holds more than the walk's trace and the pairwise tables."""

    @abstractmethod
    def footprint(self, config: SimulationConfig, nodes: int,
                  steps: int) -> dict[str, tuple[float, str]]:
        """Bytes the run will hold at its peak, by part, with the parameter that drives
        each part (:func:`walk_footprint` and the task's own data)."""


class TimeVarying:
    """A task that runs on a time-varying graph (:mod:`netdp.graphs.time_varying`): its
    engine routes by the snapshot in force and its tracker reads the snapshots."""


class Timed(ABC):
    """A task whose runs do work beyond the walk and its tracking (:func:`walk_work`)."""

    @abstractmethod
    def work(self, config: SimulationConfig, nodes: int,
             steps: int) -> dict[str, tuple[float, str]]:
        """Seconds one run takes, by part, with the parameter that drives each part
        (:func:`walk_work` and the task's own)."""


class Reported:
    """A task whose report says more than the walk's (a mechanism of its own, how the
    information moves, top-level sections)."""

    def describe_mechanism(self, setup: Any) -> dict[str, Any] | None:
        """The ``mechanism`` object of the report."""
        return _describe(setup)

    def process_line(self, setup: Any) -> str | None:
        """How the information moves, for the text report (``None``: the walk's line)."""
        return None

    def sections(self, setup: Any, outcomes: Sequence[Any]) -> dict[str, Any]:
        """Task-specific top-level objects of the JSON result."""
        return {}


class PairwiseDetails:
    """What the default tracker (:meth:`Task.tracker`) reads of a task beyond its
    declarations; a task overrides what differs."""

    def epsilon0(self, setup: Any) -> float:
        """The LDP level of one contribution."""
        return float(setup.config.epsilon)

    def mechanism_name(self, setup: Any) -> str | None:
        """The randomizer's name, for the mechanisms a :class:`Tracking` covers."""
        return getattr(setup.config.section, "mechanism", None)

    def privacy_details(self, setup: Any) -> dict[str, Any]:
        """Figures the task adds to its privacy report."""
        return {}

    def untracked_note(self, setup: Any, task: Task[Any]) -> str:
        """Why no pairwise tracker covers this setup."""
        kind, mechanism = setup.topology.kind, self.mechanism_name(setup)
        if any(t.topology == kind for t in task.tracking):
            return (f"pairwise tracking of {task.name} does not cover --mechanism "
                    f"{mechanism}; only the LDP baseline is reported")
        return coverage_note(task.tracking) if task.tracking else (
            f"{task.name} has no pairwise tracker; only the LDP baseline is reported")


_NO_DETAILS = PairwiseDetails()


# -- what the run loop asks of any task ----------------------------------------------------


def _describe(setup: Setup) -> dict[str, Any] | None:
    return setup.mechanism.describe() if setup.mechanism is not None else None


def check_time_varying(task: Task[Any], config: SimulationConfig) -> None:
    """Refuse a time-varying graph for a task that is not :class:`TimeVarying`, and its
    schedule's options (``snapshot_period``, ``after``) on a fixed graph."""
    from netdp.graphs.time_varying import names_time_varying

    source = config.topology if config.graph is None else config.graph
    if names_time_varying(source, config.graph_format):
        given = "format" if config.graph is None and config.graph_format == "contacts" \
            and path_kind(str(source)) is None else "topology"  # a named topology: --format
        check(isinstance(task, TimeVarying), given, f"a time-varying graph runs --task "
              f"sum (a walk or gossip) for now (this run: {task.label})")
        check(config.engine != "event", "engine", "a time-varying graph runs on the vector "
              "engine (its clock is the walk's steps or the gossip's rounds)")
        for name in ("loss", "churn", "crash", "slow"):
            check(getattr(config, name) in (None, 0, 0.0, "0", "none"), name.replace("_", "-"),
                  "faults on a time-varying graph are not simulated yet")
        return
    for name, flag, default in (("snapshot_period", "snapshot-period", 1),
                                ("after_snapshots", "after", "cycle")):
        check(getattr(config, name) == default, flag, "applies to time-varying graphs only "
              "(--format contacts, a folder of graph files, a list of networkx graphs)")


def attacks_of(task: Task[Any]) -> tuple[str, ...]:
    """The attacks a task offers (none where it is not :class:`Attackable`)."""
    return task.attacks if isinstance(task, Attackable) else ()


def attack_targets(task: Task[Any], setup: Setup) -> tuple[int, ...]:
    """The items the task's attack promotes (:meth:`Attackable.attack_targets`)."""
    return task.attack_targets(setup) if isinstance(task, Attackable) else ()


def accountants_of(task: Task[Any]) -> tuple[str, ...]:
    """Every accountant some tracker of the task supports."""
    return tuple(dict.fromkeys(a for t in task.tracking for a in t.composes(task.key)))


def report_parts(task: Task[Any], setup: Setup,
                 outcomes: Sequence[Any]) -> tuple[dict[str, Any] | None, str | None,
                                                   dict[str, Any]]:
    """The report's mechanism, process line and sections (:class:`Reported`)."""
    if isinstance(task, Reported):
        return (task.describe_mechanism(setup), task.process_line(setup),
                task.sections(setup, outcomes) if outcomes else {})
    return _describe(setup), None, {}


def output_noise(task: Task[Any], setup: Setup, trace: Trace | None,
                 outcome: Any) -> float | None:
    """:meth:`NoisyOutput.output_noise`, ``None`` where the task cannot say."""
    return task.output_noise(setup, trace, outcome) if isinstance(task, NoisyOutput) else None


#: Bytes of a walk's run (issue 43: the command's peak above a run of 10 nodes, measured by
#: ``experiments/bench_command.py`` and ``tests/test_resources.py``; docs/performance.md,
#: "Limits"). Per hop: the trace (int32 holders and the sum's float a hop) and, tracked,
#: for each run and accountant its corrected pairs (about two a hop, 8 bytes each) kept
#: to the report, and one more such table a run (the tracker's pairs before they are
#: compacted; the cap and the summary copy none since issue 43). Per node: the tables'
#: own arrays, and per node and numba thread the per-observer pass's slot (sound
#: convention) or accumulators (reference convention: 8 bytes a feature, kov 3, rdp 18,
#: the others assumed 18). Once: what the allocator keeps of the freed arrays below its
#: mmap threshold (32 MiB each at most).
TRACE_HOP_BYTES, TABLE_HOP_BYTES = 12.0, 18.0
TABLE_NODE_BYTES, FEATURE_BYTES, SLOT_BYTES = 96.0, 8.0, 8.0
KOV_FEATURES = 3
RDP_FEATURES = 18
ALLOCATOR_SLACK = 16.0 * 2**20


def tracker_threads() -> int:
    """Threads the compiled trackers run on, without importing numba: ``NUMBA_NUM_THREADS``,
    else the CPUs this process may use (numba's own default)."""
    given = os.environ.get("NUMBA_NUM_THREADS", "").strip()
    if given.isdigit() and int(given) > 0:
        return int(given)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def walk_footprint(config: SimulationConfig, nodes: int,
                   steps: int) -> dict[str, tuple[float, str]]:
    """Bytes a walk's run holds at its peak (constants above): the trace, the pairwise
    tables of one run, and those the other runs keep to the report."""
    tokens = config.tokens
    drive = "tokens" if tokens > steps else ("rounds" if kind_of(config.topology)
                                             .public_schedule else "steps")
    hops = float(tokens) * steps
    out = {"the walk's trace": (TRACE_HOP_BYTES * hops, drive)}
    if config.accountants != ():
        names = config.accountants or ("rdp",)  # None: the task's default, rdp at most
        tables = TABLE_HOP_BYTES * (len(names) + 1) * hops
        features = max(KOV_FEATURES if registry.entry(name).kernel_mode == "KOV"
                       else RDP_FEATURES for name in names)
        # a thread of the sound pass holds a slot a node (its pairs' sums in a block of
        # its visits); the reference pass an n x features accumulator and a flag a node
        own = SLOT_BYTES if config.convention != "reference" else FEATURE_BYTES * features + 1
        per_node = TABLE_NODE_BYTES + tracker_threads() * own
        out["the pairwise tables"] = (tables + per_node * nodes + ALLOCATOR_SLACK, drive)
        if config.runs > 1:
            out["the tables the runs keep"] = ((config.runs - 1) * tables, "runs")
    return {**out, **law_bound_footprint(config, nodes)}


#: Seconds of work per unit, measured on a shared 2-core machine (netdp 2026-11) and
#: halved, so that an estimate errs towards the shorter run: a hop of the walk by engine,
#: a hop seen by a pairwise tracker, an observer of it (the ``pld`` and ``exact``
#: accountants: :mod:`netdp.tracking.pld_cost`).
HOP_SECONDS = {"vector": 3e-8, "event": 3e-6}
RUN_SECONDS = 1e-2  # a run's set-up, data and report, whatever its size
TRACKED_HOP_SECONDS, OBSERVER_SECONDS = 1e-5, 2e-5
#: The time-varying walk tracker's laws (netdp.tracking.time_varying): seconds per
#: ``step x node x count column x stored entry`` of a snapshot (measured: 3 s per observer
#: of a 200-node contact trace, 400 steps, about 1,300 entries; halved), and
#: the stored entries per node assumed (a contact graph of mean degree 8 and a self-loop).
TIMED_LAW_SECONDS, TIMED_ENTRIES_PER_NODE = 2.5e-8, 9


def faulty(config: SimulationConfig) -> bool:
    """Whether the config asks for faults (the ``auto`` engine then runs the event one)."""
    return config.loss.strip() not in ("0", "0.0") or config.churn != "none" \
        or config.crash is not None or config.slow is not None


def sends_per_hop(config: SimulationConfig) -> tuple[float, str]:
    """Messages one hand-off costs, at most ``retries + 1``, and the parameter that drives
    them: a lossy link resends ``1 / (1 - loss)`` times, and a sender whose ``timeout``
    is shorter than the ack's round trip resends every ``timeout`` until the ack comes."""
    from netdp.engine.clock import parse_latency
    from netdp.engine.faults import parse_loss

    if not faulty(config):
        return 1.0, "steps"
    loss = 0.5 if config.loss.startswith("file:") else min(parse_loss(config.loss).mean, 1.0)
    cap = config.retries + 1.0
    lossy = cap if loss >= 1 else 1 / (1 - loss)
    trip = 2 * parse_latency(config.latency).mean
    early = trip / config.timeout if config.timeout > 0 else cap
    sends = min(cap, lossy + (early if math.isfinite(early) else cap))
    return sends, ("timeout" if early >= lossy else "loss") if sends < cap else "retries"


def walk_work(config: SimulationConfig, nodes: int,
              steps: int) -> dict[str, tuple[float, str]]:
    """Seconds one run of a walk takes, by part: the hand-offs (with their resends) and
    the pairwise tracking (:data:`HOP_SECONDS`)."""
    hops = float(config.tokens) * steps
    drive = "tokens" if config.tokens > steps else ("rounds" if kind_of(config.topology)
                                                    .public_schedule else "steps")
    sends, why = sends_per_hop(config)
    chosen = engine.choose(config.engine, config.tokens, config.service_time, faulty(config))
    out = {"the walk": (hops * sends * HOP_SECONDS[chosen], drive if sends < 10 else why),
           "each run's own work": (RUN_SECONDS, "runs")}
    if config.accountants != ():
        out["the tracking"] = (hops * TRACKED_HOP_SECONDS + nodes * OBSERVER_SECONDS,
                               drive if hops > nodes else "nodes")
    if config.accountants != () and _time_varying(config):
        from netdp.tracking.observer_sampling import SOURCES
        from netdp.tracking.time_varying import KMAX

        observers, members = observers_of(config, nodes)

        width = KMAX[0] + 2  # the first count columns the laws carry, and their tail
        per = hops * nodes * width * TIMED_ENTRIES_PER_NODE * nodes * TIMED_LAW_SECONDS
        out["the time-varying tracker's laws"] = (observers * members * per, "steps" if
                                                  config.get(SOURCES) is None else SOURCES)
    out.update(no_self_work(config, nodes))
    out.update(pld_work(config, nodes, hops))
    return {**out, **law_bound_work(config, nodes, hops)}


def no_self_work(config: SimulationConfig, nodes: int) -> dict[str, tuple[float, str]]:
    """Seconds of the view entries of the accountants with a
    :attr:`~netdp.accounting.registry.Entry.no_self_cost` (every such one when the
    config names none) on the complete graph without self-moves."""
    if not kind_of(config.topology).implicit or config.self_moves:
        return {}
    return {f"the {e.name} accountant's view entries (no self-moves)":
            (e.no_self_cost * float(nodes) ** 2, "nodes") for e in registry.entries()
            if e.no_self_cost is not None
            and (config.accountants is None or e.name in config.accountants)}


def _time_varying(config: SimulationConfig) -> bool:
    from netdp.graphs.time_varying import names_time_varying

    return names_time_varying(config.topology if config.graph is None else config.graph,
                              config.graph_format)


def pld_work(config: SimulationConfig, nodes: int, hops: float) -> dict[str, tuple[float, str]]:
    """Seconds of the accountants with a cost model (``pld`` and ``exact``: the registry's
    :attr:`~netdp.accounting.registry.Entry.cost`) a walk's config asks for
    (:func:`accountant_seconds`), each named by ``accountant``."""
    from netdp.mechanisms.noise import analytic_sigma

    if config.accountants is None or kind_of(config.topology).public_schedule:
        return {}  # the ring's is a closed form
    z = analytic_sigma(config.epsilon, config.delta)
    drive = "epsilon" if 17.0 / z > 50.0 else "accountant"  # a view's losses span > 50
    return {f"the {name} accountant": (accountant_seconds(config, nodes, hops, name), drive)
            for name in registry.names() if name in config.accountants
            and registry.entry(name).cost is not None}


def accountant_seconds(config: SimulationConfig, nodes: int, hops: float, name: str) -> float:
    """Seconds accountant ``name`` (one with a cost model) takes over one run of a walk
    (:func:`netdp.tracking.pld_cost.pld_seconds`): the observers
    (:func:`~netdp.tracking.observer_sampling.observers_of`) and their ``hops / n`` views
    each (a coalition's: its members'); 0 on the ring, whose figures are a closed form."""
    from netdp.mechanisms.noise import analytic_sigma

    kind = kind_of(config.topology)
    if kind.public_schedule:
        return 0.0
    observers, members = observers_of(config, nodes)
    z = analytic_sigma(config.epsilon, config.delta)
    return pld_seconds(name, kind.implicit, nodes, observers, hops / nodes * members, z,
                       shared=shares_laws(config))


def default_cost(config: SimulationConfig, topology: Any,
                 steps_per_node: int) -> Callable[[str], float]:
    """The seconds of each accountant with a cost model over the config's runs on
    ``topology`` (``inf`` past the time limit): what :func:`default_accountants_for`
    weighs."""
    from netdp.tasks.preparation import steps_of

    hops = config.tokens * steps_of(config, topology, steps_per_node)

    def seconds(name: str) -> float:
        total = config.runs * accountant_seconds(config, topology.n, hops, name)
        return total if total <= time_limit() else math.inf

    return seconds


def work(task: Task[Any], config: SimulationConfig, nodes: int,
         steps: int) -> dict[str, tuple[float, str]]:
    """Seconds one run takes, by part (checked before anything is built; see
    :mod:`netdp.run.resources`): the task's (:class:`Timed`), else the walk's."""
    own = task.work if isinstance(task, Timed) else walk_work
    return own(config, nodes, steps)


def theory_work(task: Task[Any], config: SimulationConfig,
                nodes: int) -> dict[str, tuple[float, str]]:
    """Seconds the theory lines its trackers draw take, once a report, not per run
    (:attr:`Tracking.theory_seconds`: the published lines by hop distance)."""
    out: dict[str, tuple[float, str]] = {}
    for t in task.tracking:
        out.update(t.theory_seconds(config, nodes) if t.theory_seconds is not None else {})
    return out


def footprint(task: Task[Any], config: SimulationConfig, nodes: int,
              steps: int) -> dict[str, tuple[float, str]]:
    """Bytes the run will hold at its peak, by part (checked before anything is built; see
    :mod:`netdp.run.resources`): the task's (:class:`Sized`), else the walk's."""
    own = task.footprint if isinstance(task, Sized) else walk_footprint
    return own(config, nodes, steps)


def default_accountants_for(task: Task, kind: str, mechanism: str | None,
                            convention: str = "sound",
                            seconds: Callable[[str], float] | None = None
                            ) -> tuple[str, ...]:
    """The accountant a run of ``task`` on a topology of this ``kind`` with this
    ``mechanism`` uses when none is given: the registry's preferred one
    (:func:`netdp.accounting.registry.preferred`, weighing the run's ``seconds`` by
    accountant: :func:`default_cost`) among those the tracker that covers it composes
    with (under ``--convention reference``, the published method's: an entry with
    ``marks_reference``); the task's :attr:`Task.default_accountants` where none covers
    it."""
    chosen = next((t for t in task.tracking if t.covers(kind, mechanism)), None)
    noise = "pure" if mechanism == "laplace" else "gaussian"
    names = chosen.composes(task.key) if chosen else ()
    if convention == "reference":
        names = tuple(a for a in names if registry.entry(a).marks_reference) or names
    best = registry.preferred(names, noise, seconds)
    return best[:1] or task.default_accountants
