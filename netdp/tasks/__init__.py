"""Tasks: what a run computes. One module per task, registered here by one line each.

>>> from netdp.tasks import get_task, make_config
>>> config = make_config({"task": "histogram", "domain": 8, "nodes": 50})
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from netdp.accounting import registry
from netdp.adversary.network import adversary_of
from netdp.core.config import flat_params
from netdp.core.errors import InputError, check
from netdp.core.params import Param, Section, check_value, coerce, params_of
from netdp.core.simulation_config import SimulationConfig, common_fields
from netdp.engine import check_config
from netdp.graphs.time_varying import TimeVaryingTopology, build_time_varying, is_snapshot_list
from netdp.graphs.topologies import Topology, from_networkx, is_graph_object, reference
from netdp.graphs.walk_kind import kind_of
from netdp.tasks.base import Task, accountants_of, attacks_of, check_time_varying
from netdp.tasks.fraction import FractionTask
from netdp.tasks.gossip_sum import GossipSumTask
from netdp.tasks.heavy_hitters import HeavyHittersTask
from netdp.tasks.histogram import HistogramTask
from netdp.tasks.itemsets import ItemsetsTask
from netdp.tasks.mechanism_event import event_params, is_event
from netdp.tasks.multidim import MultidimTask
from netdp.tasks.one_bit import OneBitTask
from netdp.tasks.sgd import SgdTask
from netdp.tasks.sgd_gossip import GossipSgdTask
from netdp.tasks.sum import SumTask

#: The registry: ``task`` (``task/protocol`` off the walk) -> task. Adding a task, or a
#: protocol of one, is one module plus one line here.
TASKS: dict[str, Task] = {task.key: task for task in (
    SumTask(),
    GossipSumTask(),
    HistogramTask(),
    SgdTask(),
    GossipSgdTask(),
    FractionTask(),
    ItemsetsTask(),
    MultidimTask(),
    HeavyHittersTask(),
    OneBitTask(),
)}

__all__ = ["TASKS", "Task", "check_accountants", "common_specs", "get_task", "make_config",
           "param_specs", "section_fields", "task_of", "tracking_table"]


def names() -> tuple[str, ...]:
    """The ``--task`` names."""
    return tuple(dict.fromkeys(task.name for task in TASKS.values()))


def get_task(name: str, protocol: str = "walk") -> Task:
    """The registered task ``name`` on ``protocol``."""
    check(isinstance(name, str) and name in names(), "task",
          f"must be one of {', '.join(names())} (got {name!r})")
    key = name if protocol == "walk" else f"{name}/{protocol}"
    if key not in TASKS:
        offered = [t.protocol for t in TASKS.values() if t.name == name]
        raise InputError("protocol", f"--task {name} runs on {' or '.join(offered)} "
                                     f"(got {protocol!r})")
    return TASKS[key]


def task_of(config: SimulationConfig) -> Task:
    """The task that runs ``config``."""
    return get_task(config.task, config.protocol)


def section_fields(task: Task) -> tuple[str, ...]:
    """The names of a task's own parameters."""
    return tuple(name for name, _, _ in params_of(task.section))


def make_config(params: Mapping[str, Any] | SimulationConfig | None = None,
                **more: Any) -> SimulationConfig:
    """A validated config from flat parameters (CLI flags, TOML keys, sweep axes).

    ``make_config({"task": "histogram", "domain": 8})`` and
    ``make_config(task="histogram", domain=8)`` are the same. Keys are the flag names with
    ``_`` for ``-`` (``-`` is accepted too, and ``range = [LOW, HIGH]``). A key of another
    task's section is refused, naming the task it belongs to; an unknown key is refused,
    listing the allowed ones.

    ``topology`` may be a networkx graph (its weights from the edge attribute ``weight``,
    if given): it is converted and checked once (:func:`netdp.graphs.topologies.
    from_networkx`), held in the config's ``graph``, and recorded in ``topology`` as
    ``networkx:NAME (n nodes, m edges, sha256 ...)``.
    """
    if params is not None and not isinstance(params, Mapping | SimulationConfig):
        raise InputError("config", f"expected a mapping of parameters or a SimulationConfig "
                         f"(got {type(params).__name__})")
    if isinstance(params, SimulationConfig):
        if not more:
            return params
        graph = more.get("topology")
        if is_graph_object(graph) or is_snapshot_list(graph) or isinstance(
                graph, TimeVaryingTopology):
            given = _graph(graph, more.get("weight", params.weight))
            config = params.replace(**{**more, "topology": reference(given), "graph": given})
        else:
            config = params.replace(**more)
        if "accountants" in more:
            check_accountants(config, task_of(config))
        return config
    check(params is None or isinstance(params, Mapping), "config", f"expected a mapping of "
          f"parameters (got {type(params).__name__})")
    data = flat_params({**(params or {}), **more})
    if "mechanism" in data:
        _mechanism_event(data)
    graph = data.get("topology")
    topo: Topology | TimeVaryingTopology | None = None
    if is_graph_object(graph) or is_snapshot_list(graph) or isinstance(graph,
                                                                       TimeVaryingTopology):
        topo = _graph(graph, data.get("weight"))
        data["topology"] = reference(topo)  # type: ignore[arg-type]
    task = get_task(data.get("task", "sum"), data.get("protocol", "walk"))
    for name, spec in aliases(task).items():  # a flag's name as a key: accountant, compare
        if name in data:
            check(spec not in data, name, f"is given twice (also as {spec})")
            data[spec] = data.pop(name)
    own: tuple[str, ...] = section_fields(task)
    common = common_fields()
    for key in data:
        if key in common or key in own:
            continue
        owners = [t.label for t in TASKS.values() if key in section_fields(t)]
        if owners:
            declared = param_specs().get(key)
            flag = (declared.pair or declared.flag or key) if declared is not None else key
            raise InputError(flag, f"applies to --task {' or '.join(owners)} only (this run's "
                                  f"task is {task.label})")
        allowed = sorted(set(common) | set(own))
        raise InputError(key or "config", f"unknown parameter; allowed: {', '.join(allowed)}")
    specs = {name: spec for name, spec, _ in params_of(task.section)}
    held = task.section.objects(data)  # arrays from Python, recorded by their digest
    section: Section = task.section(**{k: coerce(specs[k], v) for k, v in data.items()
                                       if k in own}, **held)
    declared = common_specs()
    values = {k: coerce(declared[k], v) for k, v in data.items() if k in common}
    if values.get("accountants") is not None:  # the registry's names, before the rest
        check_value("accountants", declared["accountants"], values["accountants"])
    config = SimulationConfig(**values, section=section, graph=topo)
    kind_of(config.topology).check_config(config)  # what the walk kind uses
    check_config(config)  # what the engines can run
    check_accountants(config, task)
    adversary_of(config, attacks_of(task), task.label)  # refuses an attack the run cannot model
    check_time_varying(task, config)
    return config


