"""The large-domain hash family (prime 2^61 - 1) and local hashing over 32-bit ids and more.

Exact modular arithmetic against Python integers, the family's exact collision probability
by Monte Carlo, the choice of family by the domain (smaller domains keep 2^31 - 1), and
OLH/BLH's candidate estimate for ids at or above 2^31: unbiased, with its closed-form
variance.
"""

import math

import numpy as np
import pytest
from conftest import Z, assert_mean, assert_std_gaussian
from scipy import stats

from netdp.core.errors import InputError
from netdp.mechanisms import BLH, OLH
from netdp.mechanisms._hashing import (
    PRIME,
    PRIME61,
    affine_mod61,
    collision_probability,
    draw_keys,
    family_prime,
    hash_values,
)
from netdp.mechanisms.local_hashing import support_counts
from netdp.tasks.prefix_extension import estimate

EXTREMES = [0, 1, 2, 7, PRIME - 1, PRIME, PRIME + 1, (1 << 32) - 1, 1 << 32, (1 << 32) + 1,
            (1 << 53) - 1, 1 << 60, PRIME61 - 2, PRIME61 - 1, PRIME61]


def test_affine_mod61_is_exact_against_python_integers():
    """Every triple of extremes (values up to 2^61 - 1 = P61 itself, 32-bit boundaries)
    and 20,000 random triples over the full input range."""
    a, x, b = (np.array(v, dtype=np.int64).ravel()
               for v in np.meshgrid(EXTREMES, EXTREMES, EXTREMES, indexing="ij"))
    rng = np.random.default_rng(61)
    a = np.concatenate([a, rng.integers(0, 1 << 61, 20_000)])
    x = np.concatenate([x, rng.integers(0, 1 << 61, 20_000)])
    b = np.concatenate([b, rng.integers(0, 1 << 61, 20_000)])
    got = affine_mod61(a, x, b)
    assert got.dtype == np.uint64
    want = [(int(u) * int(v) + int(w)) % PRIME61 for u, v, w in zip(a, x, b, strict=True)]
    assert got.tolist() == want


def test_hash_values_of_the_large_family_broadcast_and_reduce_mod_g():
    keys = draw_keys(np.random.default_rng(3), 50, PRIME61)
    assert keys.dtype == np.int64 and keys[:, 0].min() >= 1 and keys.max() < PRIME61
    x = np.array([0, PRIME, 1 << 31, (1 << 32) - 1, (1 << 53) - 1])
    for g in (2, 5, 1 << 20):
        got = hash_values(keys[:, None, :], x[None, :], g, PRIME61)
        want = [[(int(a) * int(v) + int(b)) % PRIME61 % g for v in x] for a, b in keys]
        assert got.dtype == np.int64 and got.tolist() == want


def test_the_family_changes_only_above_the_small_prime():
    """Domains up to 2^31 - 1 keep the historical family (keys and hashes unchanged, so
    every pinned output stays); larger ones use 2^61 - 1; beyond it, an error."""
    assert family_prime(2) == family_prime(1 << 30) == family_prime(PRIME) == PRIME
    assert family_prime(PRIME + 1) == family_prime(1 << 32) == PRIME61
    assert OLH(2.0, PRIME).prime == PRIME and OLH(2.0, PRIME + 1).prime == PRIME61
    small = OLH(2.0, 1 << 30).perturb(np.array([5, (1 << 30) - 1]), np.random.default_rng(0))
    rng = np.random.default_rng(0)
    keys = np.stack([rng.integers(1, PRIME, 2), rng.integers(0, PRIME, 2)], axis=1)
    np.testing.assert_array_equal(small[:, :2], keys)
    assert "hash_prime" not in OLH(2.0, 1 << 30).describe()
    assert OLH(2.0, 1 << 32).describe()["hash_prime"] == PRIME61
    with pytest.raises(InputError) as err:
        OLH(2.0, PRIME61 + 1)
    assert err.value.param == "domain"


