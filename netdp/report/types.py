"""Typed, frozen reports: what one simulation returns.

A :class:`Report` holds the resolved config, the run records, the task's
:class:`Utility` and the tracker's :class:`PrivacyReport`. ``to_dict()`` gives the
result as plain Python (floats may be infinite: an exposed node), ``to_json()`` the
strict-JSON object that ``netdp simulate --json`` prints, and ``text()`` the table it
prints otherwise. ``schema`` numbers the JSON layout (see ``docs/cli.md``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from netdp.accounting import registry
from netdp.core.jsonable import jsonable
from netdp.core.provenance import provenance
from netdp.core.simulation_config import SimulationConfig
from netdp.core.table_rows import frame, headline, pairs_frame, table_row
from netdp.graphs.graph_record import graph_record
from netdp.graphs.walk_kind import kind_of
from netdp.report.config_hash import config_hash
from netdp.report.sections import summary_html
from netdp.report.text_rows import (  # noqa: F401  (re-exported: the report's rows)
    DistanceRow,
    accountant_lines,
    by_distance,
    distance_lines,
    fmt,
    quantiles_of,
    row,
    theory_distance_lines,
)
from netdp.report.timing import Timing

#: The quantiles of the pairwise losses every privacy summary reports.
QUANTILES = (0.5, 0.9, 0.99)

if TYPE_CHECKING:
    from netdp.adversary.network import AttackReport
    from netdp.graphs.topologies import Topology

SCHEMA = 2  # 1: wave 1 (unversioned); 2: typed reports, config of the task's parameters
#: The only figures that differ between two runs of a seed.
TIMING_FIELDS = ("runtime_s", "timing")


class Part(ABC):
    """A section of the report: its JSON object and its lines of the text report."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """Its object of the JSON result (plain Python, floats may be inf)."""

    def to_json(self) -> dict[str, Any]:
        """The same, strict JSON."""
        return jsonable(self.to_dict())

    @abstractmethod
    def lines(self, report: Report) -> list[str]:
        """Its part of the text report."""


class Utility(Part):
    """What a task's runs achieved (estimates and errors against their closed forms): the
    ``utility`` object."""


class PrivacyReport(Part):
    """What the privacy tracker measured over the runs: the ``privacy`` object."""


@dataclass(frozen=True)
class NotCompleted(Utility, PrivacyReport):
    """The utility and privacy of runs none of which finished (a token was lost): a
    result, not an error."""

    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"completed": False, "note": self.message}

    def lines(self, report: Report) -> list[str]:
        return []  # the faults section says why


@dataclass(frozen=True)
class ObserversRecord:
    """Which observers the pairwise tracker accounted, and where: ``accounted`` of ``of``
    nodes per run, in this process (``workers`` 0) or on a dask cluster's ``workers`` in
    ``batches`` batches, the trace ``shared`` by ``scatter`` or ``memmap``."""

    accounted: int
    of: int
    workers: int = 0
    batches: int = 0
    shared: str | None = None

    @property
    def mode(self) -> str:
        """``all`` or ``sampled``."""
        return "all" if self.accounted >= self.of else "sampled"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mode": self.mode, "accounted": self.accounted, "of": self.of,
                               "workers": self.workers}
        if self.workers:
            out.update({"batches": self.batches, "shared": self.shared})
        return out

    def line(self) -> str:
        """``observers: all (8192) on 2 workers`` or ``observers: sampled 32 of 8192``."""
        what = (f"all ({self.of:,})" if self.mode == "all"
                else f"sampled {self.accounted:,} of {self.of:,}")
        where = (f" on {self.workers} worker{'s' if self.workers != 1 else ''} "
                 f"({self.batches} batches; trace by {self.shared})" if self.workers
                 else " in this process")
        return f"  observers: {what}{where}"


@dataclass(frozen=True)
class FaultsReport(Part):
    """What went wrong over the runs (the ``faults`` object), beside the fault-free run of
    the same configuration and seed.

    Attributes
    ----------
    runs
        Each run's :meth:`~netdp.engine.trace.FaultLog.to_dict`.
    lost_tokens
        ``"run r, token k at step i (t = ...): why"`` for each token lost.
    fault_free
        ``{"utility": ..., "privacy": ..., "noise_std": ...}`` of the same runs without
        faults.
    noise_std
        The std of the noise in the published result, as the runs went (mean over the
        completed runs; ``None`` where the task does not say).
    """

    runs: tuple[Mapping[str, Any], ...]
    lost_tokens: tuple[str, ...]
    fault_free: Mapping[str, Any]
    noise_std: float | None = None

    def totals(self) -> dict[str, Any]:
        """Counts summed over the runs, times and downtime averaged."""
        keys = ("sent", "resent", "lost", "duplicated", "skipped", "regenerated",
                "lost_tokens")
        out: dict[str, Any] = {k: int(sum(r[k] for r in self.runs)) for k in keys}
        out["completed"] = all(r["completed"] for r in self.runs)
        out["completed_runs"] = sum(bool(r["completed"]) for r in self.runs)
        for k in ("completion_time", "node_downtime", "finished_tokens"):
            out[k] = float(np.mean([r[k] for r in self.runs]))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {**self.totals(), "messages_lost_share": self._share(),
                "noise_std": self.noise_std,
                "lost_token_log": list(self.lost_tokens), "runs": [dict(r) for r in self.runs],
                "fault_free": dict(self.fault_free)}

    def _share(self) -> float:
        sent = sum(r["sent"] for r in self.runs)
        return float(sum(r["lost"] for r in self.runs) / sent) if sent else 0.0

    def lines(self, report: Report) -> list[str]:
        t = self.totals()
        out = ["", f"  faults  {t['sent']:,} sends ({t['resent']:,} again), {t['lost']:,} "
                   f"messages lost, {t['duplicated']:,} duplicates dropped, {t['skipped']:,} "
                   f"nodes skipped, {t['regenerated']:,} tokens regenerated; nodes down "
                   f"{t['node_downtime']:.1%} of the time",
               f"          {t['completed_runs']} of {len(self.runs)} run(s) completed, in "
               f"{fmt(t['completion_time'])} time units on average"]
        out += [f"          lost: {line}" for line in self.lost_tokens[:5]]
        if len(self.lost_tokens) > 5:
            out.append(f"          ... and {len(self.lost_tokens) - 5} more (see --json)")
        if not t["completed_runs"]:
            out.append("          no run completed: no estimate and no privacy figures (a "
                       "result, not an error)")
        if self.noise_std is not None:
            out.append(f"          noise in the result: std {fmt(self.noise_std)} (fault-free "
                       f"{fmt(self.fault_free.get('noise_std'))})")
        out.append("          the same runs without faults: faults.fault_free in --json")
        return out


@dataclass(frozen=True)
class RunRecord:
    """One run: its index, the task's per-run figures, hops and wall time; a run whose
    token was lost has no figures and ``completed`` false."""

    run: int
    metrics: Mapping[str, float]
    hops: int
    runtime_s: float
    completed: bool = True

    def to_dict(self) -> dict[str, Any]:
        """``{"run", <metrics>, "hops", "runtime_s"}`` (and ``completed`` when false)."""
        done = {} if self.completed else {"completed": False}
        return {"run": self.run, **self.metrics, "hops": self.hops,
                "runtime_s": self.runtime_s, **done}

    def to_json(self) -> dict[str, Any]:
        """The same, strict JSON."""
        return jsonable(self.to_dict())


@dataclass(frozen=True, eq=False, repr=False)
class Report:
    """Everything one simulation reports.

    Attributes
    ----------
    config
        The resolved config (no ``None`` left that could be resolved).
    version, schema
        netdp's version and the JSON layout's.
    engine, topology
        The engine that ran and the graph (its one-line description in the JSON).
    mechanism
        The randomizer's parameters (``None`` where the task describes its noise itself).
    runs
        One record per run.
    utility, privacy
        The task's utility and the tracker's privacy report.
    sections
        Task-specific top-level objects of the JSON result (sgd: dataset, model, curves).
    pairs
        The ``n x n`` pairwise matrix when asked for (not part of the JSON); row and column
        ``i`` are node ``labels[i]``: the first accountant's.
    pair_matrices
        Every accountant's matrix, by name (where the tracker keeps them; ``pairs`` is the
        first's).
    outcomes
        The task's outcome of each run, for a closer look (not part of the JSON).
    process
        How the information moved, for the text report (default: the walk's line).
    faults
        What went wrong, beside the fault-free run (runs with faults).
    attack
        The malicious holders' effect (an :class:`~netdp.adversary.network.AttackReport`;
        runs with ``--attack``).
    timing
        Where the wall time went (:class:`Timing`; ``None`` for a report built by hand).
    observers
        Which observers the pairwise tracker accounted, and where (trackers that account
        observers one by one: walks on a graph, gossip).
    """

    config: SimulationConfig
    version: str
    engine: str
    topology: Topology
    mechanism: Mapping[str, Any] | None
    runs: tuple[RunRecord, ...]
    utility: Utility
    privacy: PrivacyReport
    sections: Mapping[str, Any] = field(default_factory=dict)
    pairs: np.ndarray | None = None
    pair_matrices: Mapping[str, np.ndarray] | None = None
    outcomes: tuple[Any, ...] = ()
    process: str | None = None
    faults: FaultsReport | None = None
    attack: AttackReport | None = None
    observers: ObserversRecord | None = None
    schema: int = SCHEMA
    timing: Timing | None = None

    @property
    def seed(self) -> int | None:
        """The run's seed."""
        return self.config.seed

    @property
    def labels(self) -> Sequence[Any]:
        """The node of each id ``0..n-1``, as the user named it (a graph file's or a
        networkx graph's labels; the ids themselves on the ring and complete graph)."""
        return self.topology.labels or range(self.topology.n)

    @property
    def hops(self) -> int:
        """Contributions over all runs and tokens."""
        return int(sum(r.hops for r in self.runs))

    @property
    def runtime_s(self) -> float:
        """Wall time of the runs."""
        return float(sum(r.runtime_s for r in self.runs))

    def to_dict(self) -> dict[str, Any]:
        """The result as plain Python values (infinite floats kept)."""
        out: dict[str, Any] = {"schema": self.schema, "version": self.version,
                               "seed": self.seed, "config": self.config.to_dict(),
                               "engine": self.engine, "topology": self.topology.describe()}
        graph = graph_record(self.topology)
        if graph is not None:
            out["graph"] = graph
        if self.mechanism is not None:
            out["mechanism"] = dict(self.mechanism)
        out.update(self.sections)
        out.update({"hops": self.hops, "runtime_s": self.runtime_s,
                    "utility": self.utility.to_dict(), "privacy": self.privacy.to_dict(),
                    "runs": [r.to_dict() for r in self.runs]})
        if self.faults is not None:
            out["faults"] = self.faults.to_dict()
        if self.attack is not None:
            out["attack"] = self.attack.to_dict()
        out["provenance"] = provenance()
        if self.timing is not None:
            out["timing"] = self.timing.to_dict()
        if self.observers is not None:
            out["observers"] = self.observers.to_dict()
        return out

    def to_json(self) -> dict[str, Any]:
        """The strict-JSON object of ``netdp simulate --json`` (``inf`` as ``"inf"``)."""
        return jsonable(self.to_dict())

    def to_frame(self):
        """The run as a one-row pandas DataFrame with the sweep table's columns
        (:func:`netdp.core.table_rows.table_row`; ``config_hash`` of the resolved config;
        with several runs, the figures summarise them: per-run figures in :attr:`runs`)."""
        return frame([table_row(self.to_dict(), config_hash(self.config))])

    def pairs_frame(self):
        """The kept pairwise losses, one row per ordered pair ``u → v`` and accountant
        (every accountant whose matrix the tracker kept, else the first):
        :func:`netdp.core.table_rows.pairs_frame` with the node labels, each accountant's
        δ and the seed. ``ValueError`` when none were kept (``keep_pairs=True`` keeps
        them)."""
        if self.pairs is None:
            raise ValueError("this report kept no pairwise losses: run "
                             "netdp.simulate(config, keep_pairs=True) to keep them "
                             "(netdp simulate --pairs-out FILE.npy on the command line)")
        empirical = self.privacy.to_dict().get("empirical") or [{}]
        return pairs_frame(self.pair_matrices or {empirical[0].get("accountant"): self.pairs},
                           self.labels, {e.get("accountant"): e.get("delta") for e in empirical},
                           seed=self.seed)

    def __repr__(self) -> str:
        """One line: task, topology, runs and seed, the utility's and the privacy's
        headline figures."""
        where = self.topology.describe()
        where = where if len(where) <= 80 else where[:77] + "..."
        return (f"<Report {self.config.task} on {where}: {len(self.runs)} run(s), seed "
                f"{self.seed}; {headline(self.utility.to_dict(), self.privacy.to_dict())}>")

    def _repr_html_(self) -> str:
        """A notebook's rich display: the report page's sections (command and config,
        provenance, utility, privacy with its theoretical lines, faults, attack) as tables,
        without the figures."""
        return summary_html(self.to_json())

    def text(self) -> str:
        """The short report ``netdp simulate`` prints."""
        cfg = self.config
        observer = f"; observer: the coalition {cfg.coalition}" if cfg.coalition else ""
        lines = [f"netdp {self.version}: {cfg.task} on {self.topology.describe()}{observer}",
                 self.walk_line()]
        if self.observers is not None:
            lines.append(self.observers.line())
        lines += self.utility.lines(self) + self.privacy.lines(self)
        if self.faults is not None:
            lines += self.faults.lines(self)
        if self.attack is not None:
            lines += self.attack.lines()
        gossip = cfg.protocol == "gossip"
        moves = "messages" if gossip else "hops"
        seconds = self.runtime_s if self.timing is None else self.timing.total_s
        lines += ["", f"  {self.hops:,} {moves} in {seconds:.3g} s; seed {self.seed} "
                      f"(rerun with --seed {self.seed})"]
        if self.timing is not None:
            lines.append("  " + self.timing.line("gossip" if gossip else "walk"))
        return "\n".join(lines)

    def walk_line(self) -> str:
        """How the token moved: turns or steps, engine, runs and seed."""
        cfg = self.config
        if self.process is not None:
            return (f"  {self.process}; engine {self.engine}; {len(self.runs)} run(s); "
                    f"seed {self.seed}")
        if kind_of(cfg.topology).public_schedule:
            walk = f"{cfg.rounds} turn(s) = {self.runs[0].hops:,} hops"
        else:
            walk = f"{cfg.steps:,} steps x {cfg.tokens} token(s), {cfg.walk} walk"
        return (f"  walk    {walk}; engine {self.engine}; {len(self.runs)} run(s); "
                f"seed {self.seed}")


