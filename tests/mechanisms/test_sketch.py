import itertools
import json
import math

import numpy as np
import pytest
from _stats import agrees, estimated_counts, find_seed
from conftest import Z, assert_mean

from netdp.audit import lower_bounds as audit
from netdp.core.errors import InputError
from netdp.mechanisms._hadamard import fwht, hadamard_entry
from netdp.mechanisms._hashing import PRIME, draw_keys, hash_values
from netdp.mechanisms.sketch import CMS, HCMS, collision_probability

# ε = 100 stands for the seed's ε = ∞: c_ε rounds to exactly 1.0 and a flip has
# probability e^{-50} or less, so no flip happens in these tests.
NO_NOISE = 100.0
MALE, FEMALE = 0, 1  # D = {"男", "女"} of seed 003


# (a) the worked examples of seed 003 (§2.2 and §3), 1-based indices there, 0-based here --

def test_seed_example_1_cms_encoding():
    """例1: m = 2, k = 4, j = 3, h_3(男) = 2  ->  v = (-1, 1)."""
    mech = find_seed(lambda s: CMS(NO_NOISE, 2, k=4, m=2, hash_seed=s),
                 lambda mech: mech.hash_table[2, MALE] == 1)
    assert mech.c_eps == 1.0
    reports = mech.perturb(np.full(2000, MALE), np.random.default_rng(0))
    row3 = reports[reports[:, 0] == 2]
    assert len(row3) > 0
    assert np.array_equal(row3[:, 1:], np.tile([-1, 1], (len(row3), 1)))
    # every report: +1 exactly at h_j(男)
    plus = np.argmax(reports[:, 1:], axis=1)
    assert np.array_equal(plus, mech.hash_table[reports[:, 0], MALE])
    assert np.all(reports[:, 1:].sum(axis=1) == 2 - mech.m)


def test_seed_example_2_cms_sketch():
    """例2: n = 4, m = 2, k = 2, ε = ∞, users 男, 男, 女, 女.

    The seed's ``x̃⁽³⁾ = 2(½(-1, 1) + ½(1, 1))`` is (0, 2), not (2, 0); so the sketch is
    [[2, 2], [2, 2]], not [[4, 0], [2, 2]], and both estimates are 0, not 2. The seed's
    "2" is the raw row mean before Apple's collision correction; the correction subtracts
    the average collision mass n/m = 2 although these keys never collide.
    """
    mech = find_seed(lambda s: CMS(NO_NOISE, 2, k=2, m=2, hash_seed=s),
                 lambda mech: np.array_equal(mech.hash_table, [[0, 1], [0, 1]]))
    assert mech.c_eps == 1.0
    reports = np.array([[0, 1, -1], [1, 1, -1], [0, -1, 1], [1, -1, 1]], dtype=np.int8)
    x_tilde = [mech.sketch(mech.aggregate(r[None]))[r[0]] for r in reports]
    assert np.array_equal(x_tilde, [[2, 0], [2, 0], [0, 2], [0, 2]])
    sketch = mech.sketch(mech.aggregate(reports))
    assert np.array_equal(sketch, [[2, 2], [2, 2]])
    est = mech.estimate_counts(mech.aggregate(reports), 4)
    assert np.allclose(est, [0, 0])
    raw = np.take_along_axis(sketch, mech.hash_table, axis=1).mean(axis=0)
    assert np.array_equal(raw, [2, 2])  # the seed's printed value: (1/k) sum M[l, h_l(d)]
    # with no noise the estimate is its exact fixed-key mean
    assert np.allclose(mech.expected_counts_given_keys(np.array([2, 2])), [0, 0])
    # the seed's own (mistyped) sketch gives (2, -2), so its second "= 2" is off as well
    seed_sketch = np.array([[4.0, 0.0], [2.0, 2.0]])
    assert np.allclose(mech.estimate_counts(seed_sketch.ravel(), 4), [2, -2])


