"""PLDs of Gaussian mixtures (netdp.accounting.mixture_pld) against independent references.

Tolerances come from the grid: a pessimistic PMF rounds each loss up by less than ``h``,
the optimistic one down by less than ``h``, so for ``k`` composed factors
``optimistic <= exact <= pessimistic`` and ``pessimistic - optimistic <= k h`` (the two
PMFs of one factor are the same masses one grid step apart). The references:

* the Gaussian mechanism's closed form, inverted here by bisection;
* dp_accounting's Poisson-subsampled Gaussian PLD (its own bracket);
* the hockey-stick divergence ``∫ (a - e^ε b)_+`` integrated by scipy's ``quad`` (1-D for
  one mixture, nested 1-D in 1-D for the composition of two), written from the definition.

The midpoint of the bracket errs by O(h²) (the rounding offsets average out), which is
how h = 1e-4 reaches the 1e-6 checks in ε; h = 1e-6 would need ~35M grid points per
factor here (several GB), so no test builds it.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

from netdp.accounting.loss_pmf import TRUNCATION_MASS, LossPmf, PldPair
from netdp.accounting.mixture_pld import MAX_LOSS, mixture_pld

DELTAS = (1e-9, 1e-6, 1e-3)
SLACK = 1e-9  # float slack on the bracket checks (ε values are ~1..30)


def _binomial_shifted() -> np.ndarray:
    """Count 1 + Binomial(4, 0.3): w_0 = 0, K_max = 5."""
    return np.concatenate(([0.0], stats.binom.pmf(np.arange(5), 4, 0.3)))


def _bracket(w, s, h, **kw) -> tuple[PldPair, PldPair]:
    return mixture_pld(w, s, h=h, **kw), mixture_pld(w, s, h=h, pessimistic=False, **kw)


# --------------------------------------------------------------------------------------
# Gaussian closed form, inverted by bisection (independent of netdp.accounting.accountants)


def _gauss_delta(mu: float, eps: float) -> float:
    a = special.log_ndtr(-eps / mu + mu / 2)
    b = eps + special.log_ndtr(-eps / mu - mu / 2)
    return math.exp(a) * -math.expm1(b - a)


def _gauss_epsilon(mu: float, delta: float) -> float:
    lo, hi = 0.0, mu * mu / 2 + mu * math.sqrt(2 * math.log(1 / delta)) + 1.0
    if _gauss_delta(mu, 0.0) <= delta:
        return 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _gauss_delta(mu, mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


@pytest.mark.parametrize(("c", "s", "h"), [(1, 1.0, 1e-3), (2, 1.5, 1e-3), (1, 0.5, 1e-4),
                                           (3, 10.0, 1e-4), (1, 0.05, 1e-3),
                                           (10, 1e3, 1e-5)])
def test_a_point_mass_is_the_gaussian_mechanism(c, s, h):
    """w = e_c: mu = c / s, bracketed within one grid step (also tiny and large s)."""
    w = np.zeros(c + 1)
    w[c] = 1.0
    pess, opt = _bracket(w, s, h)
    for delta in DELTAS:
        exact = _gauss_epsilon(c / s, delta)
        hi, lo = float(pess.epsilon(delta)), float(opt.epsilon(delta))
        assert lo - SLACK <= exact <= hi + SLACK, (delta, lo, exact, hi)
        assert hi - lo <= h * (1 + 1e-4)


@pytest.mark.parametrize("k", [2, 16, 25])
def test_k_identical_gaussians_are_one_gaussian_with_mu_sqrt_k(k):
    h = 1e-3
    pess, opt = _bracket([0.0, 1.0], 2.0, h)
    many = PldPair.compose_many([pess] * k)
    power = pess.self_compose(k)
    low = opt.self_compose(k)
    for delta in DELTAS:
        exact = _gauss_epsilon(math.sqrt(k) / 2.0, delta)
        hi, lo = float(many.epsilon(delta)), float(low.epsilon(delta))
        assert lo - SLACK <= exact <= hi + SLACK
        # + the truncation: k - 1 compositions add <= TRUNCATION_MASS each to δ, and
        # d log δ / dε >= 1/2 for a Gaussian
        assert hi - lo <= k * h * (1 + 1e-4) + 2 * (k - 1) * TRUNCATION_MASS / delta
        # another order of truncations
        assert float(power.epsilon(delta)) == pytest.approx(hi, abs=2 * k * TRUNCATION_MASS
                                                            / delta)


@pytest.mark.parametrize(("q", "s"), [(0.01, 0.8), (0.2, 2.0), (0.5, 1.0)])
def test_poisson_subsampled_gaussian_matches_dp_accounting(q, s):
    """w = (1 - q, q) against dp_accounting's subsampled Gaussian (connect-the-dots PLD,
    also a bracket): the two brackets overlap and the values agree within a grid step."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    h = 1e-4
    pess, opt = _bracket([1 - q, q], s, h)
    lib = {p: pld_lib.from_gaussian_mechanism(standard_deviation=s, sampling_prob=q,
                                              pessimistic_estimate=p,
                                              value_discretization_interval=h)
           for p in (True, False)}
    for delta in DELTAS:
        hi, lo = float(pess.epsilon(delta)), float(opt.epsilon(delta))
        lib_hi = lib[True].get_epsilon_for_delta(delta)
        lib_lo = lib[False].get_epsilon_for_delta(delta)
        assert lo <= lib_hi + SLACK and lib_lo <= hi + SLACK, (lo, hi, lib_lo, lib_hi)
        assert abs(hi - lib_hi) <= 2 * h


