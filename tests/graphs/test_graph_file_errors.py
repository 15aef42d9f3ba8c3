"""Malformed graph files: every one is refused through the CLI with exit status 2 and one
line naming the file (and its line or element, where there is one) and what was expected;
no traceback, nothing written."""

from __future__ import annotations

import pytest

from netdp.graphs import generators, graph_files
from netdp.run.cli import main

JUNK = bytes(range(256)) * 16

GRAPHML = ('<?xml version="1.0" encoding="utf-8"?>\n'
           '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n{keys}'
           '<graph edgedefault="{direction}"{attrs}>\n{body}</graph>\n</graphml>\n')


def graphml(body: str, keys: str = "", direction: str = "undirected", attrs: str = "") -> str:
    return GRAPHML.format(keys=keys, direction=direction, attrs=attrs, body=body)


TRIANGLE = ('<node id="a"/>\n<node id="b"/>\n<node id="c"/>\n'
            '<edge source="a" target="b"/>\n<edge source="b" target="c"/>\n'
            '<edge source="c" target="a"/>\n')
WEIGHT_KEY = '<key id="d0" for="edge" attr.name="w" attr.type="double"/>\n'
TEXT_KEY = '<key id="d0" for="edge" attr.name="w" attr.type="string"/>\n'


def weighted_triangle(weights: tuple[str, str, str]) -> str:
    edges = "".join(f'<edge source="{u}" target="{v}"><data key="d0">{w}</data></edge>\n'
                    for (u, v), w in zip((("a", "b"), ("b", "c"), ("c", "a")), weights,
                                         strict=True))
    return '<node id="a"/>\n<node id="b"/>\n<node id="c"/>\n' + edges


