"""Your own network: a graph given as a networkx object or as a file (GraphML, GML,
adjacency list, weighted edge list) runs exactly as the named topology it equals, its
node labels come back in every per-node output, and its config records what it was."""

from __future__ import annotations

import json
import re
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from netdp import make_config, simulate
from netdp.core.errors import InputError
from netdp.graphs import graph_record
from netdp.graphs import topologies as topology
from netdp.run.cli import main
from netdp.run.sweep import parse_spec, read_table, run_sweep

RUN = ["--steps", "400", "--seed", "3", "--accountant", "kov", "--accountant", "rdp"]
PARAMS = {"steps": 400, "seed": 3, "accountants": ["kov", "rdp"]}
KOV = ["--steps", "200", "--seed", "3", "--accountant", "kov"]  # a quick run
KOV_PARAMS = {"steps": 200, "seed": 3, "accountants": ("kov",)}


def write_edgelist(graph: nx.Graph, path, weight: str | None = None) -> None:
    """``u v w`` lines whose first appearances follow the graph's node order (each node
    joined to an earlier neighbour first, then the other edges; every node but the first
    needs one: a breadth-first order has them), so that the file's nodes are numbered as
    the graph's."""
    order = {u: i for i, u in enumerate(graph.nodes)}
    first, rest = [], []
    seen = {next(iter(graph.nodes))}
    for u in list(graph.nodes)[1:]:
        parent = min((v for v in graph[u] if order[v] < order[u]), key=order.get)
        first.append((parent, u))
        seen.add(u)
    tree = {frozenset(e) for e in first}
    rest = [e for e in graph.edges if frozenset(e) not in tree]
    lines = []
    for u, v in first + rest:
        w = 1.0 if weight is None else graph[u][v][weight]
        lines.append(f"{u} {v} {w!r}")
    path.write_text("# u v weight\n" + "\n".join(lines) + "\n")


def numbers(result: dict) -> tuple:
    """What must not move: the utility and privacy figures."""
    return result["utility"], result["privacy"]


