"""Gossip averaging (Muffliato, Cyffers, Even, Bellet, Massoulié, NeurIPS 2022): the mean
of the nodes' values, by ``--task sum --protocol gossip``.

Every node adds ``N(0, σ²Δ²)`` to its value once, then all nodes run ``T`` synchronous
steps ``x ← W x`` (or Chebyshev-accelerated steps) with a symmetric, doubly stochastic
gossip matrix ``W``; every node ends near the mean. A node ``v`` knows its own noisy value
and sees the state of each of its neighbours at every step: a linear Gaussian view of the
noisy values. Its exact Rényi loss about ``u`` is ``α Δ²/(2σ²) ‖Π_v e_u‖²`` (``Π_v`` the
projection onto the view's row space; :func:`netdp.tracking.gossip.joint`), which is what
the tracker reports. The paper's per-message sum ``Σ_t Σ_w (A_t)_{wu}² / ‖(A_t)_{w,:}‖²``
(with ``A_t`` the polynomial actually applied) is reported beside it as theory; it is not
an upper bound (the messages share their noise: ``tests/privacy/test_gossip.py`` shows
pairs where it is below the exact loss).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from netdp.core.errors import check
from netdp.core.params import MAX_SIGMA, MAX_VALUE, MIN_SIGMA, Section, param
from netdp.core.sections import (
    DATA_GROUP,
    check_data_file,
    check_value_range,
    column_param,
    data_file_param,
)
from netdp.core.setup import Streams, View
from netdp.core.simulation_config import SimulationConfig
from netdp.engine import choose
from netdp.engine import gossip_rounds as engine
from netdp.engine.async_gossip import SCHEDULES
from netdp.engine.clock import parse_latency
from netdp.engine.faults import fault_run, from_config
from netdp.engine.trace import Trace
from netdp.graphs.walk_kind import kind_of
from netdp.mechanisms.noise import analytic_sigma
from netdp.report.types import (
    Report,
    Utility,
    fmt,
    row,
)
from netdp.tasks.base import Auditable, NoisyOutput, Reported, Sized, Task, Timed, TimeVarying
from netdp.tasks.preparation import range_worlds
from netdp.tasks.sum import DATA, real_values
from netdp.tracking.base import Tracker, Tracking
from netdp.tracking.gossip_setup import GossipSumSetup

GROUP = "gossip (--protocol gossip)"
#: Most nodes of the closed-form error with a user's covariance (``n³`` flops).
CLOSED_FORM_NODES = 4096
#: Seconds of one node's share of one gossip step (its exchange, its noise, its tracking),
#: measured at 100 nodes and halved (see :data:`netdp.tasks.base.HOP_SECONDS`).
NODE_STEP_SECONDS = 8e-6


def gossip_work(nodes: int, steps: int) -> dict[str, tuple[float, str]]:
    """Seconds one gossip run takes: ``steps`` steps of every node."""
    return {"the gossip steps": (NODE_STEP_SECONDS * nodes * steps, "steps")}


@dataclass(frozen=True)
class GossipSumConfig(Section):
    """Parameters of ``--task sum --protocol gossip``."""

    task = "sum"
    protocol = "gossip"

    sigma: float | None = param(None, "std of the noise every node adds once, in units of the "
                                "sensitivity (the range's width)", kind=float, low=MIN_SIGMA,
                                high=MAX_SIGMA, metavar="S", group=GROUP,
                                default_text="calibrated to --epsilon, --delta (analytic "
                                "Gaussian)")
    gossip_matrix: str = param("metropolis", "the gossip matrix W: metropolis "
                               "(1/(1 + max(d_u, d_v)) on edges), lazy (1/(2 d_max) on "
                               "edges) or a file (.npy, or 'u v w' lines)",
                               metavar="metropolis|lazy|FILE", group=GROUP)
    accelerated: bool = param(False, "Chebyshev acceleration (the accounting uses the "
                              "polynomial actually applied)", group=GROUP)
    gossip_schedule: str = param("sync", "which messages happen: sync (every edge carries "
                                 "both messages at every round, Muffliato), partial (each "
                                 "edge fires with probability --edge-probability per "
                                 "round), pairwise (each node wakes on a rate-1 Poisson "
                                 "clock and averages with a random neighbour; --steps "
                                 "counts time units of n exchanges) or push-pull "
                                 "(PeerSim's cycles: every node wakes once per cycle, in a "
                                 "random order; --steps counts cycles); the privacy of the "
                                 "other schedules is exact for the messages each run sent",
                                 choices=SCHEDULES, metavar="|".join(SCHEDULES), group=GROUP)
    edge_probability: float | None = param(None, "partial rounds: the probability that an "
                                           "edge fires (both ways) at a round, each edge "
                                           "and round independently", kind=float, low=0.0,
                                           low_open=True, high=1.0, metavar="P",
                                           group=GROUP, default_text="none; --gossip-"
                                           "schedule partial needs it")
    correlated_noise: float | None = param(None, "DECOR's correlated noise: the two ends of "
                                           "every edge share a secret of this std (units "
                                           "of the sensitivity), one adds it and the other "
                                           "subtracts it; the secrets cancel in the mean",
                                           kind=float, low=0.0, low_open=True,
                                           high=MAX_SIGMA, metavar="S", group=GROUP,
                                           default_text="no secrets, independent noise "
                                           "only")
    noise_covariance: str | None = param(None, "a .npy file of an n x n covariance "
                                         "(positive semi-definite, units of the sensitivity "
                                         "squared) of correlated noise added to the "
                                         "independent noise; a node knows its own term; "
                                         "from Python, also an array",
                                         kind=str, metavar="FILE", group=GROUP,
                                         default_text="none")
    secret_pairs: str | None = param(None, "DECOR: a file of the node pairs that share a "
                                     "secret, 'a b' per line (ids or the graph's labels), "
                                     "each an edge", kind=str, metavar="FILE", group=GROUP,
                                     default_text="every edge")
    rdp_order: float | None = param(None, "also report the Renyi divergences at this order "
                                    "(unconverted, capped at the LDP level), as the papers "
                                    "plot them", kind=float, low=1.0, low_open=True,
                                    high=1e6, metavar="A", group=GROUP)
    sources: int | None = param(None, "sampled sources for the pairwise accounting of large "
                                "graphs", kind=int, low=1, metavar="K", group=GROUP,
                                default_text="every source up to a few thousand nodes")
    data: str = param("uniform", "synthetic values: uniform on the range, constant "
                      "(midpoint) or normal (clipped)", choices=DATA, group=DATA_GROUP)
    data_file: str | None = data_file_param("the values")
    column: str | None = column_param()
    low: float = param(0.0, "range of the values; its width is the sensitivity",
                       pair="range", low=-MAX_VALUE, high=MAX_VALUE, metavar="LOW",
                       group=DATA_GROUP, default_text="0 1")
    high: float = param(1.0, "range of the values; its width is the sensitivity",
                        pair="range", low=-MAX_VALUE, high=MAX_VALUE, metavar="HIGH",
                        group=DATA_GROUP, default_text="0 1")

    #: ``noise_covariance`` given from Python as an array (the parameter then records it
    #: as ``array: n x n, sha256 PREFIX``).
    covariance: Any = dataclasses.field(default=None, compare=False, repr=False)

    @classmethod
    def objects(cls, data: dict[str, Any]) -> dict[str, Any]:
        given = data.get("noise_covariance")
        if given is None or isinstance(given, str | os.PathLike):
            return {}
        try:
            array = np.asarray(given)
        except (TypeError, ValueError):
            array = np.asarray([])
        check(array.ndim == 2 and array.dtype.kind in "iuf", "noise-covariance",
              "from Python, a 2-D array of real numbers (or a .npy file's name)")
        array = np.ascontiguousarray(array, dtype=np.float64)
        digest = hashlib.sha256(array.tobytes()).hexdigest()[:16]
        data["noise_covariance"] = (f"array: {array.shape[0]} x {array.shape[1]}, sha256 "
                                    f"{digest}")
        return {"covariance": array}

    def validate(self, config: Any) -> None:
        check_value_range(self.low, self.high)
        check_data_file(self)
        check_gossip(config)
        check_schedule(self, config)
        check(self.secret_pairs is None or self.correlated_noise is not None,
              "secret-pairs", "only with --correlated-noise S (the std of DECOR's secrets)")
        if self.noise_covariance is not None and self.covariance is None:
            check(str(self.noise_covariance).endswith(".npy"), "noise-covariance",
                  "must name a .npy file (numpy.save of an n x n matrix)")
        if from_config(config) is not None:
            check(not self.accelerated, "accelerated", "with faults gossip runs plain steps "
                  "(a lost message breaks the Chebyshev recursion); leave --accelerated out")
            check(config.coalition is None, "coalition", "coalitions of a gossip run with "
                  "faults are not tracked yet")


def check_schedule(sec: GossipSumConfig, config: Any) -> None:
    """The schedule's own parameters, and what only synchronous rounds offer."""
    if sec.gossip_schedule == "partial":
        check(sec.edge_probability is not None, "edge-probability", "--gossip-schedule "
              "partial needs the probability that an edge fires per round, in (0, 1]")
    else:
        check(sec.edge_probability is None, "edge-probability", "only --gossip-schedule "
              f"partial takes it (a probability in (0, 1]); the schedule is "
              f"{sec.gossip_schedule}")
    if sec.gossip_schedule == "sync":
        return
    why = f"--gossip-schedule {sec.gossip_schedule} runs plain steps on the vector engine"
    check(not sec.accelerated, "accelerated", f"{why}; Chebyshev's recursion needs "
          "synchronous rounds (leave --accelerated out)")
    check(config.engine != "event", "engine", f"{why} (leave --engine event out)")
    check(from_config(config) is None, "gossip-schedule", f"{why}, without faults (its "
          "schedule already decides which messages happen): leave the fault flags out")


