"""docs/security.md holds: every promise of its table points at a test that exists, and
the promises that had no test have one here (a sweep folder, a log, a report JSON never
make netdp open a file they name, seen by Python's own audit events).
"""

from __future__ import annotations

import json
import os
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


@pytest.fixture()
def log_lines(tmp_path) -> list[str]:
    """The readers' fuzzer's seed log: 6 nodes, 30 steps, seed 1 (40 lines)."""
    log = tmp_path / "seed-log.csv"
    assert main(["simulate", "-n", "6", "--steps", "30", "--seed", "1", "-q", "--trace-out",
                 str(log)]) == 0
    return log.read_text().splitlines()


def _field(lines: list[str], at: int, column: int, value: str) -> list[str]:
    fields = lines[at].split(",")
    fields[column] = value
    return [*lines[:at], ",".join(fields), *lines[at + 1:]]


@pytest.mark.parametrize("column", [2, 3], ids=["sender", "receiver"])
def test_a_log_node_id_is_refused_without_echoing_it(log_lines, tmp_path, capsys, column):
    """Issue 39: ``sender 9223372036854775807 is not a node id (0..5, n = 6)`` showed the id
    read from the file; the line names the line, the field and the range."""
    log = tmp_path / "log.csv"
    log.write_text("\n".join(_field(log_lines, 19, column, str(2**63 - 1))) + "\n")
    capsys.readouterr()
    assert main(["account", str(log), "-n", "6"]) == 2
    err = capsys.readouterr().err
    role = ("sender", "receiver")[column - 2]
    assert err.count("\n") == 1 and f"line 20: the {role} field is not a node id (0..5, n = 6)" \
        in err, err
    assert str(2**63 - 1) not in err


def _refusal(argv: list[str], log: Path, capsys) -> str:
    """The one line of ``netdp account`` refusing ``log`` (exit status 2), after the file's
    name, with the line numbers and the count of further problems it names taken out: what
    is left quotes no number."""
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    tail = err.split(str(log), 1)[1]
    assert not re.search(r"\d", re.sub(r"line \d+|\d+ more problem", "", tail)), err
    return err


@pytest.mark.parametrize("repair", [[], ["--repair"]], ids=["plain", "repair"])
def test_a_log_time_going_backwards_is_refused_without_echoing_it(log_lines, tmp_path,
                                                                   capsys, repair):
    """Issue 39: ``t = 7 comes after t = 8 (line 18) for token 0`` showed two times and a
    token id read from the file; the line names both lines and the field. Lines 19 and 20
    swapped, a marker in the time of the later hop now first (the hops still follow the
    token in time order; ``--repair`` sorts them and the run is accounted)."""
    marker = "8.98765"
    hops = _field(_field(log_lines, 18, 0, "8.5"), 19, 0, marker)
    hops[18], hops[19] = hops[19], hops[18]
    log = tmp_path / "log.csv"
    log.write_text("\n".join(hops) + "\n")
    if repair:
        capsys.readouterr()
        assert main(["account", str(log), "-n", "6", "--repair"]) == 0
        assert marker not in capsys.readouterr().err
        return
    err = _refusal(["account", str(log), "-n", "6"], log, capsys)
    assert "line 20: the t field is earlier than line 19's, the token's previous hop" in err
    assert marker not in err and "98765" not in err


def test_a_gossip_round_going_backwards_is_refused_without_echoing_it(tmp_path, capsys):
    """The same refusal for a gossip log: a marker round appended after the last round."""
    log = tmp_path / "gossip.csv"
    assert main(["simulate", "-n", "6", "--protocol", "gossip", "--topology", "cycle",
                 "--steps", "4", "--seed", "1", "-q", "--trace-out", str(log)]) == 0
    lines = log.read_text().splitlines()
    log.write_text("\n".join([*lines[:-1], "987654321," + lines[-1].split(",", 1)[1],
                              lines[-1]]) + "\n")
    err = _refusal(["account", str(log)], log, capsys)
    assert "the t field is earlier than line" in err and "the run's previous message" in err
    assert "987654321" not in err


def test_a_hop_from_a_node_not_holding_the_token_is_refused_without_echoing_it(
        log_lines, tmp_path, capsys):
    """Issue 39: ``node 4 forwards token 0, which node 5 holds (line 18)`` showed two node
    ids and a token id read from the file; the line names the line, the field and the
    line of the token's previous hop, and no number of the file."""
    holder = log_lines[18].split(",")[3]  # the receiver of line 19 holds the token
    other = next(str(v) for v in range(6) if str(v) != holder)
    log = tmp_path / "log.csv"
    log.write_text("\n".join(_field(log_lines, 19, 2, other)) + "\n")
    err = _refusal(["account", str(log), "-n", "6"], log, capsys)
    assert "line 20: the sender field is not the token's holder" in err and "line 19" in err


