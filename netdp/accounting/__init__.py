"""Privacy accounting for netdp: events, accountants, amplification.

* :mod:`~netdp.accounting.events` - frozen records of what happened (``Gaussian``, ...).
* :mod:`~netdp.accounting.accountants` - accountants by name (``basic``, ``drv``, ``kov``,
  ``kov-exact``, ``rdp``, ``pld``, ``gdp``) and the vectorized closed forms.
* :mod:`~netdp.accounting.amplification` - subsampling and shuffling bounds.

The named theoretical curves over ``n`` are in :mod:`netdp.bounds.curves`; the one
root-finder that calibrates a parameter to a privacy target is in :mod:`netdp.core.roots`.

Every reported epsilon should say which accountant or curve produced it.
"""

from netdp.accounting.accountants import ACCOUNTANTS, get_accountant
from netdp.accounting.amplification import (
    binary_rr_shuffled_delta,
    binary_rr_shuffled_epsilon,
    blanket_epsilon,
    erlingsson_epsilon,
    fmt_closed_epsilon,
    fmt_closed_valid,
    subsampled_delta,
    subsampled_epsilon,
)
from netdp.accounting.base import Accountant
from netdp.accounting.composition import (
    drv_epsilon,
    kov_exact_delta,
    kov_exact_epsilon,
    kov_het_epsilon,
    kov_het_terms,
    opti,
)
from netdp.accounting.events import (
    ApproxDP,
    Composed,
    DpEvent,
    Gaussian,
    Laplace,
    PureDP,
    RandomizedResponse,
    Repeated,
    Subsampled,
)
from netdp.accounting.fmt_numeric import fmt_numeric_delta, fmt_numeric_epsilon
from netdp.accounting.gdp import gaussian_delta, gaussian_epsilon
from netdp.accounting.rdp import (
    DEFAULT_ORDERS,
    INTEGER_ORDERS,
    rdp_gaussian,
    rdp_laplace,
    rdp_randomized_response,
    rdp_subsampled_gaussian,
    rdp_to_delta,
    rdp_to_epsilon,
)

__all__ = [
    # events
    "DpEvent",
    "PureDP",
    "ApproxDP",
    "Gaussian",
    "Laplace",
    "RandomizedResponse",
    "Composed",
    "Repeated",
    "Subsampled",
    # accountants
    "Accountant",
    "ACCOUNTANTS",
    "get_accountant",
    "DEFAULT_ORDERS",
    "INTEGER_ORDERS",
    "drv_epsilon",
    "opti",
    "kov_het_terms",
    "kov_het_epsilon",
    "kov_exact_delta",
    "kov_exact_epsilon",
    "gaussian_delta",
    "gaussian_epsilon",
    "rdp_gaussian",
    "rdp_subsampled_gaussian",
    "rdp_laplace",
    "rdp_randomized_response",
    "rdp_to_epsilon",
    "rdp_to_delta",
    # amplification
    "subsampled_epsilon",
    "subsampled_delta",
    "erlingsson_epsilon",
    "blanket_epsilon",
    "fmt_closed_epsilon",
    "fmt_closed_valid",
    "fmt_numeric_delta",
    "fmt_numeric_epsilon",
    "binary_rr_shuffled_delta",
    "binary_rr_shuffled_epsilon",
]
