import itertools
import json
import math

import numpy as np
import pytest
from _stats import agrees, find_seed
from conftest import assert_mean

from netdp.audit import lower_bounds as audit
from netdp.core.errors import InputError
from netdp.mechanisms.rappor import RAPPOR, rappor_epsilon, rappor_probabilities


def _find(accept, **kwargs) -> RAPPOR:
    """The RAPPOR of the first hash seed with a full-rank design that ``accept`` takes."""
    return find_seed(lambda seed: RAPPOR(hash_seed=seed, **kwargs), accept)


def _disjoint(mech: RAPPOR, a: int, b: int) -> bool:
    """Items a and b set h bits each, and no bit in common."""
    da, db = mech.design[a], mech.design[b]
    return da.sum() == db.sum() == mech.hashes and not np.any(da & db)


# formulas of seed 000 ----------------------------------------------------------------------

def test_defaults_and_the_two_epsilons():
    mech = RAPPOR(20)
    assert (mech.f, mech.p, mech.q, mech.hashes, mech.bloom) == (0.5, 0.5, 0.75, 2, 32)
    # p* = f(p+q)/2 + (1-f)p, q* = f(p+q)/2 + (1-f)q
    assert (mech.p_star, mech.q_star) == (0.5625, 0.6875)
    assert mech.epsilon == pytest.approx(2 * math.log(0.6875 * 0.4375 / (0.5625 * 0.3125)))
    assert mech.epsilon == pytest.approx(1.0743, abs=1e-4)
    assert mech.epsilon_permanent == pytest.approx(4 * math.log(3))  # 2h ln((1-f/2)/(f/2))
    info = json.loads(json.dumps(mech.describe()))
    assert info["epsilon"] == mech.epsilon and info["epsilon_permanent"] == mech.epsilon_permanent
    assert info["name"] == "rappor" and info["delta"] == 0.0


def test_reported_bits_follow_p_star_and_q_star():
    """Seed 000 (and the spec) print p' = f(p+1)/2 + (1-f)p; the law is f(p+q)/2 + (1-f)p."""
    mech = RAPPOR(20)
    n = 100_000
    bits = mech.perturb(np.full(n, 3), np.random.default_rng(2)).astype(float)
    one = mech.design[3] == 1
    for b in range(mech.bloom):
        assert_mean(bits[:, b], mech.q_star if one[b] else mech.p_star)
    zero_bit = int(np.flatnonzero(~one)[0])
    typo = mech.f * (mech.p + 1) / 2 + (1 - mech.f) * mech.p
    assert not agrees(bits[:, zero_bit], typo)
    # bits are independent given the item: joint frequency of a 1-bit and a 0-bit
    one_bit = int(np.flatnonzero(one)[0])
    assert_mean(bits[:, one_bit] * bits[:, zero_bit], mech.q_star * mech.p_star)
    assert np.allclose(mech.bit_probabilities(3), np.where(one, mech.q_star, mech.p_star))


# unbiased, exact variance ------------------------------------------------------------------

def test_least_squares_counts_are_unbiased_with_the_exact_variance():
    mech = RAPPOR(20, hash_seed=0)
    counts = np.random.default_rng(0).integers(0, 50, 20)
    n, runs = int(counts.sum()), 2000
    x = np.tile(np.repeat(np.arange(20), counts), runs)
    reports = mech.perturb(x, np.random.default_rng(4))
    aggs = np.array([mech.aggregate(reports[r * n:(r + 1) * n]) for r in range(runs)])
    est = mech.estimate_counts(aggs, n)
    var = mech.variance(counts / n, n) * n**2
    for i in range(20):
        assert_mean(est[:, i], counts[i])
        assert_mean((est[:, i] - counts[i]) ** 2, var[i])
    # Wrong constants are rejected. The misprinted p* (seed 000) biases the counts:
    typo = mech.f * (mech.p + 1) / 2 + (1 - mech.f) * mech.p
    t_typo = (aggs - n * typo) / (mech.q_star - typo)
    est_typo = np.linalg.lstsq(mech.design.T.astype(float), t_typo.T, rcond=None)[0].T
    assert not all(agrees(est_typo[:, i], counts[i]) for i in range(20))
    # "average the item's own h bits" is a different (biased) decoder; its variance
    # formula, used for least squares, is rejected too.
    t = mech.design.T @ counts
    v = t * mech.q_star * (1 - mech.q_star) + (n - t) * mech.p_star * (1 - mech.p_star)
    own = mech.design @ v / (mech.hashes**2 * (mech.q_star - mech.p_star) ** 2)
    assert not all(agrees((est[:, i] - counts[i]) ** 2, own[i]) for i in range(20))


def test_estimate_accepts_stacked_aggregates():
    mech = RAPPOR(10, hash_seed=0)
    aggs = np.random.default_rng(1).integers(0, 100, (3, 32))
    stacked = mech.estimate_counts(aggs, 100)
    assert stacked.shape == (3, 10)
    assert np.allclose(stacked[1], mech.estimate_counts(aggs[1], 100))


# exact ε -----------------------------------------------------------------------------------

def _sup_log_ratio(mech: RAPPOR, a: int, b: int) -> float:
    """sup over all 2^bloom reports of ln P[S | a]/P[S | b] (the bits are independent)."""
    pa, pb = mech.bit_probabilities(a), mech.bit_probabilities(b)
    return float(np.maximum(np.log(pa / pb), np.log((1 - pa) / (1 - pb))).sum())


