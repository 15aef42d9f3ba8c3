"""The windows' PLDs of report-based walks (netdp.tracking.report_plds): where they apply,
where they are left out (and said so), and the docs' example. Their soundness against
the exact view is in tests/privacy/test_graph_shuffle_sound.py."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

from netdp.engine.trace import Trace
from netdp.tracking import report_plds
from netdp.tracking.graph_shuffle import graph_histogram_losses
from netdp.tracking.taboo import reversible_measure

DOCS = Path(__file__).parents[2] / "docs" / "graph-reports.md"


def ring(n: int, directed: bool = False) -> sparse.csr_array:
    P = np.roll(np.eye(n), 1, axis=1)
    if not directed:
        P = 0.5 * (P + P.T)
    return sparse.csr_array(P)


def test_a_free_ended_window_needs_a_reversible_walk():
    """The last stretch's law is the reversal of a first stretch: on a directed ring there
    is none (None: the caller keeps its other bound); on the undirected ring there is."""
    reports, first, last = np.array([3, 4]), np.array([-1, 2]), np.array([5, -1])
    for directed in (True, False):
        P = ring(8, directed)
        got = report_plds.observer_plds(P, 0, reports, first, last, 1.0, 1e-6,
                                        np.full(8, 1 / 8), reversible_measure(P))
        assert (got is None) == directed
    P = ring(8)
    unseen = report_plds.observer_plds(P, 0, np.array([8]), np.array([-1]), np.array([-1]),
                                       1.0, 1e-6, np.full(8, 1 / 8), reversible_measure(P))
    assert unseen is None  # a token that never reaches the observer: both ends unknown


def test_runs_beyond_the_budget_keep_the_window_bound_and_say_so(monkeypatch):
    rng = np.random.default_rng(3)
    P = ring(6)
    holders = [int(rng.integers(6))]
    for _ in range(59):
        holders.append(int(rng.choice(6, p=P.toarray()[holders[-1]])))
    trace = Trace(6, np.array([holders]))
    full = graph_histogram_losses(trace, P, 1.0, 1e-6, cap=False, target=1e-6)
    assert full.plds_left == 0.0
    monkeypatch.setattr(report_plds, "RUN_SECONDS", 0.0)
    left = graph_histogram_losses(trace, P, 1.0, 1e-6, cap=False, target=1e-6)
    plain = graph_histogram_losses(trace, P, 1.0, 1e-6, cap=False, target=1e-6, plds=False)
    assert left.plds_left > 0.0
    np.testing.assert_array_equal(left.values, plain.values)
    assert np.all(full.values <= plain.values) and np.any(full.values < plain.values)


@pytest.mark.slow
def test_the_docs_hypercube_example():
    """docs/graph-reports.md's first command: its mean, baseline and distances."""
    import netdp

    report = netdp.simulate({"task": "histogram", "topology": "hypercube", "nodes": 64,
                             "sources": 2, "seed": 1})
    pairs = report.privacy.empirical[0]
    text = DOCS.read_text()
    got = (f"a mean ε(u → v) of {pairs.mean:.2f} against the LDP baseline's "
           f"{report.privacy.ldp.mean:.1f}")
    assert got in re.sub(r"\s+", " ", text)
    near, far = pairs.by_distance[0], pairs.by_distance[-1]
    assert f"from {near.mean:.2f} for neighbours down to {far.mean:.2f}" in \
        re.sub(r"\s+", " ", text)
    assert pairs.mean < report.privacy.ldp.mean / 4
    # the run whose PLDs are left out: its figure and the note's estimate
    left = netdp.simulate({"task": "histogram", "topology": "hypercube", "nodes": 256,
                           "seed": 1})
    flat = re.sub(r"\s+", " ", text)
    seconds = re.search(r"estimated ([0-9]+) s", left.privacy.note).group(1)
    assert f"estimated {int(seconds):,} s) reports {left.privacy.empirical[0].mean:,.0f}" \
        in flat
    assert left.privacy.empirical[0].min == left.privacy.empirical[0].mean


