"""Local randomizers, one module per family, all sharing :class:`Mechanism` (numbers) or
:class:`FrequencyOracle` (categories), each registered once in :mod:`.registry`."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from netdp.core.errors import InputError
from netdp.mechanisms import registry
from netdp.mechanisms.base import AdditiveNoise, FrequencyOracle, Mechanism

if TYPE_CHECKING:
    from netdp.mechanisms.bounded import Duchi, Hybrid, Piecewise
    from netdp.mechanisms.hadamard_response import HadamardResponse
    from netdp.mechanisms.histogram_encoding import SHE, THE
    from netdp.mechanisms.local_hashing import BLH, OLH
    from netdp.mechanisms.noise import Gaussian, Laplace, analytic_sigma, classic_sigma
    from netdp.mechanisms.randomized_response import GRR
    from netdp.mechanisms.rappor import RAPPOR
    from netdp.mechanisms.sketch import CMS, HCMS
    from netdp.mechanisms.unary import OUE, SUE

#: Where each class lives: a module loads (with its own imports) when first used.
MODULES = {e.cls: e.family for e in registry.ENTRIES} | {"analytic_sigma": "noise",
                                                        "classic_sigma": "noise"}
#: Kinds of the randomizers of a number.
NUMERIC_KINDS = ("additive", "bounded")
HASHED = registry.names(trait="hashed")  # public hash functions, drawn per run from hash_seed

__all__ = ["BLH", "CMS", "FREQUENCY", "GRR", "HASHED", "HCMS", "NUMERIC", "OLH", "OUE",
           "RAPPOR", "SHE", "SUE", "THE", "AdditiveNoise", "Duchi", "FrequencyOracle",
           "Gaussian", "HadamardResponse", "Hybrid", "Laplace", "Mechanism", "Piecewise",
           "additive", "analytic_sigma", "classic_sigma", "frequency_oracle", "numeric",
           "oracle_memory_bytes"]


def __getattr__(name: str) -> Any:
    """The randomizers by class name, and ``NUMERIC`` / ``FREQUENCY`` (CLI name -> class)."""
    if name in MODULES:
        return getattr(importlib.import_module(f"netdp.mechanisms.{MODULES[name]}"), name)
    if name in ("NUMERIC", "FREQUENCY"):
        kinds = NUMERIC_KINDS if name == "NUMERIC" else ("frequency-oracle",)
        return {key: registry.load(key) for key in registry.names(*kinds)}
    raise AttributeError(f"module 'netdp.mechanisms' has no attribute {name!r}")


def _oracle_class(name: str) -> Any:
    oracles = registry.names("frequency-oracle")
    if name not in oracles:
        raise InputError("mechanism", f"a histogram needs one of {', '.join(oracles)} "
                         f"(got {name!r})")
    return registry.load(name)


def additive(name: str, epsilon: float, delta: float, sensitivity: float,
             calibration: str = "analytic") -> AdditiveNoise:
    """Build an additive-noise mechanism by name (``gaussian`` or ``laplace``)."""
    if name == "gaussian":
        return registry.load("gaussian")(epsilon, delta, sensitivity, calibration)
    if name == "laplace":
        return registry.load("laplace")(epsilon, sensitivity)
    raise InputError("mechanism", f"summation needs gaussian or laplace (got {name!r})")


def numeric(name: str, epsilon: float, delta: float = 0.0) -> Mechanism:
    """A randomizer for a number in [-1, 1] by name (sensitivity 2 for the additive ones)."""
    if name in registry.names("additive"):
        return additive(name, epsilon, delta, 2.0)
    numbers = registry.names(*NUMERIC_KINDS)
    if name not in numbers:
        raise InputError("mechanism", f"must be one of {', '.join(numbers)} (got {name!r})")
    return registry.load(name)(epsilon)


def _rappor_options(domain: int, options: dict) -> dict:
    """RAPPOR's defaults here: a Bloom filter of at least 32 bits and 2 bits per item."""
    options = dict(options)
    options.setdefault("bloom", max(32, 1 << (2 * domain - 1).bit_length()))
    return options


def oracle_memory_bytes(name: str, epsilon: float, domain: int, reports: int,
                        hash_seed: int = 0, **options) -> int:
    """Upper estimate (bytes) of the peak memory of a histogram run of ``reports`` reports
    with ``frequency_oracle(name, epsilon, domain, hash_seed, **options)``, without
    building it (:meth:`FrequencyOracle.memory_bound`).

    Cheap: no table is built (RAPPOR hashes its items and finds its blocks, O(d h + bloom)
    memory); an unknown name or bad parameter raises the :class:`InputError` that
    :func:`frequency_oracle` would.
    """
    oracle = _oracle_class(name)
    if name == "rappor":
        options = _rappor_options(domain, options)
    if name in HASHED:
        options["hash_seed"] = hash_seed
    return int(oracle.memory_bound(epsilon, domain, reports, **options))


def frequency_oracle(name: str, epsilon: float, domain: int, hash_seed: int = 0,
                     **options) -> FrequencyOracle:
    """A frequency oracle by its CLI name; ``hash_seed`` picks the public hash functions of
    ``cms``, ``hcms`` and ``rappor`` (draw it per run for estimates unbiased over hashes)."""
    oracle = _oracle_class(name)
    if name == "rappor":
        # a Bloom filter of at least 32 bits and 2 bits per item, and hash functions whose
        # design has full rank (linear decoding needs it): the next seeds are tried
        options = _rappor_options(domain, options)
        for attempt in range(100):
            try:
                return oracle.from_epsilon(epsilon, domain, hash_seed=hash_seed + attempt,
                                           **options)
            except InputError as exc:
                if exc.param != "hash_seed":
                    raise
        raise InputError("domain", f"no full-rank RAPPOR design found for {domain} items")
    if name in HASHED:
        return oracle(epsilon, domain, hash_seed=hash_seed, **options)
    return oracle(epsilon, domain, **options)
