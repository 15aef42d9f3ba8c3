"""Compiled kernels of the local randomizers (numba; compiled once, cached on disk).

Each kernel is checked against a plain numpy computation in ``tests/mechanisms``.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def sketch_row_sums(reports: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Per sketch row j, the number of reports and the sum of their signs.

    ``reports`` is a CMS report array (n, 1 + m): column 0 the row, then m signs. Returns
    ``(counts, sums, bad)``: int64 arrays (k,) and (k, m), and the number of reports
    with a row outside ``[0, k)`` or a sign other than ±1 (those are skipped). One pass
    over the reports, adding each report's signs to its row in int32 (flushed to int64
    every 2^30 reports).
    """
    n, width = reports.shape
    m = width - 1
    counts = np.zeros(k, dtype=np.int64)
    sums = np.zeros((k, m), dtype=np.int64)
    acc = np.zeros((k, m), dtype=np.int32)
    pending = 0
    bad = 0
    for u in range(n):
        j = reports[u, 0]
        signs = reports[u, 1:]
        off = 0
        for c in range(m):
            off += signs[c] * signs[c] != 1
        if j < 0 or j >= k or off:
            bad += 1
            continue
        counts[j] += 1
        row = acc[j]
        for c in range(m):
            row[c] += signs[c]
        pending += 1
        if pending == 1 << 30:
            sums += acc
            acc[:] = 0
            pending = 0
    sums += acc
    return counts, sums, bad


@nb.njit(cache=True, nogil=True)
def signs_below(byte: np.ndarray, level: int, out: np.ndarray) -> None:
    """``out[u, 1 + c] = +1`` where ``byte[u m + c] < level``, else -1 (CMS signs).

    ``out`` is a block of CMS reports (rows, 1 + m), column 0 left alone; ``byte`` holds
    rows * m bytes; ``level`` < 256.
    """
    rows, width = out.shape
    m = width - 1
    lvl = np.uint8(level)
    for u in range(rows):
        b = byte[u * m:(u + 1) * m]
        o = out[u, 1:]
        for c in range(m):
            o[c] = np.int8(1) if b[c] < lvl else np.int8(-1)
