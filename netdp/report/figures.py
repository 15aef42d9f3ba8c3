"""Saving figures: one atomic writer for every image netdp makes (plots, learning curves)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from netdp import __version__
from netdp.core.errors import InputError
from netdp.core.files import atomic

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FORMATS = (".png", ".pdf", ".svg")


def save(fig: Figure, path: str | Path, dpi: int = 150, param: str = "out") -> Path:
    """Write ``fig`` to ``path`` (format from the extension: .png, .pdf, .svg) through a
    temporary file in the same folder and an atomic rename; same input, same bytes. A
    failed write (a read-only folder, a full disk) is an :class:`InputError` on ``param``."""
    import matplotlib

    path = Path(path)
    fmt = path.suffix.lower()
    if fmt not in FORMATS:
        raise InputError(param, f"unknown image format {path.suffix or '(none)'!r}; "
                         f"allowed: {', '.join(FORMATS)}")
    meta = {".png": {"Software": f"netdp {__version__}"},
            ".pdf": {"Creator": f"netdp {__version__}", "CreationDate": None},
            ".svg": {"Creator": f"netdp {__version__}", "Date": None}}[fmt]
    with atomic(path, param=param) as fh, matplotlib.rc_context({"svg.hashsalt": "netdp"}):
        fig.savefig(fh, format=fmt[1:], dpi=dpi, metadata=meta)
    return path
