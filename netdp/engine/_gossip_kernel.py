"""Compiled tick loop of pairwise gossip (numba; compiled once, cached on disk).

Imported only when a pairwise or push-pull gossip run happens
(:mod:`netdp.engine.async_gossip`). ``tests/engine/test_async_gossip.py`` checks it
against a plain-numpy oracle, bit for bit.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def pairwise_average(first: np.ndarray, second: np.ndarray, X: np.ndarray, slot: np.ndarray,
                     sent: np.ndarray, every: int, states: np.ndarray) -> np.ndarray:
    """Run the exchanges tick by tick on the rows of ``X`` (in place) and return it.

    Parameters
    ----------
    first, second
        ``(ticks,)`` node ids: at tick k, ``first[k]`` and ``second[k]`` exchange.
    X
        ``(n, c)`` states (``c`` columns run at once: values, or the identity).
    slot
        ``(2 ticks,)``: where message ``2k`` (``first -> second``) and ``2k + 1``
        (``second -> first``) are written in ``sent``, ``-1``: nowhere.
    sent
        ``(messages kept, c)``: the rows the messages carry, before the exchange.
    every
        Copy ``X`` into ``states[k // every]`` before every tick k that ``every``
        divides, and after the last tick into ``states[-1]``; ``0``: never.
    states
        ``(ticks // every + 1, n, c)`` (any shape when ``every`` is 0).
    """
    c = X.shape[1]
    ticks = first.size
    for k in range(ticks):
        if every > 0 and k % every == 0:
            states[k // every] = X
        i, j = first[k], second[k]
        if slot[2 * k] >= 0:
            sent[slot[2 * k]] = X[i]
        if slot[2 * k + 1] >= 0:
            sent[slot[2 * k + 1]] = X[j]
        for col in range(c):
            mean = 0.5 * (X[i, col] + X[j, col])
            X[i, col] = mean
            X[j, col] = mean
    if every > 0:
        states[states.shape[0] - 1] = X
    return X
