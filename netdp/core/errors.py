"""The one exception type for bad input."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from contextlib import contextmanager


class InputError(ValueError):
    """A parameter is outside its allowed range.

    Parameters
    ----------
    param
        The parameter's name as the user wrote it (``nodes``, ``epsilon``, ...), or a
        positional argument's name as the usage shows it (``DIR``, ``SPEC.toml``).
    message
        What is allowed, and what was given.
    positional
        Whether ``param`` is a positional argument, shown as it is (``DIR: ...``) rather
        than as a flag (``--nodes: ...``). Default: a name that starts with an uppercase
        letter or ``<`` is positional.
    """

    def __init__(self, param: str, message: str, positional: bool | None = None) -> None:
        self.param = param
        self.message = message
        self.positional = is_positional(param) if positional is None else positional
        super().__init__(f"{param}: {message}")

    @property
    def label(self) -> str:
        """The parameter as the command line shows it: ``--flag-name`` or ``DIR``."""
        if self.positional:
            return self.param
        return f"--{self.param.replace('_', '-')}"

    def line(self, command: str) -> str:
        """The one-line report: ``netdp COMMAND: error: --PARAM: MESSAGE`` (``PARAM:``
        alone for a positional argument)."""
        return (f"netdp {command}: error: {self.label}: "
                f"{shorten_quotes(escape_breaks(self.message))}")

    def __reduce__(self):  # pickles whole (dask sends exceptions between processes)
        return type(self), (self.param, self.message, self.positional)


#: The characters ``str.splitlines`` breaks a line at: echoed in a message, they are escaped.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def escape_breaks(text: str) -> str:
    """``text`` stripped, its line breaks (any of :data:`LINE_BREAKS`, e.g. in a user's
    input echoed back) written as escapes: the message stays one line."""
    return "".join(repr(c)[1:-1] if c in LINE_BREAKS else c for c in text.strip())


#: A quoted value of over 60 characters (an echo of the user's input, in an error line).
#: A quote opens after a space, a bracket, ``=`` or ``:`` and closes before one (an
#: apostrophe in a word, ``the sweep's``, is no quote).
_QUOTE = re.compile(r"""(?:^|(?<=[\s(\[=:]))(['"])((?:(?!\1)[^\n])+)\1(?=$|[\s),.:;\]])""")


def shorten_quotes(text: str, limit: int = 200) -> str:
    """``text`` with each quoted value of over ``limit`` characters cut to ``limit`` (an
    echo of a user's long input stays a glance, and the line stays one line).

    Examples
    --------
    >>> shorten_quotes("bad value (got '" + "x" * 70 + "'); the sweep's spec", 10)
    "bad value (got 'xxxxxxx...'); the sweep's spec"
    """
    return _QUOTE.sub(lambda m: m[1] + shorten(m[2], limit) + m[1], text)


def is_positional(param: str) -> bool:
    """Whether ``param`` names a positional argument: ``DIR``, ``SPEC.toml``, ``<file>``."""
    return param[:1].isupper() or param.startswith("<")


def check(condition: bool, param: str, message: str) -> None:
    """Raise :class:`InputError` unless ``condition`` holds."""
    if not condition:
        raise InputError(param, message)


def shorten(text: str, limit: int = 60) -> str:
    """``text`` stripped, cut to ``limit`` characters with ``...`` when longer: a user's
    input quoted in a one-line error."""
    text = text.strip()
    return text if len(text) <= limit else text[:limit - 3] + "..."


def one_line(exc: BaseException, limit: int = 120) -> str:
    """An exception's message on one line (runs of white space made one space), cut to
    ``limit`` characters at a word's end where one is in its second half."""
    text = " ".join(str(exc).split())
    if len(text) <= limit:
        return text
    cut = text[:limit - 3]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:") + "..."


#: A check's echo of the value it refused: `` (got 'x')``, `` (got -5.5)``.
_GOT = re.compile(r" \(got (?:[^()]|\([^()]*\))*\)")


def without_value(message: str) -> str:
    """``message`` without its ``(got ...)``: the check's words and range, not the value."""
    return _GOT.sub("", message, count=1)


@contextmanager
def values_from_file(names: Collection[str], what: str = "") -> Iterator[None]:
    """Within the block, an :class:`InputError` on a parameter of ``names`` (values read
    from a file: a ``--config``, a sweep spec) loses its ``(got ...)``: an error line names
    the parameter and the allowed range, never a file's content (issue 39); ``what``
    (``" in run.toml"``) is added to say where the value came from."""
    try:
        yield
    except InputError as exc:
        if exc.param.replace("-", "_") not in names:
            raise
        raise InputError(exc.param, without_value(exc.message) + what,
                         exc.positional) from None
