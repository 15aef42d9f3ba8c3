"""Run a sweep: plan batches, execute them on a backend, write each batch as it finishes.

Backends:

``serial``
    This process, batch after batch (numba keeps its own threads).
``dask``
    ``dask.distributed``: a :class:`~distributed.LocalCluster` sized to the machine (one
    single-threaded worker process per core, dashboard off) when no scheduler address is
    given, else the cluster at ``scheduler`` (``tcp://HOST:PORT``; netdp must be
    installed on its workers, and data files readable there). Numba runs one thread per
    task in the workers (``NUMBA_NUM_THREADS=1``), so workers do not compete for cores.

Runs are grouped into batches (tasks) so that a task's overhead stays small against its
work: runs are sorted by an estimated cost (steps x accountant weight: each accountant's
``weight`` in :mod:`netdp.accounting.registry`), largest first,
and packed so that each batch costs about ``1 / (8 workers)`` of the sweep (``1 / 32``
with ``serial``), a run too big for that alone in its batch. Results come back as they
complete and each batch is written at once (:meth:`ResultTable.write_batch`), so a kill
loses only the batches in flight. Each run's seed comes from the spec: the values of a
sweep do not depend on the backend, the batching or the order of completion.

A run that fails (an :class:`~netdp.core.errors.InputError` only a run can find, a library
error, a bug, ``MemoryError``) is a result: its row has status ``"error"`` and the error
in ``error``, and the sweep goes on; a rerun does not redo it. On dask, the runs of a task
whose worker process died (a crash, a kill for memory: ``KilledWorker``) run again at the
end, one at a time alone on the cluster; a run that kills its worker then gets an error
row, the others their results. ``KeyboardInterrupt``
stops the sweep; what was written stays.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from netdp.accounting import registry
from netdp.core import progress as bars
from netdp.core.errors import InputError, check
from netdp.core.table_rows import error_row
from netdp.graphs.walk_kind import kind_of
from netdp.run.api import simulate
from netdp.run.dask_client import (  # noqa: F401  (default_workers: the sweep's API)
    WORKERS_PER_CORE,
    check_scheduler,
    default_backend,
    default_workers,
    max_workers,
    require_cluster,
)
from netdp.run.dask_client import DaskClient as _dask_client
from netdp.run.sweep.spec import BACKENDS, Run, SweepSpec
from netdp.run.sweep.table import ResultTable, flatten
from netdp.tasks import get_task

BATCHES_PER_WORKER = {"dask": 8, "serial": 32}
RUN_OVERHEAD = 5e4  # fixed cost of one run, in kov-steps (about 25 ms here)


ERROR_CHARS = 1000  # longest error message kept in a row


class RunFailed(RuntimeError):
    """The sweep could not go on for a reason outside the runs (a dask task failed before
    or after its runs: netdp missing on a worker, a lost scheduler)."""


@dataclass
class SweepReport:
    """What :func:`run_sweep` did."""

    out: Path
    total: int
    skipped: int
    done: int
    errors: int
    batches: int
    backend: str
    workers: int
    seconds: float
    first_error: str = ""

    def line(self) -> str:
        """One-line summary (the error rows counted)."""
        errors = f"; {self.errors} with status error" if self.errors else ""
        if not self.done:
            return (f"sweep: nothing to run: all {self.total} runs are already in the table"
                    f"{errors} -> {self.out}")
        return (f"sweep: {self.done} runs done, {self.skipped} already in the table, "
                f"{self.total} in the spec{errors}; {self.batches} batches on {self.backend} "
                f"({self.workers} worker{'s' if self.workers != 1 else ''}) in "
                f"{self.seconds:.1f} s -> {self.out}")


def estimate_cost(config) -> float:
    """Rough cost of one run, in kov-steps: only the batching and the order use it."""
    n = config.nodes or 100
    steps = kind_of(config.topology).steps_per_token(n=n, rounds=config.rounds,
                                                     steps=config.steps, steps_per_node=100)
    accountants = (config.accountants if config.accountants is not None
                   else _default_accountants(config.task))
    weight = sum(getattr(registry.find(a), "weight", 1.0) for a in accountants) or 0.5
    return RUN_OVERHEAD + min(steps * config.tokens, 1e300) * weight  # 10^400 steps: no


def _default_accountants(task: str) -> tuple[str, ...]:

    return get_task(task).default_accountants


def plan_batches(runs: Sequence[Run], workers: int, batch_size: int | None = None,
                 per_worker: int = 8) -> list[list[Run]]:
    """Group runs into batches, most expensive first.

    ``batch_size`` fixes the runs per batch; otherwise batches are packed up to about
    ``total cost / (workers * per_worker)`` each.
    """
    order = sorted(runs, key=lambda r: -estimate_cost(r.config))
    if batch_size is not None:
        return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    costs = [estimate_cost(r.config) for r in order]
    target = sum(costs) / max(1, workers * per_worker)
    batches: list[list[Run]] = []
    current: list[Run] = []
    load = 0.0
    for run, cost in zip(order, costs, strict=True):
        if current and load + cost > target:
            batches.append(current)
            current, load = [], 0.0
        current.append(run)
        load += cost
    if current:
        batches.append(current)
    return batches


def run_batch(batch: Sequence[Run], numba_threads: int | None = None,
              on_run: Callable[[Run], None] | None = None) -> list[dict]:
    """Run a batch and return its rows (also the dask task); ``on_run(run)`` after each
    run. A run that raises an :class:`Exception` (an :class:`InputError`, a bug,
    ``MemoryError``) gives a row of status ``"error"``; ``KeyboardInterrupt`` and
    ``SystemExit`` go through. The runs draw no bar of their own (the sweep has one)."""

    if numba_threads is not None:
        import numba

        numba.set_num_threads(max(1, min(numba_threads, numba.config.NUMBA_NUM_THREADS)))  # type: ignore[attr-defined]  # numba's config is set at run time
    rows = []
    for run in batch:
        start = time.perf_counter()
        config = run.config
        try:
            config = run.config.replace(seed=run.seed, runs=1)
            with bars.quiet():
                result = simulate(config, progress=False)
            row = flatten(result.to_dict(), config_hash=run.config_hash)
        except Exception as exc:  # a failed run is a result, not a crash
            rows.append(error_row(_config_dict(config, run), run.seed, run.config_hash,
                                  describe(exc), time.perf_counter() - start))
        else:
            row["runtime_s"] = time.perf_counter() - start
            rows.append(row)
        if on_run is not None:
            on_run(run)
    return rows


def describe(exc: BaseException) -> str:
    """What an error row says: ``--param: message`` for an :class:`InputError`, else
    ``Type: message`` (one line, at most :data:`ERROR_CHARS` characters)."""
    if isinstance(exc, InputError):
        text = f"{exc.label}: {exc.message}"
    else:
        message = " ".join(_text(exc).split())
        text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return text if len(text) <= ERROR_CHARS else text[:ERROR_CHARS - 3] + "..."


def failed_rows(batch: Sequence[Run], message: str) -> list[dict]:
    """Error rows for every run of a batch that did not come back (its worker died)."""
    return [error_row(_config_dict(run.config, run), run.seed, run.config_hash, message, None)
            for run in batch]


def _config_dict(config, run: Run) -> dict:
    """The config of an error row, seed set (even when ``replace`` itself failed)."""
    try:
        out = config.to_dict()
    except Exception:  # the row must still be written
        out = {}
    out["seed"], out["runs"] = run.seed, 1
    return out


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # an exception whose __str__ fails
        return ""


def pending_runs(spec: SweepSpec, out: str | Path) -> tuple[list[Run], int]:
    """The runs of ``spec`` with no row in ``out`` yet, and how many are done (read only;
    raises :class:`InputError` if ``out`` may not take this spec)."""
    table = ResultTable(out)
    table.check_compatible(spec)
    done = table.done_keys()
    runs = spec.runs
    todo = [r for r in runs if r.key not in done]
    return todo, len(runs) - len(todo)


def run_sweep(spec: SweepSpec, out: str | Path, backend: str | None = None,
              scheduler: str | None = None, workers: int | None = None,
              batch_size: int | None = None, progress: bool | None = None,
              client=None, numba_threads: int | None = 1) -> SweepReport:
    """Run every run of ``spec`` that ``out`` has no row for, and write its rows there.

    Parameters
    ----------
    spec
        A validated spec (:func:`~netdp.run.sweep.spec.load_spec`).
    out
        The table folder (created, or resumed).
    backend
        ``"dask"`` (needs ``pip install 'netdp[cluster]'``) or ``"serial"``; default dask
        with a ``client`` or a ``scheduler``, else the spec's, else dask where installed,
        else serial (the rows are the same).
    scheduler
        dask: address of an existing scheduler; ``None`` starts a local cluster.
    workers
        dask: workers of the local cluster (default: one per core).
    batch_size
        Runs per task (default: automatic, see :func:`plan_batches`).
    progress
        Progress bar on stderr (``None``: on a terminal).
    client
        dask: an existing ``distributed.Client`` to use (a notebook's).
    numba_threads
        dask: threads numba may use inside a task (default 1: the workers already use
        every core; ``None`` leaves numba's own setting).
    """
    start = time.perf_counter()
    if backend is None:
        given = client is not None or scheduler is not None
        backend = "dask" if given else spec.backend or default_backend()
    check(backend in BACKENDS, "backend", f"must be one of {', '.join(BACKENDS)} "
          f"(got {backend!r})")
    if backend == "dask" and client is None:
        require_cluster("backend")
    if backend == "serial":
        check(scheduler is None and client is None, "scheduler",
              "a scheduler address needs --backend dask")
        check(workers is None, "workers", "sizes the local dask cluster; not with "
              "--backend serial")
    if scheduler is not None:
        check_scheduler(scheduler)  # before a connection is tried
    if workers is not None:
        check(isinstance(workers, int) and 1 <= workers <= max_workers(), "workers",
              f"must be an integer in 1..{max_workers()} ({WORKERS_PER_CORE} per core here; "
              f"got {workers!r})")
        check(scheduler is None and client is None, "workers", "sizes a local cluster; an "
              "existing cluster (--scheduler) keeps its own workers")
    if batch_size is None:
        batch_size = spec.batch_size
    if batch_size is not None:
        check(isinstance(batch_size, int) and batch_size >= 1, "batch-size",
              f"must be an integer >= 1 (got {batch_size!r})")
    out = Path(out)
    todo, skipped = pending_runs(spec, out)
    if not todo:
        ResultTable.open(out, spec).close()  # records the spec (e.g. a compatible edit)
        errors, first = _errors(out)
        return SweepReport(out, spec.n_runs, skipped, 0, errors, 0, backend, 0,
                           time.perf_counter() - start, first)
    if backend == "serial":
        n_workers = 1
        batches = plan_batches(todo, 1, batch_size, BATCHES_PER_WORKER["serial"])
        with ResultTable.open(out, spec) as table, CostBar(spec, todo, progress) as bar:
            for batch in batches:
                table.write_batch(run_batch(batch, on_run=lambda run: bar.advance([run])))
    else:
        with _dask_client(scheduler, workers, client, numba_threads) as dask_client:
            n_workers = max(1, len(dask_client.scheduler_info(n_workers=-1)["workers"]))
            batches = plan_batches(todo, n_workers, batch_size, BATCHES_PER_WORKER["dask"])
            with ResultTable.open(out, spec) as table, CostBar(spec, todo, progress) as bar:
                _run_dask(dask_client, batches, table, bar, numba_threads)
    errors, first = _errors(out)
    return SweepReport(out, spec.n_runs, skipped, len(todo), errors, len(batches), backend,
                       n_workers, time.perf_counter() - start, first)


def _errors(out: Path) -> tuple[int, str]:
    """Rows of ``out`` whose status is not ok, and the first one's error."""
    bad = [r for r in ResultTable(out).rows() if r.get("status") != "ok"]
    return len(bad), str(bad[0].get("error", "")) if bad else ""


def _run_dask(client, batches: list[list[Run]], table: ResultTable, bar: CostBar,
              numba_threads: int | None) -> None:
    """Submit every batch, write each as it completes. A batch whose worker process died
    (``KilledWorker``: every task on a dying worker is blamed, the innocent ones too) is
    run again at the end, one run at a time alone on the cluster, so that a death then is
    that run's own: it gets an error row, the others their results."""
    from distributed import as_completed, wait

    tag = f"{os.getpid()}-{time.time_ns()}"
    count = itertools.count()
    pending: dict = {}  # future -> its batch
    suspects: list[Run] = []

    def submit(batch: list[Run], priority: int):
        future = client.submit(run_batch, batch, numba_threads, priority=priority,
                               key=f"netdp-batch-{tag}-{next(count)}", pure=False)
        pending[future] = batch
        return future

    def finish(future) -> None:
        batch = pending.pop(future)
        if _killed(future):
            suspects.extend(batch)
        else:
            rows = future.result()  # raises what failed outside the runs
            table.write_batch(rows)
            bar.advance(batch)
        future.release()

    try:
        for future in as_completed([submit(batch, len(batches) - i)
                                    for i, batch in enumerate(batches)]):
            finish(future)
        for run in suspects:
            future = submit([run], 0)
            wait([future])
            if _killed(future):
                pending.pop(future)
                table.write_batch(failed_rows([run], "KilledWorker: the dask worker process "
                                              "died running this run (a crash, or killed "
                                              "for memory)"))
                bar.advance([run])
            else:
                finish(future)
    except BaseException:
        client.cancel(list(pending))
        raise


def _killed(future) -> bool:
    """Whether a finished task failed because its worker process died."""
    from distributed.scheduler import KilledWorker

    if future.status != "error":
        return False
    exc = future.exception()
    if isinstance(exc, KilledWorker):
        return True
    raise RunFailed(f"a dask task failed outside its runs: {describe(exc)}") from exc


class CostBar:
    """The sweep's progress bar, on stderr: it advances by each run's estimated cost
    (:func:`estimate_cost`: steps x accountant weight, plus a fixed overhead), not by one
    per run, so that its rate and time left hold when the runs differ in size (the
    largest run first). The runs done are counted in its label, ``k/N runs``.

    ``progress``: ``None`` draws it on a terminal, ``True`` always, ``False`` never
    (:func:`netdp.core.progress.bar`; never under ``--quiet``).
    """

    def __init__(self, spec: SweepSpec, todo: Sequence[Run], progress: bool | None) -> None:
        self.cost = {r.key: estimate_cost(r.config) for r in spec.runs}
        self.total = float(sum(self.cost.values()))
        self.runs, self.done = spec.n_runs, spec.n_runs - len(todo)
        done_cost = self.total - sum(self.cost[r.key] for r in todo)
        self.bar = bars.bar(total=self.total, initial=done_cost, desc=self._desc(),
                            show=progress, delay=0.0, smoothing=0.1, leave=True,
                            bar_format="{desc}: {percentage:3.0f}%|{bar}| "
                                       "[{elapsed}<{remaining}]")

    def _desc(self) -> str:
        return f"sweep, {self.done}/{self.runs} runs"

    def advance(self, runs: Sequence[Run]) -> None:
        """These runs are done: move the bar by their costs."""
        self.done += len(runs)
        self.bar.set_description_str(self._desc(), refresh=False)
        self.bar.update(sum(self.cost[r.key] for r in runs))

    def __enter__(self) -> CostBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.close()
