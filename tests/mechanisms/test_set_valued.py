"""PSFO (S&P 2018 §IV): unbiased for sets of size <= ℓ, its closed-form variance, the
closed-form downward bias for longer sets, exact ε by likelihood ratio, the adaptive rule."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from _stats import assert_rejected, mean_ok, std_ok
from scipy import stats

from netdp.mechanisms.set_valued import (
    PSFO,
    ItemSets,
    amplified_epsilon,
    precision_recall,
    prefers_grr,
    top_k,
)

RUNS = 1500


def _population(rng: np.random.Generator, n: int, d: int, max_size: int) -> ItemSets:
    """``n`` users, sizes uniform in 0..max_size, items uniform without replacement."""
    sets = [rng.choice(d, size=int(rng.integers(0, max_size + 1)), replace=False)
            for _ in range(n)]
    return ItemSets.from_lists([list(s) for s in sets], d)


def _estimates(mech: PSFO, sets: ItemSets, runs: int, seed: int) -> np.ndarray:
    """``(runs, d)`` estimated counts, each round one report per user."""
    rng = np.random.default_rng(seed)
    users = np.tile(np.arange(sets.n), runs)
    reports = mech.base.perturb(mech.sample(sets, users, rng), rng)
    return np.array([mech.estimate_counts(mech.aggregate(reports[r * sets.n:(r + 1) * sets.n]),
                                          sets.n) for r in range(runs)])


@pytest.fixture(scope="module", params=["grr", "olh"])
def short_sets(request):
    """Sets no longer than ℓ = 3: the estimate is unbiased."""
    sets = _population(np.random.default_rng(1), 200, 8, 3)
    mech = PSFO(1.0, 8, 3, request.param)
    return mech, sets, _estimates(mech, sets, RUNS, 7)


def test_unbiased_with_the_closed_form_variance(short_sets):
    mech, sets, est = short_sets
    assert mech.chosen in ("grr", "olh")
    var = mech.variance(sets)
    np.testing.assert_allclose(mech.bias(sets), 0.0, atol=1e-12)
    for i in range(sets.domain):
        assert mean_ok(est[:, i], sets.counts()[i], math.sqrt(var[i])), i
        assert std_ok(est[:, i], var[i]), (i, est[:, i].var(), var[i])


def test_a_wrong_variance_is_rejected(short_sets):
    """The checks can fail: 1.5 times the variance is caught, and with GRR (where the
    sampling terms weigh) so is the no-sampling term ``ℓ² n q*(1-q*)/δ²`` alone."""
    mech, sets, est = short_sets
    var = mech.variance(sets)
    p, q = mech.support_probabilities()
    crude = np.full(sets.domain, mech.length**2 * sets.n * q * (1 - q) / (p - q) ** 2)
    pooled = est - sets.counts()
    assert not std_ok((pooled / np.sqrt(var)).ravel(), 1.5)
    assert std_ok((pooled / np.sqrt(var)).ravel(), 1.0)
    if mech.chosen == "grr":
        assert not std_ok((pooled / np.sqrt(crude)).ravel(), 1.0)


def test_longer_sets_are_biased_downwards_in_closed_form():
    """With sets up to 6 and ℓ = 2, ``E[ĉ_i] = c_i - Σ_{u ∋ i, |v_u| > ℓ} (1 - ℓ/|v_u|)``."""
    sets = _population(np.random.default_rng(2), 150, 8, 6)
    mech = PSFO(2.0, 8, 2, "grr")
    bias = np.zeros(sets.domain)  # the closed form, written out per user
    for u in range(sets.n):
        v = sets.items[sets.offsets[u]:sets.offsets[u + 1]]
        if v.size > mech.length:
            bias[v] -= 1 - mech.length / v.size
    np.testing.assert_allclose(mech.bias(sets), bias, rtol=1e-12, atol=1e-12)
    assert np.all(bias < 0)
    est, var = _estimates(mech, sets, RUNS, 11), mech.variance(sets)
    for i in range(sets.domain):
        sd = math.sqrt(var[i])
        assert mean_ok(est[:, i], sets.counts()[i] + bias[i], sd), i
        assert not mean_ok(est[:, i], sets.counts()[i], sd), i  # the bias is visible
        assert std_ok(est[:, i], var[i]), i


def _law(mech: PSFO, sets: list[tuple[int, ...]]) -> np.ndarray:
    """``law[v, y] = P[y | v]`` of PSFO with GRR, from the padded set and GRR's matrix."""
    d, ell = mech.domain, mech.length
    ext = d + ell
    grr = np.where(np.eye(ext, dtype=bool), mech.base.p, mech.base.q)
    sample = np.zeros((len(sets), ext))
    for row, v in enumerate(sets):
        m = max(len(v), ell)
        sample[row, list(v)] = 1 / m
        sample[row, d + len(v):d + ell] = 1 / m
    return sample @ grr


