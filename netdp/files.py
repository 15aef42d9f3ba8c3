"""Atomic file writes: a reader sees the old file or the whole new one, never a part.

Everything netdp writes (JSON results, pair matrices, curves, result tables, figures)
goes through :func:`atomic`: a temporary file in the same folder, flushed and fsynced,
given the usual permissions, then renamed over the target. On any error the temporary
file is removed and the target is untouched.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import numpy as np


@contextmanager
def atomic(path: str | Path, tmp_prefix: str | None = None) -> Iterator[BinaryIO]:
    """A binary file handle whose content replaces ``path`` when the block ends."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".",
                               prefix=tmp_prefix or f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fchmod(fh.fileno(), 0o666 & ~_umask())  # mkstemp makes 0600 files
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomic(path: str | Path, data, binary: bool = False,
                 tmp_prefix: str | None = None) -> None:
    """Write text (UTF-8), or a numpy array as ``.npy`` when ``binary``, atomically."""
    with atomic(path, tmp_prefix) as fh:
        if binary:
            np.save(fh, data)
        else:
            fh.write(data.encode("utf-8"))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
