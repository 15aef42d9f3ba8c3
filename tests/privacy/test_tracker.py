import math

import numpy as np
import pytest

from netdp import engine
from netdp.accounting.amplification import subsampled_epsilon
from netdp.accounting.composition import kov_het_epsilon, kov_het_terms
from netdp.accounting.gdp import gaussian_epsilon
from netdp.accounting.rdp import rdp_gaussian, rdp_subsampled_gaussian, rdp_to_epsilon
from netdp.core import seeding
from netdp.engine.trace import Trace
from netdp.graphs import topologies as topology
from netdp.mechanisms import Gaussian
from netdp.tasks.summation import ring_noise_mask
from netdp.tracking.loss_summary import summarize
from netdp.tracking.loss_table import (
    RDP_ORDERS,
    _kov_homogeneous,
    ldp_losses,
    ring_losses,
    walk_losses,
)


def walk_losses_ref(*args, **kwargs):
    """The reference convention (AISTATS 2022 Fig. 1b), which these tests pin down."""
    return walk_losses(*args, convention="reference", **kwargs)


def _trace(n, steps, tokens=1, seed=0, self_moves=True):
    topo = topology.complete(n, self_moves)
    rngs = [seeding.generator(seed, "walk", 0, k) for k in range(tokens)]
    return engine.walk("vector", engine.Router(topo), steps, rngs)


def _entries(holders, n, observers_of):
    """Brute force, straight from the spec: entries (m, c) of every pair, by observer."""
    out = {}
    for row in holders:
        for v, group in observers_of.items():
            visits = np.flatnonzero(np.isin(row, group))
            for j, i in zip(visits[:-1], visits[1:], strict=True):
                m, a, b = i - j, row[j + 1], row[i - 1]
                for u in range(n):
                    if u in group:
                        continue
                    c = int(u == a and m > 1) + int(u == b and m > 1)
                    out.setdefault((u, v), []).append((m, c))
    return out


def _brute(holders, n, eps0, delta, z, accountant, observers_of=None):
    observers_of = observers_of or {v: [v] for v in range(n)}
    entries = _entries(holders, n, observers_of)
    losses = {}
    for pair, es in entries.items():
        m = np.array([e[0] for e in es], float)
        c = np.array([e[1] for e in es])
        k = len(es)
        if accountant == "kov":
            eg = eps0 / np.sqrt(m)
            eps = np.where(c == 0, subsampled_epsilon(eg, 1 - (1 - 1 / n) ** m), c * eg)
            terms = [t.sum() for t in kov_het_terms(eps)]
            losses[pair] = float(kov_het_epsilon(*terms, min(k * delta, 1.0)))
        else:
            q = 1 - (1 - 1 / n) ** m
            rdp = np.where(
                (c == 0)[:, None],
                rdp_subsampled_gaussian(RDP_ORDERS, q, z * np.sqrt(m)),
                rdp_gaussian(RDP_ORDERS, z * np.sqrt(m), np.maximum(c, 1)),
            )
            losses[pair] = float(rdp_to_epsilon(rdp.sum(axis=0), RDP_ORDERS, 2 * k * delta))
    return losses


@pytest.mark.parametrize("accountant", ["kov", "rdp"])
@pytest.mark.parametrize(
    "n,steps,tokens,self_moves", [(12, 400, 1, True), (9, 150, 2, False), (25, 2500, 1, True)]
)
def test_tracker_equals_brute_force(accountant, n, steps, tokens, self_moves):
    eps0, delta = 0.4, 1e-7
    z = Gaussian(eps0, delta).sigma
    trace = _trace(n, steps, tokens, seed=n, self_moves=self_moves)
    losses = walk_losses_ref(trace, eps0, delta, z, accountant, keep_pairs=True)
    matrix = losses.matrix()
    brute = _brute(trace.holders, n, eps0, delta, z, accountant)
    expected = np.full((n, n), np.nan)
    for (u, v), value in brute.items():
        expected[u, v] = value
    off = ~np.eye(n, dtype=bool)
    np.testing.assert_allclose(matrix[off], expected[off], rtol=1e-12, atol=0)
    dense = matrix[off]
    summary = summarize([losses])
    assert summary["pairs"] == n * (n - 1)
    assert summary["mean"] == pytest.approx(dense.mean(), rel=1e-12)
    assert summary["min"] == dense.min() and summary["max"] == dense.max()
    for q in (0.5, 0.9, 0.99):
        want = np.quantile(dense, q, method="inverted_cdf")
        assert summary[f"q{round(q * 100)}"] == pytest.approx(want, rel=1e-12)


