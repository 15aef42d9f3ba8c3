"""Itemsets: frequent items of set-valued data by padding and sampling (PSFO) on a walk.

Wang, Li and Jha, "Locally Differentially Private Frequent Itemset Mining", IEEE S&P 2018:
§IV (PSFO, the adaptive GRR/OLH choice) and §V (SVIM: the top-k items from PSFO
estimates; ℓ is the 90th percentile of the set sizes). Each node holds a set of items; the
token carries the base oracle's running aggregate and every holder adds one fresh PSFO
report per visit (a fresh padded-and-sampled item, then the oracle's report). At the end
the aggregate is debiased, multiplied by ℓ and divided by the number of reports: the
frequency of each item among the nodes (biased downwards for items in sets longer than
ℓ, :meth:`~netdp.mechanisms.set_valued.PSFO.bias`). The top K of the estimate are the
frequent items, scored by precision and recall against the true top K.

Privacy: one PSFO report is ε-LDP (Theorem 3 for GRR at ε'), and an observer sees only the
aggregate of the reports added since its last visit, so the histogram's shuffle trackers
apply with ε0 = ε (the generic FMT bounds: the blanket bound is for plain GRR, not PSFO).
On the ring node 0's dummy reports are uniform over the extended domain, which dominate
``e^-ε P[y | v]`` for every set ``v`` as the bound asks of the other reports.

``--mining svim|svsm`` (§V-B, §VI): the walk's steps are split into equal blocks, one per
round (:meth:`ItemsetsTask.mine`); a report's round is a function of its step (public,
data-independent), and each round's aggregate is public at its end, so the tracker takes
each block as a token of its own (:func:`phase_trace`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import comb
from typing import Any

import numpy as np

from netdp.core import seeding
from netdp.core.errors import InputError, check
from netdp.core.params import Section, defaults_differ, param
from netdp.core.reading import read_csv_rows
from netdp.core.sections import DATA_GROUP, check_data_file, column_param, data_file_param
from netdp.core.setup import Setup, Streams, View
from netdp.core.simulation_config import CLONE_BOUNDS, SimulationConfig
from netdp.data.values import ZIPF_EXPONENT
from netdp.engine.trace import Trace
from netdp.graphs.walk_kind import kind_of
from netdp.mechanisms._oracle import row_chunks
from netdp.mechanisms.set_valued import (
    ORACLES,
    PSFO,
    ItemSets,
    candidate_masks,
    contained,
    itemset_keys,
    itemset_supports,
    mask_items,
    precision_recall,
    top_k,
)
from netdp.report.types import Report, Utility, fmt
from netdp.tasks.base import Auditable, Task, Timed, walk_work
from netdp.tasks.histogram_walk import aggregate_reports, perturbed_reports
from netdp.tasks.preparation import build_topology, resolve
from netdp.tracking.graph_observers import report_tracking, shuffle_tracking, sources_param

GROUP = "itemsets (--task itemsets)"
MAX_ITEMS = 100_000
PERCENTILE = 0.9  # S&P 2018 §V-B: ℓ covers 90% of the sets
MAX_CANDIDATES = 5000  # candidate itemsets of one SVSM round
#: Seconds PSFO spends per (report, item) pair (as OLH's; see
#: :attr:`netdp.mechanisms.registry.Entry.seconds`).
REPORT_ITEM_SECONDS = 7e-9
#: The rounds of each protocol, in walk order (each a block of consecutive steps).
PHASES = {"one-round": ("items",), "svim": ("items", "size", "candidates"),
          "svsm": ("items", "size", "candidates", "size", "itemsets")}


@dataclass(frozen=True)
class ItemsetsConfig(Section):
    """Parameters of ``--task itemsets``."""

    task = "itemsets"

    domain: int = param(50, "number of items", low=2, high=MAX_ITEMS, short=("-L",),
                        metavar="L", group=DATA_GROUP)
    set_size: int | None = param(None, "the padding length l of PSFO", kind=int, low=1,
                                 high=MAX_ITEMS, metavar="ELL", group=GROUP,
                                 default_text="the 90th percentile of the set sizes")
    mean_size: float = param(4.0, "synthetic sets: mean set size (1 + Poisson), items drawn "
                             "without replacement from a Zipf law", low=1.0, high=1000.0,
                             metavar="S", group=GROUP)
    top: int | None = param(None, "K: report the K most frequent items", kind=int, low=1,
                            high=MAX_ITEMS, metavar="K", group=GROUP,
                            default_text="min(10, L)")
    oracle: str = param("adaptive", "PSFO's oracle: grr (at the amplified eps'), olh, or "
                        "adaptive (grr iff L < (4 l^2 - l) e^eps + 1)", choices=ORACLES,
                        group=GROUP)
    shuffle: str = param("fmt-numeric", "amplification-by-shuffling bound per window: "
                         "fmt-numeric or fmt-closed", choices=CLONE_BOUNDS,
                         group=DATA_GROUP)
    dummies: int | None = param(None, "ring: dummy reports node 0 adds at the start and "
                                "again at the end", kind=int, low=0, metavar="D",
                                group=DATA_GROUP, default_text="n - 1")
    data_file: str | None = data_file_param("the sets",
                                            "one row per node; items separated by spaces")
    column: str | None = column_param()
    mining: str = param("one-round", "one-round (one PSFO round over all items), svim "
                        "(S&P 2018 §V: candidates, a private size round choosing l, the "
                        "candidates' frequencies) or svsm (§VI: svim, then the itemsets of "
                        "the top K items); the walk's steps are split into equal blocks, "
                        "one per round", choices=tuple(PHASES), group=GROUP)
    itemset_size: int = param(2, "svsm: the largest itemset size (candidates: every subset "
                              "of 2..S of the top K items)", low=2, high=4, metavar="S",
                              group=GROUP)
    sources: int | None = sources_param()

    @property
    def k(self) -> int:
        """K of the top K: ``--top``, else ``min(10, L)``."""
        return self.top if self.top is not None else min(10, self.domain)

    def validate(self, config: Any) -> None:
        check(self.top is None or self.top <= self.domain, "top",
              f"must lie in 1..{self.domain} (the domain) (got {self.top})")
        if defaults_differ(self, "mean_size"):  # the one given is named
            check(self.mean_size <= self.domain, "mean-size", f"must lie in "
                  f"1..{self.domain} (the domain) (got {self.mean_size:g})")
        check(self.mean_size <= self.domain, "domain", f"must be at least the mean set "
              f"size, --mean-size {self.mean_size:g} (got {self.domain})")
        check_data_file(self)
        check(self.dummies is None or kind_of(config.topology).public_schedule, "dummies",
              f"applies to the ring only (the topology is {config.topology})")
        check(config.epsilon <= 700.0, "epsilon", "must be <= 700 (e^epsilon must stay "
              f"finite; got {config.epsilon:g})")
        check(self.mining == "one-round" or not kind_of(config.topology).public_schedule, "mining",
              f"{self.mining} runs on the walk (the ring's dummies and tracker are for "
              "one-round)")
        if self.mining == "svsm":

            count = sum(comb(self.k, s) for s in range(2, self.itemset_size + 1))
            check(count <= MAX_CANDIDATES, "itemset-size", f"{count} candidate itemsets of "
                  f"the top {self.k} items; at most {MAX_CANDIDATES} (lower --itemset-size "
                  "or --top)")


def synthetic_sets(n: int, domain: int, mean_size: float, rng: np.random.Generator) -> ItemSets:
    """``n`` sets: size ``1 + Poisson(mean_size - 1)`` (at most ``domain``), items drawn
    without replacement with weights ``(i+1)^-1.1`` (the largest Gumbel-perturbed log
    weights). Draws, in order: the sizes, then one Gumbel per user and item, by blocks of
    users."""

    sizes = np.minimum(1 + rng.poisson(mean_size - 1, n), domain)
    log_w = -ZIPF_EXPONENT * np.log(np.arange(domain) + 1.0)
    rows = []
    for block in row_chunks(n, domain):
        keys = log_w + rng.gumbel(size=(block.stop - block.start, domain))
        order = np.argsort(-keys, axis=1)
        keep = np.arange(domain) < sizes[block, None]
        rows.append(order[keep])  # row-major: each user's items, in order
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    items = np.concatenate(rows) if rows else np.empty(0, dtype=np.int64)
    return ItemSets(offsets, items, domain)


def poisson_length(mean_size: float, domain: int) -> int:
    """ℓ for synthetic sets: the 90th percentile of ``1 + Poisson(mean_size - 1)`` (a
    public figure of the generator, not of the data)."""
    from scipy import stats

    return int(min(domain, 1 + stats.poisson.ppf(PERCENTILE, mean_size - 1)))


def read_sets(path: str, column: str | None, domain: int) -> ItemSets:
    """The sets of a CSV file with a header row: one row per node, one cell of item ids
    separated by spaces (an empty cell is an empty set)."""
    rows = read_csv_rows(path, "data-file")
    check(len(rows) >= 2, "data-file", f"{path} needs a header row and one row per node")
    header = rows[0]
    if column is None:
        index = 0
    elif column in header:
        index = header.index(column)
    else:
        check(column.isdigit() and int(column) < len(header), "column",
              f"{path} has no column {column!r}; give a name from its header row or "
              f"an index 0..{len(header) - 1}")
        index = int(column)
    sets = []
    for line, row in enumerate(rows[1:], start=2):
        cell = row[index] if index < len(row) else ""
        try:
            items = [int(tok) for tok in cell.split()]
            if any(not 0 <= i < 2**63 for i in items) or len(set(items)) < len(items):
                raise ValueError(line)  # int64 holds each; a set holds an item once
            sets.append(items)
        except ValueError:
            raise InputError("data-file", f"{path} line {line}: items must be distinct "
                             "integers in 0..2**63-1 separated by spaces") from None
    check(max((max(x) for x in sets if x), default=0) < domain, "data-file",
          f"{path} holds items beyond --domain {domain} (items 0..{domain - 1}); give a "
          "--domain above its largest item")
    return ItemSets.from_lists(sets, domain)


@dataclass(frozen=True, eq=False)
class ItemsetsOutcome:
    """One run: estimated and true item frequencies, and the top K found; with ``svsm``,
    the top itemsets found (rows of items padded with -1), their estimated and true
    frequencies and their precision/recall; the ℓ of each PSFO round."""

    estimate: np.ndarray
    truth: np.ndarray
    found: np.ndarray
    reports: int
    dummies: int
    precision: float
    recall: float
    lengths: tuple[int, ...] = ()
    itemsets: np.ndarray | None = None
    itemset_estimate: np.ndarray | None = None
    itemset_truth: np.ndarray | None = None
    itemset_precision: float = float("nan")
    itemset_recall: float = float("nan")

    @property
    def mse(self) -> float:
        """Mean over items of the squared error."""
        return float(np.mean((self.estimate - self.truth) ** 2))


@dataclass(frozen=True, eq=False)
class ItemsetsUtility(Utility):
    """Item frequencies (mean over runs), their errors, and the top K's precision/recall."""

    estimate: np.ndarray
    truth: np.ndarray
    found: np.ndarray
    mse: float
    theoretical_mse: float
    ldp_mse: float
    max_bias: float
    precision: float
    recall: float
    top: int
    length: int
    length_source: str
    longer_share: float
    reports: int
    mining: str = "one-round"
    last: ItemsetsOutcome | None = None
    itemset_precision: float = float("nan")
    itemset_recall: float = float("nan")

    def to_dict(self) -> dict[str, Any]:
        out = {"quantity": "item frequencies", "estimate": self.estimate.tolist(),
               "truth": self.truth.tolist(), "top_found": self.found.tolist(),
               "mse": self.mse, "theoretical_mse": self.theoretical_mse,
               "ldp_mse": self.ldp_mse, "max_bias": self.max_bias,
               "precision": self.precision, "recall": self.recall, "top": self.top,
               "set_size": self.length, "set_size_source": self.length_source,
               "longer_share": self.longer_share, "reports": self.reports}
        if self.mining == "one-round" or self.last is None:
            return out
        out.update(mining=self.mining, round_set_sizes=list(self.last.lengths))
        if self.last.itemsets is not None:
            assert self.last.itemset_estimate is not None and self.last.itemset_truth is not None
            out.update(itemsets_found=[[int(i) for i in row if i >= 0]
                                       for row in self.last.itemsets],
                       itemset_estimate=self.last.itemset_estimate.tolist(),
                       itemset_truth=self.last.itemset_truth.tolist(),
                       itemset_precision=self.itemset_precision,
                       itemset_recall=self.itemset_recall)
        return out

    def lines(self, report: Report) -> list[str]:
        mech = report.mechanism or {}
        lines = [f"  oracle  psfo with {mech['oracle']} (rule {mech['rule']}), eps="
                 f"{mech['epsilon']:.4g} (base eps {mech['base_epsilon']:.4g}); {self.truth.size}"
                 f" items + {self.length} dummies; {self.reports:,} reports",
                 f"  l = {self.length} ({self.length_source}); {self.longer_share:.1%} of the "
                 f"sets are longer (largest downward bias {fmt(self.max_bias)})", "",
                 f"  {'item':>6} {'estimate':>11} {'truth':>11}"]
        for j in self.found[:12]:
            lines.append(f"  {j:>6} {fmt(self.estimate[j]):>11} {fmt(self.truth[j]):>11}")
        lines += ["", f"  top {self.top}: precision {self.precision:.3f}, recall "
                      f"{self.recall:.3f} (mean over runs)"]
        if self.mining == "one-round" or self.last is None:
            return lines + [f"  error   MSE {fmt(self.mse)} (theory {fmt(self.theoretical_mse)}"
                            f"); LDP baseline MSE {fmt(self.ldp_mse)} (one report per node)"]
        last = self.last
        lines += [f"  error   MSE {fmt(self.mse)} (no closed form: the candidates and l are "
                  f"chosen from the reports); LDP baseline MSE {fmt(self.ldp_mse)} (one-round,"
                  " one report per node)",
                  f"  rounds  {self.mining}: {' -> '.join(PHASES[self.mining])}; l of the PSFO "
                  f"rounds (first run): {', '.join(str(x) for x in last.lengths)}"]
        if last.itemsets is not None:
            assert last.itemset_estimate is not None and last.itemset_truth is not None
            lines += ["", f"  {'itemset':>16} {'estimate':>11} {'truth':>11}"]
            for row, est, tru in list(zip(last.itemsets, last.itemset_estimate,
                                          last.itemset_truth, strict=True))[:12]:
                name = "{" + ",".join(str(i) for i in row if i >= 0) + "}"
                lines.append(f"  {name:>16} {fmt(est):>11} {fmt(tru):>11}")
            lines += ["", f"  top {self.top} itemsets: precision {self.itemset_precision:.3f},"
                          f" recall {self.itemset_recall:.3f} (mean over runs)"]
        return lines


