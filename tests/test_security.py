"""docs/security.md holds: every promise of its table points at a test that exists, and
the promises that had no test have one here (a sweep folder, a log, a report JSON never
make netdp open a file they name, seen by Python's own audit events).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from netdp.run.cli import main

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "security.md"
SECRET = "NETDP-SECRET-5e1f"
#: Paths the audit hook saw opened while :data:`_WATCHING` is set.
_OPENED: list[str] = []
_WATCHING: list[bool] = []


def _hook(event: str, args: tuple) -> None:
    if _WATCHING and event == "open" and args and isinstance(args[0], str | bytes | Path):
        _OPENED.append(str(args[0] if not isinstance(args[0], bytes) else args[0].decode(
            errors="replace")))


sys.addaudithook(_hook)  # audit hooks stay for the process: gated by _WATCHING


def _opened_while(argv: list[str]) -> tuple[int, list[str]]:
    """The exit status of ``netdp argv`` and every path the process opened meanwhile."""
    _OPENED.clear()
    _WATCHING.append(True)
    try:
        code = main(argv)
    finally:
        _WATCHING.clear()
    return code, list(_OPENED)


def test_every_promise_points_at_a_test_that_exists():
    """Each ``tests/...py::test_name`` the page cites is a test function of that file."""
    text = PAGE.read_text(encoding="utf-8")
    cited = re.findall(r"`(tests/[\w/]+\.py)::(\w+)(?:\[[^\]`]*\])?`", text)
    assert len(cited) >= 20, "the promise table cites its tests as `tests/FILE.py::test`"
    for path, name in cited:
        source = (REPO / path).read_text(encoding="utf-8")
        assert re.search(rf"^def {name}\(", source, re.M), f"{path}::{name} is not a test"


def test_every_promise_has_a_test():
    """Every row of the promise table names at least one test."""
    rows = [line for line in PAGE.read_text(encoding="utf-8").splitlines()
            if line.startswith("| P")]
    assert len(rows) >= 10
    for row in rows:
        assert "`tests/" in row, row


@pytest.fixture()
def sweep(tmp_path, monkeypatch):
    """A sweep folder whose manifest and rows name a secret file (as a graph, a data file
    and the spec), in a fresh current folder."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.toml").write_text('seeds = 1\n[fixed]\ntask = "sum"\nsteps = 20\n'
                                     "[grid]\nnodes = [4, 5]\n")
    assert main(["sweep", "s.toml", "--out", "sw", "--backend", "serial", "-q"]) == 0
    secret = tmp_path / "secret.csv"
    secret.write_text(f"{SECRET},0,1\n0,1,{SECRET}\n")
    manifest = tmp_path / "sw" / "sweep.json"
    data = json.loads(manifest.read_text())
    data["spec_file"] = str(secret)
    manifest.write_text(json.dumps(data))
    for part in (tmp_path / "sw" / "rows").glob("part-*.jsonl"):
        rows = [json.loads(line) for line in part.read_text().splitlines() if line]
        for row in rows:
            row.update(topology=str(secret), data_file=str(secret), graph_format="contacts")
        part.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return secret


@pytest.mark.parametrize("argv", [
    ["results", "sw"], ["results", "sw", "--provenance"], ["results", "sw", "--csv", "t.csv"],
    ["report", "sw", "--html", "page.html"],
    ["plot", "sw", "--preset", "privacy-vs-n", "--out", "f.png"],
    ["sweep", "s.toml", "--out", "sw", "--backend", "serial", "-q"],  # a resume
])
def test_a_sweep_folder_never_opens_a_file_it_names(sweep, argv, capsys):
    """Rows and a manifest edited to name another file (a graph, a data file, the spec):
    no command that reads the folder opens it, and its content reaches no output."""
    code, opened = _opened_while(argv)
    out, err = capsys.readouterr()
    assert code in (0, 1, 2) and "Traceback" not in err
    assert str(sweep) not in opened, opened
    written = [p for p in Path().iterdir() if p.suffix in (".csv", ".html", ".png")
               and p.name != sweep.name]
    for text in [out, err, *(p.read_bytes().decode(errors="replace") for p in written)]:
        assert SECRET not in text


def test_a_log_header_never_opens_a_file(tmp_path, capsys):
    """A log whose header names a file for every file parameter: account opens none."""
    secret = tmp_path / "secret.csv"
    secret.write_text(f"{SECRET},0,1\n")
    log = tmp_path / "log.csv"
    assert main(["simulate", "-n", "6", "--steps", "30", "--seed", "1", "-q", "--trace-out",
                 str(log)]) == 0
    lines = log.read_text().splitlines()
    extra = [f'# {key} = "{secret}"' for key in ("topology", "data_file", "gossip_matrix",
                                                 "dataset")]
    for line in extra:
        log.write_text("\n".join(lines[:1] + [line] + lines[1:]) + "\n")
        capsys.readouterr()
        code, opened = _opened_while(["account", str(log), "-n", "6"])
        out, err = capsys.readouterr()
        assert code in (0, 2) and str(secret) not in opened and SECRET not in out + err


def test_the_audit_hook_sees_an_open(tmp_path):
    """The spy works: a file netdp is told to read shows in its list."""
    config = tmp_path / "c.toml"
    config.write_text("nodes = 6\nsteps = 30\n")
    code, opened = _opened_while(["simulate", "--config", str(config), "-q"])
    assert code == 0 and str(config) in opened
