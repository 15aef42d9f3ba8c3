"""Gossip matrices of a time-varying graph: one per snapshot, by the static rules.

Snapshot ``k`` of a :class:`~netdp.graphs.time_varying.TimeVaryingTopology` gets the
gossip matrix the static code would give that graph alone
(:mod:`netdp.graphs.gossip_matrix`): Metropolis on its (weighted) degrees, or lazy
weights. A node without a neighbour in a snapshot keeps its value there (its row is
``e_i``: the snapshot's self-loops, added for isolated nodes, are not gossip edges).
Gossip round ``t`` (the messages carrying ``x_t`` and the step ``x_{t+1} = W x_t``) uses
the matrix of ``snapshot_at(t)``, as the walk's move from ``t`` to ``t + 1`` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse

from netdp.core.errors import check

if TYPE_CHECKING:
    from netdp.graphs.time_varying import TimeVaryingTopology

MATRICES = ("metropolis", "lazy")
"""The gossip matrix rules a time-varying graph takes (a user's file is one graph's)."""


@dataclass(frozen=True, eq=False)
class SnapshotGossip:
    """What gossip averaging on a time-varying graph needs, computed once.

    Attributes
    ----------
    topology
        The time-varying graph.
    matrix
        The rule: ``metropolis`` or ``lazy``.
    matrices
        ``W_k`` per snapshot: symmetric, doubly stochastic, on snapshot ``k``'s edges
        (CSR, sorted indices).
    adjacencies
        Snapshot ``k``'s undirected 0/1 adjacency, no self-loops.
    union
        The adjacency of the union of the snapshots (hop distances for the reports).
    """

    topology: TimeVaryingTopology
    matrix: str
    matrices: tuple[sparse.csr_array, ...]
    adjacencies: tuple[sparse.csr_array, ...]
    union: sparse.csr_array

    @property
    def n(self) -> int:
        """Number of nodes."""
        return self.topology.n

    def snapshot(self, t: int) -> int:
        """The snapshot in force at round ``t``."""
        return int(self.topology.snapshot_at(t))

    def round_matrices(self, steps: int) -> list[sparse.csr_array]:
        """``[W_{s(0)}, ..., W_{s(steps-1)}]``: the matrix of each averaging step
        ``x_{t+1} = W_{s(t)} x_t`` (shared objects, one per snapshot)."""
        return [self.matrices[self.snapshot(t)] for t in range(steps)]

    def round_adjacencies(self, steps: int) -> list[sparse.csr_array]:
        """The adjacency carrying the messages of each round ``t = 0..steps``."""
        return [self.adjacencies[self.snapshot(t)] for t in range(steps + 1)]


def gossip_plan(tv: TimeVaryingTopology, matrix: str = "metropolis") -> SnapshotGossip:
    """The per-snapshot gossip matrices of ``tv`` (built once per rule, cached on ``tv``).

    Parameters
    ----------
    tv
        Undirected snapshots.
    matrix
        ``metropolis`` (:func:`~netdp.graphs.gossip_matrix.metropolis`: ``1 / (1 +
        max(d_u, d_v))``, weighted ``w_uv / (w̄ + max(d_u, d_v))`` with the snapshot's
        weighted degrees and mean edge weight) or ``lazy``.

    Raises
    ------
    InputError
        ``gossip-matrix`` for another rule, ``topology`` for directed snapshots.
    """
    check(matrix in MATRICES, "gossip-matrix", "a time-varying graph takes the metropolis "
          f"or lazy rule per snapshot (got {matrix!r})")
    key = ("gossip", matrix)
    if key not in tv._cache:
        tv._cache[key] = _build(tv, matrix)
    plan: SnapshotGossip = tv._cache[key]
    return plan


def gossip_matrices(tv: TimeVaryingTopology, matrix: str = "metropolis"
                    ) -> list[sparse.csr_array]:
    """``[W_0, ..., W_{K-1}]``, one per snapshot (:func:`gossip_plan`)."""
    return list(gossip_plan(tv, matrix).matrices)


def _build(tv: TimeVaryingTopology, matrix: str) -> SnapshotGossip:
    from netdp.graphs import gossip_matrix as GM

    check(not tv.directed, "topology", f"{tv.name} is directed; gossip needs undirected edges")
    rule = GM.metropolis if matrix == "metropolis" else GM.lazy
    mats, adjs = [], []
    for snap in tv.snapshots:
        adj = GM.adjacency(snap)
        adjs.append(adj)
        # nobody talks in an empty snapshot: every node keeps its value
        mats.append(rule(snap) if adj.nnz else sparse.csr_array(sparse.identity(snap.n,
                                                                                format="csr")))
    union = sum(adjs[1:], adjs[0])
    union = sparse.csr_array((union > 0).astype(np.float64))
    union.sort_indices()
    return SnapshotGossip(tv, matrix, tuple(mats), tuple(adjs), union)

