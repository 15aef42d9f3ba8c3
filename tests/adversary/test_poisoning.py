"""Poisoning attacks: measured gains against the closed forms of Cao, Jia and Gong."""

from __future__ import annotations

import json

import numpy as np
import pytest

from netdp import mechanisms
from netdp.adversary.poisoning import CRAFTED, choose_targets, poison
from netdp.data.values import categories

D, EPS, BETA, R, USERS, TRIALS = 32, 1.0, 0.05, 5, 20_000, 30
ALL = ("grr", "sue", "oue", "blh", "olh", "hr", "cms", "hcms", "rappor", "the", "she")


def setting(seed: int = 2):
    values = categories("zipf", USERS, D, np.random.default_rng(seed))
    targets = choose_targets(values, D, R, "random", np.random.default_rng(seed + 1))
    return values, targets


@pytest.mark.parametrize("name", CRAFTED)
@pytest.mark.parametrize("attack", ["rpa", "ria", "mga"])
def test_gain_matches_its_closed_form(name, attack):
    """Every built attack on every oracle it is built for: the mean gain over 30 trials
    is within 4 standard errors of ``β (Σ_t (s_t - q*)/(p* - q*) - f_T)``."""
    values, targets = setting()
    oracle = mechanisms.frequency_oracle(name, EPS, D)
    got = poison(oracle, values, attack, targets, BETA, TRIALS, np.random.default_rng(5))
    assert got.theory is not None
    assert abs(got.gain - got.theory) < 4 * got.gain_std, (got.gain, got.theory, got.gain_std)


@pytest.mark.parametrize("name", ALL)
def test_ria_gains_beta_one_minus_f_T_on_every_oracle(name):
    """RIA sends honest reports of random targets; any unbiased oracle then gains
    ``β (1 - f_T)``, sketches and histogram encodings included."""
    values, targets = setting()
    oracle = mechanisms.frequency_oracle(name, EPS, D)
    got = poison(oracle, values, "ria", targets, BETA, TRIALS, np.random.default_rng(6))
    f_t = np.bincount(values, minlength=D)[targets].sum() / values.size
    want = got.beta * (1 - f_t)
    assert abs(got.gain - want) < 4 * got.gain_std, (got.gain, want, got.gain_std)


def test_the_paper_s_closed_forms_are_these():
    """The generic form gives the paper's: kRR RPA ``β (r/d - f_T)``, OUE RPA
    ``β (r - f_T)``, OLH RPA ``-β f_T``, kRR MGA ``β ((1 - r q)/(p - q) - f_T)``, OUE MGA
    ``β (r (1 - q)/(p - q) - f_T)``; and a wrong closed form is rejected by the same
    measurement (the test can fail)."""
    values, targets = setting()
    f_t = np.bincount(values, minlength=D)[targets].sum() / values.size
    rng = np.random.default_rng(7)
    grr = mechanisms.frequency_oracle("grr", EPS, D)
    oue = mechanisms.frequency_oracle("oue", EPS, D)
    olh = mechanisms.frequency_oracle("olh", EPS, D)
    cases = [(grr, "rpa", lambda b: b * (R / D - f_t)), (oue, "rpa", lambda b: b * (R - f_t)),
             (olh, "rpa", lambda b: -b * f_t),
             (grr, "mga", lambda b: b * ((1 - R * grr.q) / (grr.p - grr.q) - f_t)),
             (oue, "mga", lambda b: b * (R * (1 - oue.q) / (oue.p - oue.q) - f_t))]
    for oracle, attack, closed in cases:
        got = poison(oracle, values, attack, targets, BETA, TRIALS, rng)
        assert got.theory == pytest.approx(closed(got.beta), rel=1e-9, abs=1e-12)
    wrong = poison(oue, values, "rpa", targets, BETA, TRIALS, rng)  # kRR's form on OUE
    assert abs(wrong.gain - wrong.beta * (R / D - f_t)) > 10 * wrong.gain_std


def test_mga_beats_ria_and_rpa_where_the_theory_says():
    """kRR at ε = 1, d = 32: MGA gains far more than RIA, which gains more than RPA (about
    0 here, ``r/d`` close to ``f_T``)."""
    values, targets = setting()
    grr = mechanisms.frequency_oracle("grr", EPS, D)
    g = {a: poison(grr, values, a, targets, BETA, TRIALS, np.random.default_rng(8))
         for a in ("rpa", "ria", "mga")}
    assert g["mga"].gain > 10 * g["ria"].gain > 0
    assert g["ria"].gain > g["rpa"].gain + 4 * g["ria"].gain_std