def test_a_trace_cut_into_phases_keeps_the_window_bound():
    """A second reader's counterexample: 40 walks 0 3 0 1 2 0 on K4 (no self-moves), each
    cut into two phases as itemsets publishes them. A phase starts where the walk is, not
    at the start law, and v = 0 knows its first holder; read as fresh walks, the windows'
    PLDs give node 1 less than its exact loss (at least that of the 40 second-phase
    windows, each the sum of node 1's and node 2's reports: :func:`_phased_truth`, about
    32.6). So a task that cuts its trace
    (itemsets) passes ``plds=False``, and its figures stay the per-window bound's."""
    from unittest import mock

    import netdp
    from netdp.tracking import graph_shuffle

    n = 4
    P = sparse.csr_array((np.ones((n, n)) - np.eye(n)) / (n - 1))
    phased = np.array([[0, 3, 0, 1, 2, 0]] * 40).reshape(80, 3)
    fresh = graph_histogram_losses(Trace(n, phased), P, 1.0, 1e-6, cap=False, target=1e-6)
    o = int(np.flatnonzero(fresh.observers == 0)[0])
    at = np.concatenate(([0], np.cumsum(fresh.counts)))
    mine = dict(zip(fresh.nodes[at[o]:at[o + 1]].tolist(),
                    fresh.values[at[o]:at[o + 1]].tolist(), strict=True))
    assert mine[1] < _phased_truth(40)  # the model fails for phases: the caller says so

    asked = []
    real = graph_shuffle.graph_histogram_losses

    def record(*args, **kwargs):
        asked.append(kwargs.get("plds"))
        return real(*args, **kwargs)

    with mock.patch.object(graph_shuffle, "graph_histogram_losses", record):
        netdp.simulate({"task": "itemsets", "topology": "hypercube", "nodes": 8,
                        "steps": 96, "seed": 2})
        netdp.simulate({"task": "histogram", "topology": "hypercube", "nodes": 8,
                        "steps": 96, "seed": 2})
    assert asked == [False, True]


def test_a_trace_with_faults_keeps_the_window_bound():
    """With faults a token may restart where it was lost or hop around a crashed node:
    not a walk of P from the start law, so the windows' PLDs are not taken."""
    import dataclasses

    P = ring(6)
    rng = np.random.default_rng(5)
    holders = [int(rng.integers(6))]
    for _ in range(47):
        holders.append(int(rng.choice(6, p=P.toarray()[holders[-1]])))
    trace = Trace(6, np.array([holders]))
    plain = graph_histogram_losses(trace, P, 1.0, 1e-6, cap=False, target=1e-6, plds=False)
    tight = graph_histogram_losses(trace, P, 1.0, 1e-6, cap=False, target=1e-6)
    assert np.any(tight.values < plain.values)
    faulty = dataclasses.replace(trace, faults=object())
    kept = graph_histogram_losses(faulty, P, 1.0, 1e-6, cap=False, target=1e-6)
    np.testing.assert_array_equal(kept.values, plain.values)


def _phased_truth(windows: int, eps0: float = 1.0, delta: float = 1e-6) -> float:
    """A lower bound of node 1's exact loss in the phased example: ``windows`` independent
    sums of its binary randomized response and node 2's (value 0), composed exactly (the
    loss of the counts of sums 0, 1, 2: a multinomial), ε at ``delta`` by bisection (the
    lower end: a lower bound)."""
    from math import comb, exp

    q = 1.0 / (1.0 + exp(-eps0))

    def law(x: int) -> np.ndarray:
        p1, p2 = (q if x else 1 - q), 1 - q
        return np.array([(1 - p1) * (1 - p2), p1 * (1 - p2) + (1 - p1) * p2, p1 * p2])

    p, r = law(0), law(1)
    counts = [(a, b, windows - a - b) for a in range(windows + 1)
              for b in range(windows + 1 - a)]
    weight = np.array([comb(windows, a) * comb(windows - a, b) for a, b, _ in counts], float)
    n = np.array(counts, float)
    log_p, log_r = n @ np.log(p), n @ np.log(r)

    def hockey(eps: float) -> float:
        return max(float(np.sum(weight * np.clip(np.exp(x) - np.exp(eps + y), 0, None)))
                   for x, y in ((log_p, log_r), (log_r, log_p)))

    lo, hi = 0.0, windows * 2 * eps0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if hockey(mid) > delta else (lo, mid)
    return lo
