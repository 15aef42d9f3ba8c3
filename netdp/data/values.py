"""The nodes' private values: synthetic generators and a column of a CSV file."""

from __future__ import annotations

import csv
import gzip
import importlib.util
import math
from importlib import resources
from pathlib import Path

import numpy as np

from netdp.core.errors import InputError, check
from netdp.core.reading import read_csv_rows

GENERATORS = ("uniform", "constant", "normal", "zipf")
ZIPF_EXPONENT = 1.1


def synthetic(kind: str, n: int, rng: np.random.Generator, low: float = 0.0,
              high: float = 1.0) -> np.ndarray:
    """``n`` values in ``[low, high]``.

    ``uniform``: uniform on the range; ``constant``: every node holds the midpoint;
    ``normal``: normal centred on the midpoint with std a sixth of the width, clipped to
    the range.
    """
    mid, width = (low + high) / 2, high - low
    if kind == "uniform":
        return rng.uniform(low, high, n)
    if kind == "constant":
        return np.full(n, mid)
    if kind == "normal":
        return np.clip(rng.normal(mid, width / 6, n), low, high)
    if kind == "zipf":
        raise InputError("data", "zipf draws categories: use it with --task histogram")
    raise InputError("data", f"must be one of {', '.join(GENERATORS)} or a CSV file "
                     f"(got {kind!r})")


def categories(kind: str, n: int, domain: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` categories in ``0..domain-1``.

    ``uniform``: uniform; ``zipf``: ``P(i) ∝ (i+1)^-1.1``; ``constant``: every node holds
    category 0; ``normal``: a normal around the middle category (std ``domain/6``),
    rounded and clipped.
    """
    if kind == "uniform":
        return rng.integers(0, domain, n)
    if kind == "zipf":
        weights = (np.arange(domain) + 1.0) ** -ZIPF_EXPONENT
        return rng.choice(domain, size=n, p=weights / weights.sum())
    if kind == "constant":
        return np.zeros(n, dtype=np.int64)
    if kind == "normal":
        x = np.rint(rng.normal((domain - 1) / 2, domain / 6, n))
        return np.clip(x, 0, domain - 1).astype(np.int64)
    raise InputError("data", f"must be one of {', '.join(GENERATORS)} or a CSV file "
                     f"(got {kind!r})")


def check_categories(values: np.ndarray, domain: int, source: str) -> np.ndarray:
    """Values must be integers in ``0..domain-1``; returns them as int64."""
    ints = np.rint(values)
    check(bool(np.all(ints == values)), "data-file",
          f"{source} holds non-integer values; a histogram needs categories 0..{domain - 1}")
    lo, hi = int(ints.min()), int(ints.max())
    check(lo >= 0 and hi < domain, "domain",
          f"{source} holds categories {lo}..{hi}, outside 0..{domain - 1}; raise --domain")
    return ints.astype(np.int64)


def read_column(path: str | Path, column: str | None = None) -> np.ndarray:
    """The numeric values of one column of a CSV file with a header row.

    ``column`` may be a header name or a 0-based index; ``None`` takes the first column.
    Empty cells are an error (say which row), so that no node is silently dropped.
    """
    path = Path(path)
    rows = read_csv_rows(path, "data-file")
    check(len(rows) >= 2, "data-file", f"{path.name} needs a header row and at least one value")
    header = [h.strip() for h in rows[0]]
    if column is None:
        index = 0
    elif column in header:
        index = header.index(column)
    elif column.isdigit() and int(column) < len(header):
        index = int(column)
    else:
        raise InputError("column", f"{path.name} has no column {column!r}; give a name "
                         f"from its header row or an index 0..{len(header) - 1}")
    values = np.empty(len(rows) - 1)
    for i, row in enumerate(rows[1:], 2):
        try:
            values[i - 2] = float(row[index])
        except (ValueError, IndexError):
            raise InputError("data-file", f"{path.name} line {i}, column {index}: not a "
                             "number") from None
    check(bool(np.all(np.isfinite(values))), "data-file",
          f"{path.name} column {index} holds non-finite values (nan or inf)")
    return values


def check_range(values: np.ndarray, low: float, high: float, source: str,
                from_file: bool = False) -> None:
    """Values must lie in the declared range: the sensitivity depends on it. Values read
    from a file (``from_file``) are refused on ``--data-file``, without quoting them."""
    lo, hi = float(values.min()), float(values.max())
    if from_file:
        check(low <= lo and hi <= high, "data-file",
              f"{source} holds values outside --range {low:g} {high:g}; give a --range "
              "that covers them (it sets the sensitivity)")
    check(low <= lo and hi <= high, "range",
          f"{source} holds values in [{lo:g}, {hi:g}], outside --range {low:g} {high:g}; "
          f"widen the range (it sets the sensitivity)")


def population_variance(values: np.ndarray) -> float:
    """Variance of the values over the nodes (ddof = 0)."""
    return float(np.var(values)) if values.size else math.nan


def statsmodels_file(relative: str, name: str) -> Path:
    """A data file shipped inside the installed ``statsmodels`` wheel
    (``statsmodels/datasets/<relative>``), for the table ``name`` (the ``datasets`` extra:
    netdp's core install leaves statsmodels out)."""
    spec = importlib.util.find_spec("statsmodels")
    if spec is None or not spec.submodule_search_locations:
        raise InputError("dataset", f"{name} ships with statsmodels, which netdp's core "
                         "install leaves out: pip install 'netdp[datasets]'")
    return Path(next(iter(spec.submodule_search_locations))) / "datasets" / relative


def packaged_table(file: str, param: str) -> tuple[np.ndarray, list[str]]:
    """A gzipped CSV table of numbers shipped inside netdp (``netdp/data/<file>``; where
    each comes from and its licence: ``netdp/data/DATASETS.md``)."""
    data = resources.files("netdp.data").joinpath(file).read_bytes()
    text = gzip.decompress(data).decode("utf-8")
    return numeric_rows(list(csv.reader(text.splitlines())), file, param)


def read_numeric_csv(path: Path, param: str) -> tuple[np.ndarray, list[str]]:
    """A CSV file of numbers under one header row: the table and the column names (errors
    name the flag ``param``)."""
    return numeric_rows(read_csv_rows(path, param), path.name, param)


def numeric_rows(rows: list[list[str]], name: str, param: str) -> tuple[np.ndarray, list[str]]:
    """The CSV rows ``rows`` of the file ``name`` as a table of numbers under one header
    row, and the column names (errors name the flag ``param``)."""
    check(len(rows) >= 3, param, f"{name} needs a header row and at least two rows")
    header = [h.strip() for h in rows[0]]
    try:
        table = np.array(rows[1:], dtype=np.float64)
    except ValueError:
        raise InputError(param, f"{name} must hold numbers only below its header "
                         "(and the same number of cells on every row)") from None
    check(table.ndim == 2 and table.shape[1] == len(header), param,
          f"{name}: every row needs {len(header)} cells")
    check(bool(np.isfinite(table).all()), param, f"{name} holds non-finite values")
    return table, header
