"""Gossip traces from a log's message lines (:mod:`netdp.engine.trace_log`), by schedule.

``sync``: every directed edge of the graph carries one message at every round ``0..T``
(a message on another pair, or a missing one, is refused). ``partial`` (the header's
``gossip_schedule = "partial"``): each round carries the messages its lines give, any
subset of the directed edges, each at most once (a receiver averages with the messages
it got: :mod:`netdp.engine.async_gossip`). ``pairwise`` and ``push-pull``: ``t`` is the
exchange's tick (a whole number, increasing), and each tick holds the two messages
``a -> b`` and ``b -> a`` of one exchange on an edge, the waking node's first.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from netdp.core.errors import InputError
from netdp.engine.async_gossip import TICKING, PairwiseGossip
from netdp.engine.trace import GossipRounds, Trace
from netdp.engine.trace_log import LogLines, count_runs
from netdp.graphs.topologies import Topology, edges

PARTIAL_HINT = ("a log of partial rounds states '# gossip_schedule = \"partial\"' and "
                "'# edge_probability = P'")


def log_steps(log: LogLines, schedule: str, n: int) -> int:
    """The steps a gossip log's lines give: its last round (rounds), or its time units
    ``⌈ticks / n⌉`` of the run with the most exchanges (pairwise, push-pull)."""
    if schedule not in TICKING:
        return int(log.t.max())
    ticks = [np.unique(log.t[log.run == r]).size for r in range(count_runs(log))]
    return max(1, math.ceil(max(ticks) / n))


def gossip_traces(log: LogLines, topology: Topology, engine: str,
                  schedule: str = "sync") -> list[Trace]:
    """Each run's gossip :class:`Trace` under ``schedule`` (module docstring)."""
    runs = count_runs(log)
    if topology.time_varying:
        return timed_gossip_traces(log, topology, runs, schedule == "partial")
    src, dst = edges(topology)
    n = topology.n
    keys = log.sender.astype(np.int64) * n + log.receiver
    order = np.argsort(src * n + dst)
    links = (src * n + dst)[order]
    at = np.minimum(np.searchsorted(links, keys), links.size - 1)
    off = links[at] != keys
    if off.any():
        i = int(np.flatnonzero(off)[0])
        raise log.error("the message (its sender and receiver fields) is not on an edge of "
                        f"{topology.describe()}", int(log.line[i]))
    if schedule in TICKING:
        return [_exchanges(log, r, src, dst, n, engine, schedule) for r in range(runs)]
    steps = int(log.t.max())
    if schedule == "partial":  # duplicates are refused before: each message at most once
        fired = np.zeros((runs, steps + 1, src.size), dtype=bool)
        fired[log.run, log.t.astype(np.int64), order[at]] = True
        return [_trace(n, engine, GossipRounds(src, dst, steps, fired=fired[r]))
                for r in range(runs)]
    rounds = np.zeros((runs, steps + 1), dtype=np.int64)
    np.add.at(rounds, (log.run, log.t.astype(np.int64)), 1)
    short = np.argwhere(rounds != links.size)
    if short.size:
        r, t = (int(x) for x in short[0])
        raise _short_round(log, r, t, rounds[r, t], links.size, "synchronous gossip: every "
                           "edge carries a message at every round, 0 to the log's last")
    return [_trace(n, engine, GossipRounds(src, dst, steps)) for _ in range(runs)]


def _short_round(log: LogLines, run: int, t: int, got: int, want: int,
                 rule: str) -> InputError:
    """The refusal of round ``t`` of run ``run`` carrying ``got`` of its ``want`` messages,
    naming a line of that round (or, none there, the run's first line and the round, a
    round the file lacks) rather than the run, the round or the nodes read from the file."""
    mine = log.run == run
    here = np.flatnonzero(mine & (log.t == t))
    if here.size:
        return log.error(f"the round of this line (its run and t fields) carries {got} of its "
                         f"{want} message(s) ({rule}; {PARTIAL_HINT})", int(log.line[here[0]]))
    return log.error(f"round {t} of the run of line {int(log.line[mine].min())} has no message "
                     f"line ({rule}; {PARTIAL_HINT})")


