"""Audit a whole protocol for one pair: what observer ``v`` sees, with node ``u``'s value
changed (spec accounting.md §5.1, "Protocol audits").

The walk (or the gossip rounds) is the run's own and is fixed; every trial replays the
protocol with fresh draws from the task's streams (noise, reports). Both worlds of a
trial share those draws, and differ only in ``u``'s value: the low and the high end of
the range for a sum, categories 0 and 1 for a histogram. The observer's view
(:meth:`Task.view`: every token or message it receives, not the published result) is
flattened; a linear score, the difference of the two worlds' mean views over their
per-coordinate variance (fitted on the first split of the trials), makes it one number;
the auditor (:class:`~netdp.privacy.auditor.Auditor`) bounds ε from the errors on the
other split, with the Gaussian-DP fit where the noise is Gaussian (the view is then a
Gaussian shift, so the fit is the tight one).

The audit is of the protocol *given the walk that ran*, with the path known to the
test. The tracker's ε for the pair also describes that walk, but it counts a cycle that
``u`` may have joined at a subsampled rate: the view of the observer, which does not
know the path. Where ``u`` is attributable (the observer's neighbour on the ring, or a
node it handed the token to), the two agree exactly, and the sandwich
``ε_lb <= tracker ε <= LDP ε`` must hold. Gossip has no hidden path: its exact joint
loss describes the same mechanism as the audit.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from netdp.errors import InputError, check
from netdp.privacy.auditor import Auditor, AuditResult, SplitThreshold

TASKS = ("sum", "histogram")
# Theory curves that are means over pairs (the ICML 2024 walk bound, in expectation) or no
# bound at all (the gossip per-message sum, docs/gossip.md): shown, not held to per pair.
NOT_PER_PAIR = ("graph-walk-icml2024", "gossip-message-sum")


@dataclass(frozen=True)
class ProtocolAudit:
    """One pair's audit beside the tracker's and the LDP figures for it.

    Attributes
    ----------
    observer, node
        The pair ``(u → v)``: ``v`` observes, ``u``'s value changes.
    result
        The audit of ``v``'s view.
    tracker_epsilon
        The tracker's ε for the pair on the same walk (its first accountant).
    ldp_epsilon
        ``u``'s LDP loss over its contributions.
    theory
        The task's theoretical bounds at this setting (each must sit above ε_lb).
    seconds
        Time to replay and score the trials.
    """

    observer: int
    node: int
    result: AuditResult
    tracker_epsilon: float
    ldp_epsilon: float
    theory: dict[str, float]
    seconds: float

    @property
    def sandwich(self) -> bool:
        """``ε_lb <= tracker ε <= LDP ε`` and ``ε_lb <=`` every theoretical bound that holds
        per pair (to rounding; :data:`NOT_PER_PAIR` are shown only)."""
        tol = 1e-9
        lb = self.result.epsilon_lower
        return (lb <= self.tracker_epsilon + tol and self.tracker_epsilon <= self.ldp_epsilon
                + tol and all(lb <= bound + tol for name, bound in self.theory.items()
                              if name not in NOT_PER_PAIR))

    def to_dict(self) -> dict[str, Any]:
        """``{observer, node, audit: {..., tracker_epsilon, ldp_epsilon, sandwich}}``."""
        return {"observer": self.observer, "node": self.node,
                "audit": {**self.result.to_dict(), "tracker_epsilon": self.tracker_epsilon,
                          "ldp_epsilon": self.ldp_epsilon, "theory": self.theory,
                          "sandwich": self.sandwich, "seconds": self.seconds}}


def audit_protocol(config: Any, observer: int, node: int, trials: int,
                   confidence: float = 0.95,
                   strategy: SplitThreshold | None = None) -> ProtocolAudit:
    """Audit the pair ``(node → observer)`` of the protocol ``config`` describes."""
    from netdp.privacy.tracker import ldp_losses
    from netdp.tasks import task_of
    from netdp.tasks.setup import Streams, with_seed

    config = with_seed(config)
    task = task_of(config)
    check(task.name in TASKS and (config.protocol == "walk" or task.name == "sum"),
          "task", f"protocol audits cover {', '.join(TASKS)} on a walk, and sum by gossip "
          f"(got {task.label})")
    check(config.coalition is None, "coalition", "the protocol audit observes from one node")
    setup = task.prepare(config)
    n = setup.topology.n
    check(0 <= observer < n, "observer", f"must lie in 0..{n - 1} (got {observer})")
    check(0 <= node < n and node != observer, "node",
          f"must lie in 0..{n - 1} and differ from the observer (got {node})")
    check(trials >= 4, "trials", f"must be at least 4 (got {trials})")
    strategy = strategy or SplitThreshold()
    trace = task.trace(setup, Streams(setup.seed, 0))
    worlds = [dataclasses.replace(setup, data=_with_value(setup, node, side))
              for side in (0, 1)]
    start = time.perf_counter()
    views = [np.stack([_flat(task.view(world, trace, Streams(setup.seed, 1 + r), observer))
                       for r in range(trials)]) for world in worlds]
    s0, s1 = linear_scores(views[0], views[1], strategy.fit_size(trials))
    from netdp.mechanisms.noise import Gaussian

    gaussian = isinstance(setup.mechanism, Gaussian) or "sigma" in setup.memo  # gossip
    result = Auditor(s0, s1, confidence, float(config.delta)).audit(strategy,
                                                                    gaussian=gaussian)
    seconds = time.perf_counter() - start
    try:
        tracker = task.tracker(setup, keep_pairs=True)
        tracker.add(0, trace, task.run(setup, trace, Streams(setup.seed, 0)))
    except InputError as exc:  # the tracker keeps no pair matrix here
        if exc.param not in ("pairs-out", "sources"):
            raise
        raise InputError("nodes", "the audit compares with the tracker's loss of the pair, "
                         "which needs every observer tracked: up to 200 nodes on a graph "
                         f"walk, or --set sources={n}") from None
    matrix = tracker.matrix()
    if matrix is None:
        raise InputError("topology", "no pairwise tracker covers this setting")
    report = tracker.report()
    theory = {name: float(e) for name, e in getattr(report, "theory", {}).items()}
    if trace.holders.size:  # a walk: the node's own contributions
        ldp = float(ldp_losses(trace, task.epsilon0(setup), config.delta)[node])
    else:  # gossip: one release per node, the same for all
        ldp = float(report.ldp.max)  # type: ignore[attr-defined]
    return ProtocolAudit(observer, node, result, float(matrix[node, observer]), ldp, theory,
                         seconds)


def linear_scores(views0: np.ndarray, views1: np.ndarray,
                  fit: int) -> tuple[np.ndarray, np.ndarray]:
    """``view · w`` with ``w`` the difference of the worlds' mean views over the pooled
    per-coordinate variance, both from the first ``fit`` trials of each world."""
    mean0, mean1 = views0[:fit].mean(axis=0), views1[:fit].mean(axis=0)
    var = np.concatenate([views0[:fit] - mean0, views1[:fit] - mean1]).var(axis=0)
    w = np.where(var > 0, (mean1 - mean0) / np.where(var > 0, var, 1.0), 0.0)
    return views0 @ w, views1 @ w


def _with_value(setup: Any, node: int, side: int) -> np.ndarray:
    """The data with ``node``'s value at the low (0) or high (1) end of its range."""
    data = np.array(setup.data, copy=True)
    if np.issubdtype(data.dtype, np.integer):  # categories
        data[node] = side
    else:
        data[node] = setup.config.get("high") if side else setup.config.get("low")
    return data


def _flat(view: Any) -> np.ndarray:
    """Everything the observer receives, as one vector: not the published result, which
    the trackers do not account (spec §5.1: the view, "not the final output")."""
    return np.asarray(view.received, dtype=float).ravel()
