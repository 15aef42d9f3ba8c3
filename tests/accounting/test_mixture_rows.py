"""Many mixture PLDs at once (:mod:`netdp.accounting.mixture_rows`) against the one-at-a-time
construction (:func:`~netdp.accounting.mixture_pld.mixture_pld`, composed by
:meth:`~netdp.accounting.loss_pmf.PldPair.compose_many`): never below its optimistic twin
(a lower bound of the exact composition), and within the grid's rounding of its
pessimistic one."""

from __future__ import annotations

import numpy as np
import pytest

from netdp.accounting import mixture_rows as mr
from netdp.accounting import pld_fourier as pf
from netdp.accounting import rows_compose as rc
from netdp.accounting.loss_pmf import PldPair
from netdp.accounting.mixture_pld import mixture_pld

H = 1e-3


def _case(seed: int, rows: int = 4, views: int = 6, s_range=(1.5, 20.0)):
    """Random views: small and large noise, sticky counts up to 40, attributable counts
    (no zero count), a tail beyond the largest count, a row that never counts."""
    rng = np.random.default_rng(seed)
    out = []
    for e in range(views):
        s = float(np.exp(rng.uniform(*np.log(s_range))))
        k = int(rng.integers(1, 40))
        w = rng.dirichlet(np.full(k + 1, 0.3), size=rows)
        w[:, 0] += rng.uniform(0, 3, size=rows)
        w /= w.sum(axis=1, keepdims=True)
        tail = np.where(rng.random(rows) < 0.3, 10.0 ** rng.uniform(-14, -8, rows), 0.0)
        w *= (1.0 - tail)[:, None]
        if e % 3 == 0:  # an attributable count: no mass at 0
            w[0] = 0.0
            w[0, min(2, k)] = 1.0 - tail[0]
        w[-1] = 0.0
        w[-1, 0] = 1.0 - tail[-1]  # never counted here
        out.append((w, tail, s))
    return out


def _batched(views, delta, times=None):
    parts = [mr.view_rows(w, tail, s, H) for w, tail, s in views]
    return np.maximum(*(rc.compose_rows([p[d] for p in parts], H, delta, times)
                        for d in (0, 1)))


@pytest.mark.parametrize("seed", range(4))
def test_rows_bracket_the_exact_composition(seed):
    views = _case(seed)
    delta = 1e-6
    got = _batched(views, delta)
    for r in range(got.size):
        hi = PldPair.compose_many([mixture_pld(w[r], s, h=H, tail=float(t[r]))
                                   for w, t, s in views])
        lo = PldPair.compose_many([mixture_pld(w[r], s, h=H, tail=float(t[r]),
                                               pessimistic=False) for w, t, s in views])
        exact_below = float(lo.epsilon(delta))
        assert got[r] >= exact_below - 1e-9, (r, got[r], exact_below)
        # the rounding: h a view (grid) and RISE h (cells), twice as the oracle's; 1 %
        # where the steepest views meet MAX_CELLS (losses in the hundreds); and counts
        # above EXACT_COUNTS rounded up by at most COUNT_RATIO
        top = float(hi.epsilon(delta))
        large = any(w.shape[1] > mr.EXACT_COUNTS + 1 for w, _, _ in views)
        rel = 0.01 + (mr.COUNT_RATIO - 1.0) * large
        slack = 2 * len(views) * (1 + mr.RISE) * H + rel * top
        assert got[r] <= top + slack, (r, got[r], top)


def test_small_noise_and_large_counts_keep_their_upper_cells():
    """``s = 0.6``-like views with 25 counts put the loss near 30 in the upper cells of
    ``P``, where ``Φ`` is within 1e-16 of 1: their masses must come from ``Φ(-t)``
    (differences of ``Φ`` lost them, and the figure fell below the exact loss)."""
    w = np.full((1, 26), 1.0 / 26)
    qp, pq = mr.view_rows(w, np.zeros(1), 3.0, H)
    for part in (qp, pq):
        assert part.probs.sum() + part.inf[0] >= 1.0 - 1e-12
    exact_below = mixture_pld(w[0], 3.0, h=H, pessimistic=False).epsilon(1e-6)
    assert _batched([(w, np.zeros(1), 3.0)], 1e-6)[0] >= exact_below


def test_a_part_composed_times_is_its_copies():
    views = _case(7, rows=3, views=3, s_range=(2.0, 10.0))
    copies = [views[0]] * 3 + [views[1]] + [views[2]] * 2
    np.testing.assert_allclose(_batched(views, 1e-5, times=[3, 1, 2]),
                               _batched(copies, 1e-5), rtol=1e-9, atol=1e-9)


def test_a_row_that_the_observer_separates_surely_is_infinite():
    w = np.array([[0.0, 0.0], [1.0, 0.0]])
    got = _batched([(w, np.array([1.0, 0.0]), 2.0)], 1e-6)
    assert got[0] == np.inf and got[1] == 0.0


