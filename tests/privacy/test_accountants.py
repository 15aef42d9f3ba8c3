"""Accountants and closed forms: spec check values, independent re-computations,
consistency between methods, vectorized = scalar, monotonicity, and refusals."""

from __future__ import annotations

import math

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting.pld import PLDAccountant
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting.rdp import RdpAccountant as LibRdpAccountant
from scipy import integrate, optimize, special, stats

from netdp.accounting.accountants import ACCOUNTANTS, get_accountant
from netdp.accounting.composition import (
    drv_epsilon,
    kov_exact_delta,
    kov_exact_epsilon,
    kov_het_epsilon,
    kov_het_terms,
    opti,
)
from netdp.accounting.events import (
    ApproxDP,
    Composed,
    Gaussian,
    Laplace,
    PureDP,
    RandomizedResponse,
    Repeated,
    Subsampled,
)
from netdp.accounting.gdp import gaussian_delta, gaussian_epsilon
from netdp.accounting.rdp import (
    DEFAULT_ORDERS,
    INTEGER_ORDERS,
    RdpAccountant,
    rdp_gaussian,
    rdp_laplace,
    rdp_randomized_response,
    rdp_subsampled_gaussian,
    rdp_to_delta,
    rdp_to_epsilon,
)

# The spec states its check values to the digits shown; half a unit of the last digit.
HALF_2DP = 0.005


@pytest.fixture(scope="module")
def gauss_100():
    """Gaussian sigma = 1 composed 100 times, at delta = 1e-5, by PLD (slow: ~4 s), once."""
    return get_accountant("pld").epsilon(Repeated(Gaussian(1.0), 100), 1e-5)


# ---------------------------------------------------------------------------------------
# Check values of the spec
# ---------------------------------------------------------------------------------------


def test_kov_exact_check_values():
    assert abs(kov_exact_epsilon(1.0, 100, 1e-5) - 79.84) <= HALF_2DP
    assert abs(kov_exact_epsilon(0.1, 1000, 1e-5) - 17.79) <= HALF_2DP
    acc = get_accountant("kov-exact")
    assert abs(acc.epsilon(Repeated(PureDP(1.0), 100), 1e-5) - 79.84) <= HALF_2DP


def test_kov_exact_large_k_no_overflow():
    # k = 1e6 steps of eps0 = 0.01: by the CLT the privacy loss is close to Gaussian with
    # mu = sqrt(k) eps0 = 10 (loss per step +-eps0, variance eps0^2 (1 - tanh^2)); the
    # exact value must be finite and within the O(eps0) correction of the GDP value.
    e = kov_exact_epsilon(0.01, 10**6, 1e-5)
    g = gaussian_epsilon(10.0, 1e-5)
    assert np.isfinite(e)
    assert abs(e - g) <= 0.01 * g
    # eps0 = 1, k = 1e6: finite, above the mean loss k eps0 tanh(eps0/2), below KOV-het
    e1 = kov_exact_epsilon(1.0, 10**6, 1e-5)
    _, s1, s2 = kov_het_terms(1.0)
    het = kov_het_epsilon(1e6, 1e6 * s1, 1e6 * s2, 1e-5)
    assert 1e6 * math.tanh(0.5) < e1 < het


def test_pld_and_gdp_gaussian_check_values(gauss_100):
    assert abs(gauss_100 - 91.82) <= 0.05
    gdp = get_accountant("gdp")
    assert abs(gdp.epsilon(Repeated(Gaussian(1.0), 100), 1e-5) - 91.82) <= HALF_2DP
    for name in ("pld", "gdp"):
        e10 = get_accountant(name).epsilon(Repeated(Gaussian(10.0), 100), 1e-5)
        assert abs(e10 - 4.377) <= 0.0005, name


def test_rdp_gaussian_check_value_and_above_pld(gauss_100):
    r = get_accountant("rdp").epsilon(Repeated(Gaussian(1.0), 100), 1e-5)
    assert abs(r - 96.12) <= 0.5
    assert r > gauss_100


