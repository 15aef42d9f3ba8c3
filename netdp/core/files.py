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

An output of several files (``--pairs-out``: the matrix and its labels) goes through
:func:`atomic_files`: every temporary file is complete before the first rename, and the
other run's companion file that no longer applies is removed, so a new matrix never sits
beside stale labels. The commands check their outputs before any work: a name that reads
as a folder (``newdir/``, :func:`check_file_name`) where a flag takes a file, and two
outputs at one file (:func:`check_distinct`, names resolved) or at one of the command's
inputs (:func:`check_not_inputs`), are refused in one line.
The command line turns SIGTERM into an interrupt (``netdp.run.cli.sigterm_raises``), so a
terminated command removes its temporary files as a failed write does.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator, Sequence
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

def names_folder(name: str | os.PathLike[str]) -> bool:
    """Whether an output name reads as a folder: empty, ending in a slash, or ending in
    ``.`` or ``..`` (``newdir/`` is a folder, never a file called ``newdir``)."""
    return os.path.basename(os.fspath(name)) in ("", ".", "..")


def check_file_name(name: str | os.PathLike[str], param: str = "out") -> None:
    """Refuse, as ``InputError(param, ...)``, an output name that reads as a folder where
    the flag takes a file (see :func:`names_folder`)."""
    text = os.fspath(name)
    if not text:
        raise InputError(param, "empty; give a file name")
    if names_folder(text):
        raise InputError(param, f"{text!r} names a folder; give a file name (e.g. "
                         f"{os.path.join(text, 'FILE')!r})")


def check_distinct(outputs: Iterable[tuple[str, str | os.PathLike[str] | None]],
                   companions: Iterable[tuple[str, str | os.PathLike[str] | None, str]] = (),
                   ) -> None:
    """Refuse two outputs of one command at one file, in one line naming both flags.

    Parameters
    ----------
    outputs
        ``(param, name)`` of each output flag given (``None``: not given). Names are
        compared resolved (``./x`` and ``x``, a link and its file, two hard links); a
        device or FIFO (``/dev/null``) may take several outputs.
    companions
        ``(param, name, what)`` of the files a flag writes beside its own (``--pairs-out``'s
        ``"labels"``): a collision with one is refused on the other flag.

    Raises
    ------
    InputError
        On the later of two flags that name one file.
    """
    seen: list[tuple[str, str, str]] = []  # (param, resolved name, what: a companion)
    given = [(p, n, "") for p, n in outputs] + list(companions)
    for param, name, companion in given:
        if name is None or path_kind(name) == "other":
            continue
        key = os.path.realpath(name)
        for other, other_key, other_companion in seen:
            if other == param and (companion or other_companion):
                continue  # a flag and its own companion file (never one name)
            if key == other_key or _same_file(key, other_key):
                if companion:  # the error is on a flag given, not on a derived file
                    param, other = other, param
                what = (f"{_flag(other)} writes its {companion or other_companion} there "
                        "too" if companion or other_companion else f"so does {_flag(other)}")
                raise InputError(param, f"writes {os.fspath(name)!r}, and {what}; give each "
                                 "output its own file")
        seen.append((param, key, companion))


def check_not_inputs(outputs: Iterable[tuple[str, str | os.PathLike[str] | None]],
                     inputs: Iterable[tuple[str, str | os.PathLike[str] | None]]) -> None:
    """Refuse an output at one of the command's inputs (``netdp report run.json --html
    run.json`` would replace what it reads), in one line naming the output's flag.

    Parameters
    ----------
    outputs
        ``(param, name)`` of each output given (``None``: not given).
    inputs
        ``(param, name)`` of each file or folder the command reads (``None``: none). An
        output inside an input folder is refused too (pass the parts of a folder that are
        read: a sweep's ``sweep.json`` and ``rows``). Names are compared resolved; a
        device or FIFO is exempt.
    """
    read = [(param, os.path.realpath(name)) for param, name in inputs
            if name is not None and path_kind(name) in ("file", "dir")]
    for param, name in outputs:
        if name is None or path_kind(name) == "other":
            continue
        key = os.path.realpath(name)
        for source, place in read:
            inside = key == place or key.startswith(place.rstrip(os.sep) + os.sep)
            if inside or _same_file(key, place):
                raise InputError(param, f"writes {os.fspath(name)!r}, which {_flag(source)} "
                                 "reads: an output would replace the command's input; give "
                                 "the output another file")


