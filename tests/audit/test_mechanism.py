"""Auditing the randomizers: ε_lb below every claim that holds, above the planted bugs'."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from netdp.audit import lower_bounds as audit
from netdp.audit import mechanism as mechanism_audit
from netdp.audit.auditor import Auditor, SplitThreshold
from netdp.mechanisms.base import FrequencyOracle
from netdp.mechanisms.noise import Laplace
from netdp.mechanisms.unary import OUE

SLOW = ("cms", "hcms", "rappor")  # long reports, scored by their exact likelihood ratio
ALL = ("laplace", "gaussian", "duchi", "piecewise", "hybrid", "grr", "sue", "oue", "blh",
       "olh", "hr", "the", "she", *SLOW)
# A grid of audits at 95 % each would flag a tight mechanism now and then by chance
# (hybrid at ε = 1 does, at one seed of three): each audit of a grid runs at the
# family-wise confidence 1 - 0.05 / (audits in the grid), Bonferroni.
FAST_CONFIDENCE = 1 - 0.05 / (2 * len(ALL))
GRID_CONFIDENCE = 1 - 0.05 / 160


def test_laplace_anchor():
    """Spec §5: Laplace at ε = 1 with 1e5 trials per side: ε_lb about 0.98 (ours holds
    half of them out to fit the threshold)."""
    import time

    cpu = time.process_time()
    result = mechanism_audit.audit_mechanism(Laplace(1.0, 2.0), 100_000, seed=5)
    cpu = time.process_time() - cpu
    assert 0.95 < result.result.epsilon_lower <= 1.0
    assert not result.violation
    # the spec's few seconds, in the process's CPU time: a busy machine stretches the
    # wall clock (result.seconds), not this (issue 39's timed properties)
    assert cpu < 5


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_no_audit_exceeds_its_mechanism_and_every_one_has_power(name, epsilon):
    """The fast sandwich: ε_lb <= ε for every randomizer, and well above 0 (the test is
    not vacuous: it proves a good part of the claim)."""
    trials = 20_000 if name in SLOW else 40_000
    mech = mechanism_audit.build(name, epsilon, 1e-5, 4)
    got = mechanism_audit.audit_mechanism(mech, trials, seed=11, confidence=FAST_CONFIDENCE)
    lb = got.result.epsilon_lower
    assert lb <= epsilon, f"{name} at eps = {epsilon}: eps_lb = {lb} > claim"
    assert lb <= got.result.ceiling
    floor = 0.1 if name == "gaussian" else 0.4
    assert lb > floor * epsilon, f"{name} at eps = {epsilon}: eps_lb = {lb}, no power"


def test_the_ceiling_is_what_no_error_proves():
    """With R held-out trials and confidence c, each rate is bounded at 1 - (1-c)/2; no
    error at all gives ``1 - ((1-c)/2)^(1/R)`` and the ceiling
    ``ln((1 - δ - b)/b)``."""
    for trials, delta in [(1000, 0.0), (50_000, 1e-5)]:
        b = 1 - 0.025 ** (1 / trials)
        want = math.log((1 - delta - b) / b)
        assert audit.epsilon_ceiling(trials, delta) == pytest.approx(want, rel=1e-9)
    # an audit with a perfect test reaches it, and no audit passes it
    perfect = Auditor(np.zeros(2000), np.ones(2000)).audit()
    assert perfect.epsilon_lower == pytest.approx(perfect.ceiling)
    assert perfect.ceiling == pytest.approx(audit.epsilon_ceiling(1000))


def test_gaussian_dp_fit_is_tighter_than_clopper_pearson_and_sound():
    mech = mechanism_audit.build("gaussian", 1.0, 1e-5)
    r = mechanism_audit.audit_mechanism(mech, 200_000, seed=3).result
    assert r.mu_lower is not None and r.gdp_epsilon is not None
    true_mu = 2.0 / mech.sigma  # sensitivity 2 over the range [-1, 1]
    assert r.mu_lower <= true_mu
    assert r.epsilon_lower < r.gdp_epsilon <= 1.0
    assert r.gdp_epsilon == pytest.approx(audit.gdp_epsilon(r.mu_lower, 1e-5))


def test_gdp_delta_of_the_calibrated_gaussian_is_its_delta():
    """δ(ε) of μ-GDP at μ = Δ/σ, for σ calibrated by the analytic Gaussian at (ε, δ)."""
    mech = mechanism_audit.build("gaussian", 1.0, 1e-5)
    mu = 2.0 / mech.sigma
    assert audit.gdp_delta(mu, 1.0) == pytest.approx(1e-5, rel=1e-6)
    assert audit.gdp_epsilon(mu, 1e-5) == pytest.approx(1.0, rel=1e-6)


class SwappedOUE(OUE):
    """A planted bug: at bit 0 the probabilities of the true and the other bits are
    swapped (q for the true category, 1/2 for the others). The report of category 1 then
    sets bits 0 and 1 with probability 1/4, against q² for category 0: true ε =
    2 ln((e^ε + 1)/2), 1.24 at ε = 1."""

    def perturb(self, values, rng):
        out = super().perturb(values, rng)
        bit0 = rng.random(len(values)) < np.where(np.asarray(values) == 0, self.q, 0.5)
        out[:, 0] = bit0
        return out


class HalfScaleLaplace(Laplace):
    """A planted bug: noise of scale Δ/(2ε), half what ε needs (true ε = 2 ε)."""

    def noise(self, rng, size):
        return super().noise(rng, size) / 2


@pytest.mark.parametrize(("mech", "trials", "truth"), [
    pytest.param(SwappedOUE(1.0, 4), 200_000, 2 * math.log((math.e + 1) / 2), id="oue-swap"),
    pytest.param(HalfScaleLaplace(1.0, 2.0), 20_000, 2.0, id="laplace-half-scale"),
])
def test_planted_bugs_are_caught(mech, trials, truth):
    got = mechanism_audit.audit_mechanism(mech, trials, seed=7)
    assert got.violation, f"{type(mech).__name__}: eps_lb = {got.result.epsilon_lower}"
    assert 1.0 < got.result.epsilon_lower <= truth


def test_a_false_claim_is_a_violation():
    got = mechanism_audit.audit_mechanism(Laplace(1.0, 2.0), 50_000, seed=2,
                                          claim_epsilon=0.5)
    assert got.violation and got.claim_epsilon == 0.5


@pytest.mark.parametrize("name", ["grr", "sue", "oue", "blh", "olh", "hr", "the", "she"])
def test_fast_report_scores_are_the_generic_ones_up_to_scale(name):
    mech = mechanism_audit.build(name, 1.0, 0.0, 8)
    reports = mech.perturb(np.random.default_rng(4).integers(0, 8, 300), np.random.default_rng(5))
    fast = mech.report_scores(reports, [0, 3])
    slow = FrequencyOracle.report_scores(mech, reports, [0, 3])
    d_fast, d_slow = fast[:, 1] - fast[:, 0], slow[:, 1] - slow[:, 0]
    scale = np.abs(d_slow).max() / np.abs(d_fast).max()
    assert scale > 0
    np.testing.assert_allclose(d_slow, scale * d_fast, rtol=1e-9, atol=1e-9)


def test_one_run_bound():
    """Steinke et al. 2023: the logit of the Clopper-Pearson lower bound on the rate of
    correct guesses; a Gaussian mechanism on 1000 canaries gets a sound, positive bound."""
    assert audit.one_run_epsilon(100, 50) == 0.0
    p = 1 - 0.05 ** (1 / 100)  # all right: P[Bin(100, p) >= 100] = p^100 = 0.05
    assert audit.one_run_epsilon(100, 100) == pytest.approx(math.log((1 - p) / p), rel=1e-6)
    mech = mechanism_audit.build("gaussian", 2.0, 1e-5)
    rng = np.random.default_rng(9)
    canaries = 1000
    included = rng.random(canaries) < 0.5
    seen = np.where(included, 2.0, 0.0) + rng.normal(0, mech.sigma, canaries)
    order = np.argsort(seen)
    guesses = 200  # the 100 lowest guessed out, the 100 highest in, the rest abstained
    right = int((~included[order[:100]]).sum() + included[order[-100:]].sum())
    eps = audit.one_run_epsilon(guesses, right)
    assert 0 < eps <= 2.0


def brute_one_run_epsilon(guesses, correct, canaries, delta, confidence=0.95, step=1e-4):
    """The one-run (ε, δ) bound by brute force, without scipy: the Binomial law from
    ``math.lgamma`` on a grid of ε with spacing ``step``, the theorem's tail bound
    ``f(v) + 2 m δ max_i (f(v-i) - f(v))/i`` at each, and the last grid ε before the
    first one that it does not reject."""
    r, v = guesses, correct
    k = np.arange(r + 1)
    log_choose = np.array([math.lgamma(r + 1) - math.lgamma(j + 1) - math.lgamma(r - j + 1)
                           for j in k])
    eps = np.arange(0.0, 5.0, step)  # every bound tested lies below 5
    q = 1 / (1 + np.exp(-eps))
    pmf = np.exp(log_choose + np.outer(np.log(q), k) + np.outer(np.log1p(-q), r - k))
    f_v = pmf[:, v:].sum(axis=1)
    windows = np.cumsum(pmf[:, v - 1::-1], axis=1)  # P[v-i <= B <= v-1], i = 1 .. v
    alpha = (windows / np.arange(1, v + 1)).max(axis=1)
    p = np.minimum(1.0, f_v + 2 * canaries * delta * alpha)
    first = int(np.argmax(p > 1 - confidence))
    return float(eps[first - 1]) if first > 0 else 0.0


@pytest.mark.parametrize(("guesses", "correct", "canaries", "delta"), [
    (100, 90, 1000, 1e-5), (200, 180, 2000, 1e-4), (60, 50, 600, 1e-3),
    (100, 100, 1000, 1e-3),  # 2 m δ = 2 > 1: the scan before the bisection
    (150, 120, 150, 0.0),
])
def test_one_run_delta_bound_matches_brute_force(guesses, correct, canaries, delta):
    """The (ε, δ) bound of Steinke et al. (main theorem with δ, §5) is the first ε its tail bound
    does not reject: the brute force's grid value lies at most one grid step below."""
    got = audit.one_run_epsilon(guesses, correct, 0.95, delta, canaries)
    want = brute_one_run_epsilon(guesses, correct, canaries, delta)
    assert want > 0
    assert want - 1e-9 <= got < want + 1e-4 + 1e-9


