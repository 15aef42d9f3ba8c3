"""A log's graph file (netdp.run.log_graph): ``--trace-out`` records it relative to the
log's folder with its sha256; ``account LOG --topology FILE`` reads a relative FILE from
the current folder, else from the log's, and refuses a file whose hash is not the
header's; a header naming a file still opens nothing (docs/security.md, P5)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import networkx as nx
import pytest

import netdp
from netdp.core.errors import InputError
from netdp.run import log_graph
from netdp.run.cli import main

NAMES = ["alice", "bob", "carol", "dave", "erin", "frank"]


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def run_folder(tmp_path, monkeypatch, capsys) -> Path:
    """A labelled GraphML graph and the log of a walk on it, written in one folder by
    ``simulate --topology g.graphml --trace-out hops.csv`` run there."""
    folder = tmp_path / "run"
    folder.mkdir()
    graph = nx.cycle_graph(NAMES)
    graph.add_edge("alice", "dave")
    nx.write_graphml(graph, folder / "g.graphml")
    monkeypatch.chdir(folder)
    assert main(["simulate", "--topology", "g.graphml", "--steps", "40", "--seed", "1",
                 "--accountant", "rdp", "--trace-out", "hops.csv",
                 "--out", "simulated.json"]) == 0
    capsys.readouterr()
    return folder


def header(log: Path) -> dict[str, str]:
    return {line[2:].split(" = ")[0]: json.loads(line.split(" = ", 1)[1])
            for line in log.read_text().splitlines() if " = " in line}


def test_the_header_records_the_graph_beside_the_log_and_its_hash(run_folder):
    head = header(run_folder / "hops.csv")
    assert head["topology"] == "g.graphml"
    assert head["topology_sha256"] == hashlib.sha256(
        (run_folder / "g.graphml").read_bytes()).hexdigest()
    lines = (run_folder / "hops.csv").read_text().splitlines()
    assert lines[3:5] == ['# topology = "g.graphml"', f'# topology_sha256 = '
                          f'"{head["topology_sha256"]}"']  # after task and protocol


def test_a_log_elsewhere_records_the_path_from_its_folder(tmp_path, monkeypatch):
    (tmp_path / "graphs").mkdir()
    (tmp_path / "logs").mkdir()
    (tmp_path / "graphs" / "e.txt").write_text("0 1\n1 2\n2 3\n3 0\n")
    monkeypatch.chdir(tmp_path)
    netdp.simulate({"topology": "graphs/e.txt", "steps": 20, "seed": 1},
                   trace_out="logs/hops.csv")
    assert header(tmp_path / "logs" / "hops.csv")["topology"] == "../graphs/e.txt"
    monkeypatch.chdir(tmp_path / "graphs")  # the header's path, from a third folder
    assert netdp.account("../logs/hops.csv", topology="../graphs/e.txt").topology.n == 4


def test_a_file_named_like_a_graph_netdp_makes_is_recorded_as_a_path(tmp_path,
                                                                    monkeypatch):
    (tmp_path / "hypercube").write_text("0 1\n1 2\n2 0\n")
    monkeypatch.chdir(tmp_path)
    netdp.simulate({"topology": "./hypercube", "steps": 20, "seed": 1}, trace_out="h.csv")
    assert header(tmp_path / "h.csv")["topology"] == "./hypercube"


@pytest.mark.parametrize("where", ["other", "run"])
def test_account_from_another_folder_or_the_original(capsys, run_folder, monkeypatch,
                                                     where):
    """``--topology g.graphml`` (the header's path) works from another folder, where
    it is found beside the log, and from the folder where simulate ran: the report of
    the run, figure for figure."""
    folder = run_folder.parent / where
    folder.mkdir(exist_ok=True)
    monkeypatch.chdir(folder)
    log = "../run/hops.csv" if where == "other" else "hops.csv"
    code, out, err = cli(capsys, "account", log, "--topology", "g.graphml",
                         "--accountant", "rdp", "--json")
    assert code == 0, err
    simulated = json.loads((run_folder / "simulated.json").read_text())
    assert json.loads(out)["privacy"] == simulated["privacy"]
    code, out, err = cli(capsys, "account", log)  # the header's file: never opened
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "give --topology FILE" in err and "read from the log's" in err


def test_a_file_in_the_current_folder_comes_first(capsys, run_folder, monkeypatch):
    """Where both folders hold the name, the current folder's file is read: here another
    graph, refused by its hash."""
    other = run_folder.parent / "other"
    other.mkdir()
    nx.write_graphml(nx.path_graph(NAMES), other / "g.graphml")
    monkeypatch.chdir(other)
    code, out, err = cli(capsys, "account", "../run/hops.csv", "--topology", "g.graphml")
    assert code == 2 and "sha256" in err and "'g.graphml'" in err, err


def test_a_changed_graph_is_refused_in_one_line(capsys, run_folder):
    graph = run_folder / "g.graphml"
    graph.write_text(graph.read_text().replace("alice", "alicia"))
    out_json = run_folder / "accounted.json"
    code, out, err = cli(capsys, "account", "hops.csv", "--topology", "g.graphml",
                         "--out", out_json)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith("netdp account: error: --topology: 'g.graphml' is not the graph "
                          "file hops.csv was written on: its sha256 differs from the "
                          "header's (line 5)"), err
    assert not out_json.exists()
    with pytest.raises(InputError, match="the graph changed since") as caught:
        netdp.account(run_folder / "hops.csv", topology=str(graph))
    assert caught.value.param == "topology"


@pytest.mark.parametrize("value", ['"xyz"', "12", '"' + "A" * 64 + '"'])
def test_a_header_hash_that_is_no_sha256_names_its_line(capsys, run_folder, value):
    log = run_folder / "hops.csv"
    log.write_text(log.read_text().replace(
        f'# topology_sha256 = "{header(log)["topology_sha256"]}"',
        f"# topology_sha256 = {value}"))
    code, out, err = cli(capsys, "account", log, "--topology", "g.graphml")
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "line 5: topology_sha256: expected the sha256 of the graph file" in err
    assert value.strip('"') not in err.replace(str(log), "LOG")  # the log's own path aside


def test_a_log_without_a_hash_is_accounted_as_before(run_folder):
    log = run_folder / "hops.csv"
    log.write_text("".join(line for line in log.read_text().splitlines(keepends=True)
                           if "topology_sha256" not in line))
    assert netdp.account(log, topology="g.graphml").topology.n == 6


def test_the_hash_opens_no_special_file(capsys, run_folder):
    code, out, err = cli(capsys, "account", "hops.csv", "--topology", "/dev/zero")
    assert code == 2 and "a device, not a regular file" in err and err.count("\n") == 1


def test_located_leaves_names_and_absolute_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    log = str(tmp_path / "logs" / "hops.csv")
    assert log_graph.located("hypercube", log) == "hypercube"
    assert log_graph.located("/abs/g.txt", log) == "/abs/g.txt"
    assert log_graph.located("missing.txt", log) == "missing.txt"
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "g.txt").write_text("0 1\n")
    assert log_graph.located("g.txt", log) == str(tmp_path / "logs" / "g.txt")
    (tmp_path / "g.txt").write_text("0 1\n")
    assert log_graph.located("g.txt", log) == "g.txt"


def test_a_label_keyed_log_with_label_flags_from_another_folder(capsys, run_folder,
                                                                monkeypatch):
    """The user's case: the log rewritten with the nodes' names, accounted from another
    folder with --observer by label: the report of --observer by id."""
    lines = []
    for line in (run_folder / "hops.csv").read_text().splitlines():
        if line[:1].isdigit():
            t, token, sender, receiver = line.split(",")
            line = ",".join([t, token, NAMES[int(sender)], NAMES[int(receiver)]])
        lines.append(line)
    (run_folder / "named.csv").write_text("\n".join(lines) + "\n")
    other = run_folder.parent / "other"
    other.mkdir()
    monkeypatch.chdir(other)
    outs = []
    for log, observer in (("named.csv", "dave"), ("hops.csv", "3")):
        code, out, err = cli(capsys, "account", f"../run/{log}", "--topology", "g.graphml",
                             "--observer", observer, "--accountant", "rdp", "--json")
        assert code == 0, err
        outs.append(json.loads(out)["privacy"])
    assert outs[0] == outs[1] and outs[0]["coalitions"] == [[3]]


def test_the_file_beside_the_log_is_not_opened_unless_named(capsys, run_folder,
                                                            monkeypatch):
    """P5 kept: the header's relative path names a file beside the log, and the hash of
    it; without --topology nothing but the log is opened."""
    opened: list[str] = []
    real_open = open

    def spy(file, *args, **kwargs):
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    other = run_folder.parent / "other"
    other.mkdir()
    monkeypatch.chdir(other)
    monkeypatch.setattr("builtins.open", spy)
    code, out, err = cli(capsys, "account", "../run/hops.csv")
    assert code == 2 and "give --topology FILE" in err
    assert not any("graphml" in p for p in opened), opened


def test_a_folder_of_snapshots_is_recorded_from_the_log_without_a_hash(tmp_path,
                                                                       monkeypatch):
    folder = tmp_path / "snaps"
    folder.mkdir()
    for k, graph in enumerate([nx.cycle_graph(5), nx.complete_graph(5)]):
        nx.write_edgelist(graph, folder / f"s{k}.edgelist", data=False)
    (tmp_path / "logs").mkdir()
    monkeypatch.chdir(tmp_path)
    params = {"topology": "snaps", "steps": 20, "seed": 1, "snapshot_period": 2,
              "accountants": ("rdp",)}
    simulated = netdp.simulate(params, trace_out="logs/t.csv").to_json()["privacy"]
    head = header(tmp_path / "logs" / "t.csv")
    assert head["topology"] == "../snaps" and "topology_sha256" not in head
    monkeypatch.chdir(tmp_path / "logs")  # the header's path, from the log's folder
    accounted = netdp.account("t.csv", topology="../snaps", snapshot_period=2,
                              accountants=("rdp",))
    assert accounted.to_json()["privacy"]["empirical"] == simulated["empirical"]


def test_pairs_out_of_a_labelled_graph_names_its_rows(capsys, run_folder):
    """As simulate's, account's --pairs-out on a labelled graph writes the labels of its
    rows beside the matrix."""
    code, _, err = cli(capsys, "account", "hops.csv", "--topology", "g.graphml",
                       "--accountant", "rdp", "--pairs-out", "p.npy")
    assert code == 0, err
    labels = json.loads((run_folder / "p.labels.json").read_text())
    assert labels == list(nx.read_graphml(run_folder / "g.graphml").nodes)