# ---------------------------------------------------------------------------------------
# Independent re-computations
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("eps", [0.0, 1.0, 3.0, 7.0])
def test_kov_exact_delta_matches_the_spec_sum_for_small_k(eps):
    eps0, k = 0.5, 20
    direct = (
        sum(
            math.comb(k, ell) * max(math.exp((k - ell) * eps0) - math.exp(eps + ell * eps0), 0.0)
            for ell in range(k + 1)
        )
        / (1 + math.exp(eps0)) ** k
    )
    assert math.isclose(kov_exact_delta(eps0, k, eps), direct, rel_tol=1e-10, abs_tol=1e-300)


def test_kov_exact_single_step_is_randomized_response():
    eps0 = 1.3
    for eps in (0.0, 0.4, 1.0):
        expected = (math.exp(eps0) - math.exp(eps)) / (1 + math.exp(eps0))
        assert math.isclose(kov_exact_delta(eps0, 1, eps), expected, rel_tol=1e-12)
    assert kov_exact_delta(eps0, 1, eps0) == 0.0


def test_kov_exact_epsilon_inverts_delta():
    for eps0, k, d in [(1.0, 100, 1e-5), (0.1, 1000, 1e-8), (0.05, 5000, 1e-3)]:
        e = kov_exact_epsilon(eps0, k, d)
        assert math.isclose(kov_exact_delta(eps0, k, e), d, rel_tol=1e-6)


def test_drv_hand_computed():
    # 100 steps of (0.1, 1e-8)-DP, total delta 1e-5: delta' = 1e-5 - 100 * 1e-8 = 9e-6
    by_hand = 0.1 * math.sqrt(2 * 100 * math.log(1 / 9e-6)) + 100 * 0.1 * (math.exp(0.1) - 1)
    acc = get_accountant("drv")
    assert math.isclose(acc.epsilon(Repeated(ApproxDP(0.1, 1e-8), 100), 1e-5), by_hand)
    assert math.isclose(drv_epsilon(0.1, 9e-6, 100), by_hand)
    # the inverse: delta for that epsilon is the total 1e-5
    assert math.isclose(acc.delta(Repeated(ApproxDP(0.1, 1e-8), 100), by_hand), 1e-5)
    # the step deltas exhaust the budget: no finite epsilon
    assert acc.epsilon(Repeated(ApproxDP(0.1, 2e-7), 100), 1e-5) == math.inf


def test_kov_accountant_uses_the_kov_delta_split():
    # (eps, 1 - (1 - dt) prod(1 - delta_i))-DP: dt = 1 - (1 - delta) / (1 - d0)^k
    k, e0, d0, d = 100, 0.1, 1e-8, 1e-5
    dt = 1 - (1 - d) / (1 - d0) ** k
    _, s1, s2 = kov_het_terms(e0)
    expected = kov_het_epsilon(k * e0, k * s1, k * s2, dt)
    got = get_accountant("kov").epsilon(Repeated(ApproxDP(e0, d0), k), d)
    assert math.isclose(got, expected, rel_tol=1e-9)  # float error of dt is ~1e-11 relative


def test_gaussian_delta_matches_direct_formula():
    rng = np.random.default_rng(1)
    mu = rng.uniform(0.1, 5.0, 200)
    eps = rng.uniform(0.0, 10.0, 200)
    direct = stats.norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)
    np.testing.assert_allclose(gaussian_delta(mu, eps), direct, rtol=1e-8, atol=1e-13)


@pytest.mark.parametrize("alpha", [1.5, 2.0, 5.0])
def test_rdp_laplace_matches_numerical_integration(alpha):
    b, s = 1.3, 1.0
    p = stats.laplace(0, b).pdf
    q = stats.laplace(s, b).pdf
    val, _ = integrate.quad(
        lambda x: p(x) ** alpha * q(x) ** (1 - alpha), -60, 60, points=[0, s], limit=200
    )
    assert math.isclose(rdp_laplace([alpha], b, s)[0], math.log(val) / (alpha - 1), rel_tol=1e-7)


