"""Bad outcomes and bad input: a failing run is a row, sizes are counted before anything is
expanded, positional arguments are named as the usage shows them."""

from __future__ import annotations

import datetime
import importlib
import os
import pickle
import sys
import time
from pathlib import Path

import cloudpickle
import numpy as np
import pandas as pd
import pytest
from distributed.diagnostics.plugin import WorkerPlugin

from netdp.core.errors import InputError
from netdp.report import pair_figures
from netdp.run.cli import main
from netdp.run.sweep import plots
from netdp.run.sweep import spec as spec_module
from netdp.run.sweep.runner import _dask_client, run_sweep
from netdp.run.sweep.spec import MAX_POINTS, MAX_RUNS, parse_spec
from netdp.run.sweep.table import ResultTable, read_table

FAST = "[fixed]\naccountants = []\n[grid]\nnodes = [5, 6, 7, 8]\n"


def _spec(tmp_path: Path, text: str) -> str:
    path = tmp_path / "spec.toml"
    path.write_text(text)
    return str(path)


def _one_line(capsys, command: str) -> str:
    """The command's stderr: one line, ``netdp COMMAND: error: ...``, no traceback."""
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"netdp {command}: error: ") and "Traceback" not in captured.err
    return lines[0]


def _fail_on(monkeypatch, failures: dict[int, BaseException]) -> None:
    """``simulate``, as the sweep's runner calls it, raises ``failures[nodes]`` for those
    configs."""
    module = importlib.import_module("netdp.run.sweep.runner")
    real = module.simulate

    def flaky(config, **kw):
        if config.nodes in failures:
            raise failures[config.nodes]
        return real(config, **kw)

    monkeypatch.setattr(module, "simulate", flaky)


def _never_called(monkeypatch) -> None:
    def fail(config, **kw):
        raise AssertionError(f"ran {config.nodes} again")

    monkeypatch.setattr(importlib.import_module("netdp.run.sweep.runner"), "simulate", fail)


# --------------------------------------------------------------------------- failing runs


def test_a_run_that_raises_is_an_error_row_and_the_sweep_goes_on(tmp_path, capsys,
                                                                  monkeypatch):
    spec = _spec(tmp_path, "seeds = 2\n" + FAST)
    out = tmp_path / "out"
    _fail_on(monkeypatch, {7: RuntimeError("boom\n  on two lines"), 5: MemoryError()})
    argv = ["sweep", spec, "--out", str(out), "--backend", "serial", "--batch-size", "3"]
    assert main(argv) == 0  # a failed run is a result
    captured = capsys.readouterr()
    assert "8 runs done" in captured.out and "4 with status error" in captured.out
    assert captured.err.count("\n") == 1 and "4 runs ended with an error" in captured.err
    frame = read_table(out)
    assert len(frame) == 8 and set(frame["nodes"]) == {5, 6, 7, 8}
    ok, bad = frame[frame["status"] == "ok"], frame[frame["status"] == "error"]
    assert sorted(ok["nodes"]) == [6, 6, 8, 8] and ok["abs_error"].notna().all()
    assert dict(zip(bad["nodes"], bad["error"], strict=True)) == {
        7: "RuntimeError: boom on two lines", 5: "MemoryError"}
    assert set(bad["seed"]) == set(ok["seed"]) and bad["epsilon"].notna().all()
    assert "4 runs ended with an error" in _results(capsys, out)

    parts = {p.name: p.read_bytes() for p in ResultTable(out).parts()}
    _never_called(monkeypatch)  # a rerun redoes nothing, error rows included
    assert main(argv) == 0
    assert "nothing to run" in capsys.readouterr().out
    assert {p.name: p.read_bytes() for p in ResultTable(out).parts()} == parts


def _results(capsys, out: Path) -> str:
    assert main(["results", str(out)]) == 0
    return capsys.readouterr().out


