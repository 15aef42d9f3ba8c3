"""A deployment's log of a run: one line per hop of a walk, or per message of gossip.

What ``netdp simulate --trace-out`` writes and ``netdp account`` reads (the format, the
checks and the repairs: ``docs/your-network.md``)::

    # netdp trace log 1
    # protocol = "walk"
    # topology = "hypercube"
    # nodes = 64
    # epsilon = 1.0
    run,t,token,sender,receiver
    0,1,0,12,13
    0,2,0,13,9

Header lines ``# key = value`` (a TOML value) before the column line state the deployment
(any parameter of ``netdp simulate``); other ``#`` lines and blank lines are comments. The
column line is ``t,token,sender,receiver`` (a walk: ``sender`` hands token ``token`` to
``receiver``, who takes it at time ``t``) or ``t,sender,receiver`` (gossip: ``sender``
sends its state to ``receiver`` at round ``t``), either with a leading ``run`` column when
the log holds several runs (``0..R-1``; without it, one run).

A walk's trace is rebuilt from its hops: ``holders[k, 0]`` is the sender of token ``k``'s
first hop and ``holders[k, i + 1]`` the receiver of its hop ``i`` (its time ``times[k, i +
1]``; ``times[k, 0]``, which a log does not say, is the first hop's; evenly spaced times
``1, 2, ...`` give ``times = None``); gossip's from its rounds or exchanges
(:mod:`netdp.engine.gossip_log`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from netdp.core.errors import InputError
from netdp.core.limits import check_seconds
from netdp.core.reading import check_regular, loads_toml
from netdp.engine.trace import Trace, holder_dtype
from netdp.graphs.topologies import Topology

FIRST_LINE = "# netdp trace log 1"
RUN = "run"
COLUMNS = {"walk": ("t", "token", "sender", "receiver"), "gossip": ("t", "sender", "receiver")}
#: The problems ``--repair`` mends; the others (unknown node ids) it refuses too.
REPAIRABLE = ("malformed", "duplicate", "backwards", "non-holder")
_KEY = re.compile(r"^#\s*([A-Za-z][\w-]*)\s*=\s*(.*?)\s*$")


@dataclass(frozen=True)
class Problem:
    """One problem of a log: its line, the rule it breaks (``malformed``, ``duplicate``,
    ``backwards``, ``non-holder``, ``unknown-node``) and what is wrong, in one line."""

    line: int
    rule: str
    text: str


@dataclass(frozen=True, eq=False)
class LogLines:
    """The lines of a log, read but not yet checked against the graph.

    Attributes
    ----------
    name
        The file, as given (error messages name it).
    protocol
        ``walk`` or ``gossip``, from the column line.
    header, header_at
        The header's parameters, and the line of each.
    columns_at
        The line of the column line.
    line, run, t, token, sender, receiver
        One entry per well-formed line: its line number and fields (``token`` is 0 in a
        gossip log; ``t`` a gossip round).
    malformed
        The lines that could not be read.
    names, named
        A label-keyed log (some sender or receiver not a whole number): ``(lines, 2)``,
        each line's sender and receiver as written, and which of them are not whole
        numbers (their ids are -1 until :func:`relabel` maps the names through the
        graph's labels; unmapped, they are malformed). ``None`` otherwise.
    """

    name: str
    protocol: str
    header: dict[str, Any]
    header_at: dict[str, int]
    columns_at: int
    line: np.ndarray
    run: np.ndarray
    t: np.ndarray
    token: np.ndarray
    sender: np.ndarray
    receiver: np.ndarray
    malformed: tuple[Problem, ...] = ()
    names: np.ndarray | None = None
    named: np.ndarray | None = None

    @property
    def size(self) -> int:
        """Well-formed lines."""
        return int(self.line.size)

    def take(self, rows: np.ndarray) -> LogLines:
        """The log with only ``rows`` (an index array or a mask), in that order."""
        return dataclasses.replace(
            self, line=self.line[rows], run=self.run[rows], t=self.t[rows],
            token=self.token[rows], sender=self.sender[rows], receiver=self.receiver[rows],
            malformed=(), names=None if self.names is None else self.names[rows],
            named=None if self.named is None else self.named[rows])

    def unnamed(self) -> tuple[LogLines, list[Problem]]:
        """The lines whose sender and receiver are whole numbers, and a malformed problem
        for each other line (a name the graph's labels did not map: :func:`relabel`)."""
        if self.named is None:
            return self, []
        bad = self.named.any(axis=1)
        problems = [Problem(int(self.line[i]), "malformed", f"the "
                            f"{'sender' if self.named[i, 0] else 'receiver'} field is not a "
                            "whole number") for i in np.flatnonzero(bad)]
        return self.take(np.flatnonzero(~bad)), problems

    def error(self, text: str, line: int | None = None) -> InputError:
        """The one-line refusal, naming the file (and the line)."""
        where = "" if line is None else f"line {line}: "
        return InputError(self.name, where + text, positional=True)

    def groups(self) -> np.ndarray:
        """Each line's group: the token of its run (walk), or its run (gossip), numbered in
        the order of (run, token). A token id near 2^63 (a log's, any int64 is read) would
        overflow ``run * (max token + 1)``: the pairs are then numbered by their order."""
        width = int(self.token.max()) + 1 if self.size else 1
        if not self.size or (int(self.run.min()) >= 0 and int(self.token.min()) >= 0
                             and (int(self.run.max()) + 1) * width < 2**63):
            return self.run * width + self.token
        pairs = np.stack([self.run, self.token], axis=1)
        return np.unique(pairs, axis=0, return_inverse=True)[1].reshape(-1).astype(np.int64)


# -- writing ------------------------------------------------------------------------------


def header_text(params: Mapping[str, Any], protocol: str, runs: bool) -> str:
    """The header and column line of a log: ``# key = value`` lines, then the columns
    (with the ``run`` column when ``runs``)."""
    lines = [FIRST_LINE, *(f"# {key} = {toml_value(value)}" for key, value in params.items()),
             ",".join(((RUN,) if runs else ()) + COLUMNS[protocol])]
    return "\n".join(lines) + "\n"


def toml_value(value: Any) -> str:
    """A parameter as a TOML value (strings quoted, booleans lower case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ("nan" if math.isnan(value)
                                                          else ("inf" if value > 0 else "-inf"))
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(str(value))


def trace_lines(trace: Trace, run: int | None) -> str:
    """One run's lines: a walk's hops (in time order, then by token) or gossip's messages
    (round by round); ``run`` is the value of the ``run`` column (``None``: none)."""
    if trace.gossip is not None:
        cols = list(trace.gossip.all_messages())
    else:
        tokens, steps = trace.holders.shape
        times = trace.hop_times()[:, 1:].ravel()
        token = np.repeat(np.arange(tokens), steps - 1)
        order = np.lexsort((token, times))
        cols = [times[order], token[order], trace.holders[:, :-1].ravel()[order],
                trace.holders[:, 1:].ravel()[order]]
    if cols[0].dtype.kind == "f" and np.array_equal(cols[0], np.round(cols[0])):
        cols[0] = cols[0].astype(np.int64)  # whole times as integers: 3, not 3.0
    if run is not None:
        cols.insert(0, np.full(cols[0].size, run))
    text = [c.astype(str) for c in cols]
    return "".join(",".join(row) + "\n" for row in zip(*text, strict=True))


# -- reading ------------------------------------------------------------------------------


def read(path: str | Path, repair: bool = False) -> LogLines:
    """Read a log file: its header, its column line and its well-formed lines (the
    malformed ones listed, not refused). The parse's seconds (and with ``repair`` the
    repair's, :func:`repair`) are estimated from the line count and checked against the
    time limit before parsing."""
    name = str(path)
    check_regular(path, "LOG", "a log file (CSV with a '#' header)", positional=True)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(name, "cannot read: not a UTF-8 text file", positional=True) from None
    except OSError as exc:
        raise InputError(name, f"cannot read: {exc.strerror or exc}", positional=True) from None
    lines = text.count("\n")  # the parse's cost, before parsing (a 10^6-line log: 4 s)
    parts = {f"reading {Path(path).name} ({lines} lines)": (lines * LOG_LINE_SECONDS, "LOG")}
    if repair:
        parts[f"repairing {Path(path).name} ({lines} lines)"] = (lines * REPAIR_LINE_SECONDS,
                                                                 "LOG")
    check_seconds(parts)
    return parse(text, name)


#: Seconds a log's line takes to parse and check (4.3 us measured on a 10^6-line log, on
#: a busy machine, lowered: an estimate errs towards the shorter run).
LOG_LINE_SECONDS = 4e-6
#: Seconds a log's line takes to repair, with the listing of its problems before
#: (:func:`repair`, :func:`problems`): 0.8 to 5.5 us measured on 10^5 to 10^6 lines (half
#: the tokens broken, or 30 % of the hops and the lines shuffled), lowered.
REPAIR_LINE_SECONDS = 2e-6


def parse(text: str, name: str = "<log>") -> LogLines:
    """A log from its text (see :func:`read`)."""
    lines = text.splitlines()
    header: dict[str, Any] = {}
    header_at: dict[str, int] = {}
    start = 0
    for i, raw in enumerate(lines, 1):
        stripped = raw.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            start = i
            break
        match = _KEY.match(stripped)
        if match:
            key, value = match.group(1).replace("-", "_"), match.group(2)
            if key in header:
                raise InputError(name, f"line {i}: a header key given twice (also on line "
                                 f"{header_at[key]})", positional=True)
            try:
                header[key] = loads_toml(f"v = {value}")["v"]
            except ValueError:  # not TOML, nested too deep, an integer too long
                raise InputError(name, f"line {i}: the value of a '# key = value' header "
                                 "line is not a TOML value (a number, true/false or a "
                                 "\"quoted string\")", positional=True) from None
            header_at[key] = i
    if not start:
        raise InputError(name, "empty log: no column line and no hop or message line",
                         positional=True)
    columns = tuple(c.strip() for c in lines[start - 1].split(","))
    protocol = next((p for p, cols in COLUMNS.items()
                     if columns in (cols, (RUN, *cols))), None)
    if protocol is None:
        raise InputError(name, f"line {start}: expected the column line t,token,sender,"
                         "receiver (a walk) or t,sender,receiver (gossip), either with a "
                         "leading run column", positional=True)
    numbers, data = [], []
    for i in range(start + 1, len(lines) + 1):
        stripped = lines[i - 1].strip()
        if stripped and not stripped.startswith("#"):
            numbers.append(i)
            data.append(stripped)
    if not data:
        raise InputError(name, f"empty log: no {'hop' if protocol == 'walk' else 'message'} "
                         f"line after the column line (line {start})", positional=True)
    fields, malformed = _fields(data, numbers, columns, protocol)
    at = np.asarray(numbers, dtype=np.int64)[fields.pop("rows")]
    zeros = np.zeros(at.size, dtype=np.int64)
    names, named = fields.pop("names", None), fields.pop("named", None)
    return LogLines(name, protocol, header, header_at, start, at, fields.get(RUN, zeros),
                    fields["t"], fields.get("token", zeros), fields["sender"],
                    fields["receiver"], tuple(malformed), names, named)


def _fields(data: list[str], numbers: list[int], columns: tuple[str, ...],
            protocol: str) -> tuple[dict[str, np.ndarray], list[Problem]]:
    """The columns of the well-formed lines (``rows``: which lines they are) and the
    malformed lines: a wrong number of fields, or a field that is not a number of its
    kind (``t``: a finite number, a whole round for gossip; the others whole numbers,
    ``run`` and ``token`` at least 0)."""
    split = [line.split(",") for line in data]
    widths = np.fromiter(map(len, split), dtype=np.int64, count=len(split))
    problems = [Problem(numbers[i], "malformed", f"{widths[i]} field(s), expected "
                        f"{len(columns)} ({','.join(columns)})")
                for i in np.flatnonzero(widths != len(columns))]
    rows = np.flatnonzero(widths == len(columns))
    table = np.array([split[i] for i in rows], dtype=str).reshape(rows.size, len(columns))
    good = np.ones(rows.size, dtype=bool)
    out: dict[str, np.ndarray] = {}
    named = np.zeros((rows.size, 2), dtype=bool)
    for j, column in enumerate(columns):
        whole = column != "t" or protocol == "gossip"
        values, bad = _numbers(np.char.strip(table[:, j]), whole)
        if column in ("sender", "receiver"):  # a name: a label-keyed log (relabel)
            named[:, int(column == "receiver")] = bad
            values[bad] = -1
            out[column] = values
            continue
        least = 0 if column in (RUN, "token") or (column == "t" and whole) else None
        if least is not None:
            bad |= ~bad & (values < least)
        for i in np.flatnonzero(bad & good):
            kind = ("a whole round >= 0" if column == "t" else "a whole number >= 0") \
                if least is not None else ("a whole number" if whole else "a finite number")
            problems.append(Problem(numbers[rows[i]], "malformed",
                                    f"the {column} field is not {kind}"))
        good &= ~bad
        out[column] = values
    out = {k: v[good] for k, v in out.items()}
    if named[good].any():
        at = [columns.index("sender"), columns.index("receiver")]
        out["names"] = np.char.strip(table[good][:, at])
        out["named"] = named[good]
    out["rows"] = rows[good]
    return out, sorted(problems, key=lambda p: p.line)


def _numbers(text: np.ndarray, whole: bool) -> tuple[np.ndarray, np.ndarray]:
    """Numbers from strings, and which could not be read (``whole``: integers)."""
    kind = np.int64 if whole else np.float64
    try:
        values = text.astype(kind)
        bad = np.zeros(text.size, dtype=bool) if whole else ~np.isfinite(values)
        return values, bad
    except (ValueError, OverflowError):
        pass
    values = np.zeros(text.size, dtype=kind)
    bad = np.zeros(text.size, dtype=bool)
    for i, s in enumerate(text.tolist()):  # only when a field is bad: find which
        try:
            values[i] = int(s) if whole else float(s)
            bad[i] = not whole and not math.isfinite(values[i])
        except (ValueError, OverflowError):
            bad[i] = True
    return values, bad


# -- checking and repairing ---------------------------------------------------------------


def problems(log: LogLines, n: int) -> list[Problem]:
    """Every problem of the lines, by line: malformed lines, node ids outside ``0..n-1``,
    exact duplicates of an earlier line, time going backwards within a token's hops (a
    gossip run's rounds) in the file's order, and (walks) a hop from a node that does not
    hold the token (the receiver of the token's previous hop, in time order)."""
    log, out = log.unnamed()
    out += list(log.malformed)
    for role in ("sender", "receiver"):
        ids = getattr(log, role)
        for i in np.flatnonzero((ids < 0) | (ids >= n)):
            out.append(Problem(int(log.line[i]), "unknown-node", f"the {role} field is not "
                               f"a node id (0..{n - 1}, n = {n})"))  # the id read: not echoed
    first = _first_copy(log)
    for i in np.flatnonzero(first != np.arange(log.size)):
        out.append(Problem(int(log.line[i]), "duplicate",
                           f"repeats line {log.line[first[i]]} exactly"))
    kept = log.take(np.flatnonzero(first == np.arange(log.size)))
    # the values read (times, node, token and run ids) are not echoed: lines and fields
    what = ("the token's previous hop", "a token's hops") if log.protocol == "walk" else \
        ("the run's previous message", "a run's messages")
    group = kept.groups()
    order = np.lexsort((np.arange(kept.size), group))
    prev, cur = order[:-1], order[1:]
    back = (group[prev] == group[cur]) & (kept.t[cur] < kept.t[prev])
    for p, c in zip(prev[back], cur[back], strict=True):
        out.append(Problem(int(kept.line[c]), "backwards", f"the t field is earlier than "
                           f"line {kept.line[p]}'s, {what[0]} ({what[1]} come in time "
                           "order)"))
    if log.protocol == "walk":
        order = np.lexsort((np.arange(kept.size), kept.t, group))
        prev, cur = order[:-1], order[1:]
        wrong = (group[prev] == group[cur]) & (kept.sender[cur] != kept.receiver[prev])
        for p, c in zip(prev[wrong], cur[wrong], strict=True):
            out.append(Problem(int(kept.line[c]), "non-holder", "the sender field is not the "
                               "token's holder (a hop's sender is the receiver of the "
                               f"token's previous hop, line {kept.line[p]})"))
    return sorted(out, key=lambda p: (p.line, REPAIRABLE.index(p.rule)
                                      if p.rule in REPAIRABLE else -1))


def repair(log: LogLines) -> tuple[LogLines, list[str]]:
    """The documented repair, and a note for each rule that changed something: drop the
    malformed lines; drop the exact duplicates of an earlier line; sort each token's hops
    (each gossip run's messages) by time, ties in the file's order; then (walks) drop each
    hop whose sender does not hold the token (the receiver of its last hop kept). Node ids
    outside ``0..n-1`` are not repaired."""
    notes = []
    log, named = log.unnamed()
    malformed = sorted(p.line for p in [*named, *log.malformed])
    if malformed:
        notes.append(f"dropped {len(malformed)} malformed line(s) (first: line "
                     f"{malformed[0]})")
    first = _first_copy(log)
    copies = int((first != np.arange(log.size)).sum())
    if copies:
        notes.append(f"dropped {copies} exact duplicate line(s)")
    log = log.take(np.flatnonzero(first == np.arange(log.size)))
    group = log.groups()
    order = np.lexsort((np.arange(log.size), log.t, group))
    moved = np.flatnonzero(order != np.lexsort((np.arange(log.size), group)))
    if moved.size:
        groups = np.unique(group[order][moved]).size
        unit = "token(s)" if log.protocol == "walk" else "run(s)"
        notes.append(f"sorted the lines of {groups} {unit} by time ({moved.size} line(s) "
                     "moved)")
    log = log.take(order)
    if log.protocol == "walk":
        keep = _holders_kept(log)
        if not keep.all():
            notes.append(f"dropped {int((~keep).sum())} hop(s) from a node that did not hold "
                         f"the token (first: line {log.line[~keep][0]})")
            log = log.take(np.flatnonzero(keep))
    return log, notes


def relabel(log: LogLines, labels: Sequence[Any], graph: str) -> LogLines:
    """A label-keyed log's lines with every sender and receiver mapped through the graph's
    node ``labels`` (``labels[i]`` is node i; a field matches a label written as
    ``str(label)``); a field that is no label is refused, naming its line."""
    if log.names is None:
        return log
    index = {str(label): i for i, label in enumerate(labels)}
    ids = []
    for col in (0, 1):
        keys, inverse = np.unique(log.names[:, col], return_inverse=True)
        ids.append(np.array([index.get(str(k), -1) for k in keys],
                            dtype=np.int64)[inverse].reshape(-1))
    unknown = np.stack(ids, axis=1) < 0
    if unknown.any():
        i, col = (int(x) for x in np.argwhere(unknown)[0])  # the first line, sender first
        raise log.error(f"the {('sender', 'receiver')[col]} is not a node of {graph}: a "
                        "label-keyed log names nodes by the graph's labels", int(log.line[i]))
    return dataclasses.replace(log, sender=ids[0], receiver=ids[1], names=None, named=None)


def _first_copy(log: LogLines) -> np.ndarray:
    """For each line, the index of the first line with exactly the same fields."""
    cols = [log.run, log.token, log.sender, log.receiver,
            log.t.astype(np.float64).view(np.int64)]
    order = np.lexsort([np.arange(log.size), *cols[::-1]])  # copies together, in order
    new = np.zeros(log.size, dtype=bool)
    new[:1] = True
    for col in cols:  # a line unlike the one before it starts a group
        ranked = col[order]
        new[1:] |= ranked[1:] != ranked[:-1]
    first = np.empty(log.size, dtype=np.int64)
    first[order] = order[np.flatnonzero(new)][np.cumsum(new) - 1]
    return first


def _holders_kept(log: LogLines) -> np.ndarray:
    """Which hops of a log sorted by token and time to keep: each hop whose sender holds
    the token (a token's first hop sets its first holder)."""
    group = log.groups()
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])  # each token's lines
    ends = np.r_[starts[1:], log.size]
    keep = np.ones(log.size, dtype=bool)
    wrong = np.flatnonzero((group[1:] == group[:-1]) & (log.sender[1:] != log.receiver[:-1]))
    # only the tokens that need it, hop by hop, each on its own lines (a mask of the whole
    # log per token was quadratic: 0.9 s for 10^5 lines of 2-hop tokens)
    for k in np.unique(np.searchsorted(starts, wrong + 1, side="right") - 1).tolist():
        a, b = int(starts[k]), int(ends[k])
        senders, receivers = log.sender[a:b].tolist(), log.receiver[a:b].tolist()
        holder = receivers[0]
        for i in range(1, b - a):
            if senders[i] != holder:
                keep[a + i] = False
            else:
                holder = receivers[i]
    return keep


# -- the trace ----------------------------------------------------------------------------


def walk_shape(log: LogLines) -> tuple[int, int, int]:
    """``(runs, tokens, steps)`` of a walk log whose lines are checked: runs ``0..R-1``,
    each with tokens ``0..K-1``, each token making the same number of hops (``steps`` is
    one more: the first holder contributes too)."""
    runs = count_runs(log)
    tokens = 0
    hops: set[int] = set()
    first_run = int(log.line[log.run == 0].min()) if runs else 0
    for r in range(runs):
        mine = log.run == r
        at = int(log.line[mine].min())  # the run named by its first line, not its id
        k = _count(log, log.token[mine], "token", at)
        if tokens and k != tokens:
            raise log.error(f"the run of this line (its run field) moves {k} token(s), the "
                            f"run of line {first_run} moves {tokens}: every run moves the "
                            "same tokens", at)
        tokens = k
        counts = np.bincount(log.token[mine], minlength=k)
        for token in np.flatnonzero(counts != counts[0]):
            last = int(log.line[mine & (log.token == token)].max())
            zero = int(log.line[mine & (log.token == 0)].max())
            raise log.error(f"the token of this line (its run and token fields) makes "
                            f"{counts[token]} hop(s), the token of line {zero} makes "
                            f"{counts[0]}: every token makes the same number of hops", last)
        hops.add(int(counts[0]))
    if len(hops) > 1:
        raise log.error(f"the runs' tokens make {' or '.join(map(str, sorted(hops)))} hops: "
                        "every run makes the same number")
    return runs, tokens, hops.pop() + 1


def count_runs(log: LogLines) -> int:
    """How many runs ``0..R-1`` the log holds (a gap is refused)."""
    return _count(log, log.run, "run")


def _count(log: LogLines, ids: np.ndarray, what: str, at: int | None = None) -> int:
    """How many ids ``0..K-1`` appear (``what``: run or token; ``at``: the first line of
    the run whose tokens they are), refusing a gap."""
    present = np.unique(ids)
    if not present.size:
        raise log.error("no well-formed line left to account")
    # the first id i with no line: present is sorted, so present[i] != i there (no range
    # up to the largest id is made: an id of 2^63 - 1 overflowed numpy's arange, and its
    # bincount corrupted the heap); the ids read are not echoed: the missing id is not in
    # the file, and the run is named by its first line
    gap = np.flatnonzero(present != np.arange(present.size))
    if gap.size:
        where = "" if at is None else f" in the run of line {at}"
        raise log.error(f"no line for {what} {int(gap[0])}{where} (the {what} ids are 0..K-1 "
                        f"without a gap; the log has {present.size} distinct one(s))")
    return int(present.size)


def walk_traces(log: LogLines, topology: Topology, walk: str, engine: str) -> list[Trace]:
    """Each run's :class:`Trace`, its hops checked against the moves of the ``walk`` rule
    on ``topology`` (a hop the walk cannot make is refused, naming its line)."""
    runs, tokens, steps = walk_shape(log)
    if topology.time_varying:  # the hop at step t moves with the snapshot of t - 1
        step = log.t.astype(np.int64)
        bad = np.flatnonzero((step != log.t) | (step < 1))
        if bad.size:
            raise log.error("on a time-varying graph a hop's t is its step (1, 2, ...: the "
                            "vector engine's clock)", int(log.line[int(bad[0])]))
        can = np.zeros(log.size, dtype=bool)
        snapshot = np.asarray(topology.snapshot_at(step - 1))  # type: ignore[attr-defined]
        for k in np.unique(snapshot).tolist():
            mine = snapshot == k
            can[mine] = possible_hops(topology.snapshots[k],  # type: ignore[attr-defined]
                                      walk, log.sender[mine], log.receiver[mine])
    else:
        can = possible_hops(topology, walk, log.sender, log.receiver)
    if not can.all():
        i = int(np.flatnonzero(~can)[0])
        raise log.error(f"the hop (its sender and receiver fields) is not a move of the "
                        f"{walk} walk on {topology.describe()}", int(log.line[i]))
    log = log.take(np.lexsort((np.arange(log.size), log.t, log.token, log.run)))
    shape = (runs, tokens, steps - 1)
    senders, receivers = log.sender.reshape(shape), log.receiver.reshape(shape)
    times = log.t.reshape(shape).astype(np.float64)
    evenly = np.array_equal(times, np.broadcast_to(np.arange(1.0, steps), shape))
    dtype = holder_dtype(topology.n)
    out = []
    for r in range(runs):
        holders = np.concatenate([senders[r, :, :1], receivers[r]], axis=1).astype(dtype)
        at = None if evenly else np.concatenate([times[r, :, :1], times[r]], axis=1)
        out.append(Trace(topology.n, holders, at, 1.0, engine))
    return out


def possible_hops(topology: Topology, walk: str, sender: np.ndarray,
                  receiver: np.ndarray) -> np.ndarray:
    """Which hops ``sender -> receiver`` the ``walk`` rule can make on ``topology``."""
    kind, n = topology.walk_kind, topology.n
    if kind.uniform:  # any node, itself only with self-moves
        return (sender != receiver) | topology.self_moves
    if kind.public_schedule:
        return receiver == (sender + 1) % n
    matrix = topology.transition(walk).tocsr()
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(matrix.indptr))
    real = matrix.data > 0  # a stored zero is no move
    moves = np.sort(rows[real] * n + matrix.indices[real].astype(np.int64))
    hops = sender.astype(np.int64) * n + receiver.astype(np.int64)
    at = np.minimum(np.searchsorted(moves, hops), moves.size - 1)
    return moves[at] == hops


def first_problem(log: LogLines, found: Sequence[Problem], repairing: bool) -> InputError:
    """The refusal for the first of ``found`` problems: its line, and how many more."""
    first, more = found[0], len(found) - 1
    notes = [f"{more} more problem(s)"] if more else []
    if not repairing and all(p.rule in REPAIRABLE for p in found):
        notes.append("--repair mends " + ("them" if more else "it"))
    return log.error(first.text + (f" ({'; '.join(notes)})" if notes else ""), first.line)
