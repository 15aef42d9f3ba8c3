"""Faults of the event engine: loss, churn, crashes, slow nodes; resend and skip."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from netdp import simulate
from netdp.core.setup import Streams
from netdp.engine import averaging
from netdp.engine.faults import Churn, Faults, Loss, Nodes, parse_churn, parse_loss
from netdp.tasks import make_config, task_of

# rdp named: these tests are about faults, and the default (pld here) costs more
BASE = dict(task="sum", topology="complete", nodes=20, steps=400, seed=5, epsilon=1.0,
            accountants=["rdp"])


def trace_of(**params):
    config = make_config({**BASE, **params})
    task = task_of(config)
    setup = task.prepare(config)
    return setup, task.trace(setup, Streams(setup.seed, 0))


def numbers(report):
    """The report's JSON without timings."""
    out = report.to_json()
    out.pop("runtime_s")
    out.pop("timing")
    for r in out["runs"]:
        r.pop("runtime_s")
    return out


@pytest.mark.parametrize("extra", [dict(), dict(tokens=3, service_time=0.5),
                                   dict(latency="exp:1", tokens=2)])
def test_faults_that_never_strike_leave_the_run_as_it_was(extra):
    """The faulty path with nothing going wrong (no node slow, links that lose nothing)
    records the fault-free event engine's walk, hop for hop and time for time."""
    _, free = trace_of(engine="event", **extra)
    for quiet in (dict(slow="0:3", timeout=1e9), dict(loss="ge:0:1:0:0", slow="0:2",
                                                      timeout=1e9)):
        _, faulty = trace_of(engine="event", **extra, **quiet)
        assert faulty.faults is not None and faulty.completed
        assert np.array_equal(faulty.holders, free.holders)
        assert np.array_equal(faulty.hop_times(), free.hop_times())
        assert faulty.faults.lost == faulty.faults.duplicated == faulty.faults.resent == 0


def test_fault_rates_at_zero_are_the_fault_free_run():
    """Same seed, same numbers: every rate at 0 is the fault-free configuration."""
    free = simulate({**BASE, "runs": 3})
    zero = simulate({**BASE, "runs": 3, "loss": "0", "churn": "none", "on_loss": "skip",
                     "timeout": 9.0, "retries": 3})
    assert zero.faults is None
    a, b = numbers(free), numbers(zero)
    for key in ("on_loss", "timeout", "retries"):
        a["config"].pop(key), b["config"].pop(key)
    assert a == b


def test_resend_keeps_the_route_and_its_duplicates_cost_nothing():
    """With ack loss the sender sends again and the receiver gets duplicates. Resend
    goes to the same receiver, so the walk is the fault-free one (only its times move):
    every holder sees the same values, the estimate and every pairwise ε are the
    fault-free ones, exactly. A duplicate repeats a value its receiver already has: it
    is a function of the receiver's view and costs no privacy."""
    faulty = simulate({**BASE, "loss": "0.3", "runs": 2})
    free = faulty.faults.fault_free
    t = faulty.faults.totals()
    assert t["duplicated"] > 0 and t["resent"] > 0 and t["completed"]
    assert faulty.utility.to_dict() == free["utility"]
    assert faulty.privacy.to_dict()["empirical"] == free["privacy"]["empirical"]
    _, a = trace_of(loss="0.3")
    _, b = trace_of(engine="event")
    assert np.array_equal(a.holders, b.holders)
    assert (a.hop_times() >= b.hop_times()).all() and (a.hop_times() > b.hop_times()).any()


@pytest.mark.slow  # ~15 s: many event-engine runs
def test_resend_estimate_is_unbiased_over_runs():
    """Over 300 runs the resend estimate's mean is within 4 standard errors of the truth
    (the route is the fault-free walk's, so this is the protocol's own unbiasedness,
    kept under faults)."""
    report = simulate({**BASE, "nodes": 10, "steps": 100, "runs": 300, "loss": "0.2",
                       "epsilon": 2.0})
    est = np.array([r.metrics["estimate"] for r in report.runs])
    truth = report.utility.to_dict()["truth"]
    se = est.std(ddof=1) / math.sqrt(est.size)
    assert abs(est.mean() - truth) < 4 * se