def test_seed_example_3_hcms_encoding():
    """例3: m = 2, k = 4, j = 3, v = (0, 1): w = H_2 v = (1, -1); sends w̃_1 = 1, j = 3, ℓ = 1.

    (The seed writes "h_3(男) = 1, the first element" but v = (0, 1) sets the second one;
    w̃_1 = 1 holds either way.)
    """
    assert np.array_equal(fwht(np.array([0.0, 1.0])), [1, -1])
    assert np.array_equal(hadamard_entry(np.arange(2), 1), [1, -1])
    mech = find_seed(lambda s: HCMS(NO_NOISE, 2, k=4, m=2, hash_seed=s),
                 lambda mech: mech.hash_table[2, MALE] == 1)
    reports = mech.perturb(np.full(4000, MALE), np.random.default_rng(1))
    row3 = reports[reports[:, 0] == 2]
    assert {0, 1} <= set(row3[:, 1].tolist())
    assert np.array_equal(row3[:, 2], np.where(row3[:, 1] == 0, 1, -1))  # w = (1, -1)


def test_seed_example_4_hcms_sketch():
    """例4: n = 4, m = 2, k = 2, ε = ∞, S = ((1,1,1), (1,1,2), (1,2,1), (1,2,1)).

    x̃ = k c_ε w = 2 each; M = [[2, 2], [4, 0]]; M H_2 = [[4, 0], [4, 4]] (the seed labels
    the factor H_2^{-1} but multiplies by H_2, which is right: no 1/m); f̃(男) = 4. The
    seed's f̃(女) = 2 is impossible: (2/1)(½(M'[0, a] + M'[1, b]) - 2) is 0 or 4 for every
    hash value; with h_1(女) = 2 (its only value distinct from h_1(男)) it is 0.
    """
    mech = find_seed(lambda s: HCMS(NO_NOISE, 2, k=2, m=2, hash_seed=s),
                 lambda mech: np.array_equal(mech.hash_table[0], [0, 1]))
    assert mech.c_eps == 1.0
    reports = np.array([[0, 0, 1], [0, 1, 1], [1, 0, 1], [1, 0, 1]])
    for r in reports:
        single = mech.aggregate(r[None]).reshape(2, 2)
        assert single[r[0], r[1]] == 2 and np.count_nonzero(single) == 1
    agg = mech.aggregate(reports)
    assert np.array_equal(agg.reshape(2, 2), [[2, 2], [4, 0]])
    assert np.array_equal(mech.sketch(agg), [[4, 0], [4, 4]])
    est = mech.estimate_counts(agg, 4)
    assert est[MALE] == pytest.approx(4.0)
    assert est[FEMALE] == pytest.approx(0.0)
    reachable = {2 * (0.5 * (mech.sketch(agg)[0, a] + mech.sketch(agg)[1, b]) - 2)
                 for a in range(2) for b in range(2)}
    assert reachable == {0.0, 4.0}


# (b) moments against Monte-Carlo runs -------------------------------------------------

COUNTS = np.array([50, 100, 0, 30, 20])


@pytest.mark.parametrize("cls", [CMS, HCMS])
def test_fixed_keys_mean_and_variance_are_exact(cls):
    mech = cls(2.0, 5, k=3, m=4, hash_seed=3)
    n, runs = int(COUNTS.sum()), 4000
    est = estimated_counts(mech, COUNTS, runs, seed=11 + len(cls.name))
    mu = mech.expected_counts_given_keys(COUNTS)
    var = mech.variance(COUNTS / n, n) * n**2
    for i in range(5):
        assert_mean(est[:, i], mu[i])
        assert_mean((est[:, i] - mu[i]) ** 2, var[i])
    # The estimate is biased for fixed keys: the true counts are rejected for some item.
    assert not all(agrees(est[:, i], COUNTS[i]) for i in range(5))
    # Wrong constants are rejected: no m/(m-1) factor, or the other mechanism's c_ε.
    scale = ((mech.m - 1) / mech.m) ** 2
    other = CMS if cls is HCMS else HCMS
    c_other = other(2.0, 5, k=3, m=4, hash_seed=3).c_eps
    wrong_c = var + (mech.m / (mech.m - 1)) ** 2 * n * (
        (c_other**2 - mech.c_eps**2) / (4 if cls is CMS else 1))
    for wrong in (var * scale, wrong_c):
        assert not all(agrees((est[:, i] - mu[i]) ** 2, wrong[i]) for i in range(5))


