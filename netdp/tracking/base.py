"""Privacy trackers as a task sees them: declared once per task, run by the one loop.

A task declares *where* pairwise tracking applies with :class:`Tracking` records (the
topology kind, the accountants, the mechanisms, and the function that turns one run's
trace into pairwise losses). The run loop asks the task for its :class:`Tracker`, feeds
it every run, and asks it for the privacy report; a tracker never runs an engine.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from netdp.accounting import registry
from netdp.core.errors import InputError, check
from netdp.core.setup import Setup, Streams
from netdp.engine.trace import Trace
from netdp.graphs.node_names import node_set
from netdp.report.types import DistanceRow, LdpSummary, PairSummary, PairwisePrivacy, PrivacyReport

LDP_METHOD = ("a node's k contributions composed at the target delta (Gaussian: exactly; "
              "eps0-DP: min(k eps0, DRV(eps0, delta, k)))")
LDP_REFERENCE = "min(k eps0, DRV(eps0, delta, k)) over a node's k contributions"
KIND_NAMES = {"ring": "the ring", "complete": "the complete graph", "graph": "any graph"}
MATRIX_LIMIT = 10_000
#: Most nodes for which every accountant's matrix is kept (beyond: the first's alone).
ALL_MATRICES = 3_000


class Tracker(ABC):
    """Reads each run's trace (and the task's outcome) and reports the privacy losses."""

    @abstractmethod
    def add(self, run: int, trace: Trace, outcome: Any) -> None:
        """Account one run."""

    @abstractmethod
    def report(self) -> PrivacyReport:
        """The privacy report over all runs."""

    def matrix(self) -> np.ndarray | None:
        """The ``n x n`` matrix ``M[u, v] = ε(u → v)`` when it was asked for."""
        return None

    def matrices(self) -> dict[str, np.ndarray] | None:
        """Every accountant's matrix by name, where the tracker keeps them all (else
        ``None``: :meth:`matrix` is the first's)."""
        return None

    def node_ldp(self) -> np.ndarray | None:
        """Each node's local-DP ε (mean over the runs added), where the tracker has it."""
        return None

    def coalition_losses(self) -> np.ndarray | None:
        """With a coalition: every node's ε towards the first run's coalition observing as
        one (NaN for its members), where the tracker has it."""
        return None

    def pair_bounds(self, report: PrivacyReport) -> dict[str, float]:
        """The report's theory curves that bound every pair's ε at this setting: what an
        audit of one pair must stay under. None by default; a curve that is a mean over
        pairs, or no bound at all, is only shown."""
        return {}


LossesFn = Callable[[Setup, Trace, str, "Sequence[int] | None", bool], Any]


