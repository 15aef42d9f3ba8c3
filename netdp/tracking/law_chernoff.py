"""The law bound's Chernoff family: geometric tails of a node's visits in a hidden
stretch, from the Green function ``(I - z Q)^{-1}`` of the taboo chain on a grid of ``z``.

:mod:`netdp.tracking.law_bound` bounds ``P(I_u >= k)`` in a bridge of ``L`` steps from
``a`` to ``b`` by ``h_a(u) ρ_u^{k-1} M_u(b) / Z``. On a stretch much longer than the taboo
chain's relaxation, ``Z = (Q^L)[a, b]`` is about ``λ^L`` (``λ`` the Perron root of ``Q``,
the walk killed on the observer set), so that bound is far above 1 and the survival is
left to Markov's ``E[I] / k``: a tail of ``1 / k``, where the true one is geometric.
Weighting each path by ``z^t``, ``0 < z < 1 / λ`` (the strong Markov property at the
``k``-th visit ``τ_k``):

    ``P(I_u >= k) Z = Σ_t P_a(τ_k = t) (Q^{L-t})[u, b]
    <= E_a[z^{τ_k}; τ_k < ∞] max_{1 <= r < L} z^{r-L} (Q^r)[u, b]
    = h_a(u; z) F_u(z)^{k-1} z^{-L} M_u(b; z)``,

with ``G_z = (I - z Q)^{-1}`` (the chain killed on the observer set), ``h_a(u; z) =
G_z[a, u] / G_z[u, u]`` the generating function of the first visit (``F_u(z)`` when ``a =
u``: the visits after time 0; ``z (π0 G_z)[u] / G_z[u, u]`` from a first stretch's virtual
source, its first holder one step on) and ``F_u(z) = 1 - 1 / G_z[u, u]`` that of a return.
``z = 1`` is the law bound's own. Each ``z`` is a geometric bound ``B_z F_u(z)^{k-1}``; the
family's minimum over a grid of ``z`` is a Chernoff bound of the count: ``z < 1`` for
counts large for the stretch (``k`` returns within ``L`` steps), ``z`` from 1 towards ``1 /
ρ̄`` for stretches long for the chain's relaxation (``ρ̄ >= λ`` certified: ``Q ψ <= ρ̄ ψ``
for a positive ``ψ``).

``M_u(b; z)``: the bridge's last columns ``(Q^r)[:, b]`` are kept for ``r <= T`` (the law
bound's horizon) and beyond bounded through ``ψ``: ``(Q^T)[:, b] <= c_b ψ`` gives ``(Q^r)[u,
b] <= ρ̄^{r-T} c_b ψ(u)``, so ``z^r (Q^r)[u, b] <= z^T c_b ψ(u)`` (``z ρ̄ < 1``).

``G_z`` for every observer set from one spectrum per walk: a reversible walk (every walk on
an undirected graph) is symmetric as ``S = D^{1/2} P D^{-1/2} = V diag(λ) V^T``
(``D = diag(π)``), so ``R_z = (I - z P)^{-1} = D^{-1/2} V diag(1 / (1 - z λ)) V^T D^{1/2}``
(finite: ``z != 1 = λ_1`` and ``λ_i <= λ_W < 1 / z`` for ``i >= 2`` by interlacing), and
the chain killed on ``W`` is its Schur complement, ``G_z = R_z - R_z[:, W] R_z[W, W]^{-1}
R_z[W, :]`` (the first-passage decomposition at ``W``: an identity of rational functions of
``z``, shown for ``|z| < 1`` and so wherever both sides are finite). Each ``z`` then costs
``O(n² |W|)``. A walk that is not reversible, or larger than :data:`SPECTRAL_LIMIT` nodes,
keeps ``z = 1`` alone.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

import numpy as np
import scipy.linalg
from scipy import sparse

from netdp.tracking.walk_matrix import matrix_key, stationary

SPECTRAL_LIMIT = 2048  # nodes up to which a walk's spectrum is computed (dense, O(n³))
#: The grid's ``z`` below 1 (a count large for the stretch's length: Chernoff's bound of
#: ``k`` returns within ``L`` steps)
BELOW = (0.75, 0.97, 0.99, 0.996, 0.998, 0.999, 0.9995, 0.9998)
#: Where the grid's ``z`` above 1 sit between 1 and ``1 / ρ̄``: ``z = 1 + x (1 / ρ̄ - 1)``
#: (a stretch long for the chain's relaxation)
ABOVE = (0.5, 0.9, 0.99)
#: Relative and absolute slack on ``G_z``'s entries (rounding of the spectral sums: the
#: tests find them within 1e-7 of a direct inverse, and never below it)
MARGIN = 1e-8
SYMMETRY = 1e-12  # relative asymmetry of ``D^{1/2} P D^{-1/2}`` taken as rounding

_SPECTRA: OrderedDict[bytes, tuple[np.ndarray, np.ndarray, np.ndarray] | None] = OrderedDict()


def spectrum(P: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(π, λ, V)`` of a reversible walk (``D^{1/2} P D^{-1/2} = V diag(λ) V^T``), or
    ``None`` (not reversible, not irreducible, or above :data:`SPECTRAL_LIMIT` nodes). The
    newest is kept for the next observer.

    >>> ring = np.roll(np.eye(4), 1, axis=1)
    >>> pi, lam, V = spectrum(sparse.csr_array((ring + ring.T) / 2))
    >>> np.round(lam, 12).tolist()
    [-1.0, 0.0, 0.0, 1.0]
    """
    csr = sparse.csr_array(P)
    n = csr.shape[0]
    if n > SPECTRAL_LIMIT:
        return None
    key = matrix_key(csr)
    if key in _SPECTRA:
        return _SPECTRA[key]
    out = None
    pi = stationary(csr)
    if pi is not None:
        root = np.sqrt(pi)
        S = csr.toarray()
        S *= root[:, None]
        S /= root[None, :]
        if np.abs(S - S.T).max() <= SYMMETRY * max(np.abs(S).max(), 1.0):
            S += S.T
            S *= 0.5
            lam, V = scipy.linalg.eigh(S, overwrite_a=True, check_finite=False)
            out = (pi, lam, V)
    _SPECTRA.clear()
    _SPECTRA[key] = out
    return out


