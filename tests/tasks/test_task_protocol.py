"""The Task protocol stays narrow, capabilities are declared, setups are typed, and a
parameter is read one way (issue: one concept, one place)."""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import inspect
import typing
from pathlib import Path

import pytest

import netdp
from netdp.core.errors import InputError
from netdp.core.setup import Once, Setup
from netdp.core.simulation_config import SimulationConfig
from netdp.tasks import TASKS, make_config
from netdp.tasks import base as task_base
from netdp.tasks.base import (
    Attackable,
    Auditable,
    NoisyOutput,
    PairwiseDetails,
    Reported,
    Sized,
    Task,
)
from netdp.tasks.histogram import HistogramConfig
from netdp.tasks.sum import SumConfig

PROTOCOL = {"prepare", "trace", "run", "record", "utility", "view", "tracker"}
CAPABILITIES = (Attackable, Auditable, NoisyOutput, PairwiseDetails, Reported, Sized)
SOURCE = Path(netdp.__file__).parent


def _methods(cls: type) -> set[str]:
    return {name for name, value in vars(cls).items()
            if inspect.isfunction(value) and not name.startswith("_")}


def test_the_protocol_is_seven_methods():
    assert _methods(Task) == PROTOCOL
    assert {n for n, v in vars(Task).items() if getattr(v, "__isabstractmethod__", False)} \
        == PROTOCOL - {"trace", "tracker"}


def _undeclared(cls: type) -> list[str]:
    """The capability methods ``cls`` defines without naming their capability."""
    out = []
    for capability in CAPABILITIES:
        for name in _methods(capability):
            owner = next((c for c in cls.__mro__ if name in vars(c)), capability)
            if owner is not capability and not issubclass(cls, capability):
                out.append(f"{name} ({capability.__name__})")
    return out


@pytest.mark.parametrize("key", sorted(TASKS))
def test_a_task_declares_every_capability_it_implements(key):
    """A capability's method defined without the capability would never be called."""
    assert _undeclared(type(TASKS[key])) == []


def test_the_capability_check_can_fail():
    class Sneaky(Task[Setup]):  # implements audit_worlds without declaring Auditable
        def audit_worlds(self, setup, node):
            return None, None

    class Declared(Sneaky, Auditable):
        pass

    assert _undeclared(Sneaky) == ["audit_worlds (Auditable)"]
    assert _undeclared(Declared) == []


@pytest.mark.parametrize("key", sorted(TASKS))
def test_prepare_returns_the_declared_setup(key):
    task = TASKS[key]
    (declared,) = [typing.get_args(b)[0] for b in type(task).__orig_bases__  # type: ignore
                   if typing.get_origin(b) is Task]
    assert isinstance(declared, type) and issubclass(declared, Setup)
    assert dataclasses.is_dataclass(declared) and declared.__dataclass_params__.frozen
    config = {"task": task.name, "protocol": task.protocol, "nodes": 8, "seed": 1,
              "topology": "ring" if task.protocol == "walk" else "complete"}
    setup = task.prepare(make_config(config))
    assert type(setup) is declared
    assert not hasattr(setup, "memo")


def test_once_computes_once_and_says_when_not_yet():
    box: Once[int] = Once()
    assert not box.done
    with pytest.raises(RuntimeError, match="first run"):
        _ = box.value
    calls = []
    assert box.get(lambda: calls.append(1) or 7) == 7
    assert box.get(lambda: calls.append(1) or 8) == 7 and calls == [1]
    assert box.done and box.value == 7


def test_section_parameters_are_read_through_the_typed_section():
    config = make_config({"task": "histogram", "domain": 8})
    assert config.section_as(HistogramConfig).domain == 8
    with pytest.raises(AttributeError):
        _ = config.domain  # no attribute fall-through to the section
    with pytest.raises(InputError, match="task"):
        config.section_as(SumConfig)
    assert "__getattr__" not in vars(SimulationConfig)


def _literal_config_gets(tree: ast.AST) -> list[int]:
    path = SOURCE.parent / "experiments" / "layout_facts.py"
    spec = importlib.util.spec_from_file_location("layout_facts", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.literal_config_gets(tree)


def test_no_parameter_is_read_by_a_literal_name():
    """``config.get(name)`` is for names held in variables (sweep axes, flags, the shared
    parts' declared names); a known parameter is an attribute or the typed section's."""
    found = {}
    for path in SOURCE.rglob("*.py"):
        lines = _literal_config_gets(ast.parse(path.read_text()))
        if lines:
            found[str(path.relative_to(SOURCE))] = lines
    assert not found


def test_the_literal_name_check_can_fail():
    planted = ast.parse('x = setup.config.get("domain")\ny = config.get(SOURCES)\n'
                        'z = dask.config.get("distributed.nanny")\n')
    assert _literal_config_gets(planted) == [1]


def test_the_run_loop_reaches_capabilities_through_functions():
    """The helpers the run loop calls give the defaults for a task without the capability."""
    from netdp.tasks.fraction import FractionTask

    task = FractionTask()
    assert not isinstance(task, (Attackable, NoisyOutput, Reported, Sized))
    setup = task.prepare(make_config({"task": "fraction", "nodes": 8, "seed": 2}))
    assert task_base.attacks_of(task) == () and task_base.attack_targets(task, setup) == ()
    assert task_base.output_noise(task, setup, None, None) is None
    mechanism, process, sections = task_base.report_parts(task, setup, [])
    assert process is None and sections == {}
    assert task_base.footprint(task, setup.config, 8, setup.steps) \
        == task_base.walk_footprint(setup.config, 8, setup.steps)
