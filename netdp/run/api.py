"""What a notebook calls: ``simulate(config) -> Report``, the one run loop of every task.

    config -> task.prepare -> (task.trace (the engine) -> task.run + tracker.add) x runs
           -> task.utility + tracker.report -> Report

The loop knows nothing of any task: everything task-specific is a method of the task
(:class:`netdp.tasks.base.Task`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from netdp.adversary.network import AttackReport, adversary_of
from netdp.core import arguments
from netdp.core import progress as bars
from netdp.core.errors import InputError
from netdp.core.files import check_file_name
from netdp.core.setup import Setup, Streams
from netdp.core.simulation_config import SimulationConfig
from netdp.core.version import __version__
from netdp.engine.trace import Trace
from netdp.report.types import (
    FaultsReport,
    NotCompleted,
    ObserversRecord,
    Report,
    RunRecord,
    Timing,
)
from netdp.run.account import trace_writer
from netdp.run.dask_client import check_scheduler
from netdp.run.resources import check_footprint
from netdp.tasks import make_config, task_of
from netdp.tasks.base import Attackable, attack_targets, attacks_of, output_noise, report_parts
from netdp.tasks.preparation import with_seed
from netdp.tracking.observer_map import Accounted, observer_log

# the fault parameters at their fault-free values: the baseline beside a faulty run
FAULT_FREE = {"loss": "0", "churn": "none", "crash": None, "slow": None}


def simulate(config: SimulationConfig | Mapping[str, Any], progress: bool | None = None,
             keep_pairs: bool | Callable[[Setup], bool] = False,
             trace_out: str | Path | None = None, *,
             client: Any = None, workers: int | None = None,
             scheduler: str | None = None) -> Report:
    """Run ``config.runs`` independent runs of one configuration and report them.

    Parameters
    ----------
    config
        A :class:`~netdp.core.config.SimulationConfig`, or flat parameters as for the command
        line (``{"task": "histogram", "domain": 8, "nodes": 200}``). ``None`` fields are
        resolved and recorded in the report.
    progress
        Show a progress bar over runs (``None``: on a terminal, for several runs).
    keep_pairs
        Also return the ``n x n`` matrix of pairwise losses (first accountant, mean over
        runs) in :attr:`Report.pairs`; up to n = 10 000. A function of the prepared setup
        decides once the setup is resolved (its nodes, its accountants).
    trace_out
        Also write the runs' traces to this file as a deployment's log (one line per hop,
        or per gossip message: :mod:`netdp.engine.trace_log`), which
        :func:`netdp.run.account.account` reads back; atomically, once every run is done.
    client, workers, scheduler
        Account the observers on a dask cluster (:mod:`netdp.run.observer_cluster`): a
        ``distributed.Client``, a local cluster of ``workers`` single-threaded processes,
        or the running scheduler at ``scheduler`` (at most one of them). Every observer
        is then accounted unless ``sources`` is given, and the numbers are those of the
        run here with ``sources = n``, bit for bit.

    Raises
    ------
    InputError
        On a parameter out of range or of the wrong type (any argument), or a run too
        large for this machine (checked before anything is built).
    """
    started = time.perf_counter()
    progress = arguments.flag(progress, "progress", optional=True)
    if not callable(keep_pairs):
        keep_pairs = bool(arguments.flag(keep_pairs, "keep_pairs"))
    if trace_out is not None:
        trace_out = arguments.path(trace_out, "trace_out")
        check_file_name(trace_out, "trace_out")
    workers, scheduler = _cluster_arguments(client, workers, scheduler)
    config = with_seed(make_config(config))
    task = task_of(config)
    check_footprint(task, config)
    if client is not None or workers is not None or scheduler is not None:
        from netdp.run.observer_cluster import on_cluster

        with on_cluster(task, config, client=client, workers=workers,
                        scheduler=scheduler) as setup:
            return _run_writing(setup, progress, keep_pairs, trace_out, started)
    return _run_writing(task.prepare(config), progress, keep_pairs, trace_out, started)


def _cluster_arguments(client: Any, workers: Any, scheduler: Any) -> tuple[Any, Any]:
    """``workers`` (a numpy integer as the integer) and ``scheduler`` (a string), and
    ``client`` checked a ``distributed.Client``."""
    workers = arguments.plain(workers)  # np.int64(2): 2 (the range is on_cluster's)
    if scheduler is not None:
        scheduler = arguments.text(scheduler, "scheduler", "an address, tcp://HOST:PORT")
        check_scheduler(scheduler)  # before the run is prepared
    if client is not None:
        try:
            from distributed import Client

            ok = isinstance(client, Client)
        except ImportError:  # no dask: there is no client to give
            ok = False
        if not ok:
            raise InputError("client", f"must be a distributed.Client (got "
                             f"{type(client).__name__})")
    return workers, scheduler


def _run_writing(setup: Setup, progress: bool | None,
                 keep_pairs: bool | Callable[[Setup], bool],
                 trace_out: str | Path | None, started: float) -> Report:
    """:func:`run`, writing the traces to ``trace_out`` where given (``started``: when the
    setup began); ``keep_pairs`` as a function is asked of the prepared setup."""
    if callable(keep_pairs):
        keep_pairs = keep_pairs(setup)
    if trace_out is None:
        return run(setup, progress, keep_pairs, started=started)
    with trace_writer(trace_out, setup) as write:
        return run(setup, progress, keep_pairs, on_trace=write, started=started)


def run(setup: Setup, progress: bool | None = None, keep_pairs: bool = False,
        on_trace: Callable[[int, Trace], None] | None = None,
        started: float | None = None) -> Report:
    """The run loop over a prepared setup (see :func:`simulate`); ``on_trace(run, trace)``
    sees each run's trace as the engine made it. ``started``: the ``time.perf_counter()``
    at which the setup began (its time is the report's ``timing.setup_s``)."""
    begin = time.perf_counter()
    clock = Clock(setup_s=0.0 if started is None else begin - started)
    config, topo = setup.config, setup.topology
    task = task_of(config)
    with observer_log() as accounted:
        with clock("accounting_s"):
            tracker = task.tracker(setup, keep_pairs)
        adversary = adversary_of(config, attacks_of(task), task.label)
        outcomes, records, logs, lost, noise, attacked = [], [], [], [], [], []
        for r in _progress(config.runs, progress):
            start = time.perf_counter()
            streams = Streams(setup.seed, r)
            with clock("engine_s"):
                trace = task.trace(setup, streams)
            if on_trace is not None:
                on_trace(r, trace)
            if trace.faults is not None:
                logs.append(trace.faults.to_dict())
                lost += [f"run {r}, token {k} at step {i} (t = {t:.4g}): {why}"
                         for k, i, t, why in trace.faults.lost_tokens]
            if not trace.completed:  # a token was lost: a result, with no estimate
                records.append(RunRecord(r, {}, int((trace.holders >= 0).sum()),
                                         time.perf_counter() - start, completed=False))
                continue
            with clock("engine_s"):
                if adversary is None:
                    outcome = task.run(setup, trace.finished(), streams)
                else:  # adversary_of refused an attack the task does not offer
                    assert isinstance(task, Attackable)
                    outcome, attack_run = task.attacked(setup, trace.finished(), streams,
                                                        adversary)
                    attacked.append(attack_run)
            with clock("accounting_s"):
                tracker.add(r, trace, outcome)  # every token walked: lost ones' exposures stay
            if trace.faults is not None:
                noise.append(output_noise(task, setup, trace.finished(), outcome))
            outcomes.append(outcome)
            records.append(RunRecord(r, task.record(outcome), trace.hops,
                                     time.perf_counter() - start))
    faults = None
    if logs:
        with clock("report_s"):  # the fault-free runs beside: part of the report
            free_setup = task.prepare(config.replace(**FAULT_FREE))
            free = run(free_setup, False, False)
            free_noise = [output_noise(task, free_setup, None, o) for o in free.outcomes]
            faults = FaultsReport(tuple(logs), tuple(lost),
                                  {"utility": free.utility.to_dict(),
                                   "privacy": free.privacy.to_dict(),
                                   "noise_std": _mean(free_noise)}, _mean(noise))
    with clock("report_s"):
        mechanism, process, sections = report_parts(task, setup, outcomes)
    if not outcomes:
        gone = NotCompleted(f"every run lost a token ({lost[0]})")
        return Report(config=config, version=__version__, engine=config.engine,
                      topology=topo, mechanism=mechanism, runs=tuple(records), utility=gone,
                      privacy=gone, faults=faults, process=process,
                      timing=clock.timing(begin))
    attack = None
    with clock("report_s"):
        if adversary is not None:
            honest = task.utility(setup, [a.honest for a in attacked]).to_dict()
            attack = AttackReport(str(adversary.attack), adversary.malicious_text,
                                  tuple(attacked), attack_targets(task, setup), honest)
        utility = task.utility(setup, outcomes)
    with clock("accounting_s"):
        privacy, pairs, matrices = tracker.report(), tracker.matrix(), tracker.matrices()
    return Report(config=config, version=__version__, engine=config.engine,
                  topology=topo, mechanism=mechanism, runs=tuple(records),
                  utility=utility, privacy=privacy,
                  sections=sections, pairs=pairs, pair_matrices=matrices,
                  outcomes=tuple(outcomes),
                  process=process, faults=faults, attack=attack, timing=clock.timing(begin),
                  observers=_observers(accounted, topo.n) if config.coalition is None
                  else None)


def _observers(accounted: list[Accounted], n: int) -> ObserversRecord | None:
    """What the tracker's first per-observer map of the run did (``None``: it made none)."""
    if not accounted:
        return None
    first = accounted[0]
    return ObserversRecord(first.observers, n, first.workers, first.batches, first.shared)


def _mean(values: list[float | None]) -> float | None:
    """The mean, or ``None`` when a value is missing (or there is none)."""
    if not values or any(v is None for v in values):
        return None
    return float(sum(v for v in values if v is not None) / len(values))


def _progress(runs: int, progress: bool | None) -> Any:
    """``range(runs)``, with a bar for several runs on a terminal (or as asked)."""
    if progress is None and runs <= 1:
        return range(runs)
    return bars.bar(range(runs), desc="runs", unit="run", show=progress)


class Clock:
    """Seconds spent in each part of a run (the fields of :class:`Timing`):
    ``with clock("engine_s"): ...`` adds the block's wall time to that part."""

    def __init__(self, **spent: float) -> None:
        self.spent = dict.fromkeys(("setup_s", "engine_s", "accounting_s", "report_s"), 0.0)
        self.spent.update(spent)

    @contextmanager
    def __call__(self, part: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.spent[part] += time.perf_counter() - start

    def timing(self, begin: float) -> Timing:
        """The parts so far, and the total from ``begin`` (plus the setup before it)."""
        total = self.spent["setup_s"] + time.perf_counter() - begin
        return Timing(**self.spent, total_s=total)
