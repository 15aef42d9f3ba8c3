"""Time-varying topologies: snapshots, schedule, contact traces and their one-line errors."""

from __future__ import annotations

import re

import networkx as nx
import numpy as np
import pytest

from netdp.core.errors import InputError
from netdp.graphs.time_varying import (
    dense_transitions,
    from_networkx_sequence,
    read_contact_trace,
)


def test_schedule_cycles_or_keeps_the_last():
    gs = [nx.path_graph(4), nx.cycle_graph(4), nx.star_graph(3)]
    tv = from_networkx_sequence(gs, period=2)
    assert [tv.snapshot_at(t) for t in range(8)] == [0, 0, 1, 1, 2, 2, 0, 0]
    last = from_networkx_sequence(gs, period=1, after="last")
    assert [last.snapshot_at(t) for t in range(5)] == [0, 1, 2, 2, 2]
    P = dense_transitions(tv, "simple", 6)
    assert P.shape == (6, 4, 4)
    assert np.allclose(P.sum(axis=2), 1.0)
    assert np.allclose(P[2], P[3]) and not np.allclose(P[0], P[2])


def test_isolated_nodes_keep_the_token():
    g1 = nx.Graph([(0, 1)])
    g1.add_nodes_from([2])
    g2 = nx.Graph([(1, 2)])
    g2.add_nodes_from([0])
    tv = from_networkx_sequence([g1, g2])
    P = dense_transitions(tv, "simple", 2)
    assert P[0][2, 2] == 1.0 and P[1][0, 0] == 1.0
    with pytest.raises(InputError, match="no out-neighbour"):
        from_networkx_sequence([g1, g2], isolated="error")


def test_node_order_follows_the_first_snapshot():
    g1 = nx.Graph([("b", "a"), ("a", "c")])
    g2 = nx.Graph([("c", "b"), ("a", "b")])
    tv = from_networkx_sequence([g1, g2])
    assert tv.labels == ("b", "a", "c")
    assert tv.snapshots[1].labels == tv.labels


@pytest.mark.parametrize("graphs, message", [
    ([], "non-empty"),
    ([nx.path_graph(3), nx.path_graph(4)], "node set"),
    ([nx.path_graph(3), nx.DiGraph(nx.path_graph(3))], "directed"),
    ([nx.Graph([(0, 1)]), nx.Graph([(1, 0)])], None),  # two nodes: fine
    ([nx.empty_graph(3), nx.Graph([(0, 1), (1, 0), (2, 2)])], "connected"),
])
def test_bad_sequences_are_one_line_errors(graphs, message):
    if message is None:
        assert from_networkx_sequence(graphs).n == 2
        return
    with pytest.raises(InputError, match=message) as err:
        from_networkx_sequence(graphs)
    assert err.value.args and "\n" not in str(err.value)


def test_bad_schedule_parameters():
    gs = [nx.path_graph(3)]
    for kw, param in (({"period": 0}, "period"), ({"after": "loop"}, "after"),
                      ({"isolated": "drop"}, "isolated")):
        with pytest.raises(InputError, match=param):
            from_networkx_sequence(gs, **kw)


def test_contact_trace(tmp_path):
    f = tmp_path / "trace.csv"
    f.write_text("t,u,v,w\n0,1,2,1\n0,2,3,2\n2,3,1,1\n2,3,1,1\n")
    tv = read_contact_trace(f)
    assert tv.n == 3 and tv.labels == (1, 2, 3) and len(tv.snapshots) == 3
    P = dense_transitions(tv, "simple", 3)
    assert np.allclose(P[0][1], [1 / 3, 0, 2 / 3])  # node 2: weights 1 and 2
    assert np.allclose(P[1], np.eye(3))  # no contact at time 1: everyone stays
    assert P[2][1, 1] == 1.0 and P[2][0, 2] == 1.0


def test_a_contact_traces_gap_costs_a_slot_not_a_graph(tmp_path):
    """A trace whose times jump (0 and 99,999 on a 2,000-node chain) builds three graphs:
    its two times and one empty snapshot in force in every other slot."""
    f = tmp_path / "jump.csv"
    f.write_text("".join(f"0,{i},{i + 1}\n" for i in range(1999)) + "99999,0,5\n")
    tv = read_contact_trace(f)
    assert len(tv.snapshots) == 3 and tv.slots.size == 100_000
    assert tv.snapshots[2].indices.tolist() == list(range(tv.n))  # everyone stays
    assert list(tv.snapshot_at(np.array([0, 1, 99_998, 99_999, 100_000]))) == [0, 2, 2, 1, 0]
    assert "100000 snapshots (3 distinct)" in tv.describe()


def test_a_contact_trace_too_large_to_build_is_refused_first(tmp_path, monkeypatch):
    """Distinct times x nodes are bounded, and their build time is estimated against the
    time limit, before any snapshot is built."""
    from netdp.graphs import time_varying as TV

    f = tmp_path / "dense.csv"
    f.write_text("".join(f"0,{i},{i + 1}\n" for i in range(99))
                 + "".join(f"{t},{t % 99},{t % 99 + 1}\n" for t in range(1, 400)))
    monkeypatch.setattr(TV, "MAX_SNAPSHOT_NODES", 100 * 399)
    with pytest.raises(InputError, match=r"topology: dense.csv: 400 times with contacts "
                       r"on 100 nodes make 40000 node-snapshots; at most 39900"):
        read_contact_trace(f)
    monkeypatch.setattr(TV, "MAX_SNAPSHOT_NODES", 100 * 400)
    monkeypatch.setenv("NETDP_TIME_LIMIT", "0.03")  # reading: 0.012 s; building: 0.06 s
    with pytest.raises(InputError, match=r"building 400 snapshots of dense.csv"):
        read_contact_trace(f)
    monkeypatch.setenv("NETDP_TIME_LIMIT", "60")
    assert len(read_contact_trace(f).snapshots) == 400


@pytest.mark.parametrize("text, message", [
    ("0,1\n", "expected t,u,v"),
    ("-1,1,2\n", "line 1: time (the first field) must be an integer >= 0"),
    ("0,1,2,0\n", "line 1: weight (the fourth field) must be a finite number in [1e-300, 1e+300]"),
    ("t,u,v\n", "no contacts"),
])
def test_bad_contact_traces(tmp_path, text, message):
    f = tmp_path / "bad.csv"
    f.write_text(text)
    with pytest.raises(InputError, match=re.escape(message)):
        read_contact_trace(f)


@pytest.mark.parametrize("odd", ["fifo", "device-link"])
def test_a_snapshot_folder_refuses_what_is_not_a_graph_file(tmp_path, odd):
    """A FIFO (a read would block) or a link to a device (read until memory runs out)
    among the snapshots is refused before any file is read, naming --topology (session
    18's check of issue 39: they were skipped silently); a subfolder is skipped."""
    import os

    from netdp.core.errors import InputError
    from netdp.graphs.time_varying import build_time_varying

    (tmp_path / "a.txt").write_text("0 1\n1 2\n")
    (tmp_path / "b.txt").write_text("0 1\n2 0\n")
    odd_path = tmp_path / "c.txt"
    (tmp_path / "archive").mkdir()  # skipped, as before
    if odd == "fifo":
        os.mkfifo(odd_path)
    else:
        odd_path.symlink_to("/dev/zero")
    with pytest.raises(InputError, match="c.txt'.*not a regular file") as err:
        build_time_varying(str(tmp_path))
    assert err.value.param == "topology"
    odd_path.unlink()
    assert build_time_varying(str(tmp_path)).n == 3
