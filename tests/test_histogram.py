import math

import numpy as np
import pytest
from conftest import assert_mean, assert_std_gaussian

from netdp import engine
from netdp.accounting.composition import kov_het_epsilon, opti
from netdp.core import seeding
from netdp.engine.trace import Trace
from netdp.graphs import topologies as topology
from netdp.mechanisms import GRR, OUE, frequency_oracle
from netdp.mechanisms._oracle import project_simplex
from netdp.tasks import histogram_walk as histogram
from netdp.tracking import shuffle as st
from netdp.tracking.loss_summary import summarize
from netdp.tracking.loss_table import ldp_losses


def _walk(n, steps, tokens=1, seed=0, kind="complete"):
    topo = topology.ring(n) if kind == "ring" else topology.complete(n, True)
    rngs = [seeding.generator(seed, "walk", 0, k) for k in range(tokens)]
    return engine.walk("vector", engine.Router(topo), steps, rngs)


@pytest.mark.parametrize("oracle", [GRR(1.0, 5), OUE(1.0, 5)])
def test_ring_histogram_is_unbiased_with_the_closed_form_variance(oracle):
    n, rounds, runs = 40, 2, 600
    cats = np.random.default_rng(1).integers(0, 5, n)
    trace = _walk(n, rounds * n, kind="ring")
    est = np.array([histogram.ring_histogram(trace, cats, oracle,
                                             np.random.default_rng(100 + r), n - 1).estimate
                    for r in range(runs)])
    truth = histogram.truth(cats, 5)
    var = oracle.variance(truth, rounds * n)
    for j in range(5):
        assert_mean(est[:, j], truth[j], math.sqrt(var[j]))
        assert_std_gaussian(est[:, j], math.sqrt(var[j]))


def test_walk_histogram_is_unbiased():
    n, runs = 30, 300
    oracle = frequency_oracle("olh", 2.0, 6)
    cats = np.random.default_rng(2).integers(0, 6, n)
    est = np.array([histogram.walk_histogram(_walk(n, 20 * n, seed=r), cats, oracle,
                                             np.random.default_rng(r)).estimate
                    for r in range(runs)])
    truth = histogram.truth(cats, 6)
    for j in range(6):
        assert_mean(est[:, j], truth[j])


def test_dummies_cancel_exactly():
    n = 25
    oracle = GRR(1.0, 4)
    cats = np.arange(n) % 4
    trace = _walk(n, n, kind="ring")
    with_dummies = histogram.ring_histogram(trace, cats, oracle, np.random.default_rng(3), 50)
    # the same reports without dummies: draw the dummies first, then the reports
    rng = np.random.default_rng(3)
    histogram.aggregate_reports(oracle, rng.integers(0, 4, 50), rng)
    agg = histogram.aggregate_reports(oracle, cats[trace.holders[0]], rng)
    plain = oracle.estimate_counts(agg, n) / n
    np.testing.assert_array_equal(with_dummies.estimate, plain)


def test_project_simplex():
    out = project_simplex(np.array([0.5, 0.7, -0.2]))
    np.testing.assert_allclose(out, [0.4, 0.6, 0.0])
    v = np.random.default_rng(4).normal(0.1, 0.3, 50)
    p = project_simplex(v)
    assert p.min() >= 0 and p.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(project_simplex(p), p, atol=1e-12)
    # the projection is the closest point: no random simplex point is closer
    rand = np.random.default_rng(5).dirichlet(np.ones(50), 200)
    assert np.all(((rand - v) ** 2).sum(1) >= ((p - v) ** 2).sum() - 1e-12)


# ------------------------------------------------------------------ privacy tracking


def _windows_brute(holders, n, group):
    """Windows of observer ``group`` straight from the definition: (r, first, last)."""
    steps = holders.shape[1]
    out = []
    for row in holders:
        holds = np.flatnonzero(np.isin(row, group))
        if holds.size == 0:
            out.append((steps, -1, -1))
            continue
        if holds[0] > 0:
            out.append((holds[0], -1, row[holds[0] - 1]))
        for j, i in zip(holds[:-1], holds[1:], strict=True):
            if i - j > 1:
                out.append((i - j - 1, row[j + 1], row[i - 1]))
        if holds[-1] < steps - 1:
            out.append((steps - 1 - holds[-1], row[holds[-1] + 1], -1))
    return out


