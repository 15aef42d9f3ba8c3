"""``netdp account LOG``: a deployment's log of hops (or gossip messages) gives back the
privacy report of the run that wrote it, its problems are refused one line each, and
``--repair`` mends what it documents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fuzz_names import check_names, named

import netdp
from netdp.core.errors import InputError
from netdp.engine import gossip_log as GL
from netdp.engine import trace_log
from netdp.run.api import run as run_loop
from netdp.run.cli import main
from netdp.tasks import make_config, task_of

REPO = Path(__file__).resolve().parents[1]

#: simulate's flags for the log, and the accounting flags both commands take
REPRODUCED = {
    "complete": (["--nodes", "24", "--steps", "240", "--tokens", "2", "--runs", "2"], []),
    "hypercube": (["--topology", "hypercube", "--nodes", "32", "--steps", "200"],
                  ["--accountant", "kov", "--accountant", "rdp"]),
    "grid": (["--topology", "grid", "--nodes", "25", "--steps", "150"], []),
    "gossip": (["--task", "sum", "--protocol", "gossip", "--topology", "grid", "--nodes", "36",
                "--runs", "2"], ["--accountant", "rdp", "--accountant", "pld"]),
}


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def leaves(obj, path=""):
    """``(path, value)`` of every scalar of a JSON object."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from leaves(value, f"{path}.{key}")
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from leaves(value, f"{path}[{i}]")
    else:
        yield path, obj


def differences(a: dict, b: dict, tol: float = 1e-12) -> list[str]:
    """Where two JSON objects differ: a missing key, a string, or a number by more than
    ``tol``."""
    left, right = dict(leaves(a)), dict(leaves(b))
    out = [f"{k}: only in one" for k in set(left) ^ set(right)]
    for key in set(left) & set(right):
        x, y = left[key], right[key]
        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (x, y))
        if x != y and not (numbers and abs(x - y) <= tol):
            out.append(f"{key}: {x!r} != {y!r}")
    return sorted(out)


@pytest.fixture(scope="module")
def walk_log(tmp_path_factory) -> Path:
    """A small clean walk log: n = 10, 20 steps, one token, one run."""
    path = tmp_path_factory.mktemp("logs") / "walk.csv"
    netdp.simulate({"nodes": 10, "steps": 20, "seed": 1}, trace_out=path)
    return path


