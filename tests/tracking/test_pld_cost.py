"""The estimate of ``pld``'s seconds on a graph whose nodes share count laws
(:func:`netdp.tracking.pld_cost.shares_laws`, :attr:`GridCost.shared
<netdp.accounting.registry.GridCost>`): the named hypercube, unweighted, without faults or a
coalition, from 512 nodes; every other graph keeps the whole rows model."""

from __future__ import annotations

import pytest

from netdp.accounting import registry
from netdp.tasks import make_config
from netdp.tasks.base import accountant_seconds
from netdp.tracking.pld_cost import pld_seconds, shares_laws

HYPERCUBE = {"topology": "hypercube", "nodes": 1024, "steps": 102400, "sources": 4,
             "accountants": ["pld"]}


@pytest.mark.parametrize(("change", "shares"), [
    ({}, True),
    ({"topology": "torus"}, False),  # vertex-transitive, but few laws shared (measured)
    ({"topology": "grid"}, False),
    ({"weight": "weight"}, False),
    ({"loss": "0.1"}, False),
    ({"coalition": "1,2"}, False),
], ids=["hypercube", "torus", "grid", "weighted", "faults", "coalition"])
def test_only_a_plain_hypercube_shares_laws(change, shares):
    assert shares_laws(make_config({**HYPERCUBE, **change})) is shares


def test_the_share_applies_from_its_size_on():
    share, nodes = registry.entry("pld").cost.shared
    assert 0 < share < 1
    for n, factor in ((nodes, share), (nodes // 2, 1.0)):
        whole = pld_seconds("pld", False, n, 4, 100, 4.22)
        assert pld_seconds("pld", False, n, 4, 100, 4.22, shared=True) == \
            pytest.approx(factor * whole, rel=1e-12)


def test_the_run_estimate_takes_the_share_on_the_hypercube():
    """`netdp simulate --topology hypercube --nodes 1024` (32 observers sampled): about 13 s
    of pld on the idle reference machine, estimated within registry.DEFAULT_SECONDS, so
    pld is its default; the same run on a torus of 1,024 nodes is estimated at the whole
    model, beyond it."""
    default = {k: v for k, v in HYPERCUBE.items() if k != "sources"}
    cube = make_config(default)
    torus = make_config({**default, "topology": "torus"})
    got = accountant_seconds(cube, 1024, 102400.0, "pld")
    whole = accountant_seconds(torus, 1024, 102400.0, "pld")
    assert got == pytest.approx(registry.entry("pld").cost.shared[0] * whole)
    assert 5 < got < registry.DEFAULT_SECONDS < whole
