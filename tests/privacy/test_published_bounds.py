"""The published bounds of netdp.bounds.published against hand-computed values on tiny
graphs, the limits and orderings their papers state, and the grouping by hop distance."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import sparse

from netdp.accounting.gdp import gaussian_epsilon
from netdp.accounting.rdp import rdp_to_epsilon
from netdp.bounds import published as pb
from netdp.bounds.by_distance import bounds_by_distance, pair_sample, rows_by_distance
from netdp.tracking.graph_walk import icml_coefficients

DELTA = 1e-6


def cycle(n: int) -> sparse.csr_array:
    P = np.zeros((n, n))
    for i in range(n):
        P[i, (i + 1) % n] = P[i, (i - 1) % n] = 0.5
    return sparse.csr_array(P)


def complete(n: int) -> sparse.csr_array:
    """The complete graph with self-moves: every step uniform."""
    return sparse.csr_array(np.full((n, n), 1.0 / n))


def test_first_passage_on_the_four_cycle_by_hand():
    # from a neighbour of v: odd times only, P[τ = 2k + 1] = 2^-(k + 1); from the
    # opposite node: even times, P[τ = 2k] = 2^-k
    w, never = pb.first_passage(cycle(4), 0, 40, tail=0.0)
    t = np.arange(1, 41)
    neighbour = np.where(t % 2 == 1, 0.5 ** ((t + 1) // 2), 0.0)
    opposite = np.where(t % 2 == 0, 0.5 ** (t // 2), 0.0)
    assert np.allclose(w[:, 1], neighbour) and np.allclose(w[:, 3], neighbour)
    assert np.allclose(w[:, 2], opposite)
    assert never[1] == pytest.approx(0.5 ** 20) and never[2] == pytest.approx(0.5 ** 20)


def test_first_passage_on_the_complete_graph_is_geometric():
    n = 5
    w, never = pb.first_passage(complete(n), 2, 30, tail=0.0)
    t = np.arange(1, 31)
    assert np.allclose(w[:, 0], (1 / n) * (1 - 1 / n) ** (t - 1))
    assert never[0] == pytest.approx((1 - 1 / n) ** 30)


def test_first_passage_cut_early_puts_the_rest_on_the_last_step():
    w, never = pb.first_passage(cycle(4), 0, 10_000, tail=1e-9)
    assert w.shape[0] < 100 and not never.any()
    assert np.allclose(w.sum(axis=0)[1:], 1.0)


def test_icml_coefficient_of_the_complete_graph_is_T_ln_T_over_n_squared():
    n, T = 10, 1000
    c = icml_coefficients(complete(n).T.tocsr(), T, np.array([0, 3]))
    assert np.allclose(c, T * math.log(T) / n**2)


def test_icml_coefficient_of_the_four_cycle_by_hand():
    # (P^t)_uv: neighbours 1/2 at odd t, the opposite node 1/2 at even t, so
    # Σ_t ((P^t)_uv - 1/4)/t -> ±(ln 2)/4 (the alternating harmonic series)
    T = 4000
    c = icml_coefficients(cycle(4).T.tocsr(), T, np.array([0]))[0]
    base = (T / 4) * math.log(T) / 4
    assert c[1] == pytest.approx(base + (T / 4) * math.log(2) / 4, rel=1e-4)
    assert c[2] == pytest.approx(base - (T / 4) * math.log(2) / 4, rel=1e-4)
    assert c[1] == pytest.approx(c[3])


def test_icml_epsilon_is_the_rdp_conversion_of_its_coefficient():
    n, T, z = 10, 1000, 3.0
    eps = pb.icml_epsilon(complete(n), T, z, DELTA, tokens=2, observers=np.array([4]))
    rho = 2 * T * math.log(T) / n**2 / (2 * z * z)
    assert eps[0, 4] == 0.0
    others = np.delete(eps[0], 4)
    assert np.allclose(others, others[0])
    # above the Gaussian mechanism of the same Rényi curve (μ² = 2ρ), within the
    # RDP conversion's slack
    exact = float(gaussian_epsilon(math.sqrt(2 * rho), DELTA))
    assert exact <= others[0] <= 1.3 * exact


def test_a_single_hitting_time_gives_the_gaussian_composition():
    # every hitting time 1: μ² = 1/(2 z²) per copy, G(sqrt(N / (2 z²))) composed exactly
    z, N = 2.0, 50
    eps = pb.pnfdp_pair(np.array([1.0]), 0.0, z, N, DELTA)
    exact = float(gaussian_epsilon(math.sqrt(N / (2 * z * z)), DELTA))
    assert exact <= eps <= exact * 1.01


def test_the_mixture_is_below_its_renyi_bound():
    # the paper's point (arXiv 2510.19934 §5): the f-DP figure of the revealed mixture is
    # below the RDP conversion of the same mechanism (joint convexity of e^{(α-1)R})
    w = np.array([0.5, 0.0, 0.25, 0.0, 0.125, 0.0, 0.0625])
    never = 1 - w.sum()
    z, N = 1.5, 40
    x = 1 / (z * z * (np.arange(1, w.size + 1) + 1))
    orders = np.concatenate([np.linspace(1.01, 2, 50), np.geomspace(2, 40, 400)])
    one = np.log(w @ np.exp(np.outer(x, (orders - 1) * orders / 2)) + never) / (orders - 1)
    rdp = float(rdp_to_epsilon(N * one, orders, DELTA))
    fdp = pb.pnfdp_pair(w, never, z, N, DELTA)
    assert 0 < fdp < rdp


def test_pnfdp_limits_and_monotonicity():
    w = np.array([0.3, 0.2, 0.1])
    assert pb.pnfdp_pair(w * 0, 1.0, 1.0, 100, DELTA) == 0.0  # never reached: no loss
    assert pb.pnfdp_pair(w, 0.4, 1.0, 0, DELTA) == 0.0
    by_noise = [pb.pnfdp_pair(w, 0.4, z, 60, DELTA) for z in (0.5, 1.0, 2.0, 8.0)]
    assert all(a > b for a, b in zip(by_noise, by_noise[1:], strict=False))
    by_count = [pb.pnfdp_pair(w, 0.4, 1.0, k, DELTA) for k in (1, 10, 100)]
    assert all(a < b for a, b in zip(by_count, by_count[1:], strict=False))
    # an earlier hitting time leaks more
    assert pb.pnfdp_pair(np.array([1.0]), 0, 1.0, 10, DELTA) > pb.pnfdp_pair(
        np.array([0.0, 0.0, 1.0]), 0, 1.0, 10, DELTA)


def test_the_visit_slack_inverts_the_markov_hoeffding_bound():
    n, T, lam, d = 16, 1600, 0.5, 1e-7
    zeta = pb.visit_slack(n, T, lam, d)
    assert math.exp(-(1 - lam) / (1 + lam) * 2 * zeta**2 * T / n**2) == pytest.approx(d)
    assert pb.visit_slack(n, T, -0.3, d) == pb.visit_slack(n, T, 0.0, d)
    assert math.isinf(pb.visit_slack(n, T, 1.0, d))
    assert pb.visit_slack(n, 100 * T, lam, d) < zeta  # more steps: tighter


def test_pnfdp_on_the_complete_graph_is_the_same_for_every_pair():
    eps, info = pb.pnfdp_epsilon(complete(6), 600, 2.0, DELTA)
    off = eps[~np.eye(6, dtype=bool)]
    assert np.allclose(off, off[0]) and off[0] > 0
    assert info["lambda2"] == pytest.approx(0.0, abs=1e-12)
    assert info["compositions_per_token"] == math.ceil((1 + info["zeta"]) * 600 / 6)


def test_both_bounds_fall_with_distance_on_a_cycle():
    P, n, T = cycle(8), 8, 800
    hops = np.minimum(np.arange(n), n - np.arange(n))[None, :]
    rows, info = bounds_by_distance(P, T, 3.0, DELTA, hops, np.array([0]))
    for name in ("icml2024", "pn-f-dp"):
        means = [r.mean for r in rows[name]]
        assert [r.distance for r in rows[name]] == [1, 2, 3, 4]
        assert all(a > b for a, b in zip(means, means[1:], strict=False)), (name, means)
        assert not info[name]["sound_for_netdp_view"]


def test_rows_by_distance_groups_the_pairs():
    eps = np.array([[0.0, 1.0, 2.0, np.nan], [3.0, 0.0, 5.0, 7.0]])
    hops = np.array([[0, 1, 2, 1], [1, 0, 1, 2]])
    rows = rows_by_distance(eps, hops, np.array([0, 1]))
    assert [(r.distance, r.pairs, r.mean, r.min, r.max) for r in rows] == [
        (1, 3, 3.0, 1.0, 5.0), (2, 2, 4.5, 2.0, 7.0)]


def test_the_pair_sample_keeps_every_distance_within_the_budget():
    hops = np.array([[0, 1, 1, 1, 2, 2, 3], [1, 0, 1, 2, 1, 2, 3]])
    chosen = pair_sample(hops, np.array([0, 1]), 6, np.random.default_rng(0))
    assert not chosen[0, 0] and not chosen[1, 1]
    assert set(hops[chosen]) == {1, 2, 3}
    assert chosen.sum() <= 6


def test_pnfdp_work_is_estimated_before_any_composition(monkeypatch):
    """Issue 39: a 100-node cycle at 30 steps composes each pair ~470 times on up to 8193
    cells (19 s before the route by the hits, about 1 s since). The work is estimated
    from the first passages; beyond ``max_seconds`` nothing is composed, every pair is
    left NaN (never another number) and ``skipped`` says why; within it the figures are
    those of an unbounded call."""
    P, T, z = cycle(100), 30, 4.2
    called: list[int] = []
    monkeypatch.setattr(pb, "pnfdp_pair", lambda *a: called.append(1) or 0.0)
    eps, info = pb.pnfdp_epsilon(P, T, z, DELTA, observers=np.array([0]), max_seconds=0.1)
    assert not called and np.isnan(np.delete(eps[0], 0)).all() and eps[0, 0] == 0.0
    assert info["skipped"].startswith("not evaluated: its compositions would take about")
    assert "beyond the 0.1 s a theory line may take" in info["skipped"]
    monkeypatch.undo()
    small = cycle(8)
    want, _ = pb.pnfdp_epsilon(small, 80, 3.0, DELTA)
    got, info = pb.pnfdp_epsilon(small, 80, 3.0, DELTA, max_seconds=2.0)
    assert "skipped" not in info and np.array_equal(want, got, equal_nan=True)


def test_pair_cells_price_the_route():
    w = np.array([0.5, 0.25, 0.125])
    cells = pb.pair_cells(w, 0.125, 1.0, 10)
    assert 0 < cells <= 10 * 4 * (pb.MAX_BINS + 1)  # each level at most 2^l copies wide
    assert pb.pair_cells(w * 0, 1.0, 1.0, 10) == 0 and pb.pair_cells(w, 0.125, 1.0, 0) == 0


@pytest.mark.parametrize(("q", "k"), [(0.002, 60), (0.05, 40), (0.3, 12)])
def test_the_route_by_the_hits_is_the_law_of_the_squares(q, k):
    """S's law as a mixture over the number of hits is the k-fold composition (on a law
    small enough that the squares' FFT rounding stays below the figures)."""
    from netdp.accounting.loss_pmf import LossPmf

    pmf = np.zeros(40)
    pmf[[3, 17, 39]] = np.array([0.5, 0.3, 0.2]) * q
    pmf[0] = 1 - q
    squares = LossPmf(0, pmf, 0.0, 0.01).self_compose(k)
    hits = pb._law_by_hits(pmf, 0.01, *pb._hit_counts(pmf[0], q, k))
    dense = np.zeros(k * 40)
    dense[squares.lower:squares.lower + squares.probs.size] += squares.probs
    dense[hits.lower:hits.lower + hits.probs.size] -= hits.probs
    assert np.abs(dense).max() < 1e-12 and hits.inf_mass <= pb.HITS_TAIL + 1e-14