def check_gossip(config: Any) -> None:
    """Refuse the walk's parameters that gossip does not use (both gossip tasks)."""
    check(not kind_of(config.topology).public_schedule, "topology", "gossip needs undirected "
          "edges; the ring is directed (try --topology cycle)")
    check(config.tokens == 1, "tokens", "gossip moves no token (leave --tokens out)")
    check(config.walk == "auto", "walk", "gossip has no walk rule (leave --walk out)")
    check(config.service_time == 0, "service-time", "gossip nodes keep no token")


@dataclass(frozen=True)
class GossipRun:
    """One run: every node's final state, and the true mean."""

    final: np.ndarray
    truth: float
    curve: np.ndarray | None = None  # mean |x_t - mean| over nodes, t = 0..T (schedules)

    @property
    def errors(self) -> np.ndarray:
        """``|x_T[v] - mean|`` per node."""
        return np.abs(self.final - self.truth)


@dataclass(frozen=True, eq=False)
class GossipUtility(Utility):
    """Every node's estimate of the mean, beside its closed-form error."""

    estimate: float
    truth: float
    abs_error: float
    max_error: float
    theoretical_rmse: float | None
    ldp_std: float
    steps: int
    over_time: tuple[float, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"quantity": "mean, at every node", "estimate": self.estimate,
               "truth": self.truth, "abs_error": self.abs_error, "max_error": self.max_error,
               "theoretical_rmse": self.theoretical_rmse, "ldp_std": self.ldp_std,
               "steps": self.steps}
        if self.over_time is not None:
            out["error_over_time"] = list(self.over_time)
        return out

    def lines(self, report: Report) -> list[str]:
        widths = (10, 12, 12, 12, 12, 14)
        return ["", row(("", "mean est.", "truth", "mean |err|", "max |err|", "theory rmse"),
                        widths),
                row(("nodes", *map(fmt, (self.estimate, self.truth, self.abs_error,
                                         self.max_error, self.theoretical_rmse))), widths),
                f"  LDP baseline (every node's noisy value, averaged): std {fmt(self.ldp_std)}",
                *self._over_time()]

    def _over_time(self) -> list[str]:
        if self.over_time is None:
            return []
        last = len(self.over_time) - 1
        at = sorted({round(last * k / 4) for k in range(5)})
        return ["  mean |err| over time: " + ", ".join(f"t = {t}: {fmt(self.over_time[t])}"
                                                     for t in at)]


