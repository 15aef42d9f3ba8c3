"""Gossip averaging (Muffliato): matrices, spectral gap, the run, the pairwise losses.

The brute forces here are written from the definitions with dense linear algebra (matrix
powers, eigendecompositions, pseudo-inverses, loops over pairs), independently of the
vectorized paths of :mod:`netdp.tracking.gossip`.

Tolerances: the coefficients are sums of at most a few hundred terms in [0, 1], so two
float64 evaluations of the same formula agree to ~1e-13; 1e-10 leaves a thousandfold
margin and still catches any real slip (a missing term, a wrong power: differences of
1e-3 and more, as the planted-bug checks show).
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from scipy import sparse

from netdp.core.errors import InputError
from netdp.engine import averaging
from netdp.graphs import gossip_matrix as GM
from netdp.graphs import topologies as topology
from netdp.tracking import _modular_rank
from netdp.tracking import gossip as G
from netdp.tracking import gossip_message_sum as MS
from netdp.tracking.sgd import epsilon as linear_rdp_epsilon

EPS = np.finfo(float).eps
AGREE = 1e-10

# Six nodes: the triangles {0, 1, 2} and {3, 4, 5} joined by the edges 2 - 3 and 1 - 5;
# degrees 2 (nodes 0, 4) and 3 (the others), diameter 3 (from 0 to 4).
SIX_EDGES = [(0, 1), (0, 2), (1, 2), (2, 3), (3, 4), (3, 5), (4, 5), (1, 5)]


def graph(edges=None, g=None, name="graph"):
    if g is None:
        g = nx.Graph(edges)
    return topology.from_networkx(nx.convert_node_labels_to_integers(g, ordering="sorted"),
                                  name=name)


def six():
    return graph(SIX_EDGES)


def path3():
    return graph([(0, 1), (1, 2)])


def hypercube(d):
    return topology.build("hypercube", 2**d)


def dense(W):
    return W.toarray() if hasattr(W, "toarray") else np.asarray(W)


def powers(W, steps, gamma=None):
    """``A_t`` for t = 0..T from the eigendecomposition of W: ``W^t``, or ``P_t(W)`` with
    the scalar Chebyshev recursion applied to each eigenvalue (independent of the
    library's matrix recursion)."""
    lam, Q = np.linalg.eigh(dense(W))
    p = [np.ones_like(lam), lam.copy()]
    for _ in range(1, steps):
        nxt = lam * p[-1] if gamma is None else gamma * lam * p[-1] + (1 - gamma) * p[-2]
        p.append(nxt)
    return [(Q * pt) @ Q.T for pt in p[: steps + 1]]


def neighbours(topo, v):
    return [int(w) for w in topo.indices[topo.indptr[v]:topo.indptr[v + 1]] if w != v]


def brute_sum(topo, A):
    """The spec's sum, one pair, one step, one neighbour at a time."""
    n = topo.n
    C = np.zeros((n, n))
    for u in range(n):
        for v in range(n):
            if u == v:
                continue
            for At in A:
                for w in neighbours(topo, v):
                    C[u, v] += At[w, u] ** 2 / np.sum(At[w, :] ** 2)
    return C


def view(topo, A, v, own=True):
    """The rows M of v's view ``y = M z``: ``(A_t)_{w,:}`` for w in N(v), t <= T, and
    ``e_v`` (v knows its own noisy value) when ``own``."""
    rows = [At[w] for At in A for w in neighbours(topo, v)]
    if own:
        rows.append(np.eye(topo.n)[v])
    return np.array(rows)


def brute_joint(topo, A, own=True):
    """Exact Rényi coefficient of v's view between ``x_u = 0`` and ``x_u = 1`` (σ = 1):
    ``δμᵀ Σ⁺ δμ`` with ``Σ = M Mᵀ``, ``δμ = M e_u``, the pseudo-inverse taken on the
    eigenvalues above the numerical null space. Returns the matrix and, per observer,
    the (smallest kept / largest) and (largest dropped / largest) eigenvalue ratios."""
    n = topo.n
    J = np.zeros((n, n))
    conds = []
    for v in range(n):
        M = view(topo, A, v, own)
        lam, U = np.linalg.eigh(M @ M.T)
        top = lam.max()
        keep = lam > 1e-12 * top
        conds.append((lam[keep].min() / top, lam[~keep].max(initial=0) / top))
        pinv = (U[:, keep] / lam[keep]) @ U[:, keep].T
        for u in range(n):
            dmu = M[:, u]
            # δμ lies in range(M Mᵀ) = range(M): never outside the support
            assert np.linalg.norm((U[:, keep] @ U[:, keep].T) @ dmu - dmu) <= 1e-9
            J[u, v] = dmu @ pinv @ dmu
    return J, np.array(conds)


def off_diagonal(C):
    return C[~np.eye(len(C), dtype=bool)]


# ---------------------------------------------------------------------------------------
# Matrices
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [GM.metropolis, GM.lazy])
@pytest.mark.parametrize("topo", [six(), path3(), hypercube(4), topology.complete(7),
                                  graph(g=nx.karate_club_graph(), name="karate")])
def test_gossip_matrices_are_symmetric_doubly_stochastic(make, topo):
    W = dense(make(topo))
    adj = dense(GM.adjacency(topo))
    assert np.array_equal(W, W.T)
    assert np.abs(W.sum(axis=1) - 1).max() <= 1e-15 * topo.n
    assert (W >= 0).all()
    off = W - np.diag(np.diag(W))
    assert ((off != 0) <= (adj != 0)).all() and ((adj != 0) <= (off != 0)).all()
    if make is GM.lazy:
        assert np.diag(W).min() >= 0.5


def test_metropolis_and_lazy_weights_by_hand():
    # path 0 - 1 - 2: degrees 1, 2, 1
    W = dense(GM.metropolis(path3()))
    assert np.allclose(W, [[2 / 3, 1 / 3, 0], [1 / 3, 1 / 3, 1 / 3], [0, 1 / 3, 2 / 3]],
                       rtol=0, atol=1e-15)
    L = dense(GM.lazy(path3()))  # d_max = 2: 1/4 on edges
    assert np.allclose(L, [[3 / 4, 1 / 4, 0], [1 / 4, 1 / 2, 1 / 4], [0, 1 / 4, 3 / 4]],
                       rtol=0, atol=1e-15)


def test_the_ring_and_directed_graphs_are_refused():
    with pytest.raises(InputError) as err:
        GM.metropolis(topology.ring(5))
    assert err.value.param == "topology" and "directed ring" in err.value.message
    directed = topology.from_networkx(nx.DiGraph([(0, 1), (1, 2), (2, 0)]), name="tri")
    with pytest.raises(InputError) as err:
        GM.lazy(directed)
    assert err.value.param == "topology" and "directed" in err.value.message


