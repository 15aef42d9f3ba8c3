"""The graph-walk tracker (netdp.tracking.taboo): its kernels against plain numpy, its rates
against the exact conditional law, and its composition against the accountants."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import sparse

from netdp.accounting.composition import KovAccountant
from netdp.accounting.events import ApproxDP, Composed, Gaussian, Subsampled
from netdp.accounting.rdp import RdpAccountant
from netdp.engine import walk
from netdp.engine.routing import Router
from netdp.engine.trace import Trace
from netdp.graphs import topologies as topology
from netdp.graphs import walk_kind
from netdp.tracking import taboo
from netdp.tracking._kernels import taboo as kernels
from netdp.tracking.loss_table import RDP_ORDERS, walk_losses


def dense_visits(P: np.ndarray, blocked: np.ndarray, a: int, b: int, L: int) -> np.ndarray:
    """The plain-numpy oracle: ``Σ_k (Q^k)_{au} (Q^{L-k})_{ub} / (Q^L)_{ab}``."""
    Q = P.copy()
    Q[blocked, :] = 0.0
    Q[:, blocked] = 0.0
    powers = [np.eye(P.shape[0])]
    for _ in range(L):
        powers.append(powers[-1] @ Q)
    num = sum(powers[k][a, :] * powers[L - k][:, b] for k in range(1, L))
    return num / powers[L][a, b]


def exact_participation(P: np.ndarray, v: int, a: int, b: int, L: int) -> np.ndarray:
    """``P(u among the interior steps | a -> b in L steps avoiding v)``, by enumeration."""
    n = P.shape[0]
    seen, total = np.zeros(n), 0.0
    for inner in itertools.product([x for x in range(n) if x != v], repeat=L - 1):
        path = (a, *inner, b)
        p = math.prod(P[x, y] for x, y in itertools.pairwise(path))
        total += p
        for u in set(inner):
            seen[u] += p
    return seen / total


def kernel_visits(P, v: int, a: int, b: int, L: int, reversible: bool,
                  memory: int | None = None) -> np.ndarray:
    n = P.shape[0]
    Ps = sparse.csr_array(P)
    blocked = np.zeros(n, bool)
    blocked[v] = True
    if reversible:
        pi = taboo.reversible_measure(Ps)
        assert pi is not None
        starts = np.unique([a, b]).astype(np.int64)
        F, lf, sf, _ = taboo._rows(Ps, starts, blocked, L, False, 0)
        G, lg, sg, ib = F, lf, sf, int(np.searchsorted(starts, b))
        ia, scale, factor = int(np.searchsorted(starts, a)), 1.0 / pi, pi[b]
    else:
        F, lf, sf, _ = taboo._rows(Ps, np.array([a]), blocked, L, False, 1)
        G, lg, sg, _ = taboo._rows(Ps, np.array([b]), blocked, L, True, 1)
        ia, ib, scale, factor = 0, 0, np.ones(n), 1.0
    out = np.empty(n)
    kernels.interior_visits(F, lf, sf, ia, G, lg, sg, ib, b, L, scale, factor, out, 2)
    return out


def small_graph(seed: int = 0, n: int = 6) -> np.ndarray:
    """A simple walk on a connected random graph with a triangle (aperiodic)."""
    rng = np.random.default_rng(seed)
    adj = np.zeros((n, n))
    for u in range(n):  # a cycle, plus chords
        adj[u, (u + 1) % n] = adj[(u + 1) % n, u] = 1
    for _ in range(n):
        u, w = rng.choice(n, 2, replace=False)
        adj[u, w] = adj[w, u] = 1
    adj[0, 2] = adj[2, 0] = 1
    return adj / adj.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("reversible", [True, False])
@pytest.mark.parametrize("L", [2, 3, 5, 9, 40, 400])
def test_interior_visits_match_plain_numpy(L, reversible):
    P = small_graph(1, 8)
    compared = 0
    for v, a, b in [(0, 1, 7), (3, 2, 2), (5, 4, 6), (1, 0, 3)]:
        blocked = np.zeros(8, bool)
        blocked[v] = True
        Q = np.where(blocked[:, None] | blocked[None, :], 0.0, P)
        if np.linalg.matrix_power(Q, L)[a, b] == 0:
            continue  # no such path
        got = kernel_visits(P, v, a, b, L, reversible)
        want = dense_visits(P, blocked, a, b, L)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
        compared += 1
    assert compared >= 2


def test_bipartite_chain_settles_with_period_two():
    """The hypercube's simple walk is periodic: rows repeat every 2 steps, and the
    sum read back from them still matches numpy far beyond where they settled."""
    P = walk_kind.transition_matrix(topology.build("hypercube", 16), "simple").toarray()
    blocked = np.zeros(16, bool)
    blocked[0] = True
    F, lf, sf, _ = taboo._rows(sparse.csr_array(P), np.array([1]), blocked, 500, False, 0)
    assert 0 < sf[0] < 500
    got = kernel_visits(P, 0, 1, 2, 300, reversible=False)
    np.testing.assert_allclose(got, dense_visits(P, blocked, 1, 2, 300), rtol=1e-9)


@pytest.mark.parametrize("L", [2, 3, 4, 5, 6])
def test_rates_are_never_below_the_true_conditional_law(L):
    """Soundness: the union bound is at least the exact probability that u took part,
    enumerated over every path the walk could have taken between a and b."""
    P = small_graph(2, 6)
    for v, a, b in [(0, 1, 5), (2, 3, 3), (4, 5, 1), (1, 0, 2)]:
        Q = P.copy()
        Q[v, :] = Q[:, v] = 0.0
        if np.linalg.matrix_power(Q, L)[a, b] == 0:
            continue  # the walk cannot go from a to b in L steps
        exact = exact_participation(P, v, a, b, L)
        rate = np.minimum(kernel_visits(P, v, a, b, L, reversible=True), 1.0)
        assert np.all(rate >= exact - 1e-12)
        if L >= 3:  # a real bound, not a cap: somewhere below 1 and above the law
            assert np.any((rate < 1.0) & (exact > 0))


def complete_trace(n: int, steps: int, seed: int) -> Trace:
    topo = topology.complete(n)
    return walk("vector", Router(topo), steps, [np.random.default_rng(seed)])


def taboo_rate(m: int, n: int) -> float:
    """The tracker's rate on the complete graph with self-moves: ``(m - 3)/(n - 1)``."""
    return min(max(m - 3, 0) / (n - 1), 1.0)


