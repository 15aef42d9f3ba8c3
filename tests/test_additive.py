import math

import numpy as np
import pytest
from conftest import Z, assert_mean
from scipy import integrate, stats

from netdp.core.errors import InputError
from netdp.mechanisms import Gaussian, Laplace, additive
from netdp.mechanisms.noise import analytic_sigma, classic_sigma, gaussian_delta


def _hockey_stick(sigma: float, eps: float, sens: float) -> float:
    """δ(ε) by numerical integration of max(p - e^ε q, 0) for N(0,σ²) vs N(Δ,σ²)."""
    p, q = stats.norm(0, sigma), stats.norm(sens, sigma)
    f = lambda x: max(p.pdf(x) - math.exp(eps) * q.pdf(x), 0.0)  # noqa: E731
    # the integrand vanishes right of the crossing point x* = Δ/2 - εσ²/Δ
    cross = sens / 2 - eps * sigma**2 / sens
    val, _ = integrate.quad(f, -np.inf, cross, epsabs=1e-14, epsrel=1e-10)
    return val


@pytest.mark.parametrize("sigma,eps,sens", [(1.0, 0.5, 1.0), (3.0, 1.0, 2.0), (0.7, 2.0, 1.0)])
def test_gaussian_delta_is_the_hockey_stick_divergence(sigma, eps, sens):
    assert gaussian_delta(sigma, eps, sens) == pytest.approx(_hockey_stick(sigma, eps, sens),
                                                             rel=1e-7)


@pytest.mark.parametrize("eps,delta", [(0.01, 1e-5), (0.1, 1e-7), (1.0, 1e-5), (4.0, 1e-6),
                                       (10.0, 1e-6), (50.0, 1e-10)])
def test_analytic_sigma_is_the_smallest_safe_sigma(eps, delta):
    sigma = analytic_sigma(eps, delta)
    assert gaussian_delta(sigma, eps) <= delta
    assert gaussian_delta(sigma * (1 - 1e-9), eps) > delta
    assert analytic_sigma(eps, delta, sensitivity=3.0) == pytest.approx(3 * sigma, rel=1e-12)
    if eps <= 1:  # the classic calibration is valid, and looser
        assert sigma < classic_sigma(eps, delta)
        assert gaussian_delta(classic_sigma(eps, delta), eps) <= delta


def test_known_analytic_value():
    # Balle & Wang 2018: eps = 1, delta = 1e-5 needs sigma about 3.73 (classic: 4.84)
    assert analytic_sigma(1.0, 1e-5) == pytest.approx(3.7306, abs=1e-4)
    assert classic_sigma(1.0, 1e-5) == pytest.approx(4.8448, abs=1e-4)


def test_classic_refuses_large_epsilon_and_parameters_are_checked():
    with pytest.raises(InputError, match="epsilon <= 1"):
        Gaussian(2.0, 1e-5, calibration="classic")
    with pytest.raises(InputError, match="delta"):
        Gaussian(1.0, 0.0)
    with pytest.raises(InputError, match="epsilon"):
        Laplace(-1.0)
    with pytest.raises(InputError, match="mechanism"):
        additive("duchi", 1.0, 0.0, 1.0)


@pytest.mark.parametrize("mech,kurtosis", [(Gaussian(1.0, 1e-5, 2.0), 3.0),
                                           (Laplace(0.5, 1.0), 6.0)])
def test_noise_is_unbiased_with_the_closed_form_variance(mech, kurtosis):
    n = 400_000
    x = np.linspace(-1, 1, n)
    reports = mech.perturb(x, np.random.default_rng(7))
    err = mech.estimate(reports) - x
    assert_mean(err, 0.0, std=mech.std)
    var = mech.variance(x)[0]
    assert var == pytest.approx(mech.std**2)
    if isinstance(mech, Laplace):
        assert var == pytest.approx(2 * (mech.sensitivity / mech.epsilon) ** 2)
    se = var * math.sqrt((kurtosis - 1) / n)  # SE of a sample variance
    assert abs(err.var() - var) <= Z * se


def test_log_ndtr_matches_scipy_in_both_tails():
    from scipy import special

    from netdp.mechanisms.noise import log_ndtr

    xs = np.concatenate([-np.geomspace(1e-3, 1e4, 3000), np.geomspace(1e-3, 8.0, 1000)])
    want = special.log_ndtr(xs)
    got = np.array([log_ndtr(float(x)) for x in xs])
    np.testing.assert_allclose(got, want, rtol=1e-13)


@pytest.mark.parametrize("epsilon,delta", [(1.0, 1e-6), (0.5, 1e-6), (0.05, 1e-9), (8.0, 1e-5)])
def test_analytic_sigma_is_the_smallest_safe_float(epsilon, delta):
    sigma = analytic_sigma(epsilon, delta)
    assert gaussian_delta(sigma, epsilon) <= delta
    assert gaussian_delta(np.nextafter(sigma, 0.0), epsilon) > delta


@pytest.mark.parametrize("sensitivity", [5e-324, 1e-300, 1e-8, 3.0, 1e8, 1e300])
def test_analytic_sigma_scales_with_the_sensitivity_at_every_magnitude(sensitivity):
    """δ depends on σ / Δ alone: σ(Δ) = Δ σ(1), and still the smallest safe σ to a few
    ulps (a subnormal Δ once divided by zero in the search's bracket: issue 29)."""
    one = analytic_sigma(1.0, 1e-6)
    sigma = analytic_sigma(1.0, 1e-6, sensitivity)
    assert gaussian_delta(sigma, 1.0, sensitivity) <= 1e-6
    if sensitivity >= 1e-300:  # a normal float: the ratio is exact to the rounding
        assert sigma == pytest.approx(sensitivity * one, rel=1e-14)
    else:  # 5e-324 has one bit: σ is the first multiple of it that is safe
        assert sigma / sensitivity >= one and sigma / sensitivity <= one + 1