@pytest.mark.parametrize("repair", [[], ["--repair"]], ids=["plain", "repair"])
def test_a_token_id_of_2_63_is_one_line(log_lines, tmp_path, repair):
    """The readers' run 7's case not reproduced then: lines 20 and 40 holding 2^63 - 1 (the
    token) and 2^63 (the time), ``account --pairs-out --out``: an OverflowError in the
    lines' grouping (run x (largest token + 1)); with --repair, numpy's arange and bincount
    up to the token (an empty range, a corrupted heap). One line now, nothing written (in a
    process of its own: the heap's corruption ended the process that met it)."""
    import subprocess

    lines = _field(_field(log_lines, 19, 1, str(2**63 - 1)), 39, 0, str(2**63))
    log = tmp_path / "log.csv"
    log.write_text("\n".join(lines) + "\n")
    done = subprocess.run([sys.executable, "-m", "netdp", "account", str(log), "-n", "6",
                           *repair, "--pairs-out", "p.npy", "--out", "a.json"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-2000:]
    assert str(2**63 - 1) not in done.stderr
    assert not (tmp_path / "p.npy").exists() and not (tmp_path / "a.json").exists()


@pytest.mark.parametrize("value", ['[1, "a", null]', f'"{SECRET}"', '{"a": [1]}'],
                         ids=["a-list", "text", "an-object"])
def test_a_run_estimate_of_another_type_is_drawn_as_it_is(tmp_path, capsys, monkeypatch,
                                                          value):
    """docs/fuzzing.md's open case (``runs[0].estimate`` a list: report failed in numpy),
    not reproduced on this commit: a field no figure reads is shown as the file holds it
    (a page made to show the file), by report with and without --pairs and plot."""
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "-n", "6", "--protocol", "gossip", "--topology", "cycle",
                 "--seed", "1", "-q", "--pairs-out", "p.npy", "--out", "run.json"]) == 0
    doc = json.loads(Path("run.json").read_text())
    doc["runs"][0]["estimate"] = "\x00V\x00"
    Path("edited.json").write_text(json.dumps(doc).replace(json.dumps("\x00V\x00"), value))
    for argv in (["report", "edited.json", "--html", "page.html"],
                 ["report", "edited.json", "--pairs", "p.npy", "--html", "page.html"],
                 ["plot", "--preset", "by-distance", "--result", "edited.json", "--out",
                  "f.png"]):
        capsys.readouterr()
        assert main(argv) == 0, capsys.readouterr().err


