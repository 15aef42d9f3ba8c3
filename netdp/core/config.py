"""Run configuration: the common parameters, one section per task, TOML files.

* :mod:`~netdp.core.params` - parameters as data (:func:`param`, :class:`Section`).
* :mod:`~netdp.core.simulation_config` - :class:`SimulationConfig`, the common fields.

A config is built from a flat mapping (flag names with ``_`` for ``-``) by
:func:`netdp.tasks.make_config`, which picks the task's section.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from netdp.core.errors import InputError, check
from netdp.core.params import Param, Section, check_value, coerce, param, params_of
from netdp.core.reading import read_toml
from netdp.core.sections import UserLevelSection
from netdp.core.simulation_config import (
    ENGINES,
    WALKS,
    SimulationConfig,
    common_fields,
    parse_coalition,
    parse_nodes,
)

__all__ = ["ENGINES", "WALKS", "Param", "Section", "SimulationConfig",
           "check_value", "coerce", "common_fields", "param", "params_of", "parse_coalition",
           "parse_nodes", "read_config", "UserLevelSection"]


def read_config(path: str | Path, param: str = "config") -> dict[str, Any]:
    """The flat parameters of a TOML config file (keys are flag names; ``range = [L, H]``).

    Raises :class:`InputError` naming ``param`` when the file cannot be read or parsed.
    """
    path = Path(path)
    data = read_toml(path, param)
    for key in data:  # named as its flag when it reads as one; else never echoed
        check(bool(_KEY.fullmatch(key)), param, f"{path}: a key that is no parameter name "
              "(parameters are lower-case words joined by - or _)")
    return flat_params(data, f" in {path}")


_KEY = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")


def flat_params(data: dict[str, Any], where: str = "") -> dict[str, Any]:
    """Keys with ``-`` as ``_``, and ``range = [LOW, HIGH]`` split into ``low`` and ``high``."""
    out = {str(k).replace("-", "_"): v for k, v in data.items()}
    if "range" in out:
        rng = out.pop("range")
        if not (isinstance(rng, list | tuple) and len(rng) == 2):
            raise InputError("range", f"expects [LOW, HIGH]{where}"
                             + ("" if where else f" (got {rng!r})"))  # a file's: not echoed
        out["low"], out["high"] = rng
    for flag, name, negate in (("no_tracking", "accountants", ()), ("no_self_moves",
                                                                    "self_moves", False)):
        if flag in out:  # the command line's switches, as config keys
            value = out.pop(flag)
            if not isinstance(value, bool):
                raise InputError(flag.replace("_", "-"), f"must be true or false{where}"
                                 + ("" if where else f" (got {value!r})"))
            if value and name in out:
                raise InputError(flag.replace("_", "-"), f"and {name.replace('_', '-')} "
                                                         f"both given{where}; give one")
            if value:
                out[name] = list(negate) if isinstance(negate, tuple) else negate
    return out
