"""``account(log) -> Report``: the pairwise privacy of a deployment's log, and the log that
``simulate(..., trace_out=FILE)`` writes of its own runs.

    log -> read, check (or repair) -> config from its header and the caller's parameters
        -> task.prepare -> each run's trace from the log -> the task's tracker -> Report

The tracker is the task's own (:meth:`netdp.tasks.base.Task.tracker`), fed the log's
traces in place of the engine's. A log says who held the token (who sent to whom), not
what they added: the report has no utility. The format, the checks and the repairs are in
:mod:`netdp.engine.trace_log` and ``docs/your-network.md``.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from netdp.core import arguments
from netdp.core.config import flat_params
from netdp.core.errors import InputError, check
from netdp.core.files import atomic
from netdp.core.params import MAX_SIGMA, MIN_SIGMA, params_of
from netdp.core.sections import COLUMN, DATA_FILE
from netdp.core.setup import Setup
from netdp.core.simulation_config import SimulationConfig
from netdp.core.version import __version__
from netdp.engine import gossip_log, trace_log
from netdp.engine.faults import from_config
from netdp.engine.trace import Trace
from netdp.engine.trace_log import LogLines
from netdp.graphs.node_names import is_label
from netdp.graphs.topologies import is_named
from netdp.graphs.walk_kind import kind_of
from netdp.report.types import Report, RunRecord, Utility
from netdp.run import log_graph
from netdp.run.resources import check_footprint
from netdp.tasks import get_task, make_config, param_specs
from netdp.tasks.base import report_parts
from netdp.tasks.preparation import build_topology, with_seed

#: What a log's lines give (a header or a caller may state them: they must agree).
FROM_LINES = ("steps", "rounds", "tokens", "runs")
#: What ``--trace-out`` leaves out of the header: the accountant's choices (``account``'s
#: own parameters), the engine's timing, faults (refused), what malicious holders add and
#: the values (a log holds none).
NOT_WRITTEN = ("accountants", "convention", "coalition", "engine", "latency", "service_time",
               "loss", "churn", "crash", "slow", "on_loss", "timeout", "retries", "malicious",
               "attack", "data", DATA_FILE, COLUMN)
#: Written even at their defaults: what any deployment's log states.
ALWAYS = ("protocol", "task", "topology", "nodes", "epsilon", "delta", "mechanism",
          "gossip_matrix")
NO_UTILITY = ("a log records who held the token, not the values: the task's utility is "
              "not available")
#: Flag names whose field is named otherwise, for errors on a header's key.
_FIELDS = {"range": "low", "accountant": "accountants", "no_self_moves": "self_moves"}
#: The ``(got VALUE)`` of a refusal: a header's value, not quoted back.
_GOT = re.compile(r"\s*\(got .*\)\s*$")


def log_params(config: SimulationConfig) -> dict[str, Any]:
    """The header of a run's log: the deployment's parameters (:data:`ALWAYS`, and every
    other that differs from its default), without :data:`FROM_LINES` and
    :data:`NOT_WRITTEN`."""
    assert config.section is not None
    defaults = {name: default for name, _, default in params_of(SimulationConfig)}
    defaults.update({name: default for name, _, default in params_of(config.section)})
    out = {}
    for key, value in config.to_dict().items():
        if key in FROM_LINES or key in NOT_WRITTEN or value is None:
            continue
        default = defaults.get(key)
        if key in ALWAYS or value != (list(default) if isinstance(default, tuple) else default):
            out[key] = value
    return out


@contextlib.contextmanager
def trace_writer(path: str | Path, setup: Setup) -> Iterator[Callable[[int, Trace], None]]:
    """Write the log of the runs of ``setup`` to ``path`` (atomically: the whole log or
    nothing): its header, then ``write(run, trace)`` for each run."""
    config = setup.config
    check(from_config(config) is None, "trace-out", "a run with faults loses tokens and "
          "messages: its log is not offered (leave the fault flags out)")
    runs = config.runs > 1
    params = log_params(config)
    if log_graph.names_file(config.topology, config.graph, folder=True):  # from the log
        graph = log_graph.recorded(config.topology, path)
        params = {k: w for key, value in params.items()
                  for k, w in (graph.items() if key == "topology" else [(key, value)])}
    with atomic(path, param="trace-out") as fh:
        fh.write(trace_log.header_text(params, config.protocol, runs).encode("utf-8"))

        def write(run: int, trace: Trace) -> None:
            fh.write(trace_log.trace_lines(trace, run if runs else None).encode("utf-8"))

        yield write


@dataclass(frozen=True, eq=False)
class FromLog(Utility):
    """In place of the utility: what was read of the log, and what its repair changed."""

    file: str
    read: int
    kept: int
    protocol: str
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"available": False, "note": NO_UTILITY}

    def section(self) -> dict[str, Any]:
        """The ``log`` object of the JSON result."""
        return {"file": self.file, "lines": self.read, "accounted": self.kept,
                "protocol": self.protocol, "repairs": list(self.notes)}

    def lines(self, report: Report) -> list[str]:
        what = "hop" if self.protocol == "walk" else "message"
        done = ("repaired: " + "; ".join(self.notes)) if self.notes else "no problem found"
        return [f"  log     {self.file}: {self.read:,} {what} line(s) read, {self.kept:,} "
                f"accounted; {done}",
                f"  utility not available ({NO_UTILITY.split(':')[0]})"]


def account(log: str | Path, *, repair: bool = False, keep_pairs: bool = False,
            observer: int | str | None = None, **params: Any) -> Report:
    """The pairwise privacy report of a deployment's log.

    Parameters
    ----------
    log
        The log file (:mod:`netdp.engine.trace_log`; ``netdp simulate --trace-out``
        writes one).
    repair
        Mend what can be mended (malformed lines, duplicates, lines out of time order,
        hops from a node that does not hold the token) and say so in the report; without
        it the first problem is refused.
    keep_pairs
        Also return the ``n x n`` matrix of pairwise losses (:attr:`Report.pairs`).
    observer
        Report every node's loss towards this node only (a coalition of one): its id, or
        its label on a labelled graph (``"Medici"``).
    **params
        Parameters of ``netdp simulate`` (``topology``, ``nodes``, ``epsilon`` or
        ``sigma``, ``delta``, ``accountants``, ``coalition``, ...): they override the
        log's header; ``sigma`` (the noise std in units of the sensitivity) replaces
        ``epsilon`` on a walk by the exact ε(δ) of that Gaussian.

    Raises
    ------
    InputError
        On a problem of the log (naming the file and the line), or a parameter out of
        range or of the wrong type (any argument); a task whose tracker a log cannot
        drive (sgd).
    """
    log = arguments.path(log, "log")
    repair = bool(arguments.flag(repair, "repair"))
    keep_pairs = bool(arguments.flag(keep_pairs, "keep_pairs"))
    observer = _observer(observer)
    params = {key: arguments.plain(value) for key, value in params.items()}  # np.int64(6): 6
    if "topology" in params:  # a relative file: here, else beside the log
        params["topology"] = log_graph.located(params["topology"], log)
    lines = trace_log.read(log, repair)
    given = _given(lines, params, observer)
    merged = _merged(lines, given)
    _no_named_files(lines, given, merged)
    log_graph.check_hash(lines, given)  # the graph file you name: the log's?
    nodes = merged.get("nodes")
    if not isinstance(nodes, int) or isinstance(nodes, bool) or nodes < 2:
        raise InputError("nodes", "the log's header does not state n, the number of nodes "
                         "(ids 0..n-1, n >= 2): add '# nodes = N' or give --nodes N")
    check(not isinstance(observer, int) or observer < nodes, "observer",
          f"must be a node id in 0..{nodes - 1} or a node label (got {observer})")
    read = lines.size + len(lines.malformed)
    if lines.names is not None:
        with _as_observer(observer):
            lines = _relabelled(lines, merged, given)
    found = trace_log.problems(lines, nodes)
    notes: list[str] = []
    if found:
        fatal = [p for p in found if p.rule not in trace_log.REPAIRABLE]
        if fatal or not repair:
            raise trace_log.first_problem(lines, fatal or found, repair)
        lines, notes = trace_log.repair(lines)
    with _naming_header(lines, given), _as_observer(observer):
        task = get_task(merged.get("task", "sum"), merged["protocol"])
        check(task.unlogged is None, "task", f"{task.unlogged}")
        config = with_seed(make_config(_with_shape(lines, merged)))
        check_footprint(task, config)
        setup = task.prepare(config)
    cfg, topo = setup.config, setup.topology
    check(topo.n == nodes, "nodes", f"the topology {cfg.topology} has {topo.n} nodes, the "
          f"log states n = {nodes}")
    if lines.protocol == "walk":
        traces = trace_log.walk_traces(lines, topo, cfg.walk, cfg.engine)
    else:
        traces = gossip_log.gossip_traces(lines, topo, cfg.engine,
                                           getattr(setup, "schedule", "sync"))
    check(traces[0].steps == setup.steps or lines.protocol == "gossip", "steps",
          f"the log's tokens make {traces[0].steps} contributions; the setup makes "
          f"{setup.steps}")
    tracker = task.tracker(setup, keep_pairs)
    records = []
    for r, trace in enumerate(traces):
        start = time.perf_counter()
        tracker.add(r, trace, None)  # no outcome: the tracker reads the trace alone
        records.append(RunRecord(r, {}, trace.hops, time.perf_counter() - start))
    mechanism, process, _ = report_parts(task, setup, ())
    facts = FromLog(lines.name, read, lines.size, lines.protocol, tuple(notes))
    return Report(config=cfg, version=__version__, engine=cfg.engine, topology=topo,
                  mechanism=mechanism, runs=tuple(records), utility=facts,
                  privacy=tracker.report(), sections={"log": facts.section()},
                  pairs=tracker.matrix(), process=process)


def _relabelled(lines: LogLines, merged: dict[str, Any], given: Mapping[str, Any]) -> LogLines:
    """A label-keyed log (some sender or receiver not a whole number) with every node
    mapped through its graph's labels; a graph without labels leaves the names, which
    are then malformed fields."""
    with _naming_header(lines, given):
        config = with_seed(make_config(merged))
        topology = build_topology(config, merged.get("nodes"))
    merged.setdefault("seed", config.seed)  # the same graph when the run is prepared
    if not topology.labels:
        return lines
    return trace_log.relabel(lines, topology.labels, topology.describe())


def _observer(observer: Any) -> int | str | None:
    """``account``'s observer: a node id, or a node label (text that is no whole number,
    mapped through the graph's labels with the coalition it stands for)."""
    if observer is None:
        return None
    if isinstance(observer, str):
        if is_label(observer):
            text = observer.strip()
            check(bool(text) and "," not in text and not text.startswith("random:"), "observer",
                  f"names one node, by id or label (got {observer!r})")
            return text
        observer = int(observer.strip())
    return arguments.integer(observer, "observer")


