"""Figures: one style (colour-blind-safe palette, markers and line styles that read in
greyscale, plain log ticks, legends below the axes) and one atomic writer for every image
netdp makes (plots, learning curves, pair maps)."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import numpy as np

from netdp.core.errors import InputError
from netdp.core.files import atomic
from netdp.core.version import __version__

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FORMATS = (".png", ".pdf", ".svg")
#: Most histogram bins a figure draws: beyond them a figure takes minutes and reads as noise.
MAX_BINS = 10_000


def save(fig: Figure, path: str | Path, dpi: int = 150, param: str = "out") -> Path:
    """Write ``fig`` to ``path`` (format from the extension: .png, .pdf, .svg) through a
    temporary file in the same folder and an atomic rename; same input, same bytes. A
    failed write (a read-only folder, a full disk) is an :class:`InputError` on ``param``."""
    path = Path(path)
    fmt = path.suffix.lower()
    if fmt not in FORMATS:
        raise InputError(param, f"unknown image format {path.suffix or '(none)'!r}; "
                         f"allowed: {', '.join(FORMATS)}")
    with atomic(path, param=param) as fh:
        draw(fig, fh, fmt, dpi)
    return path


def draw(fig: Figure, fh: BinaryIO, fmt: str, dpi: int = 150) -> None:
    """Write ``fig`` to the open handle ``fh`` in format ``fmt`` (``".png"``, ``".pdf"``,
    ``".svg"``); same input, same bytes."""
    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": "netdp"}):
        fig.savefig(fh, format=fmt[1:], dpi=dpi, metadata=METADATA[fmt])


#: What each format records of the writer (no date: same input, same bytes).
METADATA = {".png": {"Software": f"netdp {__version__}"},
            ".pdf": {"Creator": f"netdp {__version__}", "CreationDate": None},
            ".svg": {"Creator": f"netdp {__version__}", "Date": None}}


def svg_text(fig: Figure) -> str:
    """``fig`` as an SVG document, the text drawn as paths (no font needed to show it);
    same input, same text."""

    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "netdp", "svg.fonttype": "path"}):
        fig.savefig(buffer, format="svg", metadata=METADATA[".svg"])
    return buffer.getvalue()


#: Okabe-Ito, colour-blind safe (its pale yellow replaced by wine, visible on white).
COLORS = ("#000000", "#E69F00", "#0072B2", "#009E73", "#D55E00", "#CC79A7", "#56B4E9",
          "#882255")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: Line styles of data series (one per accountant / measure); ':' and '-.' are reserved
#: for the LDP and theory reference lines.
LINESTYLES = ("-", "--", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)), (0, (1, 1)))
LDP_STYLE = ":"
THEORY_STYLE = "-."


def fmt_value(value) -> str:
    if isinstance(value, float | np.floating):
        return f"{value:g}"
    return str(value)


def wrap_title(text: str, width: int) -> str:
    """Wrap each line of a title to ``width`` characters."""
    text = text.replace(" = ", "\u00a0=\u00a0")  # never break "x = 1" apart
    return "\n".join(textwrap.fill(line, width) for line in text.split("\n"))


def log_ticks(axis, limits: tuple[float, float]) -> None:
    """Label 1-2-5 ticks in plain numbers when a log axis spans less than 3 decades."""
    import matplotlib.ticker as mticker

    lo, hi = sorted(limits)
    if lo > 0 and hi / lo < 1e3:
        decades = 10.0 ** np.arange(np.floor(np.log10(lo)), np.ceil(np.log10(hi)) + 1)
        subs: tuple[float, ...] = (1.0, 2.0, 5.0)
        if np.sum((np.outer(decades, subs) >= lo) & (np.outer(decades, subs) <= hi)) < 3:
            subs = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)
        axis.set_major_locator(mticker.LogLocator(base=10, subs=subs))
        axis.set_major_formatter(mticker.FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(mticker.NullFormatter())


def style_axes(ax, xlabel: str, ylabel: str, logx: bool, logy: bool, title: str) -> None:
    if logx:
        ax.set_xscale("log")
        log_ticks(ax.xaxis, ax.get_xlim())
    if logy:
        ax.set_yscale("log")
        log_ticks(ax.yaxis, ax.get_ylim())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(wrap_title(title, 70), fontsize="medium")
    ax.grid(True, which="major", color="0.85", linewidth=0.6)
    if logx or logy:
        ax.grid(True, which="minor", color="0.93", linewidth=0.4)
    ax.set_axisbelow(True)


def legend_columns(fig: Figure, labels: list[str]) -> int:
    """How many columns of ``labels`` fit side by side across the figure."""
    width = 0.055 * max(map(len, labels)) + 0.6  # inches: a small-font label and its key
    return max(1, min(len(labels), int(fig.get_figwidth() // width)))


def place_legend(fig: Figure, ax, handles: list | None = None,
                 labels: list[str] | None = None) -> None:
    """One legend: inside the axes when short, else below them, in as many columns as
    fit (never a column beside the axes that takes their width)."""
    if handles is None or labels is None:
        handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    if len(handles) <= 5 and max(map(len, labels)) <= 40:
        ax.legend(handles, labels, fontsize="small", framealpha=0.9)
    else:
        columns = legend_columns(fig, labels)
        fig.set_figheight(fig.get_figheight() + 0.2 * -(-len(labels) // columns))
        fig.legend(handles, labels, fontsize="small", loc="outside lower center",
                   ncols=columns, frameon=False)


def band_handle(color: str = "0.55", alpha: float = 0.3):
    """The legend key of a shaded band."""
    from matplotlib.patches import Patch

    return Patch(facecolor=color, alpha=alpha, linewidth=0)
