"""The LDP cap read from the observer's view (spec Correction 6,
:mod:`netdp.tracking.view_cap`).

* the bound on the largest count of a node's contributions over the hidden paths
  consistent with a view is checked against brute-force enumeration of those paths on
  tiny graphs;
* the issue's example (complete graph, n = 6): a node that never held the token has
  realised LDP loss 0 but a positive exact loss; every sound accountant's capped figure
  stays at or above it (the realised cap gave 0);
* on small random walks every capped figure lies between the exact loss of the view and
  the LDP loss at the largest consistent count.
"""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from netdp.accounting.gdp import gaussian_epsilon
from netdp.engine.trace import Trace
from netdp.tracking.hidden_paths import known_steps
from netdp.tracking.loss_table import ldp_at, ldp_losses, walk_losses
from netdp.tracking.view_cap import cap_to_view, chain_stays, largest_counts, view_caps
from netdp.tracking.walk_views import sound_graph_losses

sys.path.insert(0, str(Path(__file__).parents[1] / "privacy"))
from test_soundness_property import exact_lower  # noqa: E402  (the exact loss, from definitions)


def tiny_graphs() -> dict[str, np.ndarray]:
    """Transition matrices of the enumeration's graphs."""
    def simple(adj: np.ndarray) -> np.ndarray:
        return adj / adj.sum(axis=1, keepdims=True)

    path = np.zeros((5, 5))
    for i in range(4):
        path[i, i + 1] = path[i + 1, i] = 1
    cycle = np.roll(np.eye(5), 1, axis=1) + np.roll(np.eye(5), -1, axis=1)
    return {"path": simple(path), "complete": np.full((4, 4), 0.25),
            "complete-noself": simple(np.ones((4, 4)) - np.eye(4)),
            "ring": np.roll(np.eye(5), 1, axis=1), "cycle": simple(cycle),
            "lazy-cycle": 0.5 * np.eye(5) + 0.25 * cycle}


def walk(P: np.ndarray, steps: int, tokens: int, rng: np.random.Generator) -> np.ndarray:
    n = P.shape[0]
    out = np.empty((tokens, steps), np.int64)
    for t in range(tokens):
        h = int(rng.integers(n))
        for i in range(steps):
            out[t, i] = h
            h = int(rng.choice(n, p=P[h]))
    return out


def enumerated_max(holders: np.ndarray, P: np.ndarray, members: list[int]) -> int:
    """The largest count of any node ``u`` outside ``members`` over every hidden path
    consistent with the members' view, by enumeration: the positions the view shows (its
    holds, the node before and after each) are the realised holders, every other position
    any node outside ``members``, the whole path a walk of ``P``."""
    n = P.shape[0]
    free = [w for w in range(n) if w not in members]
    best = np.zeros(n, np.int64)
    for row in holders:
        hidden = np.flatnonzero(~known_steps(row, members))
        grid = np.array(list(itertools.product(free, repeat=hidden.size)), np.int64)
        paths = np.tile(row, (grid.shape[0], 1))
        paths[:, hidden] = grid.reshape(grid.shape[0], hidden.size)
        paths = paths[np.all(P[paths[:, :-1], paths[:, 1:]] > 0, axis=1)]
        assert paths.shape[0] >= 1  # the realised path is one
        best += np.array([(paths == u).sum(axis=1).max() for u in range(n)])
    return int(best[free].max())


def plain_bound(holders: np.ndarray, members: list[int], stays: bool) -> int:
    """The documented bound, in plain Python: a run of ``L`` positions not the members'
    holds ``L`` (``⌈L/2⌉`` where the walk cannot stay) of a node's contributions."""
    stays = stays or bool((holders[:, 1:] == holders[:, :-1]).any())
    total = 0
    for row in holders.tolist():
        run = 0
        for h in [*row, members[0]]:  # a sentinel hold closes the last run
            if h in members:
                total += run if stays else (run + 1) // 2
                run = 0
            else:
                run += 1
    return total


CASES = [(name, seed) for name in tiny_graphs() for seed in range(6)]


@pytest.mark.parametrize(("name", "seed"), CASES)
def test_the_bound_is_at_least_every_consistent_hidden_path(name, seed):
    """For every observer (and a coalition of two), ``K̄`` is at or above the largest
    count over the enumerated consistent hidden paths, and is the documented rule."""
    P = tiny_graphs()[name]
    n = P.shape[0]
    rng = np.random.default_rng(100 * seed + len(name))
    holders = walk(P, int(rng.integers(3, 8)), int(rng.integers(1, 3)), rng)
    trace = Trace(n, holders)
    stays = chain_stays(P)
    got = largest_counts(trace, stays=stays)
    for v in range(n):
        assert got[v] >= enumerated_max(holders, P, [v]), (name, seed, v, holders)
        assert got[v] == plain_bound(holders, [v], stays)
    group = [0, 2]
    coalition = int(largest_counts(trace, group, stays)[0])
    assert coalition >= enumerated_max(holders, P, group)
    assert coalition == plain_bound(holders, group, stays)


