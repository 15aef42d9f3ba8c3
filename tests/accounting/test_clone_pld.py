"""The clone pair of k reports among m others (netdp.accounting.clone_pld): above the
exact shuffled view of binary randomized response, equal to the FMT numeric bound at k = 1
within its grid, and the window mixture as its weights say."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from netdp.accounting import clone_pld as cp
from netdp.accounting.fmt_numeric import _fmt_c_grid, fmt_numeric_delta


def delta_of(lower: int, probs: np.ndarray, inf: float, h: float, eps: float) -> float:
    """``δ(ε) = inf + Σ p (1 - e^{ε - ℓ})_+`` of a PMF on the grid ``h``."""
    loss = (lower + np.arange(probs.size)) * h
    return float(inf + np.sum(probs * np.clip(-np.expm1(eps - loss), 0.0, None)))


def shuffled_counts(k: int, others: list[int], x: int, eps0: float) -> np.ndarray:
    """The exact law of the number of ones among k binary randomized responses of ``x``
    and one of each of ``others`` (the shuffled multiset's only statistic)."""
    keep = math.exp(eps0) / (1.0 + math.exp(eps0))
    dist = np.ones(1)
    for value in [x] * k + others:
        one = keep if value == 1 else 1.0 - keep
        dist = np.convolve(dist, [1.0 - one, one])
    return dist


def hockey(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    return float(np.sum(np.clip(p - math.exp(eps) * q, 0.0, None)))


@pytest.mark.parametrize("k, m, eps0", [(1, 3, 1.0), (2, 4, 1.0), (3, 3, 0.5), (2, 3, 2.0),
                                        (4, 5, 1.0), (1, 6, 3.0), (6, 8, 0.7)])
def test_the_pair_is_above_the_exact_shuffle_for_every_value_of_the_others(k, m, eps0):
    h = 1e-3
    lower, probs, inf = cp.clone_pmf(k, m, eps0, h)
    eps_grid = np.linspace(0.0, k * eps0, 25)
    bound = np.array([delta_of(lower, probs, inf, h, e) for e in eps_grid])
    worst = np.zeros(eps_grid.size)
    for others in itertools.product(range(2), repeat=m):
        p = shuffled_counts(k, list(others), 0, eps0)
        q = shuffled_counts(k, list(others), 1, eps0)
        worst = np.maximum(worst, [max(hockey(p, q, e), hockey(q, p, e)) for e in eps_grid])
    assert np.all(bound >= worst - 1e-12), (bound - worst).min()
    # and not vacuous: with no other report it is the k-fold randomized response itself
    if m == 3 and k == 1:
        assert bound[0] == pytest.approx(worst[0], rel=0.5)


@pytest.mark.parametrize("m, eps0", [(10, 1.0), (100, 1.0), (400, 0.5), (50, 3.0)])
def test_one_report_is_the_fmt_numeric_pair_within_the_grid(m, eps0):
    """k = 1 is the pair of Feldman, McMillan and Talwar: δ(ε) is at least theirs, and at
    most theirs one grid step lower (the losses rounded up by at most h, plus a margin)."""
    h = 1e-3
    lower, probs, inf = cp.clone_pmf(1, m, eps0, h)
    for eps in (0.05, 0.2, 0.5, 0.9 * eps0):
        got = delta_of(lower, probs, inf, h, eps)
        slack = _fmt_c_grid(eps0, m + 1)[2]  # the mass FMT's truncation adds: not in ours
        assert got >= float(fmt_numeric_delta(eps0, m + 1, eps)) * (1 - 1e-9) - slack
        assert got <= float(fmt_numeric_delta(eps0, m + 1, max(eps - 2.01 * h, 0.0))) + 1e-15


def test_masses_add_up_and_losses_stay_within_k_eps0():
    for k, m in ((1, 0), (3, 20), (7, 200)):
        lower, probs, inf = cp.clone_pmf(k, m, 1.0, 1e-3)
        assert probs.sum() + inf == pytest.approx(1.0, abs=3e-7)
        assert probs.sum() + inf >= 1.0
        assert (lower + probs.size - 1) * 1e-3 <= k * 1.0 + 2e-3
        assert lower * 1e-3 >= -k - 1e-3


def test_more_clones_hide_more():
    """A tightness check: among 400 others one report is far more private than alone."""
    h = 1e-3
    alone = cp.clone_pmf(1, 0, 1.0, h)
    hidden = cp.clone_pmf(1, 400, 1.0, h)
    assert delta_of(*hidden, h, 0.3) < 1e-6 < delta_of(*alone, h, 0.3)


def test_window_rows_mix_the_pairs_by_the_count_law():
    h = 2.0 ** -10
    w = np.array([[1.0, 0.0, 0.0], [0.25, 0.5, 0.2], [0.0, 0.0, 1.0]])
    tail = np.array([0.0, 0.05, 0.0])
    rows = cp.window_rows(w, tail, 6, 1.0, h)
    assert rows.lower[0] == 0 and rows.probs[0, 0] == 1.0 and rows.inf[0] == 0.0
    for r in (1, 2):
        want = sum(w[r, k] * delta_of(*cp.clone_pmf(k, 6 - k, 1.0, h), h, 0.4)
                   for k in range(3))
        got = delta_of(int(rows.lower[r]), rows.probs[r], float(rows.inf[r]), h, 0.4)
        assert got == pytest.approx(want + tail[r], rel=1e-12)
    assert rows.inf[1] >= 0.05


def test_the_reports_alone_dominate_the_pair():
    """alone_pmf (k-fold randomized response): δ(ε) at or above the clone pair's, and
    equal to its closed form; a window takes it for its rare counts only."""
    h = 2.0 ** -10
    k, m = 6, 40
    pair = cp.clone_pmf(k, m, 1.0, h)
    alone = cp.alone_pmf(k, 1.0, h)
    q = 1.0 / (1.0 + math.exp(-1.0))

    def closed(eps: float) -> float:
        return sum(math.comb(k, j) * q ** j * (1 - q) ** (k - j)
                   * max(0.0, 1.0 - math.exp(eps - (2 * j - k))) for j in range(k + 1))

    for eps in (0.0, 0.5, 1.9, 3.5):
        got = delta_of(*alone, h, eps)
        assert got >= delta_of(*pair, h, eps)
        # each loss rounded up by at most one grid step, each mass raised by MASS_UP
        assert closed(eps) <= got <= closed(eps - h) * cp.MASS_UP + 1e-15
    w = np.array([[0.5, 0.5 - 1e-9, 1e-9]])
    mixed = cp.window_rows(w, np.zeros(1), 10, 1.0, h, rare=1e-6)
    want = (0.5 - 1e-9) * delta_of(*cp.clone_pmf(1, 9, 1.0, h), h, 0.2) \
        + 1e-9 * delta_of(*cp.alone_pmf(2, 1.0, h), h, 0.2)
    got = delta_of(int(mixed.lower[0]), mixed.probs[0], float(mixed.inf[0]), h, 0.2)
    assert got == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("k", [1, 3])
def test_fewer_others_dominate_so_rounding_them_down_is_sound(k):
    """The pair with fewer others leaks at least as much (it is the pair with more, less
    the extra clones: a post-processing the other way), so
    :func:`~netdp.accounting.clone_pld.others_down` is sound: δ(ε) with more others is at
    most δ(ε) with fewer, up to the PMFs' rounding (a grid step up, masses 1 + 1e-7);
    and the grid is idempotent, within 5% below."""
    h = 1e-4
    for m in (70, 150, 400):
        down = cp.others_down(m)
        assert m / 1.05 - 1 <= down <= m and cp.others_down(down) == down
        pmfs = [cp.clone_pmf(k, others, 1.0, h) for others in (m, down, down // 2)]
        for eps in (0.05, 0.2, 0.5):
            d = [delta_of(*p, h, eps) for p in pmfs]
            more = [delta_of(*p, h, eps + 2 * h) for p in pmfs]
            assert more[0] <= d[1] * (1 + 1e-6) and more[1] <= d[2] * (1 + 1e-6), (m, eps, d)
        assert delta_of(*pmfs[2], h, 0.2) > 1.3 * delta_of(*pmfs[0], h, 0.2)  # room to fail
