"""Published pairwise bounds of random walks on graphs, per ordered pair ``(u, v)``.

Two closed forms of the literature, mapped onto netdp's sum walk (a token of ``T`` steps,
every holder adds its value and ``N(0, σ²)``; ``z = σ / Δ`` is the noise per contribution
in units of the sensitivity ``Δ``, the width of the value range; replace-one neighbours):

``icml2024`` (Cyffers, Bellet & Upadhyay, ICML 2024, arXiv 2402.07471)
    The Rényi closed form of random-walk DP-SGD, spec network-dp.md §3.2:
    ``R_uv(α) = α c_uv / (2 z²)`` per token, ``c_uv = (T/n)(ln T / n + Σ_{t=1}^{T}
    ((P^t)_uv − 1/n) / t)`` (:func:`netdp.tracking.graph_walk.icml_coefficients`), tokens
    composed, converted to (ε, δ) at the target δ.
``pn-f-dp`` (Li, Su, Wang, Long & Su, NeurIPS 2025, arXiv 2510.19934)
    Pairwise network f-DP of random-walk DP-SGD, their Theorem 4.1 with Lemma 4.1
    (mixture over the first hitting time) and Lemma 4.2 at ``c = 1``, ``K = 1``:
    :func:`pnfdp_epsilon`.

Both papers analyse *DP-SGD on a walk* (the observer sees the model when it holds it; the
amplification is by iteration) and count a node's contributions by their expectation under
the stationary law: neither is a bound of netdp's view by construction. Each
:class:`Published` entry says where it applies and whether it is sound for netdp's view
(``sound_for_netdp_view``); ``docs/published-bounds.md`` has the cases where one falls
below the exact loss.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from netdp.accounting.gdp import gaussian_delta
from netdp.accounting.loss_pmf import LossPmf
from netdp.tracking.graph_walk import icml_coefficients

if TYPE_CHECKING:
    from scipy import sparse

__all__ = [
    "Published",
    "PUBLISHED",
    "icml_epsilon",
    "first_passage",
    "first_passages",
    "second_eigenvalue",
    "visit_slack",
    "pnfdp_epsilon",
    "pnfdp_pair",
    "pair_cells",
    "PAIR_CELL_SECONDS",
]

#: First-passage iterations stop once every pair's remaining mass is below this (the rest
#: is put on the last step kept: a larger μ², so the bound only grows).
PASSAGE_TAIL = 1e-12
#: The grid of μ² (``S``) is at most ``E[X] / GRID_PER_MEAN`` wide: rounding every draw up
#: moves the sum by at most ``1 / GRID_PER_MEAN`` of its mean.
GRID_PER_MEAN = 256
#: ... and at least ``max X / MAX_BINS`` (the cost of one pair).
MAX_BINS = 1 << 13
#: The law of ``S`` is read on at most this many points (cells merged upwards).
EVAL_POINTS = 2048
#: The share of the target δ that pays for the visit count's concentration (PN-f-DP).
VISIT_SHARE = 0.5
#: Seconds per cell of a pair's composition (:func:`pair_cells`): 4 to 160 ns, most 20 to
#: 60, measured on cycles of 40 to 200 nodes, a 100-node grid, karate and a hypercube
#: (both routes; a busy 2-core machine), lowered: an estimate errs towards the shorter run.
PAIR_CELL_SECONDS = 2e-8
#: The hit count's tail :func:`pnfdp_pair` may move to +∞ (its route by the hits).
HITS_TAIL = 1e-15
#: Compositions beyond which the route by the hits is not weighed (its binomial weights
#: are one array of that many).
MAX_HITS_ROUTE = 1 << 20


@dataclass(frozen=True)
class Published:
    """A published pairwise bound: what it is, where it applies, and what it assumes.

    Attributes
    ----------
    name
        The key of the report's ``theory_by_distance``.
    reference
        Paper and theorem.
    model
        The protocol and observer the theorem is proved for, and how netdp's parameters
        map onto it.
    applies
        Where it applies in netdp: the task, the graphs (and what it needs of the walk).
    sound_for_netdp_view
        Whether it bounds the loss of the observer's view of netdp's sum walk for every
        pair (``False``: a bound of another model; the case is in the docs and the tests).
    below_exact
        The cases of ``experiments/published_bounds.py`` where it falls below the exact
        loss (docs/published-bounds.md; ``tests/privacy/test_published_bounds_doc.py``).
    """

    name: str
    reference: str
    model: str
    applies: str
    sound_for_netdp_view: bool
    below_exact: tuple[str, ...] = ()


PUBLISHED: dict[str, Published] = {p.name: p for p in (
    Published(
        "icml2024",
        "Cyffers, Bellet & Upadhyay, ICML 2024 (arXiv 2402.07471): the closed form of "
        "random-walk DP-SGD, network-dp.md §3.2",
        "each holder adds N(0, σ²) to its update; the observer sees the token each time "
        "it holds it; a contribution j hops before the observer's next hold costs the "
        "Rényi divergence α Δ² / (2 σ² j), averaged over the walk with (P^t)_uv in place "
        "of the first-hitting law and T/n contributions per node (the stationary "
        "expectation); replace-one neighbours, sensitivity Δ",
        "sum with Gaussian noise, any graph with a transition matrix (not the ring, not "
        "time-varying); the paper assumes a doubly stochastic P (uniform stationary law); "
        "an expectation over the walk, not a bound of netdp's view (v also knows each "
        "cycle's length and ends; a node's contributions in one cycle add up)",
        False, ("karate-34", "hypercube-16-64", "hypercube-8-lazy-80")),
    Published(
        "pn-f-dp",
        "Li, Su, Wang, Long & Su, NeurIPS 2025 (arXiv 2510.19934): Theorem 4.1 with "
        "Lemmas 4.1 and 4.2 (c = 1, K = 1)",
        "each holder adds N(0, σ²); the observer sees the model when the walk first "
        "reaches it after u's update, at hitting time t w.p. P[τ_uv = t] (none within T: "
        "perfect privacy); that view is G(Δ / (σ √(t + 1)))-DP (amplification by "
        "iteration, non-expansive updates); composed ⌈(1 + ζ) T/n⌉ times, which bounds "
        "the visits w.p. 1 − δ' (Hoeffding for Markov chains, spectral gap 1 − λ₂); "
        "user-level neighbours, sensitivity Δ",
        "sum with Gaussian noise, any graph with a transition matrix (not the ring, not "
        "time-varying); the theorem assumes a symmetric, irreducible, aperiodic P; not a "
        "bound of netdp's view (t + 1 draws where the view holds t; each contribution "
        "charged alone where a cycle's contributions add up; v also knows the cycle's ends)",
        False, ("cycle-4-400", "cycle-4-lazy-200")),
)}


# --------------------------------------------------------------------------- ICML 2024

def icml_epsilon(P: sparse.csr_array, steps: int, z: float, delta: float, tokens: int = 1,
                 observers: np.ndarray | None = None) -> np.ndarray:
    """``(len(observers), n)``: ε of the ICML 2024 closed form for every ``u`` towards each
    observer ``v`` (row ``v``, column ``u``; the diagonal is 0).

    The theorem (Cyffers, Bellet & Upadhyay, ICML 2024; the closed form of spec
    network-dp.md §3.2, which the PN-f-DP authors' code cites as its Theorem 3): random-walk
    DP-SGD of ``T`` steps, each holder's update with Gaussian noise, the observer seeing
    the model at each of its holds, convex smooth losses (amplification by iteration), a
    doubly stochastic ``P`` with the walk started from its uniform stationary law, is
    ``(α, R_uv(α))``-pairwise network RDP with ``R_uv(α) = α c_uv Δ² / (2σ²)``. Mapping:
    ``σ / Δ = z`` (netdp's noise per contribution in units of the value range), ``T`` the
    steps per token, ``P`` the walk's transition matrix, tokens composed. netdp's sum walk
    is the linear case; its observer also knows each cycle's length and ends, and a node's
    several contributions in one cycle add up (``PUBLISHED["icml2024"]``).

    Parameters
    ----------
    P
        The walk's transition matrix.
    steps
        ``T``, steps per token.
    z
        ``σ / Δ``: the noise of one contribution in units of the sensitivity.
    delta
        The target δ.
    tokens
        Independent walks (their Rényi losses add).
    observers
        The observers ``v`` (default: every node).

    Notes
    -----
    ``R_uv(α) = α tokens c_uv / (2 z²)``, ``c_uv`` clipped at 0 (it can dip below 0 where
    ``(P^t)_uv < 1/n`` for every early ``t``), converted by the RDP conversion of Balle et
    al. 2020 rounded up on a log grid (:func:`netdp.tracking.sgd.epsilon_upper`).
    """
    from netdp.tracking.sgd import epsilon_upper

    n = P.shape[0]
    obs = np.arange(n) if observers is None else np.asarray(observers, dtype=np.int64)
    # columns of P^t: the rows of (P^T)^t, so c[v, u] = c_uv
    coef = icml_coefficients(P.T.tocsr(), steps, obs)
    rho = tokens * np.maximum(coef, 0.0) / (2.0 * z * z)
    eps = epsilon_upper(rho.ravel(), delta).reshape(rho.shape)
    eps[np.arange(obs.size), obs] = 0.0
    return eps


# --------------------------------------------------------------------------- PN-f-DP

def first_passage(P: sparse.csr_array, observer: int, steps: int,
                  tail: float = PASSAGE_TAIL) -> tuple[np.ndarray, np.ndarray]:
    """The law of the first hitting time of ``observer`` from every node, up to ``steps``.

    Returns
    -------
    w : ndarray, shape (t_max, n)
        ``w[t - 1, u] = P[τ_uv = t]`` (the walk from ``u`` reaches ``v`` first at step
        ``t``), the recursion ``w¹ = P[:, v]``, ``w^t = Q w^{t-1}`` with ``Q`` the walk
        with ``v``'s column removed (arXiv 2510.19934 §4.1). Iterations stop at ``steps``
        or once every node's remaining mass is below ``tail``; that remaining mass is
        added to the last row (an earlier hitting time: a larger loss).
    never : ndarray, shape (n,)
        ``P[τ_uv > T]`` (0 where the iterations stopped early).
    """
    n = P.shape[0]
    w, never = first_passages(P, np.array([observer]), np.zeros(n, np.int64),
                              np.arange(n), steps, tail)
    return w, never


def first_passages(P: sparse.csr_array, observers: np.ndarray, which: np.ndarray,
                   sources: np.ndarray, steps: int,
                   tail: float = PASSAGE_TAIL) -> tuple[np.ndarray, np.ndarray]:
    """:func:`first_passage` of several observers at once, kept for some pairs only:
    column ``p`` is the law of ``τ`` from ``sources[p]`` to ``observers[which[p]]`` (one
    sparse product per step for all observers; memory ``t_max x pairs``)."""
    m = observers.size
    cols = np.arange(m)
    state = np.asarray(P[:, observers].toarray(), dtype=np.float64).reshape(-1, m)
    rows = [state[sources, which]]
    left = 1.0 - state
    left[observers, cols] = 0.0
    for _ in range(1, steps):
        if left.max(initial=0.0) <= tail:
            break
        state[observers, cols] = 0.0  # a walk that is at v has already hit it
        state = np.asarray(P @ state)
        left -= state
        left[observers, cols] = 0.0
        rows.append(state[sources, which])
    w = np.vstack(rows)
    never = np.clip(left[sources, which], 0.0, 1.0)
    if len(rows) < steps:  # cut early: the rest lands on the last step kept
        w[-1] += never
        never = np.zeros(sources.size)
    return w, never


def second_eigenvalue(P: sparse.csr_array) -> float:
    """``λ₂``: the second-largest real part among the eigenvalues of ``P`` (dense up to
    2048 nodes, ARPACK beyond)."""
    n = P.shape[0]
    if n <= 2048:
        values = np.sort(np.linalg.eigvals(P.toarray()).real)
    else:
        from scipy.sparse import linalg

        values = np.sort(linalg.eigs(P.astype(float), k=2, which="LR",
                                     return_eigenvectors=False).real)
    return float(values[-2]) if values.size > 1 else 0.0


def visit_slack(n: int, steps: int, lam2: float, delta_visits: float) -> float:
    """``ζ`` with ``exp(−((1 − λ₂)/(1 + λ₂)) 2 ζ² T / n²) = δ'`` (arXiv 2510.19934,
    Theorem 4.1): a node is visited at most ``⌈(1 + ζ) T / n⌉`` times w.p. ``1 − δ'``.
    ``λ₂`` is clipped to ``[0, 1)`` (a negative one only helps; 1: no gap, ``inf``)."""
    lam = max(lam2, 0.0)
    if lam >= 1.0:
        return math.inf
    return math.sqrt(math.log(1.0 / delta_visits) * (1.0 + lam) * n * n
                     / (2.0 * (1.0 - lam) * steps))


def pnfdp_pair(w: np.ndarray, never: float, z: float, compositions: int,
               delta: float) -> float:
    """ε at ``delta`` of ``compositions`` copies of the revealed mixture of Lemma 4.1.

    One copy: w.p. ``w[t - 1]`` the Gaussian trade-off ``G(μ_t)``, ``μ_t² = 1 / (z² (t +
    1))`` (Lemma 4.2, ``c = 1``, ``K = 1``), w.p. ``never`` no loss. Given the draws, the
    composition is ``G(√S)`` with ``S`` the sum of the ``μ²``, so ``δ(ε) = E_S[δ_{G(√S)}(ε)]``
    exactly; ``S``'s law is composed on a grid with every ``μ²`` rounded up (and the
    truncation moved up), which only raises δ: the figure is an upper bound of the
    theorem's ε, within about ``1 / GRID_PER_MEAN`` of ``S``.

    ``S``'s law is the copies' by repeated squaring, or, where few of them hit (a pair the
    walk seldom reaches: :func:`_route`), the mixture over the number of hits ``N``
    (binomial) of that many hits' sums, ``N``'s tail beyond :data:`HITS_TAIL` moved to
    +∞: the same law, without the copy's atom at 0 spreading the FFT's rounding over
    every cell (which kept the squares from being trimmed: 0.5 s a pair on a 100-node
    cycle) and with that atom (no hit, ``S = 0``) kept exact where the law is read on
    :data:`EVAL_POINTS` points (merged upwards, it put every pair's bulk at ``S > 0``).
    """
    if compositions <= 0 or float(w.sum()) <= 0.0:
        return 0.0
    g, pmf = _copy_law(w, never, z)
    keep = 0  # cells kept apart from the coarsening: the hits' atom at 0 (none hits)
    if _route(pmf, compositions)[0] == "hits":
        law = _law_by_hits(pmf, g, *_hit_counts(float(pmf[0]), float(pmf[1:].sum()),
                                                compositions))
        keep = 1
    else:
        law = LossPmf(0, pmf, 0.0, g).self_compose(compositions)
    s, p = _coarsen(law.losses[keep:], law.probs[keep:], EVAL_POINTS)
    s, p = np.r_[law.losses[:keep], s], np.r_[law.probs[:keep], p]
    return _gdp_mixture_epsilon(np.sqrt(s), p, law.inf_mass, delta)


def _hit_counts(p0: float, q: float, k: int) -> tuple[np.ndarray, float]:
    """``P[N = j]`` for ``j = 0..J`` and ``P[N > J]``: ``N`` the hits among ``k`` copies
    (each a hit w.p. ``q``, no loss w.p. ``p0``; a copy's mass short of 1 is at -∞,
    dropped), ``J`` the least count whose tail beyond is at most :data:`HITS_TAIL`."""
    from scipy.special import gammaln

    j = np.arange(k + 1, dtype=np.float64)
    log = gammaln(k + 1.0) - gammaln(j + 1.0) - gammaln(k - j + 1.0) + j * math.log(q)
    if p0 > 0:
        b = np.exp(log + (k - j) * math.log(p0))
    else:  # every copy hits
        b = np.zeros(k + 1)
        b[-1] = q ** k
    beyond = np.concatenate((np.cumsum(b[::-1])[::-1][1:], [0.0]))  # P[N > j]
    last = int(np.flatnonzero(beyond <= HITS_TAIL)[0])
    return b[:last + 1], float(beyond[last])


def _law_by_hits(pmf: np.ndarray, g: float, hits: np.ndarray, tail: float) -> LossPmf:
    """``S``'s law as the mixture over ``hits`` (``P[N = j]``, :func:`_hit_counts`) of the
    sum of ``j`` draws of the copy's law given a hit (bins ``1..``); ``N``'s ``tail``
    beyond at +∞ (an upper bound: δ only grows)."""
    given = LossPmf(1, pmf[1:] / float(pmf[1:].sum()), 0.0, g)
    probs = np.zeros((hits.size - 1) * given.probs.size + 1)
    inf_mass = tail
    part = LossPmf.identity(g)
    for j, b in enumerate(hits):
        if j:
            part = part.compose(given)
        probs[part.lower:part.lower + part.probs.size] += b * part.probs
        inf_mass += b * part.inf_mass
    return LossPmf(0, probs, min(1.0, inf_mass), g)


def _route(pmf: np.ndarray, k: int) -> tuple[str, float]:
    """How :func:`pnfdp_pair` composes a copy's law ``pmf`` (bins ``0..B-1``, the atom at 0
    the copies that do not hit) ``k`` times, and its work in cells (what
    :data:`PAIR_CELL_SECONDS` prices): by the hits (``"hits"``, :func:`_law_by_hits`,
    ``B J² / 2`` cells for ``J`` hits at most) where few copies hit (``J (J + 1) / 2 <= k
    log2 k``), else by repeated squaring (``"squares"``, each level's law as wide as the
    copies' sum spreads at :data:`HITS_TAIL` by Bernstein's inequality, at most ``2^l B``)."""
    size, p0, q = pmf.size, float(pmf[0]), float(pmf[1:].sum())
    if k <= MAX_HITS_ROUTE and q > 0:
        top = _hit_counts(p0, q, k)[0].size - 1
        if top * (top + 1) / 2 <= k * math.log2(max(k, 2)):
            return "hits", size * top * (top + 1) / 2
    bins = np.arange(size)
    mean = float(pmf @ bins)
    var = max(0.0, float(pmf @ (bins - mean) ** 2))
    spread = math.log(2.0 / HITS_TAIL)
    cells, copies = 0.0, 1
    while copies <= k:
        cells += min(copies * size, 2.0 * (math.sqrt(2.0 * copies * var * spread)
                                          + size * spread / 3.0) + 1.0)
        copies *= 2
    return "squares", cells


def _grid(w: np.ndarray, z: float) -> tuple[float, np.ndarray]:
    """The grid step ``g`` of ``S`` (:func:`pnfdp_pair`) and each hitting time's ``μ²``
    rounded up to it, in steps of ``g``."""
    t = np.arange(1, w.size + 1, dtype=np.float64)
    x = 1.0 / (z * z * (t + 1.0))
    g = max(float(w @ x) / GRID_PER_MEAN, float(x[0]) / MAX_BINS)
    return g, np.ceil(x / g - 1e-12).astype(np.int64)


def _copy_law(w: np.ndarray, never: float, z: float) -> tuple[float, np.ndarray]:
    """The grid step and one copy's law of ``μ²`` on it (the atom at 0: no hit)."""
    g, bins = _grid(w, z)
    pmf = np.bincount(bins, weights=w, minlength=int(bins.max()) + 1)
    pmf[0] += never
    return g, pmf / max(1.0, float(pmf.sum()))


