"""Many compositions of the same few discretised PLDs, in the Fourier domain, in batches.

A walk observer's views are a few hundred mechanisms drawn from a run's few thousand
distinct ones, and each pair replaces one or two of them (:mod:`netdp.tracking.exact`).
A :class:`Bank` holds one direction (:class:`~netdp.accounting.loss_pmf.LossPmf` on one
grid ``h``) of each distinct mechanism; :meth:`Bank.epsilons` composes many *rows* at
once, each row a multiset of the bank's mechanisms given as a shared base plus a few
replacements, and returns each row's ``ε(δ)``:

* **Product of transforms.** The composed PMF's transform is the product of its
  factors'; it is formed as the sum of their complex logarithms (``exp(m Log φ) = φ^m``
  for an integer multiplicity ``m``, whatever the branch), so a replacement is one
  subtraction and one addition of a row of logs, and repeated factors cost nothing.
  Each mechanism's log transform at a length ``F`` is computed once and kept.
* **Window and wrap-around.** One inverse real FFT of length ``F`` gives the composition
  folded modulo ``F``. The window ``[A, A + F)`` (grid indices) is chosen from Chernoff
  bounds ``P(L > b) <= min_t e^{-t b} Π M_j(t)^{m_j}`` (``M_j`` the factor's moment
  generating function, on the exact discrete PMF, over :data:`ORDERS`) so that each side
  leaves at most ``TAIL_SHARE × δ`` outside, clipped to the exact support (no tail at all
  when the support fits). Folding only *adds* mass inside the window, so every survival
  probability inside it is at least the true one; the mass above the window (at most the
  Chernoff bound at its top, computed for each row) is added *again* at ``+∞``. The mass
  below the window folds into it and is thereby moved up. Both are pessimistic: the
  figure is an upper bound of the composition's ``ε(δ)`` (and the total may exceed one
  by the upper tail's bound).
* **Rounding.** Each factor is already rounded up to the grid (its PMF is pessimistic);
  FFT rounding is unsigned: ``4 u log₂F`` per factor in total variation (``u`` the
  double's unit round-off; 30 to 50 times the L1 error measured against long-double
  direct convolutions of 5 to 20 mixture PLDs) is added at ``+∞``; frequencies where
  every row's transform is below ``e^-700`` are dropped; negative entries are clipped
  to 0, and any finite mass the float sums lost goes to ``+∞`` too. The Parseval sums'
  geometric factors (``1 - ω_f``, ``1 - e^{-h} ω_f``) are formed without cancellation
  (``2 sin²(θ/2) + i sin θ``): the plain forms lose the low frequencies' relative
  precision and put ``δ`` low by about ``5e-18 F``, enough on a fine grid (``F`` of
  ``2^21`` and more) to take ``ε`` below the true loss at ``δ = 1e-9``.
* **Memory.** Each mechanism's log transform is kept for the next rows and observers
  within :data:`SPECTRA_BYTES` (least recently used dropped); a call sums the base one
  mechanism at a time and solves its rows in blocks of :data:`ROWS_BYTES`, so it never
  holds every mechanism's transform at once.
* **ε(δ).** :func:`batch_epsilon` solves every row at once, as
  :meth:`~netdp.accounting.loss_pmf.LossPmf.epsilon` does one PMF (its oracle in the
  tests): ``δ`` at every grid loss by suffix sums (an exact recurrence for
  ``Σ_{j>i} p_j e^{-(j-i)h}``: no overflow), the cell where it crosses ``δ``, and the
  chord in ``e^ε`` there (``δ`` is linear in ``e^ε`` between grid losses).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import fft as sfft
from scipy import signal

from netdp.accounting.loss_pmf import LossPmf

TAIL_SHARE = 1e-6  # each side of a window leaves at most this share of δ outside it
#: Chernoff orders ``t`` (both signs) tried for the windows.
_HALF = 0.25 * 1.5 ** np.arange(34)  # 0.25 .. 2.4e5, a factor 1.5 apart
ORDERS = np.concatenate([-_HALF[::-1], _HALF])
_U = 2.0 ** -53
_CUT = -700.0  # log-magnitudes below it are dropped from a transform (e^-700 < 1e-304)
SPECTRA_BYTES = 512 << 20  # the log transforms a bank keeps (least recently used go)
ROWS_BYTES = 256 << 20  # the rows' transforms of one block (rows x F x 24 bytes), at most
_BLOCK = 16  # grid cells per block of the moment bound
_TINY = 1e-300  # |φ| floor before the log (a product below it underflows to 0 anyway)


def _logsumexp_rows(a: np.ndarray) -> np.ndarray:
    top = a.max(axis=-1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return safe + np.log(np.exp(a - safe[..., None]).sum(axis=-1))


def mass_above(lmgf: np.ndarray, edge: float) -> np.ndarray:
    """Chernoff bound of each row's mass at losses above ``edge``, from the rows' log
    moment generating functions at :data:`ORDERS` (``min_{t > 0} M(t) e^{-t edge}``, at
    most 1)."""
    pos = ORDERS > 0
    return np.exp(np.minimum(np.min(lmgf[:, pos] - ORDERS[pos] * edge, axis=1), 0.0))


def fft_size(points: int) -> int:
    """The FFT length used for ``points`` grid points: the least of ``2^k`` times 1,
    1.25, 1.5 or 1.75 that holds them (few distinct lengths, so that the transforms
    kept per length serve many observers)."""
    points = max(int(points), 8)
    k = max(points.bit_length() - 3, 0)
    for mult in (4, 5, 6, 7, 8):
        if mult << k >= points:
            return mult << k
    raise AssertionError  # pragma: no cover - 8 << k >= points always


def _log_mgf(p: np.ndarray, lower: int, h: float) -> np.ndarray:
    """An upper bound of ``log Σ_i p_i e^{t (lower + i) h}`` at each of :data:`ORDERS`:
    blocks of :data:`_BLOCK` masses, each at its block's top loss (``t > 0``) or bottom
    loss (``t < 0``)."""
    pad = np.zeros(-(-p.size // _BLOCK) * _BLOCK)
    pad[:p.size] = p
    mass = pad.reshape(-1, _BLOCK).sum(axis=1)
    keep = np.flatnonzero(mass > 0)
    with np.errstate(divide="ignore"):
        logmass = np.log(mass[keep])
    bottom = (lower + keep * _BLOCK) * h
    ends = np.where(ORDERS[:, None] > 0, bottom[None, :] + (_BLOCK - 1) * h, bottom[None, :])
    return _logsumexp_rows(logmass[None, :] + ORDERS[:, None] * ends)


class Bank:
    """One direction of each distinct mechanism, on one grid (see the module docstring).

    Parameters
    ----------
    h : float
        The grid step every PMF added must have (pessimistic PMFs only).
    """

    def __init__(self, h: float) -> None:
        self.h = float(h)
        self.pmfs: list[LossPmf] = []
        self._lower: list[int] = []
        self._upper: list[int] = []
        self._logfin: list[float] = []
        self._logtot: list[float] = []
        self._logm: list[np.ndarray] = []
        self._spectra: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self._bytes = 0

    def add(self, pmf: LossPmf) -> int:
        """Keep ``pmf``; its id in the bank."""
        if pmf.h != self.h or not pmf.pessimistic:
            raise ValueError("a bank holds pessimistic PMFs of its own grid step")
        p = pmf.probs
        fin = float(p.sum())
        with np.errstate(divide="ignore"):
            self._logfin.append(math.log(fin) if fin > 0 else -np.inf)
            self._logtot.append(math.log(pmf.total) if pmf.total > 0 else -np.inf)
        self._logm.append(np.maximum(_log_mgf(p, pmf.lower, self.h), -1e300))
        self._lower.append(pmf.lower)
        self._upper.append(pmf.lower + p.size - 1)
        self.pmfs.append(pmf)
        return len(self.pmfs) - 1

    def log_spectrum(self, j: int, size: int) -> tuple[np.ndarray, np.ndarray]:
        """``Log`` of the real FFT of mechanism ``j``'s finite PMF (placed at index 0,
        folded modulo ``size``): its real part (contiguous) and the whole. Kept for the
        next observers, the least recently used dropped beyond :data:`SPECTRA_BYTES`."""
        key = (j, size)
        got = self._spectra.pop(key, None)
        if got is None:
            p = self.pmfs[j].probs
            if p.size > size:
                p = np.bincount(np.arange(p.size) % size, weights=p, minlength=size)
            spec = sfft.rfft(p, n=size)
            mag = np.log(np.maximum(np.abs(spec), _TINY))
            got = (mag, mag + 1j * np.angle(spec))
            self._bytes += got[0].nbytes + got[1].nbytes
            while self._spectra and self._bytes > SPECTRA_BYTES:
                old = self._spectra.pop(next(iter(self._spectra)))
                self._bytes -= old[0].nbytes + old[1].nbytes
        self._spectra[key] = got  # the most recently used last
        return got

    def epsilons(self, base: dict[int, int], rows: Sequence[Sequence[tuple[int, int]]],
                 delta: float) -> np.ndarray:
        """``ε(δ)`` of each row's composition (at least 0).

        Parameters
        ----------
        base : dict
            ``{mechanism: multiplicity}`` shared by every row.
        rows : sequence
            Each row's replacements ``(removed, added)`` (one copy of ``removed``, which
            the base must hold, for one of ``added``); an empty row is the base itself.
        delta : float
            In ``(0, 1]``.
        """
        ids = sorted(set(base) | {x for r in rows for pair in r for x in pair})
        col = {j: i for i, j in enumerate(ids)}
        mult = np.zeros((len(rows), len(ids)))
        for j, m in base.items():
            mult[:, col[j]] = m
        for r, row in enumerate(rows):
            for gone, new in row:
                mult[r, col[gone]] -= 1
                mult[r, col[new]] += 1
        if np.any(mult < 0):
            raise ValueError("a row removes a mechanism its base does not hold")
        lower = np.array([self._lower[j] for j in ids], np.int64)
        upper = np.array([self._upper[j] for j in ids], np.int64)
        logm = np.array([self._logm[j] for j in ids])
        logfin = np.array([self._logfin[j] for j in ids])
        logtot = np.array([self._logtot[j] for j in ids])
        used = mult > 0
        lo_r = (mult * lower).sum(axis=1).astype(np.int64)
        hi_r = (mult * upper).sum(axis=1).astype(np.int64)
        with np.errstate(invalid="ignore"):
            lmgf = mult @ np.maximum(logm, -1e300)
            fin = np.exp(np.where(used, mult * logfin, 0.0).sum(axis=1))
            tot = np.exp(np.where(used, mult * logtot, 0.0).sum(axis=1))
        beta = math.log(TAIL_SHARE * delta)
        pos, neg = ORDERS > 0, ORDERS < 0
        top = np.min((lmgf[:, pos] - beta) / ORDERS[pos], axis=1) / self.h
        bottom = np.max((beta - lmgf[:, neg]) / -ORDERS[neg], axis=1) / self.h
        a = int(np.floor(max(np.min(np.maximum(bottom, lo_r)), float(lo_r.min()))))
        b = int(np.ceil(np.max(np.minimum(top, hi_r))))
        size = fft_size(b - a + 1)
        b = a + size - 1
        # the Chernoff bound of each row's mass above the window (0 if none is there)
        above = mass_above(lmgf, b * self.h)
        above[hi_r <= b] = 0.0
        factors = mult.sum(axis=1)
        noise = 4.0 * _U * max(math.log2(size), 1.0) * (factors + 1.0)
        inf = np.maximum(tot - fin, 0.0) + above + noise
        # the base's log transform, one mechanism at a time (the transforms are not all
        # held at once: ids x F can be gigabytes on a fine grid)
        start = np.array([base.get(j, 0) for j in ids], dtype=np.float64)
        half = size // 2 + 1
        base_mag, base_log = np.zeros(half), np.zeros(half, complex)
        for c in np.flatnonzero(start):
            mag, full = self.log_spectrum(ids[c], size)
            base_mag += start[c] * mag
            base_log += start[c] * full
        change = mult - start[None, :]
        out = np.empty(len(rows))
        step = max(1, ROWS_BYTES // (24 * half))
        for r0 in range(0, len(rows), step):
            r1 = min(r0 + step, len(rows))
            out[r0:r1] = self._rows(change[r0:r1], ids, base_mag, base_log, lo_r[r0:r1],
                                    a, size, inf[r0:r1], delta)
        return np.maximum(out, 0.0)

    def _rows(self, change: np.ndarray, ids: list[int], base_mag: np.ndarray,
              base_log: np.ndarray, lo_r: np.ndarray, a: int, size: int, inf: np.ndarray,
              delta: float) -> np.ndarray:
        """:meth:`epsilons` of a block of rows: the base's log transform plus each row's
        replacements, then ε(δ) on the live frequencies."""
        mag = np.repeat(base_mag[None, :], change.shape[0], axis=0)
        logphi = np.repeat(base_log[None, :], change.shape[0], axis=0)
        for c in np.flatnonzero(np.any(change != 0, axis=0)):
            m, full = self.log_spectrum(ids[c], size)
            rows = np.flatnonzero(change[:, c])
            mag[rows] += change[rows, c, None] * m
            logphi[rows] += change[rows, c, None] * full
        # frequencies where every row's transform is below e^CUT are dropped (0)
        alive = np.flatnonzero(mag.max(axis=0) > _CUT)
        cols = int(alive[-1]) + 1 if alive.size else 1
        logphi = logphi[:, :cols]
        # row r's composition starts at grid index lo_r: index x at position (x - a) mod F
        f = np.arange(cols, dtype=np.int64)
        turn = np.mod(np.multiply.outer(np.mod(lo_r - a, size), f), size) / size
        logphi = logphi - 2j * np.pi * turn
        phi = np.exp(np.maximum(logphi.real, _CUT))
        phi[logphi.real < _CUT] = 0.0
        phi = phi * np.cos(logphi.imag) + 1j * (phi * np.sin(logphi.imag))
        return spectral_epsilon(phi, a, size, self.h, inf, delta)


def _delta_at(phi: np.ndarray, a: int | np.ndarray, size: int, h: float, inf: np.ndarray,
              i: np.ndarray) -> np.ndarray:
    """``δ`` of each row at ``ε = i[r] h`` from its transform (Parseval, module
    docstring), plus a bound on the sum's rounding."""
    cols = phi.shape[1]
    f = np.arange(cols, dtype=np.int64)
    x0 = np.maximum(i + 1, a)
    n = a + size - x0  # terms x0 .. a + F - 1 (none when n <= 0)
    p0 = np.mod(x0 - a, size)
    # ω_f = e^{-iθ} and ω_f^{p0} = e^{-iφ}; every difference with 1 (or with e^{-h}) is
    # written without cancellation: 1 - e^{-iθ} = 2 sin²(θ/2) + i sin θ, and
    # 1 - q e^{-iθ} = -expm1(-h) + 2 q sin²(θ/2) + i q sin θ (the plain forms lose the
    # low frequencies' relative precision, about u F / (2π f): δ came out low)
    theta = 2.0 * np.pi * f / size
    phi0 = 2.0 * np.pi * (np.mod(np.multiply.outer(p0, f), size) / size)
    half = 2.0 * np.sin(0.5 * theta) ** 2
    half0 = 2.0 * np.sin(0.5 * phi0) ** 2
    sin0 = np.sin(phi0)
    q = math.exp(-h)
    keep = -math.expm1(-h)
    gone = -np.expm1(-np.maximum(n, 0) * h)  # 1 - e^{-n h}
    with np.errstate(divide="ignore", invalid="ignore"):
        s1 = (-half0 - 1j * sin0) / (half + 1j * np.sin(theta))[None, :]
    s1[:, 0] = np.maximum(n, 0)
    s2 = (np.exp(-(x0 - i) * h)[:, None] * ((gone[:, None] - half0) - 1j * sin0)
          / (keep + q * half + 1j * q * np.sin(theta))[None, :])
    g = s1 - s2
    g[n <= 0] = 0.0
    weight = np.full(cols, 2.0)
    weight[0] = 1.0
    if size % 2 == 0 and cols == size // 2 + 1:
        weight[-1] = 1.0
    terms = weight * (phi * np.conj(g))
    total = terms.real.sum(axis=1) / size
    slack = 8.0 * _U * (np.abs(terms).sum(axis=1) / size + 1e-300)
    return inf + total + slack


