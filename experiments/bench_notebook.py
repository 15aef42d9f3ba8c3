"""How long a reader waits for the example notebook: each code cell's wall time, in a fresh
kernel, against the default ``netdp simulate`` as a whole process in the same run.

Usage: python experiments/bench_notebook.py [--repeat 3]

Runs the notebook ``repeat`` times, alternating with the baseline command, and prints each
cell's median seconds and the whole notebook's ratio to the baseline's median. The notebook's
test (tests/test_notebooks.py) checks that every cell runs; this is where its time is read.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
from datetime import datetime
from pathlib import Path

from bench_startup import wall

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "quickstart.ipynb"
BASELINE = [sys.executable, "-m", "netdp", "simulate"]


def cell_seconds(path: Path) -> list[tuple[str, float]]:
    """Each code cell's first line and its wall seconds, from one run in a fresh kernel."""
    import nbclient
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(notebook, timeout=600, record_timing=True,
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    out = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        timing = cell.metadata["execution"]
        start, end = (datetime.fromisoformat(timing[k].replace("Z", "+00:00"))
                      for k in ("iopub.execute_input", "shell.execute_reply"))
        out.append((cell.source.splitlines()[0][:50], (end - start).total_seconds()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    wall(BASELINE)  # warm-up: page cache, numba's kernel cache
    runs, bases = [], []
    for _ in range(args.repeat):
        runs.append(cell_seconds(NOTEBOOK))
        bases.append(wall(BASELINE))
    base = statistics.median(bases)
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}; "
          f"median of {args.repeat} runs")
    print(f"{'cell':52} {'median s':>9}")
    for i, (head, _) in enumerate(runs[0]):
        print(f"{head:52} {statistics.median(r[i][1] for r in runs):9.2f}")
    total = statistics.median(sum(s for _, s in r) for r in runs)
    print(f"{'all cells':52} {total:9.2f}")
    print(f"{'netdp simulate (defaults), whole process':52} {base:9.2f}")
    print(f"{'all cells / baseline':52} {total / base:9.2f}")


if __name__ == "__main__":
    main()
