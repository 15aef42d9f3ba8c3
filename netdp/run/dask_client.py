"""A dask client for netdp's work: a notebook's, one connected to a running scheduler, or
a local cluster of single-threaded worker processes (sweeps and one simulation's
observers alike).

Numba runs one thread per task in the local workers (``NUMBA_NUM_THREADS=1`` in their
environment), so workers do not compete for cores; the workers keep this process's BLAS
threading (dask would pin it to 1): a threaded BLAS sums in another order with another
thread count, and the last bits of a result must not depend on where it ran.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import warnings
from typing import Any

from netdp.core.errors import InputError, one_line, shorten

BLAS_THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "GOTO_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
WORKERS_PER_CORE = 4  # most local dask workers per core (--workers)


#: What a user installs for dask work: netdp's core install leaves dask out.
CLUSTER_EXTRA = "pip install 'netdp[cluster]'"


def has_cluster() -> bool:
    """Whether dask and distributed are installed here (netdp's ``cluster`` extra)."""
    return all(importlib.util.find_spec(name) is not None for name in ("dask", "distributed"))


def require_cluster(param: str) -> None:
    """Refuse ``param`` (:class:`InputError`) where dask or distributed is not installed."""
    if not has_cluster():
        raise InputError(param, "needs dask and distributed, which netdp's core install "
                         f"leaves out: {CLUSTER_EXTRA}")


def default_backend() -> str:
    """A sweep's backend where neither the command nor the spec names one: ``dask`` where
    installed, else ``serial`` (the table is the same on both)."""
    return "dask" if has_cluster() else "serial"


def default_workers() -> int:
    """Cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def max_workers() -> int:
    """Most workers a local dask cluster may have here: :data:`WORKERS_PER_CORE` per core."""
    return WORKERS_PER_CORE * default_workers()


#: The protocols of a ``--scheduler`` address netdp connects with (``ucx://`` needs ucx-py,
#: ``tls://`` a security context: each raised a traceback from inside dask).
SCHEMES = ("tcp", "inproc")
#: The ports a ``tcp://HOST:PORT`` address may name.
PORTS = (1, 65535)
#: How long a connection to ``--scheduler`` may take (dask retries a refused one until
#: then).
CONNECT_TIMEOUT = "10s"


def check_scheduler(address: str) -> None:
    """Refuse (:class:`InputError` on ``scheduler``), before any connection is tried, an
    address netdp cannot connect with: another protocol than :data:`SCHEMES`, a control
    character, a ``tcp`` address without a host or with a port outside :data:`PORTS`
    (dask waited its whole connect timeout on ``tcp://host:99999``), or an ``inproc``
    address not of the form ``inproc://HOST/PID/N``.

    Examples
    --------
    >>> try:
    ...     check_scheduler("tcp://localhost:99999")
    ... except InputError as err:
    ...     print(err.message)
    the port must be an integer in [1, 65535] (got '99999'); give tcp://HOST:PORT
    """
    scheme, sep, rest = address.partition("://")
    if not sep:  # dask's default protocol
        scheme, rest = "tcp", address
    if scheme not in SCHEMES:  # ucx://, tls:// need their own set-up
        raise InputError("scheduler", f"the address's protocol is not one of "
                         f"{', '.join(SCHEMES)}; give tcp://HOST:PORT")
    if not address.isprintable():
        raise InputError("scheduler", "the address holds a control character; give "
                         "tcp://HOST:PORT")
    if scheme == "inproc":  # a scheduler in this process: inproc://HOST/PID/N
        if len(rest.split("/")) != 3 or not all(rest.split("/")):
            raise InputError("scheduler", f"{shorten(repr(address), 80)} is not an "
                             "in-process address (inproc://HOST/PID/N, a scheduler started "
                             "in this Python process); give tcp://HOST:PORT")
        return
    host, colon, port = rest.rpartition(":")
    if not colon or not host or host == "[]" or ("[" in host and not (
            host.startswith("[") and host.endswith("]"))):
        raise InputError("scheduler", f"{shorten(repr(address), 80)} is not HOST:PORT; "
                         "give tcp://HOST:PORT (an IPv6 host in brackets: tcp://[::1]:8786)")
    if not (port.isascii() and port.isdigit() and len(port) <= 5
            and PORTS[0] <= int(port) <= PORTS[1]):
        raise InputError("scheduler", f"the port must be an integer in [{PORTS[0]}, "
                         f"{PORTS[1]}] (got {shorten(repr(port), 40)}); give tcp://HOST:PORT")


#: What a client whose event loop did not start says (distributed's ``LoopRunner`` asserts
#: when its thread has not started the loop within 10 s: a busy machine, seen in the
#: readers' long run of session 20 under a load of 5 on 2 cores).
LOOP_NOT_STARTED = ("dask's client for {} could not start its event loop within 10 s (the "
                    "machine is busy?); run the command again")


class DaskClient:
    """Context manager: the given client, one connected to ``scheduler``, or a local
    cluster with ``workers`` single-threaded worker processes (default one per core),
    each of ``memory_limit`` bytes (default dask's: the machine's memory shared out)."""

    def __init__(self, scheduler: str | None, workers: int | None, client: Any,
                 numba_threads: int | None = 1, memory_limit: int | None = None) -> None:
        self.scheduler, self.workers, self.client = scheduler, workers, client
        self.env = {} if numba_threads is None else {"NUMBA_NUM_THREADS": str(numba_threads)}
        self.memory_limit = memory_limit
        self.cluster: Any = None  # a distributed.LocalCluster once started
        self.own = client is None

    def __enter__(self) -> Any:
        if self.client is not None:
            return self.client
        from distributed import Client, LocalCluster

        if self.scheduler is not None:
            check_scheduler(self.scheduler)
            shown = shorten(repr(self.scheduler), 200)
            try:
                self.client = Client(self.scheduler, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError, ValueError) as exc:
                raise InputError("scheduler", f"cannot reach a dask scheduler at {shown} "
                                 f"({type(exc).__name__}: "
                                 f"{one_line(exc, 200)})") from None
            except MemoryError:  # a reply read as a frame of exabytes: not dask's protocol
                raise InputError("scheduler", f"what answers at {shown} is not a dask "
                                 "scheduler (its reply is not dask's protocol)") from None
            except AssertionError:  # distributed's event loop not started within 10 s
                raise InputError("scheduler", LOOP_NOT_STARTED.format(shown)) from None
            return self.client
        import dask

        environ = {k: v for k, v in dask.config.get("distributed.nanny.pre-spawn-environ",
                                                    {}).items() if k not in BLAS_THREADS}
        memory: dict[str, Any] = ({} if self.memory_limit is None
                                  else {"memory_limit": self.memory_limit})
        with warnings.catch_warnings(), \
                dask.config.set({"distributed.nanny.pre-spawn-environ": environ}):
            # the scheduler's health endpoint moves off a busy port: not worth a warning
            warnings.filterwarnings("ignore", "Port .* is already in use")
            self.cluster = LocalCluster(n_workers=self.workers or default_workers(),
                                        threads_per_worker=1, processes=True,
                                        dashboard_address=None, silence_logs=logging.ERROR,
                                        env=self.env, **memory)
        self.client = Client(self.cluster)
        return self.client

    def __exit__(self, *exc: Any) -> None:
        if not self.own:
            return
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
