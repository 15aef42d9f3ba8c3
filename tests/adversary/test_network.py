"""Malicious holders inside the protocols: the token's state against a plain replay, the
gains against their conditional expectation, the checks' false alarms and power."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from netdp import simulate
from netdp.adversary.network import (
    FALSE_ALARM,
    Attack,
    Null,
    detect,
    parse_attack,
    plan,
    received_mass,
)
from netdp.core.errors import InputError


def replay_token(holders, malicious, attack, masses, fake_mass):
    """The token played hop by hop as a set of contribution ids: what each holder
    receives (its mass) and what reaches the end. The oracle of plan/received_mass."""
    tokens, steps = holders.shape
    received = np.zeros((tokens, steps))
    alive = np.zeros((tokens, steps), dtype=bool)
    fakes = np.zeros(tokens, dtype=int)
    for k in range(tokens):
        held, inflated, seen = set(), 0, {}
        for i in range(steps):
            received[k, i] = sum(masses[k, s] for s in held) + inflated * fake_mass
            node = int(holders[k, i])
            if node in malicious and attack.tampers:
                before = (frozenset(held), inflated)
                if attack.name == "drop":
                    held, inflated = set(), 0
                elif attack.name == "replay" and node in seen:
                    held, inflated = set(seen[node][0]), seen[node][1]
                elif attack.name == "inflate":
                    inflated += 1
                seen[node] = before
            held.add(i)
        alive[k, sorted(held)] = True
        fakes[k] = inflated
    return received, alive, fakes


@pytest.mark.parametrize("name", ["drop", "replay", "inflate", "max"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_plan_and_received_mass_match_the_token_played_hop_by_hop(name, seed):
    rng = np.random.default_rng(seed)
    holders = rng.integers(0, 6, (3, 60))
    malicious = np.array([1, 4])
    attack = Attack(name, 2.0 if name == "inflate" else None)
    masses = rng.normal(size=holders.shape)
    want, alive, fakes = replay_token(holders, {1, 4}, attack, masses, 0.7)
    got = plan(holders, malicious, attack)
    np.testing.assert_array_equal(got.alive, alive)
    np.testing.assert_array_equal(got.fakes, fakes)
    np.testing.assert_allclose(received_mass(got, masses, 0.7), want, atol=1e-9)
    np.testing.assert_array_equal(got.attacked, np.isin(holders, malicious))


def test_replay_and_drop_by_hand():
    """Node 1 holds the token at steps 2 and 6: its replay at step 6 forwards what it
    received at step 2, so steps 0 and 1 survive and 2..5 are lost; its partial sum is
    then 1 + 2 (+ 7 from step 6 itself). Node 2's drop at step 4 keeps 4..7 only."""
    holders = np.array([[0, 3, 1, 3, 2, 3, 1, 3]])
    masses = np.arange(8.0)[None, :] + 1
    replay = plan(holders, np.array([1]), Attack("replay"))
    assert replay.alive[0].tolist() == [True, True, False, False, False, False, True, True]
    assert received_mass(replay, masses, 0.0)[0, 7] == 1 + 2 + 7
    dropped = plan(holders, np.array([2]), Attack("drop"))
    assert dropped.alive[0].tolist() == [False] * 4 + [True] * 4
    assert received_mass(dropped, masses, 0.0)[0, 7] == 5 + 6 + 7


def test_parse_attack_names_the_flag_and_what_is_allowed():
    assert parse_attack("inflate", ["inflate"], "sum") == Attack("inflate", 1.0)
    assert parse_attack("beyond:5", ["beyond"], "sum") == Attack("beyond", 5.0)
    for bad in ("beyond", "inflate:0", "inflate:1.5", "max:3", "mga"):
        with pytest.raises(InputError) as err:
            parse_attack(bad, ["beyond", "inflate", "max"], "sum")
        assert err.value.param == "attack"


def honest_masses(rng, shape, lo, hi, sigma):
    return rng.uniform(lo, hi, shape) + rng.normal(0.0, sigma, shape)