def sweep_parts(param: str, folder: str | os.PathLike[str] | None) -> list[
        tuple[str, str | os.PathLike[str] | None]]:
    """The inputs a sweep folder (or a table file) ``folder`` stands for in
    :func:`check_not_inputs`: its manifest and its rows (an output beside them in the
    folder is fine), or the file itself."""
    if folder is None or path_kind(folder) != "dir":
        return [(param, folder)]
    return [(param, os.path.join(folder, "sweep.json")), (param, os.path.join(folder, "rows"))]


def _flag(param: str) -> str:
    return InputError(param, "").label


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


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
    with atomic_files([path], tmp_prefix, param) as (fh,):
        yield fh


@contextmanager
def atomic_files(paths: Sequence[str | Path], tmp_prefix: str | None = None,
                 param: str = "out",
                 stale: Sequence[str | Path] = ()) -> Iterator[tuple[BinaryIO, ...]]:
    """Handles on several files that replace ``paths`` together when the block ends: all
    or nothing (see :func:`atomic`).

    Every temporary file is written, flushed and fsynced before the first is renamed, so
    an error (or a signal) in the block leaves every target as it was; the renames that
    follow cannot fail for want of space. The files of ``stale`` (another run's companion
    files, now out of date) are removed once the new files are in place.
    """
    with contextlib.ExitStack() as stack:
        pending: list[tuple[BinaryIO, Path, str, int]] = []  # handle, target, tmp, links
        try:
            handles = [_open(Path(p), tmp_prefix, param, stack, pending) for p in paths]
            yield tuple(handles)
            for fh in handles:
                fh.flush()
            for fh, _, _, _ in pending:
                os.fchmod(fh.fileno(), 0o666 & ~_umask())  # mkstemp makes 0600 files
                os.fsync(fh.fileno())
                fh.close()
            for _, target, tmp, links in pending:
                if links > 1:  # keep the inode every hard link names
                    shutil.copyfile(tmp, target)
                    Path(tmp).unlink()
                else:
                    os.replace(tmp, target)
            for old in stale:
                if path_kind(old) == "file":
                    Path(old).unlink()
        except BaseException as exc:
            for _, _, tmp, _ in pending:
                with contextlib.suppress(OSError):
                    Path(tmp).unlink(missing_ok=True)
            if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
                raise cannot_write(_failed(exc, paths), exc, param) from exc
            raise


def _open(path: Path, tmp_prefix: str | None, param: str, stack: contextlib.ExitStack,
          pending: list[tuple[BinaryIO, Path, str, int]]) -> BinaryIO:
    """A handle for ``path``: a temporary file beside it (added to ``pending``), or the
    device or FIFO itself."""
    try:
        mode = os.stat(path).st_mode if path.exists() else None
    except OSError as exc:
        raise cannot_write(path, exc, param) from exc
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        try:  # a device or a FIFO: write through the name given (/dev/stdout into a pipe
            # names /proc/self/fd/1, whose link target, pipe:[...], cannot be opened)
            return stack.enter_context(open(path, "wb"))
        except OSError as exc:
            raise cannot_write(path, exc, param) from exc
    path = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        links = os.stat(path).st_nlink if mode is not None and stat.S_ISREG(mode) else 1
    except OSError as exc:
        raise cannot_write(path, exc, param) from exc
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".",
                                   prefix=tmp_prefix or f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise cannot_write(path, exc, param) from exc
    fh = stack.enter_context(os.fdopen(fd, "wb"))
    pending.append((fh, path, tmp, links))
    return fh


def _failed(exc: OSError, paths: Sequence[str | Path]) -> str | Path:
    """The target an :class:`OSError` is about (its file name, else the first)."""
    named = getattr(exc, "filename", None)
    return named if isinstance(named, str) and named in map(str, paths) else paths[0]


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
