"""Reading the files a user names: every failure is one :class:`InputError` line.

A file a flag names can be missing, a folder, binary junk, truncated or nested beyond any
parser's stack (``[[[[...`` a hundred thousand deep). Each reader here turns what the
standard library raises for those (``OSError``, ``UnicodeDecodeError``, ``csv.Error``,
``tomllib.TOMLDecodeError``, ``json.JSONDecodeError``, ``RecursionError``) into
``InputError(param, ...)`` that names the flag and the file, never the file's content.
Standard library only.
"""

from __future__ import annotations

import csv
import json
import os
import stat
import sys
import tomllib
from pathlib import Path
from typing import Any

from netdp.core.errors import InputError, shorten


def check_regular(path: str | os.PathLike[str], param: str, what: str = "a file",
                  positional: bool | None = None) -> None:
    """Refuse, before it is opened, what ``path`` names when it is not a regular file: a
    folder, a FIFO (a read would block for ever), a device (``/dev/zero``: read until
    memory runs out) or a socket; :class:`InputError` on ``param`` naming it. A name that
    names nothing passes: opening it says so.

    Examples
    --------
    >>> try:
    ...     check_regular("/dev/zero", "LOG", "a log file")
    ... except InputError as err:
    ...     print(err.message)
    cannot read '/dev/zero': a device, not a regular file; give a log file
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):  # missing, a name too long, a NUL: the reader says so
        return
    if stat.S_ISREG(mode):
        return
    kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "a device")
    shown = shorten(repr(os.fspath(path)), 200)
    raise InputError(param, f"cannot read {shown}: {kind}, not a regular file; give {what}",
                     positional)


def read_own_text(path: str | Path, param: str, what: str) -> str:
    """The text of a file netdp wrote into a folder the user named (a sweep's manifest,
    row files and spec copy). netdp writes no link there: a symbolic link names a file the
    user did not name, and is refused unread (as is what is not a regular UTF-8 file),
    naming ``param`` and saying ``what`` the file should be.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> os.symlink("/etc/hostname", os.path.join(folder, "spec.toml"))
    >>> try:
    ...     read_own_text(os.path.join(folder, "spec.toml"), "PATH", "the sweep's spec")
    ... except InputError as err:
    ...     print(err.message.split(": ", 1)[1])
    a symbolic link, where netdp keeps the sweep's spec
    """
    shown = shorten(repr(os.fspath(path)), 200)
    if os.path.islink(path):
        raise InputError(param, f"{shown}: a symbolic link, where netdp keeps {what}")
    return read_text(path, param, what)


def read_text(path: str | Path, param: str, what: str = "a UTF-8 text file") -> str:
    """The text of ``path``; :class:`InputError` on ``param`` when it cannot be read (what
    is not a regular file refused before it is opened: :func:`check_regular`)."""
    check_regular(path, param, what)
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(param, f"cannot read {str(path)!r}: not {what}") from None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise InputError(param, f"cannot read {str(path)!r}: {reason}") from None


def read_csv_rows(path: str | Path, param: str) -> list[list[str]]:
    """The rows of a CSV file (``newline=""``, UTF-8); :class:`InputError` on ``param``."""
    text = read_text(path, param, "a UTF-8 CSV file")
    try:
        return list(csv.reader(text.splitlines()))
    except csv.Error as exc:  # a cell over the field limit, a NUL byte
        raise InputError(param, f"cannot read {str(path)!r} as CSV: "
                                f"{str(exc).splitlines()[0][:80]}") from None


def _nesting(text: str) -> None:
    """Refuse text nested deeper than a parser's recursion allows, before parsing."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(depth - 1, 0)
    if deepest >= MAX_NESTING:
        raise RecursionError(deepest)


#: Deepest nesting of brackets a TOML or JSON input may have (far beyond any real file).
MAX_NESTING = min(200, sys.getrecursionlimit() // 4)


def loads_toml(text: str) -> dict[str, Any]:
    """``tomllib.loads`` with its every failure a :class:`ValueError`: nesting deeper than
    :data:`MAX_NESTING` (refused before parsing; a :class:`RecursionError` otherwise) and
    an integer beyond Python's digit limit for ``int(str)`` (``ValueError``) included."""
    if text.count("[") + text.count("{") >= MAX_NESTING:
        try:
            _nesting(text)
        except RecursionError:
            raise ValueError(f"nested deeper than {MAX_NESTING} levels") from None
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_NESTING} levels") from None


def parse_toml(text: str, param: str, name: str) -> dict[str, Any]:
    """``text`` (from file ``name``) as TOML; :class:`InputError` on ``param``."""
    try:
        if text.count("[") + text.count("{") >= MAX_NESTING:
            _nesting(text)
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(param, f"{name} is not valid TOML: {exc}") from None
    except ValueError:  # an integer beyond int(str)'s digit limit
        raise InputError(param, f"{name} is not valid TOML: an integer of more than "
                                f"{sys.get_int_max_str_digits()} digits") from None
    except RecursionError:
        raise InputError(param, f"{name} is not valid TOML: nested deeper than "
                                f"{MAX_NESTING} levels") from None


def read_toml(path: str | Path, param: str) -> dict[str, Any]:
    """The TOML document of file ``path``; :class:`InputError` on ``param``."""
    return parse_toml(read_text(path, param, "a UTF-8 text (TOML) file"), param, str(path))


#: Most digits of an integer in a JSON input: beyond, no float holds it (``1.8e308``).
MAX_INT_DIGITS = 309


def json_int(text: str) -> int:
    """A JSON integer; :class:`ValueError` where no float holds it (more than
    :data:`MAX_INT_DIGITS` digits, or beyond ``1.8e308``): no figure is that large, and a
    float of it overflows."""
    digits = len(text.lstrip("-"))
    value = int(text) if digits <= MAX_INT_DIGITS else None
    if value is None or (digits == MAX_INT_DIGITS and abs(value) > 1.7976931348623157e308):
        raise ValueError("an integer beyond any float (1.8e308)")
    return value


def read_json(path: str | Path, param: str, what: str = "a JSON file") -> Any:
    """The JSON document of file ``path``; :class:`InputError` on ``param``."""
    text = read_text(path, param, what)
    try:
        if text.count("[") + text.count("{") >= MAX_NESTING:
            _nesting(text)
        return json.loads(text, parse_int=json_int)
    except ValueError as exc:
        raise InputError(param, f"cannot read {what} from {str(path)!r}: "
                                f"{str(exc).splitlines()[0][:80]}") from None
    except RecursionError:
        raise InputError(param, f"cannot read {what} from {str(path)!r}: nested deeper "
                                f"than {MAX_NESTING} levels") from None