def test_hcms_needs_the_full_epsilon_in_c():
    """Seed 003 §3 writes c_ε = (e^{ε/2}+1)/(e^{ε/2}-1) for HCMS: that estimate is biased."""
    mech = HCMS(1.0, 5, k=3, m=4, hash_seed=3)
    est = estimated_counts(mech, COUNTS, 2000, seed=5)
    mu = mech.expected_counts_given_keys(COUNTS)
    for i in range(5):
        assert_mean(est[:, i], mu[i])
    half = CMS(1.0, 5, k=3, m=4, hash_seed=3).c_eps  # the ε/2 constant
    m, n = mech.m, COUNTS.sum()
    raw = est * (m - 1) / m + n / m  # (1/k) sum M[l, h_l(d)], proportional to c_ε
    wrong = m / (m - 1) * (raw * half / mech.c_eps - n / m)
    assert not all(agrees(wrong[:, i], mu[i]) for i in range(5))


@pytest.mark.parametrize("cls", [CMS, HCMS])
def test_across_hash_seeds(cls):
    """Over the key draw: unbiased; Var = variance_over_keys where it is exact.

    Mass on items 0 and 1 only: for each of them at most one *other* item carries mass,
    so the 2-universal family suffices and the idealised formula is exact. Item 2 sees
    two items with mass, and the correlated collisions of the linear family push its
    variance above the idealised formula (the documented limitation). The per-seed
    conditional moments hold for every item (law of total variance).
    """
    counts = np.array([100, 150, 0])
    n, runs, eps, k, m = int(counts.sum()), 3000, 4.0, 2, 4
    x = np.repeat(np.arange(3), counts)
    rng = np.random.default_rng(21)
    est, mu, var = (np.empty((runs, 3)) for _ in range(3))
    for r in range(runs):
        mech = cls(eps, 3, k=k, m=m, hash_seed=10_000 + r)
        est[r] = mech.estimate_counts(mech.aggregate(mech.perturb(x, rng)), n)
        mu[r] = mech.expected_counts_given_keys(counts)
        var[r] = mech.variance(counts / n, n) * n**2
    total = mech.variance_over_keys(counts / n, n) * n**2
    for i in range(3):
        assert_mean(est[:, i], counts[i])  # bias over the keys: -(n - N_i)/P, ~1e-7
        assert_mean((est[:, i] - mu[:, i]) ** 2 - var[:, i], 0.0)
    dev2 = (est - counts) ** 2
    for i in (0, 1):
        assert_mean(dev2[:, i], total[i])
        # the variance if every user drew its own hash (generic pure-LDP) is rejected
        rho, c2 = mech.rho, mech.c_eps**2
        v_self, v_other = ((c2 - 1) / 4, (c2 - 1) / 4 + rho * (1 - rho)) if cls is CMS \
            else (c2 - 1, c2 - rho)
        generic = (m / (m - 1)) ** 2 * (counts[i] * v_self + (n - counts[i]) * v_other)
        assert not agrees(dev2[:, i], generic)
    se = dev2[:, 2].std(ddof=1) / math.sqrt(runs)
    assert dev2[:, 2].mean() > total[2] + Z * se


