"""Pairwise privacy losses ε_{u→v} of a recorded walk, summarised without n×n.

A loss table is stored as, per observer ``v``, one *base* loss shared by every node ``u``
that ``v`` cannot single out, plus the few *corrected* pairs it can (see
:mod:`netdp.tracking._kernels.walk`). Summaries (mean, min, max, quantiles) are exact
weighted statistics over all ordered pairs of all runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np
import numpy.typing as npt

from netdp.accounting import registry
from netdp.accounting._arrays import observer_bar
from netdp.accounting.composition import kov_het_epsilon, kov_het_terms, opti
from netdp.accounting.events import ApproxDP, DpEvent, Gaussian, Subsampled
from netdp.accounting.target_delta import composition_slack, entry_delta, ldp_epsilon
from netdp.core.errors import InputError, check
from netdp.core.simulation_config import CONVENTIONS
from netdp.engine.trace import Trace, holder_counts
from netdp.tracking import complete_law
from netdp.tracking._kernels import walk as kernels

#: The accountants of the complete graph's walk trackers, by convention (the registry's).
WALK_ACCOUNTANTS = registry.names(kind="complete", convention="reference")
SOUND_ACCOUNTANTS = registry.names(kind="complete", convention="sound")
# Integer orders (the subsampled Gaussian's RDP is exact there). The largest order bounds
# how small an rdp loss can get: about (ln(1/δ) - ln α_max) / α_max, ~0.02 at δ = 2e-5, so
# rdp flattens there for very large n (sound, but loose; kov keeps falling).
RDP_ORDERS = np.array(
    [2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 96, 128, 192, 256], dtype=np.float64
)
#: The complete graph's orders: :data:`RDP_ORDERS` and higher ones, up to 8192. A pair's
#: loss there falls as ``1/n``, and Rényi's conversion floors ε near ``log(1/δ) / α``: at
#: n = 10⁶, δ = 1e-7 the orders up to 256 left rdp at 0.038 where kov found 0.0044. Its
#: entries are a few thousand (one per view length and key), so the higher orders cost
#: little there; the graph trackers, with an entry per node and view, keep
#: :data:`RDP_ORDERS`.
WALK_RDP_ORDERS = np.concatenate(
    [RDP_ORDERS, np.array([384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192], float)])
MATRIX_LIMIT = 10_000


@dataclass(frozen=True, eq=False)
class PairLosses:
    """Losses of every ordered pair ``(u → v)`` of one run, in compressed form.

    Attributes
    ----------
    accountant
        Which accountant produced them (``kov``, ``rdp``, ``ring``).
    n
        Number of nodes.
    observers
        Observer ids (``-1`` stands for a coalition observing as one).
    base, weight
        ``base[o]`` is the loss of ``weight[o]`` pairs of observer ``o``.
    entries
        ``entries[o]``: how many returns of the token observer ``o`` saw.
    values, counts
        Losses of the corrected pairs, ``counts[o]`` of them per observer, in order.
    nodes
        The ``u`` of each corrected value (``None`` unless kept).
    delta
        The largest total δ of a pair.
    split
        Ring histograms: ``observers`` lists each node twice, first for the pairs
        ``u > v`` (``weight[o] = n - 1 - v``), then for ``u < v``; no corrected pairs.
    unamplified
        Graph walks: cycles whose participation rates were not computed (taken as 1,
        which is sound; see :mod:`netdp.tracking.taboo`).
    plds_left
        Report-based graph walks: the estimated seconds of the windows' PLDs where they
        were left out (:mod:`netdp.tracking.report_plds`); 0 otherwise.
    """

    accountant: str
    n: int
    observers: np.ndarray
    base: np.ndarray
    weight: np.ndarray
    entries: np.ndarray
    values: np.ndarray
    counts: np.ndarray
    nodes: np.ndarray | None
    delta: float
    split: bool = False
    unamplified: int = 0
    plds_left: float = 0.0

    @property
    def pairs(self) -> int:
        """Number of ordered pairs accounted."""
        return int(self.weight.sum() + self.values.size)

    def matrix(self) -> np.ndarray:
        """Dense ``n × n`` matrix ``M[u, v] = ε_{u→v}`` (NaN on the diagonal); small n only."""
        check(
            self.n <= MATRIX_LIMIT,
            "pairs-out",
            f"the full matrix is offered up to n = {MATRIX_LIMIT} (n = {self.n})",
        )
        check(self.nodes is not None or self.split, "pairs-out",
              "losses computed without keep_pairs")
        check(bool(np.all(self.observers >= 0)), "pairs-out", "a coalition has no pair matrix")
        if self.split:
            upper = np.triu(np.ones((self.n, self.n), bool), 1)  # u < v
            out = np.where(upper, self.base[self.n:][None, :], self.base[: self.n][None, :])
            np.fill_diagonal(out, np.nan)
            return out
        out = np.empty((self.n, self.n))
        out[:, self.observers] = self.base
        owner = np.repeat(self.observers, self.counts)
        out[self.nodes, owner] = self.values
        out[self.observers, self.observers] = np.nan
        return out


def walk_losses(
    trace: Trace,
    eps0: float,
    delta: float,
    noise_multiplier: float,
    accountant: str = "kov",
    coalition: Sequence[int] | None = None,
    keep_pairs: bool = False,
    convention: str = "sound",
    self_moves: bool = True,
    laplace: bool = False,
    observers: np.ndarray | None = None,
    target: float | None = None,
) -> PairLosses:
    """Pairwise losses of a random-walk summation on the complete graph (AISTATS 2022
    Alg. 3).

    Parameters
    ----------
    trace
        The walk (one or more tokens).
    eps0
        LDP level of one noisy contribution (the ε of its Gaussian noise).
    delta
        The δ of one contribution; KOV uses ``δ̃ = k δ`` for a pair with ``k`` entries.
    noise_multiplier
        σ / Δ of one contribution's Gaussian noise (for ``rdp``).
    accountant
        ``kov`` (the reference method, exactly), ``rdp`` or ``pld`` (dp_accounting's
        privacy loss distributions; the tightest, and the slowest: one PLD per observer).
    coalition
        Nodes observing as one: losses of every other node towards the coalition.
    keep_pairs
        Keep the node of each corrected pair (needed by :meth:`PairLosses.matrix`).
    convention
        ``sound`` (default): each view as it is, ``m - 1`` unknown draws per cycle of ``m``
        hops, every visit counted, the exact law of a node's visits, and the stretch before
        the observer's first visit (:mod:`netdp.tracking.cycle_entries`).
        ``reference``: the AISTATS 2022 Fig. 1b method exactly (``m`` draws, presence
        counted once at the rate ``1 - (1 - 1/n)^m``); not an upper bound of the loss.
    self_moves
        Whether the walk may forward the token to its holder (the law of the visits).
    laplace
        The contributions' noise is Laplace (``eps0``-DP each): ``kov`` only.
    observers
        Sound convention: account these observers only (default every node).
    target
        Sound convention: every pair's ε at this one δ (spec Correction 7; KOV's entries
        and slack split it, :mod:`netdp.accounting.target_delta`). ``None``: a pair of
        ``k`` entries at ``2 k δ`` (the reference convention always is).
    """
    check(convention in CONVENTIONS, "convention",
          f"must be one of {', '.join(CONVENTIONS)} (got {convention!r})")
    if convention == "sound":
        return sound_walk_losses(trace, eps0, delta, noise_multiplier, accountant, coalition,
                                 keep_pairs, self_moves, laplace, observers, target)
    check(
        accountant in WALK_ACCOUNTANTS,
        "accountant",
        f"must be one of {', '.join(WALK_ACCOUNTANTS)} for a walk (got {accountant!r})",
    )
    n = trace.n
    holders, n_ids, observers, others = observer_view(trace, coalition)
    mode = getattr(kernels, str(registry.entry(accountant).kernel_mode))
    base, weight, k, offsets, counts, values, nodes = kernels.pairwise(
        holders,
        trace.steps,
        n_ids,
        n,
        observers,
        others,
        mode,
        float(eps0),
        float(delta),
        float(noise_multiplier),
        RDP_ORDERS,
        keep_pairs,
        numba.get_num_threads(),
    )
    used = kernels.compact(values, nodes, offsets, counts, keep_pairs)
    values = values[:used]
    nodes = nodes[:used] if keep_pairs else None
    if registry.entry(accountant).composes_pld:
        base, values = _pld_losses(
            holders, trace.steps, n_ids, n, observers, k, counts, values, delta,
            noise_multiplier,
        )
    if coalition is not None:
        observers = np.array([-1])
    k_max = int(k.max()) if k.size else 0
    return PairLosses(
        accountant, n, observers, base, weight, k, values, counts, nodes, 2 * k_max * delta
    )


def view_lengths(holders: np.ndarray, steps: int, n_ids: int,
                 observers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The observers' cycle lengths ``m >= 2`` and first-visit steps ``i0 >= 1`` (each
    token's stretch before the observer's first visit)."""
    start, pos = kernels.group_by_holder(holders, n_ids)
    owner = np.repeat(np.arange(n_ids), np.diff(start))
    keep = np.isin(owner, observers)
    owner, pos = owner[keep], pos[keep]
    token = pos // steps
    fresh = np.ones(pos.size, bool)
    fresh[1:] = (owner[1:] != owner[:-1]) | (token[1:] != token[:-1])
    m = np.diff(pos)[~fresh[1:]]
    first = (pos - token * steps)[fresh]
    return m[m >= 2].astype(np.int64), first[first >= 1].astype(np.int64)


