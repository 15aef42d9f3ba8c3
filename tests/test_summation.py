import math

import networkx as nx
import numpy as np
import pytest
from conftest import assert_mean, assert_std_gaussian

from netdp import engine, make_config, simulate
from netdp.core import seeding
from netdp.graphs import topologies as topology
from netdp.tasks.summation import _lag_sum, ring_noise_mask, walk_sum_std

RUNS = 400


def _estimates(**kw):
    cfg = make_config(runs=RUNS, seed=20261121, accountants=(), **kw)  # utility only
    result = simulate(cfg, progress=False)
    return np.array([o.estimate for o in result.outcomes]), result


@pytest.mark.parametrize("n,steps", [(5, 17), (10, 30), (101, 505), (2, 6), (7, 13), (4, 8)])
def test_ring_noise_schedule(n, steps):
    mask = ring_noise_mask(n, steps)
    assert mask[0] and mask[-1]  # the first prefix and the published result are covered
    windows = np.convolve(mask, np.ones(max(n - 1, 1), dtype=int), mode="valid")
    assert np.all(windows >= 1)  # every n-1 consecutive contributions hold a draw
    assert np.all(windows[:-1] == 1) or n == 2  # ... exactly one, but at the very end
    expected = -(-steps // (n - 1)) + ((steps - 1) % (n - 1) != 0) if n > 2 else steps
    assert mask.sum() == expected


@pytest.mark.parametrize("n,rounds", [(20, 3), (50, 1)])
def test_ring_sum_unbiased_with_the_theoretical_std(n, rounds):
    est, res = _estimates(topology="ring", nodes=n, rounds=rounds)
    truth, std = res.outcomes[0].truth, res.outcomes[0].theoretical_std
    sigma = res.mechanism["sigma"]
    draws = ring_noise_mask(n, rounds * n).sum()
    assert draws <= rounds * n // (n - 1) + 2  # the paper's count, plus the two edges
    assert std == pytest.approx(math.sqrt(draws) * sigma / (rounds * n))
    assert_mean(est, truth, std)
    assert_std_gaussian(est, std)
    ldp, res_ldp = _estimates(topology="ring", nodes=n, rounds=rounds, noise_every_hop=True)
    ldp_std = res_ldp.outcomes[0].theoretical_std
    assert ldp_std == pytest.approx(math.sqrt(rounds * n) * sigma / (rounds * n))
    assert res.utility.ldp_std == pytest.approx(ldp_std)
    assert_mean(ldp, truth, ldp_std)
    assert_std_gaussian(ldp, ldp_std)


def test_ring_sum_with_laplace_noise_is_unbiased():
    est, res = _estimates(topology="ring", nodes=30, rounds=2, mechanism="laplace")
    std = res.outcomes[0].theoretical_std
    assert std == pytest.approx(math.sqrt(ring_noise_mask(30, 60).sum()) * math.sqrt(2) / 60)
    assert_mean(est, res.outcomes[0].truth, std)


@pytest.mark.parametrize("self_moves", [True, False])
@pytest.mark.parametrize("data", ["uniform", "normal"])
def test_complete_graph_sum_unbiased_with_the_theoretical_std(self_moves, data):
    est, res = _estimates(topology="complete", nodes=40, steps=400, self_moves=self_moves,
                          data=data)
    out = res.outcomes[0]
    assert_mean(est, out.truth, out.theoretical_std)
    assert_std_gaussian(est, out.theoretical_std)


def test_no_noise_limit_isolates_the_sampling_variance():
    # a huge epsilon leaves only the walk's sampling variance, which the closed form gives
    est, res = _estimates(topology="complete", nodes=10, steps=50, self_moves=False,
                          epsilon=1e6, delta=0.5)
    out = res.outcomes[0]
    assert_mean(est, out.truth, out.theoretical_std)
    assert_std_gaussian(est, out.theoretical_std)


@pytest.mark.parametrize("self_moves", [True, False])
def test_complete_closed_form_equals_the_spectral_form(self_moves):
    n, steps, noise = 12, 75, 0.7
    values = np.random.default_rng(3).uniform(size=n)
    graph = nx.complete_graph(n)
    if self_moves:
        graph.add_edges_from((u, u) for u in range(n))
    explicit = topology.from_networkx(graph, "explicit")
    spectral = walk_sum_std(explicit, "simple", values, steps, noise)
    closed = walk_sum_std(topology.complete(n, self_moves), "simple", values, steps, noise)
    assert closed == pytest.approx(spectral, rel=1e-10)
    if self_moves:  # iid uniform holders
        assert closed == pytest.approx(math.sqrt((np.var(values) + noise**2) / steps))


@pytest.mark.parametrize("topo,walk", [("karate", "metropolis"), ("barabasi-albert", "auto"),
                                       ("hypercube", "auto"), ("hypercube", "lazy")])
def test_graph_walk_sum_unbiased_with_the_spectral_std(topo, walk):
    nodes = {"karate": None, "barabasi-albert": 60, "hypercube": 32}[topo]
    est, res = _estimates(topology=topo, nodes=nodes, steps=300, walk=walk)
    out = res.outcomes[0]
    assert out.theoretical_std is not None
    assert_mean(est, out.truth, out.theoretical_std)
    assert_std_gaussian(est, out.theoretical_std)


def test_lazy_walk_sum_in_the_no_noise_limit():
    # only the walk's sampling variance: the lazy walk's own matrix, not the simple one's
    est, res = _estimates(topology="hypercube", nodes=32, steps=300, walk="lazy",
                          epsilon=1e6, delta=0.5)
    out = res.outcomes[0]
    assert_mean(est, out.truth, out.theoretical_std)
    assert_std_gaussian(est, out.theoretical_std)
    simple = simulate(make_config(topology="hypercube", nodes=32, steps=300, walk="simple",
                                  epsilon=1e6, delta=0.5, seed=1, accountants=()))
    assert out.theoretical_std > 1.4 * simple.outcomes[0].theoretical_std


@pytest.mark.parametrize("walk", ["simple", "lazy"])
def test_simple_walk_on_irregular_graph_has_no_std_claim(walk):
    res = simulate(make_config(topology="karate", walk=walk, steps=100, seed=1))
    assert res.outcomes[0].theoretical_std is None


def test_several_tokens_average():
    est, res = _estimates(topology="complete", nodes=20, steps=100, tokens=4)
    out = res.outcomes[0]
    one = simulate(make_config(topology="complete", nodes=20, steps=100, seed=20261121))
    assert out.theoretical_std == pytest.approx(one.outcomes[0].theoretical_std / 2)
    assert_std_gaussian(est, out.theoretical_std)


@pytest.mark.parametrize("lam", [0.0, -0.3, 0.5, 0.999, 1.0])
def test_lag_sum_closed_form(lam):
    steps = 37
    d = np.arange(1, steps)
    brute = steps + 2 * np.sum((steps - d) * float(lam) ** d)
    assert _lag_sum(lam, steps) == pytest.approx(brute, rel=1e-10)


@pytest.mark.parametrize("name,kind", [("duchi", "complete"), ("piecewise", "ring"),
                                       ("hybrid", "complete")])
def test_randomized_sum_is_unbiased_with_the_closed_form_std(name, kind):
    from conftest import assert_mean, assert_std_gaussian

    from netdp.mechanisms import numeric
    from netdp.tasks.summation import randomized_sum

    n, low, high = 40, -2.0, 3.0
    values = np.random.default_rng(8).uniform(low, high, n)
    topo = topology.ring(n) if kind == "ring" else topology.complete(n, True)
    steps = 3 * n if kind == "ring" else 1500
    mech = numeric(name, 1.5)
    outs = []
    for r in range(400):
        rngs = [seeding.generator(r, "walk", 0, 0)]
        trace = engine.walk("vector", engine.Router(topo), steps, rngs)
        outs.append(randomized_sum(trace, values, mech, np.random.default_rng(r), low, high,
                                   topo, "simple"))
    est = np.array([o.estimate for o in outs])
    std = outs[0].theoretical_std
    assert_mean(est, values.mean(), std)
    assert_std_gaussian(est, std)