@pytest.mark.parametrize(("eps", "k"), [(0.5, 2), (2.0, 2), (1.0, 6)])
def test_rdp_randomized_response_matches_direct_sum(eps, k):
    a = np.array([1.5, 2.0, 10.0])
    den = math.exp(eps) + k - 1
    p = np.array([math.exp(eps), 1.0] + [1.0] * (k - 2)) / den
    q = np.array([1.0, math.exp(eps)] + [1.0] * (k - 2)) / den
    direct = [math.log(np.sum(p**x * q ** (1 - x))) / (x - 1) for x in a]
    np.testing.assert_allclose(rdp_randomized_response(a, eps, k), direct, rtol=1e-12)
    if k == 2:  # pure eps-DP: R(alpha) <= min(eps, alpha eps^2 / 2) (Bun-Steinke)
        assert np.all(rdp_randomized_response(a, eps, 2) <= np.minimum(eps, a * eps**2 / 2))


@pytest.mark.parametrize("alpha", [2, 3, 5, 8])
def test_rdp_subsampled_gaussian_matches_binomial_expansion(alpha):
    for q, sigma in [(0.01, 0.8), (0.3, 1.5), (1.0, 2.0)]:
        direct = sum(
            math.comb(alpha, j)
            * (1 - q) ** (alpha - j)
            * q**j
            * math.exp((j * j - j) / (2 * sigma**2))
            for j in range(alpha + 1)
        )
        got = rdp_subsampled_gaussian([alpha], q, sigma)[0]
        assert math.isclose(got, math.log(direct) / (alpha - 1), rel_tol=1e-10)


def test_rdp_subsampled_gaussian_limits():
    np.testing.assert_allclose(
        rdp_subsampled_gaussian(INTEGER_ORDERS, 1.0, 1.7), rdp_gaussian(INTEGER_ORDERS, 1.7)
    )
    assert np.all(rdp_subsampled_gaussian(INTEGER_ORDERS, 0.0, 1.0) == 0.0)
    with pytest.raises(ValueError, match="integer"):
        rdp_subsampled_gaussian([2.5], 0.1, 1.0)


def test_rdp_subsampled_gaussian_agrees_with_dp_accounting():
    lib = LibRdpAccountant(orders=list(INTEGER_ORDERS))
    lib.compose(dpa.PoissonSampledDpEvent(0.05, dpa.GaussianDpEvent(2.0)), 200)
    ours = RdpAccountant(INTEGER_ORDERS).epsilon(
        Repeated(Subsampled(Gaussian(2.0), 0.05), 200), 1e-5
    )
    assert math.isclose(ours, lib.get_epsilon(1e-5), rel_tol=1e-9)


def test_rdp_to_epsilon_single_order_by_hand():
    r, d = 0.7, 1e-6
    by_hand = r + math.log(1 / 2) - (math.log(d) + math.log(2)) / 1
    assert math.isclose(rdp_to_epsilon([r], [2.0], d), by_hand)
    assert math.isclose(rdp_to_delta([r], [2.0], by_hand), d, rel_tol=1e-12)


# ---------------------------------------------------------------------------------------
# PLD and the dp-accounting randomized-response bug
# ---------------------------------------------------------------------------------------


def test_dp_accounting_rr_repeat_count_bug_is_present():
    # KNOWN BUG, dp-accounting 0.6.0: PLDAccountant ignores the repeat count of a
    # RandomizedResponseDpEvent and returns the one-shot epsilon. If this test fails, the
    # library has been fixed: re-check PldAccountant's workaround and delete this test.
    eps0 = 1.0
    rr = dpa.RandomizedResponseDpEvent(noise_parameter=2 / (math.exp(eps0) + 1), num_buckets=2)
    rel = dpa.NeighboringRelation.REPLACE_ONE
    a = PLDAccountant(rel)
    a.compose(rr, 100)
    b = PLDAccountant(rel)
    b.compose(dpa.SelfComposedDpEvent(rr, 100))
    assert abs(a.get_epsilon(1e-5) - eps0) <= 1e-3  # one-shot epsilon (wrong)
    assert abs(b.get_epsilon(1e-5) - eps0) <= 1e-3
    # the correct route through the library (what our accountant does)
    c = PLDAccountant(rel)
    c.compose(dpa.ComposedDpEvent([rr] * 100))
    assert abs(c.get_epsilon(1e-5) - 79.84) <= 0.01