def _section(setup: GossipSumSetup) -> GossipSumConfig:
    return setup.config.section_as(GossipSumConfig)


def _matrices(setup: GossipSumSetup) -> Any:
    """The gossip matrix, or on a time-varying graph every snapshot's (a tuple)."""
    return setup.plan.W if setup.snapshots is None else setup.snapshots.matrices


def _noisy(setup: GossipSumSetup, streams: Streams) -> np.ndarray:
    """The nodes' values with the noise each adds once (the ``noise`` stream; correlated:
    :meth:`~netdp.mechanisms.correlated_noise.CorrelatedNoise.draw`)."""
    sec = _section(setup)
    rng = streams.generator("noise")
    if setup.noise is not None:
        return setup.data + (sec.high - sec.low) * setup.noise.draw(rng, setup.topology.n)
    noise = rng.standard_normal(setup.topology.n)
    return setup.data + setup.sigma * (sec.high - sec.low) * noise


def correlated_noise(sec: GossipSumConfig, sigma: float, topology: Any, adj: Any) -> Any:
    """The run's :class:`~netdp.mechanisms.correlated_noise.CorrelatedNoise`, or ``None``
    when the noise is independent."""
    if sec.correlated_noise is None and sec.noise_covariance is None:
        return None
    from netdp.mechanisms import correlated_noise as CN

    cov = None
    if sec.covariance is not None:  # an array from Python
        cov = CN.check_covariance(sec.covariance, topology.n)
    elif sec.noise_covariance is not None:
        from netdp.core.npy_file import read_npy

        cov = CN.check_covariance(read_npy(sec.noise_covariance, "noise-covariance"),
                                  topology.n)
    pairs = (CN.graph_edges(adj) if sec.secret_pairs is None
             else CN.read_secret_pairs(sec.secret_pairs, topology, adj))
    return CN.CorrelatedNoise(sigma, sec.correlated_noise or 0.0, pairs, cov)