def test_coalition_equals_brute_force():
    n, eps0, delta = 15, 0.4, 1e-7
    trace = _trace(n, 900, seed=3)
    group = [2, 7, 11]
    losses = walk_losses_ref(trace, eps0, delta, 1.0, "kov", coalition=group, keep_pairs=True)
    brute = _brute(trace.holders, n, eps0, delta, 1.0, "kov", {-1: group})
    got = dict(zip(losses.nodes.tolist(), losses.values.tolist(), strict=True))
    assert losses.weight[0] + losses.values.size == n - len(group)
    for (u, _), value in brute.items():
        assert got.get(u, losses.base[0]) == pytest.approx(value, rel=1e-12)
    single = walk_losses_ref(trace, eps0, delta, 1.0, "kov", coalition=[4], keep_pairs=True)
    alone = walk_losses_ref(trace, eps0, delta, 1.0, "kov", keep_pairs=True).matrix()[:, 4]
    col = np.full(n, single.base[0])
    col[single.nodes] = single.values
    col[4] = np.nan
    np.testing.assert_allclose(col, alone, rtol=1e-12)
    # a coalition sees more than any of its members alone
    assert summarize([losses])["mean"] > summarize([single])["mean"]


@pytest.mark.parametrize("eps0", [0.1, 0.4])
@pytest.mark.parametrize("n", [50, 200])
def test_pairwise_loss_never_exceeds_ldp_at_the_reference_setting(n, eps0):
    delta = 1e-7
    trace = _trace(n, 100 * n, seed=1)
    matrix = walk_losses_ref(trace, eps0, delta, 1.0, "kov", keep_pairs=True).matrix()
    ldp = ldp_losses(trace, eps0, delta)
    assert np.all(np.nan_to_num(matrix, nan=0.0) <= ldp[:, None])


def test_losses_fall_with_n_and_rise_with_eps0():
    def mean(n, eps0):
        runs = [walk_losses_ref(_trace(n, 100 * n, seed=s), eps0, 1e-7, 1.0) for s in range(3)]
        return summarize(runs)["mean"]

    by_n = [mean(n, 0.1) for n in (25, 100, 400)]
    assert by_n[0] > by_n[1] > by_n[2]
    assert mean(100, 0.1) < mean(100, 0.4)


def test_rdp_of_an_isolated_entry_stays_above_exact_gaussian_dp():
    # holders 0, 1, 0 on two nodes: observer 0 sees one return (m = 2); node 1 is both the
    # next and the previous holder (c = 2): a Gaussian of std z sqrt(2), sensitivity 2
    z, delta = 3.0, 1e-6
    trace = Trace(2, np.array([[0, 1, 0]], dtype=np.int32))
    losses = walk_losses_ref(trace, 1.0, delta, z, "rdp", keep_pairs=True)
    rdp = losses.matrix()[1, 0]
    exact = float(gaussian_epsilon(2 / (z * math.sqrt(2)), 2 * delta))
    assert exact < rdp < 1.3 * exact


def test_ring_losses():
    n, rounds, eps0, delta = 10, 4, 0.5, 1e-6
    mask = ring_noise_mask(n, rounds * n)
    plain = ring_losses(n, rounds, mask, eps0, delta)
    assert (
        summarize([plain])["min"]
        == summarize([plain])["max"]
        == pytest.approx(_kov_homogeneous(eps0, rounds, delta))
    )
    # both neighbours of node 5 collude: node 5 is exposed, the others are protected
    both = ring_losses(n, rounds, mask, eps0, delta, coalition=[4, 6])
    exposed = dict(zip(both.nodes.tolist(), both.values.tolist(), strict=True))
    assert exposed[5] == math.inf
    one = ring_losses(n, rounds, mask, eps0, delta, coalition=[3])
    assert np.all(np.isfinite(one.values))
    assert np.all(one.values == pytest.approx(_kov_homogeneous(eps0, rounds, delta)))
    every_hop = ring_losses(
        n, rounds, ring_noise_mask(n, rounds * n, every_hop=True), eps0, delta, coalition=[4, 6]
    )
    assert np.all(np.isfinite(every_hop.values))


