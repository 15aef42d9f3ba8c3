"""Runs too large for the machine are refused before anything is built, naming the
parameter that drives the size."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from netdp import simulate
from netdp.core.errors import InputError
from netdp.run import resources
from netdp.run.resources import human, memory_limit, memory_limits, planned_size, time_limit
from netdp.tasks import get_task, make_config, task_of
from netdp.tasks.base import RDP_FEATURES, footprint
from netdp.tracking.loss_table import RDP_ORDERS

REPO = Path(__file__).resolve().parents[1]


def test_memory_limit_from_the_environment(monkeypatch):
    monkeypatch.setenv("NETDP_MEMORY_LIMIT", "16G")
    assert memory_limits()["NETDP_MEMORY_LIMIT"] == 16 * 2**30
    monkeypatch.setenv("NETDP_MEMORY_LIMIT", "1.5e9")
    assert memory_limits()["NETDP_MEMORY_LIMIT"] == 1_500_000_000
    monkeypatch.setenv("NETDP_MEMORY_LIMIT", "lots")
    with pytest.raises(InputError, match="NETDP_MEMORY_LIMIT"):
        memory_limit()
    monkeypatch.delenv("NETDP_MEMORY_LIMIT")
    assert memory_limit() > 2**28  # 80 % of this machine's memory


def test_planned_size_follows_the_config():
    sum_task, sgd = get_task("sum"), get_task("sgd")
    assert planned_size(sum_task, make_config()) == (100, 10_000)
    assert planned_size(sum_task, make_config(topology="ring", rounds=3)) == (100, 300)
    assert planned_size(sgd, make_config(task="sgd", nodes=50)) == (50, 500)
    assert planned_size(sum_task, make_config(topology="hypercube"))[0] == 2048


@pytest.mark.parametrize(("params", "param"), [
    ({"steps": 10**9}, "steps"),
    ({"topology": "ring", "rounds": 10**8}, "rounds"),
    ({"tokens": 10**6, "nodes": 10}, "tokens"),
    ({"task": "histogram", "topology": "ring", "dummies": 10**11}, "dummies"),
    ({"task": "sgd", "nodes": 50_000, "dataset": "synthetic"}, "nodes"),
])
def test_a_run_over_the_limit_is_refused_up_front(params, param, monkeypatch):
    monkeypatch.setenv("NETDP_MEMORY_LIMIT", "2G")
    monkeypatch.setenv("NETDP_TIME_LIMIT", "inf")  # the memory's refusal, not the time's
    with pytest.raises(InputError) as err:
        simulate({**params, "seed": 1})
    assert err.value.param == param and "2 GiB" in err.value.message


def test_the_same_run_fits_under_a_larger_limit(monkeypatch):
    monkeypatch.setenv("NETDP_MEMORY_LIMIT", "2G")
    simulate({"nodes": 20, "steps": 200, "seed": 1})  # small: runs
    assert human(3 * 2**30) == "3 GiB" and human(512) == "512 B"


def test_memory_limit_follows_the_cgroup_and_ulimit(monkeypatch, tmp_path):
    """The smallest of the limits applies, and the message names it."""
    monkeypatch.setenv("NETDP_MEMORY_LIMIT", "16G")
    cgroup = tmp_path / "memory.max"
    cgroup.write_text(f"{3 * 2**30}\n")
    monkeypatch.setattr(resources, "CGROUP_FILES", (str(cgroup),))
    monkeypatch.setattr(resources.resource, "getrlimit",
                        lambda which: (resources.resource.RLIM_INFINITY,) * 2)
    assert memory_limit() == 3 * 2**30
    cgroup.write_text("max\n")  # no cgroup limit
    assert memory_limit() == 16 * 2**30
    monkeypatch.setattr(resources.resource, "getrlimit", lambda which: (2**30, 2**30))
    assert memory_limits()["ulimit -v"] == 2**30 == memory_limit()
    monkeypatch.setenv("NETDP_TIME_LIMIT", "inf")
    with pytest.raises(InputError, match=r"\(ulimit -v\)") as err:
        simulate({"tokens": 10**5, "nodes": 10, "seed": 1})
    assert err.value.param == "tokens"


def test_time_limit_from_the_environment(monkeypatch):
    monkeypatch.delenv("NETDP_TIME_LIMIT", raising=False)
    assert time_limit() == 3600
    for text, seconds in (("600", 600), ("10m", 600), ("2h", 7200), ("90s", 90),
                          ("inf", float("inf"))):
        monkeypatch.setenv("NETDP_TIME_LIMIT", text)
        assert time_limit() == seconds
    for bad in ("soon", "0", "-5", "nan"):
        monkeypatch.setenv("NETDP_TIME_LIMIT", bad)
        with pytest.raises(InputError, match="NETDP_TIME_LIMIT"):
            time_limit()


@pytest.mark.parametrize(("params", "param"), [
    ({"runs": 100_000}, "runs"),
    ({"nodes": 10**9}, "nodes"),
    ({"task": "histogram", "mechanism": "olh", "domain": 10**8, "nodes": 20}, "domain"),
    ({"engine": "event", "loss": "0.5", "timeout": 1e-300, "retries": 10**6}, "retries"),
    ({"accountants": ("pld",), "nodes": 10_000}, "accountant"),
    ({"accountants": ("exact",), "nodes": 200}, "accountant"),
    ({"accountants": ("exact",), "topology": "hypercube", "nodes": 64, "steps": 640},
     "accountant"),
    ({"accountants": ("pld",), "epsilon": 700.0, "nodes": 20}, "epsilon"),
    ({"protocol": "gossip", "steps": 10**9}, "steps"),
    ({"self_moves": False, "accountants": ("rdp",), "nodes": 1000}, "nodes"),
])
def test_a_run_over_the_time_limit_is_refused_up_front(params, param, monkeypatch):
    """Under a limit of 60 s (the fuzzer's idea of a run without end), each is refused
    before anything is built, naming its parameter, the estimate and the limit."""
    monkeypatch.setenv("NETDP_TIME_LIMIT", "60")
    with pytest.raises(InputError, match=r"would take about .* more than the 1 min") as err:
        simulate({**params, "seed": 1})
    assert err.value.param == param


def test_the_time_estimate_lets_the_defaults_run(monkeypatch):
    """Every task at its defaults fits the default hour, many times over."""
    from netdp.tasks import names, task_of
    from netdp.tasks.base import work

    monkeypatch.delenv("NETDP_TIME_LIMIT", raising=False)
    for name in names():
        config = make_config(task=name)
        task = task_of(config)
        seconds = sum(s for s, _ in work(task, config, *planned_size(task, config)).values())
        assert seconds < time_limit() / 10, (name, seconds)


#: One run of the command in a fresh process at n = argv[1]; prints its peak in bytes.
_PEAK = ("import sys; from netdp.run.cli import main; "
         "from netdp.run.resources import peak_resident_bytes; "
         "status = main(['simulate', '--nodes', sys.argv[1], '--mechanism', 'gaussian', "
         "'--epsilon', '0.1', '--delta', '1e-7', '--seed', '1', '--quiet']); "
         "print(status, peak_resident_bytes())")


def test_a_child_s_peak_is_its_own_not_its_parent_s():
    """A process started from a large one reports its own peak: ``ru_maxrss`` would report
    the parent's (vfork, then exec, keeps it), which is how CI measured both sizes of the
    footprint test at the test worker's peak and a growth of 0."""
    import numpy as np

    ballast = np.ones(2**28 // 8)  # 256 MiB, touched
    code = ("from netdp.run.resources import peak_resident_bytes; "
            "print(peak_resident_bytes())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    child = int(done.stdout.split()[-1])
    assert 0 < child < ballast.nbytes * 3 // 4, (child, resources.peak_resident_bytes())
    assert resources.peak_resident_bytes() >= ballast.nbytes


def test_the_model_counts_rdp_s_features():
    assert RDP_ORDERS.size == RDP_FEATURES


@pytest.mark.slow  # ~30 s: n = 1e5 with the default accountant (rdp) is most of it
def test_the_modelled_bytes_a_hop_cover_the_command_s_peak():
    """What check_footprint refuses by covers what the command takes (issue 43): the
    footprint's growth a hop between n = 3e4 and 1e5 (T = 100 n, the default accountant)
    is at least the process's peak growth, and not twice it (measured: 33.8 bytes a hop
    against the model's 49.2; docs/performance.md, "Limits")."""
    peak = {}
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # a first run fills numba's cache: a process that compiles peaks at the compiler's
    # memory, not the run's (both sizes then measured 0 growth after a source change)
    for n in (10, 30_000, 100_000):
        done = subprocess.run([sys.executable, "-c", _PEAK, str(n)], capture_output=True,
                              text=True, timeout=300, check=True, env=env, cwd=REPO)
        status, size = done.stdout.strip().splitlines()[-1].split()
        assert status == "0", done.stderr
        peak[n] = int(size)
    model = {}
    for n in peak:
        config = make_config({"nodes": n, "mechanism": "gaussian", "epsilon": 0.1,
                              "delta": 1e-7, "seed": 1})
        model[n] = sum(size for size, _ in footprint(task_of(config), config,
                                                     *planned_size(task_of(config), config))
                       .values())
    hops = 100 * (100_000 - 30_000)
    measured = (peak[100_000] - peak[30_000]) / hops
    modelled = (model[100_000] - model[30_000]) / hops
    assert 0 < measured <= modelled <= 2 * measured, (measured, modelled)
