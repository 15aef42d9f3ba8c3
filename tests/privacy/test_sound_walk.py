"""The sound convention of the walk trackers (issue: sound first, then exact).

* the reproduction of the review: a trace where the reference convention is below the
  true loss, and the sound accountants are not;
* the compiled kernel against a plain-Python oracle that lists each observer's views and
  composes their entries with the accountants' closed forms;
* the entries' soundness arguments checked numerically (mixture bound, per-visit split).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from netdp.accounting.composition import kov_het_epsilon
from netdp.accounting.gdp import gaussian_epsilon
from netdp.accounting.rdp import rdp_to_epsilon
from netdp.engine.trace import Trace
from netdp.tracking import cycle_entries as ce
from netdp.tracking.loss_table import RDP_ORDERS, walk_losses

N, Z, DELTA = 50, 1.0, 1e-6
EXACT_ONE = float(gaussian_epsilon(1 / math.sqrt(2), 2e-6))  # 3.2019...
EXACT_TWO = float(gaussian_epsilon(math.sqrt(2), 2e-6))  # 7.0790...


def test_the_reproduction_values():
    assert abs(EXACT_ONE - 3.20193) < 1e-5
    assert abs(EXACT_TWO - 7.07901) < 1e-5


@pytest.mark.parametrize("accountant", ["kov", "rdp"])
def test_sound_accountants_are_above_the_exact_loss_of_the_review_traces(accountant):
    one = walk_losses(Trace(N, np.array([[0, 1, 2, 0]])), 1.0, DELTA, Z, accountant,
                      keep_pairs=True).matrix()[1, 0]
    two = walk_losses(Trace(N, np.array([[0, 1, 1, 0]])), 1.0, DELTA, Z, accountant,
                      keep_pairs=True).matrix()[1, 0]
    assert one >= EXACT_ONE and two >= EXACT_TWO


@pytest.mark.parametrize("accountant", ["kov", "rdp", "pld"])
def test_the_reference_convention_is_below_it(accountant):
    """What the review found, kept as the named variant: it can fail to bound the loss."""
    one = walk_losses(Trace(N, np.array([[0, 1, 2, 0]])), 1.0, DELTA, Z, accountant,
                      keep_pairs=True, convention="reference").matrix()[1, 0]
    assert one < EXACT_ONE


# --- the kernel against a plain oracle -------------------------------------------------


def views(holders: np.ndarray, v: int, steps: int):
    """``(kind, length, {u: key})`` of each view of observer ``v``, from the definitions."""
    out = []
    for t in range(holders.shape[0]):
        row = holders[t]
        at = np.flatnonzero(row == v)
        if at.size == 0:
            continue
        if at[0] >= 1:
            out.append((ce.FIRST, int(at[0]), {int(row[at[0] - 1]): ce.B_ONLY}))
        for j, i in zip(at[:-1], at[1:], strict=True):
            m = int(i - j)
            if m < 2:
                continue
            a, b = int(row[j + 1]), int(row[i - 1])
            if m == 2:
                keys = {a: ce.A_ONLY}
            elif a == b:
                keys = {a: ce.BOTH}
            else:
                keys = {a: ce.A_ONLY, b: ce.B_ONLY}
            out.append((ce.REGULAR, m, keys))
    return out


def oracle(holders: np.ndarray, n: int, accountant: str, z: float, eps0: float,
           delta: float) -> np.ndarray:
    """The ``n x n`` matrix by listing views and composing entries one by one."""
    law = ce.binomial_law(1.0 / (n - 1))
    noise = ce.Noise(z, eps0)
    out = np.full((n, n), np.nan)
    for v in range(n):
        vs = views(holders, v, holders.shape[1])
        k = len(vs)
        for u in range(n):
            if u == v:
                continue
            entries = []
            for kind, length, keys in vs:
                key = keys.get(u, ce.NONE)
                s = z * math.sqrt(ce.draws(kind, length))
                out_e = np.empty(3 if accountant == "kov" else RDP_ORDERS.size)
                ce.view_entry(ce.KOV if accountant == "kov" else ce.RDP, law, kind, length,
                              key, s, noise, delta, RDP_ORDERS, out_e)
                entries.append(out_e[0] if accountant == "kov" else out_e)
            if k == 0:
                out[u, v] = 0.0
            elif accountant == "kov":
                e = np.array(entries)
                out[u, v] = float(kov_het_epsilon(e.sum(), (e * np.tanh(e / 2)).sum(),
                                                  (e * e).sum(), min(k * delta, 1.0)))
                out[u, v] = min(out[u, v], e.sum())
            else:
                curve = np.sum(entries, axis=0)
                out[u, v] = float(rdp_to_epsilon(curve, RDP_ORDERS, min(2 * k * delta, 1.0)))
    return out


@pytest.mark.parametrize("accountant", ["kov", "rdp"])
@pytest.mark.parametrize("seed", [0, 1])
def test_kernel_matches_the_oracle_on_short_cycles(accountant, seed):
    """Walks on 6 nodes: every cycle is shorter than the exact bins (32), so the binned
    tables equal the per-length entries."""
    rng = np.random.default_rng(seed)
    n, steps = 6, 40
    holders = rng.integers(0, n, size=(2, steps))
    got = walk_losses(Trace(n, holders), 1.0, DELTA, 2.0, accountant,
                      keep_pairs=True).matrix()
    want = oracle(holders, n, accountant, 2.0, 1.0, DELTA)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_binned_tables_bound_each_long_cycle():
    """Beyond 32 steps a bin's entry takes its shortest noise and its longest law: at or
    above the entry of each length in it."""
    law = ce.binomial_law(1 / 99)
    noise = ce.Noise(3.0, 1.0)
    lengths = np.arange(33, 400)
    table, rows, _ = ce.entry_tables(ce.KOV, (lengths, np.empty(0, np.int64)), law, noise,
                                     DELTA, RDP_ORDERS)
    for m in lengths[::7]:
        for key in (ce.NONE, ce.A_ONLY, ce.BOTH):
            out = np.empty(3)
            ce.view_entry(ce.KOV, law, ce.REGULAR, int(m), key, 3.0 * math.sqrt(m - 1),
                          noise, DELTA, RDP_ORDERS, out)
            assert table[ce.REGULAR, key, rows[int(m)], 0] >= out[0] - 1e-12


def test_the_keys_of_a_length_share_its_gaussian_eps_exactly():
    """``entry_tables`` computes each count's Gaussian ε once per view length and shares it
    among the length's keys: the same doubles as each key computed alone."""
    law = ce.binomial_law(1 / 99)
    noise = ce.Noise(4.2, 1.0)
    lengths, firsts = np.array([2, 3, 5, 17, 40, 41, 300, 1200]), np.array([1, 4, 90])
    table, rows, rows_first = ce.entry_tables(ce.KOV, (lengths, firsts), law, noise, DELTA,
                                              RDP_ORDERS)
    for kind, values, where in ((ce.REGULAR, lengths, rows), (ce.FIRST, firsts, rows_first)):
        for m in values:  # each length in a bin of its own: the entry of that length
            keys = (ce.NONE, ce.B_ONLY) if kind == ce.FIRST else range(ce.KEYS)
            for key in keys:
                out = np.empty(3)
                ce.view_entry(ce.KOV, law, kind, int(m), key,
                              noise.z * math.sqrt(ce.draws(kind, int(m))), noise, DELTA,
                              RDP_ORDERS, out)
                assert np.array_equal(table[kind, key, where[int(m)]], out), (kind, m, key)
    memo: ce.EpsMemo = {}
    for lo, hi in ((2, 66), (0, 64), (1, 65), (0, 70)):
        assert np.array_equal(ce._gauss_eps_counts(lo, hi, 3.7, DELTA, memo),
                              ce._gauss_eps_counts(lo, hi, 3.7, DELTA))