def test_one_run_delta_zero_is_the_pure_bound_and_delta_only_lowers_it():
    for guesses, correct in [(100, 100), (200, 160), (1000, 620), (50, 30)]:
        p = float(stats.beta.ppf(1 - 0.95, correct, guesses - correct + 1))
        pure = max(0.0, math.log(p / (1 - p)))
        assert audit.one_run_epsilon(guesses, correct) == pure  # bit for bit
        assert audit.one_run_epsilon(guesses, correct, delta=0.0, canaries=guesses) == pure
        bounds = [audit.one_run_epsilon(guesses, correct, 0.95, d, 10 * guesses)
                  for d in (0.0, 1e-9, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1)]
        assert all(a >= b for a, b in zip(bounds, bounds[1:], strict=False)), bounds
        assert bounds[1] == pytest.approx(pure, abs=1e-5)


def test_one_run_p_value_bounds_an_eps_delta_randomized_response():
    """A mechanism that is (ε, δ)-DP per canary: with probability δ it reveals the canary,
    else ε-randomized response. Guessing every canary from its output is right
    ``Binomial(m, δ + (1 - δ) q)`` times, more often than ε-DP allows, and the theorem's
    bound must still hold at every count (it fails without its δ term)."""
    m, eps, delta = 400, 1.0, 1e-3
    q = math.exp(eps) / (1 + math.exp(eps))
    for v in range(int(m * q), m + 1, 5):
        tail = float(stats.binom.sf(v - 1, m, delta + (1 - delta) * q))
        assert tail <= audit.one_run_p_value(m, v, eps, delta, m) + 1e-15
    assert any(stats.binom.sf(v - 1, m, delta + (1 - delta) * q) > stats.binom.sf(v - 1, m, q)
               for v in range(int(m * q), m))


