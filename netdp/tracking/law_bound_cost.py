"""What the law bound costs, for a run's estimates of memory and time.

The sound bound of a graph walk's count laws (:mod:`netdp.tracking.law_bound`, what
``kov`` and ``rdp`` take on every graph but the smallest) inverts one dense matrix a run,
up to :data:`DENSE_LIMIT` nodes: the walk's fundamental matrix (one observer at a time;
kept for the next) or the Green function of the chain killed on a coalition. It holds
``8 n²`` bytes (in place) and takes about ``2 n³`` flops. Each observer then sweeps its
views' rows and sums every node's bound: about :data:`OBSERVER_HOP_SECONDS` a hop of the
walk (an observer of ``T / n`` views, ``n`` nodes each).

>>> from netdp.tasks import make_config
>>> config = make_config(topology="hypercube", nodes=8192)
>>> round(law_bound_footprint(config, 8192)[INVERSE][0] / 2**20)
512
>>> law_bound_footprint(make_config(topology="complete"), 8192)
{}
"""

from __future__ import annotations

from typing import Any

from netdp.accounting import registry
from netdp.graphs.walk_kind import kind_of
from netdp.tracking.observer_sampling import SOURCES, observers_of

DENSE_LIMIT = 10_000  # nodes up to which the law bound inverts a dense matrix
#: Seconds a flop of the dense inverse: 8.5e-12 measured (scipy's LU inverse, n = 8192,
#: 9.3 s for 2 n³ flops with the matrix built, 2-core machine), halved as the other
#: estimates are (:data:`netdp.tasks.base.HOP_SECONDS`).
INVERSE_FLOP_SECONDS = 4e-12
#: Seconds an observer's bound takes a hop of the walk: 1.3e-6 to 1.8e-6 measured on the
#: hypercubes of 1,024 to 8,192 nodes at T = 100 n (0.13 to 1.5 s an observer,
#: docs/performance.md), halved.
OBSERVER_HOP_SECONDS = 8e-7
#: Seconds the walk's spectrum takes a cube of its nodes (the pld accountant's Chernoff
#: family, :mod:`netdp.tracking.law_chernoff`): scipy's ``eigh`` measured at 2.1e-9 n³
#: (n = 1,024, 2.2 s) and 1.7e-9 n³ (n = 2,048, 14 s) on the 2-core machine under load,
#: halved.
SPECTRUM_CUBE_SECONDS = 1e-9
INVERSE = "the walk's fundamental matrix"
SPECTRUM = "the walk's spectrum"
OBSERVERS = "the law bound's observers"


def bounds(config: Any, nodes: int) -> bool:
    """Whether a walk run of ``config`` on ``nodes`` nodes takes the law bound: a walk
    tracked by the graph observers' tracker (a task that declares ``--sources``) on a
    static graph other than the ring and the complete graph (whose trackers are closed
    forms), under the sound convention, up to :data:`DENSE_LIMIT` nodes."""
    from netdp.graphs.time_varying import names_time_varying

    kind = kind_of(config.topology)
    try:
        config.get(SOURCES)  # declared by the tasks whose tracker this is
    except KeyError:
        return False
    return (config.protocol == "walk" and config.accountants != ()
            and config.convention == "sound"
            and not kind.implicit and not kind.public_schedule and nodes <= DENSE_LIMIT
            and not names_time_varying(config.topology if config.graph is None
                                       else config.graph, config.graph_format))


def law_bound_footprint(config: Any, nodes: int) -> dict[str, tuple[float, str]]:
    """Bytes of the dense inverse (and of the spectrum, :func:`spectral`) by part (``{}``
    where none is made)."""
    if not bounds(config, nodes):
        return {}
    out = {INVERSE: (8.0 * nodes**2, "nodes")}
    if spectral(config, nodes):
        out[SPECTRUM] = (16.0 * nodes**2, "nodes")  # the eigenvectors and the matrix
    return out


def spectral(config: Any, nodes: int) -> bool:
    """Whether a run that takes the law bound may compute the walk's spectrum: an
    accountant that composes PLDs named (or none: the default may be ``pld``), up to
    :data:`~netdp.tracking.law_chernoff.SPECTRAL_LIMIT` nodes."""
    from netdp.tracking.law_chernoff import SPECTRAL_LIMIT

    names = config.accountants
    return nodes <= SPECTRAL_LIMIT and (
        names is None or any(registry.entry(n).composes_pld for n in names))


def law_bound_work(config: Any, nodes: int, hops: float) -> dict[str, tuple[float, str]]:
    """Seconds of the dense inverse and of the observers' bounds (those of the accountants
    the config names that take it, or of the default), by part (``{}`` where none)."""
    if not bounds(config, nodes):
        return {}
    out = {INVERSE: (2.0 * float(nodes) ** 3 * INVERSE_FLOP_SECONDS, "nodes")}
    if spectral(config, nodes):
        out[SPECTRUM] = (float(nodes) ** 3 * SPECTRUM_CUBE_SECONDS, "nodes")
    names = config.accountants or ("rdp",)  # None: the default, rdp or a modelled one
    takers = sum(registry.entry(n).kernel_mode in ("KOV", "RDP") for n in names)
    if takers:
        observers, members = observers_of(config, nodes)
        out[OBSERVERS] = (takers * observers * members * hops * OBSERVER_HOP_SECONDS,
                          "sources" if config.coalition is None else "coalition")
    return out
