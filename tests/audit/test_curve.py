"""The audit curve: ε_lb against trials, under the Clopper-Pearson ceiling for each trial
count, and its figure from ``netdp audit --plot``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from netdp.audit import lower_bounds as audit
from netdp.audit import mechanism as mechanism_audit
from netdp.audit.curve import CurvePoint, audit_curve, curve_figure, ladder
from netdp.mechanisms.noise import Laplace

POINTS = 12
# The rungs share their trials, so "every rung at or below the claim" is one statement
# about POINTS audits: each runs at 1 - 0.05 / POINTS (Bonferroni), 95 % for all of them.
ALL_RUNGS = 1 - 0.05 / POINTS
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def laplace_curve() -> list[CurvePoint]:
    return audit_curve(Laplace(1.0, 2.0), 200_000, seed=3, points=POINTS,
                       confidence=ALL_RUNGS)


def test_the_ladder_is_geometric_and_ends_at_the_trials():
    rungs = ladder(100_000, 10, 100)
    assert rungs[0] == 100 and rungs[-1] == 100_000 and len(rungs) == 10
    ratios = np.diff(np.log(rungs))
    np.testing.assert_allclose(ratios, ratios[0], rtol=0.01)
    assert ladder(10, 12) == [10] and ladder(100, 1) == [100]


def test_each_rung_has_the_ceiling_of_its_trials_and_stays_under_it(laplace_curve):
    assert len(laplace_curve) == POINTS
    for p in laplace_curve:
        assert p.trials == p.runs - p.runs // 2  # half of the runs fit the test
        assert p.ceiling == pytest.approx(audit.epsilon_ceiling(p.trials, 0.0, ALL_RUNGS),
                                          rel=1e-12)
        assert 0 <= p.epsilon_lower <= p.ceiling
        assert p.gdp_epsilon is None


def test_a_correct_mechanism_stays_under_its_claim_at_every_rung(laplace_curve):
    assert all(p.epsilon_lower <= 1.0 for p in laplace_curve), laplace_curve


def test_more_trials_prove_more(laplace_curve):
    first, last = laplace_curve[0], laplace_curve[-1]
    assert first.epsilon_lower < 0.5 < 0.9 < last.epsilon_lower
    assert first.ceiling < 1.0 < last.ceiling  # 10 held-out trials cannot prove ε = 1
    assert np.all(np.diff([p.ceiling for p in laplace_curve]) > 0)


def test_the_last_rung_is_the_full_audit():
    mech = mechanism_audit.build("oue", 1.0, 0.0, 8)
    curve = audit_curve(mech, 20_000, seed=4, points=5)
    full = mechanism_audit.audit_mechanism(mech, 20_000, seed=4).result
    assert curve[-1].runs == 20_000 and curve[-1].trials == full.trials
    assert curve[-1].epsilon_lower == full.epsilon_lower
    assert curve[-1].ceiling == full.ceiling


def test_gaussian_rungs_carry_the_gdp_fit_at_the_mechanisms_delta():
    mech = mechanism_audit.build("gaussian", 1.0, 1e-5)
    curve = audit_curve(mech, 50_000, seed=2, points=4, confidence=1 - 0.05 / 4)
    for p in curve:
        assert p.gdp_epsilon is not None and p.gdp_epsilon <= 1.0
        assert p.ceiling == pytest.approx(audit.epsilon_ceiling(p.trials, 1e-5, 1 - 0.05 / 4))
    assert curve[-1].gdp_epsilon > curve[-1].epsilon_lower


def test_the_figure_draws_every_series():
    curve = audit_curve(mechanism_audit.build("gaussian", 1.0, 1e-5), 5_000, seed=1,
                        points=4)
    fig = curve_figure(curve, 1.0, "t", delta=1e-5, confidence=0.95)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert any("ceiling" in label for label in labels)
    assert any("can prove more" in label for label in labels)
    assert any("claim" in label for label in labels)
    assert any("Gaussian-DP" in label for label in labels)
    assert fig.axes[0].get_xscale() == "log"


def run_cli(capsys, *argv):
    from netdp.run.cli import main

    code = main(["audit", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_writes_the_plot_and_the_json_curve(capsys, tmp_path):
    path = tmp_path / "curve.png"
    code, out, _ = run_cli(capsys, "--mechanism", "laplace", "--trials", "20000",
                           "--plot", str(path), "--json")
    assert code == 0
    assert path.read_bytes()[:8] == PNG
    d = json.loads(out)
    assert {"schema", "version", "seed", "config", "mechanism", "pair", "audit", "curve",
            "provenance"} == set(d)
    rows = d["curve"]
    assert rows[-1]["runs"] == 20_000
    assert rows[-1]["epsilon_lower"] == d["audit"]["epsilon_lower"]
    assert all(r["epsilon_lower"] <= r["ceiling"] for r in rows)
    code, out, _ = run_cli(capsys, "--mechanism", "laplace", "--trials", "2000", "--json")
    assert "curve" not in json.loads(out)  # only with --plot
    code, out, _ = run_cli(capsys, "--trials", "2000", "--plot", str(tmp_path / "c.svg"))
    assert code == 0 and "plot" in out and (tmp_path / "c.svg").stat().st_size > 0


@pytest.mark.parametrize("name", ["curve.jpg", "curve", "missing/curve.png"])
def test_cli_bad_plot_path_is_one_line_exit_2(capsys, tmp_path, name):
    code, out, err = run_cli(capsys, "--trials", "2000", "--plot", str(tmp_path / name))
    assert code == 2 and out == "" and err.count("\n") == 1 and "--plot" in err
    assert list(tmp_path.iterdir()) == []  # nothing half-written
