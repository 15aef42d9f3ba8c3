"""The time-varying walk tracker against exhaustive enumeration of the hidden paths.

Ground truth, independent of the tracker: on graphs of 3 to 6 nodes and 3 snapshots, every
assignment of holders to the steps the observer set cannot see is enumerated and weighted
by the time-indexed walk (``π0[h_0] Π_t P_t[h_t, h_{t+1}]``, the observer's holds, their
times and neighbours fixed as seen). That gives the joint law of node ``u``'s contribution
counts in the observer's views; the test checks that it is the product of the per-view
laws (the views are independent, as the tracker assumes), that those are the tracker's
laws, and that every sound accountant's figure is at or above the exact ε of the view
(the views' Gaussian mixtures composed exactly, rounded down).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from netdp.accounting import loss_pmf
from netdp.accounting import mixture_pld as mp
from netdp.engine.trace import Trace
from netdp.tracking import cycle_entries as ce
from netdp.tracking import time_varying as tvt
from netdp.tracking import walk_views

STEP = 2e-3
CASES = 40


def snapshots(n: int, rng: np.random.Generator) -> np.ndarray:
    """Three random snapshots (sparse, some undirected, some nodes isolated: they stay)."""
    out = []
    for _ in range(3):
        adj = rng.random((n, n)) < 0.35
        np.fill_diagonal(adj, False)
        if rng.random() < 0.5:
            adj |= adj.T
        lonely = ~adj.any(axis=1)
        adj[lonely, lonely] = True
        out.append(adj / adj.sum(axis=1, keepdims=True))
    return np.stack(out)


def schedule(S: np.ndarray, period: int, steps: int) -> list[np.ndarray]:
    return [S[(t // period) % len(S)] for t in range(steps)]


def walk(Ps, tokens, rng):
    n = Ps[0].shape[0]
    out = np.empty((tokens, len(Ps)), np.int64)
    for k in range(tokens):
        h = int(rng.integers(n))
        for t in range(len(Ps)):
            out[k, t] = h
            h = int(rng.choice(n, p=Ps[t][h]))
    return out


def seen(holders: np.ndarray, members: set[int]) -> np.ndarray:
    """Which steps the observer set knows the holder of: its own and their neighbours."""
    mine = np.isin(holders, list(members))
    known = mine.copy()
    known[:, 1:] |= mine[:, :-1]
    known[:, :-1] |= mine[:, 1:]
    return known


def joint_counts(holders, Ps, members, u):
    """Enumerate the hidden holders of every token: the joint law of ``u``'s contribution
    counts in the observer's views (a dict count tuple -> probability), the views in the
    order of :func:`~netdp.tracking.cycle_entries.timed_views`."""
    n = Ps[0].shape[0]
    free = [w for w in range(n) if w not in members]
    known = seen(holders, members)
    total: dict[tuple, float] = {}
    per_token = []
    for k in range(holders.shape[0]):
        row = holders[k]
        hidden = np.flatnonzero(~known[k])
        law: dict[tuple, float] = {}
        for fill in itertools.product(free, repeat=hidden.size):
            path = row.copy()
            path[hidden] = fill
            w = 1.0 / n
            for t in range(path.size - 1):
                w *= Ps[t][path[t], path[t + 1]]
            if w == 0:
                continue
            law[_counts(path, members, u)] = law.get(_counts(path, members, u), 0.0) + w
        z = sum(law.values())
        per_token.append({c: p / z for c, p in law.items()})
    for combo in itertools.product(*[d.items() for d in per_token]):
        key = sum((c for c, _ in combo), ())
        total[key] = total.get(key, 0.0) + math.prod(p for _, p in combo)
    return total


def _counts(path, members, u) -> tuple:
    """``u``'s contributions in each view of one token (first stretch, then cycles)."""
    at = [t for t in range(path.size) if path[t] in members]
    out = []
    if at and at[0] >= 1:
        out.append(int(np.sum(path[:at[0]] == u)))
    for j, i in itertools.pairwise(at):
        if i - j >= 2:
            out.append(int(np.sum(path[j + 1:i] == u)))
    return tuple(out)


def exact_epsilon(holders, Ps, members, u, z, delta, views):
    """Exact ε (rounded down) of the view towards ``u`` from the enumerated joint law,
    checked to be the product of its marginals."""
    joint = joint_counts(holders, Ps, members, u)
    k = views.size
    if k == 0:
        return 0.0, []
    margins = []
    for e in range(k):
        m: dict[int, float] = {}
        for c, p in joint.items():
            m[c[e]] = m.get(c[e], 0.0) + p
        margins.append(m)
    for c, p in joint.items():
        assert p == pytest.approx(math.prod(margins[e][c[e]] for e in range(k)), abs=1e-12)
    parts = []
    for e in range(k):
        w = np.zeros(max(margins[e]) + 1)
        for c, p in margins[e].items():
            w[c] = p
        s = z * math.sqrt(ce.draws(int(views.kind[e]), int(views.length[e])))
        parts.append(mp.mixture_pld(w / w.sum(), s, h=STEP, pessimistic=False))
    dt = min(2.0 * k * delta, 1.0)
    return float(loss_pmf.PldPair.compose_many(parts).epsilon(dt)), margins