# --------------------------------------------------------------------------------------
# Brute force: the hockey-stick divergence integrated from its definition


_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _log_densities(w: np.ndarray, s: float):
    """Log densities of P and of the (un-normalised) finite part of Q on ``t = y / s``
    (``N(0, 1)`` and ``Σ w_k N(k / s, 1)``), in plain floats (quad calls them a lot)."""
    terms = [(math.log(w[k]), k / s) for k in np.flatnonzero(w)]

    def log_p(t: float) -> float:
        return -0.5 * t * t - _LOG_SQRT_2PI

    def log_q(t: float) -> float:
        xs = [lw - 0.5 * (t - m) ** 2 for lw, m in terms]
        top = max(xs)
        return top + math.log(sum(math.exp(x - top) for x in xs)) - _LOG_SQRT_2PI

    return log_p, log_q, max(m for _, m in terms)


def _sf(x: float) -> float:
    """Pr[N(0, 1) > x] with relative precision in the tail."""
    return 0.5 * math.erfc(x / math.sqrt(2))


def _half_line_integral(f, log_ratio, target, lo, hi, epsrel=1e-12):
    """∫_lo^hi f, split at the (unique) crossing of the monotone ``log_ratio`` with
    ``target``, where ``f`` has its kink."""
    g_lo, g_hi = log_ratio(lo) - target, log_ratio(hi) - target
    pieces = [lo, hi]
    if g_lo * g_hi < 0:
        pieces = [lo, optimize.brentq(lambda t: log_ratio(t) - target, lo, hi, xtol=1e-14), hi]
    return sum(integrate.quad(f, a, b, epsabs=0.0, epsrel=epsrel, limit=400)[0]
               for a, b in zip(pieces[:-1], pieces[1:], strict=False))


def _bf_delta(w, s, eps, tail=0.0) -> float:
    """max over the two directions of τ[Q] + ∫ (a - e^ε b)_+ dt, by quad."""
    log_p, log_q, top = _log_densities(np.asarray(w, float), s)
    lo, hi = -40.0, top + 40.0

    def qp(t: float) -> float:
        return max(math.exp(log_q(t)) - math.exp(eps + log_p(t)), 0.0)

    def pq(t: float) -> float:
        return max(math.exp(log_p(t)) - math.exp(eps + log_q(t)), 0.0)

    ratio = lambda t: log_q(t) - log_p(t)  # noqa: E731
    d_qp = tail + _half_line_integral(qp, ratio, eps, lo, hi)
    d_pq = _half_line_integral(pq, ratio, -eps, lo, hi)
    return max(d_qp, d_pq)


