"""Label-keyed logs (netdp.engine.trace_log.relabel): a log that names nodes by the graph's
labels, written without netdp, is accounted from another folder with the same report as
the run it logs; a name that is no label exits 2 with one line."""

from __future__ import annotations

import os

import networkx as nx
import pytest

import netdp
from netdp.run.cli import main


@pytest.fixture()
def florentine(tmp_path):
    """The Florentine families (15 named nodes) as GraphML, in a folder of its own."""
    graph = nx.florentine_families_graph()
    folder = tmp_path / "graphs"
    folder.mkdir()
    path = folder / "florentine.graphml"
    nx.write_graphml(graph, path)
    return path, list(nx.read_graphml(path).nodes)


def to_labels(text: str, labels: list[str]) -> str:
    """A netdp log rewritten by a plain script: every sender and receiver id replaced by
    its node's name (the graph file's node order), the header naming no file."""
    out = []
    for line in text.splitlines():
        if line.startswith("# topology"):
            continue
        if line[:1].isdigit():
            *head, sender, receiver = line.split(",")
            line = ",".join([*head, labels[int(sender)], labels[int(receiver)]])
        out.append(line)
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("extra", [{"gossip_schedule": "pairwise"},
                                   {"gossip_schedule": "partial", "edge_probability": 0.6},
                                   {}])
def test_a_label_keyed_log_from_another_folder(extra, florentine, tmp_path, monkeypatch):
    graph, labels = florentine
    params = {"task": "sum", "protocol": "gossip", "topology": str(graph), "sigma": 1.0,
              "steps": 3, "seed": 8, "runs": 2, **extra}
    log = tmp_path / "ids.csv"
    simulated = netdp.simulate(params, trace_out=log).to_json()["privacy"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "names.csv").write_text(to_labels(log.read_text(), labels))
    assert "Medici" in (elsewhere / "names.csv").read_text()
    monkeypatch.chdir(elsewhere)
    accounted = netdp.account("names.csv", topology=os.path.relpath(graph, elsewhere))
    assert accounted.to_json()["privacy"]["empirical"] == simulated["empirical"]


def test_a_label_keyed_walk_log(florentine, tmp_path):
    graph, labels = florentine
    params = {"topology": str(graph), "steps": 60, "seed": 3}
    log = tmp_path / "walk.csv"
    simulated = netdp.simulate(params, trace_out=log).to_json()["privacy"]
    names = tmp_path / "walk-names.csv"
    names.write_text(to_labels(log.read_text(), labels))
    accounted = netdp.account(names, topology=str(graph)).to_json()["privacy"]
    assert accounted["empirical"] == simulated["empirical"]


def write(tmp_path, body: list[str], topology: str = "") -> str:
    path = tmp_path / "hand.csv"
    path.write_text("# netdp trace log 1\n# protocol = \"gossip\"\n# task = \"sum\"\n"
                    f"{topology}# nodes = 15\n# sigma = 1.0\n"
                    "# gossip_schedule = \"pairwise\"\nt,sender,receiver\n"
                    + "\n".join(body) + "\n")
    return str(path)


@pytest.mark.parametrize("body,flags,text", [
    (["0,Medici,Tornabuoni", "0,Tornabuoni,Medici", "1,Medici,Nobody", "1,Nobody,Medici"],
     "graph", "line 10: the receiver is not a node of"),
    (["0,Medici,Albizzi", "0,Albizzi,Medici", "1,Medici,Lamberteschi",
      "1,Lamberteschi,Medici"], "graph",
     "line 10: the message (its sender and receiver fields) is not on an edge"),
    (["0,Medici,Tornabuoni", "0,Tornabuoni,Medici"], "complete",
     "line 8: the sender field is not a whole number"),  # a graph without labels
    (["0,Medici,Tornabuoni", "0,Tornabuoni,Medici"], "hypercube",
     "line 8: the sender is not a node of hypercube"),
])
def test_bad_label_logs_exit_2_with_one_line(body, flags, text, florentine, tmp_path, capsys):
    graph, _ = florentine
    topology = ["--topology", str(graph)] if flags == "graph" else \
        ["--topology", flags, "--nodes", "15" if flags == "complete" else "16"]
    assert main(["account", write(tmp_path, body), *topology]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and text in err[0], err


def test_repair_drops_a_duplicate_of_a_named_line(florentine, tmp_path, capsys):
    graph, _ = florentine
    body = ["0,Medici,Tornabuoni", "0,Tornabuoni,Medici", "0,Tornabuoni,Medici"]
    path = write(tmp_path, body)
    assert main(["account", path, "--topology", str(graph)]) == 2
    assert "repeats line 9 exactly" in capsys.readouterr().err
    assert main(["account", path, "--topology", str(graph), "--repair"]) == 0
    assert "dropped 1 exact duplicate line(s)" in capsys.readouterr().out
