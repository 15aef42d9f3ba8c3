"""What the frequency oracles share: parameter checks and the generic pure-LDP estimator.

A *pure* frequency oracle (Wang et al., USENIX Security 2017) has a support set per report
with ``p* = P[report supports its true value]`` and ``q* = P[report supports a given other
value]``; its unbiased count estimate (:func:`pure_counts`) and the variance of that
estimate (:func:`pure_variance`) depend on ``p*`` and ``q*`` only. :class:`PureOracle`
wires both into the :class:`~netdp.mechanisms.base.FrequencyOracle` interface.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np
import numpy.typing as npt

from netdp.core.errors import check
from netdp.mechanisms.base import FrequencyOracle

# Largest number of elements of one (rows x width) temporary: 2^20 elements is 8 MB of
# float64 per temporary; the few temporaries alive at once stay near 32 MB.
CHUNK_ELEMENTS = 1 << 20


def is_int(value: object) -> TypeGuard[int | np.integer]:
    """A Python or numpy integer, not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_real(value: object) -> bool:
    """A finite Python or numpy real number, not a bool."""
    return (isinstance(value, (int, float, np.integer, np.floating))
            and not isinstance(value, bool) and math.isfinite(value))


def check_epsilon(epsilon: float) -> None:
    """Raise :class:`~netdp.core.errors.InputError` unless ``epsilon`` is finite and > 0."""
    check(is_real(epsilon) and epsilon > 0, "epsilon",
          f"must be a finite number > 0 (got {epsilon!r})")


def check_int(value: object, param: str, low: int, high: int | None = None) -> None:
    """Raise unless ``value`` is an integer in ``[low, high]`` (no upper bound if None)."""
    ok = is_int(value) and value >= low and (high is None or value <= high)
    where = f">= {low}" if high is None else f"in [{low}, {high}]"
    check(bool(ok), param, f"must be an integer {where} (got {value!r})")


def check_domain(domain: int, upper: int | None = None) -> None:
    """Raise unless the domain size is an integer >= 2 (and <= ``upper`` when given)."""
    check_int(domain, "domain", 2, upper)


def check_count(n: int, low: int = 1) -> None:
    """Raise unless the number of reports ``n`` is an integer >= ``low``."""
    check(is_int(n) and n >= low, "n",
          f"the number of reports must be an integer >= {low} (got {n!r})")


def check_categories(values: np.ndarray, domain: int, param: str = "values") -> np.ndarray:
    """``values`` as a 1-D int64 array, after checking every entry lies in ``[0, domain)``.

    Integral floats are accepted; NaN, fractions, bools and other dtypes are not.

    Raises
    ------
    InputError
        Naming ``param`` when the array is not 1-D, holds non-integers, or leaves
        ``[0, domain)``.
    """
    arr = np.asarray(values)
    check(arr.ndim == 1, param, f"must be a 1-D array of categories (got shape {arr.shape})")
    if arr.size == 0:
        return arr.astype(np.int64)
    if not np.issubdtype(arr.dtype, np.integer):
        check(np.issubdtype(arr.dtype, np.floating) and bool(np.all(np.floor(arr) == arr)),
              param, f"must be integer categories in [0, {domain}) (got dtype {arr.dtype})")
    lo, hi = arr.min(), arr.max()
    check(lo >= 0 and hi < domain, param,
          f"categories must lie in [0, {domain}) (got min {lo}, max {hi})")
    return arr.astype(np.int64, copy=False)


def check_reports(reports: np.ndarray, width: int, what: str,
                  dtype: str = "integer") -> np.ndarray:
    """``reports`` as an array of shape (n, ``width``).

    ``dtype``: ``integer`` (any integer dtype), ``bits`` (integer or bool) or ``any``;
    ``what`` says what a row holds, for the error message.
    """
    arr = np.asarray(reports)
    kinds = {"integer": "iu", "bits": "iub", "any": None}[dtype]
    ok_dtype = kinds is None or arr.dtype.kind in kinds
    check(arr.ndim == 2 and arr.shape[1] == width and ok_dtype, "reports",
          f"must be an (n, {width}) {'' if kinds is None else dtype + ' '}array of {what} "
          f"(got {arr.dtype} array of shape {arr.shape})")
    return arr


def check_aggregate(aggregate: npt.ArrayLike, length: int) -> np.ndarray:
    """``aggregate`` as a float array whose last axis has ``length`` entries (not copied
    when it already is one: do not write to it)."""
    agg = np.asarray(aggregate)
    check(agg.ndim >= 1 and agg.shape[-1] == length, "aggregate",
          f"must have {length} entries along its last axis (got shape {agg.shape})")
    return agg.astype(float, copy=False)


