"""Hadamard response: exact unbiasedness and variance, exact ε, Monte-Carlo, audit, checks."""

import math

import numpy as np
import pytest
from _stats import assert_rejected, estimated_frequencies, mean_ok, variance_ok
from conftest import Z, assert_mean

from netdp.audit import lower_bounds as audit
from netdp.mechanisms._hadamard import fwht, hadamard_entry, next_power_of_two
from netdp.mechanisms._oracle import pure_counts, pure_variance
from netdp.mechanisms.hadamard_response import HadamardResponse

COUNTS = np.array([55, 25, 12, 8, 0, 0])
N_USERS = int(COUNTS.sum())
REPS = 20_000


def output_space(mech: HadamardResponse):
    """All 2m outputs (j, bit) and P[(j, bit) | v] for every input v: shape (d, 2m)."""
    j = np.repeat(np.arange(mech.m), 2)
    bit = np.tile([1, -1], mech.m)
    true_bit = hadamard_entry(np.arange(1, mech.domain + 1)[:, None], j[None, :])
    probs = np.where(bit == true_bit, mech.p, 1 - mech.p) / mech.m
    return j, bit, probs


def test_parameters_and_padding():
    for d, m in [(2, 4), (3, 4), (4, 8), (7, 8), (8, 16), (100, 128), (127, 128)]:
        assert HadamardResponse(1.0, d).m == m == next_power_of_two(d + 1)
    mech = HadamardResponse(1.5, 10)
    e = math.exp(1.5)
    assert mech.c_eps == pytest.approx((e + 1) / (e - 1))
    assert mech.p == pytest.approx(e / (e + 1)) and mech.p_star == mech.p
    assert mech.q_star == 0.5 and mech.p_star - mech.q_star == pytest.approx(0.5 / mech.c_eps)
    f, n = np.array([0.0, 0.25, 1.0]), 300
    np.testing.assert_allclose(mech.variance(f, n), (mech.c_eps**2 - f) / n, rtol=1e-12)
    # the generic pure-LDP variance with (p*, q*) = (e^ε/(e^ε+1), 1/2) is the same
    np.testing.assert_allclose(mech.variance(f, n), pure_variance(f, n, mech.p, 0.5),
                               rtol=1e-12)
    assert mech.describe()["m"] == 16 and mech.describe()["name"] == "hr"


@pytest.mark.parametrize("eps,d", [(0.5, 3), (1.0, 5), (3.0, 8)])
def test_one_report_moments_by_enumeration(eps, d):
    """Exact mean and variance of one report's estimate over all 2m outputs.

    One report's aggregate is ``bit`` at index j; its estimate for item i is
    ``X_i = c_ε bit H[i+1, j]``. Enumeration gives ``E[X_i] = 1[i = v]`` (unbiased) and
    ``Var[X_i] = c_ε² - 1[i = v]`` = ``variance(1[i = v], 1)``; reports are independent and
    the estimate is linear, so this proves both for every n.
    """
    mech = HadamardResponse(eps, d)
    j, bit, probs = output_space(mech)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-12)
    single = np.zeros((2 * mech.m, mech.m), dtype=np.int64)
    single[np.arange(2 * mech.m), j] = bit
    est = mech.estimate_counts(single, 1)  # (outputs, d)
    np.testing.assert_allclose(np.abs(est), mech.c_eps, rtol=1e-12)  # |X_i| = c_ε always
    for v in range(d):
        onehot = np.eye(d)[v]
        mean = probs[v] @ est
        var = probs[v] @ (est - mean) ** 2
        np.testing.assert_allclose(mean, onehot, atol=1e-12)
        np.testing.assert_allclose(var, mech.variance(onehot, 1), rtol=1e-10)
    # the generic estimator on the support counts (bit H[i+1, j] = +1) is the same one
    support = (1 + est / mech.c_eps) / 2
    np.testing.assert_allclose(pure_counts(support, 1, mech.p_star, mech.q_star), est,
                               atol=1e-12)


