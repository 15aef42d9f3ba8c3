"""How a holder picks the next holder from uniform draws: shared by both engines.

A walk's randomness is a stream of uniforms ``u`` in ``[0, 1)`` drawn from the token's
own generator in chunks (``Generator.random`` is chunk-invariant), so the event engine,
which moves tokens one hop at a time, and the vector engine, which moves a whole chunk
at once, follow the same path from the same seed.
"""

from __future__ import annotations

from typing import Literal, cast

import numpy as np

from netdp.engine.trace import holder_dtype
from netdp.errors import InputError
from netdp.topology import Topology

Walk = Literal["simple", "metropolis"]
CHUNK = 1 << 18


def resolve_walk(topology: Topology, walk: str = "auto") -> Walk:
    """Pick the walk rule: Metropolis-Hastings (uniform stationary law) where possible.

    ``metropolis`` proposes a uniform neighbour ``w`` and moves there with probability
    ``min(1, d_u / d_w)`` (else stays), so every step's holder is uniform when the start
    is: summation estimates stay unbiased on irregular graphs. It needs undirected edges;
    on regular graphs both rules are the same walk.
    """
    if walk == "auto":
        return "simple" if topology.directed or topology.is_regular else "metropolis"
    if walk not in ("simple", "metropolis"):
        raise InputError("walk", f"must be auto, simple or metropolis (got {walk!r})")
    if walk == "metropolis" and topology.directed:
        raise InputError("walk", "metropolis needs an undirected graph; use --walk simple")
    return cast(Walk, walk)  # one of the two, checked above


class Router:
    """Routes one token on one topology.

    Parameters
    ----------
    topology
        The graph.
    walk
        ``simple`` (uniform out-neighbour) or ``metropolis``.
    """

    def __init__(self, topology: Topology, walk: Walk = "simple") -> None:
        self.topology = topology
        self.walk = walk
        self.width = 2 if (walk == "metropolis" and topology.kind == "graph") else 1
        self.dtype = holder_dtype(topology.n)
        if topology.kind == "graph":  # plain lists: the per-hop kernel is pure Python
            assert topology.indptr is not None and topology.indices is not None
            self._indptr = topology.indptr.tolist()
            self._indices = topology.indices.tolist()

    def start(self, rng: np.random.Generator) -> int:
        """First holder: node 0 on the ring (public schedule), else uniform."""
        if self.topology.kind == "ring":
            return 0
        return int(rng.random() * self.topology.n)

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """Uniforms for ``size`` hops: shape ``(size, width)``; none for the ring."""
        if self.topology.kind == "ring":
            return np.empty((size, 0))
        return rng.random((size, self.width))

    def route(self, current: int, u: np.ndarray) -> np.ndarray:
        """The next ``len(u)`` holders after ``current``, given their uniforms."""
        topo, n, m = self.topology, self.topology.n, len(u)
        if topo.kind == "ring":
            return ((current + 1 + np.arange(m, dtype=np.int64)) % n).astype(self.dtype)
        if topo.kind == "complete":
            if topo.self_moves:
                return (u[:, 0] * n).astype(self.dtype)
            steps = 1 + (u[:, 0] * (n - 1)).astype(np.int64)
            return ((current + np.cumsum(steps)) % n).astype(self.dtype)
        return np.fromiter(self._graph_kernel(current, u), dtype=self.dtype, count=m)

    def _graph_kernel(self, current: int, u: np.ndarray):
        """Hop by hop on CSR lists: the one loop over steps, kept small."""
        indptr, indices, h = self._indptr, self._indices, current
        if self.width == 1:
            for (x,) in u.tolist():
                lo = indptr[h]
                h = indices[lo + int(x * (indptr[h + 1] - lo))]
                yield h
            return
        for x, accept in u.tolist():
            lo, hi = indptr[h], indptr[h + 1]
            w = indices[lo + int(x * (hi - lo))]
            if accept * (indptr[w + 1] - indptr[w]) < hi - lo:  # accept w.p. min(1, d_h/d_w)
                h = w
            yield h
