"""Fraction: the share of nodes holding a 1, by binary randomized response on a walk.

The small worked task of ``docs/extending.md``. Each node holds a bit ``b``; each holder
adds to the token a report ``r`` that is ``b`` with probability ``p = e^ε / (1 + e^ε)``
and ``1 - b`` otherwise (ε-LDP). After ``T`` reports the token holds their sum ``S``, and
``(S/T - (1 - p)) / (2p - 1)`` estimates the share of ones, unbiased when every node is
visited equally often in expectation (the complete graph, a Metropolis walk). On the
complete graph with self-moves the holders are i.i.d. uniform, so ``S ~ Bin(T, π)`` with
``π = 1 - p + (2p - 1) f`` and the estimate has variance ``π (1 - π) / (T (2p - 1)²)``.

Privacy: binary randomized response is k-ary randomized response with ``k = 2``, and an
observer sees only the sum of the reports added since its last visit, so the histogram's
shuffle tracker applies as it is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from netdp.core import seeding
from netdp.core.errors import check
from netdp.core.params import Section, param
from netdp.core.sections import DATA_GROUP, check_data_file, column_param, data_file_param
from netdp.core.setup import Setup, Streams, View, running_sum_view
from netdp.core.simulation_config import SHUFFLE_BOUNDS, SimulationConfig
from netdp.engine.trace import Trace
from netdp.report.types import ScalarUtility
from netdp.tasks.base import Auditable, Task
from netdp.tasks.preparation import build_topology, resolve, values_from_file
from netdp.tracking.graph_observers import report_tracking, shuffle_tracking, sources_param

GROUP = "fraction (--task fraction)"


@dataclass(frozen=True)
class FractionConfig(Section):
    """Parameters of ``--task fraction``."""

    task = "fraction"

    share: float = param(0.3, "synthetic bits: each node holds a 1 with this probability",
                         low=0.0, high=1.0, metavar="P", group=GROUP)
    data_file: str | None = data_file_param("the bits (0 or 1)")
    column: str | None = column_param()
    shuffle: str = param("fmt-numeric", "amplification-by-shuffling bound per window: "
                         "fmt-numeric, fmt-closed or blanket",
                         choices=SHUFFLE_BOUNDS,
                         group=DATA_GROUP)
    sources: int | None = sources_param()

    def validate(self, config: Any) -> None:
        check_data_file(self)


@dataclass(frozen=True)
class FractionOutcome:
    """One run: the estimate and the true share."""

    estimate: float
    truth: float


def keep_probability(epsilon: float) -> float:
    """``p = e^ε / (1 + e^ε)``: the probability that a report tells the truth."""
    return 1.0 / (1.0 + math.exp(-epsilon))


def _shuffle(setup: Setup) -> tuple[float, str, int]:
    """The level of one report, the shuffle bound and the domain it reads."""
    section = setup.config.section_as(FractionConfig)
    return setup.config.epsilon, section.shuffle, 2


class FractionTask(Task[Setup], Auditable):
    """The share of ones, by binary randomized response reports summed in the token."""

    name = "fraction"
    summary = "the share of nodes holding a 1, by binary randomized response (worked example)"
    section = FractionConfig
    utility_columns = (("abs_error",), (("theory", "theoretical_std", "theoretical std"),))
    tracking = (shuffle_tracking("complete", "the histogram's shuffle tracker with k = 2",
                                 _shuffle),
                report_tracking(_shuffle))

    def prepare(self, config: SimulationConfig) -> Setup:

        section = config.section_as(FractionConfig)
        assert config.seed is not None
        bits, nodes = values_from_file(config)
        check(bits is None or bool(np.all((bits == 0) | (bits == 1))), "data-file",
              f"{section.data_file} must hold bits 0 or 1")
        topo = build_topology(config, nodes)
        if bits is None:
            bits = seeding.generator(config.seed, "data").random(topo.n) < section.share
        check(bits.size == topo.n, "nodes", f"the data holds {bits.size} bits for {topo.n} "
              "nodes")
        resolved, steps = resolve(config, topo, self.steps_per_node, self.default_accountants)
        return Setup(resolved, topo, steps, np.asarray(bits, dtype=np.int8))

    def reports(self, setup: Setup, trace: Trace, streams: Streams) -> np.ndarray:
        """``(tokens, steps)``: each holder's report, its bit flipped w.p. ``1 - p``."""
        flip = streams.generator("noise").random(trace.holders.shape)
        keep = flip < keep_probability(setup.config.epsilon)
        bits = setup.data[trace.holders]
        return np.where(keep, bits, 1 - bits)

    def run(self, setup: Setup, trace: Trace, streams: Streams) -> FractionOutcome:
        """Each holder adds its randomized bit to the token; debias the mean report."""
        p = keep_probability(setup.config.epsilon)
        mean_report = float(self.reports(setup, trace, streams).mean())
        return FractionOutcome((mean_report - (1 - p)) / (2 * p - 1), float(setup.data.mean()))

    def record(self, outcome: FractionOutcome) -> dict[str, float]:
        return {"estimate": outcome.estimate, "abs_error": abs(outcome.estimate - outcome.truth)}

    def utility(self, setup: Setup, outcomes: Sequence[FractionOutcome]) -> ScalarUtility:
        truth = outcomes[0].truth
        estimate = float(np.mean([o.estimate for o in outcomes]))
        return ScalarUtility("share of ones", "binary randomized response", estimate, truth,
                               float(np.mean([abs(o.estimate - truth) for o in outcomes])),
                               theoretical_std(setup, truth))

    def audit_worlds(self, setup: Setup, node: int) -> tuple[Any, Any]:
        """``node``'s bit 0 or 1."""
        low, high = (np.where(np.arange(setup.topology.n) == node, bit, setup.data)
                     .astype(np.int8) for bit in (0, 1))
        return low, high

    def view(self, setup: Setup, trace: Trace, streams: Streams, observer: int) -> View:
        """The running sums of reports the observer receives."""
        return running_sum_view(self.reports(setup, trace, streams), trace.holders, observer)


def theoretical_std(setup: Setup, truth: float) -> float | None:
    """Std of the estimate where the holders are i.i.d. uniform (complete graph with
    self-moves): ``sqrt(π (1 - π) / (T' (2p - 1)²))`` over ``T'`` reports of all tokens."""
    topo = setup.topology
    if not topo.walk_kind.uniform or not topo.self_moves:
        return None
    p = keep_probability(setup.config.epsilon)
    pi = 1 - p + (2 * p - 1) * truth
    reports = setup.steps * setup.config.tokens
    return math.sqrt(pi * (1 - pi) / reports) / (2 * p - 1)