_SQUARES: list[tuple[np.ndarray, np.ndarray]] = []  # (V, V ∘ V): V held, so matched by identity


def squares(spec: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """``V ∘ V`` of a spectrum (``G``'s diagonals are ``(V ∘ V) w``), the newest kept."""
    V = spec[2]
    if not (_SQUARES and _SQUARES[0][0] is V):
        _SQUARES[:] = [(V, V * V)]
    return _SQUARES[0][1]


def grid(rho_bar: float) -> np.ndarray:
    """The ``z`` of the family other than 1 for a taboo chain whose Perron root is at most
    ``rho_bar``: :data:`BELOW`, and :data:`ABOVE` where ``rho_bar`` is below 1."""
    above = (1.0 + np.asarray(ABOVE) * (1.0 / rho_bar - 1.0) if 0.0 < rho_bar < 1.0
             else np.zeros(0))
    return np.concatenate([np.asarray(BELOW), above])


def green_at(spec: tuple[np.ndarray, np.ndarray, np.ndarray], blocked: np.ndarray,
             z: float, sources: np.ndarray, start_law: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray] | None:
    """``G_z[u, u]`` on the free nodes (rounded up) and the rows ``G_z[x, u] / G_z[u,
    u]`` for ``x`` in ``sources`` and a last row for a first stretch's virtual source
    (``z (π0 G_z)[u] / G_z[u, u]``), rounded up; ``None`` where the sums are not those of
    a taboo chain's generating functions (``z`` at or beyond ``1 / λ_W``, or rounding).

    ``0 < z < 1 / λ_W``, ``blocked`` the observer set's mask (module docstring)."""
    pi, lam, V = spec
    W = np.flatnonzero(blocked)
    free = np.flatnonzero(~blocked)
    w = 1.0 / (1.0 - z * lam)
    if not np.all(np.isfinite(w)):
        return None
    C = V @ (V[W].T * w[:, None])  # S_z[:, W]
    try:
        inner = np.linalg.solve(C[W], C.T)  # S_z[W, W]^{-1} S_z[W, :]
    except np.linalg.LinAlgError:
        return None
    gdiag = (squares(spec) @ w)[free] - np.einsum("uw,wu->u", C[free], inner[:, free])
    root = np.sqrt(pi)
    q = np.where(blocked, 0.0, start_law) / root
    # S_z's rows of the sources and of q, V diag(w) V^T applied at once
    starts = np.concatenate([V[sources], (V.T @ q)[None, :]]) * w[None, :]
    S = (starts @ V.T)[:, free]
    Cs = np.concatenate([C[sources], (q @ C)[None, :]])
    rows = S - Cs @ inner[:, free]
    rows[:-1] *= root[free][None, :] / root[sources][:, None]
    rows[-1] *= z * root[free]
    if not (np.all(np.isfinite(gdiag)) and np.all(gdiag >= 1.0 - 1e-9)
            and np.all(np.isfinite(rows)) and np.all(rows >= -1e-9 * gdiag)):
        return None
    h = np.maximum(rows, 0.0) / gdiag
    return gdiag * (1.0 + MARGIN) + MARGIN, h * (1.0 + MARGIN) + MARGIN


def family(P: Any, blocked: np.ndarray, start_law: np.ndarray, srcs: np.ndarray,
           col: np.ndarray, tgt_row: np.ndarray, L: np.ndarray, logZ: np.ndarray,
           back: tuple[np.ndarray, np.ndarray, np.ndarray, float]
           ) -> tuple[np.ndarray, np.ndarray]:
    """``(log B_z, log F_u(z))`` for the grid's ``z`` (module docstring): ``(J, views,
    free)`` and ``(J, free)``, ``J = 0`` where the walk has no spectrum.

    ``srcs`` the regular views' first holders (``col``: each view's row among them, the
    last row the virtual source), ``tgt_row`` each view's last holder's column of
    ``back = (bwd, bwd_ls, ψ, ρ̄)``: the backward columns ``(Q^r)[:, b]`` for ``r = 0..T``
    (scaled by ``e^{bwd_ls}``) and the right Perron bound."""
    bwd, bwd_ls, psi, rho_bar = back
    free = np.flatnonzero(~blocked)
    zs = grid(rho_bar)
    spec = spectrum(P) if zs.size else None
    if spec is None:
        return np.zeros((0, L.size, free.size)), np.zeros((0, free.size))
    T = bwd.shape[0] - 1
    index = np.full(blocked.size, -1)
    index[free] = np.arange(free.size)
    with np.errstate(divide="ignore"):
        logcol = np.log(bwd[1:, free, :]) + bwd_ls[1:, None, :]  # (T, free, tgts)
        # log c_b, c_b = max_y (Q^T)[y, b] / ψ(y)
        logc = np.log((bwd[T][free] / psi[free, None]).max(axis=0)) + bwd_ls[T]
        logpsi = np.log(psi[free])
    beyond = int(L.max(initial=0)) - 1 > T  # steps r > T in some view
    r = np.arange(1, T + 1, dtype=np.float64)
    logBs, logFs = [], []
    for z in zs:
        got = green_at(spec, blocked, float(z), srcs, start_law)
        if got is None:
            continue
        gdiag, h = got
        logF = np.log1p(-np.minimum(1.0 / gdiag, 1.0))
        for i, x in enumerate(srcs):  # from a = u, the visits after time 0: F_u(z)^k
            h[i, index[x]] = math.exp(logF[index[x]])
        lz = math.log(z)
        logM = (logcol + (r * lz)[:, None, None]).max(axis=0)  # (free, tgts)
        if beyond:
            logM = np.maximum(logM, T * lz + logc[None, :] + logpsi[:, None])
        with np.errstate(divide="ignore"):
            logB = np.log(h)[col] + logM.T[tgt_row] - (L * lz + logZ)[:, None]
        logBs.append(logB)
        logFs.append(logF)
    if not logBs:
        return np.zeros((0, L.size, free.size)), np.zeros((0, free.size))
    return np.stack(logBs), np.stack(logFs)