def _brute_losses(holders, n, eps0, delta, group):
    windows = _windows_brute(holders, n, group)
    # the view cap (spec Correction 6): LDP at the largest count a consistent hidden path
    # allows; with self-moves a node may hold every position the group does not
    kbar = int(holders.size - np.isin(holders, group).sum())
    cap = min(kbar * eps0, float(opti(eps0, delta, kbar))) if kbar else 0
    others = n - len(group)
    k = len(windows)
    out = {}
    for u in set(range(n)) - set(group):
        losses = []
        for r, a, b in windows:
            eps_s = st.shuffled_epsilon("fmt-numeric", eps0, np.array([r]), delta)[0]
            c = int(u == a) + int(u == b)
            if c == 2 and r == 1:
                c = 1
            if c == 0:
                q = 1 - (1 - 1 / others) ** r
                losses.append(math.log1p(q * math.expm1(eps_s)))
            else:
                losses.append(c * eps_s)
        loss = np.array(losses)
        kov = float(kov_het_epsilon(loss.sum(), (loss * np.tanh(loss / 2)).sum(),
                                    (loss**2).sum(), min(k * delta, 1.0)))
        out[u] = min(kov, cap)
    return out


@pytest.mark.parametrize("tokens", [1, 2])
def test_walk_histogram_tracker_equals_brute_force(tokens):
    n, eps0, delta = 9, 1.5, 1e-7
    trace = _walk(n, 50, tokens=tokens, seed=7)
    matrix = st.walk_histogram_losses(trace, eps0, delta, keep_pairs=True,
                                      convention="reference").matrix()
    for v in range(n):
        brute = _brute_losses(trace.holders, n, eps0, delta, [v])
        for u, want in brute.items():
            assert matrix[u, v] == pytest.approx(want, rel=1e-12), (u, v)
    group = [1, 4]
    coal = st.walk_histogram_losses(trace, eps0, delta, coalition=group, keep_pairs=True,
                                    convention="reference")
    got = dict(zip(coal.nodes.tolist(), coal.values.tolist(), strict=True))
    for u, want in _brute_losses(trace.holders, n, eps0, delta, group).items():
        assert got.get(u, coal.base[0]) == pytest.approx(want, rel=1e-12), u


def test_a_window_of_one_report_costs_eps0():
    # holders 0, 1, 0: node 0 sees node 1's single report alone
    trace = Trace(2, np.array([[0, 1, 0]], dtype=np.int32))
    losses = st.walk_histogram_losses(trace, 1.0, 1e-6, keep_pairs=True)
    assert losses.matrix()[1, 0] == pytest.approx(1.0)


@pytest.mark.parametrize("dummies", [0, 5])
def test_ring_tracker_agrees_with_its_window_by_window_form(dummies):
    n, rounds, eps0, delta = 12, 3, 2.0, 1e-7
    plain = st.ring_histogram_losses(n, rounds, eps0, delta, dummies=dummies).matrix()
    for v in range(1, n):  # node 0 knows the dummies; others count them
        single = st.ring_histogram_losses(n, rounds, eps0, delta, dummies=dummies,
                                          coalition=[v])
        col = np.full(n, np.nan)
        col[single.nodes] = single.values
        np.testing.assert_allclose(col, plain[:, v], rtol=1e-12)


def test_ring_theory_bounds_every_pair_with_enough_dummies():
    n, rounds, eps0, delta = 300, 4, 2.0, 1e-7
    losses = st.ring_histogram_losses(n, rounds, eps0, delta, dummies=n - 1)
    theory = st.ring_histogram_theory(n, rounds, eps0, delta)
    summary = summarize([losses])
    assert summary["max"] == pytest.approx(theory, rel=1e-12)
    # both neighbours of node 5 collude: its K windows hold its report alone: K eps0
    both = st.ring_histogram_losses(n, rounds, eps0, delta, dummies=n - 1, coalition=[4, 6])
    exposed = dict(zip(both.nodes.tolist(), both.values.tolist(), strict=True))
    assert exposed[5] == pytest.approx(rounds * eps0)


@pytest.mark.parametrize("convention", ["sound", "reference"])
@pytest.mark.parametrize("eps0", [1.0, 3.0])
def test_histogram_pairs_never_exceed_the_view_cap_and_fall_with_n(eps0, convention):
    """Every pair at most its observer's view cap (the LDP loss at the largest count of a
    node's reports the view allows, spec Correction 6), the cap lowering only the pairs
    above it; the mean, in units of the realised LDP baseline, falls with n."""
    from netdp.tracking.view_cap import view_caps

    means = []
    for n in (50, 200):
        trace = _walk(n, 100 * n, seed=n)
        losses = st.walk_histogram_losses(trace, eps0, 1e-7, keep_pairs=True,
                                          convention=convention)
        raw = st.walk_histogram_losses(trace, eps0, 1e-7, keep_pairs=True, cap=False,
                                       convention=convention)
        caps = view_caps(trace, eps0, 1e-7)
        capped, uncapped = losses.matrix(), raw.matrix()
        assert np.all(np.nan_to_num(capped, nan=0.0) <= caps[None, :])
        np.testing.assert_array_equal(capped, np.minimum(uncapped, caps[None, :]))
        means.append(summarize([losses])["mean"] / ldp_losses(trace, eps0, 1e-7).mean())
    if (convention, eps0) == ("sound", 3.0):
        # windows of ~n reports amplify little at eps0 = 3: composed, the pairs sit above
        # the realised LDP baseline (5.3 and 6.2 times), which is no cap (Correction 6)
        assert min(means) > 1, means
    else:
        assert means[1] < means[0], means