def test_the_enumeration_catches_a_bound_too_small():
    """The check has teeth: halving the runs on a walk that may stay, or counting only the
    hidden positions (not the ends a node may hold), falls below the enumerated count."""
    halved = hidden_only = False
    for name in ("complete", "lazy-cycle"):
        P = tiny_graphs()[name]
        for seed in range(6):
            rng = np.random.default_rng(100 * seed + len(name))
            holders = walk(P, int(rng.integers(3, 8)), int(rng.integers(1, 3)), rng)
            for v in range(P.shape[0]):
                truth = enumerated_max(holders, P, [v])
                halved |= plain_bound(holders, [v], stays=False) < truth
                hidden = sum(int((~known_steps(row, [v])).sum()) for row in holders)
                hidden_only |= hidden < truth
    assert halved and hidden_only


def test_no_self_moves_halves_a_run():
    """Complete graph without self-moves: a run of 5 hidden positions holds at most 3 of a
    node's contributions, and the enumeration reaches 3."""
    P = tiny_graphs()["complete-noself"]
    holders = np.array([[0, 1, 2, 1, 3, 1, 0]])
    assert largest_counts(Trace(4, holders), stays=False)[0] == 3
    assert enumerated_max(holders, P, [0]) == 3
    assert largest_counts(Trace(4, holders), stays=True)[0] == 5
    # a trace that repeats a holder is read as a walk that may stay
    assert largest_counts(Trace(4, np.array([[0, 1, 1, 0]])), stays=False)[0] == 2


def test_lost_steps_count_as_positions_across_blocks(monkeypatch):
    """A fault's lost steps (-1) are positions of a run, under both rules, and the visit
    counts that the rule with stays reads are the same read in blocks of 3 holders."""
    from netdp.engine import trace as trace_module

    rng = np.random.default_rng(7)
    holders = rng.integers(-1, 5, size=(3, 11))
    trace = Trace(5, holders)
    truth = np.array([(holders == u).sum() for u in range(5)])
    monkeypatch.setattr(trace_module, "_VISIT_BLOCK", 3)
    assert np.array_equal(trace.visits(), truth)
    for stays in (True, False):
        got = largest_counts(trace, stays=stays)
        for v in range(5):
            assert got[v] == plain_bound(holders, [v], stays), (stays, v)
        assert largest_counts(trace, [1, 3], stays)[0] == plain_bound(holders, [1, 3], stays)


# ----------------------------------------------------------------- the example

EXAMPLE = np.array([[2, 4, 2, 5, 1, 1, 1, 5], [1, 2, 2, 1, 4, 0, 0, 2]])


@pytest.mark.parametrize("accountant", ["kov", "rdp", "pld", "exact"])
def test_a_node_that_never_held_the_token_is_not_capped_to_zero(accountant):
    """Complete graph, n = 6, v = 0, u = 3, ε0 = 0.5 (issue 38): node 3 never held the
    token, so its realised LDP loss is 0, which the old cap made its figure; the view's
    exact loss is about 0.17 (0.1626 in the issue, at its δ). Through the sum task's own
    tracker (:func:`netdp.tasks.sum._walk_losses`), every sound accountant's figure is at
    or above the exact one."""
    from netdp.tasks import make_config, task_of
    from netdp.tasks.sum import _walk_losses

    config = make_config(task="sum", nodes=6, epsilon=0.5, delta=1e-6, seed=1)
    setup = task_of(config).prepare(config)
    trace = Trace(6, EXAMPLE)
    assert ldp_losses(trace, 0.5, 1e-6)[3] == 0.0  # the baseline column: never held
    table = _walk_losses(setup, trace, accountant, None, True)
    z = setup.mechanism.sigma / setup.mechanism.sensitivity
    exact = walk_losses(trace, 0.5, 1e-6, z, "exact", keep_pairs=True).matrix()[3, 0]
    assert exact > 0.16
    assert table.matrix()[3, 0] >= exact - 1e-12
    # and the cap it may meet: 14 positions not observer 0's (self-moves allowed)
    assert view_caps(trace, 0.5, 1e-6)[0] == pytest.approx(float(ldp_at(0.5, 1e-6, 14)))


# ------------------------------------------------------------- the capped figures' range

GRAPHS = ("complete", "complete-noself", "lazy", "undirected", "directed")