# --- the entries' arguments, numerically ------------------------------------------------


def hockey(w: np.ndarray, s: float, eps: float) -> float:
    """δ(ε) of Σ_k w_k N(k, s²) against N(0, s²), both directions, by quadrature."""
    from scipy import integrate, stats

    def q(y):
        return sum(wk * stats.norm.pdf(y, k, s) for k, wk in enumerate(w))

    def p(y):
        return stats.norm.pdf(y, 0, s)

    lo, hi = -12 * s, len(w) + 12 * s
    f1 = integrate.quad(lambda y: max(q(y) - math.exp(eps) * p(y), 0.0), lo, hi,
                        limit=400, points=[0, len(w)])[0]
    f2 = integrate.quad(lambda y: max(p(y) - math.exp(eps) * q(y), 0.0), lo, hi,
                        limit=400, points=[0, len(w)])[0]
    return max(f1, f2)


@pytest.mark.parametrize(("w", "s"), [
    ([0.5, 0.3, 0.2], 1.0), ([0.0, 0.6, 0.3, 0.1], 2.0), ([0.9, 0.08, 0.02], 0.7),
])
def test_the_mixture_bound_holds(w, s):
    """kov's entry (log E e^{ε_K}, δ) is a valid (ε, δ) for the mixture pair."""
    w = np.array(w)
    logp = np.log(np.maximum(w, 1e-300))
    logp[w == 0] = -np.inf
    eps = ce.kov_entry(logp, -np.inf, 0, w.size - 1, s, ce.Noise(1.0, 1.0), 1e-3)
    assert hockey(w, s, eps) <= 1e-3 + 1e-9


