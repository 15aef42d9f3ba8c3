"""netdp: a simulator for network differential privacy."""

__version__ = "0.1.0"
from netdp._cache import configure_numba_cache; configure_numba_cache(__version__)  # noqa: E702, I001

from netdp.config import SimulationConfig  # noqa: E402
from netdp.errors import InputError  # noqa: E402
from netdp.simulate import Result, simulate  # noqa: E402

__all__ = ["InputError", "Result", "SimulationConfig", "__version__", "simulate"]
