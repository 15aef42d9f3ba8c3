"""Correlated Gaussian noise for gossip: DECOR's pairwise-cancelling secrets, and a user's
covariance, beside every node's independent draw.

Every node u adds ``η_u`` to its value once (units of the sensitivity Δ throughout).

- **Independent** (Muffliato): ``η = σ ξ``, ``ξ ~ N(0, I)``.
- **DECOR** (Allouah, Koloskova, El Firdoussi, Jaggi, Guerraoui, "The Privacy Power of
  Correlated Noise in Decentralized Learning", ICML 2024, arXiv 2405.01031): the two ends
  of every edge ``{i, j}`` (``i < j``) share a secret ``s_ij ~ N(0, σ_cor²)``, which ``i``
  adds and ``j`` subtracts: ``η = σ ξ + σ_cor D s`` with ``D`` the signed incidence
  matrix. The secrets cancel in the sum (``Σ_u η_u = σ Σ_u ξ_u``: the mean's error is the
  independent noise's alone) and ``Cov(η) = σ² I + σ_cor² L``, ``L`` the Laplacian.
- **A user's covariance** ``C`` (``n × n``, positive semi-definite, in units of Δ²):
  ``η = σ ξ + R g`` with ``R Rᵀ = C`` (CorN-DSGD's and Whisper D-SGD's covariances are
  such matrices; DECOR's part is ``σ_cor² L``).

**What a node knows of the noise.** Its own draw ``ξ_v``, the secrets of its edges
(DECOR), and its own correlated term ``(R g)_v`` (nothing else is said of how a user's
covariance was made, so nothing else is assumed known); a coalition pools what its
members know. Given that, the noise of the others is Gaussian, and
:meth:`CorrelatedNoise.conditional` gives its covariance: the known nodes' noise is
known exactly (their rows and columns are 0), DECOR's secrets on the known nodes' edges
drop out of the Laplacian, and a user's part is conditioned on the known nodes' terms
(its Schur complement). So a node knows more than DECOR's own covariance ``σ_cor² L``
would say if given as a user's matrix: there it knows only its sum of secrets, not each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from netdp.core.errors import check
from netdp.core.reading import read_text

#: Largest ratio of DECOR's secrets' std to the independent noise's (the conditioning
#: of the exact loss's solve).
MAX_RATIO = 1e6
#: Relative tolerance of a user covariance's symmetry and of its smallest eigenvalue.
PSD_TOL = 1e-9
#: A user covariance's entries below this (units of Δ², a std of 1e-15 Δ) are 0: no
#: noise to speak of, and their inverses would overflow.
TINY = 1e-30


@dataclass(frozen=True, eq=False)
class CorrelatedNoise:
    """The noise every node adds once: independent, DECOR secrets, a user's covariance.

    Attributes
    ----------
    sigma
        Std of every node's independent draw (units of Δ), > 0.
    sigma_cor
        Std of each edge's DECOR secret (units of Δ); 0: none.
    edges
        ``(E, 2)`` the graph's edges ``i < j``, one secret each (DECOR).
    covariance
        A user's ``n × n`` covariance (units of Δ²), or ``None``.

    Examples
    --------
    >>> import numpy as np
    >>> path = CorrelatedNoise(1.0, 2.0, np.array([[0, 1], [1, 2]]))
    >>> path.covariance_matrix(3)  # σ² I + σ_cor² L
    array([[ 5., -4.,  0.],
           [-4.,  9., -4.],
           [ 0., -4.,  5.]])
    >>> path.conditional(np.array([0]), np.arange(3))  # node 0 knows ξ_0 and s_01
    array([[ 0.,  0.,  0.],
           [ 0.,  5., -4.],
           [ 0., -4.,  5.]])
    """

    sigma: float
    sigma_cor: float = 0.0
    edges: np.ndarray | None = None
    covariance: np.ndarray | None = None

    def __post_init__(self) -> None:
        check(self.sigma > 0, "sigma", f"the independent noise must be > 0 (got {self.sigma})")
        check(self.sigma_cor >= 0, "correlated-noise", f"must be >= 0 (got {self.sigma_cor})")
        check(self.sigma_cor == 0 or self.edges is not None, "correlated-noise",
              "DECOR's secrets need the graph's edges")
        check(self.sigma_cor <= MAX_RATIO * self.sigma, "correlated-noise",
              f"must be at most {MAX_RATIO:g} times --sigma, the independent noise's std "
              f"(got {self.sigma_cor:g} for sigma {self.sigma:g}): beyond, floating point "
              "cannot resolve the exact loss")

    @property
    def correlated(self) -> bool:
        """Whether any noise is correlated (else it is Muffliato's independent noise)."""
        return self.sigma_cor > 0 or self.covariance is not None

    def describe(self) -> dict[str, Any]:
        """JSON form (without the matrices)."""
        out: dict[str, Any] = {"sigma": self.sigma}
        if self.sigma_cor > 0:
            assert self.edges is not None
            out["decor_sigma"] = self.sigma_cor
            out["decor_pairs"] = int(len(self.edges))
        if self.covariance is not None:
            out["covariance"] = f"{self.covariance.shape[0]} x {self.covariance.shape[1]}"
        return out

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``η`` (units of Δ): ``ξ`` first (so the independent noise alone is the draw
        Muffliato's run makes), then the secrets, then the user's part."""
        eta = self.sigma * rng.standard_normal(n)
        if self.sigma_cor > 0:
            assert self.edges is not None
            s = self.sigma_cor * rng.standard_normal(len(self.edges))
            np.add.at(eta, self.edges[:, 0], s)
            np.subtract.at(eta, self.edges[:, 1], s)
        if self.covariance is not None:
            eta += root(self.covariance) @ rng.standard_normal(n)
        return eta

    def covariance_matrix(self, n: int) -> np.ndarray:
        """``Cov(η)``, ``n × n`` (units of Δ²): what an eavesdropper faces, knowing no
        secret: ``σ² I + σ_cor² L`` (``L`` the Laplacian of the secret pairs) ``+ C``."""
        cov = self.sigma**2 * np.eye(n)
        if self.sigma_cor > 0:
            assert self.edges is not None
            a, b = self.edges[:, 0], self.edges[:, 1]
            np.add.at(cov, (a, a), self.sigma_cor**2)
            np.add.at(cov, (b, b), self.sigma_cor**2)
            np.subtract.at(cov, (a, b), self.sigma_cor**2)
            np.subtract.at(cov, (b, a), self.sigma_cor**2)
        if self.covariance is not None:
            cov += self.covariance
        return cov

    def conditional(self, known: np.ndarray, on: np.ndarray) -> np.ndarray:
        """Covariance of ``η`` on the nodes ``on`` (sorted ids) given what the nodes
        ``known`` know (module docstring); rows and columns of known nodes are 0. As
        ``F Fᵀ`` of :meth:`factor`: never above the exact one, equal to it but for
        rounding (a user's part that rounding cannot resolve counted as known).

        Parameters
        ----------
        known
            The observer, or a coalition's members.
        on
            The nodes whose noise the covariance is of (a view's ball).
        """
        F = self.factor(known, on)
        return F @ F.T

    def factor(self, known: np.ndarray, on: np.ndarray) -> np.ndarray:
        """``F`` (``on.size`` rows) with ``F Fᵀ ⪯`` :meth:`conditional`'s covariance,
        equal to it but for rounding, built from the draws themselves so that a solve with
        it is conditioned like the noise's stds, not their squares: a column ``σ' e_i``
        per free node, ``σ_cor (e_a - e_b)`` per secret no known node holds (the part on
        ``on``), and a factor of a user's part conditioned on the known terms
        (:meth:`_user_factor`), whose rounding is taken from the independent part
        (``σ'² = σ² - slack``), so that the factor never holds more noise than there is.
        """
        on = np.asarray(on, dtype=np.int64)
        known = np.asarray(known, dtype=np.int64)
        m = on.size
        free = ~np.isin(on, known)
        blocks, variance = [], self.sigma**2
        if self.covariance is not None:
            user, slack = self._user_factor(known, on, free)
            blocks.append(user)
            variance -= slack
        blocks.insert(0, math.sqrt(variance) * np.eye(m)[:, free])
        if self.sigma_cor > 0:
            assert self.edges is not None
            a, b = self.edges[:, 0], self.edges[:, 1]
            where = np.full(int(max(on.max(initial=0), self.edges.max(initial=0))) + 1, -1)
            where[on] = np.arange(m)
            secret = ~(np.isin(a, known) | np.isin(b, known)) & ((where[a] >= 0)
                                                                | (where[b] >= 0))
            cols = np.zeros((m, int(secret.sum())))
            idx = np.arange(cols.shape[1])
            wa, wb = where[a[secret]], where[b[secret]]
            cols[wa[wa >= 0], idx[wa >= 0]] = self.sigma_cor
            cols[wb[wb >= 0], idx[wb >= 0]] = -self.sigma_cor
            blocks.append(cols)
        return np.hstack(blocks)

    def _user_factor(self, known: np.ndarray, on: np.ndarray,
                     free: np.ndarray) -> tuple[np.ndarray, float]:
        """A factor ``U`` of the user's part on ``on`` given the known nodes' terms, and
        ``slack``, a bound on how far ``U Uᵀ`` may exceed the exact conditional covariance
        in rounding. The known terms' covariance ``C_KK`` is diagonalised; directions of
        it above ``1e-6`` of its largest are conditioned on exactly (a Schur complement),
        the others' information goes into ``slack`` (``‖c‖² / w`` each where ``w`` is
        resolved, else the whole of ``C`` on ``on``, which bounds it: ``C`` is PSD).
        Where ``slack`` would take more than half of the independent variance, the
        user's part is counted as known (``U`` empty): the
        view then faces less noise than it does, which overstates the loss (sound)."""
        C = self.covariance
        assert C is not None
        eps = float(np.finfo(float).eps)
        part = C[np.ix_(on, on)]
        scale = float(np.abs(part).sum(axis=1).max(initial=0.0))  # >= its norm
        slack = 0.0
        if known.size:
            w, V = np.linalg.eigh(C[np.ix_(known, known)])
            top = max(float(w.max()), 0.0)
            cross = C[np.ix_(on, known)] @ V  # the known terms' directions, their reach
            keep = w > 1e-6 * top
            if (~keep).any():  # their reduction is at most ‖c‖² / w, and at most C's
                dropped = w[~keep]
                resolved = bool((dropped >= 1e3 * eps * top).all())
                missed = float(((cross[:, ~keep] ** 2).sum(axis=0)
                                / np.maximum(dropped, 1e-300)).sum()) if resolved else scale
                slack += min(missed, scale)
            reach = cross[:, keep] / np.sqrt(w[keep])
            part = part - reach @ reach.T
            scale += float((reach**2).sum())
        part = 0.5 * (part + part.T)
        part[~free] = 0.0
        part[:, ~free] = 0.0
        lam, Q = np.linalg.eigh(part)
        slack += 64.0 * (on.size + known.size + 1) * eps * max(scale, float(np.abs(lam).max(
            initial=0.0)))
        if slack > 0.5 * self.sigma**2:
            return np.zeros((on.size, 0)), 0.0
        return Q * np.sqrt(np.clip(lam, 0.0, None)), slack


def root(C: np.ndarray) -> np.ndarray:
    """A symmetric square root ``R`` of a positive semi-definite ``C`` (``R Rᵀ = C``;
    rounding's negative eigenvalues set to 0)."""
    w, V = np.linalg.eigh(C)
    return (V * np.sqrt(np.clip(w, 0.0, None))) @ V.T


def check_covariance(C: np.ndarray, n: int, name: str = "noise-covariance") -> np.ndarray:
    """A user's covariance as float64, or one line naming ``name``: ``n × n``, finite,
    symmetric and positive semi-definite (to :data:`PSD_TOL` of its largest entry);
    entries below :data:`TINY` in magnitude are 0."""
    check(C.ndim == 2 and C.shape == (n, n), name,
          f"must be an n x n matrix for the graph's {n} nodes (got shape {C.shape})")
    check(np.issubdtype(C.dtype, np.number) and not np.issubdtype(C.dtype, np.complexfloating),
          name, f"must hold real numbers (got {C.dtype})")
    C = np.asarray(C, dtype=np.float64)
    check(bool(np.isfinite(C).all()), name, "entries must be finite")
    C = np.where(np.abs(C) < TINY, 0.0, C)  # no noise to speak of, and no overflow
    scale = float(np.abs(C).max())
    check(scale <= 1e12, name, "entries must lie in [-1e12, 1e12] (units of the "
          "sensitivity squared)")
    check(bool(np.allclose(C, C.T, rtol=0, atol=PSD_TOL * max(scale, 1e-300))), name,
          "must be symmetric (a covariance)")
    C = 0.5 * (C + C.T)
    if scale > 0:
        low = float(np.linalg.eigvalsh(C).min())
        check(low >= -PSD_TOL * scale * n, name, "must be positive semi-definite (a "
              f"covariance); its smallest eigenvalue is {low:.3g}")
    return C


#: Most lines of a ``--secret-pairs`` file read (a graph's edges: well within).
MAX_PAIR_LINES = 10_000_000


def read_secret_pairs(path: str, topology: Any, adj: Any) -> np.ndarray:
    r"""``(E, 2)`` the pairs ``i < j`` that share a DECOR secret, from a text file of one
    pair per line (``a b`` or ``a,b``; node ids, or the graph's labels; ``#`` starts a
    comment), each an edge of the graph, none twice; one line naming the file's line for
    anything else (never quoting the file).

    Examples
    --------
    >>> import os, tempfile
    >>> from netdp.graphs.topologies import build
    >>> from netdp.graphs.gossip_matrix import GossipPlan
    >>> g = build("florentine")
    >>> path = os.path.join(tempfile.mkdtemp(), "pairs.txt")
    >>> _ = open(path, "w").write("Medici Tornabuoni  # a comment\n1,8\n")
    >>> read_secret_pairs(path, g, GossipPlan.build(g, "metropolis", False).adj).tolist()
    [[1, 7], [1, 8]]
    """
    name = Path(path).name
    text = read_text(path, "secret-pairs", "a UTF-8 text file of node pairs")
    labels = tuple(getattr(topology, "labels", ()) or ())
    by_label = {str(x): i for i, x in reversed(list(enumerate(labels)))}
    graph, n = getattr(topology, "name", "the graph"), int(adj.shape[0])
    lines = text.splitlines()
    check(len(lines) <= MAX_PAIR_LINES, "secret-pairs", f"{name}: more than "
          f"{MAX_PAIR_LINES} lines")
    seen: dict[tuple[int, int], int] = {}
    for number, line in enumerate(lines, 1):
        fields = line.split("#", 1)[0].replace(",", " ").split()
        if not fields:
            continue
        where = f"{name}, line {number}"
        check(len(fields) == 2, "secret-pairs", f"{where}: expected two nodes, 'a b'")
        ids = []
        for which, field in zip(("first", "second"), fields, strict=True):
            whole = field.isascii() and field.isdigit() and len(field) <= 18
            node = int(field) if whole and int(field) < n else by_label.get(field)
            check(node is not None, "secret-pairs", f"{where}: the {which} node is not a "
                  f"node of {graph} (an id in 0..{n - 1} or one of its labels)")
            ids.append(int(node))  # type: ignore[arg-type]
        a, b = min(ids), max(ids)
        check(a != b, "secret-pairs", f"{where}: a node shares no secret with itself")
        check(bool(adj[a, b] != 0), "secret-pairs", f"{where}: the pair is not an edge of "
              f"{graph}; a secret is shared with a neighbour")
        check((a, b) not in seen, "secret-pairs", f"{where}: the pair is given twice (line "
              f"{seen.get((a, b))} too)")
        seen[(a, b)] = number
    check(bool(seen), "secret-pairs", f"{name}: no pair; without secrets leave "
          "--correlated-noise out")
    return np.array(list(seen), dtype=np.int64)


def graph_edges(adj: Any) -> np.ndarray:
    """``(E, 2)`` the edges ``i < j`` of a symmetric sparse adjacency, in row order."""
    from scipy import sparse

    upper = sparse.triu(sparse.csr_array(adj), k=1).tocoo()
    order = np.lexsort((upper.col, upper.row))
    return np.stack([upper.row[order], upper.col[order]], axis=1).astype(np.int64)