# --------------------------------------------------------------------------- pairwise

@dataclass(frozen=True)
class PairSummary:
    """One accountant's pairwise losses over all ordered pairs of all runs (and, where the
    tracker gives them, by hop distance from ``u`` to ``v``)."""

    accountant: str
    delta: float
    pairs: int
    unprotected: int
    mean: float
    min: float
    max: float
    quantiles: Mapping[str, float]
    by_distance: tuple[DistanceRow, ...] = ()
    to_exact: Mapping[str, float] | None = None
    below_ldp: float | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PairSummary:
        """From the summary dict of :func:`netdp.tracking.loss_summary.summarize`."""
        fixed = ("accountant", "delta", "pairs", "unprotected", "mean", "min", "max")
        return cls(**{k: d[k] for k in fixed},
                   quantiles={k: v for k, v in d.items() if k not in (*fixed, "below_ldp")},
                   below_ldp=d.get("below_ldp"))

    @classmethod
    def of(cls, accountant: str, delta: float, eps: np.ndarray, quantiles: Sequence[float],
           pairs: int | None = None) -> PairSummary:
        """From the losses ``eps`` of the pairs held, equally weighted; ``pairs``: how many
        ordered pairs they stand for (default: ``eps.size``)."""
        return cls(accountant, delta, eps.size if pairs is None else pairs, 0,
                   float(eps.mean()), float(eps.min()), float(eps.max()),
                   quantiles_of(eps, quantiles))

    def to_dict(self) -> dict[str, Any]:
        """``{"accountant", "delta", "pairs", "unprotected", "mean", "min", "max", "q50", ...}``."""
        out = {"accountant": self.accountant, "delta": self.delta, "pairs": self.pairs,
               "unprotected": self.unprotected, "mean": self.mean, "min": self.min,
               "max": self.max, **self.quantiles}
        if self.by_distance:
            out["by_distance"] = [r.to_dict() for r in self.by_distance]
        if self.to_exact is not None:
            out["ratio_to_exact"] = dict(self.to_exact)
        if self.below_ldp is not None:
            out["below_ldp"] = self.below_ldp
        return out


