"""Gossip GD (--task sgd --protocol gossip, Muffliato-GD): the update loop against a plain
oracle, convergence to scipy's optimum, common noise across regimes, the per-round joint
coefficient composed over rounds, the calibration of the largest pair, and the limit of
the per-round accounting (it is not a bound over rounds)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import sparse

from netdp import simulate
from netdp.core.errors import InputError
from netdp.core.setup import Streams
from netdp.graphs import gossip_matrix
from netdp.learning.models import clip, project
from netdp.run.cli import main
from netdp.tasks import make_config, task_of
from netdp.tasks.preparation import with_seed
from netdp.tasks.sgd_gossip import gossip_gd
from netdp.tracking import gossip
from netdp.tracking.sgd import epsilon, epsilon_upper

GRID = 10 ** (1 / 400) - 1  # the relative step of epsilon_upper's grid (0.58 %)


def _setup(**params):
    cfg = with_seed(make_config(task="sgd", protocol="gossip", **params))
    task = task_of(cfg)
    return task, task.prepare(cfg)


def _oracle(setup, sigma: float, rounds: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """Gossip GD one node at a time with a dense W: the final models and the states
    after every gossip step."""
    split, model = setup.data.split, setup.data.model
    n, d, steps = split.n, split.dim, setup.gossip_steps
    W, gamma = setup.plan.W.toarray(), setup.plan.gamma
    L, lr, radius = setup.config.section.lipschitz, setup.data.lr, setup.data.radius
    rng = Streams(setup.seed, 0).generator("noise")
    theta = np.zeros((n, d))
    states = []
    for _ in range(rounds):
        z = rng.standard_normal((n, d))
        for u in range(n):
            rows = slice(split.indptr[u], split.indptr[u + 1])
            g = clip(model.gradient(theta[u], split.X[rows], split.y[rows]), L)
            theta[u] = theta[u] - lr * (g + sigma * z[u])
        prev, cur = None, theta
        states.append(cur)
        for _ in range(steps):
            nxt = W @ cur
            if gamma is not None and prev is not None:
                nxt = gamma * nxt + (1 - gamma) * prev
            prev, cur = cur, nxt
            states.append(cur)
        theta = project(cur, radius).copy()  # the states keep their own arrays
    return theta, states


@pytest.mark.parametrize("params", [
    {"topology": "hypercube", "nodes": 16, "gossip_steps": 3},
    {"topology": "karate", "gossip_steps": 2, "accelerated": True, "radius": 0.5, "l2": 0.1,
     "model": "linear", "skew": 0.5},
])
def test_the_update_loop_is_a_plain_per_node_oracle(params):
    """Clip before noise, one noise draw per node and round, K steps of W (or of the
    Chebyshev recursion), projection after the gossip: node by node, to 1e-10."""
    task, setup = _setup(dataset="synthetic", steps=6, sigma=0.7, compare=("local",),
                         lr=2.0, seed=4, **params)
    streams = Streams(setup.seed, 0)
    trace = task.trace(setup, streams)
    outcome = task.run(setup, trace, streams).curves["local"]
    sigma = setup.calibrations["local"].sigma
    assert sigma == pytest.approx(2 * 0.4 * 0.7)
    theta, states = _oracle(setup, sigma, 6)
    np.testing.assert_allclose(outcome.models, theta, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(outcome.objective[-1],
                               setup.data.model.objective(theta.mean(0), setup.data.split.X,
                                                          setup.data.split.y), rtol=1e-10)
    view = task.view(setup, trace, streams, observer=3)  # the neighbours' states, in order
    np.testing.assert_allclose(view.received, np.stack(states)[view.step, view.token],
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(view.published[0], outcome.models[3], rtol=1e-12)
    messages = int(setup.plan.adj.nnz)  # both directions of every edge
    assert trace.hops == 6 * (setup.gossip_steps + 1) * messages


def _strongly_convex_bound(setup) -> tuple[float, float]:
    """(f(θ_R) − f* bound, f*): GD at γ <= 1/β on a μ-strongly convex function contracts
    the gap by (1 − γμ) per round; μ is the smallest Hessian eigenvalue (least squares) or
    the ridge λ (logistic)."""
    split, model = setup.data.split, setup.data.model
    from netdp.learning.models import solve

    _, f_opt = solve(model, split.X, split.y)
    if model.name == "linear":
        mu = float(np.linalg.eigvalsh(split.X.T @ split.X / split.y.size)[0]) + model.l2
    else:
        mu = model.l2
    f0 = float(model.objective(np.zeros(split.dim), split.X, split.y))
    return (1.0 - setup.data.lr * mu) ** setup.steps * (f0 - f_opt), f_opt


@pytest.mark.parametrize(("model", "l2"), [("linear", 0.0), ("logistic", 0.01)])
def test_nonprivate_gd_reaches_the_scipy_optimum(model, l2):
    """On the complete graph W = J / n, so every round is one exact gradient step on the
    pooled objective (16 000 synthetic rows, 160 per node: the nodes' mean is the pooled
    mean); without clipping (L = 1e6) and at the default step 1/β the gap to scipy's
    optimum is within the strongly convex rate, derived here from μ."""
    params = {"dataset": "synthetic", "model": model, "l2": l2, "lipschitz": 1e6,
              "compare": ("nonprivate",), "steps": 400, "seed": 2, "accountants": ()}
    _, setup = _setup(**params)
    assert setup.data.lr == pytest.approx(1 / setup.data.model.smoothness(setup.data.split.X))
    bound, f_opt = _strongly_convex_bound(setup)
    assert 0 < bound < 1e-3  # a test that can fail: 400 rounds suffice by theory
    report = simulate(make_config(task="sgd", protocol="gossip", **params))
    final = report.utility.regimes["nonprivate"]
    assert report.utility.optimum["objective"] == pytest.approx(f_opt, rel=1e-12)
    assert -1e-9 <= final.final_objective - f_opt <= bound + 1e-12
    assert final.spread < 1e-9  # the complete graph averages exactly


def test_default_steps_get_the_default_data_close_to_the_optimum():
    """The documented rule: R = 1000 rounds at γ = 1/β reach 1e-4 of the optimum on
    randhie (logistic, clipped at L = 0.4, non-private), on a graph that is not complete."""
    report = simulate(make_config(task="sgd", protocol="gossip", topology="hypercube",
                                  nodes=64, compare=("nonprivate",), seed=1,
                                  accountants=()))
    gap = (report.utility.regimes["nonprivate"].final_objective
           - report.utility.optimum["objective"])
    assert 0 <= gap < 1e-4 and report.config.steps == 1000 and report.config.section.lr == 4.0


def test_regimes_share_the_split_and_the_noise():
    task, setup = _setup(topology="cycle", nodes=20, dataset="synthetic", steps=30,
                         compare=("local", "network", "nonprivate"), seed=9, accountants=())
    streams = Streams(setup.seed, 0)
    run = task.run(setup, task.trace(setup, streams), streams)
    cals = setup.calibrations
    data = setup.data
    args = (data.split, data.model, setup.plan.W, setup.gossip_steps, 30)
    rest = (0.4, data.lr)
    plain, _ = gossip_gd(*args, 0.0, *rest, None, evals=100)
    np.testing.assert_array_equal(run.curves["nonprivate"].models, plain.models)
    local, _ = gossip_gd(*args, cals["local"].sigma, *rest,
                         Streams(setup.seed, 0).generator("noise"), evals=100)
    np.testing.assert_array_equal(run.curves["local"].models, local.models)
    np.testing.assert_array_equal(run.curves["network"].models, local.models)  # same σ
    assert cals["local"].sigma > 0 and not np.allclose(local.models, plain.models)


def test_the_largest_pair_meets_the_target_and_no_pair_exceeds_the_local_level():
    """Network calibration: the largest pairwise ε is the target (within the converter's
    grid), attained by every neighbour pair (c = 1: the noisy model is received at t = 0);
    every pair is at most the local level; pairs further away lose less (per round)."""
    report = simulate(make_config(task="sgd", protocol="gossip", topology="karate",
                                  dataset="synthetic", steps=40, gossip_steps=3, epsilon=2.0,
                                  compare=("local", "network"), seed=3), keep_pairs=True)
    priv = report.privacy
    rows = {r.regime: r for r in priv.empirical}
    net = rows["network"]
    assert net.max == pytest.approx(2.0, rel=GRID) and net.above_target == 0.0
    assert net.max <= net.ldp["max"] * (1 + 1e-12)
    assert net.mean < 0.8 * net.max and net.min < net.max / 2
    assert priv.calibration["network"].sigma == priv.calibration["local"].sigma
    eps = report.pairs
    off = ~np.isnan(eps)
    assert eps[off].max() <= net.ldp["max"] * (1 + 1e-12)
    assert eps[off].mean() == pytest.approx(net.mean, rel=1e-12)
    task, setup = _setup(topology="karate", dataset="synthetic", steps=40, gossip_steps=3,
                         seed=3)
    c = gossip.joint(setup.plan.W, setup.plan.adj, 3).matrix()
    edges = setup.plan.adj.toarray() > 0
    assert np.all(c[edges] == 1.0) and np.nanmax(c) == 1.0  # the calibration's c_max = 1
    np.testing.assert_allclose(eps[edges], net.max, rtol=1e-12)
    assert [r.distance for r in net.by_distance][:2] == [1, 2]
    assert net.by_distance[0].mean > net.by_distance[-1].mean


def test_the_per_round_coefficient_is_the_joint_view_composed_over_rounds():
    """ε(u → v) = the (ε, δ) of R α min(c, 1) / (2σ²) with c = gossip.joint(W, adj, K)."""
    rounds, steps, sigma, order = 7, 2, 3.0, 4.0
    report = simulate(make_config(task="sgd", protocol="gossip", topology="karate",
                                  dataset="synthetic", steps=rounds, gossip_steps=steps,
                                  sigma=sigma, rdp_order=order, compare=("network",),
                                  seed=1), keep_pairs=True)
    _, setup = _setup(topology="karate", dataset="synthetic", steps=rounds,
                      gossip_steps=steps, seed=1)
    c = gossip.joint(setup.plan.W, setup.plan.adj, steps).matrix()
    off = ~np.isnan(c)
    assert ((c[off] > 0) & (c[off] < 0.9)).any()  # pairs strictly below the local level
    expected = epsilon_upper(rounds * c[off] / (2 * sigma**2), 1e-6)
    np.testing.assert_allclose(report.pairs[off], expected, rtol=1e-12)
    (row,) = report.privacy.empirical
    renyi = report.privacy.renyi["network"]
    assert renyi["mean"] == pytest.approx(rounds * order * c[off].mean() / (2 * sigma**2),
                                          rel=1e-12)
    assert row.ldp["max"] == pytest.approx(float(epsilon(rounds / (2 * sigma**2), 1e-6)))
    assert report.privacy.calibration["network"].epsilon == pytest.approx(row.ldp["max"])
    assert row.max == pytest.approx(row.ldp["max"], rel=1e-12)


def _exact_rounds(W: np.ndarray, v: int, u: int, steps: int, rounds: int) -> float:
    """The exact coefficient of v's view of ``rounds`` rounds of gossip GD whose gradients
    do not depend on the models (a linear Gaussian view of all nodes' noisy updates): u's
    update moves by the same Δ every round; ‖Π (Σ_r e_(r, u))‖² in units of Δ²/σ²."""
    n = W.shape[0]
    closed = np.union1d(np.flatnonzero(W[v] > 0), [v])
    C = np.vstack([np.linalg.matrix_power(W, t)[closed] for t in range(steps + 1)])
    AK = np.linalg.matrix_power(W, steps)
    M = np.zeros((rounds * len(C), rounds * n))
    for r in range(rounds):
        for s in range(r + 1):  # round r's states carry round s's updates through A_K^(r-s)
            M[r * len(C):(r + 1) * len(C), s * n:(s + 1) * n] = \
                C @ np.linalg.matrix_power(AK, r - s)
    _, values, rows = np.linalg.svd(M, full_matrices=False)
    basis = rows[values > 1e-10 * values[0]]
    shift = np.zeros(rounds * n)
    shift[[r * n + u for r in range(rounds)]] = 1.0
    return float(np.sum((basis @ shift) ** 2))


def test_the_per_round_figure_is_not_a_bound_over_rounds():
    """Path 0 - 1 - 2 - 3, Metropolis weights, K = 1, observer 0, source 3. Per round v
    sees z_0, z_1 and (z_0 + z_1 + z_2) / 3: nothing of z_3 (c = 0). But round 1's models
    mix z_3 into node 2, and round 2's states carry it to v: even with gradients that do
    not depend on the models (a fixed linear Gaussian view), the exact loss of two rounds
    is positive, while the per-round figure composed says 0."""
    W = np.array([[2, 1, 0, 0], [1, 1, 1, 0], [0, 1, 1, 1], [0, 0, 1, 2]]) / 3.0
    adj = sparse.csr_array((W > 0) & ~np.eye(4, dtype=bool), dtype=float)
    per_round = gossip.joint(sparse.csr_array(W), adj, 1).matrix()
    assert per_round[3, 0] == pytest.approx(0.0, abs=1e-12)
    assert _exact_rounds(W, 0, 3, 1, 1) == pytest.approx(0.0, abs=1e-12)  # one round: 0
    two = _exact_rounds(W, 0, 3, 1, 2)
    assert two > 0.05  # > 2 x 0
    # the local level stays a bound: two rounds of LDP-level releases
    assert two <= 2.0 + 1e-9
    # and the oracle is the joint view on one round (same projection)
    for u in (1, 2):
        assert _exact_rounds(W, 0, u, 1, 1) == pytest.approx(per_round[u, 0], abs=1e-10)


@pytest.mark.parametrize(("params", "param"), [
    ({"topology": "ring"}, "topology"),
    ({"tokens": 2}, "tokens"),
    ({"walk": "metropolis", "topology": "karate"}, "walk"),
    ({"coalition": "1,2"}, "coalition"),
    ({"service_time": 1.0}, "service-time"),
    ({"engine": "event"}, "engine"),
    ({"accountants": ("kov",)}, "accountant"),
    ({"compare": ("central",)}, "compare"),
    ({"compare": ("local", "local")}, "compare"),
    ({"max_contributions": 3}, "max_contributions"),
])
def test_what_gossip_gd_does_not_use_is_refused(params, param):
    with pytest.raises(InputError) as err:
        make_config(task="sgd", protocol="gossip", **params)
    assert err.value.param == param


def test_the_cli_runs_it_beside_the_walk_and_the_walk_refuses_gossip_steps(
        capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # --compare writes sgd-curves.* into the working folder
    assert main(["simulate", "--task", "sgd", "--protocol", "gossip", "--compare",
                 "local,network", "--seed", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    util, priv = out["utility"], out["privacy"]
    for regime in ("local", "network"):
        assert {"sigma", "epsilon", "final_objective", "final_accuracy",
                "spread"} <= set(util[regime])
        assert util[regime]["epsilon"] == 1.0
    assert [r["regime"] for r in priv["empirical"]] == ["local", "network"]
    assert priv["rounds"] == out["config"]["steps"] == 1000
    assert out["config"]["gossip_steps"] == gossip_matrix.default_steps(1.0, 1.0, 100) == 5
    assert out["curves"]["unit"] == "rounds" and out["curves"]["steps"][-1] == 1000
    assert (tmp_path / "sgd-curves.csv").is_file() and (tmp_path / "sgd-curves.png").is_file()
    assert main(["simulate", "--task", "sgd", "--gossip-steps", "3"]) == 2
    assert ("--gossip-steps: applies to --task sgd --protocol gossip only"
            in capsys.readouterr().err)
    assert main(["simulate", "--task", "sum", "--curves", "c"]) == 2
    assert ("--curves: applies to --task sgd or sgd --protocol gossip only"
            in capsys.readouterr().err)


def test_learning_curves_of_gossip_gd(tmp_path, capsys):
    """``--curves PREFIX`` writes the tidy CSV (one row per regime and evaluated round,
    the x column named ``round``) and the figure; with ``--compare`` they are written by
    default."""
    import csv

    from matplotlib.image import imread

    prefix = tmp_path / "c"
    assert main(["simulate", "--task", "sgd", "--protocol", "gossip", "--topology",
                 "hypercube", "-n", "16", "--steps", "40", "--compare", "local,network",
                 "--curves", str(prefix), "--seed", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    with open(f"{prefix}.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0])[:4] == ["regime", "round", "objective", "accuracy"]
    rounds = out["curves"]["steps"]
    assert [r["round"] for r in rows] == [str(s) for s in rounds] * 2
    assert [float(r["objective"]) for r in rows if r["regime"] == "network"] == \
        pytest.approx(out["curves"]["network"]["objective"], rel=1e-12)
    assert imread(f"{prefix}.png").shape[0] > 300



def test_renyi_rows_count_every_pair_they_stand_for():
    """On a vertex-transitive graph one observer's row stands for all: the Rényi rows by
    distance count every ordered pair, like the ε rows (regression: they counted the one
    row's pairs)."""
    report = simulate(make_config(task="sgd", protocol="gossip", topology="hypercube",
                                  nodes=32, dataset="synthetic", steps=5, gossip_steps=3,
                                  sigma=2.0, rdp_order=2.0, compare=("network",), seed=1))
    (row,) = report.privacy.empirical
    renyi = report.privacy.renyi["network"]["by_distance"]
    assert [r.pairs for r in row.by_distance] == [32 * math.comb(5, k) for k in range(1, 6)]
    assert [r["pairs"] for r in renyi] == [r.pairs for r in row.by_distance]