@pytest.fixture(scope="module")
def gossip_log(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("logs") / "gossip.csv"
    netdp.simulate({"task": "sum", "protocol": "gossip", "topology": "grid", "nodes": 9,
                    "seed": 1}, trace_out=path)
    return path


# -- the central property: the log reproduces the run's privacy report --------------------


@pytest.mark.parametrize("case", [  # the complete graph's accounting: 8 s
    pytest.param(c, marks=pytest.mark.slow) if c == "complete" else c for c in sorted(REPRODUCED)])
def test_account_of_a_trace_out_reproduces_simulate(capsys, tmp_path, case):
    sim_args, acc_args = REPRODUCED[case]
    log = tmp_path / "log.csv"
    code, out, _ = cli(capsys, "simulate", *sim_args, *acc_args, "--seed", "7",
                       "--trace-out", log, "--json")
    assert code == 0
    simulated = json.loads(out)
    code, out, err = cli(capsys, "account", log, *acc_args, "--json")
    assert code == 0, err
    accounted = json.loads(out)
    assert differences(simulated["privacy"], accounted["privacy"]) == []
    figures = [v for _, v in leaves(accounted["privacy"]) if isinstance(v, float)]
    assert len(figures) >= 15 and accounted["privacy"]["empirical"]
    for key in ("nodes", "steps", "tokens", "runs", "topology", "protocol", "seed"):
        assert accounted["config"][key] == simulated["config"][key], key
    assert accounted["utility"]["available"] is False
    assert accounted["log"]["repairs"] == [] and accounted["log"]["lines"] > 0


@pytest.mark.parametrize("params", [
    {"topology": "ring", "nodes": 12, "rounds": 3},
    {"nodes": 20, "steps": 60, "engine": "event", "latency": "exp:1", "tokens": 2},
    {"task": "histogram", "nodes": 20, "steps": 200, "domain": 4},
    pytest.param({"nodes": 20, "steps": 200, "self_moves": False,
                  "accountants": ["kov", "rdp", "exact"]}, marks=pytest.mark.slow),
    {"topology": "karate", "steps": 100, "walk": "lazy"},
    {"nodes": 20, "steps": 200, "coalition": "random:3", "runs": 2},
], ids=["ring", "event", "histogram", "no-self-moves", "karate-lazy", "coalition"])
def test_the_library_reproduces_other_settings(tmp_path, params):
    log = tmp_path / "log.csv"
    simulated = netdp.simulate({**params, "seed": 3}, trace_out=log)
    accounting = {k: params[k] for k in ("accountants", "coalition") if k in params}
    accounted = netdp.account(log, **accounting)
    assert differences(simulated.to_json()["privacy"], accounted.to_json()["privacy"]) == []


def test_the_comparison_can_fail(tmp_path, walk_log):
    """Another walk, or another accountant, changes the report: the equalities above are
    not vacuous."""
    base = netdp.account(walk_log).to_json()["privacy"]
    # the default here: pld, which netdp estimates within its budget on this small log
    assert base["empirical"][0]["accountant"] == "pld"
    assert differences(base, netdp.account(walk_log, accountants=["kov"])
                       .to_json()["privacy"])
    lines = walk_log.read_text().splitlines()
    last = lines[-1].split(",")
    lines[-1] = ",".join([*last[:3], str((int(last[3]) + 1) % 10)])  # its last hop elsewhere
    moved = tmp_path / "moved.csv"
    moved.write_text("\n".join(lines) + "\n")
    assert differences(base, netdp.account(moved).to_json()["privacy"])


def test_the_rebuilt_trace_is_the_engines(tmp_path):
    """Walk and gossip: the trace read back from the log is the one the engine made."""
    for params in ({"nodes": 15, "steps": 30, "tokens": 3, "runs": 2, "seed": 2},
                   {"task": "sum", "protocol": "gossip", "topology": "hypercube", "nodes": 8,
                    "runs": 2, "seed": 2}):
        log = tmp_path / "log.csv"
        made: list = []
        netdp.simulate(params, trace_out=log)
        config = make_config(params)
        setup = task_of(config).prepare(config)
        run_loop(setup, on_trace=lambda r, t, made=made: made.append(t))
        lines = trace_log.read(log)
        if lines.protocol == "walk":
            read = trace_log.walk_traces(lines, setup.topology, setup.config.walk, "vector")
            assert all(a.same_walk(b) and a.holders.dtype == b.holders.dtype
                       for a, b in zip(made, read, strict=True))
        else:
            read = GL.gossip_traces(lines, setup.topology, "vector")
            for a, b in zip(made, read, strict=True):
                assert a.gossip is not None and b.gossip is not None
                assert np.array_equal(a.gossip.src, b.gossip.src)
                assert np.array_equal(a.gossip.dst, b.gossip.dst)
                assert a.gossip.steps == b.gossip.steps
        assert len(read) == 2


def test_pairs_out_and_plot(capsys, tmp_path):
    log, sim_pairs, acc_pairs, png = (tmp_path / f for f in ("l.csv", "s.npy", "a.npy",
                                                             "p.png"))
    assert cli(capsys, "simulate", "-n", "20", "--steps", "200", "--seed", "4",
               "--trace-out", log, "--pairs-out", sim_pairs)[0] == 0
    code, out, err = cli(capsys, "account", log, "--pairs-out", acc_pairs, "--plot", png)
    assert code == 0, err
    assert np.array_equal(np.load(sim_pairs), np.load(acc_pairs), equal_nan=True)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "utility not available" in out and "no problem found" in out


def test_html_writes_the_run_page_of_the_log(capsys, tmp_path):
    """``account --html``: the page ``simulate --html`` writes (the answer first, the pairs
    figures from the log's matrix, the details), with the log's own numbers; an --html
    that is also --out is refused, nothing written."""
    import html
    import re

    log, page_path, out = tmp_path / "l.csv", tmp_path / "l.html", tmp_path / "l.json"
    assert cli(capsys, "simulate", "-n", "20", "--steps", "200", "--seed", "4",
               "--trace-out", log)[0] == 0
    code, text, err = cli(capsys, "account", log, "--html", page_path, "--out", out)
    assert code == 0, err
    assert f"report page written to {page_path}" in text
    page = page_path.read_text(encoding="utf-8")
    sections = re.findall(r'<section id="([^"]+)"', page)
    assert sections[:2] == ["answer", "figures"] and sections[-1] == "provenance"
    assert re.findall(r'<figure id="([^"]+)"', page) == ["fig-pairs", "fig-heatmap"]
    e = json.loads(out.read_text())["privacy"]["empirical"][0]
    from netdp.report.html import number

    assert f"ε(u → v) = <strong>{number(e['mean'])}</strong>" in html.unescape(page)
    code, _, err = cli(capsys, "account", log, "--html", out, "--out", out)
    assert code == 2 and "--html" in err and err.count("\n") == 1


# -- the library's parameters -------------------------------------------------------------


def test_account_is_exported_and_documented():
    from netdp.run.account import account

    assert netdp.account is account and "account" in netdp.__all__


def test_a_flag_overrides_the_header(walk_log):
    """The same walk accounted at another ε0 is the run of that ε0 (the walk does not
    depend on the noise)."""
    again = netdp.simulate({"nodes": 10, "steps": 20, "seed": 1, "epsilon": 0.5})
    accounted = netdp.account(walk_log, epsilon=0.5)
    assert accounted.config.epsilon == 0.5
    assert differences(again.to_json()["privacy"], accounted.to_json()["privacy"]) == []


def test_sigma_states_the_noise_instead_of_epsilon(walk_log):
    """On a walk, σ (in units of the sensitivity) means ε0 = the exact ε(δ) of N(0, σ²):
    the analytic calibration inverted."""
    sigma = netdp.simulate({"nodes": 10, "steps": 20, "seed": 1}).mechanism["sigma"]
    by_sigma = netdp.account(walk_log, sigma=sigma)
    assert by_sigma.config.epsilon == pytest.approx(1.0, rel=1e-9)
    assert differences(netdp.account(walk_log).to_json()["privacy"],
                       by_sigma.to_json()["privacy"], tol=1e-8) == []
    assert netdp.account(walk_log, sigma=2 * sigma).config.epsilon < 0.6


def test_an_observer_is_a_coalition_of_one(walk_log):
    one = netdp.account(walk_log, observer=3).to_json()["privacy"]
    assert differences(one, netdp.account(walk_log, coalition="3").to_json()["privacy"]) == []
    assert one["coalitions"] == [[3]]
    with pytest.raises(InputError, match="observer"):
        netdp.account(walk_log, observer=3, coalition="4")


def test_an_observer_or_coalition_by_label(capsys, tmp_path):
    """On a labelled graph (florentine) --observer and --coalition take node labels: the
    same report as their ids; an unknown label is one line naming the flag, exit 2."""
    log = tmp_path / "florentine.csv"
    netdp.simulate({"topology": "florentine", "steps": 40, "seed": 1,
                    "accountants": ("rdp",)}, trace_out=log)
    medici = netdp.account(log).topology.labels.index("Medici")
    by_label = netdp.account(log, observer="Medici").to_json()["privacy"]
    assert differences(by_label, netdp.account(log, observer=medici).to_json()["privacy"]) == []
    assert by_label["coalitions"] == [[medici]]
    assert netdp.account(log, coalition="Medici").to_json()["privacy"] == by_label
    code, out, _ = cli(capsys, "account", log, "--observer", "Medici")
    assert code == 0 and "observer: the coalition Medici" in out
    for flag, value in (("--observer", "Borgia"), ("--coalition", "Medici,Borgia"),
                        ("--observer", "Medici,Strozzi"), ("--observer", "15")):
        code, out, err = cli(capsys, "account", log, flag, value)
        assert code == 2 and out == "" and err.count("\n") == 1 and flag in err, err
        assert "15 labels" in err or "0..14" in err or "one node" in err, err


def test_faulty_runs_write_no_log(tmp_path):
    log = tmp_path / "log.csv"
    with pytest.raises(InputError, match="trace-out"):
        netdp.simulate({"nodes": 10, "steps": 20, "seed": 1, "loss": "0.1"}, trace_out=log)
    assert not log.exists() and list(tmp_path.iterdir()) == []


# -- problems: exit 2, one line, naming the line ------------------------------------------


def _edit(lines: list[str], at: int, new: list[str]) -> list[str]:
    """The log's lines with the data line ``at`` (0 = the first hop) replaced by ``new``."""
    start = next(i for i, line in enumerate(lines) if not line.startswith("#")) + 1
    return lines[:start + at] + new + lines[start + at + 1:]


def _hop(lines: list[str], at: int) -> list[str]:
    start = next(i for i, line in enumerate(lines) if not line.startswith("#")) + 1
    return lines[start + at].split(",")


#: name -> (how the clean walk log becomes bad, extra flags, what the error line says)
BAD = {
    "empty file": (lambda ls: [], [], "empty log"),
    "comments only": (lambda ls: [x for x in ls if x.startswith("#")], [], "empty log"),
    "no hop line": (lambda ls: [x for x in ls if x.startswith("#") or x.startswith("t,")], [],
                    "no hop line"),
    "unknown columns": (lambda ls: [x if not x.startswith("t,") else "time,from,to" for x in ls],
                        [], "line 11: expected the column line"),
    "five fields": (lambda ls: _edit(ls, 2, [",".join(_hop(ls, 2) + ["9"])]), [],
                    "line 14: 5 field(s), expected 4"),
    "three fields": (lambda ls: _edit(ls, 2, [",".join(_hop(ls, 2)[:3])]), [],
                     "line 14: 3 field(s)"),
    "a word for a node": (lambda ls: _edit(ls, 0, ["1,0,x," + _hop(ls, 0)[3]]), [],
                          "line 12: the sender field is not a whole number"),
    "a fractional token": (lambda ls: _edit(ls, 1, ["2,0.5," + ",".join(_hop(ls, 1)[2:])]), [],
                           "line 13: the token field is not a whole number >= 0"),
    "a negative token": (lambda ls: _edit(ls, 1, ["2,-1," + ",".join(_hop(ls, 1)[2:])]), [],
                         "line 13: the token field is not a whole number >= 0"),
    "time nan": (lambda ls: _edit(ls, 3, ["nan," + ",".join(_hop(ls, 3)[1:])]), [],
                 "line 15: the t field is not a finite number"),
    "unknown node": (lambda ls: _edit(ls, 4, [",".join(_hop(ls, 4)[:3] + ["10"])]), [],
                     "line 16: the receiver field is not a node id (0..9"),
    "negative node": (lambda ls: _edit(ls, 0, ["1,0,-3," + _hop(ls, 0)[3]]), [],
                      "line 12: the sender field is not a node id"),
    "duplicate": (lambda ls: _edit(ls, 5, [",".join(_hop(ls, 5))] * 2), [],
                  "line 18: repeats line 17 exactly"),
    "time backwards": (lambda ls: _edit(_edit(ls, 6, [",".join(_hop(ls, 7))]), 7,
                                        [",".join(_hop(ls, 6))]), [],
                       "line 19: the t field is earlier than line 18's, the token's previous hop"),
    "non-holder": (lambda ls: _edit(ls, 8, [",".join(_hop(ls, 8)[:2] + ["9" if _hop(ls, 8)[2] !=
                                                                         "9" else "8",
                                                                         _hop(ls, 8)[3]])]),
                   [], "line 20: the sender field is not the token's holder"),
    "token gap": (lambda ls: [x if x.startswith("#") or x.startswith("t,")
                              else ",".join([x.split(",")[0], "1", *x.split(",")[2:]])
                              for x in ls], [], "no line for token 0 in the run of line 12"),
    "steps disagree": (lambda ls: ls[:1] + ["# steps = 5"] + ls[1:], [],
                       "line 2: steps is not what the lines give (20)"),
    "not a move": (lambda ls: ls, ["--topology", "hypercube", "--nodes", "16"],
                   "the hop (its sender and receiver fields) is not a move of the simple "
                   "walk on hypercube"),
    "unknown header key": (lambda ls: ls[:1] + ["# colour = 3"] + ls[1:], [],
                           "line 2: a header key that is not a parameter"),
    "bad header value": (lambda ls: [x if not x.startswith("# epsilon") else "# epsilon = -1"
                                     for x in ls], [], "line 7: epsilon:"),
    "header not toml": (lambda ls: [x if not x.startswith("# topology") else
                                    "# topology = complete" for x in ls], [],
                        "line 4: the value of a '# key = value' header line is not a TOML value"),
    "no nodes": (lambda ls: [x for x in ls if not x.startswith("# nodes")], [],
                 "--nodes: the log's header does not state n"),
    "protocol mismatch": (lambda ls: ls, ["--protocol", "gossip"],
                          "--protocol: "),
    "sgd": (lambda ls: ls, ["--task", "sgd"], "--task: sgd's tracker reads"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_log_exits_2_with_one_line(capsys, tmp_path, walk_log, name):
    edit, flags, says = BAD[name]
    bad = tmp_path / "bad.csv"
    bad.write_text("".join(line + "\n" for line in edit(walk_log.read_text().splitlines())))
    out_file = tmp_path / "out.json"
    code, out, err = cli(capsys, "account", bad, *flags, "--out", out_file)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, (name, err)
    assert lines[0].startswith("netdp account: error: ") and says in lines[0], (name, err)
    assert out == "" and not out_file.exists()


@pytest.mark.parametrize("name,edit,says", [
    ("missing message", lambda ls: ls[:-1],
     "the round of this line (its run and t fields) carries 23 of its 24 message(s)"),
    ("off the edges", lambda ls: ls[:-1] + ["5,0,8"],
     "the message (its sender and receiver fields) is not on an edge"),
    ("duplicate", lambda ls: ls + ls[-1:], "repeats line"),
    ("round backwards", lambda ls: ls + ["0,0,8"], "the t field is earlier than line"),
    ("fractional round", lambda ls: ls[:-1] + ["5.5," + ls[-1].split(",", 1)[1]],
     "the t field is not a whole round >= 0"),
])
def test_a_bad_gossip_log_exits_2_with_one_line(capsys, tmp_path, gossip_log, name, edit,
                                                says):
    bad = tmp_path / "bad.csv"
    bad.write_text("".join(line + "\n" for line in edit(gossip_log.read_text().splitlines())))
    code, out, err = cli(capsys, "account", bad)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, (name, err)
    assert says in lines[0], (name, err)


def test_unreadable_files_exit_2_without_a_traceback(tmp_path):
    binary = tmp_path / "log.bin"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    for path, says in ((tmp_path / "missing.csv", "cannot read"),
                       (binary, "not a UTF-8 text file")):
        proc = subprocess.run([sys.executable, "-m", "netdp", "account", str(path)],
                              capture_output=True, text=True, cwd=REPO, timeout=120)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and says in lines[0], proc.stderr


# -- --repair -----------------------------------------------------------------------------


def test_repair_mends_what_it_documents(capsys, tmp_path):
    """A log with a duplicate, two hops of a token swapped, a stray hop from a non-holder
    and a cut last line is refused; repaired, it gives the clean log's report exactly, and
    says what it did."""
    clean = tmp_path / "clean.csv"
    netdp.simulate({"nodes": 12, "steps": 60, "tokens": 2, "seed": 5}, trace_out=clean)
    lines = clean.read_text().splitlines()
    start = lines.index("t,token,sender,receiver") + 1
    body = lines[start:]
    stray = body[9].split(",")
    stray[2] = str((int(stray[2]) + 1) % 12)  # a hop of that token, from another node
    broken = (lines[:start] + body[:2] + [body[4], body[3], body[2]] + body[5:9] + [body[9]] * 2
              + [",".join(stray)] + body[10:] + ["61,0,3"])
    dirty = tmp_path / "dirty.csv"
    dirty.write_text("\n".join(broken) + "\n")
    assert cli(capsys, "account", dirty)[0] == 2
    code, out, err = cli(capsys, "account", dirty, "--repair", "--json")
    assert code == 0, err
    repaired = json.loads(out)
    notes = repaired["log"]["repairs"]
    assert notes[0].startswith("dropped 1 malformed line(s)")
    assert "dropped 1 exact duplicate line(s)" in notes
    assert any(n.startswith("sorted the lines of 1 token(s) by time") for n in notes)
    assert any(n.startswith("dropped 1 hop(s) from a node that did not hold") for n in notes)
    reference = netdp.account(clean).to_json()
    assert differences(reference["privacy"], repaired["privacy"]) == []
    assert repaired["log"]["lines"] == len(broken) - start
    assert repaired["log"]["accounted"] == len(body)
    assert "repaired: dropped 1 malformed" in cli(capsys, "account", dirty, "--repair")[1]


def test_repair_refuses_what_it_cannot_mend(capsys, tmp_path, walk_log):
    lines = walk_log.read_text().splitlines()
    unknown = tmp_path / "unknown.csv"
    unknown.write_text("\n".join(_edit(lines, 4, [",".join(_hop(lines, 4)[:3] + ["10"])]))
                       + "\n")
    code, _, err = cli(capsys, "account", unknown, "--repair")
    assert code == 2 and "the receiver field is not a node id" in err
    assert "--repair mends" not in err
    two = tmp_path / "two.csv"
    netdp.simulate({"nodes": 10, "steps": 20, "tokens": 2, "seed": 1}, trace_out=two)
    lines = two.read_text().splitlines()
    start = lines.index("t,token,sender,receiver") + 1
    lost = lines[:start + 6] + lines[start + 7:]  # a hop lost: the next ones break the chain
    gap = tmp_path / "gap.csv"
    gap.write_text("\n".join(lost) + "\n")
    code, _, err = cli(capsys, "account", gap, "--repair")
    assert code == 2 and "every token makes the same number of hops" in err


def test_repair_of_a_gossip_log(tmp_path, gossip_log):
    lines = gossip_log.read_text().splitlines()
    start = next(i for i, x in enumerate(lines) if not x.startswith("#")) + 1
    body = lines[start:]
    shuffled = lines[:start] + body[::-1] + body[:5]  # reversed rounds, five duplicates
    messy = tmp_path / "messy.csv"
    messy.write_text("\n".join(shuffled) + "\n")
    with pytest.raises(InputError, match="is earlier than line"):
        netdp.account(messy)
    repaired = netdp.account(messy, repair=True)
    assert differences(netdp.account(gossip_log).to_json()["privacy"],
                       repaired.to_json()["privacy"]) == []
    assert repaired.sections["log"]["repairs"][0] == "dropped 5 exact duplicate line(s)"


# -- the format ---------------------------------------------------------------------------


def test_the_header_states_the_deployment(walk_log, gossip_log):
    walk = trace_log.read(walk_log)
    assert walk.protocol == "walk" and walk.header["nodes"] == 10
    assert {"task", "protocol", "topology", "nodes", "epsilon", "delta", "mechanism",
            "walk", "seed"} <= set(walk.header)
    assert not {"steps", "runs", "tokens", "accountants"} & set(walk.header)
    gossip = trace_log.read(gossip_log)
    assert gossip.protocol == "gossip" and "sigma" in gossip.header
    assert gossip.header["gossip_matrix"] == "metropolis"
    text = walk_log.read_text()
    assert text.startswith(trace_log.FIRST_LINE + "\n") and "\nt,token,sender,receiver\n" in text


def test_comments_blank_lines_and_a_run_column(tmp_path):
    log = tmp_path / "log.csv"
    simulated = netdp.simulate({"nodes": 10, "steps": 20, "runs": 3, "seed": 8}, trace_out=log)
    lines = log.read_text().splitlines()
    assert "run,t,token,sender,receiver" in lines
    noted = tmp_path / "noted.csv"
    noted.write_text("\n".join(lines[:3] + ["", "# a note", "#"] + lines[3:12]
                               + ["# halfway", ""] + lines[12:]) + "\n")
    accounted = netdp.account(noted)
    assert accounted.config.runs == 3
    assert differences(simulated.to_json()["privacy"], accounted.to_json()["privacy"]) == []


def test_a_log_saved_with_a_byte_order_mark_reads_as_without(tmp_path):
    """Spreadsheets save CSV as "UTF-8 with BOM": the mark is no content (also in a
    contact trace, a data file's header and a gossip matrix's triplets)."""
    log = tmp_path / "log.csv"
    simulated = netdp.simulate({"nodes": 8, "steps": 20, "seed": 3}, trace_out=log)
    marked = tmp_path / "marked.csv"
    marked.write_bytes(b"\xef\xbb\xbf" + log.read_bytes())
    accounted = netdp.account(marked)
    assert differences(simulated.to_json()["privacy"], accounted.to_json()["privacy"]) == []
    data = tmp_path / "data.csv"
    data.write_bytes(b"\xef\xbb\xbfvalue\n" + b"".join(b"0.%d\n" % i for i in range(8)))
    run = netdp.simulate({"nodes": 8, "steps": 20, "seed": 3, "data_file": str(data),
                          "column": "value"})
    assert run.utility.truth == pytest.approx(0.35)  # the mean of 0.0 .. 0.7


def test_a_log_by_hand(tmp_path):
    """A deployment's own log: no seed, the topology given as a flag, two tokens
    interleaved in time."""
    log = tmp_path / "hand.csv"
    log.write_text("# our deployment\n# nodes = 4\n# epsilon = 0.5\n"
                   "t,token,sender,receiver\n"
                   "1.0,0,0,1\n1.5,1,2,3\n2.0,0,1,2\n2.5,1,3,0\n3.0,0,2,3\n3.5,1,0,1\n")
    report = netdp.account(log, topology="cycle")
    assert report.config.tokens == 2 and report.config.steps == 4
    assert report.config.topology == "cycle" and report.config.seed is not None
    trace = trace_log.walk_traces(trace_log.read(log), report.topology, "simple", "vector")[0]
    assert trace.holders.tolist() == [[0, 1, 2, 3], [2, 3, 0, 1]]
    assert trace.times is not None and trace.times[1].tolist() == [1.5, 1.5, 2.5, 3.5]
    with pytest.raises(InputError, match="topology"):
        netdp.account(log)


@pytest.mark.slow
def test_the_worked_example_in_the_docs_is_real(tmp_path):
    """docs/your-network.md, its log section: the example's `netdp account` prints what
    the page shows (apart from the timing)."""
    import re
    import shlex

    page = (REPO / "docs" / "your-network.md").read_text(encoding="utf-8")
    page = page[page.index("## From a deployment's log"):]
    blocks = re.findall(r"^```(\w*)\n(.*?)^```$", page, re.M | re.S)
    commands = [body for kind, body in blocks if kind == "bash"]
    assert commands
    shown = next(body for kind, body in blocks[blocks.index(("bash", commands[0])) + 1:]
                 if kind == "text")
    printed = ""
    for line in commands[0].strip().splitlines():
        argv = shlex.split(line)
        assert argv[:3] == ["python", "-m", "netdp"]
        proc = subprocess.run([sys.executable, *argv[1:]], capture_output=True, text=True,
                              cwd=tmp_path, timeout=300,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
        assert proc.returncode == 0, proc.stderr
        printed = proc.stdout

    def norm(text: str) -> list[str]:
        return [re.sub(r"^netdp \S+:", "netdp VERSION:", x.rstrip())
                for x in text.strip().splitlines() if not re.search(r" in \S+ s;", x)]

    assert norm(printed) == norm(shown)


# -- a log's header never makes netdp open a file -----------------------------------------


SECRET = "SECRET-7f3a-do-not-print"


@pytest.mark.parametrize("key,value,flag", [
    ("topology", "{secret}", "--topology FILE"),
    ("topology", "hypercube", "--topology FILE"),  # with format = "contacts": a file
    ("gossip_matrix", "{secret}", "--set gossip_matrix=FILE"),
    ("loss", "file:{secret}", "--set loss=file:FILE"),
    ("data_file", "{secret}", "--set data_file=FILE"),
])
def test_a_file_the_header_names_is_not_opened(capsys, tmp_path, walk_log, monkeypatch, key,
                                                value, flag):
    """A header naming a file (any file: it would be read and quoted) is refused in one
    line naming the flag to give; the file is never opened."""
    secret = tmp_path / "secret.txt"
    secret.write_text(f"t,u,v\n{SECRET},1,2\n")
    opened: list[str] = []
    real_open = open

    def spy(file, *args, **kwargs):
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    lines = walk_log.read_text().splitlines()
    header = [f"# {key} = {json.dumps(value.format(secret=secret))}"]
    if value == "hypercube":
        header.append('# graph_format = "contacts"')
        (tmp_path / "hypercube").write_text(f"t,u,v\n{SECRET},1,2\n")
        monkeypatch.chdir(tmp_path)
    lines = [x for x in lines if not x.startswith(f"# {key} ")]
    log = tmp_path / "crafted.csv"
    log.write_text("\n".join(lines[:1] + header + lines[1:]) + "\n")
    text = log.read_text()  # read before the spy
    monkeypatch.setattr("builtins.open", spy)
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: (opened.append(str(self)),
                                                                   text)[1])
    code, out, err = cli(capsys, "account", log)
    assert code == 2 and len(err.strip().splitlines()) == 1 and out == "", err
    assert f"give {flag} to use a file" in err and SECRET not in err, err
    assert named(err.strip(), "account") == flag.split()[0]
    check_names(["account", str(log)], err.strip())
    assert not any("secret" in p or p.endswith("hypercube") for p in opened), opened


def test_a_file_the_user_names_is_read(tmp_path):
    """The same log, with the file named by the user: accounted."""
    edges = tmp_path / "edges.txt"
    edges.write_text("0 1\n1 2\n2 3\n3 0\n")
    log = tmp_path / "file.csv"
    netdp.simulate({"topology": str(edges), "steps": 20, "seed": 1}, trace_out=log)
    assert '# topology = "edges.txt"' in log.read_text()  # relative to the log's folder
    with pytest.raises(InputError, match="netdp opens no file a log names") as caught:
        netdp.account(log)
    assert caught.value.param == "topology"
    assert netdp.account(log, topology=str(edges)).topology.n == 4
