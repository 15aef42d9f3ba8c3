"""Bad ``--topology`` / ``--nodes`` inputs: each is refused with one InputError naming the
parameter, the allowed range and what was given, before anything large is built."""

from __future__ import annotations

import json
import re
from pathlib import Path

import networkx as nx
import pytest

from netdp.core.errors import InputError
from netdp.graphs import generators, spec_expressions
from netdp.graphs import topologies as topology
from netdp.run.cli import main

REPO_SPECS = Path(__file__).resolve().parents[1] / "topologies"
WITH_MIN = [p for p in sorted(REPO_SPECS.glob("*.toml")) if "min_nodes" in p.read_text()]
LIMITS = (f"explicit graphs are limited to {generators.MAX_GRAPH_NODES} nodes and "
          f"{generators.MAX_GRAPH_EDGES} edges")


def refused(param: str, match: str, call, *args, **kwargs) -> InputError:
    """``call(*args, **kwargs)`` raises an InputError for ``param`` matching ``match``."""
    with pytest.raises(InputError, match=match) as info:
        call(*args, **kwargs)
    assert info.value.param == param, info.value
    return info.value


def write_spec(folder: Path, body: str, name: str = "mine.toml") -> str:
    path = folder / name
    path.write_text(body)
    return str(path)


def er_spec(folder: Path, p: str) -> str:
    return write_spec(folder, 'description = "x"\ngenerator = "erdos_renyi_graph"\n'
                      f'size = "n"\nrandom = true\n[params]\np = {p}\n')


# --------------------------------------------------------------------------- 1. generators

@pytest.mark.parametrize("name,n,least", [("watts-strogatz", 3, 7), ("watts-strogatz", 6, 7),
                                          ("barabasi-albert", 2, 4),
                                          ("barabasi-albert", 3, 4)])
def test_generators_refuse_too_few_nodes_before_networkx(name, n, least):
    refused("nodes", rf"^nodes: {name} needs --nodes >= {least}\b.*\(got {n}\b",
            topology.build, name, n, seed=0)


@pytest.mark.parametrize("path", WITH_MIN, ids=lambda p: p.stem)
def test_min_nodes_of_a_spec_is_the_smallest_size_it_builds(path, tmp_path):
    text = path.read_text()
    least = int(text.split("min_nodes = ")[1].split()[0])
    assert topology.build(str(path), least, seed=0).n == least
    refused("nodes", rf"{path.name} needs --nodes >= {least} \(got {least - 1}\)",
            topology.build, str(path), least - 1, seed=0)
    # without the key the generator's own rule still refuses the size below it
    bare = write_spec(tmp_path, "\n".join(line for line in text.splitlines()
                                          if not line.startswith("min_nodes")))
    refused("nodes", "needs", topology.build, bare, least - 1, seed=0)


def test_user_spec_generator_parameters_are_checked_against_n(tmp_path):
    spec = write_spec(tmp_path, 'description = "x"\ngenerator = "barabasi_albert_graph"\n'
                      'size = "n"\nrandom = true\n[params]\nm = "n // 2 + 6"\n')
    refused("nodes", r"mine.toml needs --nodes >= 12 for m of \[params\] \(got 10",
            topology.build, spec, 10)
    lattice = write_spec(tmp_path, 'description = "x"\n'
                         'generator = "connected_watts_strogatz_graph"\nsize = "n"\n'
                         'random = true\n[params]\nk = 4.0\np = 0.1\n', "lattice.toml")
    refused("topology", r"k of \[params\] at n = 10: the lattice degree must be an integer >= 2",
            topology.build, lattice, 10)
    refused("topology", r"p of \[params\] at n = 10: a probability must lie in \[0, 1\]",
            topology.build, er_spec(tmp_path, "1.5"), 10)


