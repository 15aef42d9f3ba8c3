"""Hadamard matrices of order a power of two, and the fast Walsh-Hadamard transform."""

from __future__ import annotations

import numpy as np


def next_power_of_two(d: int) -> int:
    """Smallest power of two >= d."""
    return 1 << max(0, int(d - 1).bit_length())


def hadamard_entry(row: np.ndarray, col: np.ndarray) -> np.ndarray:
    """Entry ``H[row, col]`` of the Sylvester Hadamard matrix: ``(-1)^popcount(row & col)``."""
    bits = np.bitwise_and(np.asarray(row, np.int64), np.asarray(col, np.int64))
    parity = np.zeros(bits.shape, dtype=np.int64)
    while np.any(bits):
        parity ^= bits & 1
        bits = bits >> 1
    return 1 - 2 * parity


def fwht(values: np.ndarray) -> np.ndarray:
    """``values @ H`` along the last axis (length a power of two), O(m log m), unnormalised.

    ``H`` is symmetric and ``H H = m I``, so ``fwht(fwht(v)) / m == v``.
    """
    out = np.array(values, dtype=float, copy=True)
    m = out.shape[-1]
    if m & (m - 1):
        raise ValueError(f"length must be a power of two (got {m})")
    lead = out.shape[:-1]
    h = 1
    while h < m:
        view = out.reshape(*lead, m // (2 * h), 2, h)
        a = view[..., 0, :].copy()
        view[..., 0, :] += view[..., 1, :]
        view[..., 1, :] = a - view[..., 1, :]
        h *= 2
    return out
