"""A privacy loss distribution from points of a privacy profile ("connecting the dots").

A mechanism's privacy profile ``δ(ε) = sup H_{e^ε}(M(D) || M(D'))`` is, as a function of
``x = e^ε`` on ``[0, ∞)``, convex and non-increasing, with ``δ(x = 0) = 1``. Given points
``(ε_j, δ_j)`` that each bound it from above (``δ(ε_j) <= δ_j``: any accountant's
``ε(δ_j) = ε_j``), the *lower convex hull* ``g`` of the points and of ``(x = 0, 1)``, kept
flat at the smallest ``δ_j`` beyond the last point, still bounds the profile from above:
between two hull vertices ``g`` is the chord of two upper points, above the chord of the
convex profile, above the profile. ``g`` is piecewise linear in ``x``; it is the profile of
a discrete privacy loss ``L`` (Doroshenko et al., PETS 2022):

* mass ``p_j = x_j (s_{j+1} - s_j)`` at ``L = ln x_j`` for each vertex ``x_j > 0``
  (``s_j`` the slope of the hull left of vertex ``j``, ``s`` = 0 after the last);
* mass ``g(∞)`` (the smallest ``δ_j``) at ``L = +∞``;

which add up to ``g(0) = 1``. Each loss is rounded *up* to the grid step ``h`` (a larger
loss only raises the profile, and keeps ``E[e^{-L}] <= 1``).

The pair of distributions it describes dominates the mechanism in both directions, as
dp-accounting's composition needs: its forward profile is ``g``, above both directions'
profiles when the points bound their maximum (netdp's pairwise figures do); its reverse
profile is flat at ``g(ε = 0)``, above either direction's total variation. So the PLD may be
composed with anything in dp-accounting, and its figures stay upper bounds; at a hull
vertex ``δ_j`` it gives back ``ε_j`` (to ``h``), and at a point above the hull less.

Examples
--------
>>> pld = profile_pld([0.0, 1.0, 2.0], [0.5, 0.2, 0.01])
>>> round(pld.get_epsilon_for_delta(0.2), 4)
1.0
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

#: Default grid step of the losses (dp-accounting's default too).
STEP = 1e-4
#: Points closer than this, relatively, in ``x = e^ε`` are merged (:func:`hull`).
MERGE = 1e-9
#: Points of a larger ε are left out (``e^ε`` overflows a float): dropping a point only
#: raises the hull, and what it bounded goes to ``+∞``.
MAX_EPSILON = 700.0


class ProfilePmf(NamedTuple):
    """The discrete loss of :func:`profile_pmf`: ``probs[i]`` at loss ``losses[i] * step``
    (``losses`` in units of the step) and ``infinity`` at ``+∞``."""

    losses: np.ndarray
    probs: np.ndarray
    infinity: float
    step: float


def hull(epsilons: npt.ArrayLike, deltas: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The vertices ``(x, δ)`` of the lower convex hull of the points ``(e^ε_j, δ_j)`` and
    ``(0, 1)``, from ``x = 0`` to the point of smallest ``δ`` (the largest ``x`` among
    those), as in the module docstring. Points beyond :data:`MAX_EPSILON` are left out;
    with no point left the hull is ``(0, 1)`` alone (all mass at ``+∞``)."""
    eps = np.asarray(epsilons, dtype=np.float64).ravel()
    dlt = np.asarray(deltas, dtype=np.float64).ravel()
    if eps.size != dlt.size:
        raise ValueError("give as many deltas as epsilons")
    if not (np.all(eps >= 0) and np.all(np.isfinite(eps))):
        raise ValueError("epsilons must be finite and >= 0")
    if not np.all((dlt >= 0) & (dlt <= 1)):
        raise ValueError("deltas must lie in [0, 1]")
    kept = eps <= MAX_EPSILON
    eps, dlt = eps[kept], dlt[kept]
    x = np.concatenate([[0.0], np.exp(eps)])
    d = np.concatenate([[1.0], np.minimum(dlt, 1.0)])
    order = np.argsort(x, kind="stable")
    x, d = x[order], d[order]
    # points within a relative MERGE of each other in x become one, at the group's largest
    # x and smallest δ (sound: δ(x_max) <= δ(x_i) <= δ_i); no steep slope between them
    start = np.flatnonzero(np.concatenate([[True], x[1:] > x[:-1] * (1 + MERGE)]))
    x, d = np.maximum.reduceat(x, start), np.minimum.reduceat(d, start)
    last = int(np.flatnonzero(d == d.min())[-1])
    x, d = x[:last + 1], d[:last + 1]
    keep: list[int] = []
    for i in range(x.size):  # Andrew's monotone chain, lower hull
        while len(keep) >= 2:
            a, b = keep[-2], keep[-1]
            cross = (x[b] - x[a]) * (d[i] - d[a]) - (d[b] - d[a]) * (x[i] - x[a])
            if cross > 0:
                break
            keep.pop()
        keep.append(i)
    return x[keep], d[keep]


def profile_pmf(epsilons: npt.ArrayLike, deltas: npt.ArrayLike,
                step: float = STEP) -> ProfilePmf:
    """The discrete privacy loss whose profile is the hull of the points (module
    docstring), its losses rounded up to multiples of ``step``."""
    if not step > 0:
        raise ValueError(f"step must be > 0 (got {step!r})")
    x, d = hull(epsilons, deltas)
    slopes = np.append(np.diff(d) / np.diff(x), 0.0)  # right of each vertex; flat last
    mass = x[1:] * np.diff(slopes)  # at each vertex x > 0
    mass = np.maximum(mass, 0.0)  # rounding of an exactly flat stretch
    losses = np.log(x[1:])
    index = np.ceil(losses / step - 1e-9).astype(np.int64)  # up (a hair of rounding kept)
    index = np.where(index * step < losses, index + 1, index)
    live = mass > 0
    index, inverse = np.unique(index[live], return_inverse=True)  # rounded onto one step
    probs = np.bincount(inverse, weights=mass[live], minlength=index.size)
    return ProfilePmf(index, probs, float(d[-1]), float(step))


def profile_pld(epsilons: npt.ArrayLike, deltas: npt.ArrayLike, step: float = STEP) -> Any:
    """A ``dp_accounting`` ``PrivacyLossDistribution`` (the same distribution for removal
    and addition) whose figures bound the profile the points bound (module docstring)."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    pmf = profile_pmf(epsilons, deltas, step)
    if pmf.probs.size == 0:  # the hull is flat at 1: all mass at +∞
        assert pmf.infinity == 1.0
        return pld_lib.PrivacyLossDistribution.create_from_rounded_probability(
            {0: 0.0}, 1.0, step)
    loss = {int(i): float(p) for i, p in zip(pmf.losses, pmf.probs, strict=True)}
    return pld_lib.PrivacyLossDistribution.create_from_rounded_probability(
        loss, pmf.infinity, step)


def epsilon_at(epsilons: npt.ArrayLike, deltas: npt.ArrayLike, delta: float) -> float:
    """The hull's ``ε`` at ``delta`` (exactly, no grid): the smallest ``ε >= 0`` with
    ``g(e^ε) <= delta``; ``inf`` below the smallest ``δ_j``."""
    x, d = hull(epsilons, deltas)
    if delta < d[-1]:
        return math.inf
    j = int(np.flatnonzero(d <= delta)[0])
    if j == 0:
        return 0.0
    xa, xb, da, db = x[j - 1], x[j], d[j - 1], d[j]
    at = xa + (da - delta) * (xb - xa) / (da - db)
    return max(0.0, math.log(at)) if at > 0 else 0.0