def sound_walk_losses(trace: Trace, eps0: float, delta: float, noise_multiplier: float,
                      accountant: str, coalition: Sequence[int] | None, keep_pairs: bool,
                      self_moves: bool, laplace: bool,
                      subset: np.ndarray | None = None,
                      target: float | None = None) -> PairLosses:
    """:func:`walk_losses` under the sound convention (``subset``: the observers
    accounted, without a coalition; ``target``: every pair at that one δ, else at
    ``2 k δ``)."""
    from netdp.tracking import cycle_entries as ce

    check(accountant in SOUND_ACCOUNTANTS, "accountant",
          f"must be one of {', '.join(SOUND_ACCOUNTANTS)} for a walk (got {accountant!r})")
    registry.check_noise(accountant, not laplace, "laplace")
    entry = registry.entry(accountant)
    n = trace.n
    holders, n_ids, observers, others = observer_view(trace, coalition)
    if subset is not None and coalition is None:
        observers = np.asarray(subset, dtype=np.int64)
        others = others[observers]
    watchers = 1 if coalition is None else n - int(others[0])
    law = ce.binomial_law(1.0 / (n - watchers)) if self_moves else _no_self_law(n, watchers)
    noise = ce.Noise(float(noise_multiplier), float(eps0), laplace)
    if entry.composes_pld:
        lengths = view_lengths(holders, trace.steps, n_ids, observers)
        from netdp.tracking import exact

        base, weight, k, counts, values, nodes = exact.walk_pld_losses(
            holders, trace.steps, n_ids, observers, others, lengths, law, noise, delta,
            accountant, keep_pairs, target)
    else:
        mode = getattr(kernels, str(entry.kernel_mode))
        watched = np.zeros(n_ids, np.bool_)
        watched[observers] = True
        regular, first = kernels.length_flags(holders, trace.steps, n_ids, watched)
        lengths = (np.flatnonzero(regular), np.flatnonzero(first))
        entry_d = delta if target is None else entry_delta(
            target, most_entries(holders, n_ids, observers))
        entries, rows_regular, rows_first = ce.entry_tables(mode, lengths, law, noise,
                                                            entry_d, WALK_RDP_ORDERS)
        base, weight, k, offsets, counts, values, ids = kernels.pairwise_sound(
            holders, trace.steps, n_ids, observers, others, mode, entries, rows_regular,
            rows_first, float(delta), WALK_RDP_ORDERS, keep_pairs, numba.get_num_threads(),
            0.0 if target is None else float(target))
        used = kernels.compact(values, ids, offsets, counts, keep_pairs)
        values = values[:used]
        nodes = ids[:used] if keep_pairs else None
    if coalition is not None:
        observers = np.array([-1])
    k_max = int(k.max()) if k.size else 0
    return PairLosses(accountant, n, observers, base, weight, k, values, counts, nodes,
                      2 * k_max * delta if target is None else float(target))


