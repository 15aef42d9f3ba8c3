"""Event engine (simpy): tokens are processes, nodes are passive, time is explicit.

Each token is a process that takes the token to a holder, lets it work for the service
time (one token at a time per node: later tokens queue), then sends it on with a
latency. Routing uses the same :class:`~netdp.engine.routing.Router` and the same
per-token streams as the vector engine, so without contention both record the same walk.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import simpy

from netdp.engine.clock import CONSTANT, Latency
from netdp.engine.routing import CHUNK, Router
from netdp.engine.trace import Trace


def run(router: Router, steps: int, walk_rngs: Sequence[np.random.Generator],
        latency: Latency = CONSTANT, latency_rngs: Sequence[np.random.Generator] = (),
        service_time: float = 0.0) -> Trace:
    """Simulate ``len(walk_rngs)`` tokens for ``steps`` steps each; see the vector engine."""
    env = simpy.Environment()
    tokens = len(walk_rngs)
    holders = np.empty((tokens, steps), dtype=router.dtype)
    times = np.empty((tokens, steps))
    nodes: dict[int, simpy.Resource] = {}  # created on first visit: n may be huge

    def hop_latencies(k: int):
        for lo in range(1, steps, CHUNK):  # the same chunks as the vector engine
            size = min(CHUNK, steps - lo)
            yield from (latency.draw(latency_rngs[k], size).tolist()
                        if not latency.is_constant else [latency.a] * size)

    def token(k: int):
        rng, delays = walk_rngs[k], hop_latencies(k)
        timeout, h, row, clock = env.timeout, router.start(rng), holders[k], times[k]
        for lo in range(0, steps, CHUNK):
            hi = min(steps, lo + CHUNK)
            if lo:
                path = router.route(h, router.draw(rng, hi - lo)).tolist()
            else:
                path = [h, *router.route(h, router.draw(rng, hi - 1)).tolist()]
            for i, h in enumerate(path, lo):
                row[i] = h
                if service_time > 0:
                    node = nodes.get(h) or nodes.setdefault(h, simpy.Resource(env, 1))
                    with node.request() as turn:
                        yield turn
                        clock[i] = env.now
                        yield timeout(service_time)
                else:
                    clock[i] = env.now
                if i + 1 < steps:
                    yield timeout(next(delays))

    for k in range(tokens):
        env.process(token(k))
    env.run()
    return Trace(router.topology.n, holders, times, engine="event")