def test_the_mixture_bound_is_not_vacuous():
    """Its ε is below every branch's: the mixture amplifies."""
    w = np.array([0.9, 0.1])
    eps = ce.kov_entry(np.log(w), -np.inf, 0, 1, 1.0, ce.Noise(1.0, 1.0), 1e-3)
    assert eps < float(gaussian_epsilon(1.0, 1e-3)) / 2


def _shifted_epsilon(w: np.ndarray, s: float, x: float, xp: float, delta: float) -> float:
    """ε(δ) of ``Σ_k w_k N(k x, s²)`` against ``Σ_k w_k N(k x', s²)`` on a fine grid."""
    from scipy import stats

    y = np.linspace(-14 * s - 3, 14 * s + w.size + 3, 200_001)
    dy = y[1] - y[0]
    k = np.arange(w.size)[:, None]
    p = (w[:, None] * stats.norm.pdf(y, k * x, s)).sum(axis=0)
    q = (w[:, None] * stats.norm.pdf(y, k * xp, s)).sum(axis=0)
    lo, hi = 0.0, 30.0
    for _ in range(45):
        mid = (lo + hi) / 2
        d = max(np.maximum(p - np.exp(mid) * q, 0).sum(), np.maximum(q - np.exp(mid) * p, 0)
                .sum()) * dy
        lo, hi = (mid, hi) if d > delta else (lo, mid)
    return hi


@pytest.mark.parametrize(("w", "s"), [
    ([0.5, 0.5], 1.0), ([0.9, 0.1], 0.5), ([0.3, 0.0, 0.7], 1.0),
    ([0.168, 0.36, 0.309, 0.132, 0.028, 0.003], 3.0),
])
def test_the_accounted_pair_is_the_worst_shifted_pair(w, s):
    """The views are accounted for u's value one sensitivity away from the others' common
    value (x = 0 against x' = 1): among pairs x, x' of the range shifted by the others'
    value (|x - x'| <= 1), it gave the largest ε in every case searched."""
    w = np.array(w) / np.sum(w)
    worst = _shifted_epsilon(w, s, 0.0, 1.0, 1e-4)
    for x, xp in [(-0.5, 0.5), (-0.25, 0.75), (0.5, 1.0), (-1.0, -0.5), (0.25, 1.0)]:
        assert _shifted_epsilon(w, s, x, xp, 1e-4) <= worst + 1e-6


