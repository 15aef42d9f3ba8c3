import json
import math

import numpy as np
import pytest
from _stats import agrees
from conftest import Z, assert_mean

from netdp.audit import lower_bounds as audit
from netdp.core.errors import InputError
from netdp.mechanisms.bounded import HYBRID_THRESHOLD, Duchi, Hybrid, Piecewise

XS = np.array([-1.0, -0.4, 0.0, 0.7, 1.0])
N_PER_X = 100_000


def _errors(mech, seed: int) -> np.ndarray:
    """``estimate - x`` for N_PER_X runs at each x in XS: shape (len(XS), N_PER_X)."""
    x = np.repeat(XS, N_PER_X)
    reports = mech.perturb(x, np.random.default_rng(seed))
    return (mech.estimate(reports) - x).reshape(len(XS), N_PER_X)


def _piecewise_moments(mech: Piecewise, x: float) -> tuple[float, float, float]:
    """Mass, mean and variance of the Piecewise law at x by exact piecewise integration."""
    left, right = (float(v) for v in mech.interval(x))
    pieces = [(-mech.C, left, mech.density_low), (left, right, mech.density_high),
              (right, mech.C, mech.density_low)]
    mass = sum(h * (b - a) for a, b, h in pieces)
    mean = sum(h * (b**2 - a**2) / 2 for a, b, h in pieces)
    second = sum(h * (b**3 - a**3) / 3 for a, b, h in pieces)
    return mass, mean, second - mean**2


# (a) unbiased, closed-form variance ------------------------------------------------------

def _wrong_variances(mech, eps: float) -> dict[str, np.ndarray]:
    """Plausible wrong closed forms; the Monte-Carlo check must reject each of them."""
    t = math.exp(eps / 2)
    pm_wrong = XS**2 / (t - 1) + (t + 3) / (3 * (t - 1))  # (t-1) instead of (t-1)²
    if isinstance(mech, Duchi):
        return {"no -x²": np.full(XS.shape, mech.C**2), "x² added": mech.C**2 + XS**2}
    if isinstance(mech, Piecewise):
        return {"(t-1) not squared": pm_wrong, "no x² term": mech.variance(XS) - XS**2 / (t - 1)}
    d, pm = mech.duchi.variance(XS), mech.piecewise.variance(XS)
    return {"weights swapped": (1 - mech.alpha) * pm + mech.alpha * d,
            "Duchi only": d, "PM only": pm}


@pytest.mark.parametrize("cls", [Duchi, Piecewise, Hybrid])
@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_unbiased_with_the_closed_form_variance(cls, eps):
    mech = cls(eps)
    err = _errors(mech, seed=int(eps * 100) + len(cls.name))
    var = mech.variance(XS)
    for i in range(len(XS)):
        assert_mean(err[i], 0.0, std=math.sqrt(var[i]))
        # E[(y - x)²] = Var(y); the SE of the mean of squares uses the 4th moment
        assert agrees(err[i] ** 2, var[i]), (cls.name, eps, XS[i])
        se = (err[i] ** 2).std(ddof=1) / math.sqrt(N_PER_X)
        assert Z * se < 0.1 * var[i]  # the check resolves a 10 % error in the variance
    # the same samples reject every wrong formula at some x
    if isinstance(mech, Hybrid) and mech.alpha == 0:
        return  # pure Duchi: the mixture variants coincide with the truth
    for label, wrong in _wrong_variances(mech, eps).items():
        assert not all(agrees(err[i] ** 2, wrong[i]) for i in range(len(XS))), label


@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
def test_duchi_closed_forms(eps):
    mech = Duchi(eps)
    e = math.exp(eps)
    assert (e + 1) / (e - 1) == pytest.approx(mech.C, rel=1e-13)
    x = np.linspace(-1, 1, 9)
    assert mech.prob_plus(x) == pytest.approx(0.5 + x * (e - 1) / (2 * (e + 1)), rel=1e-13)
    # mean and variance of the two-point law
    p = mech.prob_plus(x)
    mean = mech.C * (2 * p - 1)
    assert mean == pytest.approx(x, abs=1e-12)
    assert mech.variance(x) == pytest.approx(mech.C**2 - mean**2, rel=1e-12)


