"""A sound bound of the law of a node's visits in a hidden stretch, for every node at once.

The exact laws (:mod:`netdp.tracking.count_law`) cost ``n`` sweeps of the longest hidden
stretch per observer; this module bounds the *survival function* of every node's interior
count ``I_u`` in every view of an observer from quantities the observer's taboo chain
``Q`` (``P`` without the observer set ``W``) gives for all nodes together:

* the Green function of the chain killed on ``W``, ``G = (I - Q)^{-1}`` (visits before
  ``W`` is hit), whence ``ρ_u = 1 - 1 / G[u, u]`` (a return to ``u`` before ``W``) and
  ``h_a(u) = G[a, u] / G[u, u]`` (``u`` hit before ``W`` from ``a``);
* the normaliser ``Z = (Q^L)[a, b]`` of each view and ``M_u(b) = max_{1 <= r < Λ}
  (Q^r)[u, b]`` of each last holder ``b`` (one forward sweep per first holder, one backward
  sweep per last holder, both over the longest stretch ``Λ``; a forward column stops where
  it has converged to the chain's Perron mode, its later normalisers then bounded below
  within :data:`FORWARD_TOL`, and a backward one where its maxima are final).

The bound. The bridge from ``a`` to ``b`` of ``L`` steps has ``P(I_u >= k) Z = Σ_t
P_a(τ_k = t) (Q^{L-t})[u, b]`` (``τ_k`` the time of the ``k``-th visit, strong Markov
property), so

    ``P(I_u >= k) <= S_u(k) = min(1, h_a(u) ρ_u^{k-1} M_u(b) / Z)``,   ``k >= 1``,

``P_a(τ_k < ∞) = h_a(u) ρ_u^{k-1}`` for the chain killed on ``W`` (``ρ_u^k`` when
``u = a``; a first stretch starts from a virtual node whose row is ``π0``, so
``h_σ(u) = (π0 G)[u] / G[u, u]``), and Markov's inequality with the mean number of visits
(:func:`mean_logs`: exact near the bridge's ends, bounded between). For one observer ``G``
is read from the walk's fundamental matrix, computed once per matrix
(:func:`single_observer_green`); a coalition inverts its own. Nothing is cut: every count
up to the stretch's length takes its share of the bound. ``pld``'s dominating laws add a
family of such geometric bounds, one per weight ``z^t`` on the paths' steps (a Chernoff
bound of the count: :mod:`netdp.tracking.law_chernoff`), and take their minimum.

The entries. ``kov`` (``log E[e^{ε_K}]``) and the Rényi bound by joint convexity
(``1/(α-1) log E[e^{α(α-1) K² / 2s²}]``, both directions) are expectations of an
increasing function ``F`` of ``K = c + I``, hence monotone in the stochastic order of
``K``: with ``F(c + k)`` nondecreasing, ``E[F(K)] = F(c) + Σ_{k >= 1} P(I >= k)
(F(c + k) - F(c + k - 1)) <= F(c) + Σ_{k >= 1} S_u(k) (F(c + k) - F(c + k - 1))``,
summed exactly up to :data:`TERMS` counts past where ``S_u`` leaves 1, and bounded beyond
by (counts) x (the larger end term) of the log-convex ``B ρ^{k-1} e^{F(c + k)}``.
(The Rényi bound here does not use the subsampling of a node's presence, as the label
bound of :mod:`netdp.tracking.cycle_entries` does: that bound is not monotone in the law.)
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

import numpy as np
import scipy.linalg
from scipy import sparse
from scipy.sparse import csgraph

from netdp.tracking import cycle_entries as ce
from netdp.tracking._kernels.law_bound import expected_log_table, forward_normalisers
from netdp.tracking.law_bound_cost import DENSE_LIMIT
from netdp.tracking.walk_matrix import matrix_key, stationary

TERMS = 64  # counts summed term by term past where the survival bound leaves 1
HORIZON = 128  # steps of the bridges' rows and columns kept for the mean number of visits
#: The most a normaliser ``log Z`` may be below its value (a lower bound: sound, it only
#: raises ``B``) once a sweep's column has converged to the Perron mode (the kernel's
#: docstring); the column is not stepped further.
FORWARD_TOL = 1e-9
PERRON_ITERATIONS = 20_000  # power iterations at most for the Perron vectors


class Unbounded(Exception):
    """The bound does not apply (too many nodes for the dense Green function, or a part
    of the graph from which the observer cannot be reached)."""


def green(Q: Any, free: np.ndarray) -> np.ndarray:
    """``(I - Q)^{-1}`` on the ``free`` nodes (dense), or :class:`Unbounded`."""
    if free.size > DENSE_LIMIT:
        raise Unbounded(f"{free.size} nodes: above {DENSE_LIMIT}")
    system = sparse.csr_array(Q)[free][:, free].toarray()
    system *= -1.0
    system[np.diag_indices(free.size)] += 1.0
    try:
        G = scipy.linalg.inv(system, overwrite_a=True, check_finite=False)
    except np.linalg.LinAlgError as err:
        raise Unbounded("the taboo chain has a closed class") from err
    if not (np.all(np.isfinite(G)) and np.all(G > -1e-9) and np.all(np.diag(G) >= 1.0 - 1e-9)):
        raise Unbounded("the taboo chain has a closed class")
    return np.maximum(G, 0.0)


_FUNDAMENTAL: OrderedDict[bytes, tuple[np.ndarray, np.ndarray] | None] = OrderedDict()
FUNDAMENTAL_KEPT_BYTES = 2**30  # fundamental matrices kept beyond the newest, in bytes


def fundamental(P: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """``(π, Z)``: the stationary law and the fundamental matrix ``(I - P + 1 π^T)^{-1}``
    of an irreducible walk (computed once per matrix; the newest kept, and the one before
    while both fit in :data:`FUNDAMENTAL_KEPT_BYTES`), or ``None`` (more than
    :data:`DENSE_LIMIT` nodes, or not irreducible). One dense inverse, in place: about
    ``8 n²`` bytes and ``2 n³`` flops (8 s at ``n = 8192`` on this project's 2-core
    machine, docs/performance.md)."""
    csr = sparse.csr_array(P)
    n = csr.shape[0]
    if n > DENSE_LIMIT:
        return None
    key = matrix_key(csr)
    if key in _FUNDAMENTAL:
        return _FUNDAMENTAL[key]
    out: tuple[np.ndarray, np.ndarray] | None = None
    if csgraph.connected_components(csr, directed=True, connection="strong")[0] == 1:
        pi = stationary(csr)
        if pi is not None:
            system = csr.toarray()
            system *= -1.0
            system += pi[None, :]
            system[np.diag_indices(n)] += 1.0
            out = (pi, scipy.linalg.inv(system, overwrite_a=True, check_finite=False))
    _FUNDAMENTAL[key] = out
    while len(_FUNDAMENTAL) > 1 and sum(8 * v[0].size ** 2 for v in _FUNDAMENTAL.values()
                                        if v is not None) > FUNDAMENTAL_KEPT_BYTES:
        _FUNDAMENTAL.popitem(last=False)
    while len(_FUNDAMENTAL) > 2:
        _FUNDAMENTAL.popitem(last=False)
    return out


MARGIN = 1e-8  # relative and absolute slack on the Green function read from Z


def single_observer_green(P: Any, v: int, sources: np.ndarray, start_law: np.ndarray,
                          free: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """For one observer ``v`` from the fundamental matrix: ``G_v(u, u)`` (rounded up) on the
    free nodes, and ``h_x(u) = P_x(τ_u < τ_v)`` (rounded up) for the rows ``sources``
    and a last row for ``x ~ π0`` (see :func:`survival_logs`), or ``None``.

    With ``E_x τ_y = (Z[y, y] - Z[x, y]) / π(y)``: ``G_v(u, u) = π(u) (E_u τ_v + E_v
    τ_u)`` and ``P_x(τ_u < τ_v) = (E_x τ_v + E_v τ_u - E_x τ_u) / (E_u τ_v + E_v τ_u)``
    (Aldous and Fill, ch. 2)."""
    got = fundamental(P)
    if got is None:
        return None
    pi, Z = got
    dz = np.diag(Z)
    to_v = (Z[v, v] - Z[free, v]) / pi[v]  # E_u τ_v
    from_v = (dz[free] - Z[v, free]) / pi[free]  # E_v τ_u
    commute = to_v + from_v
    gdiag = pi[free] * commute * (1.0 + MARGIN) + MARGIN
    w = np.where(np.arange(pi.size) == v, 0.0, start_law)
    rows = np.empty((sources.size + 1, free.size))
    for i, x in enumerate(sources):
        x_to_u = (dz[free] - Z[x, free]) / pi[free]
        rows[i] = ((Z[v, v] - Z[x, v]) / pi[v] + from_v - x_to_u) / commute
    wz = w @ Z
    w_to_u = (w.sum() * dz[free] - wz[free]) / pi[free]
    rows[-1] = ((w.sum() * Z[v, v] - wz[v]) / pi[v] + w.sum() * from_v - w_to_u) / commute
    rows = np.clip(rows * (1.0 + MARGIN) + MARGIN, 0.0, 1.0)
    return gdiag, rows


def _sweeps(Q: Any, starts: np.ndarray, steps: int, record: Any) -> None:
    """``X_{t+1} = Q X_t`` (columns scaled by their maxima, the logs kept) for
    ``t = 0..steps - 1``; ``record(t + 1, X, logscale)`` after each step (its truth
    ends the sweeps)."""
    X = np.array(starts, dtype=np.float64)
    logscale = np.zeros(X.shape[1])
    for t in range(steps):
        X = Q @ X
        top = X.max(axis=0)
        top[top <= 0.0] = 1.0
        X /= top
        logscale += np.log(top)
        if record(t + 1, X, logscale):
            return


def survival_logs(P: Any, blocked: np.ndarray, start_law: np.ndarray, kind: np.ndarray,
                  a: np.ndarray, b: np.ndarray, length: np.ndarray, chernoff: bool = False
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per view and free node: ``log B``, ``log ρ`` and ``log E[I]`` (bounded) of
    ``S_u(k) = min(1, B ρ^{k-1}, E[I] / k)``; with ``chernoff``, ``log B`` and ``log ρ``
    of a family of such bounds (:mod:`netdp.tracking.law_chernoff`), ``S_u(k) = min(1,
    min_j B_j ρ_j^{k-1}, E[I] / k)``, stacked on a first axis whose first entry is the
    bound without it.

    Parameters
    ----------
    P
        ``(n, n)`` transition matrix (scipy sparse).
    blocked
        The observer set's mask.
    start_law
        ``π0``, the law of a token's first holder.
    kind, a, b, length
        The views (:class:`~netdp.tracking.cycle_entries.Views`): regular views are
        bridges of ``L = m - 2`` steps from ``a``; first stretches bridges of ``i0`` steps
        from a virtual node with row ``π0``.

    Returns
    -------
    logB, logrho, logmu, free
        ``(views, free nodes)``, ``(free nodes,)``, ``(views, free nodes)`` (see
        :func:`mean_logs`) and the free nodes' ids; with ``chernoff``, ``(J, views, free
        nodes)`` and ``(J, free nodes)``.
    """
    n = P.shape[0]
    free = np.flatnonzero(~blocked)
    keep = sparse.diags((~blocked).astype(np.float64))
    Q = sparse.csr_array(keep @ sparse.csr_array(P) @ keep)
    regular = kind == ce.REGULAR
    L = np.where(regular, length - 2, length)
    srcs = np.unique(a[regular])
    tgts = np.unique(b)
    index = np.full(n, -1)
    index[free] = np.arange(free.size)
    got = single_observer_green(P, int(np.flatnonzero(blocked)[0]), srcs, start_law,
                                free) if blocked.sum() == 1 else None
    if got is None:
        G = green(Q, free)
        gdiag = np.diag(G).copy()
        h = np.empty((srcs.size + 1, free.size))
        for i, x in enumerate(srcs):
            h[i] = G[index[x]] / gdiag
        h[-1] = (np.where(blocked, 0.0, start_law)[free] @ G) / gdiag
    else:
        gdiag, h = got
    logrho = np.log1p(-np.minimum(1.0 / gdiag, 1.0))
    for i, x in enumerate(srcs):  # from a = u, the visits after time 0: ρ_u^k
        h[i, index[x]] = math.exp(logrho[index[x]])
    with np.errstate(divide="ignore"):
        logh = np.log(np.clip(h, 0.0, None))
    # Forward: log Z of each view, the sources as columns; the virtual source's column
    # starts from π0 one step later (its bridge's first position is the first holder).
    logZ = np.full(kind.size, -np.inf)
    col = np.where(regular, np.searchsorted(srcs, a), srcs.size)
    shift = np.where(regular, 0, 1)
    starts = np.zeros((n, srcs.size + 1))
    starts[srcs, np.arange(srcs.size)] = 1.0
    starts[:, srcs.size] = np.where(blocked, 0.0, start_law)
    order = np.argsort(L - shift, kind="stable")
    QT = Q.T.tocsr()
    QT.sort_indices()
    zs = np.empty(order.size)
    forward_normalisers(QT.indptr.astype(np.int64), QT.indices.astype(np.int64), QT.data,
                        starts, (L - shift)[order].astype(np.int64),
                        col[order].astype(np.int64), b[order].astype(np.int64), zs,
                        FORWARD_TOL)
    logZ[order] = zs
    if not np.all(np.isfinite(logZ)):
        raise Unbounded("a view has probability 0 under the walk")
    # Backward: M_u(b) = max_{1 <= r < Λ} (Q^r)[u, b].
    logM = np.full((tgts.size, n), -np.inf)
    ends = np.zeros((n, tgts.size))
    ends[tgts, np.arange(tgts.size)] = 1.0

    def backward(t: int, X: np.ndarray, logscale: np.ndarray) -> bool:
        with np.errstate(divide="ignore"):
            np.maximum(logM, (np.log(X) + logscale).T, out=logM)
        # Q is substochastic: (Q^r)[u, b] <= max_z (Q^t)[z, b] for every r >= t, so the
        # maxima are final once that is below every node's (the free ones')
        return bool(np.all(logscale <= logM[:, free].min(axis=1)))

    _sweeps(Q, ends, max(int(L.max(initial=0)) - 1, 1), backward)
    tgt_row = np.searchsorted(tgts, b)
    logB = logh[col] + logM[tgt_row][:, free] - logZ[:, None]
    side = bipartition(P)
    parity = None if side is None else (side[free], side[b])
    T = int(min(HORIZON, max(int(L.max(initial=0)), 1)))
    back = backward_rows(Q, free, ends, T)
    logmu = mean_logs(Q, free, starts, col, tgt_row, L, logZ, back, parity)
    if chernoff:
        from netdp.tracking import law_chernoff

        moreB, morerho = law_chernoff.family(P, blocked, start_law, srcs, col, tgt_row, L,
                                             logZ, back)
        return (np.concatenate([logB[None], moreB]), np.concatenate([logrho[None], morerho]),
                logmu, free)
    return logB, logrho, logmu, free