@pytest.mark.parametrize("coalition", [None, [1, 4]])
def test_length_flags_are_the_distinct_view_lengths(coalition):
    """The kov/rdp trackers read only which view lengths occur (one pass, no sort): the
    same set as the sorted pass of ``view_lengths``, several tokens and a coalition."""
    from netdp.tracking._kernels import walk as kernels
    from netdp.tracking.loss_table import observer_view, view_lengths

    rng = np.random.default_rng(3)
    trace = Trace(9, rng.integers(0, 9, size=(3, 400)))
    holders, n_ids, observers, _ = observer_view(trace, coalition)
    watched = np.zeros(n_ids, np.bool_)
    watched[observers] = True
    regular, first = kernels.length_flags(holders, trace.steps, n_ids, watched)
    m, i0 = view_lengths(holders, trace.steps, n_ids, observers)
    np.testing.assert_array_equal(np.flatnonzero(regular), np.unique(m))
    np.testing.assert_array_equal(np.flatnonzero(first), np.unique(i0))


def test_truncated_law_bounds_underflowed_terms_and_keeps_impossible_counts_out():
    """Zeros after terms near the doubles' limit are underflow: with a per-position rate
    they get ``C(size, i) rate^i``, at or above the true terms (here a binomial, whose log
    terms are known); zeros after large terms are counts the law cannot reach."""
    from scipy import stats

    size, p = 2000, 0.01
    exact = stats.binom.logpmf(np.arange(size + 1), size, p)
    pmf = np.exp(exact)  # the top terms underflow to 0
    assert (pmf == 0).any()
    logp, tail = ce.truncated_log_law(pmf, 5000.0, rate=p)
    assert tail == -np.inf and logp.size == size + 1
    bounded = pmf == 0  # (subnormal terms kept carry their own rounding)
    assert bounded.sum() > 100 and np.all(logp[bounded] >= exact[bounded])
    logp, tail = ce.truncated_log_law(pmf, 5000.0)  # no rate: the least double each, lumped
    assert tail > -np.inf and math.exp(tail) <= (size + 1) * ce.UNDERFLOW
    logp, tail = ce.truncated_log_law(np.array([0.5, 0.5, 0.0, 0.0]), 5000.0, rate=0.1)
    assert tail == -np.inf and logp.size == 2  # impossible counts stay out


def test_no_self_moves_rdp_keeps_the_law_at_high_orders(monkeypatch):
    """Without self-moves and without the per-visit bound a small ε0 puts the best Rényi
    order far above 8: the law kept to the largest order's growth lowers the figure (each
    curve bounds the view; the entry is their minimum). The per-visit bound at the chain's
    rate (session 19) lowers it further."""
    from netdp import engine
    from netdp.core import seeding
    from netdp.graphs import topologies as topology

    trace = engine.walk("vector", engine.Router(topology.complete(100, self_moves=False)),
                        10_000, [seeding.generator(0, "walk", 0, 0)])
    z = 48.5  # ε0 = 0.1 at δ = 1e-6 (analytic Gaussian)

    def run():
        return walk_losses(trace, 0.1, 1e-6, z, "rdp", keep_pairs=True, self_moves=False,
                           observers=np.array([3, 50])).values

    visits = run()
    monkeypatch.setattr(ce, "rdp_per_visit", lambda p, c, size, s, orders, out: out.fill(
        np.inf))  # no per-visit bound: the label and convex bounds alone
    got = run()
    assert np.all(visits <= got + 1e-12) and visits.mean() < 0.95 * got.mean()
    order8 = ce.rdp_growth
    monkeypatch.setattr(ce, "rdp_growth", lambda c, size, s, a=ce.GROWTH_ORDER: order8(
        c, size, s))  # the law kept to order 8's growth only
    shallow = run()
    assert np.all(got <= shallow + 1e-12) and got.mean() < 0.8 * shallow.mean()