@contextlib.contextmanager
def _as_observer(observer: int | str | None) -> Iterator[None]:
    """A refusal of the coalition that stands for ``observer`` names ``--observer``."""
    try:
        yield
    except InputError as exc:
        if observer is None or exc.param != "coalition":
            raise
        raise InputError("observer", exc.message) from None


def _given(lines: LogLines, params: Mapping[str, Any],
           observer: int | str | None) -> dict[str, Any]:
    """The caller's parameters, flat, with ``observer`` as a coalition of one; the header's
    keys checked (each a parameter of ``netdp simulate``)."""
    specs = param_specs()
    for key, at in lines.header_at.items():
        if key not in specs and key not in ("range", log_graph.HASH_KEY):
            raise lines.error("a header key that is not a parameter of netdp simulate "
                              "(netdp simulate --help lists them)", at)
    given = flat_params(dict(params))
    if observer is not None:
        check("coalition" not in given, "observer", "give an observer or a coalition, not "
              "both")
        check(isinstance(observer, str) or (isinstance(observer, int) and observer >= 0),
              "observer", f"expected a node id or a node label (got {observer!r})")
        given["coalition"] = str(observer)
    return given


def _merged(lines: LogLines, given: dict[str, Any]) -> dict[str, Any]:
    """The header's parameters and the caller's (theirs win; a caller's ``epsilon`` or
    ``sigma`` replaces both of the header's), the protocol checked against the columns."""
    header = flat_params({key: value for key, value in lines.header.items()
                          if key != log_graph.HASH_KEY})
    if "epsilon" in given or "sigma" in given:
        header.pop("epsilon", None)
        header.pop("sigma", None)
    merged = {**header, **given}
    protocol = merged.setdefault("protocol", lines.protocol)
    if protocol != lines.protocol:
        shown = f"protocol {protocol!r}"
        if "protocol" not in given:  # the header's value is not quoted
            raise lines.error(f"the protocol is not that of the column line (line "
                              f"{lines.columns_at}), a {lines.protocol} log",
                              lines.header_at["protocol"])
        raise InputError("protocol", f"{lines.name} is a {lines.protocol} log (its column "
                         f"line, line {lines.columns_at}); got {shown}")
    if protocol == "walk" and "sigma" in merged:
        with _naming_header(lines, given):
            merged["epsilon"] = _walk_epsilon(merged)
    return merged