# (case, file name, content, extra flags, what the line says)
CASES = [
    ("binary-junk-edgelist", "g.txt", JUNK, [], "not a UTF-8 text file"),
    ("binary-junk-graphml", "g.graphml", JUNK, [], "not well-formed XML"),
    ("binary-junk-gml", "g.gml", b"\x89PNG" + JUNK, [], "not a UTF-8 text file"),
    ("empty-edgelist", "g.txt", "", [], "has 0 node(s); a walk needs at least 2 nodes"),
    ("only-comments", "g.csv", "# nothing\n\n", [], "has 0 node(s)"),
    ("empty-graphml", "g.graphml", "", [], "g.graphml is empty; expected a graphml graph"),
    ("empty-gml", "g.gml", "", [], "g.gml is empty; expected a gml graph"),
    ("one-column", "g.txt", "0 1\n2\n", [],
     "g.txt line 2: expected 'u v' (two columns), got 1 (as line 1)"),
    ("four-columns", "g.txt", "0,1,2,3\n", [],
     "g.txt line 1: expected 'u v' or 'u v w' (two or three columns), got 4"),
    ("weight-column-dropped", "g.txt", "0 1 2.5\n1 2\n", [],
     "g.txt line 2: expected 'u v w' (three columns), got 2 (as line 1)"),
    ("negative-weight", "g.txt", "0 1 1\n1 2 -3\n2 0 1\n", [],
     "g.txt line 2: the weight (third column) must be a finite number in [1e-300, 1e+300]"),
    ("zero-weight", "g.edgelist", "0 1 0\n1 2 1\n", [],
     "line 1: the weight (third column) must be a finite number in [1e-300, 1e+300]"),
    ("nan-weight", "g.txt", "0 1 nan\n", [],
     "line 1: the weight (third column) must be a finite number in [1e-300, 1e+300]"),
    ("infinite-weight", "g.txt", "0 1 1\n1 2 inf\n", [],
     "line 2: the weight (third column) must be a finite number in [1e-300, 1e+300]"),
    ("text-weight", "g.txt", "0 1 heavy\n", [],
     "line 1: the weight (third column) is not a number"),
    ("conflicting-weights", "g.txt", "0 1 1\n1 2 1\n1 0 2\n", [],
     "g.txt line 3: the edge of this line has another weight on an earlier line"),
    ("weighted-format-two-columns", "g.txt", "0 1\n", ["--format", "weighted-edgelist"],
     "g.txt line 1: expected 'u v w' (three columns), got 2 (a weighted edge list)"),
    ("unknown-extension", "g.bin", "0 1\n1 2\n", [],
     "--topology: cannot tell the format of g.bin from its extension '.bin'"),
    ("unknown-format", "g.txt", "0 1\n", ["--format", "pajek"], "--format: must be one of"),
    ("graphml-as-text", "g.txt", graphml(TRIANGLE), [],
     "g.txt line 1: looks like XML (GraphML), not a list of edges"),
    ("gml-as-text", "g.txt", 'graph [\n node [ id 0 ]\n]\n', [],
     "g.txt line 1: looks like GML, not a list of edges"),
    ("line-too-long", "g.txt", "0 1\n" + "7" * 70_000 + " 1\n", [],
     "g.txt line 2: longer than 65536 characters"),
    ("disconnected", "g.txt", "0 1\n2 3\n", [],
     "g.txt is not connected: node(s) #2, #3 cannot be reached from node #0"),
    ("not-strongly-connected", "g.txt", "0 1\n1 2\n2 0\n2 3\n", ["--directed"],
     "g.txt is not strongly connected: node(s) #3 cannot reach node #0 again"),
    ("a-single-node", "g.adjlist", "0 0\n", [], "has 1 node(s); a walk needs at least 2"),
    ("adjlist-with-weight", "g.adjlist", "0 1\n1 0\n", ["--weight", "w"],
     "--weight: g.adjlist is an adjacency list: it has no weights"),
    ("graphml-mismatched-tag", "g.graphml", graphml("<node id='a'>\n</edge>\n"), [],
     "g.graphml line 5, column 3: not well-formed XML (mismatched tag); expected GraphML"),
    ("graphml-no-graph", "g.graphml",
     '<graphml xmlns="http://graphml.graphdrawing.org/xmlns"></graphml>', [],
     "g.graphml: no <graph> element; expected GraphML"),
    ("graphml-no-nodes", "g.graphml", graphml(""), [], "has 0 node(s)"),
    ("graphml-missing-node", "g.graphml",
     graphml('<node id="a"/>\n<node id="b"/>\n<edge source="a" target="b"/>\n'
             '<edge source="b" target="ghost"/>\n'), [],
     "g.graphml line 7: an <edge> names a node that no <node> element declares"),
    ("graphml-edge-without-target", "g.graphml",
     graphml('<node id="a"/>\n<edge source="a"/>\n'), [],
     "g.graphml line 5: an <edge> without a target"),
    ("graphml-node-without-id", "g.graphml", graphml('<node/>\n'), [],
     "g.graphml line 4: a <node> without an id"),
    ("graphml-no-edges", "g.graphml", graphml('<node id="a"/>\n<node id="b"/>\n'), [],
     "is not connected: node(s) #1 cannot be reached from node #0 (nodes numbered from 0 in "
     "the file's order)"),
    ("graphml-huge-declared-size", "g.graphml",
     graphml(TRIANGLE, attrs=' parse.nodes="9000000000" parse.edges="3"'), [],
     'g.graphml line 3: <graph parse.nodes=...> declares more than 5000000'),
    ("graphml-hyperedge", "g.graphml",
     graphml(TRIANGLE + '<hyperedge><endpoint node="a"/></hyperedge>\n'), [],
     "g.graphml line 10: a <hyperedge>; netdp reads graphs"),
    ("graphml-undeclared-key", "g.graphml",
     graphml('<node id="a"><data key="nope">1</data></node>\n<node id="b"/>\n'
             '<edge source="a" target="b"/>\n'), [],
     "g.graphml: not a GraphML graph networkx can read"),
    ("graphml-directed-flag", "g.graphml", graphml(TRIANGLE), ["--directed"],
     "--directed: applies to edge and adjacency lists; g.graphml (graphml) declares"),
    ("graphml-negative-weight", "g.graphml",
     graphml(weighted_triangle(("1", "-2", "1")), keys=WEIGHT_KEY), ["--weight", "w"],
     "--weight: g.graphml: an edge's w is not a finite number in [1e-300, 1e+300]; weights"),
    ("graphml-text-weight", "g.graphml",
     graphml(weighted_triangle(("1", "2", "x")), keys=TEXT_KEY), ["--weight", "w"],
     "--weight: g.graphml: an edge's w is not a finite number in [1e-300, 1e+300] (text: "
     'declare the attribute a number, attr.type="double" in GraphML); weights must be such'),
    ("graphml-missing-weight", "g.graphml",
     graphml(weighted_triangle(("1", "2", "3")), keys=WEIGHT_KEY), ["--weight", "cost"],
     "--weight: g.graphml: an edge has no 'cost' attribute"),
    ("gml-syntax", "g.gml", "graph [\n node [ id 0 label \"a\" \n]\n", [],
     "g.gml: not a GML graph networkx can read"),
    ("gml-unknown-node", "g.gml",
     'graph [\n node [ id 0 label "a" ]\n node [ id 1 label "b" ]\n'
     ' edge [ source 0 target 7 ]\n]\n', [], "g.gml: not a GML graph networkx can read"),
    ("gml-zero-weight", "g.gml",
     'graph [\n node [ id 0 label "a" ]\n node [ id 1 label "b" ]\n'
     ' edge [ source 0 target 1 w 0 ]\n]\n', ["--weight", "w"],
     "--weight: g.gml: an edge's w is not a finite number in [1e-300, 1e+300]; weights"),
]