def test_a_pair_the_walk_almost_never_reaches_is_tight():
    """On a 100-node cycle at 30 steps the opposite-but-one node reaches v only by 30 steps
    straight (2^-30): with 470 copies, P[a hit] = 4.4e-7 times δ_G(0.04)(0) = 0.017 is
    below δ, so ε = 0. The squares route read S's law on 2048 points merged upwards and
    the atom at S = 0 (no hit) took the first block's top: 0.25 (issue 39's case)."""
    P = cycle(100)
    w, never = pb.first_passages(P, np.array([0]), np.zeros(100, np.int64), np.arange(100),
                                 30)
    assert pb.pnfdp_pair(w[:, 30], float(never[30]), 4.225, 470, 5e-7) == 0.0
    assert pb.pnfdp_pair(w[:, 30], float(never[30]), 4.225, 470, 1e-9) > 0.0


def test_a_skipped_line_is_in_the_info_not_in_the_rows():
    P, n = cycle(100), 100
    hops = np.minimum(np.arange(n), n - np.arange(n))[None, :]
    rows, info = bounds_by_distance(P, 30, 4.2, DELTA, hops, np.array([0]),
                                    names=["pn-f-dp"], max_seconds=0.1)
    assert "pn-f-dp" not in rows and "not evaluated" in info["pn-f-dp"]["skipped"]
    assert info["pn-f-dp"]["reference"] == pb.PUBLISHED["pn-f-dp"].reference