def test_exact_expected_aggregate_gives_the_true_counts():
    mech = HadamardResponse(0.7, 6)
    j, bit, probs = output_space(mech)
    expected_agg = np.zeros(mech.m)
    for v, c in enumerate(COUNTS):
        np.add.at(expected_agg, j, c * probs[v] * bit)
    np.testing.assert_allclose(mech.estimate_counts(expected_agg, N_USERS), COUNTS,
                               atol=1e-9)
    # the 0-th transform coefficient (all-ones row, no item) has expectation 0
    assert abs(mech.c_eps * fwht(expected_agg)[0]) < 1e-9


def test_monte_carlo_unbiased_with_the_closed_form_variance():
    mech = HadamardResponse(1.0, len(COUNTS))
    est = estimated_frequencies(mech, COUNTS, REPS, 11)
    f = COUNTS / N_USERS
    var = mech.variance(f, N_USERS)
    for i in range(len(f)):
        assert_mean(est[:, i], f[i], std=math.sqrt(var[i]))
        assert variance_ok(est[:, i], var[i]), (i, est[:, i].var(ddof=1), var[i])
    # wrong constants fail: no frequency term, a factor 2
    for name, wrong in {"no f term": np.full_like(f, mech.c_eps**2 / N_USERS),
                        "twice": 2 * var}.items():
        assert not all(variance_ok(est[:, i], wrong[i]) for i in range(len(f))), name
    # c_ε with e^{ε/2} (as written for HCMS in seed 003 §3) biases every estimate
    half = math.exp(mech.epsilon / 2)
    scaled = est * ((half + 1) / (half - 1)) / mech.c_eps
    assert not mean_ok(scaled[:, 0], f[0], math.sqrt(var[0]))
    # an extra factor m per report (E_j already averages over the m columns) fails too
    assert not mean_ok(est[:, 0] * mech.m, f[0], math.sqrt(var[0]))


@pytest.mark.parametrize("eps,d", [(0.3, 5), (1.0, 7), (4.0, 12)])
def test_exact_epsilon_by_likelihood_ratio(eps, d):
    """Per coefficient j, P[bit | v] / P[bit | v'] is 1 or e^ε; e^ε is reached for every pair."""
    mech = HadamardResponse(eps, d)
    _, _, probs = output_space(mech)
    ratio = probs[:, None, :] / probs[None, :, :]  # (v, v', outputs)
    assert ratio.max() == pytest.approx(math.exp(eps), rel=1e-12)
    worst_per_pair = ratio.max(axis=2)
    off_diagonal = ~np.eye(d, dtype=bool)
    np.testing.assert_allclose(worst_per_pair[off_diagonal], math.exp(eps), rtol=1e-12)
    logs = np.log(ratio[off_diagonal])
    assert np.all(np.isclose(logs, 0.0) | np.isclose(np.abs(logs), eps))


def hr_rates_match(mech, values: np.ndarray, reports: np.ndarray) -> None:
    """Read p (share of reports whose bit equals ``H[v+1, j]``) from the reports; check it
    within Z standard errors, and ε inside the interval of ``ln(p/(1-p))``."""
    n = len(values)
    truth = hadamard_entry(values + 1, reports[:, 0])
    p_hat = np.mean(reports[:, 1] == truth)
    se = math.sqrt(p_hat * (1 - p_hat) / n)
    assert abs(p_hat - mech.p) <= Z * se, ("p", p_hat, mech.p)
    lo, hi = p_hat - Z * se, p_hat + Z * se
    eps_lo, eps_hi = math.log(lo / (1 - lo)), math.log(hi / (1 - hi))
    assert eps_lo <= mech.epsilon <= eps_hi, ("epsilon", eps_lo, mech.epsilon, eps_hi)
    assert eps_hi - eps_lo < 0.2
    # coefficients are uniform over [0, m): every count within Z standard errors
    counts = np.bincount(reports[:, 0], minlength=mech.m)
    share = 1 / mech.m
    assert np.all(np.abs(counts - n * share) <= Z * math.sqrt(n * share * (1 - share)))


