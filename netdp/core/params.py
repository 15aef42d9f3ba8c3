"""Parameters as data: each config field declares its type, range, flag and help once.

A config record is a frozen dataclass whose fields are made with :func:`param`. The
declaration drives everything a parameter needs: the type and range checks (one message
style everywhere: the parameter's name, the allowed range, the value given), the command
line flag and its help text, and the TOML / sweep coercions. Nothing here imports more
than the standard library.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from netdp.core.arguments import plain
from netdp.core.errors import InputError

KINDS = (bool, int, float, str, tuple)

# Documented limits of the physical parameters: beyond them the noise scales, e^epsilon or
# the data's sums leave float range (or the noise vanishes below float resolution), so a
# run would overflow instead of meaning anything.
MIN_EPSILON = 1e-6
"""Smallest LDP level: the noise scale 1/epsilon times a range of 1e15 stays finite."""
MAX_EPSILON = 1e6
"""Largest LDP level of an additive mechanism."""
ORACLE_MAX_EPSILON = 700.0
"""Largest level of one frequency-oracle report: e^700 ~ 1e304 keeps its probabilities
finite."""
MIN_SIGMA, MAX_SIGMA = 1e-6, 1e6
"""Range of a noise std given in units of the sensitivity."""
MAX_VALUE = 1e15
"""Largest magnitude of a data value or range end: sums of a million stay exact-ish."""
MIN_WIDTH = 1e-300
"""Narrowest range of the values (its width is the sensitivity): the noise's σ, at least
7e-4 times the width (ε = 1e6), stays a normal float."""
MAX_SCALE = 1e6
"""Largest clipping norm, step size or similar scale of a model."""
MAX_TIME = 1e12
"""Largest duration (service time, timeout, mean time to a crash), in hop-latency units:
sums of a million of them stay finite and distinct."""
MAX_PERIOD = 10**12
"""Largest snapshot period of a time-varying graph, in steps or rounds: longer than any
run netdp's time estimate lets through, and far inside the int64 arithmetic of the
snapshot schedule."""


@dataclass(frozen=True)
class Param:
    """How one parameter is typed, checked, given on the command line and explained.

    Attributes
    ----------
    help
        One sentence for ``--help`` (without the default: it is appended).
    kind
        The value's type: ``bool``, ``int``, ``float``, ``str`` or ``tuple`` (of ``str``).
    optional
        Whether ``None`` is allowed (``None`` means "resolve from the others").
    low, high
        Inclusive bounds of a number (``low_open`` / ``high_open``: exclusive).
    choices
        Allowed values of a ``str`` (or of each item of a ``tuple``).
    flag
        The long flag without dashes (default: the field name with ``-`` for ``_``).
    short
        Short flags (``("-n",)``).
    metavar
        The value's name in ``--help``.
    group
        The ``--help`` section the flag is listed in.
    default_text
        How ``--help`` states the default (default: the default value itself).
    pair
        Two fields given by one flag (``low`` and ``high`` by ``--range LOW HIGH``): the
        flag's name; both fields declare it.
    expects
        What the error messages say is expected, where the kind alone says too little
        (``a name or a file path``).
    """

    help: str
    kind: type
    optional: bool = False
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] | None = None
    flag: str | None = None
    short: tuple[str, ...] = ()
    metavar: str | None = None
    group: str = ""
    default_text: str | None = None
    pair: str | None = None
    expects: str | None = None

    def allowed(self) -> str:
        """The allowed values, as the error messages state them."""
        if self.expects is not None:
            return self.expects
        if self.choices is not None:
            return f"one of {', '.join(self.choices)}"
        if self.kind is bool:
            return "true or false"
        if self.kind is str:
            return "a string"
        noun = "an integer" if self.kind is int else "a finite number"
        if self.low is not None and self.high is not None:
            lo, hi = ("(" if self.low_open else "["), (")" if self.high_open else "]")
            where = "the open interval" if self.low_open and self.high_open else "the range"
            return f"{noun} in {where} {lo}{_num(self.low)}, {_num(self.high)}{hi}"
        if self.low is not None:
            return f"{noun} {'>' if self.low_open else '>='} {_num(self.low)}"
        if self.high is not None:
            return f"{noun} {'<' if self.high_open else '<='} {_num(self.high)}"
        return noun


def param(default: Any, help: str, *, kind: type | None = None, **spec: Any) -> Any:
    """A dataclass field with its :class:`Param` declaration (see there for ``spec``)."""
    if kind is None:
        if default is None:
            raise TypeError("param: give kind= when the default is None")
        kind = tuple if isinstance(default, tuple) else type(default)
    if kind not in KINDS:
        raise TypeError(f"param: kind must be one of {KINDS}, got {kind}")
    spec.setdefault("optional", default is None)
    return field(default=default, metadata={"param": Param(help=help, kind=kind, **spec)})


def params_of(record: type | object) -> Iterator[tuple[str, Param, Any]]:
    """``(name, declaration, default)`` of every declared field, in order."""
    for f in dataclasses.fields(record):  # type: ignore[arg-type]
        if "param" in f.metadata:
            yield f.name, f.metadata["param"], f.default


def check_value(name: str, spec: Param, value: Any) -> Any:
    """``value`` if it has the declared type and range, else :class:`InputError`.

    ``int`` values are accepted for a ``float`` parameter (and returned as ``float``),
    lists for a ``tuple`` one (returned as a tuple), numpy scalars as the Python values
    they hold, an :class:`os.PathLike` for a ``str`` one as its name; nothing else is
    converted.
    """
    flag = spec.pair or spec.flag or name.replace("_", "-")
    if value is None:
        if spec.optional:
            return None
        raise InputError(flag, f"must be {spec.allowed()} (got None)")
    kind = spec.kind
    value = _standing_for(kind, value)
    if kind is bool:
        ok = isinstance(value, bool)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind is float:
        ok = (isinstance(value, int | float) and not isinstance(value, bool)
              and _finite(value))
        value = float(value) if ok else value
    elif kind is str:
        ok = isinstance(value, str)
    else:
        ok = isinstance(value, tuple | list) and all(isinstance(v, str) for v in value)
        value = tuple(value) if ok else value
    if not ok:
        named = f" ({', '.join(spec.choices)})" if spec.choices else ""
        what = f"a list of names{named}" if kind is tuple else spec.allowed()
        raise InputError(flag, f"must be {what} (got {_got(value)})")
    if spec.choices is not None:
        for item in (value if kind is tuple else (value,)):
            if item not in spec.choices:
                raise InputError(flag, f"must be one of {', '.join(spec.choices)} "
                                       f"(got {item!r})")
    if kind in (int, float):
        too_low = spec.low is not None and (value < spec.low
                                            or (spec.low_open and value == spec.low))
        too_high = spec.high is not None and (value > spec.high
                                              or (spec.high_open and value == spec.high))
        if too_low or too_high:
            raise InputError(flag, f"must be {spec.allowed()} (got {_got(value)})")
    return value


class Section:
    """Base of a task's config section: a frozen dataclass of :func:`param` fields.

    A section validates its own fields on construction (types and ranges from the
    declarations, then :meth:`validate` for the checks that involve several fields).
    ``task`` and ``protocol`` name the task that reads it.
    """

    task: ClassVar[str] = ""
    protocol: ClassVar[str] = "walk"
    if TYPE_CHECKING:  # every concrete section is a dataclass (for dataclasses.replace)
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    def __post_init__(self) -> None:
        for name, spec, _ in params_of(self):
            object.__setattr__(self, name, check_value(name, spec, getattr(self, name)))

    def validate(self, config: Any) -> None:
        """Checks that involve several fields, or the common ones (``config``)."""

    @classmethod
    def objects(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Objects given from Python for some parameters (an array where a file is named
        on the command line): taken out of ``data``, whose parameter then records what
        they were, and returned as the section's other fields. None by default."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON / TOML ready (tuples as lists)."""
        return {name: _plain(getattr(self, name)) for name, _, _ in params_of(self)}


