"""Privacy of decentralized SGD: calibrate σ per regime, track the per-pair RDP of a walk.

One update of node ``u`` releases ``clip(∇f) + N(0, σ² I)`` with clipping norm ``L``:
a Gaussian mechanism of sensitivity ``2L`` (replace-one neighbours), RDP ``2αL²/σ²``.
Every loss below is linear in the order α, ``R(α) = ρ α`` with ``ρ = 2 L² c / σ²`` for a
*coefficient* ``c``, and is converted to (ε, δ) by the RDP conversion of Balle et al. 2020
(:func:`~netdp.accounting.rdp.rdp_to_epsilon`). The three regimes (spec §2.5):

``local``
    Every update is seen by the next holder: ``c = K`` for ``K`` updates of a node.
``network``
    A contribution of u made j steps before v next holds the token costs ``c = 1/j``
    (amplification by iteration, convex smooth losses). Expected per update on the
    complete graph, where each hop lands on v with probability p (``1/n`` with self-moves,
    ``1/(n-1)`` without): ``Σ_j p (1-p)^(j-1) / j = p ln(1/p) / (1-p)`` (≈ ``ln n / n``);
    times ``K`` updates. On other graphs the expectation is the mean over pairs of the
    actual walk's coefficients (the walk does not depend on the data).
``central``
    A trusted curator runs the same T single-node steps and publishes the final model
    only. Two sound accountings, the smaller σ wins: amplification by iteration on the
    final model (an update at step t costs ``1/(T - t)``; a node holds each step with
    probability 1/n, so ``c = H_T / n``), or DP-SGD releasing all iterates (each step
    samples one of n nodes without replacement; ``dp-accounting`` RDP, replace-one).

The ``local`` and ``network`` (and the first ``central``) figures are expectations over
the walk, as in the paper; :func:`pair_coefficients` gives the actual ones of a run.

``local-hm``, ``local-pm`` (Wang et al., ICDE 2019, §5)
    Every update is an ε_u-LDP report of the clipped gradient (sampled Hybrid or Piecewise
    coordinates, :class:`netdp.tasks.sgd_walk.SampledPerturbation`), seen by the next
    holder; ε_u is the largest level whose ``K``-fold composition (optimal, Kairouz, Oh
    and Viswanath) meets (ε, δ): :func:`ldp_update_epsilon`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numba
import numpy as np
from scipy import special

from netdp.accounting.rdp import rdp_to_epsilon
from netdp.core.errors import InputError
from netdp.core.roots import largest_within, smallest_within

REGIMES = ("local", "network", "central")
ORDERS = np.concatenate([1.0 + np.geomspace(1e-4, 1.0, 400)[:-1], np.geomspace(2.0, 1e7, 2000)])


def epsilon(rho: np.ndarray | float, delta: float) -> np.ndarray | float:
    """(ε, δ) of the RDP curve ``R(α) = ρ α`` (exact minimum over a fine order grid)."""
    rho = np.asarray(rho, dtype=np.float64)
    return rdp_to_epsilon(rho[..., None] * ORDERS, ORDERS, delta)


def epsilon_upper(rho: np.ndarray, delta: float, points_per_decade: int = 400) -> np.ndarray:
    """:func:`epsilon` of many ``ρ`` at once, rounded up to a log grid (an upper bound).

    Each ``ρ`` takes the ε of the smallest grid point ``>= ρ`` (relative step
    ``10^(1/points_per_decade)``, 0.6 % at the default); ``ρ = 0`` gives 0.
    """
    rho = np.asarray(rho, dtype=np.float64)
    out = np.zeros(rho.shape)
    pos = rho > 0
    if not pos.any():
        return out
    lo, hi = np.log10(rho[pos].min()), np.log10(rho[pos].max())
    grid = np.logspace(lo, hi, max(2, int(np.ceil((hi - lo) * points_per_decade)) + 1))
    # the ends exactly (10^log10(x) may miss x by an ulp, which would send the smallest ρ,
    # often many equal ones, to the next grid point: a 0.6 % jump by the CPU's rounding)
    grid[0] = rho[pos].min()
    grid[-1] = max(grid[-1], rho[pos].max())
    out[pos] = np.asarray(epsilon(grid, delta))[np.searchsorted(grid, rho[pos], side="left")]
    return out


def rho_for(eps: float, delta: float) -> float:
    """The ``ρ`` whose curve ``ρ α`` gives ``eps`` at ``delta``, rounded down (relative
    1e-12): its ε is at most ``eps`` (less noise would exceed it)."""
    return largest_within(lambda rho: float(epsilon(rho, delta)), eps, 1e-12, 1e6,
                          param="epsilon", scale="log", tol=1e-12)


@dataclass(frozen=True)
class Calibration:
    """Noise of one regime at a target (ε, δ)."""

    regime: str
    sigma: float
    epsilon: float
    delta: float
    coefficient: float | None
    accountant: str

    def to_dict(self) -> dict:
        """JSON form."""
        return asdict(self)


def hit_probability(n: int, self_moves: bool) -> float:
    """Probability that a hop of the complete-graph walk lands on a given other node."""
    return 1.0 / n if self_moves else 1.0 / (n - 1)


def expected_cost(p: float) -> float:
    """``E[1/j]`` for ``j ~ Geometric(p)``: ``p ln(1/p) / (1 - p)``."""
    return 1.0 if p >= 1.0 else p * math.log(1.0 / p) / (1.0 - p)


def harmonic(t: int) -> float:
    """``H_t = Σ_{s=1}^t 1/s = ψ(t + 1) + γ``."""
    return float(special.digamma(t + 1) + np.euler_gamma)


def calibrate(regime: str, eps: float, delta: float, clip_norm: float, n: int, steps: int,
              contributions: float, network_coefficient: float | None = None) -> Calibration:
    """σ so that the regime's expected loss meets (eps, delta).

    ``contributions`` is K, the updates per node assumed (``T/n`` or the cap);
    ``network_coefficient`` is the expected ``c`` per update of the network regime.
    """
    rho = rho_for(eps, delta)
    if regime == "local":
        c = contributions
        return Calibration(regime, _sigma(c, clip_norm, rho), eps, delta, c,
                           "rdp: Gaussian (sensitivity 2L) composed over K updates")
    if regime == "network":
        if network_coefficient is None:
            raise InputError("regime", "network calibration needs the expected cost per update")
        c = contributions * network_coefficient
        return Calibration(regime, _sigma(c, clip_norm, rho), eps, delta, c,
                           "rdp: amplification by iteration, expected over the walk")
    if regime == "central":
        c = harmonic(steps) / n
        by_iteration = _sigma(c, clip_norm, rho)
        if dpsgd_epsilon(by_iteration, delta, clip_norm, n, steps) >= eps:  # DP-SGD needs more
            return Calibration(regime, by_iteration, eps, delta, c, "rdp: amplification by "
                               "iteration on the final model, expected over the sampling")
        by_sampling = dpsgd_sigma(eps, delta, clip_norm, n, steps)
        if by_iteration <= by_sampling:
            return Calibration(regime, by_iteration, eps, delta, c, "rdp: amplification by "
                               "iteration on the final model, expected over the sampling")
        return Calibration(regime, by_sampling, eps, delta, None,
                           "rdp (dp-accounting): DP-SGD, one of n sampled per step")
    raise InputError("regime", f"must be one of {', '.join(REGIMES)} (got {regime!r})")


def ldp_update_epsilon(eps: float, delta: float, contributions: float) -> float:
    """The largest ε_u whose ``ceil(K)``-fold optimal composition (KOV, exact) is at most
    ``eps`` at ``delta`` (to 1e-10, rounded down); at least ``eps / ceil(K)`` (basic
    composition)."""
    from netdp.accounting.composition import kov_exact_epsilon

    k = max(1, math.ceil(contributions - 1e-9))
    if k == 1:
        return eps
    return largest_within(lambda e: float(kov_exact_epsilon(e, k, delta)), eps, eps / k, eps,
                          param="epsilon", tol=1e-10)


def _sigma(c: float, clip_norm: float, rho: float) -> float:
    return math.sqrt(2.0 * clip_norm * clip_norm * c / rho) if c > 0 else 0.0


def dpsgd_epsilon(sigma: float, delta: float, clip_norm: float, n: int, steps: int) -> float:
    """ε of DP-SGD releasing all T iterates, one node of n sampled per step (replace-one
    neighbours: sensitivity 2L, noise multiplier σ / 2L; ``dp-accounting`` RDP)."""
    import dp_accounting as dpa
    from dp_accounting import rdp

    acc = rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    acc.compose(dpa.SampledWithoutReplacementDpEvent(
        n, 1, dpa.GaussianDpEvent(sigma / (2.0 * clip_norm))), steps)
    return acc.get_epsilon(delta)


def dpsgd_sigma(eps: float, delta: float, clip_norm: float, n: int, steps: int) -> float:
    """The σ at which :func:`dpsgd_epsilon` equals ``eps``, rounded up (relative 1e-6):
    its ε is at most ``eps``."""
    return smallest_within(lambda s: dpsgd_epsilon(s, delta, clip_norm, n, steps), eps,
                           2e-2 * clip_norm, 2e4 * clip_norm, param="epsilon", scale="log",
                           tol=1e-6)


def pair_coefficients(holders: np.ndarray, n: int) -> np.ndarray:
    """``C[u, v] = Σ_{updates of u at step t} 1 / (next step > t at which v holds - t)``.

    Updates after v's last visit are never seen by v and cost nothing; the diagonal is 0.
    One backward pass over the steps: ``O(n T)`` time, ``O(n²)`` memory.
    """
    return _coefficients(np.asarray(holders, dtype=np.int64), n)


@numba.njit(cache=True)
def _coefficients(holders, n):  # pragma: no cover - compiled; oracle in tests
    out = np.zeros((n, n))
    nxt = np.full(n, -1, dtype=np.int64)  # next step at which each node holds the token
    for t in range(holders.size - 1, -1, -1):
        u = holders[t]
        row = out[u]
        for v in range(n):
            if nxt[v] > 0 and v != u:
                row[v] += 1.0 / (nxt[v] - t)
        nxt[u] = t
    return out
