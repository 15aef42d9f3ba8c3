"""Decentralized SGD on a random walk (AISTATS 2022 Alg. 5, spec network-dp.md §2.5).

The token is a model ``w``. Its holder ``u`` at step ``t`` takes one noisy step on its
own data and forwards it::

    g = clip(∇f(w; D_u), L)                     # sensitivity enforced *before* the noise
    w ← Π_W(w - γ_t (g + σ z_t)),   z_t ~ N(0, I)

The walk comes from the engine's trace; the standard normals ``z_t`` are drawn up front
from the run's ``noise`` stream, so regimes that differ only in ``σ`` share them (common
random numbers) and every backend gives the same bytes. The loop over steps is sequential
by nature: it runs in one compiled kernel, chunked so that memory stays bounded.

With a :class:`SampledPerturbation` (Wang et al., ICDE 2019, §5) the update is instead
``w ← Π_W(w - γ_t L x)``, where ``x`` is the ε-LDP report of ``g / L ∈ [-1, 1]^d`` by the
paper's Algorithm 4 (k of the d coordinates by PM or HM at ε/k, scaled by d/k, the others
0): unbiased for ``g / L``. Its uniforms are drawn up front from the same stream.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from netdp.learning.curves import LearningCurve
from netdp.learning.models import Model
from netdp.learning.training_data import Split
from netdp.mechanisms.bounded import Hybrid, Piecewise
from netdp.mechanisms.multidim import sample_size

CHUNK = 1 << 16


@dataclass(frozen=True)
class SampledPerturbation:
    """Wang et al.'s LDP gradient (ICDE 2019, §5 with Algorithm 4): ``k`` of the ``dim``
    coordinates, each by the Hybrid (``alpha`` = HM's mixing weight) or Piecewise
    (``alpha = 1``) Mechanism at ``ε/k``, scaled by ``dim/k``. The constants mirror
    :mod:`netdp.mechanisms.bounded`: PM's ``C`` and centre probability, Duchi's ``C``.
    """

    epsilon: float
    dim: int
    mechanism: str
    k: int
    alpha: float
    pm_c: float
    pm_p: float
    duchi_c: float

    @classmethod
    def of(cls, mechanism: str, epsilon: float, dim: int) -> SampledPerturbation:
        """The perturbation of ``mechanism`` (``hybrid`` or ``piecewise``) at ε."""

        k = sample_size(epsilon, dim)
        hm = Hybrid(epsilon / k)
        pm: Piecewise = hm.piecewise
        alpha = hm.alpha if mechanism == "hybrid" else 1.0
        return cls(epsilon, dim, mechanism, k, alpha, pm.C, pm.p_centre, hm.duchi.C)

    def coordinate_variance(self, t: np.ndarray) -> np.ndarray:
        """The closed-form variance of one coordinate of ``x`` for ``g_j / L = t``:
        ``(d/k)(Var_M(t) + t²) - t²`` (:mod:`netdp.mechanisms.multidim`)."""

        mech = Hybrid(self.epsilon / self.k) if self.mechanism == "hybrid" else \
            Piecewise(self.epsilon / self.k)
        scale = self.dim / self.k
        return scale * (mech.variance(t) + t**2) - t**2


@dataclass(frozen=True, eq=False)
class SgdOutcome(LearningCurve):
    """Learning curve of one walk (:class:`LearningCurve`), with

    Attributes
    ----------
    weights
        Final model.
    contributions
        Updates made by each node.
    """

    weights: np.ndarray
    contributions: np.ndarray


def learning_rates(lr: float, schedule: str, steps: int, n: int) -> np.ndarray:
    """``γ_t`` for ``t = 0..steps-1``: constant, ``lr/sqrt(1 + t/n)`` or ``lr/(1 + t/n)``."""
    if schedule == "constant":
        return np.full(steps, float(lr))
    epochs = np.arange(steps) / n
    return lr / (np.sqrt(1.0 + epochs) if schedule == "inv-sqrt" else 1.0 + epochs)


def eval_steps(steps: int, points: int) -> np.ndarray:
    """Where to evaluate: ``points + 1`` evenly spaced step counts from 0 to ``steps``."""
    return np.unique(np.linspace(0, steps, points + 1).round().astype(np.int64))


def walk_sgd(holders: np.ndarray, data: Split, model: Model, sigma: float, clip_norm: float,
             rates: np.ndarray, noise_rng: np.random.Generator, radius: float = np.inf,
             max_contributions: int | None = None, evals: int = 100,
             ldp: SampledPerturbation | None = None) -> SgdOutcome:
    """Run Algorithm 5 along ``holders`` (one token) and return its learning curve.

    Parameters
    ----------
    holders
        ``(T,)`` node holding the model at each step.
    data
        Training rows per node and the test set.
    model
        Loss and score.
    sigma
        Noise std per coordinate added to the clipped gradient (0: non-private).
    clip_norm
        ``L``: gradients are clipped to this norm before the noise (``inf``: no clip).
    rates
        ``(T,)`` step sizes.
    noise_rng
        The run's noise stream; draws ``T × d`` standard normals in chunks.
    radius
        Radius of the ball ``W`` the model is projected onto (``inf``: none).
    max_contributions
        A node that has made this many updates forwards the token unchanged.
    evals
        Evaluation points along the walk.
    ldp
        Replace the Gaussian noise by Wang et al.'s sampled PM/HM report of ``g / L``
        (``sigma`` is then unused); draws ``T × d × 4`` uniforms in chunks.
    """
    at = eval_steps(holders.size, evals)
    snaps, w, counts = _walk(holders, data, model, sigma, clip_norm, rates, noise_rng, radius,
                             max_contributions, at, ldp)
    objective = model.objective(snaps, data.X, data.y)
    score = model.score(snaps, data.X_test, data.y_test)
    return SgdOutcome(at, objective, score, w, counts)


def model_snapshots(holders: np.ndarray, data: Split, model: Model, sigma: float,
                    clip_norm: float, rates: np.ndarray, noise_rng: np.random.Generator,
                    radius: float, max_contributions: int | None,
                    at: np.ndarray, ldp: SampledPerturbation | None = None) -> np.ndarray:
    """The model after ``at[i]`` steps of the same walk as :func:`walk_sgd` (same draws):
    ``(len(at), d)``; ``at`` sorted, in ``0..T``."""
    return _walk(holders, data, model, sigma, clip_norm, rates, noise_rng, radius,
                 max_contributions, np.asarray(at, dtype=np.int64), ldp)[0]


def _walk(holders: np.ndarray, data: Split, model: Model, sigma: float, clip_norm: float,
          rates: np.ndarray, noise_rng: np.random.Generator, radius: float,
          max_contributions: int | None, at: np.ndarray,
          ldp: SampledPerturbation | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Snapshots at step counts ``at``, the final model and the updates per node."""
    steps, dim = holders.size, data.dim
    snaps = np.empty((at.size, dim))
    w = np.zeros(dim)
    counts = np.zeros(data.n, dtype=np.int64)
    cap = -1 if max_contributions is None else int(max_contributions)
    kind = 0 if model.name == "logistic" else 1
    k = int(np.sum(at == 0))
    snaps[:k] = w
    params = np.zeros(6) if ldp is None else np.array(
        [ldp.k, ldp.dim / ldp.k, ldp.alpha, ldp.pm_c, ldp.pm_p, ldp.duchi_c])
    for start in range(0, steps, CHUNK):
        stop = min(start + CHUNK, steps)
        if ldp is None:
            z, uniforms = noise_rng.standard_normal((stop - start, dim)), _NO_UNIFORMS
        else:
            z, uniforms = _NO_NORMALS, noise_rng.random((stop - start, dim, 4))
        marks = at[(at > start) & (at <= stop)] - start
        got = _kernel(holders[start:stop].astype(np.int64), data.X, data.y, data.indptr, w,
                      z, float(sigma), float(clip_norm), float(radius), rates[start:stop],
                      kind, float(model.l2), cap, counts, marks, uniforms, params)
        snaps[k:k + marks.size] = got
        k += marks.size
    return snaps, w.copy(), counts


_NO_UNIFORMS = np.empty((0, 0, 4))
_NO_NORMALS = np.empty((0, 0))


@numba.njit(cache=True)
def _report(t, u, alpha, pm_c, pm_p, duchi_c):  # pragma: no cover - compiled
    """One coordinate ``t ∈ [-1, 1]`` by HM (PM w.p. ``alpha``, else Duchi) from the
    uniforms ``u[1:4]``: the laws of :mod:`netdp.mechanisms.bounded`."""
    if u[1] < alpha:
        left = (pm_c + 1.0) * t / 2.0 - (pm_c - 1.0) / 2.0
        if u[2] < pm_p:
            return left + u[3] * (pm_c - 1.0)
        s = u[3] * (pm_c + 1.0)
        if s < left + pm_c:
            return s - pm_c
        return left + pm_c - 1.0 + (s - left - pm_c)
    if u[2] < 0.5 + t / (2.0 * duchi_c):
        return duchi_c
    return -duchi_c


@numba.njit(cache=True)
def _kernel(holders, X, y, indptr, w, z, sigma, clip_norm, radius, rates, kind, l2, cap,
            counts, marks, uniforms, params):  # pragma: no cover - compiled; oracle in tests
    """Steps of one chunk in place on ``w`` and ``counts``; returns the marked snapshots.
    With ``uniforms`` (``params = k, d/k, alpha, C_PM, p_centre, C_Duchi``) the update is
    the sampled PM/HM report of ``g / L`` times ``L`` instead of ``g + σ z``."""
    ldp = uniforms.shape[0] > 0
    k_sampled = int(params[0])
    dim = w.size
    out = np.empty((marks.size, dim))
    g = np.empty(dim)
    m = 0
    for t in range(holders.size):
        u = holders[t]
        if cap < 0 or counts[u] < cap:
            counts[u] += 1
            lo, hi = indptr[u], indptr[u + 1]
            for j in range(dim):
                g[j] = 0.0
            for i in range(lo, hi):
                margin = 0.0
                for j in range(dim):
                    margin += X[i, j] * w[j]
                if kind == 0:
                    s = -y[i] * margin  # d/dm log(1 + e^(-y m)) = -y sigmoid(-y m)
                    if s >= 0:
                        coef = -y[i] / (1.0 + np.exp(-s))
                    else:
                        e = np.exp(s)
                        coef = -y[i] * e / (1.0 + e)
                else:
                    coef = margin - y[i]
                for j in range(dim):
                    g[j] += coef * X[i, j]
            norm2 = 0.0
            for j in range(dim):
                g[j] = g[j] / max(hi - lo, 1) + l2 * w[j]
                norm2 += g[j] * g[j]
            scale = 1.0
            if norm2 > clip_norm * clip_norm:
                scale = clip_norm / np.sqrt(norm2)
            wn2 = 0.0
            if ldp:
                for j in range(dim):
                    rank = 0  # coordinate j is sampled when fewer than k keys are below its own
                    for i in range(dim):
                        if uniforms[t, i, 0] < uniforms[t, j, 0]:
                            rank += 1
                    x = 0.0
                    if rank < k_sampled:
                        tj = min(1.0, max(-1.0, scale * g[j] / clip_norm))
                        x = params[1] * _report(tj, uniforms[t, j], params[2], params[3],
                                                params[4], params[5])
                    w[j] -= rates[t] * clip_norm * x
                    wn2 += w[j] * w[j]
            else:
                for j in range(dim):
                    w[j] -= rates[t] * (scale * g[j] + sigma * z[t, j])
                    wn2 += w[j] * w[j]
            if wn2 > radius * radius:
                shrink = radius / np.sqrt(wn2)
                for j in range(dim):
                    w[j] *= shrink
        while m < marks.size and marks[m] == t + 1:
            out[m] = w
            m += 1
    return out