def test_matrix_file_round_trips(tmp_path):
    topo = six()
    W = dense(GM.metropolis(topo))
    np.save(tmp_path / "w.npy", W)
    assert np.array_equal(dense(GM.from_file(tmp_path / "w.npy", topo)), W)
    rows, cols = np.nonzero(W)
    lines = ["# u v w"] + [f"{u}, {v}, {float(W[u, v])!r}" for u, v in zip(rows, cols, strict=True)]
    (tmp_path / "w.csv").write_text("\n".join(lines) + "\n")
    assert np.array_equal(dense(GM.from_file(tmp_path / "w.csv", topo)), W)


def _path4_ok():
    return np.array([[0.5, 0.5, 0, 0], [0.5, 0.25, 0.25, 0], [0, 0.25, 0.25, 0.5],
                     [0, 0, 0.5, 0.5]])


def _bad(change):
    W = _path4_ok()
    change(W)
    return W


BAD_NPY = {
    "shape": (np.eye(3), "expected a 4 x 4 matrix"),
    "negative": (_bad(lambda W: W.__setitem__((slice(1, 3), slice(1, 3)),
                                              [[0.75, -0.25], [-0.25, 0.75]])), "lie in [0, 1]"),
    "asymmetric": (_bad(lambda W: W.__setitem__((0, slice(0, 2)), [0.4, 0.6])),
                   "symmetric"),
    "row sums": (_bad(lambda W: np.fill_diagonal(W, np.diag(W) + 0.01)), "sum to 1"),
    "off graph": (_bad(lambda W: W.__setitem__((slice(None), slice(None)),
                                               np.full((4, 4), 0.25))), "neither on an edge"),
    "nan": (_bad(lambda W: W.__setitem__((3, 3), np.nan)), "finite"),
    "disconnected": (np.eye(4), "split the graph"),
}


@pytest.mark.parametrize("case", sorted(BAD_NPY))
def test_bad_npy_matrices_are_refused_in_one_line(tmp_path, case):
    W, fragment = BAD_NPY[case]
    np.save(tmp_path / "w.npy", W)
    with pytest.raises(InputError) as err:
        GM.from_file(tmp_path / "w.npy", graph([(0, 1), (1, 2), (2, 3)]))
    assert err.value.param == "gossip-matrix"
    assert fragment in err.value.message, err.value.message
    assert "\n" not in str(err.value)


BAD_TEXT = {
    "columns": ("0 0 0.5 1\n", "3 columns"),
    "not numbers": ("a b 0.5\n", "two whole node numbers and a weight"),
    "range": ("0 4 0.5\n", "numbered 0..3"),
    "duplicate": ("0 0 0.5\n0 0 0.5\n", "already given on line 1"),
    "empty": ("# nothing\n", "no entries"),
    "inf": ("0 0 inf\n", "finite"),
    "missing half": ("0 0 0.5\n0 1 0.5\n1 1 0.5\n2 2 1\n3 3 1\n", "symmetric"),
}


@pytest.mark.parametrize("case", sorted(BAD_TEXT))
def test_bad_triplet_files_are_refused_in_one_line(tmp_path, case):
    text, fragment = BAD_TEXT[case]
    (tmp_path / "w.txt").write_text(text)
    with pytest.raises(InputError) as err:
        GM.from_file(tmp_path / "w.txt", graph([(0, 1), (1, 2), (2, 3)]))
    assert err.value.param == "gossip-matrix"
    assert fragment in err.value.message, err.value.message
    assert "\n" not in str(err.value)


def test_unreadable_matrix_files(tmp_path):
    topo = graph([(0, 1), (1, 2), (2, 3)])
    for name in ("missing.npy", "missing.txt"):
        with pytest.raises(InputError) as err:
            GM.from_file(tmp_path / name, topo)
        assert err.value.param == "gossip-matrix" and "cannot read" in err.value.message
    (tmp_path / "junk.npy").write_bytes(b"not numpy")
    with pytest.raises(InputError, match="not a .npy file"):
        GM.from_file(tmp_path / "junk.npy", topo)


# ---------------------------------------------------------------------------------------
# Spectral gap, steps, acceleration
# ---------------------------------------------------------------------------------------


def test_spectral_gaps_of_known_graphs():
    # complete graph, Metropolis: every degree n - 1, W = J / n: eigenvalues 1, 0
    assert abs(GM.spectral_gap(GM.metropolis(topology.complete(9))) - 1.0) <= AGREE
    # complete graph, lazy: W = I/2 + (J - I) / (2(n-1)): λ_2 = 1/2 - 1/(2(n-1))
    n = 9
    assert abs(GM.spectral_gap(GM.lazy(topology.complete(n))) - (0.5 + 0.5 / (n - 1))) <= AGREE
    # cycle C_n, Metropolis W = (I + A)/3: λ_2 = (1 + 2 cos(2π/n)) / 3
    for n in (5, 12, 41):
        cyc = graph(g=nx.cycle_graph(n))
        gap = 2 * (1 - math.cos(2 * math.pi / n)) / 3
        assert abs(GM.spectral_gap(GM.metropolis(cyc)) - gap) <= AGREE
        # lazy W = I/2 + A/4: λ_2 = (1 + cos(2π/n)) / 2
        assert abs(GM.spectral_gap(GM.lazy(cyc)) - (1 - math.cos(2 * math.pi / n)) / 2) <= AGREE
    # hypercube Q_d: adjacency eigenvalues d - 2k; Metropolis W = (I + A)/(d+1): gap
    # 2/(d+1); lazy W = I/2 + A/(2d): gap 1/d
    for d in (3, 6):
        assert abs(GM.spectral_gap(GM.metropolis(hypercube(d))) - 2 / (d + 1)) <= AGREE
        assert abs(GM.spectral_gap(GM.lazy(hypercube(d))) - 1 / d) <= AGREE


def test_sparse_eigensolver_agrees_with_the_closed_form():
    d = 8  # n = 256 > dense_limit: ARPACK
    assert abs(GM.spectral_gap(GM.metropolis(hypercube(d)), dense_limit=100) - 2 / (d + 1)) \
        <= AGREE
    n = 300
    gap = 2 * (1 - math.cos(2 * math.pi / n)) / 3
    assert abs(GM.spectral_gap(GM.metropolis(graph(g=nx.cycle_graph(n))), dense_limit=100)
               - gap) <= AGREE