def reference_rate(m: int, n: int) -> float:
    return -math.expm1(m * math.log1p(-1.0 / n))


def oracle(trace: Trace, u: int, v: int, rate, accountant: str, eps0: float, delta: float,
           z: float) -> float:
    """Pair (u -> v) composed entry by entry with the accountants: per cycle of v, an
    attributable Gaussian (c = 1 or 2) or one subsampled at ``rate(m)``."""
    h = trace.holders[0]
    visits = np.flatnonzero(h == v)
    events = []
    for j, i in itertools.pairwise(visits):
        m = int(i - j)
        c = 0 if m < 2 else int(h[j + 1] == u) + int(h[i - 1] == u)
        q = 0.0 if c else rate(m)
        if accountant == "kov":
            release = ApproxDP(max(c, 1) * eps0 / math.sqrt(m), delta)
        else:
            release = Gaussian(z * math.sqrt(m), float(max(c, 1)))
        events.append(release if c else Subsampled(release, q))
    k = len(events)
    if accountant == "kov":  # the kernels' slack k δ on top of the entries' own δ
        deltas = [e.probability * e.event.delta if isinstance(e, Subsampled) else e.delta
                  for e in events]
        total = -math.expm1(math.log1p(-min(k * delta, 1.0))
                            + sum(math.log1p(-d) for d in deltas))
        return KovAccountant().epsilon(Composed(tuple(events)), total)
    return RdpAccountant(RDP_ORDERS).epsilon(Composed(tuple(events)), min(2 * k * delta, 1))


@pytest.mark.parametrize("accountant", ["kov", "rdp"])
def test_complete_graph_same_composition_as_the_reference_tracker(accountant):
    """On the complete graph the two trackers compose the same entries; they differ only
    in the rate of a non-attributable entry: the reference's ``1 - (1 - 1/n)^m`` and the
    taboo chain's ``(m - 3)/(n - 1)``. One oracle, fed either rate, gives each tracker's
    numbers on the same walk."""
    n, eps0, delta, z = 9, 1.0, 1e-6, 2.0
    trace = complete_trace(n, 400, 3)
    P = walk_kind.transition_matrix(topology.complete(n), "simple")
    ours = taboo.graph_walk_losses(trace, P, eps0, delta, z, accountant).matrix()
    ref = walk_losses(trace, eps0, delta, z, accountant, keep_pairs=True,
                      convention="reference").matrix()
    tol = 1e-9 if accountant == "kov" else 0.03  # rdp: our rates rounded up (2^(1/32))
    for u, v in [(1, 0), (4, 2), (0, 8), (7, 5)]:
        want_ref = oracle(trace, u, v, lambda m: reference_rate(m, n), accountant, eps0,
                          delta, z)
        assert ref[u, v] == pytest.approx(want_ref, rel=1e-9)
        want = oracle(trace, u, v, lambda m: taboo_rate(m, n), accountant, eps0, delta, z)
        assert want * (1 - 1e-9) <= ours[u, v] <= want * (1 + tol)


