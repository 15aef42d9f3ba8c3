"""Report-based tasks on any graph: the shuffle-window tracker as the run loop reports it,
declared once per task (a ``graph`` Tracking), for every report-based task alike."""

from __future__ import annotations

import pytest
from conftest import view_cap_max

from netdp import simulate
from netdp.tasks import make_config, tracking_table

REPORT_TASKS = ("histogram", "fraction", "multidim", "itemsets", "heavy-hitters")


@pytest.mark.parametrize("task", REPORT_TASKS)
@pytest.mark.parametrize("convention", ["sound", "reference"])
def test_graph_runs_report_pairwise_losses_by_distance(task, convention):
    """Both conventions report every pair by distance, at most its view cap (spec
    Correction 6); the reference's taboo rates fall with the distance (the sound
    per-position rates on a 16-node hypercube are 1/2 or more: the pairs there sit above
    the realised LDP baseline, which is no cap)."""
    report = simulate(make_config(task=task, seed=2, topology="hypercube", nodes=16,
                                  steps=160, convention=convention))
    (kov,) = report.privacy.empirical
    assert kov.accountant == "kov" and kov.pairs == 16 * 15
    assert 0 < kov.mean <= kov.max <= view_cap_max(report.config)
    assert [row.distance for row in kov.by_distance] == [1, 2, 3, 4]
    if convention == "reference":
        assert kov.by_distance[0].mean > kov.by_distance[-1].mean
    else:
        assert kov.mean > report.privacy.ldp.mean


def test_sampled_observers_are_said():
    report = simulate(make_config(task="fraction", seed=2, topology="hypercube", nodes=64,
                                  steps=640, sources=4))
    (kov,) = report.privacy.empirical
    assert kov.pairs == 4 * 63
    assert "4 of 64 observers, sampled" in report.privacy.note


def test_task_table_lists_the_graph_trackers():
    """The table of ``--help``, built from the declarations, has a graph line per task."""
    from netdp.tasks import TASKS

    lines = tracking_table()
    for task in REPORT_TASKS:
        label = TASKS[task].label
        at = next(i for i, line in enumerate(lines) if line.startswith(f"  {label} "))
        block = lines[at + 1:at + 4]
        assert any(line.strip().startswith("graph: kov; each window one shuffle")
                   for line in block), task


def test_rounds_published_mid_walk_cut_the_graph_tracker_s_windows():
    """itemsets --mining svsm publishes each round's aggregate at the end of its block of
    steps: on a graph the tracker reads the walk cut there (as on the complete graph),
    which can only add windows, so every pair's loss is at least the uncut walk's."""
    import numpy as np

    from netdp.core.setup import Streams
    from netdp.engine.trace import Trace
    from netdp.tasks import task_of
    from netdp.tasks.itemsets import phase_trace
    from netdp.tracking.graph_observers import transition
    from netdp.tracking.graph_shuffle import graph_histogram_losses

    config = make_config(task="itemsets", seed=3, topology="hypercube", nodes=16, steps=400,
                         mining="svsm", convention="reference")
    task = task_of(config)
    setup = task.prepare(config)
    trace = task.trace(setup, Streams(setup.seed, 0))
    assert isinstance(trace, Trace)
    eps0, delta = config.epsilon, config.delta
    args = (transition(setup), eps0, delta, "fmt-numeric", setup.mechanism.base.domain)
    cut = graph_histogram_losses(phase_trace(trace, 5), *args,
                                 convention="reference").matrix()
    uncut = graph_histogram_losses(trace, *args, convention="reference").matrix()
    off = ~np.eye(16, dtype=bool)
    assert (cut[off] >= uncut[off] - 1e-9).all() and (cut[off] > uncut[off] + 1e-6).any()
    tracked = simulate(config).privacy.empirical[0]
    assert tracked.mean == pytest.approx(cut[off].mean(), rel=1e-9)