def test_batch_epsilon_reads_a_lower_per_row():
    rng = np.random.default_rng(3)
    probs = rng.dirichlet(np.ones(50), size=4)
    lower = np.array([-10, 0, 7, 30])
    inf = np.array([0.0, 1e-9, 0.0, 2e-7])
    got = pf.batch_epsilon(probs, lower, 0.01, inf, 1e-6)
    each = [pf.batch_epsilon(probs[r:r + 1], int(lower[r]), 0.01, inf[r:r + 1], 1e-6)[0]
            for r in range(4)]
    np.testing.assert_array_equal(got, each)


def test_rows_never_counted_are_exactly_zero_and_leave_the_others_alone():
    """A row with all its weight at count 0 and no tail has ``Q = P``: its PMF is all at
    loss 0 both ways, nothing at ``+∞``, its figure 0; the other rows' figures are those
    of the views without it (it takes no part in their cells or their transforms)."""
    views = _case(3, rows=3, views=4)
    more = [(np.vstack([w, np.eye(1, w.shape[1])]), np.append(t, 0.0), s)
            for w, t, s in views]
    for w, t, s in more:
        for part in mr.view_rows(w, t, s, H):
            assert part.lower[-1] == 0 and part.inf[-1] == 0.0
            assert part.probs[-1, 0] == 1.0 and not part.probs[-1, 1:].any()
    got = _batched(more, 1e-6)
    assert got[-1] == 0.0
    np.testing.assert_allclose(got[:-1], _batched(views, 1e-6), rtol=1e-12, atol=0)


def _log_domain(w, ka, t):
    """The oracle: ``L_r(t_j)`` by numpy's log-sum-exp, term by term (no shared scale)."""
    from scipy import special

    x = np.multiply.outer(ka, t) - 0.5 * (ka * ka)[:, None]
    with np.errstate(divide="ignore"):
        return special.logsumexp(np.log(w)[:, :, None] + x[None], axis=1)


@pytest.mark.parametrize("seed", range(6))
def test_chords_and_tangents_bracket_the_loss_at_every_point(seed):
    """The compiled log-sums against numpy's, and the bounds between knots on each side of
    them: above (the ``(Q, P)`` direction's losses) and below (``(P, Q)``'s), to the float
    error that ``_positions``' margin covers, and within ``h`` of each other (tightness)."""
    rng = np.random.default_rng(seed)
    views = _case(seed, rows=5, views=3)
    for w, _, s in views:
        w = w.copy()
        w[1, rng.integers(1, w.shape[1])] += 1e-300  # far from every other term
        ka = np.arange(w.shape[1]) / s
        coarse, slopes = mr._coarse_slopes(w, ka, 1e-18)
        t = mr._t_grid(coarse, slopes.max(axis=0), H)
        exact = _log_domain(w, ka, t)
        values, _ = mr._values_slopes(w, ka, t)
        upper, lower = mr._loss_bounds(w, ka, t, H)
        tol = 1e-13 * (1 + np.abs(exact))
        np.testing.assert_allclose(values, exact, rtol=0, atol=tol.max())
        assert np.all(upper >= exact - tol) and np.all(lower <= exact + tol)
        assert np.max(upper - lower) <= H
        # between knots the bounds are not the exact values: swapped, the check fails
        assert np.max(upper - exact) > 1e-6 * H and np.max(exact - lower) > 1e-6 * H



@pytest.mark.parametrize("seed", range(3))
def test_a_coarse_grid_with_fine_cells_stays_above_the_exact_composition(seed):
    """The pld accountant's setting (netdp.tracking.view_plds.pld_grid): masses split on a
    grid 8 times the cells' scale. Never below the optimistic twin, and within the cells'
    rounding of the pessimistic one on the fine grid (the split's cost is second order)."""
    views = _case(seed)
    delta = 1e-6
    parts = [mr.view_rows(w, tail, s, 8 * H, cell=H) for w, tail, s in views]
    got = np.maximum(*(rc.compose_rows([p[d] for p in parts], 8 * H, delta)
                       for d in (0, 1)))
    for r in range(got.size):
        lo = PldPair.compose_many([mixture_pld(w[r], s, h=H, tail=float(t[r]),
                                               pessimistic=False) for w, t, s in views])
        up = PldPair.compose_many([mixture_pld(w[r], s, h=H, tail=float(t[r]))
                                   for w, t, s in views])
        assert got[r] >= float(lo.epsilon(delta)) - 1e-9
        # no grid rounding beyond the pessimistic oracle's own: the cells' RISE h alone
        # (and, as above, 1 % where the steepest views meet MAX_CELLS, the counts' grid)
        large = any(w.shape[1] > mr.EXACT_COUNTS + 1 for w, _, _ in views)
        rel = 0.01 + (mr.COUNT_RATIO - 1.0) * large
        top = float(up.epsilon(delta))
        assert got[r] <= top + 2 * len(views) * mr.RISE * H + rel * top


def _atoms_delta(loss, mass, eps):
    """``δ(ε)`` of masses at losses (no mass at +∞), at each ``ε``."""
    return np.array([np.sum(mass * np.clip(-np.expm1(e - loss), 0.0, None)) for e in eps])


