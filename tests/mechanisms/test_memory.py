"""Memory of the frequency oracles: bounded by the job, not by domain x reports.

Peaks are measured with ``tracemalloc`` (numpy reports its buffers to it) over a whole
run: building the oracle, ``aggregate_reports``, ``estimate_counts`` and ``variance``.
The caller's own arrays (categories, true frequencies) are made before the measurement.
The blocked draws are checked to be exactly those of one ``perturb`` call.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from netdp.mechanisms import (
    FREQUENCY,
    HASHED,
    RAPPOR,
    FrequencyOracle,
    _oracle,
    frequency_oracle,
    oracle_memory_bytes,
    rappor,
)
from netdp.mechanisms.histogram_encoding import _LaplaceStream, laplace_noise
from netdp.tasks import histogram_walk as histogram

MB = 1 << 20
BUDGET = 16 * MB  # a small working-set budget, so that the large reports go in blocks

# (oracle, domain, reports): large domains, and for d-bit or d-float reports enough
# reports that one perturb call would hold 10-25x the budget.
LARGE = [("grr", 10_000_000, 200), ("blh", 1_000_000, 20), ("olh", 1_000_000, 20),
         ("hr", 1_000_000, 200), ("cms", 200_000, 200), ("hcms", 200_000, 200),
         ("sue", 100_000, 2000), ("oue", 100_000, 2000), ("the", 100_000, 2000),
         ("she", 100_000, 300), ("rappor", 100_000, 1000)]
STREAMING = ["sue", "oue", "the", "she", "rappor", "cms"]  # blocks keep one call's draws


def peak_bytes(fn):
    """``(fn(), peak bytes traced while it ran, above what was traced before)``."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = fn()
        return out, tracemalloc.get_traced_memory()[1] - before
    finally:
        if started:
            tracemalloc.stop()


def full_run(name: str, domain: int, categories: np.ndarray, truth: np.ndarray, seed: int):
    """What a histogram run asks of its oracle; returns the oracle and the estimate."""
    oracle = frequency_oracle(name, 1.0, domain)
    rng = np.random.default_rng(seed)
    agg = histogram.aggregate_reports(oracle, categories, rng)
    est = oracle.estimate_counts(agg, categories.size)
    oracle.variance(truth, categories.size)
    return oracle, est


@pytest.fixture
def small_budget(monkeypatch):
    monkeypatch.setattr(FrequencyOracle, "budget_bytes", BUDGET)


@pytest.mark.parametrize(("name", "domain", "reports"), LARGE, ids=[c[0] for c in LARGE])
def test_peak_memory_is_bounded_and_memory_bytes_covers_it(name, domain, reports,
                                                           small_budget):
    # warm up: compiled kernels and lazy imports allocate once per process
    full_run(name, 40, np.arange(60) % 40, np.full(40, 1 / 40), 0)
    rng = np.random.default_rng(1)
    categories = rng.integers(0, domain, reports)
    truth = histogram.truth(categories, domain)
    estimate = peak_bytes(lambda: oracle_memory_bytes(name, 1.0, domain, reports))
    (oracle, est), peak = peak_bytes(lambda: full_run(name, domain, categories, truth, 2))
    assert est.shape == (domain,) and np.all(np.isfinite(est))
    # O(d + reports x report) whatever the domain: a dozen vectors of the domain (or of
    # the aggregate, larger for HR and RAPPOR) and the budget, never domain x reports
    # (the unary reports alone would take 10-25 budgets) nor domain x hashes in int64
    length = max(domain, oracle.bloom if name == "rappor" else 0)
    assert peak <= 12 * 8 * length + 1.5 * BUDGET + 4 * MB, peak / MB
    # memory_bytes: an upper estimate, and not a loose one
    bound = oracle.memory_bytes(reports)
    assert peak <= bound <= 10 * peak, (peak / MB, bound / MB)
    # ... known before the oracle is built (RAPPOR: from its first hash seed's blocks),
    # and finding it costs O(d) at most
    value, cost = estimate
    assert peak <= value <= 10 * peak, (peak / MB, value / MB)
    if name != "rappor":
        assert value == bound
    assert cost <= 12 * 8 * length + MB, cost / MB