def test_any_networkx_failure_becomes_an_input_error(tmp_path):
    spec = write_spec(tmp_path, 'description = "x"\ngenerator = "turan_graph"\nsize = "n"\n'
                      '[params]\nr = 5\n')
    refused("topology", r"mine.toml with n = 3: networkx turan_graph\(\) failed: "
            "NetworkXError: Must satisfy 1 <= r <= n", topology.build, spec, 3)
    typo = write_spec(tmp_path, 'description = "x"\ngenerator = "cycle_graph"\nsize = "n"\n'
                      '[params]\nlength = 3\n')
    refused("topology", r"TypeError: .*unexpected keyword argument '\.\.\.'",
            topology.build, typo, 5)


# --------------------------------------------------------------------------- 2. sizes

@pytest.mark.parametrize("name,n,edges", [
    ("hypercube", 2**30, "has 16106127360 edges"),
    ("grid", 10**12, "has 1999998000000 edges"),
    ("watts-strogatz", 10**9, "has about 3000000000 edges"),
    ("barabasi-albert", 4 * 10**6, "has about 11999991 edges"),
    ("erdos-renyi", 10**6, "has about 13815497 edges"),
    ("random-geometric", 4 * 10**6, "has about 9106[0-9]{4} edges"),
    ("erdos-renyi", 10**18, "has about [0-9]+ edges"),
])
def test_huge_graphs_are_refused_before_building(name, n, edges):
    refused("nodes", rf"^nodes: {name} with n = {n} nodes {edges}; {LIMITS}$",
            topology.build, name, n, seed=0)
    refused("nodes", LIMITS, topology.check_size, name, n)


def test_quadratic_gnp_is_limited_in_pairs():
    refused("nodes", rf"n = 100000 nodes: networkx's G\(n, p\) draws a coin for each of its "
            rf"4999950000 node pairs; it is limited to {generators.MAX_GNP_PAIRS} pairs",
            topology.build, "erdos-renyi", 100_000, seed=0)


def test_user_spec_of_unknown_size_is_refused_by_nodes(tmp_path):
    spec = write_spec(tmp_path, 'description = "x"\ngenerator = "mycielski_graph"\n'
                      'size = "n"\n')  # a generator without an edge formula
    assert topology.expected_size(spec, 50) == (50, None)
    n = generators.MAX_GRAPH_NODES + 1
    refused("nodes", rf"^nodes: mine.toml with n = {n} nodes; {LIMITS}$", topology.build, spec,
            n)
    # an expression that fails at that size: the size is what is reported
    refused("nodes", LIMITS, topology.build, er_spec(tmp_path, '"n * n * n / 1e30"'), n)


def test_built_graphs_are_checked_against_the_limits(monkeypatch, tmp_path):
    monkeypatch.setattr(generators, "MAX_GRAPH_EDGES", 10)
    refused("topology", "path has 20 nodes and 19 edges; explicit graphs are limited to "
            r"5000000 nodes and 10 edges", topology.from_networkx, nx.path_graph(20), "path")
    edges = tmp_path / "edges.txt"
    edges.write_text("".join(f"{u} {u + 1}\n" for u in range(12)))
    refused("topology", r"edges.txt holds more than 10 edges \(line 11\)", topology.build,
            str(edges))
    monkeypatch.setattr(generators, "MAX_GRAPH_NODES", 5)
    refused("topology", r"edges.txt holds more than 5 nodes \(line 5\)",
            topology.expected_size, str(edges))


