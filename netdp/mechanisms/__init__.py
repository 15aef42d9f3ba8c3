"""Local randomizers, one module per family, all sharing :class:`Mechanism` (numbers) or
:class:`FrequencyOracle` (categories)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from netdp.core.errors import InputError
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

#: Where each randomizer lives: a module loads (with its own imports) when first used.
MODULES = {"Gaussian": "noise", "Laplace": "noise", "analytic_sigma": "noise",
           "classic_sigma": "noise", "HadamardResponse": "hadamard_response",
           "SHE": "histogram_encoding", "THE": "histogram_encoding", "BLH": "local_hashing",
           "OLH": "local_hashing", "Duchi": "bounded", "Hybrid": "bounded",
           "Piecewise": "bounded", "GRR": "randomized_response", "RAPPOR": "rappor",
           "CMS": "sketch", "HCMS": "sketch", "OUE": "unary", "SUE": "unary"}
NUMERIC_CLASSES = {"laplace": "Laplace", "gaussian": "Gaussian", "duchi": "Duchi",
                   "piecewise": "Piecewise", "hybrid": "Hybrid"}
FREQUENCY_CLASSES = {"grr": "GRR", "sue": "SUE", "oue": "OUE", "blh": "BLH", "olh": "OLH",
                     "hr": "HadamardResponse", "cms": "CMS", "hcms": "HCMS",
                     "rappor": "RAPPOR", "the": "THE", "she": "SHE"}
HASHED = ("cms", "hcms", "rappor")  # public hash functions, drawn per run from hash_seed

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
        names = NUMERIC_CLASSES if name == "NUMERIC" else FREQUENCY_CLASSES
        return {key: __getattr__(cls) for key, cls in names.items()}
    raise AttributeError(f"module 'netdp.mechanisms' has no attribute {name!r}")


def _oracle_class(name: str) -> Any:
    if name not in FREQUENCY_CLASSES:
        raise InputError("mechanism", f"a histogram needs one of "
                         f"{', '.join(FREQUENCY_CLASSES)} (got {name!r})")
    return __getattr__(FREQUENCY_CLASSES[name])


def additive(name: str, epsilon: float, delta: float, sensitivity: float,
             calibration: str = "analytic") -> AdditiveNoise:
    """Build an additive-noise mechanism by name (``gaussian`` or ``laplace``)."""
    if name == "gaussian":
        return __getattr__("Gaussian")(epsilon, delta, sensitivity, calibration)
    if name == "laplace":
        return __getattr__("Laplace")(epsilon, sensitivity)
    raise InputError("mechanism", f"summation needs gaussian or laplace (got {name!r})")


def numeric(name: str, epsilon: float, delta: float = 0.0) -> Mechanism:
    """A randomizer for a number in [-1, 1] by name (sensitivity 2 for the additive ones)."""
    if name in ("gaussian", "laplace"):
        return additive(name, epsilon, delta, 2.0)
    if name not in NUMERIC_CLASSES:
        raise InputError("mechanism", f"must be one of {', '.join(NUMERIC_CLASSES)} "
                         f"(got {name!r})")
    return __getattr__(NUMERIC_CLASSES[name])(epsilon)


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