def test_default_steps_on_the_muffliato_hypercube():
    """Spec: hypercube of dimension 11, σ = 1: gap = 1/6 and T = 19.

    Metropolis on the 11-regular hypercube: W = (I + A)/12, λ_2 = (1 + 9)/12 = 5/6, so
    gap = 1/6; T = ⌈√6 · ln(2048 · 1)⌉ = ⌈2.449490 · 7.624619⌉ = ⌈18.676⌉ = 19. The spec's
    numbers agree with its formula."""
    W = GM.metropolis(hypercube(11))
    gap = GM.spectral_gap(W)
    assert abs(gap - 1 / 6) <= AGREE
    assert math.sqrt(6) * math.log(2048) == pytest.approx(18.676, abs=1e-3)
    assert GM.default_steps(gap, 1.0, 2048) == 19
    # σ < 1/2 uses max(1/4, σ²) = 1/4: ln(2048 / 0.0625 / 4) = ln 8192; √6 ln 8192 = 22.07
    assert GM.default_steps(1 / 6, 0.25, 2048) == 23
    # σ >= 1/2: n/σ² · σ² = n, independent of σ
    assert GM.default_steps(1 / 6, 7.0, 2048) == 19


@pytest.mark.parametrize("args,param", [((0.0, 1.0, 10), "gap"), ((0.5, 0.0, 10), "sigma"),
                                        ((0.5, 1.0, 1), "nodes"), ((2.5, 1.0, 10), "gap")])
def test_default_steps_refuses_bad_input(args, param):
    with pytest.raises(InputError) as err:
        GM.default_steps(*args)
    assert err.value.param == param


def test_chebyshev_gamma_is_the_optimal_heavy_ball_parameter():
    for gap in (1e-4, 0.01, 1 / 6, 0.5, 1.0):
        c = 1 - gap / 2
        assert GM.chebyshev_gamma(gap) == pytest.approx(2 / (1 + math.sqrt(1 - c * c)),
                                                       rel=1e-12)
        assert 1 <= GM.chebyshev_gamma(gap) < 2


# ---------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------


def test_plain_gossip_follows_its_recursion_and_contracts():
    topo = graph(g=nx.cycle_graph(64))
    W = GM.metropolis(topo)
    x0 = np.random.default_rng(1).normal(size=64)
    X = averaging.gossip(W, x0, 300)
    assert X.shape == (301, 64)
    Wd = dense(W)
    assert np.abs(X[1:] - X[:-1] @ Wd.T).max() <= 1e-13
    assert np.abs(X.mean(axis=1) - x0.mean()).max() <= 1e-13  # W doubly stochastic
    # x_t - x̄ = W^t (x_0 - x̄) and ‖W^t‖ = λ^t on the complement of 1
    lam = np.sort(np.abs(np.linalg.eigvalsh(Wd)))[-2]
    err = np.linalg.norm(X - x0.mean(), axis=1)
    t = np.arange(301)
    assert (err <= lam**t * err[0] * (1 + 1e-12) + 1e-13).all()
    assert err[-1] <= 0.05 * err[0]  # and consensus is being reached


def test_accelerated_gossip_follows_its_recursion_and_beats_plain():
    topo = graph(g=nx.cycle_graph(64))
    W = GM.metropolis(topo)
    gap = GM.spectral_gap(W)
    gamma = GM.chebyshev_gamma(gap)
    x0 = np.random.default_rng(2).normal(size=(64, 3))  # three runs at once
    steps = GM.default_steps(gap, 1.0, 64)
    X = averaging.gossip(W, x0, steps, accelerated=True, gamma=gamma)
    Wd = dense(W)
    assert np.abs(X[1] - Wd @ X[0]).max() <= 1e-13
    for t in range(1, steps):
        assert np.abs(X[t + 1] - (gamma * Wd @ X[t] + (1 - gamma) * X[t - 1])).max() <= 1e-12
    assert np.abs(X.mean(axis=1) - x0.mean(axis=0)).max() <= 1e-12
    # x_T - x̄ = P_T(W)(x_0 - x̄): its norm is at most max |p_T(λ)| over the other
    # eigenvalues, and that is below λ_2^T (the point of the acceleration)
    lam = np.sort(np.linalg.eigvalsh(Wd))[:-1]
    P = powers(W, steps, gamma)[steps]
    worst = np.abs(np.linalg.eigvalsh(P))
    worst = np.sort(worst)[-2]  # drop the eigenvalue 1 of the consensus vector
    dev = x0 - x0.mean(axis=0)
    assert (np.linalg.norm(X[-1] - x0.mean(axis=0), axis=0)
            <= worst * np.linalg.norm(dev, axis=0) * (1 + 1e-10)).all()
    assert worst < np.abs(lam).max() ** steps / 3
    # the default gamma is the one from the gap
    assert np.array_equal(averaging.gossip(W, x0, steps, accelerated=True), X)


def test_what_a_node_receives():
    topo = six()
    W = GM.metropolis(topo)
    adj = GM.adjacency(topo)
    X = averaging.gossip(W, np.arange(6.0), 4)
    nb, values = averaging.received(X, adj, 2)
    assert nb.tolist() == [0, 1, 3]
    assert np.array_equal(values, X[:, [0, 1, 3]])


def test_gamma_needs_acceleration_and_bad_steps_are_refused():
    W = GM.metropolis(six())
    with pytest.raises(InputError) as err:
        averaging.gossip(W, np.zeros(6), 3, gamma=1.2)
    assert err.value.param == "gamma"
    with pytest.raises(InputError) as err:
        averaging.gossip(W, np.zeros(6), -1)
    assert err.value.param == "steps"
    with pytest.raises(InputError) as err:
        averaging.gossip(W, np.zeros(5), 3)
    assert err.value.param == "x0"


# ---------------------------------------------------------------------------------------
# The message sum (the spec's formula)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("accelerated", [False, True])
@pytest.mark.parametrize("steps", [0, 1, 3, 8])
def test_message_sum_equals_the_brute_force(accelerated, steps):
    topo = six()
    W = GM.metropolis(topo)
    gamma = GM.chebyshev_gamma(GM.spectral_gap(W)) if accelerated else None
    A = powers(W, steps, gamma)
    got = MS.message_sum(W, GM.adjacency(topo), steps, accelerated=accelerated, gamma=gamma)
    assert got.method == "dense" and got.bound == "message-sum"
    C = got.values.copy()
    np.fill_diagonal(C, 0)
    assert np.abs(C - brute_sum(topo, A)).max() <= AGREE