@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
def test_piecewise_closed_forms_by_exact_integration(eps):
    mech = Piecewise(eps)
    t = math.exp(eps / 2)
    assert (t + 1) / (t - 1) == pytest.approx(mech.C, rel=1e-12)
    assert mech.density_high == pytest.approx((t * t - t) / (2 * t + 2), rel=1e-12)
    for x in np.linspace(-1, 1, 11):
        left, right = mech.interval(x)
        assert left == pytest.approx((mech.C + 1) * x / 2 - (mech.C - 1) / 2)
        assert right - left == pytest.approx(mech.C - 1)
        assert left >= -mech.C - 1e-12 and right <= mech.C + 1e-12
        mass, mean, var = _piecewise_moments(mech, x)
        assert mass == pytest.approx(1.0, rel=1e-12)
        assert mean == pytest.approx(x, abs=1e-11)
        assert var == pytest.approx(x**2 / (t - 1) + (t + 3) / (3 * (t - 1) ** 2), rel=1e-10)
        assert var == pytest.approx(float(mech.variance(x)), rel=1e-10)


def test_piecewise_sampler_follows_the_density():
    """Binned reports at one x against the exact law: each bin within Z binomial SEs."""
    mech = Piecewise(1.0)
    x, n = 0.3, 400_000
    reports = mech.perturb(np.full(n, x), np.random.default_rng(11))
    assert np.all(np.abs(reports) <= mech.C)
    left, right = (float(v) for v in mech.interval(x))
    edges = np.union1d(np.linspace(-mech.C, mech.C, 41), [left, right])
    mids = (edges[:-1] + edges[1:]) / 2
    probs = mech.density(mids, x) * np.diff(edges)
    assert probs.sum() == pytest.approx(1.0, rel=1e-12)
    counts, _ = np.histogram(reports, bins=edges)
    se = np.sqrt(n * probs * (1 - probs))
    assert np.all(np.abs(counts - n * probs) <= Z * se)
    # a wrong centre probability (ε instead of ε/2) would be rejected on the centre bins
    in_centre = np.count_nonzero((reports >= left) & (reports <= right))
    wrong = math.exp(1.0) / (math.exp(1.0) + 1)
    assert abs(in_centre - n * wrong) > Z * math.sqrt(n * wrong * (1 - wrong))


# (b) exact ε by likelihood ratios --------------------------------------------------------

@pytest.mark.parametrize("eps", [0.05, 0.5, 1.0, 3.0, 8.0])
def test_duchi_exact_epsilon(eps):
    mech = Duchi(eps)
    plus = mech.prob_plus(np.array([1.0, -1.0]))
    ratios = [plus[0] / plus[1], (1 - plus[1]) / (1 - plus[0])]
    assert math.log(max(ratios)) == pytest.approx(eps, rel=1e-12)
    # over every pair of inputs on a grid the ratio never exceeds e^ε
    x = np.linspace(-1, 1, 41)
    p = mech.prob_plus(x)
    worst = max(np.log(p[:, None] / p[None, :]).max(), np.log((1 - p)[:, None] / (1 - p)).max())
    assert worst <= eps * (1 + 1e-12)


@pytest.mark.parametrize("eps", [0.05, 0.5, 1.0, 3.0, 8.0])
def test_piecewise_exact_epsilon(eps):
    mech = Piecewise(eps)
    x = np.linspace(-1, 1, 41)
    y = np.linspace(-mech.C, mech.C, 4001)
    dens = mech.density(y[None, :], x[:, None])  # (len(x), len(y))
    assert np.all(dens > 0)
    log_ratio = np.log(dens.max(axis=0)) - np.log(dens.min(axis=0))
    assert log_ratio.max() == pytest.approx(eps, rel=1e-12)
    assert math.log(mech.density_high / mech.density_low) == pytest.approx(eps, rel=1e-12)