def test_keyboard_interrupt_stops_the_sweep_and_keeps_what_was_written(tmp_path, capsys,
                                                                       monkeypatch):
    spec = _spec(tmp_path, FAST)
    out = tmp_path / "out"
    argv = ["sweep", spec, "--out", str(out), "--backend", "serial", "--batch-size", "1"]
    _fail_on(monkeypatch, {7: KeyboardInterrupt()})  # runs go largest first: 8, 7, 6, 5
    assert main(argv) == 130
    assert list(read_table(out)["nodes"]) == [8]
    assert [p.name for p in (out / "rows").iterdir() if not p.name.startswith("part-")] == []
    monkeypatch.undo()
    assert main(argv) == 0
    frame = read_table(out)
    assert sorted(frame["nodes"]) == [5, 6, 7, 8] and (frame["status"] == "ok").all()


class _CrashOn7(WorkerPlugin):
    """Worker plugin: in every worker process (restarted ones too), a run on 7 nodes kills
    the process, as a segfault or the kernel's OOM killer would."""

    name = "netdp-test-crash-on-7"

    def setup(self, worker) -> None:
        module = importlib.import_module("netdp.run.api")
        real = module.simulate

        def crash(config, **kw):
            if config.nodes == 7:
                os._exit(1)
            return real(config, **kw)

        module.simulate = crash


def test_a_crashed_dask_worker_gives_an_error_row_for_its_run_only(tmp_path):
    import dask

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    spec = parse_spec({"fixed": {"accountants": []}, "grid": {"nodes": [5, 6, 7, 8]}})
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            _dask_client(None, 1, None) as client:
        client.register_plugin(_CrashOn7())
        report = run_sweep(spec, tmp_path / "out", backend="dask", client=client,
                           batch_size=2, progress=False)
    assert (report.done, report.errors) == (4, 1)
    frame = read_table(tmp_path / "out").set_index("nodes")
    assert list(frame.loc[[5, 6, 8], "status"]) == ["ok"] * 3  # 8 shared 7's batch
    assert frame.loc[7, "status"] == "error"
    assert frame.loc[7, "error"].startswith("KilledWorker: the dask worker process died")


# --------------------------------------------------------------------------- sizes


def _axis(n: int, start: float = 0.5) -> list[float]:
    return [start + i / n for i in range(n)]


@pytest.mark.parametrize("data, param, words", [
    ({"seeds": 10**9}, "seeds",
     "the sweep has 1000000000 runs (1 grid point x 1000000000 seeds); at most 1000000"),
    ({"seeds": 1e9}, "seeds", "the sweep has 1000000000 runs (1 grid point x"),
    ({"seeds": 1000, "grid": {"nodes": list(range(2, 1002)), "epsilon": [0.5, 1.0]}},
     "seeds", "2000000 runs (2000 grid points = nodes 1000 x epsilon 2 x 1000 seeds)"),
    ({"grid": {"nodes": list(range(2, 1002)), "epsilon": _axis(1000),
               "delta": _axis(1000, 1e-9)}}, "delta",
     "the grid has 1000000000 points (nodes 1000 x epsilon 1000 x delta 1000); at most "
     "100000"),
    ({"grid": {"nodes": {"start": 2, "stop": 1000, "num": 10**10}}}, "nodes",
     "range num must be an integer in 1..100000 (got 10000000000)"),
    ({"seeds": True}, "seeds", "must be an integer >= 1"),
    ({"seeds": -3}, "seeds", "must be an integer >= 1"),
    ({"seeds": 2.5}, "seeds", "must be an integer >= 1"),
    ({"seeds": 3.0}, "seeds", "must be an integer >= 1"),
    ({"seeds": float("inf")}, "seeds", "must be an integer >= 1"),
    ({"fixed": {"topology": {"name": "ring"}}}, "topology", "(got a table:"),
    ({"grid": {"topology": [{"name": "ring"}]}}, "topology", "(got a table:"),
    ({"grid": {"accountants": [["kov", ["rdp"]]]}}, "accountants", "a list holding a list"),
    ({"fixed": {"nodes": datetime.date(2020, 1, 2)}}, "nodes", "(got a TOML date:"),
    ({"grid": {"nodes": []}}, "nodes", "empty grid axis"),
    ({"grid": {"nodes": "5"}}, "nodes", "a grid axis takes a list"),
])
def test_sizes_and_value_types_are_checked_before_expanding(data, param, words):
    start = time.process_time()
    with pytest.raises(InputError) as err:
        parse_spec(data, "s.toml")
    assert time.process_time() - start < 2.0  # counted, never expanded
    assert err.value.param == param and not err.value.positional
    assert words in err.value.message and "s.toml" in err.value.message, err.value.message


