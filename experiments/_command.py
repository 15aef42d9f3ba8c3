"""``netdp simulate`` end to end, as a user runs it, beside a benchmark's kernels (issue 43).

:func:`run_command` runs one command line through :func:`netdp.run.cli.main` in a fresh
process, with ``--json --quiet --out FILE`` added, and returns its wall time (measured from
here: start-up, imports and exit included), the seconds of its imports and of ``main``,
its peak resident memory (:func:`netdp.run.resources.peak_resident_bytes`, read in the
child: its own VmHWM, where ``ru_maxrss`` of a child started by subprocess would inherit
the parent's peak) and the report's ``timing`` phases.

The benchmarks of ``experiments/`` run the command of each row with :func:`beside`
(the command's figures and their ratio to the kernels the row timed), print them with
:data:`HEADER` and :func:`cells`, and take ``--no-command`` and ``--command-timeout``
from :func:`add_arguments`.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MIB = 2**20

#: Runs the command's argv (``sys.argv[1:]``) in this process, then prints one JSON line:
#: its exit status, the seconds of the imports and of the command, and the process's peak.
WRAPPER = (
    "import json, sys, time\n"
    "t0 = time.perf_counter()\n"
    "from netdp.run.cli import main\n"
    "from netdp.run.resources import peak_resident_bytes\n"
    "t1 = time.perf_counter()\n"
    "status = main(sys.argv[1:])\n"
    "t2 = time.perf_counter()\n"
    "print(json.dumps({'status': status, 'import_s': t1 - t0, 'main_s': t2 - t1,\n"
    "                  'peak_bytes': peak_resident_bytes()}))\n"
)

#: The columns :func:`cells` fills, in its order.
HEADER = ("command s", "command peak MiB", "command / kernels")
#: :data:`HEADER`'s cells of a markdown table's separator line.
RULE = "---|" * len(HEADER)


def run_command(argv: list[str], timeout: float) -> dict[str, Any]:
    """Run ``netdp <argv> --json --quiet --out FILE`` in a fresh process.

    Parameters
    ----------
    argv
        The command's arguments after ``netdp`` (``["simulate", "--nodes", "100", ...]``).
    timeout
        Seconds allowed to the process; it is stopped after them.

    Returns
    -------
    dict
        ``status`` 0 with ``wall_s``, ``import_s``, ``main_s``, ``peak_bytes``, ``timing``
        (the report's phases) and ``report`` (the whole JSON report); otherwise ``status``
        (``main``'s exit status, else the process's; ``None`` when it was stopped or
        said nothing) and ``error``, why there are no figures.
    """
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        cmd = [sys.executable, "-c", WRAPPER, *argv, "--json", "--quiet", "--out", out]
        start = time.perf_counter()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"status": None, "error": f"stopped after {timeout:.0f} s"}
        wall = time.perf_counter() - start
        lines = done.stdout.strip().splitlines()
        own = json.loads(lines[-1]) if done.returncode == 0 and lines else None
        if own is None or own["status"] != 0:
            tail = (done.stderr.strip().splitlines() or ["?"])[-1]
            status = own["status"] if own is not None else done.returncode or None
            return {"status": status,
                    "error": f"failed (rc {done.returncode}, {wall:.0f} s): {tail}"}
        report = json.loads(Path(out).read_text())
    return {"status": 0, "wall_s": wall, "import_s": own["import_s"], "main_s": own["main_s"],
            "peak_bytes": own["peak_bytes"], "timing": report["timing"], "report": report}


def shell_line(argv: list[str]) -> str:
    """The command as a user types it (without the ``--json --out`` it is run with)."""
    return shlex.join(["netdp", *argv])


def beside(argv: list[str], kernels_s: float, timeout: float) -> dict[str, Any]:
    """The command of a benchmark's row, run once, as fields of that row.

    Parameters
    ----------
    argv
        The command's arguments after ``netdp``.
    kernels_s
        Seconds of the kernels the row timed, the command's counterpart.
    timeout
        Seconds allowed to the command's process.

    Returns
    -------
    dict
        ``command`` (the line), ``command_s`` (its process's wall time),
        ``command_peak_mib``, ``command_timing`` (the report's phases) and
        ``command_over_kernels``; or ``command`` and ``command_error``.
    """
    done = run_command(argv, timeout)
    if done["status"] != 0:
        return {"command": shell_line(argv), "command_error": done["error"]}
    return {"command": shell_line(argv), "command_s": done["wall_s"],
            "command_peak_mib": done["peak_bytes"] / MIB, "command_timing": done["timing"],
            "command_over_kernels": done["wall_s"] / kernels_s if kernels_s > 0 else None}


def cells(fields: dict[str, Any]) -> list[str]:
    """The :data:`HEADER` cells of a row's :func:`beside` fields (``-``: none, e.g.
    ``--no-command``; a failed command's reason in the first)."""
    if "command_s" not in fields:
        return [fields.get("command_error", "-"), "-", "-"]
    ratio = fields["command_over_kernels"]
    return [f"{fields['command_s']:.2f}", f"{fields['command_peak_mib']:,.0f}",
            "-" if ratio is None else f"{ratio:.2f}"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--no-command`` and ``--command-timeout``, the same in every benchmark."""
    parser.add_argument("--no-command", action="store_true",
                        help="time the kernels only, not the `netdp simulate` command of "
                             "each row in a fresh process")
    parser.add_argument("--command-timeout", type=float, default=900,
                        help="seconds allowed to one command's process (default 900)")


def padded(texts: list[str] | tuple[str, ...]) -> str:
    """``texts`` right-aligned in the widths of :data:`HEADER` (fixed-width tables)."""
    return "".join(f"{text:>{len(name) + 2}}" for text, name in zip(texts, HEADER, strict=True))


def markdown(texts: list[str] | tuple[str, ...]) -> str:
    """``texts`` as the trailing cells of a markdown table's line (`` a | b |``)."""
    return "".join(f" {text} |" for text in texts)


def sentence(fields: dict[str, Any]) -> str:
    """A row's :func:`beside` fields in words, for a script that prints lines, not tables."""
    if "command_s" not in fields:
        return f"command {fields.get('command_error', 'not run')}"
    wall, peak, ratio = cells(fields)
    return f"command {wall} s, peak {peak} MiB, {ratio} x the kernels"
