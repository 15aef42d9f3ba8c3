"""The Task interface: what a computation declares once, for the one run loop to use.

A task is one module with a :class:`Task` subclass and a :class:`~netdp.core.config.Section`
subclass, registered by one line in :mod:`netdp.tasks`. It declares:

* ``section``: its config section (the parameters it reads, with their ranges and help);
* ``prepare``: how it loads the data, builds the graph and picks the randomizer;
* ``run``: what the holders do with the token, along one run's trace;
* ``tracking``: which pairwise tracker applies on which topology;
* ``view``: what one observer sees of one run, and ``audit_worlds``: the two neighbouring
  data sets an audit of that view compares;
* ``utility``: the utility report over the runs;
* ``attacks`` and ``attacked``: what a malicious holder can do, and one run under attack
  (:mod:`netdp.adversary.network`).

The run loop (:func:`netdp.run.api.simulate`) never branches on the task.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from netdp import engine
from netdp.adversary.network import Adversary, AttackRun
from netdp.core.errors import InputError, check
from netdp.core.params import Section
from netdp.core.setup import Setup, Streams, View
from netdp.core.simulation_config import SimulationConfig
from netdp.engine.faults import fault_run
from netdp.engine.routing import Router
from netdp.engine.trace import Trace
from netdp.graphs.walk_kind import kind_of
from netdp.report.types import Report, Utility
from netdp.tracking.base import KIND_NAMES, PairwiseTracker, Tracker, Tracking, coverage_note


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


class Task(ABC):
    """A computation the token (or gossip) carries out. See the module docstring."""

    name: ClassVar[str]
    protocol: ClassVar[str] = "walk"
    summary: ClassVar[str]
    section: ClassVar[type[Section]]
    tracking: ClassVar[tuple[Tracking, ...]] = ()
    outputs: ClassVar[tuple[Output, ...]] = ()
    default_nodes: ClassVar[int] = 100
    steps_per_node: ClassVar[int] = 100
    #: The ``--attack`` names its malicious holders can run (none: no attack).
    attacks: ClassVar[tuple[str, ...]] = ()
    #: The error measure the sweep plots draw against ε: the data columns of a result row
    #: (the first labels the axis) and its references, ``(role, column, label)``; ``None``:
    #: the task has none (the learning tasks plot their objective).
    utility_columns: ClassVar[tuple[tuple[str, ...], tuple[tuple[str, str, str], ...]]
                              | None] = None

    @property
    def key(self) -> str:
        """The registry key: the name, and the protocol where it is not the walk."""
        return self.name if self.protocol == "walk" else f"{self.name}/{self.protocol}"

    @property
    def label(self) -> str:
        """How messages name it: ``sum``, ``sum --protocol gossip``."""
        return self.name if self.protocol == "walk" else f"{self.name} --protocol {self.protocol}"

    @abstractmethod
    def prepare(self, config: SimulationConfig) -> Setup:
        """Load the data, build the graph, pick the randomizer; resolve the config.

        ``config.seed`` is set. Raises :class:`~netdp.core.errors.InputError` on bad input.
        """

    def trace(self, setup: Setup, streams: Streams) -> Trace:
        """The engine's record of one run: here the walk of ``config.tokens`` tokens (a
        protocol that is not a walk asks its own engine)."""

        config = setup.config
        if "router" not in setup.memo:
            setup.memo["router"] = Router(setup.topology, config.walk)  # type: ignore[arg-type]
            setup.memo["latency"] = engine.parse_latency(config.latency)
        tokens = range(config.tokens)
        faults = fault_run(setup, streams, config.tokens)
        return engine.walk(config.engine, setup.memo["router"], setup.steps,
                           [streams.generator("walk", k) for k in tokens],
                           setup.memo["latency"], [streams.generator("latency", k) for k in tokens],
                           config.service_time, faults)

    @abstractmethod
    def run(self, setup: Setup, trace: Trace, streams: Streams) -> Any:
        """What the holders do with the token along ``trace``: the run's outcome."""

    @abstractmethod
    def record(self, outcome: Any) -> dict[str, float]:
        """The figures of one run for its record (``estimate``, ``abs_error``, ...)."""

    @abstractmethod
    def utility(self, setup: Setup, outcomes: Sequence[Any]) -> Utility:
        """The utility report over all runs."""

    @abstractmethod
    def view(self, setup: Setup, trace: Trace, streams: Streams, observer: int) -> View:
        """What ``observer`` sees of the run: the token on each arrival, and the result.

        Uses the same streams as :meth:`run`, so the view is the run's own.
        """

    def attacked(self, setup: Setup, trace: Trace, streams: Streams,
                 adversary: Adversary) -> tuple[Any, AttackRun]:
        """One run with malicious holders (``--malicious``, ``--attack``): the outcome
        they leave behind, and the attack's record against the same run with every
        holder honest (the same draws). A task that offers :attr:`attacks` says how."""
        raise InputError("attack", f"{self.label} offers no attack")

    def audit_worlds(self, setup: Setup, node: int) -> tuple[Any, Any]:
        """The data of two neighbouring worlds that differ in ``node``'s data only: the
        pair a protocol audit replays (spec accounting.md §5.1). A task that can be
        audited picks the pair its claim must cover at its worst (the ends of the range,
        say); none by default."""
        raise InputError("task", f"{self.label} declares no neighbouring worlds: its "
                         "protocol cannot be audited")

    def output_noise(self, setup: Setup, trace: Trace | None, outcome: Any) -> float | None:
        """The std of the noise in one run's published result, as the run went (faults
        change it; ``trace`` ``None``: a fault-free run), where the task can say; the
        ``faults`` report sets it beside the fault-free run's."""
        return None

    def gaussian_view(self, setup: Setup) -> bool:
        """Whether the observer's view is a Gaussian shift between the two audit worlds
        (a linear map of Gaussian noise): the Gaussian-DP fit is then the tight test."""
        return False

    def epsilon0(self, setup: Setup) -> float:
        """The LDP level of one contribution."""
        return setup.config.epsilon

    def mechanism_name(self, setup: Setup) -> str | None:
        """The randomizer's name, for the mechanisms a :class:`Tracking` covers."""
        return getattr(setup.config.section, "mechanism", None)

    def describe_mechanism(self, setup: Setup) -> dict[str, Any] | None:
        """The ``mechanism`` object of the report."""
        return setup.mechanism.describe() if setup.mechanism is not None else None

    def process_line(self, setup: Setup) -> str | None:
        """How the information moves, for the text report (``None``: the walk's line)."""
        return None

    def sections(self, setup: Setup, outcomes: Sequence[Any]) -> dict[str, Any]:
        """Task-specific top-level objects of the JSON result."""
        return {}

    def privacy_details(self, setup: Setup) -> dict[str, Any]:
        """Figures the task adds to its privacy report."""
        return {}

    def tracker(self, setup: Setup, keep_pairs: bool = False) -> Tracker:
        """The tracker the declarations in :attr:`tracking` pick for this setup."""
        kind, mechanism = setup.topology.kind, self.mechanism_name(setup)
        chosen = next((t for t in self.tracking if t.covers(kind, mechanism)), None)
        if chosen is not None:
            extra = [a for a in setup.config.accountants or () if a not in chosen.accountants]
            check(not extra, "accountant", f"the {self.label} tracker on {KIND_NAMES[kind]} "
                  f"composes with {', '.join(chosen.accountants)} (got {', '.join(extra)})")
        note = None if chosen else self.untracked_note(setup)
        theory = None if chosen or not setup.config.accountants else \
            self.untracked_theory(setup)
        return PairwiseTracker(setup, chosen, self.epsilon0(setup), note, keep_pairs,
                               self.privacy_details(setup), self.tracking, theory)

    def untracked_theory(self, setup: Setup) -> dict[str, float]:
        """Theory curves for a setup that no tracker covers (a closed form that holds on
        any graph, say); none by default."""
        return {}

    def untracked_note(self, setup: Setup) -> str:
        """Why no pairwise tracker covers this setup."""
        kind, mechanism = setup.topology.kind, self.mechanism_name(setup)
        if any(t.topology == kind for t in self.tracking):
            return (f"pairwise tracking of {self.name} does not cover --mechanism "
                    f"{mechanism}; only the LDP baseline is reported")
        return coverage_note(self.tracking) if self.tracking else (
            f"{self.name} has no pairwise tracker; only the LDP baseline is reported")

    def accountants(self) -> tuple[str, ...]:
        """Every accountant some tracker of the task supports."""
        return tuple(dict.fromkeys(a for t in self.tracking for a in t.accountants))

    def footprint(self, config: SimulationConfig, nodes: int,
                  steps: int) -> dict[str, tuple[float, str]]:
        """Bytes the run will hold at its peak, by part, with the parameter that drives
        each part (checked before anything is built; see :mod:`netdp.run.resources`).

        The default counts the trace and the pairwise tables; tasks add their data.
        """
        tokens = config.tokens
        drive = "tokens" if tokens > steps else ("rounds" if kind_of(config.topology)
                                                 .public_schedule else "steps")
        out = {"the walk's trace": (12.0 * tokens * steps, drive)}
        if config.accountants != ():
            out["the pairwise tables"] = (24.0 * tokens * steps + 64.0 * nodes, drive)
        return out
