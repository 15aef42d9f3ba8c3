"""The accountants, each declared once: its name, its help, what it supports, whether it is
exact, its cost and the capabilities by which the trackers dispatch to it.

Every list of accountant names elsewhere (``--accountant``'s choices and help, the
library's :data:`~netdp.accounting.accountants.ACCOUNTANTS`, the trackers' checks, the
sweep's cost weights, the cost estimates of :mod:`netdp.tracking.pld_cost`) is a query of
this registry: code asks an entry for a capability (:attr:`Entry.exact`,
:attr:`Entry.kernel_mode`, :attr:`Entry.composes_pld`, ...) instead of comparing names.
A new accountant is written in its module and declared here; an accountant that brings its
own per-run losses (:attr:`Entry.pair_losses`) can be added from outside with
:func:`register` (and removed with :func:`unregister`). Nothing here imports more than the
standard library and :mod:`netdp.core.errors`: the classes and hooks load on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from netdp.core.errors import InputError

#: What a simulator accountant can support, by axis, with the values each axis takes.
AXES = {
    "kinds": ("ring", "complete", "graph", "time-varying"),
    "protocols": ("walk", "gossip"),
    "noise": ("gaussian", "pure"),  # Gaussian noise, or eps0-DP noise (Laplace)
    "conventions": ("sound", "reference"),
}


@dataclass(frozen=True)
class GridCost:
    """The cost model of an accountant that composes views as discretised privacy loss
    distributions (read by :func:`netdp.tracking.pld_cost.pld_seconds`, which states the
    model and where the figures come from).

    Attributes
    ----------
    precision
        The rounding's share of a view's loss scale (sets the grid step).
    coarsest
        The largest grid step.
    complete, graph
        Seconds per grid point of the two terms (building the views, composing the
        pairs'), on the complete graph and on other graphs.
    binned
        Whether view lengths share a mechanism per bin on the complete graph
        (:func:`netdp.tracking.exact.length_bin`), or each length is its own.
    rows
        Where set, other graphs cost ``rows[0] · (1 + rows[1] / z²)²`` seconds per view of
        an observer and node of the graph, ``z`` the noise multiplier, in place of
        ``graph``: the accountant builds a view's PLDs towards every node at once
        (:mod:`netdp.accounting.mixture_rows`).
    shared
        Where set, ``(share, nodes)``: on a graph whose nodes share count laws
        (:func:`netdp.tracking.pld_cost.shares_laws`) of at least ``nodes`` nodes, the
        rows model's seconds times ``share`` (such nodes share their PMFs:
        :func:`netdp.tracking.view_plds.rows_pld`).
    """

    precision: float
    coarsest: float
    complete: tuple[float, float]
    graph: tuple[float, float]
    binned: bool = False
    rows: tuple[float, float] | None = None
    shared: tuple[float, int] | None = None


@dataclass(frozen=True)
class Entry:
    """One accountant.

    Attributes
    ----------
    name
        Its name (``--accountant``, :func:`~netdp.accounting.accountants.get_accountant`).
    help
        One clause for ``--help`` and the docs (what it computes, how far it scales).
    library
        ``(module, class)`` of its :class:`~netdp.accounting.base.Accountant` of events;
        ``None`` where it accounts a simulator's views only.
    kinds
        The walk kinds (:data:`AXES`) where a simulator tracker composes with it; ``()``:
        a library accountant only, not offered by ``--accountant``.
    protocols, noise, conventions
        The protocols, noise laws and ``--convention`` values it supports.
    tasks
        The task keys (``sum``, ``sum/gossip``) whose trackers compose with it.
    exact
        Whether its figure is the exact loss of a view (up to a stated rounding), the
        reference others are compared with pair by pair; otherwise an upper bound.
    cost
        Its cost model (:class:`GridCost`), where its cost is estimated before a run.
    weight
        The sweep's cost weight: a run's steps times it orders and batches the runs.
    kernel_mode
        The mode of the walk trackers' kernels it runs in (``KOV``, ``RDP``, ``MU2``:
        attributes of the kernel modules); ``None``: it does not run in them.
    composes_pld
        Whether it composes each view as a privacy loss distribution.
    gaussian_shift
        Gossip: how one Gaussian shift of a linear Gaussian view becomes (ε, δ):
        ``renyi`` (its linear RDP curve, converted) or ``curve`` (its exact privacy
        curve, μ-GDP); ``None`` where gossip does not offer it.
    marks_reference
        Whether, under ``--convention reference``, its figure is the published method's
        (the text report marks it ``(ref.)``).
    rank
        Its place when a task picks a default (:func:`preferred`): the tightest
        accountant that scales to every run the task offers first (lower first).
    default_within
        Where set, it is a run's default only where netdp estimates its seconds over the
        run (its :attr:`cost`) within this many; beyond, the next by :attr:`rank`.
    no_self_cost
        Seconds per node² of its view entries on the complete graph without self-moves
        (the lumped chain's count laws and their label bounds, which grow about as n² at
        ``T = 100 n``), where it has no :attr:`cost` (:func:`netdp.tasks.base.walk_work`).
    pair_losses
        ``(module, function)`` of a hook that accounts one run itself,
        ``losses(setup, trace, accountant, coalition, keep_pairs) -> PairLosses``, on
        every tracker of :attr:`tasks` and :attr:`kinds`; ``None``: the task's trackers
        compute it.
    """

    name: str
    help: str
    library: tuple[str, str] | None = None
    kinds: tuple[str, ...] = ()
    protocols: tuple[str, ...] = ("walk",)
    noise: tuple[str, ...] = ("gaussian",)
    conventions: tuple[str, ...] = ("sound", "reference")
    tasks: tuple[str, ...] = ()
    exact: bool = False
    cost: GridCost | None = None
    weight: float = 1.0
    kernel_mode: str | None = None
    composes_pld: bool = False
    gaussian_shift: str | None = None
    marks_reference: bool = False
    pair_losses: tuple[str, str] | None = None
    rank: int = 100
    default_within: float | None = None
    no_self_cost: float | None = None

    def __post_init__(self) -> None:
        for axis, allowed in AXES.items():
            bad = [v for v in getattr(self, axis) if v not in allowed]
            if bad:
                raise ValueError(f"accountant {self.name!r}: {axis} must be among "
                                 f"{', '.join(allowed)} (got {', '.join(bad)})")
        if self.gaussian_shift not in (None, "renyi", "curve"):
            raise ValueError(f"accountant {self.name!r}: gaussian_shift must be renyi, "
                             f"curve or None (got {self.gaussian_shift!r})")

    @property
    def tracked(self) -> bool:
        """Whether the simulator offers it (``--accountant``)."""
        return bool(self.kinds)

    @property
    def needs_gaussian(self) -> bool:
        """Whether it accounts Gaussian noise only."""
        return "pure" not in self.noise


_COMPOSITION = "netdp.accounting.composition"
#: The most seconds netdp's estimate of ``pld`` over a run may reach for ``pld`` to be the
#: run's default (:attr:`Entry.default_within`): tight where it is affordable, ``rdp`` (a
#: few seconds) beyond.
DEFAULT_SECONDS = 20.0
#: ``pld``'s seconds per view and node on graphs other than the complete one
#: (:attr:`GridCost.rows`): the median fit of ``experiments/pld_cost.py --graphs`` on the
#: idle 2-core reference machine, refitted in session 22 after the split masses on a
#: coarser grid and the rows grouped by their t-cells (:mod:`netdp.accounting.
#: mixture_rows`): its runs on the graphs that are not vertex-transitive took 0.53 to 1.57
#: times it (``docs/figures/pld_cost_graphs_split.jsonl``; the fit before, 1.04e-4, in
#: ``docs/figures/pld_cost_graphs.jsonl``).
ROWS_COST = (9.75e-5, 1.0)
#: The share of ``ROWS_COST`` ``pld`` takes on the hypercube of 512 nodes and more
#: (:attr:`GridCost.shared`): in the same run the hypercubes of 512 to 2,048 nodes took
#: 0.023 to 0.068 of the rows model (0.038 at 1,024 nodes for ε <= 1; with 8 observers
#: 0.036, and 32 observers of ``netdp simulate --topology hypercube --nodes 1024 --seed 4
#: --accountant pld`` 13.0 s, 0.036): 0.05 errs long at 1,024 nodes and up to 1.35 times
#: short at 512 and 2,048. The hypercubes of 16 to 256 nodes took 0.11 to 0.16 of it (a
#: fixed cost per observer, and the exact laws below ``walk_views.PLD_LAW_WORK``), so below
#: 512 nodes the whole model stands.
SHARED_COST = (0.05, 512)
#: ``rdp``'s seconds per node² without self-moves (:attr:`Entry.no_self_cost`): 5.9 s at
#: n = 100 and 63 s at n = 300 on the 2-core machine, halved.
RDP_NO_SELF_SECONDS = 3e-4
_WALK_TASKS = ("sum", "histogram", "fraction", "itemsets", "multidim", "heavy-hitters",
               "one-bit")
_KINDS = AXES["kinds"]
#: Every accountant: the library's first (in the order of ``ACCOUNTANTS``), the
#: simulator's in the order ``--accountant`` lists them.
ENTRIES = (
    Entry("basic", "basic composition: the sum of the events' (ε, δ)",
          library=(_COMPOSITION, "BasicAccountant")),
    Entry("drv", "the advanced composition theorem (Dwork, Rothblum and Vadhan 2010)",
          library=(_COMPOSITION, "DrvAccountant")),
    Entry("kov", "the reference tracker: KOV composition of per-cycle losses",
          library=(_COMPOSITION, "KovAccountant"), kinds=_KINDS,
          noise=AXES["noise"], tasks=_WALK_TASKS, kernel_mode="KOV",
          marks_reference=True, rank=1),
    Entry("kov-exact", "the optimal composition of identical (ε, δ) events (Kairouz, Oh "
          "and Viswanath 2015)", library=(_COMPOSITION, "KovExactAccountant")),
    Entry("rdp", "Renyi DP of the same Gaussian entries, tighter",
          library=("netdp.accounting.rdp", "RdpAccountant"), kinds=_KINDS,
          protocols=("walk", "gossip"), tasks=("sum", "sgd", "sum/gossip", "sgd/gossip"),
          weight=40.0, kernel_mode="RDP", gaussian_shift="renyi", rank=0,
          no_self_cost=RDP_NO_SELF_SECONDS),
    Entry("pld", "privacy loss distributions, tight: within a few percent of exact; the "
          f"default where netdp estimates it within {DEFAULT_SECONDS:g} s, else rdp",
          library=("netdp.accounting.pld", "PldAccountant"),
          kinds=("complete", "graph", "time-varying"), protocols=("walk", "gossip"),
          tasks=("sum", "sum/gossip"), weight=300.0, kernel_mode="MU2", composes_pld=True,
          gaussian_shift="curve", rank=-1, default_within=DEFAULT_SECONDS,
          cost=GridCost(0.05, 1e-3, complete=(6.9e-7, 6.0e-8), graph=(1.1e-7, 3.5e-8),
                        binned=True, rows=ROWS_COST, shared=SHARED_COST)),
    Entry("gdp", "Gaussian DP: the exact curve of composed Gaussian mechanisms",
          library=("netdp.accounting.gdp", "GdpAccountant")),
    Entry("exact", "the exact loss of each view, walks with Gaussian noise, a few hundred "
          "nodes", kinds=_KINDS, conventions=("sound",), tasks=("sum",), exact=True,
          composes_pld=True,
          cost=GridCost(0.005, 1e-4, complete=(4.3e-7, 1.0e-9), graph=(2.8e-8, 5.7e-8))),
)
_ADDED: dict[str, Entry] = {}  # registered from outside (register / unregister)


def entries() -> tuple[Entry, ...]:
    """Every entry: :data:`ENTRIES`, then the registered ones in their order."""
    return ENTRIES + tuple(_ADDED.values())


def find(name: str) -> Entry | None:
    """The entry of ``name``; ``None`` if no accountant has that name."""
    return next((e for e in entries() if e.name == name), None)


def entry(name: str) -> Entry:
    """The entry of a registered name (``KeyError`` otherwise)."""
    found = find(name)
    if found is None:
        raise KeyError(name)
    return found


def names(*, kind: str | None = None, protocol: str | None = None, task: str | None = None,
          noise: str | None = None, convention: str | None = None,
          library: bool = False) -> tuple[str, ...]:
    """The names of the simulator's accountants (``library``: of the library's instead)
    that support every axis given, in the order of :func:`entries`.

    Examples
    --------
    >>> names()
    ('kov', 'rdp', 'pld', 'exact')
    >>> names(protocol="gossip"), names(noise="pure")
    (('rdp', 'pld'), ('kov',))
    """
    wanted = {"kinds": kind, "protocols": protocol, "noise": noise, "conventions": convention}
    return tuple(e.name for e in entries()
                 if (e.library is not None if library else e.tracked)
                 and all(v is None or v in getattr(e, axis) for axis, v in wanted.items())
                 and (task is None or task in e.tasks))


def preferred(candidates: Sequence[str], noise: str = "gaussian",
              seconds: Callable[[str], float] | None = None) -> tuple[str, ...]:
    """``candidates`` that account this ``noise``, the preferred first: what a run uses when
    ``--accountant`` is not given. The order is :attr:`Entry.rank`, then ``candidates``'
    order, except that an entry with :attr:`Entry.default_within` comes last unless
    ``seconds(name)``, the run's estimate, is within it (without ``seconds``: never).

    Examples
    --------
    >>> preferred(("kov", "rdp", "pld", "exact")), preferred(("kov", "rdp"), "pure")
    (('rdp', 'kov', 'exact', 'pld'), ('kov',))
    >>> preferred(("kov", "rdp", "pld"), seconds=lambda name: 5.0)
    ('pld', 'rdp', 'kov')
    """
    def over(e: Entry) -> bool:
        return e.default_within is not None and (seconds is None
                                                 or not seconds(e.name) <= e.default_within)

    found = [(over(e), e.rank, i, c) for i, c in enumerate(candidates)
             if (e := find(c)) is not None and noise in e.noise]
    return tuple(c for *_, c in sorted(found))


def help_text() -> str:
    """``--accountant``'s list: ``kov (...), rdp (...) or exact (...)``."""
    parts = [f"{e.name} ({e.help})" for e in entries() if e.tracked]
    return ", ".join(parts[:-1]) + (" or " if len(parts) > 1 else "") + parts[-1]


