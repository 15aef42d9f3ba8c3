"""BLH and OLH: closed forms, exact ε, unbiasedness, variance, audit, input checks.

(Speed is measured by ``experiments/bench_mechanisms.py``, not asserted here.)
"""

import math

import numpy as np
import pytest
from _stats import assert_rejected, estimated_counts, mean_ok, variance_ok
from conftest import Z, assert_mean

from netdp.audit import lower_bounds as audit
from netdp.mechanisms._hashing import PRIME, collision_probability, draw_keys, hash_values
from netdp.mechanisms._oracle import pure_variance
from netdp.mechanisms.local_hashing import (
    BLH,
    OLH,
    support_counts,
)
from netdp.mechanisms.unary import OUE

COUNTS = np.array([55, 25, 12, 8, 0, 0])
N_USERS = int(COUNTS.sum())
REPS = 20_000


def naive_support(reports: np.ndarray, domain: int, g: int) -> np.ndarray:
    """Reference aggregation, one report at a time (as the public libraries do)."""
    items = np.arange(domain)
    out = np.zeros(domain, dtype=np.int64)
    for a, b, y in reports:
        out += hash_values(np.array([a, b]), items, g) == y
    return out


def test_parameters_and_closed_forms():
    blh = BLH(1.0, 10)
    e = math.e
    assert blh.g == 2 and blh.p == pytest.approx(e / (e + 1)) and blh.q_star == 0.5
    for eps, g in [(0.5, 3), (1.0, 4), (2.0, 8), (3.0, 21)]:
        olh = OLH(eps, 10)
        assert olh.g == g == round(math.exp(eps)) + 1
        assert olh.p == pytest.approx(math.exp(eps) / (math.exp(eps) + g - 1))
        assert olh.q == pytest.approx(1 / (math.exp(eps) + g - 1))
        assert (olh.p_star, olh.q_star) == (olh.p, 1 / g)
    assert OLH(1.0, 10, g=7).g == 7
    f, n = np.array([0.0, 0.4, 1.0]), 500
    # BLH: 1 - p* - q* = -(p* - q*), so the frequency term is -f/n
    np.testing.assert_allclose(blh.variance(f, n), ((e + 1) ** 2 / (e - 1) ** 2 - f) / n,
                               rtol=1e-12)
    # OLH with g = e^ε + 1 exactly has OUE's variance, frequency term included
    eps = math.log(3.0)
    np.testing.assert_allclose(OLH(eps, 10, g=4).variance(f, n), OUE(eps, 10).variance(f, n),
                               rtol=1e-12)
    assert OLH(1.0, 10).describe()["g"] == 4 and blh.describe()["name"] == "blh"


@pytest.mark.parametrize("g", [2, 3, 4, 8, 21, 1000, 2**20])
def test_hash_family_makes_q_star_one_over_g(g):
    """Exact collision probability of the family is within 1/P of 1/g, so is q*."""
    coll = collision_probability(g)
    assert abs(coll - 1 / g) <= 1 / PRIME
    olh = OLH(1.0, 10, g=g)
    q_star_exact = coll * olh.p + (1 - coll) * olh.q
    assert abs(q_star_exact - olh.q_star) <= 1 / PRIME


@pytest.mark.parametrize("make,seed", [
    pytest.param(lambda: BLH(1.0, 6), 11, id="blh-1"),
    pytest.param(lambda: OLH(1.0, 6), 12, id="olh-1-g4"),
    pytest.param(lambda: OLH(2.5, 6), 13, id="olh-2.5-g13")])
def test_monte_carlo_unbiased_with_the_closed_form_variance(make, seed):
    mech = make()
    counts = estimated_counts(mech, COUNTS, REPS, seed)
    est = counts / N_USERS
    f = COUNTS / N_USERS
    var = mech.variance(f, N_USERS)
    for i in range(len(f)):
        assert_mean(est[:, i], f[i], std=math.sqrt(var[i]))
        assert variance_ok(est[:, i], var[i]), (i, est[:, i].var(ddof=1), var[i])
    # the same tolerances reject wrong constants
    for name, wrong in {"twice": 2 * var,
                        "no f term": pure_variance(0 * f, N_USERS, mech.p_star,
                                                   mech.q_star)}.items():
        assert not all(variance_ok(est[:, i], wrong[i]) for i in range(len(f))), name
    # using GRR's q instead of q* = 1/g (a classic slip) biases the estimate, and it shows
    agg = counts * (mech.p_star - mech.q_star) + N_USERS * mech.q_star  # support counts
    biased = (agg - N_USERS * mech.q) / (mech.p - mech.q) / N_USERS
    assert not all(mean_ok(biased[:, i], f[i], math.sqrt(var[i])) for i in range(len(f)))