def check_accountants(config: SimulationConfig, task: Task) -> None:
    """Refuse an accountant the registry does not offer, or the task's trackers do not
    compose with (:class:`InputError` naming ``accountant`` and the allowed names)."""
    for name in config.accountants or ():
        registry.choice(name)
    extra = [a for a in config.accountants or () if a not in accountants_of(task)]
    check(not extra, "accountant", f"the {task.label} tracker composes with "
          f"{', '.join(accountants_of(task)) or 'no accountant'} (got {', '.join(extra)})")


def _graph(graph: Any, weight: Any) -> Any:
    """A networkx graph given from Python as a topology, weighted by ``weight``; a list of
    them as a time-varying graph (its schedule: the config's ``snapshot_period`` and
    ``after``, applied when it is built)."""
    check(weight is None or isinstance(weight, str), "weight",
          f"must be the name of an edge attribute (got {weight!r})")
    if is_snapshot_list(graph) or isinstance(graph, TimeVaryingTopology):
        return build_time_varying(graph, weight=weight)
    return from_networkx(graph, weight=weight)


def aliases(task: Task) -> dict[str, str]:
    """Flag names (``_`` for ``-``) that differ from their field's name: ``{flag: field}``."""
    out = {}
    for record in (SimulationConfig, task.section):
        for name, spec, _ in params_of(record):
            if spec.flag and spec.kind is not bool and spec.flag.replace("-", "_") != name:
                out[spec.flag.replace("-", "_")] = name
    return out


def _mechanism_event(data: dict[str, Any]) -> None:
    """A ``mechanism`` given as a privacy event (:mod:`netdp.tasks.mechanism_event`): in
    ``data``, the parameters of the built-in randomizer with the same noise."""
    if not is_event(data["mechanism"]):
        return
    delta = data.get("delta", next(f.default for f in dataclasses.fields(SimulationConfig)
                                   if f.name == "delta"))
    check(isinstance(delta, int | float) and not isinstance(delta, bool) and 0 < delta < 1,
          "delta", f"must be a number in (0, 1) (got {delta!r})")
    event = data.pop("mechanism")
    own = section_fields(get_task(data.get("task", "sum"), data.get("protocol", "walk")))
    for key, value in event_params(event, float(delta), own).items():
        if key == "task" and data.get(key, value) == value:
            data[key] = value
            continue
        check(key not in data or key == "calibration" and data[key] == value, key,
              f"is set by the mechanism's event (to {value!r}); leave it out")
        data[key] = value


def common_specs() -> dict[str, Param]:
    """The common parameters' declarations, ``accountants`` completed from the accountant
    registry (its choices, and each accountant's help)."""
    out = {name: spec for name, spec, _ in params_of(SimulationConfig)}
    spec = out["accountants"]
    out["accountants"] = dataclasses.replace(
        spec, choices=registry.names(),
        help=f"{spec.help}: {registry.help_text()}; repeat for several")
    return out


def param_specs() -> dict[str, Any]:
    """Every parameter's declaration, common (:func:`common_specs`) and of every task (the
    union by name)."""
    out: dict[str, Any] = common_specs()
    for task in TASKS.values():
        for name, spec, _ in params_of(task.section):
            out.setdefault(name, spec)
    return out


def tracking_table() -> list[str]:
    """Lines of the task table: each task, where pairwise tracking applies and how."""
    lines = []
    for task in TASKS.values():
        lines.append(f"  {task.label:10} {task.summary}")
        kinds = {t.topology for t in task.tracking}
        for t in task.tracking:
            mechs = f" ({', '.join(t.mechanisms)})" if t.mechanisms else ""
            composes = ", ".join(t.composes(task.key))
            lines.append(f"  {'':10}   {t.topology}{mechs}: {composes}; "
                         f"{t.summary}")
        if "graph" not in kinds:
            lines.append(f"  {'':10}   other graphs: the LDP baseline only")
    return lines
