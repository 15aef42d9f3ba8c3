"""Exact privacy loss distributions (PLDs) of Gaussian mixtures, and their composition.

One cycle of a random-walk view shows the observer one real number ``y``. Towards a node
``u`` the two hypotheses are

* ``P = N(0, s²)``: ``u``'s value equals the others';
* ``Q = Σ_k w_k N(k, s²)``: ``u``'s value moved by the sensitivity 1, seen ``K`` times,
  where ``w_k = Pr[K = k]`` (``k = 0 .. K_max``) is given by the caller; an optional
  ``tail = Pr[K > K_max]`` is treated as a count at ``+∞`` (see below).

The likelihood ratio ``Q/P(y) = Σ_k w_k exp(k y / s² - k² / (2 s²))`` is increasing in
``y`` (all ``k >= 0``), so the privacy loss ``L(y) = log Q/P(y)`` is monotone and its law,
under ``Q`` and under ``P``, is read off the two CDFs at the preimages ``L^{-1}(i h)`` of
the loss grid: no density estimate, no quadrature. :func:`mixture_pld` returns both
directions, ``(Q, P)`` (loss ``L`` under ``Q``) and ``(P, Q)`` (loss ``-L`` under ``P``),
as a :class:`PldPair` of :class:`LossPmf`; independent cycles compose by convolution
(:meth:`PldPair.compose`, :meth:`PldPair.compose_many`, :meth:`PldPair.self_compose`)
and ``ε(δ) = max`` over the two directions of the smallest ``ε >= 0`` with
``δ(ε) = E[(1 - e^{ε - L})_+] <= δ`` (:meth:`PldPair.epsilon`).

Pessimism (``pessimistic=True``, the default: every number is an upper bound)
--------------------------------------------------------------------------------
* **Grid.** The mass whose loss lies in ``(ℓ_{i-1}, ℓ_i]`` goes to ``ℓ_i = i h``;
  raising losses never lowers ``δ(ε)``, and convolution keeps that order, so ``ε(δ)`` of a
  composition of ``k`` pessimistic factors is at least the exact one and, losses being
  raised by less than ``h`` each, at most about ``k h`` above it. ``pessimistic=False``
  sends that mass to ``ℓ_{i-1}`` instead: a lower bound, at most about ``k h`` below.
  The preimages are solved to machine precision (safeguarded Newton), then moved by a
  bound on their float error in the direction that keeps the rounding on its side.
* **Tail count.** ``Q`` with its tail replaced by a point at ``y = +∞`` (an infinite count),
  ``Q'' = Σ_{k <= K_max} w_k N(k, s²) + tail · δ_{+∞}``, is *more* informative than
  ``Q``: the map "keep a finite ``y``; replace ``+∞`` by a draw from the true law of ``y``
  given ``K > K_max``" sends ``Q''`` to ``Q`` and ``P`` to ``P``. Post-processing never
  raises a hockey-stick divergence, in either direction, nor does it after composition,
  so the exact PLD of ``(P, Q'')`` bounds that of ``(P, Q)`` in both directions. In the
  ``(Q, P)`` direction the tail is mass at loss ``+∞``; in the ``(P, Q)`` direction it
  is simply mass of ``Q`` that ``P`` never meets: the loss ``log P / Q''`` uses the
  un-normalised ``w`` (sum ``1 - tail``), i.e. it is larger by ``-log(1 - tail)`` than
  with the conditional law ``w / (1 - tail)``. Both PMFs are exact for ``(P, Q'')``
  (that is the model in both roundings: ``pessimistic=False`` brackets it, not
  ``(P, Q)``).
* **Neglected mass.** ``y`` is resolved on ``[y_lo, y_hi]``, chosen so that ``P`` and
  every component of ``Q`` leave at most ``2 TAIL_MASS = 2e-17`` (in all) outside on
  each side. Outside it, and for losses below ``-LOWER_CUT`` (their mass is at most
  ``e^{-LOWER_CUT}``: ``A[ℓ < -C] = E_B[e^ℓ; ℓ < -C] <= e^{-C}``), the pessimistic PMF
  moves mass *up* (to the lowest grid point, or to ``+∞`` above ``y_hi`` in the
  ``(Q, P)`` direction / below ``y_lo`` in the ``(P, Q)`` one); the optimistic PMF drops
  the lower part and moves the upper part down to the top grid point.
* **Loss cap.** A factor's losses above ``MAX_LOSS = 500`` go to ``+∞`` (pessimistic) or
  down to ``MAX_LOSS`` (optimistic). That changes the composed ``δ(ε)`` by at most
  ``e^{ε - MAX_LOSS}`` per factor (``E_A[e^{-ℓ}; ℓ > C] = B[ℓ > C] <= e^{-C}``, and the
  other factors' ``E[e^{-R}] <= 1``); it only binds for
  nearly-deterministic cycles (tiny ``s``), whose losses would otherwise need millions
  of grid points.
* **Composition.** :meth:`LossPmf.compose` convolves (direct below ~1e6 products, FFT
  above), clips FFT noise below zero, then truncates at most ``TRUNCATION_MASS = 1e-15``
  per composition: half from the bottom, moved *up* onto the first kept loss, half from
  the top, moved to ``+∞``; any mass the float sums lost also goes to ``+∞``. The
  optimistic rule mirrors it (bottom dropped, top moved down). FFT rounding (about
  ``1e-16`` of the largest entry per entry) is the one error not signed by construction.
* **ε(δ).** ``δ(ε)`` of a PMF on the grid is exactly linear in ``e^ε`` between
  consecutive grid losses, so :meth:`LossPmf.epsilon` finds the cell by suffix sums,
  re-checks its two ends by direct sums, and solves the chord in ``e^ε``: it returns
  the PMF's own ``ε(δ)`` up to float rounding (about ``1e-15``), not a grid-rounded one.

Terms of the mixture smaller than ``e^{-60}`` times the largest over a block of ``y``
are skipped (``K_max`` in the hundreds stays cheap); ``logsumexp`` keeps the ratio finite
for tiny ``s`` (0.05) and large counts, and the standardised variable ``t = y / s`` keeps
large ``s`` (1e3) exact.

Cost (2 shared cores, load ~2, the command below): building one PLD with ``h = 1e-3``,
``K_max = 10`` (``w`` binomial(10, 0.3)), ``s = 10`` takes ~15 ms (both directions,
5.4k grid points each); composing 100 of them (balanced tree) ~0.23 s (48k grid points
at the top; ε(1e-6) = 18.61, the optimistic twin gives 18.51 = 18.61 - 100 h). For
scale: ``w`` = 1 + binomial(4, 0.3), ``s = 1.5`` at ``h = 1e-5`` has 3.5M points per
direction and builds in ~3 s::

    python -c "import time, numpy as np; from scipy import stats; \\
    from netdp.accounting.mixture_pld import mixture_pld; \\
    from netdp.accounting.loss_pmf import PldPair; \\
    w = stats.binom.pmf(np.arange(11), 10, 0.3); t = time.perf_counter(); \\
    p = mixture_pld(w, 10.0); t1 = time.perf_counter(); \\
    c = PldPair.compose_many([p] * 100); t2 = time.perf_counter(); \\
    print(t1 - t, t2 - t1, c.epsilon(1e-6))"
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy import special

from netdp.accounting.loss_pmf import LossPmf, PldPair, float_array

TAIL_MASS = 1e-17  # y-range: P and Q leave at most 2 TAIL_MASS outside it, on each side
LOWER_CUT = 40.0  # losses below -LOWER_CUT (mass <= e^-40) are moved up to it
MAX_LOSS = 500.0  # a factor's losses above it go to +inf (changes δ(ε) by <= e^(ε - 500))
_PRUNE = 60.0  # skip mixture terms below e^-60 of the largest over a block of levels
_CHUNK = 1 << 15  # preimage levels per block
_MAX_LEVELS = 1 << 26  # refuse grids beyond ~6.7e7 levels (~3 GB of work arrays)


# --------------------------------------------------------------------------------------
# The mixture


class _Mixture:
    """``Q/P`` on the standardised axis ``t = y / s``: components ``N(k a, 1)``, ``a = 1/s``,
    weights ``w_k > 0`` (``k >= 1`` present)."""

    def __init__(self, k: np.ndarray, w: np.ndarray, s: float) -> None:
        self.a = 1.0 / s
        self.ka = k * self.a
        self.logw = np.log(w)
        self.base = self.logw - 0.5 * self.ka**2  # log ratio term: base + ka t
        self.w = w

    def loss(self, t: np.ndarray, keep: np.ndarray | None = None) -> tuple[np.ndarray,
                                                                           np.ndarray]:
        """``L(t)`` and ``L'(t)`` (logsumexp over the kept terms)."""
        base, ka = (self.base, self.ka) if keep is None else (self.base[keep], self.ka[keep])
        u = base[None, :] + np.multiply.outer(t, ka)
        m = u.max(axis=1)
        e = np.exp(u - m[:, None])
        tot = e.sum(axis=1)
        return m + np.log(tot), (e @ ka) / tot

    def loss_blocks(self, t: np.ndarray) -> np.ndarray:
        """``L(t)`` for increasing finite ``t``, by blocks (terms pruned per block)."""
        out = np.empty(t.size)
        for b in range(0, t.size, _CHUNK):
            tb = t[b : b + _CHUNK]
            keep = _prune(self.base + self.ka * tb[0], self.base + self.ka * tb[-1])
            out[b : b + _CHUNK] = self.loss(tb, keep)[0]
        return out

    def noise(self, t: np.ndarray, c: np.ndarray) -> np.ndarray:
        """A bound on the float error of ``L(t)`` (loss units)."""
        return 4e-16 * (1.0 + np.abs(c) + np.abs(t) * self.ka.max()
                        + float(np.abs(self.base).max()))

    def cdf(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``Q(T <= t)`` and ``Q(T > t)`` for increasing ``t``, each with relative
        precision, by blocks (terms pruned per block). One ``Φ(-|x|)`` per term serves
        both sides: it is the side below one half, with relative precision, and the
        other side is one minus it."""
        lower, upper = np.empty(t.size), np.empty(t.size)
        for b in range(0, t.size, _CHUNK):
            tb = t[b : b + _CHUNK]
            fin = tb[np.isfinite(tb)]
            w, ka = self.w, self.ka
            if fin.size:
                keep = np.zeros(ka.size, dtype=bool)
                for sign in (1.0, -1.0):
                    keep |= _prune(self.logw + special.log_ndtr(sign * (fin.min() - ka)),
                                   self.logw + special.log_ndtr(sign * (fin.max() - ka)))
                w, ka = w[keep], ka[keep]
            x = np.subtract.outer(tb, ka)
            small = special.ndtr(-np.abs(x))
            big = 1.0 - small
            neg = x <= 0.0
            lower[b : b + _CHUNK] = np.where(neg, small, big) @ w
            upper[b : b + _CHUNK] = np.where(neg, big, small) @ w
        return lower, upper


def _prune(la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """Terms to keep, given their logs at the two ends of a block over which every ratio
    of two terms is monotone: drop a term when one term exceeds it by ``e^_PRUNE`` at both
    ends (hence all along)."""
    keep = np.ones(la.size, dtype=bool)
    for j in {int(np.argmax(la)), int(np.argmax(lb))}:
        keep &= ~((la[j] - la >= _PRUNE) & (lb[j] - lb >= _PRUNE))
    return keep


def _tail_range(mix: _Mixture) -> tuple[float, float]:
    """``[t_lo, t_hi]`` leaving at most ``2 TAIL_MASS`` of P and of Q outside on each side
    (``TAIL_MASS / n`` per law, ``n`` = 1 + the number of components; the lightest ones
    are ignored)."""
    n = mix.ka.size + 1
    z = float(-special.ndtri(TAIL_MASS / n))
    share = TAIL_MASS / (n * mix.w)
    heavy = share < 0.5  # the others weigh at most 2 TAIL_MASS / n in all
    if not heavy.any():
        return -z, z
    zk = -special.ndtri(share[heavy])
    ka = mix.ka[heavy]
    return float(min(-z, np.min(ka - zk))), float(max(z, np.max(ka + zk)))


def _preimages(mix: _Mixture, c: np.ndarray, t_lo: float, t_hi: float,
               l_lo: float, l_hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Brackets ``[t_dn, t_up]`` of ``L^{-1}(c)`` for increasing levels ``c``.

    Levels outside ``[L(t_lo), L(t_hi)]`` get ``[-∞, t_lo]`` or ``[t_hi, +∞]``; inside,
    a safeguarded Newton solve (started on the chord of a table of ``L`` around the root)
    to machine precision, widened by a bound on its float error (``1e-13 |t|`` plus four
    times the error of ``L`` over ``L'``).
    """
    t_dn = np.empty(c.size)
    t_up = np.empty(c.size)
    below, above = c < l_lo, c > l_hi
    t_dn[below], t_up[below] = -np.inf, t_lo
    t_dn[above], t_up[above] = t_hi, np.inf
    inside = np.flatnonzero(~below & ~above)
    if inside.size == 0:
        return t_dn, t_up
    nodes = np.linspace(t_lo, t_hi, int(np.clip(inside.size // 8, 1024, 1 << 16)))
    l_nodes = mix.loss_blocks(nodes)
    l_nodes[0], l_nodes[-1] = l_lo, l_hi
    l_nodes = np.maximum.accumulate(l_nodes)
    for b in range(0, inside.size, _CHUNK):
        idx = inside[b : b + _CHUNK]
        cc = c[idx]
        j = np.clip(np.searchsorted(l_nodes, cc, side="left"), 0, nodes.size - 1)
        hi = nodes[j].copy()
        lo = nodes[np.maximum(j - 1, 0)].copy()
        ta, tb = float(lo.min()), float(hi.max())
        keep = _prune(mix.base + mix.ka * ta, mix.base + mix.ka * tb)
        # start on the table's chord (near the root: one Newton step fewer)
        l_lo_j, l_hi_j = l_nodes[np.maximum(j - 1, 0)], l_nodes[j]
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.clip((cc - l_lo_j) / (l_hi_j - l_lo_j), 0.0, 1.0)
        t = np.where(np.isfinite(frac), lo + frac * (hi - lo), hi)
        fp = np.ones(cc.size)
        act = np.arange(cc.size)
        for _ in range(200):
            f, d1 = mix.loss(t[act], keep)
            f -= cc[act]
            fp[act] = d1
            pos = f >= 0
            hi[act] = np.where(pos, t[act], hi[act])
            lo[act] = np.where(pos, lo[act], t[act])
            with np.errstate(divide="ignore", invalid="ignore"):
                tn = t[act] - f / d1
            bad = ~((tn >= lo[act]) & (tn <= hi[act]))
            tn = np.where(bad, 0.5 * (lo[act] + hi[act]), tn)
            tol = 4e-16 * (1.0 + np.abs(tn)) + mix.noise(tn, cc[act]) / d1
            done = (np.abs(tn - t[act]) <= tol) | (hi[act] - lo[act] <= tol)
            t[act] = tn
            act = act[~done]
            if act.size == 0:
                break
        else:  # pragma: no cover - Newton with bisection always converges
            raise RuntimeError("preimage solve did not converge")
        eta = 1e-13 * (1.0 + np.abs(t)) + 4.0 * mix.noise(t, cc) / fp
        t_dn[idx] = t - eta
        t_up[idx] = t + eta
    return t_dn, t_up


def _masses(g: np.ndarray, gbar: np.ndarray, pessimistic: bool) -> tuple[np.ndarray, float]:
    """Grid masses from ``g[m] = A[loss <= ℓ_m]`` and ``gbar[m] = A[loss > ℓ_m]`` (both with
    relative precision in their own tail): pessimistic ``p_m = A(ℓ_{m-1}, ℓ_m]`` with all
    mass below ``ℓ_0`` at ``ℓ_0`` and the mass above the top returned for ``+∞``;
    optimistic ``p_m = A(ℓ_m, ℓ_{m+1}]`` with the mass above the top at the top and the
    mass below ``ℓ_0`` dropped. Rounding noise in ``g`` is made monotone on the side of
    the bound (``g`` lowered and ``gbar`` raised when pessimistic, the reverse if not)."""
    if pessimistic:
        g = np.minimum.accumulate(g[::-1])[::-1]
        gbar = np.maximum.accumulate(gbar[::-1])[::-1]
    else:
        g = np.maximum.accumulate(g)
        gbar = np.minimum.accumulate(gbar)
    low = g[:-1] <= gbar[:-1]
    inc = np.where(low, g[1:] - g[:-1], gbar[:-1] - gbar[1:])
    inc = np.maximum(inc, 0.0)
    if pessimistic:
        return np.concatenate(([g[0]], inc)), float(gbar[-1])
    return np.concatenate((inc, [gbar[-1]])), 0.0


def _round(x: float, h: float, up: bool) -> int:
    return math.ceil(x / h) if up else math.floor(x / h)


def mixture_pld(w: npt.ArrayLike, s: float, h: float = 1e-3, tail: float = 0.0,
                pessimistic: bool = True) -> PldPair:
    """The discretised PLD pair of ``P = N(0, s²)`` vs ``Q = Σ_k w_k N(k, s²)``.

    Parameters
    ----------
    w : array_like
        ``w[k] = Pr[K = k]`` for ``k = 0 .. K_max`` (``w[0]`` may be 0; a point mass
        ``e_c`` is the Gaussian mechanism with ``μ = c / s``).
    s : float
        Noise standard deviation, ``> 0``.
    h : float
        Loss grid step.
    tail : float
        ``Pr[K > K_max]``, treated as a count at ``+∞`` (module docstring); ``w`` and
        ``tail`` must sum to 1 (to 1e-9; ``w`` is rescaled to ``1 - tail`` exactly).
    pessimistic : bool
        Round losses up (an upper bound, the default) or down (a lower bound).

    Returns
    -------
    PldPair
        ``qp``: loss ``log Q/P`` under ``Q``; ``pq``: loss ``log P/Q`` under ``P``.
    """
    w = float_array(w).ravel()
    if w.size == 0 or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("w must be a non-empty array of finite probabilities >= 0")
    if not (math.isfinite(s) and s > 0):
        raise ValueError("s must be finite and > 0")
    if not (math.isfinite(h) and h > 0):
        raise ValueError("h must be finite and > 0")
    if not 0.0 <= tail < 1.0:
        raise ValueError("tail must be in [0, 1)")
    total = float(w.sum())
    if abs(total + tail - 1.0) > 1e-9:
        raise ValueError(f"w and tail must sum to 1 (got {total + tail!r})")
    w = w * ((1.0 - tail) / total)
    up = pessimistic
    k = np.flatnonzero(w)
    if k.max() == 0:  # no contribution: constant loss log(1 - tail)
        c0 = math.log1p(-tail)
        qp = LossPmf(_round(c0, h, up), w[:1], tail, h, pessimistic)
        pq = LossPmf(_round(-c0, h, up), np.ones(1), 0.0, h, pessimistic)
        return PldPair(qp, pq)
    mix = _Mixture(k.astype(np.float64), w[k], s)
    t_lo, t_hi = _tail_range(mix)
    l_lo, l_hi = (float(v) for v in mix.loss(np.array([t_lo, t_hi]))[0])
    # grid index ranges of each direction's losses, and the union of their levels c
    iq = (_round(max(l_lo, -LOWER_CUT), h, False), _round(min(l_hi, MAX_LOSS), h, True))
    ip = (_round(max(-l_hi, -LOWER_CUT), h, False), _round(min(-l_lo, MAX_LOSS), h, True))
    c_min, c_max = min(iq[0], -ip[1]), max(iq[1], -ip[0])
    if c_max - c_min > _MAX_LEVELS:
        raise ValueError(f"{c_max - c_min} loss grid points (losses {l_lo:.3g} .. {l_hi:.3g}"
                         f" on step {h:g}): use a larger h")
    levels = np.arange(c_min, c_max + 1)
    t_dn, t_up = _preimages(mix, levels * h, t_lo, t_hi, l_lo, l_hi)
    # (Q, P): loss L(t) <= ℓ  <=>  t <= L^{-1}(ℓ); pessimistic undercounts it (t_dn)
    sl = slice(iq[0] - c_min, iq[1] - c_min + 1)
    tq = (t_dn if up else t_up)[sl]
    probs, top = _masses(*mix.cdf(tq), up)
    qp = LossPmf(iq[0], probs, min(top + tail, 1.0), h, pessimistic)
    # (P, Q): loss -L(t) <= ℓ  <=>  t >= L^{-1}(-ℓ); levels -ℓ run downwards
    sl = slice(-ip[0] - c_min, -ip[1] - c_min - 1 if -ip[1] - c_min > 0 else None, -1)
    tp = (t_up if up else t_dn)[sl]
    probs, top = _masses(special.ndtr(-tp), special.ndtr(tp), up)
    pq = LossPmf(ip[0], probs, min(top, 1.0), h, pessimistic)
    return PldPair(qp, pq)
