"""One target δ for every figure of a report (spec ``network-dp.md``, Correction 7).

Every pairwise figure, accountant, LDP baseline and theory line of one report is an ε at
the one δ the user chose (``--target-delta``, by default ``--delta``). Accountants that
convert a whole privacy curve (Rényi, privacy-loss distributions, the exact loss) read
the target directly. An accountant that composes ``(ε, δ)`` entries spends δ twice, on
the entries and on the composition theorem's slack, and must fit both inside the target;
the split used everywhere is

* the ``k <= K`` entries of a pair take ``δ_T / (2 K)`` each, ``K`` bounding the entries
  of every pair of the run (so they spend at most ``δ_T / 2``);
* the composition's slack is the other half, ``δ_T / 2``.

Examples
--------
>>> entry_delta(1e-6, 100)
5e-09
>>> composition_slack(1e-6)
5e-07
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from netdp.accounting._compiled import _gauss_eps_nb
from netdp.accounting.composition import opti


def _check_target(target: float) -> float:
    target = float(target)
    if not 0.0 < target < 1.0:
        raise ValueError(f"a target delta lies in (0, 1) (got {target!r})")
    return target


def entry_delta(target: float, most_entries: int) -> float:
    """The δ of one ``(ε, δ)`` entry when a pair composes at most ``most_entries`` of
    them: ``δ_T / (2 K)``."""
    return _check_target(target) / (2.0 * max(int(most_entries), 1))


def composition_slack(target: float) -> float:
    """The slack ``δ'`` of an ``(ε, δ)`` composition theorem (KOV, DRV): ``δ_T / 2``."""
    return _check_target(target) / 2.0


def ldp_epsilon(counts: npt.ArrayLike, eps0: float, target: float,
                noise_multiplier: float | None = None) -> np.ndarray:
    """The local-DP loss of ``k`` contributions at the target δ, for each ``k`` of
    ``counts`` (0 for ``k = 0``).

    With Gaussian contributions (``noise_multiplier`` ``z = σ / Δ``) the composition is
    exact: ``k`` Gaussians are ``μ``-GDP with ``μ = √k / z``, and ``ε(δ_T)`` is that
    curve's (rounded up, :func:`netdp.accounting._compiled.gdp_epsilon`). Otherwise
    each contribution is ``eps0``-DP (δ = 0) and the loss is the best
    of basic and advanced composition at slack ``δ_T``: ``min(k ε0, DRV(ε0, δ_T, k))``.

    Examples
    --------
    >>> float(ldp_epsilon([1], 1.0, 1e-6)[0])
    1.0
    >>> ldp_epsilon([0, 4], 1.0, 1e-6, noise_multiplier=1.0).round(3).tolist()
    [0.0, 10.997]
    """
    target = _check_target(target)
    k = np.asarray(counts, dtype=np.float64)
    out = np.zeros(k.shape)
    pos = k > 0
    if not np.any(pos):
        return out
    kk, inverse = np.unique(k[pos], return_inverse=True)  # few distinct counts
    if noise_multiplier is not None:
        z = float(noise_multiplier)
        if not (np.isfinite(z) and z > 0):
            raise ValueError(f"noise_multiplier must be finite and > 0 (got {z!r})")
        eps = np.empty(kk.size)  # compiled: the default run loads no scipy.special
        _gauss_eps_nb(np.sqrt(kk) / z, target, eps)
    else:
        with np.errstate(over="ignore", invalid="ignore"):  # a huge eps0: k eps0 wins
            eps = np.asarray(opti(float(eps0), target, kk), dtype=np.float64)
    out[pos] = np.maximum(eps, 0.0)[inverse]
    return out