@dataclass(frozen=True)
class Tracking:
    """Where a task's pairwise tracker applies and how it accounts one run.

    Attributes
    ----------
    topology
        ``ring``, ``complete`` or ``graph`` (any other graph).
    summary
        What the tracker does, for ``--help`` and the docs table.
    losses
        ``losses(setup, trace, accountant, coalition, keep_pairs) -> PairLosses``; ``None``
        where the task builds its own :class:`Tracker` (sgd).
    accountants
        The accountants it supports.
    mechanisms
        The mechanisms it covers (``None``: all of the task's).
    theory
        ``theory(setup) -> {curve: ε}``: the theoretical curves at this setting.
    ldp
        ``ldp(setup, trace) -> (n,)`` local-DP losses (default: over each node's actual
        contributions, :func:`~netdp.tracking.loss_table.ldp_losses`).
    note
        ``note(setup, tables) -> str | None``: what the report should say of how the runs'
        tables (of the first accountant) were made: sampled observers, say.
    by_distance
        ``by_distance(setup, tables) -> rows``: an accountant's losses over all runs by hop
        distance from ``u`` to ``v`` (:class:`~netdp.report.types.DistanceRow`).
    theory_per_pair
        Whether every curve of ``theory`` bounds each pair's loss (``False``: a mean over
        pairs, shown beside the tracked losses but not held to per pair).
    theory_by_distance
        ``theory_by_distance(setup) -> (rows, info)``: theory lines by hop distance
        (``{name: rows}``) and what each is (``{name: {...}}``), shown beside
        ``by_distance`` (:func:`netdp.bounds.by_distance.published_by_distance`).
    theory_seconds
        ``theory_seconds(config, nodes) -> {part: (seconds, parameter)}``: what drawing
        ``theory_by_distance`` may take, counted in the run's time estimate once a report
        (:func:`netdp.tasks.base.theory_work`; :func:`netdp.bounds.line_cost.seconds`).
    observers
        ``observers(setup) -> ids | None``: the observers the tracker accounts where it
        samples them (``None``: all; :func:`netdp.tracking.graph_observers.walk_observers`).
        A full matrix (``--pairs-out``) needs them all.
    """

    topology: str
    summary: str
    losses: LossesFn | None
    accountants: tuple[str, ...] = ("kov",)
    mechanisms: tuple[str, ...] | None = None
    theory: Callable[[Setup], dict[str, float]] | None = None
    ldp: Callable[[Setup, Trace], np.ndarray] | None = None
    note: Callable[[Setup, Sequence[Any]], str | None] | None = None
    by_distance: Callable[[Setup, Sequence[Any]], tuple[DistanceRow, ...]] | None = None
    theory_per_pair: bool = True
    theory_by_distance: Callable[[Setup], tuple[dict[str, Any], dict[str, Any]]] | None = None
    theory_seconds: Callable[[Any, int], dict[str, tuple[float, str]]] | None = None
    observers: Callable[[Setup], np.ndarray | None] | None = None

    def covers(self, kind: str, mechanism: str | None) -> bool:
        """Whether it applies to a topology of this kind and this mechanism."""
        return self.topology == kind and (self.mechanisms is None or mechanism in self.mechanisms)

    def composes(self, task: str) -> tuple[str, ...]:
        """The accountants it composes with, as a tracker of ``task`` (a task key): those
        it declares, then every registered one that accounts a run itself (a
        :attr:`~netdp.accounting.registry.Entry.pair_losses` hook) on this task and kind."""
        if self.losses is None:  # the task's own Tracker: what it declares
            return self.accountants
        return self.accountants + tuple(
            e.name for e in registry.entries() if e.pair_losses is not None
            and task in e.tasks and self.topology in e.kinds and e.name not in self.accountants)


def coverage_note(entries: Sequence[Tracking]) -> str:
    """``pairwise tracking covers the ring and the complete graph; ...``."""
    kinds = list(dict.fromkeys(KIND_NAMES[e.topology] for e in entries))
    return (f"pairwise tracking covers {' and '.join(kinds)}; only the LDP baseline is "
            "reported on other graphs")


def draw_coalition(setup: Setup, run: int) -> list[int] | None:
    """A run's coalition: the given nodes, or ``random:C`` drawn from the run's
    ``coalition`` stream; ``None`` without one."""
    cfg, n = setup.config, setup.topology.n
    if cfg.coalition is None:
        return None
    kind, spec = node_set(cfg.coalition, "coalition", setup.topology)  # labels mapped
    if kind == "random":
        assert isinstance(spec, int)
        check(spec < n, "coalition", f"random:{spec} needs fewer than n = {n} members")
        rng = Streams(setup.seed, run).generator("coalition")
        return sorted(rng.choice(n, size=spec, replace=False).tolist())
    assert isinstance(spec, list)
    return sorted(set(spec))


def ldp_setting(setup: Setup) -> tuple[float | None, float | None]:
    """``(target, noise_multiplier)`` of the LDP baseline: the report's one δ under the
    sound convention (``None``: the reference convention's ``k δ + δ``), and ``σ / Δ`` of
    Gaussian contributions (``None``: ``ε0``-DP ones)."""
    cfg = setup.config
    if cfg.convention != "sound":
        return None, None
    sigma = getattr(setup.mechanism, "sigma", None)
    sensitivity = getattr(setup.mechanism, "sensitivity", None)
    z = None if sigma is None or not sensitivity else float(sigma) / float(sensitivity)
    return cfg.report_delta, z