@pytest.mark.parametrize("make", [pytest.param(lambda: BLH(0.7, 5), id="blh-0.7"),
                                  pytest.param(lambda: OLH(0.7, 5), id="olh-0.7"),
                                  pytest.param(lambda: OLH(3.0, 5), id="olh-3")])
def test_exact_epsilon_per_hash_key(make):
    """For a fixed key the output is GRR over [g]: worst ratio p/q = e^ε over all y, v, v'."""
    mech = make()
    keys = draw_keys(np.random.default_rng(3), 200)
    items = np.arange(mech.domain)
    hashed = hash_values(keys[:, None, :], items, mech.g)  # (keys, items)
    ys = np.arange(mech.g)
    # P[y | key, v] for every key, input and output: (keys, items, g)
    probs = np.where(hashed[:, :, None] == ys, mech.p, mech.q)
    np.testing.assert_allclose(probs.sum(axis=2), 1.0, rtol=1e-12)
    ratio = probs[:, :, None, :] / probs[:, None, :, :]  # (keys, v, v', y)
    assert ratio.max() == pytest.approx(math.exp(mech.epsilon), rel=1e-12)
    assert mech.p / mech.q == pytest.approx(math.exp(mech.epsilon), rel=1e-12)
    # the ratio reaches e^ε exactly where v and v' hash apart
    separated = hashed[:, :, None] != hashed[:, None, :]
    np.testing.assert_allclose(ratio.max(axis=3)[separated], math.exp(mech.epsilon),
                               rtol=1e-12)
    np.testing.assert_allclose(ratio.max(axis=3)[~separated], 1.0)


def grr_rates_match(mech, values: np.ndarray, reports: np.ndarray) -> None:
    """Read p and q from the reports (share of ``y = H(v)`` and of ``y = H(v)+1 mod g``),
    check them within Z standard errors, and ε inside the interval ``ln(p/q)`` gives."""
    n = len(values)
    hashed = hash_values(reports[:, :2], values, mech.g)
    p_hat = np.mean(reports[:, 2] == hashed)
    q_hat = np.mean(reports[:, 2] == (hashed + 1) % mech.g)
    se_p, se_q = math.sqrt(p_hat * (1 - p_hat) / n), math.sqrt(q_hat * (1 - q_hat) / n)
    assert abs(p_hat - mech.p) <= Z * se_p, ("p", p_hat, mech.p)
    assert abs(q_hat - mech.q) <= Z * se_q, ("q", q_hat, mech.q)
    eps_lo = math.log((p_hat - Z * se_p) / (q_hat + Z * se_q))
    eps_hi = math.log((p_hat + Z * se_p) / (q_hat - Z * se_q))
    assert eps_lo <= mech.epsilon <= eps_hi, ("epsilon", eps_lo, mech.epsilon, eps_hi)
    assert eps_hi - eps_lo < 0.25


