"""Gossip averaging with correlated noise (``--correlated-noise``, DECOR's secrets;
``--noise-covariance``, a user's covariance): the draws have the model's covariance and
DECOR's secrets cancel in the sum, the final states have their closed-form law, the
report holds the exact loss of each view and DECOR's SecLDP line, and bad input is one
line."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest
from conftest import assert_mean, assert_std_gaussian

from netdp import simulate
from netdp.core.setup import Streams
from netdp.engine import averaging
from netdp.mechanisms.correlated_noise import CorrelatedNoise, graph_edges
from netdp.run.cli import main
from netdp.tasks import make_config, task_of
from netdp.tracking import gossip
from netdp.tracking.gossip import coefficient_epsilon

Z = 5.0  # standard errors of an empirical covariance entry


def path_noise(user: bool = False) -> tuple[CorrelatedNoise, np.ndarray]:
    g = nx.path_graph(6)
    g.add_edge(0, 5)
    g.add_edge(1, 4)
    adj = nx.to_scipy_sparse_array(g, format="csr")
    C = None
    if user:
        a = np.linspace(-1, 1, 6)
        C = 0.5 * np.outer(a, a) + 0.2 * np.eye(6)
    noise = CorrelatedNoise(0.7, 1.3, graph_edges(adj), C)
    L = nx.laplacian_matrix(g, nodelist=range(6)).toarray()
    want = 0.49 * np.eye(6) + 1.69 * L + (0 if C is None else C)
    return noise, want


@pytest.mark.parametrize("user", [False, True])
def test_the_draws_have_the_model_covariance(user):
    noise, want = path_noise(user)
    np.testing.assert_allclose(noise.covariance_matrix(6), want, rtol=0, atol=1e-12)
    rng = np.random.default_rng(5)
    draws = np.array([noise.draw(rng, 6) for _ in range(20000)])
    got = np.cov(draws, rowvar=False)
    se = np.sqrt((np.outer(np.diag(want), np.diag(want)) + want**2) / draws.shape[0])
    assert np.all(np.abs(got - want) <= Z * se)
    assert np.all(np.abs(draws.mean(axis=0)) <= Z * np.sqrt(np.diag(want) / draws.shape[0]))


def test_decors_secrets_cancel_in_the_sum():
    noise, _ = path_noise()
    eta = noise.draw(np.random.default_rng(3), 6)
    xi = np.random.default_rng(3).standard_normal(6)  # the draw makes ξ first
    assert eta.sum() == pytest.approx(0.7 * xi.sum(), abs=1e-12)
    assert not np.allclose(eta, 0.7 * xi)


RUNS = 300


@pytest.fixture(scope="module")
def decor_runs():
    return simulate(make_config(task="sum", protocol="gossip", topology="torus", nodes=16,
                                sigma=0.5, correlated_noise=1.0, steps=6, runs=RUNS,
                                accountants=(), seed=7))


def test_every_node_ends_at_the_closed_form_law(decor_runs):
    """Node v's final state is Gaussian with mean ``(A_T x)_v`` and variance
    ``(A_T Cov(η) A_T)_vv``, written out here with dense matrices."""
    cfg = decor_runs.config
    setup = task_of(cfg).prepare(cfg)
    W = np.asarray(setup.plan.W.todense())
    A = np.linalg.matrix_power(W, setup.steps)
    cov = A @ setup.noise.covariance_matrix(16) @ A.T
    mean = averaging.gossip(setup.plan.W, setup.data, setup.steps)[-1]
    finals = np.array([o.final for o in decor_runs.outcomes])
    for v in (0, 5, 11):
        assert_mean(finals[:, v], mean[v], np.sqrt(cov[v, v]))
        assert_std_gaussian(finals[:, v], np.sqrt(cov[v, v]))
    rmse = np.sqrt(np.mean(np.diag(cov) + (mean - setup.data.mean()) ** 2))
    assert decor_runs.utility.theoretical_rmse == pytest.approx(rmse, rel=1e-10)
    means = np.array([o.final.mean() for o in decor_runs.outcomes])  # the secrets cancel
    assert_std_gaussian(means - setup.data.mean(), 0.5 / 4)


def test_the_report_holds_each_views_exact_loss_and_decors_line():
    cfg = make_config(task="sum", protocol="gossip", topology="karate", sigma=1.0,
                      correlated_noise=2.0, steps=4, seed=2, accountants=("pld",),
                      target_delta=1e-5)
    report = simulate(cfg, keep_pairs=True)
    setup = task_of(report.config).prepare(report.config)
    losses = gossip.joint(setup.plan.W, setup.plan.adj, 4, noise=setup.noise)
    coef = losses.matrix()
    off = ~np.eye(34, dtype=bool)
    want = coefficient_epsilon(coef[off], 1.0, 1e-5, "pld")
    np.testing.assert_allclose(report.pairs[off], want, rtol=1e-12)
    out = report.to_json()["privacy"]
    assert out["correlated_noise"] == {"sigma": 1.0, "decor_sigma": 2.0, "decor_pairs": 78}
    inverse = np.linalg.inv(setup.noise.covariance_matrix(34))
    eaves = coefficient_epsilon(np.diag(inverse), 1.0, 1e-5, "pld")
    assert out["theory"]["decor-secldp-max"] == pytest.approx(eaves.max(), rel=1e-12)
    plain = simulate(make_config(task="sum", protocol="gossip", topology="karate", sigma=1.0,
                                 steps=4, seed=2, accountants=("pld",), target_delta=1e-5))
    assert out["empirical"][0]["mean"] < plain.to_json()["privacy"]["empirical"][0]["mean"]


def test_a_users_covariance_knows_less_than_decors_secrets(tmp_path):
    """DECOR's covariance ``σ_cor² L`` given as a user's matrix: a node then knows only the
    sum of its secrets, not each, so every pair loses at most what DECOR's run gives."""
    base = dict(task="sum", protocol="gossip", topology="hypercube", nodes=16, sigma=1.0,
                steps=3, seed=4, accountants=("pld",))
    decor = simulate(make_config(**base, correlated_noise=1.5), keep_pairs=True)
    setup = task_of(decor.config).prepare(decor.config)
    adj = setup.plan.adj.toarray()
    L = np.diag(adj.sum(axis=1)) - adj
    np.save(tmp_path / "cov.npy", 2.25 * L)
    user = simulate(make_config(**base, noise_covariance=str(tmp_path / "cov.npy")),
                    keep_pairs=True)
    off = ~np.eye(16, dtype=bool)
    assert np.all(user.pairs[off] <= decor.pairs[off] * (1 + 1e-9))  # rounding margins
    assert np.any(user.pairs[off] < decor.pairs[off] - 1e-3)
    assert user.utility.theoretical_rmse == pytest.approx(decor.utility.theoretical_rmse,
                                                         rel=1e-10)