def test_accelerated_accounting_uses_the_polynomial_actually_applied():
    """The published-script bug: accounting an accelerated run with ``W^t``.

    Planted-bug check: the plain-``W^t`` sum differs from the brute force of the
    accelerated view by far more than the tolerance, so a library making that slip fails
    the equality below."""
    topo = six()
    W = GM.metropolis(topo)
    adj = GM.adjacency(topo)
    gamma = GM.chebyshev_gamma(GM.spectral_gap(W))
    steps = 6
    accelerated = brute_sum(topo, powers(W, steps, gamma))
    with_wt = brute_sum(topo, powers(W, steps))
    got = MS.message_sum(W, adj, steps, accelerated=True, gamma=gamma).matrix()
    np.fill_diagonal(got, 0)
    uncapped = MS.message_sum(W, adj, steps, accelerated=True, gamma=gamma).values.copy()
    np.fill_diagonal(uncapped, 0)
    assert np.abs(uncapped - accelerated).max() <= AGREE
    assert np.abs(with_wt - accelerated).max() > 1e-3  # the bug would be caught
    assert np.abs(got - np.minimum(accelerated, 1)).max() <= AGREE


def test_dense_sources_sampled_and_transitive_paths_agree():
    for topo, transitive in ((graph(g=nx.karate_club_graph(), name="karate"), False),
                             (hypercube(6), True)):
        W = GM.metropolis(topo)
        adj = GM.adjacency(topo)
        gamma = GM.chebyshev_gamma(GM.spectral_gap(W))
        for g in (None, gamma):
            kw = {"accelerated": g is not None, "gamma": g}
            full = MS.message_sum(W, adj, 9, **kw)
            every = MS.message_sum(W, adj, 9, sources=np.arange(topo.n), block=7, **kw)
            assert np.abs(every.values - full.values).max() <= AGREE
            rng = np.random.default_rng(3)
            sampled = MS.message_sum(W, adj, 9, samples=5, rng=rng, **kw)
            assert sampled.method == "sampled" and len(sampled.nodes) == 5
            assert np.abs(sampled.values - full.values[sampled.nodes]).max() <= AGREE
            assert np.abs(MS.row_norms(W, 9, **kw) - _row_norms_dense(W, 9, g)).max() <= AGREE
            if transitive:
                one = MS.message_sum(W, adj, 9, transitive=True, **kw)
                assert one.method == "transitive" and one.nodes.tolist() == [0]
                assert np.abs(one.values - full.values[:1]).max() <= AGREE
                assert one.mean() == pytest.approx(full.mean(), abs=AGREE)
                assert one.stderr() == 0.0


def _row_norms_dense(W, steps, gamma):
    return np.array([(At**2).sum(axis=1) for At in powers(W, steps, gamma)])


def test_plain_row_norms_are_the_diagonal_of_the_even_power():
    W = GM.metropolis(six())
    rn = MS.row_norms(W, 5)
    Wd = dense(W)
    for t in range(6):
        assert np.abs(rn[t] - np.diag(np.linalg.matrix_power(Wd, 2 * t))).max() <= AGREE


def test_transitive_is_refused_where_it_does_not_hold():
    topo = graph(g=nx.cycle_graph(12))
    W = GM.metropolis(topo)
    adj = GM.adjacency(topo)
    assert MS.message_sum(W, adj, 5, transitive=True).method == "transitive"  # a cycle is
    for t in (six(), graph(g=nx.circular_ladder_graph(4).subgraph(range(7)))):
        with pytest.raises(InputError) as err:
            MS.message_sum(GM.metropolis(t), GM.adjacency(t), 5, transitive=True)
        assert err.value.param == "topology"
    # regular but not transitive: the Frucht graph (3-regular, trivial automorphism group)
    # (at T = 2: from T = 3 on, every view of this 12-node graph is the whole space, all
    # joint losses are 1 and the check rightly passes)
    frucht = graph(g=nx.frucht_graph())
    for fn in (MS.message_sum, G.joint):
        with pytest.raises(InputError, match="not vertex-transitive"):
            fn(GM.metropolis(frucht), GM.adjacency(frucht), 2, transitive=True)
    assert GM.vertex_transitive(hypercube(3)) and GM.vertex_transitive(topology.complete(4))
    assert not GM.vertex_transitive(topo)  # conservative: only the named ones


def test_sampled_mean_and_its_standard_error():
    topo = graph(g=nx.karate_club_graph(), name="karate")
    W = GM.metropolis(topo)
    adj = GM.adjacency(topo)
    full = MS.message_sum(W, adj, 6)
    rows = full.capped()
    per_source = (rows.sum(axis=1) - np.diag(rows)) / (topo.n - 1)
    assert full.mean() == pytest.approx(per_source.mean(), abs=AGREE)
    sampled = MS.message_sum(W, adj, 6, samples=10, rng=np.random.default_rng(4))
    k, n = 10, topo.n
    expected_se = per_source[sampled.nodes].std(ddof=1) / math.sqrt(k) * math.sqrt(1 - k / n)
    assert sampled.stderr() == pytest.approx(expected_se, rel=1e-12)
    assert abs(sampled.mean() - full.mean()) <= 5 * sampled.stderr()
    everyone = MS.message_sum(W, adj, 6, samples=n, rng=np.random.default_rng(4))
    assert everyone.stderr() == 0.0 and everyone.mean() == pytest.approx(full.mean())
    assert math.isnan(MS.message_sum(W, adj, 6, sources=[1, 2]).stderr())


def test_hypercube_message_sum_by_distance():
    """Spec check: on the hypercube every pair at the same distance has the same loss,
    and the loss falls with distance. Both hold for the plain message sum (uncapped: the
    cap makes distances 1 and 2 equal). For the accelerated one the first holds and the
    second does not: far pairs get more than middle ones (P_t(W) has negative entries).
    Neither holds a meaning for the joint view (see the closed form below)."""
    topo = hypercube(7)
    W = GM.metropolis(topo)
    adj = GM.adjacency(topo)
    steps = GM.default_steps(GM.spectral_gap(W), 1.0, topo.n)
    for accelerated in (False, True):
        losses = MS.message_sum(W, adj, steps, accelerated=accelerated)
        dist = GM.hop_distances(adj, losses.nodes)
        rows = G.by_distance(losses, dist, values=losses.values)
        assert [r["distance"] for r in rows] == list(range(1, 8))
        assert [r["pairs"] for r in rows] == [math.comb(7, k) * 128 for k in range(1, 8)]
        for r in rows:
            assert r["max"] - r["min"] <= AGREE
        means = [r["mean"] for r in rows]
        assert means[0] >= 1.0  # neighbours receive z_u at t = 0: the LDP level
        assert G.by_distance(losses, dist)[0]["max"] == 1.0  # capped
        falls = all(a > b for a, b in zip(means, means[1:], strict=False))
        assert falls != accelerated, means
        if accelerated:
            assert means[-1] > means[4] > 0.4, means


