"""Checks of the arguments of the library's public functions (``netdp.simulate``,
``netdp.account``, ``netdp.attack``): a value of the wrong type is an
:class:`~netdp.core.errors.InputError` naming the argument, never a ``TypeError`` from
deep inside. What stands for a value is accepted as that value: a numpy scalar
(``np.int64(6)``, ``np.float32(0.5)``, ``np.bool_(True)``) as the Python number or
bool, an :class:`os.PathLike` (``pathlib.Path``) as a file name.
"""

from __future__ import annotations

import numbers
import os
from typing import Any

from netdp.core.errors import InputError


def plain(value: Any) -> Any:
    """A numpy scalar (or 0-d array) as the Python value it holds; anything else as is."""
    if type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0:
        return value.item()
    return value


def integer(value: Any, name: str) -> int:
    """``value`` as an ``int`` (a numpy integer passes; a bool or a float does not)."""
    value = plain(value)
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    raise InputError(name, f"must be an integer (got {_shown(value)})")


def real(value: Any, name: str) -> float:
    """``value`` as a ``float`` (an integer or a numpy number passes; a bool does not)."""
    value = plain(value)
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:  # an int beyond 1.8e308
            raise InputError(name, "must be a number within a float's range (got an "
                             "integer beyond 1.8e308)") from None
    raise InputError(name, f"must be a number (got {_shown(value)})")


def flag(value: Any, name: str, optional: bool = False) -> bool | None:
    """``value`` as a ``bool`` (``None`` too where ``optional``); ``1`` or ``"yes"`` do
    not pass."""
    value = plain(value)
    if isinstance(value, bool) or (optional and value is None):
        return value
    allowed = "True, False or None" if optional else "True or False"
    raise InputError(name, f"must be {allowed} (got {_shown(value)})")


def text(value: Any, name: str, what: str = "a string") -> str:
    """``value`` as a ``str``."""
    value = plain(value)
    if isinstance(value, str):
        return value
    raise InputError(name, f"must be {what} (got {_shown(value)})")


def path(value: Any, name: str) -> str:
    """A file name: a ``str`` or an :class:`os.PathLike` naming one (not bytes)."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        return value
    raise InputError(name, f"must be a file name, a str or an os.PathLike such as "
                     f"pathlib.Path (got {_shown(value)})")


def _shown(value: Any) -> str:
    shown = repr(value)
    return f"{type(value).__name__} {shown[:40] + '...' if len(shown) > 43 else shown}"
