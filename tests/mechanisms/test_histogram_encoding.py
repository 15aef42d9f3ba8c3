import itertools
import json
import math

import numpy as np
import pytest
from _stats import estimated_frequencies, std_ok
from conftest import assert_mean
from scipy import stats

from netdp.audit import lower_bounds as audit
from netdp.core.errors import InputError
from netdp.mechanisms.histogram_encoding import SHE, THE, the_probabilities

# (a) unbiased, closed-form variance ------------------------------------------------------

@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_she_unbiased_with_the_closed_form_variance(eps):
    mech = SHE(eps, 4)
    counts = np.array([100, 50, 50, 0])
    n, f = counts.sum(), counts / counts.sum()
    est = estimated_frequencies(mech, counts, runs=4000, seed=31)
    var = mech.variance(f, n)
    assert var == pytest.approx(np.full(4, 8 / (eps**2 * n)), rel=1e-13)
    for i in range(4):
        assert_mean(est[:, i], f[i], std=math.sqrt(var[i]))
        assert std_ok(est[:, i], var[i])
        assert not std_ok(est[:, i], var[i] / 2)  # Lap(1/ε)-style constant is rejected


@pytest.mark.parametrize("eps,theta", [(1.0, None), (3.0, None), (1.0, 0.9)])
def test_the_unbiased_with_the_exact_variance(eps, theta):
    mech = THE(eps, 4, theta)
    counts = np.array([150, 100, 50, 0])
    n, f = counts.sum(), counts / counts.sum()
    est = estimated_frequencies(mech, counts, runs=4000, seed=32)
    var = mech.variance(f, n)
    p, q = mech.p_star, mech.q_star
    assert var == pytest.approx(q * (1 - q) / (n * (p - q) ** 2)
                                + f * (1 - p - q) / (n * (p - q)), rel=1e-13)
    she_var = 8 / (eps**2 * n)
    for i in range(4):
        assert_mean(est[:, i], f[i], std=math.sqrt(var[i]))
        assert std_ok(est[:, i], var[i])
        assert not std_ok(est[:, i], she_var)  # THE beats SHE, and the check sees it


def test_reports_and_aggregates():
    rng = np.random.default_rng(33)
    for mech, dtype in ((SHE(1.0, 5), np.float64), (THE(1.0, 5), np.uint8)):
        a = mech.perturb(rng.integers(0, 5, 400), rng)
        b = mech.perturb(rng.integers(0, 5, 100), rng)
        assert a.shape == (400, 5) and a.dtype == dtype
        agg = mech.aggregate(np.concatenate([a, b]))
        np.testing.assert_allclose(agg, mech.aggregate(a) + mech.aggregate(b), rtol=1e-12)
        assert agg.shape == (5,)
        np.testing.assert_allclose(mech.estimate(np.concatenate([a, b])),
                                   mech.estimate_counts(agg, 500) / 500)
    assert set(np.unique(a)) <= {0, 1}


# THE's p*, q*, θ ---------------------------------------------------------------------------

@pytest.mark.parametrize("eps,theta", [(0.5, 0.6), (1.0, 0.75), (4.0, 0.95), (1.0, 0.0),
                                       (1.0, 1.0)])
def test_the_probabilities_are_laplace_tails(eps, theta):
    p, q = the_probabilities(eps, theta)
    assert p == pytest.approx(stats.laplace.sf(theta, loc=1, scale=2 / eps), rel=1e-13)
    assert q == pytest.approx(stats.laplace.sf(theta, loc=0, scale=2 / eps), rel=1e-13)
    assert p == pytest.approx(1 - math.exp(eps * (theta - 1) / 2) / 2, rel=1e-13)
    assert q == pytest.approx(math.exp(-eps * theta / 2) / 2, rel=1e-13)


def test_the_bits_follow_p_star_and_q_star():
    mech = THE(1.0, 3)
    n = 200_000
    bits = mech.perturb(np.zeros(n, int), np.random.default_rng(34))
    p, q = mech.support_probabilities()
    assert_mean(bits[:, 0], p, std=math.sqrt(p * (1 - p)))
    for j in (1, 2):
        assert_mean(bits[:, j], q, std=math.sqrt(q * (1 - q)))


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 5.0, 10.0])
def test_the_default_theta_minimises_the_variance(eps):
    mech = THE(eps, 8)
    assert mech.theta_optimised and 0.5 < mech.theta < 1
    grid = np.linspace(0.0, 1.0, 20001)
    p = 1 - np.exp(eps * (grid - 1) / 2) / 2
    q = np.exp(-eps * grid / 2) / 2
    factor = q * (1 - q) / (p - q) ** 2
    best = mech.q_star * (1 - mech.q_star) / (mech.p_star - mech.q_star) ** 2
    assert best <= factor.min() * (1 + 1e-9)
    assert abs(mech.theta - grid[factor.argmin()]) < 1e-3
    explicit = THE(eps, 8, theta=0.7)
    assert explicit.theta == 0.7 and not explicit.theta_optimised
    assert float(explicit.variance(np.array(0.0), 100)) >= float(mech.variance(np.array(0.0), 100))


