"""The shuffle-window tracker on any graph (netdp.tracking.graph_shuffle): the reference
convention (the complete graph's composition with the walk's taboo presence rates)
against a plain-numpy oracle and the complete graph's reference tracker; capped at LDP,
by distance, and per sampled observer. The sound convention against brute force:
``test_graph_shuffle_sound.py``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_taboo import dense_visits  # the plain-numpy taboo rates (same folder)

from netdp.accounting.composition import kov_het_epsilon
from netdp.engine import walk
from netdp.engine.routing import Router
from netdp.graphs import topologies as topology
from netdp.graphs import walk_kind
from netdp.tracking.graph_shuffle import graph_histogram_losses
from netdp.tracking.loss_table import ldp_losses
from netdp.tracking.shuffle import trace_windows, walk_histogram_losses
from netdp.tracking.view_cap import view_caps

EPS0, DELTA = 1.0, 1e-6


def graph_trace(name: str, n: int, steps: int, seed: int, rule: str = "simple"):
    topo = topology.build(name, n)
    trace = walk("vector", Router(topo, rule), steps, [np.random.default_rng(seed)])
    return topo, trace, walk_kind.transition_matrix(topo, rule)


def oracle(trace, P: np.ndarray, u: int, v: int, eps_of) -> float:
    """ε(u → v) from the token's holders, one window at a time, in plain Python."""
    losses = []
    steps = trace.steps
    blocked = np.arange(P.shape[0]) == v
    for h in np.asarray(trace.holders).reshape(-1, steps):
        at = np.flatnonzero(h == v)
        if at.size == 0:
            spans = [(-1, steps)]
        else:
            spans = [(-1, int(at[0]))] + list(zip(at[:-1].tolist(), at[1:].tolist(),
                                                  strict=True)) + [(int(at[-1]), steps)]
        for i, j in spans:
            r = j - i - 1
            if r <= 0:
                continue
            a = int(h[i + 1]) if i >= 0 else -1
            b = int(h[j - 1]) if j < steps else -1
            eps = eps_of(r)
            if u == a:
                losses.append(2 * eps if (u == b and r >= 2) else eps)
            elif u == b:
                losses.append(eps)
            else:
                if a < 0 or b < 0:
                    q = 1.0  # an end unknown: every other report may be u's
                else:
                    q = min(dense_visits(P, blocked, a, b, r - 1)[u], 1.0) if r >= 3 else 0.0
                losses.append(math.log1p(q * math.expm1(eps)))
    e = np.array(losses)
    return float(kov_het_epsilon(e.sum(), (e * np.tanh(e / 2)).sum(), (e * e).sum(),
                                 min(len(losses) * DELTA, 1.0)))


def test_every_pair_matches_the_plain_oracle():
    """Rates, attributable ends, unknown ends and KOV: each pair against the oracle (ε
    per window size read from the tracker's own shuffle bounds)."""
    topo, trace, P = graph_trace("karate", 34, 400, 1, "metropolis")
    w = trace_windows(trace, EPS0, DELTA)
    eps_of = dict(zip(w.reports.tolist(), w.eps_s.tolist(), strict=False)).__getitem__
    got = graph_histogram_losses(trace, P, EPS0, DELTA, cap=False,
                                 convention="reference").matrix()
    dense = P.toarray()
    for u, v in [(1, 0), (0, 33), (5, 2), (33, 32), (20, 7)]:
        assert got[u, v] == pytest.approx(oracle(trace, dense, u, v, eps_of), rel=1e-9)


@pytest.mark.parametrize("cap", [True, False])
@pytest.mark.parametrize("coalition", [None, [2, 5]])
def test_complete_graph_same_composition_as_the_reference_tracker(cap, coalition):
    """Fed the complete graph's uniform law ``1 - (1 - 1/(n-1))^r`` instead of the
    taboo-chain rate, the tracker gives the reference tracker's numbers on the same walk:
    the two are one composition and differ only in the rate."""
    topo, trace, P = graph_trace("complete", 9, 400, 3)
    ours = graph_histogram_losses(trace, P, EPS0, DELTA, coalition=coalition, cap=cap,
                                  presence="uniform", convention="reference")
    ref = walk_histogram_losses(trace, EPS0, DELTA, coalition=coalition, keep_pairs=True,
                                cap=cap, convention="reference")
    if coalition is None:
        np.testing.assert_allclose(ours.matrix(), ref.matrix(), rtol=1e-9, atol=0)
    else:
        assert ref.nodes is not None
        want = np.full(9, float(ref.base[0]))
        want[ref.nodes] = ref.values
        np.testing.assert_allclose(ours.values, want[ours.nodes], rtol=1e-9)


def test_every_pair_at_most_its_view_cap():
    """On a short hypercube walk some pairs pass their node's realised LDP loss (which is
    no cap: spec Correction 6); after the cap none passes the LDP loss at the largest count
    of its node's reports that the observer's view allows, and the capped table is the
    minimum of the two."""
    _, trace, P = graph_trace("hypercube", 32, 600, 2)
    ldp = ldp_losses(trace, EPS0, DELTA)
    raw = graph_histogram_losses(trace, P, EPS0, DELTA, cap=False)
    capped = graph_histogram_losses(trace, P, EPS0, DELTA)
    assert raw.nodes is not None and capped.nodes is not None
    assert (raw.values > ldp[raw.nodes]).any()
    cap = np.repeat(view_caps(trace, EPS0, DELTA, stays=False)[capped.observers],
                    capped.counts)
    assert np.all(capped.values <= cap)
    np.testing.assert_allclose(capped.values, np.minimum(raw.values, cap))


def test_neighbours_lose_more_than_far_nodes_on_a_grid():
    topo, trace, P = graph_trace("grid", 64, 6400, 4)
    v = 27
    col = graph_histogram_losses(trace, P, EPS0, DELTA, observers=np.array([v]),
                                 cap=False, convention="reference").matrix()[:, v]
    hops = topology.hop_distances(topo, np.array([v]))[0]
    assert col[hops == 1].mean() > col[hops >= 5].mean()


def test_sampled_observers_are_rows_of_the_full_table():
    _, trace, P = graph_trace("karate", 34, 2000, 5, "metropolis")
    full = graph_histogram_losses(trace, P, EPS0, DELTA).matrix()
    some = graph_histogram_losses(trace, P, EPS0, DELTA, observers=np.array([3, 20]))
    np.testing.assert_allclose(some.matrix()[:, [3, 20]], full[:, [3, 20]], rtol=1e-12)