def test_pld_composes_binary_rr_correctly():
    exact = kov_exact_epsilon(1.0, 100, 1e-5)  # binary RR is the worst case: exact value
    got = get_accountant("pld").epsilon(Repeated(RandomizedResponse(1.0), 100), 1e-5)
    # pessimistic rounding: at most one grid step (1e-4) of loss per composed step
    assert exact - 1e-9 <= got <= exact + 100 * 1e-4 + 1e-9


def _kary_rr_exact_epsilon(eps: float, k: int, m: int, delta: float) -> float:
    """Exact eps(delta) of m-fold k-ary RR: losses +eps, -eps, 0 w.p. a, b, (k-2) b."""
    den = math.exp(eps) + k - 1
    la, lb = eps - math.log(den), -math.log(den)
    lo = math.log(k - 2) + lb if k > 2 else -math.inf
    terms = []
    for n_plus in range(m + 1):
        for n_minus in range(m - n_plus + 1):
            n0 = m - n_plus - n_minus
            logw = (
                special.gammaln(m + 1)
                - special.gammaln(n_plus + 1)
                - special.gammaln(n_minus + 1)
                - special.gammaln(n0 + 1)
                + n_plus * la
                + n_minus * lb
                + (n0 * lo if n0 else 0.0)
            )
            terms.append((logw, eps * (n_plus - n_minus)))
    logw = np.array([t[0] for t in terms])
    loss = np.array([t[1] for t in terms])

    def delta_of(e: float) -> float:
        keep = loss > e
        return float(np.sum(np.exp(logw[keep]) * -np.expm1(e - loss[keep]))) - delta

    return optimize.brentq(delta_of, 0.0, m * eps, xtol=1e-12)


def test_pld_composes_kary_rr_correctly():
    exact = _kary_rr_exact_epsilon(1.0, 4, 50, 1e-5)
    got = get_accountant("pld").epsilon(Repeated(RandomizedResponse(1.0, domain=4), 50), 1e-5)
    assert exact - 1e-9 <= got <= exact + 50 * 1e-4 + 1e-9


def test_pld_rr_matches_library_composition_by_hand():
    # eps0 chosen off the 1e-4 grid: an ulp in gamma cannot flip the pessimistic rounding
    eps0 = 0.73456
    p = 2 / (math.exp(eps0) + 1)
    by_hand = pld_lib.from_randomized_response(p, 2).self_compose(30).get_epsilon_for_delta(1e-6)
    ours = get_accountant("pld").epsilon(Repeated(RandomizedResponse(eps0), 30), 1e-6)
    assert math.isclose(ours, by_hand, rel_tol=1e-9)
    assert kov_exact_epsilon(eps0, 30, 1e-6) - 1e-9 <= ours


# ---------------------------------------------------------------------------------------
# Consistency between methods
# ---------------------------------------------------------------------------------------


def test_gdp_exact_vs_pld_for_heterogeneous_gaussians():
    ev = Composed((Repeated(Gaussian(2.0), 10), Repeated(Gaussian(3.0, sensitivity=2.0), 5)))
    g = get_accountant("gdp").epsilon(ev, 1e-6)
    p = get_accountant("pld").epsilon(ev, 1e-6)
    assert g - 1e-6 <= p <= g + 0.01  # PLD is pessimistic and exact up to discretisation
    dg = get_accountant("gdp").delta(ev, 2.0)
    dp_ = get_accountant("pld").delta(ev, 2.0)
    assert dg <= dp_ * (1 + 1e-9) and dp_ <= dg * 1.01


