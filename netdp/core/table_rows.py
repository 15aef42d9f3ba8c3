"""Tidy rows of results: one flat dict per run, the columns of a sweep's table.

:func:`table_row` flattens a simulation's result (``Report.to_dict()``, ``simulate
--json``) into the row the sweep table stores and ``Report.to_frame()`` shows;
:func:`result_row` flattens any other result object (``attack``, ``audit``) by the same
naming rule (nested keys joined by ``_``); :func:`frame` makes a pandas DataFrame of rows.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from netdp.core.provenance import provenance
from netdp.core.version import __version__

#: The first columns of every row of a sweep table.
FIRST = ("config_hash", "seed", "status", "version", "runtime_s")
#: Top-level keys of a result that :func:`result_row` does not flatten as figures.
NOT_FIGURES = ("schema", "version", "seed", "config", "provenance")


def table_row(result: Mapping[str, Any], config_hash: str) -> dict:
    """One table row from a result dict (``Report.to_dict()``, ``simulate --json``).

    Columns: ``config_hash, seed, status ("ok"), version, runtime_s``; every config
    parameter (tuples joined by ","; ``nodes`` and ``steps`` resolved); ``hops``;
    ``mechanism_<k>`` for the mechanism's numbers (``mechanism_sigma``); every number of
    ``utility``, nested keys joined by "_" (``estimate, truth, abs_error, ...``;
    ``<regime>_final_objective`` for sgd); privacy: ``eps0``, ``ldp_mean, ldp_min,
    ldp_max``, ``theory_<curve>`` per theoretical curve and ``A_mean, A_min, A_max,
    A_q50, A_q90, A_q99, A_delta, A_pairs, A_unprotected`` per empirical accountant ``A``
    (``<regime>_rdp_mean`` … for sgd),
    and any other number of ``privacy`` by the same "_" rule; with faults, ``faults_*``
    counts and the fault-free run's ``fault_free_*`` figures; with an attack, ``attack_*``
    figures and the honest runs' ``honest_*`` utility. Outside the config, only
    numbers (and ``None``) become columns: text and lists (a histogram's estimate vector)
    are left out. A name that would collide with an earlier column gets its section as
    prefix (``utility_dummies``).

    Last, ``provenance_<key>`` for each key of the result's ``provenance`` object
    (:func:`netdp.core.provenance.provenance`: ``provenance_commit``,
    ``provenance_numpy``, ...), whatever their type.

    ``config_hash``: the key of the row (the sweep passes the hash of the requested config;
    :meth:`Report.to_frame <netdp.report.types.Report.to_frame>` that of the resolved one).
    """

    cfg = dict(result["config"])
    row: dict = {"config_hash": config_hash, "seed": result["seed"], "status": "ok",
                 "version": result.get("version", __version__),
                 "runtime_s": result.get("runtime_s")}
    if cfg.get("steps") is None and result.get("hops") is not None:  # the ring: K n steps
        cfg["steps"] = int(result["hops"]) // int(cfg.get("tokens") or 1)
    for key, value in cfg.items():
        if key not in row:
            row[key] = _cell(value)
    row["hops"] = result.get("hops")
    for key, value in (result.get("mechanism") or {}).items():
        if _is_number(value):
            _put(row, f"mechanism_{key}", value, "")
    _scalars(row, result.get("utility") or {}, "", "utility")
    privacy = dict(result.get("privacy") or {})
    if "epsilon0" in privacy:
        _put(row, "eps0", privacy.pop("epsilon0"), "privacy")
    privacy.pop("delta0", None)  # the config's delta
    for key, value in (privacy.pop("ldp", None) or {}).items():
        _put(row, f"ldp_{key}", value, "privacy")
    for name, value in (privacy.pop("theory", None) or {}).items():
        _put(row, f"theory_{name}", value, "privacy")
    for entry in privacy.pop("empirical", None) or []:
        name = entry.get("accountant", "empirical")
        if "regime" in entry:  # sgd: one entry per regime, all rdp
            name = f"{entry['regime']}_{name}"
        for key, value in entry.items():
            if key not in ("accountant", "regime"):
                _put(row, f"{name}_{key}", value, "privacy")
    _scalars(row, privacy, "", "privacy")
    _faults(row, result.get("faults"))
    _attack(row, result.get("attack"))
    row.update(provenance_columns(result.get("provenance")))
    return row


def _attack(row: dict, attack: dict | None) -> None:
    """``attack_share``, ``attack_lost``, ``attack_fakes``, ``attack_gain_empirical``,
    ``attack_gain_std``, ``attack_gain_theory``, and per check ``attack_<check>_rate`` and
    ``attack_<check>_mean_delay``; the same runs with every holder honest give
    ``honest_<utility number>``."""
    if not attack:
        return
    for key in ("share", "lost", "fakes"):
        _put(row, f"attack_{key}", attack.get(key), "attack")
    _scalars(row, attack.get("gain") or {}, "attack_gain_", "attack")
    for entry in attack.get("detection") or []:
        for key in ("rate", "mean_delay"):
            _put(row, f"attack_{entry['check']}_{key}", entry.get(key), "attack")
    _scalars(row, attack.get("honest_utility") or {}, "honest_", "attack")


def _faults(row: dict, faults: dict | None) -> None:
    """``faults_<count>`` (``faults_completed`` as 0 or 1), and the fault-free run's
    ``fault_free_<A>_mean``, ``fault_free_<A>_max`` per accountant ``A`` and
    ``fault_free_<utility number>``."""
    if not faults:
        return
    for key, value in faults.items():
        if key not in ("runs", "lost_token_log", "fault_free"):
            _put(row, f"faults_{key}", int(value) if isinstance(value, bool) else value,
                 "faults")
    free = faults.get("fault_free") or {}
    for entry in (free.get("privacy") or {}).get("empirical") or []:
        name = entry.get("accountant", "empirical")
        if "regime" in entry:
            name = f"{entry['regime']}_{name}"
        for key in ("mean", "max"):
            _put(row, f"fault_free_{name}_{key}", entry.get(key), "faults")
    _scalars(row, free.get("utility") or {}, "fault_free_", "faults")
    _put(row, "fault_free_noise_std", free.get("noise_std"), "faults")


def error_row(config: dict, seed: int, config_hash: str, message: str,
              runtime_s: float | None) -> dict:
    """The row of a run that failed (status ``"error"``): its config, and in ``error`` what
    stopped it (``--param: message`` for an :class:`InputError`, else ``Type: message``)."""
    row = {"config_hash": config_hash, "seed": seed, "status": "error",
           "version": __version__, "runtime_s": runtime_s}
    for key, value in config.items():
        if key not in row:
            row[key] = _cell(value)
    row["seed"] = seed
    row["error"] = message
    row.update(provenance_columns(provenance()))
    return row


def _cell(value):
    """A config value as a row holds it: a list joined by ``,``; an integer beyond a
    float's range (a failed run's ``nodes = 10**400``) as an infinite float, since a
    table's number columns are floats."""
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    value = _plain(value)
    if type(value) is int and abs(value) > int(sys.float_info.max):
        return math.inf if value > 0 else -math.inf
    return value


