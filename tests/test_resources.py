"""Runs too large for the machine are refused before anything is built, naming the
parameter that drives the size."""

from __future__ import annotations

import pytest

from netdp import simulate
from netdp.core.errors import InputError
from netdp.run.resources import human, memory_limit, planned_size
from netdp.tasks import get_task, make_config


def test_memory_limit_from_the_environment(monkeypatch):
    monkeypatch.setenv("NETDP_MEMORY_LIMIT", "16G")
    assert memory_limit() == 16 * 2**30
    monkeypatch.setenv("NETDP_MEMORY_LIMIT", "1.5e9")
    assert memory_limit() == 1_500_000_000
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
    with pytest.raises(InputError) as err:
        simulate({**params, "seed": 1})
    assert err.value.param == param and "2 GiB" in err.value.message


def test_the_same_run_fits_under_a_larger_limit(monkeypatch):
    monkeypatch.setenv("NETDP_MEMORY_LIMIT", "2G")
    simulate({"nodes": 20, "steps": 200, "seed": 1})  # small: runs
    assert human(3 * 2**30) == "3 GiB" and human(512) == "512 B"
