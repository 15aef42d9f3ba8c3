"""Property-based fuzzing of every subcommand, driven by the parsers' declarations.

Each subcommand's flags are read from its argparse parser (built from the parameter
declarations), so a new flag is fuzzed without editing this file. For every flag a value
is drawn from families that include the extremes (signed zeros, subnormals, 1e±300, nan,
±inf, 10**30, empty and unicode text, words for numbers) and, for the flags that take a
file, generated bad files (empty, binary, truncated, nested 10^5 deep, .npy of the wrong
shape, dtype or size). One or two flags are fuzzed at once, on top of a small valid run.

The property: exit status 0, 1 (a failed output or a claim refuted) or 2, never an
uncaught exception; with 2 exactly one line on stderr; with ``--json`` and 0, strict JSON
(no NaN / Infinity); and every case done within ``LIMIT_S`` seconds (a run that would be
huge must be refused up front: the cases run with ``NETDP_TIME_LIMIT`` at
``TIME_LIMIT`` seconds of estimated work, so the estimates of netdp.run.resources are
checked too). The default tier counts this process's CPU time (every thread), which a
busy machine does not stretch, with a wall-clock alarm at ``RUNAWAY`` times the limit
as a guard against a case that hangs; the long run (``test_fuzz_command_long``,
tests/fuzz_long.py) bounds the wall-clock time itself.

The default tier runs a seeded, bounded number of cases (``derandomize``); the slow tier
(``-m slow``) runs many more. Failures found are kept in tests/test_fuzz_regressions.py.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from fuzz_names import check_names
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netdp.run.cli import COMMANDS, build_parser, integer, main, number

LIMIT_S = 10.0  # one case's time limit (seconds)
#: The limit of a case that starts a local dask cluster (``sweep --backend dask``): its
#: workers' start-up alone takes 3.5 s on an idle 2-core machine and 11-16 s at
#: ``nice -n 19`` beside other jobs (docs/fuzzing.md).
CLUSTER_LIMIT_S = 30.0
#: The wall-clock alarm of a case, as a multiple of its limit: only a guard against a case
#: that hangs (the default tier bounds CPU time; a busy machine stretches wall time).
RUNAWAY = 6.0
#: The estimated seconds of work a fuzzed run may have (``NETDP_TIME_LIMIT``; the
#: estimates err towards the shorter run and leave out the start-up): beyond it a run is
#: refused up front, so that every case ends within LIMIT_S.
TIME_LIMIT = "3"
DEFAULT_EXAMPLES = 40  # per subcommand in the default tier
SLOW_EXAMPLES = 200  # per subcommand in the slow tier

#: Small valid runs of each subcommand (one is drawn per case); the fuzzed flags come
#: after (and override). A command with several modes has a run of each, so that one
#: fuzzed flag mostly lands on a run that succeeds (plot: a table, a table preset, the
#: one-run presets from a matrix file, from a run, and by-distance from a result file).
BASE: dict[str, list[list[str]]] = {
    "simulate": [["-n", "6"]],
    "account": [["{log}", "-n", "6"]],
    "audit": [["--trials", "200"]],
    "attack": [["--users", "2000", "--trials", "2", "--domain", "16"]],
    "bounds": [["--points", "5"]],
    "topologies": [[]],
    "sweep": [["{spec}", "--out", "swept", "--backend", "serial", "--no-progress"]],
    "results": [["{sweep}"]],
    "plot": [["{sweep}", "--preset", "privacy-vs-n", "--out", "fig.png"],
             ["{sweep}", "--x", "nodes", "--y", "privacy", "--out", "fig.png"],
             ["--preset", "pairs", "--pairs", "{pairs}", "--result", "{run}", "--out",
              "fig.png"],
             ["--preset", "heatmap", "--pairs", "{pairs}", "--result", "{run}", "--out",
              "fig.png"],
             ["--preset", "distance", "-n", "6", "--seed", "1", "--out", "fig.png"],
             ["--preset", "by-distance", "--result", "{run}", "--out", "fig.png"]],
    "report": [["{sweep}", "--html", "page.html"],
               ["{run}", "--pairs", "{pairs}", "--html", "page.html"]],
}
#: Flags not fuzzed here: they start a dask cluster (about 15 s), beyond a case's time
#: limit; their refusals and runs are tests/test_observer_cluster.py's.
NOT_FUZZED = {"workers", "scheduler"}
#: Flags (or positionals, by dest) whose value names a file that is read.
INPUT_FILES = {"config", "topology", "data_file", "gossip_matrix", "dataset", "log", "spec",
               "dir", "pairs", "result", "loss", "churn", "path"}
#: Flags whose value names a file that is written.
OUTPUT_FILES = {"out", "pairs_out", "trace_out", "curves", "plot", "csv", "parquet", "html"}
#: Flags whose value prefixes a file with ``file:``.
PREFIXED = {"loss", "churn"}

EXTREME_NUMBERS = ["0", "-0", "-0.0", "5e-324", "-5e-324", "1e-300", "1e300", "-1e300",
                   "1e308", "1e999", "nan", "-nan", "inf", "-inf", str(10**30),
                   str(-(10**30)), "9" * 400, "1", "-1", "2", "3", "0.5", "1e15", "1e6",
                   "abc", "", " ", "1_000", "0x10", "١٢", "1e", "--", "½"]
EXTREME_TEXT = ["", " ", "\x00", "é", "日本語", "\u202e", "a" * 5000, "-1", "1e300", "nan",
                "random:0", "random:1e300", "3,999999999999", "file:", "uniform:1:nan",
                "exp:1e-300:1e300", "ge:1:1:1:1:1", "weibull:0:0:0", ",,,", "0.5:1e300",
                "../", "/dev/null", "/", "a=b", "inflate:1e300", "beyond:nan"]


def _bad_files(root: Path) -> dict[str, str]:
    """Generated bad input files, by name."""
    files: dict[str, bytes | None] = {
        "empty.txt": b"",
        "binary.bin": bytes(range(256)) * 8,
        "nul.csv": b"a,b,c\n1,\x00,2\n",
        "truncated.csv": b"node,down,up\n1,2",
        "header-only.csv": b"src,dst,p\n",
        "huge-cell.csv": b"a\n" + b"1" * 200_000 + b"\n",
        "numbers.csv": b"x,y,z\n1e300,-1e300,nan\ninf,0,5e-324\n",
        "deep.toml": b"a = " + b"[" * 100_000,
        "deep-closed.toml": b"a = " + b"[" * 100_000 + b"]" * 100_000,
        "deep.json": b"[" * 100_000,
        "deep-object.json": b'{"a":' * 100_000,
        "truncated.json": b'{"config": {"nodes": ',
        "nan.json": b'{"config": {"nodes": NaN}}',
        "list.json": b"[1, 2, 3]",
        "bad.toml": b"nodes = = 3",
        "huge.toml": b"nodes = 1e300\nepsilon = 1e300\nsteps = 100000000000000000000\n",
        "edges.txt": b"0 1\n1 99999999999999999999\n",
        "edges-float.txt": b"0 1 nan\n1 2 inf\n",
        "zero-bytes.npy": b"",
        "one-column.csv": b"a\n1\n",
    }
    out = {}
    for name, data in files.items():
        path = root / name
        path.write_bytes(data or b"")
        out[name] = str(path)
    arrays = {"empty.npy": np.array([]), "shape.npy": np.ones((3, 4)),
              "one.npy": np.ones((1, 1)), "strings.npy": np.array([["a", "b"], ["c", "d"]]),
              "complex.npy": np.ones((6, 6), dtype=complex),
              "nan.npy": np.full((6, 6), np.nan), "3d.npy": np.ones((2, 2, 2)),
              "bool.npy": np.ones((6, 6), dtype=bool), "scalar.npy": np.float64(3.0),
              "neg.npy": -np.ones((6, 6))}
    for name, array in arrays.items():
        np.save(root / name, array)
        out[name] = str(root / name)
    (root / "truncated.npy").write_bytes((root / "shape.npy").read_bytes()[:100])
    out["truncated.npy"] = str(root / "truncated.npy")
    (root / "a-folder").mkdir()
    out["a-folder"] = str(root / "a-folder")
    out["missing"] = str(root / "missing" / "file.csv")
    return out


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, str]:
    """Bad files, plus the valid inputs the bases name (see :func:`make_inputs`)."""
    return make_inputs(tmp_path_factory.mktemp("fuzz-inputs"))


def make_inputs(root: Path) -> dict[str, str]:
    """Bad files in ``root``, plus the valid inputs the bases name: a log, a spec, a
    sweep, a run's JSON and its pairwise matrix (gossip on a cycle: by-distance draws
    it); by name."""
    files = _bad_files(root)
    log, spec, sweep = root / "log.csv", root / "spec.toml", root / "sweep"
    run, pairs = root / "run.json", root / "pairs.npy"
    with _quiet():
        assert main(["simulate", "-n", "6", "--steps", "30", "--seed", "1",
                     "--trace-out", str(log)]) == 0
        spec.write_text('seeds = 1\n[fixed]\ntask = "sum"\nsteps = 20\n'
                        "[grid]\nnodes = [4, 5]\n")
        assert main(["sweep", str(spec), "--out", str(sweep), "--backend", "serial",
                     "--no-progress"]) == 0
        assert main(["simulate", "-n", "6", "--protocol", "gossip", "--topology", "cycle",
                     "--seed", "1", "--pairs-out", str(pairs), "--out", str(run)]) == 0
    contacts = root / "contacts.csv"  # a time-varying graph: 6 nodes, a path then a star
    contacts.write_text("t,u,v\n" + "".join(f"0,{u},{u + 1}\n" for u in range(5))
                        + "".join(f"1,0,{v}\n" for v in range(1, 6)))
    files.update(log=str(log), spec=str(spec), sweep=str(sweep), run=str(run),
                 pairs=str(pairs), **{"contacts.csv": str(contacts)})
    return files


@contextlib.contextmanager
def _quiet():
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        yield out, err


def flags(command: str) -> list[argparse.Action]:
    """Every flag and positional the command's parser declares (no --help)."""
    parser = build_parser(command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [a for a in sub.choices[command]._actions
            if not isinstance(a, argparse._HelpAction | argparse._VersionAction)
            and a.dest not in NOT_FUZZED]


def values(action: argparse.Action, files: dict[str, str]) -> st.SearchStrategy[list[str]]:
    """The strategy of a flag's value(s) as command-line words."""
    if action.nargs == 0:
        return st.just([])
    dest = action.dest
    if action.type in (integer, number, int, float):
        one: st.SearchStrategy[str] = st.one_of(
            st.sampled_from(EXTREME_NUMBERS),
            st.integers(-(10**40), 10**40).map(str),
            st.integers(0, 20).map(str),
            st.floats(allow_nan=True, allow_infinity=True).map(repr))
    elif dest in INPUT_FILES:
        paths = st.sampled_from(sorted(files.values()))
        one = paths.map(lambda p: "file:" + p) if dest in PREFIXED else paths
        if dest in PREFIXED or dest in ("topology", "path"):  # also the other forms
            one = st.one_of(one, st.sampled_from(EXTREME_TEXT))
    elif dest in OUTPUT_FILES:
        one = st.sampled_from(["out.json", "a-folder", "missing/x.png", "x.png", "/dev/null",
                               "", ".", "x.unknown", "x.csv", "x.npy", "x.parquet",
                               "newdir/", "x.png/", "./out.json"])
    else:
        texts = [st.sampled_from(EXTREME_TEXT), st.text(max_size=20)]
        choices = action.choices or _declared_choices().get(dest)  # checked after parsing
        if choices:
            texts.append(st.sampled_from(sorted(map(str, choices))))
        one = st.one_of(*texts)
    default = action.default
    if isinstance(default, int | float | str) and not isinstance(default, bool) \
            and default != argparse.SUPPRESS:  # a value that passes: the flag's default
        one = st.one_of(st.just(str(default)), one)
    count = action.nargs if isinstance(action.nargs, int) else 1
    return st.lists(one, min_size=count, max_size=count)


def _declared_choices() -> dict[str, tuple[str, ...]]:
    """The choices of the parameters that declare some (netdp.core.params), by dest."""
    from netdp.tasks import TASKS, param_specs

    out = {name: spec.choices for name, spec in param_specs().items() if spec.choices}
    return {**out, "task": tuple(sorted({key.partition("/")[0] for key in TASKS}))}


def argv_for(command: str, files: dict[str, str]) -> st.SearchStrategy[list[str]]:
    """One or two fuzzed flags on top of one of the command's small valid runs (replacing
    the base's own value of a fuzzed flag): one of the runs that give the first fuzzed
    flag where there are some (plot's ``--pairs``: the runs from a matrix), and for
    ``simulate`` with the ``--task`` that reads it."""
    actions = flags(command)
    bases = [[w.format(**files) for w in base] for base in BASE[command]]
    owners = task_words() if command == "simulate" else {}

    @st.composite
    def build(draw) -> list[str]:
        chosen = draw(st.lists(st.sampled_from(actions), min_size=1, max_size=2,
                               unique_by=lambda a: a.dest)) if actions else []
        own = [b for b in bases if chosen and set(chosen[0].option_strings) & set(b)]
        base = draw(st.sampled_from(own or bases))  # a base that gives the flag, if any
        if chosen and chosen[0].dest in owners:  # a task's own flag: run that task
            base = [*base, *draw(st.sampled_from(owners[chosen[0].dest]))]
        argv = [command, *base]
        for action in chosen:
            words = draw(values(action, files))
            if not action.option_strings:  # a positional: replace the base's
                argv = [command, *words, *base[1:]] if base and not base[0].startswith(
                    "-") else [command, *words, *base]
                continue
            argv = _without(argv, action)  # a flag given twice is refused: fuzz this one
            flag = draw(st.sampled_from(action.option_strings))
            argv += [flag, *words] if all(not w.startswith("-") or _numberish(w)
                                          for w in words) else [f"{flag}={words[0]}"]
        if draw(st.booleans()) and any("--json" in a.option_strings for a in actions):
            argv.append("--json")
        return argv

    return build()


def task_words() -> dict[str, list[list[str]]]:
    """``simulate``'s flags that only some tasks read, each with those tasks' ``--task``
    (and ``--protocol``) words."""
    from netdp.core.params import params_of
    from netdp.core.simulation_config import SimulationConfig
    from netdp.tasks import TASKS

    common = {name for name, _, _ in params_of(SimulationConfig)}
    out: dict[str, list[list[str]]] = {}
    for key, task in TASKS.items():
        name, _, protocol = key.partition("/")
        words = ["--task", name, *(["--protocol", protocol] if protocol else [])]
        dests = {spec.pair or n for n, spec, _ in params_of(task.section)} | {
            o.flag.replace("-", "_") for o in task.outputs}  # --range: the pair low, high
        for dest in dests - common:
            out.setdefault(dest, []).append(words)
    return out


def _without(argv: list[str], action: argparse.Action) -> list[str]:
    """``argv`` without the base's occurrence of ``action``'s flag and its values."""
    width = action.nargs if isinstance(action.nargs, int) else (0 if action.nargs == 0 else 1)
    out, skip = [], 0
    for word in argv:
        if skip:
            skip -= 1
        elif word in action.option_strings:
            skip = width
        else:
            out.append(word)
    return out


def _numberish(word: str) -> bool:
    try:
        float(word)
        return True
    except ValueError:
        return False


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout


def _strict(text: str):
    raise ValueError(f"non-standard JSON constant {text}")


def starts_cluster(argv: list[str]) -> bool:
    """Whether ``netdp argv`` starts a local dask cluster: a sweep on the dask backend."""
    if not argv or argv[0] != "sweep":
        return False
    pairs = zip(argv, argv[1:], strict=False)
    return any(a == "--backend" and b == "dask" for a, b in pairs) or "--backend=dask" in argv


def check_case(argv: list[str], lines: list[str] | None = None, wall: bool = False,
               workdir: Path | None = None, captured: dict[str, str] | None = None,
               env: dict[str, str] | None = None) -> int:
    """Run ``netdp argv`` in a fresh folder (or in ``workdir``, kept), assert the property;
    the exit status (and stderr's lines appended to ``lines``; stdout and stderr put in
    ``captured``), with the environment variables of ``env`` set for the case.

    The time bound is on this process's CPU time (``time.process_time``: every thread,
    not the time spent waiting for a busy machine), or on wall-clock time with ``wall``
    (the long run); either way a wall-clock alarm at ``RUNAWAY`` times the limit stops
    a case that hangs.
    """
    with contextlib.ExitStack() as stack:
        if workdir is None:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            (workdir / "a-folder").mkdir()
        code, stdout, stderr, seconds, limit_s = _run_case(argv, workdir, wall, env or {})
    if lines is not None:
        lines += stderr.strip().splitlines()
    if captured is not None:
        captured.update(stdout=stdout, stderr=stderr)
    case = f"netdp {' '.join(a if len(a) < 60 else a[:57] + '...' for a in argv)}"
    assert code in (0, 1, 2), (case, code, stderr[-2000:])
    assert "Traceback" not in stderr, (case, stderr[-2000:])
    if code == 2:
        assert len(stderr.strip().splitlines()) == 1, (case, stderr[-2000:])
        check_names(argv, stderr.strip())
    if code == 0 and "--json" in argv and stdout.strip():
        json.loads(stdout, parse_constant=_strict)
    assert seconds <= limit_s, (case, f"{seconds:.1f} s of {'wall' if wall else 'CPU'} time")
    return code


def _run_case(argv: list[str], workdir: Path, wall: bool,
              env: dict[str, str]) -> tuple[int, str, str, float, float]:
    """``netdp argv`` run in ``workdir`` under the fuzzer's time limit and alarm: the exit
    status, stdout, stderr, the seconds it took and the case's limit."""
    cwd = os.getcwd()
    os.chdir(workdir)
    env = {"NETDP_TIME_LIMIT": TIME_LIMIT, **env}
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    old = signal.signal(signal.SIGALRM, _alarm)
    limit_s = CLUSTER_LIMIT_S if starts_cluster(argv) else LIMIT_S
    alarm_s = RUNAWAY * limit_s
    signal.setitimer(signal.ITIMER_REAL, alarm_s)
    clock = time.perf_counter if wall else time.process_time
    start = clock()
    try:
        with _quiet() as (out, err):
            code = main(argv)
        seconds = clock() - start
    except _Timeout:
        pytest.fail(f"over {alarm_s:g} s of wall-clock time: netdp {' '.join(argv)}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        os.chdir(cwd)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return code, out.getvalue(), err.getvalue(), seconds, limit_s


FUZZ_COMMANDS = [c for c in COMMANDS if c != "topologies"]


def _fuzz(command: str, files: dict[str, str], examples: int, wall: bool = False) -> None:
    @settings(max_examples=examples, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(argv=argv_for(command, files))
    def run(argv: list[str]) -> None:
        check_case(argv, wall=wall)

    run()


@pytest.mark.parametrize("command", [  # report's runs simulate first: 9 s
    pytest.param(c, marks=pytest.mark.slow) if c == "report" else c for c in FUZZ_COMMANDS])
def test_fuzz_command(command, inputs):
    """A seeded, bounded sample of fuzzed command lines for each subcommand."""
    _fuzz(command, inputs, DEFAULT_EXAMPLES)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("NETDP_FUZZ_EXAMPLES"), reason="the long fuzz run, on "
                    "demand: NETDP_FUZZ_EXAMPLES=200 python -m pytest -m slow -k fuzz_command_long")
@pytest.mark.parametrize("command", FUZZ_COMMANDS)
def test_fuzz_command_long(command, inputs):
    """The long run: many more cases per subcommand (still derandomized); on demand, since
    its whole run has not yet finished clean (the open cases are in the regressions). Its
    time bound is on wall-clock time: run it on a quiet machine."""
    _fuzz(command, inputs, int(os.environ.get("NETDP_FUZZ_EXAMPLES", SLOW_EXAMPLES)),
          wall=True)


@pytest.mark.parametrize(("argv", "line", "right"), [
    (["simulate", "-n", "6"], "--nodes: too many", True),
    (["simulate", "--nodes=6"], "--nodes: too many", True),
    (["simulate", "-n", "6"], "argument --nodes/-n: invalid integer", True),
    (["simulate", "-n", "6"], "--steps: this run would take ...", False),
    (["simulate", "-n", "6"], "--range: needs LOW < HIGH", False),
    (["simulate", "--range", "5", "1"], "--range: needs LOW < HIGH", True),
    (["simulate", "--config", "{config}"], "--range: needs LOW < HIGH", True),  # low = 5
    (["simulate", "--config", "{config}"], "--steps: must be an integer", True),
    (["simulate", "--config", "{config}"], "--epsilon: must be a number", False),
    (["simulate", "-n", "6"], "NETDP_TIME_LIMIT: expected seconds", True),
    (["simulate", "-n", "6"], "P: the laws overflowed", False),
    (["simulate", "-n", "6"], "ran out of memory; lower the sizes", True),
    (["account", "log.csv"], "LOG: cannot read", True),
    (["account", "log.csv"], "log.csv: line 3: expected 4 columns", True),
    (["account", "log.csv"], "other.csv: line 3: expected 4 columns", False),
    (["plot", "--preset", "by-distance"], "--result: give one or more files", True),
    (["plot", "--preset", "by-distance"], "--result: cannot read", False),
    (["plot", "sweep"], "--x: give the x column", True),
    (["plot", "--preset", "pairs"], "DIR: give the results folder", True),
    (["plot", "--preset", "pairs"], "DIR: cannot read", False),
])
def test_the_naming_rule(argv, line, right, tmp_path):
    """tests/fuzz_names.py: the parameter a refusal names was given (its rule's cases)."""
    config = tmp_path / "run.toml"
    config.write_text("low = 5\nsteps = 200.5\n")
    argv = [w.format(config=config) for w in argv]
    line = f"netdp {argv[0]}: error: {line}"
    if right:
        check_names(argv, line)
    else:
        with pytest.raises(AssertionError):
            check_names(argv, line)


def _busy(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_the_default_tier_bounds_cpu_time_and_the_long_run_wall_time(monkeypatch):
    """A case that waits (a busy machine) passes the default tier's bound and fails the
    long run's; a case that computes fails the default tier's; one that hangs meets the
    alarm."""
    here = sys.modules[__name__]
    monkeypatch.setattr(here, "LIMIT_S", 0.2)
    monkeypatch.setattr(here, "RUNAWAY", 100.0)  # the alarm far off: 20 s (a busy machine)
    monkeypatch.setattr(here, "main", lambda argv: time.sleep(0.5) or 0)
    assert check_case(["simulate"]) == 0
    with pytest.raises(AssertionError, match="of wall time"):
        check_case(["simulate"], wall=True)
    monkeypatch.setattr(here, "main", lambda argv: _busy(0.3) or 0)
    with pytest.raises(AssertionError, match="of CPU time"):
        check_case(["simulate"])
    monkeypatch.setattr(here, "RUNAWAY", 1.5)  # the alarm at 0.3 s of wall-clock time
    monkeypatch.setattr(here, "main", lambda argv: time.sleep(2) or 0)
    with pytest.raises(pytest.fail.Exception, match="over 0.3 s of wall-clock time"):
        check_case(["simulate"])


def test_every_command_declares_flags():
    """The fuzzer sees the flags: a parser change cannot silently empty it."""
    assert len(flags("simulate")) > 50
    assert all(flags(c) for c in FUZZ_COMMANDS)
