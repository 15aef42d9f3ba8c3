"""Hidden paths drawn again given an observer's view: exact against enumeration."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from scipy import stats

from netdp.tracking.hidden_paths import known_steps, resample

# a 5-cycle with the chord 0-2; simple random walk
EDGES = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (0, 2)]


def simple_walk(n, edges, lazy=False):
    A = np.zeros((n, n))
    for a, b in edges:
        A[a, b] = A[b, a] = 1.0
    P = A / A.sum(axis=1, keepdims=True)
    return 0.5 * (np.eye(n) + P) if lazy else P


def exact_law(holders, P, start, observers):
    """Every walk of the same length with the same view, with its conditional probability
    (brute force over all n^steps walks)."""
    n, steps = P.shape[0], holders.size
    paths = np.indices((n,) * steps).reshape(steps, -1).T
    own = np.isin(paths, observers)
    known = own.copy()
    known[:, 1:] |= own[:, :-1]
    known[:, :-1] |= own[:, 1:]
    mask = known_steps(holders, observers)
    same = (known == mask).all(axis=1) & (paths[:, mask] == holders[mask]).all(axis=1)
    paths = paths[same]
    p = start[paths[:, 0]] * np.prod(P[paths[:, :-1], paths[:, 1:]], axis=1)
    paths, p = paths[p > 0], p[p > 0]
    return {tuple(int(x) for x in path): q for path, q in zip(paths, p / p.sum(),
                                                               strict=True)}


def chi_square_p(draws, law):
    counts = Counter(tuple(int(x) for x in d) for d in draws)
    assert set(counts) <= set(law), "a drawn walk is not consistent with the view"
    keys = sorted(law)
    observed = np.array([counts.get(k, 0) for k in keys], dtype=float)
    expected = np.array([law[k] for k in keys]) * len(draws)
    return stats.chisquare(observed, expected).pvalue


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(("holders", "observers"), [
    ([1, 2, 3, 4, 0, 2, 3], [0]),  # hidden: a bridge from the start, and the free end
    ([4, 0, 2, 1, 2, 0, 4], [1, 3]),  # a coalition; a bridge from the start into 2
])
def test_resampled_walks_have_the_exact_conditional_law(lazy, holders, observers):
    """A chi-square test of 20 000 draws against the enumerated law of every walk with the
    same view; at the fixed seed the p-value is a plain number, far from the 1e-4 cut."""
    P = simple_walk(5, EDGES, lazy)
    start = np.full(5, 0.2)
    holders = np.array(holders)
    law = exact_law(holders, P, start, observers)
    assert len(law) > 3, "the view should leave several walks possible"
    draws = resample(holders, P, start, observers, np.random.default_rng(11), 20_000)
    assert chi_square_p(draws, law) > 1e-4


def test_a_sampler_that_ignores_the_far_end_is_rejected():
    """The check can fail: a sampler that steps to a uniform allowed neighbour and only
    forces the last step (no backward messages) has the wrong law, and the same test
    rejects it."""
    P = simple_walk(5, EDGES)
    start = np.full(5, 0.2)
    holders = np.array([1, 2, 3, 4, 3, 2, 0])  # observer 0 sees only the last two steps
    observers = [0]
    law = exact_law(holders, P, start, observers)
    rng = np.random.default_rng(5)
    known = known_steps(holders, observers)
    naive = []
    while len(naive) < 20_000:
        path = holders.copy()
        path[0] = rng.choice([1, 2, 3, 4])
        ok = True
        for t in range(1, holders.size):
            if known[t]:
                ok = ok and P[path[t - 1], path[t]] > 0
                continue
            options = [y for y in range(5) if P[path[t - 1], y] > 0 and y not in observers]
            path[t] = rng.choice(options)
        if ok:
            naive.append(path)
    assert chi_square_p(np.array(naive), law) < 1e-6
    good = resample(holders, P, start, observers, np.random.default_rng(6), 20_000)
    assert chi_square_p(good, law) > 1e-4


def test_the_view_is_kept_and_hidden_holders_avoid_the_observers():
    rng = np.random.default_rng(1)
    n = 30
    P = rng.random((n, n)) * (rng.random((n, n)) < 0.2)
    P += np.eye(n) * 1e-3
    P /= P.sum(axis=1, keepdims=True)
    holders = np.empty(400, dtype=np.int64)
    holders[0] = 0
    for t in range(1, holders.size):
        holders[t] = rng.choice(n, p=P[holders[t - 1]])
    observers = [int(holders[50]), int(holders[200])]
    draws = resample(holders, P, np.full(n, 1 / n), observers, np.random.default_rng(2), 50)
    known = known_steps(holders, observers)
    assert np.all(draws[:, known] == holders[known])
    assert not np.isin(draws[:, ~known], observers).any()
    assert np.all(P[draws[:, :-1], draws[:, 1:]] > 0)  # every hop is a move of the walk
    assert (draws[:, ~known] != holders[~known]).any()  # and the hidden part does change


def test_the_ring_has_one_path():
    n = 6
    P = np.roll(np.eye(n), 1, axis=1)
    holders = np.arange(18) % n
    draws = resample(holders, P, np.eye(n)[0], [2], np.random.default_rng(0), 5)
    assert np.all(draws == holders)