def final_variances(setup: GossipSumSetup, block: int = 256) -> np.ndarray | None:
    """``(A_T Cov(η) A_Tᵀ)_vv / σ²`` per node: the final states' noise variance in units
    of the independent part's (``‖(A_T)_{v,:}‖²`` when the noise is independent), by
    blocks of ``A_T``'s columns (it is symmetric); ``None`` beyond
    :data:`CLOSED_FORM_NODES` nodes with a user's covariance."""
    from netdp.engine.averaging import iterate

    noise, plan, n = setup.noise, setup.plan, setup.topology.n
    assert noise is not None
    if noise.covariance is not None and n > CLOSED_FORM_NODES:
        return None
    out = np.empty(n)
    for start in range(0, n, block):
        cols = np.arange(start, min(n, start + block))
        X = np.zeros((n, cols.size))
        X[cols, np.arange(cols.size)] = 1.0
        *_, Y = iterate(plan.W, X, setup.steps, plan.gamma)
        var = noise.sigma**2 * np.einsum("ij,ij->j", Y, Y)
        if noise.sigma_cor > 0:
            assert noise.edges is not None
            diff = Y[noise.edges[:, 0]] - Y[noise.edges[:, 1]]
            var += noise.sigma_cor**2 * np.einsum("ij,ij->j", diff, diff)
        if noise.covariance is not None:
            var += np.einsum("ij,ij->j", Y, noise.covariance @ Y)
        out[cols] = var / noise.sigma**2
    return out


def _final_norms(setup: GossipSumSetup) -> np.ndarray:
    """``‖(B_T)_{v,:}‖²`` per node on a time-varying graph (the realised product)."""
    from netdp.engine import time_varying_gossip

    assert setup.snapshots is not None
    return time_varying_gossip.final_row_norms(setup.snapshots, setup.steps)


