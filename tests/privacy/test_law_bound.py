"""The survival bound of :mod:`netdp.tracking.law_bound` against path enumeration and the
exact laws, its entries against a brute-force sum over every count (a cut tail is caught),
its compiled kernel against the plain-numpy oracle, and the losses it gives against the
exact loss of the observer's view (the property test's independent computation)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import sparse
from test_count_law import GRAPHS, enumerate_bridge, enumerate_first
from test_soundness_property import exact_lower, transition, walk

from netdp.engine.trace import Trace
from netdp.tracking import count_law, law_bound, walk_matrix, walk_views
from netdp.tracking import cycle_entries as ce
from netdp.tracking._kernels.law_bound import expected_log_table
from netdp.tracking.walk_views import observer_views, sound_graph_losses

ORDERS = np.array([2.0, 3.0, 5.0, 8.0, 16.0, 64.0])


def _log_survival(logB: np.ndarray, logrho: np.ndarray, logmu: np.ndarray,
                  top: int) -> np.ndarray:
    """``log S(k) = log min(1, B ρ^{k-1}, E[I] / k)`` for ``k = 1..top`` (rows: nodes)."""
    k = np.arange(1, top + 1)
    with np.errstate(invalid="ignore"):
        geo = logB[:, None] + (k[None, :] - 1) * logrho[:, None]
        return np.minimum(np.minimum(0.0, geo), logmu[:, None] - np.log(k)[None, :])


def _survival(logB, logrho, logmu, top):
    return np.exp(_log_survival(logB, logrho, logmu, top))


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_survival_bound_is_above_enumerated_laws(name):
    """Every view (a, b, L) with L up to 6 and every first stretch up to 5 steps, every
    node: ``P(I_u >= k) <= S_u(k)`` for every k, the laws from path enumeration."""
    P = GRAPHS[name]()
    n = P.shape[0]
    pi0 = np.full(n, 1.0 / n)
    for v in (0, 2):
        blocked = np.zeros(n, bool)
        blocked[v] = True
        free = [x for x in range(n) if x != v]
        kind, a, b, length, exact = [], [], [], [], []
        for x in free:
            for y in free:
                for L in range(0, 7):
                    if L == 0 and x != y:
                        continue
                    law, _, Z = enumerate_bridge(P, [v], x, y, L)
                    if Z > 0:
                        kind.append(ce.REGULAR), a.append(x), b.append(y)
                        length.append(L + 2), exact.append(law)
            for i0 in range(1, 6):
                law, _, Z = enumerate_first(P, [v], pi0, x, i0)
                if Z > 0:
                    kind.append(ce.FIRST), a.append(-1), b.append(x)
                    length.append(i0), exact.append(law)
        logB, logrho, logmu, keep = law_bound.survival_logs(
            sparse.csr_array(P), blocked, pi0, np.array(kind), np.array(a), np.array(b),
            np.array(length))
        for e, law in enumerate(exact):
            surv = np.cumsum(law[keep][:, ::-1], axis=1)[:, ::-1][:, 1:]  # P(I >= k), k >= 1
            bound = _survival(logB[e], logrho, logmu[e], surv.shape[1])
            assert np.all(surv <= bound * (1 + 1e-9) + 1e-12), (name, v, e)
            mean = (law[keep] * np.arange(law.shape[1])).sum(axis=1)
            assert np.all(mean <= np.exp(logmu[e]) * (1 + 1e-9) + 1e-12), (name, v, e)
            assert np.allclose(mean, np.exp(logmu[e]), rtol=1e-6, atol=1e-12)  # L < horizon


def test_green_from_the_fundamental_matrix_matches_the_inverse():
    rng = np.random.default_rng(3)
    P = transition("undirected", 9, rng)
    for v in (0, 4):
        blocked = np.zeros(9, bool)
        blocked[v] = True
        free = np.flatnonzero(~blocked)
        keep = sparse.diags((~blocked).astype(float))
        Q = sparse.csr_array(keep @ sparse.csr_array(P) @ keep)
        G = law_bound.green(Q, free)
        pi0 = rng.dirichlet(np.ones(9))
        srcs = free[:3]
        gdiag, rows = law_bound.single_observer_green(sparse.csr_array(P), v, srcs, pi0, free)
        assert np.allclose(gdiag, np.diag(G), rtol=1e-6)
        assert np.all(gdiag >= np.diag(G))
        for i, x in enumerate(srcs):
            h = G[np.searchsorted(free, x)] / np.diag(G)
            assert np.allclose(rows[i], h, atol=1e-6) and np.all(rows[i] >= h - 1e-12)
        w = np.where(blocked, 0.0, pi0)[free]
        assert np.allclose(rows[-1], w @ G / np.diag(G), atol=1e-6)


def _brute(logB, logrho, logmu, c, size, table):
    """``log Σ_k p_k e^{F(c + k)}`` by parts (``S`` need not be a survival function), every
    count up to ``size``."""
    logS = _log_survival(logB, logrho, logmu, size)
    out = np.empty((logB.size, table.shape[0]))
    for r in range(logB.size):
        F = table[:, c[r]:c[r] + size + 1]
        with np.errstate(divide="ignore"):
            step = F[:, 1:] + np.log(-np.expm1(F[:, :-1] - F[:, 1:]))  # log ΔF
            terms = np.concatenate([F[:, :1], step + logS[r][None, :]], axis=1)
        top = terms.max(axis=1)
        out[r] = top + np.log(np.exp(terms - top[:, None]).sum(axis=1))
    return out


def _brute_pmf(logB, logrho, c, size, table):
    surv = np.concatenate([np.ones((logB.size, 1)),
                           _survival(logB, logrho, np.full(logB.size, np.inf), size),
                           np.zeros((logB.size, 1))], axis=1)
    pmf = surv[:, :-1] - surv[:, 1:]
    out = np.empty((logB.size, table.shape[0]))
    for r in range(logB.size):
        F = table[:, c[r]:c[r] + size + 1]
        with np.errstate(divide="ignore"):
            terms = np.log(np.clip(pmf[r], 0.0, None))[None, :] + F
        top = terms.max(axis=1)
        out[r] = top + np.log(np.exp(terms - top[:, None]).sum(axis=1))
    return out


@pytest.mark.parametrize("size", [0, 3, 40, 300, 2000])
def test_entries_cover_every_count(size):
    """The kernel and its numpy oracle are at or above the sum over every count of the
    bound's law, within log(size + 1) of it; the same sum stopped where the terms are
    summed one by one (the tail dropped) is below it: the check catches a cut tail."""
    rng = np.random.default_rng(size)
    r = 60
    logB = rng.uniform(-6.0, 12.0, r)
    logrho = np.log(rng.uniform(0.05, 0.98, r))
    logmu = np.where(rng.random(r) < 0.5, np.inf, rng.uniform(-8.0, 4.0, r))
    c = rng.integers(0, 3, r)
    s = float(rng.uniform(0.5, 30.0))
    j = np.arange(size + 3, dtype=float)
    table = (ORDERS * (ORDERS - 1) / (2 * s * s))[:, None] * (j * j)[None, :]
    brute = _brute(logB, logrho, logmu, c, size, table)
    if size <= 40:  # the sum by parts is the expectation over the pmf (no underflow here)
        nomu = np.full(r, np.inf)
        assert np.allclose(_brute(logB, logrho, nomu, c, size, table),
                           _brute_pmf(logB, logrho, c, size, table), rtol=1e-9, atol=1e-9)
    got = np.empty((r, ORDERS.size))
    expected_log_table(logB, logrho, logmu, c, size, table, law_bound.TERMS, got)
    oracle = law_bound.expected_log(logB, logrho, logmu, c, size,
                                    lambda k: table[:, k].transpose(1, 2, 0))
    slack = math.log(size + 1.0) + 1e-9
    for x in (got, oracle):
        assert np.all(x >= brute - 1e-9 * np.abs(brute) - 1e-12)
        # where an order is useful and S geometric: within log(size + 1) of the sum
        small = (brute < 30.0) & np.isinf(logmu)[:, None]
        assert np.all((x <= brute + slack + 1e-9 * np.abs(brute))[small])
    if size > 2 * law_bound.TERMS:
        cut = law_bound.TERMS
        dropped = _brute(logB, logrho, logmu, c, cut, table)  # counts beyond cut dropped
        assert np.any(dropped < brute - 1e-6)


def _trace_case(seed: int):
    rng = np.random.default_rng(seed)
    kind = ("undirected", "lazy", "directed", "complete")[seed % 4]
    n = int(rng.integers(3, 8))
    P = transition(kind, n, rng)
    holders = walk(P, int(rng.integers(6, 50)), int(rng.integers(1, 3)), rng)
    return rng, n, P, holders


@pytest.mark.parametrize("seed", range(24))
def test_bounded_losses_are_never_below_the_exact_loss(seed, monkeypatch):
    """Every observer over the budget (forced): kov and rdp from the survival bound are at
    or above the exact loss of the view (rounded down) for every pair."""
    monkeypatch.setattr(walk_views, "LAW_WORK", -1.0)
    rng, n, P, holders = _trace_case(seed)
    z = float(rng.uniform(0.5, 4.0))
    delta = float(10 ** rng.uniform(-9, -3))
    v = int(rng.integers(n))
    exact = exact_lower(holders, P, [v], z, delta)
    for accountant in ("kov", "rdp"):
        table = sound_graph_losses(Trace(n, holders), P, 1.0, delta, z, accountant,
                                   observers=np.array([v]))
        assert table.unamplified == 0
        got = dict(zip(table.nodes.tolist(), table.values.tolist(), strict=True))
        for u, eps in exact.items():
            assert got[u] >= eps - 1e-9, (seed, accountant, u, got[u], eps)


def test_bounded_losses_against_exact_laws_on_a_longer_walk(monkeypatch):
    """A 12-node graph, 600 steps (views beyond enumeration): the survival bound is above
    the exact laws of :mod:`netdp.tracking.count_law` for every view and node."""
    rng = np.random.default_rng(7)
    P = sparse.csr_array(transition("undirected", 12, rng))
    holders = walk(P.toarray(), 600, 1, rng)
    v = 3
    flat = holders.reshape(-1)
    views = observer_views(flat, holders.shape[1], np.flatnonzero(flat == v))
    blocked = np.zeros(12, bool)
    blocked[v] = True
    pi0 = np.full(12, 1 / 12)
    logB, logrho, logmu, keep = law_bound.survival_logs(P, blocked, pi0, views.kind,
                                                        views.a, views.b, views.length)
    laws, tails = walk_views.view_laws(P, blocked, pi0, views, kmax=(64,))
    for e in range(views.size):
        surv = np.cumsum(laws[e][keep][:, ::-1], axis=1)[:, ::-1][:, 1:] + tails[e][keep, None]
        bound = _survival(logB[e], logrho, logmu[e], surv.shape[1])
        size = ce.interior(int(views.kind[e]), int(views.length[e]))
        surv = surv[:, :max(size, 0)]
        assert np.all(surv <= bound[:, :surv.shape[1]] * (1 + 1e-9) + 1e-12), e
    assert count_law is not None


def _forward_oracle(QT: np.ndarray, X: np.ndarray, due: np.ndarray, col: np.ndarray,
                    row: np.ndarray) -> np.ndarray:
    """``log ((Q^T)^due X[:, col])[row]`` by stepping every column to every due (numpy)."""
    out = np.empty(due.size)
    for e in range(due.size):
        v, logscale = X[:, col[e]].copy(), 0.0
        for _ in range(due[e]):
            v = QT @ v
            top = v.max()
            logscale += math.log(top)
            v /= top
        out[e] = math.log(v[row[e]]) + logscale if v[row[e]] > 0 else -math.inf
    return out


def _taboo(P: np.ndarray, blocked: int) -> np.ndarray:
    Q = P.copy()
    Q[blocked] = 0.0
    Q[:, blocked] = 0.0
    return Q


def _forward_cases_P(name: str) -> np.ndarray:
    """The walk of :func:`_forward_cases`'s graph ``name`` before the observer is taken out."""
    rng = np.random.default_rng(38)
    if name == "random graph":
        A = (rng.random((24, 24)) < 0.2).astype(float)
        A = np.maximum(A, A.T) + np.diag(np.ones(23), 1) + np.diag(np.ones(23), -1)
        np.fill_diagonal(A, 0.0)
        return A / A.sum(axis=1, keepdims=True)
    cube = np.zeros((16, 16))
    for x in range(16):
        for bit in range(4):
            cube[x, x ^ (1 << bit)] = 0.25
    return cube


