"""The per-visit Rényi entry of a view with attributable visits (netdp.tracking.
cycle_entries.rdp_per_visit): never below the view's true Rényi divergence, in both
directions, computed here by quadrature; and the split of the noise chosen per order,
which the mean shift's split alone misses at high orders (session 18: a view of 48 draws
whose end is the node gave 25.2 at order 24, so rdp charged such pairs about 1.0 where
their exact loss was 0.34)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from netdp.tracking import cycle_entries as ce

ORDERS = np.array([2.0, 8.0, 24.0, 64.0])


def _true_renyi(c: int, size: int, p: float, s: float, alpha: float,
                law: np.ndarray | None = None) -> float:
    """max of ``D_α(Q || P)`` and ``D_α(P || Q)`` for ``P = N(0, s²)``, ``Q = Σ_i
    P(I = i) N(c + i, s²)``, ``I ~ Binom(size, p)`` (or the pmf ``law``), by the
    trapezoid rule on a wide fine grid."""
    i = np.arange(size + 1)
    if law is None:
        logw = stats.binom.logpmf(i, size, p)
    else:
        with np.errstate(divide="ignore"):
            logw = np.log(np.pad(law, (0, size + 1 - law.size)))
    keep = logw > -745.0
    shifts, logw = (c + i)[keep], logw[keep]
    top = float(shifts.max())
    # q^α p^(1-α) of a shift k peaks near y = α k (p^α q^(1-α) near (1 - α) k): the grid
    # spans both tilts' peaks and 30 standard deviations beyond
    wide = 30.0 * s * math.sqrt(alpha)
    y = np.linspace(-(alpha - 1.0) * top - wide, alpha * top + wide, 100_001)
    logp = -0.5 * (y / s) ** 2
    logq = special.logsumexp(logw[None, :] - 0.5 * ((y[:, None] - shifts[None, :]) / s) ** 2,
                             axis=1)
    dy = y[1] - y[0]
    norm = math.log(s * math.sqrt(2.0 * math.pi))
    out = []
    for la, lb in ((logq, logp), (logp, logq)):
        f = alpha * la + (1.0 - alpha) * lb - norm
        total = special.logsumexp(f) + math.log(dy)
        out.append(total / (alpha - 1.0))
    return max(out)


@pytest.mark.parametrize(("c", "size", "p", "s"), [
    (1, 47, 1e-3, 4.2247 * math.sqrt(48)),  # the review's view: n = 1000, z at ε0 = 1
    (1, 10, 0.05, 3.0),
    (2, 20, 0.1, 6.0),
    (1, 200, 0.01, 15.0),
])
def test_the_per_visit_entry_is_never_below_the_true_renyi_divergence(c, size, p, s):
    got = np.empty(ORDERS.size)
    ce.rdp_per_visit(p, c, size, s, ORDERS, got)
    for a, bound in zip(ORDERS, got, strict=True):
        true = _true_renyi(c, size, p, s, float(a))
        assert bound >= true * (1.0 - 1e-9) - 1e-12, (a, bound, true)


def test_each_order_takes_its_best_split_of_the_noise():
    """The review's view at order 24: the mean shift's split alone (β = 0.955) leaves each
    interior position a std of 0.9 and gives 25; a split per order gives 0.016, within
    twice the true divergence."""
    c, size, p, s = 1, 47, 1e-3, 4.2247 * math.sqrt(48)
    orders = np.array([24.0])
    one = np.empty(1)
    ce._per_visit(p, c, size, s, c / (c + size * p), orders, one)
    best = np.empty(1)
    ce.rdp_per_visit(p, c, size, s, orders, best)
    true = _true_renyi(c, size, p, s, 24.0)
    assert one[0] > 10.0
    assert true <= best[0] < 2.0 * true


@pytest.mark.parametrize(("c", "size", "p", "s"), [
    (0, 47, 1e-2, 4.2247 * math.sqrt(48)),
    (0, 10, 0.05, 3.0),
    (1, 20, 0.1, 6.0),
])
def test_the_convex_entry_of_high_orders_bounds_the_view_and_the_label_bound(c, size, p, s):
    """The joint-convexity entry (every order above LABEL_ORDER_MAX without self-moves,
    where the label bound's sum costs α + 1 terms a count) is never below the view's true
    Rényi divergence, and at ``c = 0`` never below the label bound it replaces there."""
    i = np.arange(size + 1)
    logp = stats.binom.logpmf(i, size, p)
    convex = np.empty(ORDERS.size)
    ce.rdp_convex(logp, -np.inf, c, size, s, ORDERS, convex)
    for a, bound in zip(ORDERS, convex, strict=True):
        true = _true_renyi(c, size, p, s, float(a))
        assert bound >= true * (1.0 - 1e-9) - 1e-12, (a, bound, true)
    label = np.empty(ORDERS.size)
    ce.rdp_entry(logp, -np.inf, c, size, s, ORDERS, label)
    assert np.all(convex >= label * (1.0 - 1e-12))
    if c == 0:  # the subsampling the label bound keeps: strictly below at low orders
        assert label[0] < convex[0]


def test_no_self_moves_take_the_convex_entry_above_the_label_orders():
    """Without self-moves (no per-visit bound) a view's entry is the label bound up to
    LABEL_ORDER_MAX and the convex one above it, whichever of the two laws is less."""
    from netdp.tracking import loss_table

    law = loss_table._no_self_law(50, 1)
    orders = loss_table.WALK_RDP_ORDERS
    low = int(np.searchsorted(orders, ce.LABEL_ORDER_MAX, "right"))
    assert 0 < low < orders.size
    out = np.empty(orders.size)
    ce.view_entry(ce.RDP, law, ce.REGULAR, 60, ce.NONE, 4.0 * math.sqrt(59), None, 1e-6,
                  orders, out)
    logp, tail = law(ce.REGULAR, 60, ce.NONE, ce.BUDGET + ce.MAX_GROWTH)
    label, convex = np.empty(low), np.empty(orders.size - low)
    ce.rdp_entry(logp, tail, 0, ce.interior(ce.REGULAR, 60), 4.0 * math.sqrt(59),
                 orders[:low], label)
    ce.rdp_convex(logp, tail, 0, ce.interior(ce.REGULAR, 60), 4.0 * math.sqrt(59),
                  orders[low:], convex)
    assert np.all(out[:low] <= label * (1 + 1e-12)) and np.all(np.isfinite(out))
    assert np.all(out[low:] <= convex * (1 + 1e-12))


@pytest.mark.parametrize(("n", "size", "flags", "z"), [
    (8, 12, {}, 3.0),
    (8, 12, {"a_is_u": True}, 3.0),
    (6, 20, {"b_is_u": True}, 2.0),
    (6, 9, {"a_is_u": True, "b_is_u": True}, 2.5),
    (12, 30, {"a_is_b": True}, 4.0),
])
def test_without_self_moves_the_per_visit_entry_bounds_the_view(n, size, flags, z):
    """Without self-moves the holders are a chain, not iid; each hidden position is u's
    w.p. at most 1 / (n - |W| - 2) given the others, so given the positions before it
    too, and the views' releases compose adaptively: the per-visit entry at that rate is
    never below the view's true Rényi divergence under the chain's exact law of the
    interior count (complete_law), in both directions."""
    from netdp.tracking import complete_law

    law = complete_law.complete_interior_law(size, n, 1, False, **flags)
    c = int(flags.get("a_is_u", False)) + int(flags.get("b_is_u", False))
    s = z * math.sqrt(size + 2)  # the view's draws: its interior and its two ends
    rate = 1.0 / (n - 1 - 2)
    got = np.empty(ORDERS.size)
    ce.rdp_per_visit(rate, c, size, s, ORDERS, got)
    for a, bound in zip(ORDERS, got, strict=True):
        true = _true_renyi(c, size, rate, s, float(a), law=law)
        assert bound >= true * (1.0 - 1e-9) - 1e-12, (a, bound, true)
    # the rate is what makes it hold: at an eighth of it the entry falls below
    half = np.empty(ORDERS.size)
    ce.rdp_per_visit(rate / 8, c, size, s, ORDERS, half)
    assert any(h < _true_renyi(c, size, rate, s, float(a), law=law)
               for a, h in zip(ORDERS, half, strict=True))


def test_the_chains_rate_is_tight_and_wired():
    """The rate the tracker gives the per-visit bound without self-moves is 1 / (n - |W| -
    2); on a view of one interior position (a != b, the node neither) the count is
    Bernoulli at exactly that rate, so the bound equals the true divergence and the next
    larger denominator falls below it (the second reader's tight case)."""
    from netdp.tracking import complete_law, loss_table

    for n, w in ((10, 1), (12, 3)):
        assert loss_table._no_self_law(n, w).rate == pytest.approx(1.0 / (n - w - 2))
    n, w, z = 10, 1, 1.0
    law = complete_law.complete_interior_law(1, n, w, False)
    rate = 1.0 / (n - w - 2)
    assert law[1] == pytest.approx(rate, rel=1e-12)
    s = z * math.sqrt(3.0)
    got, loose = np.empty(ORDERS.size), np.empty(ORDERS.size)
    ce.rdp_per_visit(rate, 0, 1, s, ORDERS, got)
    ce.rdp_per_visit(1.0 / (n - w - 1), 0, 1, s, ORDERS, loose)
    for a, bound, low in zip(ORDERS, got, loose, strict=True):
        true = _true_renyi(0, 1, rate, s, float(a), law=law)
        assert bound == pytest.approx(true, rel=1e-6) and low < true * (1 - 1e-4), (a, true)
