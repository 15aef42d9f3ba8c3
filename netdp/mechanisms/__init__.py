"""Local randomizers, one module per family, all sharing :class:`Mechanism`."""

from __future__ import annotations

from netdp.errors import InputError
from netdp.mechanisms.additive import Gaussian, Laplace, analytic_sigma, classic_sigma
from netdp.mechanisms.base import AdditiveNoise, Mechanism

NUMERIC = {"gaussian": Gaussian, "laplace": Laplace}

__all__ = ["NUMERIC", "AdditiveNoise", "Gaussian", "Laplace", "Mechanism", "additive",
           "analytic_sigma", "classic_sigma"]


def additive(name: str, epsilon: float, delta: float, sensitivity: float,
             calibration: str = "analytic") -> AdditiveNoise:
    """Build an additive-noise mechanism by name (``gaussian`` or ``laplace``)."""
    if name == "gaussian":
        return Gaussian(epsilon, delta, sensitivity, calibration)
    if name == "laplace":
        return Laplace(epsilon, sensitivity)
    raise InputError("mechanism", f"summation needs gaussian or laplace (got {name!r})")