def _bf_delta_2d(m1, m2, eps, nested: bool = False) -> float:
    """max over the two directions of ∫∫ (a1 a2 - e^ε b1 b2)_+ dt2 dt1 by quad in t1; the
    inner integral over t2 is either a quad too (``nested``) or exact: the integrand is
    positive on one side of its kink (found by brentq), where it integrates to
    ``a1 A2[side] - e^ε b1 B2[side]`` with the normal CDFs."""
    (lp1, lq1, top1), (lp2, lq2, top2) = (_log_densities(np.asarray(w, float), s)
                                          for w, s in (m1, m2))
    w2, s2 = np.asarray(m2[0], float), m2[1]
    k2 = np.flatnonzero(w2)
    lo2, hi2 = -40.0, top2 + 40.0

    def ratio2(t2: float) -> float:
        return lq2(t2) - lp2(t2)

    comps = [(float(w2[k]), k / s2) for k in k2]

    def q2_mass(t2: float, above: bool) -> float:  # Q2[T > t2] or Q2[T < t2]
        return sum(wk * _sf(t2 - m if above else m - t2) for wk, m in comps)

    out = 0.0
    for sign in (1.0, -1.0):  # +: (Q, P), positive where t2 is large; -: (P, Q), small
        la1, lb1 = (lq1, lp1) if sign > 0 else (lp1, lq1)
        la2, lb2 = (lq2, lp2) if sign > 0 else (lp2, lq2)

        def inner(t1: float, la1=la1, lb1=lb1, la2=la2, lb2=lb2, sign=sign) -> float:
            a1, lb = la1(t1), eps + lb1(t1)
            target = sign * (lb - a1)  # the kink: log(q2/p2)(t2) = target
            if nested:
                def f(t2: float) -> float:
                    return max(math.exp(a1 + la2(t2)) - math.exp(lb + lb2(t2)), 0.0)

                return _half_line_integral(f, ratio2, target, lo2, hi2, epsrel=1e-9)
            g_lo, g_hi = ratio2(lo2) - target, ratio2(hi2) - target
            if g_lo * g_hi < 0:
                kink = optimize.brentq(lambda t2: ratio2(t2) - target, lo2, hi2, xtol=1e-14)
            else:  # no crossing: positive everywhere or nowhere
                kink = -math.inf if (g_lo > 0) == (sign > 0) else math.inf
            if sign > 0:  # (Q, P): t2 > kink
                val = math.exp(a1) * q2_mass(kink, True) - math.exp(lb) * _sf(kink)
            else:  # (P, Q): t2 < kink
                val = math.exp(a1) * _sf(-kink) - math.exp(lb) * q2_mass(kink, False)
            return max(val, 0.0)

        out = max(out, integrate.quad(inner, -40.0, top1 + 40.0, epsabs=0.0,
                                      epsrel=1e-8 if nested else 1e-11, limit=200)[0])
    return out


def _bf_epsilon(delta_fn, delta: float) -> float:
    if delta_fn(0.0) <= delta:
        return 0.0
    hi = 1.0
    while delta_fn(hi) > delta:
        hi *= 2
    return optimize.brentq(lambda e: delta_fn(e) / delta - 1.0, 0.0, hi, xtol=1e-11,
                           rtol=1e-13)


@pytest.mark.parametrize(("w", "s", "tail"), [
    (_binomial_shifted(), 1.5, 0.0),
    ([0.6, 0.3, 0.1 - 1e-10], 1.0, 1e-10),  # w_0 > 0 and a tail below the smallest δ
    (stats.binom.pmf(np.arange(11), 10, 0.3), 1e3, 0.0),  # large s: tiny losses
])
def test_one_mixture_against_quadrature(w, s, tail):
    """δ by quadrature at the bracket's ends brackets the target (soundness); its ε, found
    by brentq between them, is the bracket's midpoint to 1e-6."""
    h = 1e-4
    pess, opt = _bracket(w, s, h, tail=tail)
    for delta in DELTAS:
        hi, lo = float(pess.epsilon(delta)), float(opt.epsilon(delta))
        assert hi - lo <= h * (1 + 1e-4)
        assert _bf_delta(w, s, hi, tail) <= delta * (1 + 1e-9)
        if lo == 0.0:
            continue
        assert _bf_delta(w, s, lo, tail) >= delta * (1 - 1e-9)
        exact = optimize.brentq(lambda e, d=delta: _bf_delta(w, s, e, tail) / d - 1.0, lo, hi,
                                xtol=1e-12)
        assert abs(0.5 * (hi + lo) - exact) <= 1e-6, (delta, 0.5 * (hi + lo) - exact)