def make_case(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 7))
    S = snapshots(n, rng)
    steps = int(rng.integers(5, 10 if n <= 4 else 9))
    Ps = schedule(S, int(rng.integers(1, 3)), steps)
    tokens = 1 if n >= 5 else int(rng.integers(1, 3))
    holders = walk(Ps, tokens, rng)
    z = float(rng.uniform(0.5, 3.0))
    delta = float(10 ** rng.uniform(-8, -4))
    members = [int(rng.integers(n))]
    if n >= 5 and rng.random() < 0.3:
        members = sorted(rng.choice(n, size=2, replace=False).tolist())
    return n, Ps, holders, z, delta, members


def flat_views(holders, members, n):
    flat = np.where(np.isin(holders, members), n, holders).reshape(-1)
    return ce.timed_views(flat, holders.shape[1], np.flatnonzero(flat == n))


def _pairs(table, members):
    o = 0 if table.observers[0] < 0 else int(np.flatnonzero(table.observers == members[0])[0])
    lo = int(table.counts[:o].sum())
    return {int(a): float(b) for a, b in zip(table.nodes[lo:lo + table.counts[o]],
                                             table.values[lo:lo + table.counts[o]],
                                             strict=True)}


@pytest.mark.parametrize("block", range(4))
def test_time_varying_tracker_is_never_below_the_enumerated_loss(block):
    bad = []
    for seed in range(block, CASES, 4):
        n, Ps, holders, z, delta, members = make_case(seed)
        coalition = members if len(members) > 1 else None
        obs = None if coalition else np.array(members)
        views, t0 = flat_views(holders, members, n)
        blocked = np.isin(np.arange(n), members)
        width = max([ce.interior(int(k), int(m)) for k, m in
                     zip(views.kind, views.length, strict=True)], default=0) + 1
        tables = {acc: _pairs(tvt.time_varying_losses(Trace(n, holders), Ps, 1.0, delta, z,
                                                      acc, coalition, obs), members)
                  for acc in ("kov", "rdp", "pld", "exact")}
        for u in range(n):
            if u in members:
                continue
            truth, margins = exact_epsilon(holders, Ps, members, u, z, delta, views)
            for e in range(views.size):  # the tracker's laws are the enumerated ones
                law = tvt.view_law(Ps, blocked, np.full(n, 1 / n), int(views.kind[e]),
                                   int(views.length[e]), int(views.a[e]), int(views.b[e]),
                                   int(t0[e]), width)[u]
                c = ce.attributable(int(views.kind[e]), int(views.length[e]),
                                    views.key(e, u))
                want = np.zeros(width + 2)
                for cnt, p in margins[e].items():
                    want[cnt] = p
                got = np.zeros(width + 2)
                got[c:c + width] = law
                assert np.allclose(got, want, atol=1e-12), (seed, u, e)
            for acc, pairs in tables.items():
                if pairs[u] < truth - 1e-9:
                    bad.append(f"seed {seed} n={n} {acc} u={u}: {pairs[u]:.6g} < {truth:.6g}")
    assert not bad, "\n".join(bad)


def test_one_snapshot_is_the_homogeneous_tracker():
    """With every P_t alike the laws are :mod:`netdp.tracking.count_law`'s."""
    from scipy import sparse

    from netdp.tracking import count_law

    rng = np.random.default_rng(3)
    P = snapshots(6, rng)[0]
    steps = 40
    holders = walk([P] * steps, 1, rng)
    v = int(np.bincount(holders.ravel()).argmax())
    views, t0 = flat_views(holders, [v], 6)
    blocked = np.arange(6) == v
    reg = np.flatnonzero((views.kind == ce.REGULAR) & (views.length >= 4))
    assert reg.size
    got = np.stack([tvt.view_law([P] * steps, blocked, np.full(6, 1 / 6), ce.REGULAR,
                                 int(views.length[e]), int(views.a[e]), int(views.b[e]),
                                 int(t0[e]), steps) for e in reg])
    want, _ = count_law.bridge_interior_laws_batch(sparse.csr_array(P), blocked,
                                                   views.a[reg], views.b[reg],
                                                   views.length[reg] - 2, steps - 1)
    assert np.allclose(got[:, ~blocked], want[:, ~blocked], atol=1e-12)


