"""Atomic file writes: a reader sees the old file or the whole new one, never a part.

Everything netdp writes (JSON results, pair matrices, curves, result tables, figures)
goes through :func:`atomic`: a temporary file in the same folder, flushed and fsynced,
given the usual permissions, then renamed over the target. On any error the temporary
file is removed and the target is untouched. A failed write (a read-only folder, a full
disk, a folder where the file should be: any :class:`OSError`) is reported as an
:class:`~netdp.core.errors.InputError` on the flag that named the file, ``cannot write PATH:
REASON``, so the command line shows it as one line.

What the target is decides how it is replaced, so that a write never destroys what the
user pointed at:

* a **symbolic link** is followed: the file it names is replaced (atomically, as above),
  the link stays a link (a dangling link creates the file it names);
* a **device, FIFO or socket** (``/dev/stdout``, a named pipe) is written to directly,
  never renamed over (no atomicity: there is no file to keep);
* a regular file with **hard links** is rewritten in place once the whole content is on
  disk in the temporary file, so that every name keeps seeing it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import numpy as np

from netdp.core.errors import InputError


def path_kind(name: str | os.PathLike[str]) -> str | None:
    """``"dir"``, ``"file"`` or ``"other"`` for what ``name`` names, ``None`` where nothing
    is there or the system cannot stat it (a name too long, a loop of links): the reader
    of that input then says, in one line, what is wrong with it."""
    try:
        mode = os.stat(name).st_mode
    except (OSError, ValueError):  # ValueError: a NUL byte in the name
        return None
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"

@contextmanager
def atomic(path: str | Path, tmp_prefix: str | None = None,
           param: str = "out") -> Iterator[BinaryIO]:
    """A binary file handle whose content replaces ``path`` when the block ends.

    Parameters
    ----------
    path
        The file to write.
    tmp_prefix
        Name prefix of the temporary file (default ``.NAME.``; suffix ``.tmp``).
    param
        The flag (or positional argument) that named ``path``: an :class:`OSError` while
        writing becomes ``InputError(param, "cannot write PATH: REASON")``.
    """
    path = Path(os.path.realpath(path)) if Path(path).is_symlink() else Path(path)
    try:
        mode = os.stat(path).st_mode if path.exists() else None
        links = os.stat(path).st_nlink if mode is not None and stat.S_ISREG(mode) else 1
    except OSError as exc:
        raise cannot_write(path, exc, param) from exc
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        yield from _stream(path, param)  # a device or a FIFO: write through it
        return
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".",
                                   prefix=tmp_prefix or f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise cannot_write(path, exc, param) from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fchmod(fh.fileno(), 0o666 & ~_umask())  # mkstemp makes 0600 files
            os.fsync(fh.fileno())
        if links > 1:  # keep the inode every hard link names
            shutil.copyfile(tmp, path)
            Path(tmp).unlink()
        else:
            os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
            raise cannot_write(path, exc, param) from exc
        raise


def _stream(path: Path, param: str) -> Iterator[BinaryIO]:
    """A handle on a device or FIFO, written in place."""
    try:
        with open(path, "wb") as fh:
            yield fh
            fh.flush()
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            raise
        raise cannot_write(path, exc, param) from exc


def write_atomic(path: str | Path, data, binary: bool = False,
                 tmp_prefix: str | None = None, param: str = "out") -> None:
    """Write text (UTF-8), or a numpy array as ``.npy`` when ``binary``, atomically;
    an :class:`OSError` becomes an :class:`InputError` on ``param`` (see :func:`atomic`)."""
    with atomic(path, tmp_prefix, param) as fh:
        if binary:
            np.save(fh, data)
        else:
            fh.write(data.encode("utf-8"))


def cannot_write(path: str | Path, exc: OSError, param: str = "out") -> InputError:
    """``InputError(param, "cannot write 'PATH': REASON")`` for a failed write."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    return InputError(param, f"cannot write {str(path)!r}: {reason}")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
