"""Checks that a `netdp plot` figure holds real content, shared by the plot tests."""

from __future__ import annotations

import io

import numpy as np
from matplotlib.image import imread

from netdp.run.cli import main


def run(capsys, *argv):
    """``netdp ARGV``: exit status, stdout and stderr."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _render(fig) -> np.ndarray:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=60)
    buf.seek(0)
    return imread(buf)[..., :3]


def data_ink(fig) -> float:
    """Fraction of pixels that change when the plotted data (lines, bars, bands, dots,
    images) are removed: 0 for a figure with axes, labels and legend but nothing drawn.
    Removes them from ``fig``: inspect the figure before."""
    before = _render(fig)
    for ax in fig.axes:
        for artist in [*ax.lines, *ax.collections, *ax.patches, *ax.images]:
            artist.remove()
    after = _render(fig)
    return float((np.abs(before - after).max(axis=2) > 0.1).mean())


def assert_image(path, figures=None, min_ink=0.005) -> None:
    """A readable PNG that is not one colour, with plotted content."""
    img = imread(path)[..., :3]
    assert img.shape[0] > 300 and img.shape[1] > 400
    assert img.reshape(-1, 3).std(axis=0).max() > 0.05, "a single colour"
    background = np.all(img > 0.95, axis=2).mean()
    assert background < 0.97, f"almost empty: {background:.3f} background"
    if figures is not None:
        assert figures, "no figure was saved"
        assert data_ink(figures[-1]) > min_ink