def test_the_limits_are_module_constants(monkeypatch):
    assert (MAX_RUNS, MAX_POINTS) == (1_000_000, 100_000)
    monkeypatch.setattr(spec_module, "MAX_RUNS", 6)
    monkeypatch.setattr(spec_module, "MAX_POINTS", 2)
    assert parse_spec({"seeds": 3, "grid": {"nodes": [5, 6]}}).n_runs == 6
    with pytest.raises(InputError, match="the sweep has 8 runs"):
        parse_spec({"seeds": 4, "grid": {"nodes": [5, 6]}})
    with pytest.raises(InputError, match="the grid has 3 points"):
        parse_spec({"grid": {"nodes": [5, 6, 7]}})
    with pytest.raises(InputError, match=r"num must be an integer in 1\.\.2 "):
        parse_spec({"grid": {"epsilon": {"start": 1, "stop": 2, "num": 3}}})


def test_cli_refuses_a_huge_sweep_at_once_even_for_a_dry_run(tmp_path, capsys):
    for text in ("seeds = 1000000000\n", "seeds = 1e9\n"):
        spec = _spec(tmp_path, text)
        start = time.process_time()
        assert main(["sweep", spec, "--out", str(tmp_path / "o"), "--dry-run"]) == 2
        assert time.process_time() - start < 2.0
        line = _one_line(capsys, "sweep")
        assert line.startswith("netdp sweep: error: --seeds: the sweep has 1000000000 runs")
    assert not (tmp_path / "o").exists()


def test_a_config_that_fails_to_build_names_its_grid_point(tmp_path, capsys, monkeypatch):
    import netdp.tasks

    real = netdp.tasks.make_config

    def strict(params=None, **more):  # a check that raises something else than InputError
        if not isinstance((params or {}).get("topology", ""), str):
            raise TypeError("topology must be a string")
        return real(params, **more)

    monkeypatch.setattr(importlib.import_module("netdp.run.sweep.spec"), "make_config", strict)
    spec = _spec(tmp_path, '[grid]\ntopology = ["ring", 5]\n')
    assert main(["sweep", spec, "--out", str(tmp_path / "o"), "--backend", "serial"]) == 2
    line = _one_line(capsys, "sweep")
    assert line.startswith("netdp sweep: error: SPEC.toml: bad value (TypeError: topology "
                           "must be a string)")
    assert line.endswith("grid point topology = 5)")
    assert not (tmp_path / "o").exists()


def test_workers_are_bounded(tmp_path, capsys):
    spec = _spec(tmp_path, FAST)
    assert main(["sweep", spec, "--out", str(tmp_path / "o"), "--workers", "100000"]) == 2
    assert "--workers: at most" in _one_line(capsys, "sweep")
    with pytest.raises(InputError, match="must be an integer in 1.."):
        run_sweep(parse_spec({}), tmp_path / "o", workers=10**6)
    assert not (tmp_path / "o").exists()


# --------------------------------------------------------------------------- plot sizes


