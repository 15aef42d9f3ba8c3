"""Nodes named on the command line by id or by the graph's labels: ``--coalition``,
``--malicious`` (``simulate``, ``account``), ``account --observer`` and ``audit --observer``,
``audit --node``.

The rule, the one a label-keyed log follows (:func:`netdp.engine.trace_log.relabel`): a
list whose every item is a whole number names node ids ``0..n-1``, as before; a list with
any other item names every item by its node label (``str(label)``, the label as a graph
file writes it: ``Medici``, ``n3``), mapped to its id through the topology's labels. A
label that is no node, or a label on a graph without labels, is refused in one line
naming the flag and saying how many labels the graph has (the graph's labels are not
listed: they are a file's content).

Examples
--------
>>> from netdp.graphs.topologies import build
>>> florentine = build("florentine")
>>> node_set("Medici,Strozzi", "coalition", florentine)
('nodes', [1, 4])
>>> node_set("1,4", "coalition", florentine), node_id("Medici", "observer", florentine)
(('nodes', [1, 4]), 1)
>>> try:
...     node_id("Borgia", "observer", florentine)
... except InputError as err:
...     print(err.param, "|", err.message.split(" (or")[0])
observer | not a node label of florentine, which has 15 labels
"""

from __future__ import annotations

from typing import Any

from netdp.core.errors import InputError, check
from netdp.core.simulation_config import parse_nodes


def node_set(text: str, name: str, topology: Any) -> tuple[str, list[int] | int]:
    """``("random", C)`` or ``("nodes", ids)``: the nodes ``text`` names for parameter
    ``name`` (``coalition``, ``malicious``) on ``topology`` (anything with ``n``,
    ``labels`` and ``name``), labels mapped to ids and ids checked against ``0..n-1``."""
    kind, spec = parse_nodes(text, name)
    if isinstance(spec, int):
        return kind, spec
    if kind == "labels":
        return "nodes", [_by_label(str(p), name, topology) for p in spec]
    ids = [int(p) for p in spec]
    n = topology.n
    check(max(ids) < n, name, f"node ids must lie in 0..{n - 1}")
    return kind, ids


def node_id(value: int | str, name: str, topology: Any) -> int:
    """The id of one node given by id (an ``int`` or a whole number as text) or by label,
    for parameter ``name`` (``observer``, ``node``)."""
    n = topology.n
    if isinstance(value, str):
        text = value.strip()
        try:
            value = int(text)
        except ValueError:
            return _by_label(text, name, topology)
    check(0 <= value < n, name, f"must be a node id in 0..{n - 1} or a node label (got "
          f"{value})")
    return value


def is_label(value: Any) -> bool:
    """Whether a node given on the command line names a label (text that is no whole
    number)."""
    if not isinstance(value, str):
        return False
    try:
        int(value.strip())
    except ValueError:
        return True
    return False


def check_named_nodes(config: Any, topology: Any) -> None:
    """Refuse, before any run, a ``coalition`` or ``malicious`` of ``config`` that names
    no node of ``topology`` (a label it lacks, an id beyond ``n - 1``)."""
    for name in ("coalition", "malicious"):
        text = getattr(config, name, None)
        if text is not None:
            node_set(text, name, topology)


def _by_label(text: str, name: str, topology: Any) -> int:
    labels = tuple(getattr(topology, "labels", ()) or ())
    n = topology.n
    graph = getattr(topology, "name", "the graph")
    if not labels or all(type(x) is int and x == i for i, x in enumerate(labels)):
        raise InputError(name, f"{graph} has no node labels: give node ids in 0..{n - 1} "
                         f"(got {text!r})")
    index = _index(labels)
    if text not in index:
        raise InputError(name, f"not a node label of {graph}, which has {len(labels)} labels "
                         f"(or give a node id in 0..{n - 1}) (got {text!r})")
    return index[text]


def _index(labels: tuple) -> dict[str, int]:
    """``{str(label): id}``, the first node of each text."""
    out: dict[str, int] = {}
    for i, label in enumerate(labels):
        out.setdefault(str(label), i)
    return out
