"""Discrete privacy loss distributions on a grid of step ``h``: a :class:`LossPmf` (one
direction, with its mass at +∞) and a :class:`PldPair` (both directions); composition by
convolution (direct or FFT, truncated within a stated mass), ``δ(ε) = E[(1 - e^{ε - L})_+]``
and its inverse ``ε(δ)`` (the larger of the two directions). Pessimistic rounding keeps
every figure an upper bound (Koskela et al. 2020; the discretisation of dp-accounting)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import signal

TRUNCATION_MASS = 1e-15  # mass a composition may move (up / to +inf), in all
_DIRECT = 1 << 20  # direct convolution up to this many products, FFT above
_SUM_CELLS = 1 << 22  # matrix cells per block of direct δ sums


def float_array(x: npt.ArrayLike) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


@dataclass(frozen=True, eq=False)
class LossPmf:
    """A discretised privacy-loss distribution on the grid ``{i h}``.

    ``probs[m]`` is the mass at loss ``(lower + m) h``; ``inf_mass`` the mass at ``+∞``.
    The total may fall short of 1 by mass at ``-∞`` (dropped by an optimistic PMF; it
    never counts towards ``δ``).

    Parameters
    ----------
    lower : int
        Grid index of ``probs[0]``.
    probs : ndarray of float64
        Non-negative masses (copied, read-only).
    inf_mass : float
        Mass at loss ``+∞``.
    h : float
        Grid step, ``> 0``.
    pessimistic : bool
        Whether the PMF bounds its mechanism from above (losses rounded up, truncation
        upwards) or from below. Only PMFs of the same kind compose.
    """

    lower: int
    probs: np.ndarray
    inf_mass: float
    h: float
    pessimistic: bool = True

    def __post_init__(self) -> None:
        probs = np.array(self.probs, dtype=np.float64).ravel()
        if probs.size == 0 or not np.all(np.isfinite(probs)) or np.any(probs < 0):
            raise ValueError("probs must be a non-empty array of finite masses >= 0")
        if not (math.isfinite(self.h) and self.h > 0):
            raise ValueError("h must be finite and > 0")
        inf_mass = float(self.inf_mass)
        if not 0.0 <= inf_mass <= 1.0:
            raise ValueError("inf_mass must be in [0, 1]")
        if probs.sum() + inf_mass > 1.0 + 1e-9:
            raise ValueError("total mass exceeds 1")
        probs.setflags(write=False)
        object.__setattr__(self, "probs", probs)
        object.__setattr__(self, "lower", int(self.lower))
        object.__setattr__(self, "inf_mass", inf_mass)
        object.__setattr__(self, "h", float(self.h))
        object.__setattr__(self, "pessimistic", bool(self.pessimistic))

    @classmethod
    def identity(cls, h: float, pessimistic: bool = True) -> LossPmf:
        """The PMF of no mechanism: all mass at loss 0."""
        return cls(0, np.ones(1), 0.0, h, pessimistic)

    @property
    def losses(self) -> np.ndarray:
        """The grid losses ``(lower + m) h`` of ``probs``."""
        return (self.lower + np.arange(self.probs.size)) * self.h

    @property
    def total(self) -> float:
        """Finite plus infinite mass (1 up to rounding when pessimistic)."""
        return float(self.probs.sum()) + self.inf_mass

    def compose(self, other: LossPmf, truncation: float = TRUNCATION_MASS) -> LossPmf:
        """The PMF of the sum of the two losses (independent mechanisms).

        Parameters
        ----------
        other : LossPmf
            Same ``h`` and same ``pessimistic``.
        truncation : float
            Mass the result may move, in all: up to half of it from the bottom (moved up
            onto the first kept loss; dropped when optimistic) and half from the top (moved
            to ``+∞``; down to the last kept loss when optimistic).
        """
        if other.h != self.h:
            raise ValueError(f"grid steps differ ({self.h} vs {other.h})")
        if other.pessimistic != self.pessimistic:
            raise ValueError("cannot compose a pessimistic PMF with an optimistic one")
        p, q = self.probs, other.probs
        if p.size * q.size <= _DIRECT or min(p.size, q.size) <= 16:
            conv = np.convolve(p, q)
        else:
            conv = signal.fftconvolve(p, q)
            np.maximum(conv, 0.0, out=conv)
        tp, tq = self.total, other.total
        inf_mass = self.inf_mass * tq + other.inf_mass * tp - self.inf_mass * other.inf_mass
        lo, hi, moved_up, moved_top = _trim(conv, truncation / 2)
        probs = conv[lo:hi].copy()
        if self.pessimistic:
            probs[0] += moved_up
            inf_mass += moved_top
            inf_mass += max(0.0, tp * tq - inf_mass - float(probs.sum()))
        else:
            probs[-1] += moved_top
        return LossPmf(self.lower + other.lower + lo, probs, min(inf_mass, 1.0), self.h,
                       self.pessimistic)

    def self_compose(self, k: int) -> LossPmf:
        """The composition of ``k >= 0`` copies, by repeated squaring."""
        if k < 0:
            raise ValueError("k must be >= 0")
        out: LossPmf | None = None
        base = self
        while k:
            if k & 1:
                out = base if out is None else out.compose(base)
            k >>= 1
            if k:
                base = base.compose(base)
        return out if out is not None else LossPmf.identity(self.h, self.pessimistic)

    def delta(self, eps: npt.ArrayLike) -> np.ndarray | np.float64:
        """``δ(ε) = inf_mass + Σ_ℓ p(ℓ) (1 - e^{ε - ℓ})_+``, by direct sums (vectorised).

        Parameters
        ----------
        eps : array_like
            Any real values (``+∞`` gives ``inf_mass``).
        """
        eps = float_array(eps)
        flat = eps.ravel()
        out = np.full(flat.shape, self.inf_mass)
        if np.any(np.isnan(flat)):
            raise ValueError("eps must not be NaN")
        fin = np.flatnonzero(np.isfinite(flat) | (flat < 0))
        if fin.size:
            out[fin] = self._delta_direct(flat[fin])
        shaped = out.reshape(eps.shape)
        return shaped[()] if shaped.ndim == 0 else shaped

    def _delta_direct(self, eps: np.ndarray) -> np.ndarray:
        losses = self.losses
        out = np.empty(eps.size)
        order = np.argsort(eps)
        start = int(np.searchsorted(losses, eps[order[0]], side="right")) if eps.size else 0
        cols = max(losses.size - start, 1)
        step = max(1, _SUM_CELLS // cols)
        for b in range(0, eps.size, step):
            idx = order[b : b + step]
            first = int(np.searchsorted(losses, eps[idx[0]], side="right"))
            x = eps[idx, None] - losses[None, first:]
            terms = -np.expm1(np.minimum(x, 0.0))
            out[idx] = self.inf_mass + terms @ self.probs[first:]
        return out

    def epsilon(self, delta: npt.ArrayLike) -> np.ndarray | np.float64:
        """The smallest ``ε >= 0`` with ``δ(ε) <= delta`` (``inf`` if none), vectorised.

        Exact for the PMF up to float rounding: ``δ`` is linear in ``e^ε`` between
        consecutive grid losses, so the cell is found on the grid and solved on its chord.

        Parameters
        ----------
        delta : array_like
            In ``(0, 1]``.
        """
        d = float_array(delta)
        if np.any(~(d > 0) | (d > 1)):
            raise ValueError("delta must be in (0, 1]")
        flat = d.ravel()
        cand = self._candidates()
        dc = self._candidate_deltas(cand)
        out = np.full(flat.shape, np.inf)
        ok = np.flatnonzero(flat >= self.inf_mass)
        if ok.size:
            out[ok] = self._solve(flat[ok], cand, dc)
        shaped = out.reshape(d.shape)
        return shaped[()] if shaped.ndim == 0 else shaped

    def _candidates(self) -> np.ndarray:
        """ε = 0 and every grid loss above 0: δ is linear in e^ε between neighbours."""
        top = self.lower + self.probs.size - 1
        first = max(self.lower, 1)
        return np.concatenate(([0.0], np.arange(first, top + 1) * self.h if top >= first
                               else np.empty(0)))

    def _candidate_deltas(self, cand: np.ndarray) -> np.ndarray:
        """δ at the candidates by suffix sums (for the search; re-checked directly)."""
        p = self.probs
        losses = self.losses
        sp = np.concatenate((np.cumsum(p[::-1])[::-1], [0.0]))
        with np.errstate(divide="ignore"):
            lt = np.log(p) - losses
        lsb = np.concatenate((np.logaddexp.accumulate(lt[::-1])[::-1], [-np.inf]))
        m = np.clip(np.rint(cand / self.h).astype(np.int64) + 1 - self.lower, 0, p.size)
        with np.errstate(over="ignore"):
            dc = self.inf_mass + sp[m] - np.exp(np.minimum(cand + lsb[m], 700.0))
        dc = np.maximum(dc, self.inf_mass)
        return np.minimum.accumulate(dc)

    def _solve(self, d: np.ndarray, cand: np.ndarray, dc: np.ndarray) -> np.ndarray:
        # first candidate with δ <= d (dc is non-increasing)
        c = np.searchsorted(-dc, -d, side="left")
        c = np.minimum(c, cand.size - 1)
        last = cand.size - 1
        for _ in range(cand.size + 1):
            d_hi = self._delta_direct(cand[c])
            up = (d_hi > d) & (c < last)
            if not up.any():
                break
            c = c + up
        while True:
            pos = c > 0
            d_lo = np.full(d.shape, np.inf)
            if pos.any():
                d_lo[pos] = self._delta_direct(cand[c[pos] - 1])
            down = pos & (d_lo <= d)
            if not down.any():
                break
            c = c - down
            d_hi = np.where(down, d_lo, d_hi)
        out = np.zeros(d.shape)
        pos = c > 0
        if pos.any():
            e0, e1 = cand[c[pos] - 1], cand[c[pos]]
            frac = np.clip((d_lo[pos] - d[pos]) / (d_lo[pos] - d_hi[pos]), 0.0, 1.0)
            out[pos] = e0 + np.log1p(frac * np.expm1(e1 - e0))
        stuck = d_hi > d  # only the top candidate, where δ = inf_mass <= d
        out[stuck] = np.inf
        return out


def _trim(conv: np.ndarray, budget: float) -> tuple[int, int, float, float]:
    """Kept slice ``[lo, hi)`` of ``conv`` and the masses cut below and above it (each at
    most ``budget``; at least one entry kept)."""
    n = conv.size
    cs = np.cumsum(conv)
    lo = int(np.searchsorted(cs, budget, side="right"))
    rcs = np.cumsum(conv[::-1])
    cut = int(np.searchsorted(rcs, budget, side="right"))
    lo = min(lo, n - 1)
    hi = max(n - cut, lo + 1)
    below = float(cs[lo - 1]) if lo > 0 else 0.0
    above = float(rcs[n - hi - 1]) if hi < n else 0.0
    return lo, hi, below, above


@dataclass(frozen=True, eq=False)
class PldPair:
    """The two directions of one mechanism (or a composition).

    Parameters
    ----------
    qp : LossPmf
        Loss ``log Q/P`` under ``Q`` (``u`` moved vs not).
    pq : LossPmf
        Loss ``log P/Q`` under ``P``.
    """

    qp: LossPmf
    pq: LossPmf

    def __post_init__(self) -> None:
        if self.qp.h != self.pq.h or self.qp.pessimistic != self.pq.pessimistic:
            raise ValueError("the two directions must share h and the rounding")

    @property
    def h(self) -> float:
        return self.qp.h

    @property
    def pessimistic(self) -> bool:
        return self.qp.pessimistic

    @classmethod
    def identity(cls, h: float, pessimistic: bool = True) -> PldPair:
        """The pair of no mechanism."""
        one = LossPmf.identity(h, pessimistic)
        return cls(one, one)

    def compose(self, other: PldPair) -> PldPair:
        """Both directions composed with ``other``'s (independent mechanisms)."""
        return PldPair(self.qp.compose(other.qp), self.pq.compose(other.pq))

    def self_compose(self, k: int) -> PldPair:
        """``k >= 0`` copies composed, by repeated squaring."""
        return PldPair(self.qp.self_compose(k), self.pq.self_compose(k))

    @classmethod
    def compose_many(cls, pairs: Sequence[PldPair]) -> PldPair:
        """The composition of all ``pairs`` (non-empty), in a balanced tree: neighbours
        are composed level by level, so the large convolutions are few."""
        parts = list(pairs)
        if not parts:
            raise ValueError("compose_many needs at least one pair")
        while len(parts) > 1:
            nxt = [a.compose(b) for a, b in zip(parts[::2], parts[1::2], strict=False)]
            if len(parts) % 2:
                nxt.append(parts[-1])
            parts = nxt
        return parts[0]

    def delta(self, eps: npt.ArrayLike) -> np.ndarray | np.float64:
        """``δ(ε)``: the larger of the two directions'."""
        return np.maximum(self.qp.delta(eps), self.pq.delta(eps))

    def epsilon(self, delta: npt.ArrayLike) -> np.ndarray | np.float64:
        """``ε(δ)``: the larger of the two directions'."""
        return np.maximum(self.qp.epsilon(delta), self.pq.epsilon(delta))