@dataclass(frozen=True)
class LdpSummary:
    """The nodes' local-DP losses over their actual contributions."""

    method: str
    mean: float
    min: float
    max: float

    def to_dict(self) -> dict[str, Any]:
        """``{"method", "mean", "min", "max"}``."""
        return {"method": self.method, "mean": self.mean, "min": self.min, "max": self.max}


def _marks_reference(accountant: str) -> bool:
    """Whether the text report marks ``accountant``'s figure as the published method's
    under ``--convention reference`` (the registry's ``marks_reference``)."""
    return bool(getattr(registry.find(accountant), "marks_reference", False))


@dataclass(frozen=True)
class PairwisePrivacy(PrivacyReport):
    """Pairwise losses ε(u → v) of the walks that ran, beside the LDP baseline and the
    theoretical curves.

    Attributes
    ----------
    epsilon0, delta0
        The level of one contribution.
    ldp
        The LDP baseline.
    theory
        Named theoretical curves at this setting.
    empirical
        One summary per accountant (empty without tracking).
    note
        Why something is not reported, where it is not.
    coalitions
        The coalition of each run, when one observes.
    details
        Tracker-specific figures (the histogram's ``shuffle_bound``).
    target_delta
        The one δ of every pairwise figure and the LDP baseline (spec Correction 7;
        ``None``: the reference convention, each pair at its own ``2 k δ``).
    theory_by_distance
        Published bounds as lines by hop distance (:mod:`netdp.bounds.by_distance`).
    theory_info
        Per line of ``theory_by_distance``: its reference, model, where it applies,
        whether it bounds this view, its δ and the pairs evaluated.
    """

    epsilon0: float
    delta0: float
    ldp: LdpSummary
    theory: Mapping[str, float]
    empirical: tuple[PairSummary, ...]
    note: str | None = None
    coalitions: tuple[tuple[int, ...], ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)
    target_delta: float | None = None
    theory_by_distance: Mapping[str, tuple[DistanceRow, ...]] = field(default_factory=dict)
    theory_info: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"epsilon0": self.epsilon0, "delta0": self.delta0,
                               "ldp": self.ldp.to_dict(), **self.details,
                               "theory": dict(self.theory)}
        if self.target_delta is not None:
            out["target_delta"] = self.target_delta
        if self.theory_by_distance:
            out["theory_by_distance"] = {name: [r.to_dict() for r in rows]
                                         for name, rows in self.theory_by_distance.items()}
        if self.theory_info:
            out["theory_by_distance_info"] = {k: dict(v) for k, v in self.theory_info.items()}
        if self.note is not None:
            out["note"] = self.note
        out["empirical"] = [e.to_dict() for e in self.empirical]
        if self.coalitions:
            out["coalitions"] = [list(c) for c in self.coalitions]
        return out

    def lines(self, report: Report) -> list[str]:
        head = f"  privacy: eps(u -> v) over ordered pairs; each contribution is " \
               f"eps0={self.epsilon0:g}-LDP"
        if self.target_delta is not None:
            head += (f"\n  every pairwise figure, the LDP baseline and every theory line at "
                     f"delta = {self.target_delta:g}")
        widths = (14,) + (10,) * 6
        lines = ["", head, row(("", "mean", "min", "max", "q50", "q90", "q99"), widths)
                 + "  delta"]
        reference = report.config.convention == "reference"
        lines += accountant_lines(self.empirical, self.details.get("shuffle_bound"),
                                  lambda a: reference and _marks_reference(a), widths)
        lines.append(row(("LDP baseline", fmt(self.ldp.mean), fmt(self.ldp.min),
                          fmt(self.ldp.max)), widths))
        lines += [f"  theory {name}: {fmt(eps)}" for name, eps in self.theory.items()]
        if self.note:
            lines.append(f"  note: {self.note}")
        if self.empirical and self.empirical[0].by_distance:
            first = self.empirical[0]
            label = f"{first.accountant}, by hop distance from u to v"
            if self.theory_by_distance:
                lines += theory_distance_lines(first.by_distance, self.theory_by_distance,
                                               self.theory_info, label)
            else:
                lines += distance_lines(first.by_distance, label)
        return lines


