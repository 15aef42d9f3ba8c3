"""The library's accountants by name (``ACCOUNTANTS``, :func:`get_accountant`), read from
the one registry of accountants, :mod:`netdp.accounting.registry`.

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

from netdp.accounting import registry
from netdp.accounting.base import Accountant

#: The library's accountants by name: one instance of each registry entry's class.
ACCOUNTANTS: dict[str, Accountant] = {
    name: registry.load(name)() for name in registry.names(library=True)
}


def get_accountant(name: str, **kwargs: object) -> Accountant:
    """Accountant by name (``kwargs`` go to its constructor, e.g. ``orders`` for ``rdp``);
    an accountant registered later (:func:`netdp.accounting.registry.register`) too.

    Raises
    ------
    ValueError
        If ``name`` is unknown; the message lists the allowed names.
    """
    if name not in registry.names(library=True):
        raise ValueError(f"unknown accountant {name!r}; allowed: "
                         f"{sorted(registry.names(library=True))}")
    if not kwargs and name in ACCOUNTANTS:
        return ACCOUNTANTS[name]
    return registry.load(name)(**kwargs)