def most_entries(holders: np.ndarray, n_ids: int, observers: np.ndarray) -> int:
    """A bound on the entries of any observer's pairs: its largest number of visits
    (each entry ends at a visit)."""
    visits = holder_counts(holders, n_ids)
    return int(visits[observers].max(initial=0))


def _no_self_law(n: int, watchers: int):
    """The law of a node's interior visits on the complete graph without self-moves (the
    lumped chain of :func:`netdp.tracking.complete_law.complete_interior_law`)."""
    from netdp.tracking import cycle_entries as ce

    def law(kind: int, length: int, key: int, budget: float = ce.BUDGET):
        size = ce.interior(kind, length)
        try:
            if kind == ce.FIRST:
                pmf = complete_law.complete_first_stretch_law(
                    size, n, watchers, self_moves=False, b_is_u=key == ce.B_ONLY)
            else:
                pmf = complete_law.complete_interior_law(
                    size, n, watchers, self_moves=False, a_is_u=key in (ce.A_ONLY, ce.BOTH),
                    b_is_u=key in (ce.B_ONLY, ce.BOTH), a_is_b=key in (ce.BOTH, ce.NONE_SAME))
        except InputError:  # a view of probability 0: its table entry is never read
            return np.zeros(1), -np.inf
        return ce.truncated_log_law(pmf, budget, rate, size)

    # each hidden position is u's w.p. at most 1 / (N - 2) given the others: the holders
    # of its two neighbours and the observers are excluded (netdp.tracking.holder_rates)
    others = n - watchers
    rate = 1.0 / (others - 2) if others > 2 else None
    if rate is not None and rate < 1.0:  # given the past too: the per-visit bound applies
        law.rate = rate  # type: ignore[attr-defined]
    return law