def pair_cells(w: np.ndarray, never: float, z: float, compositions: int) -> float:
    """The work of :func:`pnfdp_pair`, before doing it: the cells its route composes
    (:func:`_route`), 0 where it composes nothing."""
    if compositions <= 0 or float(w.sum()) <= 0.0:
        return 0.0
    return _route(_copy_law(w, never, z)[1], compositions)[1]


def _coarsen(s: np.ndarray, p: np.ndarray, points: int) -> tuple[np.ndarray, np.ndarray]:
    """``p`` on at most ``points`` values of ``s`` (ascending, evenly spaced): each block of
    cells takes its largest ``s`` (upwards: δ only grows)."""
    block = max(1, -(-s.size // points))
    pad = (-s.size) % block
    p = np.concatenate((p, np.zeros(pad))).reshape(-1, block).sum(axis=1)
    top = s[np.minimum(np.arange(block - 1, s.size + pad, block), s.size - 1)]
    keep = p > 0
    return top[keep], p[keep]


def _gdp_mixture_epsilon(mu: np.ndarray, p: np.ndarray, inf_mass: float,
                         delta: float) -> float:
    """The smallest ε with ``inf_mass + Σ p δ_{G(μ)}(ε) <= delta`` (bisection; ``inf`` if
    the mass at infinity alone exceeds ``delta``)."""
    if inf_mass >= delta:
        return math.inf

    def excess(eps: float) -> float:
        return inf_mass + float(p @ gaussian_delta(mu, eps)) - delta

    if excess(0.0) <= 0:
        return 0.0
    top = float(mu.max(initial=0.0))
    hi = top * top / 2.0 + top * math.sqrt(2.0 * math.log(1.0 / (delta - inf_mass))) + 1.0
    lo = 0.0
    # to the last bits (within 1e-13 of the root), so that a CPU whose sums round a
    # little differently moves the figure by that much, not by a bisection step
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
        if hi - lo <= 1e-13 * max(hi, 1.0):
            break
    return hi


def pnfdp_epsilon(P: sparse.csr_array, steps: int, z: float, delta: float, tokens: int = 1,
                  observers: np.ndarray | None = None, pairs: np.ndarray | None = None,
                  max_seconds: float = math.inf) -> tuple[np.ndarray, dict[str, Any]]:
    """``(len(observers), n)``: ε of PN-f-DP (arXiv 2510.19934, Theorem 4.1) for every
    ``u`` towards each observer ``v`` (row ``v``, column ``u``; diagonal 0, NaN where
    ``pairs`` leaves a pair out), and the constants used.

    The theorem (Li, Su, Wang, Long & Su, NeurIPS 2025, Theorem 4.1 with Lemmas 4.1 and
    4.2): decentralized DP-SGD with random-walk communication (Algorithm 1, K local steps
    per visit, noise ``N(0, σ²)`` at every step, gradient sensitivity Δ), a symmetric,
    irreducible, aperiodic ``W`` with spectral gap ``1 − λ₂``, the walk started from the
    stationary law, user-level neighbours: ``T(A_v(D), A_v(D')) >= (f_uv^single)^{⊗
    ⌈(1 + ζ) T / n⌉}`` w.p. ``1 − δ'``, ``δ' = exp(−((1 − λ₂)/(1 + λ₂)) 2 ζ² T / n²)``;
    ``f_uv^single`` the joint-concavity bound of the mixture over the first hitting time
    of v from u of ``G(μ_t)``, ``μ_t = √K Δ / (σ √(tK + 1))`` (``c = 1``, non-expansive
    updates). Mapping: ``K = 1`` (one contribution per hold), ``σ / Δ = z``, ``W = P``,
    ``T`` the steps per token, tokens composed (``δ'`` per token). The observer of the
    theorem sees the model when the walk first reaches it after u's update; netdp's sees
    the sum of each cycle and its ends (``PUBLISHED["pn-f-dp"]``).

    Parameters
    ----------
    P, steps, z, delta, tokens, observers
        As :func:`icml_epsilon`.
    pairs
        Optional ``(len(observers), n)`` booleans: the pairs to evaluate (each costs a
        composition; pairs with the same hitting-time law are evaluated once).
    max_seconds
        The compositions' work is estimated first (:func:`pair_cells` x
        :data:`PAIR_CELL_SECONDS`, the first passages known); beyond ``max_seconds`` no
        pair is composed: every ε not evaluated (NaN) and the constants' ``skipped`` says
        why (the bound is left out, never replaced by another number).

    Notes
    -----
    The target δ is split: ``VISIT_SHARE δ`` for the visit counts of the ``tokens`` walks
    (``δ'`` each, ``ζ`` from :func:`visit_slack`), the rest for the f-DP conversion;
    ``⌈(1 + ζ) T / n⌉`` compositions per token.
    """
    n = P.shape[0]
    obs = np.arange(n) if observers is None else np.asarray(observers, dtype=np.int64)
    lam2 = second_eigenvalue(P)
    zeta = visit_slack(n, steps, lam2, VISIT_SHARE * delta / tokens)
    per_token = math.ceil((1.0 + zeta) * steps / n) if math.isfinite(zeta) else 0
    rest = (1.0 - VISIT_SHARE) * delta
    out = np.full((obs.size, n), np.nan)
    out[np.arange(obs.size), obs] = 0.0
    chosen = np.ones((obs.size, n), bool) if pairs is None else np.asarray(pairs, bool).copy()
    chosen[np.arange(obs.size), obs] = False
    which, sources = np.nonzero(chosen)
    if not math.isfinite(zeta):
        out[which, sources] = math.inf
    constants: dict[str, Any] = {
        "lambda2": lam2, "zeta": zeta, "compositions_per_token": float(per_token),
        "delta_visits": VISIT_SHARE * delta, "delta_conversion": rest}
    if math.isfinite(zeta) and which.size:
        w, never = first_passages(P, obs, which, sources, steps)
        keys = [np.round(np.append(w[:, p], never[p]), 13).tobytes() for p in range(which.size)]
        first = {key: p for p, key in reversed(list(enumerate(keys)))}  # distinct laws
        k = per_token * tokens
        seconds = PAIR_CELL_SECONDS * sum(pair_cells(w[:, p], float(never[p]), z, k)
                                         for p in first.values())
        if seconds > max_seconds:
            constants["skipped"] = (
                f"not evaluated: its compositions would take about {seconds:.2g} s ({k} per "
                f"pair, {len(first)} distinct pair(s)), beyond the {max_seconds:g} s a theory "
                "line may take (experiments/published_bounds.py evaluates it)")
            return out, constants
        done = {key: pnfdp_pair(w[:, p], float(never[p]), z, k, rest)
                for key, p in first.items()}
        for p, key in enumerate(keys):
            out[which[p], sources[p]] = done[key]
    return out, constants
