"""The gossip engines: every directed edge carries a message at every step; the event
engine's rounds wait for every neighbour's message of the round before."""

from __future__ import annotations

import numpy as np
import pytest

from netdp import simulate
from netdp.core.errors import InputError
from netdp.engine import gossip_rounds as gossip
from netdp.engine.clock import parse_latency
from netdp.graphs import topologies as topology


def test_edges_are_both_directions_of_every_edge():
    topo = topology.build("karate")
    src, dst = topology.edges(topo)
    assert src.size == 2 * 78 and not np.any(src == dst)
    assert set(zip(src.tolist(), dst.tolist(), strict=True)) == \
        set(zip(dst.tolist(), src.tolist(), strict=True))
    full = topology.edges(topology.complete(5))
    assert full[0].size == 20
    with pytest.raises(InputError, match="ring is directed"):
        topology.edges(topology.ring(5))


def test_event_rounds_start_when_every_neighbour_was_heard():
    topo = topology.build("karate")
    rng = np.random.default_rng(4)
    trace = gossip.run("event", topo, 6, parse_latency("exp:1"), rng)
    rounds = trace.gossip
    assert rounds is not None and rounds.arrivals is not None
    arr = rounds.arrivals
    assert arr.shape == (7, rounds.src.size) and np.all(arr > 0)
    for t in range(1, 7):
        for u in range(topo.n):
            heard = arr[t - 1][rounds.dst == u].max()  # u's round t - 1 ends here
            assert np.all(arr[t][rounds.src == u] > heard)  # its round-t messages leave later
    assert trace.hops == 7 * rounds.src.size
    vector = gossip.run("vector", topo, 6)
    assert vector.gossip is not None and vector.gossip.arrivals is None


def test_both_engines_give_the_same_run():
    params = {"task": "sum", "protocol": "gossip", "topology": "karate", "sigma": 1.0,
              "steps": 8, "seed": 2, "latency": "exp:2"}
    vec = simulate({**params, "engine": "vector"}).to_json()
    ev = simulate({**params, "engine": "event"}).to_json()
    assert vec["utility"] == ev["utility"] and vec["privacy"] == ev["privacy"]
    assert ev["engine"] == "event"