def test_exact_epsilon_by_likelihood_ratio():
    mech = _find(lambda m: _disjoint(m, 0, 1), domain=8)
    ratio = mech.q_star * (1 - mech.p_star) / (mech.p_star * (1 - mech.q_star))
    assert math.log(ratio) == pytest.approx(mech.epsilon / mech.hashes)  # per bit
    assert _sup_log_ratio(mech, 0, 1) == pytest.approx(mech.epsilon, rel=1e-12)
    for a, b in itertools.permutations(range(8), 2):
        assert _sup_log_ratio(mech, a, b) <= mech.epsilon + 1e-12


def test_exact_epsilon_by_enumeration_of_every_report():
    mech = _find(lambda m: _disjoint(m, 0, 1), domain=4, bloom=8, f=0.3, p=0.2, q=0.9)
    outputs = np.array(list(itertools.product([0, 1], repeat=8)), dtype=np.uint8)
    logp = np.array([mech.log_probability(outputs, v) for v in range(4)])
    assert np.allclose(np.exp(logp).sum(axis=1), 1.0)
    worst = max((logp[a] - logp[b]).max() for a, b in itertools.permutations(range(4), 2))
    assert worst == pytest.approx(mech.epsilon, rel=1e-12)
    assert worst == pytest.approx(rappor_epsilon(0.3, 0.2, 0.9, 2), rel=1e-12)


def test_audit_lower_bound_is_positive_and_below_epsilon():
    mech = _find(lambda m: _disjoint(m, 0, 1), domain=8)
    trials = 100_000
    rng = np.random.default_rng(17)
    out0 = mech.perturb(np.zeros(trials, int), rng)
    out1 = mech.perturb(np.ones(trials, int), rng)
    ones, zeros = mech.design[1] == 1, mech.design[0] == 1

    def rejects(out):  # "input 1": every bit of item 1 set, every bit of item 0 clear
        return np.all(out[:, ones] == 1, axis=1) & np.all(out[:, zeros] == 0, axis=1)

    lb = audit.audit_membership(rejects(out0), rejects(out1))
    assert 0.8 * mech.epsilon < lb <= mech.epsilon


# from_epsilon ------------------------------------------------------------------------------

@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0])
def test_from_epsilon_solves_for_f(eps):
    mech = RAPPOR.from_epsilon(eps, 16)
    assert 0 < mech.f < 1 and (mech.p, mech.q, mech.hashes) == (0.5, 0.75, 2)
    assert mech.epsilon <= eps
    assert mech.epsilon == pytest.approx(eps, rel=1e-12)
    assert mech.epsilon_permanent > mech.epsilon


def test_from_epsilon_refuses_what_no_f_reaches():
    top = 2 * math.log(0.75 * 0.5 / (0.5 * 0.25))  # the f -> 0 limit, 2 ln 3
    with pytest.raises(InputError) as info:
        RAPPOR.from_epsilon(top + 0.01, 16)
    assert info.value.param == "epsilon"
    assert RAPPOR.from_epsilon(3.0, 16, q=1.0).epsilon == pytest.approx(3.0)


# bad parameters ----------------------------------------------------------------------------

@pytest.mark.parametrize("make,param", [
    (lambda: RAPPOR(33), "domain"),
    (lambda: RAPPOR(1), "domain"),
    (lambda: RAPPOR(10, f=0.0), "f"),
    (lambda: RAPPOR(10, f=1.0), "f"),
    (lambda: RAPPOR(10, p=-0.1), "p"),
    (lambda: RAPPOR(10, p=0.8, q=0.75), "q"),
    (lambda: RAPPOR(10, q=1.5), "q"),
    (lambda: RAPPOR(10, hashes=0), "hashes"),
    (lambda: RAPPOR(10, bloom=0), "bloom"),
    (lambda: RAPPOR(10, hash_seed=-2), "hash_seed"),
    (lambda: RAPPOR(8, hashes=1, bloom=8), "hash_seed"),  # one-hot design: 8 buckets collide
    (lambda: RAPPOR.from_epsilon(0.0, 10), "epsilon"),
    (lambda: RAPPOR(10).perturb(np.array([10]), np.random.default_rng()), "values"),
    (lambda: RAPPOR(10).aggregate(np.full((2, 32), 2, np.uint8)), "reports"),
    (lambda: RAPPOR(10).aggregate(np.zeros((2, 31), np.uint8)), "reports"),
    (lambda: RAPPOR(10).estimate_counts(np.zeros(31), 5), "aggregate"),
    (lambda: RAPPOR(10).variance(np.ones(11) / 11, 5), "frequencies"),
])
def test_bad_parameters_name_the_parameter(make, param):
    with pytest.raises(InputError) as info:
        make()
    assert info.value.param == param


# additivity --------------------------------------------------------------------------------

def test_aggregate_adds_up_exactly():
    mech = RAPPOR(20)
    rng = np.random.default_rng(6)
    reports = mech.perturb(rng.integers(0, 20, 5000), rng)
    assert reports.dtype == np.uint8 and reports.shape == (5000, 32)
    whole = mech.aggregate(reports)
    assert whole.dtype == np.int64
    assert np.array_equal(whole, mech.aggregate(reports[:777]) + mech.aggregate(reports[777:]))
    assert np.array_equal(mech.aggregate(reports[:0]), np.zeros(32))
    assert rappor_probabilities(0.5, 0.5, 0.75) == (mech.p_star, mech.q_star)