def _forward_cases():
    yield "random graph", _taboo(_forward_cases_P("random graph"), 5)
    yield "hypercube", _taboo(_forward_cases_P("hypercube"), 0)  # bipartite: periodic
    ring = np.zeros((12, 12))
    for x in range(12):
        ring[x, (x + 1) % 12] = ring[x, (x - 1) % 12] = 0.5
    yield "ring", _taboo(ring, 3)


@pytest.mark.parametrize("tol", [law_bound.FORWARD_TOL, 1e-3])
@pytest.mark.parametrize("case", list(_forward_cases()), ids=lambda c: c[0])
def test_forward_normalisers_are_sound_and_within_tol(case, tol):
    """The compiled forward sweep against stepping every view to its end (numpy): never
    above it (a lower bound of each normaliser: sound) and within ``tol`` of it, on views
    long enough (up to 1,500 steps) that the columns converge and are frozen; with the
    coarse ``tol`` they freeze early, so a wrong ratio (the largest in place of the
    smallest) or a wrong parity of the snapshot would show."""
    from netdp.tracking._kernels.law_bound import forward_normalisers

    _, Q = case
    n = Q.shape[0]
    rng = np.random.default_rng(int(tol * 1e9) % 1000 + n)
    free = np.flatnonzero(Q.sum(axis=1) > 0)
    X = np.zeros((n, 4))
    X[free[:3], np.arange(3)] = 1.0
    X[free, 3] = 1.0 / free.size
    due = np.sort(rng.integers(0, 1500, 40))
    due[-3:] = [1497, 1498, 1500]
    col = rng.integers(0, 4, due.size)
    row = rng.choice(free, due.size)
    QT = sparse.csr_array(Q.T)
    QT.sort_indices()
    got = np.empty(due.size)
    forward_normalisers(QT.indptr.astype(np.int64), QT.indices.astype(np.int64), QT.data,
                        X, due.astype(np.int64), col.astype(np.int64), row.astype(np.int64),
                        got, tol)
    want = _forward_oracle(Q.T, X, due, col, row)
    finite = np.isfinite(want)
    assert np.array_equal(finite, np.isfinite(got))  # periodic zeros stay zeros
    gap = want[finite] - got[finite]
    assert gap.min() >= -1e-11  # sound: never above
    assert gap.max() <= tol + 1e-11
    if tol > 1e-6:  # the coarse tolerance is used, not just allowed
        assert gap.max() > 1e-3 * tol