@pytest.mark.parametrize(("sigma", "k"), [(0.5, 1), (1.0, 10), (3.0, 50), (20.0, 1000)])
def test_rdp_is_above_exact_gdp(sigma, k):
    ev = Repeated(Gaussian(sigma), k)
    for d in (1e-3, 1e-6, 1e-10):
        assert get_accountant("rdp").epsilon(ev, d) >= get_accountant("gdp").epsilon(ev, d)


def test_pld_tighter_than_rdp_for_subsampled_gaussian():
    ev = Repeated(Subsampled(Gaussian(2.0), 0.05), 200)
    p = get_accountant("pld").epsilon(ev, 1e-5)
    r = get_accountant("rdp").epsilon(ev, 1e-5)
    assert p < r < 1.2 * p  # both sound; RDP loses a little to the conversion


@pytest.mark.parametrize("eps0", [0.01, 0.1, 1.0, 3.0])
@pytest.mark.parametrize("k", [1, 10, 100, 1000])
@pytest.mark.parametrize("delta", [1e-3, 1e-7])
def test_exact_le_kov_het_le_basic_homogeneous(eps0, k, delta):
    ev = Repeated(PureDP(eps0), k)
    exact = get_accountant("kov-exact").epsilon(ev, delta)
    het = get_accountant("kov").epsilon(ev, delta)
    basic = get_accountant("basic").epsilon(ev, delta)
    assert exact <= het * (1 + 1e-12) and het <= basic * (1 + 1e-12)


def test_kov_le_basic_heterogeneous():
    rng = np.random.default_rng(7)
    for _ in range(20):
        eps = rng.uniform(0.0, 2.0, rng.integers(1, 200))
        ev = Composed(tuple(PureDP(e) for e in eps))
        assert get_accountant("kov").epsilon(ev, 1e-6) <= get_accountant("basic").epsilon(ev, 1e-6)


def test_opti_is_min_of_basic_and_drv():
    eps = np.array([0.01, 0.1, 1.0, 3.0])
    k = np.array([10.0, 1000.0, 5.0, 2.0])
    expected = np.minimum(k * eps, eps * np.sqrt(2 * k * np.log(1e7)) + k * eps * np.expm1(eps))
    np.testing.assert_allclose(opti(eps, 1e-7, k), expected, rtol=1e-14)


def test_subsampled_events():
    q, e = 0.1, 1.0
    amp = math.log1p(q * math.expm1(e))
    assert math.isclose(get_accountant("basic").epsilon(Subsampled(PureDP(e), q), 1e-9), amp)
    assert abs(get_accountant("pld").epsilon(Subsampled(PureDP(e), q), 1e-12) - amp) <= 2e-4
    # a subsampled composition: amplify the basic total (sum eps, sum delta)
    ev = Subsampled(Repeated(ApproxDP(0.5, 1e-6), 3), 0.2)
    assert math.isclose(
        get_accountant("basic").epsilon(ev, 0.2 * 3e-6), math.log1p(0.2 * math.expm1(1.5))
    )
    assert get_accountant("basic").epsilon(ev, 0.1 * 3e-6) == math.inf


# ---------------------------------------------------------------------------------------
# Vectorized closed forms equal scalar loops
# ---------------------------------------------------------------------------------------


def _kov_het_reference(eps_list: list[float], dt: float) -> float:
    """The spec's KOV-het formula, written out per pair."""
    s = sum(eps_list)
    s1 = sum(e * (math.exp(e) - 1) / (math.exp(e) + 1) for e in eps_list)
    s2 = sum(e * e for e in eps_list)
    return min(
        s,
        s1 + math.sqrt(2 * s2 * math.log(math.e + math.sqrt(s2) / dt)),
        s1 + math.sqrt(2 * s2 * math.log(1 / dt)),
    )


