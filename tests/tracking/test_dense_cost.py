"""The law bound's dense inverse (:mod:`netdp.tracking.dense_cost`): where a run makes it,
its bytes and seconds in the run's estimates, and, on a graph above the old 4,096-node
limit, figures amplified instead of the LDP loss at the largest count (slow)."""

from __future__ import annotations

import json

import pytest

from netdp.run.cli import main
from netdp.tasks import get_task, make_config
from netdp.tasks.base import footprint, work
from netdp.tracking.dense_cost import DENSE_LIMIT, PART, dense_footprint, dense_work


@pytest.mark.parametrize("params, made", [
    ({"topology": "hypercube"}, True),
    ({"topology": "karate"}, True),
    ({"topology": "hypercube", "convention": "reference"}, False),
    ({"topology": "hypercube", "protocol": "gossip"}, False),
    ({"topology": "complete"}, False),
    ({"topology": "ring"}, False),
])
def test_where_the_inverse_is_made(params, made):
    config = make_config(**params)
    assert bool(dense_footprint(config, 8192)) is made
    assert bool(dense_work(config, 8192)) is made
    assert dense_footprint(config, DENSE_LIMIT + 1) == {}


def test_the_inverse_is_in_the_runs_estimates():
    """8 n² bytes and 2 n³ flops at n = 8192, in the task's footprint and work (what the
    memory and time checks read before anything is built)."""
    config = make_config(topology="hypercube", nodes=8192, steps=819_200)
    task = get_task(config.task)
    assert footprint(task, config, 8192, 819_200)[PART][0] == 8.0 * 8192**2
    seconds = work(task, config, 8192, 819_200)[PART][0]
    assert 2.0 < seconds < 10.0  # 2 n³ flops at 4e-12 s: 4.4 s
    assert PART not in footprint(task, make_config(topology="hypercube", accountants=()),
                                 8192, 819_200)


@pytest.mark.slow
def test_a_hypercube_above_4096_nodes_is_amplified(tmp_path):
    """The 8,192-node hypercube at T = 100 n, one observer: the mean below a quarter of
    the LDP baseline's, every pair below half the least node's LDP loss (2.90 and 3.71
    against 13.5 and 10.0; the pairs were at the LDP loss at the largest count a view
    allows, 12,194)."""
    out = tmp_path / "run.json"
    assert main(["simulate", "--topology", "hypercube", "--nodes", "8192", "--steps",
                 "819200", "--sources", "1", "--seed", "2", "--accountant", "rdp",
                 "--out", str(out)]) == 0
    priv = json.loads(out.read_text())["privacy"]
    emp = priv["empirical"][0]
    ldp = priv.get("ldp") or emp["ldp"]
    assert emp["accountant"] == "rdp" and emp["mean"] < 0.25 * ldp["mean"]
    assert emp["max"] < 0.5 * ldp["min"]
    assert "neither affordable" not in json.dumps(priv)