@pytest.mark.parametrize("g", [2, 3, 4, 21, 1000, 2**20, PRIME - 1])
def test_collision_probability_of_the_large_family_is_exact(g):
    """The closed form equals the direct count over residues, ``sum_r c_r (c_r - 1) /
    (P61 (P61 - 1))`` with ``c_r = |{z < P61 : z = r mod g}|`` (for small g), is at most
    1/g (universal) and within 1/P61 of it."""
    coll = collision_probability(g, PRIME61)
    if g <= 1000:
        sizes = [(PRIME61 - 1 - r) // g + 1 for r in range(g)]
        assert sum(sizes) == PRIME61
        assert coll == sum(c * (c - 1) for c in sizes) / (PRIME61 * (PRIME61 - 1))
    assert coll <= 1 / g and 1 / g - coll <= 1 / PRIME61


# Pairs of ids that the small family confuses (x and x - P) or that sit at the extremes.
PAIRS = [((1 << 32) - 1, (1 << 32) - 1 - PRIME), (PRIME, 0), ((1 << 53) - 1, 12345),
         (PRIME61 - 1, PRIME61 - 2)]


@pytest.mark.parametrize("g", [2, 3, 7])
def test_collision_probability_by_monte_carlo(g):
    """200,000 random keys per pair: the collision frequency lies within Z binomial
    standard errors of the exact probability (about 1/g). The small family on the first
    pair (``x`` and ``x - P``) collides always: the check would fail on it."""
    keys = draw_keys(np.random.default_rng(100 + g), 200_000, PRIME61)
    coll = collision_probability(g, PRIME61)
    se = math.sqrt(coll * (1 - coll) / len(keys))
    for x, y in PAIRS:
        same = hash_values(keys, x, g, PRIME61) == hash_values(keys, y, g, PRIME61)
        assert abs(same.mean() - coll) <= Z * se, (x, y, same.mean(), coll)
    x, y = PAIRS[0]
    small = draw_keys(np.random.default_rng(0), 1000)
    assert np.all(hash_values(small, x, g) == hash_values(small, y, g))


def test_aggregate_over_a_large_domain_is_refused_naming_the_domain():
    oracle = OLH(2.0, 1 << 32)
    reports = oracle.perturb(np.array([1 << 31]), np.random.default_rng(1))
    for call in (lambda: oracle.aggregate(reports),
                 lambda: support_counts(reports[:, :2], reports[:, 2], 1 << 32, oracle.g)):
        with pytest.raises(InputError) as err:
            call()
        assert err.value.param == "domain"
    bad = reports.copy()
    bad[0, 0] = PRIME61
    with pytest.raises(InputError) as err:
        oracle.candidate_counts(bad, np.array([0]))
    assert err.value.param == "reports"


@pytest.mark.parametrize("make", [lambda: OLH(3.0, 1 << 32), lambda: BLH(1.0, 1 << 40)],
                         ids=["olh-32", "blh-40"])
def test_candidate_counts_match_python_integers_and_report_scores(make):
    oracle = make()
    rng = np.random.default_rng(5)
    values = rng.integers(0, oracle.domain, 300)
    reports = oracle.perturb(values, rng)
    items = np.concatenate([values[:20], [0, oracle.domain - 1, (1 << 31) + 3]])
    want = [sum((int(a) * int(i) + int(b)) % PRIME61 % oracle.g == y for a, b, y in reports)
            for i in items]
    got = oracle.candidate_counts(reports, items)
    assert got.tolist() == want
    np.testing.assert_array_equal(oracle.report_scores(reports, items).sum(axis=0), want)
    # a small chunk splits the reports into blocks: the same counts
    from netdp.mechanisms.local_hashing import candidate_counts
    np.testing.assert_array_equal(candidate_counts(reports[:, :2], reports[:, 2], items,
                                                   oracle.g, 50, PRIME61), want)


RUNS = 2000
USERS = 400
HELD = np.array([(1 << 32) - 1, (1 << 31) + 12345, (1 << 31) + 77])
# ``(1 << 32) - 1 - PRIME = 2^31`` is absent but is ``(1 << 32) - 1`` under the small family.
CANDIDATES = np.concatenate([HELD, [(1 << 32) - 1 - PRIME, 3_000_000_000]])
TRUTH = np.array([0.5, 0.25, 0.25, 0.0, 0.0])


@pytest.fixture(scope="module", params=["olh", "blh"])
def large_estimates(request):
    """``RUNS`` rounds of ``USERS`` reports of 32-bit ids (frequencies 1/2, 1/4, 1/4 held
    at or above 2^31) and the estimates of the candidates (two absent)."""
    oracle = OLH(2.0, 1 << 32) if request.param == "olh" else BLH(2.0, 1 << 32)
    items = np.repeat(HELD, [200, 100, 100])
    rng = np.random.default_rng(20261125)
    out = np.empty((RUNS, CANDIDATES.size))
    for r in range(RUNS):
        out[r] = estimate(oracle, oracle.perturb(items, rng), CANDIDATES)
    return oracle, out


def test_large_domain_estimate_is_unbiased_with_the_closed_form_variance(large_estimates):
    """Mean within Z closed-form standard errors of the truth; sample variance within the
    two-sided χ² bounds (p = 1e-6) of ``oracle.variance`` (near Gaussian at n = 400)."""
    oracle, est = large_estimates
    var = oracle.variance(TRUTH, USERS)
    for j in range(TRUTH.size):
        assert_mean(est[:, j], TRUTH[j], math.sqrt(var[j]))
        assert_std_gaussian(est[:, j], math.sqrt(var[j]))


def test_a_wrong_variance_or_family_is_rejected(large_estimates):
    """The checks above can fail: 1.5 times the variance is outside the χ² bounds, and
    the small family's estimate of the absent id ``2^32 - 1 - P`` (equal to that of
    ``2^32 - 1``, 1/2) is far from its truth 0."""
    oracle, est = large_estimates
    var = float(oracle.variance(TRUTH[:1], USERS)[0])
    k = RUNS - 1
    ratio = k * est[:, 0].var(ddof=1) / (1.5 * var)
    assert not stats.chi2.ppf(5e-7, k) <= ratio <= stats.chi2.isf(5e-7, k)
    wrong = hash_values(np.array([12345, 678]), CANDIDATES[[0, 3]], oracle.g)
    assert wrong[0] == wrong[1]
    se = math.sqrt(oracle.variance(TRUTH[3:4], USERS)[0] / RUNS)
    assert abs(est[:, 0].mean() - TRUTH[3]) > Z * se
