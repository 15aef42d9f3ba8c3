"""The one root-finder (netdp.core.roots): known edges, the rounding direction at adjacent
floats, Brent's steps as scipy's, and errors that name the parameter."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

from netdp.core.errors import InputError
from netdp.core.roots import largest_within, smallest_within

RISING = [  # (figure, its inverse), both increasing on x > 0
    (lambda x: x**3, lambda y: y ** (1 / 3)),
    (math.expm1, math.log1p),
    (math.log1p, math.expm1),
    (lambda x: x * x + x, lambda y: (math.sqrt(1 + 4 * y) - 1) / 2),
]


@pytest.mark.parametrize("scale", ["linear", "log"])
@pytest.mark.parametrize("k", range(len(RISING)))
def test_adjacent_floats_straddle_the_edge(k, scale):
    """``tol = 0``: the answer is within the target and the next float past it is not."""
    figure, inverse = RISING[k]
    for target in (0.3, 1.0, 5.5):
        x = largest_within(figure, target, 1e-6, 700.0, param="epsilon", scale=scale)
        assert figure(x) <= target < figure(math.nextafter(x, math.inf))
        assert x == pytest.approx(inverse(target), rel=1e-14)
        falling = lambda s: -figure(s)  # noqa: E731
        y = smallest_within(falling, -target, 1e-6, 700.0, param="delta", scale=scale)
        assert falling(y) <= -target < falling(math.nextafter(y, 0.0))
        assert y == pytest.approx(inverse(target), rel=1e-14)


@pytest.mark.parametrize("scale", ["linear", "log"])
def test_a_tolerance_rounds_toward_the_target(scale):
    """``tol > 0``: never past the edge, and at most ``tol`` (in the scale) short of it."""
    rng = np.random.default_rng(3)
    for target in rng.uniform(0.01, 50.0, 200):
        edge = (math.sqrt(1 + 4 * target) - 1) / 2  # of x² + x
        x = largest_within(lambda v: v * v + v, target, 1e-3, 10.0, param="epsilon",
                           scale=scale, tol=1e-9)
        assert x * x + x <= target
        gap = math.log(edge / x) if scale == "log" else edge - x
        assert -1e-15 <= gap <= 1e-9 + 1e-15
        sigma = smallest_within(lambda s: 1 / s**2, 1 / edge**2, 1e-3, 10.0, param="delta",
                                scale=scale, tol=1e-9)
        assert 1 / sigma**2 <= 1 / edge**2  # more noise than needed, never less
        assert (math.log(sigma / edge) if scale == "log" else sigma - edge) <= 1e-9 + 1e-15


def test_the_log_scale_finds_small_edges_fast():
    calls = []

    def delta_of(sigma):
        calls.append(sigma)
        return 1e-300 / sigma

    sigma = smallest_within(delta_of, 1.0, 1e-305, 1.0, param="delta", scale="log")
    assert delta_of(sigma) <= 1.0 < delta_of(math.nextafter(sigma, 0.0))
    assert sigma == pytest.approx(1e-300, rel=1e-15)
    assert len(calls) < 80  # bisection in x would take about a thousand


def test_brent_takes_the_steps_of_scipy():
    """With ``tol > 0`` the points are brentq's (xtol = tol), so are its few evaluations;
    where brentq stops within the target, the answer is its root exactly."""
    def run(target):
        ours, theirs = [], []

        def figure(x):
            ours.append(x)
            return math.exp(-x * x)

        x = smallest_within(figure, target, 0.0, 80.0, param="delta", tol=1e-12)

        def excess(x):
            theirs.append(x)
            return math.exp(-x * x) - target

        root = optimize.brentq(excess, 0.0, 80.0, xtol=1e-12)
        return x, root, ours, theirs

    for target in (1e-5, 0.3, 0.77, 1e-200):
        x, root, ours, theirs = run(target)
        assert ours == theirs
        assert len(ours) < (40 if target < 1e-100 else 20)  # bisection: 48
        assert math.exp(-x * x) <= target
        if math.exp(-root * root) <= target:
            assert x == root
        else:  # brentq's root is 1e-12 short: the other end of its last bracket
            assert root < x <= root + 1e-12


def test_a_point_on_the_target_ends_the_search():
    assert largest_within(lambda x: 2 * x, 1.0, 0.0, 3.0, param="epsilon", tol=1e-6) == 0.5
    assert largest_within(lambda x: 2 * x, 1.0, 0.0, 3.0, param="epsilon") == 0.5


def test_the_whole_bracket_within_gives_its_far_end():
    assert largest_within(lambda x: x, 5.0, 0.0, 2.0, param="epsilon") == 2.0
    assert smallest_within(lambda x: -x, 5.0, -1.0, 2.0, param="delta", tol=0.1) == -1.0


def test_a_figure_that_is_not_monotone_still_gives_a_point_within():
    """Only the bracket is relied on: with float noise around the edge the answer is still
    within, next to a float that is not."""
    rng = np.random.default_rng(0)
    noise = {}

    def noisy(x):
        return x + noise.setdefault(x, rng.uniform(-1e-12, 1e-12))

    for tol in (0.0, 1e-14, 1e-9):
        x = largest_within(noisy, 0.5, 0.0, 1.0, param="epsilon", tol=tol)
        assert noisy(x) <= 0.5 and abs(x - 0.5) < 1e-9 + 2e-12


def test_a_target_outside_the_bracket_names_the_parameter():
    with pytest.raises(InputError, match="target 0.5 is not met") as info:
        largest_within(lambda x: x + 1, 0.5, 0.0, 2.0, param="epsilon")
    assert info.value.param == "epsilon"
    with pytest.raises(InputError) as info:
        smallest_within(lambda s: 1 / s, 1e-9, 1.0, 10.0, param="delta", scale="log",
                        tol=1e-6)
    assert info.value.param == "delta"


@pytest.mark.parametrize(("low", "high", "scale", "tol"), [
    (1.0, 1.0, "linear", 0.0), (2.0, 1.0, "linear", 0.0), (0.0, 1.0, "log", 0.0),
    (0.0, 1.0, "linear", -1.0), (0.0, 1.0, "cubic", 0.0)])
def test_a_bad_bracket_is_a_value_error(low, high, scale, tol):
    with pytest.raises(ValueError, match="scale|low < high"):
        largest_within(lambda x: x, 0.5, low, high, param="epsilon", scale=scale, tol=tol)
