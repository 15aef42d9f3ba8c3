"""The numeric shuffling bound of Feldman, McMillan and Talwar (FOCS 2021, "Hiding among the
clones", Thm 3.2): the exact hockey-stick divergence of the clone-reduced pair, computed
per n on a grid, vectorised over many n with a compiled screen, and inverted for ε by
bisection (rounded up: still sound)."""

from __future__ import annotations

import functools
import math

import numba as nb
import numpy as np
import numpy.typing as npt

from netdp.accounting._arrays import _check, _f, _out

#: Binomial tail mass dropped on each side when truncating C and A in the FMT numeric
#: bound (the dropped mass is then added to delta, so the result stays an upper bound).
FMT_TAIL = 1e-17
#: Most values of ``c`` the screening recurrence covers from one exact anchor.
FMT_SCREEN_STRIDE = 4096
#: Error assumed for the screening evaluation, relative to its ``scale`` (the recurrence
#: is measured at about 1e-13 of it; tests/privacy/test_bounds_table.py checks this).
FMT_SCREEN_RTOL = 1e-10
_FMT_BATCH = 2_000_000  # grid entries per batch of n (bounds the memory)


def pairwise_apply(func, *arrays: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Apply ``func(*params)(last_subset)`` per unique parameter tuple (tables are cached)."""
    b = np.broadcast_arrays(*arrays, last)
    params, lastb = b[:-1], b[-1]
    out = np.empty(lastb.shape, dtype=np.float64)
    if out.size == 0:
        return out
    stacked = np.stack([p.ravel() for p in params], axis=1)
    uniq, inv = np.unique(stacked, axis=0, return_inverse=True)
    flat_last = lastb.ravel()
    flat_out = out.ravel()
    for u, row in enumerate(uniq):
        sel = inv.ravel() == u
        flat_out[sel] = func(*row)(flat_last[sel])
    return flat_out.reshape(lastb.shape)


@functools.lru_cache(maxsize=64)
def _fmt_c_grid(eps0: float, n: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Central range of ``C ~ Bin(n-1, e^-eps0)``, its pmf, and the dropped tail mass."""
    from scipy import stats

    m = n - 1
    pc = math.exp(-eps0)
    if m == 0:
        return np.zeros(1), np.ones(1), 0.0
    c_lo = max(int(stats.binom.ppf(FMT_TAIL, m, pc)), 0)
    # upper quantile through the reflected law (isf loses tails below ~1e-16)
    c_hi = min(max(m - int(stats.binom.ppf(FMT_TAIL, m, 1.0 - pc)), c_lo), m)
    dropped = float(stats.binom.cdf(c_lo - 1, m, pc) + stats.binom.sf(c_hi, m, pc))
    c = np.arange(c_lo, c_hi + 1, dtype=np.float64)
    return c, stats.binom.pmf(c, m, pc), dropped


def _fmt_delta_1d(eps0: float, n: int, eps: np.ndarray) -> np.ndarray:
    """Hockey-stick ``D_{e^eps}(P || Q)`` of the FMT pair, for a 1-d array of ``eps``.

    ``C ~ Bin(n-1, e^-eps0)``, ``A ~ Bin(C, 1/2)``, ``Delta ~ Bern(al)``,
    ``al = e^eps0/(e^eps0+1)``; ``P = (A + Delta, C - A + 1 - Delta)``,
    ``Q = (A + 1 - Delta, C - A + Delta)``. Given ``C = c`` the first coordinate ``x``
    determines the outcome: ``P(x|c) = al b(x-1) + (1-al) b(x)``,
    ``Q(x|c) = (1-al) b(x-1) + al b(x)`` (``b``: pmf of ``Bin(c, 1/2)``). With
    ``r = b(x-1)/b(x) = x/(c-x+1)`` increasing in ``x``, ``P/Q > e^eps`` iff ``x > beta (c+1)``,
    ``beta = r*/(1+r*)``, ``r* = (e^eps al - (1-al))/(al - e^eps (1-al))`` (no such x when
    ``eps >= eps0``). So the sum over A is exact with two binomial tails per c, and
    ``delta = sum_c w_c [(al - e^eps (1-al)) S(t-2) + ((1-al) - e^eps al) S(t-1)]`` with
    ``t = floor(beta (c+1)) + 1`` and ``S(k) = P[Bin(c,1/2) > k]``. C is truncated to all
    but ``FMT_TAIL`` mass per side and the dropped mass is added (sound). The pair is
    symmetric (``P`` reflected is ``Q``), so one direction suffices.
    """
    from scipy import stats

    c, w, dropped = _fmt_c_grid(eps0, n)
    out = np.full(eps.shape, dropped)
    al = 1.0 / (1.0 + math.exp(-eps0))
    active = np.flatnonzero(eps < eps0)
    for chunk in np.array_split(active, max(1, (active.size * c.size) // 2_000_000 + 1)):
        if chunk.size == 0:
            continue
        e = np.exp(eps[chunk])[:, None]
        coef_p = al - e * (1.0 - al)  # > 0 on the active entries
        coef_q = (1.0 - al) - e * al
        r_star = (e * al - (1.0 - al)) / coef_p
        t = np.floor(r_star / (1.0 + r_star) * (c[None, :] + 1.0)) + 1.0
        val = coef_p * stats.binom.sf(t - 2.0, c, 0.5) + coef_q * stats.binom.sf(t - 1.0, c, 0.5)
        out[chunk] += np.maximum(val, 0.0) @ w
    return np.minimum(out, 1.0)


def fmt_args(eps0: npt.ArrayLike, n: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    eps0, n = _f(eps0), _f(n)
    _check(np.isfinite(eps0) & (eps0 >= 0), "eps0 must be finite and >= 0")
    _check((n >= 1) & (n == np.floor(n)), "n must be an integer >= 1")
    return eps0, n


def fmt_numeric_delta(
    eps0: npt.ArrayLike, n: npt.ArrayLike, eps: npt.ArrayLike
) -> np.ndarray | np.float64:
    """FMT numeric bound: delta(eps) of the shuffled output of ``n`` eps0-LDP reports.

    Exact hockey-stick divergence ``E_Q[(P/Q - e^eps)_+]`` of the dominating pair of the
    spec (summing over ``C ~ Bin(n-1, e^-eps0)`` and ``A ~ Bin(C, 1/2)``), with C and A
    truncated to all but ``FMT_TAIL`` mass per side, the dropped mass added to delta.
    For a fixed C the privacy loss is monotone in A, so the sum over A reduces to two
    binomial tails per value of C (vectorized over C and over ``eps``): ``n = 1e5`` takes
    milliseconds per ``eps``.

    Parameters
    ----------
    eps0 : array_like
        Local epsilon, finite, ``>= 0``.
    n : array_like
        Number of users (integer ``>= 1``).
    eps : array_like
        Central epsilon(s), ``>= 0``.
    """
    eps0, n = fmt_args(eps0, n)
    eps = _f(eps)
    _check(eps >= 0, "eps must be >= 0")
    res = pairwise_apply(
        lambda e0, nn: functools.partial(_fmt_delta_1d, float(e0), int(nn)), eps0, n, last=eps
    )
    return _out(res)


def fmt_numeric_epsilon(
    eps0: npt.ArrayLike, n: npt.ArrayLike, delta: npt.ArrayLike, *, rtol: float = 1e-12
) -> np.ndarray | np.float64:
    """FMT numeric bound: smallest eps with ``fmt_numeric_delta(eps0, n, eps) <= delta``.

    Vectorized bisection on ``[0, eps0]`` to a relative precision of ``rtol``; the
    returned value is the upper end of the final bracket (sound at any ``rtol``). Check
    value of the spec: ``eps0 = 4, n = 1e5, delta = 1e-6`` gives about 0.17.

    Parameters
    ----------
    eps0 : array_like
        Local epsilon, finite, ``>= 0``.
    n : array_like
        Number of users (integer ``>= 1``).
    delta : array_like
        Target delta in ``(0, 1]``; must exceed the truncated mass (about ``1e-16``).
    """
    eps0, n = fmt_args(eps0, n)
    delta = _f(delta)
    _check((delta > 0) & (delta <= 1), "delta must be in (0, 1]")
    e0b, nb_, db = (a.ravel() for a in np.broadcast_arrays(eps0, n, delta))
    pairs = np.stack([e0b, nb_], axis=1)
    if e0b.size and np.unique(pairs, axis=0).shape[0] == e0b.size:  # each (eps0, n) once
        res = np.empty(e0b.size)
        for e0 in np.unique(e0b):
            sel = np.flatnonzero(e0b == e0)
            res[sel] = _fmt_epsilon_many(float(e0), nb_[sel].astype(np.int64), db[sel], rtol)
        return _out(res.reshape(np.broadcast_shapes(eps0.shape, n.shape, delta.shape)))
    res = pairwise_apply(
        lambda e0, nn: functools.partial(_fmt_epsilon_1d, float(e0), int(nn), rtol=rtol),
        eps0, n, last=delta,
    )
    return _out(res)


def _fmt_epsilon_1d(
    eps0: float, n: int, delta: np.ndarray, rtol: float = 1e-12
) -> np.ndarray:
    """Vectorized bisection of the (decreasing) FMT delta curve on ``[0, eps0]``: one
    evaluation of the curve serves every ``delta`` at once, which the scalar
    :func:`netdp.core.roots.smallest_within` cannot do."""
    dropped = _fmt_c_grid(eps0, n)[2]
    if np.any(delta <= dropped):
        raise ValueError(f"delta must exceed the truncated binomial mass {dropped:.3g}")
    lo = np.zeros(delta.shape)
    hi = np.full(delta.shape, eps0)  # delta(eps0) = dropped < delta
    done = _fmt_delta_1d(eps0, n, lo) <= delta
    hi = np.where(done, 0.0, hi)
    for _ in range(200):
        todo = np.flatnonzero(hi - lo > rtol * np.maximum(hi, 1e-3))
        if todo.size == 0:
            break
        mid = 0.5 * (lo[todo] + hi[todo])
        ok = _fmt_delta_1d(eps0, n, mid) <= delta[todo]
        hi[todo] = np.where(ok, mid, hi[todo])
        lo[todo] = np.where(ok, lo[todo], mid)
    return hi


def _fmt_epsilon_many(eps0: float, n: np.ndarray, delta: np.ndarray, rtol: float) -> np.ndarray:
    """``_fmt_epsilon_1d(eps0, n[i], delta[i:i+1], rtol)`` for every ``i``, the same values.

    The bisections of all ``n`` run together. A step needs only the side of ``delta`` on
    which ``_fmt_delta_1d(eps0, n, mid)`` lies: :func:`_fmt_screen` evaluates it cheaply
    with an error bound and decides whenever the bound allows; the exact
    ``_fmt_delta_1d`` decides the rest. Every step, hence every result, is that of the
    scalar bisection.
    """
    out = np.empty(n.size)
    batch: list[int] = []
    grids: list[tuple[np.ndarray, np.ndarray, float]] = []
    entries = 0
    for i in np.argsort(n, kind="stable"):  # ascending n: the scalar loop's error first
        grid = _fmt_c_grid(eps0, int(n[i]))
        if delta[i] <= grid[2]:
            raise ValueError(f"delta must exceed the truncated binomial mass {grid[2]:.3g}")
        batch.append(i)
        grids.append(grid)
        entries += grid[0].size
        if entries >= _FMT_BATCH:
            out[batch] = _fmt_bisect(eps0, n[batch], delta[batch], grids, rtol)
            batch, grids, entries = [], [], 0
    if batch:
        out[batch] = _fmt_bisect(eps0, n[batch], delta[batch], grids, rtol)
    return out


def _fmt_bisect(eps0: float, n: np.ndarray, delta: np.ndarray, grids: list,
                rtol: float) -> np.ndarray:
    """The loop of ``_fmt_epsilon_1d``, element by element, over all ``n`` at once."""
    clo = np.array([int(g[0][0]) for g in grids], dtype=np.int64)
    size = np.array([g[0].size for g in grids], dtype=np.int64)
    w = np.concatenate([g[1] for g in grids])
    goff = np.concatenate([[0], np.cumsum(size)[:-1]]).astype(np.int64)
    dropped = np.array([g[2] for g in grids])
    grid = (n, clo, size, w, goff, dropped)

    lo = np.zeros(n.size)
    hi = np.full(n.size, eps0)
    done = _fmt_below(eps0, grid, np.arange(n.size), lo, delta)
    hi = np.where(done, 0.0, hi)
    for _ in range(200):
        todo = np.flatnonzero(hi - lo > rtol * np.maximum(hi, 1e-3))
        if todo.size == 0:
            break
        mid = 0.5 * (lo[todo] + hi[todo])
        ok = _fmt_below(eps0, grid, todo, mid, delta[todo])
        hi[todo] = np.where(ok, mid, hi[todo])
        lo[todo] = np.where(ok, lo[todo], mid)
    return hi


def _fmt_below(eps0: float, grid: tuple, idx: np.ndarray, eps: np.ndarray,
               delta: np.ndarray) -> np.ndarray:
    """``_fmt_delta_1d(eps0, n[i], eps[j:j+1])[0] <= delta[j]`` for ``i = idx[j]``."""
    n, clo, size, w, goff, dropped = grid
    approx, scale, exact = _fmt_screen(eps0, clo[idx], size[idx], w, goff[idx], eps)
    approx = np.minimum(dropped[idx] + approx, 1.0)
    exact |= np.abs(approx - delta) <= FMT_SCREEN_RTOL * scale + 1e-200
    ok = approx <= delta
    for j in np.flatnonzero(exact):
        ok[j] = _fmt_delta_1d(eps0, int(n[idx[j]]), eps[j : j + 1])[0] <= delta[j]
    return ok


def _fmt_screen(eps0: float, clo: np.ndarray, size: np.ndarray, w: np.ndarray,
                goff: np.ndarray, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cheap ``sum_c w_c max(val_c, 0)`` of ``_fmt_delta_1d`` (without ``dropped``).

    ``S(k; c) = P[Bin(c, 1/2) > k]`` is exact (scipy, as in ``_fmt_delta_1d``) at anchors
    and follows ``S(j; c+1) = S(j; c) + b_c(j)/2``, ``S(j+1; c) = S(j; c) - b_c(j+1)``
    (``b_c``: the pmf, by its ratios) in between, along ``k_c = t_c - 2``. Anchors are
    close enough that ``S`` falls by at most ``e^2`` between two (the fall rate is the
    Chernoff exponent ``KL(beta || 1/2)``); anchors whose Chernoff bound is below
    ``e^-600`` are zero. Returns the sum, its error scale
    ``sum_c w_c (coef_p - coef_q) S(k_c; c)``, and where the exact evaluation is needed.
    """
    from scipy import special, stats

    al = 1.0 / (1.0 + math.exp(-eps0))
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        e = np.exp(eps)
        coef_p = al - e * (1.0 - al)
        coef_q = (1.0 - al) - e * al
        r_star = (e * al - (1.0 - al)) / coef_p
        beta = r_star / (1.0 + r_star)
        exact = ~((eps < eps0) & (beta >= 0.5) & (beta < 1.0))
        beta = np.where(exact, 0.5, beta)
        rate = special.xlogy(beta, 2.0 * beta) + special.xlogy(1.0 - beta, 2.0 - 2.0 * beta)
        stride = np.minimum(2.0 / np.maximum(rate, 1e-300), FMT_SCREEN_STRIDE)
    stride = np.maximum(np.minimum(stride, np.maximum(clo, 64)), 1).astype(np.int64)
    # anchors: c = 0 alone, then every `stride` values of c
    zero = (clo == 0).astype(np.int64)
    count = zero + -(-(size - zero) // stride)
    owner = np.repeat(np.arange(clo.size), count)
    ptr = np.concatenate([[0], np.cumsum(count)]).astype(np.int64)
    j = np.arange(owner.size) - ptr[owner]
    z = zero[owner]
    c = np.where((z == 1) & (j == 0), 0, clo[owner] + z + (j - z) * stride[owner])
    c = c.astype(np.float64)
    k = np.floor(beta[owner] * (c + 1.0)) + 1.0 - 2.0
    x = (k + 1.0) / np.maximum(c, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        chernoff = c * (special.xlogy(x, 2.0 * x) + special.xlogy(1.0 - x, 2.0 - 2.0 * x))
    live = ~((c >= 1) & (x > 0.5) & (chernoff > 600.0))
    a_s, b_s, p_s = (np.zeros(c.size) for _ in range(3))
    a_s[live] = stats.binom.sf(k[live], c[live], 0.5)
    b_s[live] = stats.binom.sf(k[live] + 1.0, c[live], 0.5)
    p_s[live] = stats.binom.pmf(k[live] + 1.0, c[live], 0.5)
    total = np.zeros(clo.size)
    scale = np.zeros(clo.size)
    flag = exact.copy()
    _fmt_screen_kernel(clo, size, w, goff, beta, coef_p, coef_q, ptr, c.astype(np.int64), k,
                       a_s, b_s, p_s, total, scale, flag)
    return total, scale, flag


@nb.njit(cache=True)
def _fmt_screen_kernel(clo, size, w, goff, beta, cp, cq, ptr, anchor_c, anchor_k, anchor_a,
                       anchor_b, anchor_p, total, scale, flag):  # pragma: no cover (numba)
    """The recurrence of :func:`_fmt_screen`, one grid at a time."""
    for i in range(clo.size):
        if flag[i]:
            continue
        end = clo[i] + size[i]
        acc = 0.0
        sc = 0.0
        for b in range(ptr[i], ptr[i + 1]):
            c = anchor_c[b]
            k = anchor_k[b]
            a = anchor_a[b]
            s = anchor_b[b]
            p = anchor_p[b]
            stop = anchor_c[b + 1] if b + 1 < ptr[i + 1] else end
            while True:
                wc = w[goff[i] + c - clo[i]]
                val = cp[i] * a + cq[i] * s
                if val > 0.0:
                    acc += wc * val
                sc += wc * (cp[i] - cq[i]) * a
                if c + 1 >= stop:
                    break
                kn = math.floor(beta[i] * (c + 2.0)) - 1.0
                if c < 1 or k < 0.0 or k > c - 1.0:
                    flag[i] = True
                    break
                if kn == k:  # S(k; c+1) = S(k; c) + b_c(k)/2
                    a += 0.5 * p * (k + 1.0) / (c - k)
                    s += 0.5 * p
                    p = p * (c + 1.0) / (2.0 * (c - k))
                elif kn == k + 1.0:  # S(k+1; c+1) = S(k+1; c) + b_c(k+1)/2
                    a = s + 0.5 * p
                    s -= 0.5 * p * (c - k - 1.0) / (k + 2.0)
                    p = p * (c + 1.0) / (2.0 * (k + 2.0))
                    k = kn
                else:
                    flag[i] = True
                    break
                c += 1
            if flag[i]:
                break
        total[i] = acc
        scale[i] = sc
