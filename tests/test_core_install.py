"""netdp's core install: no dask, distributed or statsmodels (issue 41).

The core runs without them; what needs them (``--workers``, ``--scheduler``, ``sweep
--backend dask``, ``--dataset fair``) exits 2 with one line naming the extra to install,
and writes nothing. Each run is a fresh interpreter in which those packages cannot be
imported (``sys.modules[name] = None``: ``import`` raises and ``find_spec`` answers
``None``, as in an environment without them).
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from netdp.data.values import packaged_table, read_numeric_csv, statsmodels_file
from netdp.run import dask_client
from netdp.run.sweep.table import read_table

REPO = Path(__file__).resolve().parents[1]
ABSENT = ("dask", "distributed", "statsmodels")
SMALL = ["--nodes", "10", "--steps", "100", "--seed", "1"]


def _without_extras(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    code = ("import sys\n"
            f"for name in {ABSENT!r}:\n"
            "    sys.modules[name] = None\n"
            "from netdp.run.cli import main\n"
            "code = main(sys.argv[1:])\n"
            f"assert not any(sys.modules.get(m) for m in {ABSENT!r})\n"
            "sys.exit(code)\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # this checkout's netdp, from any cwd
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd, env=env, check=False)


def test_the_core_runs_without_dask_distributed_and_statsmodels(tmp_path: Path) -> None:
    done = _without_extras(["simulate", *SMALL, "--json"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["privacy"]["empirical"]
    sgd = _without_extras(["simulate", "--task", "sgd", *SMALL, "--json"], tmp_path)
    assert sgd.returncode == 0, sgd.stderr
    assert json.loads(sgd.stdout)["dataset"]["name"] == "randhie (RAND HIE)"


@pytest.mark.parametrize(("args", "param", "extra"), [
    (["simulate", *SMALL, "--workers", "2", "--out", "r.json"], "--workers", "netdp[cluster]"),
    (["simulate", *SMALL, "--scheduler", "tcp://127.0.0.1:1", "--out", "r.json"],
     "--scheduler", "netdp[cluster]"),
    (["simulate", "--task", "multidim", "--dataset", "fair", *SMALL, "--out", "r.json"],
     "--dataset", "netdp[datasets]"),
])
def test_what_needs_an_extra_exits_2_naming_it(tmp_path: Path, args: list[str], param: str,
                                               extra: str) -> None:
    done = _without_extras(args, tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and param in done.stderr and extra in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_sweep_is_serial_by_default_and_refuses_dask_without_the_extra(
        tmp_path: Path) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text("seeds = 1\n[fixed]\nsteps = 100\n[grid]\nnodes = [5, 8]\n")
    refused = _without_extras(["sweep", str(spec), "--out", "dask", "--backend", "dask"],
                              tmp_path)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.count("\n") == 1 and "--backend" in refused.stderr
    assert "netdp[cluster]" in refused.stderr and not (tmp_path / "dask").exists()
    done = _without_extras(["sweep", str(spec), "--out", "serial", "--no-progress"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "on serial" in done.stdout + done.stderr
    assert len(read_table(tmp_path / "serial")) == 2


def test_with_the_extra_the_sweep_default_stays_dask() -> None:
    assert dask_client.has_cluster()  # the test extras install it
    assert dask_client.default_backend() == "dask"
    dask_client.require_cluster("backend")  # no error


def test_the_shipped_randhie_is_statsmodels_copy_byte_for_byte() -> None:
    pytest.importorskip("statsmodels")
    theirs = statsmodels_file("randhie/randhie.csv", "randhie").read_bytes()
    ours = gzip.decompress((REPO / "netdp" / "data" / "randhie.csv.gz").read_bytes())
    assert ours == theirs
    table, header = packaged_table("randhie.csv.gz", "dataset")
    their_table, their_header = read_numeric_csv(
        statsmodels_file("randhie/randhie.csv", "randhie"), "dataset")
    assert header == their_header and np.array_equal(table, their_table)
    assert table.shape == (20190, 10) and header[0] == "mdvis"


def test_the_data_files_ship_in_the_wheel() -> None:
    shipped = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["netdp.data"]
    files = {p.name for p in (REPO / "netdp" / "data").iterdir()
             if p.is_file() and p.suffix != ".py"}
    assert files == {"randhie.csv.gz", "DATASETS.md"}
    for name in files:
        assert any(Path(name).match(pattern) for pattern in shipped), name


def test_the_core_dependencies_leave_the_extras_out() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    assert not any(name in core for name in ABSENT)
    extras = project["optional-dependencies"]
    assert {r.split(">")[0] for r in extras["cluster"]} == {"dask", "distributed"}
    assert [r.split(">")[0] for r in extras["datasets"]] == ["statsmodels"]
    assert set(extras["cluster"] + extras["datasets"]) <= set(extras["test"])
    assert importlib.util.find_spec("statsmodels") is not None