def _plain(value):
    """numpy scalars to Python ones."""
    if hasattr(value, "item") and not isinstance(value, list | tuple | dict | str):
        return value.item()
    return value


def _is_number(value) -> bool:
    value = _plain(value)
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


def _put(row: dict, name: str, value, section: str) -> None:
    if not _is_number(value):
        return
    if name in row and section:
        name = f"{section}_{name}"
    row[name] = _plain(value)


def _scalars(row: dict, data: dict, prefix: str, section: str) -> None:
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            _scalars(row, value, f"{name}_", section)
        else:
            _put(row, name, value, section)


def provenance_columns(record: Mapping[str, Any] | None) -> dict[str, Any]:
    """``{"provenance_<key>": value}`` for each key of a provenance record (none if
    ``None``)."""
    return {f"provenance_{key}": value for key, value in (record or {}).items()}


def result_row(result: Mapping[str, Any]) -> dict:
    """One row from any result object with ``seed``, ``version`` and ``config`` keys (the
    JSON of ``attack`` and ``audit``): ``seed, status ("ok"), version, runtime_s``
    (its ``seconds``), every config parameter, then every number of the other keys,
    nested keys joined by ``_`` (``gain_empirical``, ``audit_epsilon_lower``; a name
    already taken by the config gets ``result_`` in front, ``result_beta``; a list of
    objects with a ``name`` gives ``<key>_<name>_<field>``, ``defence_normalize_gain``;
    booleans as 0 or 1), then the ``provenance_<key>`` columns."""
    row: dict = {"seed": result.get("seed"), "status": "ok",
                 "version": result.get("version", __version__),
                 "runtime_s": result.get("seconds")}
    for key, value in (result.get("config") or {}).items():
        if key not in row:
            row[key] = _cell(value)
    for key, value in result.items():
        if key in NOT_FIGURES or key == "seconds":
            continue
        named = _named(value)
        if named is not None:
            _scalars(row, named, f"{key}_", key)
        elif isinstance(value, Mapping):
            _scalars(row, _booleans(value), f"{key}_", key)
        else:
            _put(row, key, int(value) if isinstance(value, bool) else value, "result")
    row.update(provenance_columns(result.get("provenance")))
    return row


