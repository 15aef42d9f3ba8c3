"""Each row's composition in the Fourier domain (:mod:`netdp.accounting.rows_compose`):
rows that share a PMF (``ViewRows.index``) compose as if each held its own copy, and the
compiled product loop against its numpy oracle."""

from __future__ import annotations

import numpy as np
import pytest

from netdp.accounting import mixture_rows as mr
from netdp.accounting import rows_compose as rc

H = 1e-3


def _laws(seed: int, distinct: int, views: int):
    """``views`` views, each with ``distinct`` count laws (one never counted) and the
    rows' choice among them (rows ``3 distinct``)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(views):
        k = int(rng.integers(1, 12))
        w = rng.dirichlet(np.full(k + 1, 0.4), size=distinct)
        w[:, 0] += rng.uniform(0, 4, size=distinct)
        w /= w.sum(axis=1, keepdims=True)
        tail = np.where(rng.random(distinct) < 0.3, 1e-10, 0.0)
        w *= (1.0 - tail)[:, None]
        w[-1] = 0.0
        w[-1, 0] = 1.0 - tail[-1]  # never counted: all its mass at loss 0
        pick = rng.integers(0, distinct, size=3 * distinct)
        out.append((w, tail, float(rng.uniform(1.5, 8.0)), pick))
    return out


def _expanded(part: mr.ViewRows) -> mr.ViewRows:
    """The same rows, each with its own copy of its PMF."""
    i = part.index
    return mr.ViewRows(part.lower[i], part.probs[i], part.inf[i])


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("times", [None, [1, 3, 1, 2]])
def test_shared_rows_compose_as_their_copies(seed, times):
    """One PMF per distinct law, pointed at by many rows, gives every row the figure of
    the rows built one by one (the same PMFs): to rounding, at several deltas (so at
    several window lengths)."""
    views = _laws(seed, distinct=5, views=4)
    shared, copies = [], []
    for w, tail, s, pick in views:
        pair = mr.view_rows(w, tail, s, H)
        shared.append(tuple(mr.shared_rows(p, pick) for p in pair))
        copies.append(tuple(_expanded(q) for q in shared[-1]))
    for delta in (1e-3, 1e-8):
        for d in (0, 1):
            got = rc.compose_rows([p[d] for p in shared], H, delta, times)
            want = rc.compose_rows([p[d] for p in copies], H, delta, times)
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
            assert np.ptp(got) > 0  # the rows differ: the test can tell them apart


def test_a_shared_block_keeps_its_rows_pmfs():
    """``first_rows`` of shared rows keeps the PMFs its rows use, and their order."""
    (w, tail, s, pick), = _laws(7, distinct=6, views=1)
    part = mr.shared_rows(mr.view_rows(w, tail, s, H)[0], pick)
    head = mr.first_rows(part, 7)
    assert head.rows == 7 and head.probs.shape[0] == np.unique(pick[:7]).size
    for r in range(7):
        a, b = head.index[r], part.index[r]
        assert head.lower[a] == part.lower[b] and head.inf[a] == part.inf[b]
        width = head.probs.shape[1]
        np.testing.assert_array_equal(head.probs[a], part.probs[b][:width])
        assert not part.probs[b][width:].any()


def test_products_against_numpy():
    """The compiled loop multiplies each row by the spectra its slots name (-1: none)."""
    rng = np.random.default_rng(3)
    phi = rng.normal(size=(9, 700)) + 1j * rng.normal(size=(9, 700))
    spec = rng.normal(size=(5, 700)) + 1j * rng.normal(size=(5, 700))
    slots = rng.integers(-1, 5, size=(9, 4))
    want = phi.copy()
    for r in range(9):
        for j in range(4):
            if slots[r, j] >= 0:
                want[r] *= spec[slots[r, j]]
    rc._products(phi, spec, slots)
    np.testing.assert_allclose(phi, want, rtol=1e-13)


def test_rows_composed_in_chunks_of_bounded_bytes(monkeypatch):
    """Rows composed a few at a time (:data:`WINDOW_BYTES`) give the figures of one pass."""
    views = _laws(4, distinct=5, views=3)
    parts = [tuple(mr.shared_rows(p, pick) for p in mr.view_rows(w, tail, s, H))
             for w, tail, s, pick in views]
    whole = rc.compose_rows([p[0] for p in parts], H, 1e-6)
    calls = []
    real = rc._compose_window

    def spy(parts, sel, *rest):
        calls.append(sel.size)
        return real(parts, sel, *rest)

    monkeypatch.setattr(rc, "WINDOW_BYTES", 1)
    monkeypatch.setattr(rc, "_compose_window", spy)
    np.testing.assert_allclose(rc.compose_rows([p[0] for p in parts], H, 1e-6), whole,
                               rtol=1e-12)
    assert set(calls) == {1} and len(calls) == whole.size
