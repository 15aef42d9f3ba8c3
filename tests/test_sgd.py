"""Decentralized SGD: models, data, the compiled update, calibration, tracker, CLI."""

from __future__ import annotations

import json
import math

import dp_accounting as dpa
import numpy as np
import pytest
from dp_accounting import rdp

from netdp.accounting.rdp import rdp_gaussian, rdp_to_epsilon
from netdp.core.errors import InputError
from netdp.learning import training_data as datasets
from netdp.learning.models import Model, clip, project, solve
from netdp.learning.training_data import Split
from netdp.run.api import simulate
from netdp.run.cli import main
from netdp.tasks import make_config
from netdp.tasks.sgd_walk import learning_rates, walk_sgd
from netdp.tracking import sgd as P


def _split(n=50, name="synthetic", model="logistic", seed=0, skew=None) -> Split:
    rng = np.random.default_rng(seed)
    X, y, label = datasets.load(name, model, rng)
    return datasets.split(X, y, n, rng, label, skew=skew)


# --------------------------------------------------------------------------- models

@pytest.mark.parametrize("name", ["logistic", "linear"])
def test_gradient_matches_finite_differences(name):
    data = _split(model=name)
    model = Model(name, l2=0.01)
    w = np.random.default_rng(1).standard_normal(data.dim)
    h = 1e-6
    num = [(model.objective(w + h * e, data.X, data.y) - model.objective(w - h * e, data.X,
                                                                         data.y)) / (2 * h)
           for e in np.eye(data.dim)]
    np.testing.assert_allclose(model.gradient(w, data.X, data.y), num, rtol=1e-6, atol=1e-9)


def test_clip_and_project_bound_the_norm():
    g = np.array([[3.0, 4.0], [0.3, 0.4]])
    np.testing.assert_allclose(clip(g, 1.0), [[0.6, 0.8], [0.3, 0.4]])
    np.testing.assert_allclose(project(np.array([6.0, 8.0]), 5.0), [3.0, 4.0])
    assert clip(g, np.inf) is g


# --------------------------------------------------------------------------- data

def test_randhie_is_the_default_real_table():
    X, y, name = datasets.load("randhie", "logistic", np.random.default_rng(0))
    assert X.shape == (20190, 9) and set(np.unique(y)) == {-1.0, 1.0}
    assert abs((y > 0).mean() - 0.6876) < 1e-3  # share of people with an MD visit
    data = datasets.split(X, y, 2000, np.random.default_rng(0), name)
    sizes = np.diff(data.indptr)
    assert data.y.size == 16152 and sizes.min() == 8 and sizes.max() == 9
    assert np.linalg.norm(data.X, axis=1).max() == pytest.approx(1.0)


def test_skewed_split_gives_every_node_rows():
    data = _split(n=300, skew=0.1)
    sizes = np.diff(data.indptr)
    assert sizes.min() >= 1 and sizes.sum() == data.y.size
    # skewed labels: most nodes hold a label share far from the global one
    labels = np.add.reduceat((data.y > 0).astype(float), data.indptr[:-1]) / sizes
    assert np.mean(np.abs(labels - (data.y > 0).mean()) > 0.3) > 0.5


def test_csv_dataset_and_errors(tmp_path):
    path = tmp_path / "d.csv"
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 3))
    np.savetxt(path, np.column_stack([(X[:, 0] > 0).astype(int), X]), delimiter=",",
               header="label,a,b,c", comments="")
    X2, y2, _ = datasets.load(str(path), "logistic", rng, target="label")
    assert X2.shape == (100, 3) and set(np.unique(y2)) == {-1.0, 1.0}
    with pytest.raises(InputError, match="no column"):
        datasets.load(str(path), "logistic", rng, target="nope")
    with pytest.raises(InputError, match="two label") as err:
        datasets.load(str(path), "logistic", rng, target="a")
    assert err.value.param == "target"
    with pytest.raises(InputError, match="two label.*the last; --target") as err:
        datasets.load(str(path), "logistic", rng)  # its last column, c, is not a label
    assert err.value.param == "dataset"


# --------------------------------------------------------------------------- protocol

def _oracle(holders, data, model, sigma, L, rates, z, radius, cap):
    """Plain numpy Algorithm 5 (the compiled kernel must match it)."""
    w = np.zeros(data.dim)
    counts = np.zeros(data.n, int)
    for t, u in enumerate(holders):
        if cap is not None and counts[u] >= cap:
            continue
        counts[u] += 1
        lo, hi = data.indptr[u], data.indptr[u + 1]
        g = clip(model.gradient(w, data.X[lo:hi], data.y[lo:hi]), L)
        w = project(w - rates[t] * (g + sigma * z[t]), radius)
    return w, counts