def test_complete_graph_closed_form():
    """Metropolis on K_n is J/n: A_0 = I and A_t = J/n for t >= 1, every row norm 1/n.
    Every u != v is a neighbour of v: C = 1 (t = 0, w = u) + T (n - 1) (1/n²)/(1/n).
    The joint view holds every z_w from t = 0: c = 1."""
    n, steps = 9, 4
    topo = topology.complete(n)
    W, adj = GM.metropolis(topo), GM.adjacency(topo)
    for losses in (MS.message_sum(W, adj, steps), MS.message_sum(W, adj, steps, transitive=True)):
        assert np.abs(losses.values[losses.pair_mask()] - (1 + steps * (n - 1) / n)).max() \
            <= AGREE
        assert losses.capped()[losses.pair_mask()].min() == 1.0
    assert (G.joint(W, adj, steps).values == 1.0).all()


def test_losses_never_exceed_the_ldp_level():
    topo = graph(g=nx.karate_club_graph(), name="karate")
    W = GM.metropolis(topo)
    adj = GM.adjacency(topo)
    losses = MS.message_sum(W, adj, 30)
    assert losses.values.max() > 1  # uncapped, the sum goes above: the cap matters
    assert losses.capped().max() <= 1.0
    sigma, delta = 2.0, 1e-6
    ldp = float(linear_rdp_epsilon(1 / (2 * sigma**2), delta))
    eps = losses.epsilon(sigma, delta)
    # the converter rounds ρ up by at most 0.6 %, so ε stays within ε(1.006 ρ_LDP)
    assert eps.max() <= float(linear_rdp_epsilon(1.006 / (2 * sigma**2), delta))
    assert eps.max() >= ldp  # neighbours are at the LDP level
    assert np.allclose(losses.rdp(2.0, sigma), 2.0 / (2 * sigma**2) * losses.capped())


def test_by_distance_on_a_path():
    topo = graph([(0, 1), (1, 2), (2, 3)])
    W = GM.metropolis(topo)
    adj = GM.adjacency(topo)
    losses = MS.message_sum(W, adj, 2)
    D = GM.hop_distances(adj, losses.nodes)
    C = losses.matrix()
    rows = G.by_distance(losses, D)
    assert [r["distance"] for r in rows] == [1, 2, 3]
    assert [r["pairs"] for r in rows] == [6, 4, 2]
    far = [C[0, 3], C[3, 0]]
    assert rows[2]["mean"] == pytest.approx(np.mean(far), abs=1e-15)
    assert rows[2]["min"] == min(far) and rows[2]["max"] == max(far)
    assert sum(r["pairs"] for r in rows) == 12


# ---------------------------------------------------------------------------------------
# The joint view (exact) and the spec's claim that the sum bounds it
# ---------------------------------------------------------------------------------------


def _well_posed(conds):
    """The pseudo-inverse is well defined: a clean gap between the kept eigenvalues and
    the numerical zeros; the relative error of δμᵀ Σ⁺ δμ is then about
    ``eps · λ_max / λ_min`` (times the dimension)."""
    assert conds[:, 0].min() >= 1e-8 and conds[:, 1].max() <= 1e-13
    return 1e3 * EPS / conds[:, 0].min()


@pytest.mark.parametrize("steps", [0, 1, 2, 3, 5])
def test_joint_equals_the_brute_force_plain_and_accelerated(steps):
    """Plain and accelerated views give the same exact loss (same Krylov space)."""
    topo = six()
    W = GM.metropolis(topo)
    gamma = GM.chebyshev_gamma(GM.spectral_gap(W))
    got = G.joint(W, GM.adjacency(topo), steps)
    assert got.role == "observer" and got.method == "dense"
    J = got.values.T.copy()  # [u, v]
    for g in (None, gamma):
        brute, conds = brute_joint(topo, powers(W, steps, g))
        tol = _well_posed(conds)
        assert np.abs(off_diagonal(J - brute)).max() <= tol
    assert got.margin[1] <= 1e-14  # only rounding was dropped


def test_joint_is_bounded_by_ldp_and_by_each_message():
    """Monotonicity: v's view contains every single message, so its loss is at least the
    largest one-message term of the sum; and it is at most the LDP level."""
    topo = graph(g=nx.karate_club_graph(), name="karate")
    W = GM.metropolis(topo)
    adj = GM.adjacency(topo)
    for steps in (1, 4):
        A = powers(W, steps)
        J = G.joint(W, adj, steps).values.T
        single = np.zeros((topo.n, topo.n))
        for v in range(topo.n):
            for At in A:
                rows = At[neighbours(topo, v)]
                terms = rows**2 / (rows**2).sum(axis=1, keepdims=True)
                single[:, v] = np.maximum(single[:, v], terms.max(axis=0))
        assert off_diagonal(J - single).min() >= -AGREE
        assert J.max() <= 1 + AGREE


def test_the_message_sum_is_not_an_upper_bound_path_counterexample():
    """Refutes the spec's "the sum ... is an upper bound" (§3.1, Sanity checks).

    Path 0 - 1 - 2, Metropolis, T = 1, observer 0, source 2. Row 1 of W is (1/3, 1/3,
    1/3). Node 0 receives z_1 (t = 0) and (z_0 + z_1 + z_2)/3 (t = 1) and knows z_0, so
    z_2 = 3 x_1[1] - z_1 - z_0 exactly: the joint loss is the LDP level, c = 1. The sum
    gives 0 (t = 0) + (1/3)² / (3 · (1/3)²) = 1/3. Without its own value the view's rows
    are e_1 and (1, 1, 1)/3, whose span holds e_2 with squared projection 1/2 > 1/3."""
    topo = path3()
    W = GM.metropolis(topo)
    adj = GM.adjacency(topo)
    C = MS.message_sum(W, adj, 1).values
    J = G.joint(W, adj, 1).values.T
    assert C[2, 0] == pytest.approx(1 / 3, abs=1e-15)
    assert J[2, 0] == pytest.approx(1.0, abs=1e-15)
    brute_own, _ = brute_joint(topo, powers(W, 1), own=True)
    brute_not, _ = brute_joint(topo, powers(W, 1), own=False)
    assert brute_own[2, 0] == pytest.approx(1.0, abs=1e-12)
    assert brute_not[2, 0] == pytest.approx(0.5, abs=1e-12)
    # the attack itself, on a simulated run
    rng = np.random.default_rng(5)
    z = rng.normal(size=3) + np.array([0.3, 0.9, 0.1])
    X = averaging.gossip(W, z, 1)
    _, got = averaging.received(X, adj, 0)
    assert 3 * got[1, 0] - got[0, 0] - z[0] == pytest.approx(z[2], abs=1e-14)


