"""--gossip-schedule and --edge-probability of --task sum --protocol gossip: bad values
and combinations exit 2 with one line naming the parameter; --help teaches them."""

from __future__ import annotations

import pytest

from netdp.core.errors import InputError
from netdp.run.cli import main

BASE = ["simulate", "--task", "sum", "--protocol", "gossip", "--topology", "karate",
        "--sigma", "1", "--steps", "3", "--seed", "1"]

BAD = [
    (["--gossip-schedule", "gossipy"], "gossip-schedule", "sync, pairwise, push-pull, partial"),
    (["--gossip-schedule", "partial"], "edge-probability", "(0, 1]"),
    (["--gossip-schedule", "partial", "--edge-probability", "0"], "edge-probability", "1"),
    (["--gossip-schedule", "partial", "--edge-probability", "1.5"], "edge-probability", "1"),
    (["--gossip-schedule", "partial", "--edge-probability", "-0.2"], "edge-probability",
     "1"),
    (["--gossip-schedule", "partial", "--edge-probability", "nan"], "edge-probability", ""),
    (["--edge-probability", "0.5"], "edge-probability", "(0, 1]"),
    (["--gossip-schedule", "pairwise", "--edge-probability", "0.5"], "edge-probability",
     "(0, 1]"),
    (["--gossip-schedule", "pairwise", "--accelerated"], "accelerated", "synchronous"),
    (["--gossip-schedule", "push-pull", "--engine", "event"], "engine", "vector"),
    (["--gossip-schedule", "pairwise", "--loss", "iid:0.1"], "gossip-schedule", "fault"),
]


@pytest.mark.parametrize("extra,param,text", BAD)
def test_bad_values_exit_2_with_one_line(extra, param, text, capsys):
    assert main([*BASE, *extra]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and not out, err
    assert param in lines[0] and text in lines[0]


def test_a_time_varying_graph_keeps_synchronous_rounds():
    with pytest.raises(InputError) as exc:
        import networkx as nx

        from netdp import simulate

        simulate({"task": "sum", "protocol": "gossip", "sigma": 1.0, "steps": 3,
                  "topology": [nx.cycle_graph(6), nx.path_graph(6)],
                  "gossip_schedule": "pairwise"})
    assert exc.value.param == "gossip-schedule"


def test_help_teaches_the_schedules(capsys):
    assert main(["simulate", "--task", "sum", "--protocol", "gossip", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for word in ("--gossip-schedule", "sync|pairwise|push-pull|partial", "Poisson clock",
                 "--edge-probability P", "fires"):
        assert word in text
