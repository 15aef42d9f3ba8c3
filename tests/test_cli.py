import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import view_cap_max

from netdp import __version__
from netdp.mechanisms import registry
from netdp.report.types import TIMING_FIELDS
from netdp.run.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def strip_timing(obj):
    if isinstance(obj, dict):
        return {k: strip_timing(v) for k, v in obj.items() if k not in TIMING_FIELDS}
    if isinstance(obj, list):
        return [strip_timing(v) for v in obj]
    return obj


def test_json_has_the_documented_fields(capsys):
    code, out, _ = run(capsys, "simulate", "--nodes", "30", "--seed", "5", "--runs", "3",
                       "--json")
    assert code == 0
    res = json.loads(out)
    for key in ("version", "seed", "config", "engine", "hops", "runtime_s", "utility", "runs"):
        assert key in res
    assert res["version"] == __version__ and res["seed"] == 5
    assert res["config"]["nodes"] == 30 and res["config"]["steps"] == 3000
    assert res["hops"] == 9000 and len(res["runs"]) == 3
    util = res["utility"]
    for key in ("estimate", "truth", "abs_error", "theoretical_std"):
        assert isinstance(util[key], float)
    per_run = [r["estimate"] for r in res["runs"]]
    assert util["estimate"] == pytest.approx(sum(per_run) / 3)


@pytest.mark.slow
def test_same_seed_same_bytes_apart_from_timing(capsys):
    args = ("simulate", "--topology", "watts-strogatz", "--nodes", "50", "--steps", "1000",
            "--accountant", "kov", "--seed", "9", "--runs", "2", "--latency", "exp:1",
            "--json")
    first = json.loads(run(capsys, *args)[1])
    second = json.loads(run(capsys, *args)[1])
    assert json.dumps(strip_timing(first)) == json.dumps(strip_timing(second))
    third = json.loads(run(capsys, *args[:-4], "10", *args[-3:])[1])
    assert third["utility"]["estimate"] != first["utility"]["estimate"]


@pytest.mark.parametrize("topology", ["complete", "ring",
                                      pytest.param("karate", marks=pytest.mark.slow)])
def test_engines_give_the_same_result(capsys, topology):
    base = ("simulate", "--topology", topology, "--seed", "3", "--runs", "2", "--json")
    vec = json.loads(run(capsys, *base, "--engine", "vector")[1])
    ev = json.loads(run(capsys, *base, "--engine", "event")[1])
    assert vec["engine"] == "vector" and ev["engine"] == "event"
    for res in (vec, ev):
        res.pop("engine")
        res["config"].pop("engine")
    assert strip_timing(vec) == strip_timing(ev)


def test_table_output(capsys):
    code, out, _ = run(capsys, "simulate", "--topology", "ring", "--nodes", "50", "--seed", "1")
    assert code == 0
    assert "directed ring (n=50)" in out and "LDP baseline" in out and "theory std" in out


def test_out_writes_the_same_object(capsys, tmp_path):
    target = tmp_path / "result.json"
    code, out, _ = run(capsys, "simulate", "--seed", "2", "--json", "--out", str(target))
    assert code == 0 and json.loads(target.read_text()) == json.loads(out)
    assert list(tmp_path.iterdir()) == [target]  # no temporary file left behind


BAD = [
    (["--nodes", "1"], "--nodes"),
    (["--epsilon", "0"], "--epsilon"),
    (["--epsilon", "-2"], "--epsilon"),
    (["--epsilon", "nan"], "--epsilon"),
    (["--delta", "0"], "--delta"),
    (["--delta", "1"], "--delta"),
    (["--topology", "moebius"], "--topology"),
    (["--task", "sort"], "--task"),
    (["--steps", "0"], "--steps"),
    (["--runs", "0"], "--runs"),
    (["--range", "1", "0"], "--range"),
    (["--latency", "exp:-1"], "--latency"),
    (["--topology", "karate", "--nodes", "5"], "--nodes"),
    (["--topology", "hypercube", "--nodes", "100"], "--nodes"),
    (["--topology", "ring", "--tokens", "2"], "--tokens"),
    (["--topology", "ring", "--steps", "10"], "--steps"),
    (["--data-file", "does-not-exist.csv"], "--data-file"),
    (["--calibration", "classic", "--epsilon", "3"], "--epsilon"),
    (["--engine", "vector", "--tokens", "3", "--service-time", "1"], "--engine"),
    (["--config", "nope.toml"], "--config"),
]