class GossipSumTask(Task[GossipSumSetup], Auditable, NoisyOutput, Reported, Sized, Timed,
                    TimeVarying):
    """Averaging by gossip: noise once per node, then ``T`` averaging steps."""

    name = "sum"
    protocol = "gossip"
    summary = "the mean of real values by gossip averaging (Muffliato, NeurIPS 2022)"
    section = GossipSumConfig
    tracking = (
        Tracking("graph", "exact Renyi divergence of each observer's whole view (every message "
                 "it receives and its own value), capped at LDP; converted by rdp or exactly "
                 "(pld: one Gaussian shift); by distance", None, ("rdp", "pld")),
        Tracking("complete", "as on any graph", None, ("rdp", "pld")))

    def prepare(self, config: SimulationConfig) -> GossipSumSetup:
        from netdp.graphs import gossip_matrix as GM

        sec = config.section_as(GossipSumConfig)
        values, topo = real_values(config)
        snapshots = None
        if topo.time_varying:  # each round averages on the snapshot in force
            check(sec.gossip_schedule in ("sync", "partial"), "gossip-schedule", "a time-"
                  "varying graph gossips in rounds: sync or partial")
            from netdp.graphs.gossip_snapshots import gossip_plan

            check(not sec.accelerated, "accelerated", "a time-varying graph gossips plain "
                  "steps (Chebyshev's recursion needs one matrix)")
            snapshots = gossip_plan(topo, sec.gossip_matrix)
            topo = topo.distance_graph  # the plan below: the union's, for gap and hops
        plan = GM.GossipPlan.build(topo, sec.gossip_matrix, sec.accelerated)
        sigma = sec.sigma if sec.sigma is not None else analytic_sigma(config.epsilon,
                                                                       config.delta)
        check(snapshots is None or (sec.correlated_noise is None
                                    and sec.noise_covariance is None),
              "correlated-noise", "correlated noise needs one graph (its secrets are shared "
              "on the graph's edges); a time-varying graph takes independent noise only")
        noise = correlated_noise(sec, sigma, topo, plan.adj)
        steps = config.steps or GM.default_steps(plan.gap, sigma, topo.n)
        engine = choose(config.engine, 1, 0.0)
        accountants = (self.default_accountants if config.accountants is None
                       else config.accountants)
        resolved = config.replace(nodes=topo.n, steps=steps, engine=engine,
                                  accountants=tuple(accountants), sigma=sigma)
        given = topo if snapshots is None else snapshots.topology  # walks as a Topology
        return GossipSumSetup(resolved, given,  # type: ignore[arg-type]
                              steps, values, plan=plan, matrix=sec.gossip_matrix,
                              sources=sec.sources, rdp_order=sec.rdp_order, sigma=sigma,
                              snapshots=snapshots, schedule=sec.gossip_schedule,
                              noise=noise)

    def trace(self, setup: GossipSumSetup, streams: Streams) -> Trace:

        cfg = setup.config
        p = _section(setup).edge_probability
        if setup.snapshots is not None:
            from netdp.engine import async_gossip, time_varying_gossip

            timed = time_varying_gossip.run(setup.snapshots, setup.steps)
            if setup.schedule == "partial":
                assert p is not None and timed.gossip is not None
                rounds = async_gossip.timed_partial(timed.gossip, p, setup.snapshots.n,
                                                    streams.generator("schedule"))
                return dataclasses.replace(timed, gossip=rounds)
            return timed
        if setup.schedule != "sync":
            from netdp.engine import async_gossip

            return async_gossip.run(setup.schedule, setup.topology, setup.steps,
                                    streams.generator("schedule"), p)
        return engine.run(cfg.engine, setup.topology, setup.steps, parse_latency(cfg.latency),
                          streams.generator("latency"), fault_run(setup, streams, 1))

    def run(self, setup: GossipSumSetup, trace: Trace, streams: Streams) -> GossipRun:
        """Every node adds its noise once, then ``T`` averaging steps."""
        states = self.states(setup, trace, streams)
        truth = float(np.mean(setup.data))
        if setup.schedule == "sync":
            return GossipRun(states[-1], truth)
        return GossipRun(states[-1], truth, np.abs(states - truth).mean(axis=1))

    def states(self, setup: GossipSumSetup, trace: Trace, streams: Streams) -> np.ndarray:
        """``(T + 1, n)``: the nodes' states ``x_0..x_T`` of the run (with the trace's
        lost messages and down nodes, when it has faults)."""
        from netdp.engine import async_gossip, averaging

        plan = setup.plan
        x0 = _noisy(setup, streams)
        if async_gossip.is_scheduled(trace.gossip):
            assert trace.gossip is not None
            return async_gossip.scheduled_states(_matrices(setup), x0, trace.gossip)
        if setup.snapshots is not None:
            from netdp.engine import time_varying_gossip

            return time_varying_gossip.states(setup.snapshots, x0, setup.steps)
        if trace.gossip is not None and trace.gossip.lost is not None:
            return averaging.faulty_gossip(plan.W, x0, trace.gossip)
        return averaging.gossip(plan.W, x0, setup.steps, accelerated=plan.accelerated,
                                gamma=plan.gamma)

    def output_noise(self, setup: GossipSumSetup, trace: Trace | None,
                     outcome: Any) -> float | None:
        """The root mean square over nodes of the noise std in the final states:
        ``σ · width · ‖(M_T)_{i,:}‖``, with ``M_T`` the rounds' realised map (``W^T``
        without faults)."""
        from netdp.engine import averaging
        from netdp.tracking import gossip_message_sum as MS


        sec, plan = _section(setup), setup.plan
        rounds = None if trace is None else trace.gossip
        if setup.schedule != "sync":  # never with faults: no fault-free run to set beside
            return None
        norms: np.ndarray | None
        if setup.snapshots is not None:
            norms = _final_norms(setup)
        elif setup.noise is not None:
            if rounds is not None and rounds.lost is not None:
                return None  # no closed form of correlated noise through lost messages
            norms = final_variances(setup)
            if norms is None:
                return None
        elif rounds is not None and rounds.lost is not None:
            final = list(averaging.faulty_iterate(plan.W, np.eye(setup.topology.n),
                                                  rounds))[-1]
            norms = np.einsum("ij,ij->i", final, final)
        else:
            norms = MS.row_norms(plan.W, setup.steps, accelerated=plan.accelerated,
                                 gamma=plan.gamma)[-1]
        return float(setup.sigma * (sec.high - sec.low) * math.sqrt(norms.mean()))

    def record(self, outcome: GossipRun) -> dict[str, float]:
        return {"estimate": float(outcome.final.mean()),
                "abs_error": float(outcome.errors.mean()),
                "max_error": float(outcome.errors.max())}

    def utility(self, setup: GossipSumSetup, outcomes: Sequence[GossipRun]) -> GossipUtility:

        from netdp.engine import averaging
        from netdp.tracking import gossip_message_sum as MS

        sec, plan, sigma = _section(setup), setup.plan, setup.sigma
        width, n = sec.high - sec.low, setup.topology.n
        rmse, over_time = None, None
        norms: np.ndarray | None
        if setup.schedule != "sync":  # each run's own schedule: no closed form
            curves = [o.curve for o in outcomes if o.curve is not None]
            over_time = tuple(np.mean(curves, axis=0).tolist())
        else:
            if setup.snapshots is not None:
                from netdp.engine import time_varying_gossip

                norms = _final_norms(setup)
                bias = time_varying_gossip.states(setup.snapshots, setup.data,
                                                  setup.steps)[-1] - setup.data.mean()
            else:
                norms = (final_variances(setup) if setup.noise is not None
                         else MS.row_norms(plan.W, setup.steps, accelerated=plan.accelerated,
                                           gamma=plan.gamma)[-1])  # ‖(A_T)_{v,:}‖² per node
                bias = averaging.gossip(plan.W, setup.data, setup.steps,
                                        accelerated=plan.accelerated,
                                        gamma=plan.gamma)[-1] - setup.data.mean()
            if norms is not None:
                rmse = math.sqrt(float(np.mean((sigma * width) ** 2 * norms + bias**2)))
        return GossipUtility(
            estimate=float(np.mean([o.final.mean() for o in outcomes])),
            truth=outcomes[0].truth,
            abs_error=float(np.mean([o.errors.mean() for o in outcomes])),
            max_error=float(np.mean([o.errors.max() for o in outcomes])),
            theoretical_rmse=rmse, ldp_std=sigma * width / math.sqrt(n),
            steps=setup.steps, over_time=over_time)

    def tracker(self, setup: GossipSumSetup, keep_pairs: bool = False) -> Tracker:
        from netdp.tracking.gossip_sum_tracker import GossipTracker

        return GossipTracker(setup, keep_pairs)

    def process_line(self, setup: GossipSumSetup) -> str:
        n = setup.topology.n
        if setup.schedule == "partial":
            p = _section(setup).edge_probability
            where = "" if setup.snapshots is None else " of the snapshot in force"
            return (f"gossip  {setup.steps} partial rounds (each edge{where} fires with "
                    f"probability {p:g}), {setup.matrix} weights on the edges that fire")
        if setup.schedule == "pairwise":
            return (f"gossip  pairwise: {n * setup.steps} exchanges ({setup.steps} time units "
                    "of rate-1 Poisson clocks), each with a uniform neighbour, both take "
                    "their mean")
        if setup.schedule == "push-pull":
            return (f"gossip  push-pull: {setup.steps} cycles of {n} exchanges (every node "
                    "once per cycle, random order), each with a uniform neighbour")
        if setup.snapshots is not None:
            return (f"gossip  {setup.steps} synchronous steps of x <- W_t x, {setup.matrix} "
                    f"weights of the snapshot in force; the union's spectral gap "
                    f"{setup.plan.gap:.4g}")
        how = "Chebyshev-accelerated steps" if setup.plan.accelerated else "steps of x <- W x"
        return (f"gossip  {setup.steps} synchronous {how}, {setup.matrix} weights, "
                f"spectral gap {setup.plan.gap:.4g}")

    def describe_mechanism(self, setup: GossipSumSetup) -> dict[str, Any]:
        sec = _section(setup)
        out = {"name": "gaussian", "sigma": setup.sigma * (sec.high - sec.low),
               "sigma_over_sensitivity": setup.sigma, "once_per_node": True}
        if setup.noise is not None:
            out["correlated"] = setup.noise.describe()
        return out

    def audit_worlds(self, setup: GossipSumSetup, node: int) -> tuple[Any, Any]:
        """``node``'s value at the low and at the high end of the range."""
        return range_worlds(setup, node)

    def gaussian_view(self, setup: GossipSumSetup) -> bool:
        """The messages are a linear map of the Gaussian noise: yes."""
        return True

    def view(self, setup: GossipSumSetup, trace: Trace, streams: Streams, observer: int) -> View:
        """The states of the observer's neighbours at every step (the messages it gets;
        with faults, those that arrived)."""
        assert trace.gossip is not None
        states = self.states(setup, trace, streams)
        if setup.schedule != "sync":
            from netdp.engine import async_gossip

            who, when, values = async_gossip.received(trace.gossip, _matrices(setup),
                                                      _noisy(setup, streams), observer)
            return View(observer, who, when, values, states[-1:])
        if setup.snapshots is not None:
            from netdp.engine import time_varying_gossip

            who, when, got_values = time_varying_gossip.received(
                trace.gossip, states, observer)  # type: ignore[arg-type]
            return View(observer, who, when, got_values, states[-1:])
        incoming = np.flatnonzero(trace.gossip.dst == observer)
        senders = trace.gossip.src[incoming]
        steps = np.repeat(np.arange(setup.steps + 1), senders.size)
        got = np.ones(steps.size, dtype=bool) if trace.gossip.lost is None else \
            ~trace.gossip.lost[:, incoming].reshape(-1)
        return View(observer, np.tile(senders, setup.steps + 1)[got], steps[got],
                    states[:, senders].reshape(-1)[got], states[-1:])

    def work(self, config: SimulationConfig, nodes: int,
             steps: int) -> dict[str, tuple[float, str]]:
        return gossip_work(nodes, steps)

    def footprint(self, config: SimulationConfig, nodes: int,
                  steps: int) -> dict[str, tuple[float, str]]:
        dense = 8.0 * nodes * nodes * 4 if nodes <= 4096 else 0.0
        return {"the states": (8.0 * nodes * 64, "nodes"),
                "the dense accounting": (dense, "nodes")}