def test_stationary_law_by_detailed_balance_and_by_solving(monkeypatch):
    """A weighted undirected graph's walk (reversible) gets π from detailed balance, with
    no dense solve; a walk that is not reversible (a random irreducible directed matrix)
    is solved for; both against the left eigenvector."""
    rng = np.random.default_rng(40)
    W = rng.random((30, 30)) * (rng.random((30, 30)) < 0.3)
    W = W + W.T + np.diag(np.ones(29), 1) + np.diag(np.ones(29), -1)
    directed = rng.random((30, 30)) * (rng.random((30, 30)) < 0.3) + np.roll(np.eye(30), 1, 1)
    for M, reversible in ((W, True), (directed, False)):
        P = M / M.sum(axis=1, keepdims=True)
        vals, vecs = np.linalg.eig(P.T)
        want = np.real(vecs[:, np.argmin(np.abs(vals - 1.0))])
        want /= want.sum()
        with monkeypatch.context() as m:
            if reversible:
                m.setattr(walk_matrix.scipy.linalg, "solve", None)  # not called
            got = walk_matrix.stationary(sparse.csr_array(P))
        assert np.allclose(got, want, rtol=1e-10, atol=0.0)


def test_mean_visits_against_matrix_powers():
    """``log E[I_u]`` of :func:`law_bound.mean_logs` (through :func:`survival_logs`) against
    ``Σ_t (Q^t)[a, u] (Q^{L-t})[u, b] / (Q^L)[a, b]`` by dense matrix powers: equal (to
    1e-9, exact zeros staying zeros) where both ends' rows are kept at every step
    (``L <= HORIZON + 1``), never below beyond (the Perron bound), on a random graph and a
    hypercube (periodic)."""
    for P, blocked_node in ((_forward_cases_P("random graph"), 5),
                            (_forward_cases_P("hypercube"), 0)):
        n = P.shape[0]
        blocked = np.zeros(n, bool)
        blocked[blocked_node] = True
        Q = _taboo(P, blocked_node)
        free = np.flatnonzero(~blocked)
        rng = np.random.default_rng(n)
        lengths = np.array([3, 4, 40, 131, 258, 259, 400, 701])
        a = rng.choice(free, lengths.size)
        powers = [np.eye(n)]
        for _ in range(lengths.max()):
            powers.append(powers[-1] @ Q)
        b = np.array([rng.choice(np.flatnonzero(powers[m - 2][x] > 0)) for x, m in
                      zip(a, lengths, strict=True)])
        kind = np.full(lengths.size, ce.REGULAR)
        _, _, logmu, got_free = law_bound.survival_logs(
            sparse.csr_array(P), blocked, np.full(n, 1.0 / n), kind, a, b, lengths)
        assert np.array_equal(got_free, free)
        for e, (x, y, m) in enumerate(zip(a, b, lengths, strict=True)):
            L = m - 2
            mean = sum((powers[t][x] * powers[L - t][:, y] for t in range(1, L)),
                       np.zeros(n)) / powers[L][x, y]
            want = mean[free]
            got = np.exp(logmu[e])
            assert np.all(got >= want * (1 - 1e-12)), (L, got - want)
            if L <= law_bound.HORIZON + 1:  # both ends' rows kept at every step
                assert np.allclose(got, want, rtol=1e-9, atol=0.0), L
                assert np.array_equal(want == 0, got == 0)