def test_checks_raise_false_alarms_at_their_stated_rate_and_can_fail():
    """400 honest runs (malicious holders that do nothing): each check fires in at most
    its FALSE_ALARM share, within 3 binomial standard errors; with a null model that
    ignores the data's spread and understates the noise 4-fold, far more often."""
    rng = np.random.default_rng(3)
    runs, alarms, wrong = 400, np.zeros(2), np.zeros(2)
    for _ in range(runs):
        holders = rng.integers(0, 20, (1, 400))
        acts = plan(holders, np.array([0]), Attack("max"))  # forges nothing here
        masses = honest_masses(rng, holders.shape, 0.0, 1.0, 2.0)
        received = received_mass(acts, masses, 0.0)
        alarms += [d.detected for d in detect(holders, acts, received, masses,
                                              Null(0.0, 1.0, 4.0))]
        wrong += [d.detected for d in detect(holders, acts, received, masses,
                                             Null(0.5, 0.5, 1.0))]
    bound = FALSE_ALARM + 3 * math.sqrt(FALSE_ALARM * (1 - FALSE_ALARM) / runs)
    assert (alarms / runs <= bound).all(), alarms
    assert (wrong / runs > 10 * FALSE_ALARM).all(), wrong


def run_attack(**params):
    """A run under attack; the gains and checks read no privacy figure, so no accountant
    runs unless asked (``accountants``)."""
    base = {"nodes": 50, "steps": 2000, "seed": 4, "runs": 12, "malicious": "random:4",
            "accountants": ()}
    return simulate({**base, **params}, progress=False)


def differences(report):
    """Each run's gain minus its expectation given the walk and the plan."""
    return np.array([r.gain - r.theory for r in report.attack.runs])


@pytest.mark.parametrize("attack", ["max", "beyond:7", "inflate:2"])
def test_sum_gain_equals_its_expectation_exactly_when_nothing_is_lost(attack):
    """A forged value or a fake contribution shifts the sum by a known amount: the noise
    cancels against the honest run's (the same draws)."""
    report = run_attack(attack=attack)
    np.testing.assert_allclose(differences(report), 0.0, atol=1e-12)
    assert report.attack.gain()["empirical"] > 0


@pytest.mark.parametrize("attack", ["drop", "replay"])
def test_sum_gain_of_lost_contributions_is_unbiased(attack):
    """Lost contributions take their noise with them: the gain is the expectation plus
    zero-mean noise, within 4 standard errors over the runs."""
    diff = differences(run_attack(attack=attack, runs=40))
    assert abs(diff.mean()) < 4 * diff.std(ddof=1) / math.sqrt(diff.size), diff


SLOW = pytest.mark.slow  # the same algebra as a default case, on another oracle


@pytest.mark.parametrize(("mechanism", "attack"), [
    ("grr", "mga"), ("oue", "rpa"), ("oue", "ria"), ("olh", "mga"), ("grr", "drop"),
    ("oue", "replay"), ("olh", "inflate:2"), ("rappor", "mga"),
    pytest.param("grr", "rpa", marks=SLOW), pytest.param("oue", "mga", marks=SLOW),
    pytest.param("oue", "inflate:3", marks=SLOW), pytest.param("hr", "mga", marks=SLOW),
    pytest.param("hr", "drop", marks=SLOW), pytest.param("rappor", "replay", marks=SLOW),
    pytest.param("cms", "mga", marks=SLOW), pytest.param("hcms", "rpa", marks=SLOW)])
def test_histogram_gain_matches_its_expectation(mechanism, attack):
    """The targets' frequency gain, run by run, against its expectation given the walk
    and the plan (the generic closed form of Cao, Jia and Gong inside the token, for any
    estimate affine in the aggregate), within 4 standard errors over 30 runs."""
    report = run_attack(task="histogram", mechanism=mechanism, domain=16, attack=attack,
                        runs=30)
    diff = differences(report)  # inflate's crafted fakes are deterministic: 0 to rounding
    assert abs(diff.mean()) < 4 * diff.std(ddof=1) / math.sqrt(diff.size) + 1e-12, diff


