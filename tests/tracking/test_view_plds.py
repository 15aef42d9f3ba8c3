"""An observer's views composed as PLDs, every node at once (:mod:`netdp.tracking.
view_plds`): nodes whose counts have the same law share its PMFs, the rounding that makes
them the same only raises the law (stochastically), and the shared figures are those of
the nodes built one by one."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import sparse

from netdp.accounting import mixture_rows
from netdp.engine.trace import Trace
from netdp.tracking import view_plds, walk_views


def _survival(w: np.ndarray, tail: np.ndarray) -> np.ndarray:
    """``P(I >= k)``, ``k = 0 .. K``."""
    return np.concatenate([tail[:, None] + np.cumsum(w[:, ::-1], axis=1)[:, ::-1],
                           tail[:, None]], axis=1)


def test_snapping_raises_a_log_by_one_to_two_steps():
    x = np.array([-700.0, -3.2, -1e-12, 0.0, 2.5, -np.inf, np.inf])
    got = view_plds.snapped(x)
    live = np.isfinite(x)
    assert np.all(got[live] >= x[live] + 0.99 * view_plds.SNAP)
    assert np.all(got[live] <= x[live] + 2.01 * view_plds.SNAP)
    assert got[5] == -np.inf and got[6] == np.inf


def test_snapped_laws_are_larger_and_merge_rounding():
    """Each snapped law's survival function is at least the law's at every count (a
    stochastically larger count: sound), within a relative 3e-9 of it; the PMF and tail
    sum to 1; two laws that differ by rounding alone become one."""
    rng = np.random.default_rng(5)
    w = rng.dirichlet(np.full(9, 0.5), size=6) * (1 - 1e-7)
    w[3] = w[2] * (1 + 4e-16 * rng.uniform(-1, 1, 9))  # row 2 up to rounding
    tail = np.full(6, 1e-7)
    tail[1] = 0.0
    w[1] /= w[1].sum()
    got_w, got_tail, _ = view_plds.snapped_laws([w], tail[None, :], np.arange(6))(0, slice(0, 6))
    before, after = _survival(w, tail), _survival(got_w, got_tail)
    assert np.all(after[:, 1:] >= before[:, 1:]) and np.all(got_w >= 0)  # k = 0: both 1
    np.testing.assert_allclose(after, before, rtol=3e-9, atol=0)
    np.testing.assert_allclose(got_w.sum(axis=1) + got_tail, 1.0, atol=1e-12)
    assert np.array_equal(got_w[2], got_w[3]) and got_tail[2] == got_tail[3]
    held, index = view_plds.distinct_rows(np.repeat(got_w, 4, axis=0),
                                          np.repeat(got_tail, 4))
    assert held.size == 5 and np.array_equal(index[::4][[2, 3]], [index[8], index[8]])


def test_mostly_distinct_rows_are_built_one_by_one():
    w = np.random.default_rng(1).random((8, 3))
    held, index = view_plds.distinct_rows(np.vstack([w, w[:1]]), np.zeros(9))
    assert index is None and np.array_equal(held, np.arange(9))


def _hypercube_losses(law_work: float, shared: float, monkeypatch) -> np.ndarray:
    """Every other node's ``pld`` figure towards two observers of one walk on the
    32-node hypercube (the exact laws, or the dominating ones where ``law_work`` is 0),
    sharing PMFs where at most ``shared`` of a view's rows are distinct."""
    import networkx as nx

    adj = nx.to_numpy_array(nx.hypercube_graph(5))
    P = sparse.csr_array(adj / adj.sum(axis=1, keepdims=True))
    rng = np.random.default_rng(11)
    holders = [int(rng.integers(32))]
    for _ in range(1599):
        holders.append(int(rng.choice(np.flatnonzero(adj[holders[-1]]))))
    monkeypatch.setattr(view_plds, "SHARED_LAWS", shared)
    monkeypatch.setattr(walk_views, "PLD_LAW_WORK", law_work)
    pairs = walk_views.sound_graph_losses(Trace(32, np.array([holders])), P, 1.0, 1e-6,
                                          4.22, accountant="pld",
                                          observers=np.array([0, 9]), target=1e-6)
    return pairs.values


@pytest.mark.parametrize("law_work", [0.0, math.inf], ids=["dominating", "exact-laws"])
def test_shared_pmfs_give_the_nodes_own_figures(law_work, monkeypatch):
    """On the hypercube (nodes at the same distances share laws), every node's figure
    with shared PMFs is the figure of the nodes built one by one (the same grid: one block
    of rows either way), to rounding; and the views did share."""
    calls = []
    real = view_plds.distinct  # the laws' rows (exact) or their bounds' (dominating)

    def spy(key):
        out = real(key)
        calls.append((out[0].size, key.shape[0], out[1] is None))
        return out

    monkeypatch.setattr(view_plds, "distinct", spy)
    # one group of t-cells for a view's rows either way (row_groups weighs the rows it is
    # given, so fewer distinct rows may be grouped otherwise: tightness, not sharing)
    monkeypatch.setattr(mixture_rows, "GROUP_CELLS", math.inf)
    alone = _hypercube_losses(law_work, 0.0, monkeypatch)
    assert all(none for *_, none in calls)
    calls.clear()
    shared = _hypercube_losses(law_work, 1.0, monkeypatch)
    held = np.array([c[0] for c in calls])
    rows = np.array([c[1] for c in calls])
    assert held.sum() < 0.5 * rows.sum()  # most rows shared a PMF
    assert np.all(np.isfinite(alone)) and np.ptp(alone) > 0
    np.testing.assert_allclose(shared, alone, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("accountant", ["pld", "rdp"])
def test_laws_beyond_their_memory_take_the_bound(accountant, monkeypatch):
    """An observer whose exact laws would pass :data:`~netdp.tracking.walk_views.LAW_BYTES`
    takes the law bound instead (the dominating laws for pld): figures at least the exact
    laws' (the bound is sound and looser)."""
    import networkx as nx

    adj = nx.to_numpy_array(nx.hypercube_graph(4))
    P = sparse.csr_array(adj / adj.sum(axis=1, keepdims=True))
    rng = np.random.default_rng(2)
    holders = [0]
    for _ in range(399):
        holders.append(int(rng.choice(np.flatnonzero(adj[holders[-1]]))))
    trace = Trace(16, np.array([holders]))

    def losses():
        return walk_views.sound_graph_losses(trace, P, 1.0, 1e-6, 4.22, accountant=accountant,
                                             observers=np.array([3]), target=1e-6).values

    exact = losses()
    bounded = []
    real = walk_views.law_bound.survival_logs

    def spy(*args, **kwargs):
        bounded.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(walk_views.law_bound, "survival_logs", spy)
    monkeypatch.setattr(walk_views, "LAW_BYTES", 0)
    bound = losses()
    assert bounded and np.all(bound >= exact * (1 - 1e-9)) and np.any(bound > exact * 1.01)
