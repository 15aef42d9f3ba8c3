"""The walk on a time-varying graph, in plain numpy (the oracle of any compiled kernel).

The token held at step ``t`` moves to the holder of step ``t + 1`` with the transition
matrix ``P_t`` of the snapshot in force at ``t``
(:class:`netdp.graphs.time_varying.TimeVaryingTopology`); every token keeps the same
clock (its position). Cost: ``O(tokens · steps · log deg)`` in Python-level loops over
steps, vectorised over tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from netdp.core.errors import check
from netdp.engine.trace import Trace


def time_varying_walk(transitions: Sequence[Any], tokens: int, rng: np.random.Generator,
                      start_law: np.ndarray | None = None) -> Trace:
    """Walk ``tokens`` tokens for ``len(transitions)`` steps.

    Parameters
    ----------
    transitions
        ``[P_0, ..., P_{steps-1}]`` (dense or scipy sparse, rows sum to 1; ``P_t`` moves
        the token from step ``t`` to ``t + 1``, the last one is not used):
        :meth:`~netdp.graphs.time_varying.TimeVaryingTopology.transitions`.
    tokens
        Tokens walking at once.
    rng
        The random stream.
    start_law
        Law of each token's first holder (default uniform).

    Returns
    -------
    Trace
        ``(tokens, steps)`` holders.
    """
    from scipy import sparse

    steps = len(transitions)
    check(steps >= 1, "steps", f"must be >= 1 (got {steps})")
    check(tokens >= 1, "tokens", f"must be >= 1 (got {tokens})")
    n = transitions[0].shape[0]
    cache: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    holders = np.empty((tokens, steps), np.int64)
    law = np.full(n, 1.0 / n) if start_law is None else np.asarray(start_law, float)
    h = rng.choice(n, size=tokens, p=law / law.sum())
    for t in range(steps):
        holders[:, t] = h
        if t == steps - 1:
            break
        key = id(transitions[t])
        if key not in cache:
            P = sparse.csr_array(transitions[t])
            P.sort_indices()
            cum = np.cumsum(P.data)
            # row-relative cumulative sums: subtract each row's offset
            base = np.concatenate([[0.0], cum])[P.indptr[:-1]]
            cache[key] = (P.indptr, P.indices, cum - np.repeat(base, np.diff(P.indptr)))
        indptr, indices, rowcum = cache[key]
        u = rng.random(tokens)
        nxt = np.empty(tokens, np.int64)
        for k in range(tokens):
            lo, hi = indptr[h[k]], indptr[h[k] + 1]
            row = rowcum[lo:hi]
            j = min(int(np.searchsorted(row, u[k] * row[-1], side="right")), hi - lo - 1)
            nxt[k] = indices[lo + j]
        h = nxt
    return Trace(n, holders)