def test_a_fault_free_run_draws_the_independent_noise_first():
    """Without correlated noise the draw is Muffliato's, bit for bit (goldens keep it)."""
    cfg = make_config(task="sum", protocol="gossip", topology="cycle", nodes=8, sigma=1.0,
                      steps=3, seed=1, accountants=())
    task = task_of(cfg)
    setup = task.prepare(cfg)
    assert setup.noise is None
    streams = Streams(setup.seed, 0)
    out = task.run(setup, task.trace(setup, streams), streams)
    x0 = setup.data + Streams(setup.seed, 0).generator("noise").standard_normal(8)
    assert np.array_equal(out.final, averaging.gossip(setup.plan.W, x0, 3)[-1])


def bad(tmp_path, matrix) -> str:
    path = tmp_path / "m.npy"
    np.save(path, matrix)
    return str(path)


@pytest.mark.parametrize("extra,words", [
    (["--correlated-noise", "0"], "--correlated-noise"),
    (["--correlated-noise", "-1"], "--correlated-noise"),
    (["--correlated-noise", "inf"], "--correlated-noise"),
    (["--noise-covariance", "cov.txt"], ".npy"),
    (["--noise-covariance", "missing.npy"], "--noise-covariance"),
    (["--noise-covariance", np.eye(4)], "n x n"),
    (["--noise-covariance", np.triu(np.ones((8, 8)))], "symmetric"),
    (["--noise-covariance", -np.eye(8)], "positive semi-definite"),
    (["--noise-covariance", np.full((8, 8), np.nan)], "finite"),
    (["--noise-covariance", np.full((8, 8), 1e20)], "[-1e12, 1e12]"),
    (["--noise-covariance", np.eye(8).astype(complex)], "real numbers"),
])
def test_bad_input_is_one_line(tmp_path, capsys, monkeypatch, extra, words):
    monkeypatch.chdir(tmp_path)
    if not isinstance(extra[1], str):
        extra = [extra[0], bad(tmp_path, extra[1])]
    argv = ["simulate", "--task", "sum", "--protocol", "gossip", "--topology", "cycle",
            "--nodes", "8", "--sigma", "1", "--steps", "2", *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err
    assert sorted(p.name for p in tmp_path.iterdir()) in ([], ["m.npy"])


@pytest.mark.parametrize("schedule", ["sync", "pairwise"])
def test_a_log_with_correlated_noise_accounts_as_simulated(tmp_path, capsys, monkeypatch,
                                                           schedule):
    monkeypatch.chdir(tmp_path)
    common = ["--task", "sum", "--protocol", "gossip", "--topology", "hypercube", "--nodes",
              "16", "--sigma", "1", "--correlated-noise", "1.5", "--seed", "3", "--steps",
              "3", "--gossip-schedule", schedule]
    assert main(["simulate", *common, "--trace-out", "run.log", "--json"]) == 0
    simulated = json.loads(capsys.readouterr().out)["privacy"]
    assert main(["account", "run.log", "--json"]) == 0
    accounted = json.loads(capsys.readouterr().out)["privacy"]
    assert accounted["empirical"][0]["mean"] == simulated["empirical"][0]["mean"]
    assert accounted["theory"] == simulated["theory"]


def test_faulty_rounds_with_nothing_lost_are_the_synchronous_views():
    """The faults' path (the realised rows) with correlated noise, no message lost: the
    synchronous tracker's figures; one message lost: never more than that."""
    from netdp.engine.trace import GossipRounds

    cfg = make_config(task="sum", protocol="gossip", topology="cycle", nodes=8, sigma=1.0,
                      correlated_noise=1.5, steps=2, seed=1, accountants=())
    task = task_of(cfg)
    setup = task.prepare(cfg)
    rounds = task.trace(setup, Streams(setup.seed, 0)).gossip
    W, adj, m = setup.plan.W, setup.plan.adj, rounds.src.size
    clean = GossipRounds(rounds.src, rounds.dst, 2, None, np.zeros((3, m), bool),
                         np.zeros((2, 8), bool))
    sync = gossip.joint(W, adj, 2, noise=setup.noise).values
    realised = gossip.realised_joint(W, clean, np.arange(8), noise=setup.noise).values
    np.testing.assert_allclose(realised, sync, rtol=0, atol=1e-9)
    lost = np.zeros((3, m), bool)
    lost[:, (rounds.src == 7) & (rounds.dst == 0)] = True
    cut = GossipRounds(rounds.src, rounds.dst, 2, None, lost, np.zeros((2, 8), bool))
    c = gossip.realised_joint(W, cut, np.array([0]), noise=setup.noise).values[0]
    assert np.all(c <= sync[0] + 1e-9) and c[7] < sync[0, 7] - 1e-3


def test_a_time_varying_graph_takes_independent_noise_only():
    from netdp.core.errors import InputError

    graphs = [nx.cycle_graph(6), nx.path_graph(6)]
    with pytest.raises(InputError) as exc:
        simulate({"task": "sum", "protocol": "gossip", "topology": graphs, "sigma": 1.0,
                  "steps": 3, "correlated_noise": 1.0})
    assert exc.value.param == "correlated-noise"
    simulate({"task": "sum", "protocol": "gossip", "topology": graphs, "sigma": 1.0,
              "steps": 3})  # without the secrets it runs


def write_pairs(tmp_path, lines: list[str], name: str = "pairs.txt") -> str:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_secrets_on_some_edges_lose_at_least_as_much(tmp_path):
    """Fewer secrets, less noise: every pair loses at least what it loses with a secret on
    every edge; a file of every edge is the default, figure for figure."""
    base = dict(task="sum", protocol="gossip", topology="florentine", sigma=1.0, steps=3,
                seed=4, accountants=("pld",), correlated_noise=2.0)
    every = simulate(make_config(**base), keep_pairs=True)
    setup = task_of(every.config).prepare(every.config)
    edges = setup.noise.edges
    labels = setup.topology.labels
    all_lines = [f"{labels[a]} {labels[b]}" for a, b in edges.tolist()]
    same = simulate(make_config(**base, secret_pairs=write_pairs(tmp_path, all_lines)),
                    keep_pairs=True)
    off = ~np.eye(15, dtype=bool)
    np.testing.assert_array_equal(same.pairs[off], every.pairs[off])
    half = [f"{a},{b}" for a, b in edges[::2].tolist()]  # ids this time
    fewer = simulate(make_config(**base, secret_pairs=write_pairs(tmp_path, half, "h.txt")),
                     keep_pairs=True)
    assert np.all(fewer.pairs[off] >= every.pairs[off] - 1e-12)
    assert np.any(fewer.pairs[off] > every.pairs[off] + 1e-3)
    assert fewer.to_json()["privacy"]["correlated_noise"]["decor_pairs"] == len(half)


@pytest.mark.parametrize("lines,words", [
    (["Medici Albizzi", "Medici Strozzi"], "line 2: the pair is not an edge"),
    (["Medici Medici"], "line 1: a node shares no secret with itself"),
    (["Medici Albizzi", "Albizzi Medici"], "line 2: the pair is given twice (line 1 too)"),
    (["Medici Borgia"], "line 1: the second node is not a node of"),
    (["99 1"], "line 1: the first node is not a node of"),
    (["Medici Albizzi Strozzi"], "line 1: expected two nodes"),
    (["# nothing but a comment", ""], "no pair"),
])
def test_bad_secret_pairs_are_one_line(tmp_path, capsys, lines, words):
    argv = ["simulate", "--task", "sum", "--protocol", "gossip", "--topology", "florentine",
            "--sigma", "1", "--correlated-noise", "1", "--steps", "2", "--secret-pairs",
            write_pairs(tmp_path, lines)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0] and "--secret-pairs" in err[0], err
    assert "Borgia" not in err[0]  # a file's text is never quoted


def test_secret_pairs_need_decor(tmp_path, capsys):
    argv = ["simulate", "--task", "sum", "--protocol", "gossip", "--topology", "florentine",
            "--sigma", "1", "--secret-pairs", write_pairs(tmp_path, ["Medici Albizzi"])]
    assert main(argv) == 2
    assert "only with --correlated-noise" in capsys.readouterr().err


def test_a_log_names_its_secret_pairs_and_account_asks_for_them(tmp_path, capsys,
                                                               monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_pairs(tmp_path, ["Medici Albizzi", "Medici Tornabuoni"])
    common = ["--task", "sum", "--protocol", "gossip", "--topology", "florentine", "--sigma",
              "1", "--correlated-noise", "2", "--secret-pairs", "pairs.txt", "--seed", "3"]
    assert main(["simulate", *common, "--trace-out", "run.log", "--json"]) == 0
    simulated = json.loads(capsys.readouterr().out)["privacy"]
    assert main(["account", "run.log", "--topology", "florentine"]) == 2
    assert "--set secret_pairs=FILE" in capsys.readouterr().err
    assert main(["account", "run.log", "--topology", "florentine", "--set",
                 "secret_pairs=pairs.txt", "--json"]) == 0
    accounted = json.loads(capsys.readouterr().out)["privacy"]
    assert accounted["empirical"][0]["mean"] == simulated["empirical"][0]["mean"]
    write_pairs(tmp_path, ["Medici Strozzi"], "far.txt")  # not neighbours in Florence
    assert main(["account", "run.log", "--topology", "florentine", "--set",
                 "secret_pairs=far.txt"]) == 2
    assert "not an edge" in capsys.readouterr().err


def test_a_covariance_from_python_is_the_file_s(tmp_path):
    """``noise_covariance`` as an array (or nested lists) from Python: the same figures as
    the same matrix in a .npy file, recorded in the config by its digest."""
    rng = np.random.default_rng(2)
    A = rng.normal(size=(16, 3))
    C = A @ A.T
    np.save(tmp_path / "c.npy", C)
    base = dict(task="sum", protocol="gossip", topology="hypercube", nodes=16, sigma=1.0,
                steps=3, seed=5, accountants=("pld",))
    from_file = simulate(make_config(**base, noise_covariance=str(tmp_path / "c.npy")),
                         keep_pairs=True)
    for given in (C, C.tolist()):
        from_python = simulate(make_config(**base, noise_covariance=given), keep_pairs=True)
        np.testing.assert_array_equal(from_python.pairs, from_file.pairs)
        recorded = from_python.config.to_dict()["noise_covariance"]
        assert recorded.startswith("array: 16 x 16, sha256 ")
        json.dumps(from_python.to_json())  # the array itself is not in the result


@pytest.mark.parametrize("given,words", [
    (np.zeros((2, 2, 2)), "2-D array"), (np.array([["a", "b"], ["c", "d"]]), "2-D array"),
    (np.eye(16) * 1j, "2-D array"), (np.eye(4), "n x n"), ([[1.0, 2.0], [3.0]], "2-D array"),
])
def test_a_bad_array_from_python_is_refused(given, words):
    from netdp.core.errors import InputError

    with pytest.raises(InputError) as exc:
        simulate(make_config(task="sum", protocol="gossip", topology="hypercube", nodes=16,
                             sigma=1.0, steps=2, noise_covariance=given))
    assert exc.value.param == "noise-covariance" and words in exc.value.message
