"""The kernels' compiled formulas are the accountants' closed forms, and the walk tracker
composes the same events the accountants would (one accounting path)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from netdp import engine
from netdp.accounting import _compiled
from netdp.accounting.composition import KovAccountant, kov_het_epsilon, kov_het_terms
from netdp.accounting.events import ApproxDP, Composed, Gaussian, Subsampled
from netdp.accounting.gdp import GdpAccountant
from netdp.accounting.rdp import (
    RdpAccountant,
    rdp_gaussian,
    rdp_subsampled_gaussian,
    rdp_to_epsilon,
)
from netdp.core import seeding
from netdp.graphs import topologies as topology
from netdp.mechanisms import Gaussian as GaussianNoise
from netdp.tracking.loss_table import RDP_ORDERS, entry_event, walk_losses


def walk_losses_ref(*args, **kwargs):
    """The reference convention (AISTATS 2022 Fig. 1b), which these tests pin down."""
    return walk_losses(*args, convention="reference", **kwargs)

RNG = np.random.default_rng(20261123)


@pytest.mark.parametrize("loss", [0.0, 1e-9, 0.3, 2.0, 40.0])
def test_kov_terms_are_the_closed_form(loss):
    out = np.empty(3)
    _compiled.kov_terms(loss, out)
    np.testing.assert_allclose(out, [float(t) for t in kov_het_terms(loss)], rtol=1e-15)


@pytest.mark.parametrize("k,delta", [(1, 1e-6), (7, 1e-5), (300, 1e-7), (50, 0.05)])
def test_kov_epsilon_is_kov_het_and_the_kov_accountant(k, delta):
    losses = RNG.exponential(0.2, k)
    terms = np.zeros(3)
    for loss in losses:
        one = np.empty(3)
        _compiled.kov_terms(loss, one)
        terms += one
    compiled = _compiled.kov_epsilon(terms, k, delta)
    sums = (t.sum() for t in kov_het_terms(losses))
    closed = float(kov_het_epsilon(*sums, min(k * delta, 1)))
    assert compiled == pytest.approx(closed, rel=1e-12)
    if k * delta < 1:  # the accountant over the events: total delta leaving dt = k delta
        event = Composed(tuple(ApproxDP(float(x), delta) for x in losses))
        total = -math.expm1(math.log1p(-k * delta) + k * math.log1p(-delta))
        assert compiled == pytest.approx(KovAccountant().epsilon(event, total), rel=1e-9)


@pytest.mark.parametrize("q,sens,noise", [(1.0, 1.0, 0.7), (1.0, 2.0, 3.0), (0.01, 1.0, 0.9),
                                           (0.3, 1.0, 5.0), (0.999, 1.0, 0.5)])
def test_rdp_entry_is_the_rdp_accountants_curve(q, sens, noise):
    out = np.empty(RDP_ORDERS.size)
    _compiled.rdp_gaussian_entry(q, sens, noise, RDP_ORDERS, out)
    if q >= 1:
        want = rdp_gaussian(RDP_ORDERS, noise, sens)
        event = Gaussian(noise, sens)
    else:
        want = rdp_subsampled_gaussian(RDP_ORDERS, q, noise / sens)
        event = Subsampled(Gaussian(noise, sens), q)
    np.testing.assert_allclose(out, want, rtol=1e-10)
    np.testing.assert_allclose(out, RdpAccountant(RDP_ORDERS).rdp(event), rtol=1e-10)


@pytest.mark.parametrize("delta", [1e-9, 1e-5, 0.2, 1.0])
def test_rdp_epsilon_is_the_one_conversion(delta):
    curve = RNG.exponential(0.05, RDP_ORDERS.size) * RDP_ORDERS
    got = _compiled.rdp_epsilon(curve, delta, RDP_ORDERS)
    assert got == pytest.approx(float(rdp_to_epsilon(curve, RDP_ORDERS, delta)), rel=1e-12,
                                abs=1e-15)


def _pair_entries(holders: np.ndarray, n: int) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """``(m, c)`` of every entry of every pair, from the spec's definition (one token)."""
    out: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for v in range(n):
        visits = np.flatnonzero(holders == v)
        for j, i in zip(visits[:-1], visits[1:], strict=True):
            m, a, b = int(i - j), holders[j + 1], holders[i - 1]
            for u in range(n):
                if u != v:
                    c = int(u == a and m > 1) + int(u == b and m > 1)
                    out.setdefault((u, v), []).append((m, c))
    return out


