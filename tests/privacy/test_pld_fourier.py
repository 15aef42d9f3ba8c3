"""The batched Fourier composition of the ``pld`` walk accountant (netdp.accounting.
pld_fourier, netdp.tracking.exact): against the direct compositions of loss_pmf, the exact
accountant, and the known values of the review's traces; and a version with the
wrap-around tail dropped, which the soundness check must catch."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from test_soundness_property import case

from netdp.accounting import pld_fourier as pf
from netdp.accounting.loss_pmf import LossPmf, PldPair
from netdp.accounting.mixture_pld import mixture_pld
from netdp.engine.trace import Trace
from netdp.tracking import exact
from netdp.tracking.loss_table import walk_losses


def _random_pmf(rng: np.random.Generator, size: int) -> tuple[np.ndarray, float]:
    p = rng.random(size) ** 4
    p[rng.random(size) < 0.2] = 0.0
    inf = float(rng.choice([0.0, 1e-7, 2e-3]))  # not at a δ tried (ties: rounding)
    p *= (1.0 - inf) / p.sum()
    return p, inf


@pytest.mark.parametrize("seed", range(6))
def test_batch_epsilon_is_loss_pmf_epsilon(seed):
    """The vectorised solve against :meth:`LossPmf.epsilon` (its oracle), row by row."""
    rng = np.random.default_rng(seed)
    size, h = int(rng.integers(1, 400)), float(rng.choice([1e-3, 0.01, 0.1]))
    lower = int(rng.integers(-300, 50))
    rows = [_random_pmf(rng, size) for _ in range(5)]
    probs = np.array([p for p, _ in rows])
    inf = np.array([i for _, i in rows])
    for delta in (1e-9, 1e-6, 1e-3, 0.2):
        want = [float(LossPmf(lower, p, i, h).epsilon(delta)) for p, i in rows]
        got = pf.batch_epsilon(probs, lower, h, inf, delta)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
        # the spectral solve: from the transform (positions x - lower, F >= size)
        size = pf.fft_size(size + int(rng.integers(0, 50)))
        spec = np.fft.rfft(probs, n=size, axis=1)
        got = pf.spectral_epsilon(spec, lower, size, h, inf, delta)
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_batch_epsilon_with_rows_far_below_zero(seed):
    """Rows with their own lowest losses deep below 0 (the columns below every row's loss
    0 are cut before the sums): still :meth:`LossPmf.epsilon`, row by row."""
    rng = np.random.default_rng(100 + seed)
    size, h = 600, 0.01
    lower = rng.integers(-590, -100, 5)
    rows = [_random_pmf(rng, size) for _ in range(5)]
    probs = np.array([p for p, _ in rows])
    inf = np.array([i for _, i in rows])
    for delta in (1e-6, 1e-3, 0.2):
        want = [float(LossPmf(int(lo), p, i, h).epsilon(delta))
                for lo, (p, i) in zip(lower, rows, strict=True)]
        got = pf.batch_epsilon(probs, lower, h, inf, delta)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def _mixtures(h: float) -> list[PldPair]:
    out = []
    for size, p, s in ((0, 0.0, 3.0), (4, 0.3, 2.0), (20, 0.05, 5.0), (60, 0.02, 8.0)):
        for c in (0, 1, 2):
            w = np.concatenate([np.zeros(c), stats.binom.pmf(np.arange(size + 1), size, p)])
            out.append(mixture_pld(w, s, h=h))
    return out


@pytest.mark.parametrize("delta", [1e-8, 1e-5, 1e-3])
def test_bank_matches_the_direct_composition(delta):
    """A base of repeated mechanisms and rows that replace some of them: each row's ε
    equals the direct convolution's (loss_pmf) up to the window's and FFT's margins, and
    is not below it by more than float noise."""
    h = 2e-3
    plds = _mixtures(h)
    bank = pf.Bank(h)
    ids = [bank.add(x.qp) for x in plds]
    rng = np.random.default_rng(1)
    base = {ids[j]: int(rng.integers(1, 5)) for j in (0, 3, 6, 9)}
    rows = [(), ((ids[3], ids[4]),), ((ids[6], ids[8]), (ids[9], ids[10])),
            ((ids[9], ids[11]), (ids[9], ids[11])), ((ids[0], ids[2]),)]
    got = bank.epsilons(base, rows, delta)
    for r, row in enumerate(rows):
        mult = dict(base)
        for gone, new in row:
            mult[gone] -= 1
            mult[new] = mult.get(new, 0) + 1
        parts = [plds[ids.index(j)].qp for j, m in mult.items() for _ in range(m)]
        direct = parts[0]
        for x in parts[1:]:
            direct = direct.compose(x, truncation=0.0)
        want = float(direct.epsilon(delta))
        assert want - 1e-9 <= got[r] <= want * (1 + 1e-6) + 1e-5, (r, got[r], want)


def test_the_bank_refuses_a_removal_its_base_lacks():
    bank = pf.Bank(0.01)
    a = bank.add(mixture_pld([0.0, 1.0], 2.0, h=0.01).qp)
    b = bank.add(mixture_pld([1.0], 2.0, h=0.01).qp)
    with pytest.raises(ValueError):
        bank.epsilons({a: 1}, [((b, a),)], 1e-5)


def test_the_review_traces():
    """Spec Corrections 1: ``[[0,1,2,0]]`` and ``[[0,1,1,0]]`` at n = 50, z = 1: exact
    3.20198 / 7.07906, pld 3.2024 / 7.0795 (an upper bound within the grid)."""
    for holders, ex, pld in (([[0, 1, 2, 0]], 3.20198, 3.2024), ([[0, 1, 1, 0]], 7.07906,
                                                                   7.0795)):
        trace = Trace(50, np.array(holders))
        got = {acc: walk_losses(trace, 1.0, 1e-6, 1.0, acc, keep_pairs=True).matrix()[1, 0]
               for acc in ("pld", "exact")}
        assert abs(got["exact"] - ex) < 1e-5
        assert abs(got["pld"] - pld) < 1e-4
        assert got["pld"] >= got["exact"]


@pytest.mark.slow  # about a minute each on 2 cores (the exact accountant beside it)
@pytest.mark.parametrize(("self_moves", "seed"), [(True, 1), (False, 2)])
def test_pld_is_above_exact_and_close_on_a_walk(self_moves, seed):
    rng = np.random.default_rng(seed)
    n = 12
    holders = np.empty((1, 240), np.int64)
    h = int(rng.integers(n))
    for i in range(holders.shape[1]):
        holders[0, i] = h
        h = int(rng.integers(n)) if self_moves else int((h + rng.integers(1, n)) % n)
    trace = Trace(n, holders)
    pld = walk_losses(trace, 1.0, 1e-6, 2.0, "pld", keep_pairs=True,
                      self_moves=self_moves).matrix()
    ex = walk_losses(trace, 1.0, 1e-6, 2.0, "exact", keep_pairs=True,
                     self_moves=self_moves).matrix()
    off = ~np.eye(n, dtype=bool)
    assert np.all(pld[off] >= ex[off] - 1e-9)
    assert np.all(pld[off] <= 1.05 * ex[off] + 1e-6)


def test_length_bins_hold_their_lengths():
    for m in list(range(2, 3000)) + [10**5, 10**7]:
        lo, hi = exact.length_bin(m)
        assert lo <= m <= hi
        assert exact.length_bin(lo) == exact.length_bin(hi) == (lo, hi)
        if m <= exact.PLD_EXACT_M:
            assert lo == hi == m
        else:
            assert exact.length_bin(lo - 1)[1] == lo - 1
            assert hi / lo < exact.PLD_BIN_RATIO * (1 + 1 / exact.PLD_EXACT_M)


def _complete_cases(seeds) -> list[str]:
    # the property test's complete-graph cases (seed % 6 in (0, 1))
    return [v for seed in seeds for v in case(seed) if " pld " in v]


@pytest.mark.slow  # 35 s: 20 property cases twice
def test_the_check_catches_the_wraparound_tail_dropped(monkeypatch):
    """Windows that cut into the composition (``TAIL_SHARE`` of 10 δ) stay sound while the
    mass above the window is put back at +∞; drop it and the property test finds pairs
    below the exact loss (a check that cannot fail would be a defect)."""
    seeds = [s for s in range(0, 60) if s % 6 in (0, 1)]
    monkeypatch.setattr(pf, "TAIL_SHARE", 10.0)
    assert not _complete_cases(seeds)
    monkeypatch.setattr(pf, "mass_above", lambda lmgf, edge: np.zeros(lmgf.shape[0]))
    found = _complete_cases(seeds)
    assert found, "the soundness check cannot tell a dropped wrap-around tail"


def test_fft_sizes():
    for points in (1, 7, 9, 100, 1000, 10**5 + 1):
        size = pf.fft_size(points)
        assert size >= points and size < 1.26 * max(points, 8)
    assert math.log2(pf.fft_size(1024)) == 10


@pytest.mark.parametrize(("factors", "delta"), [(2, 1e-9), (1, 1e-10)])
def test_a_long_transform_is_never_below_the_gaussian_s_true_loss(factors, delta):
    """On a fine grid (an FFT of about 2^21 points) at a small δ, the bank's ε of composed
    Gaussian PLDs is never below the analytic ε: the differences ``1 - ω_f`` and
    ``1 - e^{-h} ω_f`` of the Parseval sums lose their low frequencies' relative precision
    in the plain forms, which put δ low by about ``5e-18 F`` (the review of session 18:
    9.09245 against the true 9.09256 here, before the cancellation-free forms)."""
    from scipy import optimize, special

    h = 2e-5
    pld = mixture_pld([0.0, 1.0], 1.0, h=h)
    bank = pf.Bank(h)
    j = bank.add(pld.qp)
    got = float(bank.epsilons({j: factors}, [()], delta)[0])
    mu = math.sqrt(factors)
    true = optimize.brentq(lambda e: special.ndtr(-e / mu + mu / 2) - math.exp(e)
                           * special.ndtr(-e / mu - mu / 2) - delta, 0.0, 100.0, xtol=1e-13)
    direct = pld.qp if factors == 1 else pld.qp.compose(pld.qp)
    assert got >= float(direct.epsilon(delta)) - 1e-9 >= true - 2e-9
    assert got - true < 1e-4  # within the grid's rounding and the bank's allowances