@functools.lru_cache(maxsize=2)
def _two_mixtures(h: float):
    m1, m2 = (_binomial_shifted(), 1.5), ([0.5, 0.3, 0.2], 1.0)
    (p1, o1), (p2, o2) = (_bracket(w, s, h) for w, s in (m1, m2))
    return m1, m2, p1.compose(p2), o1.compose(o2)


@pytest.mark.parametrize("delta", DELTAS)
def test_two_mixtures_composed_against_2d_quadrature(delta):
    """Two different mixtures composed: δ of the 2-D integral at the bracket's ends brackets
    the target (soundness), and one Newton step from the midpoint to the exact ε is
    below 1e-6."""
    m1, m2, pess, opt = _two_mixtures(h := 1e-4)
    hi, lo = float(pess.epsilon(delta)), float(opt.epsilon(delta))
    assert hi - lo <= 2 * h * (1 + 1e-4) + 2 * TRUNCATION_MASS / delta
    assert _bf_delta_2d(m1, m2, hi) <= delta * (1 + 1e-9)
    assert _bf_delta_2d(m1, m2, lo) >= delta * (1 - 1e-9)
    mid = 0.5 * (hi + lo)
    d_mid = _bf_delta_2d(m1, m2, mid)
    slope = (_bf_delta_2d(m1, m2, mid + 1e-5) - d_mid) / 1e-5  # dδ/dε < 0
    assert abs((delta - d_mid) / slope) <= 1e-6


@pytest.mark.slow
def test_two_mixtures_against_nested_quadrature_and_a_finer_grid():
    """The inner integral by quad as well (a genuine 2-D quadrature), then
    h = 1e-5: bracket 2e-5 wide, its midpoint within 1e-7 of the quadrature's ε."""
    m1, m2, pess, opt = _two_mixtures(1e-4)
    hi, lo = float(pess.epsilon(1e-6)), float(opt.epsilon(1e-6))
    assert _bf_delta_2d(m1, m2, hi, nested=True) <= 1e-6 * (1 + 1e-6)
    assert _bf_delta_2d(m1, m2, lo, nested=True) >= 1e-6 * (1 - 1e-6)
    m1, m2, pess, opt = _two_mixtures(h := 1e-5)
    for delta in DELTAS:
        exact = _bf_epsilon(lambda e: _bf_delta_2d(m1, m2, e), delta)
        hi, lo = float(pess.epsilon(delta)), float(opt.epsilon(delta))
        assert lo - SLACK <= exact <= hi + SLACK
        assert hi - lo <= 2 * h * (1 + 1e-4) + 2 * TRUNCATION_MASS / delta
        assert abs(0.5 * (hi + lo) - exact) <= 1e-7


# --------------------------------------------------------------------------------------
# Edge cases of the mixture


@pytest.mark.parametrize("w", [[1.0], [1.0, 0.0, 0.0]])
def test_no_contribution_is_the_identity(w):
    for pess in (True, False):
        pair = mixture_pld(w, 1.0, pessimistic=pess)
        for pmf in (pair.qp, pair.pq):
            assert pmf.lower == 0 and list(pmf.probs) == [1.0] and pmf.inf_mass == 0.0
        assert float(pair.epsilon(1e-9)) == 0.0


def test_a_tail_alone_is_mass_at_infinity():
    """w = (0.9), tail 0.1: Q-vs-P has 0.1 at +∞ and 0.9 at log 0.9; P-vs-Q all at -log 0.9."""
    pair = mixture_pld([0.9], 1.0, h=1e-3, tail=0.1)
    assert pair.qp.inf_mass == pytest.approx(0.1)
    assert float(pair.epsilon(0.05)) == math.inf
    # P vs Q: δ(ε) = 1 - e^{ε - ℓ} with ℓ = -log 0.9 rounded up
    ell = math.ceil(-math.log(0.9) / 1e-3) * 1e-3
    assert float(pair.pq.delta(0.05)) == pytest.approx(-math.expm1(0.05 - ell), rel=1e-12)
    assert float(pair.pq.epsilon(0.05)) == pytest.approx(ell + math.log(0.95), rel=1e-12)
    assert float(pair.qp.epsilon(0.1)) == 0.0  # δ(0) = 0.1 (the +∞ mass; log 0.9 < 0)
    assert float(pair.epsilon(0.1)) == pytest.approx(ell + math.log(0.9), rel=1e-9)