def test_expected_size_builds_nothing_and_is_right(tmp_path):
    assert topology.expected_size("ring", 10) == (10, 10)
    assert topology.expected_size("complete", 2**62) == (2**62, 2**62 * (2**62 - 1) // 2)
    assert topology.expected_size("hypercube", 64) == (64, 192)
    assert topology.expected_size("grid", 49) == (49, 84)
    assert topology.expected_size("watts-strogatz", 1000) == (1000, 3000)
    assert topology.expected_size("karate") == (34, 78)
    for name, n in [("barabasi-albert", 50), ("erdos-renyi", 400), ("random-geometric", 400)]:
        nodes, edges = topology.expected_size(name, n)
        built = topology.build(name, n, seed=1).indices.size // 2
        assert nodes == n and abs(edges - built) <= 0.15 * built, (name, edges, built)
    path = tmp_path / "edges.txt"
    path.write_text("0 1\n1 2  # comment\n2,0\n")
    assert topology.expected_size(str(path)) == (3, 3)
    refused("nodes", "power of two", topology.expected_size, "hypercube", 100)
    topology.check_size("hypercube", 64)
    refused("nodes", "karate has 34 nodes", topology.check_size, "karate", 10)


def test_implicit_graphs_take_any_integer_up_to_2_62():
    big = topology.build("complete", 2**62)
    assert big.n == 2**62 and big.is_regular  # no array of size n
    assert topology.ring(2**62).is_regular
    refused("nodes", r"got 4611686018427387905; node ids are limited to n <= 2\*\*62",
            topology.build, "ring", 2**62 + 1)
    for bad in (1e9, 10.0, "100", True):
        refused("nodes", r"must be an integer >= 2 \(got ", topology.build, "complete", bad)
        refused("nodes", r"must be an integer >= 2 \(got ", topology.build, "hypercube", bad)


# --------------------------------------------------------------------------- 3. TOML specs

@pytest.mark.parametrize("expr,value", [
    ("min(1, 2 * log(n) / n)", min(1, 2 * 2.302585092994046 / 10)),
    ("ceil(sqrt(n)) + floor(n / 3)", 7), ("n // 3 % 2 - -1", 2), ("2 ** -3", 0.125),
    ("log(n, 10)", 1.0), ("max(n, 4, 2) * pi / pi", 10), ("+n ** 2 ** 4", 10**16),
])
def test_expressions_in_n_still_evaluate(expr, value):
    assert spec_expressions.evaluate(expr, 10, "t.toml", "p") == pytest.approx(value)


@pytest.mark.parametrize("expr,why", [
    ("9**9**9", r"at n = 10: an exponent beyond \+-64"),
    ("n ** 100", "an exponent beyond"),
    ("(10 * n) ** 18", "a power beyond 1e.18 in magnitude"),
    ("n ** 18 * n ** 18", "beyond 1e.18 in magnitude"),
    ("1e999", "a value that is not finite"),
    ("1 / (n - 10)", "division by zero"),
    ("log(n - 10)", "math domain error"),
    ("(-n) ** 0.5", "a value that is not a real number"),
    ("__import__('os').getcwd()", "is not an expression in n"),
    ("n.real", "is not an expression in n"),
    ("x + 1", "an unknown name"),
    ("min(n)", r"min\(\) takes 2 or more argument"),
    ("sqrt(n, 2)", r"sqrt\(\) takes 1 argument"),
    ("'abc'", "a constant that is not a number"),
    ("True", "a constant that is not a number"),
    ("n if n else 1", "is not an expression in n"),
    ("2 *", "is not an expression in n"),
    ("(" * 200 + "n" + ")" * 200, "longer than 256 characters"),
    ("-" * 250 + "n", r"p of \[params\] at n = 10: a probability must lie in \[0, 1\]"),
])
def test_bad_expressions_are_refused_quickly(tmp_path, expr, why):
    err = refused("topology", "mine.toml: parameter p of \\[params\\]", topology.build,
                  er_spec(tmp_path, json.dumps(expr)), 10)
    assert re.search(why, err.message), err.message


@pytest.mark.parametrize("line,why", [
    ('generator = 5', "generator must be a string (got an integer)"),
    ('size = 3', "size must be a string (got an integer)"),
    ('params = 7', "params must be a table (got an integer)"),
    ('default_nodes = "x"', "default_nodes must be an integer (got a string)"),
    ('default_nodes = true', "default_nodes must be an integer (got a boolean)"),
    ('random = "yes"', "random must be true or false"),
    ('min_nodes = 1', "min_nodes must be >= 2"),
    ('min_nodes = 20', "default_nodes must be >= min_nodes"),
    ('size = "cube"', "size must be one of n, log2, sqrt, fixed"),
    ('nodes = 10', "an unknown key; a topology spec has the keys description, "),
    ('params = {p = [1]}', "parameter p must be a number, a boolean or an expression in n "
     "(got an array)"),
    ('params = {p = inf}', "parameter p of [params]: a value that is not finite"),
    ('params = {p = nan}', "parameter p of [params]: a value that is not finite"),
])
def test_spec_keys_of_a_wrong_type(tmp_path, line, why):
    keys = {"description": '"x"', "generator": '"erdos_renyi_graph"', "size": '"n"',
            "default_nodes": "10"}
    key = line.split(" = ")[0]
    keys.pop(key, None)
    body = "".join(f"{k} = {v}\n" for k, v in keys.items()) + line + "\n"
    refused("topology", re.escape(f"mine.toml: {why}"), topology.build,
            write_spec(tmp_path, body))


@pytest.mark.parametrize("generator", ["write_edgelist", "draw", "read_edgelist", "classic",
                                       "__import__", "Graph", "os.system"])
def test_only_graph_generators_are_called(tmp_path, generator):
    spec = write_spec(tmp_path, f'description = "x"\ngenerator = "{generator}"\nsize = "n"\n')
    refused("topology", "the generator is not a graph generator of networkx.generators",
            topology.build, spec, 10)


def test_a_generator_must_return_a_graph(tmp_path):
    spec = write_spec(tmp_path, 'description = "x"\ngenerator = "graph_atlas_g"\n'
                      'size = "fixed"\n')
    refused("topology", r"networkx graph_atlas_g\(\) returned list, not a graph",
            topology.build, spec)


# --------------------------------------------------------------------------- 4. files

def test_binary_files_are_refused(tmp_path):
    blob = bytes(range(256)) * 8
    for name in ("edges.txt", "spec.toml"):
        path = tmp_path / name
        path.write_bytes(b"\x89PNG\r\n" + blob)
        refused("topology", rf"^topology: cannot read '{re.escape(str(path))}': not a UTF-8 "
                "text file$",
                topology.build, str(path), 10)
    nul = tmp_path / "nul.txt"
    nul.write_bytes(b"0 1\n\x00\x00\x00\n")
    refused("topology", "not a UTF-8 text file", topology.build, str(nul))
    unknown = tmp_path / "edges.bin"  # an extension of no graph format: --format fixes it
    unknown.write_bytes(b"\x89PNG\r\n" + blob)
    refused("topology", r"^topology: cannot tell the format of edges.bin from its extension "
            r"'.bin': give --format graphml\|gml", topology.build, str(unknown))


def test_unreadable_paths_are_refused(tmp_path):
    refused("topology", rf"cannot read '{re.escape(str(tmp_path))}': a directory, not a regular",
            topology.build, str(tmp_path))
    refused("topology", "cannot read 'a{100}.*: File name too long", topology.build,
            "a" * 300)
    refused("topology", "not a valid file name", topology.build, "edges\x00.txt")
    refused("topology", "cannot read .*: a directory, not a regular file; give a graph file",
            topology.read_edgelist, tmp_path)
    if Path("/dev/null").exists():
        refused("topology", "cannot read '/dev/null': a device, not a regular file", topology.build,
                "/dev/null")


# --------------------------------------------------------------------------- 5. edge lists

@pytest.mark.parametrize("line,cols", [("1 2 extra", 3), ("1 2 0.5", 3), ("1,2,3,4", 4)])
def test_edge_lines_with_extra_columns_are_refused(tmp_path, line, cols):
    path = tmp_path / "edges.txt"
    path.write_text(f"# u v\n0 1\n{line}\n")
    refused("topology", rf"^topology: edges.txt line 3: expected 'u v' \(two columns\), "
            rf"got {cols} \(as line 2\)$", topology.build, str(path))


def test_edge_list_comments_and_commas_still_work(tmp_path):
    path = tmp_path / "edges.csv"
    path.write_bytes("\ufeff# people\nann, bob  # friends\nbob,cy\n\ncy ann\n".encode())
    topo = topology.build(str(path))
    assert topo.n == 3 and topo.labels == ("ann", "bob", "cy")


# --------------------------------------------------------------------------- 6. types

@pytest.mark.parametrize("spec", [5, None, 2.5, b"ring", ["ring"]])
def test_topology_must_be_a_name_or_a_path(spec):
    refused("topology", r"^topology: must be a name, a file path or a networkx graph \(got ",
            topology.build, spec)
    refused("topology", "must be a name, a file path or a networkx graph",
            topology.expected_size, spec, 10)


def test_topology_given_as_a_path_object(tmp_path):
    path = tmp_path / "edges.txt"
    path.write_text("0 1\n1 2\n2 0\n")
    assert topology.build(path).n == 3


def test_a_path_object_and_numpy_integers_in_a_config(tmp_path):
    """Issue 39: ``netdp.simulate`` takes a ``pathlib.Path`` topology and numpy integers."""
    import numpy as np

    import netdp

    path = tmp_path / "edges.txt"
    path.write_text("0 1\n1 2\n2 3\n3 0\n")
    report = netdp.simulate({"topology": path, "seed": np.int64(1), "steps": np.int32(20)})
    assert report.topology.n == 4 and report.config.topology == str(path)
    report = netdp.simulate({"nodes": np.int64(6), "epsilon": np.float32(0.5), "seed": 1,
                             "steps": 20})
    assert report.topology.n == 6 and type(report.config.nodes) is int
    assert report.config.epsilon == 0.5


def test_multigraphs_with_parallel_edges_are_refused_unless_weighted():
    """Issue 39: an unweighted multigraph lost its parallel edges without a word."""
    import netdp

    for graph in (nx.MultiGraph([(0, 1), (0, 1), (1, 2), (2, 0)]),
                  nx.MultiDiGraph([(0, 1), (0, 1), (1, 2), (2, 0)])):
        error = refused("topology", "a multigraph with 1 parallel edge", topology.from_networkx,
                        graph)
        assert "weight" in error.message and "networkx.Graph(G)" in error.message
        refused("topology", "parallel edge", netdp.make_config, {"topology": graph})
    plain = nx.MultiGraph([(0, 1), (1, 2), (2, 0)])  # no parallel edge: nothing lost
    assert topology.from_networkx(plain).edge_count == 3
    weighted = nx.MultiGraph()
    weighted.add_weighted_edges_from([(0, 1, 1.0), (0, 1, 2.0), (1, 2, 1.0), (2, 0, 1.0)])
    topo = topology.from_networkx(weighted, weight="weight")
    assert sorted(topo.weights.tolist()) == [1.0, 1.0, 1.0, 1.0, 3.0, 3.0]  # they add up


# --------------------------------------------------------------------------- the CLI

@pytest.mark.parametrize("argv,line", [
    (["--topology", "watts-strogatz", "--nodes", "3"],
     "--nodes: watts-strogatz needs --nodes >= 7"),
    (["--topology", "hypercube", "--nodes", str(2**30)],
     f"--nodes: hypercube with n = 1073741824 nodes has 16106127360 edges; {LIMITS}"),
])
def test_cli_prints_one_line_and_exits_2(capsys, argv, line):
    assert main(["simulate", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"netdp simulate: error: {line}") and err.count("\n") == 1, err


def test_cli_config_with_a_number_as_topology(capsys, tmp_path):
    config = tmp_path / "run.toml"
    config.write_text("topology = 5\nnodes = 10\n")
    assert main(["simulate", "--config", str(config)]) == 2
    assert capsys.readouterr().err == ("netdp simulate: error: --topology: must be a name or "
                                       "a file path\n")  # the config's value not echoed


@pytest.mark.parametrize("path", sorted(REPO_SPECS.glob("*.toml")), ids=lambda p: p.stem)
def test_specs_of_this_checkout_pass_their_own_checks(path):
    nodes, edges = topology.expected_size(str(path))
    assert 2 <= nodes <= generators.MAX_GRAPH_NODES and 1 <= edges <= generators.MAX_GRAPH_EDGES
    topology.check_size(str(path))
