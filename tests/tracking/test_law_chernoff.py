"""The law bound's Chernoff family (:mod:`netdp.tracking.law_chernoff`): ``G_z`` of the taboo
chain from one spectrum against a direct inverse of ``I - z Q``, the family's survival
bounds against enumerated laws and the exact count laws of long walks, and what it buys on
a long stretch."""

from __future__ import annotations

import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from scipy import sparse

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "privacy"))
from test_count_law import enumerate_bridge, enumerate_first  # noqa: E402
from test_soundness_property import transition, walk  # noqa: E402

from netdp.tracking import cycle_entries as ce  # noqa: E402
from netdp.tracking import law_bound, law_chernoff, walk_views  # noqa: E402
from netdp.tracking.walk_views import observer_views  # noqa: E402


def _simple_walk(graph: nx.Graph) -> sparse.csr_array:
    A = nx.to_numpy_array(graph, nodelist=sorted(graph))
    return sparse.csr_array(A / A.sum(axis=1, keepdims=True))


def _survival(logB, logrho, logmu, top):
    """``S(k) = min(1, min_j B_j ρ_j^{k-1}, E[I] / k)``, ``k = 1..top`` (rows: nodes)."""
    k = np.arange(1, top + 1)
    with np.errstate(invalid="ignore"):
        geo = (logB[:, :, None] + (k - 1) * logrho[:, :, None]).min(axis=0)
        return np.exp(np.minimum(np.minimum(0.0, geo), logmu[:, None] - np.log(k)))


def _direct(P: np.ndarray, blocked: np.ndarray, z: float) -> np.ndarray:
    Q = np.where(blocked[:, None] | blocked[None, :], 0.0, P)
    free = np.flatnonzero(~blocked)
    return np.linalg.inv(np.eye(free.size) - z * Q[np.ix_(free, free)])


@pytest.mark.parametrize("observers", [(0,), (4,), (2, 7)])
def test_green_at_z_matches_a_direct_inverse(observers):
    """``G_z[u, u]`` and the rows (a first holder's, the virtual source's) from the walk's
    spectrum, one observer and a coalition, over the grid up to ``1 / ρ̄``: within 1e-9
    of ``(I - z Q)^{-1}``, and never below it."""
    rng = np.random.default_rng(3)
    P = transition("undirected", 10, rng)
    blocked = np.zeros(10, bool)
    blocked[list(observers)] = True
    free = np.flatnonzero(~blocked)
    Q = sparse.csr_array(np.where(blocked[:, None] | blocked[None, :], 0.0, P))
    _, rho_bar = law_bound._perron(Q, free, left=False)
    lam = np.abs(np.linalg.eigvals(Q.toarray()[np.ix_(free, free)])).max()
    assert lam <= rho_bar * (1 + 1e-12)
    spec = law_chernoff.spectrum(sparse.csr_array(P))
    pi0 = rng.dirichlet(np.ones(10))
    srcs = free[:3]
    zs = law_chernoff.grid(rho_bar)
    assert zs.size == len(law_chernoff.BELOW) + len(law_chernoff.ABOVE)
    assert np.all((zs > 0) & (zs != 1) & (zs * rho_bar < 1))
    for z in zs:
        G = _direct(P, blocked, z)
        gdiag, rows = law_chernoff.green_at(spec, blocked, float(z), srcs, pi0)
        assert np.all(gdiag >= np.diag(G)) and np.allclose(gdiag, np.diag(G), rtol=1e-7)
        for i, x in enumerate(srcs):
            h = G[np.searchsorted(free, x)] / np.diag(G)
            assert np.all(rows[i] >= h) and np.allclose(rows[i], h, rtol=1e-7, atol=1e-7)
        w = np.where(blocked, 0.0, pi0)[free]
        h = z * (w @ G) / np.diag(G)
        assert np.all(rows[-1] >= h) and np.allclose(rows[-1], h, rtol=1e-7, atol=1e-7)


def test_a_directed_walk_has_no_spectrum_and_keeps_z_one():
    from test_count_law import directed

    assert law_chernoff.spectrum(sparse.csr_array(directed())) is None


