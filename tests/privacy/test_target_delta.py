"""One target δ (spec Correction 7): the split of ``netdp.accounting.target_delta`` fits
inside the target, and the LDP loss at the target is the exact Gaussian composition."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from netdp.accounting.target_delta import composition_slack, entry_delta, ldp_epsilon


@pytest.mark.parametrize("target", [1e-9, 1e-6, 0.3])
@pytest.mark.parametrize("most", [1, 7, 10_000])
def test_the_split_spends_at_most_the_target(target, most):
    for k in (1, most // 2 + 1, most):
        assert k * entry_delta(target, most) + composition_slack(target) <= target * (1 + 1e-15)


def gdp_delta(mu: float, eps: float) -> float:
    return float(norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2))


@pytest.mark.parametrize(("k", "z", "target"), [(1, 4.225, 1e-6), (100, 4.225, 1e-6),
                                                (3, 0.5, 1e-3), (10_000, 20.0, 1e-8)])
def test_gaussian_ldp_is_the_exact_composition_at_the_target(k, z, target):
    eps = float(ldp_epsilon([k], 1.0, target, noise_multiplier=z)[0])
    mu = math.sqrt(k) / z
    assert gdp_delta(mu, eps) == pytest.approx(target, rel=1e-6)
    # and the composition of (eps0, delta0) entries would charge more delta than the target
    assert eps > 0


def test_pure_ldp_is_basic_or_advanced_composition_at_the_target():
    eps = ldp_epsilon([0, 1, 2, 100, 10_000], 1.0, 1e-6)
    assert eps[0] == 0.0 and eps[1] == 1.0 and eps[2] == 2.0
    assert eps[3] == 100.0  # advanced composition does not help at eps0 = 1, k = 100
    drv = 1.0 * math.sqrt(2 * 10_000 * math.log(1e6)) + 10_000 * (math.e - 1)
    assert eps[4] == pytest.approx(min(10_000.0, drv))
    small = ldp_epsilon([10_000], 0.01, 1e-6)[0]
    assert small < 10_000 * 0.01  # advanced composition wins at small eps0


def test_the_losses_grow_with_the_count():
    k = np.arange(0, 500)
    for z in (None, 3.0):
        eps = ldp_epsilon(k, 0.5, 1e-6, noise_multiplier=z)
        assert np.all(np.diff(eps) >= 0)


def test_bad_targets_are_refused():
    for bad in (0.0, 1.0, -1e-6, float("nan")):
        with pytest.raises(ValueError, match="target delta"):
            ldp_epsilon([1], 1.0, bad)
    with pytest.raises(ValueError, match="noise_multiplier"):
        ldp_epsilon([1], 1.0, 1e-6, noise_multiplier=0.0)
