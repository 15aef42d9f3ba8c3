"""The accountants by name: the one registry (``ACCOUNTANTS``, :func:`get_accountant`).

Each family lives in its own module with its closed forms: :mod:`~netdp.accounting.composition`
(``basic``, ``drv``, ``kov``, ``kov-exact``), :mod:`~netdp.accounting.rdp`,
:mod:`~netdp.accounting.pld` and :mod:`~netdp.accounting.gdp`; the interface is
:class:`~netdp.accounting.base.Accountant`. An accountant given an event it cannot account
raises :class:`TypeError` (wrong kind of event) or :class:`ValueError` (right kind,
unsupported parameters, e.g. ``drv`` on a heterogeneous composition); it never silently
returns a wrong number.

Delta bookkeeping: ``epsilon(event, delta)`` always returns an epsilon for the *total*
``delta``; the per-event deltas of ``ApproxDP`` events are subtracted first (``inf`` when
they exhaust the budget), as stated in each accountant's docstring.
"""

from __future__ import annotations

from collections.abc import Callable

from netdp.accounting.base import Accountant
from netdp.accounting.composition import (
    BasicAccountant,
    DrvAccountant,
    KovAccountant,
    KovExactAccountant,
)
from netdp.accounting.gdp import GdpAccountant
from netdp.accounting.pld import PldAccountant
from netdp.accounting.rdp import RdpAccountant

#: Registry of accountants by name.
ACCOUNTANTS: dict[str, Accountant] = {
    a.name: a
    for a in (
        BasicAccountant(),
        DrvAccountant(),
        KovAccountant(),
        KovExactAccountant(),
        RdpAccountant(),
        PldAccountant(),
        GdpAccountant(),
    )
}

_FACTORIES: dict[str, Callable[..., Accountant]] = {a.name: type(a) for a in ACCOUNTANTS.values()}


def get_accountant(name: str, **kwargs: object) -> Accountant:
    """Accountant by name (``kwargs`` go to its constructor, e.g. ``orders`` for ``rdp``).

    Raises
    ------
    ValueError
        If ``name`` is unknown; the message lists the allowed names.
    """
    if name not in ACCOUNTANTS:
        raise ValueError(f"unknown accountant {name!r}; allowed: {sorted(ACCOUNTANTS)}")
    return _FACTORIES[name](**kwargs) if kwargs else ACCOUNTANTS[name]
