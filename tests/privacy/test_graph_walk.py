"""The ICML 2024 closed form for walks on graphs: the sum over t against a brute force,
its value on the complete graph, and that it bounds the walk's actual SGD coefficients."""

from __future__ import annotations

import math

import numpy as np
import pytest

from netdp import engine
from netdp.core import seeding
from netdp.graphs import topologies as topology
from netdp.graphs.walk_kind import transition_matrix
from netdp.tracking.graph_walk import icml_coefficients
from netdp.tracking.sgd import pair_coefficients


def _brute(P: np.ndarray, steps: int) -> np.ndarray:
    n = P.shape[0]
    power, total = np.eye(n), np.zeros((n, n))
    for t in range(1, steps + 1):
        power = power @ P
        total += (power - 1.0 / n) / t
    return (steps / n) * (math.log(steps) / n + total)


@pytest.mark.parametrize(("spec", "n", "walk"), [
    ("karate", None, "simple"), ("karate", None, "metropolis"), ("karate", None, "lazy"),
    ("hypercube", 16, "simple"),  # bipartite: the rows oscillate with period 2 forever
    ("cycle", 9, "lazy"), ("cycle", 8, "simple"), ("grid", 16, "metropolis"),
])
def test_the_sum_over_t_equals_a_brute_force(spec, n, walk):
    topo = topology.build(spec, n, seed=0)
    P = transition_matrix(topo, walk)
    dense = P.toarray()
    assert np.allclose(dense.sum(axis=1), 1.0) and np.all(dense >= 0)
    for steps in (3, 60, 700):
        got = icml_coefficients(P, steps)
        want = _brute(dense, steps)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12 * np.abs(want).max())
    some = icml_coefficients(P, 700, np.array([2, 0]))
    np.testing.assert_allclose(some, icml_coefficients(P, 700)[[2, 0]], rtol=1e-9)  # TOL * H_T


def test_complete_graph_gives_T_ln_T_over_n_squared():
    n, steps = 30, 900
    P = transition_matrix(topology.complete(n), "simple")
    np.testing.assert_allclose(icml_coefficients(P, steps), steps * math.log(steps) / n**2,
                               rtol=1e-12)


def test_it_bounds_the_expected_coefficients_of_actual_walks():
    """Metropolis on karate starts from its uniform stationary law: the mean over walks of
    the SGD tracker's C[u, v] stays below the closed form, pair by pair on average."""
    topo = topology.build("karate")
    n, steps, runs = topo.n, 40 * topo.n, 40
    router = engine.Router(topo, "metropolis")
    coef = np.zeros((n, n))
    for r in range(runs):
        trace = engine.walk("vector", router, steps, [seeding.generator(5, "walk", r, 0)])
        coef += pair_coefficients(trace.holders[0], n) / runs
    bound = icml_coefficients(transition_matrix(topo, "metropolis"), steps)
    off = ~np.eye(n, dtype=bool)
    assert np.all(coef[off] <= bound[off])  # every pair (the largest ratio is 0.67 here)
    assert coef[off].mean() > 0.1 * bound[off].mean()  # within an order of magnitude