def test_kov_het_vectorized_equals_loop():
    rng = np.random.default_rng(3)
    pairs = [rng.exponential(0.2, rng.integers(1, 300)) for _ in range(100)]
    dts = rng.uniform(1e-9, 1e-2, 100)
    sums = np.array([[np.sum(t) for t in kov_het_terms(p)] for p in pairs])
    got = kov_het_epsilon(sums[:, 0], sums[:, 1], sums[:, 2], dts)
    ref = [_kov_het_reference(list(p), d) for p, d in zip(pairs, dts, strict=True)]
    np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_kov_het_middle_term_regime_hand_computed():
    # many tiny steps: the ln(e + sqrt(s2)/dt) term is the minimum of the three
    k, e, dt = 5000, 0.01, 1e-6
    s1 = k * e * math.tanh(e / 2)
    s2 = k * e * e
    middle = s1 + math.sqrt(2 * s2 * math.log(math.e + math.sqrt(s2) / dt))
    third = s1 + math.sqrt(2 * s2 * math.log(1 / dt))
    assert middle < third < k * e
    assert math.isclose(kov_het_epsilon(k * e, s1, s2, dt), middle, rel_tol=1e-14)


def test_drv_vectorized_equals_loop():
    rng = np.random.default_rng(4)
    eps, dp, k = rng.uniform(0, 2, 50), rng.uniform(1e-10, 0.5, 50), rng.integers(0, 10**5, 50)
    ref = [
        e * math.sqrt(2 * kk * math.log(1 / d)) + kk * e * math.expm1(e)
        for e, d, kk in zip(eps, dp, k, strict=True)
    ]
    np.testing.assert_allclose(drv_epsilon(eps, dp, k), ref, rtol=1e-13)
    # broadcasting: (5, 1) x (1, 4)
    assert drv_epsilon(eps[:5, None], 1e-6, k[None, :4]).shape == (5, 4)


def test_gaussian_epsilon_vectorized_equals_scalar_root_find():
    rng = np.random.default_rng(5)
    mu = np.exp(rng.uniform(np.log(0.01), np.log(50), 100))
    d = np.exp(rng.uniform(np.log(1e-12), np.log(1e-2), 100))
    got = gaussian_epsilon(mu, d)
    for m, dd, g in zip(mu, d, got, strict=True):
        if gaussian_delta(m, 0.0) <= dd:
            assert g == 0.0
            continue
        ref = optimize.brentq(lambda e, m=m, dd=dd: gaussian_delta(m, e) - dd, 0, 1e4, xtol=1e-13)
        assert math.isclose(g, ref, rel_tol=1e-9, abs_tol=1e-12)


def test_gaussian_epsilon_stable_for_large_mu_and_eps():
    for mu, d in [(100.0, 1e-10), (1000.0, 1e-300), (1e-3, 1e-12)]:
        e = gaussian_epsilon(mu, d)
        assert np.isfinite(e) and e > 0
        assert math.isclose(gaussian_delta(mu, e), d, rel_tol=1e-6)
    assert gaussian_epsilon(0.0, 1e-6) == 0.0
    assert gaussian_delta(1000.0, 1e6) == 0.0  # no overflow of e^eps


def test_rdp_subsampled_gaussian_vectorized_equals_loop():
    rng = np.random.default_rng(6)
    q, s = rng.uniform(0, 1, (3, 4)), rng.uniform(0.5, 5, (3, 4))
    got = rdp_subsampled_gaussian(INTEGER_ORDERS[:20], q, s)
    assert got.shape == (3, 4, 20)
    for i in range(3):
        for j in range(4):
            np.testing.assert_allclose(
                got[i, j], rdp_subsampled_gaussian(INTEGER_ORDERS[:20], q[i, j], s[i, j])
            )