def _named(value: Any) -> dict | None:
    """``{name: entry}`` of a list of objects that each have a ``name``; else ``None``."""
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(v, Mapping) and isinstance(v.get("name"), str) for v in value):
        return None
    return {v["name"]: _booleans({k: x for k, x in v.items() if k != "name"}) for v in value}


def _booleans(data: Mapping[str, Any]) -> dict:
    """``data`` with its booleans as 0 or 1 (nested objects too)."""
    return {k: _booleans(v) if isinstance(v, Mapping) else int(v) if isinstance(v, bool)
            else v for k, v in data.items()}


def frame(rows: Sequence[Mapping[str, Any]]):
    """The rows as a pandas DataFrame, columns in order of appearance; object columns that
    hold only numbers (and ``None``) become float."""
    import pandas as pd

    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    return tidy(pd.DataFrame(list(rows), columns=list(columns)))


def pairs_frame(matrices: Mapping[Any, Any], labels: Sequence[Any],
                deltas: Mapping[Any, Any], **columns: Any):
    """A DataFrame of ``n x n`` matrices ``M[u, v] = ε(u → v)``, one row per ordered pair
    ``u != v`` (row-major) and matrix: ``target`` (``labels[u]``, whose contribution is at
    stake), ``observer`` (``labels[v]``), ``epsilon`` (``inf``: unprotected; NaN: no
    figure), ``accountant`` (the matrix's key), ``delta`` (``deltas[key]``), then
    ``columns`` (the same value on every row)."""
    import numpy as np
    import pandas as pd

    frames = []
    for name, matrix in matrices.items():
        matrix = np.asarray(matrix, dtype=float)
        target, observer = np.nonzero(~np.eye(matrix.shape[0], dtype=bool))
        names = np.empty(matrix.shape[0], dtype=object)
        names[:] = list(labels)
        frames.append(pd.DataFrame({"target": names[target], "observer": names[observer],
                                    "epsilon": matrix[target, observer], "accountant": name,
                                    "delta": deltas.get(name), **columns}))
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


#: The utility figures a one-line summary shows first, when a result has them.
HEADLINE_UTILITY = ("abs_error", "mse", "l1", "rmse", "error", "accuracy")


def headline(utility: Mapping[str, Any], privacy: Mapping[str, Any]) -> str:
    """A short summary of a simulation's utility and privacy objects: the first of
    :data:`HEADLINE_UTILITY` (else the first number) and the first accountant's mean and
    largest ε at its δ (else the LDP baseline)."""
    numbers: dict = {}
    _scalars(numbers, dict(utility), "", "")
    numbers = {k: v for k, v in numbers.items() if v is not None}
    key = next((k for k in HEADLINE_UTILITY if k in numbers), next(iter(numbers), None))
    parts = [] if key is None else [f"{key} {_short(numbers[key])}"]
    empirical = privacy.get("empirical") or []
    ldp = privacy.get("ldp") or {}
    if empirical:
        e = empirical[0]
        name = f"{e['regime']} {e.get('accountant')}" if "regime" in e else e.get("accountant")
        parts.append(f"{name} eps mean {_short(e.get('mean'))}, max {_short(e.get('max'))} "
                     f"at delta {_short(e.get('delta'))}")
    elif ldp.get("mean") is not None:
        parts.append(f"LDP eps mean {_short(ldp['mean'])}")
    if privacy.get("completed") is False:
        parts.append("no run completed")
    return "; ".join(parts) or "no figures"


def _short(x: Any) -> str:
    return f"{x:.4g}" if isinstance(x, float) else str(x)


def tidy(table):
    """Object columns of a DataFrame that only hold numbers (with ``None``) become float."""
    import pandas as pd

    for col in table.columns:
        if table[col].dtype == object:
            values = table[col].dropna()
            if len(values) and all(isinstance(v, int | float) and not isinstance(v, bool)
                                   for v in values):
                table[col] = pd.to_numeric(table[col], errors="coerce").astype(float)
    return table
