"""What a figure of one run says about the run, read from its result (a
:class:`~netdp.report.types.Report` or its JSON dict): the reference lines (LDP, theory,
sgd's target), the line that describes it, and the accountant with the δ its pairwise ε
is at. The command line and the Python figures both take them from here, so that they
carry the same text."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netdp.core.errors import InputError

#: Theoretical network-DP curves drawn by default, when a result or a table has them.
DEFAULT_THEORY = ("complete-ndp-chernoff", "ring-ndp", "histogram-ring")


def as_result(result: Any) -> dict | None:
    """The JSON dict of a result: a :class:`~netdp.report.types.Report` (``to_json()``),
    a dict as it is (its fields checked, :func:`check_shape`), or ``None``."""
    if result is None or isinstance(result, Mapping):
        if result is not None:
            check_shape(result)
        return None if result is None else dict(result)
    to_json = getattr(result, "to_json", None)
    if to_json is None:
        raise InputError("result", f"expected a netdp Report or its JSON dict (got "
                         f"{type(result).__name__})")
    return to_json()


_NUMBER = (int, float)
#: The fields of a result the figures read (a path of keys, ``*``: every item of a list),
#: and what each must be when present: a run's JSON edited by hand, or another
#: program's, is refused naming the field (never quoting its value).
SHAPE: tuple[tuple[tuple[str, ...], tuple[type, ...], str], ...] = (
    ((), (Mapping,), "an object"),
    (("config",), (Mapping,), "an object"),
    (("config", "nodes"), (int,), "an integer"),
    (("config", "steps"), (int,), "an integer"),
    (("config", "rounds"), (int,), "an integer"),
    (("config", "epsilon"), _NUMBER, "a number"),
    (("config", "delta"), _NUMBER, "a number"),
    (("config", "task"), (str,), "text"),
    (("topology",), (str,), "text"),
    (("seed",), (int,), "an integer"),
    (("privacy",), (Mapping,), "an object"),
    (("privacy", "empirical"), (list,), "a list"),
    (("privacy", "empirical", "*"), (Mapping,), "an object"),
    (("privacy", "empirical", "*", "accountant"), (str,), "text"),
    (("privacy", "empirical", "*", "delta"), _NUMBER, "a number"),
    (("privacy", "empirical", "*", "ldp"), (Mapping,), "an object"),
    (("privacy", "empirical", "*", "by_distance"), (list,), "a list"),
    (("privacy", "empirical", "*", "by_distance", "*"), (Mapping,), "an object"),
    (("privacy", "theory_by_distance"), (Mapping,), "an object"),
    (("privacy", "theory_by_distance", "*"), (list,), "a list"),
    (("privacy", "theory_by_distance", "*", "*"), (Mapping,), "an object"),
    (("privacy", "empirical", "*", "ldp", "mean"), _NUMBER, "a number"),
    (("privacy", "ldp"), (Mapping,), "an object"),
    (("privacy", "ldp", "mean"), _NUMBER, "a number"),
    (("privacy", "target_epsilon"), _NUMBER, "a number"),
    (("privacy", "epsilon0"), _NUMBER, "a number"),
    (("privacy", "theory"), (Mapping,), "an object"),
    (("privacy", "theory", "*"), _NUMBER, "a number"),
)


def check_shape(result: Any, param: str = "result") -> None:
    """Refuse a result whose fields the figures read (:data:`SHAPE`) have another type
    (``null`` stands for an absent field, but not for an item of a list or an object's
    values): :class:`InputError` on ``param`` naming the field, never its value."""
    for path, kinds, what in SHAPE:
        for where, value in _at(result, path, ()):
            if value is None and path and path[-1] == "*" or value is not None and (
                    not isinstance(value, kinds) or (
                    isinstance(value, bool) and bool not in kinds) or (
                    kinds is _NUMBER and not _finite(value))):
                raise InputError(param, f"the result's {'.'.join(where) or 'document'} is "
                                 f"not {what}; give a netdp run's JSON")


def _finite(value: Any) -> bool:
    """Whether a JSON number is one a float holds (not NaN, not beyond 1e308)."""
    return isinstance(value, int | float) and -1e308 <= value <= 1e308


def _at(value: Any, path: tuple[str, ...], where: tuple[str, ...]):
    """``(where, value)`` of each item at ``path`` in ``value`` (``*``: every list item or
    every value of an object); an item on the way that is absent or of another type
    yields nothing (its own entry of :data:`SHAPE` names it)."""
    if not path:
        yield where, value
        return
    key, rest = path[0], path[1:]
    if key == "*":
        items = (value.items() if isinstance(value, Mapping) else enumerate(value)
                 if isinstance(value, list) else ())
        for k, item in items:
            yield from _at(item, rest, (*where, str(k) if isinstance(value, list) else "*"))
    elif isinstance(value, Mapping) and key in value:
        yield from _at(value[key], rest, (*where, key))


def reference_values(result: dict | None, wanted: list[str] | None = None) -> dict[str, float]:
    """LDP, theory and target values of a result, as reference lines: the LDP mean over
    nodes, sgd's calibration target, and the theoretical curves ``wanted`` (default: the
    first of :data:`DEFAULT_THEORY` the result has)."""
    if not result or not result.get("privacy"):
        if wanted:
            raise InputError("theory", "needs the run's result: give --result FILE.json")
        return {}
    check_shape(result)
    priv = result["privacy"]
    empirical = priv.get("empirical") or [{}]
    ldp = (priv.get("ldp") or empirical[0].get("ldp") or {}).get("mean")
    out = {} if ldp is None else {"LDP (mean over nodes)": float(ldp)}
    if priv.get("target_epsilon") is not None:  # sgd: the calibration's target
        out["target ε (calibration)"] = float(priv["target_epsilon"])
    theory = priv.get("theory") or {}
    if wanted:
        bad = [t for t in wanted if t not in theory]
        if bad:
            raise InputError("theory", f"{bad[0]!r} does not apply to this run; it has "
                             f"{', '.join(theory) or 'no theoretical curve'}")
        names = wanted
    else:
        names = [t for t in DEFAULT_THEORY if t in theory][:1]
    out.update({f"theory {t}": float(theory[t]) for t in names})
    return out


def describe(result: dict | None, sep: str = ", ") -> str:
    """What ran (task, topology) and its parameters, joined by ``sep``: ``sum on complete
    (n=100), T = 10,000, ε0 = 1, δ0 = 1e-06, seed 1`` (δ0: the δ of one contribution)."""
    if not result:
        return ""
    check_shape(result)
    cfg = result.get("config") or {}
    walk = (f"K = {cfg.get('rounds')}" if cfg.get("steps") is None
            else f"T = {cfg['steps']:,}")
    priv = result.get("privacy") or {}
    delta = cfg.get("delta")
    delta_text = "?" if delta is None else f"{delta:g}"
    if priv.get("target_epsilon") is not None:
        eps = f"target ε = {float(priv['target_epsilon']):g}, δ = {delta_text}"
    else:
        eps0 = priv.get("epsilon0", cfg.get("epsilon"))
        eps = f"ε0 = {'?' if eps0 is None else format(float(eps0), 'g')}, δ0 = {delta_text}"
    return (f"{cfg.get('task', '?')} on {result.get('topology', '?')}{sep}{walk}, {eps}, "
            f"seed {result.get('seed', '?')}")


def accountant_text(result: dict | None) -> str:
    """``rdp, δ = 2.8e-05``: the first accountant and the δ its pairwise ε is at (the
    pair's, not the contribution's); ``pairwise`` without a result."""
    if result and (result.get("privacy") or {}).get("empirical"):
        check_shape(result)
        emp = result["privacy"]["empirical"][0]
        delta = emp.get("delta")
        return (f"{emp.get('accountant', '?')}, δ = "
                f"{'?' if delta is None else format(float(delta), '.2g')}")
    return "pairwise"


def titled(title: str, result: dict | None, sep: str = "\n") -> str:
    """``title`` with the run's description on a line below (:func:`describe`)."""
    desc = describe(result)
    return title + (f"{sep}{desc}" if desc else "")
