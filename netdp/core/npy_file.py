"""A user's ``.npy`` matrix read with one clear line for each way it can fail.

``--gossip-matrix M.npy``, ``plot --pairs`` and ``report --pairs`` read a NumPy file the
user names. :func:`read_npy` turns numpy's messages (which speak of ``allow_pickle``,
``EOFError`` or a header it could not parse) into what the user did: an empty file, a
file that is not ``.npy``, an array of Python objects, a cut or damaged file.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

import numpy as np

from netdp.core.errors import InputError, one_line
from netdp.core.reading import check_regular

MAGIC = b"\x93NUMPY"


def read_npy(path: str | Path, param: str, mmap: bool = False) -> np.ndarray:
    """The array of the ``.npy`` file ``path``, or :class:`InputError` on ``param``.

    Parameters
    ----------
    path
        The file.
    param
        The parameter that named it (the refusal's name).
    mmap
        Map the file read-only instead of reading it (the shape is known before the data
        are read).

    Examples
    --------
    >>> import tempfile, os
    >>> name = os.path.join(tempfile.mkdtemp(), "m.npy")
    >>> np.save(name, np.eye(2))
    >>> read_npy(name, "pairs").shape
    (2, 2)
    >>> _ = open(name, "w").write("0 1 2")
    >>> try:
    ...     read_npy(name, "pairs")
    ... except InputError as err:
    ...     print(err.param)
    pairs
    """
    path = Path(path)
    name = path.name
    check_regular(path, param, "a .npy file")
    try:
        with path.open("rb") as fh:
            head = fh.read(len(MAGIC))
    except OSError as exc:
        raise InputError(param, f"{name}: cannot read ({exc.strerror or one_line(exc)})") \
            from None
    if not head:
        raise InputError(param, f"{name}: the file is empty")
    if head != MAGIC:
        raise InputError(param, f"{name}: not a .npy file (it does not start with numpy's "
                                f"header; save it with numpy.save)")
    _check_header(path, param)
    mode: Literal["r"] | None = "r" if mmap else None
    try:
        array = np.load(path, mmap_mode=mode, allow_pickle=False)
    except ValueError as exc:
        if "pickle" in str(exc) or "Python objects" in str(exc):
            raise InputError(param, f"{name}: holds Python objects, not numbers") from None
        raise InputError(param, f"{name}: a damaged .npy file ({one_line(exc, 80)})") \
            from None
    except (OSError, EOFError, OverflowError) as exc:  # a cut file
        raise InputError(param, f"{name}: a cut or damaged .npy file "
                                f"({one_line(exc, 80) or type(exc).__name__})") from None
    if not isinstance(array, np.ndarray):
        raise InputError(param, f"{name}: holds several arrays (a .npz?); give one matrix")
    return array


def _check_header(path: Path, param: str) -> None:
    """Refuse, before numpy allocates it, an array whose header asks for more bytes than
    the file holds (a shape of 10^20 rows, a cut file), or for Python objects."""
    from numpy.lib import format as npy

    name = path.name
    try:
        with path.open("rb") as fh:
            version = npy.read_magic(fh)
            read = npy.read_array_header_1_0 if version == (1, 0) else \
                npy.read_array_header_2_0
            shape, _, dtype = read(fh)
            start = fh.tell()
        size = path.stat().st_size
    except (ValueError, OverflowError, OSError, EOFError, SyntaxError) as exc:
        raise InputError(param, f"{name}: a damaged .npy file (its header: "
                                f"{type(exc).__name__})") from None
    if dtype.hasobject:
        raise InputError(param, f"{name}: holds Python objects, not numbers")
    need = math.prod(int(d) for d in shape) * dtype.itemsize
    if need > size - start:
        raise InputError(param, f"{name}: a cut or damaged .npy file (its header's shape "
                                f"needs {need} bytes of data, the file holds {size - start})")