def test_the_tail_is_pessimistic_against_its_true_law():
    """K ~ Binomial(20, 0.1) cut at K_max = 3: the +∞ count bounds the full mixture."""
    law = stats.binom.pmf(np.arange(21), 20, 0.1)
    tail = float(law[4:].sum())
    cut = mixture_pld(law[:4], 2.0, h=1e-3, tail=tail)
    full = mixture_pld(law, 2.0, h=1e-3, pessimistic=False)
    for delta in (tail * 1.5, 1e-2, 1e-1):
        assert float(cut.epsilon(delta)) >= float(full.epsilon(delta))


def test_a_long_count_law_prunes_without_changing_anything():
    """Poisson(3) on 0..300 (weights down to 1e-300) equals its cut at 40 (< 1e-28 lost)."""
    k = np.arange(301)
    law = stats.poisson.pmf(k, 3.0)
    long = mixture_pld(law / law.sum(), 10.0)
    short = mixture_pld(law[:41] / law[:41].sum(), 10.0)
    for delta in DELTAS:
        assert float(long.epsilon(delta)) == pytest.approx(float(short.epsilon(delta)),
                                                           abs=1e-9)


def test_tiny_s_caps_the_losses_without_overflow():
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        pair = mixture_pld(stats.binom.pmf(np.arange(11), 10, 0.3), 0.05)
        low = mixture_pld(stats.binom.pmf(np.arange(11), 10, 0.3), 0.05, pessimistic=False)
        sub = mixture_pld([0.999, 0.001], 0.05)
    # losses ~ k²/(2 s²) = 200 k²: beyond the cap they are +∞ (pessimistic) or the cap
    assert pair.qp.inf_mass > 0.5
    assert float(pair.epsilon(1e-3)) == math.inf
    assert float(low.epsilon(1e-3)) == pytest.approx(MAX_LOSS, abs=1e-2)
    assert math.isfinite(float(sub.epsilon(2e-3)))


def test_large_s_keeps_the_losses_small():
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        pair = mixture_pld(stats.binom.pmf(np.arange(11), 10, 0.3), 1e3, h=1e-5)
    assert pair.qp.probs.size < 20_000
    assert 0.0 < float(pair.epsilon(1e-6)) < 0.02


def test_both_directions_hold_all_the_mass():
    for pmf in (p for pair in _bracket(_binomial_shifted(), 1.5, 1e-3) for p in
                (pair.qp, pair.pq)):
        assert pmf.total == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize(("kw", "msg"), [
    ({"w": [0.5, 0.4]}, "sum to 1"), ({"w": [-0.1, 1.1]}, "probabilities"),
    ({"w": [0.5, 0.5], "s": 0.0}, "s must"), ({"w": [0.5, 0.5], "h": -1.0}, "h must"),
    ({"w": [0.5, 0.5], "tail": 1.0}, "tail"), ({"w": []}, "probabilities"),
    ({"w": [0.5, 0.5], "h": 1e-9}, "larger h"),
])
def test_bad_inputs_are_refused(kw, msg):
    args = {"s": 1.0, **kw}
    with pytest.raises(ValueError, match=msg):
        mixture_pld(**args)


# --------------------------------------------------------------------------------------
# The PMF itself


def _random_pmf(rng, lower, size, inf_mass=0.0, h=0.01, pessimistic=True) -> LossPmf:
    p = rng.random(size)
    return LossPmf(lower, p / p.sum() * (1 - inf_mass), inf_mass, h, pessimistic)


def test_delta_is_the_hockey_stick_sum():
    rng = np.random.default_rng(1)
    pmf = _random_pmf(rng, -50, 200, inf_mass=1e-4)
    eps = np.array([-1.0, 0.0, 0.123, 0.5, 1.49, 1.5, 3.0, np.inf])
    ell = pmf.losses
    ref = [pmf.inf_mass + sum(p * max(0.0, 1 - math.exp(e - x)) for p, x in
                              zip(pmf.probs, ell, strict=True)) if np.isfinite(e)
           else pmf.inf_mass for e in eps]
    np.testing.assert_allclose(pmf.delta(eps), ref, rtol=1e-12, atol=0)
    assert isinstance(pmf.delta(0.3), float | np.floating)