def cli_json(capsys, *argv) -> dict:
    assert main(["simulate", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("task", [pytest.param([], marks=pytest.mark.slow),
                                  pytest.param(["--task", "histogram", "--domain", "4"],
                                               marks=pytest.mark.slow)],
                         ids=["sum", "histogram"])
def test_named_object_and_files_give_the_same_numbers(capsys, tmp_path, task):
    run = RUN if not task else RUN[:-2]  # the histogram tracker composes with kov only
    named = cli_json(capsys, "--topology", "hypercube", "--nodes", "16", *run, *task)
    cube = nx.hypercube_graph(4)  # the generator the named spec calls, node order and all
    extra = {"task": "histogram", "domain": 4, "accountants": ["kov"]} if task else {}
    from_object = simulate({"topology": cube, **PARAMS, **extra}).to_json()
    assert numbers(from_object) == numbers(named)
    assert named["graph"]["sha256"] == from_object["graph"]["sha256"]  # the same graph

    as_strings = nx.relabel_nodes(cube, {u: "".join(map(str, u)) for u in cube})  # '0110'
    nx.write_graphml(cube, tmp_path / "cube.graphml")
    nx.write_gml(as_strings, tmp_path / "cube.gml")
    nx.write_adjlist(as_strings, tmp_path / "cube.adjlist")
    write_edgelist(nx.convert_node_labels_to_integers(cube), tmp_path / "cube.txt")
    for name in ("cube.graphml", "cube.gml", "cube.adjlist", "cube.txt"):
        result = cli_json(capsys, "--topology", str(tmp_path / name), *run, *task)
        assert numbers(result) == numbers(named), name
        assert result["config"]["topology"] == str(tmp_path / name)
    gml = cli_json(capsys, "--topology", str(tmp_path / "cube.gml"), *run, *task)
    assert gml["graph"]["labels"] == list(as_strings.nodes)  # string labels, in id order
    assert named["graph"]["labels"][:2] == [[0, 0, 0, 0], [0, 0, 0, 1]]  # tuples as lists
    plain = cli_json(capsys, "--topology", str(tmp_path / "cube.txt"), *run, *task)
    assert "labels" not in plain["graph"]  # 0..n-1: the ids themselves


def bfs_order(graph: nx.Graph) -> nx.Graph:
    """The graph with its nodes in a breadth-first order (edges and data kept)."""
    root = next(iter(graph.nodes))
    out = nx.Graph()
    out.add_nodes_from([root, *(v for _, v in nx.bfs_edges(graph, root))])
    out.add_edges_from(graph.edges(data=True))
    return out


@pytest.mark.slow
def test_weights_travel_through_every_format(capsys, tmp_path):
    g = bfs_order(nx.karate_club_graph())  # its edges carry integer weights 1..7
    assert len({w for *_, w in g.edges(data="weight")}) > 1
    base = simulate({"topology": g, "weight": "weight", **KOV_PARAMS}).to_json()
    assert base["graph"]["weighted"] and "weighted" in base["config"]["topology"]
    nx.write_graphml(g, tmp_path / "k.graphml")
    nx.write_gml(g, tmp_path / "k.gml")
    write_edgelist(g, tmp_path / "k.csv", weight="weight")
    for name, flags in (("k.graphml", ["--weight", "weight"]), ("k.gml", ["--weight",
                                                                          "weight"]),
                        ("k.csv", [])):
        result = cli_json(capsys, "--topology", str(tmp_path / name), *flags, *KOV)
        assert numbers(result) == numbers(base), name
    unweighted = simulate({"topology": g, **KOV_PARAMS}).to_json()
    assert numbers(unweighted) != numbers(base)  # the weights change the walk
    assert numbers(cli_json(capsys, "--topology", str(tmp_path / "k.graphml"), *KOV)) == \
        numbers(unweighted)  # GraphML without --weight: unweighted


def test_labels_come_back_in_every_per_node_output(capsys, tmp_path):
    karate = nx.karate_club_graph()
    names = nx.relabel_nodes(karate, {u: f"member-{u:02d}" for u in karate})
    report = simulate({"topology": names, **KOV_PARAMS}, keep_pairs=True)
    plain = simulate({"topology": karate, **KOV_PARAMS}, keep_pairs=True)
    assert list(report.labels) == list(names.nodes) and list(plain.labels) == list(range(34))
    assert np.array_equal(report.pairs, plain.pairs, equal_nan=True)  # row i: labels[i]
    assert report.to_json()["graph"]["labels"] == list(names.nodes)

    nx.write_graphml(names, tmp_path / "club.graphml")
    pairs = tmp_path / "pairs.npy"
    assert main(["simulate", "--topology", str(tmp_path / "club.graphml"), *KOV,
                 "--pairs-out", str(pairs)]) == 0
    capsys.readouterr()
    labels = json.loads((tmp_path / "pairs.labels.json").read_text())
    assert labels == list(names.nodes)
    matrix = np.load(pairs)
    i, j = labels.index("member-00"), labels.index("member-33")
    assert matrix[i, j] == plain.pairs[0, 33]
    # the ids themselves: no labels file
    assert main(["simulate", "--topology", "karate", *KOV, "--pairs-out",
                 str(tmp_path / "k.npy")]) == 0
    assert not (tmp_path / "k.labels.json").exists()


def test_label_values_as_json():
    g = nx.Graph([((0, "a"), frozenset({1})), (frozenset({1}), 2.5), (2.5, True),
                  (True, (0, "a"))])
    topo = topology.from_networkx(g)
    assert graph_record.plain_labels(topo) == [[0, "a"], [1], 2.5, True]
    assert graph_record.plain_labels(topology.from_networkx(nx.path_graph(3))) is None
    assert graph_record.plain_labels(topology.from_networkx(nx.path_graph([2, 1, 0]))) == \
        [2, 1, 0]


def test_the_config_records_what_the_graph_was(capsys, tmp_path):
    g = nx.karate_club_graph()
    config = make_config({"topology": g, "weight": "weight"})
    ref = config.topology
    assert ref.startswith("networkx:Zachary's Karate Club (34 nodes, 78 edges, weighted, "
                          "sha256 ")
    assert make_config({"topology": nx.karate_club_graph(), "weight": "weight"}).topology \
        == ref  # the same graph, the same record
    h = nx.karate_club_graph()
    h.add_edge(0, 9, weight=1)
    assert make_config({"topology": h, "weight": "weight"}).topology != ref
    assert config.replace(epsilon=2.0).graph is config.graph  # kept by replace
    assert make_config(config, topology="karate").graph is None  # dropped with the topology
    with pytest.raises(InputError, match="^weight: the graph given from Python was weighted"):
        config.replace(weight=None)  # the graph holds its weights: give it again
    assert make_config(config, topology=g, weight=None).graph.weights is None
    report = simulate(config.replace(steps=200, seed=1))
    out = report.to_json()
    assert out["config"]["topology"] == ref and out["config"]["weight"] == "weight"
    assert out["graph"]["sha256"].startswith(ref.rsplit(" ", 1)[1][:-1])
    # the record is text, not the graph: running it again asks for the object
    toml = tmp_path / "run.toml"
    toml.write_text(f'topology = "{ref}"\nsteps = 200\n')
    assert main(["simulate", "--config", str(toml)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pass the networkx graph itself" in err
    with pytest.raises(InputError, match="directed"):
        make_config({"topology": g, "directed": True})
    with pytest.raises(InputError, match=r"^weight: .*an edge has no 'w' attribute"):
        make_config({"topology": g, "weight": "w"})


def test_a_sweep_takes_graphs_from_python(tmp_path):
    cube = nx.hypercube_graph(3)
    ring = nx.cycle_graph(8)
    spec = parse_spec({"seeds": 2, "fixed": {"steps": 100},
                       "grid": {"topology": [cube, ring, cube]}})
    assert len(spec.points) == 2 and spec.grid["topology"][0].startswith("networkx:graph (8")
    run_sweep(spec, tmp_path / "out", backend="serial", progress=False)
    table = read_table(tmp_path / "out")
    assert len(table) == 4 and set(table["status"]) == {"ok"}
    assert set(table["topology"]) == {p.topology for p in spec.points}


def test_file_options(capsys, tmp_path):
    path = tmp_path / "ring.dat"  # no format by its extension: --format says it
    path.write_text("".join(f"{u} {(u + 1) % 6}\n" for u in range(6)))
    assert main(["simulate", "--topology", str(path), "--format", "edgelist", *RUN]) == 0
    capsys.readouterr()
    adj = tmp_path / "order.adjlist"  # nodes numbered in the order of their lines
    adj.write_text("c a b\nb a\na\n")
    assert topology.build(str(adj)).labels == ("c", "b", "a")
    graphml = tmp_path / "cube.graphml"
    nx.write_graphml(nx.hypercube_graph(3), graphml)
    for flags, line in ((["--directed"], "--directed: applies to edge and adjacency lists"),
                        (["--weight", "w", "--topology", "karate"], "--weight: applies to "
                         "graph files"),
                        (["--format", "gml", "--topology", "complete"], "--format: applies "
                         "to topology files")):
        argv = ["simulate", *(["--topology", str(graphml)] if "--topology" not in flags
                              else []), *flags]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert line in err and err.count("\n") == 1, err
    edges = tmp_path / "w.txt"
    edges.write_text("0 1 2\n1 2 3\n2 0 1\n")
    assert main(["simulate", "--topology", str(edges), "--weight", "cost"]) == 2
    assert "its weights are its third column" in capsys.readouterr().err
    directed = topology.build(str(edges), directed=True)
    assert directed.directed and directed.weights is not None


@pytest.mark.slow
def test_the_guide_shows_what_its_notebook_prints(capsys):
    """docs/your-network.md: its first Python block prints its first text block (the
    timing aside)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "your-network.md").read_text()
    blocks = re.findall(r"^```(\w+)\n(.*?)^```$", text, re.M | re.S)
    code = next(body for kind, body in blocks if kind == "python")
    shown = next(body for kind, body in blocks if kind == "text")
    exec(compile(code, "your-network.md", "exec"), {})
    printed = capsys.readouterr().out

    def timeless(s: str) -> str:
        s = re.sub(r"hops in [0-9.]+ s;", "hops in T s;", s)
        return re.sub(r"(?m)^  time: .*$", "  time: T", s).strip()

    assert timeless(printed) == timeless(shown)
