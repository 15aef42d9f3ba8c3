"""The fuzzer's naming property (issue 29): a refusal names a parameter that was given.

A refusal (exit status 2) is one stderr line, ``netdp CMD: error: NAME: message``
(netdp.core.errors.InputError.line) or argparse's ``netdp CMD: error: argument
--flag/-f: message (see --help)``. :func:`check_names` asserts that NAME is one of:

1. a flag of the command that is on the command line (any of its spellings: ``-n`` for
   ``--nodes``, ``--flag=value``, an abbreviation argparse accepts); NAME may be any of
   the flag's option strings;
2. a positional argument that was given, named by its metavar (``DIR``, ``LOG``,
   ``SPEC.toml``) or by the value as written (a log's path: ``log.csv: line 3: ...``);
3. a key of the TOML file given to ``--config`` (or of the spec ``sweep SPEC.toml``
   reads), or of a ``--set KEY=VALUE``, named by its flag (``steps = 200.5`` is
   ``--steps``, ``low = 5`` is ``--range``);
4. one of :data:`ENVIRONMENT`: the environment variables netdp reads, which are input too;
5. one of :data:`MISSING`: a parameter a command needs in that context and that is
   absent, in a refusal that asks for it (its message starts with ``give``), as
   argparse's own "the following arguments are required";

or the line is one of :data:`NAMELESS`, the refusals about no one parameter. Anything
else (a flag the user did not give, an internal name such as ``P``) is a message that
names the wrong parameter.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import re
import tomllib
from pathlib import Path

from netdp.run.cli import build_parser

#: Lines that name no parameter (their text after ``error: `` starts so), with reasons.
NAMELESS = (
    "unrecognized arguments: ",  # argparse: quotes the words it does not know
    "the following arguments are required: ",  # argparse: a missing positional
    "ran out of memory",  # netdp.run.cli.main's MemoryError: the sizes jointly
)
#: Environment variables a refusal may name: netdp reads them as input (docs/performance.md).
ENVIRONMENT = frozenset({"NETDP_TIME_LIMIT", "NETDP_MEMORY_LIMIT"})
#: (command, parameter) a refusal may name while it is absent, when it asks for it
#: (``NAME: give ...``): ``plot`` draws a table (DIR, with --x and --y or a table preset)
#: or one run (by-distance reads --result files); neither can be argparse's "required".
#: ``account`` and ``report`` ask for the file a log's header or a JSON names (issue 39:
#: netdp opens no file they name).
MISSING = frozenset({("plot", "DIR"), ("plot", "--x"), ("plot", "--y"), ("plot", "--result"),
                     ("account", "--topology"), ("account", "--set"),
                     ("report", "--topology")})


@functools.cache
def _parser(command: str) -> argparse.ArgumentParser:
    parser = build_parser(command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]


def _parse(command: str, argv: list[str]) -> tuple[argparse.Namespace | None, set[str]]:
    """The namespace (``None`` if argparse refuses ``argv``) and the option strings of
    every flag given (each flag's every spelling)."""
    parser = _parser(command)
    namespace = None
    with contextlib.redirect_stderr(io.StringIO()), contextlib.suppress(SystemExit):
        namespace = parser.parse_known_args(argv[1:])[0]
    seen = getattr(parser, "_seen", [])  # netdp.run.cli.Parser: every flag it met
    return namespace, {s for action in seen for s in action.option_strings}


def _config_flags(command: str, namespace: argparse.Namespace | None) -> set[str]:
    """The flags of the keys of ``--config``'s TOML file, ``sweep``'s spec and ``--set``."""
    if namespace is None:
        return set()
    from netdp.tasks import param_specs

    keys: set[str] = set()
    files = [getattr(namespace, "config", None)]
    if command == "sweep":
        files.append(getattr(namespace, "spec", None))
    for path in files:
        with contextlib.suppress(Exception):  # an unreadable file is refused as itself
            if Path(path).is_file() and Path(path).stat().st_size < 1 << 22:  # not a FIFO
                keys |= _keys(tomllib.loads(Path(path).read_text(encoding="utf-8-sig")))
    for item in getattr(namespace, "set", None) or []:
        keys.add(str(item).partition("=")[0].strip())
    specs = param_specs()
    out = set()
    for key in keys:
        name = key.replace("-", "_")
        out.add("--" + name.replace("_", "-"))
        if name in specs:
            spec = specs[name]
            out.add("--" + (spec.pair or spec.flag or name.replace("_", "-")))
    return out


def _keys(table: dict) -> set[str]:
    """The keys of a TOML table, at every depth (a spec's ``[fixed]``, ``[grid]``)."""
    out = set()
    for key, value in table.items():
        out.add(str(key))
        if isinstance(value, dict):
            out |= _keys(value)
    return out


def named(line: str, command: str) -> str | None:
    """The parameter a refusal line names (``None``: a line of :data:`NAMELESS`)."""
    prefix = f"netdp {command}: error: "
    assert line.startswith(prefix), line
    text = line[len(prefix):]
    if text.startswith(NAMELESS):
        return None
    if text.startswith("argument "):  # argparse: "argument --steps/-T: ..."
        return text[len("argument "):].split(": ", 1)[0]
    found = re.match(r"ambiguous option: (\S+) could match", text)
    if found:
        return found.group(1)
    head = text.split(": ", 1)[0]
    return head if ": " in text and " " not in head else text.split(" ", 1)[0]


def check_names(argv: list[str], line: str) -> None:
    """Assert that the refusal ``line`` of ``netdp argv`` names a parameter that was given
    (the rule of this module's docstring)."""
    command = argv[0]
    name = named(line, command)
    if name is None or name in ENVIRONMENT:
        return
    asks = line.split(f"{name}: ", 1)[-1].startswith("give ")
    if asks and (command, name.split("/")[0]) in MISSING:
        return  # absent, or given and named for its value: right either way
    namespace, given = _parse(command, argv)
    parser = _parser(command)
    if name.startswith("-"):
        spellings = set(name.split("/"))
        action = next((a for a in parser._actions if spellings & set(a.option_strings)), None)
        if action is not None:
            spellings |= set(action.option_strings)
        given |= _config_flags(command, namespace)
        assert spellings & given, (
            f"names {name}, not given: netdp {' '.join(argv)}", line)
        return
    positionals = [a for a in parser._actions if not a.option_strings]
    if namespace is None:  # argparse's own refusal of a positional: "argument DIR: ..."
        assert any(name in (a.metavar, a.dest) for a in positionals), (
            f"names {name}, not a parameter of {command}: netdp {' '.join(argv)}", line)
        return
    for action in positionals:
        value = getattr(namespace, action.dest, None)
        if value in (None, action.default, []):
            continue  # not given
        values = value if isinstance(value, list) else [value]
        if name in (action.metavar, action.dest) or name in {str(v) for v in values} | {
                str(Path(v)) for v in values if v}:
            return
    raise AssertionError(f"names {name}, not a given positional: netdp {' '.join(argv)}",
                         line)