def spectral_epsilon(phi: np.ndarray, a: int | np.ndarray, size: int, h: float, inf: np.ndarray,
                     delta: float) -> np.ndarray:
    """:func:`batch_epsilon` of the PMFs whose real FFTs of length ``size`` (positions
    ``x - a``) begin with the columns of ``phi`` (the rest 0), without inverting them:
    ``δ`` at a grid loss is an inner product with the transform of
    ``(1 - e^{ε - ℓ})_+`` (a closed geometric sum), bisected over the grid per row,
    then the chord in ``e^ε`` between the two grid losses around the crossing."""
    rows = phi.shape[0]
    inf = np.broadcast_to(np.asarray(inf, dtype=np.float64), (rows,)).copy()
    a = np.broadcast_to(np.asarray(a, dtype=np.int64), (rows,))
    out = np.full(rows, np.inf)
    top = a + size  # δ = inf from here up
    zero = np.zeros(rows, np.int64)
    d_lo = _delta_at(phi, a, size, h, inf, zero)
    out[d_lo <= delta] = 0.0
    todo = np.flatnonzero((d_lo > delta) & (inf <= delta) & (top > 0))
    if todo.size == 0:
        return out
    ph, nf, at = phi[todo], inf[todo], a[todo]
    lo = np.zeros(todo.size, np.int64)
    hi = top[todo].copy()
    d0, d1 = d_lo[todo], nf.copy()
    while np.any(hi - lo > 1):
        mid = (lo + hi) // 2
        d = _delta_at(ph, at, size, h, nf, mid)
        ok = d <= delta
        hi, d1 = np.where(ok, mid, hi), np.where(ok, d, d1)
        lo, d0 = np.where(ok, lo, mid), np.where(ok, d0, d)
    e0, e1 = lo * h, hi * h
    frac = np.clip((d0 - delta) / np.maximum(d0 - d1, 1e-300), 0.0, 1.0)
    out[todo] = e0 + np.log1p(frac * np.expm1(e1 - e0))
    return out


