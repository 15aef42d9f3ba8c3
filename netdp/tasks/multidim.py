"""Multidimensional collection on a walk (Wang et al., ICDE 2019, §4; AISTATS 2022 Alg. 4).

Each node holds one row of ``d`` attributes, numeric ones in ``[-1, 1]`` and categorical
ones. Each holder adds one fresh ε-LDP report of its row per visit: it samples ``k`` of
the ``d`` attributes and reports each at ``ε/k`` (``--split sample``, the paper's
solution), or every attribute at ``ε/d`` (``naive``), or all numeric attributes at once
by Duchi et al.'s multidimensional solution (``joint``). The token carries the running
sums of every estimate (the reports' unbiased contributions, scaled by ``d/k``); the
published sums over the ``T`` reports give each numeric mean and each category's
frequency (:mod:`netdp.mechanisms.multidim`).

Privacy: one report is ε-LDP (``k`` reports at ``ε/k`` compose to ε), and an observer sees
only the sum of the reports added since its last visit, so the histogram's shuffle
trackers apply with ``ε0 = ε`` (the shuffle bound of Feldman, McMillan and Talwar holds
for any ε0-LDP randomizer): on the ring with no dummies, on the complete graph per window;
on other graphs the LDP baseline only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from netdp.core import seeding
from netdp.core.errors import check
from netdp.core.params import Section, defaults_differ, param
from netdp.core.sections import DATA_GROUP
from netdp.core.setup import Setup, Streams, View
from netdp.core.simulation_config import CLONE_BOUNDS, SimulationConfig
from netdp.data.attributes import load_table, synthetic
from netdp.engine.trace import Trace
from netdp.mechanisms import registry
from netdp.mechanisms.multidim import MAX_ATTRIBUTES, NUMERIC, ORACLES, SPLITS, Multidim, Table
from netdp.report.types import Report, Utility, fmt
from netdp.tasks.base import Auditable, Sized, Task, walk_footprint
from netdp.tasks.preparation import build_topology, resolve
from netdp.tracking.graph_observers import report_tracking, shuffle_tracking, sources_param

GROUP = "multidimensional collection (--task multidim)"
MECHANISMS = NUMERIC + registry.aliases("bounded")
DATASETS = ("synthetic", "fair", "fair-numeric")
CHUNK = 8192  # reports drawn at once
MAX_DOMAIN = 10_000


@dataclass(frozen=True)
class MultidimConfig(Section):
    """Parameters of ``--task multidim``."""

    task = "multidim"

    attributes: int = param(6, "synthetic rows: number of attributes d", low=1,
                            high=MAX_ATTRIBUTES, metavar="D", group=GROUP)
    categorical: int = param(2, "synthetic rows: how many of the d attributes are "
                             "categorical (the others numeric in [-1, 1])", low=0,
                             high=MAX_ATTRIBUTES, metavar="C", group=GROUP)
    domain: int = param(4, "number of categories", low=2, high=MAX_DOMAIN, short=("-L",),
                        metavar="L", group=DATA_GROUP)
    dataset: str = param("synthetic", "multidim: synthetic, fair (Fair's affairs survey, "
                         "6366 rows: 5 numeric, 4 categorical; read from statsmodels: pip "
                         "install 'netdp[datasets]') or "
                         "fair-numeric (its 9 columns as numbers)", kind=str, metavar="NAME",
                         group=GROUP)
    mechanism: str = param("hybrid", "numeric attributes: hybrid (hm), piecewise (pm) or "
                           "duchi", choices=MECHANISMS, metavar="NAME", group=GROUP)
    oracle: str = param("oue", "categorical attributes: a pure frequency oracle "
                        f"({' '.join(ORACLES)})", choices=ORACLES, metavar="NAME",
                        group=GROUP)
    split: str = param("sample", "sample (k = max(1, min(d, floor(eps/2.5))) attributes at "
                       "eps/k, Wang et al. 2019), naive (all at eps/d) or joint (Duchi's "
                       "multidimensional solution; numeric only, --mechanism duchi)",
                       choices=SPLITS, group=GROUP)
    shuffle: str = param("fmt-numeric", "amplification-by-shuffling bound per window: "
                         "fmt-numeric or fmt-closed", choices=CLONE_BOUNDS,
                         group=DATA_GROUP)
    sources: int | None = sources_param()

    def validate(self, config: Any) -> None:
        check(self.dataset in DATASETS, "dataset", f"--task multidim takes "
              f"{', '.join(DATASETS)} (got {self.dataset!r})")
        for name in ("attributes", "categorical", "domain"):
            check(self.dataset == "synthetic" or not defaults_differ(self, name), name,
                  f"sets the synthetic schema; --dataset {self.dataset} has its own")
        if self.dataset == "synthetic":
            if defaults_differ(self, "categorical"):  # the one given is named
                check(self.categorical <= self.attributes, "categorical", f"must lie in "
                      f"0..{self.attributes} (the attributes) (got {self.categorical})")
            check(self.categorical <= self.attributes, "attributes", f"must be at least the "
                  f"categorical ones, --categorical {self.categorical} (got {self.attributes})")
        categorical = self.categorical if self.dataset == "synthetic" else \
            int(self.dataset == "fair")
        check(self.split != "joint" or categorical == 0, "split", "joint is Duchi et al.'s "
              "multidimensional solution, for numeric attributes only (give --categorical 0 "
              "or --dataset fair-numeric)")
        check(self.split != "joint" or self.mechanism == "duchi", "mechanism",
              "--split joint is Duchi's multidimensional solution: give --mechanism duchi")


@dataclass(frozen=True, eq=False)
class MultidimUtility(Utility):
    """Per-attribute estimates (mean over runs) and their errors beside the closed forms."""

    names: tuple[str, ...]
    estimate: np.ndarray
    truth: np.ndarray
    numeric: int
    domains: tuple[int, ...]
    mse_numeric: float | None
    mse_categorical: float | None
    theoretical_mse_numeric: float | None
    theoretical_mse_categorical: float | None
    central_mse_numeric: float | None
    central_mse_categorical: float | None
    reports: int
    k: int

    def to_dict(self) -> dict[str, Any]:
        return {"quantity": "numeric means and category frequencies",
                "attributes": list(self.names), "numeric": self.numeric,
                "domains": list(self.domains), "k": self.k,
                "estimate": self.estimate.tolist(), "truth": self.truth.tolist(),
                "mse_numeric": self.mse_numeric, "mse_categorical": self.mse_categorical,
                "theoretical_mse_numeric": self.theoretical_mse_numeric,
                "theoretical_mse_categorical": self.theoretical_mse_categorical,
                "central_mse_numeric": self.central_mse_numeric,
                "central_mse_categorical": self.central_mse_categorical,
                "reports": self.reports}

    def lines(self, report: Report) -> list[str]:
        mech = report.mechanism or {}
        lines = [f"  reports {mech.get('name')} eps={mech.get('epsilon', 0):.4g}: "
                 f"{len(self.names)} attributes, k = {self.k} per report; "
                 f"{self.reports:,} reports", "",
                 f"  {'attribute':>16} {'estimate':>11} {'truth':>11}"]
        for j in range(min(self.numeric, 12)):
            lines.append(f"  {self.names[j]:>16} {fmt(self.estimate[j]):>11} "
                         f"{fmt(self.truth[j]):>11}")
        start = self.numeric
        for j, c in enumerate(self.domains[:4]):
            name = self.names[self.numeric + j]
            est = " ".join(fmt(x) for x in self.estimate[start:start + min(c, 6)])
            tru = " ".join(fmt(x) for x in self.truth[start:start + min(c, 6)])
            lines.append(f"  {name:>16} {est}  (truth {tru}{' ...' if c > 6 else ''})")
            start += c
        lines.append("")
        for kind, mse, theory, central in (
                ("numeric means", self.mse_numeric, self.theoretical_mse_numeric,
                 self.central_mse_numeric),
                ("frequencies", self.mse_categorical, self.theoretical_mse_categorical,
                 self.central_mse_categorical)):
            if mse is not None:
                lines.append(f"  MSE of the {kind}: {fmt(mse)} (theory {fmt(theory)}); "
                             f"one report per node: {fmt(central)}")
        return lines


@dataclass(frozen=True)
class MultidimOutcome:
    """One run: the estimate of every mean and frequency, the truth, the report count."""

    estimate: np.ndarray
    truth: np.ndarray
    numeric: int
    reports: int

    @property
    def mse_numeric(self) -> float | None:
        """Mean squared error over the numeric attributes' means."""
        err = (self.estimate - self.truth)[:self.numeric]
        return float(np.mean(err**2)) if err.size else None

    @property
    def mse_categorical(self) -> float | None:
        """Mean squared error over every category of every categorical attribute."""
        err = (self.estimate - self.truth)[self.numeric:]
        return float(np.mean(err**2)) if err.size else None