def defaults_differ(record: object, name: str) -> bool:
    """Whether field ``name`` of ``record`` holds something else than its default."""
    f = next(f for f in dataclasses.fields(record) if f.name == name)  # type: ignore[arg-type]
    return bool(getattr(record, name) != f.default)


def coerce(spec: Param, value: Any) -> Any:
    """TOML ``1`` for a float parameter becomes ``1.0`` (and ``200.0`` for an integer one
    ``200``), a list (or comma-separated text)
    a tuple: the forms the checks accept, so that equal configs hash alike. Anything else
    is left to the checks. A numpy scalar is the Python value it holds, an
    :class:`os.PathLike` for a text parameter its file name."""
    value = _standing_for(spec.kind, value)
    if spec.kind is float and isinstance(value, int) and not isinstance(value, bool) \
            and _finite(value):  # 10**400: left to the check (not a finite number)
        return float(value)
    if spec.kind is int and isinstance(value, float) and value.is_integer() \
            and abs(value) < 2.0**63:  # TOML's `steps = 200.0`
        return int(value)
    if spec.kind is tuple and isinstance(value, list):
        return tuple(value)
    if spec.kind is tuple and isinstance(value, str):  # "local,network" from a flag
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return value


def _standing_for(kind: type, value: Any) -> Any:
    """What ``value`` stands for: a numpy scalar's Python value; for a ``str`` parameter,
    an :class:`os.PathLike`'s name (``pathlib.Path("edges.txt")``)."""
    value = plain(value)
    if kind is str and isinstance(value, os.PathLike):
        name = os.fspath(value)
        return name if isinstance(name, str) else value
    return value


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _got(value: Any) -> str:
    """A value as a message quotes it: a huge integer as ``1e+30``, not in full."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**15:
        return f"{float(value):.3g}" if abs(value) < 10**308 else "a number beyond 1e308"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _num(x: float) -> str:
    if isinstance(x, int) and x >= 2**32 and (x + 1) & x == 0:
        return f"2^{(x + 1).bit_length() - 1} - 1"
    return f"{x:g}" if isinstance(x, float) or abs(x) >= 10**15 else str(x)


Validator = Callable[[Any], None]
ParamTable = Mapping[str, Param]


def _finite(value: int | float) -> bool:
    """Whether a number is a finite float's: an int beyond 1.8e308 is not (``float()``
    of it raises, ``math.isfinite`` too)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return -sys.float_info.max <= value <= sys.float_info.max