def test_memory_bytes_is_cheap_and_refuses_huge_runs():
    """A domain of 10^9 is priced without allocating anything of its size."""
    for name in FREQUENCY:
        if name == "rappor":
            continue
        value, cost = peak_bytes(lambda n=name: oracle_memory_bytes(n, 1.0, 10**9, 10**6))
        assert value >= 8 * 10**9 and cost < MB, (name, cost)
    # unary reports: one call holds about a budget of bits however large d is
    sue = frequency_oracle("sue", 1.0, 10**7)
    assert sue.memory_bytes(10**6) < sue.memory_bytes(1) + 1.3 * sue.budget_bytes
    assert sue.block_rows() == sue.budget_bytes // sue.report_bytes()
    assert FrequencyOracle.call_rows == histogram.CHUNK


@pytest.mark.parametrize("name", STREAMING)
@pytest.mark.parametrize("domain", [2, 7, 64])
def test_blocked_draws_are_those_of_one_perturb_call(name, domain, monkeypatch):
    """With a budget of a byte (one report per block) the aggregate and the generator's
    state afterwards are exactly those of ``aggregate(perturb(values))``."""
    oracle = frequency_oracle(name, 1.3, domain)
    values = np.random.default_rng(domain).integers(0, domain, 203)
    # RAPPOR and CMS draw perturb's blocks of CHUNK_ELEMENTS (here one row each) and
    # perturb_aggregate follows them; the others' blocks follow the budget
    monkeypatch.setattr(_oracle, "CHUNK_ELEMENTS", 3)
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    whole = oracle.aggregate(oracle.perturb(values, rng_a))
    monkeypatch.setattr(FrequencyOracle, "budget_bytes", 1)
    assert oracle.block_rows() == 1
    blocked = oracle.perturb_aggregate(values, rng_b)
    np.testing.assert_array_equal(blocked, whole)
    assert blocked.dtype == whole.dtype
    assert rng_a.random() == rng_b.random()


@pytest.mark.parametrize("name", sorted(FREQUENCY))
def test_aggregate_reports_matches_chunked_perturb_then_aggregate(name, monkeypatch):
    """``aggregate_reports`` = the sum of ``aggregate(perturb(chunk))`` over its chunks,
    the draws of the old loop, with the default budget and with one that splits every
    call (then the oracles that keep one call's draws still match it exactly)."""
    domain, n = 11, 173
    oracle = frequency_oracle(name, 1.1, domain, hash_seed=3)
    values = np.random.default_rng(4).integers(0, domain, n)
    monkeypatch.setattr(histogram, "CHUNK", 50)
    rng = np.random.default_rng(9)
    expected = 0.0
    for start in range(0, n, 50):
        expected = expected + oracle.aggregate(oracle.perturb(values[start:start + 50], rng))
    got = histogram.aggregate_reports(oracle, values, np.random.default_rng(9))
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.float64
    monkeypatch.setattr(FrequencyOracle, "budget_bytes", 1)
    rows = oracle.block_rows()
    rng, expected = np.random.default_rng(9), 0.0
    for start in range(0, n, 50):
        chunk = values[start:start + 50]
        if name in STREAMING:
            expected = expected + oracle.aggregate(oracle.perturb(chunk, rng))
            continue
        for first in range(0, chunk.size, rows):  # separate calls per block
            part = chunk[first:first + rows]
            expected = expected + oracle.aggregate(oracle.perturb(part, rng))
    got = histogram.aggregate_reports(oracle, values, np.random.default_rng(9))
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", ["sue", "she"])
def test_other_bit_generators_fall_back_to_separate_calls(name, monkeypatch):
    """MT19937 has no raw 64-bit words to replay: over-budget calls are split into
    ``perturb`` calls of ``block_rows`` reports (other draws, same memory bound)."""
    oracle = frequency_oracle(name, 1.0, 9)
    values = np.random.default_rng(0).integers(0, 9, 40)
    monkeypatch.setattr(FrequencyOracle, "budget_bytes", 200)
    rows = oracle.block_rows()
    assert 1 <= rows < values.size
    rng = np.random.Generator(np.random.MT19937(3))
    expected = sum(oracle.aggregate(oracle.perturb(values[s:s + rows], rng))
                   for s in range(0, values.size, rows))
    got = oracle.perturb_aggregate(values, np.random.Generator(np.random.MT19937(3)))
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("bitgen", [np.random.PCG64, np.random.PCG64DXSM, np.random.SFC64,
                                    np.random.Philox])
