"""SUE and OUE: closed forms, exact ε, unbiasedness, variance, audit, input checks."""

import itertools
import math

import numpy as np
import pytest
from _stats import assert_rejected, estimated_frequencies, mean_ok, variance_ok
from conftest import Z, assert_mean

from netdp.audit import lower_bounds as audit
from netdp.mechanisms import _oracle
from netdp.mechanisms._oracle import pure_variance
from netdp.mechanisms.unary import OUE, SUE

# One population for the Monte-Carlo checks: n users over d = 6 categories, one frequent
# item (f = 0.55) so that a frequency term of the variance is visible, and empty ones.
COUNTS = np.array([55, 25, 12, 8, 0, 0])
N_USERS = int(COUNTS.sum())
REPS = 20_000


def test_probabilities_and_closed_forms():
    eps = 1.3
    sue, oue = SUE(eps, 5), OUE(eps, 5)
    h = math.exp(eps / 2)
    assert sue.p == pytest.approx(h / (h + 1)) and sue.q == pytest.approx(1 / (h + 1))
    assert oue.p == 0.5 and oue.q == pytest.approx(1 / (math.exp(eps) + 1))
    assert (sue.p_star, sue.q_star, oue.p_star, oue.q_star) == (sue.p, sue.q, oue.p, oue.q)
    f, n = np.array([0.0, 0.3, 1.0]), 1000
    # SUE: p + q = 1, so no frequency term
    np.testing.assert_allclose(sue.variance(f, n), h / (n * (h - 1) ** 2), rtol=1e-12)
    # OUE: the spec's 4 e^ε / (n (e^ε-1)^2) at f = 0, plus f / n
    e = math.exp(eps)
    np.testing.assert_allclose(oue.variance(f, n), (4 * e / (e - 1) ** 2 + f) / n, rtol=1e-12)
    assert sue.describe()["name"] == "sue" and oue.describe()["q_star"] == oue.q


@pytest.mark.parametrize("cls", [SUE, OUE])
def test_one_report_moments_by_enumeration(cls):
    """Exact mean and variance of one report's estimate, summing over all 2^d outputs.

    The estimate is linear in the aggregate and reports are independent, so ``E = 1[i=v]``
    and ``Var = variance(1[i=v], 1)`` for one report prove unbiasedness and the closed
    form for every n.
    """
    mech, d = cls(0.8, 4), 4
    outputs = np.array(list(itertools.product([0, 1], repeat=d)), dtype=np.uint8)
    est = mech.estimate_counts(outputs.astype(float), 1)  # one report: aggregate = its bits
    for v in range(d):
        onehot = np.eye(d)[v]
        prob_one = np.where(onehot == 1, mech.p, mech.q)
        probs = np.prod(np.where(outputs == 1, prob_one, 1 - prob_one), axis=1)
        assert probs.sum() == pytest.approx(1.0)
        mean = probs @ est
        var = probs @ (est - mean) ** 2
        np.testing.assert_allclose(mean, onehot, atol=1e-12)
        np.testing.assert_allclose(var, mech.variance(onehot, 1), rtol=1e-10)


@pytest.mark.parametrize("cls,seed", [(SUE, 11), (OUE, 12)])
def test_monte_carlo_unbiased_with_the_closed_form_variance(cls, seed):
    mech = cls(1.0, len(COUNTS))
    est = estimated_frequencies(mech, COUNTS, REPS, seed)
    f = COUNTS / N_USERS
    var = mech.variance(f, N_USERS)
    for i in range(len(COUNTS)):
        assert_mean(est[:, i], f[i], std=math.sqrt(var[i]))
        assert variance_ok(est[:, i], var[i]), (i, est[:, i].var(ddof=1), var[i])

    # The same tolerances reject wrong constants.
    e, h = math.exp(mech.epsilon), math.exp(mech.epsilon / 2)
    wrong_var = {"twice": 2 * var,
                 "no f term": pure_variance(0 * f, N_USERS, mech.p, mech.q),
                 "spurious f term": var + f / N_USERS,
                 "e^eps for e^(eps/2)": np.full_like(f, e / (N_USERS * (e - 1) ** 2))}
    if cls is SUE:
        del wrong_var["no f term"]  # SUE's f term is zero: p + q = 1
    else:
        del wrong_var["spurious f term"]
    for name, wrong in wrong_var.items():
        assert not all(variance_ok(est[:, i], wrong[i]) for i in range(len(f))), name
    # A mis-specified q* (the other scheme's q) biases the estimate, and it shows.
    other_q = 1 / (h + 1) if cls is OUE else 1 / (e + 1)
    agg = est * N_USERS * (mech.p - mech.q) + N_USERS * mech.q
    biased = (agg - N_USERS * other_q) / (mech.p - other_q) / N_USERS
    assert not all(mean_ok(biased[:, i], f[i], math.sqrt(var[i])) for i in range(len(f)))


