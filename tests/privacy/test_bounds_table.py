"""`netdp bounds` as a library call: validation of every parameter, the output of the
default call, the vectorized histogram-ring curve and the screened FMT bisection under it
(the same values as the scalar code, bit for bit)."""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import FrozenInstanceError
from pathlib import Path

import numpy as np
import pytest

from netdp.accounting import fmt_numeric as FN
from netdp.bounds.curves import CURVES, histogram_ring
from netdp.bounds.table import bounds_table
from netdp.core.errors import InputError
from netdp.run.cli import main
from netdp.tracking.shuffle import RTOL, ring_histogram_theory

GOLDEN = Path(__file__).parents[1] / "golden"

BAD = [
    ({"n_max": math.inf}, "n-max"),
    ({"n_max": 1e300}, "n-max"),
    ({"n_min": 1.0}, "n-min"),
    ({"n_min": math.nan}, "n-min"),
    ({"n_min": 100.0, "n_max": 10.0}, "n-max"),
    ({"delta": 1e-320}, "delta"),
    ({"delta": 1.0}, "delta"),
    ({"delta": 1e-20}, "delta"),  # below histogram-ring's floor
    ({"steps_per_node": math.nan}, "steps-per-node"),
    ({"steps_per_node": 0.0}, "steps-per-node"),
    ({"steps_per_node": 1e13}, "steps-per-node"),
    ({"rounds": 0}, "rounds"),
    ({"rounds": 2.5}, "rounds"),
    ({"rounds": 10**10}, "rounds"),
    ({"points": 10**9}, "points"),
    ({"points": 0}, "points"),
    ({"eps0": 1e300}, "eps0"),
    ({"eps0": math.nan}, "eps0"),
    ({"eps0": 0.0}, "eps0"),
    ({"eps0": "much"}, "eps0"),
    ({"curves": ["ring-ndp", "nope"]}, "curve"),
]


@pytest.mark.parametrize(("kwargs", "param"), BAD, ids=[f"{k}={v}" for k, v in
                                                         (next(iter(a.items())) for a, _ in BAD)])
def test_bad_input_names_its_parameter(kwargs, param):
    with pytest.raises(InputError) as info:
        bounds_table(**kwargs)
    assert info.value.param == param
    msg = info.value.message
    assert ("<" in msg and "got" in msg) or "choose from" in msg, msg