def test_collision_probability_is_exact():
    for m in (2, 3, 4, 1000, 1024):
        # pairs r != s in [0, P) with r = s mod m, class by class
        sizes = [(PRIME - 1 - c) // m + 1 for c in range(m)]
        exact = sum(s * (s - 1) for s in sizes) / (PRIME * (PRIME - 1))
        assert collision_probability(m) == exact
        assert abs(collision_probability(m) - 1 / m) <= 1 / PRIME
    for m in (2, 4, 1024):  # closed form for powers of two
        assert collision_probability(m) == pytest.approx(1 / m - (m - 1) / (m * PRIME),
                                                         rel=1e-15, abs=0)
    # and the family's keys realise it: collisions of two fixed items over random keys
    keys = draw_keys(np.random.default_rng(12), 400_000)
    same = hash_values(keys, 3, 4) == hash_values(keys, 4, 4)
    assert_mean(same, collision_probability(4))


def test_apple_estimate_is_the_generic_pure_ldp_estimator():
    """(C - n q*)/(p* - q*) with the support of each report gives the same counts."""
    for cls in (CMS, HCMS):
        mech = cls(1.5, 6, k=4, m=8, hash_seed=2)
        x = np.random.default_rng(3).integers(0, 6, 500)
        reports = mech.perturb(x, np.random.default_rng(4))
        j = reports[:, 0].astype(int)
        cols = mech.hash_table[j]  # (n, d): h_j(i) for each report and item
        if cls is CMS:
            support = np.take_along_axis(reports[:, 1:], cols, axis=1) == 1
        else:
            support = hadamard_entry(reports[:, 1:2], cols) * reports[:, 2:3] == 1
        generic = (support.sum(axis=0) - 500 * mech.q_star) / (mech.p_star - mech.q_star)
        est = mech.estimate_counts(mech.aggregate(reports), 500)
        assert np.allclose(generic, est, rtol=1e-6, atol=1e-6)


# (c) exact ε by likelihood ratios --------------------------------------------------------

def _all_outputs(mech) -> np.ndarray:
    if isinstance(mech, CMS):
        signs = np.array(list(itertools.product([-1, 1], repeat=mech.m)))
        return np.array([[j, *v] for j in range(mech.k) for v in signs], dtype=np.int8)
    return np.array([[j, ell, b] for j in range(mech.k) for ell in range(mech.m)
                     for b in (-1, 1)])


@pytest.mark.parametrize("cls", [CMS, HCMS])
def test_exact_epsilon_by_likelihood_ratio(cls):
    eps = 1.3
    mech = cls(eps, 4, k=3, m=4, hash_seed=1)
    outputs = _all_outputs(mech)
    logp = np.array([mech.log_probability(outputs, v) for v in range(4)])
    assert np.allclose(np.exp(logp).sum(axis=1), 1.0)
    # per coordinate (CMS) or per coefficient bit (HCMS)
    assert math.log(mech.p / mech.q) == pytest.approx(eps / 2 if cls is CMS else eps)
    worst = max((logp[a] - logp[b]).max() for a in range(4) for b in range(4) if a != b)
    assert worst == pytest.approx(eps, rel=1e-12)  # some row separates two items
    assert worst <= eps + 1e-12
    # the reports follow that law: empirical cell frequencies within Z binomial errors
    n = 100_000
    reports = mech.perturb(np.full(n, 2), np.random.default_rng(8))
    index = {tuple(o): i for i, o in enumerate(outputs.tolist())}
    cells = np.bincount([index[tuple(r)] for r in reports.tolist()], minlength=len(outputs))
    prob = np.exp(logp[2])
    assert np.all(np.abs(cells - n * prob) <= Z * np.sqrt(n * prob * (1 - prob)) + 1)


# (d) Clopper-Pearson audit ---------------------------------------------------------------

@pytest.mark.parametrize("cls", [CMS, HCMS])
def test_audit_lower_bound_is_positive_and_below_epsilon(cls):
    eps, trials = 1.0, 100_000
    mech = find_seed(lambda s: cls(eps, 4, k=4, m=8, hash_seed=s),
                 lambda mech: np.all(mech.hash_table[:, 0] != mech.hash_table[:, 1]))
    rng = np.random.default_rng(31)
    out0 = mech.perturb(np.zeros(trials, int), rng)
    out1 = mech.perturb(np.ones(trials, int), rng)

    def rejects(out):  # "input 1": the report favours h_j(1) over h_j(0)
        j = out[:, 0].astype(int)
        h0, h1 = mech.hash_table[j, 0], mech.hash_table[j, 1]
        if cls is CMS:
            rows = np.arange(len(out))
            return (out[rows, 1 + h1] == 1) & (out[rows, 1 + h0] == -1)
        w0, w1 = hadamard_entry(out[:, 1], h0), hadamard_entry(out[:, 1], h1)
        return (w0 != w1) & (out[:, 2] == w1)

    lb = audit.audit_membership(rejects(out0), rejects(out1))
    assert 0.8 * eps < lb <= eps


# (e) bad parameters ----------------------------------------------------------------------

@pytest.mark.parametrize("make,param", [
    (lambda: CMS(0.0, 10), "epsilon"),
    (lambda: CMS(math.inf, 10), "epsilon"),
    (lambda: HCMS(float("nan"), 10), "epsilon"),
    (lambda: CMS(1.0, 1), "domain"),
    (lambda: CMS(1.0, 10.5), "domain"),
    (lambda: CMS(1.0, 10, k=0), "k"),
    (lambda: CMS(1.0, 10, m=1), "m"),
    (lambda: HCMS(1.0, 10, m=24), "m"),
    (lambda: HCMS(1.0, 10, hash_seed=-1), "hash_seed"),
    (lambda: CMS(1.0, 10).perturb(np.array([0, 10]), np.random.default_rng()), "values"),
    (lambda: HCMS(1.0, 10).perturb(np.array([[1]]), np.random.default_rng()), "values"),
    (lambda: CMS(1.0, 10, m=4).aggregate(np.zeros((2, 5), np.int8)), "reports"),
    (lambda: HCMS(1.0, 10, m=4).aggregate(np.array([[0, 4, 1]])), "reports"),
    (lambda: HCMS(1.0, 10, m=4).aggregate(np.array([[0, 1, 0]])), "reports"),
    (lambda: CMS(1.0, 10, k=2, m=4).estimate_counts(np.zeros(7), 3), "aggregate"),
    (lambda: CMS(1.0, 10, k=2, m=4).estimate_counts(np.zeros(8), -3), "n"),
    (lambda: HCMS(1.0, 10).variance(np.ones(9) / 9, 100), "frequencies"),
])
def test_bad_parameters_name_the_parameter(make, param):
    with pytest.raises(InputError) as info:
        make()
    assert info.value.param == param


# (f) additivity, description ------------------------------------------------------------

@pytest.mark.parametrize("cls", [CMS, HCMS])
def test_aggregate_adds_up_and_describe_is_json(cls):
    mech = cls(1.0, 50, k=5, m=16, hash_seed=4)
    rng = np.random.default_rng(9)
    reports = mech.perturb(rng.integers(0, 50, 3000), rng)
    whole = mech.aggregate(reports)
    parts = mech.aggregate(reports[:1234]) + mech.aggregate(reports[1234:])
    assert np.allclose(whole, parts, rtol=1e-12, atol=1e-9)
    assert np.allclose(mech.estimate_counts(whole, 3000), mech.estimate_counts(parts, 3000))
    assert np.array_equal(mech.aggregate(reports[:0]), np.zeros(5 * 16))
    info = json.loads(json.dumps(mech.describe()))
    assert info["name"] == cls.name and info["epsilon"] == 1.0 and info["k"] == 5
    if cls is CMS:
        assert reports.dtype == np.int8 and reports.shape == (3000, 17)
    else:
        assert reports.dtype == np.int64 and reports.shape == (3000, 3)


def test_defaults():
    cms, hcms = CMS(1.0, 100), HCMS(1.0, 100)
    assert (cms.k, cms.m, hcms.k, hcms.m) == (16, 1024, 16, 1024)
    assert cms.c_eps == pytest.approx((math.exp(0.5) + 1) / (math.exp(0.5) - 1))
    assert hcms.c_eps == pytest.approx((math.e + 1) / (math.e - 1))
    assert CMS(1.0, 100, k=200).report_dtype == np.int16
    # same seed, same keys: the hash functions are public and reproducible
    assert np.array_equal(CMS(1.0, 100, hash_seed=7).hash_table,
                          CMS(2.0, 100, hash_seed=7).hash_table)