@pytest.mark.parametrize("name,cap,radius", [("logistic", None, np.inf),
                                             ("linear", 3, 0.5)])
def test_kernel_matches_numpy_oracle(name, cap, radius):
    data = _split(n=40, model=name)
    model = Model(name, l2=0.05)
    holders = np.random.default_rng(2).integers(0, 40, 300)
    rates = learning_rates(0.5, "inv-sqrt", 300, 40)
    out = walk_sgd(holders, data, model, 0.3, 0.2, rates, np.random.default_rng(3), radius,
                   cap, evals=3)
    z = np.random.default_rng(3).standard_normal((300, data.dim))
    w, counts = _oracle(holders, data, model, 0.3, 0.2, rates, z, radius, cap)
    np.testing.assert_allclose(out.weights, w, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(out.contributions, counts)
    assert out.steps.tolist() == [0, 100, 200, 300]


def test_clipping_bounds_a_huge_gradient():
    """One update moves w by at most lr (L + sigma |z|): the sensitivity is enforced."""
    X = np.array([[1e6, -2e6, 3e6]])
    data = Split(X, np.array([1.0]), np.array([0, 1]), X, np.array([1.0]), "huge")
    z = np.random.default_rng(5).standard_normal((1, 3))[0]
    for sigma in (0.0, 0.7):
        out = walk_sgd(np.array([0]), data, Model("logistic"), sigma, 0.4,
                       np.array([0.5]), np.random.default_rng(5), evals=1)
        signal = out.weights + 0.5 * sigma * z  # the update without its noise
        assert np.linalg.norm(signal) <= 0.5 * 0.4 * (1 + 1e-12)
        assert np.linalg.norm(signal) == pytest.approx(0.5 * 0.4)  # the clip is active
    unclipped = walk_sgd(np.array([0]), data, Model("logistic"), 0.0, np.inf,
                         np.array([0.5]), np.random.default_rng(5), evals=1)
    assert np.linalg.norm(unclipped.weights) > 1e5


@pytest.mark.parametrize("name", ["logistic", "linear"])
def test_nonprivate_sgd_reaches_the_direct_solver(name):
    """sigma = 0, no clip, steps lr/(1 + t/n): within 1e-4 of scipy's optimum.

    With 1/t steps the gap of SGD decays like 1/t; after 200 passes it measures about
    1e-5 on both tables (randhie 8.7e-6, synthetic 1.2e-6), so 1e-4 leaves a 10x margin
    while a wrong gradient or update stays far above it.
    """
    data = _split(n=500, name="randhie" if name == "logistic" else "synthetic", model=name)
    model = Model(name)
    _, best = solve(model, data.X, data.y)
    steps = 100_000
    holders = np.random.default_rng(1).integers(0, 500, steps)
    out = walk_sgd(holders, data, model, 0.0, np.inf,
                   learning_rates(2.0 if name == "logistic" else 0.5, "inv", steps, 500),
                   np.random.default_rng(1), evals=4)
    assert 0 <= out.final_objective - best < 1e-4


# --------------------------------------------------------------------------- privacy

def test_epsilon_matches_dp_accounting_gaussian():
    """R(α) = α / (2 z²) is the Gaussian with noise multiplier z; our finer order grid
    can only improve on dp-accounting's, and not by much."""
    for z in (0.8, 2.0, 10.0):
        acc = rdp.RdpAccountant()
        acc.compose(dpa.GaussianDpEvent(z), 10)
        theirs = acc.get_epsilon(1e-6)
        ours = float(P.epsilon(10 / (2 * z * z), 1e-6))
        assert ours <= theirs + 1e-9
        assert ours > 0.97 * theirs


def test_epsilon_upper_is_an_upper_bound_within_the_grid_step():
    rho = np.geomspace(1e-6, 50, 997)
    exact = np.asarray(P.epsilon(rho, 1e-6))
    upper = P.epsilon_upper(rho, 1e-6)
    assert np.all(upper >= exact - 1e-12)
    assert np.all(upper <= np.asarray(P.epsilon(rho * 10 ** (1 / 400), 1e-6)) + 1e-12)
    assert P.epsilon_upper(np.zeros(3), 1e-6).tolist() == [0, 0, 0]


def test_expected_cost_is_the_geometric_series():
    for p in (0.5, 0.01, 1 / 2000):
        j = np.arange(1, 200_000)
        series = np.sum(p * (1 - p) ** (j - 1) / j)
        assert P.expected_cost(p) == pytest.approx(series, rel=1e-9)
    assert P.expected_cost(1 / 2000) == pytest.approx(math.log(2000) / 1999)


@pytest.mark.parametrize("regime", ["local", "network", "central"])
def test_calibrated_sigma_meets_the_target(regime):
    n, steps, L, K = 2000, 20_000, 0.4, 10.0
    per_update = P.expected_cost(1 / n)
    cal = P.calibrate(regime, 10.0, 1e-6, L, n, steps, K, per_update)
    orders = np.concatenate([1 + np.geomspace(1e-3, 1, 50), np.geomspace(2, 1e5, 300)])
    coef = {"local": K, "network": K * per_update, "central": P.harmonic(steps) / n}[regime]
    rdp_total = coef * rdp_gaussian(orders, cal.sigma, 2 * L)
    assert rdp_to_epsilon(rdp_total, orders, 1e-6) == pytest.approx(10.0, rel=2e-3)


def test_reference_setting_orders_the_noise():
    """σ² is proportional to the coefficient c, so the ratios are known in closed form."""
    n, steps, L = 2000, 20_000, 0.4
    K, per_update = steps / n, P.expected_cost(1 / n)
    sig = {r: P.calibrate(r, 10.0, 1e-6, L, n, steps, K, per_update) for r in P.REGIMES}
    assert sig["local"].sigma / sig["network"].sigma == pytest.approx(
        math.sqrt(1 / per_update), rel=1e-9)
    assert sig["network"].sigma / sig["central"].sigma == pytest.approx(
        math.sqrt(K * per_update / (P.harmonic(steps) / n)), rel=1e-9)
    assert sig["local"].sigma > sig["network"].sigma > sig["central"].sigma
    assert "iteration" in sig["central"].accountant
    # DP-SGD releasing all iterates would need more noise than the network regime
    dpsgd = P.dpsgd_sigma(10.0, 1e-6, L, n, steps)
    assert P.dpsgd_epsilon(dpsgd, 1e-6, L, n, steps) == pytest.approx(10.0, abs=1e-4)
    assert dpsgd > sig["network"].sigma


def _coefficients_brute(holders, n):
    out = np.zeros((n, n))
    for t, u in enumerate(holders):
        for v in range(n):
            later = [s for s in range(t + 1, len(holders)) if holders[s] == v]
            if v != u and later:
                out[u, v] += 1.0 / (later[0] - t)
    return out


def test_pair_coefficients_match_brute_force():
    holders = np.random.default_rng(4).integers(0, 7, 120)
    np.testing.assert_allclose(P.pair_coefficients(holders, 7),
                               _coefficients_brute(holders, 7), rtol=1e-12)


def test_pair_coefficients_mean_matches_expectation():
    """Mean over pairs of C / K is E[1/j], less the updates after v's last visit.

    Those are about n of the T steps (a fraction 1/K), so the mean lies in
    [E (1 - 1/K), E] up to sampling error; the error is the spread of the observers'
    column means (observers are nearly independent), 5 standard errors either side.
    """
    n, steps = 300, 300 * 400
    K = steps / n
    holders = np.random.default_rng(6).integers(0, n, steps)
    per_observer = P.pair_coefficients(holders, n).sum(axis=0) / (n - 1) / K
    mean, se = per_observer.mean(), per_observer.std(ddof=1) / math.sqrt(n)
    expected = P.expected_cost(1 / n)
    assert expected * (1 - 1 / K) - 5 * se <= mean <= expected + 5 * se


# --------------------------------------------------------------------------- simulate

def test_simulate_sgd_regimes_and_invariants():
    cfg = make_config(task="sgd", dataset="synthetic", nodes=200, steps=4000,
                           epsilon=10.0, regimes=("local", "network", "central"), seed=3)
    res = simulate(cfg, keep_pairs=True)
    out = res.to_dict()
    util = out["utility"]
    assert util["local"]["sigma"] > util["network"]["sigma"] > util["central"]["sigma"]
    assert util["local"]["final_objective"] > util["network"]["final_objective"]
    emp = {row["regime"]: row for row in out["privacy"]["empirical"]}
    assert set(emp) == {"local", "network"}
    # pairwise loss never exceeds the node's local loss (1/j <= 1 per update)
    eps = res.pairs
    off = ~np.isnan(eps)
    counts = res.outcomes[0].curves["network"].contributions
    ldp = P.epsilon_upper(2 * 0.4**2 * counts / util["network"]["sigma"] ** 2, 1e-6)
    assert np.all(eps[off] <= np.broadcast_to(ldp[:, None], eps.shape)[off] + 1e-9)
    assert emp["network"]["max"] <= emp["network"]["ldp"]["max"]
    again = simulate(cfg).to_dict()
    assert again["utility"] == util  # same seed, same bytes


def test_cli_compare_writes_curves(tmp_path, capsys):
    prefix = tmp_path / "c"
    code = main(["simulate", "--task", "sgd", "--dataset", "synthetic", "-n", "100",
                 "-T", "2000", "--epsilon", "10", "--compare", "local,network,central",
                 "--curves", str(prefix), "--seed", "1", "--json", "--evals", "10"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    for regime in ("local", "network", "central"):
        assert set(result["utility"][regime]) >= {"sigma", "epsilon", "final_objective",
                                                  "final_accuracy"}
    lines = (tmp_path / "c.csv").read_text().splitlines()
    assert lines[0] == "regime,step,objective,accuracy,sigma,epsilon"
    assert len(lines) == 1 + 3 * 11
    assert (tmp_path / "c.png").stat().st_size > 10_000


@pytest.mark.parametrize("args,flag", [
    (["--compare", "local,foo"], "--compare"),
    (["--lipschitz", "-1"], "--lipschitz"),
    (["--dataset", "nope"], "--dataset"),
    (["--accountant", "kov"], "--accountant"),
    (["--model", "svm"], "--model"),
])
def test_cli_bad_sgd_input_is_one_line(tmp_path, capsys, args, flag):
    prefix = tmp_path / "c"
    code = main(["simulate", "--task", "sgd", "--curves", str(prefix), *args])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and flag in err
    assert not list(tmp_path.iterdir())


# ------------------------------------------------- LDP SGD (Wang et al. ICDE 2019, §5)

@pytest.mark.parametrize("mechanism", ["hybrid", "piecewise"])
def test_sampled_ldp_update_is_unbiased_with_its_variance(mechanism):
    """One step from w = 0 with lr = 1: ``-w / L`` is the sampled PM/HM report of the
    clipped ``g / L`` (k = 2 of 3 coordinates at eps = 6), unbiased with the closed-form
    variance ``(d/k)(Var_M(t) + t²) - t²`` per coordinate."""
    from netdp.tasks.sgd_walk import SampledPerturbation

    X = np.array([[3.0, -1.0, 0.5]])
    data = Split(X, np.array([1.0]), np.array([0, 1]), X, np.array([1.0]), "one row")
    L, rounds = 0.4, 4000
    pert = SampledPerturbation.of(mechanism, 6.0, 3)
    assert pert.k == 2
    g = -0.5 * X[0]  # the logistic gradient at w = 0, y = 1
    t = g / np.linalg.norm(g)  # clipped to L, divided by L
    rng = np.random.default_rng(17)
    reports = np.array([-walk_sgd(np.array([0]), data, Model("logistic"), 0.0, L,
                                  np.array([1.0]), rng, evals=1, ldp=pert).weights / L
                        for _ in range(rounds)])
    var = pert.coordinate_variance(t)
    for j in range(3):
        assert abs(reports[:, j].mean() - t[j]) <= 5 * math.sqrt(var[j] / rounds)
        c = reports[:, j] - reports[:, j].mean()
        se = math.sqrt((np.mean(c**4) - reports[:, j].var() ** 2) / rounds)
        assert abs(reports[:, j].var(ddof=1) - var[j]) <= 5 * se
    wrong = pert.coordinate_variance(t) - (pert.dim / pert.k - 1) * t**2  # no sampling term
    assert any(abs(reports[:, j].var(ddof=1) - wrong[j]) > 5 * math.sqrt(
        (np.mean((reports[:, j] - reports[:, j].mean()) ** 4) - reports[:, j].var() ** 2)
        / rounds) for j in range(3))


def test_ldp_update_epsilon_meets_the_target():
    from netdp.accounting.composition import kov_exact_epsilon

    eps_u = P.ldp_update_epsilon(2.0, 1e-6, 10)
    assert 0.2 <= eps_u <= 2.0
    assert float(kov_exact_epsilon(eps_u, 10, 1e-6)) == pytest.approx(2.0, abs=1e-6)
    assert P.ldp_update_epsilon(2.0, 1e-6, 1) == 2.0


def test_compare_runs_the_sampled_ldp_regimes(capsys):
    report = simulate(make_config(task="sgd", dataset="synthetic", nodes=50, steps=500,
                                  epsilon=4.0, regimes=("local", "local-hm", "local-pm"),
                                  seed=2))
    util = report.utility.to_dict()
    for regime in ("local-hm", "local-pm"):
        assert np.isfinite(util[regime]["final_objective"]) and util[regime]["sigma"] > 0
    assert [row.regime for row in report.privacy.empirical] == ["local"]
    with pytest.raises(InputError, match="lipschitz"):
        make_config(task="sgd", regimes=("local-hm",), lipschitz=float("inf"))
