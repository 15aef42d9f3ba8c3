"""The toy task added by following docs/extending.md: one module, one registry line, and
these tests."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import assert_unbiased_with_std, view_cap_max, walk_and_view

from netdp import simulate
from netdp.run.cli import main
from netdp.tasks import TASKS, get_task, make_config

RUNS = 400


@pytest.fixture(scope="module")
def many_runs():
    config = make_config(task="one-bit", nodes=50, steps=200, epsilon=1.0, runs=RUNS,
                         accountants=(), seed=20261127)
    return simulate(config)


def _closed_form_std(report) -> float:
    c = 1.0 / math.tanh(report.config.epsilon / 2)  # (e^ε + 1) / (e^ε - 1)
    return math.sqrt((c**2 - report.utility.truth**2) / report.config.steps)


def test_registered_once_and_listed():
    assert "one-bit" in TASKS and get_task("one-bit").section.task == "one-bit"


def test_unbiased_with_the_closed_form_std(many_runs):
    """Mean and std of the estimates over the runs; a std 1.5 times off is rejected."""
    estimates = np.array([o.estimate for o in many_runs.outcomes])
    std = _closed_form_std(many_runs)
    assert many_runs.utility.theoretical_std == pytest.approx(std, rel=1e-12)
    assert_unbiased_with_std(estimates, many_runs.utility.truth, std)


def test_pairwise_losses_never_exceed_ldp_and_the_ring_says_why_not():
    report = simulate(make_config(task="one-bit", nodes=40, steps=2000, seed=3))
    (kov,) = report.privacy.empirical
    assert 0 < kov.mean <= kov.max <= view_cap_max(report.config)
    ring = simulate(make_config(task="one-bit", topology="ring", nodes=20, seed=3))
    assert ring.privacy.empirical == () and ring.privacy.note


def test_the_view_is_the_run_itself():
    config = make_config(task="one-bit", nodes=12, steps=300, tokens=2, seed=9)
    report_estimate = simulate(config).utility.estimate
    _, setup, trace, _, view = walk_and_view(config, 4)
    assert np.all(trace.holders[view.token, view.step] == 4)
    assert view.published.sum() / (2 * setup.steps) == pytest.approx(report_estimate,
                                                                     rel=1e-12)
    c = setup.mechanism.C
    steps = view.step[view.token == 0]
    assert np.all(np.abs(view.received[view.token == 0]) <= c * steps + 1e-9)


def test_cli_runs_it_and_refuses_other_tasks_flags(capsys):
    assert main(["simulate", "--task", "one-bit", "--center", "-0.3", "-n", "30", "--seed",
                 "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["config"]["task"] == "one-bit" and result["config"]["center"] == -0.3
    assert -1 <= result["utility"]["truth"] <= 1
    assert main(["simulate", "--task", "one-bit", "--domain", "4"]) == 2
    assert "--domain: applies to --task" in capsys.readouterr().err
    assert main(["simulate", "--task", "one-bit", "--center", "2"]) == 2
    assert "--center" in capsys.readouterr().err