def entry_event(accountant: str, m: int, c: int, n: int, eps0: float, delta: float,
                z: float) -> DpEvent:
    """The privacy event of one entry of a pair: a return of the token to the observer after
    ``m`` steps, in which the node is attributable ``c`` times (0, 1 or 2).

    ``kov`` (the reference method) sees each contribution's Gaussian as ``(ε0/√m, δ)``-DP;
    ``rdp`` and ``pld`` see the Gaussian itself, of std ``z √m`` in units of the
    sensitivity. A non-attributable entry is Poisson-subsampled at ``1 - (1 - 1/n)^m``.
    The kernels of :mod:`~netdp.tracking._kernels.walk` compose these events with the
    compiled twins of the accountants (:mod:`~netdp.accounting._compiled`); the tests compose
    them with the accountants themselves and compare.
    """
    q = -math.expm1(m * math.log1p(-1.0 / n))
    if registry.entry(accountant).kernel_mode == "KOV":
        release: DpEvent = ApproxDP(max(c, 1) * eps0 / math.sqrt(m), delta)
    else:
        release = Gaussian(z * math.sqrt(m), float(max(c, 1)))
    return release if c > 0 else Subsampled(release, min(q, 1.0))


def observer_view(trace: Trace, coalition: Sequence[int] | None):
    """Flattened holders with a coalition relabelled to one id ``n``; the number of ids,
    the observers' ids and how many nodes each observer is accounted against.

    A token lost to a fault ends in ``-1`` (its steps that never happened). Those steps
    get one more id, which observes nothing and is no node: they come after every visit
    of their token, so they lie inside no observer's cycle. A tracker that charges the
    published result (the histogram's) charges a lost token's too, which nobody saw:
    conservative.
    """
    n = trace.n
    holders = np.ascontiguousarray(trace.holders).reshape(-1)
    ids = n if coalition is None else n + 1
    if coalition is None:
        observers, others = np.arange(n, dtype=np.int64), np.full(n, n - 1, dtype=np.int64)
    else:
        members = coalition_members(coalition, n)
        relabel = np.arange(n, dtype=holders.dtype)
        relabel[members] = n
        holders = np.where(holders >= 0, relabel[np.maximum(holders, 0)], -1)
        observers = np.array([n], dtype=np.int64)
        others = np.array([n - members.size], dtype=np.int64)
    if trace.faults is not None and (holders < 0).any():
        holders = np.where(holders >= 0, holders, ids).astype(holders.dtype)
        ids += 1
    return holders, ids, observers, others


