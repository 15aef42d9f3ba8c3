"""The exact loss of a gossip view when the noise is correlated (DECOR's secrets, a user's
covariance: :mod:`netdp.mechanisms.correlated_noise`).

Observer v (or a coalition K) sees ``y = M z``, ``z = x + η``, and knows part of the noise
(its own draws, the secrets of its edges). Given what it knows, ``η`` on the view's ball
is ``N(m, Σ_K)`` with ``m`` known and ``Σ_K`` =
:meth:`~netdp.mechanisms.correlated_noise.CorrelatedNoise.conditional` (0 on K). Between
``x_u = 0`` and ``x_u = Δ`` the mean of y moves by ``Δ M e_u`` and its covariance is
``M Σ_K Mᵀ``, so the view is one Gaussian shift of

    μ² = Δ² (M e_u)ᵀ (M Σ_K Mᵀ)⁺ (M e_u),

and netdp reports ``c = σ² μ² / Δ²`` (``σ`` the independent noise's std), so that, as for
independent noise, ``D_α = α Δ² c / (2σ²)`` and ``μ = √c / σ``.

**How it is computed, stably.** With ``M = U S Vᵀ`` (the rank cut of
:func:`netdp.tracking.gossip.view_coefficients`), y is an invertible function of
``Vᵀ z``, so ``μ² = (Vᵀ e_u)ᵀ (Vᵀ Σ_K V)⁺ (Vᵀ e_u)``. The view holds ``e_k`` for every
``k ∈ K`` (their own values), so ``V``'s span splits into ``span{e_k}`` (known exactly:
no noise there) and its complement ``X``, where ``Vᵀ e_u`` lies for ``u ∉ K``. On ``X``
the covariance is ``Xᵀ Σ_K X ⪰ σ² I`` (``Σ_K ⪰ σ² I`` off K: every free node keeps its
independent draw), so

    c_u = σ² (Xᵀ e_u)ᵀ (Xᵀ Σ_K X)⁻¹ (Xᵀ e_u) <= ‖Π e_u‖² <= 1

never above the independent noise's loss of the same view nor the local level. It is
solved in factor form (:func:`coefficients`), from the draws themselves rather than their
covariance, so that a ratio of 1e6 between the secrets' std and the independent one costs
1e6 in conditioning, not 1e12, and every rounding is taken on the side of more loss.
Where the rank cut is not certified, the view is replaced by every noisy value on its
ball (``V = I``: post-processing, sound): ``c_u = σ² ((Σ_K)_free⁻¹)_uu``.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from netdp.mechanisms.correlated_noise import CorrelatedNoise


def coefficients(V: np.ndarray | None, ball: np.ndarray, known: np.ndarray,
                 noise: CorrelatedNoise) -> np.ndarray:
    """``c_u`` on ``ball`` (0 on the known nodes) of a view whose row space, on the ball's
    columns, has the orthonormal rows ``V`` (``None``: every noisy value on the ball).

    Solved in factor form: with ``Σ_K ⪰ F Fᵀ``
    (:meth:`~netdp.mechanisms.correlated_noise.CorrelatedNoise.factor`, the draws
    themselves), ``G = X F`` and ``b_u = X e_u``, ``c_u = σ² ‖G⁺ b_u‖²``, from ``G``,
    whose condition is the ratio of the noises' stds, not its square; every
    singular value is at least ``σ'`` (``G`` holds ``σ' X``). The figure is raised by
    ``64 ε cond(G)`` relative (the factorisation's rounding), so it never falls below the exact
    loss by rounding.

    Parameters
    ----------
    V
        ``(r, m)`` orthonormal rows spanning the view's row space (columns: ``ball``);
        it must hold ``e_k`` for every known node ``k`` (their own values).
    ball
        The nodes the view touches (sorted ids), ``m`` of them.
    known
        The observer or the coalition's members (all in ``ball``).
    noise
        The noise model.

    Examples
    --------
    >>> import numpy as np
    >>> from netdp.mechanisms.correlated_noise import CorrelatedNoise
    >>> path = CorrelatedNoise(1.0, 1.0, np.array([[0, 1], [1, 2]]))
    >>> coefficients(None, np.arange(3), np.array([0]), path).round(4)  # sees z_1, z_2
    array([0.    , 0.6667, 0.6667])
    """
    ball = np.asarray(ball, dtype=np.int64)
    k_at = np.searchsorted(ball, np.asarray(known, dtype=np.int64))
    free = np.ones(ball.size, dtype=bool)
    free[k_at] = False
    F = noise.factor(known, ball)[free]
    out = np.zeros(ball.size)
    if V is None:  # every noisy value on the ball
        X = np.eye(int(free.sum()))
    else:
        q, _ = np.linalg.qr(V[:, k_at], mode="complete")  # span{e_k} in V's coordinates ...
        X = q[:, k_at.size:].T @ V[:, free]  # ... and its complement: orthonormal rows
    if X.shape[0] == 0:
        return out
    R = sla.qr((X @ F).T, mode="r")[0][:X.shape[0]]  # G = Rᵀ Qᵀ: ‖G⁺ b‖ = ‖R⁻ᵀ b‖
    whitened = sla.solve_triangular(R, X, trans="T")
    sv = np.linalg.svd(R, compute_uv=False)
    eps = float(np.finfo(float).eps)
    margin = 1.0 + 64.0 * eps * float(sv[0] / sv[-1]) * max(X.shape)
    out[free] = noise.sigma**2 * np.einsum("ij,ij->j", whitened, whitened) * margin
    return out
