"""One target δ for every figure of a report (spec Correction 7): the theory curves spend
their whole δ (Chernoff failures, composition slacks, each contribution's δ0) within the
target, the shuffle trackers fit their entries' δ to it, and every task's pairs are at it."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy.stats import norm

import netdp
from netdp.accounting.composition import opti
from netdp.bounds.curves import CURVES
from netdp.engine.trace import Trace
from netdp.tracking import shuffle as st

TARGET = 1e-6
ARGS = {"n": 100.0, "T": 10_000.0, "K": 3.0, "eps0": 1.0}


def gdp_delta(mu: float, eps: float) -> float:
    return float(norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2))


def chernoff(n: float, T: float, delta: float) -> float:
    return T / n + math.sqrt(3 * (T / n) * math.log(1 / delta))


# --------------------------------------------------------------------- theory curves


def test_every_curve_says_how_it_spends_delta():
    assert all(c.spending is not None and c.spending.text for c in CURVES.values())


def test_a_chernoff_curve_splits_the_target_between_its_two_slacks():
    """eps0-DP contributions: the Chernoff failure and the DRV slack take half each."""
    got = float(CURVES["complete-ldp-chernoff"].at_target(TARGET, **ARGS))
    half = TARGET / 2
    want = float(opti(1.0, half, chernoff(100, 10_000, half)))
    assert got == pytest.approx(want, rel=1e-12)
    # and the paper's own spending (delta twice, 2 delta in all) is below it: not at TARGET
    assert float(CURVES["complete-ldp-chernoff"](**ARGS, delta=TARGET)) < got


def test_a_curve_without_chernoff_gives_its_one_slack_the_whole_target():
    got = float(CURVES["complete-ldp-fixed"].at_target(TARGET, **ARGS))
    assert got == float(opti(1.0, TARGET, 100.0))


@pytest.mark.parametrize("z", [0.8, 4.84])
def test_gaussian_contributions_are_read_at_their_share_of_the_target(z):
    """K Gaussian turns: the DRV slack takes half the target, each turn TARGET / (2 K), so
    a turn's epsilon is the z-Gaussian's at that delta (checked with the closed form)."""
    got = float(CURVES["ring-ldp"].at_target(TARGET, z, **ARGS))
    drv_half = TARGET / 2
    grid = np.linspace(0.01, 40, 400_001)  # the turn's epsilon, found independently
    mu = 1 / z
    deltas = norm.cdf(-grid / mu + mu / 2) - np.exp(grid) * norm.cdf(-grid / mu - mu / 2)
    eps_turn = float(grid[np.argmax(deltas <= TARGET / 6)])
    assert gdp_delta(mu, eps_turn) <= TARGET / 6
    want = float(opti(eps_turn, drv_half, 3.0))
    assert got == pytest.approx(want, rel=1e-3)  # the grid's step


def test_the_complete_graph_gaussian_curve_counts_every_composed_contribution():
    """NDP curve: N_v + T/n entries, each at TARGET / (2 k), slacks TARGET / 4 each."""
    z = 4.84
    got = float(CURVES["complete-ndp-chernoff"].at_target(TARGET, z, **ARGS))
    quarter = TARGET / 4
    k = chernoff(100, 10_000, quarter) + 100
    from netdp.accounting.gdp import gaussian_epsilon

    eps0 = float(gaussian_epsilon(1 / z, TARGET / (2 * k)))
    assert gdp_delta(1 / z, eps0) == pytest.approx(TARGET / (2 * k), rel=1e-6)
    want = float(opti(3 * eps0 / 10, quarter, k))
    assert want <= got == pytest.approx(want, rel=1e-8)  # eps0 rounded up, by 1e-9


def test_the_histogram_ring_curve_is_the_ring_tracker_at_the_target():
    """Its K windows and KOV's slack K delta take the target: the tracker's worst pair
    where every window holds n - 1 reports (n - 1 dummies at each end, as the curve
    assumes)."""
    n, K = 40, 3
    curve = float(CURVES["histogram-ring"].at_target(TARGET, n=n, K=K, eps0=1.0))
    table = st.ring_histogram_losses(n, K, 1.0, 0.5, dummies=n - 1, target=TARGET)
    assert table.delta == TARGET
    worst = float(np.max(table.base[table.weight > 0]))  # groups that hold pairs
    assert curve == pytest.approx(worst, rel=1e-9)


def test_a_sum_report_s_theory_is_at_its_target_and_the_reference_keeps_the_paper_s():
    cfg = {"topology": "ring", "nodes": 30, "rounds": 2, "seed": 1, "target_delta": 1e-5}
    sound = netdp.simulate(cfg).privacy
    from netdp.mechanisms.noise import analytic_sigma

    z = analytic_sigma(1.0, 1e-6)  # the default noise: (1, 1e-6) per turn, range width 1
    want = float(CURVES["ring-ndp"].at_target(1e-5, z, n=30, K=2, eps0=1.0))
    assert sound.theory["ring-ndp"] == want
    ref = netdp.simulate({**cfg, "convention": "reference"}).privacy
    assert ref.theory["ring-ndp"] == float(CURVES["ring-ndp"](n=30, K=2, eps0=1.0,
                                                                delta=1e-6))


# --------------------------------------------------------------------- shuffle trackers


def test_at_target_shrinks_the_entry_delta_until_the_pairs_fit():
    @dataclasses.dataclass(frozen=True)
    class Table:
        delta: float
        values: float

    calls = []

    def account(d):
        calls.append(d)
        # 7 entries, each over its share (1.3 d), and KOV's slack 7 d
        return Table(7 * d * 1.3 + 7 * d, d)

    out = st.at_target(account, 1e-6, 7)
    assert out.delta == 1e-6 and len(calls) == 2
    assert 7 * 2.3 * calls[-1] <= 1e-6 < 7 * 2.3 * calls[0]
    assert calls[0] == pytest.approx(1e-6 / 14, rel=1e-9)
    # never fits: the table keeps its own delta (shown in its row), after the tries
    stuck = st.at_target(lambda d: Table(2e-6, d), 1e-6, 7)
    assert stuck.delta == 2e-6


def _walk(n: int, steps: int, seed: int) -> Trace:
    rng = np.random.default_rng(seed)
    return Trace(n, rng.integers(0, n, size=(1, steps)))


def test_the_walk_histogram_s_pairs_are_valid_at_the_target(monkeypatch):
    """The figures are those of the last entry delta tried, whose pairs' total delta is
    within the target (KOV alone: without the windows' PLDs, which may lower them)."""
    trace = _walk(30, 600, 4)
    seen = []
    inner = st._sound_walk_histogram

    def spy(*args, **kwargs):
        out = inner(*args, **kwargs)
        seen.append((args[3], out))
        return out

    monkeypatch.setattr(st, "_sound_walk_histogram", spy)
    table = st.walk_histogram_losses(trace, 1.0, 0.25, keep_pairs=True, target=TARGET,
                                     plds=False)
    assert table.delta == TARGET
    d, raw = seen[-1]
    assert raw.delta <= TARGET
    np.testing.assert_array_equal(table.values, raw.values)
    # a larger delta per entry would have given smaller figures: the split is not idle
    loose = st.walk_histogram_losses(trace, 1.0, 10 * d, keep_pairs=True)
    assert loose.delta > TARGET
    assert np.all(loose.values <= table.values + 1e-12)


@pytest.mark.parametrize(("task", "topology", "extra"), [
    ("histogram", "ring", {"rounds": 2}),
    ("histogram", "complete", {"steps": 600}),
    ("histogram", "hypercube", {"steps": 320}),
    ("itemsets", "complete", {"steps": 600}),
    ("heavy-hitters", "ring", {"rounds": 2}),
    ("sum", "complete", {"steps": 600}),
])
def test_every_pair_of_a_report_is_at_the_target(task, topology, extra):
    nodes = 16 if topology == "hypercube" else 30
    report = netdp.simulate({"task": task, "topology": topology, "nodes": nodes, "seed": 2,
                             "target_delta": 1e-5, **extra})
    privacy = report.privacy
    assert privacy.target_delta == 1e-5
    assert [e.delta for e in privacy.empirical] == [1e-5] * len(privacy.empirical)


def test_gossip_and_sgd_convert_at_the_target():
    gossip = {"task": "sum", "protocol": "gossip", "topology": "hypercube", "nodes": 16,
              "seed": 2}
    at6 = netdp.simulate(gossip).privacy.to_dict()
    at4 = netdp.simulate({**gossip, "target_delta": 1e-4}).privacy.to_dict()
    assert [e["delta"] for e in at4["empirical"]] == [1e-4] * len(at4["empirical"])
    assert at4["empirical"][0]["mean"] < at6["empirical"][0]["mean"]  # a larger delta
    assert at4["ldp"]["max"] < at6["ldp"]["max"]
    sgd = {"task": "sgd", "topology": "ring", "nodes": 20, "rounds": 5, "seed": 2}
    at6 = netdp.simulate(sgd).privacy.to_dict()
    at4 = netdp.simulate({**sgd, "target_delta": 1e-4}).privacy.to_dict()
    assert at4["delta"] == 1e-4 and at6["delta"] == 1e-6
    assert all(e["delta"] == 1e-4 for e in at4["empirical"])
    assert at4["empirical"][0]["mean"] < at6["empirical"][0]["mean"]
    # the calibration stays at --delta: the same noise
    assert at4["calibration"] == at6["calibration"]