@dataclass(frozen=True)
class RegimeLosses:
    """The pairwise ε of one regime over all ordered pairs of all runs, and the nodes'
    own (local) losses, at the target δ."""

    regime: str
    delta: float
    pairs: int
    mean: float
    min: float
    max: float
    quantiles: dict[str, float]
    above_target: float
    ldp: dict[str, float]
    by_distance: tuple[DistanceRow, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The row of ``privacy.empirical`` (accountant ``rdp``)."""
        out = {"regime": self.regime, "accountant": "rdp", "delta": self.delta,
               "pairs": self.pairs, "mean": self.mean, "min": self.min, "max": self.max,
               **self.quantiles, "above_target": self.above_target, "ldp": dict(self.ldp)}
        if self.by_distance:
            out["by_distance"] = [r.to_dict() for r in self.by_distance]
        return out


@dataclass(frozen=True, eq=False)
class ScalarUtility(Utility):
    """One estimated number over the runs, beside its truth and its closed-form standard
    deviation (``None`` where there is none): the utility of the small tasks."""

    quantity: str
    reports: str
    estimate: float
    truth: float
    abs_error: float
    theoretical_std: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"quantity": self.quantity, "estimate": self.estimate, "truth": self.truth,
                "abs_error": self.abs_error, "theoretical_std": self.theoretical_std}

    def lines(self, report: Report) -> list[str]:
        return [f"  reports {self.reports}, eps={report.config.epsilon:g}", "",
                f"  {self.quantity}: estimate {fmt(self.estimate)}, truth {fmt(self.truth)}, "
                f"abs error {fmt(self.abs_error)}, theory std {fmt(self.theoretical_std)}"]
