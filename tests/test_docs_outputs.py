"""Every command block of the docs whose output the page shows, run again: each line the
page prints is in the command's output (issue 40: every number in the docs regenerated
by a test).

A page shows a command in a ``bash`` block and its output in the ``text`` block right
after it. Each such pair whose block is one ``netdp`` command (``\\`` continuations
joined) runs in the slow tier, in a fresh folder, and every line of the shown output but
the timings (and elisions, ``...``) must appear in the real output, in order. The default
tier checks the comparison itself on a cheap command, and that it fails on a planted
stale number. A shell block of several commands (a file written, then read) directly
followed by its output runs too, as a reader following the page does: a page's blocks in
order, in one folder, ``netdp`` and ``python`` this checkout's, the output (errors
included) compared the same way.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
#: Lines that carry a wall time or a machine's speed: not compared.
TIMED = re.compile(r"hops in \S+ s\b|^\s*time: |\b[0-9.]+ ?s\)?$|seconds|runtime|"
                   r"\(\d+(\.\d+)? s\b|took \S+ s\b|in [0-9.]+ s\b")
TIMEOUT = 900


def shown_commands() -> list[tuple[str, str, str]]:
    """``(id, command, shown output)`` of every one-command block followed by its output."""
    out = []
    for page in [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]:
        blocks = FENCE.findall(page.read_text(encoding="utf-8"))
        for i, (kind, body) in enumerate(blocks[:-1]):
            if kind not in ("bash", "") or blocks[i + 1][0] != "text":
                continue
            lines = [line for line in body.replace("\\\n", " ").splitlines()
                     if line.strip() and not line.lstrip().startswith("#")]
            if len(lines) != 1 or not re.match(r"(python -m )?netdp ", lines[0].strip()):
                continue
            out.append((f"{page.name}:{i}", lines[0].split(" #")[0].strip(), blocks[i + 1][1]))
    return out


def shown_scripts() -> list[tuple[str, str, str]]:
    """``(id, script, shown output)`` of every Python block (a script, not a ``>>>``
    session) followed by its output."""
    out = []
    for page in sorted((REPO / "docs").glob("*.md")):
        blocks = FENCE.findall(page.read_text(encoding="utf-8"))
        for i, (kind, body) in enumerate(blocks[:-1]):
            if kind == "python" and blocks[i + 1][0] == "text" and not body.startswith(">>>"):
                out.append((f"{page.name}:{i}", body, blocks[i + 1][1]))
    return out


def shown_shell_blocks() -> list[tuple[str, list[tuple[str, str, str]]]]:
    """``(page, [(id, script, shown output), ...])``: each page's shell blocks that are not
    one ``netdp`` command (:func:`shown_commands`) and are directly followed by their
    output, in page order; pages without one left out."""
    out = []
    for page in [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]:
        text = page.read_text(encoding="utf-8")
        fences = list(FENCE.finditer(text))
        blocks = []
        for i, (a, b) in enumerate(zip(fences, fences[1:], strict=False)):
            if (a.group(1) not in ("bash", "") or b.group(1) != "text"
                    or text[a.end():b.start()].strip()):
                continue
            lines = [line for line in a.group(2).replace("\\\n", " ").splitlines()
                     if line.strip() and not line.lstrip().startswith("#")]
            if len(lines) == 1 and re.match(r"(python -m )?netdp ", lines[0].strip()):
                continue  # one netdp command: shown_commands's
            blocks.append((f"{page.name}:{i}", a.group(2), b.group(2)))
        if blocks:
            out.append((page.name, blocks))
    return out


def argv(command: str) -> list[str]:
    words = shlex.split(command)
    rest = words[3:] if words[:3] == ["python", "-m", "netdp"] else words[1:]
    return [sys.executable, "-m", "netdp", *rest]


def missing(shown: str, printed: str) -> list[str]:
    """The shown lines (timings and elisions aside) that the printed output lacks, in
    order; the version in a header line is free."""
    def norm(line: str) -> str:
        return re.sub(r"netdp \d+\.\d+\.\d+", "netdp VERSION", " ".join(line.split()))

    have = [norm(line) for line in printed.splitlines()]
    want = [norm(line) for line in shown.splitlines()
            if line.strip() and not TIMED.search(line) and "..." not in line]
    out, at = [], 0
    for line in want:
        try:
            at = have.index(line, at) + 1
        except ValueError:
            out.append(line)
    return out


CASES = shown_commands()


@pytest.mark.slow
@pytest.mark.parametrize(("where", "command", "shown"), CASES, ids=[c[0] for c in CASES])
def test_each_shown_output_is_what_the_command_prints(where, command, shown, tmp_path):
    proc = subprocess.run(argv(command), cwd=tmp_path, capture_output=True, text=True,
                          timeout=TIMEOUT, env=None)
    assert proc.returncode == 0, (where, proc.stderr[-2000:])
    gone = missing(shown, proc.stdout)
    assert not gone, f"{where}: `{command}` no longer prints:\n" + "\n".join(gone[:10])


SCRIPTS = shown_scripts()


@pytest.mark.slow
@pytest.mark.parametrize(("where", "script", "shown"), SCRIPTS, ids=[c[0] for c in SCRIPTS])
def test_each_shown_script_prints_what_the_page_shows(where, script, shown, tmp_path):
    """The same for the Python scripts of the docs (``docs/composition.md``'s recipe),
    run with this checkout's netdp."""
    import os

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=TIMEOUT, env=env)
    assert proc.returncode == 0, (where, proc.stderr[-2000:])
    gone = missing(shown, proc.stdout)
    assert not gone, f"{where} no longer prints:\n" + "\n".join(gone[:10])


