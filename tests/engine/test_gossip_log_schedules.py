"""Logs of partial, pairwise and push-pull gossip (netdp.engine.gossip_log): what
``simulate --trace-out`` writes, ``account`` reads back into the engine's trace and the
same report; a round with a message missing is partial gossip when the header says so;
bad exchanges exit 2 with one line."""

from __future__ import annotations

import numpy as np
import pytest

import netdp
from netdp.engine import async_gossip as AG
from netdp.engine import gossip_log, trace_log
from netdp.engine.trace import GossipRounds
from netdp.graphs.topologies import edges
from netdp.run.api import run as run_loop
from netdp.run.cli import main
from netdp.tasks import make_config, task_of
from netdp.tasks.preparation import with_seed
from netdp.tracking import async_gossip

SCHEDULES = [("partial", 0.5), ("pairwise", None), ("push-pull", None)]


def params(schedule: str, p: float | None) -> dict:
    out = {"task": "sum", "protocol": "gossip", "topology": "hypercube", "nodes": 8,
           "sigma": 1.0, "steps": 3, "runs": 2, "seed": 4, "gossip_schedule": schedule}
    return out if p is None else {**out, "edge_probability": p}


@pytest.mark.parametrize("schedule,p", SCHEDULES)
def test_account_of_the_log_is_the_simulated_report(schedule, p, tmp_path):
    log = tmp_path / "log.csv"
    simulated = netdp.simulate(params(schedule, p), trace_out=log).to_json()["privacy"]
    accounted = netdp.account(log).to_json()["privacy"]
    assert accounted["empirical"] == simulated["empirical"]
    assert accounted["schedule"] == schedule


@pytest.mark.parametrize("schedule,p", SCHEDULES)
def test_the_rebuilt_trace_is_the_engines(schedule, p, tmp_path):
    log = tmp_path / "log.csv"
    netdp.simulate(params(schedule, p), trace_out=log)
    config = with_seed(make_config(params(schedule, p)))
    setup = task_of(config).prepare(config)
    made: list = []
    run_loop(setup, on_trace=lambda r, t: made.append(t))
    read = gossip_log.gossip_traces(trace_log.read(log), setup.topology, "vector", schedule)
    assert len(read) == len(made) == 2
    for a, b in zip(made, read, strict=True):
        assert a.gossip.steps == b.gossip.steps and a.hops == b.hops
        if schedule == "partial":
            assert np.array_equal(a.gossip.fired, b.gossip.fired)
        else:
            assert np.array_equal(a.gossip.first, b.gossip.first)
            assert np.array_equal(a.gossip.second, b.gossip.second)


def sync_log(tmp_path):
    log = tmp_path / "sync.csv"
    netdp.simulate({"task": "sum", "protocol": "gossip", "topology": "hypercube", "nodes": 16,
                    "sigma": 1.0, "steps": 2, "seed": 1}, trace_out=log)
    return log, log.read_text().splitlines()


def test_a_missing_message_is_partial_gossip_when_the_header_says_so(tmp_path, capsys):
    log, lines = sync_log(tmp_path)
    body = [i for i, line in enumerate(lines) if line[:1].isdigit()]
    dropped = lines[body[70]]  # a message of round 1 (64 a round)
    t, s, d = (int(x) for x in dropped.split(","))
    kept = [line for i, line in enumerate(lines) if i != body[70]]
    missing = tmp_path / "missing.csv"
    missing.write_text("\n".join(kept) + "\n")
    assert main(["account", str(missing)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the round of this line (its run and t fields) carries 63 of its " \
        "64 message(s)" in err[0] and "partial" in err[0]
    columns = kept.index("t,sender,receiver")
    partial = tmp_path / "partial.csv"
    partial.write_text("\n".join(kept[:columns] + ['# gossip_schedule = "partial"',
                                                   "# edge_probability = 0.9"]
                                 + kept[columns:]) + "\n")
    report = netdp.account(partial, keep_pairs=True)
    # the same losses from the rounds built here: every message but the dropped one
    config = with_seed(make_config(task="sum", protocol="gossip", topology="hypercube",
                                   nodes=16, sigma=1.0, steps=2))
    setup = task_of(config).prepare(config)
    src, dst = edges(setup.topology)
    fired = np.ones((3, src.size), dtype=bool)
    fired[t, np.flatnonzero((src == s) & (dst == d))] = False
    want = async_gossip.joint(setup.plan.W, GossipRounds(src, dst, 2, fired=fired),
                              np.arange(16))
    full = async_gossip.joint(setup.plan.W, GossipRounds(src, dst, 2,
                                                         fired=np.ones_like(fired)),
                              np.arange(16))
    assert not np.allclose(want.values, full.values)  # the missing message matters
    got = report.to_json()["privacy"]["empirical"][0]
    eps = want.epsilon(1.0, setup.config.report_delta)[want.pair_mask()]
    assert got["mean"] == pytest.approx(float(eps.mean()), rel=1e-12)
    assert got["max"] == pytest.approx(float(eps.max()), rel=1e-12)


def pairwise_log(tmp_path, body: list[str]) -> str:
    path = tmp_path / "pw.csv"
    path.write_text("# netdp trace log 1\n# protocol = \"gossip\"\n# task = \"sum\"\n"
                    "# topology = \"cycle\"\n# nodes = 6\n# sigma = 1.0\n"
                    "# gossip_schedule = \"pairwise\"\nt,sender,receiver\n"
                    + "\n".join(body) + "\n")
    return str(path)


def test_a_hand_written_pairwise_log(tmp_path):
    body = ["0,0,1", "0,1,0", "1,2,3", "1,3,2", "4,1,2", "4,2,1", "7,5,0", "7,0,5"]
    report = netdp.account(pairwise_log(tmp_path, body), observer=2).to_json()
    assert report["privacy"]["schedule"] == "pairwise"
    config = with_seed(make_config(task="sum", protocol="gossip", topology="cycle", nodes=6,
                                   sigma=1.0, gossip_schedule="pairwise"))
    setup = task_of(config).prepare(config)
    src, dst = np.array([0]), np.array([1])
    rounds = AG.PairwiseGossip(src, dst, 1, first=np.array([0, 2, 1, 5]),
                               second=np.array([1, 3, 2, 0]), times=np.arange(4.0))
    want = async_gossip.coalition(setup.plan.W, rounds, [2])
    eps = want.epsilon(1.0, setup.config.report_delta)[want.pair_mask()]
    assert report["privacy"]["empirical"][0]["mean"] == pytest.approx(float(eps.mean()),
                                                                      rel=1e-12)


@pytest.mark.parametrize("body,text", [
    (["0,0,1", "0,1,0", "1,2,3"], "line 11: the tick of this line (its run and t fields) "
     "holds 1 message(s)"),
    (["0,0,1", "0,1,0", "0,1,2"], "line 9: the tick of this line (its run and t fields) "
     "holds 3 message(s)"),
    (["0,0,1", "0,2,1"], "line 10: the message (its sender and receiver fields) does not "
     "answer line 9's"),
    (["0,0,3", "0,3,0"], "not on an edge"),
    (["2,0,1", "2,1,0", "1,2,3", "1,3,2"], "line 11: the t field is earlier than line 10's"),
])
def test_bad_exchanges_exit_2_with_one_line(body, text, tmp_path, capsys):
    assert main(["account", pairwise_log(tmp_path, body)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and text in err[0], err
