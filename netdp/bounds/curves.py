"""Theoretical privacy curves of network-dp.md §2.1 and §2.3, vectorized over ``n``.

Every curve is a plain function with keyword arguments returning an epsilon array of the
broadcast shape of its inputs. :data:`CURVES` maps a name to a :class:`Curve` (function,
one-line description, the keyword names it needs) so a CLI can print a table::

    table = curve_table(np.logspace(0, 10, 11), T_per_node=100, eps0=0.1, delta=1e-7)

:func:`netdp.bounds.table.bounds_table` is the table of ``netdp bounds``.

Delta bookkeeping (the spec's curves use one ``delta`` for two things; we keep that, and
say here what the resulting guarantee is):

* Complete graph (§2.3): the same ``delta`` is the failure probability of the Chernoff
  bound on the number of contributions ``N_v`` *and* the slack ``delta'`` of advanced
  composition, as in the reference script. With ``eps0``-DP contributions the curve is an
  ``(eps, 2 delta)`` guarantee (plus ``N delta0`` if each contribution is only
  ``(eps0, delta0)``-DP, e.g. Gaussian noise; not included). The fixed-contribution
  variant has no Chernoff failure: ``(eps, delta)``.
* Ring (§2.1): each of the ``K`` turns is an ``(eps, delta0)`` release; the curve's
  ``delta`` is the DRV slack ``delta'`` and the total is ``K delta0 + delta'`` (the
  ``K delta0`` part is the caller's, as it depends on the noise calibration).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from netdp.accounting._arrays import _check, _f, _out
from netdp.accounting.composition import kov_het_epsilon, kov_het_terms, opti

__all__ = [
    "contributions_chernoff",
    "contributions_chernoff_ref_variant",
    "contributions_fixed",
    "CONTRIBUTION_BOUNDS",
    "complete_ldp",
    "complete_ndp",
    "ring_ndp",
    "ring_ldp",
    "Curve",
    "Spending",
    "CURVES",
    "curve_table",
    "histogram_ring",
]


def _nTd(
    n: npt.ArrayLike, T: npt.ArrayLike, delta: npt.ArrayLike
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    n, T, delta = np.broadcast_arrays(_f(n), _f(T), _f(delta))
    _check(n >= 1, "n must be >= 1")
    _check(T >= 0, "T must be >= 0")
    _check((delta > 0) & (delta < 1), "delta must be in (0, 1)")
    return n, T, delta


# ---------------------------------------------------------------------------------------
# Number of contributions of one node (complete graph, T steps, uniform walk)
# ---------------------------------------------------------------------------------------


def contributions_chernoff(
    n: npt.ArrayLike, T: npt.ArrayLike, delta: npt.ArrayLike
) -> np.ndarray | np.float64:
    """Bound "chernoff": ``N_v = T/n + sqrt(3 (T/n) ln(1/delta))``.

    Multiplicative Chernoff bound on ``Bin(T, 1/n)`` (holds with probability
    ``1 - delta``; the ``sqrt(3 mu ln(1/delta))`` form needs the deviation to be at most
    the mean ``T/n``, true for ``T/n >= 3 ln(1/delta)``).
    """
    n, T, delta = _nTd(n, T, delta)
    m = T / n
    return _out(m + np.sqrt(3.0 * m * np.log(1.0 / delta)))


def contributions_chernoff_ref_variant(
    n: npt.ArrayLike, T: npt.ArrayLike, delta: npt.ArrayLike
) -> np.ndarray | np.float64:
    """Bound "chernoff-ref-variant": ``N_v = T/n + sqrt((3 T / 2) ln(1/delta))``.

    Exactly the expression of the reference script (``T/N + np.sqrt(3*T/2 *
    np.log(1/delta))``, which Python parses as ``sqrt(1.5 T ln(1/delta))``): the spec's
    ``3 (T/n)`` inside the root replaced by ``3 T / 2``. It does *not* divide by ``n``,
    so with ``T = 100 n`` it grows like ``sqrt(n)``; kept, named, to reproduce the
    reference figure, not as a sharper bound.
    """
    n, T, delta = _nTd(n, T, delta)
    return _out(T / n + np.sqrt(1.5 * T * np.log(1.0 / delta)))


def contributions_fixed(
    n: npt.ArrayLike, T: npt.ArrayLike, delta: npt.ArrayLike
) -> np.ndarray | np.float64:
    """Bound "fixed": every node contributes exactly ``N_v = T/n`` times (``delta`` unused)."""
    n, T, delta = _nTd(n, T, delta)
    return _out(T / n)


#: Bounds on the number of contributions of one node, by name.
CONTRIBUTION_BOUNDS: dict[str, Callable[..., np.ndarray | np.float64]] = {
    "chernoff": contributions_chernoff,
    "chernoff-ref-variant": contributions_chernoff_ref_variant,
    "fixed": contributions_fixed,
}


def _nv(bound: str, n, T, delta) -> np.ndarray:
    if bound not in CONTRIBUTION_BOUNDS:
        allowed = list(CONTRIBUTION_BOUNDS)
        raise ValueError(f"unknown contribution bound {bound!r}; allowed: {allowed}")
    return _f(CONTRIBUTION_BOUNDS[bound](n, T, delta))


# ---------------------------------------------------------------------------------------
# Complete graph, real summation (§2.3)
# ---------------------------------------------------------------------------------------


def complete_ldp(
    *,
    n: npt.ArrayLike,
    T: npt.ArrayLike,
    eps0: npt.ArrayLike,
    delta: npt.ArrayLike,
    bound: str = "chernoff",
) -> np.ndarray | np.float64:
    """LDP baseline on the complete graph: ``opti(eps0, delta, N_v)``.

    ``N_v`` from :data:`CONTRIBUTION_BOUNDS` ``[bound]``; ``opti = min(k eps, DRV)``.
    """
    n, T, delta = _nTd(n, T, delta)
    eps0 = _f(eps0)
    return _out(_f(opti(eps0, delta, _nv(bound, n, T, delta))))


def complete_ndp(
    *,
    n: npt.ArrayLike,
    T: npt.ArrayLike,
    eps0: npt.ArrayLike,
    delta: npt.ArrayLike,
    bound: str = "chernoff",
) -> np.ndarray | np.float64:
    """Network-DP curve on the complete graph: ``opti(3 eps0 / sqrt(n), delta, N_v + T/n)``.

    (AISTATS 2022 Fig. 1a; the ``3/sqrt(n)`` constant is the reference's.)
    """
    n, T, delta = _nTd(n, T, delta)
    eps0 = _f(eps0)
    k = _nv(bound, n, T, delta) + T / n
    return _out(_f(opti(3.0 * eps0 / np.sqrt(n), delta, k)))


# ---------------------------------------------------------------------------------------
# Ring, real summation (§2.1)
# ---------------------------------------------------------------------------------------


def ring_ndp(
    *, n: npt.ArrayLike, K: npt.ArrayLike, eps0: npt.ArrayLike, delta: npt.ArrayLike
) -> np.ndarray | np.float64:
    """Ring NDP over ``K`` turns: ``min(K eps0, DRV(eps0, delta', K))``.

    ``DRV = sqrt(2 K ln(1/delta')) eps0 + K eps0 (e^eps0 - 1)`` (spec §2.1).

    Each turn is one ``(eps0, delta0)`` release towards any observer; the spec's advanced
    composition (second term, ``delta' = delta``, total ``K delta0 + delta'``) is
    used whenever it beats basic composition ``K eps0`` (total ``K delta0``), i.e. this is
    ``opti(eps0, delta, K)``: without the minimum the curve would exceed the LDP baseline
    for small ``K``. Independent of ``n`` (broadcast over it): the ring's gain over LDP is
    in utility (noise std ``sqrt(n - 1)`` times smaller at equal epsilon), not here.
    """
    n, K, eps0, delta = np.broadcast_arrays(_f(n), _f(K), _f(eps0), _f(delta))
    _check(n >= 2, "n must be >= 2")
    return _out(_f(opti(eps0, delta, K)))


def ring_ldp(
    *, n: npt.ArrayLike, K: npt.ArrayLike, eps0: npt.ArrayLike, delta: npt.ArrayLike
) -> np.ndarray | np.float64:
    """LDP baseline of the ring: each node's ``K`` contributions, each ``eps0``-LDP,
    composed with ``opti(eps0, delta, K)`` (best of basic and DRV)."""
    n, K, eps0, delta = np.broadcast_arrays(_f(n), _f(K), _f(eps0), _f(delta))
    _check(n >= 2, "n must be >= 2")
    return _out(_f(opti(eps0, delta, K)))


# ---------------------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Spending:
    """How a curve's guarantee spends δ: ``slacks(**params)`` times its ``delta`` (a
    Chernoff bound's failure, a composition theorem's slack), plus, where each
    contribution is only ``(eps0, δ0)``-DP (Gaussian noise), ``entries(**params)`` times
    ``δ0`` (``None``: the contributions are ``eps0``-DP, e.g. randomized response)."""

    slacks: Callable[..., Any]
    entries: Callable[..., Any] | None
    text: str


@dataclass(frozen=True)
class Curve:
    """A named theoretical curve: ``func(**{p: value for p in params})`` gives epsilon.

    ``task`` and ``topology`` say where it applies: the runs (rows of a result table) it
    bounds, so that a plot draws it beside those only. ``spending`` says how its
    ``delta`` adds up to the guarantee's (:meth:`at_target`).
    """

    name: str
    func: Callable[..., np.ndarray | np.float64]
    description: str
    params: tuple[str, ...]
    task: str = "sum"
    topology: str = "complete"
    spending: Spending | None = None

    def applies(self, task: str, topology: str) -> bool:
        """Whether the curve bounds a run of ``task`` on ``topology``."""
        return task == self.task and topology == self.topology

    def __call__(self, **kwargs: npt.ArrayLike) -> np.ndarray | np.float64:
        missing = [p for p in self.params if p not in kwargs]
        if missing:
            raise ValueError(f"curve {self.name!r} needs keyword arguments {missing}")
        return self.func(**{p: kwargs[p] for p in self.params})

    def at_target(self, target: float, noise_multiplier: float | None = None,
                  **kwargs: npt.ArrayLike) -> np.ndarray | np.float64:
        """The curve as an ``(ε, target)`` guarantee (spec Correction 7): its whole δ
        budget, Chernoff failures, composition slacks and the contributions' own δ0,
        within ``target``.

        With ``eps0``-DP contributions (``noise_multiplier`` ``None``) each of the
        curve's ``s`` slacks takes ``target / s``. With Gaussian ones (``z = σ / Δ``)
        the slacks take half the target and the ``k`` contributions the other half:
        each is read at ``δ0 = target / (2 k)``, so ``eps0`` becomes the ε of one
        ``z``-Gaussian release at that ``δ0``, rounded up
        (:func:`~netdp.accounting._compiled.gdp_epsilon`; ``kwargs``' ``eps0`` and
        ``delta`` are replaced).

        Examples
        --------
        >>> c = CURVES["ring-ldp"]
        >>> float(c.at_target(1e-6, n=10, K=1, eps0=1.0)) == float(c(n=10, K=1, eps0=1.0,
        ...                                                        delta=1e-6))
        True
        """
        if self.spending is None:
            raise ValueError(f"curve {self.name!r} does not say how it spends delta")
        args = {**kwargs, "delta": target}
        slacks = _f(self.spending.slacks(**args))
        if noise_multiplier is None or self.spending.entries is None:
            return self(**{**args, "delta": target / slacks})
        args["delta"] = target / (2.0 * slacks)
        k = np.maximum(_f(self.spending.entries(**args)), 1.0)
        from netdp.accounting._compiled import gdp_epsilon  # no scipy.special (a default run)

        mu = 1.0 / float(noise_multiplier)
        eps0 = np.reshape([gdp_epsilon(mu, target / (2.0 * x)) for x in np.ravel(k)],
                          np.shape(k))
        return self(**{**args, "eps0": eps0})


def _complete(kind: str, bound: str) -> Callable[..., np.ndarray | np.float64]:
    f = complete_ldp if kind == "ldp" else complete_ndp

    def curve(*, n, T, eps0, delta):
        return f(n=n, T=T, eps0=eps0, delta=delta, bound=bound)

    return curve


def histogram_ring(
    *, n: npt.ArrayLike, K: npt.ArrayLike, eps0: npt.ArrayLike, delta: npt.ArrayLike
) -> np.ndarray | np.float64:
    """Ring histogram with GRR reports: K windows of n - 1 shuffled reports (FMT numeric),
    composed with KOV; every pair, given n - 1 dummies at each end.

    Vectorized: one shuffle evaluation per ``(eps0, delta)`` over all window sizes, then
    KOV over the rounds; the values are those of
    :func:`~netdp.tracking.shuffle.ring_histogram_theory` for each element
    (``int(n)``, ``int(K)``).
    """
    from netdp.tracking.shuffle import shuffled_epsilon

    arrays = np.broadcast_arrays(_f(n), _f(K), _f(eps0), _f(delta))
    shape = arrays[0].shape
    n, K, eps0, delta = (a.ravel() for a in arrays)
    out = np.empty(n.size)
    setting = np.stack([eps0, delta], axis=1)
    for e0, d in np.unique(setting, axis=0):
        sel = np.flatnonzero((eps0 == e0) & (delta == d))
        reports = np.trunc(n[sel]) - 1.0
        eps_s = shuffled_epsilon("fmt-numeric", float(e0), reports, float(d))
        out[sel] = _kov_rounds(eps_s, np.trunc(K[sel]), float(d))
    return _out(out.reshape(shape))


def _kov_rounds(eps_s: np.ndarray, K: np.ndarray, delta: float) -> np.ndarray:
    """KOV of ``K`` releases of ``eps_s`` each, ``delta~ = min(K delta, 1)`` (0 for K = 0)."""
    steps = np.maximum(K, 1.0)
    sum_eps, s1, s2 = kov_het_terms(eps_s)
    eps = kov_het_epsilon(steps * sum_eps, steps * s1, steps * s2, np.minimum(steps * delta, 1.0))
    return np.where(K > 0, eps, 0.0)


_CG = ("n", "T", "eps0", "delta")
_RING = ("n", "K", "eps0", "delta")


def _chernoff(bound: str, ndp: bool) -> Spending:
    """A complete-graph curve's: the Chernoff bound's failure (none for ``fixed``) and
    the advanced composition's slack, each ``delta``; its entries ``N_v`` (LDP) or
    ``N_v + T / n`` (NDP)."""

    def slacks(**p: Any) -> float:
        return 1.0 if bound == "fixed" else 2.0

    def entries(*, n: Any, T: Any, delta: Any, **_: Any) -> np.ndarray:
        return _nv(bound, n, T, delta) + (_f(T) / _f(n) if ndp else 0.0)

    text = ("the advanced composition's slack" if bound == "fixed" else
            "the Chernoff bound's failure and the advanced composition's slack, each")
    return Spending(slacks, entries, f"{text} delta (+ each contribution's delta0)")


_RING_SPENDING = Spending(lambda **p: 1.0, lambda *, K, **_: _f(K),
                          "the advanced composition's slack delta (+ K delta0)")
_HISTOGRAM_RING_SPENDING = Spending(
    lambda *, K, **_: 2.0 * np.maximum(np.trunc(_f(K)), 1.0), None,
    "each of the K shuffled windows delta and KOV's slack K delta (reports are eps0-DP)")

#: Named theoretical curves (epsilon as a function of n and the setting).
CURVES: dict[str, Curve] = {
    c.name: c
    for c in (
        Curve(
            "complete-ldp-chernoff",
            _complete("ldp", "chernoff"),
            "complete graph, LDP: opti(eps0, delta, N_v), N_v = T/n + sqrt(3 (T/n) ln(1/delta))",
            _CG,
            spending=_chernoff("chernoff", False),
        ),
        Curve(
            "complete-ndp-chernoff",
            _complete("ndp", "chernoff"),
            "complete graph, NDP: opti(3 eps0/sqrt(n), delta, N_v + T/n), Chernoff N_v",
            _CG,
            spending=_chernoff("chernoff", True),
        ),
        Curve(
            "complete-ldp-chernoff-ref-variant",
            _complete("ldp", "chernoff-ref-variant"),
            "complete graph, LDP, reference script's N_v = T/n + sqrt(1.5 T ln(1/delta))",
            _CG,
            spending=_chernoff("chernoff-ref-variant", False),
        ),
        Curve(
            "complete-ndp-chernoff-ref-variant",
            _complete("ndp", "chernoff-ref-variant"),
            "complete graph, NDP, reference script's N_v = T/n + sqrt(1.5 T ln(1/delta))",
            _CG,
            spending=_chernoff("chernoff-ref-variant", True),
        ),
        Curve(
            "complete-ldp-fixed",
            _complete("ldp", "fixed"),
            "complete graph, LDP, fixed contributions N_v = T/n",
            _CG,
            spending=_chernoff("fixed", False),
        ),
        Curve(
            "complete-ndp-fixed",
            _complete("ndp", "fixed"),
            "complete graph, NDP, fixed contributions: opti(3 eps0/sqrt(n), delta, 2T/n)",
            _CG,
            spending=_chernoff("fixed", True),
        ),
        Curve(
            "ring-ndp",
            ring_ndp,
            "ring, NDP over K turns: opti(eps0, delta', K) (total delta K delta0 + delta')",
            _RING,
            topology="ring",
            spending=_RING_SPENDING,
        ),
        Curve(
            "histogram-ring",
            histogram_ring,
            "ring histogram: KOV over K turns of eps_shuffle(eps0, n - 1 reports), FMT numeric "
            "(closed form beyond 1e6 reports)",
            _RING,
            task="histogram",
            topology="ring",
            spending=_HISTOGRAM_RING_SPENDING,
        ),
        Curve(
            "ring-ldp",
            ring_ldp,
            "ring, LDP baseline: opti(eps0, delta, K) over a node's K contributions",
            _RING,
            topology="ring",
            spending=_RING_SPENDING,
        ),
    )
}


def curve_table(
    n: npt.ArrayLike, names: list[str] | None = None, **params: npt.ArrayLike
) -> dict[str, np.ndarray]:
    """Evaluate curves over a grid of ``n``: ``{name: epsilon array}``.

    Each curve receives ``n`` and the keyword arguments it needs from ``params``; a
    ``T_per_node`` keyword gives ``T = T_per_node * n`` (the reference setting
    ``T = 100 n``). Curves whose parameters are missing are skipped when ``names`` is
    ``None`` and raise ``ValueError`` when requested explicitly.
    """
    n = _f(n)
    p = dict(params)
    if "T_per_node" in p:
        p["T"] = _f(p.pop("T_per_node")) * n
    p = {k: v for k, v in p.items() if v is not None}
    p["n"] = n
    chosen = list(CURVES) if names is None else list(names)
    out: dict[str, np.ndarray] = {}
    for name in chosen:
        if name not in CURVES:
            raise ValueError(f"unknown curve {name!r}; allowed: {list(CURVES)}")
        curve = CURVES[name]
        if names is None and any(k not in p for k in curve.params):
            continue
        out[name] = _f(curve(**p))
    return out
