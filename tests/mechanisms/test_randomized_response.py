import json
import math

import numpy as np
import pytest
from _stats import estimated_frequencies, std_ok
from conftest import assert_mean

from netdp.audit import lower_bounds as audit
from netdp.core.errors import InputError
from netdp.mechanisms._oracle import pure_variance
from netdp.mechanisms.randomized_response import GRR

# (a) unbiased, closed-form variance ------------------------------------------------------

@pytest.mark.parametrize("eps,counts", [(1.0, [400, 300, 200, 100, 0]), (3.0, [700, 300])])
def test_unbiased_with_the_exact_variance(eps, counts):
    mech = GRR(eps, len(counts))
    counts = np.array(counts)
    n, f = counts.sum(), counts / counts.sum()
    est = estimated_frequencies(mech, counts, runs=4000, seed=21)
    var = mech.variance(f, n)
    for i in range(mech.domain):
        assert_mean(est[:, i], f[i], std=math.sqrt(var[i]))
        assert std_ok(est[:, i], var[i]), i
        assert not std_ok(est[:, i], 1.5 * var[i])  # the check can fail
    if mech.domain > 2:
        # the f-independent closed form of the spec misses the f-term: rejected on bin 0
        approx = (math.exp(eps) + mech.domain - 2) / (n * math.expm1(eps) ** 2)
        assert not std_ok(est[:, 0], approx)


def test_spec_variance_is_the_q_term_of_the_generic_formula():
    for eps, d, n in [(0.5, 2, 100), (1.0, 5, 1000), (4.0, 64, 10**6)]:
        mech = GRR(eps, d)
        e = math.exp(eps)
        spec = (e + d - 2) / (n * (e - 1) ** 2)
        q_term = mech.q * (1 - mech.q) / (n * (mech.p - mech.q) ** 2)
        assert spec == pytest.approx(q_term, rel=1e-12)
        assert float(mech.variance(np.array(0.0), n)) == pytest.approx(spec, rel=1e-12)
        f = np.array([0.0, 0.3, 1.0])
        exact = mech.variance(f, n)
        # f-term: (1-p-q)/(p-q) = (d-2)/(e^ε-1); zero for d = 2
        assert exact - spec == pytest.approx(f * (d - 2) / (n * (e - 1)), abs=1e-15)
        assert exact == pytest.approx(pure_variance(f, n, mech.p, mech.q))


def test_aggregate_is_additive_and_estimate_matches():
    mech = GRR(1.0, 6)
    rng = np.random.default_rng(22)
    a = mech.perturb(rng.integers(0, 6, 500), rng)
    b = mech.perturb(rng.integers(0, 6, 300), rng)
    assert a.dtype.kind == "i" and a.shape == (500,)
    agg = mech.aggregate(np.concatenate([a, b]))
    np.testing.assert_array_equal(agg, mech.aggregate(a) + mech.aggregate(b))
    assert agg.shape == (6,) and agg.sum() == 800
    assert mech.aggregate(np.array([], dtype=int)).tolist() == [0] * 6
    np.testing.assert_allclose(mech.estimate(np.concatenate([a, b])),
                               mech.estimate_counts(agg, 800) / 800)
    # no clipping or renormalisation: estimated counts sum to n exactly
    assert mech.estimate_counts(agg, 800).sum() == pytest.approx(800)


# (b) exact ε ------------------------------------------------------------------------------

@pytest.mark.parametrize("eps,d", [(0.1, 2), (1.0, 4), (2.5, 10), (20.0, 3)])
def test_exact_epsilon_by_likelihood_ratios(eps, d):
    mech = GRR(eps, d)
    assert mech.p == pytest.approx(math.exp(eps) / (math.exp(eps) + d - 1), rel=1e-13)
    assert mech.q == pytest.approx(1 / (math.exp(eps) + d - 1), rel=1e-13)
    law = np.where(np.eye(d, dtype=bool), mech.p, mech.q)  # law[v, y] = P[y | v]
    assert law.sum(axis=1) == pytest.approx(np.ones(d), rel=1e-13)
    log_ratio = np.log(law[:, None, :]) - np.log(law[None, :, :])
    assert log_ratio.max() == pytest.approx(eps, rel=1e-12)
    assert mech.support_probabilities() == (mech.p, mech.q) == (mech.p_star, mech.q_star)


def test_sampler_follows_the_law():
    mech = GRR(1.0, 4)
    n = 200_000
    reports = mech.perturb(np.full(n, 2), np.random.default_rng(23))
    for y in range(4):
        prob = mech.p if y == 2 else mech.q
        assert_mean(reports == y, prob, std=math.sqrt(prob * (1 - prob)))


# (c) audit --------------------------------------------------------------------------------

@pytest.mark.parametrize("eps,d", [(1.0, 4), (2.0, 16)])
def test_audit_lower_bound_is_positive_and_below_epsilon(eps, d):
    """Inputs 0 vs 1; the optimal test set is {y = 1} (ratio p/q = e^ε)."""
    mech = GRR(eps, d)
    n = 100_000
    rng = np.random.default_rng(24)
    y0 = mech.perturb(np.zeros(n, int), rng)
    y1 = mech.perturb(np.ones(n, int), rng)
    lb = audit.audit_membership(y0 == 1, y1 == 1)
    assert 0.8 * eps < lb <= eps


# γ-RR -------------------------------------------------------------------------------------

@pytest.mark.parametrize("gamma", [0.05, 0.3, 0.5, 0.99])
@pytest.mark.parametrize("d", [2, 7, 100])
def test_from_gamma_round_trips(gamma, d):
    mech = GRR.from_gamma(gamma, d)
    assert mech.epsilon == pytest.approx(math.log(1 + d * (1 - gamma) / gamma), rel=1e-13)
    assert mech.gamma == pytest.approx(gamma, rel=1e-12)
    # keep w.p. 1-γ, else uniform over all d values (incl. the true one)
    assert mech.p == pytest.approx(1 - gamma + gamma / d, rel=1e-12)
    assert mech.q == pytest.approx(gamma / d, rel=1e-12)
    back = GRR.from_gamma(GRR(mech.epsilon, d).gamma, d)
    assert back.epsilon == pytest.approx(mech.epsilon, rel=1e-12)


# (d) bad parameters -----------------------------------------------------------------------

def test_bad_parameters_are_refused():
    for eps in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(InputError, match="epsilon"):
            GRR(eps, 4)
    for d in (1, 0, 2.5, True):
        with pytest.raises(InputError, match="domain") as info:
            GRR(1.0, d)
        assert info.value.param == "domain"
    for gamma in (0.0, 1.0, -0.1, math.nan):
        with pytest.raises(InputError, match="gamma"):
            GRR.from_gamma(gamma, 4)
    mech = GRR(1.0, 4)
    rng = np.random.default_rng(0)
    for bad in (np.array([0, 4]), np.array([-1]), np.array([1.5]), np.zeros((2, 2), int),
                np.array([math.nan])):
        with pytest.raises(InputError, match="values"):
            mech.perturb(bad, rng)
    with pytest.raises(InputError, match="reports"):
        mech.aggregate(np.array([0, 9]))


def test_describe_is_json_safe():
    info = json.loads(json.dumps(GRR(1.0, 5).describe()))
    assert info["name"] == "grr" and info["epsilon"] == 1.0 and info["domain"] == 5
    assert {"p_star", "q_star", "gamma"} <= set(info)
