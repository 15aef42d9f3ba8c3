"""Amplification by subsampling and shuffling: formulas, check values, brute-force
re-computations, and the ordering bounds >= exact binary randomized response."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest
from scipy import stats

from netdp.accounting import fmt_numeric
from netdp.accounting.amplification import (
    binary_rr_shuffled_delta,
    binary_rr_shuffled_epsilon,
    blanket_epsilon,
    erlingsson_epsilon,
    fmt_closed_epsilon,
    fmt_closed_valid,
    subsampled_delta,
    subsampled_epsilon,
)
from netdp.accounting.fmt_numeric import fmt_numeric_delta, fmt_numeric_epsilon

HALF_2DP = 0.005  # the spec's check values are given to two decimals

# ---------------------------------------------------------------------------------------
# Subsampling
# ---------------------------------------------------------------------------------------


def test_subsampled_epsilon_formula_and_limits():
    rng = np.random.default_rng(11)
    eps, q = rng.uniform(0, 5, 100), rng.uniform(0, 1, 100)
    direct = [math.log(1 + qq * (math.exp(e) - 1)) for e, qq in zip(eps, q, strict=True)]
    np.testing.assert_allclose(subsampled_epsilon(eps, q), direct, rtol=1e-12)
    assert subsampled_epsilon(2.0, 1.0) == pytest.approx(2.0, rel=1e-15)
    assert subsampled_epsilon(2.0, 0.0) == 0.0
    # large eps, no overflow: ln(1 + q(e^eps - 1)) = eps + ln q + o(1)
    assert subsampled_epsilon(1000.0, 0.01) == pytest.approx(1000.0 + math.log(0.01), rel=1e-15)
    # amplification never hurts, and is at most q (e^eps - 1)
    a = subsampled_epsilon(eps, q)
    assert np.all(a <= eps + 1e-15) and np.all(a <= q * np.expm1(eps) + 1e-15)
    assert subsampled_epsilon(eps[:, None], q[None, :3]).shape == (100, 3)


def test_subsampled_delta():
    np.testing.assert_allclose(subsampled_delta([1e-6, 1e-3], 0.2), [2e-7, 2e-4])
    with pytest.raises(ValueError, match="q"):
        subsampled_delta(1e-6, 1.5)


# ---------------------------------------------------------------------------------------
# Shuffling: check values and validity
# ---------------------------------------------------------------------------------------


def test_fmt_check_values():
    assert abs(fmt_numeric_epsilon(4.0, 100_000, 1e-6) - 0.17) <= HALF_2DP
    # "about 0.54": the authors' script gives 0.538; the theorem's (spec's) formula gives
    # 0.535, a factor tanh(eps0/2) instead of the script's slightly larger one (<1 % apart)
    paper = fmt_closed_epsilon(4.0, 100_000, 1e-6)
    ref = fmt_closed_epsilon(4.0, 100_000, 1e-6, variant="reference-code")
    assert abs(ref - 0.54) <= HALF_2DP
    assert paper < ref <= 1.01 * paper


def test_fmt_numeric_is_fast_for_n_1e5():
    fmt_numeric._fmt_c_grid.cache_clear()
    t0 = time.process_time()
    fmt_numeric_epsilon(4.0, 100_000, 1e-6)
    fmt_numeric_epsilon(0.1, 100_000, 1e-6)
    assert time.process_time() - t0 < 1.0


def test_closed_forms_hand_computed():
    e0, n, d = 0.3, 10_000, 1e-6
    assert math.isclose(erlingsson_epsilon(e0, n, d), 12 * e0 * math.sqrt(math.log(1 / d) / n))
    g = 2 / (math.exp(1.0) + 1)
    by_hand = max(math.sqrt(14 * 2 * math.log(2 / d) / ((n - 1) * g)), 27 * 2 / ((n - 1) * g))
    assert math.isclose(blanket_epsilon(1.0, n, d, 2), by_hand)
    e = math.exp(e0)
    by_hand = math.log(1 + (e - 1) / (e + 1) * 8 * (math.sqrt(e * math.log(4 / d) / n) + e / n))
    assert math.isclose(fmt_closed_epsilon(e0, n, d), by_hand)


def test_validity_conditions_raise_or_flag():
    with pytest.raises(ValueError, match="1/2"):
        erlingsson_epsilon(0.6, 10_000, 1e-6)
    assert np.isnan(erlingsson_epsilon(0.6, 10_000, 1e-6, strict=False))
    with pytest.raises(ValueError, match="eps <= 1"):
        blanket_epsilon(3.0, 100, 1e-6)
    assert np.isnan(blanket_epsilon(3.0, 100, 1e-6, strict=False))
    # FMT closed form: eps0 <= ln(n / (16 ln(2/delta)))
    n, d = 10_000, 1e-6
    limit = math.log(n / (16 * math.log(2 / d)))
    assert fmt_closed_valid(limit - 1e-9, n, d) and not fmt_closed_valid(limit + 1e-9, n, d)
    with pytest.raises(ValueError, match="eps0"):
        fmt_closed_epsilon(limit + 0.1, n, d)
    out = fmt_closed_epsilon([1.0, limit + 0.1], n, d, strict=False)
    assert np.isfinite(out[0]) and np.isnan(out[1])


# ---------------------------------------------------------------------------------------
# Brute-force re-computations
# ---------------------------------------------------------------------------------------


def _fmt_delta_brute(eps0: float, n: int, eps: float) -> float:
    """Spec's FMT pair summed over every (C, A, Delta), no truncation, no shortcut."""
    al = math.exp(eps0) / (math.exp(eps0) + 1)
    total = 0.0
    for c in range(n):
        w = stats.binom.pmf(c, n - 1, math.exp(-eps0))
        x = np.arange(c + 2)
        b = stats.binom.pmf(x, c, 0.5)
        b1 = stats.binom.pmf(x - 1, c, 0.5)
        p = al * b1 + (1 - al) * b
        q = (1 - al) * b1 + al * b
        total += w * np.sum(np.maximum(p - math.exp(eps) * q, 0.0))
    return total