def test_a_wrong_expectation_is_rejected_by_the_same_measurement():
    """MGA on OUE measured against the RIA closed form (what an honest report of a target
    would gain) fails the 4-standard-error test: the gain test can fail."""
    report = run_attack(task="histogram", mechanism="oue", domain=16, attack="mga", runs=30)
    gains = np.array([r.gain for r in report.attack.runs])
    ria_ceiling = np.array([r.share for r in report.attack.runs])  # beta (1 - f_T) <= beta
    assert abs((gains - ria_ceiling).mean()) > 4 * gains.std(ddof=1) / math.sqrt(gains.size)


@pytest.mark.slow
def test_the_honest_counterfactual_is_the_run_without_attack():
    """Turning the attack on changes no draw of the honest run: its outcome is the run of
    the same seed without malicious holders, bit for bit."""
    attacked = run_attack(task="histogram", mechanism="oue", domain=16, attack="mga", runs=3)
    plain = simulate({"task": "histogram", "mechanism": "oue", "domain": 16, "nodes": 50,
                      "steps": 2000, "seed": 4, "runs": 3}, progress=False)
    for a, o in zip(attacked.attack.runs, plain.outcomes, strict=True):
        np.testing.assert_array_equal(a.honest.estimate, o.estimate)


def test_what_honest_holders_detect():
    """Drop and replay on a sum shrink the aggregate: the flow check catches them in every
    run; grr's count is exact, so inflate is caught by conservation; a forged value in
    range (max) is never caught: it is an honest-looking contribution."""
    drop = run_attack(attack="drop", runs=5).attack.detection()
    assert {d["check"]: d["rate"] for d in drop}["flow"] == 1.0
    replay = run_attack(attack="replay", runs=5).attack.detection()
    assert {d["check"]: d["rate"] for d in replay}["flow"] == 1.0
    inflate = run_attack(task="histogram", mechanism="grr", domain=16, attack="inflate",
                         runs=5).attack.detection()
    assert {d["check"]: d["rate"] for d in inflate}["conservation"] == 1.0
    quiet = run_attack(attack="max", runs=20).attack.detection()
    assert all(d["detected_runs"] <= 3 for d in quiet), quiet  # P(Bin(20, .01) > 3) < 1e-3


def test_attack_report_in_json_and_sweep_rows(tmp_path):
    from netdp.run.sweep.table import flatten

    report = run_attack(attack="beyond:5", runs=2, accountants=("kov",))
    data = json.loads(json.dumps(report.to_json()))
    assert data["attack"]["gain"]["theory"] == pytest.approx(data["attack"]["gain"]
                                                             ["empirical"])
    row = flatten(data)
    assert row["attack"] == "beyond:5" and "attack_flow_rate" in row
    assert row["honest_estimate"] == pytest.approx(data["attack"]["honest_utility"]["estimate"])


@pytest.mark.parametrize(("params", "flag"), [
    ({"attack": "max"}, "attack"),  # the half given is named (the message asks for the
    ({"malicious": "random:2"}, "malicious"),  # other): a refusal names what was given
    ({"malicious": "random:2", "attack": "mga"}, "attack"),
    ({"malicious": "random:2", "attack": "drop", "topology": "ring"}, "attack"),
    ({"malicious": "random:2", "attack": "max", "task": "sgd"}, "attack"),
    ({"malicious": "random:2", "attack": "max", "loss": "0.1"}, "attack"),
    ({"malicious": "x,", "attack": "max"}, "malicious"),  # a label: refused with the graph
    ({"task": "histogram", "targets": 3}, "targets"),
    ({"task": "histogram", "malicious": "1", "attack": "mga", "mechanism": "the"},
     "attack"),
    ({"malicious": "1", "attack": "max", "mechanism": "duchi"}, "attack"),
])
def test_bad_attack_input_names_its_flag(params, flag):
    from netdp.tasks import make_config

    with pytest.raises(InputError) as err:
        make_config({"nodes": 20, **params})
    assert err.value.param == flag