@pytest.mark.parametrize("accountant", ["kov", "rdp"])
def test_rows_that_share_a_bound_share_its_figure(accountant, monkeypatch):
    """On the 32-node hypercube, 3,200 steps, one observer: kov and rdp with each distinct
    row of a view's survival bounds computed once (wherever any is shared: a view has 31
    rows and about 20 distinct, above the share that makes it worth it at 1,024 nodes)
    equal those with every row computed (to 1e-12)."""
    cube = np.zeros((32, 32))
    for x in range(32):
        for bit in range(5):
            cube[x, x ^ (1 << bit)] = 0.2
    rng = np.random.default_rng(32)
    holders = walk(cube, 3200, 1, rng)
    P = sparse.csr_array(cube)
    flat = holders.reshape(-1)
    views = observer_views(flat, holders.shape[1], np.flatnonzero(flat == 0))
    blocked = np.zeros(32, bool)
    blocked[0] = True
    noise = ce.Noise(z=2.0, eps0=1.0)
    shared: list[bool] = []
    real = walk_views.view_plds.distinct

    def spy(key):
        held, index = real(key)
        shared.append(index is not None)
        return held, index

    monkeypatch.setattr(walk_views.view_plds, "distinct", spy)
    monkeypatch.setattr(walk_views.view_plds, "SHARED_LAWS", 1.0)  # share any
    got = walk_views.bounded_losses(P, blocked, np.full(32, 1 / 32), views, accountant,
                                    noise, 1e-6)
    assert np.mean(shared) > 0.5
    monkeypatch.setattr(walk_views.view_plds, "distinct",
                        lambda key: (np.arange(key.shape[0]), None))
    alone = walk_views.bounded_losses(P, blocked, np.full(32, 1 / 32), views, accountant,
                                      noise, 1e-6)
    assert np.allclose(got, alone, rtol=1e-12, atol=0.0)