def choice(name: str, param: str = "accountant") -> Entry:
    """The simulator's accountant ``name``, else :class:`~netdp.core.errors.InputError`
    naming ``param`` and the allowed names."""
    found = find(name)
    if found is None or not found.tracked:
        raise InputError(param, f"must be one of {', '.join(names())} (got {name!r})")
    return found


def check_noise(name: str, gaussian: bool, given: str) -> None:
    """:class:`~netdp.core.errors.InputError` (``--accountant``) where accountant ``name``
    cannot account the run's noise (``gaussian``: Gaussian, else ε0-DP noise such as
    Laplace's), naming those that can; ``given`` names the noise in the line.

    Examples
    --------
    >>> check_noise("kov", False, "laplace")
    >>> try:
    ...     check_noise("rdp", False, "laplace")
    ... except InputError as err:
    ...     print(err)
    accountant: rdp accounts Gaussian noise; use --accountant kov with laplace
    """
    axis = "gaussian" if gaussian else "pure"
    found = find(name)  # an unknown name is refused where the names are checked
    if found is not None and axis not in found.noise:
        raise InputError("accountant", f"{name} accounts "
                         f"{'eps0-DP' if gaussian else 'Gaussian'} noise; use --accountant "
                         f"{' or '.join(names(noise=axis))} with {given}")


def load(name: str) -> Any:
    """The library class of ``name`` (its module loaded on first use); ``KeyError`` for a
    name without one."""
    e = entry(name)
    if e.library is None:
        raise KeyError(name)
    return getattr(importlib.import_module(e.library[0]), e.library[1])


def hook(name: str) -> Any:
    """The :attr:`Entry.pair_losses` function of ``name``; ``None`` where it has none."""
    e = entry(name)
    if e.pair_losses is None:
        return None
    return getattr(importlib.import_module(e.pair_losses[0]), e.pair_losses[1])


def register(new: Entry) -> None:
    """Add an accountant (a plug-in: the simulator offers it where it declares support;
    it accounts runs through its :attr:`Entry.pair_losses` hook). ``ValueError`` if the
    name is taken or the entry has neither a library class nor a hook."""
    if find(new.name) is not None:
        raise ValueError(f"an accountant named {new.name!r} is registered already")
    if new.library is None and new.pair_losses is None:
        raise ValueError(f"accountant {new.name!r}: give a library class or a pair_losses "
                         "hook")
    _ADDED[new.name] = new


def unregister(name: str) -> None:
    """Remove an accountant added by :func:`register` (``KeyError`` for any other)."""
    del _ADDED[name]