@pytest.mark.parametrize("accelerated", [False, True])
def test_the_message_sum_is_below_the_joint_loss_for_many_pairs(accelerated):
    """The spec's sanity check "sum >= exact joint loss for every pair" is false: on the
    six-node graph it fails for many pairs, plain and accelerated (for some T none fail:
    plain T = 5 has two, accelerated T = 5 none). Both figures of the failing pairs are
    in the failure message."""
    topo = six()
    W = GM.metropolis(topo)
    adj = GM.adjacency(topo)
    gamma = GM.chebyshev_gamma(GM.spectral_gap(W)) if accelerated else None
    found = {}
    for steps in (1, 2, 3, 5):
        A = powers(W, steps, gamma)
        C = MS.message_sum(W, adj, steps, accelerated=accelerated, gamma=gamma).values
        brute, conds = brute_joint(topo, A)
        tol = _well_posed(conds)
        below = [(u, v, C[u, v], brute[u, v]) for u in range(6) for v in range(6)
                 if u != v and C[u, v] < brute[u, v] - tol]
        found[steps] = below
        # the library's sound figure is the exact one
        J = G.joint(W, adj, steps).values.T
        assert np.abs(off_diagonal(J - brute)).max() <= tol
    report = " | ".join(f"T={t}: " + "; ".join(f"{u}->{v} sum {c:.4f} < joint {j:.4f}"
                                               for u, v, c, j in below)
                        for t, below in found.items())
    # far beyond rounding: the sum misses at least a third of the exact loss somewhere
    worst = max((j - c for below in found.values() for _, _, c, j in below), default=0.0)
    assert worst > 0.3, report
    assert sum(map(len, found.values())) >= 10, report


def test_hypercube_joint_loss_closed_form_and_antipode_attack():
    """Exact joint loss on the hypercube Q_d, any W = aI + bA with distinct eigenvalues per
    Hamming level (Metropolis), T >= d (the Krylov space is then invariant):

    K_v (v = 0) is spanned, in each eigenspace V_j (Walsh functions χ_S, |S| = j), by the
    projections of e_0 and e_i, i.e. by Σ_{|S|=j} a(S) χ_S with a in span{1, [i ∈ S]}.
    Those are the functions x ↦ h(|x|) + Σ_i x_i g_i(|x|); on the sphere |x| = k they
    span {1, x_1..x_d}, of dimension d for 1 <= k <= d-1 and 1 for k in {0, d}. So K_v
    splits over spheres, S_d (fixing v) acts transitively on each, and the diagonal of
    the projection is dim / size: c = d / C(d, k) at distance 1 <= k <= d-1, and c = 1 at
    the antipode (k = d). Not decreasing with distance; the message sum at the antipode
    is about 0.01 at d = 11."""
    for d in (6, 11):
        topo = hypercube(d)
        W = GM.metropolis(topo)
        adj = GM.adjacency(topo)
        steps = GM.default_steps(GM.spectral_gap(W), 1.0, topo.n)
        assert steps >= d
        J = G.joint(W, adj, steps, transitive=True)
        dist = GM.hop_distances(adj, J.nodes)[0]
        expected = np.array([1.0] + [d / math.comb(d, k) for k in range(1, d)] + [1.0])
        assert np.abs(J.values[0] - expected[dist.astype(int)]).max() <= AGREE
        assert J.margin[0] > 1e-8 and J.margin[1] < 1e-13  # a clean rank cut (relative)
        C = MS.message_sum(W, adj, steps, transitive=True)
        antipode = int(np.flatnonzero(dist == d)[0])
        assert C.values[0, antipode] < 0.12  # the sum claims strong protection there
    # d = 11, T = 19: node 0 rebuilds the antipode's noisy value from its messages
    nb = neighbours(topo, 0)
    cols = [Y.T for Y in _columns(W, nb, 19)]  # (A_t)_{w,:} = (A_t e_w)ᵀ: W symmetric
    M = np.vstack(cols + [np.eye(topo.n)[:1]])
    coef, *_ = np.linalg.lstsq(M.T, np.eye(topo.n)[antipode], rcond=None)
    assert np.abs(M.T @ coef - np.eye(topo.n)[antipode]).max() <= 1e-10
    z = np.random.default_rng(6).normal(size=topo.n)
    X = averaging.gossip(W, z, 19)
    _, got = averaging.received(X, adj, 0)
    y = np.concatenate([got.ravel(), [z[0]]])  # same order as M's rows
    assert y @ coef == pytest.approx(z[antipode], abs=1e-8 * np.abs(coef).sum())


def _columns(W, nodes, steps):
    """``W^t [e_w for w in nodes]`` for t <= T by repeated sparse products."""
    X = np.eye(W.shape[0])[:, nodes]
    out = [X]
    for _ in range(steps):
        out.append(W @ out[-1])
    return out


def test_joint_paths_agree():
    topo = graph(g=nx.karate_club_graph(), name="karate")
    W = GM.metropolis(topo)
    adj = GM.adjacency(topo)
    full = G.joint(W, adj, 4)
    some = G.joint(W, adj, 4, observers=[3, 7])
    assert np.abs(some.values - full.values[[3, 7]]).max() <= AGREE
    sampled = G.joint(W, adj, 4, samples=6, rng=np.random.default_rng(7))
    assert np.abs(sampled.values - full.values[sampled.nodes]).max() <= AGREE
    cube = hypercube(5)
    Wc, ac = GM.metropolis(cube), GM.adjacency(cube)
    one = G.joint(Wc, ac, 7, transitive=True)
    assert np.abs(one.values - G.joint(Wc, ac, 7).values[:1]).max() <= AGREE
    # the matrix view puts sources on rows for both roles
    assert np.allclose(full.matrix(), full.values.T.clip(max=1) + np.diag(np.full(34, np.nan)),
                       equal_nan=True)


