"""Laws of visit counts (netdp.tracking.count_law) against path enumeration, an independent
forward recursion, the union-bound expectation and the complete graph's closed forms."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import sparse, stats

from netdp.core.errors import InputError
from netdp.tracking import complete_law as CL
from netdp.tracking import count_law as cl
from netdp.tracking._kernels import count_law

# --------------------------------------------------------------------------------------
# Small graphs (n = 5) and oracles
# --------------------------------------------------------------------------------------


def ring() -> np.ndarray:
    """Directed cycle 0 -> 1 -> ... -> 4 -> 0."""
    return np.roll(np.eye(5), 1, axis=1)


def complete(n: int = 5, self_moves: bool = True) -> np.ndarray:
    if self_moves:
        return np.full((n, n), 1.0 / n)
    return (np.ones((n, n)) - np.eye(n)) / (n - 1)


def lazy_ring() -> np.ndarray:
    P = 0.5 * np.eye(5)
    for i in range(5):
        P[i, (i + 1) % 5] += 0.25
        P[i, (i - 1) % 5] += 0.25
    return P


def irregular() -> np.ndarray:
    """The simple walk on an undirected graph with degrees 2, 3, 4, 3, 2 (not regular)."""
    A = np.zeros((5, 5))
    for x, y in [(0, 1), (0, 2), (1, 2), (2, 3), (3, 4), (1, 3), (2, 4)]:
        A[x, y] = A[y, x] = 1.0
    return A / A.sum(axis=1, keepdims=True)


def directed() -> np.ndarray:
    """A directed graph with unequal weights and no symmetric structure."""
    P = np.zeros((5, 5))
    for x, y, wgt in [(0, 1, 2), (0, 2, 1), (1, 2, 1), (1, 4, 3), (1, 1, 1), (2, 0, 1),
                      (2, 3, 2), (3, 1, 1), (3, 4, 1), (4, 0, 1), (4, 2, 2), (4, 3, 1)]:
        P[x, y] = wgt
    return P / P.sum(axis=1, keepdims=True)


GRAPHS = {"ring": ring, "complete": complete,
          "complete-noself": lambda: complete(self_moves=False), "lazy-ring": lazy_ring,
          "irregular": irregular, "directed": directed}
OBSERVERS = [(0,), (0, 2)]


def enumerate_bridge(P: np.ndarray, W, a: int, b: int, L: int):
    """``(I law, K law, Z)`` by enumerating every hidden path ``a, x_1..x_{L-1}, b``:
    ``I[u, k] = P(I_u = k)`` and ``K[u, k] = P(K_u = k)`` straight from the definitions."""
    n = P.shape[0]
    free = [x for x in range(n) if x not in W]
    interior, K, Z = np.zeros((n, L + 3)), np.zeros((n, L + 3)), 0.0
    inners = [()] if L == 0 else itertools.product(free, repeat=L - 1)
    for inner in inners:
        path = (a,) if L == 0 else (a, *inner, b)
        weight = np.prod([P[x, y] for x, y in itertools.pairwise(path)])
        if weight == 0.0:
            continue
        Z += weight
        for u in free:
            i = inner.count(u)
            interior[u, i] += weight
            K[u, i + (u == a) + (u == b) * (L >= 1)] += weight
    return (interior / Z, K / Z, Z) if Z > 0 else (None, None, 0.0)


def enumerate_first(P: np.ndarray, W, pi0: np.ndarray, b: int, i0: int):
    """The same for a first stretch: holders ``h_0..h_{i0-2}`` then ``b``."""
    n = P.shape[0]
    free = [x for x in range(n) if x not in W]
    interior, K, Z = np.zeros((n, i0 + 2)), np.zeros((n, i0 + 2)), 0.0
    for inner in itertools.product(free, repeat=i0 - 1):
        path = (*inner, b)
        weight = pi0[path[0]] * np.prod([P[x, y] for x, y in itertools.pairwise(path)])
        if weight == 0.0:
            continue
        Z += weight
        for u in free:
            i = inner.count(u)
            interior[u, i] += weight
            K[u, i + (u == b)] += weight
    return (interior / Z, K / Z, Z) if Z > 0 else (None, None, 0.0)


def dp_oracle(P: np.ndarray, W, a: int, b: int, L: int, u: int, kmax: int) -> np.ndarray:
    """``(P(I_u = 0..kmax), P(I_u > kmax))`` by the forward recursion over (holder, count
    so far), normalised at every step: independent of the first-passage code."""
    Q = P.copy()
    Q[list(W), :] = 0.0
    Q[:, list(W)] = 0.0
    f = np.zeros((P.shape[0], kmax + 2))
    f[a, 0] = 1.0
    for t in range(1, L + 1):
        g = Q.T @ f
        if t < L:
            g[u, 1:] = g[u, :-1] + np.r_[np.zeros(kmax), g[u, -1]]
            g[u, 0] = 0.0
        f = g / g.sum()
    return f[b] / f[b].sum()


def check_against(laws, tail, exact, W, kmax, tol=1e-12):
    """Every law (and its tail) against an exact table ``exact[u, k]``."""
    n = laws.shape[0]
    wide = np.zeros((n, max(exact.shape[1], kmax + 2)))
    wide[:, :exact.shape[1]] = exact
    np.testing.assert_allclose(laws, wide[:, :kmax + 1], rtol=0, atol=tol)
    np.testing.assert_allclose(tail, wide[:, kmax + 1:].sum(axis=1), rtol=0, atol=tol)
    free = np.ones(n, dtype=bool)
    free[list(W)] = False
    np.testing.assert_allclose(laws[free].sum(axis=1) + tail[free], 1.0, atol=1e-13)
    assert not laws[~free].any() and not tail[~free].any()


# --------------------------------------------------------------------------------------
# Brute force on every small graph
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("W", OBSERVERS, ids=["w1", "w2"])
@pytest.mark.parametrize("name", list(GRAPHS))
def test_bridges_match_enumeration(name, W):
    P = GRAPHS[name]()
    free = [x for x in range(5) if x not in W]
    cases, exact, impossible = [], [], []
    for a, b in itertools.product(free, repeat=2):
        for L in range(6):  # m = 2..7
            if L == 0 and a != b:
                continue
            interior, K, Z = enumerate_bridge(P, W, a, b, L)
            (cases if Z > 0 else impossible).append((a, b, L))
            if Z > 0:
                exact.append((interior, K))
    assert len(cases) >= 4
    order = np.random.default_rng(7).permutation(len(cases))  # unsorted on purpose
    a, b, L = (np.array([cases[i][j] for i in order]) for j in range(3))
    for kmax in (0, 1, 2, 6):
        laws, tail = cl.bridge_interior_laws_batch(sparse.csr_matrix(P), list(W), a, b, L,
                                                   kmax)
        for c, i in enumerate(order):
            counts, K = exact[i]
            check_against(laws[c], tail[c], counts, W, kmax)
            klaws, ktail = cl.contribution_laws(laws[c], tail[c], a[c], b[c], L[c] + 2)
            check_against(klaws, ktail, K, W, kmax)
    for c in range(0, len(cases), 7):  # the one-cycle form is the batch of one
        one, over = cl.bridge_interior_laws(P, list(W), a[c], b[c], L[c], 3)
        check_against(one, over, exact[order[c]][0], W, 3)
    for a_, b_, L_ in impossible:
        with pytest.raises(ValueError, match="probability 0"):
            cl.bridge_interior_laws(P, list(W), a_, b_, L_, 2)


@pytest.mark.parametrize("W", OBSERVERS, ids=["w1", "w2"])
@pytest.mark.parametrize("name", list(GRAPHS))
def test_first_stretches_match_enumeration(name, W):
    P = GRAPHS[name]()
    free = [x for x in range(5) if x not in W]
    for pi0 in (np.full(5, 0.2), np.array([0.3, 0.0, 0.1, 0.4, 0.2])):
        cases, exact = [], []
        for b in free:
            for i0 in range(1, 7):
                interior, K, Z = enumerate_first(P, W, pi0, b, i0)
                if Z > 0:
                    cases.append((b, i0))
                    exact.append((interior, K))
                else:
                    with pytest.raises(ValueError, match="probability 0"):
                        cl.first_stretch_laws(P, list(W), pi0, b, i0, 2)
        b, i0 = np.array(cases).T
        for kmax in (0, 1, 5):
            laws, tail = cl.first_stretch_laws_batch(P, list(W), pi0, b, i0, kmax)
            for c, (counts, K) in enumerate(exact):
                check_against(laws[c], tail[c], counts, W, kmax)
                klaws, ktail = cl.contribution_laws(laws[c], tail[c], None, b[c], 0)
                check_against(klaws, ktail, K, W, kmax)


def test_a_hand_made_cycle_on_the_ring():
    """Ring 0 -> 1 -> ... -> 4, W = {0}, m = 5: the path 1, 2, 3, 4 is forced; its interior
    positions hold 2 and 3 only (a = 1 and b = 4 are not interior)."""
    laws, tail = cl.bridge_interior_laws(ring(), [0], 1, 4, 3, 2)
    np.testing.assert_array_equal(laws[[1, 4], 0], 1.0)
    np.testing.assert_array_equal(laws[[2, 3], 1], 1.0)
    k, _ = cl.contribution_laws(laws, tail, 1, 4, 5)
    np.testing.assert_array_equal(k[1:, 1], 1.0)
    first, _ = cl.first_stretch_laws(ring(), [0], np.full(5, 0.2), 3, 3, 2)  # h = 1, 2, 3
    np.testing.assert_array_equal(first[[1, 2, 4, 3], [1, 1, 0, 0]], 1.0)


def test_start_law_on_the_observers_only_is_refused():
    pi0 = np.array([1.0, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="first stretch .*probability 0"):
        cl.first_stretch_laws(lazy_ring(), [0], pi0, 2, 3, 2)
    with pytest.raises(ValueError, match="outside the observer set"):
        cl.bridge_interior_laws(lazy_ring(), [0], 0, 2, 3, 2)
    with pytest.raises(ValueError, match="needs a = b"):
        cl.bridge_interior_laws(lazy_ring(), [0], 1, 2, 0, 2)


# --------------------------------------------------------------------------------------
# Longer bridges: expectation, forward recursion, scaling
# --------------------------------------------------------------------------------------


def union_bound(P, W, a, b, L):
    """``Σ_{k=1}^{L-1} (Q^k)_{au} (Q^{L-k})_{ub} / (Q^L)_{ab}``."""
    Q = P.copy()
    Q[list(W), :] = 0.0
    Q[:, list(W)] = 0.0
    powers = [np.eye(P.shape[0])]
    for _ in range(L):
        powers.append(powers[-1] @ Q)
    return sum(powers[k][a, :] * powers[L - k][:, b] for k in range(1, L)) / powers[L][a, b]


def random_graph(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    A = (rng.random((n, n)) < 0.35) * rng.random((n, n))
    A[np.arange(n), (np.arange(n) + 1) % n] += 0.5  # strongly connected
    return A / A.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("W", [(0,), (0, 3)], ids=["w1", "w2"])
def test_mean_is_the_union_bound_and_laws_match_the_recursion(W):
    P = random_graph(8, seed=3)
    a, b, L = np.array([1, 2, 5, 4]), np.array([4, 2, 7, 6]), np.array([17, 30, 2, 9])
    laws, tail = cl.bridge_interior_laws_batch(P, list(W), a, b, L, kmax=40)
    for c in range(a.size):
        assert not tail[c].any()
        mean = laws[c] @ np.arange(41)
        np.testing.assert_allclose(mean, union_bound(P, W, a[c], b[c], L[c]), atol=1e-12)
    small, over = cl.bridge_interior_laws_batch(P, list(W), a, b, L, kmax=3)
    for c in range(a.size):
        for u in set(range(8)) - set(W):
            law = dp_oracle(P, W, a[c], b[c], L[c], u, 3)
            np.testing.assert_allclose(small[c, u], law[:4], rtol=1e-10, atol=1e-14)
            np.testing.assert_allclose(over[c, u], law[4], rtol=1e-10, atol=1e-14)


def test_long_bridge_keeps_relative_precision():
    """Holders iid: ``P[x] = q`` for every ``x``, so ``I_u ~ Binomial(L - 1, q_u / q(S))``.
    ``(Q^L)_{ab} = 0.1^400`` is below float64's range without the scaling, and the
    probabilities near 1e-60 must keep their relative precision."""
    q = np.array([0.9, 1e-4, 0.0333, 0.0333, 0.1 - 1e-4 - 0.0666])
    P = np.tile(q, (5, 1))
    L, kmax = 400, 8
    laws, tail = cl.bridge_interior_laws(P, [0], 2, 3, L, kmax)
    for u in range(1, 5):
        p = q[u] / q[1:].sum()
        exact = stats.binom.pmf(np.arange(kmax + 1), L - 1, p)
        np.testing.assert_allclose(laws[u], exact, rtol=1e-9, atol=0)
        np.testing.assert_allclose(tail[u], stats.binom.sf(kmax, L - 1, p), rtol=1e-9)
    assert 1e-70 < laws[2, 1] < 1e-50


def test_a_fast_decaying_part_is_redone_on_its_corridor(monkeypatch):
    """W = {2} splits the taboo chain: {0, 1} decays like 0.03^L, {3, 4, 5} like 0.9^L.
    A long cycle in {0, 1} is redone on its corridor (and nodes 3-5 get I = 0 surely);
    one in {3, 4, 5} is not."""
    P = np.array([[0.01, 0.02, 0.97, 0, 0, 0],
                  [0.02, 0.005, 0.975, 0, 0, 0],
                  [0.2, 0.2, 0, 0.6, 0, 0],
                  [0, 0, 0.1, 0.3, 0.3, 0.3],
                  [0, 0, 0, 0.5, 0, 0.5],
                  [0, 0, 0.2, 0.4, 0.4, 0]])
    calls = []
    corridor = cl._corridor
    monkeypatch.setattr(cl, "_corridor", lambda *args: calls.append(args) or corridor(*args))
    a, b, L = np.array([3, 0]), np.array([5, 1]), np.array([200, 200])
    laws, tail = cl.bridge_interior_laws_batch(P, [2], a, b, L, kmax=3)
    assert len(calls) == 1 and calls[0][2:] == (0, 1)
    for c in range(2):
        for u in (0, 1, 3, 4, 5):
            law = dp_oracle(P, [2], a[c], b[c], L[c], u, 3)
            np.testing.assert_allclose(laws[c, u], law[:4], rtol=1e-10, atol=1e-300)
            np.testing.assert_allclose(tail[c, u], law[4], rtol=1e-10, atol=1e-300)
    np.testing.assert_array_equal(laws[1, 3:, 0], 1.0)


def test_a_bridge_below_float64_is_refused():
    """A lazy directed path of 1100 steps crossed in exactly 1100 steps: probability
    2^-1100 with no faster-growing part to scale away; refused, not returned as noise."""
    N = 1100
    P = sparse.diags([np.full(N + 1, 0.5), np.full(N, 0.5)], [0, 1], format="csr")
    with pytest.raises(ValueError, match="below float64"):
        cl.bridge_interior_laws(P, [N], 0, N - 1, N - 1, 2)


def test_grid_batch_equals_single_cycles_and_union_bound(monkeypatch):
    """A 10x10 grid walk, observer at the centre, its cycles from a simulated walk; the
    threads sharing the nodes give what one thread gives."""
    side = 10
    n = side * side
    P = grid_walk(side, metropolis=False)
    rng = np.random.default_rng(11)
    walk = [0]
    for _ in range(4000):
        walk.append(rng.choice(n, p=P[walk[-1]]))
    walk = np.array(walk)
    v = 55
    at = np.flatnonzero(walk == v)
    m = np.diff(at)
    keep = (m >= 2) & (m <= 120)
    a, b, L = walk[at[:-1][keep] + 1], walk[at[1:][keep] - 1], m[keep] - 2
    assert a.size >= 10
    monkeypatch.setattr(cl, "CACHE_BYTES", 0)  # both computed afresh
    laws, tail = cl.bridge_interior_laws_batch(sparse.csr_matrix(P), [v], a, b, L, kmax=4)
    monkeypatch.setattr(cl, "PARALLEL_WORK", 0.0)
    monkeypatch.setattr(cl.nb, "get_num_threads", lambda: 3)
    threaded = cl.bridge_interior_laws_batch(sparse.csr_matrix(P), [v], a, b, L, kmax=4)
    np.testing.assert_array_equal(threaded[0], laws)
    np.testing.assert_array_equal(threaded[1], tail)
    monkeypatch.undo()
    for c in range(0, a.size, 4):
        one, over = cl.bridge_interior_laws(P, [v], a[c], b[c], L[c], 4)
        np.testing.assert_allclose(one, laws[c], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(over, tail[c], rtol=1e-12, atol=1e-15)
    c = int(np.argmax(L))
    full, none = cl.bridge_interior_laws(P, [v], a[c], b[c], L[c], L[c])
    assert not none.any()
    np.testing.assert_allclose(full @ np.arange(L[c] + 1), union_bound(P, [v], a[c], b[c],
                                                                       L[c]), atol=1e-11)


# --------------------------------------------------------------------------------------
# The complete graph
# --------------------------------------------------------------------------------------

ENDS = {  # (a_is_u, b_is_u, a_is_b) -> (a, b), with u = 2 and W within {0, 1}
    (False, False, False): (3, 4), (False, False, True): (3, 3), (True, False, False): (2, 3),
    (False, True, False): (3, 2), (True, True, True): (2, 2)}


@pytest.mark.parametrize("self_moves", [True, False])
@pytest.mark.parametrize("w", [1, 2])
def test_complete_closed_forms_equal_the_general_code(w, self_moves):
    n, u = 6, 2
    P, W = complete(n, self_moves), list(range(w))
    for flags, (a, b) in ENDS.items():
        L = np.array([x for x in range(26) if not ((x == 0 and a != b)
                                                   or (x == 1 and a == b and not self_moves))])
        general, _ = cl.bridge_interior_laws_batch(P, W, np.full(L.size, a), np.full(L.size, b),
                                                   L, 24)
        for c, x in enumerate(L):
            law = CL.complete_interior_law(max(x - 1, 0), n, w, self_moves, *flags)
            np.testing.assert_allclose(general[c, u, :law.size], law, rtol=0, atol=1e-12)
            assert not general[c, u, law.size:].any()
    pi0 = np.full(n, 1.0 / n)
    i0 = np.arange(1, 21)
    for b in (2, 4):
        general, _ = cl.first_stretch_laws_batch(P, W, pi0, np.full(i0.size, b), i0, 19)
        for c, x in enumerate(i0):
            law = CL.complete_first_stretch_law(x - 1, n, w, self_moves, b_is_u=b == u)
            np.testing.assert_allclose(general[c, u, :law.size], law, rtol=0, atol=1e-12)
            assert not general[c, u, law.size:].any()


def test_complete_without_self_moves_depends_on_the_ends():
    """n = 4, w = 1, m = 4: the one interior holder differs from a and b, so it is u
    surely when a != b (both not u) and with probability 1/2 when a = b."""
    np.testing.assert_allclose(CL.complete_interior_law(1, 4, 1, False), [0, 1], atol=1e-15)
    np.testing.assert_allclose(CL.complete_interior_law(1, 4, 1, False, a_is_b=True),
                               [0.5, 0.5], atol=1e-15)
    np.testing.assert_allclose(CL.complete_interior_law(1, 4, 1, False, a_is_u=True), [1, 0],
                               atol=1e-15)
    with pytest.raises(ValueError, match="probability 0"):  # S = {u, x}: x, u, x, u, x ...
        CL.complete_interior_law(2, 3, 1, False, a_is_b=True)
    with pytest.raises(InputError):
        CL.complete_interior_law(2, 5, 1, False, a_is_u=True, a_is_b=True)
    with pytest.raises(InputError, match="3 distinct nodes"):
        CL.complete_interior_law(2, 4, 2, False)


def test_presence_with_self_moves():
    """w = 1: ``P(I_u >= 1) = 1 - (1 - 1/(n-1))^(m-3)``, from the general code."""
    n = 6
    P = complete(n)
    m = np.arange(3, 31)
    laws, _ = cl.bridge_interior_laws_batch(P, [0], np.ones_like(m), np.full_like(m, 4), m - 2,
                                            0)
    expected = 1 - (1 - 1 / (n - 1)) ** (m - 3)
    for u in (1, 2, 4):
        np.testing.assert_allclose(1 - laws[:, u, 0], expected, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------------------
# Periods, kept series and the continuation of the powers
# --------------------------------------------------------------------------------------


def grid_walk(side: int, metropolis: bool) -> np.ndarray:
    """The walk on a ``side x side`` grid: simple (bipartite: returns at even steps only)
    or Metropolis (self-moves at the border: aperiodic)."""
    n = side * side
    A = np.zeros((n, n))
    for x in range(n):
        r, c = divmod(x, side)
        for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
            if 0 <= r + dr < side and 0 <= c + dc < side:
                A[x, (r + dr) * side + c + dc] = 1.0
    deg = A.sum(axis=1)
    if not metropolis:
        return A / deg[:, None]
    P = A / np.maximum(deg[:, None], deg[None, :])
    P[np.arange(n), np.arange(n)] = 1.0 - P.sum(axis=1)
    return P


def layered() -> np.ndarray:
    """Three layers of two nodes, every move to the next layer (weights unequal): every
    return takes a multiple of 3 steps, and a first passage's length is set mod 3 by its
    start."""
    P = np.zeros((6, 6))
    for x in range(6):
        nxt = [2 * ((x // 2 + 1) % 3), 2 * ((x // 2 + 1) % 3) + 1]
        P[x, nxt] = [0.03, 0.97] if x % 2 else [0.9, 0.1]
    return P


@pytest.mark.parametrize("name", ["bipartite", "period-3"])
def test_periodic_chains_keep_relative_precision(name):
    """Returns only at multiples of the period: the powers are taken on them. Every count
    against the forward recursion, down to probabilities far below 1e-20."""
    if name == "bipartite":
        P, W, kmax = grid_walk(4, metropolis=False), [5], 40
        a, b, L = np.array([1, 4, 6, 9, 1]), np.array([9, 4, 15, 0, 1]), np.array([90, 72, 61,
                                                                                    5, 2])
    else:
        P, W, kmax = layered(), [0], 40
        a, b, L = np.array([2, 3, 1]), np.array([1, 5, 1]), np.array([89, 88, 60])
    laws, tail = cl.bridge_interior_laws_batch(P, W, a, b, L, kmax)
    smallest = 1.0
    for c in range(a.size):
        for u in set(range(P.shape[0])) - set(W):
            law = dp_oracle(P, W, a[c], b[c], L[c], u, kmax)
            np.testing.assert_allclose(laws[c, u], law[:kmax + 1], rtol=1e-10, atol=1e-300)
            np.testing.assert_allclose(tail[c, u], law[kmax + 1], rtol=1e-10, atol=1e-300)
            smallest = min(smallest, laws[c, u][laws[c, u] > 0].min())
    assert smallest < 1e-20


@pytest.mark.parametrize("metropolis", [False, True], ids=["simple", "metropolis"])
def test_kept_series_and_continued_powers_give_the_fresh_numbers(monkeypatch, metropolis):
    """The caller's pattern: all the cycles with a small kmax, then the heavy ones again
    with larger ones (bridges and first stretches alternating). The kept series, the kept
    direct ``P(I_u = 0)`` and the continued powers give exactly the numbers of a fresh
    computation (same scaling, same sums)."""
    P = sparse.csr_matrix(grid_walk(6, metropolis))
    n, v = P.shape[0], 14
    rng = np.random.default_rng(5)
    walk = [0]
    for _ in range(6000):
        walk.append(rng.choice(n, p=P[walk[-1]].toarray().ravel()))
    walk = np.array(walk)
    at = np.flatnonzero(walk == v)
    m = np.diff(at)
    keep = m >= 2
    a, b, L = walk[at[:-1][keep] + 1], walk[at[1:][keep] - 1], m[keep] - 2
    assert a.size >= 20 and L.max() > 150
    pi0 = np.full(n, 1.0 / n)
    i0 = np.array([40, 7, 160, 95])
    fb = np.array([3, 20, 8, 15])
    heavy = [np.arange(a.size), np.argsort(L)[-6:], np.argsort(L)[-2:]]
    heavy_first = [np.arange(i0.size), np.array([0, 2, 3]), np.array([2])]
    cl._KEPT.clear()
    got = []
    for kmax, sel, fsel in zip((4, 12, 40), heavy, heavy_first, strict=True):
        got.append((cl.bridge_interior_laws_batch(P, [v], a[sel], b[sel], L[sel], kmax),
                    cl.first_stretch_laws_batch(P, [v], pi0, fb[fsel], i0[fsel], kmax)))
    assert len(cl._KEPT) == 2
    monkeypatch.setattr(cl, "CACHE_BYTES", 0)  # nothing kept: every call afresh
    cl._KEPT.clear()
    small = 0
    for (bridge, first), kmax, sel, fsel in zip(got, (4, 12, 40), heavy, heavy_first,
                                                strict=True):
        fresh_b = cl.bridge_interior_laws_batch(P, [v], a[sel], b[sel], L[sel], kmax)
        fresh_f = cl.first_stretch_laws_batch(P, [v], pi0, fb[fsel], i0[fsel], kmax)
        for x, y in zip((*bridge, *first), (*fresh_b, *fresh_f), strict=True):
            np.testing.assert_array_equal(x, y)
        small += int((fresh_b[0][:, :, 0] < count_law.DIRECT_ZERO).sum())
    assert not cl._KEPT
    assert small >= 20  # P(I_u = 0) read from the paths avoiding u (kept, then reused)


def test_continued_powers_match_the_recursion():
    """A continued call (kmax 3, then 25 on a subset) against the forward recursion."""
    P = grid_walk(5, metropolis=True)
    W = [12]
    a, b, L = np.array([7, 11, 13]), np.array([17, 11, 2]), np.array([140, 33, 77])
    cl._KEPT.clear()
    cl.bridge_interior_laws_batch(P, W, a, b, L, 3)
    laws, tail = cl.bridge_interior_laws_batch(P, W, a[[0, 2]], b[[0, 2]], L[[0, 2]], 25)
    for c, i in enumerate((0, 2)):
        for u in set(range(25)) - set(W):
            law = dp_oracle(P, W, a[i], b[i], L[i], u, 25)
            np.testing.assert_allclose(laws[c, u], law[:26], rtol=1e-10, atol=1e-300)
            np.testing.assert_allclose(tail[c, u], law[26], rtol=1e-10, atol=1e-300)


def _lumped_law_oracle(start, s, b_is_u, interior, first):
    """The plain-numpy forward recursion of the lumped chain (the compiled loop's
    oracle, :func:`netdp.tracking.complete_law._lumped_forward`): every column, every
    step."""
    steps = interior if first else interior + 1
    M = CL.lumped_moves(s, b_is_u)
    f = np.zeros((3, steps + 1))
    f[:, 0] = start
    if first:
        f[0, :] = np.roll(f[0, :], 1)
    for t in range(1, steps + 1):
        g = M.T @ f
        if t < steps:
            g[0, 1:] = g[0, :-1].copy()
            g[0, 0] = 0.0
        f = g / g.sum()
    law = f[0 if b_is_u else 1, :interior + 1]
    return law / law.sum()


@pytest.mark.parametrize("first", [False, True])
def test_the_compiled_lumped_chain_is_the_numpy_recursion(first):
    """Without self-moves the complete graph's count laws come from one compiled loop
    that moves only the columns a count can reach and drops those below 1e-300: equal to
    the full recursion to 1e-13 wherever a mass is above 1e-250, on short and long
    views (up to 2,000 positions) and every placement of the ends."""
    rng = np.random.default_rng(5)
    for _ in range(60):
        s = int(rng.integers(4, 300))
        interior = int(rng.integers(1, 2000))
        b_is_u = bool(rng.integers(2))
        o = s - 1 - (0 if b_is_u else 1)
        classes = [0, 2] if b_is_u else [0, 1, 2]  # a's class: u, b or the others
        start = (np.array([1.0, 0.0 if b_is_u else 1.0, float(o)]) if first
                 else np.eye(3)[int(rng.choice(classes))])
        want = _lumped_law_oracle(start, s, b_is_u, interior, first)
        got = CL._lumped_law(start, s, b_is_u, interior, first)
        assert got.shape == want.shape
        big = want > 1e-250
        np.testing.assert_allclose(got[big], want[big], rtol=1e-13)
        assert np.all(got[~big] <= 1e-250)
    # the columns no longer moved keep their mass at the largest count (the pessimistic
    # side), where the full recursion's has underflowed to 0
    got = CL._lumped_law(np.eye(3)[2], 200, False, 3000, first)
    assert 0.0 < got[-1] < 1e-290
