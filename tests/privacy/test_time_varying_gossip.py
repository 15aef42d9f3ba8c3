"""Gossip on a time-varying graph: per-snapshot matrices, the rounds, the exact view loss.

Ground truth written from the definitions, independently of the library: the Metropolis
matrix of each snapshot from networkx degrees (or weighted degrees), the realised products
``B_t = W_{s(t-1)} ⋯ W_{s(0)}`` as dense matrix products, the observer's view as one row
per value it holds (its own state at every round) and per message it receives (``x_t[w]``
for every neighbour w of the round's snapshot), and the Gaussian mechanism's exact
coefficient ``δμᵀ (M Mᵀ)⁺ δμ`` with ``δμ = M e_u`` (σ = Δ = 1), the pseudo-inverse taken
on the eigenvalues above the numerical null space.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from netdp.engine import averaging
from netdp.engine import gossip_rounds as static_engine
from netdp.engine import time_varying_gossip as E
from netdp.graphs import gossip_matrix as GM
from netdp.graphs import topologies as topology
from netdp.graphs.gossip_snapshots import gossip_matrices, gossip_plan
from netdp.graphs.time_varying import from_networkx_sequence
from netdp.tracking import gossip as G
from netdp.tracking import time_varying_gossip as T

CASES = 40
EPS = np.finfo(float).eps
SIX_EDGES = [(0, 1), (0, 2), (1, 2), (2, 3), (3, 4), (3, 5), (4, 5), (1, 5)]


def random_snapshots(n, k, rng, weighted):
    """``k`` random undirected graphs on ``0..n-1`` whose union is connected (some
    snapshots sparse, some nodes isolated in some snapshots)."""
    while True:
        graphs = []
        for _ in range(k):
            g = nx.gnp_random_graph(n, float(rng.uniform(0.2, 0.7)),
                                    seed=int(rng.integers(2**31)))
            if weighted:
                for a, b in g.edges:
                    g[a][b]["w"] = float(rng.integers(1, 4))
            graphs.append(g)
        union = nx.compose_all(graphs)
        if nx.is_connected(union):
            return graphs


def brute_metropolis(g, weighted):
    """``W_uv = w_uv / (w̄ + max(d_u, d_v))`` (unweighted: w = 1, w̄ = 1), diagonal
    completing; no edge: the identity."""
    n = g.number_of_nodes()
    W = np.zeros((n, n))
    if g.number_of_edges():
        w = {(a, b): (g[a][b]["w"] if weighted else 1.0) for a, b in g.edges}
        mean = np.mean(list(w.values()))
        deg = np.zeros(n)
        for (a, b), x in w.items():
            deg[a] += x
            deg[b] += x
        for (a, b), x in w.items():
            W[a, b] = W[b, a] = x / (mean + max(deg[a], deg[b]))
    W[np.diag_indices(n)] = 1.0 - W.sum(axis=1)
    return W


def schedule(k, period, after, steps):
    out = []
    for t in range(steps + 1):
        j = t // period
        out.append(j % k if after == "cycle" else min(j, k - 1))
    return out


def brute_view(graphs, sched, steps, members, weighted):
    """Every value the observers hold or receive, as a row over the noisy inputs."""
    n = graphs[0].number_of_nodes()
    Ws = [brute_metropolis(g, weighted) for g in graphs]
    B = np.eye(n)
    rows = []
    for t in range(steps + 1):
        g = graphs[sched[t]]
        for v in members:
            rows.append(B[v])  # its own state at round t (t = 0: its noisy value)
            rows += [B[w] for w in sorted(g.neighbors(v))]  # the messages it receives
        B = Ws[sched[t]] @ B
    return np.array(rows)


def brute_coefficients(M):
    """``c[u] = δμᵀ Σ⁺ δμ`` (σ = 1) for every u, and whether the pseudo-inverse is well
    posed (a clean gap between kept eigenvalues and numerical zeros)."""
    lam, U = np.linalg.eigh(M @ M.T)
    top = lam.max()
    keep = lam > 1e-12 * top
    posed = lam[keep].min() >= 1e-8 * top and lam[~keep].max(initial=0) <= 1e-13 * top
    pinv = (U[:, keep] / lam[keep]) @ U[:, keep].T
    return np.einsum("iu,ij,ju->u", M, pinv, M), posed


def tv_of(graphs, period=1, after="cycle", weighted=False):
    return from_networkx_sequence(graphs, period=period, after=after,
                                  weight="w" if weighted else None)


def cases():
    rng = np.random.default_rng(2026)
    for i in range(CASES):
        n = int(rng.integers(3, 7))
        k = int(rng.integers(2, 4))
        weighted = i % 3 == 2
        graphs = random_snapshots(n, k, rng, weighted)
        yield (graphs, int(rng.integers(1, 3)), ["cycle", "last"][i % 2],
               int(rng.integers(1, 5)), weighted)


# ---------------------------------------------------------------------------------------
# Matrices and rounds
# ---------------------------------------------------------------------------------------


def test_snapshot_matrices_follow_the_static_rule_and_isolated_nodes_keep_their_value():
    rng = np.random.default_rng(5)
    for weighted in (False, True):
        graphs = random_snapshots(6, 3, rng, weighted)
        graphs.append(nx.empty_graph(6))  # nobody talks: the identity
        tv = tv_of(graphs, weighted=weighted)
        mats = gossip_matrices(tv)
        assert len(mats) == 4 and gossip_plan(tv) is gossip_plan(tv)  # cached
        for g, W in zip(graphs, mats, strict=True):
            dense = W.toarray()
            assert np.abs(dense - brute_metropolis(g, weighted)).max() <= 1e-15
            assert np.allclose(dense, dense.T) and np.allclose(dense.sum(axis=1), 1.0)
            for x in nx.isolates(g):
                assert np.array_equal(dense[x], np.eye(6)[x])


def test_time_varying_gossip_refuses_what_it_does_not_do():
    from netdp.core.errors import InputError

    graphs = [nx.path_graph(3), nx.cycle_graph(3)]
    with pytest.raises(InputError, match="metropolis or lazy"):
        gossip_plan(tv_of(graphs), "weights.npy")
    directed = [nx.DiGraph([(0, 1), (1, 2), (2, 0)])] * 2
    with pytest.raises(InputError, match="undirected"):
        gossip_plan(tv_of(directed))


def test_one_snapshot_is_the_static_engine_bit_for_bit():
    """Same trace edges and, from the same noise draws, the same states bit for bit."""
    g = nx.Graph(SIX_EDGES)
    static = topology.from_networkx(g)
    plan = gossip_plan(tv_of([g]))
    W = GM.GossipPlan.build(static, "metropolis", False).W
    steps, n = 7, 6
    trace, ref = E.run(plan, steps), static_engine.run("vector", static, steps)
    assert np.array_equal(trace.gossip.src, ref.gossip.src)
    assert np.array_equal(trace.gossip.dst, ref.gossip.dst)
    assert trace.gossip.messages == ref.gossip.messages == (steps + 1) * 16
    for mine, theirs in zip(trace.gossip.all_messages(), ref.gossip.all_messages(),
                            strict=True):
        assert np.array_equal(mine, theirs)
    data = np.random.default_rng(1).random(n)
    x0 = data + 0.7 * np.random.default_rng(9).standard_normal(n)
    assert np.array_equal(E.states(plan, x0, steps), averaging.gossip(W, x0, steps))
    X0 = np.random.default_rng(3).standard_normal((n, 4))
    assert np.array_equal(E.states(plan, X0, steps), averaging.gossip(W, X0, steps))


def test_rounds_carry_the_snapshot_of_their_time_and_states_use_its_matrix():
    rng = np.random.default_rng(11)
    graphs = random_snapshots(6, 3, rng, False)
    steps, period, after = 7, 2, "last"
    plan = gossip_plan(tv_of(graphs, period, after))
    sched = schedule(3, period, after, steps)
    trace = E.run(plan, steps)
    assert trace.gossip.snapshot.tolist() == sched
    assert trace.gossip.messages == sum(2 * graphs[k].number_of_edges() for k in sched)
    x0 = rng.standard_normal(6)
    xs = E.states(plan, x0, steps)
    Ws = [brute_metropolis(g, False) for g in graphs]
    x = x0.copy()
    for t in range(steps + 1):
        assert np.abs(xs[t] - x).max() <= 1e-14
        src, dst = trace.gossip.links(t)
        assert sorted(zip(src.tolist(), dst.tolist(), strict=True)) == sorted(
            [(a, b) for a, b in graphs[sched[t]].edges] + [(b, a) for a, b in
                                                           graphs[sched[t]].edges])
        x = Ws[sched[t]] @ x
    t_all, src_all, dst_all = trace.gossip.all_messages()  # what --trace-out writes
    assert t_all.size == trace.gossip.messages
    for t in range(steps + 1):
        src, dst = trace.gossip.links(t)
        assert np.array_equal(src_all[t_all == t], src)
        assert np.array_equal(dst_all[t_all == t], dst)
    who, when, got = E.received(trace.gossip, xs, 2)
    assert all(w in graphs[sched[t]][2] for w, t in zip(who, when, strict=True))
    assert len(who) == sum(graphs[sched[t]].degree(2) for t in range(steps + 1))
    assert np.array_equal(got, xs[when, who])
    B = np.eye(6)
    for t in range(steps):
        B = Ws[sched[t]] @ B
    assert np.abs(E.final_row_norms(plan, steps) - (B**2).sum(axis=1)).max() <= 1e-14


# ---------------------------------------------------------------------------------------
# The exact view
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("steps", [0, 1, 2, 3, 5])
def test_one_snapshot_equals_the_static_tracker(steps):
    """The six-node graph and the karate club: every observer and a coalition, to 1e-12
    where the views are well conditioned (smallest kept singular value >= 1e-3 of the
    largest). The static code builds the rows of ``W^t`` from the right, this one the
    products from the left: the rounding differs, and a projection moves by about
    ``eps / s_min`` (Wedin), which is the tolerance of the ill-conditioned views (the
    karate club at T = 5: s_min = 6e-7, difference 1.5e-11)."""
    for g in (nx.Graph(SIX_EDGES), nx.karate_club_graph()):
        static = topology.from_networkx(g)
        W, adj = GM.metropolis(static), GM.adjacency(static)
        plan = gossip_plan(tv_of([g]))
        ref, got = G.joint(W, adj, steps), T.joint(plan, steps)
        if ref.uncertified or ref.full_rank:
            continue  # not a certified cut: compared where both are exact
        assert got.uncertified == 0
        assert got.margin[0] == pytest.approx(ref.margin[0], rel=1e-6)
        tol = 1e-12 if ref.margin[0] >= 1e-3 else 1e3 * EPS / ref.margin[0]
        assert np.abs(got.values - ref.values).max() <= tol
        members = [0, 3]
        pooled = G.coalition(W, adj, steps, members)
        tol = 1e-12 if pooled.margin[0] >= 1e-3 else 1e3 * EPS / pooled.margin[0]
        assert np.abs(T.coalition(plan, steps, members).values - pooled.values).max() <= tol


def test_exact_view_equals_the_brute_force_on_small_time_varying_graphs():
    """40 random cases: 3-6 nodes, 2-3 snapshots (some weighted), period 1-2, cycle or
    last, T = 1-4; every single observer and one 2-node coalition, to 1e-9."""
    compared = 0
    for graphs, period, after, steps, weighted in cases():
        n = graphs[0].number_of_nodes()
        plan = gossip_plan(tv_of(graphs, period, after, weighted))
        sched = schedule(len(graphs), period, after, steps)
        got = T.joint(plan, steps)
        for v in range(n):
            brute, posed = brute_coefficients(brute_view(graphs, sched, steps, [v], weighted))
            if not posed:
                assert np.all(got.values[v] >= brute - 1e-9)  # sound either way
                continue
            assert np.abs(got.values[v] - brute).max() <= 1e-9, (v, got.values[v], brute)
            compared += 1
        members = [0, n - 1]
        brute, posed = brute_coefficients(brute_view(graphs, sched, steps, members, weighted))
        pooled = T.coalition(plan, steps, members).values[0]
        if posed:
            outside = np.setdiff1d(np.arange(n), members)
            assert np.abs(pooled[outside] - brute[outside]).max() <= 1e-9
    assert compared >= 150  # the test bites: most views are well posed


def test_pairwise_loss_never_exceeds_the_local_level():
    from netdp.accounting.gdp import gaussian_epsilon
    from netdp.tracking.sgd import epsilon

    sigma, delta = 0.8, 1e-5
    ldp = {"pld": float(gaussian_epsilon(1.0 / sigma, delta)),
           "rdp": float(epsilon(1.0 / (2.0 * sigma**2), delta))}
    for graphs, period, after, steps, weighted in cases():
        got = T.joint(gossip_plan(tv_of(graphs, period, after, weighted)), steps + 3)
        assert got.values.max() <= 1.0 and got.values.min() >= 0.0
        for accountant, level in ldp.items():
            eps = got.epsilon(sigma, delta, accountant)[got.pair_mask()]
            assert eps.max() <= level * (1 + 1e-12)


def test_ignoring_time_understates_the_loss():
    """Path 0 - 1 - 2 whose edges alternate: 0 - 1 at even rounds, 1 - 2 at odd ones. With
    T = 2, node 0 hears z_1 at round 0 and x_2[1] = (z_0 + z_1)/4 + z_2/2 at round 2, so it
    rebuilds z_2: c = 1. Snapshot 0's matrix at every round never lets z_2 out (c = 0).
    Then the 40 random cases
    with period 1: ignoring time (snapshot 0 in force throughout) is below the exact loss
    for some pairs and above it for others."""
    g0, g1 = nx.Graph([(0, 1)]), nx.Graph([(1, 2)])
    g0.add_nodes_from(range(3))
    g1.add_nodes_from(range(3))
    tv = tv_of([g0, g1])
    plan = gossip_plan(tv)
    exact = T.joint(plan, 2).values
    assert exact[0, 2] == pytest.approx(1.0, abs=1e-12)
    assert exact[2, 0] == pytest.approx(0.5, abs=1e-12)
    frozen = gossip_plan(tv_of([g0, g1], period=10))  # snapshot 0 for rounds 0..9
    assert T.joint(frozen, 2).values[0, 2] == 0.0
    below = above = 0
    for graphs, _, after, steps, weighted in cases():
        exact = T.joint(gossip_plan(tv_of(graphs, 1, after, weighted)), steps + 1).values
        first = T.joint(gossip_plan(tv_of(graphs, steps + 2, after, weighted)),
                        steps + 1).values
        below += int((first < exact - 1e-6).sum())
        above += int((first > exact + 1e-6).sum())
    assert below > 0 and above > 0  # not a bound either way


def test_view_rank_modulo_a_prime_is_the_rank_of_the_brute_force_view():
    """Unweighted cases (Metropolis weights 1/k have exact residues): the modular rank of
    every well-posed view equals the numerical rank of the brute-force view; weighted
    snapshots (weights not of the form 1/k) have none."""
    checked = 0
    for graphs, period, after, steps, weighted in cases():
        plan = gossip_plan(tv_of(graphs, period, after, weighted))
        sched = schedule(len(graphs), period, after, steps)
        for v in range(graphs[0].number_of_nodes()):
            rank = T.view_rank_mod_p(plan, steps, v)
            if weighted:
                continue
            M = brute_view(graphs, sched, steps, [v], False)
            _, posed = brute_coefficients(M)
            if posed:
                assert rank == np.linalg.matrix_rank(M, tol=1e-10 * np.abs(M).max())
                checked += 1
    assert checked >= 100
    weighted = next(c for c in cases() if c[4])
    assert T.view_rank_mod_p(gossip_plan(tv_of(weighted[0], weighted=True)), 2, 0) is None


def test_a_full_rank_view_is_proven_exact_and_others_stay_uncertified():
    """As the static tracker: the cycle of 64 at T = 74 (one snapshot) has no clean cut
    but full rank modulo p (exactly 1 on every node); a torus view of 133 rows cannot
    span its 256 nodes and stays uncertified. Time-varying: three random geometric
    snapshots on 40 nodes at T = 12, some views proven full on the realised products;
    the cycle's even and odd edges alternating (two perfect matchings) give a view whose
    rank modulo p is 33 on 64 nodes: nothing proven, it stays uncertified (sound)."""
    cycle = nx.cycle_graph(64)
    one = T.joint(gossip_plan(tv_of([cycle])), 74, observers=[0])
    assert (one.full_rank, one.uncertified) == (1, 0) and np.all(one.values == 1.0)
    torus = topology.build("torus", 256)
    t = G.joint(GM.metropolis(torus), GM.adjacency(torus), 32, transitive=True)
    g = nx.convert_node_labels_to_integers(nx.grid_2d_graph(16, 16, periodic=True),
                                           ordering="sorted")
    mine = T.joint(gossip_plan(tv_of([g])), 32, observers=[0])
    assert (t.full_rank, t.uncertified) == (mine.full_rank, mine.uncertified) == (0, 1)
    graphs = [nx.random_geometric_graph(40, 0.25, seed=k) for k in range(3)]
    rgg = T.joint(gossip_plan(tv_of(graphs)), 12)
    assert rgg.full_rank >= 1 and rgg.uncertified == 0  # some views proven full
    even, odd = nx.empty_graph(64), nx.empty_graph(64)
    even.add_edges_from((i, i + 1) for i in range(0, 64, 2))
    odd.add_edges_from((i, (i + 1) % 64) for i in range(1, 64, 2))
    plan = gossip_plan(tv_of([even, odd]))  # alternating matchings: a structured view
    assert T.view_rank_mod_p(plan, 150, 0) == 33
    matchings = T.joint(plan, 150, observers=[0])
    assert (matchings.full_rank, matchings.uncertified) == (0, 1)
