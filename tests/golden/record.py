"""Record the golden ``--json`` outputs: ``python tests/golden/record.py``.

Run it only to *create* the reference (before a change in how something is computed);
tests/test_golden.py checks the package against these files.
"""

from __future__ import annotations

import contextlib
import io
import json
import shlex
import sys
from pathlib import Path

HERE = Path(__file__).parent


def commands() -> list[tuple[str, list[str]]]:
    """``(name, argv)`` of every golden command."""
    out = []
    for line in (HERE / "commands.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, args = (part.strip() for part in line.split("|", 1))
        out.append((name, shlex.split(args)))
    return out


def run(argv: list[str]) -> dict:
    """Run ``netdp ARGV`` in process and parse its JSON output."""
    from netdp.run.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(argv)
    if code != 0:
        raise RuntimeError(f"netdp {' '.join(argv)} exited with {code}")
    return json.loads(buf.getvalue())


if __name__ == "__main__":
    import os
    import tempfile

    only = set(sys.argv[1:])
    os.chdir(tempfile.mkdtemp())  # --compare writes its curves into the working folder
    for name, argv in commands():
        if only and name not in only:
            continue
        out = run(argv)
        out.pop("provenance", None)  # the checkout's commit: not a result (test_provenance)
        (HERE / f"{name}.json").write_text(json.dumps(out, indent=1) + "\n")
        print("recorded", name)