PAGES = shown_shell_blocks()


def this_checkout_on_path(folder: Path) -> dict[str, str]:
    """An environment whose ``netdp`` and ``python`` are this checkout's, with this
    interpreter (shims in ``folder``)."""
    import os

    folder.mkdir()
    for name, run in (("python", f'exec "{sys.executable}" "$@"'),
                      ("netdp", f'exec "{sys.executable}" -m netdp "$@"')):
        shim = folder / name
        shim.write_text(f"#!/bin/sh\n{run}\n")
        shim.chmod(0o755)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}",
            "PYTHONPATH": str(REPO)}


@pytest.mark.slow
@pytest.mark.parametrize(("page", "blocks"), PAGES, ids=[p for p, _ in PAGES])
def test_each_page_s_shell_blocks_print_what_the_page_shows(page, blocks, tmp_path):
    """A page's blocks of several commands, in order in one folder (a later block reads
    what an earlier one wrote); a command that the page shows refused is refused in its
    one line, never with a traceback."""
    env = this_checkout_on_path(tmp_path / "bin")
    work = tmp_path / "work"
    work.mkdir()
    for where, script, shown in blocks:
        printed = run_block(script, work, env)
        assert "Traceback" not in printed, (where, printed[-2000:])
        gone = missing(shown, printed)
        assert not gone, f"{where} no longer prints:\n" + "\n".join(gone[:10])


def run_block(script: str, work: Path, env: dict[str, str]) -> str:
    """What a shell block prints (its errors included), run in ``work``."""
    return subprocess.run(["bash", "-c", script], cwd=work, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=TIMEOUT).stdout


def test_a_shell_block_passes_fresh_and_fails_with_a_planted_stale_number(tmp_path):
    """The default tier's check of the shell blocks' path: the refused weight of
    docs/your-network.md (a file written, then read; a second) passes, and fails once a
    number of its shown line is changed."""
    where, script, shown = next(b for _, blocks in PAGES for b in blocks
                                if "bad.txt" in b[1])
    work = tmp_path / "work"
    work.mkdir()
    printed = run_block(script, work, this_checkout_on_path(tmp_path / "bin"))
    assert "--topology" in printed and not missing(shown, printed), (where, printed)
    stale = shown.replace("1e-300", "1e-301")
    assert stale != shown and missing(stale, printed) == [" ".join(stale.split())]


BOUNDS = "python -m netdp bounds --eps0 0.1 --delta 1e-7 --curve complete-ldp-chernoff"


def test_the_check_passes_a_fresh_output_and_catches_a_planted_stale_number(tmp_path):
    """The quickstart's bounds command (a second): its shown output passes; the same with
    one digit changed does not. And the docs hold such pairs (the slow tier's cases)."""
    case = next(c for c in CASES if c[1].startswith(BOUNDS))
    proc = subprocess.run(argv(case[1]), cwd=tmp_path, capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert not missing(case[2], proc.stdout)
    stale = re.sub(r"9\.176", "9.177", case[2], count=1)
    assert stale != case[2] and missing(stale, proc.stdout) == [
        " ".join(line.split()) for line in stale.splitlines() if "9.177" in line][:1]
    assert len(CASES) >= 15
    assert sum(len(blocks) for _, blocks in PAGES) >= 8
    assert any(where.startswith("composition.md") for where, _, _ in SCRIPTS)


#: The exactness page's tables, each rendered from its CSV by
#: ``experiments/bench_exactness.py --markdown`` (the "other" column's accountant prefix,
#: ``pld:``, is newer than the first table, whose header names pld instead).
EXACTNESS_TABLES = ("target", "default", "complete")


@pytest.mark.parametrize("name", EXACTNESS_TABLES)
def test_the_exactness_tables_are_their_csv(name):
    """docs/accounting-exactness.md: every line of a table is the CSV's rendering, so a
    rerun that replaces a CSV's rows and forgets the page (or the other way) fails."""
    sys.path.insert(0, str(REPO / "experiments"))
    try:
        import bench_exactness
    finally:
        sys.path.remove(str(REPO / "experiments"))
    page = (REPO / "docs" / "accounting-exactness.md").read_text()
    table = bench_exactness.markdown(str(REPO / "docs" / "figures" /
                                         f"accounting_exactness_{name}.csv"))
    rows = [re.sub(r"\| pld: ", "| ", line) if name == "target" else line
            for line in table.strip().splitlines()[2:]]
    missing = [row for row in rows if row not in page]
    assert rows and not missing, missing