def _pld_oracle(holders, n, delta, z, vdi):
    """Brute force with dp_accounting alone: per pair, every subsampled entry of the
    observer (each with its own m, no bins) and the pair's attributable Gaussians."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    entries = _entries(holders, n, {v: [v] for v in range(n)})
    out = {}
    for (u, v), es in entries.items():
        dist = pld_lib.identity(value_discretization_interval=vdi)
        for m, c in es:
            q = -math.expm1(m * math.log1p(-1 / n))
            dist = dist.compose(pld_lib.from_gaussian_mechanism(
                z * math.sqrt(m), sampling_prob=min(q, 1.0), value_discretization_interval=vdi))
            if c:
                dist = dist.compose(pld_lib.from_gaussian_mechanism(
                    z * math.sqrt(m) / c, value_discretization_interval=vdi))
        out[u, v] = max(0.0, dist.get_epsilon_for_delta(2 * len(es) * delta))
    return out


def test_pld_equals_a_dp_accounting_oracle(monkeypatch):
    """Bins off: the tracker composes the same entries as dp_accounting, except that it
    composes the Gaussian part exactly where the oracle discretises it (pessimistically),
    so it may sit below the oracle by at most one grid step, never above."""
    from netdp.tracking import _walk_pld

    n, eps0, delta = 8, 0.4, 1e-7
    z = Gaussian(eps0, delta).sigma
    trace = _trace(n, 160, seed=2)
    monkeypatch.setattr(_walk_pld, "EXACT_M", 10**9)
    matrix = walk_losses_ref(trace, eps0, delta, z, "pld", keep_pairs=True).matrix()
    oracle = _pld_oracle(trace.holders, n, delta, z, _walk_pld.VDI)
    for (u, v), want in oracle.items():
        assert want - _walk_pld.VDI <= matrix[u, v] <= want + 1e-9, (u, v)


def test_pld_bins_are_sound_and_close():
    """Bins replace an entry by one with a shorter noise and a higher rate: never lower;
    with ratio r the rate grows by < r and the noise std shrinks by < sqrt(r)."""
    from netdp.tracking import _walk_pld

    n, eps0, delta = 80, 0.4, 1e-7
    z = Gaussian(eps0, delta).sigma
    trace = _trace(n, 40 * n, seed=4)
    binned = walk_losses_ref(trace, eps0, delta, z, "pld", keep_pairs=True).matrix()
    exact_m = _walk_pld.EXACT_M
    try:
        _walk_pld.EXACT_M = 10**9
        unbinned = walk_losses_ref(trace, eps0, delta, z, "pld", keep_pairs=True).matrix()
    finally:
        _walk_pld.EXACT_M = exact_m
    off = ~np.eye(n, dtype=bool)
    assert np.all(binned[off] >= unbinned[off] - 1e-12)
    # ε scales at most linearly with the rate and with 1/σ: both move by < r.
    assert np.all(binned[off] <= unbinned[off] * _walk_pld.BIN_RATIO**1.5 + _walk_pld.VDI)


def test_pld_of_an_isolated_entry_matches_exact_gaussian_dp():
    # holders 0, 1, 0 among a million nodes: pair (1 -> 0) has one entry, a Gaussian of std
    # z sqrt(2) and sensitivity 2; the observer's subsampled entry (rate ~2e-6) is noise.
    from netdp.tracking import _walk_pld

    z, delta = 3.0, 1e-6
    trace = Trace(10**6, np.array([[0, 1, 0]], dtype=np.int32))
    exact = float(gaussian_epsilon(2 / (z * math.sqrt(2)), 2 * delta))
    pld = walk_losses_ref(trace, 1.0, delta, z, "pld", keep_pairs=False)
    got = pld.values[0]
    assert exact <= got <= exact + _walk_pld.VDI
    rdp = walk_losses_ref(trace, 1.0, delta, z, "rdp").values[0]
    assert rdp > got


@pytest.mark.parametrize("eps0", [0.1, 0.4])
def test_pld_never_exceeds_ldp_and_beats_rdp(eps0):
    n, delta = 60, 1e-7
    z = Gaussian(eps0, delta).sigma
    trace = _trace(n, 100 * n, seed=5)
    pld = walk_losses_ref(trace, eps0, delta, z, "pld", keep_pairs=True).matrix()
    rdp = walk_losses_ref(trace, eps0, delta, z, "rdp", keep_pairs=True).matrix()
    ldp = ldp_losses(trace, eps0, delta)
    off = ~np.eye(n, dtype=bool)
    assert np.all(np.nan_to_num(pld, nan=0.0) <= ldp[:, None])
    assert np.all(pld[off] < rdp[off])