# (b) exact ε ------------------------------------------------------------------------------

@pytest.mark.parametrize("eps,theta", [(0.5, None), (1.0, None), (4.0, None), (1.0, 0.55),
                                       (2.0, 0.0)])
def test_the_exact_epsilon_by_likelihood_ratios(eps, theta):
    """Enumerate every bit vector (d = 3) and every pair of inputs."""
    mech = THE(eps, 3, theta)
    p, q = mech.p_star, mech.q_star
    bit_vectors = np.array(list(itertools.product((0, 1), repeat=3)))
    law = np.empty((3, len(bit_vectors)))
    for v in range(3):
        one = np.where(np.arange(3) == v, p, q)  # P[bit = 1] per bin
        law[v] = np.prod(np.where(bit_vectors == 1, one, 1 - one), axis=1)
    assert law.sum(axis=1) == pytest.approx(np.ones(3), rel=1e-13)
    worst = (np.log(law[:, None, :]) - np.log(law[None, :, :])).max()
    assert worst == pytest.approx(mech.epsilon_exact, rel=1e-12)
    s, t = eps / 2, mech.theta
    closed = math.log((2 * math.exp(s * (1 - t)) - 1) * (2 * math.exp(s * t) - 1))
    assert mech.epsilon_exact == pytest.approx(closed, rel=1e-12)
    assert worst <= eps  # thresholding is post-processing of SHE: never above ε
    assert math.log(p / q) <= eps  # the per-bit pure-LDP condition p*/q* <= e^ε


def test_she_exact_epsilon_on_a_grid():
    """Log-density ratio of the noisy one-hot vector, e_0 vs e_1, peaks at exactly ε."""
    eps = 1.3
    mech = SHE(eps, 2)
    y = np.linspace(-3, 4, 701)
    y0, y1 = np.meshgrid(y, y, indexing="ij")
    lap = stats.laplace(scale=mech.scale)
    log_ratio = (lap.logpdf(y0 - 1) + lap.logpdf(y1)) - (lap.logpdf(y0) + lap.logpdf(y1 - 1))
    assert log_ratio.max() == pytest.approx(eps, rel=1e-12)
    assert np.abs(log_ratio).max() <= eps * (1 + 1e-12)


# (c) audit --------------------------------------------------------------------------------

@pytest.mark.parametrize("cls,seed", [(SHE, 35), (THE, 36)])
@pytest.mark.parametrize("eps", [1.0, 3.0])
def test_audit(cls, seed, eps):
    """Inputs 0 vs 1; S = {y_1 >= 1, y_0 <= 0}, for THE's bits {b_1 = 1, b_0 = 0}.

    SHE: probability 1/4 vs e^{-ε}/4. THE: ratio p*(1-q*)/(q*(1-p*)) = e^{ε_exact} <= e^ε.
    """
    mech = cls(eps, 2)
    exact = getattr(mech, "epsilon_exact", eps)
    n = 100_000
    rng = np.random.default_rng(seed)
    r0 = mech.perturb(np.zeros(n, int), rng)
    r1 = mech.perturb(np.ones(n, int), rng)
    in_set = [(r[:, 1] >= 1) & (r[:, 0] <= 0) for r in (r0, r1)]
    lb = audit.audit_membership(*in_set)
    assert 0.8 * exact < lb <= exact <= eps


# (d) bad parameters -----------------------------------------------------------------------

@pytest.mark.parametrize("cls", [SHE, THE])
def test_bad_parameters_are_refused(cls):
    for eps in (0.0, -2.0, math.inf, math.nan):
        with pytest.raises(InputError, match="epsilon"):
            cls(eps, 4)
    for d in (1, 3.0, False):
        with pytest.raises(InputError, match="domain") as info:
            cls(1.0, d)
        assert info.value.param == "domain"
    mech = cls(1.0, 4)
    rng = np.random.default_rng(0)
    for bad in (np.array([4]), np.array([-1]), np.array([0.5]), np.zeros((3, 1), int)):
        with pytest.raises(InputError, match="values"):
            mech.perturb(bad, rng)
    with pytest.raises(InputError, match="reports"):
        mech.aggregate(np.zeros((3, 5)))


def test_the_theta_is_checked_and_she_has_no_support():
    for theta in (-0.1, 1.5, math.nan):
        with pytest.raises(InputError, match="theta") as info:
            THE(1.0, 4, theta)
        assert info.value.param == "theta"
    with pytest.raises(NotImplementedError):
        SHE(1.0, 4).support_probabilities()


def test_describe_is_json_safe():
    for mech in (SHE(1.0, 4), THE(1.0, 4)):
        info = json.loads(json.dumps(mech.describe()))
        assert info["name"] == mech.name and info["epsilon"] == 1.0 and info["domain"] == 4
    info = THE(2.0, 4).describe()
    assert {"theta", "p_star", "q_star", "epsilon_exact"} <= set(info)