def test_byte_and_bernoulli_streams_replay_one_call(bitgen):
    pieces = [1, 7, 8, 13, 0, 64, 5, 2]
    size = sum(pieces)
    whole_rng, piece_rng = np.random.Generator(bitgen(3)), np.random.Generator(bitgen(3))
    whole = _oracle.random_bytes(whole_rng, size)
    reader = _oracle.RawBytes(piece_rng.bit_generator)
    np.testing.assert_array_equal(np.concatenate([reader.read(k) for k in pieces]), whole)
    for prob in (0.0, 0.3775, 96.5 / 256, 0.999, 1.0):
        whole_rng, piece_rng = np.random.Generator(bitgen(4)), np.random.Generator(bitgen(4))
        whole = _oracle.bernoulli(whole_rng, prob, size)
        stream = _oracle.BernoulliStream(piece_rng, prob, size, piece=9)
        assert whole_rng.random() == piece_rng.random()  # the rng is left where one call is
        np.testing.assert_array_equal(np.concatenate([stream.read(k) for k in pieces]), whole)


def test_laplace_stream_replays_one_call():
    pieces = [3, 17, 8, 1, 40]
    rng_a, rng_b = np.random.default_rng(8), np.random.default_rng(8)
    whole = laplace_noise(rng_a, 2.5, sum(pieces))
    stream = _LaplaceStream(rng_b, 2.5, sum(pieces), piece=6)
    assert rng_a.random() == rng_b.random()
    got = np.concatenate([stream.read(k) for k in pieces])
    np.testing.assert_array_equal(got.view(np.uint64), whole.view(np.uint64))  # signs of 0


def test_rappor_block_decoding_matches_the_dense_one(monkeypatch):
    """Beyond ``DENSE_DESIGN`` the design is pseudo-inverted block by block: the same
    least-squares estimate and variance up to rounding, stacked aggregates included."""
    dense = frequency_oracle("rappor", 1.0, 150, hash_seed=0)
    assert dense.dense and "decoder" in dense.__dict__
    monkeypatch.setattr(rappor, "DENSE_DESIGN", 0)
    blocks = RAPPOR(150, f=dense.f, bloom=dense.bloom, hash_seed=dense.hash_seed)
    assert not blocks.dense and "design" not in blocks.__dict__
    np.testing.assert_allclose(blocks.decoder, dense.decoder, atol=1e-12)
    np.testing.assert_array_equal(blocks.design, dense.design)
    rng = np.random.default_rng(2)
    aggs = np.stack([dense.aggregate(dense.perturb(rng.integers(0, 150, 900), rng))
                     for _ in range(3)])
    np.testing.assert_allclose(blocks.estimate_counts(aggs, 900),
                               dense.estimate_counts(aggs, 900), rtol=1e-10, atol=1e-9)
    freq = np.random.default_rng(3).dirichlet(np.ones(150))
    np.testing.assert_allclose(blocks.variance(freq, 900), dense.variance(freq, 900),
                               rtol=1e-10)
    for value in (0, 77, 149):
        np.testing.assert_array_equal(blocks.bit_probabilities(value),
                                      dense.bit_probabilities(value))
    with pytest.raises(Exception) as info:  # one-hot design of 8 items in 8 buckets
        RAPPOR(8, hashes=1, bloom=8)
    assert getattr(info.value, "param", None) == "hash_seed"


def test_sketch_tables_are_built_lazily_and_compact():
    cms = frequency_oracle("cms", 1.0, 10**7, hash_seed=1)
    assert "hash_table" not in cms.__dict__ and cms.table_bytes() == 0
    small = frequency_oracle("hcms", 1.0, 50, hash_seed=1)
    assert small.hash_table.dtype == np.int32 and small.hash_table.shape == (16, 50)
    for row in (0, 15):
        np.testing.assert_array_equal(small.hash_row(row), small.hash_table[row])
    x = np.arange(50)
    np.testing.assert_array_equal(small.hash_items(x % 16, x), small.hash_table[x % 16, x])
    assert set(HASHED) <= set(FREQUENCY)
