"""--task itemsets: PSFO reports on a walk (S&P 2018 §IV-§V): unbiased up to the closed-form
bias, with the closed-form variance; top-K precision and recall; pairwise <= LDP."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import assert_mean, assert_std_gaussian, view_cap_max
from scipy import stats

from netdp import engine, simulate
from netdp.core.errors import InputError
from netdp.core.setup import Streams
from netdp.engine.routing import Router
from netdp.run.cli import main
from netdp.tasks import TASKS, get_task, make_config
from netdp.tasks.preparation import with_seed

RUNS = 300


def _runs(**params):
    config = make_config(task="itemsets", domain=8, mean_size=3.0, set_size=2, epsilon=1.0,
                         runs=RUNS, accountants=(), **params)
    report = simulate(config)
    task = get_task("itemsets")
    setup = task.prepare(config)
    est = np.array([o.estimate for o in report.outcomes])
    psfo, sets = setup.mechanism, setup.data
    return report, est, sets.frequencies() + psfo.bias(sets) / sets.n, task.variance(setup)


@pytest.fixture(scope="module")
def complete():
    return _runs(nodes=40, steps=400, seed=20261125)


@pytest.fixture(scope="module")
def ring():
    return _runs(topology="ring", nodes=60, rounds=3, seed=20261126)


def test_registered_once():
    assert "itemsets" in TASKS and get_task("itemsets").section.task == "itemsets"


@pytest.mark.parametrize("which", ["complete", "ring"])
def test_unbiased_up_to_the_closed_form_bias_with_its_variance(which, request):
    """Sets up to ~8 with ℓ = 2: the mean is the truth minus the closed-form bias; the
    spread is the closed-form std (mixture on the complete graph, exact per node on the
    ring)."""
    report, est, mean, var = request.getfixturevalue(which)
    assert report.utility.theoretical_mse == pytest.approx(
        np.mean(var + (mean - report.utility.truth) ** 2), rel=1e-12)
    assert np.any(mean < report.utility.truth - 0.01)  # the bias is there to see
    for i in range(est.shape[1]):
        assert_mean(est[:, i], mean[i], math.sqrt(var[i]))
        assert_std_gaussian(est[:, i], math.sqrt(var[i]))


@pytest.mark.parametrize("which", ["complete", "ring"])
def test_a_wrong_variance_or_no_bias_is_rejected(which, request):
    """The checks can fail: 1.5 times the variance, or the truth as the mean."""
    _, est, mean, var = request.getfixturevalue(which)
    z = ((est - mean) / np.sqrt(1.5 * var)).ravel()
    k = z.size - 1
    assert not stats.chi2.ppf(5e-7, k) <= k * z.var(ddof=1) <= stats.chi2.isf(5e-7, k)
    truth = np.asarray(request.getfixturevalue(which)[0].utility.truth)
    worst = np.argmax(np.abs(mean - truth))  # forgetting the bias: the mean misses
    se = math.sqrt(var[worst] / est.shape[0])
    assert abs(est[:, worst].mean() - truth[worst]) > 5 * se


def test_precision_and_recall_one_when_easy_lower_at_tiny_epsilon():
    easy = simulate(make_config(task="itemsets", nodes=200, steps=20_000, domain=20, top=3,
                                epsilon=4.0, accountants=(), seed=4))
    assert easy.utility.precision == 1.0 and easy.utility.recall == 1.0
    hard = simulate(make_config(task="itemsets", nodes=200, steps=2000, domain=20, top=3,
                                epsilon=0.05, runs=5, accountants=(), seed=4))
    assert hard.utility.precision < 0.8


@pytest.mark.parametrize("params", [{"nodes": 30, "steps": 1500},
                                    {"topology": "ring", "nodes": 20, "rounds": 2}])
def test_pairwise_losses_never_exceed_ldp(params):
    report = simulate(make_config(task="itemsets", domain=10, seed=3, **params))
    (kov,) = report.privacy.empirical
    assert 0 < kov.mean <= kov.max <= view_cap_max(report.config)
    assert report.privacy.note is None


def test_other_graphs_are_tracked_by_the_graph_shuffle_tracker():
    report = simulate(make_config(task="itemsets", topology="erdos-renyi", nodes=30,
                                  steps=300, domain=10, seed=3))
    (kov,) = report.privacy.empirical
    assert kov.pairs == 30 * 29 and 0 < kov.mean <= kov.max <= view_cap_max(report.config)


@pytest.mark.parametrize("params", [{"nodes": 15, "steps": 300, "tokens": 2},
                                    {"topology": "ring", "nodes": 9, "rounds": 2},
                                    {"nodes": 15, "steps": 200, "oracle": "olh"}])
def test_view_ends_in_the_published_aggregate(params):
    config = with_seed(make_config(task="itemsets", domain=6, seed=5, **params))
    task = get_task("itemsets")
    setup = task.prepare(config)
    streams = Streams(setup.seed, 0)
    trace = engine.walk("vector", Router(setup.topology, config.walk), setup.steps,
                        [streams.generator("walk", k) for k in range(config.tokens)])
    outcome = task.run(setup, trace, streams)
    view = task.view(setup, trace, streams, observer=4)
    assert np.all(trace.holders[view.token, view.step] == 4)
    assert view.received.shape[0] == view.step.size
    psfo = setup.mechanism
    total = view.published.sum(axis=0)
    if setup.topology.kind == "ring":  # node 0 removes its dummies: rerun them
        head, _, tail, _ = task._draws(setup, trace, streams, keep=False)
        total = total - head - tail
    estimate = psfo.estimate_counts(total, outcome.reports) / outcome.reports
    np.testing.assert_allclose(estimate, outcome.estimate, rtol=1e-9, atol=1e-12)


def test_csv_sets_and_their_length(tmp_path):
    path = tmp_path / "baskets.csv"
    rows = ["0 1", "1", "0 1 2", "", "3 1 0 4 2", "2", "0 2", "1 2", "0", "2 1 0"] * 3
    path.write_text("items\n" + "\n".join(f'"{r}"' for r in rows) + "\n")
    report = simulate(make_config(task="itemsets", data_file=str(path), domain=5, top=2,
                                  steps=3000, epsilon=3.0, accountants=(), seed=1))
    u = report.utility
    assert report.config.nodes == 30 and u.length == 3 and "not private" in u.length_source
    np.testing.assert_allclose(u.truth, [0.6, 0.6, 0.6, 0.1, 0.1])
    assert u.longer_share == pytest.approx(0.1)  # 90% of the sets hold <= 3 items
    bad = tmp_path / "bad.csv"
    bad.write_text("items\n0 x\n")
    with pytest.raises(InputError, match="integers") as info:
        simulate(make_config(task="itemsets", data_file=str(bad), domain=5))
    assert info.value.param == "data-file"


def test_cli_json_and_bad_input_names_its_flag(capsys):
    assert main(["simulate", "--task", "itemsets", "-n", "30", "--domain", "12", "--top", "4",
                 "--seed", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["utility"]["quantity"] == "item frequencies"
    assert len(result["utility"]["top_found"]) == 4
    assert result["mechanism"]["name"] == "psfo"
    for argv, flag in ((["--top", "20", "--domain", "12"], "--top"),
                       (["--shuffle", "blanket"], "--shuffle"),
                       (["--set-size", "0"], "--set-size"),
                       (["--oracle", "oue"], "--oracle"),
                       (["--lr", "0.1"], "--lr")):
        assert main(["simulate", "--task", "itemsets", *argv]) == 2
        assert f"error: {flag}" in capsys.readouterr().err, argv
