"""A table of rows written as the CSV that ``pandas.read_csv`` reads in one call (the
experiments' shared writer)."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any


def write_csv(path: str | Path, rows: Iterable[Mapping[str, Any]],
              fields: Sequence[str]) -> None:
    """``rows`` under a header of ``fields``, the folder made if missing."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(fields))
        writer.writeheader()
        writer.writerows(rows)
