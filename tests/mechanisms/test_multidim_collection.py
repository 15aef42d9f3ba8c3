"""Multidimensional collection (Wang et al. ICDE 2019 §4): every estimator unbiased, with
its closed-form variance, against Monte Carlo (fixed seeds, Z standard errors)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from _stats import assert_rejected, mean_ok, variance_ok

from netdp.data.attributes import synthetic
from netdp.mechanisms.multidim import ORACLES, DuchiMultidim, Multidim, Table, sample_size

ROUNDS = 3000


def _table(n: int = 60, attributes: int = 5, categorical: int = 2, domain: int = 3) -> Table:
    return synthetic(n, attributes, categorical, domain, np.random.default_rng(11))


def _estimates(mech: Multidim, table: Table, rounds: int, seed: int) -> np.ndarray:
    """``(rounds, width)``: the mean contribution of one report per row, per round (all
    rounds drawn in one call)."""
    rows = np.tile(np.arange(table.n), rounds)
    contrib = mech.contributions(table.take(rows), np.random.default_rng(seed))
    return contrib.reshape(rounds, table.n, -1).mean(axis=1)


def _check(est: np.ndarray, truth: np.ndarray, var: np.ndarray) -> None:
    for j in range(truth.size):
        assert mean_ok(est[:, j], truth[j], math.sqrt(var[j])), (j, est[:, j].mean(), truth[j])
        assert variance_ok(est[:, j], var[j]), (j, est[:, j].var(), var[j])


def test_sample_size_is_the_papers_rule():
    """k = max(1, min(d, floor(eps / 2.5))) (Wang et al. 2019, §4.1)."""
    got = [sample_size(eps, 3) for eps in (0.5, 2.49, 2.5, 5.0, 7.6, 100.0)]
    assert got == [1, 1, 1, 2, 3, 3]
    assert Multidim(6.0, 3, (3, 3)).k == 2 and Multidim(6.0, 3, (3, 3), split="naive").k == 5


@pytest.mark.parametrize("mechanism", ["piecewise", "hybrid", "duchi"])
@pytest.mark.parametrize("split", ["sample", "naive"])
def test_unbiased_with_the_closed_form_variance(mechanism, split):
    table = _table()
    mech = Multidim(6.0, 3, table.domains, mechanism, "oue", split)
    est = _estimates(mech, table, ROUNDS, seed=7)
    var = mech.variance(table)
    _check(est, table.truth().mean(axis=0), var)
    # the test can fail: 1.5 x the variance is rejected on some attribute
    assert not all(variance_ok(est[:, j], 1.5 * var[j]) for j in range(var.size))


def test_the_sampling_term_is_needed():
    """Without the sampling's own ``(d/k - 1) t²`` the variance is rejected."""
    table = _table(categorical=0)
    table = Table(np.clip(table.numeric + 0.5, -1, 1), table.categorical, ())
    mech = Multidim(6.0, 5, (), "piecewise", split="sample")
    est = _estimates(mech, table, ROUNDS, seed=8)
    t = table.numeric
    wrong = (mech.scale * mech.numeric_mechanism.variance(t)).sum(axis=0) / table.n**2
    assert all(variance_ok(est[:, j], mech.variance(table)[j]) for j in range(5))
    assert not all(variance_ok(est[:, j], wrong[j]) for j in range(5))


@pytest.mark.parametrize("oracle", ORACLES)
def test_every_oracle_for_the_categorical_part(oracle):
    table = _table(n=40, attributes=3, categorical=2, domain=4)
    mech = Multidim(5.0, 1, table.domains, "hybrid", oracle)
    assert mech.k == 2
    est = _estimates(mech, table, 2000, seed=9)
    _check(est, table.truth().mean(axis=0), mech.variance(table))


def test_rows_drawn_uniformly_with_replacement():
    """``sampled_variance``: a walk on the complete graph draws the reporting rows."""
    table = _table(n=30)
    mech = Multidim(3.0, 3, table.domains, "hybrid")
    rng = np.random.default_rng(12)
    reports, rounds = 50, 3000
    rows = rng.integers(0, table.n, reports * rounds)
    est = mech.contributions(table.take(rows), rng).reshape(rounds, reports, -1).mean(axis=1)
    _check(est, table.truth().mean(axis=0), mech.sampled_variance(table, reports))


def _duchi_law(mech: DuchiMultidim, t: np.ndarray) -> dict[tuple[int, ...], float]:
    """The exact law of the sign pattern of Duchi's report, by enumeration."""
    d = t.size
    signs = np.array(list(itertools.product([-1, 1], repeat=d)), dtype=float)
    p = 1 / (1 + math.exp(-mech.epsilon))
    law = np.zeros(len(signs))
    for v in signs:
        pv = np.prod(np.where(v > 0, (1 + t) / 2, (1 - t) / 2))
        dot = signs @ v
        law += pv * (p * (dot >= 0) / (dot >= 0).sum() + (1 - p) * (dot <= 0) / (dot <= 0).sum())
    return {tuple(s.astype(int)): w for s, w in zip(signs, law, strict=True)}


@pytest.mark.parametrize("d", [3, 4])
def test_duchi_sampler_follows_the_law(d):
    mech = DuchiMultidim(1.0, d)
    t = np.linspace(-0.8, 0.6, d)
    law = _duchi_law(mech, t)
    draws = 200_000
    out = np.sign(mech.perturb(np.tile(t, (draws, 1)), np.random.default_rng(3))).astype(int)
    patterns, counts = np.unique(out, axis=0, return_counts=True)
    seen = {tuple(p): c for p, c in zip(patterns, counts, strict=True)}
    for pattern, prob in law.items():
        se = math.sqrt(prob * (1 - prob) / draws)
        assert abs(seen.get(pattern, 0) / draws - prob) <= 5 * se, (pattern, prob)
    # the law is unbiased: B E[s] = t exactly
    mean = sum(np.array(s) * w for s, w in law.items()) * mech.B
    np.testing.assert_allclose(mean, t, atol=1e-12)


@pytest.mark.parametrize("d", [1, 4, 5])
def test_duchi_joint_unbiased_with_its_variance(d):
    table = _table(attributes=d, categorical=0)
    mech = Multidim(1.0, d, (), "duchi", split="joint")
    est = _estimates(mech, table, ROUNDS, seed=4)
    var = mech.variance(table)
    _check(est, table.truth().mean(axis=0), var)
    assert not all(variance_ok(est[:, j], 1.5 * var[j]) for j in range(d))
    if d == 1:  # one dimension: Duchi's one-dimensional randomizer
        assert math.isclose(mech.numeric_mechanism.B, 1 / math.tanh(0.5))


def test_bad_parameters_name_the_flag():
    assert_rejected([
        (lambda: Multidim(1.0, 2, (3,), mechanism="gaussian"), "mechanism"),
        (lambda: Multidim(1.0, 2, (3,), oracle="cms"), "oracle"),
        (lambda: Multidim(1.0, 2, (3,), split="even"), "split"),
        (lambda: Multidim(1.0, 2, (3,), "duchi", split="joint"), "split"),
        (lambda: Multidim(1.0, 2, (), "hybrid", split="joint"), "mechanism"),
        (lambda: Multidim(1.0, 2, (1,)), "domain"),
        (lambda: Multidim(-1.0, 2, ()), "epsilon"),
        (lambda: Multidim(1.0, 0, ()), "attributes"),
        (lambda: DuchiMultidim(1.0, 0), "attributes"),
    ])
    with pytest.raises(Exception, match="values"):
        Multidim(1.0, 2, (3,)).contributions(_table(), np.random.default_rng(0))
