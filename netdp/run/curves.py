"""Each pair's privacy curve ``ε(δ)`` from one run, and its privacy loss distribution.

A report gives every pair's ``ε(u → v)`` at one target δ. Its curve is the same run (the
same seed: the same walk, the same noise) accounted at other targets: netdp's own figure
at each δ of a grid (:data:`DELTAS`, the report's target among them), by the report's
first accountant. Each point bounds the pair's privacy profile, so the points give the
pair a privacy loss distribution (:mod:`netdp.accounting.profile_pld`) to compose with
anything in dp-accounting: a DP-SGD training, a second protocol, repeated runs. For an
observer, or the whole run, the worst pair's curve is the largest ``ε`` at each δ.

Examples
--------
>>> import netdp
>>> curves = netdp.pair_curves({"nodes": 12, "steps": 240, "seed": 1,
...                             "accountants": ["rdp"]}, deltas=[1e-3, 1e-6])
>>> curves.epsilons.shape  # the default target, 1e-6, is one of them
(2, 12, 12)
>>> bool(curves.curve(node=0, observer=1)[0] < curves.curve(node=0, observer=1)[-1])
True
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from netdp.accounting.events import PrivacyLoss
from netdp.core import progress as bars
from netdp.core.errors import check
from netdp.core.table_rows import pairs_frame

#: The default grid of targets: 1, 2 and 5 a decade, from 0.5 to 1e-12.
DELTAS: tuple[float, ...] = tuple(sorted(
    (float(f"{m}e-{k}") for k in range(1, 13) for m in (5, 2, 1)), reverse=True))
#: Most nodes of a run whose curves are kept (``deltas x n x n`` figures).
MAX_NODES = 500


@dataclass(frozen=True)
class PairCurves:
    """Every pair's ``ε(u → v)`` at each target δ of one run.

    Attributes
    ----------
    accountant
        The accountant of every figure.
    deltas
        The targets, from the largest.
    epsilons
        ``epsilons[k, u, v] = ε(u → v)`` at ``deltas[k]`` (NaN on the diagonal and for an
        observer the run did not track; ``inf``: unprotected).
    labels
        The nodes' names (ids, or a graph file's labels).
    seed, config
        The run's seed and its configuration (the report's target left out).
    """

    accountant: str
    deltas: np.ndarray
    epsilons: np.ndarray
    labels: tuple[Any, ...]
    seed: int
    config: Mapping[str, Any] = field(repr=False)

    def curve(self, node: int | None = None, observer: int | None = None) -> np.ndarray:
        """``ε`` at each of :attr:`deltas`: of the pair ``node → observer``; with one of
        them ``None``, the worst pair of the other; with both, of the whole run."""
        n = self.epsilons.shape[1]
        for name, value in (("node", node), ("observer", observer)):
            check(value is None or 0 <= value < n, name, f"must lie in 0..{n - 1} "
                  f"(got {value})")
        if node is not None and observer is not None:
            check(node != observer, "node", "a node is not its own observer")
            return self.epsilons[:, node, observer].copy()
        rows = self.epsilons if node is None else self.epsilons[:, node:node + 1]
        cols = rows if observer is None else rows[:, :, observer:observer + 1]
        flat = cols.reshape(cols.shape[0], -1)
        check(bool(np.isfinite(flat).any() or np.isinf(flat).any()), "observer",
              "the run tracked no pair there")
        return np.nanmax(flat, axis=1)

    def pld(self, node: int | None = None, observer: int | None = None,
            step: float | None = None) -> Any:
        """The privacy loss distribution (``dp_accounting``) of :meth:`curve`'s points:
        its figures bound the pair's at every δ, and give back the points on their lower
        convex hull to ``step`` (:mod:`netdp.accounting.profile_pld`)."""
        from netdp.accounting.profile_pld import STEP, profile_pld

        eps, deltas = self._points(node, observer)
        return profile_pld(eps, deltas, STEP if step is None else step)  # none: all at +∞

    def event(self, node: int | None = None, observer: int | None = None,
              step: float | None = None) -> Any:
        """:meth:`pld` as netdp's event (:class:`~netdp.accounting.events.PrivacyLoss`),
        for netdp's own accountants."""
        from netdp.accounting.profile_pld import STEP, profile_pmf

        pmf = profile_pmf(*self._points(node, observer), STEP if step is None else step)
        if pmf.probs.size == 0:  # unprotected at every delta
            return PrivacyLoss((0,), (0.0,), 1.0, pmf.step)
        return PrivacyLoss(tuple(pmf.losses.tolist()), tuple(pmf.probs.tolist()),
                           pmf.infinity, pmf.step)

    def epsilon(self, delta: float, node: int | None = None,
                observer: int | None = None) -> float:
        """``ε`` at any ``delta`` from :meth:`curve`'s points (their hull, exactly: at a
        grid δ, the point itself or less)."""
        from netdp.accounting.profile_pld import epsilon_at

        eps, deltas = self._points(node, observer)
        return epsilon_at(eps, deltas, float(delta))

    def _points(self, node: int | None, observer: int | None
                ) -> tuple[np.ndarray, np.ndarray]:
        eps = self.curve(node, observer)
        finite = np.isfinite(eps)  # an unprotected point bounds nothing
        return eps[finite], self.deltas[finite]

    def frame(self) -> Any:
        """A tidy table (pandas): one row per ordered pair and target, with ``target``
        (the node at stake), ``observer``, ``epsilon``, ``accountant``, ``delta``,
        ``seed``."""
        import pandas as pd

        return pd.concat([pairs_frame({self.accountant: m}, self.labels,
                                      {self.accountant: float(d)}, seed=self.seed)
                          for d, m in zip(self.deltas, self.epsilons, strict=True)],
                         ignore_index=True)

    def to_json(self) -> dict[str, Any]:
        """The curves as JSON: the worst pair's and each observer's worst, every pair's
        (``[target, observer, [ε at each δ]]``, null where untracked or unprotected),
        and the worst
        pair's privacy loss distribution (``probs`` at losses ``index * step``)."""
        from netdp.accounting.profile_pld import STEP, profile_pmf

        def finite(values: np.ndarray) -> list[Any]:
            """Figures as JSON numbers, ``None`` where not finite (rows of a 2-D array)."""
            out = np.asarray(values, dtype=object)
            out[~np.isfinite(values)] = None
            return out.tolist()

        every = self.epsilons
        tracked = ~np.isnan(every).all(axis=0)  # (u, v) the run has a figure for
        us, vs = np.nonzero(tracked)
        pairs = [[int(u), int(v), row] for u, v, row in zip(
            us.tolist(), vs.tolist(), finite(every[:, us, vs].T), strict=True)]
        seen = np.flatnonzero(tracked.any(axis=0))
        by_observer = np.where(np.isnan(every[:, :, seen]), -np.inf,
                               every[:, :, seen]).max(axis=1)
        observers = {str(v): row for v, row in zip(seen.tolist(), finite(by_observer.T),
                                                    strict=True)}
        worst = self.curve()
        eps, deltas = self._points(None, None)
        pmf = profile_pmf(eps, deltas, STEP)
        return {"accountant": self.accountant, "deltas": [float(d) for d in self.deltas],
                "worst": finite(worst), "worst_by_observer": observers, "pairs": pairs,
                "worst_pld": {"step": pmf.step, "index": pmf.losses.tolist(),
                              "probs": pmf.probs.tolist(), "infinity": pmf.infinity},
                "seed": self.seed, "config": dict(self.config)}