@pytest.mark.slow  # ~40 s: many event-engine runs
def test_skip_is_biased_towards_the_nodes_that_are_up(tmp_path):
    """Nodes 0..4 are down for the whole run. skip routes around them: the walk starts at
    an up node and every hop goes to a uniform up node, so the estimate's mean is the
    mean over the up nodes. Its bias is mean_up - mean_all (here clearly nonzero: the
    down nodes hold the largest values); 400 runs land within 4 standard errors of it,
    and far from the unbiased truth."""
    down = tmp_path / "down.csv"
    config = make_config({**BASE, "nodes": 20, "steps": 200, "data": "normal"})
    values = task_of(config).prepare(config).data
    order = np.argsort(values)[::-1][:5]  # the largest values go down
    down.write_text("node,down,up\n" + "".join(f"{u},0,inf\n" for u in order))
    report = simulate({**BASE, "nodes": 20, "steps": 200, "data": "normal", "runs": 400,
                       "churn": f"file:{down}", "on_loss": "skip", "epsilon": 4.0})
    est = np.array([r.metrics["estimate"] for r in report.runs])
    up = np.setdiff1d(np.arange(20), order)
    want = values[up].mean()
    se = est.std(ddof=1) / math.sqrt(est.size)
    assert abs(est.mean() - want) < 4 * se
    assert abs(est.mean() - values.mean()) > 10 * se  # the bias is real
    assert report.faults.totals()["skipped"] > 0


def test_resend_waits_for_a_down_node_and_skip_does_not():
    """Under churn, resend keeps the route (sends again until the receiver is up); skip
    routes around down receivers, so its walk differs from the fault-free one."""
    _, free = trace_of(engine="event")
    _, resend = trace_of(churn="exp:20:5")
    _, skip = trace_of(churn="exp:20:5", on_loss="skip")
    assert np.array_equal(resend.holders, free.holders)
    assert resend.faults.lost > 0 and resend.faults.downtime > 0
    assert skip.faults.skipped > 0 and not np.array_equal(skip.holders, free.holders)


@pytest.mark.parametrize("params", [dict(loss=0.99), dict(crash=3.0),
                                    dict(churn="exp:0.001:1000", on_loss="skip")])
def test_a_run_that_cannot_finish_is_a_result(params, capsys):
    """Loss 0.99, crashes, or every node down: the token is lost, the run ends with
    completed false and exit status 0, and says why."""
    from netdp.run.cli import main

    argv = ["simulate", "--nodes", "20", "--steps", "400", "--seed", "5"]
    for key, value in params.items():
        argv += [f"--{key.replace('_', '-')}", str(value)]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["faults"]["completed"] is False and out["utility"]["completed"] is False
    assert out["faults"]["lost_token_log"] and out["runs"][0]["completed"] is False
    assert main(argv) == 0
    assert "no run completed" in capsys.readouterr().out


def test_gilbert_elliott_loses_in_bursts():
    """A Gilbert-Elliott link loses messages in runs: at the same long-run rate as iid
    loss, its losses come in longer bursts (mean run length 1 / P_BG = 5 vs about 1)."""
    from netdp.engine.faults import FaultRun

    def runs_of(loss):
        fr = FaultRun(Faults(loss), Nodes(Faults(loss), 2, 1, 0), [np.random.default_rng(0)])
        lost = np.array([fr.lose(0, 1, fr.rngs[0]) for _ in range(20_000)])
        edges = np.flatnonzero(np.diff(np.r_[0, lost.astype(int), 0]))
        lengths = edges[1::2] - edges[::2]
        return lost.mean(), lengths.mean()

    ge = parse_loss("ge:0.05:0.2")
    rate, burst = runs_of(ge)
    assert rate == pytest.approx(ge.mean, abs=0.02)  # 0.2 lost in the long run
    iid_rate, iid_burst = runs_of(Loss("iid", ge.mean))
    assert burst > 3 * iid_burst