def bipartition(P: Any) -> np.ndarray | None:
    """Each node's side (0 or 1) where every step of the walk changes side (a connected
    walk on a bipartite graph without self-moves: the hypercube's, a grid's simple walk),
    else ``None``. Then ``(Q^r)[u, b] = 0`` unless ``r`` has the parity of the sides of
    ``u`` and ``b``, for the walk and every chain killed on some nodes."""
    csr = sparse.csr_array(P)
    n = csr.shape[0]
    order, pred = csgraph.breadth_first_order(csr, 0, directed=False,
                                              return_predecessors=True)
    if order.size != n:
        return None
    depth = np.zeros(n, np.int64)
    depth[order[1:]] = 1
    up = pred.copy()
    up[order[0]] = order[0]
    while np.any(up != order[0]):  # depth in the tree by pointer jumping (the root's 0)
        depth, up = depth + depth[up], up[up]
    side = depth % 2
    rows, cols = csr.nonzero()
    return side if np.all(side[rows] != side[cols]) else None


def _perron(Q: Any, free: np.ndarray, left: bool) -> tuple[np.ndarray, float]:
    """A positive vector ``w`` on the free nodes and ``ρ̄`` with ``w Q <= ρ̄ w`` (left) or
    ``Q w <= ρ̄ w`` (right): the Perron vector by power iteration of ``(Q + I) / 2``
    (aperiodic), floored to stay positive; ``ρ̄`` is the largest ratio, so the inequality
    holds whatever the iteration reached."""
    M = (Q.T if left else Q).tocsr()[free][:, free]
    w = np.full(free.size, 1.0 / free.size)
    for _ in range(PERRON_ITERATIONS // 16):
        for _ in range(16):
            w = 0.5 * (M @ w + w)
            w /= w.max()
        w = np.maximum(w, 1e-12)
        ratio = (M @ w) / w
        if ratio.max() - ratio.min() <= 1e-9 * ratio.max():
            break
    out = np.zeros(Q.shape[0])
    out[free] = w
    return out, float(((M @ w) / w).max())


def backward_rows(Q: Any, free: np.ndarray, ends: np.ndarray, T: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """``(bwd, bwd_ls, ψ, ρ̄)``: the columns ``(Q^r)[:, b]`` of the last holders ``ends``
    for ``r = 0..T`` (``(T + 1, n, ends)``, each scaled by its maximum, the logs in
    ``bwd_ls``) and a right Perron bound ``Q ψ <= ρ̄ ψ`` (:func:`_perron`)."""
    bwd, bwd_ls = _powers(Q, ends, T)
    psi, rho_r = _perron(Q, free, left=False)
    return bwd, bwd_ls, psi, rho_r


def _powers(M: Any, X: np.ndarray, T: int) -> tuple[np.ndarray, np.ndarray]:
    """``M^t X`` for ``t = 0..T`` (``(T + 1, n, columns)``), each column scaled by its
    maximum from ``t = 1`` on, and the logs of the scales (``(T + 1, columns)``)."""
    out = np.zeros((T + 1, *X.shape))
    logs = np.zeros((T + 1, X.shape[1]))
    out[0] = X
    cur = X.copy()
    cur_ls = np.zeros(X.shape[1])
    for t in range(1, T + 1):
        cur = M @ cur
        top = cur.max(axis=0)
        top[top <= 0.0] = 1.0
        cur /= top
        cur_ls += np.log(top)
        out[t], logs[t] = cur, cur_ls
    return out, logs


def mean_logs(Q: Any, free: np.ndarray, starts: np.ndarray, col: np.ndarray,
              tgt_row: np.ndarray, L: np.ndarray, logZ: np.ndarray,
              back: tuple[np.ndarray, np.ndarray, np.ndarray, float],
              parity: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """``(views, free nodes)``: the log of an upper bound of ``E[I_u] = Σ_{t=1}^{L-1}
    f(t)[u] g(L - t)[u] / Z``, ``f(t)`` the bridge's first end's row of ``Q^t`` (from the
    virtual source: ``π0 Q^{t-1}``) and ``g(r)`` the column of ``Q^r`` at its last holder:
    exact up to :data:`HORIZON` steps, beyond it bounded through the Perron vectors
    (``(Q^t)[a, u] <= ρ̄^{t-T} φ(u) max_z (Q^T)[a, z] / φ(z)`` for a left ``φ`` with
    ``φ Q <= ρ̄ φ``, and alike on the right), the stretch where both are bounded by its
    number of steps times its larger end term (log-linear in ``t``). ``parity``: the free
    nodes' and the views' last holders' sides of a bipartite walk (:func:`bipartition`),
    where only the steps ``t`` with ``L - t`` of the parity of ``u``'s and ``b``'s sides
    count in that stretch (the others' terms are 0: half of them)."""
    bwd, bwd_ls, psi, rho_r = back
    T = bwd.shape[0] - 1
    # Rows by bridge position: e_a Q^t (t = 0..T), the virtual source's π0 Q^{t-1}
    # (one step behind; nothing at t = 0).
    fwd, fwd_ls = _powers(Q.T.tocsr(), starts, T)
    fwd[1:, :, -1], fwd_ls[1:, -1] = fwd[:-1, :, -1].copy(), fwd_ls[:-1, -1].copy()
    fwd[0, :, -1], fwd_ls[0, -1] = 0.0, 0.0
    phi, rho_l = _perron(Q, free, left=True)
    lrl, lrr = math.log(rho_l), math.log(rho_r)
    with np.errstate(divide="ignore"):
        # log max_z f(T)[z] / φ(z), log max_z g(T)[z] / ψ(z), per column
        lA = np.log((fwd[T][free] / phi[free, None]).max(axis=0)) + fwd_ls[T]
        lB = np.log((bwd[T][free] / psi[free, None]).max(axis=0)) + bwd_ls[T]
    # by column, then step: a view's rows are contiguous
    fwd = np.ascontiguousarray(np.moveaxis(fwd[:, free, :], 2, 0))
    bwd = np.ascontiguousarray(np.moveaxis(bwd[:, free, :], 2, 0))
    out = np.empty((L.size, free.size))
    for e in range(L.size):
        Le, ce_, cb = int(L[e]), int(col[e]), int(tgt_row[e])
        parts = []
        if Le >= 2:  # the steps near an end (each term), then those between (bounded)
            ts = np.unique(np.concatenate([np.arange(1, min(T, Le - 1) + 1),
                                           np.arange(max(Le - T, 1), Le)]))
            rs = Le - ts
            f, lsf = _ends(fwd[ce_], fwd_ls[:, ce_], ts, phi[free], lrl, lA[ce_], T)
            g, lsg = _ends(bwd[cb], bwd_ls[:, cb], rs, psi[free], lrr, lB[cb], T)
            parts.append(_log_dot(f, g, lsf + lsg))
            between = Le - 2 * T - 1  # t = T + 1 .. Le - T - 1: both bounded
            if between > 0:
                with np.errstate(divide="ignore"):
                    lphi, lpsi = np.log(phi[free]), np.log(psi[free])
                    steps = (np.log(_steps_of_parity(T + 1, Le - T - 1, (Le - parity[0]
                                                                        - parity[1][e]) % 2))
                             if parity is not None else math.log(between))
                tips = [(lrl * (t - T) + lphi + lA[ce_]) + (lrr * (Le - t - T) + lpsi + lB[cb])
                        for t in (T + 1, Le - T - 1)]
                parts.append(steps + np.maximum(tips[0], tips[1]))
        if parts:
            out[e] = np.logaddexp.reduce(np.array(parts), axis=0) - logZ[e]
        else:
            out[e] = -np.inf
    return out


def _steps_of_parity(t0: int, t1: int, p: np.ndarray) -> np.ndarray:
    """The integers ``t`` in ``[t0, t1]`` with ``t ≡ p`` (mod 2), for each ``p`` in ``{0, 1}``."""
    return (t1 - p) // 2 - (t0 - 1 - p) // 2


def _ends(rows: np.ndarray, logs: np.ndarray, ts: np.ndarray, perron: np.ndarray,
          lrate: float, lmax: float, T: int) -> tuple[np.ndarray, np.ndarray]:
    """A sweep's column (``rows``: by step, the free nodes) at steps ``ts``, scaled
    (``(steps, free)``, entries at most 1) with each step's log scale (``logs``): the kept
    rows up to step ``T``, the Perron bound ``ρ̄^{t-T} φ(u) e^{lmax}`` beyond."""
    kept = ts <= T
    vals = np.where(kept[:, None], rows[np.minimum(ts, T)], perron[None, :])
    scale = np.where(kept, logs[np.minimum(ts, T)], (ts - T) * lrate + lmax)
    return vals, scale


#: Below this share of its largest step's scale, a node's sum of terms is taken in logs
#: (underflow); above, the terms a product dropped are below 1e-55 of it.
LINEAR_FLOOR = 1e-250
ROUNDING = 1e-12  # relative margin on a sum of terms taken linearly (rounding)


def _log_dot(f: np.ndarray, g: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``log Σ_t f[t, u] g[t, u] e^{scale[t]}`` per node ``u`` (``f, g <= 1``), rounded up:
    as products weighted by ``e^{scale - max}``, in logs for the nodes whose sum comes
    below :data:`LINEAR_FLOOR`."""
    top = float(scale.max(initial=-np.inf))
    if not math.isfinite(top):
        return np.full(f.shape[1], -np.inf)
    total = np.einsum("tu,tu,t->u", f, g, np.exp(scale - top))
    with np.errstate(divide="ignore"):
        out = np.log(total) + (top + math.log1p(ROUNDING))
        low = np.flatnonzero(total < LINEAR_FLOOR)
        if low.size:
            terms = np.log(f[:, low]) + np.log(g[:, low]) + scale[:, None]
            out[low] = _logsumexp(terms, axis=0)
    return out


def expected_log(logB: np.ndarray, logrho: np.ndarray, logmu: np.ndarray, c: np.ndarray,
                 size: int, F: Any) -> np.ndarray:
    """An upper bound of ``log E[e^{F(K)}]``, ``K = c + I``, over the laws of ``I`` on
    ``0..size`` with ``P(I >= k) <= S(k) = min(1, B ρ^{k-1})`` (rows: nodes).

    Parameters
    ----------
    logB, logrho, c
        ``(r,)`` per node.
    size
        The largest interior count.
    F
        ``F(j)`` for an integer array ``j`` of shape ``(r, K)``: ``(r, K, f)`` (``f``
        curves), nondecreasing and convex in ``j`` (the remainder's bound by its end
        terms needs ``log S(k) + F(c + k)`` convex beyond the terms summed).

    Returns
    -------
    ``(r, f)``: ``log(e^{F(c + k0)} + Σ_{k0 < k <= size} S(k) (e^{F(c + k)} -
    e^{F(c + k - 1)}))``, ``k0`` the last count where ``S = 1``: the sum exact over
    :data:`TERMS` counts, the rest bounded by (counts) x (the larger end term of the
    log-convex ``B ρ^{k-1} e^{F(c + k)}``), and never above ``e^{F(c + size)}``.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        k0 = np.where(logB < 0.0, 0.0, np.floor(logB / -logrho) + 1.0)
        k0 = np.minimum(k0, np.floor(np.exp(np.minimum(logmu, math.log(size + 1.0)))))
    k0 = np.clip(np.nan_to_num(k0, nan=size, posinf=size), 0, size).astype(np.int64)
    top = np.minimum(k0 + TERMS, size)  # counts summed term by term: k0 + 1 .. top
    j = np.arange(TERMS + 1)
    k = np.minimum(k0[:, None] + j[None, :], size)  # (r, TERMS + 1): k0 .. top (repeats)
    Fk = F(c[:, None] + k)  # (r, TERMS + 1, f)
    hi, lo = Fk[:, 1:, :], Fk[:, :-1, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        step = np.where(hi > lo, hi + np.log(-np.expm1(np.minimum(lo - hi, 0.0))), -np.inf)
        logS = np.minimum(logB[:, None] + (k[:, 1:] - 1) * logrho[:, None],
                          logmu[:, None] - np.log(np.maximum(k[:, 1:], 1)))
    valid = (k0[:, None] + j[None, 1:]) <= size
    logS = np.where(valid, np.minimum(logS, 0.0), -np.inf)
    out = np.logaddexp(Fk[:, 0, :], _logsumexp(step + logS[:, :, None], axis=1))
    rest = size - top  # counts top + 1 .. size
    more = rest > 0
    if more.any():
        ends = np.stack([top + 1, np.full_like(top, size)], axis=1)[more]
        Fe = F(c[more][:, None] + ends)  # (r', 2, f)
        with np.errstate(invalid="ignore"):
            lin = logB[more][:, None] + (ends - 1) * logrho[more][:, None]
        bound = np.maximum(Fe[:, 0, :] + lin[:, 0, None], Fe[:, 1, :] + lin[:, 1, None])
        bound = np.minimum(bound, Fe[:, 1, :])  # S <= 1 too
        out[more] = np.logaddexp(out[more], np.log(rest[more])[:, None] + bound)
    return out


def _logsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    top = np.max(x, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.squeeze(top, axis=axis) + np.log(np.sum(np.exp(x - top), axis=axis))


def rdp_curve(logB: np.ndarray, logrho: np.ndarray, logmu: np.ndarray, c: np.ndarray,
              size: int, s: float, orders: np.ndarray) -> np.ndarray:
    """``(r, orders)``: the Rényi bound ``1/(α-1) log E[e^{α(α-1) K² / 2s²}]`` under the
    survival bound (sound in both directions: joint convexity)."""
    j = np.arange(int(c.max(initial=0)) + size + 1, dtype=float)
    table = (orders * (orders - 1.0) / (2.0 * s * s))[:, None] * (j * j)[None, :]
    return np.maximum(_bound(logB, logrho, logmu, c, size, table) / (orders - 1.0), 0.0)


def kov_loss(logB: np.ndarray, logrho: np.ndarray, logmu: np.ndarray, c: np.ndarray,
             size: int, s: float, noise: ce.Noise, delta: float) -> np.ndarray:
    """``(r,)``: ``log E[e^{ε_K}]`` under the survival bound (``ε_k``: :func:`kov_table`)."""
    table = kov_table(int(c.max(initial=0)) + size, s, noise, delta)
    return np.maximum(_bound(logB, logrho, logmu, c, size, table)[:, 0], 0.0)


def kov_table(top: int, s: float, noise: ce.Noise, delta: float) -> np.ndarray:
    """``(1, top + 1)``: a nondecreasing convex upper bound of ``ε_j``, ``j = 0..top``:
    ``j ε0`` (Laplace), or the Gaussian's closed form ``μ²/2 + μ √(2 log(1/δ))``,
    ``μ = j / s`` (convex, as the remainder of :func:`expected_log` needs)."""
    j = np.arange(top + 1, dtype=float)
    if noise.laplace:
        return (j * noise.eps0)[None, :]
    mu = j / s
    return (mu * mu / 2.0 + mu * math.sqrt(2.0 * math.log(1.0 / delta)))[None, :]


def _bound(logB: np.ndarray, logrho: np.ndarray, logmu: np.ndarray, c: np.ndarray,
           size: int, table: np.ndarray) -> np.ndarray:
    out = np.empty((logB.size, table.shape[0]))
    expected_log_table(np.ascontiguousarray(logB, dtype=np.float64),
                       np.ascontiguousarray(logrho, dtype=np.float64),
                       np.ascontiguousarray(logmu, dtype=np.float64),
                       np.ascontiguousarray(c, dtype=np.int64), int(size),
                       np.ascontiguousarray(table), TERMS, out)
    return out
