"""Pairwise losses of a walk on any graph: participation rates from the taboo chain.

The generalisation of the complete-graph tracker (spec network-dp.md §3.2). Observer
``v`` sees the token at each visit; it knows the node ``a`` it handed the token to and
the node ``b`` that handed it back, ``m`` steps later. Between them the token made a walk
of ``L = m - 2`` steps from ``a`` to ``b`` that avoided ``v``: a path of the *taboo
chain* ``Q`` (``P`` without ``v``'s row and column), conditioned on its end. A third
node ``u`` took part in that cycle with probability at most its expected number of
visits at the interior steps,

    ``r_u = Σ_{k=1}^{L-1} (Q^k)_{au} (Q^{L-k})_{ub} / (Q^L)_{ab}``   (union bound),

which serves as the Poisson rate of the entry (capped at 1). The cycles of a walk are
independent given what ``v`` sees (the Markov property at ``v``'s visits), so the
entries compose. ``a`` and ``b`` themselves are attributable, exactly as in the
complete-graph tracker (``c = 1``, or ``c = 2`` when ``a = b``); so are all the other
conventions of the reference method (Fig. 1b of the AISTATS 2022 paper): a cycle of
length ``m`` hides a contribution under ``m`` noises, and a node's presence is what is
subsampled (several interior visits count once).

On the complete graph with self-moves ``r_u = (m - 3)/(n - 1)``. The reference rate
``1 - (1 - 1/n)^m`` is smaller when ``m > 3n`` or so, where it falls below the true
conditional probability ``1 - (1 - 1/(n-1))^{m-3}``: the reference is not sound for
long cycles, so this tracker does not reproduce it there (tests/privacy/test_taboo.py).

Cost per observer: the forward rows ``e_a Q^k`` and backward columns ``Q^k e_b`` for the
observer's neighbours, up to the taboo chain's mixing time (after which they repeat with
period 2 and are read back: :mod:`netdp.tracking._kernels.taboo`), ``O(deg · t_mix ·
nnz(P))``; then ``O(t_mix · n)`` per cycle. Rows beyond :data:`MEMORY` bytes are not
kept: a cycle longer than the rows kept (on a slowly mixing graph) takes rate 1, which is
sound, and is counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from netdp.accounting import registry
from netdp.core.errors import check
from netdp.engine.trace import Trace
from netdp.tracking._kernels import taboo as kernels
from netdp.tracking.loss_table import RDP_ORDERS, PairLosses
from netdp.tracking.walk_views import account_observers, observer_blocked, observer_setup

#: The accountants the taboo chain's kernels run: those whose kernel mode they have.
ACCOUNTANTS = tuple(name for name in registry.names(kind="graph", convention="reference")
                    if registry.entry(name).kernel_mode in ("KOV", "RDP"))
MEMORY = 1 << 30  # bytes of taboo-chain rows kept per observer (both directions)
FIRST_LIMIT = 256  # rows computed at first; doubled while some have not settled


@dataclass(frozen=True)
class Cycles:
    """One observer's returns of the token: lengths ``m``, and the attributable nodes
    ``a`` (the next holder after the observer) and ``b`` (the last before its return),
    ``-1`` when ``m < 2``."""

    m: np.ndarray
    a: np.ndarray
    b: np.ndarray


def observer_cycles(holders: np.ndarray, steps: int, start: np.ndarray, pos: np.ndarray,
                    v: int) -> Cycles:
    """The cycles of observer id ``v`` (never spanning two tokens)."""
    at = pos[start[v]:start[v + 1]]
    same = at[1:] // steps == at[:-1] // steps
    i, j = at[1:][same], at[:-1][same]
    m = i - j
    two = m >= 2
    a = np.where(two, holders[np.minimum(j + 1, holders.size - 1)], -1)
    b = np.where(two, holders[i - 1], -1)
    return Cycles(m.astype(np.int64), a.astype(np.int64), b.astype(np.int64))


def _rows(P, starts: np.ndarray, blocked: np.ndarray, longest: int, backward: bool,
          others: int):
    """The taboo chain's normalised rows from ``starts`` (forward: ``e_s Q^k``, through
    ``Pᵀ``; backward: ``Q^k e_s``) up to ``longest`` steps, within :data:`MEMORY` shared
    with ``others`` rows of the other direction: rows, log-norms, where each settled, and
    how many steps are known (every one for a settled start)."""
    M = P if backward else P.T.tocsr()
    n = P.shape[0]
    limit = min(longest, max(1, MEMORY // (8 * n * max(starts.size + others, 1)) - 1))
    rows = np.zeros((starts.size, limit + 1, n))  # calloc: untouched rows cost nothing
    logs = np.empty((starts.size, limit + 1))
    settled = kernels.powers(M.indptr, M.indices, M.data, starts, blocked, rows, logs)
    return rows, logs, settled, limit


def reversible_measure(P) -> np.ndarray | None:
    """A measure ``π`` with ``π_x P_xy = π_y P_yx`` (the degrees, or uniform: the walks
    of undirected graphs), or ``None``."""
    degrees = np.diff(P.indptr).astype(float)
    for pi in (np.ones(P.shape[0]), degrees):
        flow = P.multiply(pi[:, None]).tocsr()
        gap = abs(flow - flow.T).max() if flow.nnz else 0.0
        if gap <= 1e-12 * max(abs(flow).max(), 1.0):
            return pi
    return None


@dataclass(frozen=True)
class CycleRows:
    """The taboo-chain rows one observer's cycles need (see :func:`cycle_rows`).

    ``ia``, ``ib``: per cycle, the start of its forward and backward rows (``-1``: no
    interior, ``m < 4``; ``-2``: beyond the rows kept, rate 1); ``factors``: the backward
    rows' factor per cycle; ``arrays``: ``(F, lf, sf, G, lg, sg)`` as
    :func:`~netdp.tracking._kernels.taboo.interior_visits` reads them; ``cut``: how many
    cycles are beyond the rows kept."""

    ia: np.ndarray
    ib: np.ndarray
    factors: np.ndarray
    arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    cut: int


def cycle_rows(P, pi: np.ndarray | None, blocked: np.ndarray, cyc: Cycles) -> CycleRows:
    """The taboo chain's rows (``blocked`` removed) for the cycles ``cyc`` of one observer:
    one set of forward rows serves both ends of a reversible chain (``pi`` its measure,
    :func:`reversible_measure`), else forward rows from the ``a`` and backward ones from
    the ``b``; a cycle beyond the rows kept (neither settled nor stored) takes rate 1."""
    inner = cyc.m >= 4
    longest = int(cyc.m[inner].max() - 2) if inner.any() else 1
    ia = np.full(cyc.m.size, -1, np.int64)
    ib = np.full(cyc.m.size, -1, np.int64)
    factors = np.ones(cyc.m.size)
    if pi is not None:
        starts = np.unique(np.concatenate([cyc.a[inner], cyc.b[inner]]))
        F, lf, sf, limit_f = _rows(P, starts, blocked, longest, False, 0)
        G, lg, sg, limit_g = F, lf, sf, limit_f
        ia[inner] = np.searchsorted(starts, cyc.a[inner])
        ib[inner] = np.searchsorted(starts, cyc.b[inner])
        factors[inner] = pi[cyc.b[inner]]
    else:
        starts_a, ia[inner] = np.unique(cyc.a[inner], return_inverse=True)
        starts_b, ib[inner] = np.unique(cyc.b[inner], return_inverse=True)
        F, lf, sf, limit_f = _rows(P, starts_a, blocked, longest, False, starts_b.size)
        G, lg, sg, limit_g = _rows(P, starts_b, blocked, longest, True, starts_a.size)
    short = (_covered(ia, cyc.m - 2, sf, limit_f) & _covered(ib, cyc.m - 2, sg, limit_g))
    cut = inner & ~short
    ia[cut] = ib[cut] = -2
    return CycleRows(ia, ib, factors, (F, lf, sf, G, lg, sg), int(cut.sum()))


def graph_walk_losses(trace: Trace, P, eps0: float, delta: float, noise_multiplier: float,
                      accountant: str = "kov", coalition: Sequence[int] | None = None,
                      observers: np.ndarray | None = None) -> PairLosses:
    """Pairwise losses of a walk summation on a graph with transition matrix ``P``.

    Parameters
    ----------
    trace
        The walk (one or more tokens).
    P
        The walk's transition matrix (sparse CSR, rows sum to 1).
    eps0, delta
        The level of one noisy contribution (``kov`` sees it as ``(ε0/√m, δ)`` per cycle).
    noise_multiplier
        σ / Δ of one contribution's Gaussian noise (for ``rdp``).
    accountant
        ``kov`` (the reference method's composition) or ``rdp`` (subsampled Gaussians at
        integer orders, rates rounded up to a grid of ratio ``2^(1/32)``).
    coalition
        Nodes observing as one (the taboo chain avoids all of them).
    observers
        The observers accounted (default: every node, or the coalition); a progress bar
        over them on a terminal.

    Returns
    -------
    Every accounted pair's loss (``nodes`` kept), with the number of cycles longer than the
    rows kept, whose non-attributable entries took rate 1 (``unamplified``).
    """
    check(accountant in ACCOUNTANTS, "accountant", f"must be one of {', '.join(ACCOUNTANTS)} "
          f"for a walk on a graph (got {accountant!r})")
    from scipy import sparse

    n = trace.n
    P = sparse.csr_array(P)
    holders, obs_ids, members, start, pos = observer_setup(trace, coalition, observers)
    pi = reversible_measure(P)
    scale = np.ones(n) if pi is None else 1.0 / pi
    mode = getattr(kernels, str(registry.entry(accountant).kernel_mode))
    shared = {"holders": holders, "steps": trace.steps, "start": start, "pos": pos,
              "members": members, "coalition": coalition is not None, "P": P, "pi": pi,
              "scale": scale, "mode": mode, "eps0": float(eps0), "delta": float(delta),
              "z": float(noise_multiplier)}
    return account_observers(taboo_observer, shared, obs_ids, accountant, coalition, delta)


def taboo_observer(shared: Mapping[str, Any], v: int) -> tuple[np.ndarray, np.ndarray,
                                                                 int, int]:
    """One observer's part of :func:`graph_walk_losses` (a function of ``shared`` and
    ``v`` alone, :mod:`netdp.tracking.observer_map`): the kept nodes' losses, the kept
    nodes, its cycles and how many of them outlasted the rows kept."""
    P = shared["P"]
    blocked = observer_blocked(shared, v)
    cyc = observer_cycles(shared["holders"], shared["steps"], shared["start"], shared["pos"],
                          int(v))
    rows = cycle_rows(P, shared["pi"], blocked, cyc)
    eps = kernels.observer_losses(cyc.m, rows.ia, rows.ib, cyc.a, cyc.b, *rows.arrays,
                                  shared["scale"], rows.factors, blocked, shared["mode"],
                                  shared["eps0"], shared["delta"], shared["z"], RDP_ORDERS,
                                  numba.get_num_threads())
    keep = np.flatnonzero(~blocked)
    return eps[keep], keep, cyc.m.size, rows.cut


def _covered(index: np.ndarray, L: np.ndarray, settled: np.ndarray, limit: int) -> np.ndarray:
    """Whether each cycle's rows up to ``L`` are known (stored, or settled before)."""
    if settled.size == 0:
        return index < 0
    top = np.where(settled >= 0, np.iinfo(np.int64).max, limit)
    return (index < 0) | (top[np.maximum(index, 0)] >= L)
