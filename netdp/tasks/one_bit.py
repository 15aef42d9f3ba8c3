"""One bit: the mean of real values from one-bit reports on a walk.

The toy task added by following ``docs/extending.md``. Each node holds a value ``x`` in
``[-1, 1]``; each holder adds to the token one report of Duchi et al.'s one-dimensional
randomizer (``±C`` with ``C = (e^ε + 1)/(e^ε - 1)``, ``P[+C] = 1/2 + x/(2C)``: ε-LDP,
unbiased, variance ``C² - x²``; :class:`netdp.mechanisms.bounded.Duchi`). A report is one
bit on the wire. After ``T`` reports the token holds their sum, and its mean estimates the
mean value, unbiased when every node is visited equally often in expectation (the complete
graph, a Metropolis walk). On the complete graph with self-moves the holders are i.i.d.
uniform, so each report has mean ``x̄`` and variance ``C² - x̄²`` and the estimate has
variance ``(C² - x̄²) / T``.

Privacy: each report is an ε-LDP randomizer's output, and an observer sees only the sum of
the reports added since its last visit: the histogram's shuffle tracker applies with the
clone bounds (Feldman, McMillan and Talwar), which hold for any ε-LDP randomizer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from netdp.core import seeding
from netdp.core.params import Section, param
from netdp.core.sections import DATA_GROUP
from netdp.core.setup import Setup, Streams, View, running_sum_view
from netdp.core.simulation_config import CLONE_BOUNDS, SimulationConfig
from netdp.engine.trace import Trace
from netdp.mechanisms.bounded import Duchi
from netdp.report.types import ScalarUtility
from netdp.tasks.base import Auditable, Task
from netdp.tasks.preparation import build_topology, resolve
from netdp.tracking.graph_observers import report_tracking, shuffle_tracking, sources_param

GROUP = "one bit (--task one-bit)"


@dataclass(frozen=True)
class OneBitConfig(Section):
    """Parameters of ``--task one-bit``."""

    task = "one-bit"

    center: float = param(0.2, "synthetic values: a normal of std 0.5 around this centre, "
                          "clipped to [-1, 1]", low=-1.0, high=1.0, metavar="M", group=GROUP)
    shuffle: str = param("fmt-numeric", "amplification-by-shuffling bound per window: "
                         "fmt-numeric or fmt-closed", choices=CLONE_BOUNDS,
                         group=DATA_GROUP)
    sources: int | None = sources_param()


@dataclass(frozen=True)
class OneBitOutcome:
    """One run: the estimate and the true mean."""

    estimate: float
    truth: float


def _section(setup: Setup) -> OneBitConfig:
    return setup.config.section_as(OneBitConfig)


def _shuffle(setup: Setup) -> tuple[float, str, int]:
    """The level of one report, the shuffle bound and the report's domain (two outputs)."""
    return setup.config.epsilon, _section(setup).shuffle, 2


class OneBitTask(Task[Setup], Auditable):
    """The mean value, by one-bit reports summed in the token."""

    name = "one-bit"
    summary = "the mean of values in [-1, 1] from one-bit reports (toy task of extending.md)"
    section = OneBitConfig
    utility_columns = (("abs_error",), (("theory", "theoretical_std", "theoretical std"),))
    tracking = (shuffle_tracking("complete", "the histogram's shuffle tracker, clone bounds",
                                 _shuffle),
                report_tracking(_shuffle))

    def prepare(self, config: SimulationConfig) -> Setup:
        assert config.seed is not None
        topo = build_topology(config, config.nodes)
        center = config.section_as(OneBitConfig).center
        draw = seeding.generator(config.seed, "data").normal(center, 0.5, topo.n)
        resolved, steps = resolve(config, topo, self.steps_per_node, self.default_accountants)
        return Setup(resolved, topo, steps, np.clip(draw, -1.0, 1.0),
                     Duchi(config.epsilon))

    def reports(self, setup: Setup, trace: Trace, streams: Streams) -> np.ndarray:
        """``(tokens, steps)``: each holder's report of its value."""
        return setup.mechanism.perturb(setup.data[trace.holders], streams.generator("noise"))

    def run(self, setup: Setup, trace: Trace, streams: Streams) -> OneBitOutcome:
        """Each holder adds its report to the token; the mean report is the estimate."""
        return OneBitOutcome(float(self.reports(setup, trace, streams).mean()),
                             float(setup.data.mean()))

    def record(self, outcome: OneBitOutcome) -> dict[str, float]:
        return {"estimate": outcome.estimate, "abs_error": abs(outcome.estimate - outcome.truth)}

    def utility(self, setup: Setup, outcomes: Sequence[OneBitOutcome]) -> ScalarUtility:
        truth = outcomes[0].truth
        estimates = np.array([o.estimate for o in outcomes])
        return ScalarUtility("mean value", "one bit each (Duchi et al.)",
                             float(estimates.mean()), truth,
                             float(np.abs(estimates - truth).mean()),
                             theoretical_std(setup, truth))

    def audit_worlds(self, setup: Setup, node: int) -> tuple[Any, Any]:
        """``node``'s value at -1 or at 1."""
        low, high = (np.where(np.arange(setup.topology.n) == node, x, setup.data)
                     for x in (-1.0, 1.0))
        return low, high

    def view(self, setup: Setup, trace: Trace, streams: Streams, observer: int) -> View:
        """The running sums of reports the observer receives."""
        return running_sum_view(self.reports(setup, trace, streams), trace.holders, observer)


def theoretical_std(setup: Setup, truth: float) -> float | None:
    """Std of the estimate where the holders are i.i.d. uniform (complete graph with
    self-moves): ``sqrt((C² - x̄²) / T')`` over the ``T'`` reports of all tokens."""
    topo = setup.topology
    if not topo.walk_kind.uniform or not topo.self_moves:
        return None
    reports = setup.steps * setup.config.tokens
    return math.sqrt((setup.mechanism.C ** 2 - truth ** 2) / reports)