#: What ``--curves-out`` writes, by the file's extension.
CURVES_FORMATS = (".json", ".csv", ".parquet")


def check_curves_file(path: Any, config: Any = None) -> None:
    """Refuse, before the run, a ``--curves-out`` file netdp does not write, and a
    ``config`` whose curves it cannot draw (a coalition, the reference convention, more
    than :data:`MAX_NODES` nodes where the config says how many)."""
    suffix = Path(path).suffix.lower()
    check(suffix in CURVES_FORMATS, "curves-out", "must end in .json (the worst pair's "
          "curve and PLD, each observer's worst, every pair's), .csv or .parquet (one row "
          f"per ordered pair and delta) (got {Path(path).name[:60]!r})")
    if config is not None:
        _check_config(config)
        nodes = config.nodes
        check(nodes is None or nodes <= MAX_NODES, "nodes", f"--curves-out keeps every "
              f"pair's figure at each delta: at most {MAX_NODES} nodes (got {nodes})")
    if suffix == ".parquet":
        from netdp.run.sweep.table import parquet_available

        check(parquet_available(), "curves-out", "writing .parquet needs pyarrow: pip "
              "install 'netdp[parquet]'; or write .csv")


def _check_config(config: Any) -> None:
    """Refuse a run whose figures are no pairs' curves: a coalition, or the reference
    convention (its figures ignore the target delta)."""
    check(config.coalition is None, "coalition", "curves are of pairs; a coalition's "
          "figure is its own report")
    check(config.convention == "sound", "convention", "curves need figures at each target "
          "delta: the sound convention (reference figures are at the paper's own delta)")


