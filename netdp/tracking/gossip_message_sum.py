"""The paper's gossip accounting (the ``message-sum`` convention): every message a Gaussian
mechanism of its own, the losses added up (Cyffers et al., NeurIPS 2022, as in spec
``network-dp.md`` §3.1).

It is not a bound on the observer's joint view (the messages share their noise: see
:mod:`netdp.tracking.gossip`, whose :func:`~netdp.tracking.gossip.joint` is the sound
figure); it is kept as the paper's reference."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse

from netdp.core import progress
from netdp.core.errors import check
from netdp.engine.averaging import iterate, resolve_gamma
from netdp.tracking.gossip import (
    MAX_DENSE_NODES,
    GossipLosses,
    check_inputs,
    check_regular,
    check_same_rows,
    choose_nodes,
    unit_columns,
)


def message_sum(W: Any, adj: sparse.csr_array, steps: int, *, accelerated: bool = False,
                gamma: float | None = None, sources: Any = None, samples: int | None = None,
                rng: np.random.Generator | None = None, transitive: bool = False,
                block: int = 256) -> GossipLosses:
    """The paper's pairwise coefficients (spec §3.1), for every ordered pair u → v:

    ``C[u, v] = Σ_{t=0..T} Σ_{w ∈ N(v)} (A_t)_{wu}² / ‖(A_t)_{w,:}‖²`` (v excluded from
    the w's), with ``A_t = W^t``, or ``P_t(W)`` when accelerated (the polynomial actually
    applied). The term is u's weight in the message ``x_t[w]`` over that message's noise
    variance ``σ² ‖(A_t)_{w,:}‖²`` (the Rényi divergence of that one message, in units of
    ``α Δ²/(2σ²)``). Use :meth:`GossipLosses.capped` for ``min(C, 1)``. This sum is **not**
    an upper bound on the loss of v's joint view (module docstring): see :func:`joint`.
    On the hypercube it falls with distance for plain gossip; accelerated, it does not
    (far pairs get more than middle ones: ``P_t(W)`` has negative entries).

    Parameters
    ----------
    W, adj
        Gossip matrix and adjacency (:func:`adjacency`), n × n.
    steps
        T; the sum runs over t = 0..T (T + 1 states, t = 0 included: the neighbours of u
        receive ``z_u`` itself, so ``C = 1`` for them).
    accelerated, gamma
        As in :func:`gossip`.
    sources, samples, rng, transitive
        Which sources (rows) to compute, one of:

        - none of them: ``dense``, all pairs. Every ``A_t`` as a dense n × n array (W
          times the previous one: ``O(T n nnz(W))`` flops, ``O(T n²)`` elementwise work,
          about five n × n float64 arrays of memory); row norms are row sums of ``A_t²``.
        - ``sources`` (node ids): ``sources``. u's column ``A_t e_u`` by sparse mat-vecs
          (``O(T nnz)`` per source), but the row norms ``‖(A_t)_{w,:}‖²`` are needed for
          every w: computed exactly (:func:`row_norms`), which costs as much as the dense
          path (``O(T n nnz)`` flops) with ``O(n · block)`` memory, once for all sources.
        - ``samples`` = k with ``rng``: ``sampled``, k distinct sources drawn uniformly;
          :meth:`GossipLosses.mean` and :meth:`~GossipLosses.stderr` estimate the
          all-pairs mean. Same cost as ``sources``.
        - ``transitive=True``: ``transitive``, one source (``sources[0]``, default 0). The
          caller asserts that the graph is vertex-transitive and W invariant under its
          automorphisms (Metropolis or lazy weights on a hypercube, cycle, torus, complete
          graph: :func:`vertex_transitive`); then every row norm equals
          ``‖A_t e_u‖²`` and the cost is ``O(T nnz)``. Checked (necessary conditions):
          regular degrees, and a second source gives the same row norms and the same
          sorted row; otherwise ``InputError("topology", ...)``.
    block
        Sources per block of mat-vecs (memory ``O(n · block)``).
    """
    n = check_inputs(W, adj, steps)
    g = resolve_gamma(W, accelerated, gamma)
    nodes, method = choose_nodes(n, sources, samples, rng, transitive)
    if method == "dense":
        check(n <= MAX_DENSE_NODES, "nodes", f"all pairs at once take n <= {MAX_DENSE_NODES} "
              f"(got {n}); pass sources, samples or transitive")
        values = _dense_sum(W, adj, steps, g)
    elif method == "transitive":
        values = _transitive_sum(W, adj, steps, g, int(nodes[0]))
    else:
        rn = row_norms(W, steps, accelerated=g is not None, gamma=g, block=block)
        values = np.concatenate([_source_rows(W, adj, nodes[i:i + block], steps, g, rn)
                                 for i in range(0, len(nodes), block)])
    return GossipLosses(values, nodes, "source", "message-sum", method, steps, g)


def row_norms(W: Any, steps: int, accelerated: bool = False, gamma: float | None = None,
              block: int = 256) -> np.ndarray:
    """``‖(A_t)_{w,:}‖²`` for t = 0..T and every w, exactly: shape ``(steps + 1, n)``.

    ``A_t`` is symmetric, so this is the squared norm of its column ``A_t e_w``
    (``(W^{2t})_{ww}`` for plain gossip). Computed on blocks of unit vectors: ``O(T n nnz)``
    flops, ``O(n · block)`` memory.
    """
    n = check_inputs(W, None, steps)
    g = resolve_gamma(W, accelerated, gamma)
    out = np.empty((steps + 1, n))
    for start in progress.bar(range(0, n, block), desc="message sum: row norms",
                              unit="block"):
        cols = np.arange(start, min(n, start + block))
        for t, Y in enumerate(iterate(W, unit_columns(n, cols), steps, g)):
            out[t, cols] = np.einsum("ij,ij->j", Y, Y)
    return out


def _dense_sum(W: Any, adj: sparse.csr_array, steps: int, gamma: float | None) -> np.ndarray:
    n = W.shape[0]
    S = np.zeros((n, n))  # S[w, u] = Σ_t (A_t)_{wu}² / ‖(A_t)_{w,:}‖²
    buf = np.empty((n, n))
    for A in iterate(W, np.eye(n), steps, gamma):
        np.square(A, out=buf)
        norms = buf.sum(axis=1)  # row norms, from the rows themselves
        np.divide(buf, norms[:, None], out=buf, where=norms[:, None] > 0)
        buf[norms == 0] = 0.0  # a message with no noise is a constant: no information
        S += buf
    del buf, A  # the iteration's arrays go before the last product
    out = adj @ S  # out[v, u] = Σ_{w ∈ N(v)} S[w, u] = C[u, v]
    del S
    return out.T


def _source_rows(W: Any, adj: sparse.csr_array, nodes: np.ndarray, steps: int,
                 gamma: float | None, norms: np.ndarray) -> np.ndarray:
    n = W.shape[0]
    S = np.zeros((n, len(nodes)))
    for t, Y in enumerate(iterate(W, unit_columns(n, nodes), steps, gamma)):
        rn = norms[t][:, None]
        S += np.divide(Y * Y, rn, out=np.zeros_like(Y), where=rn > 0)
    return np.ascontiguousarray((adj @ S).T)


def _transitive_sum(W: Any, adj: sparse.csr_array, steps: int, gamma: float | None,
                    u: int) -> np.ndarray:
    n = W.shape[0]
    check_regular(adj)
    other = (u + n // 2 + 1) % n if n > 2 else 1 - u
    cols = np.array([u, other])
    norms = np.empty((steps + 1, 2))
    for t, Y in enumerate(iterate(W, unit_columns(n, cols), steps, gamma)):
        norms[t] = np.einsum("ij,ij->j", Y, Y)
    check(bool(np.allclose(norms[:, 0], norms[:, 1], rtol=1e-12, atol=0)), "topology",
          f"not vertex-transitive for this gossip matrix: nodes {u} and {other} have "
          "different row norms; pass sources or samples instead")
    rn = np.repeat(norms[:, :1], n, axis=1)  # ‖(A_t)_{w,:}‖² is the same for every w
    rows = _source_rows(W, adj, cols, steps, gamma, rn)
    check_same_rows(rows[0], rows[1], u, other)
    return rows[:1]