@pytest.mark.parametrize(("overrides", "counted"), [
    ({"topology": "cycle", "nodes": 100}, True), ({"topology": "complete", "nodes": 100}, False),
    ({"topology": "cycle", "nodes": 300}, False),
    ({"topology": "cycle", "nodes": 100, "mechanism": "laplace"}, False),
    ({"topology": "cycle", "nodes": 100, "accountants": ()}, False)])
def test_the_runs_estimate_counts_the_pnfdp_line(overrides, counted):
    """The run's time estimate (checked before the graph is built) counts the seconds the
    pn-f-dp line may take where the report draws it, once a report (not per run)."""
    from netdp.core.errors import InputError
    from netdp.run.resources import check_footprint
    from netdp.tasks import get_task, make_config
    from netdp.tasks.base import theory_work

    config = make_config({"task": "sum", "steps": 30, **overrides})
    parts = theory_work(get_task("sum"), config, config.nodes)
    assert ("the pn-f-dp theory line (at most)" in parts) == counted, parts
    if counted:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("NETDP_TIME_LIMIT", "1.5")
            with pytest.raises(InputError, match="the pn-f-dp theory line"):
                check_footprint(get_task("sum"), config)
            patch.setenv("NETDP_TIME_LIMIT", "2.5")
            check_footprint(get_task("sum"), config.replace(runs=20))  # once, not per run
