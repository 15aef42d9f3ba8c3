"""One simulation's observers on dask workers: the numbers of the run in one process with
every observer (``--sources n``), bit for bit, on a local cluster, through a real
``dask scheduler`` and after a worker's SIGKILL; a run a worker cannot hold is refused.

Every test that starts a cluster is in the slow tier (workers take 15-20 s to warm up on
this machine): ``pytest -m slow tests/test_observer_cluster.py``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import cloudpickle
import numpy as np
import pytest
from distributed.diagnostics.plugin import WorkerPlugin

from netdp.run import observer_cluster
from netdp.run.api import simulate
from netdp.run.cli import main
from netdp.run.dask_client import DaskClient

REPO = Path(__file__).resolve().parents[1]
# small runs whose tracker does real work per observer (no view cut as too costly)
WALK = {"topology": "hypercube", "nodes": 64, "steps": 192, "seed": 3}
GOSSIP = {"topology": "erdos-renyi", "nodes": 48, "protocol": "gossip", "seed": 5}


@pytest.fixture(scope="module")
def client():
    with DaskClient(None, 2, None) as c:
        yield c


def _serial(params: dict):
    """The run in this process with every observer."""
    return simulate({**params, "sources": params["nodes"]}, progress=False, keep_pairs=True)


def _same(serial, cluster) -> None:
    """Every pair's loss, the privacy report and the config: equal, not close."""
    assert serial.pairs is not None and cluster.pairs is not None
    assert np.array_equal(serial.pairs, cluster.pairs, equal_nan=True)
    assert serial.privacy.to_dict() == cluster.privacy.to_dict()
    assert serial.config.to_dict() == cluster.config.to_dict()


@pytest.mark.slow  # the first test on the cluster: ~18 s (the workers warm up)
@pytest.mark.parametrize("convention", ["sound", "reference"])
def test_every_observer_of_a_walk_on_two_workers_is_the_serial_run(client, convention):
    params = {**WALK, "convention": convention}
    serial = _serial(params)
    cluster = simulate(params, progress=False, keep_pairs=True, client=client)
    _same(serial, cluster)
    assert serial.observers is not None and cluster.observers is not None
    assert serial.observers.to_dict() == {"mode": "all", "accounted": 64, "of": 64,
                                          "workers": 0}
    assert cluster.observers.to_dict() == {"mode": "all", "accounted": 64, "of": 64,
                                           "workers": 2, "batches": 16, "shared": "scatter"}
    assert "observers: all (64) on 2 workers" in cluster.text()


def test_one_process_samples_beyond_200_nodes_and_says_so():
    sampled = simulate({**WALK, "nodes": 256, "steps": 256, "convention": "reference"},
                       progress=False)
    assert sampled.observers is not None
    assert sampled.observers.line() == "  observers: sampled 32 of 256 in this process"
    assert sampled.to_dict()["observers"] == {"mode": "sampled", "accounted": 32, "of": 256,
                                              "workers": 0}


@pytest.mark.slow  # ~5 s
def test_a_memory_mapped_trace_gives_the_same_numbers(client, monkeypatch, tmp_path):
    monkeypatch.setattr(observer_cluster, "MMAP_BYTES", 0)  # every array by file
    monkeypatch.setenv("NETDP_SHARED_DIR", str(tmp_path))
    cluster = simulate(WALK, progress=False, keep_pairs=True, client=client)
    assert cluster.observers is not None and cluster.observers.shared == "memmap"
    _same(_serial(WALK), cluster)
    assert list(tmp_path.iterdir()) == []  # the mapped files are gone


@pytest.mark.slow  # ~7 s
def test_every_observer_of_gossip_on_two_workers_is_the_serial_run(client):
    serial = _serial(GOSSIP)
    cluster = simulate(GOSSIP, progress=False, keep_pairs=True, client=client)
    _same(serial, cluster)
    assert cluster.observers is not None
    assert (cluster.observers.mode, cluster.observers.workers) == ("all", 2)


@pytest.mark.slow  # a cluster
def test_sources_still_samples_on_a_cluster(client):
    params = {**WALK, "sources": 8}
    serial = simulate(params, progress=False)
    cluster = simulate(params, progress=False, client=client)
    assert serial.privacy.to_dict() == cluster.privacy.to_dict()
    assert cluster.observers is not None and cluster.observers.line().startswith(
        "  observers: sampled 8 of 64 on 2 workers")


class _KillSecondBatch(WorkerPlugin):
    """Worker plugin: the first worker to start its second batch of observers SIGKILLs
    its own process (once on the cluster: a marker file), as the OOM killer would."""

    name = "netdp-test-kill-second-batch"

    def __init__(self, marker: str) -> None:
        self.marker, self.started = marker, 0

    def transition(self, key, start, finish, **kwargs) -> None:
        if finish != "executing" or not str(key).startswith("netdp-observers-"):
            return
        self.started += 1
        if self.started == 2:
            try:
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return
            os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.slow  # ~25 s: a cluster of its own, a worker restarted
def test_a_worker_killed_mid_run_loses_only_its_batch(tmp_path):
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    marker = tmp_path / "killed"
    with DaskClient(None, 2, None) as client:
        client.register_plugin(_KillSecondBatch(str(marker)))
        cluster = simulate(WALK, progress=False, keep_pairs=True, client=client)
    assert marker.exists()  # a worker did die mid-run
    _same(_serial(WALK), cluster)