@pytest.mark.parametrize("eps0", [0.5, 2.0])
def test_fmt_numeric_delta_matches_brute_force(eps0):
    n = 60
    eps = np.array([0.0, 0.1, 0.4, 1.0, 1.9])
    brute = [_fmt_delta_brute(eps0, n, e) for e in eps]
    np.testing.assert_allclose(fmt_numeric_delta(eps0, n, eps), brute, rtol=1e-9, atol=1e-15)


def _rr_count_law(bits: list[int], eps0: float) -> np.ndarray:
    """Law of the number of 1 reports, by enumerating every vector of RR coins."""
    p = math.exp(eps0) / (1 + math.exp(eps0))
    law = np.zeros(len(bits) + 1)
    for keep in itertools.product([True, False], repeat=len(bits)):
        prob = math.prod(p if k else 1 - p for k in keep)
        law[sum(b if k else 1 - b for b, k in zip(bits, keep, strict=True))] += prob
    return law


def test_binary_rr_shuffled_delta_matches_enumeration():
    eps0, others = 1.2, [1, 1, 0, 0, 0]
    p1 = _rr_count_law([1, *others], eps0)
    p0 = _rr_count_law([0, *others], eps0)
    for eps in (0.0, 0.3, 0.8, 1.1):
        hs = max(
            np.sum(np.maximum(p1 - math.exp(eps) * p0, 0)),
            np.sum(np.maximum(p0 - math.exp(eps) * p1, 0)),
        )
        got = binary_rr_shuffled_delta(eps0, 6, eps, ones=2)
        assert math.isclose(got, hs, rel_tol=1e-10, abs_tol=1e-15)


def test_inverse_functions():
    for e0, n, d in [(4.0, 100_000, 1e-6), (1.0, 1000, 1e-8), (0.5, 50, 1e-3)]:
        e = fmt_numeric_epsilon(e0, n, d)
        assert fmt_numeric_delta(e0, n, e) <= d
        assert fmt_numeric_delta(e0, n, e * (1 - 1e-6)) > d  # and it is the smallest
        r = binary_rr_shuffled_epsilon(e0, n, d)
        assert math.isclose(binary_rr_shuffled_delta(e0, n, r), d, rel_tol=1e-8)