def buggy_perturb(mech, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Flips with CMS's probability 1/(1+e^{ε/2}) instead of HCMS's 1/(1+e^ε)."""
    j = rng.integers(0, mech.m, len(values))
    bit = hadamard_entry(values + 1, j)
    flip = rng.random(len(values)) < 1 / (1 + math.exp(mech.epsilon / 2))
    return np.column_stack([j, np.where(flip, -bit, bit)])


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_empirical_rates_give_the_claimed_epsilon(eps):
    mech = HadamardResponse(eps, 9)
    rng = np.random.default_rng(21)
    values = rng.integers(0, 9, 200_000)
    hr_rates_match(mech, values, mech.perturb(values, rng))
    with pytest.raises(AssertionError):
        hr_rates_match(mech, values, buggy_perturb(mech, values, rng))


@pytest.mark.parametrize("eps", [0.25, 1.0, 3.0])
def test_clopper_pearson_audit_is_positive_and_below_epsilon(eps):
    """Inputs 0 and 1 (rows 1 and 2); rejection set fixed in advance: the rows differ at j
    and the bit equals row 2's entry."""
    mech, trials = HadamardResponse(eps, 4), 100_000
    rng = np.random.default_rng(31)
    out0 = mech.perturb(np.zeros(trials, dtype=int), rng)
    out1 = mech.perturb(np.ones(trials, dtype=int), rng)

    def in_set(reports):
        h1, h2 = hadamard_entry(1, reports[:, 0]), hadamard_entry(2, reports[:, 0])
        return (h1 != h2) & (reports[:, 1] == h2)

    lb = audit.audit_membership(in_set(out0), in_set(out1))
    assert 0 < lb <= eps
    assert lb > 0.6 * eps


def test_bad_parameters_name_the_parameter():
    mech, rng = HadamardResponse(1.0, 5), np.random.default_rng(0)
    good = mech.perturb(np.array([0, 1, 4]), rng)
    bad_bit, bad_j = good.copy(), good.copy()
    bad_bit[0, 1] = 0
    bad_j[0, 0] = mech.m
    cases = [(lambda: HadamardResponse(0.0, 4), "epsilon"),
             (lambda: HadamardResponse(-0.1, 4), "epsilon"),
             (lambda: HadamardResponse(math.nan, 4), "epsilon"),
             (lambda: HadamardResponse(1.0, 1), "domain"),
             (lambda: HadamardResponse(1.0, 4.5), "domain"),
             (lambda: mech.perturb(np.array([5]), rng), "values"),
             (lambda: mech.perturb(np.array([-1]), rng), "values"),
             (lambda: mech.aggregate(good[:, :1]), "reports"),
             (lambda: mech.aggregate(bad_bit), "reports"),
             (lambda: mech.aggregate(bad_j), "reports"),
             (lambda: mech.estimate_counts(np.zeros(5), 3), "aggregate"),
             (lambda: mech.estimate_counts(np.zeros(8), 0), "n"),
             (lambda: mech.variance(np.zeros(5), -3), "n")]
    assert_rejected(cases)


def test_aggregate_is_additive_seeded_and_shift_invariant():
    mech = HadamardResponse(1.0, 11)
    values = np.random.default_rng(40).integers(0, 11, 4001)
    reports = mech.perturb(values, np.random.default_rng(41))
    assert reports.dtype == np.int64 and reports.shape == (4001, 2)
    assert set(np.unique(reports[:, 1])) <= {-1, 1}
    np.testing.assert_array_equal(mech.perturb(values, np.random.default_rng(41)), reports)
    total = mech.aggregate(reports)
    assert total.dtype == np.int64 and total.shape == (mech.m,)
    np.testing.assert_array_equal(total, mech.aggregate(reports[:1500])
                                  + mech.aggregate(reports[1500:]))
    np.testing.assert_array_equal(mech.aggregate(reports[:0]), np.zeros(mech.m, np.int64))
    # same as bincount with the bits as weights
    np.testing.assert_array_equal(
        total, np.bincount(reports[:, 0], weights=reports[:, 1], minlength=mech.m))
    # items sit on balanced rows 1..d: a uniform shift of the per-coefficient sums cancels
    np.testing.assert_allclose(mech.estimate_counts(total + 7, 4001),
                               mech.estimate_counts(total, 4001), atol=1e-9)
