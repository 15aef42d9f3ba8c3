"""Privacy accounting for netdp: events, accountants, amplification.

* :mod:`~netdp.accounting.events` - frozen records of what happened (``Gaussian``, ...).
* :mod:`~netdp.accounting.accountants` - accountants by name (``basic``, ``drv``, ``kov``,
  ``kov-exact``, ``rdp``, ``pld``, ``gdp``) and the vectorized closed forms.
* :mod:`~netdp.accounting.amplification` - subsampling and shuffling bounds.

The named theoretical curves over ``n`` are in :mod:`netdp.bounds.curves`; the one
root-finder that calibrates a parameter to a privacy target is in :mod:`netdp.core.roots`.

Every reported epsilon should say which accountant or curve produced it. Importing this
package is cheap (:mod:`~netdp.accounting.registry` is read by ``--help``): each name loads
its module on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_LAZY = {
    "ACCOUNTANTS": "netdp.accounting.accountants",
    "get_accountant": "netdp.accounting.accountants",
    "binary_rr_shuffled_delta": "netdp.accounting.amplification",
    "binary_rr_shuffled_epsilon": "netdp.accounting.amplification",
    "blanket_epsilon": "netdp.accounting.amplification",
    "erlingsson_epsilon": "netdp.accounting.amplification",
    "fmt_closed_epsilon": "netdp.accounting.amplification",
    "fmt_closed_valid": "netdp.accounting.amplification",
    "subsampled_delta": "netdp.accounting.amplification",
    "subsampled_epsilon": "netdp.accounting.amplification",
    "Accountant": "netdp.accounting.base",
    "drv_epsilon": "netdp.accounting.composition",
    "kov_exact_delta": "netdp.accounting.composition",
    "kov_exact_epsilon": "netdp.accounting.composition",
    "kov_het_epsilon": "netdp.accounting.composition",
    "kov_het_terms": "netdp.accounting.composition",
    "opti": "netdp.accounting.composition",
    "ApproxDP": "netdp.accounting.events",
    "Composed": "netdp.accounting.events",
    "DpEvent": "netdp.accounting.events",
    "Gaussian": "netdp.accounting.events",
    "Laplace": "netdp.accounting.events",
    "PureDP": "netdp.accounting.events",
    "RandomizedResponse": "netdp.accounting.events",
    "Repeated": "netdp.accounting.events",
    "Subsampled": "netdp.accounting.events",
    "fmt_numeric_delta": "netdp.accounting.fmt_numeric",
    "fmt_numeric_epsilon": "netdp.accounting.fmt_numeric",
    "gaussian_delta": "netdp.accounting.gdp",
    "gaussian_epsilon": "netdp.accounting.gdp",
    "DEFAULT_ORDERS": "netdp.accounting.rdp",
    "INTEGER_ORDERS": "netdp.accounting.rdp",
    "rdp_gaussian": "netdp.accounting.rdp",
    "rdp_laplace": "netdp.accounting.rdp",
    "rdp_randomized_response": "netdp.accounting.rdp",
    "rdp_subsampled_gaussian": "netdp.accounting.rdp",
    "rdp_to_delta": "netdp.accounting.rdp",
    "rdp_to_epsilon": "netdp.accounting.rdp",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'netdp.accounting' has no attribute {name!r}")