# ---------------------------------------------------------------------------------------
# Ordering: every bound stays above the exact shuffled binary RR
# ---------------------------------------------------------------------------------------


SETTINGS = [(n, e0) for n in (100, 1000, 10_000) for e0 in (0.5, 1.0, 3.0)]


@pytest.mark.parametrize(("n", "eps0"), SETTINGS)
def test_fmt_numeric_above_exact_binary_rr(n, eps0):
    d = 1e-6
    num = fmt_numeric_epsilon(eps0, n, d)
    for ones in (0, n // 3):
        assert num >= binary_rr_shuffled_epsilon(eps0, n, d, ones=ones)


VALID_CLOSED = [(n, e0) for n, e0 in [*SETTINGS, (100_000, 4.0)] if fmt_closed_valid(e0, n, 1e-6)]


@pytest.mark.parametrize(("n", "eps0"), VALID_CLOSED)
def test_fmt_closed_above_numeric_where_valid(n, eps0):
    d = 1e-6
    num = fmt_numeric_epsilon(eps0, n, d)
    assert fmt_closed_epsilon(eps0, n, d) >= num
    assert fmt_closed_epsilon(eps0, n, d, variant="reference-code") >= num


def test_valid_closed_settings_are_not_empty():
    assert len(VALID_CLOSED) >= 5


def test_other_closed_forms_above_exact_binary_rr():
    n, d = 10_000, 1e-6
    for e0 in (0.5, 1.0, 2.0):
        exact = binary_rr_shuffled_epsilon(e0, n, d)
        assert blanket_epsilon(e0, n, d, 2) >= exact
    assert erlingsson_epsilon(0.5, n, d) >= binary_rr_shuffled_epsilon(0.5, n, d)


# ---------------------------------------------------------------------------------------
# Vectorization and monotonicity
# ---------------------------------------------------------------------------------------


def test_fmt_numeric_vectorized_equals_loop():
    e0 = np.array([[0.5], [2.0]])
    n = np.array([500, 5000, 50_000])
    d = 1e-7
    got = fmt_numeric_epsilon(e0, n, d)
    assert got.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            assert got[i, j] == fmt_numeric_epsilon(float(e0[i, 0]), int(n[j]), d)
    eps = np.linspace(0, 2, 7)
    loop = [fmt_numeric_delta(2.0, 5000, e) for e in eps]
    np.testing.assert_allclose(fmt_numeric_delta(2.0, 5000, eps), loop, rtol=1e-14)


def test_fmt_numeric_monotone():
    n = np.array([100, 1000, 10_000, 100_000])
    e_n = fmt_numeric_epsilon(1.0, n, 1e-6)
    assert np.all(np.diff(e_n) < 0)  # more users, more privacy
    e_d = fmt_numeric_epsilon(1.0, 1000, np.array([1e-9, 1e-6, 1e-3]))
    assert np.all(np.diff(e_d) < 0)
    e_0 = fmt_numeric_epsilon(np.array([0.1, 0.5, 1.0, 3.0]), 1000, 1e-6)
    assert np.all(np.diff(e_0) > 0)
    d_e = fmt_numeric_delta(1.0, 1000, np.linspace(0, 1, 11))
    assert np.all(np.diff(d_e) <= 0)


def test_fmt_truncated_mass_is_added_to_delta():
    # for eps >= eps0 the pair is exactly indistinguishable up to the dropped binomial
    # tails, so the reported delta is exactly that (positive, negligible) dropped mass
    dropped = fmt_numeric._fmt_c_grid(2.0, 100_000)[2]
    assert 0 < dropped < 1e-15
    assert fmt_numeric_delta(2.0, 100_000, 2.0) == dropped
    assert fmt_numeric_delta(2.0, 100_000, 0.01) > 1e-6


def test_delta_below_numeric_resolution_is_refused():
    with pytest.raises(ValueError, match="delta"):
        fmt_numeric_epsilon(1.0, 1000, 1e-30)