def test_shuffle_bounds_stay_at_or_below_eps0_and_fall_with_r():
    r = np.array([1, 2, 10, 100, 1000, 10**5])
    for bound in st.SHUFFLE_BOUNDS:
        eps = st.shuffled_epsilon(bound, 1.0, r, 1e-6, domain=10)
        assert np.all(eps <= 1.0) and np.all(np.diff(eps) <= 1e-15)
    assert st.shuffled_epsilon("fmt-numeric", 4.0, np.array([10**5]), 1e-6)[0] == \
        pytest.approx(0.17, abs=0.01)  # accounting.md §4 check value


def test_cap_to_view_equals_the_dense_minimum():
    """The view cap (spec Correction 6) is one value per observer: the capped table is the
    dense minimum of the pairs and their observer's cap, with and without a coalition
    (the cap's ε0 chosen so that it bites on some pairs and not on others)."""
    from netdp.tracking.loss_table import ldp_at, walk_losses
    from netdp.tracking.view_cap import cap_to_view, largest_counts, view_caps

    n = 30
    trace = _walk(n, 40 * n, seed=11)
    raw = walk_losses(trace, 0.4, 1e-7, 1.0, "kov", keep_pairs=True)
    target, k = summarize([raw])["mean"], float(largest_counts(trace).mean())
    lo, hi = 1e-9, 10.0  # the ε0 whose cap at the mean count is the mean figure
    for _ in range(100):
        eps0 = (lo + hi) / 2
        lo, hi = (eps0, hi) if ldp_at(eps0, 1e-7, k) < target else (lo, eps0)
    ceiling = view_caps(trace, eps0, 1e-7)
    capped = cap_to_view(raw, trace, eps0, 1e-7)
    dense, want = raw.matrix(), np.minimum(raw.matrix(), ceiling[None, :])
    np.testing.assert_array_equal(capped.matrix(), want)
    off = ~np.isnan(dense)
    assert (dense[off] > want[off]).any() and (dense[off] == want[off]).any()
    assert capped.pairs == raw.pairs
    group = [3, 8]
    raw_c = walk_losses(trace, 0.4, 1e-7, 1.0, "kov", coalition=group, keep_pairs=True)
    top = float(view_caps(trace, eps0, 1e-7, group)[0])
    clip_c = cap_to_view(raw_c, trace, eps0, 1e-7, group)
    want_c = {u: min(raw_c.base[0], top) for u in range(n) if u not in group}
    want_c.update({u: min(x, top) for u, x in zip(raw_c.nodes, raw_c.values, strict=True)})
    got = {u: clip_c.base[0] for u in range(n) if u not in group}
    got.update(dict(zip(clip_c.nodes.tolist(), clip_c.values.tolist(), strict=True)))
    assert got == want_c and clip_c.pairs == n - len(group)


def test_ring_histogram_error_has_the_central_rate():
    """At equal network ε (theory curve, every pair), the ring histogram's MSE falls as
    1/n² like a trusted curator's Laplace histogram, while the LDP baseline falls as 1/n."""
    from netdp.tracking.shuffle import ring_histogram_eps0

    d, target, delta = 10, 1.0, 1e-7
    freq = np.full(d, 1 / d)
    rows = []
    for n in (1_000, 10_000):
        eps0 = ring_histogram_eps0(target, n, 1, delta)
        assert st.ring_histogram_theory(n, 1, eps0, delta) <= target
        network = GRR(eps0, d).variance(freq, n).mean()
        ldp = GRR(target, d).variance(freq, n).mean()
        central = 8 / (target**2 * n**2)  # Laplace(2/ε) per bin, replace-one neighbours
        rows.append((network, ldp, central))
    (net1, ldp1, cen1), (net2, ldp2, cen2) = rows
    assert ldp1 / ldp2 == pytest.approx(10, rel=1e-9)
    assert 1 < net1 / cen1 < 50 and 1 < net2 / cen2 < 50
    assert net1 / net2 > 80  # close to the central 100x per 10x nodes
    assert ldp2 / net2 > 100