def test_hybrid_is_the_stated_mixture():
    mech = Hybrid(2.0)
    assert mech.alpha == pytest.approx(1 - math.exp(-1.0), rel=1e-13)
    n = 200_000
    reports = mech.perturb(np.full(n, 0.5), np.random.default_rng(12))
    atoms = np.isin(reports, [mech.duchi.C, -mech.duchi.C])
    # Duchi's atoms occur w.p. 1 - α (PM hits them with probability 0)
    assert_mean(atoms, 1 - mech.alpha, std=math.sqrt(mech.alpha * (1 - mech.alpha)))
    # both parts are ε-LDP with ratio exactly e^ε, so the mixture is
    plus = mech.duchi.prob_plus(np.array([1.0, -1.0]))
    assert math.log(plus[0] / plus[1]) == pytest.approx(2.0, rel=1e-12)
    pm = mech.piecewise
    assert math.log(pm.density_high / pm.density_low) == pytest.approx(2.0, rel=1e-12)


# (c) Clopper-Pearson audit ---------------------------------------------------------------

@pytest.mark.parametrize("cls,threshold", [(Duchi, 0.0), (Piecewise, 1.0), (Hybrid, 1.0)])
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_audit_lower_bound_is_positive_and_below_epsilon(cls, threshold, eps):
    """Inputs -1 vs 1; the test set {y > threshold} is where the likelihood ratio is e^ε.

    Duchi: {+C}. PM: [l(1), r(1)] = [1, C], low density under x = -1. Hybrid: both, as
    Duchi's atom C_duchi > 1.
    """
    mech = cls(eps)
    n = 100_000
    rng = np.random.default_rng(13)
    out0 = mech.perturb(np.full(n, -1.0), rng)
    out1 = mech.perturb(np.full(n, 1.0), rng)
    lb = audit.audit_threshold(out0, out1, threshold)
    assert 0.8 * eps < lb <= eps


# (d) bad parameters ----------------------------------------------------------------------

@pytest.mark.parametrize("cls", [Duchi, Piecewise, Hybrid])
def test_bad_parameters_are_refused(cls):
    for eps in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(InputError, match="epsilon") as info:
            cls(eps)
        assert info.value.param == "epsilon"
    with pytest.raises(InputError, match="delta"):
        cls(1.0, delta=1e-5)
    mech = cls(1.0)
    rng = np.random.default_rng(0)
    for bad in ([0.0, 1.5], [-1.01], [math.nan], [math.inf]):
        with pytest.raises(InputError, match="values") as info:
            mech.perturb(np.array(bad), rng)
        assert info.value.param == "values"


@pytest.mark.parametrize("cls", [Duchi, Piecewise, Hybrid])
def test_describe_is_json_safe_and_shapes_follow_the_input(cls):
    mech = cls(1.0)
    info = json.loads(json.dumps(mech.describe()))
    assert info["name"] == cls.name and info["epsilon"] == 1.0 and info["delta"] == 0.0
    assert any(key.startswith("C") for key in info)
    x = np.zeros((3, 4))
    assert mech.perturb(x, np.random.default_rng(1)).shape == (3, 4)
    assert mech.variance(x).shape == (3, 4)
    with pytest.raises(AttributeError):
        mech.epsilon = 2.0  # frozen


# (e) Hybrid below the threshold ----------------------------------------------------------

@pytest.mark.parametrize("eps", [0.1, 0.5, HYBRID_THRESHOLD])
def test_hybrid_below_threshold_is_pure_duchi(eps):
    hybrid, duchi = Hybrid(eps), Duchi(eps)
    assert hybrid.alpha == 0.0
    x = np.linspace(-1, 1, 1001)
    out_h = hybrid.perturb(x, np.random.default_rng(3))
    out_d = duchi.perturb(x, np.random.default_rng(3))
    np.testing.assert_array_equal(out_h, out_d)
    assert set(np.unique(out_h)) <= {duchi.C, -duchi.C}
    np.testing.assert_array_equal(hybrid.variance(x), duchi.variance(x))
    assert hybrid.describe()["alpha"] == 0.0


def test_hybrid_above_threshold_mixes_and_beats_both_parts():
    mech = Hybrid(HYBRID_THRESHOLD + 1e-6)
    assert mech.alpha > 0
    for eps in (1.0, 3.0):
        mech = Hybrid(eps)
        worst = float(mech.variance(np.array(1.0)))
        assert worst <= float(mech.duchi.variance(np.array(0.0)))  # Duchi's worst case
        assert worst <= float(mech.piecewise.variance(np.array(1.0)))  # PM's worst case
