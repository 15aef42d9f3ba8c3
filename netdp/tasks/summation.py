"""Real summation on a walk (AISTATS 2022 Algorithms 1 and 3).

Each holder adds its value, plus a draw of local noise, to the token it forwards.
The estimate is the mean of the nodes' values; its standard deviation has a closed form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from netdp.data.values import population_variance
from netdp.engine.routing import CHUNK
from netdp.engine.trace import Trace, holder_counts
from netdp.graphs.topologies import Topology
from netdp.mechanisms.base import AdditiveNoise, Mechanism

SPECTRAL_LIMIT = 3000  # largest graph whose walk variance is computed by eigendecomposition


@dataclass(frozen=True, eq=False)
class SumOutcome:
    """What a summation run produced.

    Attributes
    ----------
    estimate, truth
        Estimated and true mean of the nodes' values.
    theoretical_std
        Closed-form standard deviation of ``estimate`` (``None`` where none is known).
    token_values
        Final value of each token (sum of its contributions and noise).
    noise_draws
        Number of local noise draws per token.
    """

    estimate: float
    truth: float
    theoretical_std: float | None
    token_values: np.ndarray
    noise_draws: int

    @property
    def abs_error(self) -> float:
        """``|estimate - truth|``."""
        return abs(self.estimate - self.truth)


def ring_noise_mask(n: int, steps: int, every_hop: bool = False) -> np.ndarray:
    """Which contributions carry a noise draw on the ring.

    A draw at hops ``0, n-1, 2(n-1), ...`` and at the last hop: every window of ``n - 1``
    consecutive contributions holds one, and so does every view of an observer, including
    the first turn's prefixes (without the draw at hop 0, node 1 would receive ``x_0`` in
    the clear) and the stretch between an observer's last visit and the published result.
    That is ``ceil(steps / (n-1))`` draws, plus one unless ``steps - 1`` is a multiple of
    ``n - 1``: one or two more than the ``floor(K n / (n-1))`` of the paper's accounting,
    which leaves those edges exposed. ``every_hop`` gives the LDP baseline.
    """
    if every_hop or n == 2:
        return np.ones(steps, dtype=bool)
    mask = (np.arange(steps) % (n - 1)) == 0
    mask[-1] = True
    return mask


def ring_sum(trace: Trace, values: np.ndarray, mechanism: AdditiveNoise,
             rng: np.random.Generator, every_hop: bool = False) -> SumOutcome:
    """Algorithm 1: one token makes ``K`` turns; noise once every ``n - 1`` hops.

    See :func:`ring_noise_mask` for the schedule.

    The token's final value estimates ``K`` times the sum; the estimate is the mean,
    ``value / (K n)``, with std ``sqrt(draws) σ / (K n)``.
    """
    n, steps = trace.n, trace.steps
    draws = int(ring_noise_mask(n, steps, every_hop).sum())
    data = _weighted_sum(holder_counts(trace.holders[0], n), values)
    token = float(data + _noise_sum(mechanism, rng, draws))
    scale = steps  # K n contributions
    return SumOutcome(token / scale, float(values.mean()),
                      math.sqrt(draws) * mechanism.std / scale, np.array([token]), draws)


def walk_sum(trace: Trace, values: np.ndarray, mechanism: AdditiveNoise,
             rng: np.random.Generator, topology: Topology, walk: str) -> SumOutcome:
    """Algorithm 3 (and its extension to any graph): noise at every contribution.

    Each token's ``τ_T / T`` estimates the mean; tokens are averaged.
    """
    tokens, steps = trace.tokens, trace.steps
    sums = np.empty(tokens)
    for k in range(tokens):
        data = _weighted_sum(holder_counts(trace.holders[k], trace.n), values)
        sums[k] = data + _noise_sum(mechanism, rng, steps)
    std = walk_sum_std(topology, walk, values, steps, mechanism.std)
    return SumOutcome(float(sums.mean() / steps), float(values.mean()),
                      None if std is None else std / math.sqrt(tokens), sums, steps)


def randomized_sum(trace: Trace, values: np.ndarray, mechanism: Mechanism,
                   rng: np.random.Generator, low: float, high: float,
                   topology: Topology, walk: str) -> SumOutcome:
    """Summation with a non-additive randomizer (Duchi, Piecewise, Hybrid) on any walk.

    Each holder maps its value to ``[-1, 1]`` and adds the randomizer's unbiased report
    to the token, at every contribution (the report replaces the value, so there is no
    noise to share between hops: on the ring too this is the LDP protocol). The mean of a
    token's reports, mapped back, estimates the mean; tokens are averaged. Std: the
    reports' variance ``Σ_t Var(M(x_t))`` plus the walk's sampling variance.
    """
    width = high - low
    scaled = 2.0 * (values - low) / width - 1.0
    tokens, steps = trace.tokens, trace.steps
    sums = np.empty(tokens)
    for k in range(tokens):
        total = 0.0
        for lo in range(0, steps, CHUNK):
            total += float(mechanism.perturb(scaled[trace.holders[k, lo:lo + CHUNK]], rng).sum())
        sums[k] = total
    per_node = mechanism.variance(scaled)
    std: float | None
    if topology.walk_kind.public_schedule:
        counts = holder_counts(trace.holders[0], trace.n)
        std = math.sqrt(_weighted_sum(counts, per_node)) / steps
    else:
        std = walk_sum_std(topology, walk, scaled, steps, math.sqrt(float(per_node.mean())))
    half = width / 2
    estimate = (float(sums.mean()) / steps + 1.0) * half + low
    return SumOutcome(estimate, float(values.mean()),
                      None if std is None else std * half / math.sqrt(tokens),
                      (sums / steps + 1.0) * half + low, steps)


def walk_sum_std(topology: Topology, walk: str, values: np.ndarray, steps: int,
                 noise_std: float) -> float | None:
    """Std of one token's ``τ_T / T`` when the walk starts from its stationary law.

    ``Var(Σ_t x_{h_t}) = (1/n) Σ_k c_k² S(λ_k, T)`` over the eigenpairs of the (symmetric)
    transition matrix, with ``c_k`` the coordinates of the centred values and
    ``S(λ, T) = T + 2 Σ_{d<T} (T-d) λ^d``. Complete graph: one eigenvalue on centred
    vectors, ``0`` (self-moves) or ``-1/(n-1)``. Returns ``None`` unless the matrix is
    symmetric, so the law uniform (Metropolis; simple or lazy on a regular undirected
    graph), where the graph is too large, or on a time-varying graph (no one matrix).
    """
    n = topology.n
    noise = steps * noise_std**2
    if topology.walk_kind.uniform:
        lam = 0.0 if topology.self_moves else -1.0 / (n - 1)
        return math.sqrt(population_variance(values) * _lag_sum(lam, steps) + noise) / steps
    uniform_law = walk == "metropolis" or (topology.is_regular and not topology.directed)
    if (topology.walk_kind.implicit or not uniform_law or n > SPECTRAL_LIMIT
            or topology.time_varying):
        return None
    eigvals, vecs = np.linalg.eigh(_transition(topology, walk))
    coef = vecs.T @ (values - values.mean())
    data = float(np.sum(coef**2 * _lag_sum(eigvals, steps))) / n
    return math.sqrt(max(data, 0.0) + noise) / steps


def _lag_sum(lam, steps: int):
    """``T + 2 Σ_{d=1}^{T-1} (T-d) λ^d`` (elementwise; ``λ = 1`` gives ``T²``)."""
    lam = np.asarray(lam, dtype=float)
    one = np.isclose(lam, 1.0, rtol=0, atol=1e-12)
    safe = np.where(one, 0.5, lam)
    tail = safe * (steps * (1 - safe) - (1 - safe**steps)) / (1 - safe) ** 2
    out = np.where(one, float(steps) ** 2, steps + 2 * tail)
    return out if out.ndim else float(out)


def _transition(topology: Topology, walk: str) -> np.ndarray:
    """Dense transition matrix of the walk on a (small) graph, weights included
    (:func:`netdp.graphs.walk_kind.transition_matrix`)."""
    return topology.transition(walk).toarray()


def _noise_sum(mechanism: AdditiveNoise, rng: np.random.Generator, draws: int) -> float:
    """Sum of ``draws`` noise draws, in fixed chunks (bounded memory, reproducible)."""
    total = 0.0
    for lo in range(0, draws, CHUNK):
        total += float(mechanism.noise(rng, min(CHUNK, draws - lo)).sum())
    return total


def _weighted_sum(counts: np.ndarray, values: np.ndarray) -> float:
    """``Σ counts · values`` by numpy's pairwise sum: the same bits whatever the number of
    BLAS threads (``@`` hands vectors to BLAS, whose order of addition depends on it)."""
    return float(np.sum(counts * values))
