"""A universal hash family ``h_{a,b}(x) = ((a x + b) mod P) mod g``, vectorized.

``P = 2^31 - 1`` (a Mersenne prime), ``a`` in ``[1, P)``, ``b`` in ``[0, P)``: for
``x != y`` below P, ``P[h(x) = h(y)] <= 1/g`` (Carter & Wegman). Products stay below
2^62, so int64 arithmetic is exact.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

PRIME = (1 << 31) - 1


def draw_keys(rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` random hash keys as an int64 array of shape (size, 2): columns a, b."""
    keys = np.empty((size, 2), dtype=np.int64)
    keys[:, 0] = rng.integers(1, PRIME, size)
    keys[:, 1] = rng.integers(0, PRIME, size)
    return keys


def hash_values(keys: np.ndarray, x: npt.ArrayLike, g: int) -> np.ndarray:
    """``h_key(x)`` in ``[0, g)``, broadcasting ``keys[..., 0:2]`` against ``x``."""
    keys = np.asarray(keys, dtype=np.int64)
    x = np.asarray(x, dtype=np.int64)
    return (keys[..., 0] * x + keys[..., 1]) % PRIME % g


def hash_range(key: np.ndarray, size: int, g: int) -> np.ndarray:
    """``h_key(x)`` for every ``x`` in ``[0, size)``: an int64 array (size,), computed in
    place (one array of ``size`` entries; same values as :func:`hash_values`)."""
    a, b = (int(v) for v in np.asarray(key, dtype=np.int64)[:2])
    out = np.arange(size, dtype=np.int64)
    out *= a
    out += b
    out %= PRIME
    out %= g
    return out


def collision_probability(g: int) -> float:
    """Exact ``P[h(x) = h(y)]`` for ``x != y`` in ``[0, P)`` under a random key, into [g].

    ``(a x + b, a y + b) mod P`` is uniform over the pairs ``(r, s)`` with ``r != s`` (a
    bijection of the keys), so the probability is ``#{r != s, r = s mod g} / (P (P-1))``:
    ``r`` residues mod g are hit ``k + 1`` times and ``g - r`` residues ``k`` times, with
    ``k, r = divmod(P, g)``. Within ``1/P`` of ``1/g``.
    """
    k, r = divmod(PRIME, g)
    same = r * (k + 1) * k + (g - r) * k * (k - 1)
    return same / (PRIME * (PRIME - 1))


def public_hashes(hash_seed: int, count: int, domain: int,
                  g: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` public hash functions into [g], drawn from ``default_rng(hash_seed)``.

    Returns their keys (int64, shape (count, 2)) and the table ``table[l, i] = h_l(i)`` of
    every item ``i < domain``, shape (count, domain): int32 (hash values lie below
    ``P < 2^31``), built one row at a time.
    """
    keys = public_keys(hash_seed, count)
    table = np.empty((count, domain), dtype=np.int32)
    for row, key in enumerate(keys):
        table[row] = hash_range(key, domain, g)
    return keys, table


def public_keys(hash_seed: int, count: int) -> np.ndarray:
    """The keys of :func:`public_hashes`, without the table: int64 (count, 2)."""
    return draw_keys(np.random.default_rng(hash_seed), count)