def _pld_losses(holders, steps, n_ids, n, observers, k, counts, mu2, delta, z):
    """Base and corrected losses by PLD, from the pairs' Gaussian parts ``mu2``."""
    from netdp.tracking import _walk_pld

    start, pos = kernels.group_by_holder(holders, n_ids)
    owner = np.repeat(np.arange(n_ids), np.diff(start))
    same = (owner[1:] == owner[:-1]) & (pos[1:] // steps == pos[:-1] // steps)
    m, own = np.diff(pos)[same], owner[1:][same]
    bins = _walk_pld.cycle_bins(m)
    cache = _walk_pld.bin_plds(m, bins, n, z)
    key = own * (int(bins.max(initial=0)) + 1) + bins
    keys, per = np.unique(key, return_counts=True)
    key_owner, key_bin = np.divmod(keys, int(bins.max(initial=0)) + 1)
    edges = np.searchsorted(key_owner, np.stack([observers, observers + 1]))
    base = np.zeros(observers.size)
    values = np.empty_like(mu2)
    out = 0
    for o in observer_bar(range(observers.size), "pld accounting"):
        sl = slice(edges[0, o], edges[1, o])
        dt = min(2.0 * k[o] * delta, 1.0)
        pairs = slice(out, out + counts[o])
        out += counts[o]
        if k[o] == 0:
            values[pairs] = 0.0
            continue
        pld = _walk_pld.compose_bins(cache, key_bin[sl], per[sl])
        base[o] = max(0.0, float(pld.get_epsilon_for_delta(dt)))
        mus, inverse = np.unique(mu2[pairs], return_inverse=True)
        eps = np.full(mus.size, base[o])
        positive = mus > 0
        eps[positive] = _walk_pld.epsilon_with_gaussian(pld, np.sqrt(mus[positive]), dt)
        values[pairs] = eps[inverse]
    return base, values


def ldp_losses(trace: Trace, eps0: float, delta: float, target: float | None = None,
               noise_multiplier: float | None = None) -> np.ndarray:
    """Local-DP loss of each node over its actual contributions: :func:`ldp_at` its
    number of visits. A baseline column of the report, never a cap (spec Correction 6:
    it conditions on the hidden path; the cap is :mod:`netdp.tracking.view_cap`'s)."""
    return ldp_at(eps0, delta, trace.visits(), target, noise_multiplier)


def ldp_at(eps0: float, delta: float, k: npt.ArrayLike, target: float | None = None,
           noise_multiplier: float | None = None) -> np.ndarray:
    """The LDP loss of ``k`` contributions (0 for ``k = 0``).

    ``target``: at that one δ (:func:`netdp.accounting.target_delta.ldp_epsilon`: the
    exact composition of ``k`` Gaussians of ``noise_multiplier``, else of ``k`` ``eps0``-DP
    contributions at slack ``δ_T``). ``None``: ``min(k ε0, DRV(ε0, δ, k))`` with
    ``DRV(ε0, δ, k) = ε0 sqrt(2 k ln(1/δ)) + k ε0 (e^{ε0} - 1)`` (the reference's, at
    ``k δ + δ``).
    """
    k = np.asarray(k).astype(float)
    if target is not None:
        return ldp_epsilon(k, eps0, target, noise_multiplier)
    with np.errstate(over="ignore", invalid="ignore"):  # huge eps0: DRV is inf, k eps0 wins
        return np.where(k > 0, opti(eps0, delta, k), 0.0)


def ring_losses(
    n: int,
    rounds: int,
    noise_mask: np.ndarray,
    eps0: float,
    delta: float,
    coalition: Sequence[int] | None = None,
    target: float | None = None,
    noise_multiplier: float | None = None,
) -> PairLosses:
    """Pairwise losses on the ring (AISTATS 2022 Alg. 1), composed over turns with KOV.

    Observer ``v`` (or a coalition) sees the token before and after the contributions
    between two of its visits; the window is protected if it holds a noise draw (each turn
    is then one (ε0, δ) release for every ``u`` in it), and exposes its nodes otherwise
    (infinite loss: a coalition holding both neighbours of ``u`` sees ``x_u`` in the clear).
    Without a coalition every window of ``n - 1`` holds one draw, so all pairs lose the
    same.

    ``target``: every pair at that one δ (spec Correction 7): with Gaussian noise
    (``noise_multiplier`` ``z``) each turn is the Gaussian's ``(ε, δ_T / (2 R))`` over the
    ``R`` turns and KOV's slack is ``δ_T / 2``; with ``eps0``-DP noise (``None``) each turn
    is ``(eps0, 0)`` and the slack is ``δ_T``. ``None``: ``2 R δ`` (the paper's).
    With ``target`` each protected pair is also capped at the LDP loss of its count at
    that δ (spec Correction 6; the schedule is public, so the count is exact: the
    ``rounds`` turns without a coalition, the protected turns with one); KOV at
    ``δ_T / (2R)`` per turn can exceed the exact Gaussian composition at ``δ_T``.
    Exposed pairs stay infinite.
    """
    base_eps0 = eps0
    if target is not None:
        eps0, slack = _ring_turn(eps0, rounds, target, noise_multiplier)
        delta = slack / max(rounds, 1)  # KOV-het spends δ̃ = k δ: at most the slack
    if coalition is None:
        gaps = np.diff(np.flatnonzero(noise_mask))
        covered = noise_mask[0] and noise_mask[-1] and (gaps.size == 0 or gaps.max() <= n - 1)
        check(bool(covered), "noise", "this noise schedule leaves some views without a draw")
        eps = _kov_homogeneous(eps0, rounds, delta)
        if target is not None:
            eps = min(eps, float(ldp_epsilon([rounds], base_eps0, target,
                                             noise_multiplier)[0]))
        observers = np.arange(n)
        return PairLosses(
            "kov",
            n,
            observers,
            np.full(n, eps),
            np.full(n, n - 1),
            np.full(n, rounds),
            np.empty(0),
            np.zeros(n, np.int64),
            np.empty(0, np.int64),
            2 * rounds * delta if target is None else target,
        )
    members = coalition_members(coalition, n)
    steps = noise_mask.size
    holder = np.arange(steps) % n
    in_w = np.isin(holder, members)
    window = np.cumsum(in_w)  # hops between two coalition visits share a window id
    draws = np.bincount(window, weights=noise_mask.astype(float))
    exposed_hop = ~in_w & (draws[window] == 0)
    exposed = np.bincount(holder[exposed_hop], minlength=n) > 0
    protected_turns = np.bincount(holder[~in_w & ~exposed_hop], minlength=n)
    outside = np.setdiff1d(np.arange(n), members)
    losses = np.where(
        exposed[outside],
        np.inf,
        kov_homogeneous_array(eps0, protected_turns[outside], delta),
    )
    if target is not None:
        cap = ldp_epsilon(protected_turns[outside], base_eps0, target, noise_multiplier)
        losses = np.where(exposed[outside], np.inf, np.minimum(losses, cap))
    return PairLosses(
        "kov",
        n,
        np.array([-1]),
        np.zeros(1),
        np.zeros(1, np.int64),
        np.array([rounds]),
        losses,
        np.array([losses.size]),
        outside,
        2 * rounds * delta if target is None else target,
    )


def _ring_turn(eps0: float, rounds: int, target: float,
               z: float | None) -> tuple[float, float]:
    """One turn's ε and the composition's slack when ``rounds`` turns compose at the one
    δ ``target`` (:mod:`netdp.accounting.target_delta`)."""
    from netdp.accounting.gdp import gaussian_epsilon

    if z is None:
        return eps0, target
    turn = float(gaussian_epsilon(1.0 / z, entry_delta(target, rounds)))
    return turn, composition_slack(target)


def ring_exact_losses(n: int, rounds: int, noise_mask: np.ndarray, z: float, delta: float,
                      coalition: Sequence[int] | None = None,
                      target: float | None = None) -> PairLosses:
    """The exact loss of every pair on the ring (AISTATS 2022 Alg. 1), Gaussian noise.

    The schedule is public, so the views are deterministic: observer ``v`` (or a
    coalition) sees the sum of each maximal stretch of other holders (before its first
    hold, between two of its holds, and after its last, the result being published),
    under the ``d`` noise draws of that stretch. Node ``u`` appears ``c`` times in a
    stretch: a Gaussian of sensitivity ``c`` and std ``z √d``; composed, Gaussian DP with
    ``μ² = Σ c² / (z² d)`` (infinite where ``d = 0``), and ε at the one δ ``target``
    (else ``2 k δ`` for ``k`` stretches, the reference convention's).
    """
    from netdp.accounting.gdp import gaussian_epsilon

    steps = noise_mask.size
    holder = np.arange(steps) % n
    groups = ([[v] for v in range(n)] if coalition is None
              else [list(coalition_members(coalition, n))])
    base, weight, k, counts, values, nodes = [], [], [], [], [], []
    for members in groups:
        inside = np.isin(holder, members)
        window = np.cumsum(inside)  # stretches between two holds share an id
        out = ~inside
        draws = np.bincount(window[out], weights=noise_mask[out].astype(float),
                            minlength=window[-1] + 1)
        key = window[out] * n + holder[out]
        pair, times = np.unique(key, return_counts=True)
        win, node = np.divmod(pair, n)
        with np.errstate(divide="ignore"):
            mu2 = np.bincount(node, weights=times**2 / (z * z * draws[win]), minlength=n)
        views = int(np.unique(window[out]).size)
        dt = min(2.0 * views * delta, 1.0) if target is None else target
        others = np.setdiff1d(np.arange(n), members)
        eps = np.asarray(gaussian_epsilon(np.sqrt(mu2[others]), dt), dtype=float)
        base.append(0.0)
        weight.append(0)
        k.append(views)
        counts.append(others.size)
        values.append(eps)
        nodes.append(others)
    k_arr = np.array(k, np.int64)
    return PairLosses(
        "exact", n, np.arange(n) if coalition is None else np.array([-1]), np.array(base),
        np.array(weight, np.int64), k_arr, np.concatenate(values), np.array(counts, np.int64),
        np.concatenate(nodes), 2 * int(k_arr.max()) * delta if target is None else target)


def coalition_members(members: Sequence[int], n: int) -> np.ndarray:
    ids = np.unique(np.asarray(members, dtype=np.int64))
    check(
        ids.size >= 1 and ids.min() >= 0 and ids.max() < n,
        "coalition",
        f"members must be node ids in 0..{n - 1}",
    )
    check(ids.size < n, "coalition", "a coalition of every node leaves no one to protect")
    return ids


def kov_homogeneous_array(eps0: float, k: np.ndarray, delta: float) -> np.ndarray:
    """KOV-het for ``k`` identical ε0 entries with δ̃ = k δ, vectorized over k (0 for k = 0)."""
    k = np.asarray(k, dtype=float)
    steps = np.maximum(k, 1.0)
    sum_eps, s1, s2 = kov_het_terms(eps0)
    eps = kov_het_epsilon(steps * sum_eps, steps * s1, steps * s2, np.minimum(steps * delta, 1.0))
    return np.where(k > 0, eps, 0.0)


def _kov_homogeneous(eps0: float, k: int, delta: float) -> float:
    return float(kov_homogeneous_array(eps0, np.array([k]), delta)[0])
