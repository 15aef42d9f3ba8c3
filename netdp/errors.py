"""The one exception type for bad input."""

from __future__ import annotations


class InputError(ValueError):
    """A parameter is outside its allowed range.

    Parameters
    ----------
    param
        The parameter's name as the user wrote it (``nodes``, ``epsilon``, ...).
    message
        What is allowed, and what was given.
    """

    def __init__(self, param: str, message: str) -> None:
        self.param = param
        self.message = message
        super().__init__(f"{param}: {message}")


def check(condition: bool, param: str, message: str) -> None:
    """Raise :class:`InputError` unless ``condition`` holds."""
    if not condition:
        raise InputError(param, message)
