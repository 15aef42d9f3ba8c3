"""--task multidim: mixed rows on the walk (Wang et al. ICDE 2019 §4, AISTATS Alg. 4)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import Z, view_cap_max, walk_and_view

from netdp import simulate
from netdp.core.errors import InputError
from netdp.run.cli import main
from netdp.tasks import TASKS, get_task, make_config

RUNS = 300


def _ok(samples: np.ndarray, truth: float, var: float) -> bool:
    """Mean within Z standard errors, variance within Z standard errors of a variance."""
    centred = samples - samples.mean()
    s2 = samples.var(ddof=1)
    se_var = math.sqrt(max(np.mean(centred**4) - s2**2, 0.0) / samples.size)
    return abs(samples.mean() - truth) <= Z * math.sqrt(var / samples.size) \
        and abs(s2 - var) <= Z * se_var


@pytest.fixture(scope="module", params=["complete", "ring"])
def many_runs(request):
    common = {"task": "multidim", "attributes": 4, "categorical": 1, "domain": 3,
              "epsilon": 5.0, "runs": RUNS, "accountants": (), "seed": 20261125}
    if request.param == "ring":
        return simulate(make_config(topology="ring", nodes=30, rounds=2, **common))
    return simulate(make_config(nodes=30, steps=120, **common))


def test_registered_once():
    assert "multidim" in TASKS and get_task("multidim").section.task == "multidim"


def test_unbiased_with_the_closed_form_variance(many_runs):
    """Every mean and frequency, over runs, against ``theoretical_variance``: rows drawn
    uniformly (complete graph) or each row K times (ring)."""
    task = get_task("multidim")
    setup = task.prepare(many_runs.config)
    reports = many_runs.outcomes[0].reports
    var = task.theoretical_variance(setup, reports)
    est = np.array([o.estimate for o in many_runs.outcomes])
    truth = many_runs.outcomes[0].truth
    assert all(_ok(est[:, j], truth[j], var[j]) for j in range(truth.size))
    assert not all(_ok(est[:, j], truth[j], 1.5 * var[j]) for j in range(truth.size))
    u = many_runs.utility
    assert u.theoretical_mse_numeric == pytest.approx(var[:3].mean())
    assert u.mse_numeric == pytest.approx(np.mean((est - truth)[:, :3] ** 2))


@pytest.mark.parametrize("topology", ["complete", "ring"])
def test_pairwise_losses_never_exceed_ldp(topology):
    extra = {"rounds": 3} if topology == "ring" else {"steps": 1500}
    report = simulate(make_config(task="multidim", topology=topology, nodes=30, seed=3,
                                  epsilon=1.0, **extra))
    (kov,) = report.privacy.empirical
    assert 0 < kov.mean <= kov.max <= view_cap_max(report.config)
    assert report.privacy.note is None


def test_other_graphs_are_tracked_by_the_graph_shuffle_tracker():
    report = simulate(make_config(task="multidim", topology="hypercube", nodes=16, seed=3,
                                  steps=200))
    (kov,) = report.privacy.empirical
    assert kov.pairs == 16 * 15 and 0 < kov.mean <= kov.max <= view_cap_max(report.config)


def test_the_view_ends_in_the_published_sums():
    config = make_config(task="multidim", nodes=12, steps=300, tokens=2, seed=9)
    task, setup, trace, outcome, view = walk_and_view(config, 4)
    assert np.all(trace.holders[view.token, view.step] == 4)
    np.testing.assert_allclose(view.published.sum(axis=0) / (2 * setup.steps),
                               outcome.estimate, rtol=1e-10, atol=1e-12)
    low, high = task.audit_worlds(setup, 4)
    assert np.all(low.numeric[4] == -1) and np.all(high.categorical[4] == 1)
    assert np.array_equal(np.delete(low.numeric, 4, 0), np.delete(setup.data.numeric, 4, 0))


def test_the_fair_table_runs_with_its_schema():
    report = simulate(make_config(task="multidim", dataset="fair", steps=2000, seed=1,
                                  accountants=()))
    u = report.utility
    assert report.config.nodes == 6366 and u.numeric == 5 and u.domains == (5, 4, 6, 6)
    assert u.k == 1 and u.mse_categorical is not None


def test_cli_runs_it_and_refuses_bad_input(capsys):
    assert main(["simulate", "--task", "multidim", "-n", "20", "--seed", "1", "--split",
                 "naive", "--oracle", "grr", "--mechanism", "pm", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["utility"]["k"] == 6 and result["mechanism"]["name"] == "multidim-naive"
    for argv, flag in ((["--dummies", "3"], "--dummies: applies to --task histogram"),
                       (["--split", "joint"], "--split: joint is"),
                       (["--attributes", "2", "--categorical", "3"], "--categorical: must"),
                       (["--dataset", "fair", "--categorical", "1"], "--categorical: sets"),
                       (["--dataset", "iris"], "--dataset:"),
                       (["--oracle", "cms"], "--oracle:")):
        assert main(["simulate", "--task", "multidim", *argv]) == 2
        assert flag in capsys.readouterr().err
    with pytest.raises(InputError, match="mechanism"):
        make_config(task="multidim", categorical=0, split="joint")
