"""What the gossip tasks prepare once: the setup records their trackers read (kept apart
from the trackers, whose accounting libraries the task registry does not load)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from netdp.core.setup import Setup

if TYPE_CHECKING:
    from netdp.graphs.gossip_matrix import GossipPlan
    from netdp.graphs.gossip_snapshots import SnapshotGossip


@dataclass(frozen=True, eq=False, kw_only=True)
class GossipSetup(Setup):
    """A gossip task's prepared run: the setup, the gossip plan and the tracking options.

    Attributes
    ----------
    plan
        The gossip matrix and its spectral facts.
    matrix
        The gossip matrix's name (``metropolis``, ``lazy`` or the file), for the report.
    sources
        Observers sampled beyond :data:`~netdp.tracking.gossip_sum_tracker.DENSE_NODES` nodes
        (``None``: :data:`~netdp.tracking.gossip_sum_tracker.SAMPLED`).
    rdp_order
        Also report the Rényi divergences at this order (``None``: not).
    snapshots
        On a time-varying graph, the gossip matrix of every snapshot (round ``t`` averages
        with the one in force at ``t``); ``plan`` is then the union graph's (its hop
        distances and spectral gap: the default number of steps). ``None``: a fixed graph.
    schedule
        Which messages happen (:data:`netdp.engine.async_gossip.SCHEDULES`): ``sync``
        (every edge, every round), ``partial``, ``pairwise`` or ``push-pull``; the
        others' losses are per run, from the messages each trace records.
    """

    plan: GossipPlan
    matrix: str
    sources: int | None = None
    rdp_order: float | None = None
    snapshots: SnapshotGossip | None = None
    schedule: str = "sync"


@dataclass(frozen=True, eq=False, kw_only=True)
class GossipSumSetup(GossipSetup):
    """Gossip averaging prepared: :class:`GossipSetup`, ``sigma``, the std of the
    independent noise each node adds once, in units of the sensitivity, and ``noise``,
    the correlated noise beside it
    (:class:`~netdp.mechanisms.correlated_noise.CorrelatedNoise`; ``None``: independent
    only)."""

    sigma: float
    noise: Any = None


@dataclass(frozen=True)
class Calibration:
    """Noise of one regime at the target (ε, δ)."""

    regime: str
    sigma: float
    noise_multiplier: float
    epsilon: float
    delta: float
    coefficient: float | None
    accountant: str

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``sigma``: the noise std per coordinate, as the walk's;
        ``noise_multiplier``: in units of the sensitivity 2L)."""
        return dataclasses.asdict(self)


@dataclass(frozen=True, eq=False, kw_only=True)
class GossipSgdSetup(GossipSetup):
    """Gossip gradient descent prepared: :class:`GossipSetup`,
    the averaging steps per round and the noise of each regime (:func:`calibrate`)."""

    gossip_steps: int
    calibrations: dict[str, Calibration]
