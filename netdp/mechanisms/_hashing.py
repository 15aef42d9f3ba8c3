"""A universal hash family ``h_{a,b}(x) = ((a x + b) mod P) mod g``, vectorized.

``P = 2^31 - 1`` (a Mersenne prime), ``a`` in ``[1, P)``, ``b`` in ``[0, P)``: for
``x != y`` below P, ``P[h(x) = h(y)] <= 1/g`` (Carter & Wegman, "Universal classes of
hash functions", JCSS 1979, Section 3). Products stay below 2^62, so int64 arithmetic is
exact.

Larger domains (ids at or above ``2^31 - 1`` collide with themselves minus P above) use
the same family over the Mersenne prime ``P61 = 2^61 - 1`` (:data:`PRIME61`, chosen by
:func:`family_prime` only when the domain exceeds P, so that every smaller domain keeps
its keys and hashes bit for bit): keys ``a`` in ``[1, P61)``, ``b`` in ``[0, P61)``,
still int64, and ``(a x + b) mod P61`` computed exactly in uint64 by
:func:`affine_mod61` (32-bit halves, ``2^61 = 1 mod P61``). The universality argument
and the exact collision probability (:func:`collision_probability` with ``prime=P61``)
are the same with P61 in place of P: within ``1/P61`` (4e-19) of ``1/g``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

PRIME = (1 << 31) - 1
#: The prime of the large-domain family, ``2^61 - 1``: ids below it hash universally.
PRIME61 = (1 << 61) - 1

_LOW32 = np.uint64((1 << 32) - 1)
_LOW29 = np.uint64((1 << 29) - 1)
_P61 = np.uint64(PRIME61)


def family_prime(domain: int) -> int:
    """The prime of the hash family for ids in ``[0, domain)``: :data:`PRIME` while
    ``domain <= PRIME`` (every id below it: the historical family, unchanged), else
    :data:`PRIME61` (for ``domain <= PRIME61``)."""
    return PRIME if domain <= PRIME else PRIME61


def draw_keys(rng: np.random.Generator, size: int, prime: int = PRIME) -> np.ndarray:
    """``size`` random hash keys as an int64 array of shape (size, 2): columns a, b,
    ``a`` uniform in ``[1, prime)`` and ``b`` in ``[0, prime)`` (in that order)."""
    keys = np.empty((size, 2), dtype=np.int64)
    keys[:, 0] = rng.integers(1, prime, size)
    keys[:, 1] = rng.integers(0, prime, size)
    return keys


def hash_values(keys: np.ndarray, x: npt.ArrayLike, g: int, prime: int = PRIME) -> np.ndarray:
    """``h_key(x)`` in ``[0, g)``, broadcasting ``keys[..., 0:2]`` against ``x``, for the
    family of ``prime`` (:data:`PRIME` or :data:`PRIME61`); int64."""
    keys = np.asarray(keys, dtype=np.int64)
    x = np.asarray(x, dtype=np.int64)
    if prime == PRIME:
        return (keys[..., 0] * x + keys[..., 1]) % PRIME % g
    return (affine_mod61(keys[..., 0], x, keys[..., 1]) % np.uint64(g)).astype(np.int64)


def affine_mod61(a: npt.ArrayLike, x: npt.ArrayLike, b: npt.ArrayLike) -> np.ndarray:
    """``(a x + b) mod (2^61 - 1)`` exactly, broadcasting, as uint64 in ``[0, 2^61 - 1)``.

    Needs ``0 <= a, x < 2^61`` and ``0 <= b < 2^61`` (non-negative int64 or uint64). With
    ``a = a1 2^32 + a0`` and ``x = x1 2^32 + x0`` (``a1, x1 < 2^29``, ``a0, x0 < 2^32``),
    ``a x = a1 x1 2^64 + m 2^32 + a0 x0`` with ``m = a1 x0 + a0 x1 < 2^62``. Modulo
    ``P61``, ``2^61 = 1``, so ``2^64 = 8``, ``m 2^32 = (m >> 29) + (m mod 2^29) 2^32`` and
    ``a0 x0 = (a0 x0 >> 61) + (a0 x0 mod 2^61)``: the sum of these five terms and ``b`` is
    below ``2^61 + 2^33 + 2^61 + 8 + 2^61 + 2^61 < 2^64`` (no uint64 overflow), and folding
    it once more (``s = (s mod 2^61) + (s >> 61) <= 2^61 + 2``) leaves at most one ``P61``
    to subtract.
    """
    a = np.asarray(a).astype(np.uint64)
    x = np.asarray(x).astype(np.uint64)
    b = np.asarray(b).astype(np.uint64)
    a1, a0 = a >> np.uint64(32), a & _LOW32
    x1, x0 = x >> np.uint64(32), x & _LOW32
    mid = a1 * x0
    mid += a0 * x1
    low = a0 * x0
    s = a1 * x1
    s <<= np.uint64(3)
    s += mid >> np.uint64(29)
    mid &= _LOW29
    mid <<= np.uint64(32)
    s += mid
    s += low >> np.uint64(61)
    low &= _P61
    s += low
    s += b
    low = s >> np.uint64(61)
    s &= _P61
    s += low
    np.subtract(s, _P61, out=s, where=s >= _P61)
    return s


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


def collision_probability(g: int, prime: int = PRIME) -> float:
    """Exact ``P[h(x) = h(y)]`` for ``x != y`` in ``[0, P)`` under a random key, into [g].

    ``(a x + b, a y + b) mod P`` is uniform over the pairs ``(r, s)`` with ``r != s`` (a
    bijection of the keys: ``a = (r - s) / (x - y)``, ``b = r - a x``, and ``a != 0`` iff
    ``r != s``), so the probability is ``#{r != s, r = s mod g} / (P (P-1))``: ``r``
    residues mod g are hit ``k + 1`` times and ``g - r`` residues ``k`` times, with
    ``k, r = divmod(P, g)``. At most ``1/g`` (universal) and within ``1/P`` of it. ``P`` is
    ``prime``: :data:`PRIME` or :data:`PRIME61` (any prime: the argument only needs a
    field), computed in exact integers.
    """
    k, r = divmod(prime, g)
    same = r * (k + 1) * k + (g - r) * k * (k - 1)
    return same / (prime * (prime - 1))


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
