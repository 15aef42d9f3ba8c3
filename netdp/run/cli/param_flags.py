"""Every simulation parameter as a command-line flag, generated from the declarations
(``simulate``'s flags; ``plot`` and ``account`` take some of them)."""

from __future__ import annotations

import argparse
from typing import Any

from netdp.core.params import Param, params_of
from netdp.core.simulation_config import SimulationConfig
from netdp.run.cli import integer, number
from netdp.tasks import TASKS, common_specs, names


def add_param_flags(parser: argparse.ArgumentParser, skip: frozenset[str] = frozenset(),
                    prefix: str = "") -> set[str]:
    """Every simulation parameter's flag, generated from the declarations (the common
    ones, then each task's section), in the declarations' groups (titled ``prefix +
    group``), none of ``skip``; a flag not given is absent from the parsed namespace.
    The names (``dest``) added."""
    declared: dict[str, list[tuple[str, Param, Any]]] = {}
    common = common_specs()  # the accountants' choices and help: the registry's
    for name, _, default in params_of(SimulationConfig):
        declared.setdefault(name, []).append(("", common[name], default))
    for task in TASKS.values():
        for name, spec, default in params_of(task.section):
            declared.setdefault(name, []).append((task.label, spec, default))
    groups: dict[str, argparse._ArgumentGroup] = {}
    pairs: set[str] = set()
    added: set[str] = set()
    for name, owners in declared.items():
        spec = owners[0][1]
        if name in skip or (spec.pair is not None and spec.pair in skip):
            continue
        group = groups.get(spec.group)
        if group is None:
            group = groups.setdefault(spec.group, parser.add_argument_group(
                prefix + (spec.group or "options")))
            group.argument_default = argparse.SUPPRESS
        if name == "task":
            add_flag(group, name, spec, _help(name, owners), choices=names())
        elif spec.pair is not None:
            if spec.pair not in pairs:
                pairs.add(spec.pair)
                lows = [o for o in owners if o[2] is not None]
                group.add_argument(f"--{spec.pair}", nargs=2, type=number, dest=spec.pair,
                                   metavar=("LOW", "HIGH"),
                                   help=f"{spec.help} (default: {spec.default_text}; "
                                   f"{', '.join(t for t, _, _ in lows)})")
                added.add(spec.pair)
            continue
        else:
            union = tuple(dict.fromkeys(c for _, sp, _ in owners for c in (sp.choices or ())))
            add_flag(group, name, spec, _help(name, owners), choices=union or None)
        added.add(name)
    return added


def add_flag(group: argparse._ArgumentGroup, name: str, spec: Param, text: str,
             choices: tuple[str, ...] | None = None) -> None:
    """One flag for one parameter, by its declared kind."""
    flags = [f"--{spec.flag or name.replace('_', '-')}", *spec.short]
    choices = choices or spec.choices
    metavar = spec.metavar or ("{" + ",".join(choices) + "}" if choices else None)
    if spec.kind is bool:
        action = "store_false" if spec.flag and spec.flag.startswith("no-") else "store_true"
        group.add_argument(*flags, dest=name, action=action, help=text)
    elif spec.kind is tuple and name == "accountants":
        group.add_argument(*flags, dest=name, action=_Accountant, metavar=metavar, help=text)
        group.add_argument("--no-tracking", dest=name, action=_NoTracking, nargs=0,
                           help="skip pairwise privacy tracking (utility only; faster)")
    else:
        kind = {int: integer, float: number}.get(spec.kind, str)
        group.add_argument(*flags, dest=name, type=kind, metavar=metavar, help=text)


def _help(name: str, owners: list[tuple[str, Param, Any]]) -> str:
    """The help text, with the default; one clause per task where tasks differ."""
    def one(spec: Param, default: Any) -> str:
        shown = spec.default_text or (",".join(default) if isinstance(default, tuple)
                                      else default)
        if spec.kind is bool:
            return spec.help
        return f"{spec.help} (default: {shown})"

    by_text: dict[str, list[str]] = {}
    for task, spec, default in owners:
        by_text.setdefault(one(spec, default), []).append(task)
    if len(by_text) == 1:
        text, tasks = next(iter(by_text.items()))
        tasks = [t for t in tasks if t]
        return text + (f" [--task {' or '.join(tasks)}]" if tasks else "")
    return "; ".join(f"{' or '.join(tasks)}: {text}" for text, tasks in by_text.items())


class _Accountant(argparse.Action):
    """``--accountant NAME``, repeatable; refused beside ``--no-tracking``."""

    repeatable = True

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        chosen = getattr(namespace, self.dest, None)
        if chosen == ():
            parser.error("argument --accountant: --no-tracking skips the accountants; give "
                         "one or the other")
        setattr(namespace, self.dest, [*(chosen or ()), values])


class _NoTracking(argparse.Action):
    """``--no-tracking``: no accountant; refused beside ``--accountant``."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        if getattr(namespace, self.dest, None):
            parser.error("argument --no-tracking: --accountant asks for tracking; give one "
                         "or the other")
        setattr(namespace, self.dest, ())
