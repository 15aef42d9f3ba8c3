"""Count laws on the complete graph in closed form: the walk, lumped by whether it sits on
the node, the observers or elsewhere, is a chain on three states, so the law of a node's
visits inside a window needs no sweep over the graph (:mod:`netdp.tracking.count_law`
does any graph)."""

from __future__ import annotations

import numba as nb
import numpy as np
import numpy.typing as npt

from netdp.core.errors import InputError, check

FloatArray = npt.NDArray[np.float64]


def complete_interior_law(interior: int, n: int, w: int = 1, self_moves: bool = True,
                          a_is_u: bool = False, b_is_u: bool = False,
                          a_is_b: bool = False) -> FloatArray:
    """``P(I_u = k)``, ``k = 0..interior``, for one cycle of the walk on the complete graph.

    Parameters
    ----------
    interior
        Interior positions of the cycle, ``m - 3`` (``0`` when ``m <= 3``).
    n, w
        Nodes, and observers in ``W`` (``u``, ``a`` and ``b`` are outside ``W``).
    self_moves
        Each step uniform over all ``n`` nodes (``True``) or over the ``n - 1`` others.
    a_is_u, b_is_u, a_is_b
        Whether ``u = a``, ``u = b``, ``a = b`` (only matter without self-moves).

    Returns
    -------
    ndarray
        ``(interior + 1,)`` the law of ``I_u``.

    Notes
    -----
    With self-moves every path of ``L = interior + 1`` steps inside the ``s = n - w``
    nodes outside ``W`` has the same weight ``n^{-L}`` and no constraint links
    consecutive holders, so given ``a``, ``b`` the interior holders are iid uniform on
    those ``s`` nodes: ``I_u ~ Binomial(interior, 1/s)``, whatever ``a`` and ``b``.

    Without self-moves every path again has weight ``(n-1)^{-L}``, but consecutive holders
    differ, so the law depends on the ends. Lump the ``s`` nodes into ``U = {u}``,
    ``B = {b}`` (absent when ``b = u``) and ``O`` (the ``o = s - 1 - [b != u]`` others).
    The lumping is exact (strong lumpability): every node of a class sends the same
    number of moves into each class (from ``U``: 0 to ``U``, 1 to ``B``, ``o`` to ``O``;
    from ``B``: 1 to ``U``, 0 to ``B``, ``o`` to ``O``; from a node of ``O``: 1 to ``U``,
    1 to ``B``, ``o - 1`` to ``O``), so the number of paths with a given class sequence
    is the product of these counts along it, and ``I_u`` is read from the class sequence.
    The law is then the forward recursion over (class, visits so far) of that 3-state
    chain, started at ``a``'s class and ended in ``b``'s, normalised at every step.
    """
    check(interior >= 0, "interior", f"must be >= 0, got {interior}")
    check(1 <= w < n, "w", f"must be in 1..n-1, got {w} (n = {n})")
    a_is_b = a_is_b or (a_is_u and b_is_u)
    check(not (a_is_b and a_is_u != b_is_u), "a_is_b", "a = b needs u = a and u = b alike")
    s = n - w
    ends = 1 + (not a_is_u) + (not b_is_u) - (a_is_b and not a_is_u)  # distinct u, a, b
    check(s >= ends, "w", f"{ends} distinct nodes outside W need n - w >= {ends}")
    if self_moves:
        return _binomial(interior, 1.0 / s)
    if interior == 0:
        return np.ones(1)
    start = np.zeros(3)
    start[0 if a_is_u else (1 if a_is_b else 2)] = 1.0
    return _lumped_law(start, s, b_is_u, interior, first=False)


def complete_first_stretch_law(interior: int, n: int, w: int = 1, self_moves: bool = True,
                               b_is_u: bool = False) -> FloatArray:
    """``P(I_u = k)``, ``k = 0..interior``, for a first stretch on the complete graph.

    The token starts uniform over all ``n`` nodes; ``interior = i0 - 1`` (the positions
    ``0..i0-2``). With self-moves ``I_u ~ Binomial(interior, 1/(n - w))``; without, the
    lumped chain of :func:`complete_interior_law` started from the uniform law on the
    nodes outside ``W`` (class weights ``1, 1, o``), counting the start too.
    """
    check(interior >= 0, "interior", f"must be >= 0, got {interior}")
    check(1 <= w < n, "w", f"must be in 1..n-1, got {w} (n = {n})")
    s = n - w
    check(s >= 2 or b_is_u, "w", "u and b outside W need n - w >= 2")
    if self_moves:
        return _binomial(interior, 1.0 / s)
    if interior == 0:
        return np.ones(1)
    o = s - 1 - (0 if b_is_u else 1)
    start = np.array([1.0, 0.0 if b_is_u else 1.0, float(o)])
    return _lumped_law(start, s, b_is_u, interior, first=True)