def _rank_mod_p(rows: list[list[int]], p: int) -> int:
    """Rank over the field of p elements (a lower bound of the rank over the rationals)."""
    m, rank = [r[:] for r in rows], 0
    for col in range(len(m[0])):
        pivot = next((i for i in range(rank, len(m)) if m[i][col]), None)
        if pivot is None:
            continue
        m[rank], m[pivot] = m[pivot], m[rank]
        inv = pow(m[rank][col], -1, p)
        m[rank] = [x * inv % p for x in m[rank]]
        for i in range(len(m)):
            if i != rank and m[i][col]:
                f = m[i][col]
                m[i] = [(a - f * b) % p for a, b in zip(m[i], m[rank], strict=True)]
        rank += 1
    return rank


def test_an_uncertain_view_is_sound_and_exact_arithmetic_backs_it():
    """Random geometric graph, the rule's T: the view's singular values run down to the
    rank cut with no gap, so floating point cannot tell its rank; exactly (mod a prime, a
    lower bound of the rational rank) it is nearly full on the ball. The sound report puts
    every node within T + 1 hops at the local level, and none beyond."""
    from fractions import Fraction

    topo = topology.build("random-geometric", 40, seed=3)
    W, adj = GM.metropolis(topo), GM.adjacency(topo)
    steps, v = GM.default_steps(GM.spectral_gap(W), 1.0, topo.n), 0
    J = G.joint(W, adj, steps, observers=[v])
    hops = GM.hop_distances(adj, [v])[0]
    reach = hops <= steps + 1
    p, n = 2**61 - 1, topo.n
    deg = np.diff(topo.indptr)
    Wp = [[0] * n for _ in range(n)]
    for u in range(n):
        total = Fraction(0)
        for w in topo.indices[topo.indptr[u]:topo.indptr[u + 1]]:
            f = Fraction(1, 1 + int(max(deg[u], deg[w])))
            total += f
            Wp[u][int(w)] = f.numerator * pow(f.denominator, -1, p) % p
        Wp[u][u] = (1 - total).numerator * pow((1 - total).denominator, -1, p) % p
    neighbours = [int(w) for w in adj.indices[adj.indptr[v]:adj.indptr[v + 1]]]
    rows = [[int(j == v) for j in range(n)]]
    block = [[int(j == w) for j in range(n)] for w in neighbours]
    rows += block
    for _ in range(steps):
        block = [[sum(r[k] * Wp[k][j] for k in range(n) if r[k]) % p for j in range(n)]
                 for r in block]
        rows += block
    exact = _rank_mod_p(rows, p)
    numeric = np.linalg.matrix_rank(_float_view(W, adj, v, steps))
    assert exact >= numeric and exact >= 0.9 * reach.sum()  # floats miss what is there
    if J.uncertified:
        assert np.all(J.values[0][reach] == 1.0) and np.all(J.values[0][~reach] == 0.0)
    else:  # a clean cut: the numerical rank is the exact one
        assert numeric == exact


def _float_view(W, adj, v, steps):
    dense = W.toarray()
    neighbours = adj.indices[adj.indptr[v]:adj.indptr[v + 1]]
    rows, power = [np.eye(dense.shape[0])[v]], np.eye(dense.shape[0])
    for _ in range(steps + 1):
        rows += [power[w] for w in neighbours]
        power = dense @ power
    return np.array(rows)


def test_joint_gives_no_loss_to_a_node_out_of_reach():
    """With T steps, every message v receives depends only on nodes within T + 1 hops of
    v, so ``c[u, v] = 0`` exactly beyond. Random geometric graph, n = 200, seed 1, T = 4,
    observer 19: the source 2 is 8 hops away, and ``joint`` once reported c = 0.89 (the brute
    force, an SVD of the view matrix, gives 0 to rounding). The old block Krylov residuals
    shrank by about 1e-3 to 1e-4 a step; dividing by them multiplied the rounding outside
    the ball of radius T + 1 by as much each step (1e-14, 1e-11, 1e-8, ..., 0.3 in the
    normalised block), and a junk direction of the last block was kept (its residual was
    above the absolute cut ``RANK_TOL`` = 1e-12). Regression test of that bug: the views are
    now built on the ball within reach and cut by one SVD."""
    topo = topology.build("random-geometric", 200, seed=1)
    W = GM.metropolis(topo)
    adj = GM.adjacency(topo)
    steps, v, u = 4, 19, 2
    dist = GM.hop_distances(adj, [v])[0]
    assert dist[u] == 8 > steps + 1
    # the view's matrix: e_v and the rows (W^t)_{w,:}, w in N(v), t <= T: column u is 0
    dense = W.toarray()
    nb = adj.indices[adj.indptr[v]:adj.indptr[v + 1]]
    rows, power = [np.eye(topo.n)[v]], np.eye(topo.n)
    for _ in range(steps + 1):
        rows += [power[w] for w in nb]
        power = dense @ power
    M = np.array(rows)
    assert np.abs(M[:, dist > steps + 1]).max() == 0.0
    _, s, vt = np.linalg.svd(M, full_matrices=False)
    rank = int((s > s[0] * max(M.shape) * np.finfo(float).eps).sum())
    brute = (vt[:rank] ** 2).sum(axis=0)
    assert brute[u] < 1e-12
    got = G.joint(W, adj, steps, observers=[v]).values[0]
    assert got[dist > steps + 1].max() <= 1e-9, (
        f"joint gives c = {got[u]:.3f} to node {u}, {int(dist[u])} hops from observer {v}")


def _hockey_stick(mu2, eps):
    """δ(ε) between the two Gaussian worlds of a view, from its privacy loss variable:
    for ``N(δμ, Σ)`` against ``N(0, Σ)`` the loss ``L = δμᵀΣ⁺(y - 0) - μ²/2`` is
    ``N(μ²/2, μ²)`` under the first and ``N(-μ²/2, μ²)`` under the second, so
    ``δ = P₁(L > ε) - e^ε P₀(L > ε)`` (Dong, Roth and Su, 2022, Corollary 2.13)."""
    from scipy.stats import norm

    s = math.sqrt(mu2)
    return norm.sf((eps - mu2 / 2) / s) - math.exp(eps) * norm.sf((eps + mu2 / 2) / s)


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0])
def test_exact_conversion_is_the_gaussian_curve_of_the_brute_force_view(sigma):
    """``epsilon(..., "pld")`` on the six-node graph: at the ε it returns, the hockey-stick
    divergence of each pair's view (μ² from the pseudo-inverse of the view, not from the
    projection) is the run's δ; and it is below the RDP conversion and the LDP level."""
    from netdp.accounting.gdp import gaussian_epsilon

    topo, steps, delta = six(), 3, 1e-5
    W = GM.metropolis(topo)
    losses = G.joint(W, GM.adjacency(topo), steps)
    brute, _ = brute_joint(topo, powers(W, steps))
    exact = losses.epsilon(sigma, delta, "pld")
    rdp = losses.epsilon(sigma, delta, "rdp")
    ldp = float(gaussian_epsilon(1.0 / sigma, delta))
    for v in range(topo.n):
        for u in range(topo.n):
            if u == v:
                continue
            mu2 = min(brute[u, v], 1.0) / sigma**2
            eps = exact[v, u]
            assert eps <= rdp[v, u] + 1e-12 and eps <= ldp + 1e-12
            if mu2 < 1e-12:
                assert eps == 0.0
                continue
            if eps > 0:
                assert _hockey_stick(mu2, eps) == pytest.approx(delta, rel=1e-6)
            else:
                assert _hockey_stick(mu2, 0.0) <= delta * (1 + 1e-6)


