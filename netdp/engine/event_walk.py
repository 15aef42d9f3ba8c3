"""Event engine (simpy): tokens are processes, nodes are passive, time is explicit.

Each token is a process that takes the token to a holder, lets it work for the service
time (one token at a time per node: later tokens queue), then sends it on with a
latency. Routing uses the same :class:`~netdp.engine.routing.Router` and the same
per-token streams as the vector engine, so without contention both record the same walk.
With faults (:mod:`netdp.engine.faults`), each hand-off can fail: see :func:`run_faulty`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np
import simpy

from netdp.engine.clock import CONSTANT, Latency
from netdp.engine.faults import FaultRun
from netdp.engine.routing import CHUNK, Router
from netdp.engine.trace import FaultLog, Trace


def run(router: Router, steps: int, walk_rngs: Sequence[np.random.Generator],
        latency: Latency = CONSTANT, latency_rngs: Sequence[np.random.Generator] = (),
        service_time: float = 0.0, faults: FaultRun | None = None) -> Trace:
    """Simulate ``len(walk_rngs)`` tokens for ``steps`` steps each; see the vector engine."""
    if faults is not None and compiled(router, faults, service_time):
        return run_compiled(router, steps, walk_rngs, latency, latency_rngs, faults)
    if faults is not None:
        return run_faulty(router, steps, walk_rngs, latency, latency_rngs, service_time,
                          faults)
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


def run_faulty(router: Router, steps: int, walk_rngs: Sequence[np.random.Generator],
               latency: Latency, latency_rngs: Sequence[np.random.Generator],
               service_time: float, faults: FaultRun) -> Trace:
    """The walk with faults. Each hop is a hand-off (module :mod:`netdp.engine.faults`):
    the sender sends the token, and sends it again every ``timeout`` until an ack comes
    back, at most ``retries`` times. The token moves on from the first copy that arrives;
    later copies are duplicates. A down holder keeps the token until it is up again; a
    crashed one loses it. The next holder comes from the walk's own uniforms, as without
    faults, so the route is the fault-free one unless ``skip`` routes around a down node
    (with a uniform from the faults stream).

    ``regenerate``: when a sender gives up on a hand-off (no ack after the retries), or
    a holder crashes (its predecessor notices after a timeout), that node starts a new
    token with an empty sum: a new row of the trace, walking ``steps`` steps from it, from
    streams of its own (:attr:`FaultRun.spawn`). The lost token's row ends where it was
    lost (``-1`` after). A sender that gave up while a copy did arrive leaves two tokens
    walking, which is what it would do.
    """
    env = simpy.Environment()
    cfg, nodes = faults.faults, faults.nodes
    rows: list[tuple[np.ndarray, np.ndarray]] = []  # (holders, times) per token walked
    origin: list[int] = []  # the token each row walks for
    spawned = [0] * len(walk_rngs)  # new tokens started for each token
    finished: list[int] = []
    queues: dict[int, simpy.Resource] = {}
    counts = {"sent": 0, "resent": 0, "lost": 0, "duplicated": 0, "skipped": 0,
              "regenerated": 0}
    lost_tokens: list[tuple[int, int, float, str]] = []
    reached: set[int] = set()

    def stream(rngs: Sequence[np.random.Generator], k: int) -> np.random.Generator:
        return rngs[k] if rngs else faults.rngs[k]

    def uniforms(rng: np.random.Generator) -> Iterator[np.ndarray]:
        for lo in range(0, steps, CHUNK):  # the fault-free engines' chunks
            size = min(CHUNK, steps - lo) - (1 if lo == 0 else 0)
            yield from router.draw(rng, size)

    def latencies(rng: np.random.Generator) -> Iterator[float]:
        for lo in range(1, steps, CHUNK):
            size = min(CHUNK, steps - lo)
            yield from (latency.draw(rng, size).tolist()
                        if not latency.is_constant else [latency.a] * size)

    def fresh_latency(rng: np.random.Generator) -> float:
        return latency.a if latency.is_constant else float(latency.draw(rng, 1)[0])

    def hand_off(h: int, nxt: int, t: float, first: float,
                 k: int) -> tuple[int, float, float, bool]:
        """``(receiver, arrival, end, acked)`` of the token sent by ``h`` at ``t``:
        arrival ``inf`` when no copy arrives within the retries; ``end`` when the sender
        is done. ``skip`` routes around a down receiver at once; ``retries + 1`` sends and
        skips in all end the hand-off."""
        if nxt == h:  # the holder keeps the token: no message
            return nxt, t + first, t + first, True
        rng, delay, skip = faults.rngs[k], stream(faults.delays, k), stream(faults.skips, k)
        arrival, sends = math.inf, 0
        while sends <= cfg.retries:
            reached.add(nxt)
            if cfg.on_loss == "skip" and not nodes.is_up(nxt, t):
                counts["skipped"] += 1
                sends += 1
                nxt = int(router.route(h, skip.random((1, router.width)))[0])
                if nxt == h:
                    return nxt, t + first, t + first, True
                continue
            lat = first if sends == 0 else fresh_latency(delay) * nodes.slowdown(h)
            counts["sent"] += 1
            counts["resent"] += sends > 0
            sends += 1
            got = t + lat
            if faults.lose(h, nxt, rng) or not nodes.is_up(nxt, got):
                counts["lost"] += 1
            else:
                if arrival == math.inf:
                    arrival = got
                else:
                    counts["duplicated"] += 1
                ack = got + fresh_latency(delay) * nodes.slowdown(nxt)
                if faults.lose(nxt, h, rng) or not nodes.is_up(h, ack):
                    counts["lost"] += 1
                elif ack <= t + cfg.timeout:
                    return nxt, arrival, ack, True  # acked in time: the sender is done
            t = nodes.next_up(h, t + cfg.timeout)  # a down sender sends again once up
            if t == math.inf:  # it crashed: nothing more is sent
                return nxt, arrival, nodes.crash_time(h), False
        return nxt, arrival, t, False

    def regenerate(k: int, t: float, heir: int | None) -> bool:
        """Whether ``heir`` starts a new token for token ``k`` at ``t`` (``regenerate``, a
        heir up by then, at most ``retries`` new tokens for each token)."""
        if (cfg.on_loss == "regenerate" and heir is not None and spawned[k] < cfg.retries
                and t < nodes.crash_time(heir)):
            spawned[k] += 1
            counts["regenerated"] += 1
            env.process(token(k, spawned[k], heir, t))
            return True
        return False

    def lose(k: int, i: int, t: float, why: str, heir: int | None) -> None:
        """A token walking for token ``k`` is lost at step ``i``: regenerated, or logged."""
        if not regenerate(k, t, heir):
            lost_tokens.append((k, i, t, why))

    def token(k: int, gen: int = 0, start: int | None = None, at: float = 0.0):
        if gen == 0:
            walk_rng = walk_rngs[k]
            lat_rng = latency_rngs[k] if latency_rngs else np.random.default_rng(0)  # unused
        else:
            assert faults.spawn is not None, "regenerate needs the streams of new tokens"
            walk_rng, lat_rng = faults.spawn(k, gen)
        row, clock = np.full(steps, -1, dtype=router.dtype), np.full(steps, np.nan)
        rows.append((row, clock))
        origin.append(k)
        index = len(rows) - 1
        if at > env.now:
            yield env.timeout(at - env.now)
        draws, delays = uniforms(walk_rng), latencies(lat_rng)
        h = router.start(walk_rng) if start is None else start
        for _ in range(cfg.retries + 1 if cfg.on_loss == "skip" and gen == 0 else 0):
            if nodes.is_up(h, 0.0):
                break
            counts["skipped"] += 1  # skip: the walk starts at a node that is up
            reached.add(h)
            h = router.start(stream(faults.skips, k))
        previous: int | None = None
        for i in range(steps):
            reached.add(h)
            wake = nodes.next_up(h, env.now)
            if wake == math.inf:
                lose(k, i, nodes.crash_time(h) + cfg.timeout,
                     f"node {h} crashed holding it", previous)
                return
            if wake > env.now:
                yield env.timeout(wake - env.now)
            row[i], clock[i] = h, env.now
            serve = service_time * nodes.slowdown(h)
            if serve > 0:
                node = queues.get(h) or queues.setdefault(h, simpy.Resource(env, 1))
                with node.request() as turn:
                    yield turn
                    clock[i] = env.now
                    yield env.timeout(serve)
            if i + 1 == steps:
                finished.append(index)
                return
            nxt = int(router.route(h, next(draws)[None, :])[0])
            first = next(delays) * nodes.slowdown(h)
            if env.now >= nodes.crash_time(h):
                lose(k, i + 1, nodes.crash_time(h) + cfg.timeout,
                     f"node {h} crashed holding it", previous)
                return
            nxt, arrival, end, acked = hand_off(h, nxt, env.now, first, k)
            if not acked and cfg.on_loss == "regenerate":
                if arrival == math.inf:
                    lose(k, i + 1, end, f"node {h} gave up on node {nxt}", h)
                    return
                regenerate(k, end, h)  # a copy did arrive: that token walks on too
            elif arrival == math.inf:
                lost_tokens.append((k, i + 1, end, f"no copy reached node {nxt} in "
                                    f"{cfg.retries + 1} sends or skips"))
                return
            yield env.timeout(arrival - env.now)
            previous, h = h, nxt

    for k in range(len(walk_rngs)):
        env.process(token(k))
    env.run()
    holders = np.stack([r for r, _ in rows])
    times = np.stack([c for _, c in rows])
    done = float(np.nanmax(times)) if np.isfinite(times).any() else 0.0
    done = max([done, *(t for _, _, t, _ in lost_tokens)])
    log = FaultLog(**counts, lost_tokens=tuple(sorted(lost_tokens)), completion_time=done,
                   downtime=nodes.mean_downtime(reached, done),
                   finished=tuple(sorted(finished)), origin=tuple(origin))
    return Trace(router.topology.n, holders, times, engine="event", faults=log)


def compiled(router: Router, faults: FaultRun, service_time: float) -> bool:
    """Whether :func:`run_compiled` takes the run: tokens that never wait for each other
    (no service time), ``resend`` or ``skip``, iid loss, and sessions drawn in blocks (or
    no churn). The rest (queues, ``regenerate``, bursts, tables) runs :func:`run_faulty`."""
    cfg = faults.faults
    return (service_time == 0 and cfg.on_loss in ("resend", "skip")
            and cfg.loss.law == "iid" and cfg.churn.law in ("none", "exp", "weibull")
            and bool(faults.delays) and bool(faults.skips))


def run_compiled(router: Router, steps: int, walk_rngs: Sequence[np.random.Generator],
                 latency: Latency, latency_rngs: Sequence[np.random.Generator],
                 faults: FaultRun) -> Trace:
    """:func:`run_faulty` for tokens that walk on their own, one compiled loop per token
    (:mod:`netdp.engine._fault_kernels`): the same draws in the same order, so the same
    walk, time for time (``tests/test_faults.py``)."""
    from netdp.engine import _fault_kernels as fk

    topo, cfg, nodes = router.topology, faults.faults, faults.nodes
    tokens, width = len(walk_rngs), router.width
    kind = {"ring": fk.RING, "complete": fk.COMPLETE}.get(topo.kind, fk.GRAPH)
    indptr = getattr(router, "_indptr", np.zeros(1, np.int64))
    indices = getattr(router, "_indices", np.zeros(1, np.int64))
    rule = getattr(router, "_rule", 0)
    cum = getattr(router, "_cum", np.zeros(0))  # a weighted graph's cumulative weights
    holders = np.full((tokens, steps), -1, dtype=np.int64)
    times = np.full((tokens, steps), np.nan)
    counts = np.zeros(5, dtype=np.int64)
    reached = np.zeros(topo.n, dtype=bool)
    lost_tokens: list[tuple[int, int, float, str]] = []
    block = max(64, 4 * (cfg.retries + 1))

    def fresh(rng: np.random.Generator, size: int) -> np.ndarray:
        return np.full(size, latency.a) if latency.is_constant else latency.draw(rng, size)

    for k in range(tokens):
        walk_rng, skip_rng = walk_rngs[k], faults.skips[k]
        h = router.start(walk_rng)
        for _ in range(cfg.retries + 1 if cfg.on_loss == "skip" else 0):
            if nodes.is_up(h, 0.0):
                break
            counts[fk.SKIPPED] += 1  # skip: the walk starts at a node that is up
            reached[h] = True
            h = router.start(skip_rng)
        walk_u = router.draw(walk_rng, steps - 1) if steps > 1 else np.zeros((0, width))
        first = (np.full(steps - 1, latency.a) if latency.is_constant
                 else latency.draw(latency_rngs[k], steps - 1))
        loss_u = faults.rngs[k].random(block) if cfg.loss.p > 0 else np.zeros(0)
        fresh_lat = fresh(faults.delays[k], block)
        skip_u = skip_rng.random((block, width)) if cfg.on_loss == "skip" else \
            np.zeros((0, width))
        state = np.array([0.0, h, 0.0, 0, 0, 0, -1])
        while True:
            churn, bounds, up0, crash, slow = nodes.arrays()
            status = fk.walk(kind, topo.n, bool(topo.self_moves), indptr, indices, cum, rule,
                             steps, walk_u, first, cfg.loss.p, loss_u, fresh_lat, skip_u,
                             cfg.on_loss == "skip", cfg.retries, cfg.timeout, churn, bounds,
                             up0, crash, slow, state, counts, holders[k], times[k], reached)
            if status == fk.MORE:  # more draws, from where each stream stopped
                if cfg.loss.p > 0:
                    loss_u = np.concatenate([loss_u, faults.rngs[k].random(block)])
                fresh_lat = np.concatenate([fresh_lat, fresh(faults.delays[k], block)])
                if cfg.on_loss == "skip":
                    skip_u = np.concatenate([skip_u, skip_rng.random((block, width))])
                block *= 2
            elif status == fk.GROW:
                nodes.grow()
            else:
                break
        i = int(state[fk.STEP])
        if status == fk.CRASHED:
            lost_tokens.append((k, i, float(state[fk.T]) + cfg.timeout,
                                f"node {int(state[fk.H])} crashed holding it"))
        elif status == fk.NO_COPY:
            lost_tokens.append((k, i + 1, float(state[fk.T]),
                                f"no copy reached node {int(state[fk.NODE])} in "
                                f"{cfg.retries + 1} sends or skips"))
    done = float(np.nanmax(times)) if np.isfinite(times).any() else 0.0
    done = max([done, *(t for _, _, t, _ in lost_tokens)])
    names = ("sent", "resent", "lost", "duplicated", "skipped")
    log = FaultLog(**{name: int(c) for name, c in zip(names, counts, strict=True)},
                   regenerated=0, lost_tokens=tuple(sorted(lost_tokens)),
                   completion_time=done, downtime=nodes.mean_downtime(np.flatnonzero(reached),
                                                                       done),
                   finished=tuple(k for k in range(tokens)
                                  if not any(x[0] == k for x in lost_tokens)),
                   origin=tuple(range(tokens)))
    return Trace(topo.n, holders.astype(router.dtype), times, engine="event", faults=log)
