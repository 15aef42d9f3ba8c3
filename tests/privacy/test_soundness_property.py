"""Soundness as a property: on random small walks, every sound accountant's figure is at or
above the exact loss of the observer's view, for every pair.

The exact loss is computed here from the definitions, independently of the trackers: each
view (the stretch before the observer's first hold of a token, each cycle between two of
its holds) is the pair ``N(0, s²)`` against ``Σ_k P(K = k) N(k, s²)`` with ``s² = z² ×``
(the draws the observer does not know), ``K`` the node's contributions, whose law is read
from :mod:`netdp.tracking.count_law` (itself checked against path enumeration); the views
compose exactly (:mod:`netdp.accounting.mixture_pld`), rounded *down* to the grid so that
the figure is a lower bound of the exact ε. A sound figure must not be below it.

The same check catches each of the review's findings when put back (the reference
convention: ``m`` draws per cycle, presence counted once, the rate ``1 - (1 - 1/n)^m``).
The default suite runs :data:`CASES` random cases at ``2 k δ`` and as many at the one
target δ (spec Correction 7); ``-m slow`` runs 2 000 more at the target (10 000 with
``NETDP_SOUNDNESS_CASES=10000``).
"""

from __future__ import annotations

import math
import os
from unittest import mock

import numpy as np
import pytest
from scipy import sparse

from netdp.accounting import loss_pmf
from netdp.accounting import mixture_pld as mp
from netdp.engine.trace import Trace
from netdp.tracking import count_law, walk_views
from netdp.tracking import cycle_entries as ce
from netdp.tracking.loss_table import walk_losses
from netdp.tracking.walk_views import observer_views, sound_graph_losses

CASES = 48
#: Cases of the slow tier's run at the target, in blocks of :data:`BLOCK` (one test each).
SLOW_CASES = max(int(os.environ.get("NETDP_SOUNDNESS_CASES", "2000")), 200)
BLOCK = 200
STEP = 2e-3  # grid of the exact lower bound (it is rounded down: within k·STEP of exact)
GRAPHS = ("complete", "complete-noself", "ring", "lazy", "undirected", "directed")