def test_rdp_to_epsilon_batch_equals_rows():
    rng = np.random.default_rng(8)
    rdp = rdp_gaussian(DEFAULT_ORDERS, rng.uniform(0.3, 10, 30)) * rng.integers(1, 100, 30)[:, None]
    d = rng.uniform(1e-9, 1e-3, 30)
    got = rdp_to_epsilon(rdp, DEFAULT_ORDERS, d)
    for i in range(30):
        assert got[i] == rdp_to_epsilon(rdp[i], DEFAULT_ORDERS, d[i])


def test_kov_exact_vectorized_equals_loop():
    e0 = np.array([0.1, 0.5, 1.0])
    k = np.array([[10], [300]])
    got = kov_exact_epsilon(e0, k, 1e-6)
    assert got.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            assert got[i, j] == kov_exact_epsilon(e0[j], int(k[i, 0]), 1e-6)


# ---------------------------------------------------------------------------------------
# Monotonicity
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["basic", "drv", "kov", "kov-exact", "rdp", "pld"])
def test_monotone_in_delta_and_k(name):
    acc = get_accountant(name)
    ks, deltas = [1, 5, 20, 100], [1e-9, 1e-6, 1e-3]
    table = np.array([[acc.epsilon(Repeated(PureDP(0.5), k), d) for d in deltas] for k in ks])
    assert np.all(np.diff(table, axis=0) > 0), table  # increases with k
    assert np.all(np.diff(table, axis=1) <= 0), table  # does not increase with delta
    if name not in ("basic", "kov"):  # these two are flat in delta for small k
        assert np.all(np.diff(table, axis=1) < 0), table


def test_monotone_gdp():
    acc = get_accountant("gdp")
    e = [
        [acc.epsilon(Repeated(Gaussian(2.0), k), d) for d in (1e-9, 1e-6, 1e-3)] for k in (1, 4, 16)
    ]
    e = np.array(e)
    assert np.all(np.diff(e, axis=0) > 0) and np.all(np.diff(e, axis=1) < 0)


# ---------------------------------------------------------------------------------------
# Registry and refusals
# ---------------------------------------------------------------------------------------


def test_registry():
    assert set(ACCOUNTANTS) == {"basic", "drv", "kov", "kov-exact", "rdp", "pld", "gdp"}
    for name, acc in ACCOUNTANTS.items():
        assert acc.name == name and get_accountant(name) is acc
    with pytest.raises(ValueError, match="allowed"):
        get_accountant("moments")
    custom = get_accountant("rdp", orders=[2.0, 3.0])
    np.testing.assert_array_equal(custom.orders, [2.0, 3.0])


@pytest.mark.parametrize(
    ("name", "event", "exc"),
    [
        ("basic", Gaussian(1.0), TypeError),
        ("kov", Repeated(Gaussian(1.0), 3), TypeError),
        ("gdp", PureDP(1.0), TypeError),
        ("gdp", Laplace(1.0), TypeError),
        ("gdp", Subsampled(Gaussian(1.0), 0.5), TypeError),
        ("rdp", ApproxDP(1.0, 1e-6), TypeError),
        ("rdp", Subsampled(Composed((Gaussian(1.0),)), 0.5), TypeError),
        ("pld", Subsampled(Repeated(Gaussian(1.0), 2), 0.5), TypeError),
        ("drv", Composed((PureDP(1.0), PureDP(2.0))), ValueError),
        ("kov-exact", Composed((PureDP(1.0), PureDP(2.0))), ValueError),
    ],
)
def test_unhandled_events_raise(name, event, exc):
    with pytest.raises(exc):
        get_accountant(name).epsilon(event, 1e-6)


def test_basic_delta_budget():
    ev = Repeated(ApproxDP(1.0, 1e-3), 10)
    acc = get_accountant("basic")
    assert acc.epsilon(ev, 1e-2) == 10.0
    assert acc.epsilon(ev, 5e-3) == math.inf
    assert acc.delta(ev, 10.0) == pytest.approx(1e-2) and acc.delta(ev, 9.0) == 1.0
    with pytest.raises(ValueError, match="delta"):
        acc.epsilon(ev, 0.0)