@pytest.mark.parametrize(("argv", "flag"), [
    (["--n-max", "inf"], "n-max"),
    (["--n-max", "1e300"], "n-max"),
    (["--delta", "1e-320"], "delta"),
    (["--steps-per-node", "nan"], "steps-per-node"),
    (["--rounds", "0"], "rounds"),
    (["--points", "1000000000"], "points"),
    (["--eps0", "1e300"], "eps0"),
    (["--eps0", "nan"], "eps0"),
])
def test_cli_bad_input_is_one_line(capsys, argv, flag):
    assert main(["bounds", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err and err.count("\n") == 1
    assert err.startswith(f"netdp bounds: error: --{flag}: ")


def test_limits_are_inclusive_and_clean():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for eps0, delta, steps, rounds in [(1e-6, 1e-15, 5e-324, 1), (100.0, 1e-15, 1e12, 10**9),
                                           (0.1, 0.999999, 1.0, 7)]:
            t = bounds_table(eps0=eps0, delta=delta, steps_per_node=steps, rounds=rounds,
                             n_min=2, n_max=1e15, points=4)
            assert all(np.all(np.isfinite(v) & (v >= 0)) for v in t.curves.values())
        t = bounds_table(delta=1e-300, curves=[c for c in CURVES if c != "histogram-ring"])
        assert all(np.all(np.isfinite(v)) for v in t.curves.values())


@pytest.mark.parametrize(("name", "kwargs"), [
    ("bounds-default", {}),
    ("bounds-ring", {"eps0": 0.4, "delta": 1e-6, "rounds": 3, "n_min": 10, "n_max": 1e5,
                     "points": 4, "curves": ["ring-ndp", "ring-ldp", "histogram-ring"]}),
])
def test_json_is_the_recorded_output(name, kwargs):
    recorded = json.loads((GOLDEN / f"{name}.json").read_text())
    assert bounds_table(**kwargs).to_json() == recorded  # every number, exactly


def test_cli_prints_the_table_renderings(capsys):
    table = bounds_table(points=3, curves=["ring-ndp", "complete-ndp-fixed"])
    argv = ["bounds", "--points", "3", "--curve", "ring-ndp", "--curve", "complete-ndp-fixed"]
    from netdp.core.provenance import provenance

    with_provenance = {**table.to_json(), "provenance": provenance()}
    for extra, expected in [([], table.text()), (["--csv"], table.csv()),
                            (["--json"], json.dumps(with_provenance, indent=2))]:
        assert main([*argv, *extra]) == 0
        assert capsys.readouterr().out == expected + "\n"
    assert len(table.rows()) == 2 * table.n.size
    assert table.rows()[0] == (table.n[0], "ring-ndp", table.curves["ring-ndp"][0])


def test_table_is_immutable():
    table = bounds_table(points=2, curves="ring-ndp")
    with pytest.raises(FrozenInstanceError):
        table.eps0 = 1.0
    with pytest.raises(ValueError, match="read-only"):
        table.curves["ring-ndp"][0] = 0.0


def test_vectorized_histogram_ring_equals_the_scalar_curve():
    n = np.unique(np.concatenate([
        [2, 3, 4, 5, 7, 64, 65, 999, 123_457, 10**6, 10**6 + 1, 10**6 + 2, 10**9, 10**15],
        np.round(np.geomspace(10, 5e6, 16)),
    ]))
    assert n.size >= 30
    for K in (1, 3):
        got = histogram_ring(n=n, K=K, eps0=0.4, delta=1e-6)
        want = [ring_histogram_theory(int(m), K, 0.4, 1e-6) for m in n]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("eps0", [0.1, 1.0, 4.0])
def test_screened_bisection_is_the_scalar_bisection(eps0):
    n = np.array([2, 3, 5, 17, 100, 1000, 4321, 20_000])
    want = [FN._fmt_epsilon_1d(eps0, int(m), np.array([1e-7]), rtol=RTOL)[0] for m in n]
    np.testing.assert_array_equal(FN.fmt_numeric_epsilon(eps0, n, 1e-7, rtol=RTOL), want)


@pytest.mark.parametrize(("eps0", "m"), [(0.02, 371), (0.1, 40_000), (2.0, 3000), (8.0, 90)])
def test_screening_error_is_far_below_its_margin(eps0, m):
    c, w, dropped = FN._fmt_c_grid(eps0, m)
    eps = eps0 * np.array([0.0, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 0.9])
    k = eps.size
    total, scale, exact = FN._fmt_screen(eps0, np.full(k, int(c[0])), np.full(k, c.size), w,
                                          np.zeros(k, np.int64), eps)
    want = np.array([FN._fmt_delta_1d(eps0, m, eps[i : i + 1])[0] for i in range(k)])
    assert not exact.any()
    err = np.abs(np.minimum(total + dropped, 1.0) - want)
    assert np.all(err <= FN.FMT_SCREEN_RTOL / 100 * scale + 1e-300)


def test_target_delta_puts_every_curve_at_one_delta_in_all(capsys):
    """``--target-delta``: each curve at that one delta (Correction 7), split among its
    failures and slacks, never below the paper's own figure at the same delta."""
    table = bounds_table(eps0=0.5, delta=1e-6, target_delta=1e-6, points=4, n_max=1e6)
    paper = bounds_table(eps0=0.5, delta=1e-6, points=4, n_max=1e6)
    for name, eps in table.curves.items():
        want = [float(CURVES[name].at_target(1e-6, n=x, T=100 * x, K=1, eps0=0.5))
                for x in table.n]
        np.testing.assert_allclose(eps, want, rtol=1e-12)
        assert np.all(eps >= paper.curves[name] * (1 - 1e-12)), name
    assert table.curves["complete-ldp-chernoff"][0] > paper.curves["complete-ldp-chernoff"][0]
    assert table.to_json()["target_delta"] == 1e-6 and "target_delta" not in paper.to_json()
    assert main(["bounds", "--target-delta", "1e-6", "--points", "2"]) == 0
    out = capsys.readouterr().out
    assert "every curve at delta = 1e-06 in all" in out and "delta spent" in out
    assert main(["bounds", "--target-delta", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("netdp bounds: error: --target-delta:") and len(err.splitlines()) == 1