def buggy_perturb(mech, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A common slip: the 'random' branch draws from all g values, the true one included."""
    keys = draw_keys(rng, len(values))
    hashed = hash_values(keys, values, mech.g)
    keep = rng.random(len(values)) < mech.p
    y = np.where(keep, hashed, rng.integers(0, mech.g, len(values)))
    return np.column_stack([keys, y])


@pytest.mark.parametrize("make", [pytest.param(lambda: BLH(0.5, 8), id="blh-0.5"),
                                  pytest.param(lambda: OLH(1.0, 8), id="olh-1"),
                                  pytest.param(lambda: OLH(2.0, 8), id="olh-2")])
def test_empirical_rates_give_the_claimed_epsilon(make):
    mech = make()
    rng = np.random.default_rng(21)
    values = rng.integers(0, mech.domain, 200_000)
    grr_rates_match(mech, values, mech.perturb(values, rng))
    with pytest.raises(AssertionError):
        grr_rates_match(mech, values, buggy_perturb(mech, values, rng))


@pytest.mark.parametrize("make", [pytest.param(lambda: BLH(1.0, 4), id="blh-1"),
                                  pytest.param(lambda: OLH(1.0, 4), id="olh-1"),
                                  pytest.param(lambda: OLH(0.25, 4), id="olh-0.25")])
def test_clopper_pearson_audit_is_positive_and_below_epsilon(make):
    """Inputs 0 and 1; rejection set fixed in advance: H(0) != H(1) and y = H(1)."""
    mech, trials = make(), 100_000
    rng = np.random.default_rng(31)
    out0 = mech.perturb(np.zeros(trials, dtype=int), rng)
    out1 = mech.perturb(np.ones(trials, dtype=int), rng)

    def in_set(reports):
        h0 = hash_values(reports[:, :2], 0, mech.g)
        h1 = hash_values(reports[:, :2], 1, mech.g)
        return (h0 != h1) & (reports[:, 2] == h1)

    lb = audit.audit_membership(in_set(out0), in_set(out1))
    assert 0 < lb <= mech.epsilon
    assert lb > 0.6 * mech.epsilon


def test_bad_parameters_name_the_parameter():
    mech, rng = OLH(1.0, 4), np.random.default_rng(0)
    good = mech.perturb(np.array([0, 1, 2]), rng)
    bad_y = good.copy()
    bad_y[0, 2] = mech.g
    cases = [(lambda: BLH(0.0, 4), "epsilon"), (lambda: OLH(-2.0, 4), "epsilon"),
             (lambda: OLH(math.inf, 4), "epsilon"), (lambda: OLH(30.0, 4), "epsilon"),
             (lambda: BLH(1.0, 1), "domain"), (lambda: OLH(1.0, 3.0), "domain"),
             (lambda: OLH(1.0, 4, g=1), "g"), (lambda: OLH(1.0, 4, g=2.5), "g"),
             (lambda: OLH(1.0, 4, g=PRIME), "g"),
             (lambda: mech.perturb(np.array([4]), rng), "values"),
             (lambda: mech.perturb(np.array([-1, 0]), rng), "values"),
             (lambda: mech.aggregate(good[:, :2]), "reports"),
             (lambda: mech.aggregate(good.astype(float)), "reports"),
             (lambda: mech.aggregate(bad_y), "reports"),
             (lambda: mech.estimate_counts(np.zeros(5), 3), "aggregate"),
             (lambda: mech.estimate_counts(np.zeros(4), 0), "n")]
    assert_rejected(cases)
    with pytest.raises(TypeError):
        BLH(1.0, 4, 3)  # BLH's g is fixed to 2
    assert OLH(30.0, 4, g=5).g == 5


@pytest.mark.parametrize("make", [pytest.param(lambda: BLH(1.0, 9), id="blh"),
                                  pytest.param(lambda: OLH(2.0, 9), id="olh")])
def test_aggregate_is_additive_seeded_and_matches_the_naive_loop(make):
    mech = make()
    values = np.random.default_rng(40).integers(0, 9, 3001)
    reports = mech.perturb(values, np.random.default_rng(41))
    assert reports.dtype == np.int64 and reports.shape == (3001, 3)
    np.testing.assert_array_equal(mech.perturb(values, np.random.default_rng(41)), reports)
    total = mech.aggregate(reports)
    assert total.dtype == np.int64
    np.testing.assert_array_equal(total, mech.aggregate(reports[:777])
                                  + mech.aggregate(reports[777:]))
    np.testing.assert_array_equal(mech.aggregate(reports[:0]), np.zeros(9, np.int64))
    np.testing.assert_array_equal(total, naive_support(reports, 9, mech.g))
    # chunk boundaries do not matter
    for chunk in (1, 9 * 7 + 4, 10**9):
        np.testing.assert_array_equal(
            support_counts(reports[:, :2], reports[:, 2], 9, mech.g, chunk), total)
    # the reported key is the one the value was hashed with
    kept = reports[:, 2] == hash_values(reports[:, :2], values, mech.g)
    assert 0.3 < kept.mean() < 0.9