def test_churn_sessions_have_their_availability():
    """Exponential sessions of means 30 up and 10 down: each node is up 75 % of the
    time, over 200 nodes and a horizon of 2000 (tolerance: a few standard errors of the
    mean over nodes)."""
    faults = Faults(churn=parse_churn("exp:30:10"))
    nodes = Nodes(faults, 200, 7, 0)
    down = np.array([nodes.downtime(v, 2000.0) / 2000.0 for v in range(200)])
    assert down.mean() == pytest.approx(0.25, abs=4 * down.std() / math.sqrt(200) + 0.01)
    times = np.linspace(0, 2000, 400)
    up = np.array([[nodes.is_up(v, t) for t in times] for v in range(50)])
    assert np.array_equal(up.T, np.stack([nodes.up_at(t) for t in times])[:, :50])
    assert up.mean() == pytest.approx(0.75, abs=0.03)
    assert all(nodes.is_up(3, nodes.next_up(3, t)) for t in times[:50])


@pytest.mark.parametrize(("churn", "crash"), [("exp:30:10", None),
                                               ("weibull:0.7:30:10", 50.0)])
def test_mean_downtime_vectorised_is_the_per_node_sum(churn, crash):
    faults = Faults(churn=parse_churn(churn), crash=crash)
    fast = Nodes(faults, 300, 3, 0, horizon=1000).mean_downtime(range(300), 500.0)
    nodes = Nodes(faults, 300, 3, 0, horizon=1000)
    slow = np.mean([nodes.downtime(v, 500.0) for v in range(300)]) / 500.0
    assert fast == pytest.approx(slow, rel=1e-12)
    short = Nodes(faults, 300, 3, 0)  # few sessions drawn at first: the same schedule
    assert short.mean_downtime(range(300), 500.0) == pytest.approx(slow, rel=1e-12)


def test_churn_table_and_crashes():
    faults = Faults(churn=Churn("file", table={1: [(2.0, 5.0)]}), crash=None)
    nodes = Nodes(faults, 5, 1, 0)
    assert nodes.is_up(1, 1.9) and not nodes.is_up(1, 2.0) and nodes.is_up(1, 5.0)
    assert nodes.next_up(1, 3.0) == 5.0 and nodes.downtime(1, 10.0) == 3.0
    assert nodes.up_at(1.9).all() and list(np.flatnonzero(~nodes.up_at(2.0))) == [1]
    crashing = Nodes(Faults(crash=10.0), 5, 1, 0)
    c = crashing.crash_time(4)
    assert not crashing.is_up(4, c) and crashing.next_up(4, c) == math.inf


