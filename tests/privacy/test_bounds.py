"""Theoretical curves: hand-computed values, the Chernoff bound itself, the reference
script's variant, orderings of the curves, vectorization and the registry."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from netdp.accounting.composition import opti
from netdp.bounds.curves import (
    CONTRIBUTION_BOUNDS,
    CURVES,
    complete_ldp,
    complete_ndp,
    contributions_chernoff,
    contributions_chernoff_ref_variant,
    contributions_fixed,
    curve_table,
    ring_ldp,
    ring_ndp,
)

EPS0, DELTA = 0.1, 1e-7  # reference setting (network-dp.md §2.3), T = 100 n


def _drv(e: float, d: float, k: float) -> float:
    return e * math.sqrt(2 * k * math.log(1 / d)) + k * e * (math.exp(e) - 1)


def test_contribution_bounds_hand_computed():
    n, T, d = 50.0, 5000.0, 1e-7
    assert math.isclose(contributions_chernoff(n, T, d), 100 + math.sqrt(3 * 100 * math.log(1e7)))
    # reference script: T/N + np.sqrt(3*T/2 * np.log(1/delta)), i.e. sqrt(1.5 T ln(1/delta))
    assert math.isclose(
        contributions_chernoff_ref_variant(n, T, d), 100 + math.sqrt(1.5 * 5000 * math.log(1e7))
    )
    assert contributions_fixed(n, T, d) == 100.0
    assert set(CONTRIBUTION_BOUNDS) == {"chernoff", "chernoff-ref-variant", "fixed"}


@pytest.mark.parametrize("n", [5, 50, 1000])
def test_chernoff_bound_holds_for_the_binomial(n):
    # N_v must exceed the number of contributions Bin(T, 1/n) with probability >= 1 - delta
    T = 100 * n
    nv = contributions_chernoff(n, T, DELTA)
    assert stats.binom.sf(math.floor(nv), T, 1 / n) <= DELTA
    # and it is not vacuous: a bound with half the deviation fails
    loose = T / n + 0.5 * math.sqrt(3 * (T / n) * math.log(1 / DELTA))
    assert stats.binom.sf(math.floor(loose), T, 1 / n) > DELTA


def test_complete_graph_curves_hand_computed():
    n = 400.0
    T = 100 * n
    nv = 100 + math.sqrt(300 * math.log(1 / DELTA))
    ldp = min(nv * EPS0, _drv(EPS0, DELTA, nv))
    e_c = 3 * EPS0 / math.sqrt(n)
    ndp = min((nv + 100) * e_c, _drv(e_c, DELTA, nv + 100))
    assert math.isclose(complete_ldp(n=n, T=T, eps0=EPS0, delta=DELTA), ldp)
    assert math.isclose(complete_ndp(n=n, T=T, eps0=EPS0, delta=DELTA), ndp)
    fixed = complete_ndp(n=n, T=T, eps0=EPS0, delta=DELTA, bound="fixed")
    assert math.isclose(fixed, min(200 * e_c, _drv(e_c, DELTA, 200)))
    with pytest.raises(ValueError, match="allowed"):
        complete_ldp(n=n, T=T, eps0=EPS0, delta=DELTA, bound="hoeffding")


def test_ndp_below_ldp_for_large_n_and_decreasing():
    n = np.logspace(2, 10, 17)
    T = 100 * n
    for bound in ("chernoff", "chernoff-ref-variant", "fixed"):
        ldp = complete_ldp(n=n, T=T, eps0=EPS0, delta=DELTA, bound=bound)
        ndp = complete_ndp(n=n, T=T, eps0=EPS0, delta=DELTA, bound=bound)
        assert np.all(ndp < ldp), bound
        assert np.all(np.diff(ndp) < 0), bound
    # with T = 100 n the Chernoff N_v, hence the LDP curve, does not depend on n
    ldp = complete_ldp(n=n, T=T, eps0=EPS0, delta=DELTA)
    np.testing.assert_allclose(ldp, ldp[0], rtol=1e-12)


def test_ring_curves_hand_computed():
    d = 1e-6
    for K, e in [(10, 0.5), (1, 0.1), (1000, 0.05)]:
        expected = min(K * e, _drv(e, d, K))
        assert math.isclose(ring_ndp(n=100, K=K, eps0=e, delta=d), expected)
        assert math.isclose(ring_ldp(n=100, K=K, eps0=e, delta=d), expected)
    # many turns: advanced composition wins over K eps0
    assert ring_ndp(n=100, K=1000, eps0=0.05, delta=d) < 1000 * 0.05
    out = ring_ndp(n=np.array([10, 100, 1000]), K=10, eps0=0.5, delta=d)
    assert out.shape == (3,) and np.all(out == out[0])


def test_curves_vectorized_equal_scalar_loop():
    n = np.logspace(0, 10, 21)
    for name, curve in CURVES.items():
        kw = {"T": 100 * n} if "T" in curve.params else {"K": 7}
        nn = np.maximum(n, 2) if "K" in curve.params else n
        vec = curve(n=nn, eps0=EPS0, delta=DELTA, **kw)
        for i in range(0, 21, 5):
            kwi = {k: (v[i] if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
            assert vec[i] == curve(n=nn[i], eps0=EPS0, delta=DELTA, **kwi), name


def test_registry_and_table():
    for name, c in CURVES.items():
        assert c.name == name and c.description and c.params[0] == "n"
    n = np.logspace(0, 10, 11)
    table = curve_table(n, T_per_node=100, eps0=EPS0, delta=DELTA)
    assert set(table) == {k for k in CURVES if k.startswith("complete-")}
    for name, v in table.items():
        assert v.shape == n.shape and np.all(np.isfinite(v)) and np.all(v > 0), name
    # the table values are the curve functions' values
    np.testing.assert_allclose(
        table["complete-ldp-chernoff"],
        opti(EPS0, DELTA, contributions_chernoff(n, 100 * n, DELTA)),
    )
    ring = curve_table(n[1:], K=5, eps0=0.5, delta=1e-6)
    assert set(ring) == {"ring-ndp", "ring-ldp", "histogram-ring"}
    assert np.all(np.diff(ring["histogram-ring"]) <= 0)  # more reports, more amplification
    with pytest.raises(ValueError, match="needs"):
        curve_table(n, names=["ring-ndp"], eps0=0.5, delta=1e-6)
    with pytest.raises(ValueError, match="unknown curve"):
        curve_table(n, names=["nope"], K=1, eps0=0.5, delta=1e-6)
