"""Heavy hitters: the ``K`` most frequent items of a ``2^m`` domain, by prefix extension.

The Prefix Extending Method (PEM) of Wang et al., "Locally Differentially Private Heavy
Hitter Identification", IEEE TDSC 2019 (arXiv 1708.06674), Section 4, on the walk of
AISTATS 2022 Alg. 4 (Alg. 2 on the ring). Each node holds one item (an ``m``-bit id).
The token carries every group's reports (a multiset: local-hashing reports ``(a, b, y)``
do not grow with the domain, and their support of any candidate can be counted later);
each holder adds, per visit, one report of its item's prefix for a group it draws
uniformly (:mod:`netdp.tasks.prefix_extension`). At the end the aggregator runs PEM's
rounds over the groups: all ``2^s0`` prefixes, then the ``c`` best extended by the next
bits, ..., and publishes the ``K`` best items with their estimated frequencies.

Utility, against the true top-``K`` ``T`` (ties to the smaller id) of the nodes' items
and the found set ``F``: precision ``|F ∩ T| / |F|``, recall ``|F ∩ T| / |T|``, and the
normalized cumulative rank (NCR, Wang et al. Section 6.1): the true item of rank ``i``
scores ``K - i + 1``, others 0, and ``NCR = Σ_{v ∈ F} q(v) / (K (K + 1) / 2)``.

Privacy: each report is one ε-LDP report of one randomizer (group drawn independently
of the data, then OLH/BLH of the prefix), and an observer sees the reports added since
its last visit as a multiset: the histogram's shuffle tracker applies as it is with
``ε0 = ε`` on the complete graph (Alg. 4) and the ring (Alg. 2, node 0's dummies of
uniform items). Other graphs: the LDP baseline only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from netdp.core import seeding
from netdp.core.errors import check
from netdp.core.params import Section, param
from netdp.core.sections import DATA_GROUP, check_data_file, column_param, data_file_param
from netdp.core.setup import Setup, Streams, View
from netdp.core.simulation_config import CLONE_BOUNDS, SimulationConfig
from netdp.engine.trace import Trace
from netdp.graphs.walk_kind import kind_of
from netdp.mechanisms import registry
from netdp.mechanisms._hashing import hash_values
from netdp.report.types import Report, Utility, fmt
from netdp.tasks.base import (
    Auditable,
    PairwiseDetails,
    Reported,
    Sized,
    Task,
    Timed,
    walk_footprint,
    walk_work,
)
from netdp.tasks.prefix_extension import (
    MAX_BITS,
    Plan,
    group_oracles,
    identify,
    perturb_groups,
    scores,
    true_top,
)
from netdp.tasks.preparation import build_topology, resolve, values_from_file
from netdp.tracking.graph_observers import report_tracking, shuffle_tracking, sources_param

GROUP = "heavy hitters (--task heavy-hitters)"
ORACLES = registry.names(family="local_hashing", first="olh")  # reports (a, b, y)
MAX_SUPPORT = 10**7  # the Zipf weights and the ids drawn: about 24 bytes each
#: Seconds of one report scored against one candidate prefix (hashing, support), measured
#: at the defaults and halved (see :data:`netdp.tasks.base.HOP_SECONDS`).
REPORT_CANDIDATE_SECONDS = 5e-8


@dataclass(frozen=True)
class HeavyHittersConfig(Section):
    """Parameters of ``--task heavy-hitters``."""

    task = "heavy-hitters"

    domain_bits: int = param(16, "items are m-bit ids: the domain is 2^m", low=1,
                             high=MAX_BITS, metavar="M", group=GROUP)
    top: int = param(10, "how many heavy hitters to find (K)", low=1, metavar="K",
                     group=GROUP)
    candidates: int | None = param(None, "prefixes kept after each round (c)", kind=int,
                                   low=1, metavar="C", group=GROUP, default_text="K")
    start_bits: int | None = param(None, "prefix length of the first round (s0)", kind=int,
                                   low=1, metavar="S0", group=GROUP,
                                   default_text="min(M, ceil(log2 2C))")
    step_bits: int | None = param(None, "bits added per round (eta)", kind=int, low=1,
                                  metavar="ETA", group=GROUP, default_text="4")
    groups: int | None = param(None, "number of rounds (groups of reports) instead of "
                               "--step-bits: lengths s0 + round(j (M - s0) / (G - 1))",
                               kind=int, low=1, metavar="G", group=GROUP,
                               default_text="from --step-bits")
    oracle: str = param("olh", "the frequency oracle of each report: olh or blh",
                        choices=ORACLES, group=GROUP)
    zipf_exponent: float = param(1.5, "synthetic items: Zipf law of this exponent over "
                                 "--support distinct ids", low=0.0, metavar="S", group=GROUP)
    support: int = param(1000, "synthetic items: number of distinct ids (drawn uniformly "
                         "from the 2^M domain; at most 2^M)", low=1, high=MAX_SUPPORT,
                         metavar="D", group=GROUP)
    data_file: str | None = data_file_param("the items (ids 0..2^M-1)")
    column: str | None = column_param()
    shuffle: str = param("fmt-numeric", "amplification-by-shuffling bound per window: "
                         "fmt-numeric or fmt-closed", choices=CLONE_BOUNDS,
                         group=DATA_GROUP)
    dummies: int | None = param(None, "ring: dummy reports node 0 adds at the start and "
                                "again at the end", kind=int, low=0, metavar="D",
                                group=DATA_GROUP, default_text="n - 1")
    sources: int | None = sources_param()

    def validate(self, config: Any) -> None:
        check_data_file(self)
        check(self.dummies is None or kind_of(config.topology).public_schedule, "dummies",
              f"applies to the ring only (the topology is {config.topology})")
        self.plan()

    def plan(self) -> Plan:
        """The prefix schedule (checked: bad combinations name their flag)."""
        return Plan.of(self.domain_bits, self.start_bits, self.step_bits, self.groups,
                       self.candidates or self.top,
                       "candidates" if self.candidates else "top")


@dataclass(frozen=True, eq=False)
class HeavyOutcome:
    """One run: the found items (best first) with their estimates, the true top-K with
    their frequencies, the scores, and the reports per group."""

    found: np.ndarray
    estimates: np.ndarray
    top: np.ndarray
    top_freq: np.ndarray
    found_freq: np.ndarray
    precision: float
    recall: float
    ncr: float
    per_group: np.ndarray


@dataclass(frozen=True, eq=False)
class HeavyUtility(Utility):
    """Precision, recall and NCR over the runs; the first run's items and estimates."""

    precision: float
    recall: float
    ncr: float
    precision_std: float
    first: HeavyOutcome
    lengths: tuple[int, ...]
    reports: int

    def to_dict(self) -> dict[str, Any]:
        f = self.first
        return {"quantity": "top-K items", "precision": self.precision,
                "recall": self.recall, "ncr": self.ncr, "precision_std": self.precision_std,
                "found": f.found.tolist(), "found_estimate": f.estimates.tolist(),
                "found_truth": f.found_freq.tolist(), "top": f.top.tolist(),
                "top_truth": f.top_freq.tolist(), "prefix_lengths": list(self.lengths),
                "reports_per_group": f.per_group.tolist(), "reports": self.reports}

    def lines(self, report: Report) -> list[str]:
        f, mech = self.first, report.mechanism or {}
        lengths = ", ".join(str(x) for x in self.lengths)
        lines = [f"  oracle  {mech.get('name')} eps={mech.get('epsilon', 0):.4g}; prefix "
                 f"lengths {lengths} bits; {self.reports:,} reports "
                 f"({', '.join(str(int(x)) for x in f.per_group)} per group)", "",
                 f"  {'rank':>4} {'found':>12} {'estimate':>10} {'truth':>10}   "
                 f"{'true top':>12} {'truth':>10}"]
        for i in range(max(f.found.size, f.top.size)):
            left = (f"{int(f.found[i]):>12} {fmt(f.estimates[i]):>10} "
                    f"{fmt(f.found_freq[i]):>10}" if i < f.found.size else " " * 34)
            right = (f"{int(f.top[i]):>12} {fmt(f.top_freq[i]):>10}"
                     if i < f.top.size else "")
            lines.append(f"  {i + 1:>4} {left}   {right}")
        lines += ["", f"  top-{f.top.size}: precision {fmt(self.precision)} (std "
                      f"{fmt(self.precision_std)} over runs), recall {fmt(self.recall)}, "
                      f"NCR {fmt(self.ncr)}"]
        return lines


