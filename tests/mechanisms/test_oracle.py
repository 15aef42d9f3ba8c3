"""The shared pieces of the frequency oracles: byte-threshold Bernoulli draws, column
counts and the compiled CMS kernels, against plain numpy."""

import math

import numpy as np
import pytest
from _stats import mean_ok

from netdp.mechanisms import CMS, _oracle
from netdp.mechanisms._kernels import signs_below, sketch_row_sums
from netdp.mechanisms._oracle import bernoulli, column_counts, random_bytes, threshold_bytes


@pytest.mark.parametrize("bitgen", [np.random.PCG64, np.random.MT19937])
@pytest.mark.parametrize("prob", [0.0, 1e-4, 0.3775, 0.5, 255.5 / 256, 1.0])
def test_bernoulli_has_the_right_mean(bitgen, prob):
    rng = np.random.Generator(bitgen(7))
    draws = bernoulli(rng, prob, 400_000)
    assert draws.dtype == np.uint8 and set(np.unique(draws)) <= {0, 1}
    assert mean_ok(draws, prob, math.sqrt(prob * (1 - prob))) or prob in (0.0, 1.0)
    if prob in (0.0, 1.0):
        assert np.all(draws == prob)


def test_ties_refine_the_byte_threshold():
    """prob = (L + 1/2)/256: without the tie draws the mean would be L/256, 8 SEs off."""
    prob = 96.5 / 256
    draws = bernoulli(np.random.default_rng(3), prob, 2_000_000)
    assert mean_ok(draws, prob, math.sqrt(prob * (1 - prob)))
    assert not mean_ok(draws, 96 / 256, math.sqrt(prob * (1 - prob)))
    byte, level, ties, hit = threshold_bytes(np.random.default_rng(4), prob, 100_000)
    assert level == 96 and np.array_equal(ties, np.flatnonzero(byte == 96))
    assert hit.size == ties.size


def test_draws_do_not_depend_on_the_block_size(monkeypatch):
    whole = bernoulli(np.random.default_rng(5), 0.3, 10_001)
    monkeypatch.setattr(_oracle, "CHUNK_ELEMENTS", 37)
    np.testing.assert_array_equal(bernoulli(np.random.default_rng(5), 0.3, 10_001), whole)
    assert random_bytes(np.random.default_rng(1), 13).shape == (13,)


def test_column_counts_match_numpy():
    bits = (np.random.default_rng(6).random((5000, 7)) < 0.4).astype(np.uint8)
    for arr in (bits, bits.view(bool), bits.astype(np.int64), bits[:0]):
        np.testing.assert_array_equal(column_counts(arr), bits[:len(arr)].sum(axis=0))


def test_cms_kernels_match_numpy():
    rng = np.random.default_rng(8)
    byte = rng.integers(0, 256, 50 * 16, dtype=np.uint8)
    out = np.zeros((50, 17), dtype=np.int8)
    signs_below(byte, 97, out)
    np.testing.assert_array_equal(out[:, 1:], np.where(byte.reshape(50, 16) < 97, 1, -1))
    assert np.all(out[:, 0] == 0)
    mech = CMS(1.0, 30, k=5, m=16, hash_seed=2)
    reports = mech.perturb(rng.integers(0, 30, 3000), rng)
    counts, sums, bad = sketch_row_sums(reports, mech.k)
    assert bad == 0
    j = reports[:, 0]
    np.testing.assert_array_equal(counts, np.bincount(j, minlength=mech.k))
    expected = np.stack([reports[j == r, 1:].sum(axis=0) for r in range(mech.k)])
    np.testing.assert_array_equal(sums, expected)
    broken = reports.copy()
    broken[3, 5], broken[7, 0] = 0, mech.k
    assert sketch_row_sums(broken, mech.k)[2] == 2
