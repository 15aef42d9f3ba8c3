"""Random walks on a graph: transition matrices, and the closed-form pairwise bound of
Cyffers, Bellet & Upadhyay, "Differentially Private Decentralized Learning with Random
Walks" (ICML 2024), for the model-on-a-walk task (decentralized SGD).

For a walk of ``T`` steps with transition matrix ``P`` and stationary law uniform, the
expected cost of ``u``'s updates towards ``v`` (the SGD tracker's coefficient
``C[u, v] = Σ 1/j``, see :func:`netdp.tracking.sgd.pair_coefficients`) is at most

    ``c_uv = (T / n) (ln T / n + Σ_{t=1}^{T} ((P^t)_{uv} - 1/n) / t)``

(spec network-dp.md §3.2; ``P^t`` bounds the first hitting law), so the pairwise loss is
the linear RDP ``α · 2 L² c_uv / σ²``. On the complete graph with self-moves the sum over
``t`` vanishes and ``c_uv = T ln T / n²``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from scipy import sparse


DENSE_LIMIT = 4096  # all sources at once up to this many nodes
TOL = 1e-13  # a row has mixed (or settled into its period-2 oscillation) below this


def icml_coefficients(P: sparse.csr_array, steps: int,
                      sources: np.ndarray | None = None) -> np.ndarray:
    """``c[u, v]`` of the module docstring for the ``sources`` (all nodes by default):
    ``(len(sources), n)``, diagonal included.

    The rows ``e_u P^t`` are iterated until they have mixed (or, on a bipartite graph,
    settled into their period-2 oscillation) to :data:`TOL`; the rest of the sum over
    ``t <= T`` is then exact in closed form (harmonic sums over even and odd ``t``).
    """
    n = P.shape[0]
    sources = np.arange(n) if sources is None else np.asarray(sources)
    before = np.zeros((sources.size, n))  # the rows at t - 1, starting with e_u at t = 0
    before[np.arange(sources.size), sources] = 1.0
    earlier: np.ndarray | None = None  # the rows at t - 2
    total = np.zeros(before.shape)
    PT = P.T.tocsr()
    for t in range(1, steps + 1):
        rows = np.asarray((PT @ before.T).T)  # e_u P^t
        total += (rows - 1.0 / n) / t
        if earlier is not None and np.max(np.abs(rows - earlier)) < TOL:
            # from here the rows repeat with period 2 (period 1 is a special case): the
            # tail's terms of t's parity take these rows, the others the rows at t - 1
            total += ((rows - 1.0 / n) * _harmonic_part(t + 2, steps, 2)
                      + (before - 1.0 / n) * _harmonic_part(t + 1, steps, 2))
            break
        earlier, before = before, rows
    return (steps / n) * (math.log(steps) / n + total)


def _harmonic_part(start: int, stop: int, stride: int) -> float:
    """``Σ 1/t`` for ``t = start, start + stride, ... <= stop``."""
    from scipy import special

    if start > stop:
        return 0.0
    count = (stop - start) // stride + 1
    a = start / stride
    return float((special.digamma(a + count) - special.digamma(a)) / stride)