@pytest.fixture(scope="module")
def pairs_npy(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("pairs") / "p.npy"
    matrix = np.random.default_rng(0).uniform(0.1, 1.0, (6, 6))
    np.fill_diagonal(matrix, 0.0)
    np.save(path, matrix)
    return path


@pytest.mark.parametrize("bins", ["1000000000", "0", "-5", "10001"])
def test_plot_bins_out_of_range(tmp_path, capsys, pairs_npy, bins):
    out = tmp_path / "p.png"
    start = time.process_time()
    assert main(["plot", "--preset", "pairs", "--pairs", str(pairs_npy), "--bins", bins,
                 "--out", str(out)]) == 2
    assert time.process_time() - start < 2.0
    assert _one_line(capsys, "plot").startswith("netdp plot: error: --bins: must be an "
                                                "integer in 1..10000")
    assert not out.exists()
    with pytest.raises(InputError, match="bins"):
        pair_figures.pairs_figure(np.load(pairs_npy), bins=int(bins))


def test_plot_sizes_of_one_run_are_bounded(tmp_path, capsys, pairs_npy, monkeypatch):
    out = tmp_path / "p.png"
    assert main(["plot", "--preset", "pairs", "--nodes", "1000000000", "--out",
                 str(out)]) == 2
    assert "--nodes: the pairwise matrix is offered up to n = 10000" in _one_line(capsys,
                                                                                 "plot")
    from netdp.tracking import loss_table as tracker

    monkeypatch.setattr(tracker, "MATRIX_LIMIT", 5)
    assert main(["plot", "--preset", "pairs", "--pairs", str(pairs_npy), "--out",
                 str(out)]) == 2
    assert "--pairs: the matrix has n = 6; at most 5" in _one_line(capsys, "plot")
    assert not out.exists()


def test_plot_refuses_too_many_groups_before_drawing(tmp_path, capsys):
    n = plots.MAX_GROUPS + 1
    table = tmp_path / "t.csv"
    pd.DataFrame({"nodes": np.tile([10, 20], n), "epsilon": np.repeat(0.1 + np.arange(n), 2),
                  "abs_error": np.linspace(0.1, 1, 2 * n), "status": "ok"}).to_csv(table)
    out = tmp_path / "f.png"
    start = time.process_time()
    assert main(["plot", str(table), "--x", "n", "--y", "abs_error", "--hue", "epsilon",
                 "--out", str(out)]) == 2
    assert time.process_time() - start < 5.0
    assert f"--hue: {n} groups of runs to draw" in _one_line(capsys, "plot")
    assert not out.exists()


# --------------------------------------------------------------------------- names


def test_input_error_marks_positionals():
    flag, positional = InputError("batch_size", "m"), InputError("DIR", "m")
    assert (flag.positional, flag.label) == (False, "--batch-size")
    assert (positional.positional, positional.label) == (True, "DIR")
    assert InputError("<file>", "m").positional and not InputError("Nodes", "m", False).positional
    assert positional.line("results") == "netdp results: error: DIR: m"
    assert str(positional) == "DIR: m" and isinstance(positional, ValueError)
    back = pickle.loads(pickle.dumps(InputError("nodes", "too big")))
    assert (back.param, back.message, back.positional) == ("nodes", "too big", False)


def test_positional_arguments_are_named_as_in_the_usage(tmp_path, capsys):
    assert main(["results", str(tmp_path / "none")]) == 2
    assert _one_line(capsys, "results").startswith("netdp results: error: DIR: ")
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "sweep.json").write_text("{")  # a torn manifest
    assert main(["results", str(tmp_path / "t")]) == 2
    assert _one_line(capsys, "results").startswith("netdp results: error: DIR: ")
    assert main(["sweep", str(tmp_path / "none.toml"), "--out", str(tmp_path / "o")]) == 2
    assert _one_line(capsys, "sweep").startswith("netdp sweep: error: SPEC.toml: cannot read")
    bad = _spec(tmp_path, "[grid\n")
    assert main(["sweep", bad, "--out", str(tmp_path / "o")]) == 2
    assert "error: SPEC.toml: " in _one_line(capsys, "sweep")
    # the same folder is --out for `netdp sweep`
    assert main(["sweep", _spec(tmp_path, FAST), "--out", str(tmp_path / "t")]) == 2
    assert _one_line(capsys, "sweep").startswith("netdp sweep: error: --out: ")
    assert not (tmp_path / "o").exists()
