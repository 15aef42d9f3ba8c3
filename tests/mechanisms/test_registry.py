"""The randomizer registry: every entry builds, every accepted list is one of its queries,
and no module of the package types a list of randomizer names of its own."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from netdp import mechanisms
from netdp.adversary import defences, poisoning
from netdp.audit import mechanism as mechanism_audit
from netdp.core.params import params_of
from netdp.mechanisms import registry
from netdp.mechanisms.base import AdditiveNoise, FrequencyOracle, Mechanism
from netdp.run.cli import audit as audit_cli
from netdp.tasks import TASKS

PACKAGE = Path(mechanisms.__file__).resolve().parents[1]
REGISTRY = Path(registry.__file__).resolve()
BASES = {"additive": AdditiveNoise, "bounded": Mechanism, "frequency-oracle": FrequencyOracle}


def build(e: registry.Entry):
    """The randomizer of entry ``e`` at ε = 1, by the builder of its kind."""
    if e.kind == "additive":
        return mechanisms.additive(e.name, 1.0, 1e-5, 1.0)
    if e.kind == "bounded":
        return mechanisms.numeric(e.name, 1.0)
    return mechanisms.frequency_oracle(e.name, 1.0, 8)


@pytest.mark.parametrize("e", registry.ENTRIES, ids=lambda e: e.name)
def test_every_entry_builds_its_class(e):
    built = build(e)
    assert type(built) is registry.load(e.name) is getattr(mechanisms, e.cls)
    assert built.name == e.name and isinstance(built, BASES[e.kind])
    values = np.zeros(4) if e.kind != "frequency-oracle" else np.arange(4)
    assert len(built.perturb(values, np.random.default_rng(0))) == 4


def test_entries_are_well_formed():
    every = registry.names() + registry.aliases()
    assert len(set(every)) == len(every)  # names and aliases unique
    assert {e.kind for e in registry.ENTRIES} == set(registry.KINDS)
    assert {t for e in registry.ENTRIES for t in e.traits} == set(registry.TRAITS)
    assert registry.canonical("pm") == "piecewise" and registry.canonical("hm") == "hybrid"
    assert registry.canonical("oue") == "oue" and registry.canonical("x") == "x"
    assert mechanisms.HASHED == ("cms", "hcms", "rappor")


def test_queries():
    assert registry.names("additive") == ("laplace", "gaussian")
    assert registry.names("additive", first="gaussian") == ("gaussian", "laplace")
    assert registry.names("bounded", "additive") == registry.names()[:5]
    assert registry.names(family="unary") == ("sue", "oue")
    assert registry.names(family="local_hashing", first="olh") == ("olh", "blh")
    assert registry.names(trait="set-valued") == ("grr", "olh")
    with pytest.raises(ValueError, match="oracle"):
        registry.names("oracle")
    with pytest.raises(ValueError, match="hashd"):
        registry.names(trait="hashd")
    with pytest.raises(ValueError, match="grr"):
        registry.names("bounded", first="grr")


#: Every choice of a randomizer among the tasks' parameters: (task, field) -> the query.
TASK_QUERIES = {
    ("sum", "mechanism"): registry.names("additive", "bounded", first="gaussian"),
    ("histogram", "mechanism"): registry.names("frequency-oracle"),
    ("itemsets", "oracle"): ("adaptive",) + registry.names(trait="set-valued"),
    ("multidim", "mechanism"): registry.names("bounded", first="hybrid")
    + registry.aliases("bounded"),
    ("multidim", "oracle"): registry.names(trait="multidim", first="oue"),
    ("heavy-hitters", "oracle"): registry.names(family="local_hashing", first="olh"),
}


def test_each_task_accepts_a_registry_query():
    known = set(registry.names()) | set(registry.aliases())
    found = {}
    for task in TASKS.values():
        for field, spec, default in params_of(task.section):
            if spec.choices and known & set(spec.choices):
                found[(task.name, field)] = spec.choices
                assert spec.choices[0] == default  # the default leads
    assert found == TASK_QUERIES


def test_the_other_lists_are_registry_queries():
    lists = {"audit": audit_cli.MECHANISMS, "audited numbers": mechanism_audit.NUMERIC,
             "crafted": poisoning.CRAFTED, "detectable": defences.DETECTABLE,
             "recoverable": defences.RECOVERABLE, "numeric": tuple(mechanisms.NUMERIC),
             "frequency": tuple(mechanisms.FREQUENCY)}
    assert lists == {"audit": registry.names(),
                     "audited numbers": registry.names("additive", "bounded"),
                     "crafted": registry.names(trait="crafted"),
                     "detectable": registry.names(trait="detectable"),
                     "recoverable": registry.names(trait="recoverable"),
                     "numeric": registry.names("additive", "bounded"),
                     "frequency": registry.names("frequency-oracle")}


def name_tables(source: str) -> list[int]:
    """Lines of the tuple, list and set literals and dict keys of ``source`` that hold two
    registered names or aliases or more: a list of randomizers typed again."""
    known = set(registry.names()) | set(registry.aliases())
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [k for k in node.keys if k is not None]
        else:
            continue
        hits = [i for i in items if isinstance(i, ast.Constant) and i.value in known]
        if len(hits) >= 2:
            lines.append(node.lineno)
    return sorted(lines)


def test_no_module_types_a_list_of_randomizer_names():
    found = {str(path.relative_to(PACKAGE.parent)): lines
             for path in sorted(PACKAGE.rglob("*.py")) if path.resolve() != REGISTRY
             if (lines := name_tables(path.read_text(encoding="utf-8")))}
    assert found == {}, f"lists of randomizer names outside the registry: {found}"


def test_the_name_table_finder_finds_planted_tables():
    planted = ('ORACLES = ("olh", "blh")\n'
               'CLASSES = {"laplace": "Laplace", "hm": "Hybrid"}\n'
               'def f(name):\n    return name in ["sue", "x", "oue"]\n'
               'ONE = ("grr", "adaptive")\n'
               'REGIMES = {"local-hm": "hybrid", "local-pm": "piecewise"}\n')
    assert name_tables(planted) == [1, 2, 4]