def row_chunks(n: int, width: int, itemsize: int = 8) -> Iterator[slice]:
    """Slices of ``range(n)`` whose ``rows x width`` blocks of ``itemsize``-byte elements
    hold <= :data:`CHUNK_ELEMENTS` x 8 bytes (8 MB).

    The chunking depends only on n, the width and the item size, so a seed gives the same
    draws however the blocks fall.
    """
    step = max(1, CHUNK_ELEMENTS * 8 // itemsize // max(1, width))
    for start in range(0, n, step):
        yield slice(start, min(n, start + step))


#: Bit generators whose ``random_raw`` yields 64 random bits per call.
_RAW64 = (np.random.PCG64, np.random.PCG64DXSM, np.random.SFC64, np.random.Philox)


def random_bytes(rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` uniform random bytes (uint8) from ``rng``'s stream.

    64-bit bit generators (the default PCG64) hand out raw words, 8 bytes each, at about
    a fifth of the cost of ``rng.integers(0, 256, size, dtype=np.uint8)``, the fallback
    for the others (MT19937's raw words hold only 32 random bits).
    """
    if isinstance(rng.bit_generator, _RAW64):
        return rng.bit_generator.random_raw(-(-size // 8)).view(np.uint8)[:size]
    return rng.integers(0, 256, size, dtype=np.uint8)


def streams_raw(rng: np.random.Generator) -> bool:
    """Whether ``rng`` hands out raw 64-bit words, so that :class:`BernoulliStream` can
    replay its byte draws piece by piece."""
    return isinstance(rng.bit_generator, _RAW64)


def bit_generator_at(bitgen: np.random.BitGenerator,
                     state: Mapping[str, Any]) -> np.random.BitGenerator:
    """A new bit generator of the type of ``bitgen``, set to ``state``."""
    other = type(bitgen)(0)
    other.state = state
    return other


class RawBytes:
    """The bytes of one ``random_bytes(rng, size)`` call, read in consecutive pieces.

    Reads whole raw words and keeps the (< 8) bytes of a word that a piece leaves for the
    next one, so the pieces put together are the bytes of the single call (whose last
    word's extra bytes are dropped). Needs a 64-bit bit generator (:func:`streams_raw`).
    """

    def __init__(self, bit_generator: np.random.BitGenerator) -> None:
        self._bitgen = bit_generator
        self._left = np.empty(0, dtype=np.uint8)

    def read(self, size: int) -> np.ndarray:
        """The next ``size`` bytes, as a fresh writable uint8 array."""
        have = self._left.size
        if size <= have:
            out, self._left = self._left[:size].copy(), self._left[size:]
            return out
        need = size - have
        raw = self._bitgen.random_raw(-(-need // 8)).view(np.uint8)
        out = np.concatenate([self._left, raw[:need]]) if have else raw[:need]
        self._left = raw[need:].copy()
        return out


class BernoulliStream:
    """The draws of one ``bernoulli(rng, prob, size)`` call, handed out piece by piece in
    O(piece) memory.

    That call draws every byte, then one double per tie (:func:`threshold_bytes`). So the
    bytes are read twice: once here, in pieces of ``piece`` bytes, to count the ties and
    leave ``rng`` where the single call leaves it; then by :meth:`read`, from copies of
    the bit generator at the first byte and at the first tie double. Needs a 64-bit bit
    generator (:func:`streams_raw`). Costs one extra pass of random bytes.
    """

    def __init__(self, rng: np.random.Generator, prob: float, size: int, piece: int) -> None:
        scaled = 256.0 * float(prob)
        self.level, self._frac = int(scaled), scaled - int(scaled)
        if self.level >= 256:
            return
        bitgen = rng.bit_generator
        first_byte = bitgen.state
        reader, ties = RawBytes(bitgen), 0
        piece = max(8, int(piece))
        for start in range(0, size, piece):
            ties += int(np.count_nonzero(reader.read(min(piece, size - start)) == self.level))
        first_tie = bitgen.state
        words = max(1, piece // 8)  # skip the tie doubles, one raw word each
        for start in range(0, ties, words):
            bitgen.random_raw(min(words, ties - start))
        self._bytes = RawBytes(bit_generator_at(bitgen, first_byte))
        self._ties = np.random.Generator(bit_generator_at(bitgen, first_tie))

    def read(self, count: int) -> np.ndarray:
        """The next ``count`` draws, a uint8 array of 0s and 1s."""
        if self.level >= 256:
            return np.ones(count, dtype=np.uint8)
        byte = self._bytes.read(count)
        ties = np.flatnonzero(byte == self.level)
        hit = self._ties.random(ties.size) < self._frac
        np.less(byte, self.level, out=byte.view(bool))
        byte[ties] = hit
        return byte


def threshold_bytes(rng: np.random.Generator, prob: float,
                    size: int) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    """``size`` Bernoulli(``prob``) draws in compressed form: ``(byte, level, ties, hit)``.

    Draw i is ``byte[i] < level`` (``level = floor(256 prob)``), except at the positions
    ``ties`` (where ``byte == level``, 1/256 of them), where it is ``hit``: one uniform
    double each, in order, below ``256 prob - level``. So ``P[1] = level/256 +
    (256 prob - level)/256 = prob`` up to double rounding, as with one double per draw,
    for an eighth of the random bits. The draws do not depend on any block size.
    ``prob >= 1`` gives ``level = 256`` (every draw 1, no byte drawn).
    """
    scaled = 256.0 * float(prob)
    level = int(scaled)
    if level >= 256:
        return np.zeros(size, dtype=np.uint8), 256, np.empty(0, np.intp), np.empty(0, bool)
    byte = random_bytes(rng, size)
    parts = [np.flatnonzero(byte[s] == level) + s.start for s in row_chunks(size, 1, 1)]
    ties = np.concatenate(parts) if parts else np.empty(0, dtype=np.intp)
    return byte, level, ties, rng.random(ties.size) < scaled - level


def bernoulli(rng: np.random.Generator, prob: float, size: int) -> np.ndarray:
    """``size`` independent Bernoulli(``prob``) draws, a uint8 array of 0s and 1s
    (:func:`threshold_bytes`, resolved in place in the random bytes)."""
    byte, level, ties, hit = threshold_bytes(rng, prob, size)
    if level >= 256:
        return np.ones(size, dtype=np.uint8)
    np.less(byte, level, out=byte.view(bool))
    byte[ties] = hit
    return byte


def column_counts(bits: np.ndarray) -> np.ndarray:
    """Column sums of an integer or bool (n, width) array, as int64.

    Sums blocks of rows in int32 (exact: a block holds at most 2^23 rows of bytes, and
    wider integers take the int64 path), which is faster than one int64 reduction.
    """
    if bits.dtype.itemsize > 1:
        return bits.sum(axis=0, dtype=np.int64)
    total = np.zeros(bits.shape[1], dtype=np.int64)
    step = 1 << 23
    for start in range(0, len(bits), step):
        total += np.add.reduce(bits[start:start + step], axis=0, dtype=np.int32)
    return total


def pure_counts(support: np.ndarray, n: int, p_star: float, q_star: float) -> np.ndarray:
    """``(C_i - n q*) / (p* - q*)``: unbiased counts from the support counts ``C_i``
    (a new float array; one temporary of the size of ``support``)."""
    out = np.array(support, dtype=float)
    out -= n * q_star
    out /= p_star - q_star
    return out


def pure_variance(frequencies: np.ndarray, n: int, p_star: float,
                  q_star: float) -> np.ndarray:
    """Exact variance of each estimated *frequency* (count / n) of a pure oracle.

    ``q*(1-q*) / (n (p*-q*)^2) + f (1-p*-q*) / (n (p*-q*))`` for true frequencies ``f``:
    the support count of category ``i`` is a sum of independent Bernoulli(p*) (the
    ``f n`` users holding ``i``) and Bernoulli(q*) (the others).
    """
    check_count(n)
    f = np.asarray(frequencies, dtype=float)
    gap = p_star - q_star
    out = f * (1 - p_star - q_star)
    out /= n * gap
    out += q_star * (1 - q_star) / (n * gap**2)
    return out


class PureOracle(FrequencyOracle):
    """A frequency oracle whose aggregate is the support count of every category.

    Subclasses provide ``p_star`` and ``q_star``; the estimate and its variance are the
    generic ones.
    """

    if TYPE_CHECKING:
        # Read-only here: subclasses make them dataclass fields or properties. Declared for
        # the type checker only, since a property on this class would shadow the fields.
        @property
        def p_star(self) -> float: ...

        @property
        def q_star(self) -> float: ...

    def support_probabilities(self) -> tuple[float, float]:
        """``(p*, q*)`` of the pure-LDP framework."""
        return self.p_star, self.q_star

    def estimate_counts(self, aggregate: npt.ArrayLike, n: int) -> np.ndarray:
        """``(C_i - n q*) / (p* - q*)``; ``aggregate`` may be stacked along leading axes."""
        check_count(n)
        agg = check_aggregate(aggregate, self.domain)
        return pure_counts(agg, n, self.p_star, self.q_star)

    def variance(self, frequencies: np.ndarray, n: int) -> np.ndarray:
        """``q*(1-q*)/(n (p*-q*)^2) + f (1-p*-q*)/(n (p*-q*))`` for each true frequency."""
        return pure_variance(frequencies, n, self.p_star, self.q_star)


class DirectSupport(PureOracle):
    """A pure oracle whose report supports a category with the probabilities of its own
    randomized response: ``p* = p`` and ``q* = q``."""

    p: float
    q: float

    @property
    def p_star(self) -> float:
        """Probability that a report supports its own category: ``p``."""
        return self.p

    @property
    def q_star(self) -> float:
        """Probability that a report supports a given other category: ``q``."""
        return self.q


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection onto the probability simplex (Duchi et al. 2008).

    Post-processing only: it lowers the error but biases the estimate, so it is never
    applied unless asked for.
    """
    v = np.asarray(v, dtype=float)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    idx = np.arange(1, v.size + 1)
    rho = np.flatnonzero(u - css / idx > 0)[-1]
    return np.maximum(v - css[rho] / (rho + 1), 0.0)