def test_epsilon_inverts_delta_exactly():
    rng = np.random.default_rng(2)
    pmf = _random_pmf(rng, -30, 150, inf_mass=1e-7)
    deltas = np.array([2e-7, 1e-4, 1e-2, 0.1, 0.3])
    eps = pmf.epsilon(deltas)
    np.testing.assert_allclose(pmf.delta(eps), deltas, rtol=1e-9)
    assert np.all(eps >= 0)
    assert float(pmf.epsilon(1e-8)) == math.inf  # below the mass at +∞
    assert float(pmf.epsilon(1.0)) == 0.0
    # a PMF entirely above 0 (no grid point at 0 inside it)
    high = LossPmf(200, [0.5, 0.5], 0.0, 0.01)
    e = float(high.epsilon(0.25))
    assert float(high.delta(e)) == pytest.approx(0.25, rel=1e-12)


def test_compose_is_the_convolution_with_a_bounded_truncation():
    rng = np.random.default_rng(3)
    a = _random_pmf(rng, -40, 2000, inf_mass=1e-3)
    b = _random_pmf(rng, 10, 3000, inf_mass=2e-3)
    c = a.compose(b)
    full = np.convolve(a.probs, b.probs)
    off = c.lower - (a.lower + b.lower)
    assert off >= 0 and off + c.probs.size <= full.size
    moved = full.sum() - c.probs.sum()
    assert moved <= TRUNCATION_MASS + 1e-15
    np.testing.assert_allclose(c.probs[1:-1], full[off + 1 : off + c.probs.size - 1],
                               rtol=1e-9, atol=1e-18)
    inf = 1 - (1 - 1e-3) * (1 - 2e-3)
    assert c.inf_mass == pytest.approx(inf, abs=TRUNCATION_MASS)
    assert c.total == pytest.approx(1.0, abs=1e-14)


def test_truncation_moves_mass_up_when_pessimistic_and_down_when_not():
    p = np.array([1e-17, 1e-17, 0.5, 0.5 - 4e-17, 1e-17, 1e-17])
    pess = LossPmf(0, p, 0.0, 0.1).compose(LossPmf.identity(0.1))
    opt = LossPmf(0, p, 0.0, 0.1, pessimistic=False).compose(LossPmf.identity(0.1, False))
    assert pess.lower == 2 and pess.probs.size == 2 and pess.inf_mass >= 2e-17
    assert pess.probs[0] == pytest.approx(0.5 + 2e-17, abs=1e-30)
    assert opt.lower == 2 and opt.probs[-1] >= 0.5 - 4e-17 + 2e-17 - 1e-30
    assert opt.inf_mass == 0.0


def test_self_compose_and_compose_many_agree_with_plain_composition():
    rng = np.random.default_rng(4)
    pmf = _random_pmf(rng, -5, 40)
    chain = LossPmf.identity(0.01)
    for _ in range(7):
        chain = chain.compose(pmf)
    power = pmf.self_compose(7)
    assert power.lower == chain.lower
    np.testing.assert_allclose(power.probs, chain.probs, rtol=1e-9, atol=1e-18)
    assert pmf.self_compose(0).probs.tolist() == [1.0]
    pairs = [mixture_pld([0.5, 0.5], s, h=1e-2) for s in (1.0, 2.0, 3.0)]
    one = PldPair.compose_many(pairs)
    two = pairs[2].compose(pairs[0]).compose(pairs[1])
    assert float(one.epsilon(1e-6)) == pytest.approx(float(two.epsilon(1e-6)), abs=1e-9)


def test_pessimistic_and_optimistic_do_not_mix():
    a = LossPmf.identity(0.1)
    with pytest.raises(ValueError, match="pessimistic"):
        a.compose(LossPmf.identity(0.1, pessimistic=False))
    with pytest.raises(ValueError, match="grid"):
        a.compose(LossPmf.identity(0.2))
    with pytest.raises(ValueError):
        LossPmf(0, [0.7, 0.7], 0.0, 0.1)
