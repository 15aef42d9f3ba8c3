"""What the law bound's dense inverse costs, for a run's estimates of memory and time.

The sound bound of a graph walk's count laws (:mod:`netdp.tracking.law_bound`) inverts
one dense matrix a run, up to :data:`DENSE_LIMIT` nodes: the walk's fundamental matrix
(one observer at a time; kept for the next) or the Green function of the chain killed on
a coalition. It holds ``8 n²`` bytes (in place) and takes about ``2 n³`` flops.

>>> from netdp.tasks import make_config
>>> config = make_config(topology="hypercube", nodes=8192)
>>> round(dense_footprint(config, 8192)["the walk's fundamental matrix"][0] / 2**20)
512
>>> dense_footprint(make_config(topology="complete"), 8192)
{}
"""

from __future__ import annotations

from typing import Any

from netdp.graphs.walk_kind import kind_of

DENSE_LIMIT = 10_000  # nodes up to which the law bound inverts a dense matrix
#: Seconds a flop of the dense inverse: 8.5e-12 measured (scipy's LU inverse, n = 8192,
#: 9.3 s for 2 n³ flops with the matrix built, 2-core machine), halved as the other
#: estimates are (:data:`netdp.tasks.base.HOP_SECONDS`).
INVERSE_FLOP_SECONDS = 4e-12
PART = "the walk's fundamental matrix"


def inverts(config: Any, nodes: int) -> bool:
    """Whether a walk run of ``config`` on ``nodes`` nodes inverts the dense matrix: a
    tracked walk on a static graph other than the ring and the complete graph (whose
    trackers are closed forms), under the sound convention, up to :data:`DENSE_LIMIT`."""
    from netdp.graphs.time_varying import names_time_varying

    kind = kind_of(config.topology)
    return (config.protocol == "walk" and config.accountants != ()
            and config.convention == "sound"
            and not kind.implicit and not kind.public_schedule and nodes <= DENSE_LIMIT
            and not names_time_varying(config.topology if config.graph is None
                                       else config.graph, config.graph_format))


def dense_footprint(config: Any, nodes: int) -> dict[str, tuple[float, str]]:
    """Bytes of the dense inverse by part (``{}`` where none is made)."""
    return {PART: (8.0 * nodes**2, "nodes")} if inverts(config, nodes) else {}


def dense_work(config: Any, nodes: int) -> dict[str, tuple[float, str]]:
    """Seconds of the dense inverse by part (``{}`` where none is made)."""
    return ({PART: (2.0 * float(nodes) ** 3 * INVERSE_FLOP_SECONDS, "nodes")}
            if inverts(config, nodes) else {})