def _opens_file(key: str, value: Any, params: Mapping[str, Any]) -> bool:
    """Whether parameter ``key`` at ``value`` would make netdp open a file (a graph, a
    matrix, a table of values, links or downtimes) rather than make what it names."""
    text = str(value).strip()
    if key == "topology":
        contacts = "contacts" in (params.get("graph_format"), params.get("format"))
        return contacts or not is_named(value)
    if key == "gossip_matrix":
        return text not in ("metropolis", "lazy")
    if key in ("noise_covariance", "secret_pairs"):
        return True
    if key in ("loss", "churn"):
        return text.startswith("file:")
    return key in (DATA_FILE, "dataset")


def _no_named_files(lines: LogLines, given: Mapping[str, Any],
                    merged: Mapping[str, Any]) -> None:
    """Refuse a file the log's header names (and the caller did not): a log never makes
    netdp open a file; the caller names it with the flag the message gives."""
    for key, at in lines.header_at.items():
        if key in given or not _opens_file(key, lines.header[key], merged):
            continue
        flag = (f"--{key} FILE" if key == "topology"
                else f"--set {key}={'file:FILE' if key in ('loss', 'churn') else 'FILE'}")
        beside = (" (a relative FILE not in the current folder is read from the log's, "
                  "where --trace-out writes the header's path from)" if key == "topology"
                  else "")
        raise InputError("topology" if key == "topology" else "set",
                         f"give {flag} to use a file for {key}: the header of {lines.name} "
                         f"(line {at}) names one, and netdp opens no file a log names"
                         + beside)


