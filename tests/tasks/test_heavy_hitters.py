"""--task heavy-hitters: PEM prefix extension over OLH reports carried by the token."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import Z, assert_mean, assert_std_gaussian, view_cap_max, walk_and_view
from scipy import stats

from netdp import simulate
from netdp.core.errors import InputError
from netdp.mechanisms import frequency_oracle
from netdp.run.cli import main
from netdp.tasks import TASKS, get_task, make_config
from netdp.tasks.prefix_extension import (
    Plan,
    estimate,
    group_oracles,
    identify,
    perturb_groups,
    scores,
)

RUNS = 2000
EPS = 2.0
USERS = 400


@pytest.fixture(scope="module")
def candidate_estimates():
    """``RUNS`` rounds of ``USERS`` OLH reports of 12-bit prefixes of 20-bit items; the
    estimates of three held prefixes (frequencies 1/2, 1/4, 1/4) and an absent one."""
    oracle = frequency_oracle("olh", EPS, 1 << 12)
    items = np.repeat(np.array([0x12345, 0xABCDE, 0xFFFFF]), [200, 100, 100])
    prefixes = items >> 8
    candidates = np.array([0x123, 0xABC, 0xFFF, 0x777])
    rng = np.random.default_rng(20261125)
    out = np.empty((RUNS, candidates.size))
    for r in range(RUNS):
        out[r] = estimate(oracle, oracle.perturb(prefixes, rng), candidates)
    return oracle, np.array([0.5, 0.25, 0.25, 0.0]), out


def test_registered_once():
    assert "heavy-hitters" in TASKS
    assert get_task("heavy-hitters").section.task == "heavy-hitters"


def test_candidate_counts_are_the_aggregate_restricted_to_the_candidates():
    oracle = frequency_oracle("olh", 1.5, 1 << 10)
    rng = np.random.default_rng(4)
    reports = oracle.perturb(rng.integers(0, 1 << 10, 700), rng)
    items = np.array([3, 900, 0, 1023, 3])
    np.testing.assert_array_equal(oracle.candidate_counts(reports, items),
                                  oracle.aggregate(reports)[items])


def test_candidate_estimate_is_unbiased_with_the_closed_form_variance(candidate_estimates):
    """Each candidate's estimate: mean within Z closed-form standard errors of its true
    frequency, sample variance within the χ² bounds of ``oracle.variance`` (the sum of
    independent Bernoulli(p*) and Bernoulli(q*) supports is near Gaussian at n = 400)."""
    oracle, truth, est = candidate_estimates
    var = oracle.variance(truth, USERS)
    for j in range(truth.size):
        assert_mean(est[:, j], truth[j], math.sqrt(var[j]))
        assert_std_gaussian(est[:, j], math.sqrt(var[j]))


@pytest.mark.parametrize("wrong", ["1.5x", "no f term"])
def test_a_wrong_variance_is_rejected(candidate_estimates, wrong):
    """The check above can fail: 1.5 times the variance, or the variance without its
    ``f (1 - p* - q*) / (n (p* - q*))`` term, is outside the χ² bounds for f = 1/2."""
    oracle, truth, est = candidate_estimates
    p, q = oracle.p_star, oracle.q_star
    var = float(oracle.variance(truth[:1], USERS)[0])
    bad = 1.5 * var if wrong == "1.5x" else q * (1 - q) / (USERS * (p - q) ** 2)
    k = RUNS - 1
    ratio = k * est[:, 0].var(ddof=1) / bad
    assert not stats.chi2.ppf(5e-7, k) <= ratio <= stats.chi2.isf(5e-7, k)


def test_ncr_and_precision_by_hand():
    truth = np.array([7, 3, 9, 1])  # ranks 1..4 score 4, 3, 2, 1 (sum 10)
    precision, recall, ncr = scores(np.array([3, 1, 42, 5]), truth)
    assert (precision, recall) == (0.5, 0.5) and ncr == pytest.approx((3 + 1) / 10)
    assert scores(truth[::-1], truth) == (1.0, 1.0, 1.0)


def test_plan_lengths():
    assert Plan.of(16, 5, 4).lengths == (5, 9, 13, 16)
    assert Plan.of(16, 4, groups=4).lengths == (4, 8, 12, 16)
    assert Plan.of(8, 8, groups=1).lengths == (8,)


def test_prefix_extension_finds_planted_items_centrally():
    """Few items with large mass, ε = 6: the search finds exactly them, with estimates
    within 5 closed-form standard deviations of their frequencies."""
    plan = Plan.of(24, keep=4)
    oracles = [frequency_oracle("olh", 6.0, 1 << n) for n in plan.lengths]
    planted = np.array([0xC0FFEE, 0x123456, 0x00ABCD])
    items = np.repeat(planted, [3000, 2000, 1000])
    groups, reports = perturb_groups(items, plan, oracles, np.random.default_rng(1))
    found = identify(groups, reports, plan, oracles, 3)
    np.testing.assert_array_equal(found.items, planted)
    n_last = int((groups == plan.groups - 1).sum())
    sd = np.sqrt(oracles[-1].variance(np.array([0.5, 1 / 3, 1 / 6]), n_last))
    assert np.all(np.abs(found.estimates - [0.5, 1 / 3, 1 / 6]) <= 5 * sd)


def test_prefix_extension_finds_planted_53_bit_ids():
    """The largest domain, 2^53: planted ids at its top (``2^53 - 1`` and ``2^53 - 1 - P``,
    one id modulo ``P = 2^31 - 1``) and in the middle are found exactly at ε = 6."""
    plan = Plan.of(53, keep=4)
    oracles = group_oracles("olh", 6.0, plan)
    top = (1 << 53) - 1
    planted = np.array([top, top - ((1 << 31) - 1), (1 << 40) + 5])
    items = np.repeat(planted, [3000, 2000, 1000])
    groups, reports = perturb_groups(items, plan, oracles, np.random.default_rng(53))
    found = identify(groups, reports, plan, oracles, 3)
    np.testing.assert_array_equal(found.items, planted)
    with pytest.raises(InputError) as err:
        Plan.of(54)
    assert err.value.param == "domain-bits"


EASY = {"task": "heavy-hitters", "domain_bits": 20, "support": 3, "zipf_exponent": 1.0,
        "top": 3, "epsilon": 5.0, "seed": 7}


@pytest.mark.parametrize("topology", ["complete", "ring"])
def test_easy_instance_on_the_walk_finds_the_top(topology):
    sizes = {"steps": 6000} if topology == "complete" else {"rounds": 6}
    report = simulate(make_config(topology=topology, nodes=1000, runs=2, **sizes, **EASY))
    u = report.utility
    assert (u.precision, u.recall, u.ncr) == (1.0, 1.0, 1.0)
    np.testing.assert_array_equal(np.sort(u.first.found), np.sort(u.first.top))
    (kov,) = report.privacy.empirical
    assert 0 < kov.mean <= kov.max <= view_cap_max(report.config)
    # nothing to say but, on the walk, that the windows' PLDs were too dear here
    note = report.privacy.note
    assert note is None or (topology == "complete" and note.startswith(
        "the windows' PLDs (each node's count of reports in each window) were left out"))


def test_tiny_epsilon_loses_the_top():
    """ε = 0.05 with 3000 reports: the first round's noise (std ~ 1.2 per prefix
    frequency) swamps every prefix, so the top-10 of a Zipf law is mostly missed."""
    report = simulate(make_config(task="heavy-hitters", nodes=1000, steps=3000, runs=3,
                                  epsilon=0.05, accountants=(), seed=2))
    assert report.utility.recall <= 0.5


@pytest.mark.slow
def test_other_graphs_are_tracked_by_the_graph_shuffle_tracker():
    report = simulate(make_config(task="heavy-hitters", topology="erdos-renyi", nodes=30,
                                  steps=300, seed=3))
    (kov,) = report.privacy.empirical
    assert kov.pairs == 30 * 29 and 0 < kov.mean <= kov.max <= view_cap_max(report.config)


@pytest.mark.parametrize("bits", [12, 32])
def test_the_view_ends_in_the_published_estimates(bits):
    config = make_config(task="heavy-hitters", nodes=40, steps=600, tokens=2, seed=9,
                         domain_bits=bits, support=5)
    task, setup, trace, outcome, view = walk_and_view(config, 4)
    assert np.all(trace.holders[view.token, view.step] == 4)
    assert view.received.shape == (view.step.size, len(setup.plan.lengths),
                                   outcome.found.size)
    oracle, n_last = setup.oracles[-1], int(outcome.per_group[-1])
    counts = view.published.sum(axis=0)[-1]
    freq = (counts / n_last - oracle.q_star) / (oracle.p_star - oracle.q_star)
    np.testing.assert_allclose(freq, outcome.estimates, rtol=1e-9)


def test_planted_32_bit_ids_are_found_on_the_cli(tmp_path, capsys):
    """``--domain-bits 32``: three planted ids at or above 2^31 (two of them, 2^32 - 1 and
    2^31, are one id under the family mod 2^31 - 1) among 600 nodes, the rest distinct
    random ids; at ε = 6 the top-3 is found exactly (precision = recall = NCR = 1), each
    estimate within Z closed-form standard deviations of its frequency (the family mod
    2^31 - 1 finds the same set but estimates 2^32 - 1 and 2^31 at their summed mass)."""
    planted = [(1 << 32) - 1, 1 << 31, 3_000_000_019]
    rest = np.random.default_rng(32).integers(0, 1 << 32, 150)
    items = np.concatenate([np.repeat(planted, [200, 150, 100]), rest])
    path = tmp_path / "ids.csv"
    path.write_text("id\n" + "\n".join(str(int(v)) for v in items) + "\n")
    assert main(["simulate", "--task", "heavy-hitters", "--domain-bits", "32",
                 "--data-file", str(path), "--steps", "6000", "--top", "3", "--epsilon",
                 "6", "--seed", "4", "--no-tracking", "--json"]) == 0
    u = json.loads(capsys.readouterr().out)["utility"]
    assert u["top"] == planted and sorted(u["found"]) == sorted(planted)
    assert (u["precision"], u["recall"], u["ncr"]) == (1.0, 1.0, 1.0)
    assert u["prefix_lengths"][-1] == 32
    truth = np.array(u["found_truth"])
    sd = np.sqrt(frequency_oracle("olh", 6.0, 1 << 32).variance(
        truth, u["reports_per_group"][-1]))
    assert np.all(np.abs(np.array(u["found_estimate"]) - truth) <= Z * sd)


@pytest.mark.parametrize(("params", "flag"), [
    ({"domain_bits": 54}, "domain-bits"),
    ({"groups": 3, "step_bits": 2}, "groups"),
    ({"domain_bits": 8, "start_bits": 9}, "start-bits"),
    ({"domain_bits": 8, "start_bits": 4, "groups": 6}, "groups"),
    ({"domain_bits": 8, "start_bits": 4, "groups": 1}, "groups"),
    ({"support": 0}, "support"),
    ({"oracle": "grr"}, "oracle"),
    ({"shuffle": "blanket"}, "shuffle"),
    ({"dummies": 3}, "dummies"),
    ({"domain_bits": 30, "candidates": 5000, "step_bits": 8}, "candidates"),
    ({"top": 100000}, "top"),
])
def test_bad_input_names_its_flag(params, flag):
    with pytest.raises(InputError) as err:
        make_config(task="heavy-hitters", **params)
    assert err.value.param == flag


def test_cli_runs_it_with_json(capsys):
    assert main(["simulate", "--task", "heavy-hitters", "-n", "100", "--steps", "1000",
                 "--domain-bits", "12", "--top", "3", "--seed", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["utility"]["quantity"] == "top-K items"
    assert len(result["utility"]["found"]) == 3
    assert main(["simulate", "--task", "heavy-hitters", "--domain", "5"]) == 2
    assert "--domain: applies to --task histogram" in capsys.readouterr().err