def _binomial(k: int, p: float) -> FloatArray:
    from scipy import stats

    return np.asarray(stats.binom.pmf(np.arange(k + 1), k, p), dtype=np.float64)


def _lumped_law(start: FloatArray, s: int, b_is_u: bool, interior: int,
                first: bool) -> FloatArray:
    """The count law on the lumped chain ``U, B, O`` (see :func:`complete_interior_law`)
    over ``interior`` counted positions: a bridge makes ``interior + 1`` moves from
    ``start`` and counts ``U`` at positions ``1..interior``; a first stretch makes
    ``interior`` moves and counts ``U`` at ``0..interior-1``. It must end in ``b``'s class.
    The forward recursion is one compiled loop (:func:`_lumped_forward`)."""
    steps = interior if first else interior + 1
    law = _lumped_forward(np.asarray(start, np.float64), lumped_moves(s, b_is_u), steps,
                          interior, first, 0 if b_is_u else 1)
    if law.size == 0:
        raise InputError("interior", "this cycle has probability 0 on the complete graph")
    return law


def lumped_moves(s: int, b_is_u: bool) -> FloatArray:
    """The moves between the classes ``U, B, O`` of :func:`complete_interior_law`'s
    lumping (row: from; column: to), ``B`` empty when ``b = u``."""
    o = s - 1 - (0 if b_is_u else 1)
    has_b = 0.0 if b_is_u else 1.0
    M = np.array([[0.0, has_b, o], [1.0, 0.0, o], [1.0, has_b, max(o - 1, 0)]])
    M[:, 1] *= has_b
    M[1, :] *= has_b
    return M


#: Mass of a count column (of a total 1) below which it is dropped, far below any figure:
#: the law of a long view then costs its likely counts, not all of them.
TINY = 1e-300


@nb.njit(cache=True, nogil=True)
def _lumped_forward(start, M, steps, interior, first, end):
    """``f[class, visits so far]`` moved ``steps`` times by ``M`` (a visit of class 0
    counted at every position but the last), normalised at every step; the law at class
    ``end`` (empty: probability 0). Only the columns up to the most visits so far are
    moved (the others are 0); trailing columns below :data:`TINY` stop being moved, their
    mass kept at the largest count (where a law's cut tail goes: the pessimistic side)."""
    width = steps + 1
    f = np.zeros((3, width))
    g = np.zeros((3, width))
    for c in range(3):
        f[c, 0] = start[c]
    top = 0  # the highest column that may be non-zero
    tail = 0.0  # the mass of the columns no longer moved, in the current normalisation
    if first:  # the start is a counted position
        f[0, 1] = f[0, 0]
        f[0, 0] = 0.0
        top = 1
    for t in range(1, steps + 1):
        total = 0.0
        for k in range(top + 1):
            for j in range(3):
                g[j, k] = M[0, j] * f[0, k] + M[1, j] * f[1, k] + M[2, j] * f[2, k]
        if t < steps and top + 1 < width:  # an interior position: a visit of U counts
            top += 1
            g[0, top] = 0.0
            g[1, top] = 0.0
            g[2, top] = 0.0
        if t < steps:
            for k in range(top, 0, -1):
                g[0, k] = g[0, k - 1]
            g[0, 0] = 0.0
        for k in range(top + 1):
            total += g[0, k] + g[1, k] + g[2, k]
        if total == 0.0:
            return np.zeros(0)
        tail /= total
        for k in range(top + 1):
            for j in range(3):
                f[j, k] = g[j, k] / total
        while top > 0 and f[0, top] < TINY and f[1, top] < TINY and f[2, top] < TINY:
            tail += f[0, top] + f[1, top] + f[2, top]
            f[0, top] = f[1, top] = f[2, top] = 0.0  # beyond float64's use: not moved on
            top -= 1
    law = np.zeros(interior + 1)
    mass = 0.0
    for k in range(min(top, interior) + 1):
        law[k] = f[end, k]
        mass += law[k]
    if mass == 0.0:
        return np.zeros(0)
    law[interior] += tail
    return law / (mass + tail)