def _walk_epsilon(params: dict[str, Any]) -> float:
    """A walk's ε0 from ``sigma`` (in units of the sensitivity): the exact ε(δ) of that
    Gaussian, i.e. the analytic calibration inverted."""
    from netdp.accounting.gdp import gaussian_epsilon

    sigma, delta = params.pop("sigma"), params.get("delta", 1e-6)
    check(params.get("mechanism", "gaussian") == "gaussian", "sigma",
          f"states Gaussian noise; the mechanism is {params.get('mechanism')} (give epsilon)")
    check(isinstance(sigma, int | float) and not isinstance(sigma, bool)
          and MIN_SIGMA <= sigma <= MAX_SIGMA, "sigma",
          f"must be a finite number in the range [{MIN_SIGMA:g}, {MAX_SIGMA:g}] (got {sigma!r})")
    check(isinstance(delta, float) and 0 < delta < 1, "delta", f"must be in (0, 1) "
          f"(got {delta!r})")
    return float(gaussian_epsilon(1.0 / sigma, delta))


def _with_shape(lines: LogLines, params: dict[str, Any]) -> dict[str, Any]:
    """The parameters with what the lines give (runs, tokens, steps; full turns on the
    ring); a header or caller that states one must agree."""
    if "topology" not in params:
        raise InputError("topology", "give --topology NAME|FILE: the log's header does not "
                         "name the graph (add '# topology = \"NAME\"'; the hidden paths of a "
                         "walk, and the edges of gossip, depend on it)")
    if lines.protocol == "gossip":
        schedule = str(params.get("gossip_schedule", "sync"))
        shape = {"runs": trace_log.count_runs(lines),
                 "steps": gossip_log.log_steps(lines, schedule, params.get("nodes", 1))}
        if shape["steps"] < 1:
            raise lines.error("a gossip log holds the rounds 0..T, T >= 1 (here only round 0)")
    else:
        runs, tokens, steps = trace_log.walk_shape(lines)
        shape = {"runs": runs, "tokens": tokens, "steps": steps}
        if kind_of(str(params["topology"])).public_schedule:
            n = params["nodes"]
            if steps % n:
                raise lines.error(f"the ring runs full turns: each token makes {steps} "
                                  f"contributions, not a multiple of n = {n}")
            shape = {"runs": runs, "tokens": tokens, "rounds": steps // n}
    for key, value in shape.items():
        if key in params and params[key] != value:
            raise lines.error(f"{key} is not what the lines give ({value})",
                              lines.header_at.get(key))
    return {**params, **shape}


@contextlib.contextmanager
def _naming_header(lines: LogLines, given: Mapping[str, Any]) -> Iterator[None]:
    """An :class:`InputError` on a parameter the log's header gave (and the caller did not)
    names the header's line; on one its lines make (:data:`FROM_LINES`: a time estimate
    driven by the steps), the log."""
    try:
        yield
    except InputError as exc:
        key = exc.param.replace("-", "_")
        key = _FIELDS.get(key, key)
        at = lines.header_at.get(key) or (lines.header_at.get("range") if key in
                                          ("low", "high") else None)
        if key in given or (at is None and key not in FROM_LINES):
            raise
        raise lines.error(f"{key}: {_GOT.sub('', exc.message)}", at) from None
