"""The time-varying walk moves along the snapshot of its step, with the right law."""

from __future__ import annotations

import networkx as nx
import numpy as np

from netdp.engine.time_varying import time_varying_walk
from netdp.graphs.time_varying import dense_transitions, from_networkx_sequence


def _tv():
    g1 = nx.Graph([(0, 1), (2, 3)])
    g2 = nx.Graph([(1, 2), (3, 0), (1, 3)])
    g3 = nx.Graph([(0, 2), (0, 1), (0, 3)])
    return from_networkx_sequence([g1, g2, g3], period=2)


def test_moves_only_along_the_edges_of_their_step():
    tv = _tv()
    Ps = tv.transitions("simple", 30)
    trace = time_varying_walk(Ps, 50, np.random.default_rng(1))
    dense = dense_transitions(tv, "simple", 30)
    h = trace.holders
    for t in range(29):
        assert np.all(dense[t][h[:, t], h[:, t + 1]] > 0), t


def test_law_of_the_holders_is_the_product_of_the_matrices():
    """The empirical law of the holder at step 5 against ``π0 P_0 ... P_4`` (fixed seed,
    a 5-sigma band)."""
    tv = _tv()
    Ps = tv.transitions("simple", 6)
    tokens = 20_000
    trace = time_varying_walk(Ps, tokens, np.random.default_rng(7))
    dense = dense_transitions(tv, "simple", 6)
    law = np.full(4, 0.25)
    for t in range(5):
        law = law @ dense[t]
    got = np.bincount(trace.holders[:, 5], minlength=4) / tokens
    assert np.all(np.abs(got - law) <= 5 * np.sqrt(law * (1 - law) / tokens) + 1e-12)
