"""Progress and time that tell the truth: bars only on a terminal and never with
``--quiet``; the report's time split into its parts; the sweep's bar weighted by cost."""

from __future__ import annotations

import io
import json
import re

import pytest

from netdp.core import progress
from netdp.run.api import simulate
from netdp.run.cli import main
from netdp.run.sweep import runner
from netdp.run.sweep.spec import load_spec


class Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def as_terminal(monkeypatch) -> Terminal:
    """stderr as a terminal, bars shown at once (no 2 s delay). Called in the test itself:
    pytest's capture takes stderr over again between the fixtures and the test."""
    stream = Terminal()
    monkeypatch.setattr("sys.stderr", stream)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    return stream


def test_a_bar_only_on_a_terminal_and_never_when_quiet(monkeypatch):
    as_terminal(monkeypatch)
    items = range(3)
    assert progress.bar(items, desc="x") is not items  # a terminal: a tqdm bar
    with progress.quiet():
        assert progress.bar(items, desc="x") is items
        assert isinstance(progress.bar(total=3, show=True), progress.Silent)
    monkeypatch.setattr("sys.stderr", io.StringIO())  # not a terminal
    assert progress.bar(items, desc="x") is items
    assert not progress.shown()


GOSSIP = ["simulate", "--task", "sum", "--protocol", "gossip", "--topology", "grid", "-n",
          "16", "--sigma", "1", "--runs", "2", "--seed", "1"]


def test_simulate_draws_its_bars_on_a_terminal_and_none_with_quiet(monkeypatch):
    terminal = as_terminal(monkeypatch)
    assert main(GOSSIP) == 0
    shown = terminal.getvalue()
    assert "exact gossip loss" in shown and "runs" in shown  # accounting and runs
    terminal.seek(0)
    terminal.truncate()
    assert main([*GOSSIP, "--quiet"]) == 0
    assert terminal.getvalue() == ""


def test_no_bar_when_stderr_is_not_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr(progress, "DELAY", 0.0)
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    assert main(GOSSIP) == 0
    assert stream.getvalue() == ""


def test_the_footer_splits_the_time_and_the_parts_fit_in_the_total(capsys):
    report = simulate({"task": "sum", "protocol": "gossip", "topology": "grid", "nodes": 16,
                       "sigma": 1.0, "seed": 1})
    footer = report.text().splitlines()[-2:]
    total = float(re.search(r"messages in (\S+) s;", footer[0]).group(1))
    parts = dict((name, float(v)) for name, v in
                 re.findall(r"(setup|gossip|accounting|report) (\S+) s", footer[1]))
    assert footer[1].startswith("  time: ") and set(parts) == {"setup", "gossip",
                                                               "accounting", "report"}
    timing = report.to_json()["timing"]
    assert set(timing) == {"setup_s", "engine_s", "accounting_s", "report_s", "total_s"}
    assert sum(v for k, v in timing.items() if k != "total_s") <= timing["total_s"]
    assert total == pytest.approx(timing["total_s"], rel=5e-3)  # printed to 3 digits
    assert parts["accounting"] == pytest.approx(timing["accounting_s"], rel=5e-3)
    # the gossip rounds are the engine's; the exact losses are the accounting's
    assert timing["accounting_s"] > timing["engine_s"]
    assert report.to_json()["runtime_s"] >= 0  # kept


def test_the_json_of_simulate_has_the_split(capsys):
    assert main(["simulate", "-n", "20", "--seed", "2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["timing"]) == {"setup_s", "engine_s", "accounting_s", "report_s",
                                     "total_s"}
    assert "runtime_s" in result


SPEC = """seeds = 2
[fixed]
accountants = ["kov", "rdp"]
[grid]
nodes = [6, {big}]
"""


def test_the_sweep_bar_advances_by_each_runs_cost(tmp_path, capsys):
    path = tmp_path / "spec.toml"
    path.write_text(SPEC.format(big=1000))  # planned, not run
    spec = load_spec(path)
    costs = [runner.estimate_cost(r.config) for r in spec.runs]
    assert max(costs) > 2 * min(costs)  # runs of different sizes
    todo = spec.runs[1:]  # one run already in the table
    bar = runner.CostBar(spec, todo, progress=True)
    assert bar.bar.total == pytest.approx(sum(costs))
    assert bar.bar.n == pytest.approx(costs[0])
    for run, cost in zip(todo, costs[1:], strict=True):
        before = bar.bar.n
        bar.advance([run])
        assert bar.bar.n - before == pytest.approx(cost)
    assert bar.bar.n == pytest.approx(bar.bar.total) and bar.done == spec.n_runs
    bar.__exit__()


def test_a_sweep_fills_its_bar_by_cost(tmp_path, monkeypatch, capsys):
    path = tmp_path / "spec.toml"
    path.write_text(SPEC.format(big=30))
    seen: list = []

    class Recording(runner.CostBar):
        def __exit__(self, *exc: object) -> None:
            seen.append((self.bar.n, self.total, self.done))
            super().__exit__(*exc)

    monkeypatch.setattr(runner, "CostBar", Recording)
    report = runner.run_sweep(load_spec(path), tmp_path / "out", backend="serial",
                              progress=True)
    assert report.done == 4
    ((n, total, done),) = seen
    assert n == pytest.approx(total) and done == 4


def test_a_step_that_cannot_count_says_what_it_does_and_how_long(monkeypatch):
    terminal = as_terminal(monkeypatch)
    with progress.step("spectral gap", now=True):
        pass
    assert "spectral gap: 00:00" in terminal.getvalue()
    terminal.seek(0)
    terminal.truncate()
    with progress.quiet(), progress.step("spectral gap", now=True):
        pass
    monkeypatch.setattr(progress, "DELAY", 60.0)
    with progress.step("short"):  # over before the delay: nothing drawn
        pass
    assert terminal.getvalue() == ""
