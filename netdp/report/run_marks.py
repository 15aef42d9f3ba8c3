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
    a dict as it is, or ``None``."""
    if result is None or isinstance(result, Mapping):
        return None if result is None else dict(result)
    to_json = getattr(result, "to_json", None)
    if to_json is None:
        raise InputError("result", f"expected a netdp Report or its JSON dict (got "
                         f"{type(result).__name__})")
    return to_json()


def reference_values(result: dict | None, wanted: list[str] | None = None) -> dict[str, float]:
    """LDP, theory and target values of a result, as reference lines: the LDP mean over
    nodes, sgd's calibration target, and the theoretical curves ``wanted`` (default: the
    first of :data:`DEFAULT_THEORY` the result has)."""
    if not result or not result.get("privacy"):
        if wanted:
            raise InputError("theory", "needs the run's result: give --result FILE.json")
        return {}
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
    cfg = result["config"]
    walk = (f"K = {cfg['rounds']}" if cfg.get("steps") is None
            else f"T = {cfg['steps']:,}")
    priv = result.get("privacy") or {}
    if "target_epsilon" in priv:
        eps = f"target ε = {float(priv['target_epsilon']):g}, δ = {cfg['delta']:g}"
    else:
        eps = (f"ε0 = {float(priv.get('epsilon0', cfg['epsilon'])):g}, "
               f"δ0 = {cfg['delta']:g}")
    return f"{cfg['task']} on {result['topology']}{sep}{walk}, {eps}, seed {result['seed']}"


def accountant_text(result: dict | None) -> str:
    """``rdp, δ = 2.8e-05``: the first accountant and the δ its pairwise ε is at (the
    pair's, not the contribution's); ``pairwise`` without a result."""
    if result and (result.get("privacy") or {}).get("empirical"):
        emp = result["privacy"]["empirical"][0]
        return f"{emp['accountant']}, δ = {float(emp['delta']):.2g}"
    return "pairwise"


def titled(title: str, result: dict | None, sep: str = "\n") -> str:
    """``title`` with the run's description on a line below (:func:`describe`)."""
    desc = describe(result)
    return title + (f"{sep}{desc}" if desc else "")