def _section(setup: Setup) -> HeavyHittersConfig:
    return setup.config.section_as(HeavyHittersConfig)


def zipf_items(bits: int, support: int, exponent: float, n: int,
               rng: np.random.Generator) -> np.ndarray:
    """``n`` items: ``support`` distinct ids drawn uniformly from ``[0, 2^bits)``, the
    id of rank ``r`` held with probability ``∝ r^-exponent`` (a truncated Zipf law)."""
    ids = rng.choice(1 << bits, size=support, replace=False)
    weights = np.arange(1.0, support + 1) ** -exponent
    return ids[rng.choice(support, size=n, p=weights / weights.sum())].astype(np.int64)


def _shuffle(setup: Setup) -> tuple[float, str, int]:
    """The level of one report, the shuffle bound and the domain it reads."""
    return setup.config.epsilon, _section(setup).shuffle, 2


@dataclass(frozen=True, eq=False, kw_only=True)
class HeavyHittersSetup(Setup):
    """A heavy-hitters run prepared: the prefix plan and each group's oracle (the setup's
    ``mechanism`` is the last group's)."""

    plan: Plan
    oracles: tuple[Any, ...]


class HeavyHittersTask(Task[HeavyHittersSetup], Auditable, Reported, PairwiseDetails, Sized,
                       Timed):
    """Top-K items of a large domain by PEM's prefix extension over walk-carried reports."""

    name = "heavy-hitters"
    summary = "the top-K items of a 2^m domain by prefix extension (PEM, Wang et al. 2019)"
    section = HeavyHittersConfig
    default_nodes = 2000
    steps_per_node = 10
    tracking = (
        shuffle_tracking("ring", "K windows of shuffled reports per pair (first and last "
                         "padded by the dummies), composed with KOV", _shuffle),
        shuffle_tracking("complete", "each window an observer sees is one shuffle of its "
                         "reports (group drawn per report), subsampled where the node's "
                         "presence is uncertain; KOV, capped at LDP of the largest count the "
                         "view allows", _shuffle),
        report_tracking(_shuffle),
    )

    def prepare(self, config: SimulationConfig) -> HeavyHittersSetup:

        sec = config.section_as(HeavyHittersConfig)
        assert config.seed is not None
        values, nodes = values_from_file(config)
        if nodes is None and kind_of(config.topology).implicit:
            nodes = self.default_nodes
        topo = build_topology(config, nodes)
        if values is None:
            values = zipf_items(sec.domain_bits, min(sec.support, 1 << sec.domain_bits),
                                sec.zipf_exponent, topo.n, seeding.generator(config.seed,
                                                                             "data"))
        items = np.rint(values)
        check(bool(np.all(items == values)) and items.min() >= 0
              and items.max() < 1 << sec.domain_bits, "data-file",
              f"{sec.data_file} must hold integer ids in 0..2^{sec.domain_bits} - 1 "
              "(raise --domain-bits)")
        check(items.size == topo.n, "nodes",
              f"the data holds {items.size} items for {topo.n} nodes")
        dummies = sec.dummies
        if topo.walk_kind.public_schedule and dummies is None:
            dummies = topo.n - 1
        resolved, steps = resolve(config, topo, self.steps_per_node, self.default_accountants,
                                  dummies=dummies)
        plan = sec.plan()
        oracles = group_oracles(sec.oracle, config.epsilon, plan)
        return HeavyHittersSetup(resolved, topo, steps, items.astype(np.int64), oracles[-1],
                                 plan=plan, oracles=tuple(oracles))

    def describe_mechanism(self, setup: HeavyHittersSetup) -> dict[str, Any] | None:
        out = setup.mechanism.describe()
        out["domain"] = f"2^{_section(setup).domain_bits} (last group)"
        return out

    def mechanism_name(self, setup: HeavyHittersSetup) -> str | None:
        return _section(setup).oracle

    def privacy_details(self, setup: HeavyHittersSetup) -> dict[str, Any]:
        return {"shuffle_bound": _section(setup).shuffle}

    def token_reports(self, setup: HeavyHittersSetup, trace: Trace,
                      streams: Streams) -> list[tuple[np.ndarray, np.ndarray]]:
        """The reports the tokens carry, as ``(groups, reports)`` pairs: node 0's head
        dummies (ring), every holder's report in trace order (token by token), node 0's
        tail dummies (ring). Dummies are reports of uniform items (known to node 0, which
        removes them before estimating)."""

        plan, oracles = setup.plan, setup.oracles
        rng = streams.generator("noise")
        public = setup.topology.walk_kind.public_schedule  # the ring's node 0 adds dummies
        dummies = (_section(setup).dummies or 0) if public else 0
        head = perturb_groups(rng.integers(0, 1 << plan.bits, dummies), plan, oracles, rng)
        real = perturb_groups(setup.data[trace.holders.reshape(-1)], plan, oracles, rng)
        tail = perturb_groups(rng.integers(0, 1 << plan.bits, dummies), plan, oracles, rng)
        return [head, real, tail]

    def run(self, setup: HeavyHittersSetup, trace: Trace, streams: Streams) -> HeavyOutcome:
        """Each holder adds one report to the token; the aggregator runs PEM's rounds."""

        sec, plan = _section(setup), setup.plan
        groups, reports = self.token_reports(setup, trace, streams)[1]
        found = identify(groups, reports, plan, setup.oracles, sec.top)
        top, top_freq = true_top(setup.data, sec.top)
        values, counts = np.unique(setup.data, return_counts=True)
        at = np.searchsorted(values, found.items).clip(0, values.size - 1)
        found_freq = np.where(values[at] == found.items, counts[at], 0) / setup.data.size
        precision, recall, ncr = scores(found.items, top)
        return HeavyOutcome(found.items, found.estimates, top, top_freq, found_freq,
                            precision, recall, ncr,
                            np.bincount(groups, minlength=plan.groups))

    def record(self, outcome: HeavyOutcome) -> dict[str, float]:
        return {"precision": outcome.precision, "recall": outcome.recall, "ncr": outcome.ncr}

    def utility(self, setup: HeavyHittersSetup, outcomes: Sequence[HeavyOutcome]) -> HeavyUtility:
        precision = np.array([o.precision for o in outcomes])
        return HeavyUtility(float(precision.mean()),
                            float(np.mean([o.recall for o in outcomes])),
                            float(np.mean([o.ncr for o in outcomes])),
                            float(precision.std()), outcomes[0], setup.plan.lengths,
                            int(outcomes[0].per_group.sum()))

    def view(self, setup: HeavyHittersSetup, trace: Trace, streams: Streams, observer: int) -> View:
        """On each arrival, per group ``j``, the support counts of the published items'
        ``ℓ_j``-bit prefixes among the group's reports the token holds (head dummies
        included): a post-processing of the multiset the observer receives, ``(visits,
        g, F)``; ``published``: the same at the end of each token (tail dummies added)."""

        plan, oracles = setup.plan, setup.oracles
        found = self.run(setup, trace, streams).found
        parts = self.token_reports(setup, trace, streams)

        def support(groups: np.ndarray, reports: np.ndarray) -> np.ndarray:
            out = np.zeros((groups.size, plan.groups, found.size))
            for j, length in enumerate(plan.lengths):
                mine = groups == j
                prefixes = found >> (plan.bits - length)
                out[mine, j] = hash_values(reports[mine, None, :2], prefixes, oracles[j].g,
                                           oracles[j].prime) == reports[mine, 2, None]
            return out

        head, real, tail = (support(*part).sum(axis=0) if i != 1 else support(*part)
                            for i, part in enumerate(parts))
        steps = trace.steps
        running = head + np.cumsum(real.reshape(trace.tokens, steps, plan.groups, -1),
                                   axis=1) - real.reshape(trace.tokens, steps, plan.groups, -1)
        token, step = np.nonzero(trace.holders == observer)
        published = running[:, -1] + real.reshape(trace.tokens, steps, plan.groups,
                                                  -1)[:, -1] + tail
        return View(observer, token, step, running[token, step], published)

    def audit_worlds(self, setup: HeavyHittersSetup, node: int) -> tuple[Any, Any]:
        """``node``'s item is the most frequent item, or another id."""
        values, counts = np.unique(setup.data, return_counts=True)
        first = values[int(counts.argmax())]
        other = (int(first) + 1) % (1 << _section(setup).domain_bits)
        worlds = []
        for item in (first, other):
            data = np.array(setup.data, copy=True)
            data[node] = item
            worlds.append(data)
        return worlds[0], worlds[1]

    def work(self, config: SimulationConfig, nodes: int,
             steps: int) -> dict[str, tuple[float, str]]:
        plan = config.section_as(HeavyHittersConfig).plan()
        grown = [2 ** plan.lengths[0]] + [plan.keep * 2 ** (b - a) for a, b in
                                          zip(plan.lengths, plan.lengths[1:], strict=False)]
        pairs = float(config.tokens) * steps * sum(grown) / len(grown)
        return {**walk_work(config, nodes, steps),
                "the reports' candidates": (REPORT_CANDIDATE_SECONDS * pairs, "steps")}

    def footprint(self, config: SimulationConfig, nodes: int,
                  steps: int) -> dict[str, tuple[float, str]]:
        reports = config.tokens * steps
        return {**walk_footprint(config, nodes, steps),
                "the items": (8.0 * nodes, "nodes"),
                "the synthetic ids": (24.0 * config.section_as(HeavyHittersConfig).support,
                                       "support"),
                "the reports": (48.0 * reports, "steps")}
