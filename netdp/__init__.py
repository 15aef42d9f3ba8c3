"""netdp: a simulator for network differential privacy.

>>> import netdp
>>> report = netdp.simulate({"task": "sum", "nodes": 100, "seed": 1})
>>> report.utility.estimate, report.privacy.empirical[0].mean

Importing netdp is cheap: the library loads the parts a call needs when it needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from netdp.core._cache import configure_numba_cache  # noqa: E402  (before any numba import)
from netdp.core.version import __version__

configure_numba_cache(__version__)  # compiled kernels go to a user cache, not site-packages

if TYPE_CHECKING:
    from netdp.core.errors import InputError
    from netdp.core.simulation_config import SimulationConfig
    from netdp.report.types import Report
    from netdp.run.account import account
    from netdp.run.api import simulate
    from netdp.run.attacks import attack
    from netdp.run.curves import PairCurves, pair_curves
    from netdp.tasks import make_config

__all__ = ["InputError", "PairCurves", "Report", "SimulationConfig", "__version__", "account",
           "attack", "make_config", "pair_curves", "simulate"]

_LAZY = {"simulate": "netdp.run.api", "account": "netdp.run.account",
         "attack": "netdp.run.attacks", "pair_curves": "netdp.run.curves",
         "PairCurves": "netdp.run.curves",
         "SimulationConfig": "netdp.core.config", "InputError": "netdp.core.errors",
         "Report": "netdp.report.types", "make_config": "netdp.tasks"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'netdp' has no attribute {name!r}")