@pytest.mark.parametrize("cls", [SUE, OUE])
@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0])
def test_exact_epsilon_by_likelihood_ratio(cls, eps):
    """Worst-case ratio over all 2^d outputs and all pairs of inputs is exactly e^ε."""
    mech, d = cls(eps, 4), 4
    outputs = np.array(list(itertools.product([0, 1], repeat=d)))
    log_probs = []
    for v in range(d):
        prob_one = np.where(np.arange(d) == v, mech.p, mech.q)
        log_probs.append(np.log(np.where(outputs == 1, prob_one, 1 - prob_one)).sum(axis=1))
    log_probs = np.array(log_probs)  # (inputs, outputs)
    worst = max((log_probs[a] - log_probs[b]).max() for a in range(d) for b in range(d))
    assert worst == pytest.approx(eps, rel=1e-12)
    p, q = mech.p, mech.q
    assert math.log(p * (1 - q) / (q * (1 - p))) == pytest.approx(eps, rel=1e-12)


def ue_rates_match(mech, values: np.ndarray, reports: np.ndarray) -> None:
    """Read p and q from the reports and check them, and ε, against the claims.

    ``p_hat``: share of 1s on the true bit; ``q_hat``: share of 1s on the other bits.
    Each must lie within Z standard errors of the mechanism's p and q, and the claimed ε
    inside the interval of ``ln(p(1-q)/(q(1-p)))`` those Z-intervals give.
    """
    n, d = reports.shape
    true_bits = reports[np.arange(n), values].astype(float)
    p_hat = true_bits.mean()
    q_hat = (reports.sum(dtype=np.int64) - true_bits.sum()) / (n * (d - 1))
    se_p = math.sqrt(p_hat * (1 - p_hat) / n)
    se_q = math.sqrt(q_hat * (1 - q_hat) / (n * (d - 1)))
    assert abs(p_hat - mech.p) <= Z * se_p, ("p", p_hat, mech.p)
    assert abs(q_hat - mech.q) <= Z * se_q, ("q", q_hat, mech.q)
    p_lo, p_hi, q_lo, q_hi = p_hat - Z * se_p, p_hat + Z * se_p, q_hat - Z * se_q, q_hat + Z * se_q
    eps_lo = math.log(p_lo * (1 - q_hi) / (q_hi * (1 - p_lo)))
    eps_hi = math.log(p_hi * (1 - q_lo) / (q_lo * (1 - p_hi)))
    assert eps_lo <= mech.epsilon <= eps_hi, ("epsilon", eps_lo, mech.epsilon, eps_hi)
    assert eps_hi - eps_lo < 0.2  # the check has teeth