def test_one_run_epsilon_refuses_bad_input_by_name():
    with pytest.raises(ValueError, match="correct"):
        audit.one_run_epsilon(10, 11)
    with pytest.raises(ValueError, match="confidence"):
        audit.one_run_epsilon(10, 5, confidence=1.0)
    with pytest.raises(ValueError, match="delta"):
        audit.one_run_epsilon(10, 5, delta=1.0, canaries=10)
    with pytest.raises(ValueError, match="canaries"):
        audit.one_run_epsilon(10, 5, delta=1e-5)
    with pytest.raises(ValueError, match="canaries"):
        audit.one_run_epsilon(10, 5, delta=1e-5, canaries=9)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_one_run_audit_is_sound_on_a_gaussian_with_1000_canaries(seed):
    """The must-show: one run of 1000 canaries through the Gaussian mechanism at (2, 1e-5)
    proves a positive ε_lb at or below 2 (mean 0.66 over 20 seeds, least 0.21, at the
    default 100 guesses)."""
    mech = mechanism_audit.build("gaussian", 2.0, 1e-5)
    got = mechanism_audit.one_run_audit(mech, 1000, seed)
    assert got.delta == 1e-5 and got.guesses == 100
    assert 0 < got.epsilon_lower <= 2.0 and not got.violation
    assert got.epsilon_lower <= got.ceiling