def _section(setup: Setup) -> ItemsetsConfig:
    return setup.config.section_as(ItemsetsConfig)


def _extended(setup: Setup) -> int:
    """The base oracle's domain, ``d + ℓ`` (the shuffle tracker's domain)."""
    return int(setup.mechanism.base.domain)


def _published(setup: Setup, trace: Trace) -> Trace:
    """The walk as its rounds' aggregates are published (:func:`phase_trace`)."""
    return phase_trace(trace, len(PHASES[_section(setup).mining]))


def phase_trace(trace: Trace, phases: int) -> Trace:
    """The walk with each round's block of steps as a token of its own, published at its
    end (one round's aggregate is public once the next round's candidates are drawn from
    it): each window an observer sees then holds the reports of one round only, all of
    one ε-LDP randomizer. One round: the trace itself."""
    if phases == 1:
        return trace
    tokens, steps = trace.holders.shape
    return Trace(trace.n, trace.holders.reshape(tokens * phases, steps // phases))


def phase_holders(trace: Trace, phases: int) -> list[np.ndarray]:
    """The holders of each round's block of steps (every token's), in walk order."""
    return [block.reshape(-1) for block in np.split(trace.holders, phases, axis=1)]


def psfo_round(psfo: PSFO, sets: ItemSets, holders: np.ndarray,
               rng: np.random.Generator) -> np.ndarray:
    """One PSFO round: each entry of ``holders`` adds one report (draws: the sampled items,
    then the reports); the estimated frequency of each of ``sets``' items among the
    holders' sets, ``ℓ ĉ_i / N`` (S&P 2018 §IV)."""

    total = aggregate_reports(psfo.base, psfo.sample(sets, holders, rng), rng)
    return psfo.estimate_counts(np.asarray(total), holders.size) / holders.size


def size_round(epsilon: float, sizes: np.ndarray, cap: int, oracle: str,
               holders: np.ndarray, rng: np.random.Generator) -> int:
    """ℓ from a private round of set sizes (S&P 2018 §V-B): each report is a frequency
    oracle's report of ``min(|v|, cap)`` (PSFO of the singleton, ℓ = 1: ε-LDP); ℓ is the
    smallest size whose estimated cumulative share (negative estimates clipped) reaches
    90%, at least 1."""
    values = np.minimum(sizes, cap)
    singletons = ItemSets(np.arange(values.size + 1), values, cap + 1)
    share = np.clip(psfo_round(PSFO(epsilon, cap + 1, 1, oracle), singletons, holders, rng),
                    0.0, None)
    total = share.sum()
    if total <= 0:
        return 1
    return max(1, int(np.searchsorted(np.cumsum(share), PERCENTILE * total)))


def _shuffle(setup: Setup) -> tuple[float, str, int]:
    """The level of one report, the shuffle bound and the domain it reads."""
    return setup.config.epsilon, _section(setup).shuffle, _extended(setup)


@dataclass(frozen=True, eq=False, kw_only=True)
class ItemsetsSetup(Setup):
    """An itemsets run prepared: where the PSFO length came from (``length_source``) and,
    for ``svsm`` mining, the exact supports of every itemset some user holds."""

    length_source: str
    supports: tuple[np.ndarray, np.ndarray] | None = None


class ItemsetsTask(Task[ItemsetsSetup], Auditable, Timed):
    """Frequent items of set-valued data, by PSFO reports aggregated in a walking token."""

    name = "itemsets"
    summary = "frequent items of set-valued data by padding and sampling (PSFO, S&P 2018)"
    section = ItemsetsConfig
    tracking = (
        shuffle_tracking("ring", "the histogram's ring tracker: K windows of shuffled "
                         "eps-LDP PSFO reports per pair, composed with KOV", _shuffle),
        shuffle_tracking("complete", "the histogram's walk tracker: each window one shuffle "
                         "of eps-LDP PSFO reports; KOV, capped at LDP of the largest count "
                         "the view allows", _shuffle, _published),
        report_tracking(_shuffle, _published),
    )

    def prepare(self, config: SimulationConfig) -> ItemsetsSetup:

        sec = config.section_as(ItemsetsConfig)
        assert config.seed is not None
        sets = None
        if sec.data_file is not None:
            sets = read_sets(sec.data_file, sec.column, sec.domain)
            check(config.nodes is None or config.nodes == sets.n, "nodes",
                  f"{sec.data_file} holds {sets.n} sets; omit --nodes or pass --nodes {sets.n}")
        topo = build_topology(config, config.nodes if sets is None else sets.n)
        if sets is None:
            sets = synthetic_sets(topo.n, sec.domain, sec.mean_size,
                                  seeding.generator(config.seed, "data"))
        check(sets.n == topo.n, "nodes", f"the data holds {sets.n} sets for {topo.n} nodes")
        length, source = self.length(sec, sets)
        dummies = sec.dummies
        if topo.walk_kind.public_schedule and dummies is None:
            dummies = topo.n - 1
        resolved, steps = resolve(config, topo, self.steps_per_node, self.default_accountants,
                                  dummies=dummies)
        phases = len(PHASES[sec.mining])
        if phases > 1:  # equal blocks of steps, one per round
            steps = phases * -(-steps // phases)
            resolved = resolved.replace(steps=steps)
        mech = PSFO(resolved.epsilon, sec.domain, length, sec.oracle)
        supports = itemset_supports(sets, sec.itemset_size) if sec.mining == "svsm" else None
        return ItemsetsSetup(resolved, topo, steps, sets, mech, length_source=source,
                             supports=supports)

    @staticmethod
    def length(sec: ItemsetsConfig, sets: ItemSets) -> tuple[int, str]:
        """ℓ and where it came from: ``--set-size``; for synthetic sets the 90th percentile
        of the generator's size law (public); for a file the 90th percentile of its sizes
        (read from the data without privacy: S&P 2018 §V-B estimates it privately from a
        separate group of users, which this run does not model)."""
        if sec.set_size is not None:
            return sec.set_size, "--set-size"
        if sec.data_file is None:
            return poisson_length(sec.mean_size, sec.domain), "90th percentile of the size law"
        q = np.quantile(sets.sizes, PERCENTILE, method="inverted_cdf") if sets.n else 1
        return max(1, int(q)), "90th percentile of the file's set sizes (not private)"

    def work(self, config: SimulationConfig, nodes: int,
             steps: int) -> dict[str, tuple[float, str]]:
        reports = float(config.tokens) * steps
        domain = config.section_as(ItemsetsConfig).domain
        return {**walk_work(config, nodes, steps),
                "the set-valued oracle": (REPORT_ITEM_SECONDS * reports * domain, "domain")}

    def run(self, setup: ItemsetsSetup, trace: Trace, streams: Streams) -> ItemsetsOutcome:
        """Each holder adds a fresh PSFO report to the token's aggregate; node 0 removes
        its dummies on the ring."""
        if _section(setup).mining != "one-round":
            return self.mine(setup, trace, streams)
        head, reports, tail, _ = self._draws(setup, trace, streams, keep=False)
        return self._outcome(setup, reports, head, tail)

    def mine(self, setup: ItemsetsSetup, trace: Trace, streams: Streams) -> ItemsetsOutcome:
        """SVIM (S&P 2018 §V-B) and SVSM (§VI) on the walk, one block of steps per round:
        PSFO over all items, whose top ``2K`` are the candidates; a size round choosing ℓ
        for the candidates; PSFO over the candidates (``v ∩ C``), whose top ``K`` are the
        frequent items; for SVSM a size round and PSFO over the candidate itemsets (every
        subset of ``2..S`` of the frequent items) each set contains, whose top ``K`` are the
        frequent itemsets. Draws, in order, from the noise stream: each round's."""
        sec, sets, psfo = _section(setup), setup.data, setup.mechanism
        phases = PHASES[sec.mining]
        blocks = phase_holders(trace, len(phases))
        rng = streams.generator("noise")
        eps, k = setup.config.epsilon, sec.k
        first = psfo_round(psfo, sets, blocks[0], rng)
        cand = top_k(first, min(2 * k, sets.domain))
        cand_sets = contained(sets, cand, np.left_shift(1, np.arange(cand.size)))
        length = size_round(eps, cand_sets.sizes, cand.size, sec.oracle, blocks[1], rng)
        second = psfo_round(PSFO(eps, cand_sets.domain, length, sec.oracle), cand_sets,
                            blocks[2], rng)[:cand.size]
        estimate = first.copy()
        estimate[cand] = second
        found = cand[top_k(second, k)]
        truth = sets.frequencies()
        precision, recall = precision_recall(found, truth, k)
        reports = int(setup.steps * setup.config.tokens)
        lengths = (psfo.length, length)
        if "itemsets" not in phases:
            return ItemsetsOutcome(estimate, truth, found, reports, 0, precision, recall,
                                   lengths)
        masks = candidate_masks(found.size, sec.itemset_size)
        held = contained(sets, found, masks)
        length = size_round(eps, held.sizes, masks.size, sec.oracle, blocks[3], rng)
        freq = psfo_round(PSFO(eps, held.domain, length, sec.oracle), held, blocks[4],
                          rng)[:masks.size]
        best = top_k(freq, min(k, masks.size))
        rows = mask_items(found, masks, sec.itemset_size)[best]
        assert setup.supports is not None
        keys, counts = setup.supports
        wanted = itemset_keys(rows, sets.domain)
        at = np.searchsorted(keys, wanted)
        hit = at < keys.size
        hit[hit] = keys[at[hit]] == wanted[hit]
        support = np.append(counts, 0.0)  # the last entry: itemsets nobody holds
        p_sets, r_sets = precision_recall(np.where(hit, at, -1), support, k)
        return ItemsetsOutcome(estimate, truth, found, reports, 0, precision, recall,
                               (*lengths, length), rows, freq[best],
                               support[np.where(hit, at, keys.size)] / sets.n, p_sets, r_sets)

    def _draws(self, setup: ItemsetsSetup, trace: Trace, streams: Streams,
               keep: bool) -> tuple[Any, Any, Any, Any]:
        """``(head, aggregate, tail, report chunks)``: the dummies' aggregates (0 off the
        ring) and the real reports'. Draws, in order: the sampled items (one uniform per
        report), the head dummies, the reports, the tail dummies."""

        psfo: PSFO = setup.mechanism
        rng = streams.generator("noise")
        sampled = psfo.sample(setup.data, trace.holders.reshape(-1), rng)
        ring = setup.topology.walk_kind.public_schedule
        dummies = int(_section(setup).dummies or 0) if ring else 0
        ext, base = _extended(setup), psfo.base
        head = aggregate_reports(base, rng.integers(0, ext, dummies), rng) if ring else 0.0
        if keep:
            chunks = perturbed_reports(base, sampled, rng)
            total: Any = sum((base.aggregate(c) for c in chunks), start=0.0)
        else:
            chunks, total = [], aggregate_reports(base, sampled, rng)
        tail = aggregate_reports(base, rng.integers(0, ext, dummies), rng) if ring else 0.0
        return head, total, tail, chunks

    def _outcome(self, setup: ItemsetsSetup, total: Any, head: Any, tail: Any) -> ItemsetsOutcome:
        psfo: PSFO = setup.mechanism
        reports = int(setup.steps * setup.config.tokens)
        real = (head + total + tail) - head - tail
        estimate = psfo.estimate_counts(real, reports) / reports
        truth = setup.data.frequencies()
        k = _section(setup).k
        found = top_k(estimate, k)
        precision, recall = precision_recall(found, truth, k)
        public = setup.topology.walk_kind.public_schedule  # the ring's node 0 adds dummies
        dummies = int(_section(setup).dummies or 0) if public else 0
        return ItemsetsOutcome(estimate, truth, found, reports, dummies, precision, recall)

    def record(self, outcome: ItemsetsOutcome) -> dict[str, float]:
        out = {"mse": outcome.mse, "precision": outcome.precision, "recall": outcome.recall}
        if outcome.itemsets is not None:
            out.update(itemset_precision=outcome.itemset_precision,
                       itemset_recall=outcome.itemset_recall)
        return out

    def variance(self, setup: ItemsetsSetup) -> np.ndarray:
        """Variance of each estimated frequency. The ring (every node ``K`` times):
        ``K ℓ² Σ_u s_ui (1 - s_ui) / (δ² N²)``, exact; elsewhere the reports taken as
        i.i.d. over uniform holders (exact on the complete graph with self-moves):
        ``ℓ² s (1 - s) / (N δ²)`` with ``s = q* + δ φ_i``."""
        psfo: PSFO = setup.mechanism
        sets: ItemSets = setup.data
        reports = setup.steps * setup.config.tokens
        if setup.topology.walk_kind.public_schedule:
            return np.asarray(setup.config.rounds * psfo.variance(sets) / reports**2)
        share = psfo.sampling_sums(sets)[0] / sets.n
        return psfo.mixture_variance(share, reports)

    def utility(self, setup: ItemsetsSetup, outcomes: Sequence[ItemsetsOutcome]) -> ItemsetsUtility:
        psfo: PSFO = setup.mechanism
        sets: ItemSets = setup.data
        first, sec = outcomes[0], _section(setup)
        estimate = np.mean([o.estimate for o in outcomes], axis=0)
        bias = psfo.bias(sets) / sets.n
        ldp = psfo.variance(sets) / sets.n**2 + bias**2
        one = sec.mining == "one-round"
        theory = float(np.mean(self.variance(setup) + bias**2)) if one else float("nan")
        return ItemsetsUtility(
            estimate=estimate, truth=first.truth, found=top_k(estimate, sec.k),
            mse=float(np.mean([o.mse for o in outcomes])),
            theoretical_mse=theory,
            ldp_mse=float(np.mean(ldp)), max_bias=float(-bias.min()),
            precision=float(np.mean([o.precision for o in outcomes])),
            recall=float(np.mean([o.recall for o in outcomes])), top=sec.k,
            length=psfo.length, length_source=setup.length_source,
            longer_share=float(np.mean(sets.sizes > psfo.length)), reports=first.reports,
            mining=sec.mining, last=None if one else first,
            itemset_precision=float(np.mean([o.itemset_precision for o in outcomes])),
            itemset_recall=float(np.mean([o.itemset_recall for o in outcomes])))

    def audit_worlds(self, setup: ItemsetsSetup, node: int) -> tuple[Any, Any]:
        """``node``'s set ``{0}`` or ``{1}``."""
        sets: ItemSets = setup.data
        lists = [list(sets.items[a:b]) for a, b in zip(sets.offsets[:-1], sets.offsets[1:],
                                                        strict=True)]
        worlds = []
        for item in (0, 1):
            lists[node] = [item]
            worlds.append(ItemSets.from_lists(lists, sets.domain))
        return worlds[0], worlds[1]

    def view(self, setup: ItemsetsSetup, trace: Trace, streams: Streams, observer: int) -> View:
        """The aggregates the observer receives, from the run's own draws (one-round)."""
        check(_section(setup).mining == "one-round", "mining",
              "the audit replays the one-round protocol only")
        head, _, tail, chunks = self._draws(setup, trace, streams, keep=True)
        base = setup.mechanism.base
        reports = np.concatenate(chunks) if chunks else np.empty(0)
        steps = trace.steps
        token, step = np.nonzero(trace.holders == observer)
        received, published = [], []
        for k in range(trace.tokens):
            cuts = np.concatenate([[0], step[token == k], [steps]]) + k * steps
            parts = [base.aggregate(reports[a:b]) for a, b in zip(cuts[:-1], cuts[1:],
                                                                   strict=True)]
            running = head + np.cumsum(parts, axis=0)
            received.extend(running[:-1])
            published.append(running[-1] + tail)
        return View(observer, token, step, np.array(received), np.array(published))
