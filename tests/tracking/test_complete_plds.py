"""The complete graph's window PLDs (netdp.tracking.complete_plds): rows shared by nodes
with the same end windows, the cost estimate, and what a run says when they are left
out. Their soundness against the exact view is in
tests/privacy/test_complete_plds_sound.py."""

from __future__ import annotations

import numpy as np
import pytest

from netdp.engine.trace import Trace
from netdp.run.cli import main
from netdp.tracking import complete_plds, shuffle


def cli(argv: list[str], capsys) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().out


def windows_of(n: int, steps: int, seed: int) -> shuffle.Windows:
    rng = np.random.default_rng(seed)
    return shuffle.trace_windows(Trace(n, rng.integers(0, n, size=(1, steps))), 1.0, None)


def test_nodes_with_the_same_end_windows_share_a_row():
    """Each node composed as a row of its own gives the same figures as the shared rows
    (nodes without end windows all take the base row)."""
    n, v = 30, 4
    w = windows_of(n, 1500, 1)
    at = w.own == v
    reports, first, last = w.reports[at], w.first[at], w.last[at]
    got = complete_plds.observer_plds(n, v, reports, first, last, 1.0, 1e-6)
    k = reports.size
    h = complete_plds.step_of(k)
    from netdp.accounting import clone_pld

    spare = clone_pld.floor_of(1e-3 * 1e-6 / k)
    rare = clone_pld.floor_of(complete_plds.RARE * 1e-6 / k)
    hidden = complete_plds.hidden_positions(reports, first, last)
    keys = [(r, s, n, 1.0, h, spare, rare) for r, s in zip(reports.tolist(), hidden.tolist(),
                                                           strict=True)]
    nodes = [u for u in range(n) if u != v]
    extras = [[(e, int(c[e])) for e in np.flatnonzero(c)]
              for c in (complete_plds.ends_count(first, last, reports, u) for u in nodes)]
    alone = complete_plds.compose_shared(keys, extras, h, 1e-6)
    complete_plds.clear()
    np.testing.assert_allclose(got[nodes], alone, rtol=1e-12)
    assert got[v] == 0.0
    assert any(not x for x in extras)  # the base row is used (a node ends no window)


def test_the_estimate_leaves_out_large_runs_without_sorting_their_windows(monkeypatch):
    """At n = 10^5 the per-observer part alone is over the budget: the estimate says so
    without the sort of every window that counts the distinct ones (a small run does
    count them)."""
    sorts = []
    real = np.unique
    monkeypatch.setattr(np, "unique", lambda *a, **k: sorts.append(1) or real(*a, **k))
    n = 100_000
    own = np.repeat(np.arange(n), 100)
    reports = np.full(own.size, n)
    ends = np.zeros(own.size, np.int64)
    seconds = complete_plds.run_seconds(n, own, reports, ends, ends, 1.0, np.arange(n))
    assert seconds > complete_plds.RUN_SECONDS and not sorts
    w = windows_of(20, 400, 1)
    small = complete_plds.run_seconds(20, w.own, w.reports, w.first, w.last, 1.0,
                                      np.arange(20))
    assert small < complete_plds.RUN_SECONDS and sorts


def test_the_estimated_fft_length_is_near_the_one_used(monkeypatch):
    """:func:`~netdp.tracking.complete_plds.fft_points` against the FFT lengths of a run
    (n = 60, T = 100 n): within a factor 1.6 (the lengths are smooth numbers)."""
    from netdp.accounting import pld_fourier

    sizes: list[int] = []
    real = pld_fourier.batch_epsilon

    def spy(dens, *args, **kwargs):
        sizes.append(dens.shape[1])
        return real(dens, *args, **kwargs)

    monkeypatch.setattr(pld_fourier, "batch_epsilon", spy)
    n = 60
    w = windows_of(n, 100 * n, 2)
    for v in range(3):
        at = w.own == v
        sizes.clear()
        complete_plds.observer_plds(n, v, w.reports[at], w.first[at], w.last[at], 1.0, 1e-6)
        want = float(complete_plds.fft_points(n, np.array([int(at.sum())]), 1.0)[0])
        assert max(sizes) / 1.6 <= want <= 1.6 * max(sizes)
    complete_plds.clear()


def test_a_run_over_the_budget_keeps_kov_and_says_so(monkeypatch, capsys):
    """With the budget at 0 s the run's figures are KOV's (the PLDs left out) and the
    report's note gives the estimate."""
    trace = Trace(20, np.random.default_rng(3).integers(0, 20, size=(1, 2000)))
    monkeypatch.setattr(complete_plds, "RUN_SECONDS", 0.0)
    left = shuffle.walk_histogram_losses(trace, 1.0, 1e-6, keep_pairs=True, target=1e-6)
    kov = shuffle.walk_histogram_losses(trace, 1.0, 1e-6, keep_pairs=True, target=1e-6,
                                        plds=False)
    assert left.plds_left > 0
    np.testing.assert_array_equal(left.values, kov.values)
    monkeypatch.undo()
    used = shuffle.walk_histogram_losses(trace, 1.0, 1e-6, keep_pairs=True, target=1e-6)
    assert used.plds_left == 0 and used.values.mean() < 0.5 * kov.values.mean()
    monkeypatch.setattr(complete_plds, "RUN_SECONDS", 0.0)
    code, out = cli(["simulate", "--task", "histogram", "--nodes", "20", "--steps", "2000",
                     "--seed", "3"], capsys)
    assert code == 0
    assert "the windows' PLDs (each node's count of reports in each window) were left out" \
        in " ".join(out.split())


@pytest.mark.parametrize("task", ["fraction", "heavy-hitters"])
def test_other_report_based_tasks_take_the_plds(task, monkeypatch, capsys):
    """The tasks that share the histogram's complete tracker get the PLDs too (not
    itemsets: its trace is cut into phases): their figures are below KOV's alone."""
    import json

    argv = ["simulate", "--task", task, "--nodes", "20", "--steps", "2000", "--seed", "3",
            "--json"]
    code, out = cli(argv, capsys)
    assert code == 0
    used = json.loads(out)["privacy"]["empirical"][0]["mean"]
    monkeypatch.setattr(complete_plds, "RUN_SECONDS", 0.0)
    code, out = cli(argv, capsys)
    assert code == 0
    assert used < 0.5 * json.loads(out)["privacy"]["empirical"][0]["mean"]


@pytest.mark.slow
def test_the_docs_complete_graph_example():
    """docs/graph-reports.md's complete-graph runs: the default histogram's mean and q99
    with the PLDs, and the n = 1,000 run they are left out of (its estimate and figure)."""
    import re
    from pathlib import Path

    import netdp

    flat = re.sub(r"\s+", " ", (Path(__file__).parents[2] / "docs" / "graph-reports.md")
                  .read_text())
    report = netdp.simulate({"task": "histogram", "seed": 1})
    pairs = report.privacy.empirical[0]
    assert (f"a mean ε(u → v) of {pairs.mean:.2f} (q99 {pairs.quantiles['q99']:.2f}) against "
            f"the LDP baseline's {report.privacy.ldp.mean:.1f}") in flat
    assert report.privacy.note is None or "left out" not in report.privacy.note
    left = netdp.simulate({"task": "histogram", "nodes": 1000, "seed": 1})
    seconds = re.search(r"estimated ([0-9]+) s", left.privacy.note).group(1)
    assert (f"--nodes 1000 --seed 1` (estimated {int(seconds):,} s) reports "
            f"{left.privacy.empirical[0].mean:.2f} against {left.privacy.ldp.mean:.1f}") in flat
