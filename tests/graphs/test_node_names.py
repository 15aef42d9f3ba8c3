"""Nodes named by id or by the graph's labels (netdp.graphs.node_names): the rule of a
label-keyed log, applied to --coalition, --malicious, --observer and audit --node."""

from __future__ import annotations

import networkx as nx
import pytest

from netdp.core.errors import InputError
from netdp.core.simulation_config import parse_nodes
from netdp.graphs.node_names import check_named_nodes, is_label, node_id, node_set
from netdp.graphs.topologies import build, from_networkx

FLORENTINE = build("florentine")


@pytest.mark.parametrize("text,parsed", [
    ("3,7,9", ("nodes", [3, 7, 9])),
    (" 3 , 7 ", ("nodes", [3, 7])),
    ("random:2", ("random", 2)),
    ("Medici,Strozzi", ("labels", ["Medici", "Strozzi"])),
    ("Medici, 3", ("labels", ["Medici", "3"])),  # a list with a label: every item a label
])
def test_the_syntax_of_a_node_list(text, parsed):
    assert parse_nodes(text, "coalition") == parsed


@pytest.mark.parametrize("text", ["", "3,,4", "-1", "random:0", "random:x", ","])
def test_a_list_that_names_no_node_is_refused(text):
    with pytest.raises(InputError) as caught:
        parse_nodes(text, "malicious")
    assert caught.value.param == "malicious"


def test_labels_map_to_the_ids_of_the_graph_file_order():
    ids = {label: i for i, label in enumerate(FLORENTINE.labels)}
    assert node_set("Medici,Strozzi", "coalition", FLORENTINE) == (
        "nodes", [ids["Medici"], ids["Strozzi"]])
    assert node_set("1,4", "coalition", FLORENTINE) == ("nodes", [1, 4])  # ids still work
    assert node_set("random:3", "coalition", FLORENTINE) == ("random", 3)
    assert node_id("Medici", "observer", FLORENTINE) == ids["Medici"]
    assert node_id(" Medici ", "observer", FLORENTINE) == ids["Medici"]
    assert node_id("4", "node", FLORENTINE) == node_id(4, "node", FLORENTINE) == 4


def test_integer_labels_are_matched_as_text_in_a_list_with_a_label():
    """An edge list's labels are numbers: whole numbers alone are ids, but in a list
    with a name every item is a label, matched against ``str(label)``."""
    graph = nx.Graph([(10, 20), (20, "hub"), ("hub", 10)])
    topo = from_networkx(graph)
    assert node_set("1,2", "coalition", topo) == ("nodes", [1, 2])  # ids
    assert node_set("hub,10", "coalition", topo) == ("nodes", [2, 0])  # labels


@pytest.mark.parametrize("value,says", [
    ("Borgia", "not a node label of florentine, which has 15 labels (or give a node id in "
               "0..14) (got 'Borgia')"),
    ("Medici,Borgia", "(got 'Borgia')"),
    ("15", "node ids must lie in 0..14"),
])
def test_an_unknown_label_is_one_line_naming_the_flag(value, says):
    with pytest.raises(InputError) as caught:
        node_set(value, "coalition", FLORENTINE)
    assert caught.value.param == "coalition" and says in caught.value.message
    assert "\n" not in str(caught.value)


def test_a_graph_without_labels_refuses_a_label():
    ring = build("ring", 8)
    with pytest.raises(InputError, match="ring has no node labels: give node ids in 0..7"):
        node_id("alice", "node", ring)
    with pytest.raises(InputError, match=r"must be a node id in 0..7 or a node label \(got 8"):
        node_id(8, "observer", ring)


def test_the_named_nodes_of_a_config_are_checked_before_a_run():
    class Config:
        coalition = "Medici"
        malicious = "Medici,Borgia"

    with pytest.raises(InputError) as caught:
        check_named_nodes(Config(), FLORENTINE)
    assert caught.value.param == "malicious"


def test_is_label():
    assert is_label("Medici") and is_label("n3")
    assert not is_label("3") and not is_label(3) and not is_label(None)
