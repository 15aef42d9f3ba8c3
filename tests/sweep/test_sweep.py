"""Running sweeps: serial and dask give the same table, a SIGKILL loses nothing written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from netdp.run.api import simulate
from netdp.run.cli import main
from netdp.run.sweep.runner import _dask_client, estimate_cost, plan_batches, run_sweep
from netdp.run.sweep.spec import load_spec, parse_spec
from netdp.run.sweep.table import ResultTable, flatten, read_table

REPO = Path(__file__).resolve().parents[2]

SMALL = """\
seeds = 2
base_seed = 3
[fixed]
delta = 1e-7
[grid]
task = ["sum", "histogram"]
topology = ["complete", "ring"]
nodes = [12, 20]
"""


def _values(frame: pd.DataFrame) -> pd.DataFrame:
    """The table without timings, in key order."""
    return (frame.drop(columns=["runtime_s"]).sort_values(["config_hash", "seed"])
            .reset_index(drop=True))


@pytest.fixture(scope="module")
def small_serial(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("small")
    spec = base / "small.toml"
    spec.write_text(SMALL)
    out = base / "serial"
    assert main(["sweep", str(spec), "--out", str(out), "--backend", "serial"]) == 0
    return spec, out


def test_serial_sweep_writes_one_row_per_run_equal_to_simulate(small_serial, capsys):
    spec_path, out = small_serial
    spec = load_spec(spec_path)
    frame = read_table(out)
    assert len(frame) == spec.n_runs == 16
    assert set(zip(frame["config_hash"], frame["seed"], strict=True)) == \
        {r.key for r in spec.runs}
    assert (frame["status"] == "ok").all()
    run = spec.runs[5]
    direct = flatten(simulate(run.config.replace(seed=run.seed)).to_dict(),
                     config_hash=run.config_hash)
    row = frame.set_index(["config_hash", "seed"]).loc[run.key]
    for key, value in direct.items():
        if key not in ("config_hash", "seed", "runtime_s") and value is not None:
            assert row[key] == value, key
    # rerunning the same command runs nothing
    assert main(["sweep", str(spec_path), "--out", str(out), "--backend", "serial"]) == 0
    assert "nothing to run" in capsys.readouterr().out
    assert len(list((out / "rows").iterdir())) == len(ResultTable(out).parts())


@pytest.mark.slow  # 39 s, mostly the local cluster's start-up (the default tier's largest)
def test_dask_gives_the_same_values_as_serial(small_serial, tmp_path):
    spec_path, serial_out = small_serial
    spec = load_spec(spec_path)
    # n = 20 000: the summation's dot product is long enough for a threaded BLAS to split
    # it, so this also checks that the workers sum in the same order as this process
    big = parse_spec({"seeds": 6, "fixed": {"nodes": 20000, "accountants": []}})
    run_sweep(big, tmp_path / "big_serial", backend="serial", progress=False)
    with _dask_client(None, 2, None) as client:
        report = run_sweep(spec, tmp_path / "dask", backend="dask", client=client,
                           batch_size=3, progress=False)
        run_sweep(big, tmp_path / "big_dask", backend="dask", client=client, progress=False)
    assert (report.done, report.workers, report.batches) == (16, 2, 6)
    serial, dask = read_table(serial_out), read_table(tmp_path / "dask")
    pd.testing.assert_frame_equal(_values(serial), _values(dask), check_exact=True)
    pd.testing.assert_frame_equal(_values(read_table(tmp_path / "big_serial")),
                                  _values(read_table(tmp_path / "big_dask")),
                                  check_exact=True)


@pytest.mark.slow  # ~13 s: a killed sweep
def test_sigkill_mid_sweep_then_rerun_gives_exactly_one_row_per_run(tmp_path):
    spec_path = tmp_path / "kill.toml"
    spec_path.write_text("seeds = 6\n[fixed]\nsteps = 20000\n[grid]\n"
                         "nodes = [20, 30, 40, 50, 60, 70, 80, 90, 100, 110]\n")
    spec = load_spec(spec_path)
    out = tmp_path / "out"
    rows_dir = out / "rows"
    proc = subprocess.Popen([sys.executable, "-m", "netdp", "sweep", str(spec_path), "--out",
                             str(out), "--backend", "serial", "--batch-size", "1"],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if rows_dir.is_dir() and len(list(rows_dir.glob("part-*"))) >= 3:
                break
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read()
    before = {p.name: p.read_bytes() for p in rows_dir.glob("part-*")}
    assert 3 <= len(before) < spec.n_runs  # killed mid-way

    assert main(["sweep", str(spec_path), "--out", str(out), "--backend", "serial"]) == 0
    after = {p.name: p.read_bytes() for p in rows_dir.glob("part-*")}
    assert all(after[name] == data for name, data in before.items())  # kept as written
    assert not [p for p in rows_dir.iterdir() if not p.name.startswith("part-")]
    lines = [json.loads(line) for data in after.values()
             for line in data.decode().splitlines()]  # every line whole JSON
    keys = [(r["config_hash"], r["seed"]) for r in lines]
    assert len(keys) == len(set(keys)) == spec.n_runs  # none lost, none duplicated
    assert set(keys) == {r.key for r in spec.runs}
    assert all(r["status"] == "ok" and r["rdp_mean"] > 0 for r in lines)
    assert len({len(r) for r in lines}) == 1  # none torn: every row has every column


def test_input_errors_at_run_time_become_error_rows(tmp_path, capsys):
    spec_path = tmp_path / "err.toml"
    spec_path.write_text('[fixed]\ncoalition = "random:8"\n[grid]\nnodes = [5, 20]\n')
    out = tmp_path / "out"
    assert main(["sweep", str(spec_path), "--out", str(out), "--backend", "serial"]) == 0
    assert "1 run ended with an error" in capsys.readouterr().err
    frame = read_table(out).set_index("nodes")
    assert frame.loc[20, "status"] == "ok" and frame.loc[5, "status"] == "error"
    assert frame.loc[5, "error"].startswith("--coalition: random:8 needs fewer than")


def test_batches_hold_every_run_once_largest_first():
    spec = parse_spec({"seeds": 5, "fixed": {"accountants": ["kov", "rdp"]},
                       "grid": {"nodes": [5, 10, 50, 100, 1000], "epsilon": [0.1, 0.4]}})
    runs = spec.runs
    for workers, size in ((2, None), (1, None), (4, 3)):
        batches = plan_batches(runs, workers, size)
        flat = [r for b in batches for r in b]
        assert sorted(r.key for r in flat) == sorted(r.key for r in runs)
        costs = [estimate_cost(r.config) for r in flat]
        assert costs == sorted(costs, reverse=True)
    auto = plan_batches(runs, 2)
    assert len(auto[0]) == 1 and len(auto[-1]) > 1  # big runs alone, small ones packed
    assert 8 <= len(auto) <= 40
    assert [len(b) for b in plan_batches(runs, 2, 7)] == [7] * 7 + [1]


def test_bad_options_exit_2_and_write_nothing(small_serial, tmp_path, capsys):
    spec_path, _ = small_serial
    out = tmp_path / "o"
    for extra in (["--backend", "serial", "--workers", "2"], ["--batch-size", "0"],
                  ["--backend", "serial", "--scheduler", "tcp://127.0.0.1:1"]):
        assert main(["sweep", str(spec_path), "--out", str(out), *extra]) == 2
        assert capsys.readouterr().err.count("\n") == 1
    assert not out.exists()