@pytest.mark.parametrize("name", ["lazy-ring", "irregular", "complete", "complete-noself"])
def test_family_is_above_enumerated_laws(name):
    """Every view with ``L`` up to 6 and every first stretch up to 5 steps: ``P(I_u >= k)``
    from path enumeration is below every member of the family."""
    from test_count_law import GRAPHS

    P = GRAPHS[name]()
    n = P.shape[0]
    pi0 = np.full(n, 1.0 / n)
    for W in ([0], [2], [0, 2]):
        blocked = np.zeros(n, bool)
        blocked[W] = True
        free = [x for x in range(n) if x not in W]
        kind, a, b, length, exact = [], [], [], [], []
        for x in free:
            for y in free:
                for L in range(1, 7):
                    law, _, Z = enumerate_bridge(P, W, x, y, L)
                    if Z > 0:
                        kind.append(ce.REGULAR), a.append(x), b.append(y)
                        length.append(L + 2), exact.append(law)
            for i0 in range(1, 6):
                law, _, Z = enumerate_first(P, W, pi0, x, i0)
                if Z > 0:
                    kind.append(ce.FIRST), a.append(-1), b.append(x)
                    length.append(i0), exact.append(law)
        logB, logrho, logmu, keep = law_bound.survival_logs(
            sparse.csr_array(P), blocked, pi0, np.array(kind), np.array(a), np.array(b),
            np.array(length), chernoff=True)
        assert logB.shape[0] == 1 + len(law_chernoff.BELOW) + len(law_chernoff.ABOVE), name
        for e, law in enumerate(exact):
            surv = np.cumsum(law[keep][:, ::-1], axis=1)[:, ::-1][:, 1:]
            for j in range(logB.shape[0]):  # each member alone
                geo = np.exp(np.minimum(logB[j, e][:, None] + np.arange(surv.shape[1])
                                        * logrho[j][:, None], 0.0))
                assert np.all(surv <= geo * (1 + 1e-9) + 1e-12), (name, W, e, j)


def _long_walk_case(P, steps, v, seed):
    rng = np.random.default_rng(seed)
    holders = walk(P.toarray(), steps, 1, rng)
    flat = holders.reshape(-1)
    views = observer_views(flat, holders.shape[1], np.flatnonzero(flat == v))
    blocked = np.zeros(P.shape[0], bool)
    blocked[v] = True
    pi0 = np.full(P.shape[0], 1.0 / P.shape[0])
    return views, blocked, pi0


@pytest.mark.parametrize("graph", ["random", "hypercube"])
def test_family_is_above_the_exact_laws_of_a_long_walk(graph):
    """Views far longer than the horizon (the Perron part of ``M_u(b; z)``): the family's
    survival bound is above the exact count laws for every view, node and count."""
    if graph == "random":
        P = sparse.csr_array(transition("undirected", 12, np.random.default_rng(7)))
        steps, v = 3000, 3
    else:
        P = _simple_walk(nx.hypercube_graph(5))
        steps, v = 8000, 0
    views, blocked, pi0 = _long_walk_case(P, steps, v, 5)
    logB, logrho, logmu, keep = law_bound.survival_logs(P, blocked, pi0, views.kind,
                                                        views.a, views.b, views.length,
                                                        chernoff=True)
    assert logB.shape[0] > 1
    laws, tails = walk_views.view_laws(P, blocked, pi0, views, kmax=(256,))
    gained = 0
    for e in range(views.size):
        surv = np.cumsum(laws[e][keep][:, ::-1], axis=1)[:, ::-1][:, 1:] + tails[e][keep, None]
        size = ce.interior(int(views.kind[e]), int(views.length[e]))
        surv = surv[:, :max(size, 0)]
        bound = _survival(logB[:, e], logrho, logmu[e], surv.shape[1])
        assert np.all(surv <= bound * (1 + 1e-9) + 1e-12), e
        alone = _survival(logB[:1, e], logrho[:1], logmu[e], surv.shape[1])
        gained += int(np.any(bound < 0.5 * alone))
    assert gained > 0 or graph == "random"  # short stretches there: z = 1 is the best


def test_the_family_tightens_the_hypercubes_tail():
    """The longest stretch of a 64-node hypercube's walk (458 steps, a mean of about 7
    visits): at 28 visits the family is at least 4 times below z = 1's geometric tail on
    every node (5.9-16 times when written), still above the exact law and within 100 times
    it (62 when written)."""
    P = _simple_walk(nx.hypercube_graph(6))
    views, blocked, pi0 = _long_walk_case(P, 20000, 0, 2)
    e = int(np.argmax(np.where(views.kind == ce.REGULAR, views.length, 0)))
    assert views.length[e] == 460  # a bridge of 458 steps
    logB, logrho, logmu, keep = law_bound.survival_logs(P, blocked, pi0, views.kind,
                                                        views.a, views.b, views.length,
                                                        chernoff=True)
    laws, tails = walk_views.view_laws(P, blocked, pi0, views, kmax=(256,))
    surv = np.cumsum(laws[e][keep][:, ::-1], axis=1)[:, ::-1][:, 1:] + tails[e][keep, None]
    fam = _survival(logB[:, e], logrho, logmu[e], 30)[:, 27]
    one = _survival(logB[:1, e], logrho[:1], logmu[e], 30)[:, 27]
    assert np.all(surv[:, 27] <= fam) and np.all(fam <= 100 * surv[:, 27])
    assert np.all(one >= 4 * fam)