@pytest.mark.parametrize(("eps", "ell"), [(0.5, 1), (1.0, 2), (3.0, 3)])
def test_exact_epsilon_by_likelihood_ratios(eps, ell):
    """Over every subset of 5 items, the largest log-ratio is ε, not the base's ε'."""
    d = 5
    mech = PSFO(eps, d, ell, "grr")
    assert mech.base.epsilon == pytest.approx(amplified_epsilon(eps, ell), rel=1e-12)
    sets = [s for k in range(d + 1) for s in itertools.combinations(range(d), k)]
    law = _law(mech, sets)
    assert law.sum(axis=1) == pytest.approx(np.ones(len(sets)), rel=1e-12)
    ratio = np.log(law[:, None, :]) - np.log(law[None, :, :])
    assert ratio.max() == pytest.approx(eps, rel=1e-9)
    if ell > 1:
        assert mech.base.epsilon > eps + 0.1  # the amplification is real


def test_the_sampler_follows_the_padded_law():
    """One user with set {1, 3} and ℓ = 4: items 1, 3 and dummies d+2, d+3, each 1/4."""
    d, ell = 6, 4
    mech = PSFO(1.0, d, ell, "grr")
    sets = ItemSets.from_lists([[1, 3]], d)
    draws = mech.sample(sets, np.zeros(40_000, dtype=np.int64), np.random.default_rng(3))
    observed = np.bincount(draws, minlength=d + ell)
    expected = np.zeros(d + ell)
    expected[[1, 3, d + 2, d + 3]] = draws.size / 4
    assert observed[expected == 0].sum() == 0
    chi2 = stats.chisquare(observed[expected > 0], expected[expected > 0])
    assert chi2.pvalue > 1e-6


def test_adaptive_rule_and_the_variances_it_compares():
    """GRR iff ``d < (4ℓ² - ℓ) e^ε + 1``; well below it GRR's variance is the smaller, well
    above it OLH's."""
    eps, ell = 1.0, 2
    threshold = (4 * ell**2 - ell) * math.e + 1
    assert prefers_grr(int(threshold) - 1, ell, eps) and not prefers_grr(int(threshold) + 1,
                                                                       ell, eps)
    assert PSFO(eps, int(threshold) - 1, ell).chosen == "grr"
    assert PSFO(eps, int(threshold) + 1, ell).chosen == "olh"
    for d, better in ((int(threshold / 3), "grr"), (int(3 * threshold), "olh")):
        var = {name: PSFO(eps, d, ell, name).mixture_variance(np.zeros(1), 1)[0]
               for name in ("grr", "olh")}
        assert min(var, key=var.__getitem__) == better, (d, var)


def test_top_k_and_precision_recall():
    truth = np.array([0.5, 0.1, 0.4, 0.4, 0.0])
    assert list(top_k(np.array([3.0, 1.0, 2.0, 2.0, 0.0]), 2)) == [0, 2]
    assert precision_recall(np.array([0, 2]), truth, 2) == (1.0, 2 / 3)  # tie at 0.4
    assert precision_recall(np.array([1, 4]), truth, 2) == (0.0, 0.0)


def test_item_sets_take_and_pairs():
    sets = ItemSets.from_lists([[0, 2], [1], [0, 1, 2]], 4)
    taken = sets.take(np.array([2, 0, 2]))
    assert list(taken.sizes) == [3, 2, 3] and list(taken.items) == [0, 1, 2, 0, 2, 0, 1, 2]
    pairs = sets.pair_counts(np.array([0, 2]))
    np.testing.assert_array_equal(pairs, [[2, 2], [2, 2]])


def test_bad_parameters_name_their_flag():
    assert_rejected([
        (lambda: PSFO(0.0, 5, 2), "epsilon"),
        (lambda: PSFO(1.0, 1, 2), "domain"),
        (lambda: PSFO(1.0, 5, 0), "set-size"),
        (lambda: PSFO(1.0, 5, 2, "oue"), "oracle"),
        (lambda: ItemSets.from_lists([[0, 7]], 5), "domain"),
        (lambda: ItemSets.from_lists([[1, 1]], 5), "sets"),
    ])