def random_case(seed: int):
    """A small random walk of the soundness property test's kinds: ``(P, holders,
    members, coalition, z, delta)``."""
    rng = np.random.default_rng(seed)
    kind = GRAPHS[seed % len(GRAPHS)]
    n = int(rng.integers(3, 8))
    if kind == "complete":
        P = np.full((n, n), 1.0 / n)
    elif kind == "complete-noself":
        P = (np.ones((n, n)) - np.eye(n)) / (n - 1)
    elif kind == "lazy":
        ring = np.roll(np.eye(n), 1, axis=1) + np.roll(np.eye(n), -1, axis=1)
        P = 0.5 * np.eye(n) + 0.25 * ring
    else:
        adj = rng.random((n, n)) < 0.5
        np.fill_diagonal(adj, False)
        adj |= np.roll(np.eye(n, dtype=bool), 1, axis=1)
        if kind == "undirected":
            adj |= adj.T
        P = adj / adj.sum(axis=1, keepdims=True)
    holders = walk(P, int(rng.integers(4, 31)), int(rng.integers(1, 3)), rng)
    coalition = None
    if n >= 5 and rng.random() < 0.3:
        coalition = sorted(rng.choice(n, size=2, replace=False).tolist())
    members = coalition or [int(rng.integers(n))]
    return kind, P, holders, members, coalition, float(rng.uniform(0.5, 4.0)), \
        float(10 ** rng.uniform(-9, -3))


def level(z: float, delta: float) -> float:
    """ε0 of one contribution: its Gaussian noise's (std ``z``, sensitivity 1) ε at δ."""
    return float(gaussian_epsilon(1.0 / z, delta))


def tables(kind, P, holders, members, coalition, z, delta):
    """Each sound accountant's table, uncapped (the trackers' own), for one observer."""
    trace = Trace(P.shape[0], holders)
    eps0 = level(z, delta)
    for accountant in ("kov", "rdp", "pld"):
        if kind.startswith("complete"):
            yield accountant, walk_losses(trace, eps0, delta, z, accountant, coalition,
                                          keep_pairs=True, self_moves=kind == "complete")
        else:
            yield accountant, sound_graph_losses(
                trace, P, eps0, delta, z, accountant, coalition,
                observers=None if coalition else np.array(members))


def pairs(table, members: list[int]) -> dict[int, float]:
    o = 0 if table.observers[0] < 0 else int(np.flatnonzero(table.observers == members[0])[0])
    lo = int(table.counts[:o].sum())
    out = {u: float(table.base[o]) for u in range(table.n) if u not in members}
    for node, eps in zip(table.nodes[lo:lo + table.counts[o]],
                         table.values[lo:lo + table.counts[o]], strict=True):
        out[int(node)] = float(eps)
    return out


@pytest.mark.parametrize("block", range(2))
def test_capped_figures_lie_between_the_exact_loss_and_the_cap(block):
    """Every pair of a capped table is at most the LDP loss at the largest consistent
    count (the plain-Python rule) and at least the exact loss of the view."""
    bad = []
    for seed in range(block, 40, 2):
        kind, P, holders, members, coalition, z, delta = random_case(seed)
        trace = Trace(P.shape[0], holders)
        exact = exact_lower(holders, P, members, z, delta)
        eps0 = level(z, delta)
        ceiling = float(ldp_at(eps0, delta, plain_bound(holders, members, chain_stays(P))))
        for accountant, raw in tables(kind, P, holders, members, coalition, z, delta):
            got = pairs(cap_to_view(raw, trace, eps0, delta, coalition, chain_stays(P)),
                        members)
            for u, eps in exact.items():
                if not eps - 1e-9 <= got[u] <= ceiling + 1e-12:
                    bad.append(f"{seed} {kind} {accountant} u={u}: {got[u]:.6g} outside "
                               f"[{eps:.6g}, {ceiling:.6g}]")
    assert not bad, "\n".join(bad[:20])


def test_the_realised_cap_falls_below_the_exact_loss():
    """The same cases, capped at each node's realised LDP loss (the cap before Correction
    6): some pair falls below the exact loss of its view."""
    found = []
    for seed in range(40):
        kind, P, holders, members, coalition, z, delta = random_case(seed)
        exact = exact_lower(holders, P, members, z, delta)
        ldp = ldp_losses(Trace(P.shape[0], holders), level(z, delta), delta)
        for accountant, raw in tables(kind, P, holders, members, coalition, z, delta):
            got = pairs(raw, members)
            found += [(seed, accountant, u) for u, eps in exact.items()
                      if min(got[u], ldp[u]) < eps - 1e-9]
    assert found


def test_the_cap_takes_unamplified_pairs_and_leaves_the_rest():
    """An unamplified pair (``inf``: a law too costly) falls back to the cap; a pair
    below the cap keeps its figure."""
    trace = Trace(6, EXAMPLE)
    raw = walk_losses(trace, 0.5, 1e-6, 2.0, "kov", keep_pairs=True)
    caps = view_caps(trace, 0.5, 1e-6)
    wild = raw.__class__(**{**raw.__dict__, "values": np.full(raw.values.size, math.inf)})
    capped = cap_to_view(wild, trace, 0.5, 1e-6)
    np.testing.assert_array_equal(capped.values, np.repeat(caps[raw.observers], raw.counts))
    np.testing.assert_array_equal(cap_to_view(raw, trace, 0.5, 1e-6).matrix(), raw.matrix())
    # in place: the same figures, in the table's own array
    values = wild.values
    again = cap_to_view(wild, trace, 0.5, 1e-6, in_place=True)
    assert again.values is values
    np.testing.assert_array_equal(again.values, capped.values)