def _trace(n: int, engine: str, rounds: GossipRounds) -> Trace:
    return Trace(n, np.empty((0, 0), dtype=np.int64), None, 1.0, engine, gossip=rounds)


def _exchanges(log: LogLines, run: int, src: np.ndarray, dst: np.ndarray, n: int,
               engine: str, schedule: str) -> Trace:
    """One run's exchanges: its ticks in order, two messages each, one the other's
    reverse (lines already checked: on edges, no duplicate, time not going backwards)."""
    mine = np.flatnonzero(log.run == run)
    mine = mine[np.argsort(log.t[mine], kind="stable")]
    ticks, starts, counts = np.unique(log.t[mine], return_index=True, return_counts=True)
    bad = np.flatnonzero(counts != 2)
    if bad.size:
        k = int(bad[0])
        raise log.error(f"the tick of this line (its run and t fields) holds {counts[k]} "
                        "message(s); an exchange is two messages, a -> b then b -> a",
                        int(log.line[mine[starts[k]]]))
    one, two = mine[starts], mine[starts + 1]
    swapped = (log.sender[one] == log.receiver[two]) & (log.receiver[one] == log.sender[two])
    if not swapped.all():
        j = int(np.flatnonzero(~swapped)[0])
        i = int(two[j])
        raise log.error("the message (its sender and receiver fields) does not answer line "
                        f"{int(log.line[one[j]])}'s, the message before it at its tick (an "
                        "exchange is a -> b then b -> a)", int(log.line[i]))
    steps = max(1, math.ceil(ticks.size / n))
    rounds = PairwiseGossip(src, dst, steps, first=log.sender[one].astype(np.int64),
                            second=log.receiver[one].astype(np.int64),
                            times=ticks.astype(np.float64), schedule=schedule)
    return _trace(n, engine, rounds)


def timed_gossip_traces(log: LogLines, topology: Any, runs: int,
                        partial: bool = False) -> list[Trace]:
    """:func:`gossip_traces` on a time-varying graph: round ``t``'s messages are the
    directed edges of the snapshot in force at ``t``, each exactly once (``partial``:
    some of them, each at most once)."""
    from netdp.engine import time_varying_gossip
    from netdp.graphs.gossip_snapshots import gossip_plan

    step = log.t.astype(np.int64)
    bad = np.flatnonzero(step != log.t)
    if bad.size:
        raise log.error("a gossip round's t is an integer", int(log.line[int(bad[0])]))
    steps = int(step.max())
    trace = time_varying_gossip.run(gossip_plan(topology), steps)
    rounds = trace.gossip
    assert rounds is not None
    n = topology.n
    keys = log.sender.astype(np.int64) * n + log.receiver
    for r in range(runs):
        for t in range(steps + 1):
            src, dst = rounds.links(t)  # type: ignore[attr-defined]
            want = np.sort(src.astype(np.int64) * n + dst)
            here = np.flatnonzero((log.run == r) & (step == t))
            got = np.sort(keys[here])
            if np.array_equal(got, want) or (partial and np.isin(got, want).all()):
                continue
            extra = np.setdiff1d(got, want)
            if extra.size:
                i = here[int(np.flatnonzero(keys[here] == extra[0])[0])]
                raise log.error("the message (its sender and receiver fields) is not on an "
                                "edge of the snapshot in force at its round (its t field)",
                                int(log.line[i]))
            raise _short_round(log, r, t, here.size, want.size, "every edge of the snapshot "
                               "in force carries a message at every round")
    if not partial:
        return [trace] * runs  # the rounds are fixed: every run has the same
    union = rounds.src * n + rounds.dst
    order = np.argsort(union)
    fired = np.zeros((runs, steps + 1, union.size), dtype=bool)
    fired[log.run, step, order[np.searchsorted(union[order], keys)]] = True
    return [dataclasses.replace(trace, gossip=dataclasses.replace(rounds, fired=fired[r]))
            for r in range(runs)]