def _section(setup: Setup) -> MultidimConfig:
    return setup.config.section_as(MultidimConfig)


def _shuffle(setup: Setup) -> tuple[float, str, int]:
    """The level of one report, the shuffle bound and the domain it reads."""
    return setup.config.epsilon, _section(setup).shuffle, 2


class MultidimTask(Task[Setup], Auditable, Sized):
    """Mixed numeric and categorical rows, one ε-LDP report of the row per visit."""

    name = "multidim"
    summary = "means and frequencies of d mixed attributes (Wang et al. ICDE 2019, §4)"
    section = MultidimConfig
    tracking = (
        shuffle_tracking("ring", "K windows of shuffled eps-LDP row reports per pair, KOV",
                         _shuffle),
        shuffle_tracking("complete", "each window an observer sees is one shuffle of eps-LDP "
                         "row reports, subsampled where the node's presence is uncertain; "
                         "KOV, capped at LDP of the largest count the view allows", _shuffle),
        report_tracking(_shuffle),
    )

    def prepare(self, config: SimulationConfig) -> Setup:

        sec = config.section_as(MultidimConfig)
        assert config.seed is not None
        table = None if sec.dataset == "synthetic" else load_table(sec.dataset)
        topo = build_topology(config, table.n if table is not None else config.nodes)
        if table is None:
            table = synthetic(topo.n, sec.attributes, sec.categorical, sec.domain,
                              seeding.generator(config.seed, "data"))
        check(table.n == topo.n, "nodes", f"the data holds {table.n} rows for {topo.n} nodes")
        resolved, steps = resolve(config, topo, self.steps_per_node, self.default_accountants)
        mech = Multidim(config.epsilon, table.numeric.shape[1], table.domains, sec.mechanism,
                        sec.oracle, sec.split)
        return Setup(resolved, topo, steps, table, mech)

    def chunks(self, setup: Setup, rows: np.ndarray, rng: np.random.Generator) -> Any:
        """The rows' reports as contributions, ``(chunk, width)`` at a time: the draws of
        :meth:`run` and :meth:`view` alike."""
        table: Table = setup.data
        for lo in range(0, rows.size, CHUNK):
            yield setup.mechanism.contributions(table.take(rows[lo:lo + CHUNK]), rng)

    def run(self, setup: Setup, trace: Trace, streams: Streams) -> MultidimOutcome:
        """Each holder adds a fresh report of its row to the token's running sums."""
        table: Table = setup.data
        flat = trace.holders.reshape(-1)
        total = np.zeros(table.width)
        for part in self.chunks(setup, flat, streams.generator("noise")):
            total += part.sum(axis=0)
        return MultidimOutcome(total / flat.size, table.truth().mean(axis=0),
                               table.numeric.shape[1], int(flat.size))

    def record(self, outcome: MultidimOutcome) -> dict[str, float]:
        out = {}
        if outcome.mse_numeric is not None:
            out["mse_numeric"] = outcome.mse_numeric
        if outcome.mse_categorical is not None:
            out["mse_categorical"] = outcome.mse_categorical
        return out

    def theoretical_variance(self, setup: Setup, reports: int) -> np.ndarray | None:
        """Closed-form variance of each estimate: rows drawn uniformly (the complete
        graph), or each row ``K`` times (the ring); ``None`` on other graphs."""
        table, mech, kind = setup.data, setup.mechanism, setup.topology.walk_kind
        if kind.uniform:
            return mech.sampled_variance(table, reports)
        if kind.public_schedule:
            return mech.variance(table) / setup.config.rounds
        return None

    def utility(self, setup: Setup, outcomes: Sequence[MultidimOutcome]) -> MultidimUtility:
        first, table, mech = outcomes[0], setup.data, setup.mechanism
        m = first.numeric

        def mean(values: list[float | None]) -> float | None:
            known = [v for v in values if v is not None]
            return float(np.mean(known)) if known else None

        def split(var: np.ndarray | None) -> tuple[float | None, float | None]:
            if var is None:
                return None, None
            return (float(var[:m].mean()) if m else None,
                    float(var[m:].mean()) if var.size > m else None)

        theory = split(self.theoretical_variance(setup, first.reports))
        central = split(mech.variance(table))
        return MultidimUtility(
            table.names, np.mean([o.estimate for o in outcomes], axis=0), first.truth, m,
            table.domains, mean([o.mse_numeric for o in outcomes]),
            mean([o.mse_categorical for o in outcomes]), theory[0], theory[1], central[0],
            central[1], first.reports, mech.k)

    def audit_worlds(self, setup: Setup, node: int) -> tuple[Any, Any]:
        """``node``'s row at -1 in every numeric attribute and category 0 everywhere, or at
        +1 and category 1."""
        table: Table = setup.data
        return table.with_row(node, -1.0, 0), table.with_row(node, 1.0, 1)

    def view(self, setup: Setup, trace: Trace, streams: Streams, observer: int) -> View:
        """The running sums the observer receives, from the run's own draws."""
        table: Table = setup.data
        rng = streams.generator("noise")
        contrib = np.concatenate(list(self.chunks(setup, trace.holders.reshape(-1), rng)))
        contrib = contrib.reshape(trace.tokens, trace.steps, table.width)
        before = np.cumsum(contrib, axis=1) - contrib
        token, step = np.nonzero(trace.holders == observer)
        return View(observer, token, step, before[token, step], contrib.sum(axis=1))

    def footprint(self, config: SimulationConfig, nodes: int,
                  steps: int) -> dict[str, tuple[float, str]]:
        sec = config.section_as(MultidimConfig)
        width = sec.attributes - sec.categorical + sec.categorical * sec.domain
        return {**walk_footprint(config, nodes, steps),
                "the rows": (8.0 * nodes * sec.attributes, "nodes"),
                "a chunk of reports": (24.0 * min(CHUNK, max(steps, 1)) * max(width, 1),
                                       "domain")}
