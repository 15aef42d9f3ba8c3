"""The result table a sweep figure reads: reading it (a sweep folder or a table file),
its columns (configuration, accountants, aliases), filtering its rows.

Split from :mod:`netdp.run.sweep.plots`, which draws the figures and re-exports these.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from netdp.accounting import registry
from netdp.core.errors import InputError
from netdp.core.reading import check_regular
from netdp.run.sweep import table
from netdp.tasks import TASKS, param_specs

#: Short names accepted for columns (``--x n``).
ALIASES = {"n": "nodes", "T": "steps", "K": "rounds", "eps": "epsilon", "L": "domain"}


def utility_columns(task: str) -> tuple[tuple[str, ...], tuple[tuple[str, str, str], ...]] | None:
    """The error measure task ``task`` declares for these plots
    (:attr:`netdp.tasks.base.Task.utility_columns`), ``None`` for an unknown task."""
    found = TASKS.get(task)
    return None if found is None else found.utility_columns


# --------------------------------------------------------------------------- reading


def read_results(path: str | Path) -> pd.DataFrame:
    """The result table in ``path`` (a sweep folder, or one CSV / Parquet / JSON-lines file).

    A sweep folder is read with :func:`netdp.run.sweep.table.read_table`, a plain folder by
    concatenating its tables. Rows whose ``status`` is not ``"ok"`` are dropped. Raises
    :class:`InputError` (parameter ``DIR``) when nothing can be read or the table is empty.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("DIR", f"{str(path)!r} does not exist; give a folder written by "
                         "`netdp sweep` or a .csv/.parquet/.jsonl table")
    try:
        df = _read_any(path)
    except InputError:
        raise
    except Exception as exc:  # a torn or foreign file: one line, not a traceback
        raise InputError("DIR", f"cannot read a result table from {str(path)!r}: "
                         f"{type(exc).__name__}: {exc}") from None
    if "status" in df:
        df = df[df["status"].fillna("ok") == "ok"]
    if df.empty:
        raise InputError("DIR", f"{str(path)!r} holds no finished runs (empty table)")
    return df.reset_index(drop=True)


def _read_any(path: Path) -> pd.DataFrame:
    if path.is_dir():

        if (path / table.MANIFEST).exists():
            return table.read_table(path)
        files = sorted(p for ext in ("*.parquet", "*.csv", "*.jsonl")
                       for p in path.glob(ext) if not p.name.startswith("."))
        if not files:
            raise InputError("DIR", f"{str(path)!r} is neither a sweep folder (no "
                             f"{table.MANIFEST}) nor a folder of .parquet/.csv/.jsonl tables")
        return pd.concat([_read_file(p) for p in files], ignore_index=True)
    return _read_file(path)


def _read_file(path: Path) -> pd.DataFrame:
    check_regular(path, "DIR", "a sweep folder or a .parquet/.csv/.jsonl table")
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return pd.read_parquet(path)
    if suffix == ".csv":
        return pd.read_csv(path)
    if suffix in (".jsonl", ".json"):
        return pd.read_json(path, lines=True)
    raise InputError("DIR", f"cannot read {path.name!r}: allowed tables are .parquet, .csv, "
                     ".jsonl or a folder written by `netdp sweep`")


# --------------------------------------------------------------------------- columns


def column(df: pd.DataFrame, name: str, param: str) -> str:
    """The column ``name`` (or its alias) of ``df``, or :class:`InputError` on ``param``."""
    name = ALIASES.get(name, name)
    if name not in df.columns:
        allowed = ", ".join(sorted(set(map(str, df.columns)) | {  # a foreign table's: 0, 1
            a for a, c in ALIASES.items() if c in df.columns}))
        raise InputError(param, f"unknown column {name!r}; choose from {allowed}")
    return name


def config_columns(df: pd.DataFrame) -> list[str]:
    """The configuration columns of ``df`` (every task's parameters and ``eps0``), no seed."""

    names = [name for name in param_specs() if name != "seed"] + ["eps0"]
    return [c for c in names if c in df.columns]


def accountants(df: pd.DataFrame) -> list[str]:
    """Accountants with ``A_mean``, ``A_min`` and ``A_max`` columns holding numbers."""
    found = [c[:-5] for c in df.columns if c.endswith("_mean") and c != "ldp_mean"
             and f"{c[:-5]}_min" in df and f"{c[:-5]}_max" in df
             and pd.to_numeric(df[c], errors="coerce").notna().any()]
    order = {a: i for i, a in enumerate(registry.names())}
    return sorted(found, key=lambda a: (order.get(a, len(order)), a))


def filter_rows(df: pd.DataFrame, where: Sequence[str]) -> pd.DataFrame:
    """Keep the rows matching every ``COLUMN=VALUE`` (``VALUE`` may list ``a,b``)."""
    for cond in where:
        name, sep, value = cond.partition("=")
        if not sep:
            raise InputError("where", f"expects COLUMN=VALUE (got {cond!r})")
        col = column(df, name.strip(), "where")
        wanted = [v.strip() for v in value.split(",")]
        if pd.api.types.is_bool_dtype(df[col]):
            keep = df[col].astype(str).str.lower().isin([w.lower() for w in wanted])
        elif pd.api.types.is_numeric_dtype(df[col]):
            try:
                nums = [float(w) for w in wanted]
            except ValueError:
                raise InputError("where", f"{col} holds numbers (got {value!r})") from None
            keep = np.isclose(df[col].to_numpy(float)[:, None], nums, rtol=1e-9).any(axis=1)
        else:
            keep = df[col].astype(str).isin(wanted)
        df = df[keep]
        if df.empty:
            raise InputError("where", f"no row has {col} = {value}")
    return df


def _numeric(df: pd.DataFrame, col: str, param: str) -> pd.Series:
    values = pd.to_numeric(df[col], errors="coerce")
    if values.notna().sum() == 0:
        raise InputError(param, f"column {col!r} holds no numbers")
    return values.astype(float).replace([np.inf, -np.inf], np.nan)


def _delta_text(df: pd.DataFrame, columns: Sequence[str]) -> str:
    """``δ = 1e-07`` (one value in ``columns``), ``δ from 2e-05 to 2.8e-05`` (several),
    or ``""`` (none)."""
    values = [pd.to_numeric(df[c], errors="coerce") for c in columns if c in df]
    found = pd.concat(values).dropna() if values else pd.Series(dtype=float)
    if found.empty:
        return ""
    lo, hi = float(found.min()), float(found.max())
    if f"{lo:.2g}" == f"{hi:.2g}":
        return f"δ = {hi:.2g}"
    return f"δ from {lo:.2g} to {hi:.2g}"
