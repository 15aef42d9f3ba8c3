"""Seconds the ``pld`` and ``exact`` accountants of a walk take, estimated before the run.

Both discretise every view of an observer as a privacy loss distribution and compose
them by FFT (:mod:`netdp.tracking.exact` on the complete graph, :mod:`netdp.tracking.
walk_views` on other graphs), so their cost is a number of grid points:

* the grid step ``h`` is the one :func:`netdp.tracking.view_plds.grid_step` picks,
  ``2 rel √(m / k)`` clipped to ``[1e-7, 1e-4]`` (exact, ``rel = 0.005``) or ``[1e-7,
  1e-3]`` (pld, ``rel = 0.05``), for ``k = hops / n`` views an observer, each of
  ``μ² = 1 / (z² draws)``; a view's mean ``m = E[μ²]`` is taken as ``ln n / (n z²)``
  (a return time of mean ``n``: ``E[1 / draws] ≈ ln n / n``), ``z`` the Gaussian
  noise multiplier at the level ``(ε, δ)``;
* a single view spans about ``w₁ = 17 (√m + 1/z) / h`` points (``±8.5`` standard
  deviations of the loss, the widest view having one draw; at most ``540 / h``, its
  losses cut to ``[-40, 500]``), a composition of ``k`` views
  ``w_k = 17 (√(k m) + 1/z) / h``;
* complete graph (:mod:`netdp.tracking.exact`, :mod:`netdp.accounting.pld_fourier`): the
  run's distinct mechanisms are built once, at most three for each of ``B`` lengths or
  bins of lengths up to ``10 n`` (pld: ``B`` bins, :func:`netdp.tracking.exact.
  length_bin`; exact: ``B = 10 n`` lengths), or one per view when fewer (``min(n k, 3 B)
  w₁``); each observer then sums the log transforms of its ``k`` views over a window of
  about ``w_k`` points (``n k w_k``), the pairs' searches being small beside it;
* other graphs: every observer (``--sources``, or :data:`~netdp.tracking.graph_observers.
  SAMPLED` beyond :data:`~netdp.tracking.graph_observers.DENSE_NODES` nodes) composes
  ``k`` views for each of the ``n - 1`` other nodes (``(n - 1) k (w₁ + w_k)``); where the
  accountant builds a view's rows towards every node at once (``pld``:
  :mod:`netdp.accounting.mixture_rows`, :attr:`GridCost.rows
  <netdp.accounting.registry.GridCost>`), ``(n - 1) k`` rows of ``c₀ (1 + c₁ / z²)²``
  seconds each, fitted to the runs of ``experiments/pld_cost.py --graphs``; on the
  hypercube (:func:`shares_laws`) nodes share their laws, and the rows cost a share of
  that (:attr:`GridCost.shared <netdp.accounting.registry.GridCost>`).

:attr:`GridCost.complete <netdp.accounting.registry.GridCost>` and ``graph`` (each
accountant's entry in :mod:`netdp.accounting.registry`, with its ``precision`` and
``coarsest`` step) hold each term's seconds per point, fitted to the runs of
``experiments/pld_cost.py`` (kept in ``docs/figures/pld_cost.jsonl``: ε in {0.3, 1, 4},
n from 4 to 64, the complete graph and the hypercube), where the runs took 0.7 to 2.0
times the fit, then multiplied by 3/4 so that an estimate errs towards the shorter run.
Exact on the complete graph was refitted when it went through the Fourier banks (session
18: 39 runs, two of them of 200 and 500 views an observer), for the least largest ratio
either way instead (least squares left its second term near 0 and a run of 500 views 9.5
times its estimate): the runs took 0.36 to 2.7 times the estimate. See
docs/performance.md.
"""

from __future__ import annotations

import math
from typing import Any

from netdp.accounting import registry

FINEST = 1e-7
#: The widest a single view's losses span (mixture_pld's ``LOWER_CUT + MAX_LOSS``).
SPAN = 540.0


#: Named graphs whose nodes share count laws as :attr:`GridCost.shared
#: <netdp.accounting.registry.GridCost>` states (measured on them; on the torus, also
#: vertex-transitive, few symmetries fix a view's ends and most laws are distinct)
SHARING_NAMES = ("hypercube",)


def shares_laws(config: Any) -> bool:
    """Whether ``config``'s walk is on a graph whose nodes share count laws: a named one of
    :data:`SHARING_NAMES`, unweighted, without faults or a coalition (which break its
    symmetry)."""
    from netdp.engine.faults import from_config

    return (config.topology in SHARING_NAMES and config.weight is None
            and config.coalition is None and from_config(config) is None)


def pld_seconds(accountant: str, complete: bool, nodes: int, observers: int, views: float,
                z: float, seconds: tuple[float, float] | None = None,
                shared: bool = False) -> float:
    """Seconds of the ``accountant`` (one with a registered cost model:
    :attr:`netdp.accounting.registry.Entry.cost`) over ``observers`` of a walk on
    ``nodes`` nodes (the complete graph, or another), ``views`` views an observer, Gaussian
    noise multiplier ``z`` (see the module docstring); ``seconds``: the seconds per point of
    the two terms instead of the registered ones (the fit's regressors); ``shared``: the
    graph's nodes share count laws (:func:`shares_laws`, :attr:`GridCost.shared
    <netdp.accounting.registry.GridCost>`).

    Examples
    --------
    The exact accountant of ``netdp simulate -n 6 --accountant exact`` (600 steps,
    ``z = 4.22`` at ε = 1, δ = 1e-6), which took 2.2 s on the reference machine:

    >>> round(pld_seconds("exact", True, 6, 6, 100, 4.22), 1)
    5.0
    """
    cost = registry.entry(accountant).cost
    assert cost is not None, f"{accountant} has no cost model"
    n, k = max(float(nodes), 2.0), max(float(views), 1.0)
    m = max(math.log(n), 1.0) / (n * z * z)
    h = min(max(2.0 * cost.precision * math.sqrt(m / k), FINEST), cost.coarsest)
    one = min(17.0 * (math.sqrt(m) + 1.0 / z), SPAN) / h
    many = min(17.0 * (math.sqrt(k * m) + 1.0 / z), k * SPAN) / h
    build, pairs = seconds or (cost.complete if complete else cost.graph)
    if not complete and cost.rows is not None and seconds is None:
        share = cost.shared[0] if shared and cost.shared and n >= cost.shared[1] else 1.0
        return share * observers * (n - 1.0) * k * cost.rows[0] * (
            1.0 + cost.rows[1] / (z * z)) ** 2
    if complete:  # one bank of mechanisms, summed logs
        bins = (64.0 + 64.0 * max(math.log2(10.0 * n / 64.0), 0.0) if cost.binned
                else 10.0 * n)
        return build * min(observers * k, 3.0 * bins) * one + pairs * observers * k * many
    return observers * (n - 1.0) * k * (build * one + pairs * many)