def test_one_run_audit_exceeds_a_tight_claim_at_most_at_its_rate():
    """Laplace at ε = 2 with its noise exactly calibrated: its top and bottom outputs have
    likelihood ratio e^2, so the count right is ``Binomial(200, e^2/(1+e^2))`` and ε_lb >
    2 happens with probability 0.049 (the Binomial test's size). Over 1000 seeds the rate
    stays below 0.05 + 3 standard errors (0.071)."""
    mech = mechanism_audit.build("laplace", 2.0)
    above = sum(mechanism_audit.one_run_audit(mech, 2000, seed).epsilon_lower > 2.0
                for seed in range(1000))
    assert above / 1000 < 0.05 + 3 * math.sqrt(0.05 * 0.95 / 1000)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_one_run_audit_catches_half_scale_laplace(seed):
    """The planted bug (true ε = 2 at a claimed 1) in one run of 2000 canaries, 200
    guesses: caught at 1999 seeds of 2000 tried."""
    got = mechanism_audit.one_run_audit(HalfScaleLaplace(1.0, 2.0), 2000, seed)
    assert got.violation and 1.0 < got.epsilon_lower <= 2.0


def test_one_run_audit_of_an_oracle_uses_the_support_difference():
    got = mechanism_audit.one_run_audit(mechanism_audit.build("oue", 2.0, 0.0, 8), 2000, 3)
    assert got.pair == (0, 1) and got.delta == 0.0
    assert 0.5 < got.epsilon_lower <= 2.0
    with pytest.raises(ValueError, match="guesses"):
        mechanism_audit.one_run_audit(Laplace(1.0, 2.0), 100, 0, guesses=101)


