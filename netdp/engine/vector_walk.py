"""Vector engine: whole walks as numpy arrays, exact when no hop waits on another token.

The walk is drawn chunk by chunk with :class:`~netdp.engine.routing.Router`; hop times
are a cumulative sum of latencies (plus the holder's service time).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from netdp.engine.clock import CONSTANT, Latency
from netdp.engine.routing import CHUNK, Router
from netdp.engine.trace import Trace


def run(router: Router, steps: int, walk_rngs: Sequence[np.random.Generator],
        latency: Latency = CONSTANT, latency_rngs: Sequence[np.random.Generator] = (),
        service_time: float = 0.0) -> Trace:
    """Walk ``len(walk_rngs)`` independent tokens for ``steps`` steps each.

    Parameters
    ----------
    router
        Topology and walk rule.
    steps
        Contributions per token (the token visits ``steps`` holders).
    walk_rngs
        One generator per token (routing).
    latency, latency_rngs
        Hop latency law and one generator per token (unused for constant latency).
    service_time
        Time a holder keeps the token before forwarding it. Tokens never wait for each
        other here: with several tokens and ``service_time > 0`` use the event engine.
    """
    n = router.topology.n
    holders = np.empty((len(walk_rngs), steps), dtype=router.dtype)
    for k, rng in enumerate(walk_rngs):
        row = holders[k]
        row[0] = router.start(rng)
        for lo in range(1, steps, CHUNK):
            hi = min(steps, lo + CHUNK)
            row[lo:hi] = router.route(int(row[lo - 1]), router.draw(rng, hi - lo), lo - 1)
    if latency.is_constant:
        return Trace(n, holders, None, period=latency.a + service_time, engine="vector")
    times = np.zeros(holders.shape)
    for k, rng in enumerate(latency_rngs):
        delays = latency.draw(rng, steps - 1)
        if service_time > 0:  # add service then latency, in the event engine's order
            both = np.empty(2 * delays.size)
            both[0::2], both[1::2] = service_time, delays
            times[k, 1:] = np.cumsum(both)[1::2]
        else:
            np.cumsum(delays, out=times[k, 1:])
    return Trace(n, holders, times, engine="vector")
