"""Every task's ``view`` is what its ``run`` did: the same draws, seen from one node."""

from __future__ import annotations

import numpy as np
import pytest

from netdp import engine
from netdp.core.setup import Streams
from netdp.engine.routing import Router
from netdp.tasks import make_config, task_of
from netdp.tasks.preparation import with_seed


def _run_and_view(observer: int, **params):
    config = with_seed(make_config(seed=5, **params))
    task = task_of(config)
    setup = task.prepare(config)
    streams = Streams(setup.seed, 0)
    tokens = config.tokens
    trace = engine.walk("vector", Router(setup.topology, config.walk), setup.steps,
                        [streams.generator("walk", k) for k in range(tokens)])
    outcome = task.run(setup, trace, streams)
    view = task.view(setup, trace, streams, observer)
    assert np.all(trace.holders[view.token, view.step] == observer)
    assert view.received.shape[0] == view.step.size
    return setup, outcome, view


@pytest.mark.parametrize("params", [
    {"topology": "complete", "nodes": 15, "steps": 400, "tokens": 2},
    {"topology": "ring", "nodes": 9, "rounds": 3},
    {"topology": "ring", "nodes": 9, "rounds": 2, "noise_every_hop": True},
    {"topology": "complete", "nodes": 15, "steps": 300, "mechanism": "laplace"},
])
def test_sum_view_ends_in_the_published_tokens(params):
    _, outcome, view = _run_and_view(3, task="sum", **params)
    np.testing.assert_allclose(view.published, outcome.token_values, rtol=1e-12)
    first = view.step[view.token == 0][0]  # the partial sum on the first arrival
    assert np.isfinite(view.received[0]) and first >= 0


def test_sum_view_of_a_replacing_randomizer():
    setup, outcome, view = _run_and_view(2, task="sum", nodes=10, steps=500,
                                         mechanism="duchi", low=-1.0, high=3.0)
    np.testing.assert_allclose(view.published / setup.steps, outcome.token_values, rtol=1e-12)


@pytest.mark.parametrize("params", [
    {"topology": "complete", "nodes": 20, "steps": 300, "mechanism": "grr", "tokens": 2},
    {"topology": "ring", "nodes": 8, "rounds": 2, "mechanism": "grr"},
    {"topology": "complete", "nodes": 20, "steps": 300, "mechanism": "oue"},
    {"topology": "complete", "nodes": 20, "steps": 200, "mechanism": "cms"},
])
def test_histogram_view_ends_in_the_published_aggregate(params):
    setup, outcome, view = _run_and_view(4, task="histogram", domain=5, **params)
    oracle = setup.mechanism
    total = view.published.sum(axis=0)
    if setup.topology.kind == "ring":  # grr counts: dummies at both ends, then the reports
        assert total.sum() == 2 * outcome.dummies + outcome.reports
        assert view.received[0].sum() == outcome.dummies + view.step[0]
        return
    counts = oracle.estimate_counts(total, outcome.reports)
    np.testing.assert_allclose(counts / outcome.reports, outcome.estimate, rtol=1e-9)


def test_sgd_view_ends_in_the_final_model():
    _, outcome, view = _run_and_view(1, task="sgd", dataset="synthetic", nodes=30, steps=300,
                                     evals=3)
    np.testing.assert_allclose(view.published[0], outcome.curves["network"].weights,
                               rtol=1e-12)
    assert view.received.shape == (view.step.size, view.published.shape[1])