@pytest.mark.parametrize("argv,flag", BAD)
def test_bad_input_one_line_exit_2_nothing_written(capsys, tmp_path, argv, flag):
    target = tmp_path / "out.json"
    code, out, err = run(capsys, "simulate", *argv, "--out", str(target))
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0], err
    assert "Traceback" not in err
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_argparse_errors_are_one_line_too(capsys):
    code = main(["simulate", "--nodes", "many"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--nodes" in err[0]


def test_disconnected_edge_list_names_unreachable_nodes(capsys, tmp_path):
    edges = tmp_path / "edges.txt"
    edges.write_text("0 1\n1 2\n7 8\n")
    code, _, err = run(capsys, "simulate", "--topology", str(edges))
    assert code == 2 and "node(s) #3, #4 cannot be reached from node #0 (nodes numbered " \
        "from 0 in the file's order)" in err  # the file's labels (7, 8) never echoed


def test_config_file_and_flags_override(capsys, tmp_path):
    cfg = tmp_path / "run.toml"
    cfg.write_text('topology = "ring"\nnodes = 40\nrounds = 2\nseed = 4\nrange = [0, 10]\n'
                   'data = "constant"\n')
    res = json.loads(run(capsys, "simulate", "--config", str(cfg), "--rounds", "3",
                         "--json")[1])
    assert res["config"]["topology"] == "ring" and res["config"]["rounds"] == 3
    assert res["utility"]["truth"] == 5.0 and res["mechanism"]["sensitivity"] == 10.0
    cfg.write_text("nodez = 3\n")
    code, _, err = run(capsys, "simulate", "--config", str(cfg))
    assert code == 2 and "--nodez: unknown parameter" in err


def test_csv_column_as_data(capsys, tmp_path):
    csv = tmp_path / "people.csv"
    csv.write_text("name,age\n" + "".join(f"p{i},{20 + i % 50}\n" for i in range(120)))
    res = json.loads(run(capsys, "simulate", "--data-file", str(csv), "--column", "age",
                         "--range", "0", "100", "--seed", "1", "--json")[1])
    assert res["config"]["nodes"] == 120
    assert res["utility"]["truth"] == pytest.approx(sum(20 + i % 50 for i in range(120)) / 120)
    code, _, err = run(capsys, "simulate", "--data-file", str(csv), "--column", "height")
    assert code == 2 and "no column 'height'" in err
    code, _, err = run(capsys, "simulate", "--data-file", str(csv), "--column", "age")
    assert code == 2 and "outside --range" in err


def test_module_entry_point_and_help(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "netdp", "simulate", "--help"],
                          capture_output=True, text=True, check=True)
    for flag in ("--topology", "--nodes", "--task", "--mechanism", "--epsilon", "--delta",
                 "--steps", "--rounds", "--seed", "--engine", "--runs", "--json", "--out"):
        assert flag in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "netdp", "simulate", "--epsilon", "-1"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    # from outside the checkout, netdp is the installed package: its specs must ship with it
    listing = subprocess.run([sys.executable, "-m", "netdp", "topologies"], cwd=tmp_path,
                             capture_output=True, text=True, check=True).stdout
    assert "karate" in listing and "hypercube" in listing


def test_readme_test_command_is_what_ci_runs():
    """CI runs the README's test command (its install, then its pytest), with the lint and
    the type check in between, then the slow tier the README names."""
    root = Path(__file__).resolve().parents[1]
    readme, ci = (root / "README.md").read_text(), (root / ".ci" / "run").read_text()
    install, tests = "python -m pip install '.[test,parquet]'", "python -m pytest -q -n auto"
    assert f"{install} && {tests}" in readme and f"`{tests} -m slow`" in readme
    steps = [ci.index(install), ci.index("python -m ruff check ."), ci.index("python -m mypy"),
             ci.index(tests), ci.index("tier || exit 1"), ci.index("tier -m slow || exit 1")]
    assert steps == sorted(steps)


@pytest.mark.slow  # ~25 s: every accountant end to end
def test_privacy_section(capsys):
    res = json.loads(run(capsys, "simulate", "--nodes", "40", "--seed", "1", "--runs", "2",
                         "--accountant", "kov", "--accountant", "rdp", "--accountant", "pld",
                         "--json")[1])
    priv = res["privacy"]
    assert set(priv["ldp"]) >= {"mean", "min", "max"}
    assert "complete-ndp-chernoff" in priv["theory"]
    names = [e["accountant"] for e in priv["empirical"]]
    assert names == ["kov", "rdp", "pld"]
    for emp in priv["empirical"]:
        for key in ("accountant", "delta", "mean", "min", "max", "q50", "q90", "q99"):
            assert key in emp
        assert emp["pairs"] == 2 * 40 * 39
        assert emp["min"] <= emp["q50"] <= emp["q90"] <= emp["q99"] <= emp["max"]
        assert emp["max"] <= view_cap_max(res["config"])
    kov, rdp, pld = priv["empirical"]
    assert pld["mean"] < rdp["mean"] < kov["mean"]


def test_pairs_out_matrix_matches_the_summary(capsys, tmp_path):
    target = tmp_path / "pairs.npy"
    code, out, _ = run(capsys, "simulate", "--nodes", "30", "--seed", "4", "--json",
                       "--pairs-out", str(target))
    assert code == 0
    matrix = np.load(target)
    emp = json.loads(out)["privacy"]["empirical"][0]
    off = matrix[~np.eye(30, dtype=bool)]
    assert matrix.shape == (30, 30) and np.all(np.isnan(np.diag(matrix)))
    assert off.mean() == pytest.approx(emp["mean"], rel=1e-12)
    assert off.max() == emp["max"] and off.min() == emp["min"]


def test_coalition_on_the_ring_reports_unprotected_nodes(capsys):
    res = json.loads(run(capsys, "simulate", "--topology", "ring", "--nodes", "20", "--seed",
                         "1", "--coalition", "4,6", "--json")[1])
    emp = res["privacy"]["empirical"][0]
    assert emp["unprotected"] == 1 and emp["max"] == "inf" and emp["pairs"] == 18
    res = json.loads(run(capsys, "simulate", "--nodes", "20", "--seed", "1", "--coalition",
                         "random:3", "--runs", "2", "--json")[1])
    assert res["privacy"]["empirical"][0]["pairs"] == 2 * 17
    assert len(res["privacy"]["coalitions"]) == 2


def test_coalition_and_malicious_by_node_label(capsys):
    """On a labelled graph (florentine: the families' names) --coalition and --malicious
    take node labels, the same run as their ids; the report shows the labels given."""
    from netdp.graphs.topologies import build

    ids = {label: i for i, label in enumerate(build("florentine").labels)}
    base = ["simulate", "--topology", "florentine", "--steps", "60", "--seed", "2",
            "--accountant", "rdp"]
    by_label = run(capsys, *base, "--coalition", "Strozzi,Medici", "--json")
    by_id = run(capsys, *base, "--coalition", f"{ids['Medici']},{ids['Strozzi']}", "--json")
    assert by_label[0] == by_id[0] == 0
    labelled, numbered = (json.loads(r[1]) for r in (by_label, by_id))
    assert labelled["privacy"] == numbered["privacy"]
    assert labelled["privacy"]["coalitions"] == [sorted([ids["Medici"], ids["Strozzi"]])]
    assert labelled["config"]["coalition"] == "Strozzi,Medici"
    code, out, _ = run(capsys, *base, "--coalition", "Medici")
    assert code == 0 and "observer: the coalition Medici" in out
    attacked = [json.loads(run(capsys, *base, "--malicious", m, "--attack", "max",
                               "--json")[1])["attack"] for m in ("Medici", str(ids["Medici"]))]
    assert (attacked[0].pop("malicious"), attacked[1].pop("malicious")) == (
        "Medici", str(ids["Medici"]))  # as given
    assert attacked[0] == attacked[1]


@pytest.mark.parametrize("argv,says", [
    (["--topology", "florentine", "--coalition", "Medici,Borgia"],
     "--coalition: not a node label of florentine, which has 15 labels"),
    (["--topology", "florentine", "--malicious", "Borgia", "--attack", "max"],
     "--malicious: not a node label of florentine, which has 15 labels"),
    (["--nodes", "20", "--coalition", "alice"], "--coalition: complete has no node labels"),
])
def test_an_unknown_node_label_is_one_line(capsys, argv, says):
    code, out, err = run(capsys, "simulate", "--steps", "20", *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and says in err, err


@pytest.mark.parametrize("argv,flag", [(["--coalition", "a,b"], "--coalition"),
                                       (["--coalition", "random:0"], "--coalition"),
                                       (["--coalition", "100"], "--coalition"),
                                       (["--mechanism", "laplace", "--accountant", "pld"],
                                        "--accountant")])
def test_bad_privacy_input(capsys, argv, flag):
    code, _, err = run(capsys, "simulate", "--nodes", "20", *argv)
    assert code == 2 and flag in err and err.count("\n") == 1


def test_bounds_command(capsys):
    code, out, _ = run(capsys, "bounds", "--points", "4", "--csv")
    assert code == 0
    rows = out.strip().splitlines()
    assert rows[0] == "n,curve,epsilon" and len(rows) == 1 + 4 * 9
    res = json.loads(run(capsys, "bounds", "--points", "3", "--curve", "complete-ndp-chernoff",
                         "--json")[1])
    ndp = res["curves"]["complete-ndp-chernoff"]
    assert len(ndp) == 3 and ndp[0] > ndp[1] > ndp[2]  # falls with n
    code, _, err = run(capsys, "bounds", "--delta", "2")
    assert code == 2 and "--delta" in err


@pytest.mark.parametrize("name", [  # 5 s each: the default oracle's in the default tier
    n if n == "grr" else pytest.param(n, marks=pytest.mark.slow)
    for n in registry.names("frequency-oracle")])
def test_histogram_with_every_oracle(capsys, name):
    code, out, _ = run(capsys, "simulate", "--task", "histogram", "--mechanism", name,
                       "--domain", "6", "--nodes", "40", "--seed", "3", "--json")
    assert code == 0
    res = json.loads(out)
    util = res["utility"]
    assert len(util["estimate"]) == len(util["truth"]) == 6
    assert sum(util["truth"]) == pytest.approx(1.0)
    for key in ("l1", "linf", "mse"):
        assert util[key] >= 0
    assert util["mse"] == pytest.approx(np.mean((np.array(util["estimate"])
                                                 - np.array(util["truth"])) ** 2))
    assert res["mechanism"]["name"] == name
    emp = res["privacy"]["empirical"][0]
    assert emp["max"] <= view_cap_max(res["config"])


def test_histogram_ring_with_gamma(capsys):
    res = json.loads(run(capsys, "simulate", "--task", "histogram", "--topology", "ring",
                         "--gamma", "0.25", "--domain", "4", "--nodes", "30", "--rounds", "2",
                         "--seed", "1", "--json")[1])
    eps0 = math.log(1 + 4 * 0.75 / 0.25)
    assert res["privacy"]["epsilon0"] == pytest.approx(eps0)
    assert res["mechanism"]["epsilon"] == pytest.approx(eps0)
    assert res["utility"]["dummies"] == 29 and res["utility"]["reports"] == 60
    theory = res["privacy"]["theory"]["histogram-ring"]
    assert res["privacy"]["empirical"][0]["max"] == pytest.approx(theory)


def test_histogram_same_seed_same_bytes(capsys):
    argv = ("simulate", "--task", "histogram", "--mechanism", "olh", "--nodes", "30",
            "--steps", "1500", "--seed", "9", "--json")  # the windows' PLDs too
    first = json.loads(run(capsys, *argv)[1])
    second = json.loads(run(capsys, *argv)[1])
    for res in (first, second):
        for r in res["runs"]:
            r.pop("runtime_s")
        res.pop("runtime_s")
        res.pop("timing")
    assert first == second


@pytest.mark.parametrize("argv,flag", [
    (["--mechanism", "sue", "--gamma", "0.5"], "--gamma"),
    (["--gamma", "1.5"], "--gamma"),
    (["--accountant", "rdp"], "--accountant"),
    (["--mechanism", "oue", "--shuffle", "blanket"], "--shuffle"),
    (["--domain", "1"], "--domain"),
    (["--mechanism", "gaussian"], "--mechanism"),
])
def test_bad_histogram_input(capsys, argv, flag):
    code, _, err = run(capsys, "simulate", "--task", "histogram", "--nodes", "20", *argv)
    assert code == 2 and flag in err and err.count("\n") == 1


def test_histogram_categories_from_a_file(capsys, tmp_path):
    data = tmp_path / "cats.csv"
    data.write_text("cat\n" + "\n".join(str(i % 5) for i in range(30)) + "\n")
    code, out, _ = run(capsys, "simulate", "--task", "histogram", "--data-file", str(data),
                       "--domain", "5", "--seed", "1", "--json")
    assert code == 0 and json.loads(out)["utility"]["truth"] == [0.2] * 5
    code, _, err = run(capsys, "simulate", "--task", "histogram", "--data-file", str(data),
                       "--domain", "4")
    assert code == 2 and "--domain" in err
    assert run(capsys, "simulate", "--task", "sum", "--data", "zipf")[0] == 2


@pytest.mark.parametrize("name", registry.names("bounded"))
def test_sum_with_numeric_randomizers(capsys, name):
    code, out, _ = run(capsys, "simulate", "--mechanism", name, "--nodes", "30", "--seed", "2",
                       "--range", "-1", "1", "--json")
    assert code == 0
    res = json.loads(out)
    assert res["mechanism"]["name"] == name and res["utility"]["theoretical_std"] > 0
    assert res["privacy"]["empirical"] == [] and "LDP baseline" in res["privacy"]["note"]
    code, text, _ = run(capsys, "simulate", "--mechanism", name, "--topology", "ring",
                        "--nodes", "30", "--seed", "2")
    assert code == 0 and name in text


@pytest.mark.parametrize("argv", [["--no-tracking", "--accountant", "rdp"],
                                  ["--accountant", "rdp", "--no-tracking"]])
def test_no_tracking_beside_an_accountant_is_one_line(argv, capsys):
    """Was an AttributeError ('tuple' object has no attribute 'append')."""
    assert main(["simulate", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "one or the other" in err[0] and "Traceback" not in err[0]


@pytest.mark.parametrize("limit", ["1e999", "nan", "-5", "0"])
def test_a_memory_limit_out_of_range_is_one_line(limit, capsys, monkeypatch):
    """``NETDP_MEMORY_LIMIT=1e999`` was an OverflowError."""
    monkeypatch.setenv("NETDP_MEMORY_LIMIT", limit)
    assert main(["simulate", "--nodes", "10"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "NETDP_MEMORY_LIMIT" in err[0]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("argv", [["simulate", "--nodes", "10", "--json"], ["bounds", "--csv"],
                                  ["topologies"], ["simulate", "--nodes", "10"]])
def test_a_full_device_on_stdout_is_one_line(argv):
    """Was an OSError traceback (ENOSPC) for every command writing to a full device."""
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "netdp", *argv], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    err = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(err) == 1, proc.stderr
    assert "cannot write the output" in err[0]
