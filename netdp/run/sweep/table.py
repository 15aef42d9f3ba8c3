"""The result table of a sweep: one tidy row per (config, seed) run, in a folder.

Layout of the output folder ``DIR``::

    DIR/sweep.json           manifest: format, the spec's config hashes and seeds, history,
                             provenance (netdp.core.provenance)
    DIR/spec.toml            the spec's text (the latest one that ran here)
    DIR/rows/part-*.jsonl    one file per finished batch, one JSON row per line
    DIR/.lock                held (flock) while a sweep writes into DIR

Crash safety: a batch file is written to a temporary name in ``rows/``, flushed, fsynced
and renamed (``os.replace``, atomic on POSIX), then the folder is fsynced. A part file
therefore exists whole or not at all: a SIGKILL loses only the batches in flight, and
leaves at most a ``.tmp`` file that readers ignore and the next sweep removes. Rows are
keyed by ``(config_hash, seed)``; readers keep the first row of a key (by file name, which
starts with the write time), so even a duplicate could never double a run.

Resume: a sweep into a ``DIR`` that holds a manifest runs only the keys it has no row
for. The new spec must hold every config and seed of the old one (the same spec, or the
same one with grid values or seeds added); anything else is refused, so one table never
mixes two experiments.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import math
import os
import re
import sys
import time
from pathlib import Path
from typing import IO

from netdp.core.errors import InputError, check, one_line, shorten
from netdp.core.files import atomic, cannot_write, write_atomic
from netdp.core.provenance import provenance
from netdp.core.reading import json_int, read_own_text
from netdp.core.table_rows import FIRST, table_row, tidy
from netdp.core.version import __version__
from netdp.report.config_hash import config_hash as config_hash_of
from netdp.tasks import make_config, param_specs

FORMAT = 1
MANIFEST = "sweep.json"
KEY = ("config_hash", "seed")
ACCOUNTANT_KEYS = ("mean", "min", "max", "q50", "q90", "q99", "delta", "pairs", "unprotected")


# --------------------------------------------------------------------------- rows

def flatten(result: dict, config_hash: str | None = None) -> dict:
    """One table row from a result dict (``Report.to_dict()``, ``simulate --json``): see
    :func:`netdp.core.table_rows.table_row` for its columns.

    ``config_hash``: the sweep passes the hash of the requested config; by default it is
    computed from the result's (resolved) config.
    """
    if config_hash is None:
        config_hash = config_hash_of(make_config(dict(result["config"])))
    return table_row(result, config_hash)


# --------------------------------------------------------------------------- the folder

class ResultTable:
    """A sweep's output folder. Open with :meth:`open` (writing) or :func:`read_table`."""

    def __init__(self, path: str | Path, param: str = "out") -> None:
        self.path = Path(path)
        self.rows_dir = self.path / "rows"
        self.param = param  # how errors name the folder: --out (sweep) or DIR (results)
        self._lock: IO[str] | None = None

    # -- writing
    @classmethod
    def open(cls, path: str | Path, spec) -> ResultTable:
        """Create ``path`` (or resume it) for ``spec``, and hold its lock.

        Raises :class:`InputError` (and writes nothing) if ``path`` is a file, a folder
        of something else, a sweep of another spec, or in use by another sweep.
        """
        table = cls(path)
        table.check_compatible(spec)
        made = [p for p in (table.path, *table.path.parents) if not p.exists()]
        here = Path.cwd().resolve()
        outside = made[1:] and here not in Path(os.path.abspath(table.path)).parents
        check(not outside, "out", f"the folder {shorten(str(table.path.parent))!r} does not "
              f"exist; create it first (missing folders are made only under the current "
              f"one)")
        made += [p for p in (table.path / name for name in (".lock", "rows", MANIFEST,
                                                             "spec.toml")) if not p.exists()]
        locking = False
        try:
            table.path.mkdir(parents=True, exist_ok=True)
            locking = True
            table._acquire()
            locking = False
            table.check_compatible(spec)  # again, now that we hold the lock
            table.rows_dir.mkdir(exist_ok=True)
            for tmp in table.rows_dir.glob(".tmp-*"):
                tmp.unlink(missing_ok=True)  # left by a killed writer
            table._write_manifest(spec)
        except BaseException as exc:
            if not (locking and isinstance(exc, InputError)):  # not another sweep's files
                _remove(made)  # what this call made: a refused folder is left as it was
            table.close()
            if isinstance(exc, OSError):
                raise cannot_write(table.path, exc, table.param) from exc
            raise
        return table

    def check_compatible(self, spec) -> None:
        """Refuse (:class:`InputError` on ``out``) a folder this spec may not write into."""
        path = self.path
        if path.exists() and not path.is_dir():
            raise InputError(self.param, f"{str(path)!r} is a file; give a folder for the "
                             "table")
        if not path.exists():
            parent = path.parent
            while not parent.exists() and parent != parent.parent:
                parent = parent.parent
            if not parent.is_dir():
                raise InputError(self.param, f"cannot create {str(path)!r}: {str(parent)!r} "
                                 "is a file, not a folder")
            if not os.access(parent, os.W_OK | os.X_OK):
                raise InputError(self.param, f"cannot create {str(path)!r}: {str(parent)!r} "
                                 "is not writable")
            return
        if not os.access(path, os.W_OK | os.X_OK):
            raise InputError(self.param, f"cannot write into {str(path)!r}: not writable")
        manifest = self.manifest()
        if manifest is None:
            if any(p.name != ".lock" for p in path.iterdir()):
                raise InputError(self.param, f"{str(path)!r} is not empty and holds no sweep "
                                 f"({MANIFEST} missing); give a new or empty folder")
            return
        old = manifest["identity"]
        new = spec.identity()
        lost_cfg = set(old["configs"]) - set(new["configs"])
        lost_seeds = set(old["seeds"]) - set(new["seeds"])
        if lost_cfg or lost_seeds:
            what = (f"{len(lost_cfg)} of its {len(old['configs'])} configs"
                    if lost_cfg else f"{len(lost_seeds)} of its {len(old['seeds'])} seeds")
            raise InputError(self.param, f"{str(path)!r} holds a sweep of another spec "
                             f"({manifest.get('spec_file') or 'see spec.toml there'}): "
                             f"{what} are not in this one; give a new --out (resuming needs "
                             "the same spec, or one that only adds grid values or seeds)")

    def _acquire(self) -> None:
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock
            return
        fh = open(self.path / ".lock", "a+")  # noqa: SIM115 (held open while running)
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            raise InputError(self.param, f"{str(self.path)!r} is in use by another "
                             "running sweep") from None
        self._lock = fh

    def close(self) -> None:
        """Release the folder's lock."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def __enter__(self) -> ResultTable:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _write_manifest(self, spec) -> None:
        old = self.manifest() or {}
        identity = spec.identity()
        history = list(old.get("history") or [])
        record = provenance()  # not part of the identity: another host resumes the sweep
        if old.get("identity") != identity or not history:
            history.append({"time": _now(), "spec_file": spec.path, "version": __version__,
                            "configs": len(identity["configs"]),
                            "seeds": len(identity["seeds"]), "provenance": record})
        manifest = {"format": FORMAT, "netdp_version": __version__, "spec_file": spec.path,
                    "description": spec.description, "runs": spec.n_runs,
                    "grid": {k: [_json_value(v) for v in vals]
                             for k, vals in spec.grid.items()},
                    "fixed": {k: _json_value(v) for k, v in spec.fixed.items()},
                    "identity": identity, "history": history, "provenance": record}
        write_atomic(self.path / MANIFEST, json.dumps(manifest, indent=1) + "\n",
                     param=self.param)
        if spec.text:
            write_atomic(self.path / "spec.toml", spec.text, param=self.param)

    def write_batch(self, rows: list[dict]) -> Path:
        """Write one finished batch as its own part file, atomically (a failed write is an
        :class:`InputError` that says the batches written before are kept)."""
        name = f"part-{time.time_ns():020d}-{os.getpid()}-{_counter()}.jsonl"
        text = "".join(json.dumps(row, separators=(",", ":")) + "\n" for row in rows)
        target = self.rows_dir / name
        try:
            write_atomic(target, text, tmp_prefix=".tmp-", param=self.param)
        except InputError as exc:
            raise InputError(exc.param, f"{exc.message}; the batches written before are "
                             "kept: rerun the command to resume", exc.positional) from exc
        _fsync_dir(self.rows_dir)
        return target

    # -- reading
    def manifest(self) -> dict | None:
        """The manifest, or ``None`` if the folder holds none."""
        path = self.path / MANIFEST
        if not path.is_file() and not path.is_symlink():
            return None
        text = read_own_text(path, self.param, "the sweep's manifest (put the file back)")
        try:
            data = json.loads(text, parse_int=json_int)
            identity = data["identity"]  # config hashes (text) and seeds (integers)
            if not (isinstance(identity["configs"], list) and isinstance(identity["seeds"], list)
                    and all(isinstance(c, str) for c in identity["configs"])
                    and all(isinstance(x, int) and not isinstance(x, bool)
                            for x in identity["seeds"])):
                raise TypeError(path)  # a manifest edited by hand: identity of another shape
            runs = data.get("runs")
            if runs is not None and (not isinstance(runs, int) or isinstance(runs, bool)
                                     or runs < 0):
                raise TypeError(path)  # its count of runs no count
            grid, fixed = data.get("grid", {}), data.get("fixed", {})
            if not isinstance(grid, dict) or not isinstance(fixed, dict) or not all(
                    isinstance(v, list) and not any(isinstance(x, list | dict) for x in v)
                    for v in grid.values()):
                raise TypeError(path)  # a manifest edited by hand: [grid] of another shape
            history = data.get("history")  # null: none, as absent
            if history is not None and not (isinstance(history, list) and all(
                    isinstance(h, dict) for h in history)):
                raise TypeError(path)  # its history no list of runs (resuming appends)
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            raise InputError(self.param, f"{path} is not a netdp sweep manifest") from None
        return data

    def parts(self) -> list[Path]:
        """The finished batch files, oldest first."""
        if not self.rows_dir.is_dir():
            return []
        return sorted(self.rows_dir.glob("part-*.jsonl"))

    def rows(self) -> list[dict]:
        """Every row, one per key (the first written wins)."""
        seen: set = set()
        out = []
        for part in self.parts():
            text = read_own_text(part, self.param, "a batch file of rows (delete it and "
                                 "rerun the sweep)")
            try:
                rows = [json.loads(line) for line in text.splitlines()]
            except (OSError, ValueError, RecursionError) as exc:
                raise InputError(self.param, f"{part} cannot be read "
                                 f"({one_line(exc, 80)}); delete it and "
                                 "rerun the sweep to redo its runs") from None
            for i, row in enumerate(rows, 1):
                wrong = _row_problem(row)
                if wrong:
                    raise InputError(self.param, f"{part} line {i}: not a row of a netdp "
                                     f"table ({wrong}); delete the file and rerun the "
                                     "sweep to redo its runs")
                key = (row.get("config_hash"), row.get("seed"))
                if key not in seen:
                    seen.add(key)
                    out.append(row)
        return out

    def done_keys(self) -> set[tuple[str, int]]:
        """The ``(config_hash, seed)`` keys that have a row."""
        return {(r["config_hash"], r["seed"]) for r in self.rows()}

    def dataframe(self):
        """All rows as a pandas DataFrame, one row per key.

        The order does not depend on how the sweep ran (backend, batches, completion):
        columns as :func:`flatten` makes them (union over rows taken in key order), rows
        sorted by the grid axes in the spec's order, then by seed.
        """
        import pandas as pd

        rows = self.rows()
        columns: dict[str, None] = dict.fromkeys(FIRST)
        for row in sorted(rows, key=lambda r: (str(r["config_hash"]), r["seed"])):
            columns.update(dict.fromkeys(row))
        frame = tidy(pd.DataFrame(rows, columns=list(columns)))
        axes = list((self.manifest() or {}).get("grid", {}))
        if "range" in axes:
            axes[axes.index("range"):axes.index("range") + 1] = ["low", "high"]
        by = [a for a in axes if a in frame.columns] + ["config_hash", "seed"]
        try:
            frame = frame.sort_values(by, kind="stable", na_position="last")
        except TypeError:  # mixed types in an axis column: key order only
            frame = frame.sort_values(["config_hash", "seed"], kind="stable")
        return frame.reset_index(drop=True)


def _row_problem(row: object) -> str:
    """What makes a JSON line no table row (``""`` if it is one). A row is an object whose
    values are numbers, text, booleans or null, with a text ``config_hash`` and an integer
    ``seed`` within 64 bits; each value of the kind its column holds
    (:func:`netdp.core.table_rows.table_row`): a config parameter's of its declared kind,
    a figure (any other column but the bookkeeping ones) a number, and no integer beyond
    a float's range (a line edited by hand, or written by another program, is refused;
    a failed run's row keeps its point's values, 10^30 nodes included). The message names
    the column by its name where that reads as one, else by its place in the line: never
    a value read."""
    seed = row.get("seed") if isinstance(row, dict) else None
    if not isinstance(row, dict) or not isinstance(row.get("config_hash"), str) \
            or type(seed) is not int or not 0 <= seed < 2**64:
        return "an object of numbers and text, with its config_hash and seed"
    kinds = _column_kinds()
    for k, (key, value) in enumerate(row.items(), 1):
        kind = kinds.get(key) or (_ANY if key.startswith("provenance_") else _FIGURE)
        if type(value) not in kind[0] or (type(value) is int and abs(value) > _LARGEST):
            return f"{_column(key, k)} is not {kind[1]}"
    return ""


#: What a column holds: the exact types of its values (JSON's), and in words.
_ANY = (frozenset({str, int, float, bool, type(None)}), "a number, text, true or false")
_FIGURE = (frozenset({int, float, type(None)}), "a number within a float's range")
_KINDS = {int: _FIGURE, float: _FIGURE,  # a failed run's 10**400 nodes is kept as inf
          bool: (frozenset({bool, type(None)}), "true or false"),
          str: (frozenset({str, type(None)}), "text"), tuple: (frozenset({str, type(None)}),
                                                             "text")}
_NAME = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")


@functools.cache
def _column_kinds() -> dict:
    """Column name -> what its values are (:data:`_KINDS`): the config parameters' by
    their declared kind, the bookkeeping columns any scalar."""
    kinds = {name: _KINDS[spec.kind] for name, spec in param_specs().items()}
    return {**kinds, **dict.fromkeys(("config_hash", "seed", "status", "version", "error"),
                                     _ANY)}


#: The largest integer a float holds (beyond: refused, as pandas' conversion overflows).
_LARGEST = int(sys.float_info.max)


def _column(key: str, place: int) -> str:
    """A column as a refusal names it: its name where that reads as one (lower-case words),
    else its place in the line (a key edited by hand is never echoed)."""
    if len(key) <= 64 and _NAME.fullmatch(key):
        return f"its column {key}"
    return f"its key {place} (counting from 1)"


def read_table(path: str | Path):
    """The table of a sweep folder as a DataFrame; :class:`InputError` if not one."""
    table = ResultTable(path, param="DIR")
    if not table.path.is_dir() or table.manifest() is None:
        raise InputError("DIR", f"{str(path)!r} is not a sweep folder (no {MANIFEST}); "
                         "make one with `netdp sweep SPEC.toml --out DIR`")
    return table.dataframe()


# --------------------------------------------------------------------------- export

def export_csv(frame, path: str, param: str = "csv") -> None:
    """Write the table as CSV (``"-"``: stdout); files are written atomically (a failed
    write is an :class:`InputError` on ``param``)."""
    if path == "-":
        frame.to_csv(sys.stdout, index=False)
        return
    write_atomic(Path(path), frame.to_csv(index=False), param=param)


def export_parquet(frame, path: str, param: str = "parquet") -> None:
    """Write the table as Parquet through pandas (needs pyarrow or fastparquet)."""
    if not parquet_available():
        raise InputError("parquet", "writing Parquet needs pyarrow (or fastparquet): "
                         "pip install 'netdp[parquet]' (or pyarrow)")
    with atomic(path, param=param) as fh:
        frame.to_parquet(fh, index=False)


def parquet_available() -> bool:
    """Whether pandas can write Parquet here."""

    return any(importlib.util.find_spec(m) is not None for m in ("pyarrow", "fastparquet"))


# --------------------------------------------------------------------------- files

def _remove(paths: list[Path]) -> None:
    """Remove these files and empty folders (the deepest first), quietly."""
    for path in sorted(paths, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                path.rmdir()  # only when empty
            else:
                path.unlink()


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):  # not every platform opens folders
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

_COUNT = [0]


def _counter() -> int:
    _COUNT[0] += 1
    return _COUNT[0]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _json_value(value):
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value