def _self_composed(loss, mass, times):
    out_l, out_m = np.zeros(1), np.ones(1)
    for _ in range(times):
        out_l = np.add.outer(out_l, loss).ravel()
        out_m = np.multiply.outer(out_m, mass).ravel()
    return out_l, out_m


@pytest.mark.parametrize("theta", ["split_up", "linear"])
def test_splitting_a_mass_never_lowers_delta_before_or_after_composition(theta):
    """``split_up`` keeps each mass and its ``e^{-ℓ}`` moment (to its margin), gives the
    atoms' own ``δ`` at every grid loss (one factor) and never less anywhere, composed
    three times too. The linear share (``θ`` the distance to the lower level, what
    interpolating the loss would give) puts too little mass up: the check finds it."""
    rng = np.random.default_rng(5)
    h = 0.05
    loss = rng.uniform(-0.6, 0.9, 12)
    mass = rng.dirichlet(np.ones(12))
    levels, up = [], []
    for x in loss:
        i, share = mr.split_up(float(x), h)
        if theta == "linear":
            share = x / h - i
        levels.append(i)
        up.append(share)
    levels, up = np.array(levels), np.array(up)
    grid_l = np.concatenate([levels * h, (levels + 1) * h])
    grid_m = np.concatenate([mass * (1 - up), mass * up])
    eps = np.arange(-20, 40) * h
    ok = True
    for times in (1, 3):
        got = _atoms_delta(*_self_composed(grid_l, grid_m, times), eps)
        want = _atoms_delta(*_self_composed(loss, mass, times), eps)
        ok &= bool(np.all(got >= want - 1e-15))
        if theta == "split_up" and times == 1:
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-15)
    if theta == "linear":
        assert not ok
        return
    assert ok
    assert np.isclose(grid_m.sum(), 1.0, rtol=1e-15)
    moment = np.sum(grid_m * np.exp(-grid_l)) / np.sum(mass * np.exp(-loss))
    assert 1.0 - 1e-10 <= moment <= 1.0


def test_split_rows_against_numpy():
    """The compiled split (``_positions``, ``_split_rows``) against ``split_up`` cell by cell,
    with cells at +∞ and below the row's ``spare`` (raised to the first cell above it)."""
    rng = np.random.default_rng(8)
    h = 0.01
    loss = np.sort(rng.uniform(-0.5, 0.5, (3, 40)), axis=1)
    loss[1] = loss[1, ::-1]  # decreasing along the cells (the (P, Q) direction)
    loss[2, -3:] = np.inf
    mass = rng.dirichlet(np.ones(40), size=3)
    spare = 0.05
    part = mr._pack(loss, mass, np.zeros(3), h, np.zeros(3, bool), spare)
    for r in range(3):
        order = np.argsort(loss[r], kind="stable")
        x = loss[r, order] + 1e-12 * (1 + np.abs(loss[r, order]))
        m = mass[r, order]
        live = np.isfinite(x)
        passed = np.flatnonzero(np.cumsum(m[live]) > spare)[0]
        x = np.maximum(x[live], x[live][passed])
        want = np.zeros(part.probs.shape[1] + 2)
        for xi, mi in zip(x, m[live], strict=True):
            i, share = mr.split_up(float(xi), h)
            want[i - part.lower[r]] += mi * (1 - share)
            want[i + 1 - part.lower[r]] += mi * share
        np.testing.assert_allclose(part.probs[r], want[:part.probs.shape[1]], rtol=1e-12,
                                   atol=1e-17)
        assert not want[part.probs.shape[1]:].any()
        assert part.inf[r] == pytest.approx(m[~live].sum(), abs=1e-17)


def test_row_groups_partition_the_rows_and_cost_no_more_than_one():
    rng = np.random.default_rng(2)
    need = np.concatenate([np.full(500, 130.0), rng.uniform(130, 400, 300),
                           rng.uniform(5000, 16000, 8)])
    groups = mr.row_groups(need)
    assert np.array_equal(np.sort(np.concatenate(groups)), np.arange(need.size))
    cost = sum(mr.GROUP_CELLS + g.size * need[g].max() for g in groups)
    assert len(groups) > 1 and cost < mr.GROUP_CELLS + need.size * need.max()
    assert len(mr.row_groups(np.full(40, 200.0))) == 1


def test_split_rows_stay_within_their_row():
    """Masses exactly on grid losses (a row the observer never counts: no margin) go to
    their level whole, and nothing spills past a row's last level into the next row."""
    h = 0.25
    loss = np.array([[0.0, 0.25, 0.5], [0.1, 0.3, 0.35], [-0.5, 0.0, 0.5]])
    mass = np.full((3, 3), 1.0 / 3.0)
    part = mr._pack(loss, mass, np.zeros(3), h, np.array([True, False, True]), 0.0)
    third = 1.0 / 3.0
    np.testing.assert_array_equal(part.probs[0], [third, third, third, 0.0, 0.0])
    np.testing.assert_array_equal(part.probs[2], [third, 0.0, third, 0.0, third])
    np.testing.assert_allclose(part.probs.sum(axis=1), 1.0, rtol=1e-15)
    assert part.lower.tolist() == [0, 0, -2] and part.probs.shape == (3, 5)