@pytest.mark.parametrize(("argv", "flag"), [
    (["--loss", "2"], "--loss"), (["--loss", "ge:0:0"], "--loss"),
    (["--loss", "file:/nonexistent.csv"], "--loss"), (["--churn", "exp:0:1"], "--churn"),
    (["--churn", "weibull:1:2"], "--churn"), (["--slow", "0.5"], "--slow"),
    (["--latency", "pareto:1:0"], "--latency"),
    (["--loss", "0.1", "--engine", "vector"], "--engine"),
    (["--slow", "0.5:2", "--protocol", "gossip", "--topology", "cycle"], "--slow"),
    (["--loss", "0.1", "--protocol", "gossip", "--topology", "cycle", "--on-loss", "skip"],
     "--on-loss"),
    (["--loss", "0.1", "--protocol", "gossip", "--topology", "cycle", "--accelerated"],
     "--accelerated"),
    (["--loss", "0.1", "--protocol", "gossip", "--topology", "cycle", "--task", "sgd",
      "--dataset", "synthetic"], "--loss"),
    (["--topology", "ring", "--churn", "exp:5:1", "--on-loss", "skip"], "--on-loss"),
    (["--timeout", "0"], "--timeout"),
])
def test_bad_fault_parameters_are_one_line_exit_2(argv, flag, capsys):
    from netdp.run.cli import main

    code = main(["simulate", "--nodes", "10", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and flag in err, err


def test_heavy_tailed_latency_laws():
    from netdp.engine.clock import parse_latency

    pareto = parse_latency("pareto:1:3")
    x = pareto.draw(np.random.default_rng(0), 200_000)
    assert x.min() >= 1.0 and x.mean() == pytest.approx(pareto.mean, rel=0.02)
    logn = parse_latency("lognormal:2:0.5")
    y = logn.draw(np.random.default_rng(1), 200_000)
    assert np.median(y) == pytest.approx(2.0, rel=0.02)
    assert y.mean() == pytest.approx(logn.mean, rel=0.02)
    assert str(pareto) == "pareto:1:3"


def test_regenerate_composes_the_lost_tokens_exposures():
    """Loss 0.1 with 2 retries: at seed 9 token 1 is lost at step 19 and its last holder
    starts a new token, which walks all 60 steps. The estimate comes from the tokens that
    finished; the trackers read every token walked, so each node's LDP loss and every
    pairwise ε include what the lost token exposed: at least the figures of the finished
    tokens alone, and more for the nodes it carried."""
    from netdp.tracking.loss_table import ldp_losses, walk_losses

    setup, trace = trace_of(nodes=20, steps=60, seed=9, loss="0.1", retries=2,
                            on_loss="regenerate", tokens=2)
    f = trace.faults
    assert trace.completed and f.regenerated == 1 and f.finished == (0, 2)
    assert [int((row >= 0).sum()) for row in trace.holders] == [60, 19, 60]
    done = trace.finished()
    assert done.holders.shape == (2, 60) and (done.holders >= 0).all()
    full, alone = ldp_losses(trace, 1.0, 1e-6), ldp_losses(done, 1.0, 1e-6)
    assert (full >= alone).all() and (full > alone).any()
    carried = np.unique(trace.holders[1][trace.holders[1] >= 0])
    assert (full[carried] >= alone[carried]).all()
    z = setup.mechanism.sigma / setup.mechanism.sensitivity
    a = walk_losses(trace, 1.0, 1e-6, z, keep_pairs=True).matrix()
    b = walk_losses(done, 1.0, 1e-6, z, keep_pairs=True).matrix()
    off = ~np.eye(20, dtype=bool)
    assert (a[off] >= b[off] - 1e-12).all() and a[off].sum() > b[off].sum()
    report = simulate({**BASE, "nodes": 20, "steps": 60, "seed": 9, "loss": "0.1",
                       "retries": 2, "on_loss": "regenerate", "tokens": 2})
    assert report.runs[0].hops == 139 and report.faults.totals()["regenerated"] == 1
    # the report's LDP baseline is at the one target δ (spec Correction 7): with Gaussian
    # noise the exact composition of a node's Gaussians, so compare like with like
    alone_t = ldp_losses(done, 1.0, 1e-6, target=1e-6, noise_multiplier=z)
    full_t = ldp_losses(trace, 1.0, 1e-6, target=1e-6, noise_multiplier=z)
    assert (full_t >= alone_t).all() and (full_t > alone_t).any()
    assert report.privacy.to_dict()["ldp"]["max"] == pytest.approx(float(full_t.max()))
    assert report.privacy.to_dict()["ldp"]["max"] >= float(alone_t.max())


def test_regenerate_is_refused_where_a_tracker_would_miss_the_lost_token(capsys):
    from netdp.run.cli import main

    for argv, flag in ((["--topology", "ring"], "--on-loss"),
                       (["--task", "sgd", "--dataset", "synthetic"], "--on-loss")):
        code = main(["simulate", "--nodes", "10", "--loss", "0.1", "--on-loss", "regenerate",
                     *argv])
        out, err = capsys.readouterr()
        assert code == 2 and flag in err and err.count("\n") == 1, err


@pytest.mark.parametrize("extra", [dict(task="histogram"), dict(task="fraction"),
                                   dict(topology="hypercube", nodes=16, steps=80),
                                   dict(task="histogram", coalition="1,2")])
def test_every_walk_tracker_reads_a_trace_with_a_lost_token(extra):
    """A lost token's row ends in -1. Every walk tracker accounts what it exposed (no
    node is made of the steps that never happened), and stays at or below the LDP loss of
    every step of every token (the view cap, spec Correction 6, is at most that: a node's
    realised LDP loss is no cap)."""
    from netdp.tracking.loss_table import ldp_at

    base = {k: v for k, v in BASE.items() if k != "accountants"}  # each task's default
    params = {**base, "nodes": 20, "steps": 60, "seed": 9, "loss": "0.1", "retries": 2,
              "on_loss": "regenerate", "tokens": 2, **extra}
    report = simulate(params)
    assert report.faults.totals()["regenerated"] >= 1 and report.faults.totals()["completed"]
    d = report.privacy.to_dict()
    config = make_config(params)
    rows = params["tokens"] + report.faults.totals()["regenerated"]  # a lost step counts
    top = float(ldp_at(config.epsilon, config.delta, rows * params["steps"]))
    for summary in d["empirical"]:
        assert 0 <= summary["min"] <= summary["max"] <= top


def test_a_sweep_row_has_the_faults_and_the_fault_free_figures():
    from netdp.run.sweep.table import flatten

    row = flatten(simulate({**BASE, "loss": "0.2"}).to_json())
    assert row["faults_completed"] in (0, 1) and row["faults_sent"] > row["faults_resent"] > 0
    assert row["fault_free_rdp_mean"] == pytest.approx(row["rdp_mean"])  # resend
    assert row["fault_free_abs_error"] == pytest.approx(row["abs_error"])
    lost = flatten(simulate({**BASE, "loss": "0.99"}).to_json())
    assert lost["faults_completed"] == 0 and "estimate" not in lost


# --------------------------------------------------------------------------- gossip

GOSSIP = dict(task="sum", protocol="gossip", topology="cycle", nodes=8, steps=2, seed=1,
              sigma=0.5)


def test_gossip_with_faults_that_never_strike_is_the_fault_free_run(tmp_path):
    """A churn table with no down time takes the faulty path: the states, and the exact
    loss of every observer's view, are those of the fault-free rounds."""
    empty = tmp_path / "none.csv"
    empty.write_text("node,down,up\n")
    quiet = simulate({**GOSSIP, "churn": f"file:{empty}", "runs": 2})
    assert quiet.faults is not None and quiet.faults.totals()["lost"] == 0
    free = quiet.faults.fault_free
    for key, value in quiet.utility.to_dict().items():  # the same, to rounding
        assert value == (pytest.approx(free["utility"][key], rel=1e-12)
                         if isinstance(value, float) else free["utility"][key])
    got, want = quiet.privacy.to_dict()["empirical"], free["privacy"]["empirical"]
    for a, b in zip(got, want, strict=True):
        for key in ("mean", "min", "max"):
            assert a[key] == pytest.approx(b[key], rel=1e-9, abs=1e-12)


def test_realised_joint_is_the_exact_joint_without_losses_and_drops_what_was_lost():
    """Nothing lost: the realised view's coefficients are :func:`gossip.joint`'s. On a
    cycle with one step, node 0 hears nodes 7 and 1. If every message of node 7 to node
    0 is lost, node 7's value has no other way to node 0 (node 1 is not its neighbour,
    and node 0 used its own state in place of 7's): c = 0, where it was 1."""
    from netdp.engine.trace import GossipRounds
    from netdp.tracking import gossip

    config = make_config({**GOSSIP, "steps": 1})
    task = task_of(config)
    setup = task.prepare(config)
    rounds = task.trace(setup, Streams(setup.seed, 0)).gossip
    W, adj = setup.plan.W, setup.plan.adj
    n, m = 8, rounds.src.size
    clean = GossipRounds(rounds.src, rounds.dst, 1, None, np.zeros((2, m), bool),
                         np.zeros((1, n), bool))
    exact = gossip.joint(W, adj, 1).capped()
    assert np.allclose(gossip.realised_joint(W, clean, np.arange(n)).values, exact,
                       atol=1e-12)
    lost = np.zeros((2, m), bool)
    lost[:, (rounds.src == 7) & (rounds.dst == 0)] = True
    cut = GossipRounds(rounds.src, rounds.dst, 1, None, lost, np.zeros((1, n), bool))
    c = gossip.realised_joint(W, cut, np.array([0])).values[0]
    assert exact[0, 7] == 1.0 and c[7] == 0.0 and c[1] == 1.0


def test_gossip_with_loss_keeps_rows_stochastic_and_drifts_the_mean():
    """The stale-value rule: every state stays a convex combination of the noisy values
    (rows sum to 1), but the columns do not (the mean of the states drifts): its bias on
    the average is ``mean(M_T x) - mean(x)``, computed from the realised map M_T."""

    config = make_config({**GOSSIP, "nodes": 12, "steps": 6, "loss": "0.3"})
    task = task_of(config)
    setup = task.prepare(config)
    rounds = task.trace(setup, Streams(setup.seed, 0)).gossip
    maps = list(averaging.faulty_iterate(setup.plan.W, np.eye(12), rounds))
    M = maps[-1]
    assert np.allclose(M.sum(axis=1), 1.0) and (M >= -1e-15).all()
    assert not np.allclose(M.sum(axis=0), 1.0)
    x = setup.data
    states = averaging.faulty_gossip(setup.plan.W, x, rounds)
    assert np.allclose(states[-1], M @ x)


def test_the_audit_checks_gossip_with_faults_from_below():
    """A gossip run with loss is still a Gaussian linear map of the noise: the protocol
    audit's Gaussian-DP fit stays at or below the realised exact loss of the pair."""
    from netdp.audit.protocol import audit_protocol

    config = make_config({**GOSSIP, "loss": "0.3", "steps": 1})
    got = audit_protocol(config, 0, 1, 3000)
    assert got.sandwich and got.result.gdp_epsilon is not None
    assert got.result.gdp_epsilon <= got.tracker_epsilon + 1e-9


def test_audits_of_a_faulty_walk(capsys):
    """``--set loss=0.1`` reaches the text parameter as written; resend keeps the walk's
    law, so its hidden paths are drawn again; skip changes it, and asks for
    --fixed-path."""
    from netdp.run.cli import main, parse_sets

    assert parse_sets(["loss=0.1", "latency=2", "epsilon=2"]) == {
        "loss": "0.1", "latency": "2", "epsilon": 2}
    base = ["audit", "--task", "sum", "--nodes", "10", "--steps", "100", "--trials", "200",
            "--set", "loss=0.1", "--json"]
    assert main(base) == 0
    assert json.loads(capsys.readouterr().out)["paths"] == "secret"
    assert main([*base, "--set", "on_loss=skip"]) == 2
    assert "--fixed-path" in capsys.readouterr().err
    assert main([*base, "--set", "on_loss=skip", "--fixed-path"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["paths"] == "fixed" and out["audit"]["sandwich"]


# --------------------------------------------------------------------------- compiled

ORACLE_CASES = [
    dict(loss="0.2"), dict(loss="0.2", on_loss="skip"), dict(churn="exp:30:10"),
    dict(churn="weibull:0.7:30:10", on_loss="skip", loss="0.1"),
    dict(crash=300.0, loss="0.05"), dict(slow="0.3:4", loss="0.1", latency="exp:1"),
    dict(loss="0.3", retries=2), dict(churn="exp:5:20", on_loss="skip", retries=3),
    dict(topology="hypercube", nodes=16, loss="0.1", churn="exp:50:10", on_loss="skip"),
    dict(topology="ring", nodes=12, steps=None, loss="0.2", churn="exp:50:5"),
    dict(loss="0.1", tokens=3, latency="pareto:1:3"),
    dict(self_moves=False, loss="0.2", on_loss="skip", churn="exp:20:10"),
]


@pytest.mark.parametrize("extra", ORACLE_CASES)
def test_the_compiled_walk_is_the_python_walk(extra):
    """The compiled hand-offs (netdp.engine._fault_kernels) against their oracle, the
    event engine's Python path: the same holders, times to the last bit, counts and lost
    tokens, over 3 runs, with loss, churn that outlives the sessions drawn at first,
    crashes, stragglers, drawn latencies, skips, graphs and the ring."""
    from netdp.engine import event_walk as events
    from netdp.engine.clock import parse_latency
    from netdp.engine.faults import fault_run
    from netdp.engine.routing import Router

    params = {**BASE, "nodes": 30, "steps": 400, "seed": 3, **extra}
    config = make_config({k: v for k, v in params.items() if v is not None})
    task = task_of(config)
    setup = task.prepare(config)
    for run in range(3):
        streams = Streams(setup.seed, run)
        router = Router(setup.topology, setup.config.walk)
        latency = parse_latency(config.latency)
        tokens = range(config.tokens)

        def walk(fn, *extra_args, router=router, streams=streams, latency=latency,
                 tokens=tokens):
            return fn(router, setup.steps, [streams.generator("walk", k) for k in tokens],
                      latency, [streams.generator("latency", k) for k in tokens], *extra_args,
                      fault_run(setup, streams, config.tokens))

        a, b = walk(events.run_faulty, 0.0), walk(events.run_compiled)
        assert np.array_equal(a.holders, b.holders)
        assert np.array_equal(np.nan_to_num(a.times, nan=-1.0), np.nan_to_num(b.times, nan=-1.0))
        assert a.faults.to_dict() == b.faults.to_dict()
        assert a.faults.lost_tokens == b.faults.lost_tokens


def test_the_noise_in_the_result_is_reported_beside_the_fault_free_one():
    """Walk sum: ``sqrt(T) σ / T`` per token, over the tokens whose sums make the
    estimate; regenerate at seed 10 left 5 tokens where the fault-free run has 2. Gossip:
    the realised map's row norms, checked against 4000 noise draws on the same rounds
    (tolerance: 5 standard errors of a standard deviation, sqrt(1 / (2 k)))."""

    report = simulate({**BASE, "nodes": 20, "steps": 60, "seed": 10, "loss": "0.1",
                       "retries": 2, "on_loss": "regenerate", "tokens": 2})
    t = report.faults.totals()
    free = report.faults.fault_free["noise_std"]
    assert report.faults.noise_std == pytest.approx(free * math.sqrt(2 / t["finished_tokens"]))
    config = make_config({**GOSSIP, "nodes": 12, "steps": 6, "loss": "0.3"})
    task = task_of(config)
    setup = task.prepare(config)
    trace = task.trace(setup, Streams(setup.seed, 0))
    want = task.output_noise(setup, trace, None)
    k = 4000
    z = np.random.default_rng(8).standard_normal((12, k)) * setup.sigma
    noise = averaging.faulty_gossip(setup.plan.W, z, trace.gossip)[-1]  # (n, k)
    got = math.sqrt(float(np.mean(noise.var(axis=1))))
    assert got == pytest.approx(want, rel=5 / math.sqrt(2 * k))
