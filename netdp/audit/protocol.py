"""Audit a whole protocol for one pair: what observer ``v`` sees, with node ``u``'s value
changed (spec accounting.md §5.1, "Protocol audits").

The walk (or the gossip rounds) is the run's own and is fixed; every trial replays the
protocol with fresh draws from the task's streams (noise, reports). Both worlds of a
trial share those draws, and differ only in ``u``'s value: the low and the high end of
the range for a sum, categories 0 and 1 for a histogram. The observer's view
(:meth:`Task.view`: every token or message it receives, not the published result) is
flattened; a linear score, Fisher's discriminant of the two worlds' views (fitted on the
first split of the trials), makes it one number;
the auditor (:class:`~netdp.audit.auditor.Auditor`) bounds ε from the errors on the
other split, with the Gaussian-DP fit where the noise is Gaussian (the view is then a
Gaussian shift, so the fit is the tight one).

The audit is of the protocol *given the walk that ran*, with the path known to the
test. The tracker's ε for the pair also describes that walk, but it counts a cycle that
``u`` may have joined at a subsampled rate: the view of the observer, which does not
know the path. Where ``u`` is attributable (the observer's neighbour on the ring, or a
node it handed the token to), the two agree exactly, and the sandwich
``ε_lb <= tracker ε <= cap`` must hold, the cap being the LDP loss at the largest count
of ``u``'s contributions that a hidden path consistent with the observer's view allows
(:mod:`netdp.tracking.view_cap`, spec Correction 6), not ``u``'s realised LDP loss, which
conditions on the hidden path (it is shown as the baseline). Where nothing is hidden (the
ring's public path, gossip) the cap is the node's LDP loss. Gossip has no hidden path:
its exact joint loss describes the same mechanism as the audit.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from netdp.audit.auditor import Auditor, AuditResult, SplitThreshold
from netdp.core import progress
from netdp.core.documented import Documented
from netdp.core.errors import InputError, check
from netdp.core.setup import Streams
from netdp.engine.routing import router as make_router
from netdp.graphs.node_names import node_id
from netdp.graphs.walk_kind import transition_matrix
from netdp.tasks import task_of
from netdp.tasks.base import Auditable
from netdp.tasks.preparation import with_seed
from netdp.tracking.base import draw_coalition
from netdp.tracking.hidden_paths import resample

PATHS = ("secret", "fixed")


@dataclass(frozen=True, repr=False)
class ProtocolAudit(Documented):
    """One pair's audit beside the tracker's and the LDP figures for it.

    Attributes
    ----------
    observer, node
        The pair ``(u → v)``: ``v`` observes (``-1``: the coalition), ``u``'s value changes.
    result
        The audit of ``v``'s view.
    tracker_epsilon
        The tracker's ε for the pair on the same walk (its first accountant).
    ldp_epsilon
        ``u``'s LDP loss over its realised contributions (the baseline).
    theory
        The task's theoretical curves at this setting.
    pair_bounds
        Those of them that bound every pair (:meth:`Tracker.pair_bounds`): each must sit
        above ε_lb. The others (a mean over pairs, or no bound) are only shown.
    seconds
        Time to replay and score the trials.
    coalition
        The members of the coalition that observed as one (``None``: one node).
    paths
        ``secret``: the walk's hidden stretches were drawn again in every trial (the
        trackers' mechanism); ``fixed``: the walk that ran, path known (also gossip, which
        has no path).
    seed, config
        The protocol's seed, and its parameters with the audit's (``observer``, ``node``,
        ``trials``, ``confidence``, ``paths``).
    cap_epsilon
        The LDP loss at the largest count of ``u``'s contributions consistent with the
        observer's view (:func:`~netdp.tracking.view_cap.view_caps`), which the tracker's
        ε must not pass; ``None`` where nothing is hidden (``ldp_epsilon`` is the cap).
    """

    observer: int
    node: int
    result: AuditResult
    tracker_epsilon: float
    ldp_epsilon: float
    theory: dict[str, float]
    pair_bounds: tuple[str, ...]
    seconds: float
    coalition: tuple[int, ...] | None = None
    paths: str = "secret"
    seed: int | None = None
    config: Mapping[str, Any] = field(default_factory=dict)
    cap_epsilon: float | None = None

    @property
    def sandwich(self) -> bool:
        """``ε_lb <= tracker ε <= cap`` (:attr:`cap_epsilon`, else the LDP loss) and
        ``ε_lb <=`` every theoretical bound that holds per pair (to rounding). A tracker
        that reports the pair unprotected (``inf``: a coalition holding both ring
        neighbours of a node that added no noise) claims nothing, so only its lower half
        is checked: the ring's LDP figure is a baseline there, not a property of the
        protocol."""
        tol = 1e-9
        lb, tracked = self.result.epsilon_lower, self.tracker_epsilon
        cap = self.ldp_epsilon if self.cap_epsilon is None else self.cap_epsilon
        return (lb <= tracked + tol and (tracked <= cap + tol or tracked == math.inf)
                and all(lb <= self.theory[name] + tol for name in self.pair_bounds))

    def summary(self) -> str:
        who = f"observer {self.observer}" if self.coalition is None else \
            f"coalition {','.join(map(str, self.coalition))}"
        cap = "" if self.cap_epsilon is None else f", cap {self.cap_epsilon:.4g}"
        return (f"node {self.node} -> {who} ({self.paths} paths): eps_lb "
                f"{self.result.epsilon_lower:.4g}, tracker {self.tracker_epsilon:.4g}, LDP "
                f"{self.ldp_epsilon:.4g}{cap}; sandwich "
                f"{'holds' if self.sandwich else 'BROKEN'}")

    def figures(self) -> dict[str, Any]:
        """``{observer, node, audit: {..., tracker_epsilon, ldp_epsilon, sandwich}}``."""
        coalition = {} if self.coalition is None else {"coalition": list(self.coalition)}
        return {"observer": self.observer, "node": self.node, **coalition,
                "paths": self.paths,
                "audit": {**self.result.to_dict(), "tracker_epsilon": self.tracker_epsilon,
                          "ldp_epsilon": self.ldp_epsilon, "cap_epsilon": self.cap_epsilon,
                          "theory": self.theory,
                          "pair_bounds": list(self.pair_bounds), "sandwich": self.sandwich,
                          "seconds": self.seconds}}


def audit_protocol(config: Any, observer: int | str | None, node: int | str, trials: int,
                   confidence: float = 0.95, strategy: SplitThreshold | None = None,
                   paths: str = "secret") -> ProtocolAudit:
    """Audit the pair ``(node → observer)`` of the protocol ``config`` describes; with a
    coalition in ``config`` (``observer`` then ``None``), the coalition observes as one
    and sees what all its members see.

    ``paths="secret"`` draws the walk's hidden stretches again in every trial, from its
    law given the observer's view (:mod:`netdp.tracking.hidden_paths`): the mechanism the
    trackers bound. ``"fixed"`` keeps the walk that ran, path and all: the mechanism given
    the path, which an observer who knew it would face.
    """

    config = with_seed(config)
    task = task_of(config)
    setup = task.prepare(config)
    n = setup.topology.n
    coalition = draw_coalition(setup, 0)
    if observer is not None:  # an id, or a label of the graph's
        observer = node_id(observer, "observer", setup.topology)
    node = node_id(node, "node", setup.topology)
    if coalition is None:
        check(observer is not None, "observer", f"must lie in 0..{n - 1} (got None)")
        assert observer is not None
        members = [observer]
    else:
        check(observer is None, "observer", "give the observer or a coalition, not both")
        members = sorted(coalition)
    check(0 <= node < n and node not in members, "node",
          f"must lie in 0..{n - 1} and not be an observer (got {node})")
    check(trials >= 4, "trials", f"must be at least 4 (got {trials})")
    check(paths in PATHS, "paths", f"must be one of {', '.join(PATHS)} (got {paths!r})")
    strategy = strategy or SplitThreshold()
    check(isinstance(task, Auditable), "task", f"{task.label} declares no neighbouring "
          "worlds: its protocol cannot be audited")
    assert isinstance(task, Auditable)
    worlds = [dataclasses.replace(setup, data=data) for data in task.audit_worlds(setup, node)]
    trace = task.trace(setup, Streams(setup.seed, 0))
    start = time.perf_counter()
    walks = _hidden_paths(setup, trace, members, trials) if paths == "secret" else None

    def replay(world: Any, r: int) -> np.ndarray:
        walk = trace if walks is None else dataclasses.replace(trace, holders=walks[r])
        return np.concatenate([_flat(task.view(world, walk, Streams(setup.seed, 1 + r), v))
                               for v in members])

    with progress.bar(total=trials * len(worlds), desc="audit: replaying the views",
                      unit="trial") as shown:
        views = []
        for world in worlds:
            rows = []
            for r in range(trials):
                rows.append(replay(world, r))
                shown.update(1)
            views.append(np.stack(rows))
    s0, s1 = linear_scores(views[0], views[1], strategy.fit_size(trials))
    # resampled paths make the view a mixture over paths: no longer a Gaussian shift
    gaussian = task.gaussian_view(setup) and walks is None
    result = Auditor(s0, s1, confidence, float(config.delta)).audit(strategy,
                                                                    gaussian=gaussian)
    seconds = time.perf_counter() - start
    try:
        tracker = task.tracker(setup, keep_pairs=coalition is None)
        tracker.add(0, trace, task.run(setup, trace, Streams(setup.seed, 0)))
    except InputError as exc:  # the tracker keeps no pair matrix here
        if exc.param not in ("pairs-out", "sources"):
            raise
        raise InputError("nodes", "the audit compares with the tracker's loss of the pair, "
                         "which needs every observer tracked: up to 200 nodes on a graph "
                         f"walk, or --set sources={n}") from None
    losses = tracker.matrix() if coalition is None else tracker.coalition_losses()
    if losses is None:
        raise InputError("topology", "no pairwise tracker covers this setting")
    report = tracker.report()
    theory = {name: float(e) for name, e in getattr(report, "theory", {}).items()}
    # a theory curve bounds a single observer's pairs, not a coalition's
    bounds = tuple(tracker.pair_bounds(report)) if coalition is None else ()
    tracked = float(losses[node, members[0]] if coalition is None else losses[node])
    ldp = tracker.node_ldp()
    assert ldp is not None, "a tracker with pair losses knows each node's LDP loss"
    return ProtocolAudit(members[0] if coalition is None else -1, node, result, tracked,
                         float(ldp[node]), theory, bounds, seconds,
                         None if coalition is None else tuple(members),
                         paths if walks is not None else "fixed", config.seed,
                         {**config.to_dict(), "observer": observer, "node": node,
                          "trials": trials, "confidence": confidence, "paths": paths},
                         _view_cap(setup, trace, tracker, members, coalition))


def _view_cap(setup: Any, trace: Any, tracker: Any, members: list[int],
              coalition: Any) -> float | None:
    """The tracker's cap for the pair: the LDP loss (the baseline's composition) at the
    largest count of the node's contributions that the observer's view allows
    (:func:`~netdp.tracking.view_cap.view_caps`); ``None`` where nothing is hidden (no
    walk, the ring's public path) or the tracker's LDP baseline is its own."""
    from netdp.tracking.base import PairwiseTracker, ldp_setting
    from netdp.tracking.graph_observers import walk_stays
    from netdp.tracking.view_cap import view_caps

    if (trace.holders.size == 0 or setup.topology.walk_kind.public_schedule
            or not isinstance(tracker, PairwiseTracker) or tracker.tracking is None
            or tracker.tracking.ldp is not None):
        return None
    caps = view_caps(trace, tracker.epsilon0, float(setup.config.delta), coalition,
                     walk_stays(setup), *ldp_setting(setup))
    return float(caps[0 if coalition is not None else members[0]])


def _hidden_paths(setup: Any, trace: Any, members: list[int],
                  trials: int) -> np.ndarray | None:
    """``(trials, tokens, steps)`` walks with the trace's law given the members' view;
    ``None`` where there is nothing to draw: no walk (gossip), or a public path (every
    node has one next holder: the ring)."""
    if trace.holders.size == 0:
        return None
    if trace.faults is not None and setup.config.on_loss != "resend":
        raise InputError("fixed-path", f"--on-loss {setup.config.on_loss} changes the walk's "
                         "law, so its hidden paths cannot be drawn again: give --fixed-path")

    walk = setup.config.walk
    P = transition_matrix(setup.topology, walk).toarray()
    if int((P > 0).sum(axis=1).max()) == 1:
        return None
    start = make_router(setup.topology, walk).start_law()
    rng = Streams(setup.seed, 0).generator("paths")
    return np.stack([resample(h, P, start, members, rng, trials) for h in trace.holders],
                    axis=1)


def linear_scores(views0: np.ndarray, views1: np.ndarray,
                  fit: int) -> tuple[np.ndarray, np.ndarray]:
    """``view · w``, Fisher's linear discriminant fitted on the first ``fit`` trials of
    each world: ``w = S^-1 (mean1 - mean0)`` with ``S`` the pooled covariance, shrunk
    towards its diagonal by ``p / (p + 2 fit)`` for ``p`` coordinates (so it stays
    invertible when the coordinates outnumber the trials).

    For a Gaussian shift with a shared covariance this is the likelihood-ratio test. A
    view's coordinates are strongly correlated (a running sum, a model, carries all the
    noise before it), so the covariance matters: per-coordinate weights would score the
    accumulated noise, not the step that carries the node's contribution.
    """
    mean0, mean1 = views0[:fit].mean(axis=0), views1[:fit].mean(axis=0)
    centred = np.concatenate([views0[:fit] - mean0, views1[:fit] - mean1])
    varies = centred.std(axis=0) > 1e-12 * (1.0 + np.abs(mean0))
    w = np.zeros(views0.shape[1])
    if varies.any():
        x = centred[:, varies]
        p = x.shape[1]
        cov = x.T @ x / max(x.shape[0] - 2, 1)
        shrink = p / (p + x.shape[0])
        cov = (1.0 - shrink) * cov + shrink * np.diag(np.diag(cov))
        w[varies] = np.linalg.solve(cov, (mean1 - mean0)[varies])
    return views0 @ w, views1 @ w


def _flat(view: Any) -> np.ndarray:
    """Everything the observer receives, as one vector: not the published result, which
    the trackers do not account (spec §5.1: the view, "not the final output")."""
    return np.asarray(view.received, dtype=float).ravel()