def transition(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """A small walk of each kind (rows sum to 1)."""
    if kind == "complete":
        return np.full((n, n), 1.0 / n)
    if kind == "complete-noself":
        return (np.ones((n, n)) - np.eye(n)) / (n - 1)
    if kind == "ring":
        return np.roll(np.eye(n), 1, axis=1)
    if kind == "lazy":
        ring = np.roll(np.eye(n), 1, axis=1) + np.roll(np.eye(n), -1, axis=1)
        return 0.5 * np.eye(n) + 0.25 * ring
    adj = rng.random((n, n)) < 0.5
    np.fill_diagonal(adj, False)
    ring = np.roll(np.eye(n, dtype=bool), 1, axis=1)  # strongly connected
    adj |= ring
    if kind == "undirected":
        adj |= adj.T
    return adj / adj.sum(axis=1, keepdims=True)


def walk(P: np.ndarray, steps: int, tokens: int, rng: np.random.Generator) -> np.ndarray:
    n = P.shape[0]
    out = np.empty((tokens, steps), np.int64)
    for t in range(tokens):
        h = int(rng.integers(n))
        for i in range(steps):
            out[t, i] = h
            h = int(rng.choice(n, p=P[h]))
    return out


def exact_lower(holders: np.ndarray, P: np.ndarray, members: list[int], z: float,
                delta: float, target: float | None = None) -> dict[int, float]:
    """Each node's exact ε towards the observer set (rounded down), at ``target`` (else
    at ``2 k δ``)."""
    n = P.shape[0]
    blocked = np.zeros(n, bool)
    blocked[members] = True
    flat = np.where(np.isin(holders, members), n, holders).reshape(-1)
    views = observer_views(flat, holders.shape[1], np.flatnonzero(flat == n))
    if views.size == 0:
        return {u: 0.0 for u in range(n) if not blocked[u]}
    kmax = int(views.length.max())
    reg = np.flatnonzero(views.kind == ce.REGULAR)
    fst = np.flatnonzero(views.kind == ce.FIRST)
    laws = np.zeros((views.size, n, kmax + 1))
    if reg.size:
        laws[reg] = count_law.bridge_interior_laws_batch(
            sparse.csr_array(P), blocked, views.a[reg], views.b[reg], views.length[reg] - 2,
            kmax)[0]
    if fst.size:
        laws[fst] = count_law.first_stretch_laws_batch(
            sparse.csr_array(P), blocked, np.full(n, 1.0 / n), views.b[fst],
            views.length[fst], kmax)[0]
    dt = min(2.0 * views.size * delta, 1.0) if target is None else target
    out = {}
    for u in np.flatnonzero(~blocked):
        parts = []
        for e in range(views.size):
            kind, length = int(views.kind[e]), int(views.length[e])
            c = ce.attributable(kind, length, views.key(e, int(u)))
            w = np.concatenate([np.zeros(c), laws[e, u]])
            w = np.clip(w, 0.0, None)
            w /= w.sum()
            s = z * math.sqrt(ce.draws(kind, length))
            parts.append(mp.mixture_pld(w, s, h=STEP, pessimistic=False))
        out[int(u)] = float(loss_pmf.PldPair.compose_many(parts).epsilon(dt))
    return out


def case(seed: int, convention: str = "sound", at_target: bool = False) -> list[str]:
    """One random case; the violations found (empty if sound). ``at_target``: every
    figure at the one δ (spec Correction 7)."""
    rng = np.random.default_rng(seed)
    kind = GRAPHS[seed % len(GRAPHS)]
    n = int(rng.integers(3, 9))
    P = transition(kind, n, rng)
    steps = int(rng.integers(4, 61))
    tokens = int(rng.integers(1, 3))
    holders = walk(P, steps, tokens, rng)
    z = float(rng.uniform(0.5, 4.0))
    delta = float(10 ** rng.uniform(-9, -3))
    coalition = None
    if n >= 5 and rng.random() < 0.3:
        coalition = sorted(rng.choice(n, size=2, replace=False).tolist())
        members = coalition
    else:
        members = [int(rng.integers(n))]
    target = delta if at_target else None
    exact = exact_lower(holders, P, members, z, delta, target)
    trace = Trace(n, holders)
    bad = []
    for accountant in ("kov", "rdp", "pld"):
        if kind.startswith("complete") and convention == "reference" or (
                kind.startswith("complete") and convention == "sound"):
            if convention == "reference" and accountant == "pld" and kind != "complete":
                continue
            table = walk_losses(trace, 1.0, delta, z, accountant, coalition, keep_pairs=True,
                                convention=convention, self_moves=kind == "complete",
                                target=target)
        elif convention == "sound":
            table = sound_graph_losses(trace, P, 1.0, delta, z, accountant, coalition,
                                       observers=None if coalition else np.array(members),
                                       target=target)
        else:
            continue
        tables = [(accountant, table)]
        if accountant != "kov" and convention == "sound" and not kind.startswith("complete"):
            # the law bound in place of the exact laws (rdp's survival bound; pld's
            # dominating laws, netdp.tracking.view_plds)
            with (mock.patch.object(walk_views, "LAW_WORK", 0.0),
                  mock.patch.object(walk_views, "PLD_LAW_WORK", 0.0)):
                tables.append((f"{accountant} (law bound)", sound_graph_losses(
                    trace, P, 1.0, delta, z, accountant, coalition,
                    observers=None if coalition else np.array(members), target=target)))
        for name, got_table in tables:
            got = _pairs(got_table, members)
            for u, eps in exact.items():
                if got[u] < eps - 1e-9:
                    bad.append(f"{kind} n={n} {name} u={u}: {got[u]:.6g} < exact "
                               f"{eps:.6g}")
    return bad


def _pairs(table, members: list[int]) -> dict[int, float]:
    """``u -> ε(u → observer set)`` from a tracker's table (one observer, or a coalition)."""
    o = 0 if table.observers[0] < 0 else int(np.flatnonzero(table.observers == members[0])[0])
    lo = int(table.counts[:o].sum())
    out = {u: float(table.base[o]) for u in range(table.n) if u not in members}
    for node, eps in zip(table.nodes[lo:lo + table.counts[o]],
                         table.values[lo:lo + table.counts[o]], strict=True):
        out[int(node)] = float(eps)
    return out


@pytest.mark.parametrize("block", range(4))
def test_sound_accountants_are_never_below_the_exact_loss(block):
    bad = [v for seed in range(block, CASES, 4) for v in case(seed)]
    assert not bad, "\n".join(bad[:20])


@pytest.mark.parametrize("block", range(4))
def test_sound_accountants_are_never_below_the_exact_loss_at_the_target(block):
    bad = [v for seed in range(100_000 + block, 100_000 + CASES, 4)
           for v in case(seed, at_target=True)]
    assert not bad, "\n".join(bad[:20])


@pytest.mark.slow
@pytest.mark.parametrize("block", range(SLOW_CASES // BLOCK))
def test_sound_accountants_are_never_below_the_exact_loss_at_the_target_many(block):
    """:data:`SLOW_CASES` cases at the one target δ, what every sound run reports (the
    ``2 k δ`` of the library's ``target=None`` keeps its default cases above):
    ``NETDP_SOUNDNESS_CASES=10000 python -m pytest -m slow -n auto -k target_many`` runs
    the issue's 10 000 (about 2 h of CPU); CI's slow tier runs seeds 10 000 to 11 999."""
    blocks = SLOW_CASES // BLOCK
    bad = [v for seed in range(10_000 + block, 10_000 + blocks * BLOCK, blocks)
           for v in case(seed, at_target=True)]
    assert not bad, "\n".join(bad[:20])


def test_the_check_catches_the_reference_convention():
    """Put back the m-draw count, presence once and the reference rate (the reference
    convention on the complete graph): the same check finds pairs below the exact loss."""
    found = [v for seed in range(0, 120, 6) for v in case(seed, "reference")]
    assert found, "the property test cannot tell the reference convention from a sound one"
