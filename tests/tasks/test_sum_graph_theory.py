"""The walk sum on any other graph: the ICML 2024 closed form as theory (spec §3.2)."""

from __future__ import annotations

import numpy as np
import pytest

from netdp import simulate
from netdp.engine.routing import resolve_walk
from netdp.graphs import walk_kind
from netdp.tasks import make_config, task_of
from netdp.tracking import graph_walk
from netdp.tracking.sgd import epsilon_upper


def run(**params):
    params.setdefault("convention", "reference")  # the theory is what these tests check
    return simulate(make_config(task="sum", seed=3, **params))


@pytest.mark.parametrize(("topology", "nodes"), [("hypercube", 64), ("grid", 49),
                                                 ("karate", None)])
def test_icml_theory_is_the_mean_closed_form_below_the_ldp_level(topology, nodes):
    """The figure is the mean over ordered pairs of ``epsilon(α c_uv / (2σ²))`` with σ in
    units of the range, from the walk's own transition matrix; it stays below the RDP
    level of a node's expected T/n contributions."""
    report = run(topology=topology, nodes=nodes, steps=3000)
    topo = report.topology
    n = topo.n
    setup = task_of(report.config).prepare(report.config)
    P = walk_kind.transition_matrix(topo, resolve_walk(topo, report.config.walk))
    coef = graph_walk.icml_coefficients(P, 3000)
    s = setup.mechanism.sigma / setup.mechanism.sensitivity
    off = ~np.eye(n, dtype=bool)
    expected = float(epsilon_upper(np.maximum(coef[off], 0) / (2 * s**2), 1e-6).mean())
    got = report.privacy.theory["graph-walk-icml2024"]
    assert got == pytest.approx(expected, rel=1e-12)
    ldp = float(epsilon_upper(np.array([3000 / n / (2 * s**2)]), 1e-6)[0])
    assert 0 < got < ldp


def test_tokens_compose_and_other_mechanisms_get_no_closed_form():
    one = run(topology="hypercube", nodes=64, steps=2000).privacy.theory["graph-walk-icml2024"]
    two = run(topology="hypercube", nodes=64, steps=2000,
              tokens=2).privacy.theory["graph-walk-icml2024"]
    assert two > one
    assert "graph-walk-icml2024" not in run(topology="hypercube", nodes=64, steps=2000,
                                            mechanism="laplace").privacy.theory
    assert "graph-walk-icml2024" not in run(topology="complete", nodes=64,
                                            steps=2000).privacy.theory
    assert run(topology="hypercube", nodes=64, steps=2000,
               accountants=()).privacy.theory == {}