def test_a_cut_law_keeps_the_tail_of_the_counts():
    """With fewer columns than interior positions, every column but the last is the
    exact law and the last holds ``P(count >= width - 1)``."""
    rng = np.random.default_rng(5)
    S = snapshots(4, rng)
    Ps = schedule(S, 1, 30)
    holders = walk(Ps, 1, rng)
    v = int(np.bincount(holders.ravel(), minlength=4).argmin())
    views, t0 = flat_views(holders, [v], 4)
    blocked = np.arange(4) == v
    checked = 0
    for e in range(views.size):
        kind, length = int(views.kind[e]), int(views.length[e])
        inner = ce.interior(kind, length)
        if inner < 4:
            continue
        args = (Ps, blocked, np.full(4, 0.25), kind, length, int(views.a[e]),
                int(views.b[e]), int(t0[e]))
        full = tvt.view_law(*args, inner + 1)
        cut = tvt.view_law(*args, 3)
        assert np.allclose(cut[:, :2], full[:, :2], atol=1e-12)
        assert np.allclose(cut[:, 2], full[:, 2:].sum(axis=1), atol=1e-12)
        checked += 1
    assert checked


def test_ignoring_time_falls_below_the_exact_loss():
    """The static graph of all contacts (the union of the snapshots) is not a sound model
    of a time-varying walk: here the snapshot in force forces the hidden path (1, 2, 1,
    2, 1 between the observer's holds), so node 1's count in the view is known; on the
    union, a 5-cycle, the token could also have gone 1, 2, 3, 2, 1, and the union's
    figure for node 1 falls below the enumerated exact loss. The time-varying tracker
    stays at or above it."""
    from scipy import sparse

    from netdp.tracking.walk_views import sound_graph_losses

    def simple(edges, n=5):
        adj = np.zeros((n, n))
        for a, b in edges:
            adj[a, b] = adj[b, a] = 1.0
        lonely = ~adj.any(axis=1)
        adj[lonely, lonely] = 1.0
        return adj / adj.sum(axis=1, keepdims=True)

    S = simple([(0, 1), (1, 2)])                 # in force for the whole walk
    union = simple([(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)])
    holders = np.array([[0, 1, 2, 1, 2, 1, 0]])  # observer 0: one cycle of 6 steps
    steps = holders.shape[1]
    Ps = [S] * steps
    z, delta, members = 1.0, 1e-6, [0]
    views, _ = flat_views(holders, members, 5)
    truth, _ = exact_epsilon(holders, Ps, members, 1, z, delta, views)
    timed = _pairs(tvt.time_varying_losses(Trace(5, holders), Ps, 1.0, delta, z, "exact",
                                           None, np.array(members)), members)
    static = _pairs(sound_graph_losses(Trace(5, holders), sparse.csr_array(union), 1.0,
                                       delta, z, "exact", None, np.array(members)), members)
    assert timed[1] >= truth - 1e-9
    assert static[1] < truth - 0.05, (static[1], truth)


@pytest.mark.parametrize("extend", [pytest.param(False, marks=pytest.mark.slow), True])
def test_laws_cut_to_their_tails_stay_above_the_enumerated_loss(monkeypatch, extend):
    """With the counts cut after one visit (``KMAX = (1,)``), every view longer than that
    is accounted through its tail at the worst count (``extend`` false: no laws beyond
    ``KMAX``), or through laws with twice the count, and so on (``extend``): either way
    still at or above the exact ε."""
    monkeypatch.setattr(tvt, "KMAX", (1,))
    if not extend:
        monkeypatch.setattr(walk_views, "EXTEND_BYTES", 0)
    bad, cut = [], 0
    for seed in range(0, CASES, 4):
        n, Ps, holders, z, delta, members = make_case(seed)
        coalition = members if len(members) > 1 else None
        obs = None if coalition else np.array(members)
        views, _ = flat_views(holders, members, n)
        cut += int(sum(ce.interior(int(k), int(m)) > 1 for k, m in
                       zip(views.kind, views.length, strict=True)))
        for acc in ("kov", "rdp", "pld"):
            pairs = _pairs(tvt.time_varying_losses(Trace(n, holders), Ps, 1.0, delta, z, acc,
                                                   coalition, obs), members)
            for u in range(n):
                if u in members:
                    continue
                truth, _ = exact_epsilon(holders, Ps, members, u, z, delta, views)
                if pairs[u] < truth - 1e-9:
                    bad.append(f"seed {seed} {acc} u={u}: {pairs[u]:.6g} < {truth:.6g}")
    assert cut > 0  # the tail path ran
    assert not bad, "\n".join(bad)
