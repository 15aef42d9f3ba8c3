"""Faults of the event engine: lossy links, churn, crashes and slow nodes, and what a
sender does when a hand-off fails (spec network-dp.md §5).

A hand-off is one message carrying the token from its holder to the next, and one ack
back. Both cross a link that may lose them (:class:`Loss`). The receiver may be down
(:class:`Churn`, or crashed for good). The sender keeps its copy until the ack arrives,
and sends the token again every ``timeout``, at most ``retries`` times:

* ``resend``: always to the same receiver (automatic repeat request). The receiver
  takes the first copy that reaches it and drops the later ones by the token's hop
  number. Such a duplicate is logged; it carries the value the receiver has already
  seen, so it costs no privacy (it is a function of the receiver's view). The walk's
  route is the fault-free one: only its times change.
* ``skip``: the sender knows which nodes are down (a failure detector) and routes
  around them, drawing another next holder. Down nodes then hold the token less often,
  which biases the estimate towards the nodes that are up.

A token whose hand-off fails ``retries + 1`` times, or whose holder crashes, is lost:
the run ends with ``completed: false``. Every draw of this module comes from the run's
``faults`` stream, so turning faults on leaves the walk's and the noise's draws alone,
and with every rate at 0 the run is the fault-free one.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from netdp.core import seeding
from netdp.core.errors import InputError, check
from netdp.core.reading import read_csv_rows
from netdp.engine.clock import is_number, parse_latency

SESSIONS = 8  # sessions drawn per node at once (more on demand)


@dataclass(frozen=True)
class Loss:
    """Which messages a link loses.

    Attributes
    ----------
    law
        ``iid`` (each message lost with probability ``p``), ``ge`` (Gilbert–Elliott: each
        directed link is good or bad, moves good to bad with probability ``p_gb`` and bad
        to good with ``p_bg`` per message, and loses a message with probability
        ``bad`` in the bad state and ``good`` in the good one) or ``file`` (a probability
        per directed link from a CSV ``src,dst,p``; other links lose nothing).
    """

    law: str = "iid"
    p: float = 0.0
    p_gb: float = 0.0
    p_bg: float = 1.0
    bad: float = 1.0
    good: float = 0.0
    links: dict[tuple[int, int], float] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        """Whether any message can be lost."""
        if self.law == "iid":
            return self.p > 0
        if self.law == "ge":
            return self.good > 0 or (self.p_gb > 0 and self.bad > 0)
        return any(p > 0 for p in self.links.values())

    @property
    def mean(self) -> float:
        """The long-run share of messages lost on a link (file: the largest link's)."""
        if self.law == "iid":
            return self.p
        if self.law == "ge":
            in_bad = self.p_gb / (self.p_gb + self.p_bg) if self.p_gb + self.p_bg else 0.0
            return in_bad * self.bad + (1 - in_bad) * self.good
        return max(self.links.values(), default=0.0)


def parse_loss(text: str) -> Loss:
    """``P`` | ``iid:P`` | ``ge:P_GB:P_BG[:BAD[:GOOD]]`` | ``file:PATH.csv``."""
    text = str(text).strip()
    bad = InputError("loss", "expected P in [0, 1], iid:P, ge:P_GB:P_BG[:BAD[:GOOD]] (each in "
                     f"[0, 1]) or file:PATH.csv (got {text!r})")
    if text.startswith("file:"):
        return Loss("file", links=_read_links(Path(text[5:])))
    parts = text.split(":")
    law = "iid" if is_number(parts[0]) else parts[0]
    try:
        nums = [float(x) for x in (parts if law == "iid" and len(parts) == 1 else parts[1:])]
    except ValueError:
        raise bad from None
    if not all(0.0 <= x <= 1.0 for x in nums):
        raise bad
    if law == "iid" and len(nums) == 1:
        return Loss("iid", nums[0])
    if law == "ge" and 2 <= len(nums) <= 4:
        check(nums[0] + nums[1] > 0, "loss", f"ge needs P_GB + P_BG > 0 (got {text!r})")
        p_gb, p_bg, *rest = nums
        in_bad, in_good = (rest + [1.0, 0.0][len(rest):])[:2]
        return Loss("ge", 0.0, p_gb, p_bg, in_bad, in_good)
    raise bad


def _read_links(path: Path) -> dict[tuple[int, int], float]:
    rows = read_csv_rows(path, "loss")
    links: dict[tuple[int, int], float] = {}
    for i, row in enumerate(rows[1:], 2):  # a header row first
        try:
            src, dst, p = int(row[0]), int(row[1]), float(row[2])
        except (ValueError, IndexError):
            raise InputError("loss", f"{path} line {i}: expected src,dst,p") from None
        check(src >= 0 and dst >= 0 and 0.0 <= p <= 1.0, "loss",
              f"{path} line {i}: needs node ids >= 0 and p in [0, 1]")
        links[src, dst] = p
    return links


@dataclass(frozen=True)
class Churn:
    """When nodes are up: alternating up and down sessions, or a table of down times.

    Attributes
    ----------
    law
        ``none``, ``exp`` (exponential sessions of means ``up`` and ``down``; each node
        starts in its stationary state), ``weibull`` (Weibull sessions of shape ``shape``
        and those means; each node starts a fresh session, up with probability
        ``up / (up + down)``) or ``file`` (a CSV ``node,down,up`` of down intervals).
    """

    law: str = "none"
    up: float = math.inf
    down: float = 0.0
    shape: float = 1.0
    table: dict[int, list[tuple[float, float]]] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        """Whether any node is ever down."""
        return self.law != "none"

    @property
    def availability(self) -> float:
        """Long-run share of time a node is up (sessions)."""
        return self.up / (self.up + self.down) if self.law in ("exp", "weibull") else 1.0


#: The Weibull sessions' shapes netdp runs. Below the least, the median session is so
#: short against its mean (``(ln 2)^{1/k} / Γ(1 + 1/k)``: 1e-2 of it at 0.25, 7e-9 at
#: 0.1) that a run draws sessions without end, and ``Γ(1 + 1/k)`` overflows below 0.006
#: (session 18's check of issue 39: a traceback and a hang).
MIN_SHAPE, MAX_SHAPE = 0.25, 100.0


def parse_churn(text: str) -> Churn:
    """``none`` | ``exp:MEAN_UP:MEAN_DOWN`` | ``weibull:SHAPE:MEAN_UP:MEAN_DOWN`` |
    ``file:PATH.csv``."""
    text = str(text).strip()
    if text == "none":
        return Churn()
    if text.startswith("file:"):
        return Churn("file", table=_read_downtimes(Path(text[5:])))
    bad = InputError("churn", "expected none, exp:MEAN_UP:MEAN_DOWN, weibull:SHAPE:MEAN_UP:"
                     f"MEAN_DOWN (means > 0, SHAPE in [{MIN_SHAPE:g}, {MAX_SHAPE:g}]) or "
                     f"file:PATH.csv (got {text!r})")
    parts = text.split(":")
    try:
        nums = [float(x) for x in parts[1:]]
    except ValueError:
        raise bad from None
    if not nums or not all(0 < x < math.inf for x in nums):
        raise bad
    if parts[0] == "exp" and len(nums) == 2:
        return Churn("exp", nums[0], nums[1])
    if parts[0] == "weibull" and len(nums) == 3 and MIN_SHAPE <= nums[0] <= MAX_SHAPE:
        return Churn("weibull", nums[1], nums[2], nums[0])
    raise bad


def _read_downtimes(path: Path) -> dict[int, list[tuple[float, float]]]:
    rows = read_csv_rows(path, "churn")
    table: dict[int, list[tuple[float, float]]] = {}
    for i, row in enumerate(rows[1:], 2):
        try:
            node, down, up = int(row[0]), float(row[1]), float(row[2])
        except (ValueError, IndexError):
            raise InputError("churn", f"{path} line {i}: expected node,down,up") from None
        check(node >= 0 and 0 <= down <= up, "churn",
              f"{path} line {i}: needs a node id >= 0 and 0 <= down <= up (up may be inf)")
        table.setdefault(node, []).append((down, up))
    for spans in table.values():
        spans.sort()
    return table


@dataclass(frozen=True)
class Faults:
    """Every fault of a run, as configured (see the module docstring).

    Attributes
    ----------
    loss, churn
        Message loss and on/off sessions.
    crash
        Mean time to a crash-stop failure of each node (exponential), or ``None``.
    slow
        ``(fraction, factor)``: each node is slow with probability ``fraction``; a slow
        node serves and forwards the token ``factor`` times slower. ``None``: none.
    on_loss
        ``resend`` or ``skip``.
    timeout, retries
        The sender sends again after ``timeout`` without an ack, at most ``retries``
        times.
    """

    loss: Loss = field(default_factory=Loss)
    churn: Churn = field(default_factory=Churn)
    crash: float | None = None
    slow: tuple[float, float] | None = None
    on_loss: str = "resend"
    timeout: float = 4.0
    retries: int = 20

    @property
    def active(self) -> bool:
        """Whether anything can go wrong (else the engine runs its fault-free path)."""
        return (self.loss.active or self.churn.active or self.crash is not None
                or self.slow is not None)


def from_config(config: Any) -> Faults | None:
    """The faults a config asks for, or ``None`` when it asks for none."""
    slow = None
    if config.slow is not None:
        slow = parse_slow(config.slow)
    faults = Faults(parse_loss(config.loss), parse_churn(config.churn), config.crash, slow,
                    config.on_loss, config.timeout, config.retries)
    return faults if faults.active else None


def fault_flag(config: Any) -> str:
    """The flag of the first fault a config asks for (``loss``, ``churn``, ``crash``,
    ``slow``), for the messages that refuse faults; ``loss`` when it asks for none."""
    faults = from_config(config)
    if faults is None or faults.loss.active:
        return "loss"
    if faults.churn.active:
        return "churn"
    return "crash" if config.crash is not None else "slow"


def parse_slow(text: str) -> tuple[float, float]:
    """``FRACTION:FACTOR`` with the fraction in [0, 1] and the factor >= 1."""
    bad = InputError("slow", f"expected FRACTION:FACTOR with FRACTION in [0, 1] and FACTOR "
                     f">= 1 (got {text!r})")
    parts = str(text).split(":")
    try:
        fraction, factor = (float(x) for x in parts)
    except ValueError:
        raise bad from None
    if not (0 <= fraction <= 1 and 1 <= factor < math.inf):
        raise bad
    return fraction, factor


class Nodes:
    """The run's node states: up/down sessions, crash times, slowness.

    Drawn for all ``n`` nodes at once from the run's ``faults`` stream (one sub-stream
    per kind), so a node's states do not depend on when, or whether, the walk reaches it.
    Sessions come in blocks of :data:`SESSIONS` per node, drawn in order from one stream:
    enough blocks to cover ``horizon`` (a hint) at first, one more whenever a node outlives
    them. The blocks are the same whatever the hint, so the schedule is too.
    """

    def __init__(self, faults: Faults, n: int, seed: int, run: int,
                 horizon: float = 0.0) -> None:

        self.faults, self.n, self.seed, self.run = faults, n, seed, run
        churn = faults.churn
        self._crash = (seeding.generator(seed, "faults", run, 1).exponential(faults.crash, n)
                       if faults.crash is not None else None)
        self._slow = None
        if faults.slow is not None:
            fraction, factor = faults.slow
            slow = seeding.generator(seed, "faults", run, 2).random(n) < fraction
            self._slow = np.where(slow, factor, 1.0)
        self._bounds: np.ndarray | None = None
        self._up0: np.ndarray | None = None
        self._rows: dict[int, list[float]] = {}
        if churn.law in ("exp", "weibull"):
            self._sessions_rng = seeding.generator(seed, "faults", run, 0)
            self._up0 = self._sessions_rng.random(n) < churn.availability
            self._bounds = np.zeros((n, 0))
            cover = 2 * math.ceil(1.5 * horizon / (churn.up + churn.down)) if horizon else 0
            while self._bounds.shape[1] < min(max(SESSIONS, cover + 2), 256):
                self._grow()

    def _grow(self, blocks: int = 1) -> None:
        """``blocks`` more blocks of sessions for every node, continuing the sessions
        stream (block by block, so the schedule is the same however they are grouped)."""
        assert self._bounds is not None and self._up0 is not None
        n, have = self._bounds.shape
        churn, rng = self.faults.churn, self._sessions_rng
        parts = [self._bounds]
        start = self._bounds[:, -1:] if have else np.zeros((n, 1))
        for b in range(blocks):
            up = self._lengths(rng, churn.up, (SESSIONS, n)).T
            down = self._lengths(rng, churn.down, (SESSIONS, n)).T
            index = have + b * SESSIONS + np.arange(SESSIONS)
            first_up = (index % 2 == 0)[None, :] == self._up0[:, None]
            parts.append(start + np.cumsum(np.where(first_up, up, down), axis=1))
            start = parts[-1][:, -1:]
        self._bounds = np.concatenate(parts, axis=1)
        self._rows.clear()

    def arrays(self) -> tuple[bool, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(churn, session ends, first states, crash times, slowdowns)`` of every node,
        for the compiled walk (exponential or Weibull churn, or none)."""
        n = self.n
        churn = self._bounds is not None and self._up0 is not None
        bounds = self._bounds if churn else np.ones((1, 1))
        up0 = self._up0 if churn else np.ones(1, dtype=bool)
        crash = self._crash if self._crash is not None else np.full(n, np.inf)
        slow = self._slow if self._slow is not None else np.ones(n)
        assert bounds is not None and up0 is not None
        return churn, bounds, up0, crash, slow

    def grow(self) -> None:
        """Twice the sessions for every node (see the class docstring)."""
        assert self._bounds is not None
        self._grow(max(1, self._bounds.shape[1] // SESSIONS))

    def crash_time(self, node: int) -> float:
        """When ``node`` crashes for good (``inf``: never)."""
        return math.inf if self._crash is None else float(self._crash[node])

    def slowdown(self, node: int) -> float:
        """The factor on ``node``'s service and forwarding times (1: not slow)."""
        return 1.0 if self._slow is None else float(self._slow[node])

    def is_up(self, node: int, t: float) -> bool:
        """Whether ``node`` is up at time ``t``."""
        return t < self.crash_time(node) and self._session_up(node, t)

    def up_at(self, t: float) -> np.ndarray:
        """``(n,)``: which nodes are up at time ``t``, :meth:`is_up` for all at once."""
        up = np.ones(self.n, dtype=bool) if self._crash is None else t < self._crash
        churn = self.faults.churn
        if churn.law == "file":
            for node, spans in churn.table.items():
                if node < self.n and any(down <= t < end for down, end in spans):
                    up[node] = False
        elif churn.active:
            assert self._bounds is not None and self._up0 is not None
            while (self._bounds[:, -1] <= t).any():
                self._grow()
            flips = (self._bounds <= t).sum(axis=1)
            up &= self._up0 == (flips % 2 == 0)
        return up

    def next_up(self, node: int, t: float) -> float:
        """The first time at or after ``t`` that ``node`` is up (``inf``: never again)."""
        if t >= self.crash_time(node):
            return math.inf
        churn = self.faults.churn
        if not churn.active or self._session_up(node, t):
            return t
        if churn.law == "file":
            end = next(up for down, up in churn.table.get(node, []) if down <= t < up)
        else:
            row = self._row(node, t)
            end = row[bisect.bisect_right(row, t)]
        return end if end < self.crash_time(node) else math.inf

    def downtime(self, node: int, horizon: float) -> float:
        """Time ``node`` spends down in ``[0, horizon)`` (crash included)."""
        crash = min(self.crash_time(node), horizon)
        churn = self.faults.churn
        down = horizon - crash
        if not churn.active or crash <= 0:
            return down
        if churn.law == "file":
            spans = churn.table.get(node, [])
            return down + sum(max(0.0, min(up, crash) - dn) for dn, up in spans if dn < crash)
        assert self._up0 is not None
        row = self._row(node, crash)
        edges = [0.0, *(b for b in row if b < crash), crash]
        up0 = bool(self._up0[node])
        return down + sum(b - a for i, (a, b) in enumerate(zip(edges[:-1], edges[1:],
                                                                   strict=True))
                          if (i % 2 == 0) != up0)

    def mean_downtime(self, nodes: Any, horizon: float) -> float:
        """Mean share of ``[0, horizon)`` that ``nodes`` are down (vectorised over the
        sessions; a table of down times node by node)."""
        nodes = np.asarray(sorted(nodes), dtype=np.int64)
        if nodes.size == 0 or horizon <= 0:
            return 0.0
        if self._bounds is None or self._up0 is None:
            return float(np.mean([self.downtime(int(v), horizon) for v in nodes]) / horizon)
        while (self._bounds[nodes, -1] <= horizon).any():
            self._grow()
        crash = np.minimum(self._crash[nodes], horizon) if self._crash is not None else \
            np.full(nodes.size, horizon)
        edges = np.minimum(np.concatenate([np.zeros((nodes.size, 1)), self._bounds[nodes]],
                                          axis=1), crash[:, None])
        spans = np.diff(edges, axis=1)
        first_up = (np.arange(spans.shape[1]) % 2 == 0)[None, :] == self._up0[nodes, None]
        down = (spans * ~first_up).sum(axis=1) + (horizon - crash)
        return float(down.sum() / nodes.size / horizon)

    def _session_up(self, node: int, t: float) -> bool:
        churn = self.faults.churn
        if not churn.active:
            return True
        if churn.law == "file":
            return not any(down <= t < up for down, up in churn.table.get(node, []))
        assert self._up0 is not None
        flips = bisect.bisect_right(self._row(node, t), t)
        return bool(self._up0[node]) == (flips % 2 == 0)

    def _row(self, node: int, t: float) -> list[float]:
        """The node's session ends, drawn far enough to pass ``t``."""
        assert self._bounds is not None
        while self._bounds[node, -1] <= t:
            self._grow()
        row = self._rows.get(node)
        if row is None:
            row = self._rows[node] = self._bounds[node].tolist()
        return row

    def _lengths(self, rng: np.random.Generator, mean: float, size: Any) -> np.ndarray:
        churn = self.faults.churn
        if churn.law == "exp":
            return rng.exponential(mean, size)
        return mean / math.gamma(1.0 + 1.0 / churn.shape) * rng.weibull(churn.shape, size)


@dataclass
class FaultRun:
    """The faults of one run: what is configured, the nodes' states, and per token one
    stream for its messages' losses (``rngs``), one for the latencies of sends again and
    of acks (``delays``), one for the skips (``skips``); ``spawn(k, g)``: the walk and
    latency streams of token ``k``'s ``g``-th regenerated token."""

    faults: Faults
    nodes: Nodes
    rngs: Sequence[np.random.Generator]
    spawn: Callable[[int, int], tuple[np.random.Generator, np.random.Generator]] | None = None
    delays: Sequence[np.random.Generator] = ()
    skips: Sequence[np.random.Generator] = ()
    links: dict[tuple[int, int], bool] = field(default_factory=dict)  # Gilbert-Elliott: bad?

    def lose(self, src: int, dst: int, rng: np.random.Generator) -> bool:
        """Whether the link ``src -> dst`` loses this message."""
        loss = self.faults.loss
        if loss.law == "iid":
            return loss.p > 0 and bool(rng.random() < loss.p)
        if loss.law == "file":
            p = loss.links.get((src, dst), 0.0)
            return p > 0 and bool(rng.random() < p)
        bad = self.links.get((src, dst), False)
        bad = bool(rng.random() < loss.p_gb) if not bad else not bool(rng.random() < loss.p_bg)
        self.links[src, dst] = bad
        return bool(rng.random() < (loss.bad if bad else loss.good))


def fault_run(setup: Any, streams: Any, tokens: int) -> FaultRun | None:
    """The faults of one run of ``setup`` (``None`` without faults): the node states for
    the horizon of a fault-free run, one message stream per token, and the streams of
    regenerated tokens."""
    faults = from_config(setup.config)
    if faults is None:
        return None

    config = setup.config
    horizon = setup.steps * (parse_latency(config.latency).mean + config.service_time)

    def spawn(k: int, gen: int) -> tuple[np.random.Generator, np.random.Generator]:
        return streams.generator("walk", k, gen), streams.generator("latency", k, gen)

    return FaultRun(faults, Nodes(faults, setup.topology.n, streams.seed, streams.run,
                                  horizon),
                    [streams.generator("faults", 3, k) for k in range(tokens)], spawn,
                    [streams.generator("faults", 5, k) for k in range(tokens)],
                    [streams.generator("faults", 6, k) for k in range(tokens)])
