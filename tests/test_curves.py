"""Each pair's privacy curve from one run, and its PLD composed in dp-accounting
(issue 41 item 1)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib

import netdp
from netdp.accounting.accountants import get_accountant
from netdp.accounting.events import Composed, Gaussian, Repeated, Subsampled
from netdp.accounting.profile_pld import STEP
from netdp.run.cli import main
from netdp.run.curves import DELTAS, pair_curves

RUN = {"nodes": 12, "steps": 240, "seed": 5, "accountants": ["rdp"]}


@pytest.fixture(scope="module")
def run() -> tuple[netdp.Report, netdp.PairCurves]:
    report = netdp.simulate(RUN, keep_pairs=True)
    return report, pair_curves(report)


def test_the_curve_at_the_report_s_target_is_the_report(run) -> None:
    report, curves = run
    assert curves.accountant == "rdp" and curves.deltas.size == len(DELTAS)
    k = int(np.flatnonzero(curves.deltas == report.config.report_delta)[0])
    np.testing.assert_array_equal(curves.epsilons[k], report.pairs)
    assert np.all(np.isnan(curves.epsilons[:, np.arange(12), np.arange(12)]))
    assert np.all(np.diff(curves.epsilons[:, 0, 1]) >= 0)  # smaller δ, larger ε


def test_the_pair_s_pld_gives_back_netdp_s_figure_at_every_delta(run) -> None:
    _, curves = run
    for u, v in ((0, 1), (5, 2), (11, 3)):
        pld = curves.pld(node=u, observer=v)
        mine = curves.curve(node=u, observer=v)
        for d, e in zip(curves.deltas, mine, strict=True):
            theirs = pld.get_epsilon_for_delta(d)
            hull = curves.epsilon(d, node=u, observer=v)
            assert hull - 1e-9 <= theirs <= e + STEP + 1e-9  # the point, or below it
            assert hull <= e + 1e-12
        assert sum(curves.epsilon(d, node=u, observer=v) >= e - 1e-9
                   for d, e in zip(curves.deltas, mine, strict=True)) >= len(mine) // 2


def test_the_pld_composes_with_dp_sgd_in_dp_accounting_as_in_netdp(run) -> None:
    """The pair's PLD and 1,000 steps of DP-SGD (Poisson rate 0.01, noise 1.1), composed by
    dp-accounting and by netdp's ``pld`` accountant from netdp's events."""
    _, curves = run
    pair = curves.pld(node=0, observer=1)
    sgd = pld_lib.from_gaussian_mechanism(1.1, sampling_prob=0.01,
                                          value_discretization_interval=STEP)
    theirs = pair.compose(sgd.self_compose(1000))
    mine = Composed((curves.event(node=0, observer=1),
                     Repeated(Subsampled(Gaussian(1.1), 0.01), 1000)))
    for d in (1e-3, 1e-6, 1e-9):
        assert get_accountant("pld").epsilon(mine, d) == pytest.approx(
            theirs.get_epsilon_for_delta(d), rel=1e-6, abs=1e-6)
        # the composition costs more than either part, less than their sum
        alone = max(pair.get_epsilon_for_delta(d),
                    sgd.self_compose(1000).get_epsilon_for_delta(d))
        assert alone < theirs.get_epsilon_for_delta(d)


def test_ten_repeated_runs_compose_below_ten_times_one(run) -> None:
    _, curves = run
    worst = curves.pld()
    ten = worst.self_compose(10)
    for d in (1e-5, 1e-8):
        one = curves.epsilon(d)
        assert one - 1e-9 <= worst.get_epsilon_for_delta(d) and (
            ten.get_epsilon_for_delta(d) < 10 * one)
    # the worst pair's curve is above every pair's, and is one of them at each delta
    flat = curves.epsilons.reshape(curves.deltas.size, -1)
    np.testing.assert_array_equal(curves.curve(), np.nanmax(flat, axis=1))


def test_the_table_and_the_json(run, tmp_path) -> None:
    _, curves = run
    frame = curves.frame()
    assert len(frame) == curves.deltas.size * 12 * 11
    assert set(frame.columns) >= {"target", "observer", "epsilon", "accountant", "delta"}
    row = frame[(frame.target == 0) & (frame.observer == 1)].sort_values("delta",
                                                                        ascending=False)
    np.testing.assert_array_equal(row.epsilon.to_numpy(), curves.curve(0, 1))
    out = curves.to_json()
    assert out["worst"] == pytest.approx(list(curves.curve()))
    assert len(out["pairs"]) == 12 * 11 and out["worst_by_observer"].keys() == {
        str(v) for v in range(12)}
    pmf = out["worst_pld"]
    assert sum(pmf["probs"]) + pmf["infinity"] == pytest.approx(1.0)


@pytest.mark.slow
def test_the_cli_writes_the_curves_or_nothing(tmp_path, capsys) -> None:
    args = ["simulate", "--nodes", "10", "--steps", "100", "--seed", "1", "--accountant",
            "rdp"]
    assert main([*args, "--curves-out", str(tmp_path / "c.csv")]) == 0
    frame = pd.read_csv(tmp_path / "c.csv")
    assert len(frame) == len(DELTAS) * 10 * 9 and frame.accountant.unique().tolist() == ["rdp"]
    assert "pair curves (rdp, 36 deltas)" in capsys.readouterr().out
    assert main([*args, "--curves-out", str(tmp_path / "c.json"), "--json"]) == 0
    capsys.readouterr()
    written = json.loads((tmp_path / "c.json").read_text())
    assert written["accountant"] == "rdp"
    pmf = written["worst_pld"]  # read back as docs/composition.md shows
    pld = pld_lib.PrivacyLossDistribution.create_from_rounded_probability(
        dict(zip(pmf["index"], pmf["probs"], strict=True)), pmf["infinity"], pmf["step"])
    worst = max(e for e in written["worst"] if e is not None)
    assert pld.get_epsilon_for_delta(1e-12) == pytest.approx(worst, abs=STEP + 1e-9)
    for bad in (["--curves-out", str(tmp_path / "c.txt")],
                ["--curves-out", str(tmp_path / "d.json"), "--coalition", "0,1",
                 "--out", str(tmp_path / "r.json")]):
        assert main([*args, *bad]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and ("--curves-out" in err or "--coalition" in err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.csv", "c.json"]


def test_the_reference_convention_and_unprotected_curves() -> None:
    """Reference figures are at the paper's own δ whatever the target: refused (a second
    reader found [3, 3, 3, 3]); a curve unprotected at every δ gives ε = ∞ everywhere."""
    from netdp.core.errors import InputError
    from netdp.run.curves import PairCurves

    with pytest.raises(InputError, match="sound convention"):
        pair_curves({"nodes": 10, "seed": 3, "convention": "reference", "topology": "ring",
                     "rounds": 3}, deltas=[0.1, 1e-6])
    eps = np.full((2, 3, 3), np.inf)
    eps[:, np.arange(3), np.arange(3)] = np.nan
    curves = PairCurves("kov", np.array([0.1, 1e-6]), eps, (0, 1, 2), 1, {})
    assert curves.pld().get_epsilon_for_delta(0.5) == np.inf
    assert curves.epsilon(0.5) == np.inf and curves.event().infinity == 1.0
    assert curves.to_json()["worst_pld"]["infinity"] == 1.0