def test_auditor_refuses_bad_scores_by_name():
    with pytest.raises(ValueError, match="as many trials"):
        Auditor(np.zeros(10), np.zeros(11))
    with pytest.raises(ValueError, match="confidence"):
        Auditor(np.zeros(10), np.zeros(10), confidence=1.0)
    with pytest.raises(ValueError, match="NaN"):
        Auditor(np.full(10, np.nan), np.zeros(10))
    with pytest.raises(ValueError, match="fit_fraction"):
        SplitThreshold(fit_fraction=1.0)


def run_cli(capsys, *argv):
    from netdp.run.cli import main

    code = main(["audit", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_exit_status_and_json(capsys):
    code, out, _ = run_cli(capsys, "--mechanism", "oue", "--trials", "20000", "--json")
    assert code == 0
    d = json.loads(out)
    a = d["audit"]
    assert {"method", "trials", "confidence", "epsilon_lower", "claim_epsilon", "violation",
            "ceiling"} <= set(a)
    assert a["violation"] is False and 0 < a["epsilon_lower"] <= 1
    code, out, _ = run_cli(capsys, "--mechanism", "laplace", "--claim-epsilon", "0.3",
                           "--trials", "20000")
    assert code == 1 and "VIOLATION" in out


def test_cli_one_run_exit_status_and_json(capsys):
    code, out, _ = run_cli(capsys, "--mechanism", "gaussian", "--epsilon", "2", "--delta",
                           "1e-5", "--one-run", "--canaries", "1000", "--json")
    assert code == 0
    a = json.loads(out)["audit"]
    assert {"method", "canaries", "guesses", "correct", "confidence", "delta",
            "epsilon_lower", "claim_epsilon", "violation", "seconds"} <= set(a)
    assert a["method"] == "one-run" and a["canaries"] == 1000 and a["guesses"] == 100
    assert a["delta"] == 1e-5 and 0 < a["epsilon_lower"] <= 2 and a["violation"] is False
    code, out, _ = run_cli(capsys, "--mechanism", "laplace", "--epsilon", "2", "--one-run",
                           "--canaries", "2000", "--guesses", "200", "--claim-epsilon", "1")
    assert code == 1 and "VIOLATION" in out and "200 (100 out, 100 in" in out


@pytest.mark.parametrize(("argv", "flag"), [
    (["--mechanism", "nope"], "--mechanism"), (["--trials", "2"], "--trials"),
    (["--epsilon", "-1"], "--epsilon"), (["--confidence", "1.5"], "--confidence"),
    (["--claim-epsilon", "nan"], "--claim-epsilon"),
    (["--one-run", "--canaries", "1"], "--canaries"),
    (["--one-run", "--guesses", "0"], "--guesses"),
    (["--one-run", "--canaries", "100", "--guesses", "101"], "--guesses"),
    (["--one-run", "--task", "sum"], "--one-run"), (["--guesses", "10"], "--guesses"),
])
def test_cli_bad_input_is_one_line_exit_2(capsys, argv, flag):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and flag in err


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("domain", [2, 16])
def test_full_grid_never_exceeds_the_claim(name, epsilon, domain):
    """The full grid (``-m slow``): every randomizer, five ε, two domains, 2e5 trials."""
    if name in mechanism_audit.NUMERIC and domain != 2:
        pytest.skip("numbers have no domain")
    from netdp.core.errors import InputError

    trials = 50_000 if name in SLOW else 200_000
    try:
        mech = mechanism_audit.build(name, epsilon, 1e-5, domain)
    except InputError as exc:  # RAPPOR's parameters reach only so far
        pytest.skip(str(exc))
    got = mechanism_audit.audit_mechanism(mech, trials, seed=13, confidence=GRID_CONFIDENCE)
    lb = got.result.epsilon_lower
    assert lb <= epsilon, f"{name}, eps = {epsilon}, domain {domain}: eps_lb = {lb}"