@pytest.mark.parametrize("accountant", ["kov", "rdp", "pld"])
def test_walk_tracker_composes_the_entry_events_like_the_accountants(accountant):
    n, steps, eps0, delta = 7, 160, 0.5, 1e-6
    z = GaussianNoise(eps0, delta).sigma
    trace = engine.walk("vector", engine.Router(topology.complete(n)), steps,
                        [seeding.generator(3, "walk", 0, 0)])
    mode = "pld" if accountant == "pld" else accountant
    matrix = walk_losses_ref(trace, eps0, delta, z, mode, keep_pairs=True).matrix()
    entries = _pair_entries(trace.holders[0], n)
    for (u, v), es in entries.items():
        k = len(es)
        events = [entry_event(accountant, m, c, n, eps0, delta, z) for m, c in es]
        if accountant == "kov":
            deltas = [(e.probability * e.event.delta if isinstance(e, Subsampled)
                       else e.delta) for e in events]
            total = -math.expm1(math.log1p(-min(k * delta, 1.0))
                                + sum(math.log1p(-d) for d in deltas))
            want = KovAccountant().epsilon(Composed(tuple(events)), total)
            assert matrix[u, v] == pytest.approx(want, rel=1e-9), (u, v)
        elif accountant == "rdp":
            want = RdpAccountant(RDP_ORDERS).epsilon(Composed(tuple(events)),
                                                     min(2 * k * delta, 1.0))
            assert matrix[u, v] == pytest.approx(want, rel=1e-9), (u, v)
        else:  # the pair's exact Gaussian part bounds from below what pld reports
            exact = [e for e in events if isinstance(e, Gaussian)]
            if exact:
                mu = GdpAccountant().mu(Composed(tuple(exact)))
                floor = GdpAccountant().epsilon(Composed(tuple(exact)), min(2 * k * delta, 1))
                assert mu > 0 and matrix[u, v] >= floor - 1e-3, (u, v)


@pytest.mark.parametrize("q,sens,noise", [(0.01, 1.0, 0.9), (0.3, 3.0, 5.0), (0.999, 1.0, 0.5),
                                           (0.5, 40.0, 2.0), (1e-6, 7.0, 1.0)])
def test_the_label_sum_is_the_subsampled_gaussians_curve(q, sens, noise):
    """The label bound's fast sum (one exponential a term, the sensitivity-free part
    formed once per node) is ``(α - 1)`` times the subsampled Gaussian's RDP."""
    from netdp.tracking._kernels.subsampled import subsampled_base, subsampled_log_sum

    want = np.empty(RDP_ORDERS.size)
    _compiled.rdp_gaussian_entry(q, sens, noise, RDP_ORDERS, want)
    got = np.empty(RDP_ORDERS.size)
    subsampled_log_sum(subsampled_base(q, RDP_ORDERS), sens * sens / (2 * noise * noise),
                       RDP_ORDERS, got)
    np.testing.assert_allclose(got, (RDP_ORDERS - 1) * want, rtol=1e-12)


@pytest.mark.parametrize("q,noise", [(1e-6, 48.0), (1e-4, 2.0), (0.3, 5.0), (0.9, 40.0)])
def test_the_high_orders_are_the_subsampled_gaussians_curve(q, noise):
    """The per-visit bound's high orders (a table of log j!, one exponential a term) are
    the compiled subsampled Gaussian's, to its own accuracy at orders up to 8192 (both
    sum terms near 1 to a total near 1 where the curve is tiny)."""
    from netdp.tracking._kernels.subsampled import subsampled_rdp_high
    from netdp.tracking.loss_table import WALK_RDP_ORDERS

    high = WALK_RDP_ORDERS[WALK_RDP_ORDERS > 256]
    want, got = np.empty(high.size), np.empty(high.size)
    _compiled.rdp_gaussian_entry(q, 1.0, noise, high, want)
    subsampled_rdp_high(q, noise, high, got)
    # α terms near 1 each round by ~1e-16: the sums agree to α 1e-16 before the division
    assert np.all(np.abs(got - want) <= 1e-9 * np.abs(want) + 1e-16 * high / (high - 1)), \
        (got, want)
