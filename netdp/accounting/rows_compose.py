"""Each row's composition of its views' PMFs (:class:`~netdp.accounting.mixture_rows.
ViewRows`, one direction of one view towards many rows), in the Fourier domain.

:func:`compose_rows` multiplies the views' real FFTs row by row on a window per row chosen
by Chernoff bounds from the exact moment generating functions of the discrete PMFs (by
blocks, as :mod:`netdp.accounting.pld_fourier` does for one PMF), rows grouped by the FFT
length their windows need; one inverse FFT per group, negative entries clipped, and
``ε(δ)`` by direct sums (:func:`~netdp.accounting.pld_fourier.batch_epsilon`). Mass below a
window folds upwards (pessimistic); the Chernoff bound of the mass above it is added at
``+∞``, and so is a bound of the FFTs' rounding (``4 u log₂ F`` per factor and entry).
Rows that share a PMF (:attr:`ViewRows.index <netdp.accounting.mixture_rows.ViewRows>`)
share its transform: each distinct PMF is transformed (and powered) once, and multiplied
into its rows by a compiled loop (:func:`_products`, its numpy oracle in the tests).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numba as nb
import numpy as np
from scipy import fft as sfft

from netdp.accounting import pld_fourier as pf
from netdp.accounting.mixture_rows import ViewRows

_U = 2.0 ** -53
_BLOCK = 16
_BLOCK_LOSS = 0.008  # the loss a block of log_mgf spans, at most (unless one mass wider)
_CHUNK = 256  # frequencies of one pass of _products
SHARED_BYTES = 64 * 2**20  # distinct PMFs' spectra held at once by _compose_window
#: Rows composed at once, at most this many bytes of their windows (about 64 bytes a row
#: and frequency: the phases, the product and its inverse)
WINDOW_BYTES = 256 * 2**20
_HALF = 0.25 * 2.0 ** np.arange(18)  # 0.25 .. 3.3e4
ORDERS = np.concatenate([-_HALF[::-1], _HALF])


@nb.njit(cache=True)
def _products(phi, spec, slots):
    """``phi[r] *= spec[slots[r, j]]`` for every ``j`` with ``slots[r, j] >= 0``, by chunks
    of frequencies (each row's chunk stays in cache over its factors)."""
    rows, width = phi.shape
    for f0 in range(0, width, _CHUNK):
        f1 = min(width, f0 + _CHUNK)
        for r in range(rows):
            for j in range(slots.shape[1]):
                c = slots[r, j]
                if c >= 0:
                    for f in range(f0, f1):
                        phi[r, f] *= spec[c, f]


def _spectra(p: np.ndarray, size: int) -> np.ndarray:
    """The real FFTs of length ``size`` of the PMFs ``p`` (rows), folded modulo ``size``."""
    live = np.flatnonzero(p.any(axis=0))
    p = p[:, :int(live[-1]) + 1 if live.size else 1]
    if p.shape[1] > size:  # fold modulo the window
        pad = np.zeros((p.shape[0], -(-p.shape[1] // size) * size))
        pad[:, :p.shape[1]] = p
        p = pad.reshape(p.shape[0], -1, size).sum(axis=1)
    return sfft.rfft(p, n=size, axis=1)


def log_mgf(part: ViewRows, h: float) -> np.ndarray:
    """An upper bound of each row's ``log Σ_m p_m e^{λ ℓ_m}`` at :data:`ORDERS`: blocks of
    masses at their top (``λ > 0``) or bottom loss (``λ < 0``), :data:`_BLOCK` of them or
    fewer on a coarse grid (a block spans at most :data:`_BLOCK_LOSS`: each block's slack
    widens every window it is composed into)."""
    rows, width = part.probs.shape
    size = int(np.clip(_BLOCK_LOSS // h, 1, _BLOCK))
    nb = -(-width // size)
    pad = np.zeros((rows, nb * size))
    pad[:, :width] = part.probs
    mass = pad.reshape(rows, nb, size).sum(axis=2)
    b = np.arange(nb, dtype=np.float64) * size * h
    pos = ORDERS > 0
    out = np.empty((rows, ORDERS.size))
    span = (nb - 1) * size * h
    # λ > 0: factor out the top block's top loss; λ < 0: the bottom block's bottom
    e_pos = np.exp(np.multiply.outer(b - span, ORDERS[pos]))
    e_neg = np.exp(np.multiply.outer(b, ORDERS[~pos]))
    slack = nb * 1e-300
    with np.errstate(divide="ignore"):
        top = (part.lower + (nb - 1) * size + size - 1) * h
        out[:, pos] = (np.log(mass @ e_pos * (1 + 1e-12) + slack)
                       + np.multiply.outer(top, ORDERS[pos]))
        out[:, ~pos] = (np.log(mass @ e_neg * (1 + 1e-12) + slack)
                        + np.multiply.outer(part.lower * h, ORDERS[~pos]))
    return out


def compose_rows(parts: Sequence[ViewRows], h: float, delta: float,
                 times: Sequence[int] | None = None) -> np.ndarray:
    """Each row's ``ε(δ)`` (at least 0) of the composition of its PMFs in ``parts`` (one
    :class:`ViewRows` a view, all of one direction and the same rows; module docstring),
    part ``j`` composed ``times[j]`` times (default once).
    """
    rows = parts[0].rows
    mult = np.ones(len(parts)) if times is None else np.asarray(times, dtype=np.float64)
    lmgf = np.zeros((rows, ORDERS.size))
    lo = np.zeros(rows, np.int64)
    hi = np.zeros(rows, np.int64)
    inf = np.zeros(rows)
    for m, part in zip(mult, parts, strict=True):
        lmgf += m * part.per_row(log_mgf(part, h))
        lower = part.per_row(part.lower)
        lo += int(m) * lower
        hi += int(m) * (lower + part.probs.shape[1] - 1)
        inf += m * part.per_row(part.inf)
    a, sizes = chernoff_windows(lmgf, lo, hi, h, delta)
    out = np.empty(rows)
    for size in np.unique(sizes):
        group = np.flatnonzero(sizes == size)
        step = max(1, WINDOW_BYTES // (64 * (int(size) // 2 + 1)))  # rows at once
        for at in range(0, group.size, step):
            sel = group[at:at + step]
            out[sel] = _compose_window(parts, sel, mult, lo[sel], a[sel], hi[sel],
                                       lmgf[sel], inf[sel], int(size), h, delta)
    return out


def chernoff_windows(lmgf: np.ndarray, lo: np.ndarray, hi: np.ndarray, h: float,
                     delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Each row's window of losses ``[a, a + size)`` (in steps of ``h``): where the
    composition's log-MGF bounds ``lmgf`` (at :data:`ORDERS`) leave at most a share of
    ``delta`` above and below, within the support ``[lo, hi]``; ``size`` an FFT length.
    The rows are grouped by it (the few near the observer need long ones)."""
    beta = math.log(pf.TAIL_SHARE * delta)
    pos, neg = ORDERS > 0, ORDERS < 0
    top = np.min((lmgf[:, pos] - beta) / ORDERS[pos], axis=1) / h
    bottom = np.max((beta - lmgf[:, neg]) / -ORDERS[neg], axis=1) / h
    a = np.floor(np.maximum(bottom, lo)).astype(np.int64)
    b = np.ceil(np.maximum(np.minimum(top, hi), a)).astype(np.int64)
    return a, np.array([pf.fft_size(int(x) + 1) for x in b - a], dtype=np.int64)


def window_epsilon(dens: np.ndarray, a: np.ndarray, hi: np.ndarray, lmgf: np.ndarray,
                   inf: np.ndarray, size: int, h: float, delta: float,
                   factors: float) -> np.ndarray:
    """``ε(δ)`` (at least 0) of rows whose composition of ``factors`` PMFs, inverted from
    the Fourier domain, is ``dens`` on their windows ``[a, a + size)`` (the rounding's
    negative entries clipped here): the mass above the window (its Chernoff bound) and the
    inverse's rounding go to ``+∞`` beside ``inf``."""
    pos = ORDERS > 0
    edge = (a + size - 1) * h
    above = np.exp(np.minimum(np.min(lmgf[:, pos] - np.multiply.outer(edge, ORDERS[pos]),
                                     axis=1), 0.0))
    above[hi <= a + size - 1] = 0.0
    # the inverse's rounding, unsigned: at most about u log2(F) of the largest mass per
    # entry (bounded by 4 u log2 F per factor and entry, in all), and what the clipped
    # negative entries and float sums lose: all at +∞
    noise = 4.0 * _U * max(math.log2(size), 1.0) * (factors + 1.0) * size + size * 1e-300
    dens = np.maximum(dens, 0.0)
    return np.maximum(pf.batch_epsilon(dens, a, h, inf + above + noise, delta), 0.0)


def _compose_window(parts: Sequence[ViewRows], sel: np.ndarray, mult: np.ndarray,
                    lo: np.ndarray, a: np.ndarray, hi: np.ndarray, lmgf: np.ndarray,
                    inf: np.ndarray, size: int, h: float, delta: float) -> np.ndarray:
    """:func:`compose_rows` of the rows ``sel``, whose windows ``[a, a + size)`` share one
    length."""
    f = np.arange(size // 2 + 1, dtype=np.int64)
    turn = np.mod(np.multiply.outer(np.mod(lo - a, size), f), size) / size
    phi = np.exp(-2j * np.pi * turn)
    shared: list[np.ndarray] = []  # distinct PMFs' spectra, multiplied in by _products
    slots = np.full((sel.size, len(parts)), -1, np.int64)
    count = 0  # spectra in ``shared``, each (size // 2 + 1) complex
    for j, (m, part) in enumerate(zip(mult, parts, strict=True)):
        if part.index is None:
            p, held = part.probs[sel], None
        else:  # each distinct PMF of these rows once
            ids, held = np.unique(part.index[sel], return_inverse=True)
            p = part.probs[ids]
        # a row of all its mass at its lowest loss has the transform 1 (its shift is in
        # ``turn``): only the others are transformed
        moved = np.flatnonzero((p[:, 0] != 1.0) | (p[:, 1:] != 0).any(axis=1))
        if moved.size == 0:
            continue
        spec = _spectra(p[moved], size)
        with np.errstate(under="ignore"):
            if m != 1:
                spec = spec ** int(m)  # φ^m by squarings
            if held is None:
                phi[moved] *= spec
                continue
        slot = np.full(p.shape[0], -1, np.int64)
        slot[moved] = count + np.arange(moved.size)
        slots[:, j] = slot[held.reshape(-1)]
        shared.append(spec)
        count += moved.size
        if count * spec[0].nbytes > SHARED_BYTES:
            _products(phi, np.concatenate(shared), slots)
            shared, count = [], 0
            slots[:] = -1
    if shared:
        _products(phi, np.concatenate(shared), slots)
    return window_epsilon(sfft.irfft(phi, n=size, axis=1), a, hi, lmgf, inf, size, h, delta,
                          float(mult.sum()))