def write_curves(path: Any, curves: PairCurves) -> None:
    """``--curves-out``: :meth:`PairCurves.to_json` or :meth:`PairCurves.frame`, at once."""
    from netdp.core.files import atomic_files

    path = Path(path)
    with atomic_files([path], param="curves-out") as (fh,):
        if path.suffix.lower() == ".json":
            fh.write((json.dumps(curves.to_json(), allow_nan=False) + "\n").encode("utf-8"))
        elif path.suffix.lower() == ".csv":
            fh.write(curves.frame().to_csv(index=False).encode("utf-8"))
        else:
            curves.frame().to_parquet(fh, index=False)


def pair_curves(source: Any, accountant: str | None = None,
                deltas: Sequence[float] | None = None,
                progress: bool | None = None) -> PairCurves:
    """Every pair's ``ε(δ)`` of one run, by one accountant (module docstring).

    Parameters
    ----------
    source
        A :class:`~netdp.report.types.Report` (its run again, its first run if it had
        several), or a configuration as for :func:`netdp.simulate`.
    accountant
        Default: the report's first; for a configuration, the first that
        :func:`netdp.simulate` resolves for one run of it.
    deltas
        Targets in ``(0, 1)`` (default :data:`DELTAS`); the report's target is added.
    progress
        A progress bar over the targets (``None``: on a terminal).
    """
    from netdp.report.types import Report
    from netdp.run.api import simulate
    from netdp.tasks import make_config
    from netdp.tasks.preparation import with_seed

    config = source.config if isinstance(source, Report) else with_seed(make_config(source))
    _check_config(config)
    targets = sorted({float(d) for d in (DELTAS if deltas is None else deltas)}
                     | {float(config.report_delta)}, reverse=True)
    for d in targets:
        check(0.0 < d < 1.0, "deltas", f"each must lie in (0, 1) (got {d!r})")
    if accountant is None and isinstance(source, Report) and source.config.accountants:
        accountant = source.config.accountants[0]
    if isinstance(source, Report):  # before any run
        check(source.topology.n <= MAX_NODES, "nodes", f"curves keep {len(targets)} x n x "
              f"n figures: at most {MAX_NODES} nodes (got {source.topology.n})")
    base = dataclasses.replace(config, runs=1)
    if accountant is not None:
        base = dataclasses.replace(base, accountants=(accountant,))
    matrices: list[np.ndarray] = []
    name: str | None = None
    labels: tuple[Any, ...] = ()
    with bars.bar(total=len(targets), desc="pair curves: one target delta at a time",
                  unit="delta", show=progress) as shown:
        for d in targets:
            report = simulate(dataclasses.replace(base, target_delta=d), keep_pairs=True)
            pairs = report.pairs
            if name is None:
                name = report.config.accountants[0] if report.config.accountants else None
                check(name is not None and pairs is not None, "accountant",
                      "this run has no pairwise figures to draw curves of")
                assert name is not None and pairs is not None
                n = pairs.shape[0]
                check(n <= MAX_NODES, "nodes", f"curves keep {len(targets)} x n x n "
                      f"figures: at most {MAX_NODES} nodes (got {n})")
                base = dataclasses.replace(base, accountants=(name,))
                labels = tuple(report.labels)
            matrices.append(np.asarray(pairs, dtype=np.float64))
            shown.update(1)
    assert name is not None
    settings = {k: v for k, v in config.to_dict().items() if k != "target_delta"}
    return PairCurves(name, np.array(targets), np.stack(matrices), labels,
                      int(config.seed or 0), settings)
