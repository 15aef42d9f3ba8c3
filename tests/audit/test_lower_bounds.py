import math

import numpy as np
import pytest
from scipy import stats

from netdp.audit import lower_bounds as audit
from netdp.mechanisms import Gaussian, Laplace


def test_clopper_pearson_upper_brackets_the_rate():
    # 0 errors in n trials: the exact bound is 1 - (1-c)^(1/n).
    assert audit.clopper_pearson_upper(0, 100, 0.95) == pytest.approx(1 - 0.05 ** (1 / 100))
    assert audit.clopper_pearson_upper(100, 100) == 1.0
    hi = audit.clopper_pearson_upper(300, 1000, 0.95)
    assert 0.3 < hi < 0.3 + 2 * math.sqrt(0.3 * 0.7 / 1000)


def test_laplace_anchor():
    """accounting.md §5: Laplace at ε = 1, 1e5 trials per side, ε_lb about 0.98."""
    mech = Laplace(1.0)
    rng = np.random.default_rng(5)
    out0 = mech.perturb(np.zeros(100_000), rng)
    out1 = mech.perturb(np.ones(100_000), rng)
    lb = audit.audit_threshold(out0, out1, threshold=0.0)
    assert 0.96 < lb <= 1.0


def test_exact_rates_give_the_exact_epsilon_in_the_limit():
    # With huge trial counts the bound approaches the population value ln(e) = 1.
    trials = 10**9
    fp, fn = int(0.5 * trials), int(0.5 * math.exp(-1) * trials)
    assert audit.epsilon_lower_bound(fp, fn, trials) == pytest.approx(1.0, abs=2e-4)


def test_gaussian_mu_fit_is_tight_and_below_the_truth():
    mech = Gaussian(1.0, 1e-5)
    rng = np.random.default_rng(6)
    out0 = mech.perturb(np.zeros(200_000), rng)
    out1 = mech.perturb(np.ones(200_000), rng)
    fp = int((out0 > 0.5).sum())
    fn = int((out1 <= 0.5).sum())
    mu = audit.gaussian_mu_lower_bound(fp, fn, 200_000)
    true_mu = 1 / mech.sigma
    assert true_mu * 0.9 < mu <= true_mu


def test_no_evidence_gives_zero():
    assert audit.epsilon_lower_bound(500, 500, 1000) == 0.0
    assert audit.audit_membership(np.ones(10, bool), np.zeros(10, bool)) == 0.0


def test_bound_holds_at_the_stated_confidence():
    """Over many audits of a fair test (true ε = 0) almost none prove ε > 0."""
    rng = np.random.default_rng(7)
    trials = 2000
    proofs = sum(audit.epsilon_lower_bound(rng.binomial(trials, 0.5),
                                           rng.binomial(trials, 0.5), trials) > 0
                 for _ in range(400))
    # Each side fails with probability <= 2.5 %, so >0 happens at most ~5 % of the time.
    assert proofs <= stats.binom.ppf(1 - 1e-6, 400, 0.05)
