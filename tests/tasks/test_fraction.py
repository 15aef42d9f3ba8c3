"""The worked task of docs/extending.md: one module, one registry line, and these tests."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import assert_unbiased_with_std, view_cap_max, walk_and_view

from netdp import simulate
from netdp.core.errors import InputError
from netdp.run.cli import main
from netdp.tasks import TASKS, get_task, make_config
from netdp.tasks.fraction import keep_probability

RUNS = 400


@pytest.fixture(scope="module")
def many_runs():
    config = make_config(task="fraction", nodes=50, steps=200, epsilon=0.8, runs=RUNS,
                         accountants=(), seed=20261123)
    return simulate(config)


def _closed_form_std(report) -> float:
    p, f = keep_probability(report.config.epsilon), report.utility.truth
    pi = 1 - p + (2 * p - 1) * f
    return math.sqrt(pi * (1 - pi) / report.config.steps) / (2 * p - 1)


def test_registered_once_and_listed():
    assert "fraction" in TASKS and get_task("fraction").section.task == "fraction"


def test_unbiased_with_the_closed_form_std(many_runs):
    """Mean and std of the estimates over the runs; a std 1.5 times off is rejected."""
    estimates = np.array([o.estimate for o in many_runs.outcomes])
    std = _closed_form_std(many_runs)
    assert many_runs.utility.theoretical_std == pytest.approx(std, rel=1e-12)
    assert_unbiased_with_std(estimates, many_runs.utility.truth, std)


def test_pairwise_losses_never_exceed_ldp_and_graphs_say_why_not():
    report = simulate(make_config(task="fraction", nodes=40, steps=2000, seed=3))
    (kov,) = report.privacy.empirical
    assert 0 < kov.mean <= kov.max <= view_cap_max(report.config)
    assert report.privacy.note is None
    ring = simulate(make_config(task="fraction", topology="ring", nodes=20, seed=3))
    assert ring.privacy.empirical == () and "the complete graph" in ring.privacy.note


def test_the_view_is_the_run_itself():
    config = make_config(task="fraction", nodes=12, steps=300, tokens=2, seed=9)
    report_estimate = simulate(config).utility.estimate
    _, setup, trace, _, view = walk_and_view(config, 4)
    assert np.all(trace.holders[view.token, view.step] == 4)
    p = keep_probability(config.epsilon)
    mean_report = view.published.sum() / (2 * setup.steps)
    assert (mean_report - (1 - p)) / (2 * p - 1) == pytest.approx(report_estimate, rel=1e-12)
    first = view.step[view.token == 0]
    assert np.all(np.diff(view.received[view.token == 0]) >= 0)  # running sums of 0/1
    assert np.all(view.received[view.token == 0] <= first)


def test_cli_runs_it_and_refuses_other_tasks_flags(capsys):
    assert main(["simulate", "--task", "fraction", "--share", "0.4", "-n", "30", "--seed",
                 "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["config"]["share"] == 0.4 and result["utility"]["quantity"] == "share of ones"
    assert main(["simulate", "--task", "fraction", "--domain", "5"]) == 2
    assert "--domain: applies to --task histogram" in capsys.readouterr().err
    with pytest.raises(InputError, match="share"):
        make_config(task="fraction", share=1.5)