def _cli(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_run_a_worker_cannot_hold_is_refused_up_front(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("NETDP_MEMORY_LIMIT", "1G")
    out = tmp_path / "r.json"
    argv = ["simulate", "--topology", "hypercube", "--nodes", "1024", "--steps", "1e6",
            "--workers", "2", "--out", str(out)]
    start = time.process_time()
    code, stdout, err = _cli(argv, capsys)
    assert code == 2 and stdout == ""
    assert len(err.strip().splitlines()) == 1, err
    assert "--workers: each worker would hold about" in err
    assert "n = 1,024, 1,000,000 steps" in err
    assert "at most 1 local worker of this machine's" in err and "(--workers 1)" in err
    assert time.process_time() - start < 5  # before any cluster or walk
    assert not out.exists()


def test_pairs_this_process_cannot_assemble_are_refused_with_the_sources_that_fit(
        capsys, monkeypatch):
    monkeypatch.setenv("NETDP_MEMORY_LIMIT", "2G")
    monkeypatch.setenv("NUMBA_NUM_THREADS", "2")  # the run's footprint counts its threads
    code, stdout, err = _cli(["simulate", "--topology", "hypercube", "--nodes", "8192",
                              "--steps", "819200", "--workers", "2"], capsys)
    assert code == 2 and stdout == "" and len(err.strip().splitlines()) == 1, err
    assert ("--workers: the pairs of 8,192 observers x 8,192 nodes would hold about 7 GiB "
            "here once assembled") in err
    assert "--sources 2,278 would fit" in err  # (2 GiB - the run's 54 MiB) / (112 B x 8192)


_PEAK = ("import sys, tempfile; from netdp.run.cli import main; n = sys.argv[1]; "
         "from netdp.run.resources import peak_resident_bytes; "
         "out = tempfile.mkdtemp() + '/run.json'; "
         "main(['simulate', '--topology', 'hypercube', '--nodes', n, '--steps', "
         "'256', '--seed', '1', '--workers', '2', '--quiet', '--json', '--out', "
         "out]); print(peak_resident_bytes())")


@pytest.mark.slow
def test_the_bytes_a_pair_cover_this_process_s_peak():
    """PAIR_BYTES is what the check refuses by: this process's peak grows by at most that
    much a pair, every observer of n = 1024 against n = 2048 (measured: 107 bytes at 2048
    against 4096). A walk of 256 steps leaves most observers without a view, so the
    accounting is short and the pairs are the run's largest part."""
    from netdp.run.observer_cluster import PAIR_BYTES

    peak = {}
    for n in (1024, 2048):
        done = subprocess.run([sys.executable, "-c", _PEAK, str(n)], capture_output=True,
                              text=True, timeout=600, check=True)
        peak[n] = int(done.stdout.strip().splitlines()[-1])
    slope = (peak[2048] - peak[1024]) / (2048**2 - 1024**2)
    assert 0 < slope <= PAIR_BYTES, slope


@pytest.mark.parametrize("argv, words", [
    (["--topology", "ring", "--workers", "2"], "--workers: on the ring and the complete"),
    (["--topology", "hypercube", "--nodes", "16", "--no-tracking", "--workers", "2"],
     "--workers: --no-tracking leaves no observer"),
    (["--topology", "hypercube", "--nodes", "16", "--workers", "0"],
     "--workers: must be an integer in 1.."),
    (["--task", "histogram", "--topology", "hypercube", "--nodes", "16", "--workers", "2"],
     "--workers: the observers are accounted on a cluster for --task sum"),
])
def test_cluster_flags_are_refused_where_nothing_is_shared_out(capsys, argv, words):
    code, _, err = _cli(["simulate", *argv], capsys)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err


def _start(args: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_" + args[0],
                             *args[1:]], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=REPO)


@pytest.mark.slow  # ~30 s: a scheduler and two worker processes start
def test_a_real_dask_scheduler_with_two_workers_gives_the_serial_numbers(tmp_path, capsys):
    env = {**os.environ, "PYTHONPATH": str(REPO), "NUMBA_NUM_THREADS": "1"}
    scheduler_file = tmp_path / "scheduler.json"
    procs = [_start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(scheduler_file)], env)]
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(scheduler_file.read_text())["address"]
        procs += [_start(["worker", address, "--nthreads", "1", "--memory-limit", "1GB",
                          "--no-dashboard", "--host", "127.0.0.1"], env) for _ in range(2)]
        from distributed import Client

        with Client(address, timeout="30s") as c:
            c.wait_for_workers(2, timeout=60)
        flags = ["simulate", "--topology", "hypercube", "--nodes", "64", "--steps", "192",
                 "--seed", "3", "--json"]
        runs = {}
        # up to 200 nodes the serial run accounts every observer (--sources would do
        # nothing there, and is refused)
        for name, extra in (("serial", []), ("cluster", ["--scheduler", address])):
            pairs = tmp_path / f"{name}.npy"
            code, out, err = _cli([*flags, *extra, "--pairs-out", str(pairs)], capsys)
            assert code == 0, err
            runs[name] = (json.loads(out), np.load(pairs))
        (serial, serial_pairs), (cluster, cluster_pairs) = runs["serial"], runs["cluster"]
        assert np.array_equal(serial_pairs, cluster_pairs, equal_nan=True)
        assert serial["privacy"] == cluster["privacy"]
        assert cluster["observers"] == {"mode": "all", "accounted": 64, "of": 64,
                                        "workers": 2, "batches": 16, "shared": "scatter"}
        code, _, err = _cli(["simulate", "--topology", "hypercube", "--nodes", "1024",
                             "--steps", "5e6", "--scheduler", address], capsys)
        assert code == 2 and "--scheduler: each worker would hold about" in err
        assert "start workers with --memory-limit" in err
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
