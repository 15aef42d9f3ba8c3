"""A PLD from points of a privacy profile: sound, tight at its points, composable."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from netdp.accounting.gdp import gaussian_epsilon
from netdp.accounting.profile_pld import (
    STEP,
    epsilon_at,
    hull,
    profile_pld,
    profile_pmf,
)

DELTAS = np.array([v * 10.0 ** -k for k in range(1, 13) for v in (5, 2, 1)])
CHECK = np.geomspace(1e-12, 0.9, 150)


def _rr_profile_epsilon(eps0: float, delta: float) -> float:
    """Binary randomized response at ``eps0``: ``δ(ε) = (e^eps0 - e^ε) / (1 + e^eps0)``."""
    x = math.exp(eps0) - delta * (1 + math.exp(eps0))
    return max(0.0, math.log(x)) if x > 0 else 0.0


def _points(exact, deltas=DELTAS) -> tuple[np.ndarray, np.ndarray]:
    return np.array([exact(d) for d in deltas]), deltas


def _shortfall(pld, exact) -> float:
    """The most ``pld``'s ε falls below the exact ε over :data:`CHECK` (<= 0: never)."""
    return max(exact(d) - pld.get_epsilon_for_delta(d) for d in CHECK)


@pytest.mark.parametrize(("mu", "loose"), [(0.1, 1.6), (0.5, 1.2), (1.0, 1.2), (3.0, 1.2)])
def test_the_pld_of_a_gaussian_profile_is_sound_and_tight(mu: float, loose: float) -> None:
    """Ten of them composed stay above the truth, and within ``loose`` of it (measured
    1.55, 1.15, 1.10, 1.08 with three points a decade: a weak mechanism's profile is
    known only from ε = 0 at the first δ above its total variation, 0.04 at μ = 0.1)."""
    exact = lambda d: gaussian_epsilon(mu, d)  # noqa: E731
    eps, deltas = _points(exact)
    pld = profile_pld(eps, deltas)
    assert _shortfall(pld, exact) <= 1e-12
    for e, d in zip(eps, deltas, strict=True):  # every point is a hull vertex here
        assert e - 1e-12 <= pld.get_epsilon_for_delta(d) <= e + STEP + 1e-9
    composed = pld.self_compose(10)  # dominating pairs compose: still above the truth
    for d in np.geomspace(1e-10, 1e-2, 15):
        truth = gaussian_epsilon(mu * math.sqrt(10), d)
        assert truth - 1e-9 <= composed.get_epsilon_for_delta(d) <= loose * truth + 10 * STEP


@pytest.mark.parametrize("eps0", [0.3, 1.0, 4.0])
def test_the_pld_of_randomized_response_is_sound(eps0: float) -> None:
    exact = lambda d: _rr_profile_epsilon(eps0, d)  # noqa: E731
    eps, deltas = _points(exact)
    pld = profile_pld(eps, deltas)
    assert _shortfall(pld, exact) <= 1e-12
    rr = pld_lib.from_randomized_response(1 / (1 + math.exp(eps0)) * 2, 2)
    ten = pld.self_compose(10)
    for d in (1e-8, 1e-5, 1e-2):  # above the exact composition, within the grid's cost
        truth = rr.self_compose(10).get_epsilon_for_delta(d)
        assert truth - 10 * 1e-4 <= ten.get_epsilon_for_delta(d)


def test_the_masses_add_up_and_the_hull_bounds_every_point() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        eps = np.sort(rng.uniform(0, 5, 12))
        deltas = np.sort(rng.uniform(1e-9, 0.5, 12))[::-1] * rng.uniform(1, 3, 12)
        deltas = np.minimum(deltas, 1.0)
        pmf = profile_pmf(eps, deltas)
        assert pmf.probs.min(initial=1) >= 0
        assert pmf.probs.sum() + pmf.infinity == pytest.approx(1.0, abs=1e-12)
        x, g = hull(eps, deltas)
        loss = pmf.losses * pmf.step
        profile = (pmf.probs * np.maximum(1 - np.outer(x, np.exp(-loss)), 0)).sum(axis=1)
        assert np.all(profile + pmf.infinity >= g - 1e-12)  # rounded up: at or above
        for e, d in zip(eps, deltas, strict=True):  # at or below every point
            assert epsilon_at(eps, deltas, d) <= e + 1e-12
        assert np.all(np.diff(x) > 0) and np.all(np.diff(g) <= 0)
        slopes = np.diff(g) / np.diff(x)
        assert np.all(np.diff(slopes) >= -1e-12)  # convex


def test_a_loss_rounded_down_is_caught() -> None:
    """Negative control: the same masses with each loss two steps lower fall below the
    exact Gaussian: the check above can fail."""
    mu = 0.5
    exact = lambda d: gaussian_epsilon(mu, d)  # noqa: E731
    pmf = profile_pmf(*_points(exact))
    low = pld_lib.PrivacyLossDistribution.create_from_rounded_probability(
        {int(i) - 2: float(p) for i, p in zip(pmf.losses, pmf.probs, strict=True)},
        pmf.infinity, pmf.step)
    assert _shortfall(low, exact) > 1e-4


def test_bad_points_are_refused() -> None:
    with pytest.raises(ValueError, match="as many"):
        hull([1.0, 2.0], [0.1])
    with pytest.raises(ValueError, match="finite"):
        hull([-1.0], [0.1])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        hull([1.0], [1.5])


def test_a_point_at_delta_one_leaves_all_mass_at_infinity() -> None:
    pld = profile_pld([0.5], [1.0])
    assert pld.get_epsilon_for_delta(0.5) == math.inf


def test_a_point_beyond_a_float_s_exponential_is_left_out_not_lost() -> None:
    """A point of ε = 800 (``e^ε`` overflows): left out, what it bounded goes to +∞; the
    other points keep their figures (a second reader found ε = 3.0 at 1e-6 here)."""
    pld = profile_pld([1.0, 3.0, 800.0], [0.1, 1e-3, 1e-6])
    assert pld.get_epsilon_for_delta(1e-6) == math.inf
    assert pld.get_epsilon_for_delta(0.1) >= 1.0 - 1e-12
    assert pld.get_epsilon_for_delta(1e-3) >= 3.0 - 1e-12
    only = profile_pld([800.0, 900.0], [0.1, 1e-6])
    assert only.get_epsilon_for_delta(0.5) == math.inf
    assert epsilon_at([800.0], [0.1], 0.5) == math.inf and epsilon_at([], [], 0.5) == math.inf
