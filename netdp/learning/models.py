"""Convex models for decentralized SGD: loss, gradient and score in plain numpy.

A model is a pair of functions of ``(w, X, y)``. Logistic regression takes labels in
``{-1, +1}`` and scores by accuracy; least squares takes real targets and scores by the
coefficient of determination R². Both add an optional ridge term ``λ/2 ||w||²``. The
per-node update of the protocol (``netdp.tasks.sgd_walk``) uses :func:`clip` before the
noise and :func:`project` after the step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MODELS = ("logistic", "linear")


@dataclass(frozen=True)
class Model:
    """A convex loss ``f(w) = mean_i loss(w; x_i, y_i) + λ/2 ||w||²``.

    Attributes
    ----------
    name
        ``logistic`` or ``linear``.
    l2
        Ridge coefficient ``λ >= 0``.
    """

    name: str = "logistic"
    l2: float = 0.0

    @property
    def metric(self) -> str:
        """What :meth:`score` measures: ``accuracy`` or ``r2``."""
        return "accuracy" if self.name == "logistic" else "r2"

    def objective(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Mean loss of one model ``w (d,)`` or of several ``w (k, d)`` at once."""
        margin = np.asarray(w) @ X.T  # (..., N)
        if self.name == "logistic":
            loss = np.logaddexp(0.0, -y * margin).mean(axis=-1)
        else:
            loss = 0.5 * np.square(margin - y).mean(axis=-1)
        return loss + 0.5 * self.l2 * np.square(w).sum(axis=-1)

    def gradient(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Gradient of :meth:`objective` at one ``w (d,)``."""
        margin = X @ w
        coef = -y * _sigmoid(-y * margin) if self.name == "logistic" else margin - y
        return coef @ X / max(len(y), 1) + self.l2 * w

    def node_gradients(self, w: np.ndarray, X: np.ndarray, y: np.ndarray,
                       indptr: np.ndarray) -> np.ndarray:
        """:meth:`gradient` of every node's own objective at its own model, at once.

        ``w (n, d)``: node u's model is ``w[u]`` and its rows are
        ``X[indptr[u]:indptr[u + 1]]``. Returns ``(n, d)``; a node without rows gets its
        ridge term only.
        """
        sizes = np.diff(indptr)
        margin = np.einsum("ij,ij->i", X, np.repeat(w, sizes, axis=0))
        if self.name == "logistic":  # -y sigmoid(-y m) = -y / (1 + e^(y m)), 0 on overflow
            with np.errstate(over="ignore"):
                coef = -y / (1.0 + np.exp(y * margin))
        else:
            coef = margin - y
        out = self.l2 * w
        held = sizes > 0
        out[held] += (np.add.reduceat(coef[:, None] * X, indptr[:-1][held], axis=0)
                      / sizes[held, None])
        return out

    def smoothness(self, X: np.ndarray) -> float:
        """A smoothness constant β of every node's objective: ``max ||x||²/4`` (logistic)
        or ``max ||x||²`` (least squares), plus λ."""
        top = float(np.max(np.einsum("ij,ij->i", X, X))) if len(X) else 0.0
        return (top / 4.0 if self.name == "logistic" else top) + self.l2

    def score(self, w: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Accuracy (logistic) or R² (linear) of ``w (d,)`` or ``w (k, d)``."""
        margin = np.asarray(w) @ X.T
        if self.name == "logistic":
            return (np.where(margin >= 0, 1.0, -1.0) == y).mean(axis=-1)
        resid = np.square(margin - y).sum(axis=-1)
        return 1.0 - resid / np.square(y - y.mean()).sum()


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -z))


def clip(g: np.ndarray, bound: float) -> np.ndarray:
    """Scale the rows of ``g`` to Euclidean norm at most ``bound`` (``inf``: unchanged)."""
    if not np.isfinite(bound):
        return g
    norm = np.linalg.norm(g, axis=-1, keepdims=True)
    return g * np.minimum(1.0, bound / np.maximum(norm, 1e-300))


def project(w: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection onto the ball of the given radius (``inf``: none)."""
    if not np.isfinite(radius):
        return w
    norm = np.linalg.norm(w, axis=-1, keepdims=True)
    return w * np.minimum(1.0, radius / np.maximum(norm, 1e-300))


def solve(model: Model, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Minimizer and minimum of the objective by L-BFGS (scipy): the reference optimum."""
    from scipy.optimize import minimize

    res = minimize(lambda w: float(model.objective(w, X, y)), np.zeros(X.shape[1]),
                   jac=lambda w: model.gradient(w, X, y), method="L-BFGS-B",
                   options={"maxiter": 10_000, "gtol": 1e-10, "ftol": 1e-15})
    return res.x, float(res.fun)
