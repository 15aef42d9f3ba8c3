from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from netdp.core.errors import InputError
from netdp.graphs import topologies as topology

REPO_SPECS = Path(__file__).resolve().parents[1] / "topologies"
NAMED = sorted(p.stem for p in REPO_SPECS.glob("*.toml"))
REQUIRED = {"hypercube", "erdos-renyi", "random-geometric", "grid", "barabasi-albert",
            "watts-strogatz", "karate", "davis", "florentine", "les-miserables"}


def test_required_specs_exist_and_ship_with_the_package():
    assert set(NAMED) >= REQUIRED
    # available() reads the installed package's data, not the clone's folder
    assert set(topology.available()) == {"ring", "complete", *NAMED}


@pytest.mark.parametrize("name", NAMED)
def test_named_spec_builds_a_connected_graph(name):
    topo = topology.build(name, seed=3)
    assert topo.kind == "graph" and topo.n >= 2
    assert topo.indptr[-1] == topo.indices.size
    assert np.all(topo.degrees >= 1)
    rebuilt = nx.Graph()
    rebuilt.add_edges_from(zip(np.repeat(np.arange(topo.n), topo.degrees), topo.indices,
                               strict=True))
    assert nx.is_connected(rebuilt)


@pytest.mark.parametrize("name,n", [("erdos-renyi", 200), ("random-geometric", 300),
                                    ("barabasi-albert", 50), ("watts-strogatz", 64),
                                    ("hypercube", 64), ("grid", 49)])
def test_sized_specs_follow_nodes(name, n):
    assert topology.build(name, n, seed=0).n == n


def test_random_specs_are_seeded():
    a = topology.build("erdos-renyi", 100, seed=5)
    b = topology.build("erdos-renyi", 100, seed=5)
    c = topology.build("erdos-renyi", 100, seed=6)
    assert np.array_equal(a.indices, b.indices)
    assert not (a.indices.size == c.indices.size and np.array_equal(a.indices, c.indices))


@pytest.mark.parametrize("name,n,needs", [("hypercube", 100, "power of two"),
                                          ("grid", 50, "perfect square"),
                                          ("karate", 10, "34 nodes")])
def test_sizes_a_spec_cannot_take(name, n, needs):
    with pytest.raises(InputError, match=needs):
        topology.build(name, n)


def test_ring_and_complete_are_implicit():
    ring = topology.ring(10**9)
    assert ring.indptr is None and ring.n == 10**9
    full = topology.complete(5, self_moves=False)
    assert np.all(full.degrees == 4) and full.is_regular


@pytest.mark.parametrize("n", [0, 1, -3])
def test_fewer_than_two_nodes_is_refused(n):
    with pytest.raises(InputError, match="at least 2 nodes"):
        topology.complete(n)


def test_disconnected_graph_names_the_unreachable_nodes():
    g = nx.Graph([(0, 1), (1, 2), (10, 11)])
    with pytest.raises(InputError, match=r"node\(s\) 10, 11 cannot be reached from node 0"):
        topology.from_networkx(g, "two-parts")


def test_directed_graph_must_be_strongly_connected():
    g = nx.DiGraph([(0, 1), (1, 2), (2, 0), (2, 3)])  # 3 is a sink
    with pytest.raises(InputError, match="cannot reach node 0 again"):
        topology.from_networkx(g, "sink")
    assert topology.from_networkx(nx.DiGraph([(0, 1), (1, 0)])).directed


def test_edge_list_file(tmp_path):
    path = tmp_path / "edges.txt"
    path.write_text("# a triangle and a tail\n0 1\n1,2\n2 0\n2 3  # tail\n\n")
    topo = topology.build(str(path))
    assert topo.n == 4 and topo.degrees.tolist() == [2, 2, 3, 1]
    with pytest.raises(InputError, match="cannot reach node #0 again"):
        topology.build(str(path), directed=True)
    bad = tmp_path / "bad.txt"
    bad.write_text("0 1\n2\n")
    with pytest.raises(InputError, match="line 2"):
        topology.build(str(bad))


def test_unknown_names_and_missing_files():
    with pytest.raises(InputError, match="unknown topology 'nope'.*karate"):
        topology.build("nope")
    with pytest.raises(InputError, match="no such file"):
        topology.build("missing/edges.txt")


def test_user_toml_spec_and_its_expressions(tmp_path):
    spec = tmp_path / "mine.toml"
    spec.write_text('description = "cycle"\ngenerator = "cycle_graph"\nsize = "n"\n')
    assert topology.build(str(spec), 12).n == 12
    evil = tmp_path / "evil.toml"
    evil.write_text('description = "x"\ngenerator = "erdos_renyi_graph"\nsize = "n"\n'
                    '[params]\np = "__import__(\'os\').getcwd()"\n')
    with pytest.raises(InputError, match="not an expression in n"):
        topology.build(str(evil), 10)
