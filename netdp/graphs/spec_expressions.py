"""The arithmetic of topology specs: a size or a generator argument written as an expression of
``n`` (``log(n, 2)``, ``ceil(sqrt(n))``), evaluated over a small whitelisted grammar with
bounded length, exponents and magnitudes: never Python's ``eval``."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from netdp.core.errors import InputError, check

if TYPE_CHECKING:

    pass

if TYPE_CHECKING:

    pass


_FUNCTIONS: dict[str, tuple[Callable[..., Any], int, int | None]] = {
    "log": (math.log, 1, 2), "sqrt": (math.sqrt, 1, 1), "min": (min, 2, None),
    "max": (max, 2, None), "ceil": (math.ceil, 1, 1), "floor": (math.floor, 1, 1)}
_CONSTANTS = {"pi": math.pi, "e": math.e}
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
              ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv,
              ast.Mod: operator.mod, ast.Pow: operator.pow}
_GRAMMAR = ("numbers, n, pi, e, + - * / // % ** and " + ", ".join(_FUNCTIONS) + "()")
_MAX_EXPRESSION = 256  # characters
_MAX_EXPONENT = 64
_MAX_MAGNITUDE = 1e18  # of every value met while evaluating


class _NotArithmetic(Exception):
    """The expression uses something else than arithmetic in n."""


class _Refused(Exception):
    """The expression is arithmetic, but its value is out of bounds at this n."""


def evaluate(value, n: int, label: str, key: str):
    """Evaluate a spec parameter: a number, a boolean, or an arithmetic expression in ``n``.

    Expressions are evaluated over their syntax tree, never by ``eval``: numbers, ``n``,
    ``pi``, ``e``, ``+ - * / // % **``, unary minus and the functions ``log`` (with an
    optional base), ``sqrt``, ``min``, ``max``, ``ceil``, ``floor``. Every value met must
    be a finite real number of magnitude at most 1e18, and exponents at most 64 in
    magnitude, so no expression can take long or grow a huge number.
    """
    if isinstance(value, bool):
        return value
    head = f"{label}: parameter {key} of [params]"  # its text never echoed (issue 39)
    if isinstance(value, int | float):
        try:
            return _real(value)
        except _Refused as exc:
            raise InputError("topology", f"{head}: {exc}") from None
    check(isinstance(value, str), "topology", f"{label}: parameter {key} must be a number, "
          f"a boolean or an expression in n (got {toml_type(value)})")
    check(len(value) <= _MAX_EXPRESSION, "topology",
          f"{head}: longer than {_MAX_EXPRESSION} characters")
    try:
        tree = ast.parse(value.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # ValueError: a NUL
        raise InputError("topology", f"{head} is not an expression in n") from None
    try:
        return _arithmetic(tree.body, n)
    except _NotArithmetic as exc:
        raise InputError("topology", f"{head} is not an expression in n: {exc}") from None
    except (_Refused, ArithmeticError, ValueError) as exc:  # ValueError: math domain error
        raise InputError("topology", f"{head} at n = {n}: {exc}") from None
    except RecursionError:
        raise InputError("topology", f"{head} is nested too deeply") from None


def _arithmetic(node: ast.AST, n: int) -> int | float:
    """The value of one node of an expression's syntax tree (see :func:`evaluate`)."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise _NotArithmetic("a constant that is not a number")
        return _real(node.value)
    if isinstance(node, ast.Name):
        if node.id == "n":
            return n
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise _NotArithmetic(f"an unknown name; allowed: {_GRAMMAR}")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _arithmetic(node.operand, n)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        a, b = _arithmetic(node.left, n), _arithmetic(node.right, n)
        if isinstance(node.op, ast.Pow):
            if abs(b) > _MAX_EXPONENT:
                raise _Refused(f"an exponent beyond +-{_MAX_EXPONENT}")
            if a != 0 and b * math.log10(abs(a)) > 19:
                raise _Refused(f"a power beyond {_MAX_MAGNITUDE:g} in magnitude")
        return _real(_OPERATORS[type(node.op)](a, b))
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCTIONS and not node.keywords):
        fn, least, most = _FUNCTIONS[node.func.id]
        count = len(node.args)
        if count < least or (most is not None and count > most):
            takes = least if most == least else f"{least} or more" if most is None \
                else f"{least} or {most}"
            raise _NotArithmetic(f"{node.func.id}() takes {takes} argument(s) (got {count})")
        return _real(fn(*(_arithmetic(arg, n) for arg in node.args)))
    raise _NotArithmetic(f"an operation that is not allowed; use {_GRAMMAR}")


def _real(value) -> int | float:
    """``value`` if it is a finite real number within the magnitude bound."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Refused("a value that is not a real number")
    if not math.isfinite(value):
        raise _Refused("a value that is not finite")
    if abs(value) > _MAX_MAGNITUDE:
        raise _Refused(f"a value beyond {_MAX_MAGNITUDE:g} in magnitude")
    return value


def toml_type(value) -> str:
    kinds = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
             list: "an array", dict: "a table"}
    return kinds.get(type(value), "a date/time")