def test_repair_is_counted_in_the_time_limit(tmp_path, capsys, monkeypatch):
    """Issue 39: ``--repair`` ignored the time limit (its holders' pass was quadratic in the
    broken tokens). Its seconds are estimated with the parse's, from the line count,
    before parsing: 200,000 lines are read within 1 s (0.8 s), not read and repaired."""
    log = tmp_path / "big.csv"
    log.write_text("t,token,sender,receiver\n"
                   + "".join(f"{t},0,{t % 2},{(t + 1) % 2}\n" for t in range(1, 200_001)))
    monkeypatch.setenv("NETDP_TIME_LIMIT", "1")
    capsys.readouterr()
    assert main(["account", str(log), "-n", "6", "--repair"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "this run would take about 1.2 s" in err, err
    assert main(["account", str(log), "-n", "6"]) in (0, 2)
    assert "would take" not in capsys.readouterr().err


def test_the_holders_pass_of_a_repair_is_the_hop_by_hop_rule():
    """The repair's pass over the tokens (now each on its own lines, linear) keeps what the
    rule keeps: a token's first hop, then each hop whose sender holds the token."""
    import numpy as np

    from netdp.engine import trace_log

    rng = np.random.default_rng(7)
    for _ in range(20):
        size = int(rng.integers(1, 60))
        token = np.sort(rng.integers(0, 5, size))
        sender, receiver = rng.integers(0, 3, size), rng.integers(0, 3, size)
        log = trace_log.LogLines("l", "walk", {}, {}, 1, np.arange(size), np.zeros(size, int),
                                 np.arange(size, dtype=float), token, sender, receiver)
        want = np.ones(size, dtype=bool)
        holder: dict[int, int] = {}
        for i in range(size):
            k = int(token[i])
            if k in holder and sender[i] != holder[k]:
                want[i] = False
            else:
                holder[k] = int(receiver[i])
        assert np.array_equal(trace_log._holders_kept(log), want)


def test_an_unwritable_numba_cache_is_named(tmp_path):
    """Issue 39: an unwritable numba cache made every run compile (54 s for 8 nodes) without
    a word. The function that decides names the folder numba would write to, where it
    cannot (a folder under a file: unwritable even for root); the line says what to do."""
    from netdp.core import _cache

    blocked = tmp_path / "a-file"
    blocked.write_text("")
    bad = str(blocked / "numba")
    assert _cache.unusable_cache({"NUMBA_CACHE_DIR": bad}) == bad
    assert _cache.unusable_cache({"NUMBA_CACHE_DIR": str(tmp_path / "ok")}) is None
    line = _cache.cache_warning(bad)
    assert "\n" not in line and bad in line and "set NUMBA_CACHE_DIR to a writable" in line
    assert _cache.warn_when_compiling({"NUMBA_CACHE_DIR": str(tmp_path / "ok")}) is None


def test_the_warning_comes_once_before_the_first_compilation(tmp_path):
    """In a process of its own (the listener stays for the process): two compilations
    under an unusable cache, one line on stderr, before the first."""
    import subprocess

    blocked = tmp_path / "a-file"
    blocked.write_text("")
    code = ("import sys\nfrom netdp.core._cache import warn_when_compiling\n"
            "assert warn_when_compiling() is not None\n"
            "assert warn_when_compiling() is not None\n"
            "print('before', file=sys.stderr, flush=True)\nimport numba\n"
            "numba.njit(lambda x: x + 1)(1)\nnumba.njit(lambda x: x * 2)(1)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env={**os.environ,
                                            "NUMBA_CACHE_DIR": str(blocked / "numba"),
                                            "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert lines[0] == "before" and len(lines) == 2, lines
    assert lines[1].startswith(f"netdp: the numba cache at {blocked / 'numba'} is not writable")


def _numbers_after(err: str, log: Path) -> list[str]:
    """The numbers the refusal of ``log`` quotes after the file's name, line numbers
    taken out (what is left: counts and ranges, never a value read from the file)."""
    return re.findall(r"\d+", re.sub(r"line \d+", "", err.split(str(log), 1)[1]))


def _one_line(argv: list[str], capsys) -> str:
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def _walk_log(tmp_path: Path, nodes: int, body: list[str]) -> Path:
    log = tmp_path / "walk.csv"
    log.write_text(f'# netdp trace log 1\n# protocol = "walk"\n# topology = "cycle"\n'
                   f"# nodes = {nodes}\n# epsilon = 1.0\nrun,t,token,sender,receiver\n"
                   + "\n".join(body) + "\n")
    return log


def test_a_hop_the_walk_cannot_make_is_refused_without_echoing_it(tmp_path, capsys):
    """Issue 39: ``hop 738 -> 912 is not a move of the simple walk`` showed two node ids
    read from the file (in range, on a cycle of 1000); the line names the line and the
    fields."""
    log = _walk_log(tmp_path, 1000, ["0,1,0,737,738", "0,2,0,738,912", "0,3,0,912,913"])
    err = _one_line(["account", str(log)], capsys)
    assert "line 8: the hop (its sender and receiver fields) is not a move of the simple " \
        "walk on" in err, err
    assert not {"737", "738", "912", "913"} & set(_numbers_after(err, log)), err


# run 1's token 2 makes one hop less; run 1 moves one token; run 1 has no token 0
_SHAPES = {
    "hops": (["0,1,0,737,738", "0,2,0,738,739", "0,1,1,912,913", "0,2,1,913,914",
              "1,1,0,737,738", "1,2,0,738,739", "1,1,1,912,913"],
             "line 13: the token of this line (its run and token fields) makes 1 hop(s), "
             "the token of line 12 makes 2: every token makes the same number of hops",
             ["1", "2"]),
    "tokens": (["0,1,0,737,738", "0,2,0,738,739", "0,1,1,912,913", "0,2,1,913,914",
                "1,1,0,737,738", "1,2,0,738,739"],
               "line 11: the run of this line (its run field) moves 1 token(s), the run of "
               "line 7 moves 2: every run moves the same tokens", ["1", "2"]),
    "token-gap": (["0,1,0,737,738", "0,2,0,738,739", "1,1,1,912,913", "1,2,1,913,914"],
                  "no line for token 0 in the run of line 9 (the token ids are 0..K-1 "
                  "without a gap; the log has 1 distinct one(s))", ["0", "0", "1", "1"]),
}


@pytest.mark.parametrize("case", sorted(_SHAPES))
def test_a_walk_log_of_uneven_shape_is_refused_without_echoing_its_ids(tmp_path, capsys,
                                                                       case):
    """Issue 39: ``token 1 of run 1 makes 1 hop(s), token 0 makes 2``, ``run 1 moves 1
    token(s), run 0 moves 2`` and ``no line for token 0 in run 1`` showed run and token
    ids read from the file; the lines name the lines and fields, and quote only counts
    and the missing id (which the file lacks)."""
    body, says, numbers = _SHAPES[case]
    log = _walk_log(tmp_path, 1000, body)
    err = _one_line(["account", str(log)], capsys)
    assert says in err and _numbers_after(err, log) == numbers, err


def _gossip_log(tmp_path: Path, nodes: int, body: list[str], schedule: str = "sync") -> Path:
    log = tmp_path / "gossip.csv"
    log.write_text(f'# netdp trace log 1\n# protocol = "gossip"\n# task = "sum"\n'
                   f'# topology = "cycle"\n# nodes = {nodes}\n# sigma = 1.0\n'
                   f'# gossip_schedule = "{schedule}"\nt,sender,receiver\n'
                   + "\n".join(body) + "\n")
    return log


def _rounds(nodes: int, rounds: range) -> list[str]:
    """Synchronous gossip on the cycle: both directions of every edge at every round."""
    return [f"{t},{a},{b}" for t in rounds for i in range(nodes)
            for a, b in ((i, (i + 1) % nodes), ((i + 1) % nodes, i))]


_GOSSIP = {
    "off-the-edges": (1000, "sync", lambda: [*_rounds(1000, range(2))[:-1], "1,737,912"],
                      "line 4008: the message (its sender and receiver fields) is not on an "
                      "edge of", ["737", "912"]),
    "missing-message": (4, "sync", lambda: [line for line in _rounds(4, range(4322))
                                            if line != "4320,2,3"],
                        "the round of this line (its run and t fields) carries 7 of its 8 "
                        "message(s) (synchronous gossip", ["432"]),
    "missing-round": (4, "sync", lambda: [line for line in _rounds(4, range(4322))
                                          if not line.startswith("4320,")],
                      "round 4320 of the run of line 9 has no message line (synchronous "
                      "gossip", ["4321"]),
    "tick-of-one": (1000, "pairwise", lambda: ["98765,737,738", "98765,738,737",
                                               "98766,912,913"],
                    "line 11: the tick of this line (its run and t fields) holds 1 "
                    "message(s)", ["9876", "737", "912"]),
    "no-answer": (1000, "pairwise", lambda: ["98765,737,738", "98765,912,913"],
                  "line 10: the message (its sender and receiver fields) does not answer "
                  "line 9's, the message before it at its tick", ["9876", "737", "912"]),
}


@pytest.mark.parametrize("case", sorted(_GOSSIP))
def test_a_gossip_log_refusal_names_lines_not_its_values(tmp_path, capsys, case):
    """Issue 39: gossip's ``message 737 -> 912 is not on an edge``, ``round 4320 of run 0:
    no message 2 -> 3 (... every round 0..4321)``, ``tick 98766 of run 0: 1 message(s)``
    and ``message 912 -> 913 does not answer the message before it`` showed node ids,
    rounds and ticks read from the file; the lines name the lines and fields."""
    nodes, schedule, body, says, markers = _GOSSIP[case]
    log = _gossip_log(tmp_path, nodes, body(), schedule)
    err = _one_line(["account", str(log)], capsys)
    tail = err.split(str(log), 1)[1]
    assert says in err and not [m for m in markers if m in tail], err


@pytest.mark.parametrize("case", ["off-the-edges", "missing-message"])
def test_a_time_varying_gossip_log_refusal_names_lines_not_its_values(tmp_path, capsys, case):
    """Issue 39: on a contact trace, ``message 137 -> 163 is not on an edge of round 1's
    snapshot`` and ``round 1 of run 0: no message 137 -> 138`` showed node ids and rounds
    read from the file; the lines name the lines and fields."""
    contacts = tmp_path / "c.csv"
    contacts.write_text("t,u,v\n" + "".join(f"{t},{i},{(i + 1) % 200}\n" for t in range(2)
                                             for i in range(200)))
    log = tmp_path / "g.csv"
    assert main(["simulate", "--protocol", "gossip", "--topology", str(contacts), "--format",
                 "contacts", "--steps", "2", "--seed", "1", "-q", "--trace-out",
                 str(log)]) == 0
    lines = log.read_text().splitlines()
    at = lines.index("1,137,138")
    lines[at:at + 1] = ["1,137,163"] if case == "off-the-edges" else []
    log.write_text("\n".join(lines) + "\n")
    err = _one_line(["account", str(log), "--topology", str(contacts)], capsys)
    says = {"off-the-edges": f"line {at + 1}: the message (its sender and receiver fields) is "
            "not on an edge of the snapshot in force at its round (its t field)",
            "missing-message": "the round of this line (its run and t fields) carries 399 of "
            "its 400 message(s) (every edge of the snapshot in force"}[case]
    assert says in err and not {"137", "138", "163"} & set(_numbers_after(err, log)), err