def test_targets_and_bad_input():
    from netdp.core.errors import InputError

    values, _ = setting()
    least = choose_targets(values, D, 3, "least", np.random.default_rng(0))
    counts = np.bincount(values, minlength=D)
    assert set(counts[least]) <= set(np.sort(counts)[:3])
    with pytest.raises(InputError, match="targets"):
        choose_targets(values, D, D + 1, "random", np.random.default_rng(0))
    the = mechanisms.frequency_oracle("the", EPS, D)
    with pytest.raises(InputError, match="ria applies to every oracle"):
        poison(the, values, "mga", least, BETA, 4, np.random.default_rng(0))


def run_cli(capsys, *argv):
    from netdp.run.cli import main

    code = main(["attack", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_json(capsys):
    code, out, _ = run_cli(capsys, "--mechanism", "oue", "--domain", "64", "--users", "20000",
                           "--trials", "5", "--json")
    assert code == 0
    d = json.loads(out)
    assert {"empirical", "theory", "std"} <= set(d["gain"])
    assert len(d["per_target"]) == 10 and {"mse_honest", "mse_with_attack"} <= set(d["utility"])
    assert d["seed"] == 0 and d["mechanism"]["name"] == "oue"


@pytest.mark.parametrize(("argv", "flag"), [
    (["--beta", "1.5"], "--beta"), (["--mechanism", "nope"], "--mechanism"),
    (["--mechanism", "she", "--attack", "mga"], "--mechanism"),
    (["--targets", "500"], "--targets"), (["--trials", "1"], "--trials"),
    (["--epsilon", "-1"], "--epsilon"),
])
def test_cli_bad_input_is_one_line_exit_2(capsys, argv, flag):
    code, out, err = run_cli(capsys, "--users", "2000", *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and flag in err, err


@pytest.mark.parametrize("name", ["grr", "oue", "olh"])
def test_enforced_perturbation_brings_mga_down_to_ria(name):
    """With the randomness enforced, a fake user picks only its input: MGA's gain falls to
    RIA's ``β (1 - f_T)``, within 4 standard errors, from more than 15 times that."""
    values, targets = setting()
    oracle = mechanisms.frequency_oracle(name, EPS, D)
    got = poison(oracle, values, "mga", targets, BETA, TRIALS, np.random.default_rng(9),
                 ("enforced-perturbation",))
    (d,) = got.defences
    f_t = np.bincount(values, minlength=D)[targets].sum() / values.size
    ria = got.beta * (1 - f_t)
    assert d["theory"] == pytest.approx(ria)
    assert abs(d["gain"] - ria) < 4 * d["std"], (d["gain"], ria, d["std"])
    assert got.gain > 15 * ria


def test_normalize_shrinks_mga_and_costs_honest_users_little():
    """Clipping at 0 and renormalising caps what fake mass can add: OUE's MGA gain drops
    (0.78 to about 0.60 here); the honest-only estimate's MSE moves by less than 2x."""
    values, targets = setting()
    oue = mechanisms.frequency_oracle("oue", EPS, D)
    got = poison(oue, values, "mga", targets, BETA, TRIALS, np.random.default_rng(10),
                 ("normalize",))
    (d,) = got.defences
    assert d["gain"] < got.gain - 10 * d["std"]
    assert d["mse_honest"] < 2 * got.mse


def test_cli_defences(capsys):
    code, out, _ = run_cli(capsys, "--mechanism", "grr", "--users", "20000", "--trials", "5",
                           "--defence", "enforced-perturbation", "--json")
    assert code == 0
    (d,) = json.loads(out)["defence"]
    assert d["name"] == "enforced-perturbation" and d["theory"] is not None
    code, out, err = run_cli(capsys, "--users", "2000", "--defence", "nope")
    assert code == 2 and "--defence" in err and err.count("\n") == 1


@pytest.mark.parametrize(("eps", "cms_mga", "hcms_mga"), [
    (0.1, 103.70, 101.24), (0.4, 27.87, 25.58), (0.8, 15.31, 13.28), (1.0, 12.82, 10.91),
    (2.0, 7.96, 6.60)])
def test_the_source_note_s_table_shape(eps, cms_mga, hcms_mga):
    """Seed 003, Table 4 (FG x 100, r = 1): HCMS's MGA gain is below CMS's, by the ratio of
    their boosts ``(1 - q*)/(p* - q*)`` (Hadamard's one bit at ε against CMS's m signs at
    ε/2), to 1 %; RPA on HCMS gains about nothing (``-β f_T``), RPA on CMS half of RIA.
    The note's absolute scale differs from ours (its FG is about 5x ours at its
    defaults); the ratios are the shape."""
    values, targets = setting()
    cms = mechanisms.frequency_oracle("cms", eps, D)
    hcms = mechanisms.frequency_oracle("hcms", eps, D)

    def boost(o):
        return (1 - o.q_star) / (o.p_star - o.q_star)

    assert boost(hcms) / boost(cms) == pytest.approx(hcms_mga / cms_mga, rel=0.01)
    if eps == 1.0:
        one = targets[:1]
        rng = np.random.default_rng(11)
        rpa_h = poison(hcms, values, "rpa", one, BETA, TRIALS, rng)
        rpa_c = poison(cms, values, "rpa", one, BETA, TRIALS, rng)
        ria_c = poison(cms, values, "ria", one, BETA, TRIALS, rng)
        f_t = np.bincount(values, minlength=D)[one].sum() / values.size
        assert abs(rpa_h.gain + rpa_h.beta * f_t) < 4 * rpa_h.gain_std + 2e-3
        assert rpa_c.gain == pytest.approx(ria_c.gain / 2, abs=4 * (rpa_c.gain_std
                                                                     + ria_c.gain_std))


def test_hadamard_response_s_closed_forms_and_a_wrong_s_t_is_rejected():
    """HR (``q* = 1/2``): RPA's closed form is ``-β f_T`` and MGA's ``β (r c_ε - f_T)``;
    the measured MGA gain rejects a wrong ``s_t = p*`` (what an honest holder of each
    target would give: ``β (r - f_T)``) by more than 10 standard errors (the test can
    fail)."""
    from netdp.adversary.poisoning import theory_gain

    values, targets = setting()
    f_t = np.bincount(values, minlength=D)[targets].sum() / values.size
    hr = mechanisms.frequency_oracle("hr", EPS, D)
    rng = np.random.default_rng(12)
    rpa = poison(hr, values, "rpa", targets, BETA, TRIALS, rng)
    mga = poison(hr, values, "mga", targets, BETA, TRIALS, rng)
    assert rpa.theory == pytest.approx(-rpa.beta * f_t)
    assert mga.theory == pytest.approx(mga.beta * (R * hr.c_eps - f_t))
    wrong = theory_gain(hr, np.full(R, hr.p_star), mga.beta, f_t)
    assert wrong == pytest.approx(mga.beta * (R - f_t))
    assert abs(mga.gain - mga.theory) < 4 * mga.gain_std
    assert abs(mga.gain - wrong) > 10 * mga.gain_std


def test_rappor_s_mga_is_the_best_report():
    """RAPPOR's MGA report maximises the targets' estimate: no single bit flipped does
    better, and it beats the Bloom filter with exactly the targets' bits set or equals
    it."""
    from netdp.adversary.poisoning import fake_reports, report_boost

    _, targets = setting()
    rappor = mechanisms.frequency_oracle("rappor", EPS, D)
    report, mean = fake_reports(rappor, "mga", targets, 1, np.random.default_rng(0))
    best = report_boost(rappor, mean, targets).sum()
    for b in range(rappor.bloom):
        flipped = mean.copy()
        flipped[b] = 1 - flipped[b]
        assert report_boost(rappor, flipped, targets).sum() <= best + 1e-9
    bloom = np.zeros(rappor.bloom)
    bloom[rappor.bits[:, targets].ravel()] = 1
    assert report_boost(rappor, bloom, targets).sum() <= best + 1e-9
    assert report.shape == (1, rappor.bloom) and np.array_equal(report[0], mean)


def test_detect_fake_catches_mga_on_oue_and_drops_the_honest_reports_its_law_says():
    """MGA's reports all support the r targets: every one is dropped in every trial (a
    miss needs the honest count plus m = 1053 to stay below the Binomial quantile, far in
    its lower tail). The honest reports dropped are those supporting every target:
    ``n (f_T p q^4 + (1 - f_T) q^5)`` on average, within 4 standard errors of the mean
    over the trials; the gain falls from 0.78 to within 0.05 of 0."""
    values, targets = setting()
    oue = mechanisms.frequency_oracle("oue", EPS, D)
    trials = 10
    got = poison(oue, values, "mga", targets, BETA, trials, np.random.default_rng(14),
                 ("detect-fake",))
    (d,) = got.defences
    assert d["removed_fake"] == got.fake
    f_t = np.bincount(values, minlength=D)[targets].sum() / values.size
    pi = f_t * oue.p * oue.q ** (R - 1) + (1 - f_t) * oue.q ** R
    want = got.honest * pi
    assert abs(d["removed_honest"] - want) < 4 * np.sqrt(want / trials), (d, want)
    assert abs(d["gain"]) < 0.05 < got.gain - 0.7


@pytest.mark.parametrize(("name", "attack"), [("oue", "ria"), ("olh", "ria"),
                                              ("olh", "rpa")])
def test_detect_fake_barely_touches_reports_that_look_honest(name, attack):
    """RIA's reports are honest reports of the targets and RPA's on local hashing support
    each item w.p. q*: their itemsets stay within the honest law, which flags a clean
    run with probability at most α = 0.01. So over 6 trials at most a percent of the fake
    and of the honest reports is dropped, and the gain is untouched to 4 standard errors."""
    values, targets = setting()
    oracle = mechanisms.frequency_oracle(name, EPS, D)
    got = poison(oracle, values, attack, targets, BETA, 6, np.random.default_rng(15),
                 ("detect-fake",))
    (d,) = got.defences
    assert d["removed_fake"] <= 0.01 * got.fake and d["removed_honest"] <= 0.01 * got.honest
    assert abs(d["gain"] - got.gain) < 4 * (d["std"] + got.gain_std)


def test_detect_fake_catches_mga_on_olh():
    """OLH's MGA shares one hash that maps every target to one value: all its reports are
    dropped; the honest ones dropped support a flagged itemset of at least 2 items, which
    an honest report does w.p. about ``q*^2 = 1/g^2`` at most (pairwise-independent
    hashes), so fewer than ``n / g^2`` of them are."""
    values, targets = setting()
    olh = mechanisms.frequency_oracle("olh", EPS, D)
    got = poison(olh, values, "mga", targets, BETA, 4, np.random.default_rng(16),
                 ("detect-fake",))
    (d,) = got.defences
    assert d["removed_fake"] == got.fake
    assert d["removed_honest"] < got.honest / olh.g ** 2
    assert abs(d["gain"]) < got.gain / 5


@pytest.mark.parametrize(("name", "factor"), [("oue", 1.5), ("grr", 2.5)])
def test_recover_cuts_mga_s_gain_by_a_stated_factor(name, factor):
    """LDPRecover-style recovery with β known: MGA's gain falls by more than ``factor``
    even 4 standard errors up (1.5 on OUE, 2.5 on GRR; the means fall 2.2x and 3.6x:
    honest heavy hitters flagged with the targets take a share of the subtracted
    footprint); the recovered honest estimate costs
    the honest users less than 12x the plain honest MSE (it is 0.0023 against 0.0002 on
    OUE, 0.0018 against 0.00055 on GRR, from 0.0072 and 0.0056 undefended)."""
    values, targets = setting()
    oracle = mechanisms.frequency_oracle(name, EPS, D)
    got = poison(oracle, values, "mga", targets, BETA, TRIALS, np.random.default_rng(13),
                 ("recover",))
    (d,) = got.defences
    assert d["gain"] + 4 * d["std"] < got.gain / factor
    assert d["mse_with_attack"] < got.mse_attacked / 2
    assert d["mse_with_attack"] < 12 * got.mse


@pytest.mark.parametrize(("argv", "oracles"), [
    (["--mechanism", "grr", "--defence", "detect-fake"], "sue, oue, blh, olh"),
    (["--mechanism", "rappor", "--defence", "recover"], "grr, sue"),
    (["--mechanism", "oue", "--targets", "1", "--defence", "detect-fake"], "at least 2")])
def test_cli_defences_refuse_oracles_they_do_not_apply_to(capsys, argv, oracles):
    code, out, err = run_cli(capsys, "--users", "2000", "--trials", "2", *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and oracles in err, err
    assert "--defence" in err or "--targets" in err


def test_cli_detect_fake_json(capsys):
    code, out, _ = run_cli(capsys, "--mechanism", "oue", "--domain", "32", "--users",
                           "20000", "--trials", "3", "--targets", "5", "--defence",
                           "detect-fake", "--defence", "recover", "--json")
    assert code == 0
    detect, rec = json.loads(out)["defence"]
    assert detect["name"] == "detect-fake" and detect["removed_fake"] == 1000
    assert {"name", "gain", "std", "theory", "mse_honest", "mse_with_attack"} <= set(rec)
