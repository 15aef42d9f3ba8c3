"""The laws of the sound graph tracker beyond the last ``KMAX``
(:func:`netdp.tracking.walk_views.view_laws`).

* a law computed with a larger count agrees with the smaller one on the counts they share,
  its tail is smaller, and law and tail sum to 1; at the view's interior positions the
  tail is 0;
* views whose tails stay above the slack after the last ``kmax`` go on to larger counts
  (their laws whole at their interior positions), unless :data:`EXTEND_BYTES` forbids;
* on a star whose leaves stay put (Metropolis self-moves), counts cut at 2 visits put
  ``pld`` and ``exact`` at an infinite loss; with the extension they fall below ``rdp``
  and stay at or above the exact loss (:func:`test_soundness_property.exact_lower`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

sys.path.insert(0, str(Path(__file__).parents[1] / "privacy"))

from test_soundness_property import _pairs, exact_lower  # noqa: E402

from netdp.engine.trace import Trace  # noqa: E402
from netdp.tracking import count_law, walk_views  # noqa: E402
from netdp.tracking import cycle_entries as ce  # noqa: E402
from netdp.tracking.walk_views import observer_views, sound_graph_losses  # noqa: E402


def sticky_star(leaves: int) -> np.ndarray:
    """The Metropolis walk (uniform target) on a star: a leaf moves to the centre with
    probability ``1 / leaves`` and stays put otherwise."""
    n = leaves + 1
    P = np.zeros((n, n))
    P[0, 1:] = P[1:, 0] = 1.0 / leaves
    P[np.arange(1, n), np.arange(1, n)] = 1.0 - 1.0 / leaves
    return P


def star_walk(P: np.ndarray, steps: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = P.shape[0]
    out = np.empty((1, steps), np.int64)
    h = int(rng.integers(n))
    for i in range(steps):
        out[0, i] = h
        h = int(rng.choice(n, p=P[h]))
    return out


def _views(holders: np.ndarray, v: int) -> ce.Views:
    flat = holders.reshape(-1)
    return observer_views(flat, holders.shape[1], np.flatnonzero(flat == v))


@pytest.mark.parametrize("first", [False, True])
def test_a_larger_count_keeps_the_shared_counts_and_shrinks_the_tail(first):
    P = sparse.csr_array(sticky_star(4))
    blocked = np.zeros(5, bool)
    blocked[1] = True
    pi0 = np.full(5, 0.2)
    L = 60  # interior positions: 59

    def laws(km: int) -> tuple[np.ndarray, np.ndarray]:
        if first:
            got, tail = count_law.first_stretch_laws_batch(P, blocked, pi0, [3], [L], km)
        else:
            got, tail = count_law.bridge_interior_laws_batch(P, blocked, [2], [3], [L], km)
        return got[0], tail[0]

    prev_law, prev_tail = laws(2)
    for km in (8, 24, 40, L - 1):
        law, tail = laws(km)
        np.testing.assert_allclose(law.sum(axis=1) + tail, np.where(blocked, 0.0, 1.0),
                                   rtol=0, atol=1e-12)
        k = prev_law.shape[1]
        np.testing.assert_allclose(law[:, :k], prev_law, rtol=1e-10, atol=1e-300)
        assert np.all(tail <= prev_tail)
        assert np.all(tail[prev_tail > 0] < prev_tail[prev_tail > 0])
        prev_law, prev_tail = law, tail
    assert np.all(prev_tail == 0.0)  # at the interior positions the law is whole


def test_views_go_beyond_the_last_kmax_while_their_tails_matter(monkeypatch):
    P = sparse.csr_array(sticky_star(4))
    holders = star_walk(sticky_star(4), 80, 1)
    blocked = np.zeros(5, bool)
    blocked[1] = True
    pi0 = np.full(5, 0.2)
    views = _views(holders, 1)
    inner = np.array([ce.interior(int(k), int(m)) for k, m in
                      zip(views.kind, views.length, strict=True)])
    assert inner.max() > 2
    slack = np.full(views.size, 1e-200)
    laws, tails = walk_views.view_laws(P, blocked, pi0, views, slack, kmax=(2,))
    for e in range(views.size):
        assert laws[e].shape[1] == max(inner[e], 2) + 1
        assert np.all(tails[e] == 0.0)
        np.testing.assert_allclose(laws[e].sum(axis=1), np.where(blocked, 0.0, 1.0),
                                   rtol=0, atol=1e-12)
        if views.kind[e] == ce.REGULAR:
            whole = count_law.bridge_interior_laws_batch(
                P, blocked, views.a[e:e + 1], views.b[e:e + 1], views.length[e:e + 1] - 2,
                int(inner[e]))[0][0]
        else:
            whole = count_law.first_stretch_laws_batch(
                P, blocked, pi0, views.b[e:e + 1], views.length[e:e + 1],
                int(inner[e]))[0][0]
        np.testing.assert_allclose(laws[e][:, :whole.shape[1]], whole, rtol=1e-10,
                                   atol=1e-300)
    monkeypatch.setattr(walk_views, "EXTEND_BYTES", 0)  # as before: cut at the last kmax
    laws, tails = walk_views.view_laws(P, blocked, pi0, views, slack, kmax=(2,))
    assert all(law.shape[1] == 3 for law in laws)
    assert tails[inner > 2].max() > 0.1


@pytest.mark.parametrize("seed, steps", [(0, 60), (1, 80)])
def test_the_extension_takes_pld_and_exact_off_the_cap_soundly(monkeypatch, seed, steps):
    """Counts cut at 2 visits: ``pld`` and ``exact`` at an infinite loss (the LDP cap);
    with the laws taken further, below ``rdp`` and at or above the exact loss."""
    P = sticky_star(4)
    holders = star_walk(P, steps, seed)
    z, delta, v = 3.0, 1e-6, 1
    truth = exact_lower(holders, P, [v], z, delta, target=delta)
    monkeypatch.setattr(walk_views, "KMAX", (2,))

    def pairs(accountant: str) -> dict[int, float]:
        table = sound_graph_losses(Trace(5, holders), sparse.csr_array(P), 1.0, delta, z,
                                   accountant, None, np.array([v]), target=delta)
        return _pairs(table, [v])

    with monkeypatch.context() as m:
        m.setattr(walk_views, "EXTEND_BYTES", 0)
        for accountant in ("pld", "exact"):
            assert all(eps == np.inf for eps in pairs(accountant).values())
    rdp = pairs("rdp")
    for accountant in ("pld", "exact", "kov", "rdp"):
        got = pairs(accountant)
        for u, eps in truth.items():
            assert got[u] >= eps - 1e-9, (accountant, u, got[u], eps)
            if accountant in ("pld", "exact"):
                assert got[u] < rdp[u], (accountant, u, got[u], rdp[u])
