"""One simulation's observers accounted on a dask cluster (``simulate --workers K``,
``--scheduler ADDRESS``, ``netdp.simulate(config, client=...)``).

The engine runs once, here. The tracker's per-observer work
(:mod:`netdp.tracking.observer_map`: the graph-walk trackers, sound and reference, and
the exact loss of gossip) then runs on the workers in batches: the data it shares (the
trace's holders grouped by observer, the transition or gossip matrix) goes to every
worker once (``scatter``), or, above :data:`MMAP_BYTES`, as ``.npy`` files in a temporary
folder that the workers memory-map (``memmap``). **That folder must be readable by the
workers at the same path**: always true of a local cluster; on other machines, a shared
filesystem (``NETDP_SHARED_DIR`` names the folder; a worker that cannot see it is refused
up front). The batches' results come back as they finish and are assembled in the
observers' order, so the numbers are those of the run in one process with
``--sources n``, bit for bit: the per-observer work draws no random number and depends
on the observer alone (the sampled observers, when sampled, are drawn once, here).

Every observer is accounted by default on a cluster (``sources = n``; ``--sources K``
still samples K). A worker runs numba on one thread (``numba.set_num_threads(1)`` in each
batch, and ``NUMBA_NUM_THREADS=1`` in a local worker's environment): the workers share
the cores. Before anything runs, each worker's memory is checked: the shared data, one
observer's working arrays and a batch's results against its dask ``memory_limit``
(:func:`worker_footprint`). A worker killed mid-run (a crash, SIGKILL) loses its batch
only: dask runs that batch again on another worker and the result is unchanged; a batch
that kills its workers ``distributed.scheduler.allowed-failures`` times is an error.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from netdp.core.errors import InputError, check
from netdp.core.setup import Setup
from netdp.core.simulation_config import SimulationConfig
from netdp.graphs.time_varying import names_time_varying
from netdp.graphs.walk_kind import kind_of
from netdp.run.dask_client import DaskClient, max_workers, require_cluster
from netdp.run.resources import human, memory_limit, planned_size
from netdp.tasks.base import Task, footprint
from netdp.tracking.graph_observers import SOURCES
from netdp.tracking.law_bound_cost import INVERSE, SPECTRUM, law_bound_footprint
from netdp.tracking.observer_map import Work, observers_on

MMAP_BYTES = 256 * 2**20  # shared data above this goes by memory-mapped files
MAPPED_ARRAY = 2**20  # arrays above this are mapped (the rest is scattered)
BATCHES_PER_WORKER = 8  # batches per worker: a lost batch costs 1/8 of a worker's share
BATCH_BYTES = 256 * 2**20  # most bytes of one batch's results
WORKER_BASE = 300 * 2**20  # a worker process with numpy, scipy and numba loaded
PAUSE = 0.8  # of its memory limit, where dask pauses a worker
#: Bytes held here per pair at the peak of the assembly (the batches' pieces, their
#: concatenation, the LDP caps, hop distances and the summary's sort): 104-105 measured
#: as the slope of this process's peak RSS at n = 2048, 4096, 8192 with every observer
#: (0.74, 2.05, 7.35 GB; docs/cluster.md), rounded up.
PAIR_BYTES = 112


class ClusterFailed(RuntimeError):
    """The cluster could not account the observers (a batch killed its workers every
    time, a lost scheduler)."""


class MappedArray:
    """An array shared as a ``.npy`` file, memory-mapped read-only where it is used."""

    def __init__(self, path: str) -> None:
        self.path = path

    def load(self) -> np.ndarray:
        """The array, memory-mapped (a batch maps it again: cheap, and no handle
        outlives the run's files)."""
        return np.load(self.path, mmap_mode="r")


def account_batch(work: Work, shared: Mapping[str, Any], observers: np.ndarray,
                  numba_threads: int | None = 1) -> list[Any]:
    """A batch of observers on a worker (the dask task): ``work(shared, v)`` for each,
    memory-mapped arrays opened, numba on ``numba_threads`` threads."""
    if numba_threads is not None:
        import numba

        numba.set_num_threads(max(1, min(numba_threads, numba.config.NUMBA_NUM_THREADS)))  # type: ignore[attr-defined]  # numba's config is set at run time
    data = {k: v.load() if isinstance(v, MappedArray) else v for k, v in shared.items()}
    return [work(data, int(v)) for v in observers]


class ClusterMap:
    """An :class:`~netdp.tracking.observer_map.ObserverMap` on a dask client: batches of
    observers on the workers, results in the observers' order.

    Parameters
    ----------
    client
        A connected ``distributed.Client``.
    workers
        Its workers (batches are planned for them).
    batch_size
        Most observers per batch (the memory check sets it).
    numba_threads
        numba's threads in a batch (``None``: the worker's own setting).
    mmap_bytes
        Shared data above this many bytes goes by memory-mapped files (default
        :data:`MMAP_BYTES`).
    """

    def __init__(self, client: Any, workers: int, batch_size: int | None = None,
                 numba_threads: int | None = 1, mmap_bytes: int | None = None) -> None:
        self.client, self.workers, self.batch_size = client, workers, batch_size
        self.numba_threads = numba_threads
        self.mmap_bytes = MMAP_BYTES if mmap_bytes is None else mmap_bytes
        self.batches, self.shared = 0, "scatter"
        self.folder: Path | None = None
        self.tag = f"{os.getpid()}-{time.time_ns()}"
        self.count = itertools.count()

    def map(self, work: Work, shared: Mapping[str, Any], observers: np.ndarray,
            desc: str) -> list[Any]:
        from distributed import as_completed
        from distributed.scheduler import KilledWorker

        data, files = self._share(shared)
        parts = max(1, min(observers.size, self.workers * BATCHES_PER_WORKER))
        if self.batch_size is not None:
            parts = max(parts, -(-observers.size // self.batch_size))
        batches = np.array_split(observers, parts)
        self.batches = len(batches)
        index: dict[Any, int] = {}
        for i, batch in enumerate(batches):
            future = self.client.submit(account_batch, work, data, batch, self.numba_threads,
                                        priority=len(batches) - i, pure=False,
                                        key=f"netdp-observers-{self.tag}-{next(self.count)}")
            index[future] = i
        results: list[list[Any] | None] = [None] * len(batches)
        try:
            for future in as_completed(list(index)):
                try:
                    results[index[future]] = future.result()
                except KilledWorker as exc:
                    raise ClusterFailed(f"{desc}: a batch of observers killed its dask "
                                        f"worker every time it ran ({exc}); a worker's "
                                        "memory may be too small") from None
                future.release()
        except BaseException:
            self.client.cancel(list(index))
            raise
        finally:
            for path in files:  # this map's files: the next run shares its own
                path.unlink(missing_ok=True)
        return [r for part in results if part is not None for r in part]

    def _share(self, shared: Mapping[str, Any]) -> tuple[Any, list[Path]]:
        """``shared`` on every worker (a future), scattered, its large arrays as mapped
        files when the whole is above :attr:`mmap_bytes`; and the files written."""
        arrays = {k: v for k, v in shared.items() if isinstance(v, np.ndarray)}
        total = sum(v.nbytes for v in arrays.values())
        data = dict(shared)
        files: list[Path] = []
        self.shared = "scatter"
        if total > self.mmap_bytes:
            folder = self._folder()
            step = next(self.count)
            for key, value in arrays.items():
                if value.nbytes >= min(MAPPED_ARRAY, self.mmap_bytes + 1):
                    path = folder / f"{step}-{key}.npy"
                    np.save(path, np.ascontiguousarray(value))
                    files.append(path)
                    data[key] = MappedArray(str(path))
            self.shared = "memmap"
        [future] = self.client.scatter([data], broadcast=True, hash=False)
        return future, files

    def _folder(self) -> Path:
        """The temporary folder of the mapped files, checked readable by every worker."""
        if self.folder is None:
            base = os.environ.get("NETDP_SHARED_DIR") or None
            self.folder = Path(tempfile.mkdtemp(prefix="netdp-shared-", dir=base))
            seen = self.client.run(os.path.isdir, str(self.folder))
            if not all(seen.values()):
                blind = [w for w, ok in seen.items() if not ok]
                raise InputError("scheduler", f"the workers {', '.join(blind)} cannot read "
                                 f"{self.folder}: a trace this large is shared by files; "
                                 "set NETDP_SHARED_DIR to a folder the workers share")
        return self.folder

    def close(self) -> None:
        """Remove the mapped files."""
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


# --------------------------------------------------------------------------- what runs


def check_distributable(config: SimulationConfig, param: str = "workers") -> None:
    """Refuse (:class:`InputError`) a run whose tracker has no per-observer work to share
    out: the cluster flags (``param``) are refused, not ignored."""
    check(config.task == "sum", param, "the observers are accounted on a cluster for "
          "--task sum (walks on a graph, and --protocol gossip)")
    check(config.accountants != (), param, "--no-tracking leaves no observer to account")
    check(config.coalition is None, param, "a coalition observes as one: no observers to "
          "share out")
    source = config.topology if config.graph is None else config.graph
    check(not names_time_varying(source, config.graph_format), param, "a time-varying "
          "graph's observers are accounted in this process for now (sample them with "
          "--sources)")
    if config.protocol == "gossip":
        from netdp.engine.faults import from_config

        check(from_config(config) is None, param, "gossip with faults is accounted run by "
              "run in this process (n x n maps); not on a cluster")
    else:
        check(not kind_of(config.topology).implicit, param, "on the ring and the complete "
              "graph the tracker is one vectorised pass over every observer: nothing to "
              "share out (use a graph)")


def every_observer(task: Task[Any], config: SimulationConfig) -> SimulationConfig:
    """``config`` with every observer accounted (``sources = n``), unless ``sources``
    was given."""
    if config.get(SOURCES) is not None:
        return config
    n, _ = planned_size(task, config)
    return config.replace(sources=n)


def worker_footprint(setup: Setup) -> tuple[dict[str, float], int]:
    """Bytes a worker holds at its peak, by part, and the observers per batch that keep a
    batch's results under :data:`BATCH_BYTES`.

    Shared: the trace's holders and their grouping (16 bytes a step) or the gossip matrix
    (with its exact residues and the graph, 36 bytes a non-zero); one observer's arrays:
    the laws of its views (sound tracker: ``views x n x (kmax + 3)`` floats, the views of
    the busiest node at its share of the steps), the taboo chain's rows (reference:
    ``2 d_max x min(T, n) x n`` floats, at most the tracker's 1 GiB), the view's rows and
    its SVD (gossip: ``((T + 2) d_max + 2 n) n`` floats); a batch's results (16 bytes a
    pair); the law bound's dense inverse (:mod:`netdp.tracking.law_bound_cost`)."""
    cfg, topo = setup.config, setup.topology
    n, steps = topo.n, setup.steps
    degrees = np.asarray(topo.degrees)
    dmax, nnz = int(degrees.max(initial=1)), int(degrees.sum()) + n
    batch = max(1, BATCH_BYTES // (16 * n))
    parts = {"the process": float(WORKER_BASE)}
    if cfg.protocol == "gossip":
        parts["the gossip matrix"] = 36.0 * nnz
        parts["one observer's view and SVD"] = 8.0 * ((steps + 2) * dmax + 2 * n) * n
    else:
        from netdp.tracking.taboo import MEMORY
        from netdp.tracking.walk_views import KMAX

        walked = cfg.tokens * steps
        parts["the trace"] = 16.0 * walked + 8.0 * (n + 1) + 12.0 * nnz
        if cfg.convention == "sound":
            views = walked * dmax / max(degrees.mean(), 1.0) / n + 1
            parts["one observer's laws"] = 8.0 * views * n * (KMAX[0] + 3)
        else:
            parts["one observer's taboo rows"] = min(float(MEMORY),
                                                     16.0 * dmax * min(steps, n) * n)
    parts["a batch's results"] = 16.0 * n * min(batch, n)
    parts.update({k: v for k, (v, _) in law_bound_footprint(cfg, n).items()})  # each its own
    return parts, batch


def check_worker_memory(setup: Setup, limits: list[int], param: str,
                        local_total: int | None = None) -> int:
    """Refuse (:class:`InputError`, one line) a run a worker cannot hold: the size, and
    how many local workers of this machine could (``local_total``), or how much memory
    a worker needs. Returns the batch size."""
    parts, batch = worker_footprint(setup)
    need = sum(parts.values())
    limit = min(limits) if limits else 0
    if limit <= 0 or need <= PAUSE * limit:  # 0: dask's no limit
        return batch
    what, size = max(((k, v) for k, v in parts.items() if k != "the process"),
                     key=lambda kv: kv[1])
    per = need / PAUSE
    if local_total is not None:
        fit = int(local_total // per)
        more = (f"at most {fit} local worker{'s' if fit != 1 else ''} of this machine's "
                f"{human(local_total)} could (--workers {fit})" if fit >= 1 else
                f"no worker of this machine's {human(local_total)} can (fewer steps or "
                "nodes)")
    else:
        more = f"start workers with --memory-limit {human(per)} or more"
    raise InputError(param, f"each worker would hold about {human(need)} ({what}: "
                            f"{human(size)}; n = {setup.topology.n:,}, {setup.steps:,} steps)"
                            f", more than {PAUSE:.0%} of its {human(limit)} memory limit; "
                            f"{more}")


def check_client_memory(setup: Setup, available: int, param: str) -> None:
    """Refuse a run whose pairs, assembled here (:data:`PAIR_BYTES` each, every
    observer's ``n - 1``), would not fit in ``available`` bytes."""
    n = setup.topology.n
    observers = min(int(setup.config.get(SOURCES) or n), n)
    need = PAIR_BYTES * n * observers
    if need <= available:
        return
    fit = max(1, available // (PAIR_BYTES * n))
    raise InputError(param, f"the pairs of {observers:,} observers x {n:,} nodes would "
                            f"hold about {human(need)} here once assembled, more than the "
                            f"{human(available)} left to this process (NETDP_MEMORY_LIMIT); "
                            f"--sources {fit:,} would fit")


@contextmanager
def on_cluster(task: Task[Any], config: SimulationConfig, *, client: Any,
               workers: int | None, scheduler: str | None) -> Iterator[Setup]:
    """The prepared setup of a run whose observers go to a dask cluster (see the module
    docstring), the cluster installed for :func:`netdp.run.api.run` within the block."""
    given = sum(x is not None for x in (client, workers, scheduler))
    check(given == 1, "scheduler", "give one of --workers (a local cluster), --scheduler "
          "(a running one) or client=")
    param = "workers" if workers is not None else "scheduler"
    if client is None:
        require_cluster(param)
    if workers is not None:
        check(isinstance(workers, int) and not isinstance(workers, bool)
              and 1 <= workers <= max_workers(), "workers",
              f"must be an integer in 1..{max_workers()} (4 per core here; got {workers!r})")
    check_distributable(config, param)
    config = every_observer(task, config)
    setup = task.prepare(config)
    here = sum(size for part, (size, _) in footprint(task, config, setup.topology.n,
                                                     setup.steps).items()
               if part not in (INVERSE, SPECTRUM))  # the workers invert, not this process
    check_client_memory(setup, max(memory_limit() - int(here), 0), param)
    local_total = None
    if workers is not None:  # the machine's memory, less this process's run, shared out
        here += PAIR_BYTES * setup.topology.n * min(int(config.get(SOURCES)),
                                                    setup.topology.n)
        local_total = max(memory_limit() - int(here), 0)
        batch = check_worker_memory(setup, [local_total // workers], param, local_total)
    with DaskClient(scheduler, workers, client, 1,
                    None if local_total is None else max(local_total // (workers or 1),
                                                         1)) as dask_client:
        info = dask_client.scheduler_info(n_workers=-1)["workers"]
        check(bool(info), param, "the cluster has no worker")
        if workers is None:
            batch = check_worker_memory(setup, [int(w.get("memory_limit") or 0)
                                                for w in info.values()], param)
        mapper = ClusterMap(dask_client, len(info), batch)
        try:
            with observers_on(mapper):
                yield setup
        finally:
            mapper.close()