def test_exact_conversion_refuses_an_unknown_accountant():
    losses = G.joint(GM.metropolis(six()), GM.adjacency(six()), 2)
    with pytest.raises(InputError, match="accountant"):
        losses.epsilon(1.0, 1e-5, "kov")


def _exact_view_rank(topo, v, steps):
    """Rank over the rationals of v's view (e_v and the rows of W^t for w in N(v),
    t <= T) with the Metropolis weights as Fractions: Gaussian elimination by hand."""
    from fractions import Fraction

    n = topo.n
    deg = [len(neighbours(topo, u)) for u in range(n)]
    W = [[Fraction(0)] * n for _ in range(n)]
    for u in range(n):
        for w in neighbours(topo, u):
            W[u][w] = Fraction(1, 1 + max(deg[u], deg[w]))
        W[u][u] = 1 - sum(W[u])
    rows = [[Fraction(int(i == v)) for i in range(n)]]
    power = [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]
    for _ in range(steps + 1):
        rows += [list(power[w]) for w in neighbours(topo, v)]
        power = [[sum(power[i][k] * W[k][j] for k in range(n)) for j in range(n)]
                 for i in range(n)]
    rank, col = 0, 0
    while rank < len(rows) and col < n:
        pivot = next((i for i in range(rank, len(rows)) if rows[i][col] != 0), None)
        if pivot is None:
            col += 1
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        for i in range(rank + 1, len(rows)):
            f = rows[i][col] / rows[rank][col]
            if f:
                rows[i] = [a - f * b for a, b in zip(rows[i], rows[rank], strict=True)]
        rank, col = rank + 1, col + 1
    return rank


@pytest.mark.parametrize("make", [six, path3, lambda: graph(g=nx.cycle_graph(7)),
                                  lambda: graph(g=nx.star_graph(5)),
                                  lambda: graph(g=nx.connected_watts_strogatz_graph(9, 4, 0.3,
                                                                                    seed=2))])
def test_view_rank_modulo_a_prime_is_the_rational_rank(make):
    """The modular rank of every view equals its rank over the rationals (Fractions),
    at T = 1 .. 4; on a ball the view reaches, it is the rank of the view itself."""
    topo = make()
    W = GM.metropolis(topo)
    exact = _modular_rank.rational_weights(W)
    assert exact is not None
    adj = GM.adjacency(topo)
    for steps in (1, 2, 4):
        for v in range(topo.n):
            ball = np.flatnonzero(GM.hop_distances(adj, [v])[0] <= steps + 1)
            rank = _modular_rank.view_rank_mod_p(exact, v, ball, steps)
            assert rank == _exact_view_rank(topo, v, steps)


def test_a_full_rank_view_is_proven_exact_and_others_stay_uncertified():
    """The cycle at the rule's T: no clean cut, but every view has full rank modulo p, so
    the level 1 within reach is exact (counted in ``full_rank``, not ``uncertified``).
    A torus view with fewer rows (4 (T + 1) + 1 = 133) than nodes in reach (256) cannot
    be full and stays uncertified; so does a matrix whose weights are not 1/k (it has no
    rational form)."""
    topo = topology.build("cycle", 64)
    W, adj = GM.metropolis(topo), GM.adjacency(topo)
    cyc = G.joint(W, adj, 74, transitive=True)
    assert (cyc.full_rank, cyc.uncertified) == (1, 0)
    assert np.all(cyc.values[0] == 1.0)
    torus = topology.build("torus", 256)
    t = G.joint(GM.metropolis(torus), GM.adjacency(torus), 32, transitive=True)
    assert (t.full_rank, t.uncertified) == (0, 1)
    odd = (0.3 * W + 0.7 * sparse.eye_array(64)).tocsr()  # weights 0.1: not exactly 1/10
    assert _modular_rank.rational_weights(odd) is None
    w2 = G.joint(odd, adj, 300, transitive=True)
    assert w2.full_rank == 0 and w2.uncertified == 1


@pytest.mark.parametrize("members", [[0], [0, 4], [1, 2, 3], [0, 5]])
@pytest.mark.parametrize("steps", [1, 3])
def test_coalition_equals_the_brute_force_of_the_pooled_views(members, steps):
    """A coalition's loss is the exact Rényi coefficient of all its members' views
    stacked (brute force: pseudo-inverse of the pooled covariance); it is at least every
    member's own loss and at most the LDP level; a single member is its own row."""
    topo = six()
    W = GM.metropolis(topo)
    A = powers(W, steps)
    got = G.coalition(W, GM.adjacency(topo), steps, members)
    assert got.members.tolist() == members and got.nodes.tolist() == [-1]
    M = np.vstack([view(topo, A, v) for v in members])
    lam, U = np.linalg.eigh(M @ M.T)
    keep = lam > 1e-12 * lam.max()
    pinv = (U[:, keep] / lam[keep]) @ U[:, keep].T
    single = G.joint(W, GM.adjacency(topo), steps).matrix()
    for u in range(topo.n):
        if u in members:
            assert not got.pair_mask()[0, u]
            continue
        brute = M[:, u] @ pinv @ M[:, u]
        assert got.values[0, u] == pytest.approx(min(brute, 1.0), abs=1e-9)
        assert got.capped()[0, u] >= max(single[u, v] for v in members) - 1e-9
        assert got.capped()[0, u] <= 1.0
    if len(members) == 1:
        row = G.joint(W, GM.adjacency(topo), steps, observers=members).values[0]
        np.testing.assert_allclose(got.values[0], row, atol=1e-12)


def test_coalition_refuses_bad_members():
    topo = six()
    W, adj = GM.metropolis(topo), GM.adjacency(topo)
    for bad in ([], [0, 0], [6], list(range(6))):
        with pytest.raises(InputError, match="coalition"):
            G.coalition(W, adj, 2, bad)
