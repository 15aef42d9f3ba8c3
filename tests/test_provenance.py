"""Provenance in every result: what made a number, traced back from the JSON, the sweep
table and its manifest; notebook-native results (frames and short reprs); CITATION.cff."""

from __future__ import annotations

import importlib.metadata
import json
import platform
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import netdp
from netdp.core import provenance as prov
from netdp.run.cli import main
from netdp.run.sweep import flatten, parse_spec, read_table, run_sweep

ROOT = Path(__file__).resolve().parents[1]
GIT = shutil.which("git")


def test_provenance_names_the_versions_python_platform_and_host():
    record = prov.provenance()
    assert tuple(record) == prov.KEYS
    assert record["netdp"] == netdp.__version__
    for key, name in prov.DEPENDENCIES.items():
        assert record[key] == importlib.metadata.version(name)
    import numpy

    assert record["numpy"] == numpy.__version__  # metadata and module agree
    assert record["python"] == platform.python_version()
    assert record["platform"] == platform.platform()
    assert record["host"] == socket.gethostname()
    record["host"] = "changed"
    assert prov.provenance()["host"] == socket.gethostname()  # a copy each call


def test_provenance_loads_no_dependency():
    code = ("import sys\nfrom netdp.core.provenance import provenance\nprovenance()\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'scipy', "
            "'numba', 'pandas', 'networkx', 'matplotlib', 'dask', 'dp_accounting'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    assert done.stdout.strip() == "[]"


def _git(where: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.mark.skipif(GIT is None, reason="needs git")
def test_git_state_of_a_checkout_and_of_anything_else(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "a.py").write_text("x = 1\n")
    assert prov.git_state(repo / "pkg") == (None, None)  # not a checkout
    _git(repo, "init", "-q")
    assert prov.git_state(repo / "pkg") == (None, None)  # no commit yet
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "c")
    head = _git(repo, "rev-parse", "HEAD")
    assert prov.git_state(repo / "pkg") == (head, False)
    (repo / "pkg" / "b.py").write_text("")  # untracked: not dirty
    assert prov.git_state(repo / "pkg") == (head, False)
    (repo / "pkg" / "a.py").write_text("x = 2\n")
    assert prov.git_state(repo / "pkg") == (head, True)
    # a package deeper in another project's repository (an install inside it): no commit
    (repo / "site" / "pkg").mkdir(parents=True)
    assert prov.git_state(repo / "site" / "pkg") == (None, None)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no git at all
    assert prov.git_state(repo / "pkg") == (None, None)


@pytest.mark.skipif(GIT is None, reason="needs git")
def test_the_commit_is_this_checkouts():
    try:
        head = _git(ROOT, "rev-parse", "HEAD")
    except subprocess.CalledProcessError:
        pytest.skip("not run from a git checkout")
    assert prov.provenance()["commit"] == head


def test_every_json_records_provenance_schema_and_config(capsys, tmp_path):
    expected = json.loads(json.dumps(prov.provenance()))
    log = tmp_path / "log.csv"
    commands = {
        "simulate": ["simulate", "-n", "12", "--steps", "100", "--trace-out", str(log),
                     "--json"],
        "account": ["account", str(log), "--json"],
        "attack": ["attack", "--mechanism", "grr", "--domain", "8", "--users", "2000",
                   "--trials", "3", "--targets", "2", "--seed", "3", "--json"],
        "audit": ["audit", "--mechanism", "laplace", "--trials", "400", "--seed", "4",
                  "--json"],
        "one-run": ["audit", "--one-run", "--canaries", "100", "--seed", "5", "--json"],
        "bounds": ["bounds", "--points", "2", "--json"]}
    for name, argv in commands.items():
        main(argv)
        out = json.loads(capsys.readouterr().out)
        assert out["provenance"] == expected, name
        if name != "bounds":
            assert out["schema"] >= 1 and isinstance(out["config"], dict), name
    main(commands["attack"])
    attack = json.loads(capsys.readouterr().out)
    assert attack["config"]["mechanism"] == "grr" and attack["config"]["seed"] == 3
    assert attack["seed"] == 3 and attack["config"]["users"] == 2000


def test_attack_and_audit_results_in_a_notebook():
    from netdp.audit.mechanism import audit_mechanism, build

    result = netdp.attack(mechanism="grr", domain=8, users=2000, trials=3, targets=2,
                          defences=("normalize",), seed=3)
    text = repr(result)
    assert text.startswith("<Poisoning mga on grr") and len(text) < 300
    row = result.to_frame()
    assert len(row) == 1 and row.loc[0, "users"] == 2000 and row.loc[0, "seed"] == 3
    assert row.loc[0, "gain_empirical"] == result.gain
    assert row.loc[0, "defence_normalize_gain"] == result.defences[0]["gain"]
    assert row.loc[0, "result_beta"] == result.beta  # the config's beta keeps its name
    assert row.loc[0, "provenance_numpy"] == prov.provenance()["numpy"]
    audit = audit_mechanism(build("laplace", 1.0), 400, seed=4)
    assert repr(audit).startswith("<MechanismAudit laplace (eps 1): eps_lb")
    frame = audit.to_frame()
    assert frame.loc[0, "audit_epsilon_lower"] == audit.result.epsilon_lower
    assert frame.loc[0, "trials"] == 400 and audit.to_dict()["config"]["seed"] == 4


def test_report_repr_frame_and_pairs():
    import networkx as nx

    graph = nx.relabel_nodes(nx.cycle_graph(6), lambda i: f"v{i}")
    report = netdp.simulate({"task": "sum", "topology": graph, "steps": 60, "seed": 2},
                            keep_pairs=True)
    text = repr(report)
    assert len(text) < 300 and "\n" not in text
    assert text.startswith("<Report sum on ") and "abs_error" in text and "eps mean" in text
    row = report.to_frame()
    assert list(row.columns) == list(flatten(report.to_dict()))
    assert row.loc[0, "abs_error"] == report.utility.to_dict()["abs_error"]
    pairs = report.pairs_frame()
    assert len(pairs) == 6 * 5 and list(pairs.columns)[:3] == ["target", "observer", "epsilon"]
    assert set(pairs["target"]) == {f"v{i}" for i in range(6)}
    first = pairs.iloc[7]  # row-major without the diagonal: u = 1, v = 3
    assert (first["target"], first["observer"]) == ("v1", "v3")
    assert first["epsilon"] == report.pairs[1, 3]
    assert pairs["delta"].iloc[0] == report.privacy.to_dict()["empirical"][0]["delta"]
    plain = netdp.simulate({"task": "sum", "nodes": 6, "steps": 60, "seed": 2})
    with pytest.raises(ValueError, match="keep_pairs=True"):
        plain.pairs_frame()


def test_pairs_frame_has_every_accountant():
    """Each accountant's rows, at its own δ; the mean of each is its summary's mean (the
    matrix the summary was made of), and the first's rows are ``report.pairs``."""
    report = netdp.simulate({"nodes": 12, "steps": 240, "accountants": ["kov", "rdp", "pld"],
                             "seed": 3}, keep_pairs=True)
    pairs = report.pairs_frame()
    assert len(pairs) == 3 * 12 * 11
    assert list(pairs["accountant"].unique()) == ["kov", "rdp", "pld"]
    for e in report.privacy.empirical:
        rows = pairs[pairs["accountant"] == e.accountant]
        assert rows["delta"].unique().tolist() == [e.delta]
        assert rows["epsilon"].mean() == pytest.approx(e.mean, rel=1e-12)
    kov = pairs[pairs["accountant"] == "kov"]["epsilon"].to_numpy()
    assert np.array_equal(kov, report.pairs[~np.eye(12, dtype=bool)])


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "t"
    spec = parse_spec({"seeds": [1, 2], "fixed": {"steps": 60},
                       "grid": {"nodes": [6, 8]}}, "s.toml", "# s\n")
    run_sweep(spec, out, backend="serial", progress=False)
    return out


def test_a_sweep_row_traces_back_to_its_commit_and_versions(sweep_dir, tmp_path):
    """From the table alone (one pandas call on its CSV): each row's provenance columns
    are this process's provenance."""
    csv = tmp_path / "t.csv"
    assert main(["results", str(sweep_dir), "--csv", str(csv)]) == 0
    table = pd.read_csv(csv, dtype=str, keep_default_na=False)
    assert len(table) == 4
    for key, value in prov.provenance().items():
        expected = "" if value is None else str(value)
        assert set(table[f"provenance_{key}"]) == {expected}, key
    manifest = json.loads((sweep_dir / "sweep.json").read_text())
    assert manifest["provenance"] == json.loads(json.dumps(prov.provenance()))


def test_the_sweep_row_is_the_reports_frame(sweep_dir):
    """``Report.to_frame()`` has the sweep table's columns and values (but the run's time,
    and the key: the sweep hashes the requested config, the report its resolved one)."""
    table = read_table(sweep_dir)
    row = table[(table["nodes"] == 8) & (table["seed"] == 2)].reset_index(drop=True)
    report = netdp.simulate({"nodes": 8, "steps": 60, "seed": 2, "runs": 1})
    frame = report.to_frame()
    assert list(frame.columns) == list(row.columns)
    skip = ["runtime_s", "config_hash"]
    pd.testing.assert_frame_equal(frame.drop(columns=skip), row.drop(columns=skip),
                                  check_dtype=False)


def test_resuming_on_another_host_runs_nothing_again(sweep_dir, tmp_path, monkeypatch):
    out = tmp_path / "t"
    shutil.copytree(sweep_dir, out)
    elsewhere = {**prov.provenance(), "host": "elsewhere", "commit": "0" * 40}
    monkeypatch.setattr(prov, "_provenance", lambda: tuple(elsewhere.items()))
    spec = parse_spec({"seeds": [1, 2, 3], "fixed": {"steps": 60},
                       "grid": {"nodes": [6, 8]}}, "s.toml", "# s\n")
    report = run_sweep(spec, out, backend="serial", progress=False)
    assert (report.skipped, report.done) == (4, 2)  # seed 3 of each point only
    table = read_table(out)
    hosts = table.groupby("seed")["provenance_host"].agg(set).to_dict()
    assert hosts == {1: {socket.gethostname()}, 2: {socket.gethostname()}, 3: {"elsewhere"}}
    manifest = json.loads((out / "sweep.json").read_text())
    assert manifest["provenance"]["host"] == "elsewhere"
    assert [h["provenance"]["host"] for h in manifest["history"]] == [socket.gethostname(),
                                                                      "elsewhere"]
    assert "elsewhere" in _results_provenance(out)


def _results_provenance(out: Path) -> str:
    import contextlib
    import io

    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        assert main(["results", str(out), "--provenance"]) == 0
    return text.getvalue()


def test_an_error_row_records_provenance_too():
    from netdp.core.table_rows import error_row

    row = error_row({"task": "sum", "nodes": 5}, 3, "abc", "--nodes: too small", None)
    assert row["status"] == "error" and row["error"] == "--nodes: too small"
    assert {k: row[f"provenance_{k}"] for k in prov.KEYS} == prov.provenance()


def test_results_provenance_shows_each_distinct_value(sweep_dir, capsys):
    assert main(["results", str(sweep_dir), "--provenance"]) == 0
    out = capsys.readouterr().out
    record = prov.provenance()
    assert f"provenance of the 4 rows in {sweep_dir}" in out
    for key in ("netdp", "numpy", "host", "commit"):
        line = next(x for x in out.splitlines() if x.split()[:1] == [key])
        assert line.split()[1:] == [str(record[key] if record[key] is not None else "-"), "4"]
    assert main(["results", str(sweep_dir), "--provenance", "--csv", "-"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_citation_file():
    """CITATION.cff holds CFF 1.2.0's required keys, the package's version and license."""
    text = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    top = {}
    for line in text.splitlines():
        if line and not line.startswith((" ", "#", "-")):
            key, _, value = line.partition(":")
            top[key] = value.strip().strip('"')
    assert {"cff-version", "message", "title", "authors", "version", "license"} <= set(top)
    assert top["cff-version"] == "1.2.0"
    assert top["version"] == netdp.__version__
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert top["license"] == project["license"]["text"]
    assert '- name: "netdp developers"' in text