@pytest.mark.parametrize(("name", "content", "flags", "line"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_malformed_graph_file_is_one_line_and_exit_2(capsys, tmp_path, name, content,
                                                       flags, line):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    out = tmp_path / "result.json"
    code = main(["simulate", "--topology", str(path), "--steps", "50", "--out", str(out),
                 *flags])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("netdp simulate: error: --"), err
    assert line in err, err
    assert not out.exists()


def test_at_least_25_malformed_files():
    assert len(CASES) >= 25 and len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize(("name", "content"), [
    ("big.txt", "".join(f"{u} {u + 1}\n" for u in range(20))),
    ("big.adjlist", "".join(f"{u} {u + 1}\n" for u in range(20))),
    ("big.graphml", graphml("".join(f'<node id="{u}"/>' for u in range(8))
                            + "".join(f'<edge source="{u}" target="{(u + 1) % 8}"/>\n'
                                      for u in range(8)))),
    ("big.gml", "graph [\n" + "".join(f" node [ id {u} ]\n" for u in range(8))
     + "".join(f" edge [ source {u} target {(u + 1) % 8} ]\n" for u in range(8)) + "]\n"),
])
def test_files_beyond_the_limits_are_refused_before_a_graph_is_built(
        capsys, monkeypatch, tmp_path, name, content):
    monkeypatch.setattr(generators, "MAX_GRAPH_EDGES", 5)
    monkeypatch.setattr(generators, "MAX_GRAPH_NODES", 1000)
    path = tmp_path / name
    path.write_text(content)
    built = []
    monkeypatch.setattr(graph_files, "_read_parsed", lambda *a: built.append(a))
    assert main(["simulate", "--topology", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "more than 5 edges" in err, err
    assert "limited to 1000 nodes and 5 edges" in err and not built, err


def test_graphml_and_gml_files_beyond_the_parsed_size_are_refused(capsys, monkeypatch,
                                                                   tmp_path):
    monkeypatch.setattr(graph_files, "MAX_PARSED_BYTES", 200)
    for name, text in (("g.graphml", graphml(TRIANGLE)),
                       ("g.gml", "graph [\n" + " node [ id 0 ]\n" * 30 + "]\n")):
        path = tmp_path / name
        path.write_text(text)
        assert main(["simulate", "--topology", str(path)]) == 2
        err = capsys.readouterr().err
        assert f"{name} is {path.stat().st_size} bytes; " in err and "limited to 200 bytes" \
            in err and err.count("\n") == 1, err


def test_a_refused_file_is_not_echoed(tmp_path, capsys):
    """A file that is not a graph (say /etc/shadow given as --topology) is refused without
    printing its content."""
    from netdp.run.cli import main

    path = tmp_path / "shadowlike"
    path.write_text("root:s3cr3t-hash:19000:0:99999:7:::\nuser secret words here\n")
    assert main(["simulate", "--topology", str(path)]) == 2
    err = capsys.readouterr().err
    assert "s3cr3t" not in err and "secret" not in err and len(err.strip().splitlines()) == 1
