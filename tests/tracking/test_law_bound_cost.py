"""What the law bound costs (:mod:`netdp.tracking.law_bound_cost`): where a run takes it,
the dense inverse's bytes and seconds and the observers' seconds in the run's estimates,
and, on a graph above the old 4,096-node limit, figures amplified instead of the LDP loss
at the largest count (slow)."""

from __future__ import annotations

import json

import pytest

from netdp.run.cli import main
from netdp.tasks import get_task, make_config
from netdp.tasks.base import footprint, work
from netdp.tracking.law_bound_cost import (
    DENSE_LIMIT,
    INVERSE,
    INVERSE_FLOP_SECONDS,
    OBSERVER_HOP_SECONDS,
    OBSERVERS,
    SPECTRUM,
    SPECTRUM_CUBE_SECONDS,
    law_bound_footprint,
    law_bound_work,
)


@pytest.mark.parametrize("params, made", [
    ({"topology": "hypercube"}, True),
    ({"topology": "karate"}, True),
    ({"topology": "hypercube", "convention": "reference"}, False),
    ({"topology": "hypercube", "protocol": "gossip"}, False),
    ({"topology": "complete"}, False),
    ({"topology": "ring"}, False),
])
def test_where_the_bound_is_taken(params, made):
    config = make_config(**params)
    assert bool(law_bound_footprint(config, 8192)) is made
    assert bool(law_bound_work(config, 8192, 819_200.0)) is made
    assert law_bound_footprint(config, DENSE_LIMIT + 1) == {}


@pytest.mark.parametrize("accountants, spectral", [
    (None, True), (("pld",), True), (("pld", "rdp"), True), (("rdp",), False),
    (("kov",), False)])
def test_the_spectrum_is_counted_where_pld_may_take_it(accountants, spectral):
    """pld's dominating laws take the walk's spectrum (netdp.tracking.law_chernoff) up to
    its limit: its bytes and seconds in the estimates there, and only there."""
    from netdp.tracking.law_chernoff import SPECTRAL_LIMIT

    config = make_config(topology="hypercube", accountants=accountants)
    n = SPECTRAL_LIMIT
    assert (SPECTRUM in law_bound_footprint(config, n)) is spectral
    assert (SPECTRUM in law_bound_work(config, n, 100.0 * n)) is spectral
    if spectral:
        assert law_bound_footprint(config, n)[SPECTRUM][0] == 16.0 * n**2
        assert law_bound_work(config, n, 100.0 * n)[SPECTRUM][0] == n**3 * SPECTRUM_CUBE_SECONDS
    assert SPECTRUM not in law_bound_footprint(config, n + 1)


def test_the_bound_is_in_the_runs_estimates():
    """8 n² bytes and 2 n³ flops at n = 8192, and 32 sampled observers' bounds, in the
    task's footprint and work (what the memory and time checks read before anything is
    built); none without tracking, and no observers' part for pld (its own model)."""
    config = make_config(topology="hypercube", nodes=8192, steps=819_200)
    task = get_task(config.task)
    assert footprint(task, config, 8192, 819_200)[INVERSE][0] == 8.0 * 8192**2
    parts = work(task, config, 8192, 819_200)
    assert parts[INVERSE][0] == 2.0 * 8192.0**3 * INVERSE_FLOP_SECONDS
    assert parts[OBSERVERS][0] == 32 * 819_200 * OBSERVER_HOP_SECONDS  # 32 sampled
    two = make_config(topology="hypercube", nodes=8192, steps=819_200,
                      accountants=("kov", "rdp"), sources=4)
    assert work(task, two, 8192, 819_200)[OBSERVERS][0] == \
        2 * 4 * 819_200 * OBSERVER_HOP_SECONDS  # two accountants, four sources
    pld = make_config(topology="hypercube", nodes=8192, accountants=("pld",))
    assert OBSERVERS not in work(task, pld, 8192, 819_200)
    assert INVERSE not in footprint(task, make_config(topology="hypercube", accountants=()),
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
