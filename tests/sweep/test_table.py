"""The result table: row flattening, atomic batch files, resume rules, export."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from netdp.core.errors import InputError
from netdp.run.api import simulate
from netdp.run.cli import main
from netdp.run.sweep.spec import config_hash, parse_spec
from netdp.run.sweep.table import (
    MANIFEST,
    ResultTable,
    export_csv,
    flatten,
    read_table,
)
from netdp.tasks import make_config


@pytest.fixture(scope="module")
def sum_result() -> dict:
    cfg = make_config(nodes=30, epsilon=0.5, delta=1e-7, accountants=("kov", "rdp"),
                           seed=11)
    return simulate(cfg).to_dict()


def test_flatten_summation_row(sum_result):
    row = flatten(sum_result)
    res = sum_result
    assert row["config_hash"] == config_hash(make_config(nodes=30, epsilon=0.5,
                                                              delta=1e-7, mechanism="gaussian",
                                                              steps=3000, walk="simple",
                                                              engine="vector",
                                                              accountants=("kov", "rdp")))
    assert (row["seed"], row["status"], row["version"]) == (11, "ok", res["version"])
    assert list(row)[:5] == ["config_hash", "seed", "status", "version", "runtime_s"]
    assert row["nodes"] == 30 and row["steps"] == 3000 and row["accountants"] == "kov,rdp"
    for key in ("estimate", "truth", "abs_error", "theoretical_std", "ldp_std"):
        assert row[key] == res["utility"][key]
    assert "quantity" not in row  # text outside the config is left out
    priv = res["privacy"]
    assert row["eps0"] == priv["epsilon0"] == 0.5
    assert row["ldp_mean"] == priv["ldp"]["mean"] and "ldp_method" not in row
    for name, value in priv["theory"].items():
        assert row[f"theory_{name}"] == value
    for entry in priv["empirical"]:
        for key in ("mean", "min", "max", "q50", "q90", "q99", "delta", "unprotected"):
            assert row[f"{entry['accountant']}_{key}"] == entry[key]
    assert row["mechanism_sigma"] == res["mechanism"]["sigma"]
    assert flatten(sum_result, config_hash="abc")["config_hash"] == "abc"
    json.dumps(row)  # plain Python values only


def test_flatten_ring_histogram_resolves_steps_and_renames_collisions():
    cfg = make_config(task="histogram", topology="ring", nodes=40, domain=4, rounds=2,
                           epsilon=2.0, seed=5)
    res = simulate(cfg).to_dict()
    row = flatten(res)
    assert res["config"]["steps"] is None and row["steps"] == 80  # K n on the ring
    assert row["dummies"] == 39 and row["utility_dummies"] == res["utility"]["dummies"]
    for key in ("l1", "linf", "mse", "theoretical_mse", "ldp_mse"):
        assert row[key] == res["utility"][key]
    assert "estimate" not in row  # a vector
    assert row["theory_histogram-ring"] == res["privacy"]["theory"]["histogram-ring"]
    assert "kov_mean" in row


def test_flatten_nested_utility_numbers():
    res = {"version": "x", "seed": 1, "config": {"task": "sgd", "steps": 5, "nodes": 3},
           "runtime_s": 0.5, "hops": 5,
           "utility": {"network": {"final_objective": 0.3, "final_accuracy": 0.9,
                                   "curve": [1, 2]}, "note": "text"},
           "privacy": {"epsilon0": 1.0, "network": {"epsilon": 2.5}}}
    row = flatten(res, config_hash="h")
    assert row["network_final_objective"] == 0.3 and row["network_final_accuracy"] == 0.9
    assert row["network_epsilon"] == 2.5 and "network_curve" not in row
    assert row["eps0"] == 1.0


def _spec(nodes=(5, 6), seeds=2):
    return parse_spec({"seeds": seeds, "grid": {"nodes": list(nodes)}}, "s.toml", "# s\n")


def _row(key, value=0.0):
    return {"config_hash": key[0], "seed": key[1], "status": "ok", "version": "t",
            "runtime_s": 0.1, "nodes": 5, "kov_mean": value, "kov_max": math.inf}


def test_batches_are_whole_files_and_duplicates_are_read_once(tmp_path):
    spec = _spec()
    keys = [r.key for r in spec.runs]
    with ResultTable.open(tmp_path / "t", spec) as table:
        first = table.write_batch([_row(keys[0], 1.0), _row(keys[1], 2.0)])
        table.write_batch([_row(keys[1], 99.0), _row(keys[2], 3.0)])  # key 1 again
        (table.rows_dir / ".tmp-partial.jsonl").write_text('{"config_hash": "torn')
    assert first.name.startswith("part-") and not list(tmp_path.glob("t/rows/*.tmp"))
    frame = read_table(tmp_path / "t").set_index(["config_hash", "seed"])
    assert len(frame) == 3
    assert [frame.loc[k, "kov_mean"] for k in keys[:3]] == [1.0, 2.0, 3.0]  # first wins
    assert frame["kov_max"].tolist() == [math.inf] * 3 and frame["kov_mean"].dtype == float
    assert ResultTable(tmp_path / "t").done_keys() == set(keys[:3])
    ResultTable.open(tmp_path / "t", spec).close()  # reopening removes the stale tmp file
    assert not list((tmp_path / "t" / "rows").glob(".tmp-*"))


def test_resume_rules(tmp_path):
    spec = _spec()
    out = tmp_path / "t"
    ResultTable.open(out, spec).close()
    assert (out / MANIFEST).is_file() and (out / "spec.toml").read_text() == "# s\n"
    ResultTable.open(out, spec).close()                       # the same spec: resume
    ResultTable.open(out, _spec(nodes=(5, 6, 7), seeds=3)).close()   # extended: resume
    with pytest.raises(InputError, match="holds a sweep of another spec") as err:
        ResultTable.open(out, _spec(nodes=(5,), seeds=3))     # a config dropped
    assert err.value.param == "out"
    with pytest.raises(InputError, match="seeds are not in this one"):
        ResultTable.open(out, _spec(nodes=(5, 6, 7), seeds=2))
    history = json.loads((out / MANIFEST).read_text())["history"]
    assert [h["configs"] for h in history] == [2, 3]


def test_refuses_foreign_folders_files_and_concurrent_writers(tmp_path):
    spec = _spec()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="holds no sweep"):
        ResultTable.open(tmp_path / "other", spec)
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is a file"):
        ResultTable.open(tmp_path / "file", spec)
    with ResultTable.open(tmp_path / "t", spec), \
            pytest.raises(InputError, match="in use by another running sweep"):
        ResultTable.open(tmp_path / "t", spec)
    ResultTable.open(tmp_path / "t", spec).close()  # the lock went with the first


def test_csv_export_reads_back_typed_in_one_call(tmp_path, sum_result):
    spec = _spec()
    rows = []
    for i, run in enumerate(spec.runs):
        row = flatten(sum_result, config_hash=run.config_hash)
        row["seed"] = run.seed
        row["nodes"] = run.config.nodes
        row["kov_max"] = math.inf if i == 0 else row["kov_max"]
        rows.append(row)
    with ResultTable.open(tmp_path / "t", spec) as table:
        table.write_batch(rows[:2])
        table.write_batch(rows[2:])
    frame = read_table(tmp_path / "t")
    export_csv(frame, str(tmp_path / "t.csv"))
    back = pd.read_csv(tmp_path / "t.csv")
    assert back.shape == frame.shape == (4, len(rows[0]))
    assert back["seed"].dtype == "int64" and back["nodes"].dtype == "int64"
    for col in ("epsilon", "kov_mean", "rdp_q99", "runtime_s", "theory_complete-ndp-chernoff"):
        assert back[col].dtype == "float64", col
    assert back["nodes"].tolist() == [5, 5, 6, 6]  # sorted by the grid axis
    assert back["noise_every_hop"].dtype == bool
    assert back.set_index("seed").loc[rows[0]["seed"]].query(
        f"nodes == {rows[0]['nodes']}")["kov_max"].item() == math.inf
    assert back["accountants"].tolist() == ["kov,rdp"] * 4
    assert back["seed"].tolist() == frame["seed"].tolist()
    assert back["kov_mean"].tolist() == frame["kov_mean"].tolist()  # full precision


def test_results_command(tmp_path, capsys, sum_result):
    spec = _spec()
    with ResultTable.open(tmp_path / "t", spec) as table:
        table.write_batch([{**flatten(sum_result, config_hash=r.config_hash), "seed": r.seed,
                            "nodes": r.config.nodes} for r in spec.runs])
    assert main(["results", str(tmp_path / "t")]) == 0
    text = capsys.readouterr().out
    assert "4 of 4 runs in the table (4 ok)" in text and "kov_mean" in text
    assert main(["results", str(tmp_path / "t"), "--csv", "-"]) == 0
    assert capsys.readouterr().out.startswith("config_hash,seed,status,version,runtime_s,")
    assert main(["results", str(tmp_path / "t"), "--csv", str(tmp_path / "x.csv")]) == 0
    assert len(pd.read_csv(tmp_path / "x.csv")) == 4
    assert main(["results", str(tmp_path)]) == 2
    assert "is not a sweep folder" in capsys.readouterr().err


def test_parquet_needs_a_library(tmp_path, capsys, monkeypatch):
    import netdp.run.sweep.commands as commands

    ResultTable.open(tmp_path / "t", _spec()).close()
    target = tmp_path / "t.parquet"
    monkeypatch.setattr(commands, "parquet_available", lambda: False)
    assert main(["results", str(tmp_path / "t"), "--parquet", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "netdp[parquet]" in err and "--parquet" in err
    assert not target.exists()


def test_parquet_round_trip(tmp_path, capsys, sum_result):
    """``--parquet`` writes the table that pandas reads back, values and columns (the
    provenance columns too): needs pyarrow, the ``parquet`` extra."""
    pytest.importorskip("pyarrow")
    table = ResultTable.open(tmp_path / "t", _spec())
    other = {**sum_result, "seed": 12, "provenance": {**sum_result["provenance"],
                                                      "host": "elsewhere", "commit": None}}
    table.write_batch([flatten(sum_result), flatten(other)])
    table.close()
    target = tmp_path / "t.parquet"
    assert main(["results", str(tmp_path / "t"), "--parquet", str(target)]) == 0
    assert "2 rows" in capsys.readouterr().out
    back = pd.read_parquet(target)
    pd.testing.assert_frame_equal(back, read_table(tmp_path / "t"), check_dtype=False)
    assert list(back["provenance_host"]) == [sum_result["provenance"]["host"], "elsewhere"]
    assert back["kov_mean"].iloc[0] == sum_result["privacy"]["empirical"][0]["mean"]


@pytest.mark.parametrize(("column", "value", "named"), [
    ("runtime_s", "../secret.csv", "its column runtime_s is not a number"),
    ("kov_mean", 10**400, "its column kov_mean is not a number within a float's range"),
    ("kov_mean", True, "its column kov_mean is not a number"),
    ("nodes", "x", "its column nodes is not a number"),  # a grid axis
    ("status", 10**400, "its column status is not a number, text, true or false"),
    ("NETDP-SECRET-X", "ok", "its key 9 (counting from 1) is not a number"),
], ids=["runtime-text", "figure-400-digits", "figure-true", "axis-text", "status-400-digits",
        "key-no-name"])
def test_a_row_value_of_another_kind_names_its_column(tmp_path, column, value, named):
    """Issue 39: a figure of text or beyond a float, a config value of another kind (the
    readers' pandas failed: agg function failed, OverflowError, TypeError) refuse the row,
    naming its file, line and column; a key that reads as no column name by its place
    (never echoed), and never the value."""
    spec = _spec()
    keys = [r.key for r in spec.runs]
    with ResultTable.open(tmp_path / "t", spec) as table:
        part = table.write_batch([_row(keys[0], 1.0), {**_row(keys[1], 2.0), column: value}])
    with pytest.raises(InputError) as err:
        read_table(tmp_path / "t")
    line = err.value.message
    assert f"{part} line 2: not a row of a netdp table ({named}" in line, line
    assert "SECRET" not in line and "secret" not in line and "0" * 40 not in line


def test_a_failed_runs_value_beyond_a_float_reads_back(tmp_path):
    """A failed run's row keeps its point's values: nodes = 10**400 (a spec may give it;
    its run fails on the time estimate) is written as inf, which the table reads (it was
    an OverflowError in pandas)."""
    from netdp.core.table_rows import error_row

    spec = _spec()
    keys = [r.key for r in spec.runs]
    with ResultTable.open(tmp_path / "t", spec) as table:
        table.write_batch([_row(keys[0], 1.0), error_row({"nodes": 10**400, "steps": 20},
                                                         keys[1][1], keys[1][0], "x", None)])
    frame = read_table(tmp_path / "t").set_index("seed")
    assert frame.loc[keys[1][1], "nodes"] == math.inf and frame.loc[keys[0][1], "nodes"] == 5


@pytest.mark.parametrize("which", ["manifest", "rows", "spec"])
def test_a_link_in_a_sweep_folder_is_refused_unread(tmp_path, capsys, which):
    """Issue 39: netdp writes no link into a sweep folder. A manifest, a row file or the
    spec's copy replaced by a link to a file elsewhere (a file the user did not name) is
    refused naming the folder, and its target appears in no output; a spec copy that is
    not UTF-8 is one line too (it was a UnicodeDecodeError)."""
    spec = _spec()
    keys = [r.key for r in spec.runs]
    folder = tmp_path / "t"
    with ResultTable.open(folder, spec) as table:
        part = table.write_batch([_row(keys[0], 1.0)])
    (folder / "spec.toml").write_text("[grid]\nnodes = [5, 6]\n")
    elsewhere = tmp_path / "elsewhere"
    name = {"manifest": "sweep.json", "rows": str(part.relative_to(folder)),
            "spec": "spec.toml"}[which]
    (folder / name).rename(elsewhere)
    (folder / name).symlink_to(elsewhere)
    command = ["report", str(folder), "--html", str(tmp_path / "page.html")]
    assert main(command) == 2
    err = capsys.readouterr().err
    assert f"{name}': a symbolic link, where netdp keeps" in err and err.count("\n") == 1
    assert not (tmp_path / "page.html").exists()
    if which == "spec":
        (folder / name).unlink()
        (folder / name).write_bytes(b"\xff\xfe[grid]\n")
        assert main(command) == 2
        assert "not a UTF-8 copy of the sweep's spec" in capsys.readouterr().err
        (folder / name).write_text("[grid]\nnodes = [5, 6]\n")
        assert main(command) == 0 and (tmp_path / "page.html").exists()