def test_reference_rate_falls_below_the_true_law_beyond_three_n():
    """Why the tracker cannot reproduce the reference on the complete graph: given the
    cycle's ends, the interior ``m - 3`` holders are uniform over the ``n - 1`` other
    nodes, so u took part with probability ``1 - (1 - 1/(n-1))^{m-3}``. The reference's
    ``1 - (1 - 1/n)^m`` is above it up to ``m ≈ 3n`` and below it after: unsound there.
    The taboo chain's rate is never below it."""
    n = 10
    P = np.full((n, n), 1.0 / n)
    for m in (4, 6, 8):  # the closed form of the law, by enumeration
        law = exact_participation(P, 0, 1, 2, m - 2)[5]
        assert law == pytest.approx(-math.expm1((m - 3) * math.log1p(-1 / (n - 1))))
    for m in range(4, 20 * n):
        law = -math.expm1((m - 3) * math.log1p(-1 / (n - 1)))
        assert taboo_rate(m, n) >= law
        if m <= 3 * n - 3:
            assert reference_rate(m, n) >= law
        if m >= 3 * n + 3:
            assert reference_rate(m, n) < law


def test_coalition_of_one_is_that_observer():
    topo = topology.build("hypercube", 32)
    trace = walk("vector", Router(topo), 3000, [np.random.default_rng(4)])
    P = walk_kind.transition_matrix(topo, "simple")
    alone = taboo.graph_walk_losses(trace, P, 1.0, 1e-6, 2.0, "kov", observers=np.array([5]))
    one = taboo.graph_walk_losses(trace, P, 1.0, 1e-6, 2.0, "kov", coalition=[5])
    np.testing.assert_allclose(one.values, alone.values, rtol=1e-12)
    np.testing.assert_array_equal(one.nodes, alone.nodes)


def test_sampled_observers_are_rows_of_the_full_table():
    topo = topology.build("karate")
    trace = walk("vector", Router(topo, "metropolis"), 2000, [np.random.default_rng(5)])
    P = walk_kind.transition_matrix(topo, "metropolis")
    full = taboo.graph_walk_losses(trace, P, 1.0, 1e-6, 2.0, "rdp").matrix()
    some = taboo.graph_walk_losses(trace, P, 1.0, 1e-6, 2.0, "rdp",
                                   observers=np.array([3, 20]))
    np.testing.assert_allclose(some.matrix()[:, [3, 20]], full[:, [3, 20]], rtol=1e-12)


def test_rows_beyond_memory_are_counted_and_only_raise_losses(monkeypatch):
    """A cycle longer than the rows kept takes rate 1: sound, never below the exact
    figure, and counted."""
    topo = topology.build("grid", 64)
    trace = walk("vector", Router(topo, "simple"), 6400, [np.random.default_rng(6)])
    P = walk_kind.transition_matrix(topo, "simple")
    full = taboo.graph_walk_losses(trace, P, 1.0, 1e-6, 2.0, "kov")
    assert full.unamplified == 0
    monkeypatch.setattr(taboo, "MEMORY", 8 * 64 * 8 * 20)
    cut = taboo.graph_walk_losses(trace, P, 1.0, 1e-6, 2.0, "kov")
    assert cut.unamplified > 0
    assert np.all(cut.values >= full.values - 1e-12)
    assert cut.values.mean() > full.values.mean()


def test_far_nodes_lose_less_on_a_short_walk():
    """Privacy by distance: on a cycle graph, nodes far from the observer took part in
    fewer of its cycles."""
    topo = topology.build("cycle", 40)
    trace = walk("vector", Router(topo, "lazy"), 4000, [np.random.default_rng(7)])
    P = walk_kind.transition_matrix(topo, "lazy")
    M = taboo.graph_walk_losses(trace, P, 1.0, 1e-6, 2.0, "kov",
                                observers=np.array([0])).matrix()[:, 0]
    assert M[[2, 38]].mean() > M[[18, 20, 22]].mean()


def test_accountant_outside_the_graph_tracker_is_refused():
    from netdp.core.errors import InputError

    trace = complete_trace(5, 50, 1)
    P = walk_kind.transition_matrix(topology.complete(5), "simple")
    with pytest.raises(InputError, match="kov, rdp"):
        taboo.graph_walk_losses(trace, P, 1.0, 1e-6, 2.0, "pld")


def test_rdp_rates_round_up_within_one_grid_step():
    q = np.concatenate([np.random.default_rng(8).uniform(0, 1, 2000), [1e-15, 0.5, 1.0]])
    q = q[q > 0]
    grid = np.array([2.0 ** (-kernels.rate_bin(x) / kernels.BINS_PER_OCTAVE) for x in q])
    assert np.all(grid >= q)
    assert np.all(grid[q > 2.0**-40] < q[q > 2.0**-40] * 2 ** (1 / kernels.BINS_PER_OCTAVE))