class PairwiseTracker(Tracker):
    """Pairwise losses of each run (one table per accountant), the LDP baseline and the
    theory, summarised over all ordered pairs of all runs without an ``n x n`` matrix.

    Parameters
    ----------
    setup
        The prepared simulation.
    tracking
        The declaration that applies (``None``: the LDP baseline only, with ``note``).
    epsilon0
        The level of one contribution.
    note
        Why pairwise losses are not reported, when ``tracking`` is ``None``.
    keep_pairs
        Also keep the mean ``n x n`` matrix of the first accountant.
    details
        Figures the task adds to the report (the histogram's shuffle bound).
    tracked_by
        The task's declarations, to say what is missing when ``keep_pairs`` finds none.
    theory
        Theory curves where no declaration applies (``tracking`` is ``None``): a closed
        form that holds on this graph without tracking the run.
    """

    def __init__(self, setup: Setup, tracking: Tracking | None, epsilon0: float,
                 note: str | None = None, keep_pairs: bool = False,
                 details: dict[str, Any] | None = None,
                 tracked_by: Sequence[Tracking] = (),
                 theory: dict[str, float] | None = None) -> None:
        self.setup, self.tracking, self.epsilon0 = setup, tracking, epsilon0
        self.note, self.keep_pairs, self.details = note, keep_pairs, details or {}
        self.untracked_theory = theory or {}
        accountants = setup.config.accountants or ()
        # beside the exact accountant, each other's ratio to it, pair by pair
        self.exact = next((a for a in accountants if getattr(registry.find(a), "exact", False)),
                          None)
        self.keep_exact_pairs = self.exact is not None and len(accountants) > 1
        self.losses: dict[str, list[Any]] = {a: [] for a in accountants} if tracking else {}
        self.ldp: list[np.ndarray] = []
        self.coalitions: list[tuple[int, ...]] = []
        self.sums: dict[str, np.ndarray] = {}  # each accountant's matrix, summed over runs
        if keep_pairs:
            n = setup.topology.n
            check(n <= MATRIX_LIMIT, "pairs-out",
                  f"the full matrix is offered up to n = {MATRIX_LIMIT} (n = {n})")
            check(setup.config.coalition is None, "pairs-out",
                  "a coalition observes as one: no matrix")
            sampled = tracking is not None and tracking.observers is not None and (
                tracking.observers(setup) is not None)
            check(not sampled, "pairs-out", f"the matrix needs every observer: the tracker "
                  f"samples them on this graph (n = {n}); give --sources {n}")
            check(bool(accountants), "pairs-out", "the matrix comes from pairwise "
                  "tracking: drop --no-tracking")
            if tracking is None:  # what is missing: a tracker for the mechanism, or the graph
                kinds = {t.topology for t in tracked_by}
                raise InputError("mechanism" if setup.topology.kind in kinds else "topology",
                                 note or "no pairwise tracking here")

    def coalition(self, run: int) -> list[int] | None:
        """The run's coalition: the given nodes, or ``random:C`` drawn from its stream."""
        return draw_coalition(self.setup, run)

    def add(self, run: int, trace: Trace, outcome: Any) -> None:
        from netdp.tracking.loss_table import ldp_losses

        setup, tracking = self.setup, self.tracking
        coalition = self.coalition(run)
        if coalition is not None:
            self.coalitions.append(tuple(coalition))
        with np.errstate(over="ignore", invalid="ignore"):
            if tracking is not None and tracking.ldp is not None:
                self.ldp.append(tracking.ldp(setup, trace))
            else:
                self.ldp.append(ldp_losses(trace, self.epsilon0, setup.config.delta,
                                           *ldp_setting(setup)))
        if tracking is None:
            return
        assert tracking.losses is not None, "a Tracking without losses needs its own Tracker"
        keep = (self.keep_pairs or coalition is not None  # a coalition's pairs: one per node
                or self.keep_exact_pairs)
        for name, runs in self.losses.items():
            losses = registry.hook(name) or tracking.losses  # a plug-in accounts itself
            runs.append(losses(setup, trace, name, coalition, keep))
        if self.keep_pairs:  # every accountant's matrix up to ALL_MATRICES nodes
            kept = list(self.losses.items())
            for name, runs in kept[:1] if setup.topology.n > ALL_MATRICES else kept:
                m = runs[-1].matrix()
                self.sums[name] = m if name not in self.sums else self.sums[name] + m

    def matrix(self) -> np.ndarray | None:
        return next(iter(self.matrices().values()), None) if self.sums else None

    def matrices(self) -> dict[str, np.ndarray]:
        return {name: m / len(self.ldp) for name, m in self.sums.items()}

    def node_ldp(self) -> np.ndarray | None:
        return np.mean(self.ldp, axis=0) if self.ldp else None

    def coalition_losses(self) -> np.ndarray | None:
        if not self.coalitions or not self.losses:
            return None
        first = next(iter(self.losses.values()))[0]
        out = np.full(first.n, float(first.base[0]))
        assert first.nodes is not None
        out[first.nodes] = first.values
        out[list(self.coalitions[0])] = np.nan
        return out

    def pair_bounds(self, report: PrivacyReport) -> dict[str, float]:
        per_pair = self.tracking is not None and self.tracking.theory_per_pair
        return dict(getattr(report, "theory", {})) if per_pair else {}

    def _summary(self, runs: Sequence[Any], ldp: float | None = None) -> PairSummary:
        """One accountant's summary over the runs (with the share of pairs below ``ldp``,
        the LDP baseline's mean), by distance where the tracker says."""
        from netdp.tracking.loss_summary import summarize

        summary = PairSummary.from_dict(summarize(runs, below=ldp))
        if self.tracking is None or self.tracking.by_distance is None:
            return summary
        return dataclasses.replace(summary,
                                   by_distance=self.tracking.by_distance(self.setup, runs))

    def report(self) -> PairwisePrivacy:
        setup, tracking = self.setup, self.tracking
        with np.errstate(over="ignore"):  # a huge eps0 overflows DRV to inf, which is right
            ldp = np.concatenate(self.ldp)
            theory = (tracking.theory(setup) if tracking and tracking.theory
                      else {} if tracking else dict(self.untracked_theory))
            below = float(ldp.mean()) if ldp.size and np.isfinite(ldp.mean()) else None
            empirical = tuple(self._summary(runs, below) for runs in self.losses.values()
                              if runs)
            exact = self.losses.get(self.exact) if self.exact is not None else None
            if exact and self.keep_exact_pairs:
                from netdp.tracking.loss_summary import ratio_to_exact

                empirical = tuple(
                    e if e.accountant == self.exact else dataclasses.replace(
                        e, to_exact=ratio_to_exact(self.losses[e.accountant], exact,
                                                   self.coalitions))
                    for e in empirical)
        note = self.note
        if tracking is not None and tracking.note is not None and self.losses:
            note = tracking.note(setup, next(iter(self.losses.values())))
        if not setup.config.accountants:
            note = "pairwise tracking skipped (no accountant)"
        lines: tuple[dict[str, Any], dict[str, Any]] = ({}, {})
        if tracking is not None and tracking.theory_by_distance is not None and empirical:
            lines = tracking.theory_by_distance(setup)
        return PairwisePrivacy(
            epsilon0=self.epsilon0, delta0=setup.config.delta,
            ldp=LdpSummary(LDP_METHOD if ldp_setting(setup)[0] is not None else LDP_REFERENCE,
                           float(ldp.mean()), float(ldp.min()), float(ldp.max())),
            theory=theory, empirical=empirical, note=note, coalitions=tuple(self.coalitions),
            details=self.details, theory_by_distance=lines[0], theory_info=lines[1],
            target_delta=_one_delta(ldp_setting(setup)[0], empirical))


def _one_delta(target: float | None, empirical: Sequence[PairSummary]) -> float | None:
    """The report's one δ: the target where every accountant's figures are at it (a
    tracker not yet at the target keeps its own δ, shown in its row)."""
    if target is None or any(not np.isclose(e.delta, target, rtol=1e-12, atol=0.0)
                             for e in empirical):
        return None
    return target