def buggy_perturb(mech, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """pure-LDP's UEClient before v1.2.0 (issue #11): every bit drawn with q, then the true
    bit set to 1 with probability p, so it is 1 with probability ``p + (1-p) q``."""
    n = len(values)
    bits = (rng.random((n, mech.domain)) < mech.q).astype(np.uint8)
    keep = rng.random(n) < mech.p
    bits[np.arange(n)[keep], values[keep]] = 1
    return bits


@pytest.mark.parametrize("cls,eps", [(SUE, 0.5), (OUE, 0.5), (SUE, 2.0), (OUE, 2.0)])
def test_empirical_rates_give_the_claimed_epsilon(cls, eps):
    mech = cls(eps, 5)
    rng = np.random.default_rng(21)
    values = rng.integers(0, 5, 200_000)
    ue_rates_match(mech, values, mech.perturb(values, rng))
    # the historical bug keeps the true bit with the wrong probability, and fails
    with pytest.raises(AssertionError):
        ue_rates_match(mech, values, buggy_perturb(mech, values, rng))


@pytest.mark.parametrize("cls,eps", [(SUE, 1.0), (OUE, 1.0), (OUE, 0.25)])
def test_clopper_pearson_audit_is_positive_and_below_epsilon(cls, eps):
    """Inputs 0 and 1; rejection set fixed in advance: bit 0 clear and bit 1 set."""
    mech, trials = cls(eps, 4), 100_000
    rng = np.random.default_rng(31)
    out0 = mech.perturb(np.zeros(trials, dtype=int), rng)
    out1 = mech.perturb(np.ones(trials, dtype=int), rng)

    def in_set(reports):
        return (reports[:, 0] == 0) & (reports[:, 1] == 1)

    lb = audit.audit_membership(in_set(out0), in_set(out1))
    assert 0 < lb <= eps
    assert lb > 0.75 * eps  # this set is the likelihood-ratio test: the bound is tight


def test_bad_parameters_name_the_parameter():
    cases = [(lambda: SUE(0.0, 4), "epsilon"), (lambda: OUE(-1.0, 4), "epsilon"),
             (lambda: SUE(math.nan, 4), "epsilon"), (lambda: OUE(math.inf, 4), "epsilon"),
             (lambda: SUE(1.0, 1), "domain"), (lambda: OUE(1.0, 2.5), "domain"),
             (lambda: SUE(1.0, True), "domain")]
    mech, rng = OUE(1.0, 4), np.random.default_rng(0)
    cases += [(lambda: mech.perturb(np.array([0, 4]), rng), "values"),
              (lambda: mech.perturb(np.array([-1]), rng), "values"),
              (lambda: mech.perturb(np.array([0.5]), rng), "values"),
              (lambda: mech.perturb(np.zeros((2, 2), int), rng), "values"),
              (lambda: mech.aggregate(np.zeros((3, 5), np.uint8)), "reports"),
              (lambda: mech.estimate_counts(np.zeros(3), 10), "aggregate"),
              (lambda: mech.estimate_counts(np.zeros(4), 0), "n"),
              (lambda: mech.variance(np.zeros(4), 0), "n")]
    assert_rejected(cases)
    assert mech.perturb(np.array([0.0, 3.0]), rng).shape == (2, 4)  # integral floats are fine


@pytest.mark.parametrize("cls", [SUE, OUE])
def test_aggregate_is_additive_and_seeded(cls):
    mech = cls(1.0, 7)
    values = np.random.default_rng(40).integers(0, 7, 5001)
    reports = mech.perturb(values, np.random.default_rng(41))
    assert reports.dtype == np.uint8 and reports.shape == (5001, 7)
    np.testing.assert_array_equal(mech.perturb(values, np.random.default_rng(41)), reports)
    a, b = reports[:1234], reports[1234:]
    assert mech.aggregate(reports).dtype == np.int64
    np.testing.assert_array_equal(mech.aggregate(reports), mech.aggregate(a) + mech.aggregate(b))
    np.testing.assert_array_equal(mech.aggregate(reports[:0]), np.zeros(7, np.int64))


def test_chunked_perturbation_draws_the_same_bits(monkeypatch):
    """Chunking the uniforms by rows consumes the stream in order: same reports."""
    mech = OUE(1.0, 6)
    values = np.random.default_rng(1).integers(0, 6, 1000)
    whole = mech.perturb(values, np.random.default_rng(2))
    monkeypatch.setattr(_oracle, "CHUNK_ELEMENTS", 7 * 6 + 5)  # 7 rows per chunk
    chunked = mech.perturb(values, np.random.default_rng(2))
    np.testing.assert_array_equal(whole, chunked)
