"""The example notebooks: stored without outputs, and each runs from top to bottom."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "examples").glob("*.ipynb"))


def test_there_is_an_example_notebook():
    assert [p.name for p in NOTEBOOKS] == ["quickstart.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebooks_are_stored_without_outputs(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code
    stored = [i for i, c in enumerate(code) if c.get("outputs") or c.get("execution_count")]
    assert stored == [], f"{path.name}: code cells {stored} hold outputs (clear them)"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, monkeypatch):
    """Every cell runs without error in a fresh kernel of this Python (the one ipykernel
    installs as its native kernel); the frames and the plot come out, and every cell's
    timing is recorded. How long the cells take is measured by
    ``experiments/bench_notebook.py`` (docs/performance.md), not asserted here: a wall-clock
    bound fails on a busy machine (it did in CI: 62 s against an idle 21 s)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    kernelspec = pytest.importorskip("ipykernel.kernelspec")
    # the kernel imports this checkout's netdp, whatever is installed
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=120, record_timing=True,
                                     kernel_name=kernelspec.KERNEL_NAME,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    seconds = sum(_seconds(c) for c in notebook.cells if c.cell_type == "code")
    text = "\n".join(str(o.get("data", {}).get("text/plain", o.get("text", "")))
                     for c in notebook.cells if c.cell_type == "code" for o in c.outputs)
    assert "<Report sum on Zachary's Karate Club" in text
    assert "ordered pairs" in text and "provenance_commit" in text
    assert "one run then DP-SGD" in text  # the composition cell (docs/composition.md)
    assert any("image/png" in o.get("data", {}) for c in notebook.cells
               if c.cell_type == "code" for o in c.outputs), "the plot is missing"
    assert seconds > 0, f"{path.name}: nbclient recorded no timing"


def _seconds(cell) -> float:
    """How long a cell ran (nbclient's recorded timing)."""
    timing = cell.metadata["execution"]
    start, end = (datetime.fromisoformat(timing[k].replace("Z", "+00:00"))
                  for k in ("iopub.execute_input", "shell.execute_reply"))
    return (end - start).total_seconds()