def batch_epsilon(probs: np.ndarray, lower: int | np.ndarray, h: float, inf: np.ndarray,
                  delta: float) -> np.ndarray:
    """The smallest ``ε >= 0`` with ``δ(ε) <= delta`` of each row of ``probs`` (masses at
    the losses ``(lower + i) h``, ``lower`` shared or one per row, plus ``inf[r]`` at
    ``+∞``; ``inf`` where none), by direct sums:
    :meth:`~netdp.accounting.loss_pmf.LossPmf.epsilon` for many rows (the oracle of
    :func:`spectral_epsilon` in the tests).

    ``δ_r(ε) = inf_r + Σ_ℓ p_r(ℓ) (1 - e^{ε - ℓ})_+``: suffix sums (an exact recurrence
    for ``Σ_{j>i} p_j e^{-(j-i)h}``), the first grid loss where ``δ <= delta``, the chord in
    ``e^ε`` below it."""
    probs = np.atleast_2d(np.asarray(probs, dtype=np.float64))
    rows, size = probs.shape
    inf = np.broadcast_to(np.asarray(inf, dtype=np.float64), (rows,))
    low = np.broadcast_to(np.asarray(lower, dtype=np.int64), (rows,))
    # the columns below every row's loss 0 change neither δ(ε >= 0) nor δ(0): cut
    skip = int(np.clip(-int(low.max()) - 1, 0, size - 1)) if rows and size else 0
    if skip:
        probs, low, size = probs[:, skip:], low + skip, size - skip
    losses = (low[:, None] + np.arange(size)[None, :]) * h
    # tail[r, i] = Σ_{j > i} p_j, near[r, i] = Σ_{j > i} p_j e^{-(j - i) h}
    rev = probs[:, ::-1]
    tail = np.zeros_like(probs)
    tail[:, :-1] = np.cumsum(rev, axis=1)[:, ::-1][:, 1:]
    q = math.exp(-h)
    near = signal.lfilter([0.0, q], [1.0, -q], rev, axis=1)[:, ::-1]
    d_grid = inf[:, None] + np.maximum(tail - near, 0.0)  # δ at ε = each grid loss
    # δ at ε = 0, directly (the grid may start above 0)
    gain = np.where(losses > 0, -np.expm1(-np.maximum(losses, 0.0)), 0.0)
    d_zero = inf + np.einsum("ij,ij->i", probs, gain)
    ok = (d_grid <= delta) & (losses >= 0)
    first = np.where(ok.any(axis=1), np.argmax(ok, axis=1), -1)
    out = np.full(rows, np.inf)
    out[d_zero <= delta] = 0.0
    todo = np.flatnonzero((d_zero > delta) & (first >= 0))
    if todo.size:
        i = first[todo]
        e1 = losses[todo, i]
        prev = np.maximum(i - 1, 0)
        at_zero = (i - 1 < 0) | (losses[todo, prev] <= 0.0)
        e0 = np.where(at_zero, 0.0, losses[todo, prev])
        d0 = np.where(at_zero, d_zero[todo], d_grid[todo, prev])
        d1 = d_grid[todo, i]
        frac = np.clip((d0 - delta) / np.maximum(d0 - d1, 1e-300), 0.0, 1.0)
        out[todo] = e0 + np.log1p(frac * np.expm1(e1 - e0))
    return out