def _long_view_means(P: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """``exp(log E[I_u])`` of :func:`law_bound.mean_logs` over the exact means (matrix
    powers) for long views of the walk ``P`` observed by node 0 (past the kept rows): four
    regular views, then two first stretches; and the kinds."""
    n = P.shape[0]
    blocked = np.zeros(n, bool)
    blocked[0] = True
    Q = _taboo(P, 0)
    free = np.flatnonzero(~blocked)
    pi0 = np.full(n, 1.0 / n)
    powers = [np.eye(n)]
    for _ in range(900):
        powers.append(powers[-1] @ Q)
    rng = np.random.default_rng(4)
    kind, a, b, length, want = [], [], [], [], []
    for m in (400, 513, 701, 902):  # regular views: L = m - 2 steps from a to b
        x = int(rng.choice(free))
        y = int(rng.choice(np.flatnonzero(powers[m - 2][x] > 0)))
        L = m - 2
        mean = sum(powers[t][x] * powers[L - t][:, y] for t in range(1, L)) / powers[L][x, y]
        kind.append(ce.REGULAR), a.append(x), b.append(y), length.append(m), want.append(mean)
    for L in (300, 611):  # first stretches: from π0, L steps to b
        y = int(rng.choice(free))
        f = [pi0 @ powers[t - 1] for t in range(1, L + 1)]
        mean = sum(f[t - 1] * powers[L - t][:, y] for t in range(1, L)) / f[L - 1][y]
        kind.append(ce.FIRST), a.append(-1), b.append(y), length.append(L), want.append(mean)
    _, _, logmu, _ = law_bound.survival_logs(sparse.csr_array(P), blocked, pi0,
                                             np.array(kind), np.array(a), np.array(b),
                                             np.array(length))
    return np.exp(logmu) / np.array(want)[:, free], kind


def test_a_bipartite_walk_counts_only_the_steps_of_the_right_parity(monkeypatch):
    """On the hypercube (every step changes side) the mean number of visits in a long view
    is bounded with only the steps whose terms can be nonzero: never below the matrix
    powers' mean, equal to it for the regular views (their rows have converged to the
    Perron mode on this small graph), and below the bound without the parity (the bound
    before, which counts every step of the stretch: twice the terms) on every view."""
    P = _forward_cases_P("hypercube")
    assert law_bound.bipartition(sparse.csr_array(P)) is not None
    assert law_bound.bipartition(sparse.csr_array(0.5 * (P + np.eye(16)))) is None  # lazy
    ratio, kind = _long_view_means(P)
    regular = np.array(kind) == ce.REGULAR
    assert ratio.min() >= 1 - 1e-12
    assert ratio[regular].max() <= 1 + 1e-6
    monkeypatch.setattr(law_bound, "bipartition", lambda P: None)
    plain, _ = _long_view_means(P)
    assert plain.min() >= 1 - 1e-12
    assert np.all(plain.min(axis=1) > ratio.max(axis=1))  # every view: tighter throughout


def test_a_walk_that_is_not_bipartite_has_no_sides(monkeypatch):
    """The random graph (odd cycles) gets no sides, and its bound stays above the exact
    mean; forced onto it, breadth-first sides halve the count and the bound falls below."""
    from scipy.sparse import csgraph

    P = _forward_cases_P("random graph")
    assert law_bound.bipartition(sparse.csr_array(P)) is None
    ratio, _ = _long_view_means(P)
    assert ratio.min() >= 1 - 1e-12
    depth = csgraph.shortest_path(P, indices=0, unweighted=True)
    monkeypatch.setattr(law_bound, "bipartition", lambda P: depth.astype(np.int64) % 2)
    forced, _ = _long_view_means(P)
    assert forced.min() < 0.9
