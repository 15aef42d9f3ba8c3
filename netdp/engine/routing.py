"""How a holder picks the next holder from uniform draws: shared by both engines.

A walk's randomness is a stream of uniforms ``u`` in ``[0, 1)`` drawn from the token's
own generator in chunks (``Generator.random`` is chunk-invariant), so the event engine,
which moves tokens one hop at a time, and the vector engine, which moves a whole chunk
at once, follow the same path from the same seed. On explicit graphs the hops run in one
compiled loop (:func:`netdp.engine._kernels.graph_walk`, loaded with the first graph walk).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from netdp.core.errors import InputError
from netdp.engine.trace import holder_dtype
from netdp.graphs.topologies import Topology
from netdp.graphs.walk_kind import WALK_RULES, Walk, resolve_walk  # noqa: F401 (re-exported)

if TYPE_CHECKING:
    from netdp.graphs.time_varying import TimeVaryingTopology

CHUNK = 1 << 18


class Router:
    """Routes one token on one topology.

    Parameters
    ----------
    topology
        The graph.
    walk
        ``simple`` (uniform out-neighbour), ``lazy`` (graphs only) or ``metropolis``; on a
        weighted graph a neighbour in proportion to its edge's weight
        (:func:`netdp.engine._kernels.weighted_walk`).
    """

    def __init__(self, topology: Topology, walk: Walk = "simple") -> None:
        self.topology = topology
        self.walk = walk
        self.kind = topology.walk_kind
        self.dtype = holder_dtype(topology.n)
        self.width = 1
        if self.kind.implicit:
            if walk == "lazy":
                raise InputError("walk", f"lazy applies to explicit graphs; the "
                                 f"{topology.kind} forwards the token uniformly")
            return
        from netdp.engine import _kernels  # numba: only when a walk on a graph runs

        assert topology.indptr is not None and topology.indices is not None
        self._indptr = np.ascontiguousarray(topology.indptr, dtype=np.int64)
        self._indices = np.ascontiguousarray(topology.indices, dtype=np.int64)
        if np.diff(self._indptr).min() < 1:  # the kernel reads a neighbour of every holder
            raise InputError("topology", f"{topology.name}: every node needs an out-neighbour")
        if walk not in _kernels.RULES:
            raise InputError("walk", f"must be simple, lazy or metropolis (got {walk!r})")
        self._rule = _kernels.RULES[walk]
        self._kernel, self._weighted = _kernels.graph_walk, _kernels.weighted_walk
        self._cum = np.zeros(0)  # no weights
        if topology.weights is not None:  # a neighbour in proportion to its edge's weight
            self._cum = _kernels.row_cumsum(self._indptr,
                                            np.ascontiguousarray(topology.weights, float))
        self.width = 1 if walk == "simple" else 2

    def start(self, rng: np.random.Generator) -> int:
        """First holder: node 0 on the ring (public schedule), else uniform."""
        return self.kind.start(rng, self.topology.n)

    def start_law(self) -> np.ndarray:
        """The law of :meth:`start`: ``(n,)`` probabilities."""
        return self.kind.start_law(self.topology.n)

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """Uniforms for ``size`` hops: shape ``(size, width)``; none for the ring."""
        return self.kind.uniforms(rng, size, self.width)

    def route(self, current: int, u: np.ndarray, step: int = 0) -> np.ndarray:
        """The next ``len(u)`` holders after ``current``, given their uniforms (``step``:
        the position of ``current`` in the walk; a fixed graph does not read it)."""
        topo, n, m = self.topology, self.topology.n, len(u)
        if self.kind.implicit:
            return self.kind.route(topo, current, u).astype(self.dtype)
        if not 0 <= current < n:
            raise ValueError(f"holder {current} is not a node of {topo.name} (n = {n})")
        if m == 0:
            return np.empty(0, dtype=self.dtype)
        if u.shape[1] != self.width:
            raise ValueError(f"{self.walk} walk needs {self.width} uniform(s) per hop "
                             f"(got shape {u.shape})")
        out = np.empty(m, dtype=self.dtype)
        if self._cum.size:
            return self._weighted(self._indptr, self._indices, self._cum, int(current), u,
                                  self._rule, out)
        return self._kernel(self._indptr, self._indices, int(current), u, self._rule, out)


class TimedRouter(Router):
    """Routes one token on a time-varying graph: the hop from step ``t`` uses the snapshot
    in force at ``t`` (:class:`netdp.graphs.time_varying.TimeVaryingTopology`), in one
    compiled loop (:func:`netdp.engine._kernels.timed_walk`). With one snapshot it walks
    exactly as :class:`Router` on that graph, from the same uniforms.
    """

    def __init__(self, topology: TimeVaryingTopology, walk: Walk = "simple") -> None:
        from netdp.engine import _kernels

        self.topology = topology  # type: ignore[assignment]
        self._tv = topology
        self.walk = walk
        self.kind = topology.walk_kind
        self.dtype = holder_dtype(topology.n)
        if walk not in _kernels.RULES:
            raise InputError("walk", f"must be simple, lazy or metropolis (got {walk!r})")
        self._rule = _kernels.RULES[walk]
        self.width = 1 if walk == "simple" else 2
        ptrs, idx, cums, offset = [], [], [], 0
        for snap in topology.snapshots:
            assert snap.indptr is not None and snap.indices is not None
            ptr = np.asarray(snap.indptr, np.int64)
            weights = (np.ones(snap.indices.size) if snap.weights is None
                       else np.asarray(snap.weights, float))
            ptrs.append(ptr + offset)
            idx.append(np.asarray(snap.indices, np.int64))
            cums.append(_kernels.row_cumsum(ptr, np.ascontiguousarray(weights)))
            offset += snap.indices.size
        self._ptr = np.ascontiguousarray(np.stack(ptrs))
        self._idx = np.ascontiguousarray(np.concatenate(idx))
        self._cums = np.ascontiguousarray(np.concatenate(cums))
        self._timed = _kernels.timed_walk

    def route(self, current: int, u: np.ndarray, step: int = 0) -> np.ndarray:
        n, m = self.topology.n, len(u)
        if not 0 <= current < n:
            raise ValueError(f"holder {current} is not a node of {self.topology.name} "
                             f"(n = {n})")
        out = np.empty(m, dtype=self.dtype)
        if m == 0:
            return out
        if u.shape[1] != self.width:
            raise ValueError(f"{self.walk} walk needs {self.width} uniform(s) per hop "
                             f"(got shape {u.shape})")
        tv = self._tv
        return self._timed(self._ptr, self._idx, self._cums, tv.slots, tv.period,
                           tv.after == "cycle", int(step), int(current), u, self._rule, out)


def router(topology: Any, walk: Walk = "simple") -> Router:
    """The router of ``topology``: :class:`TimedRouter` on a time-varying graph, else
    :class:`Router`."""
    from netdp.graphs.time_varying import TimeVaryingTopology

    if isinstance(topology, TimeVaryingTopology):
        return TimedRouter(topology, walk)
    return Router(topology, walk)
