"""Command line: ``netdp`` / ``python -m netdp``. Parses, calls the library, renders.

Only the chosen command's parser is built, and each command imports what it uses when it
runs: ``netdp --help`` loads nothing heavier than argparse.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import io
import math
import os
import re
import signal
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

from netdp.core import progress
from netdp.core._cache import warn_when_compiling
from netdp.core.errors import InputError, shorten, shorten_quotes
from netdp.core.reading import loads_toml
from netdp.core.version import __version__

#: name -> (one-line help, module that adds the command's arguments with ``register``)
COMMANDS: dict[str, tuple[str, str]] = {
    "simulate": ("run one protocol and report its utility and privacy", "netdp.run.cli.simulate"),
    "account": ("the pairwise privacy of a deployment's log of hops or messages",
                "netdp.run.cli.account"),
    "audit": ("an empirical lower bound on a randomizer's epsilon", "netdp.run.cli.audit"),
    "attack": ("poisoning attacks on a frequency oracle vs theory", "netdp.run.cli.attack"),
    "bounds": ("print theoretical privacy curves over a grid of n", "netdp.run.cli.info"),
    "topologies": ("list the named topologies", "netdp.run.cli.info"),
    "sweep": ("run a grid of simulations into a result table", "netdp.run.sweep.commands"),
    "results": ("summarise or export a sweep's result table", "netdp.run.sweep.commands"),
    "plot": ("plot a sweep's results or one run's pairwise losses",
             "netdp.run.sweep.plot_command"),
    "report": ("an HTML page of a run's JSON or a sweep's folder", "netdp.run.cli.report"),
}
DESCRIPTION = ("Simulate network differential privacy: a token walks a graph, every node "
               "perturbs its own data, and netdp reports the utility of the result and how "
               "much each node leaks to each other node.")
EPILOG = "Run `netdp COMMAND --help` for a command's options and examples; see docs/index.md."


class Parser(argparse.ArgumentParser):
    """argparse, but errors are one line (no usage dump, a long value quoted in part) and
    exit with status 2, an option is never abbreviated (``--set`` is not ``--set-size``),
    and negative numbers in scientific notation (``--range -1e3 1e3``) are values."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

        self._negative_number_matcher = re.compile(
            r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-inf(inity)?$", re.IGNORECASE)

    def error(self, message: str) -> NoReturn:
        head, sep, rest = message.partition("unrecognized arguments: ")
        message = shorten_quotes(head + sep + (shorten(rest) if sep else ""), 60)
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """argparse's, but a flag given twice is an error (argparse keeps the last
        silently), except the flags meant to repeat (``--accountant``, ``--set``...)."""
        self._seen: list[argparse.Action] = []
        out = super().parse_known_args(args, namespace)
        counts = Counter(self._seen)
        for action, count in counts.items():
            if count > 1 and not (isinstance(action, REPEATABLE)
                                  or getattr(action, "repeatable", False)):
                self.error(f"{max(action.option_strings, key=len)} given {count} times; give "
                           f"it once (the last would win)")
        return out

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        value = super()._get_values(action, arg_strings)
        if action.nargs is None and action.option_strings and value == []:  # `--flag=--`
            self.error(f"argument {max(action.option_strings, key=len)}: expected one value "
                       f"(got '--')")
        return value

    def _parse_optional(self, arg_string: str) -> Any:
        found = super()._parse_optional(arg_string)
        first = found[0] if isinstance(found, list) and len(found) == 1 else found  # 3.12+
        if isinstance(first, tuple) and first and isinstance(first[0], argparse.Action):
            getattr(self, "_seen", []).append(first[0])
        return found


#: Actions that a command line may give several times (and any with ``repeatable = True``).
REPEATABLE = (argparse._AppendAction, argparse._AppendConstAction, argparse._CountAction,
              argparse._ExtendAction)


def node(text: str) -> int | str:
    """A node: its id (a whole number) or its label on a labelled graph (other text),
    mapped to its id once the graph is built (:mod:`netdp.graphs.node_names`)."""
    text = text.strip()
    if not text:
        raise argparse.ArgumentTypeError("invalid node: give an id or a label")
    try:
        return int(text)
    except ValueError:
        return text


def integer(text: str) -> int:
    """An integer, also written as ``1e6`` or ``1_000_000`` (but not ``1.5``)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid integer: {shorten(text, 40)!r}") \
            from None
    if not math.isfinite(value) or value != int(value):
        raise argparse.ArgumentTypeError(f"invalid integer: {shorten(text, 40)!r}")
    return int(value)


def parse_sets(items: Sequence[str]) -> dict[str, Any]:
    """``--set KEY=VALUE`` items as parameters: values read as TOML (a bare word is a
    string; a parameter that takes text, such as ``loss`` or ``latency``, takes the value
    as written), keys with ``_`` for ``-``."""
    from netdp.tasks import param_specs



    specs = param_specs()
    params: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError("set", f"expects KEY=VALUE (got {item!r})")
        name, text = key.strip().replace("-", "_"), value.strip()
        if name in specs and specs[name].kind is str and not text.startswith(('"', "'")):
            params[name] = text
            continue
        try:
            params[name] = loads_toml(f"v = {text}")["v"]
        except ValueError:  # not TOML (nested too deep, an integer too long): as written
            params[name] = text
    return params


def number(text: str) -> float:
    """A number (``nan`` and ``inf`` pass: the parameter's check names them)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number: {shorten(text, 40)!r}") \
            from None


def build_parser(only: str | None = "*") -> argparse.ArgumentParser:
    """The ``netdp`` parser with the arguments of command ``only`` (``"*"``: every
    command, ``None``: none, for the top-level help)."""
    parser = Parser(prog="netdp", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"netdp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    modules = dict.fromkeys(module for _, module in COMMANDS.values()) if only == "*" \
        else ([COMMANDS[only][1]] if only in COMMANDS else [])
    for module in modules:  # each module adds its command(s) with its `register`
        importlib.import_module(module).register(sub)
    for command in sub.choices.values():  # every command: one switch for progress bars
        command.add_argument("--quiet", "-q", action="store_true", default=False,
                             help="no progress bars (they are shown only on a terminal, "
                             "for steps that last over 2 s)")
    for name, (summary, _) in COMMANDS.items():  # the others: a line in the top-level help
        if name not in sub.choices:
            sub.add_parser(name, help=summary)
    order = list(COMMANDS)
    for action in parser._subparsers._group_actions if parser._subparsers else ():
        action._choices_actions.sort(key=lambda a: order.index(a.dest))  # type: ignore
    return parser


#: Failures of the output itself (a full disk, a file too large, a device error): one line.
OUTPUT_ERRORS = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EIO, errno.EBADF})


class ClosedStdout(io.TextIOBase):
    """``sys.stdout`` when the process started with descriptor 1 closed (Python then sets
    it to ``None`` and every ``print`` is dropped): a write fails as a closed descriptor."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")

    def fileno(self) -> int:
        return 1


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as an interrupt is, so that every cleanup runs
    (the temporary files of :mod:`netdp.core.files` are removed, nothing half-written is
    left)."""


def _terminate(signum: int, frame: Any) -> NoReturn:
    raise Terminated


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread (elsewhere,
    or where SIGTERM is ignored or already handled, nothing changes)."""
    try:
        handled = signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
        old = signal.signal(signal.SIGTERM, _terminate) if handled else None
    except ValueError:  # not the main thread
        old = None
    try:
        yield
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)


@contextmanager
def no_backend() -> Iterator[None]:
    """Within the block, ``MPLBACKEND`` is unset: netdp draws on matplotlib's
    :class:`~matplotlib.figure.Figure`, which renders by the file's format and never needs
    a GUI backend, while a bad value (``ucx``, a typo) made matplotlib's import fail with
    a traceback. The command line ignores it (docs/security.md)."""
    saved = os.environ.pop("MPLBACKEND", None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ["MPLBACKEND"] = saved


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in argv if not a.startswith("-")), None)
    command = first if first in COMMANDS else None
    parser = build_parser(command)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a one-line usage error
        return int(exc.code or 0)
    handler = getattr(args, "handler", None)
    args.argv = argv  # the command as typed, for the pages that show it
    if handler is None:
        parser.print_help()
        return 0
    if sys.stdout is None:  # started with stdout closed: a print must fail, not vanish
        sys.stdout = ClosedStdout()
    warn_when_compiling()  # an unusable numba cache: one line before the first compilation
    try:
        with sigterm_raises(), progress.quiet(bool(getattr(args, "quiet", False))), \
                no_backend():
            status = int(handler(args))
        if sys.stdout is not None:
            sys.stdout.flush()  # a full device fails here, not at exit
        return status
    except InputError as exc:
        print(exc.line(args.command), file=sys.stderr)
        return 2
    except MemoryError:
        print(f"netdp {args.command}: error: ran out of memory; lower the sizes (--nodes, "
              "--steps, --domain, ...)", file=sys.stderr)
        return 2
    except Terminated:
        print("netdp: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("netdp: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `netdp bounds | head`: the reader left, stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        if exc.errno not in OUTPUT_ERRORS:
            raise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing at exit
        reason = exc.strerror or type(exc).__name__
        print(f"netdp {args.command}: error: cannot write the output: {reason}",
              file=sys.stderr)
        return 1
