"""The exact accountant composes through the Fourier banks: the same figure as composing
each pair's discretised PLDs directly (its oracle here), never below it.

:mod:`netdp.tracking.exact` composes the views' PMFs in the Fourier domain, with the
mass outside each window bounded by Chernoff and the FFT's rounding put at ``+∞``;
composing the same pessimistic PMFs one by one (:meth:`PldPair.compose_many`, direct
convolutions) is the figure it must equal, up to those few ``δ`` shares.
"""

from __future__ import annotations

import numpy as np
import pytest

from netdp import engine
from netdp.accounting import loss_pmf
from netdp.core import seeding
from netdp.graphs import topologies
from netdp.tracking import cycle_entries as ce
from netdp.tracking import exact, view_plds
from netdp.tracking._kernels.walk import group_by_holder
from netdp.tracking.loss_table import observer_view, view_lengths

DELTA = 1e-6


def _run(n: int, steps: int, z: float, seed: int):
    trace = engine.walk("vector", engine.Router(topologies.complete(n, self_moves=True)),
                        steps, [seeding.generator(seed, "walk", 0, 0)])
    holders, _, observers, _ = observer_view(trace, None)
    observers = observers[:2]  # two observers keep the oracle's direct compositions short
    lengths = view_lengths(holders, steps, n, observers)
    law = ce.binomial_law(1.0 / (n - 1))
    noise = ce.Noise(z, 1.0, False)
    return holders, observers, lengths, law, noise


def _compose(views, u, law, noise, step, dt):
    """ε(dt) of the direct composition of ``views``' pessimistic PMFs towards ``u``."""
    parts = [exact.view_pld(int(views.kind[e]), int(views.length[e]), views.key(e, u), law,
                            noise, step) for e in range(views.size)]
    return max(float(loss_pmf.PldPair.compose_many(parts).epsilon(dt)), 0.0)


def _direct(holders, steps, n, observers, lengths, law, noise):
    """Each observer's base and each attributable pair's ε, composing the pessimistic
    PMFs directly: ``{(v, u): ε}`` (``u = -1`` for the base)."""
    step = view_plds.grid_step(lengths, observers.size, noise.z, True)
    start, pos = group_by_holder(holders, n)
    out = {}
    for v in observers:
        views = ce.observer_views(holders, steps, pos[start[v]:start[v + 1]])
        if views.size == 0:
            continue
        dt = exact.pair_delta(views, DELTA, DELTA)
        out[int(v), -1] = _compose(views, -2, law, noise, step, dt)
        ends = {int(x) for x in np.concatenate([views.a, views.b])} - {-1}
        for u in ends:
            out[int(v), u] = _compose(views, u, law, noise, step, dt)
    return out


@pytest.mark.parametrize(("n", "steps", "z", "seed"), [
    pytest.param(6, 60, 1.5, 1, marks=pytest.mark.slow), (9, 90, 2.5, 2)])
def test_exact_equals_the_direct_composition_and_is_never_below_it(n, steps, z, seed):
    holders, observers, lengths, law, noise = _run(n, steps, z, seed)
    base, weight, k, counts, values, nodes = exact.walk_pld_losses(
        holders, steps, n, observers, np.full(2, n - 1), lengths, law, noise, DELTA,
        "exact", True, DELTA)
    oracle = _direct(holders, steps, n, observers, lengths, law, noise)
    got = {}
    at = 0
    for o, v in enumerate(observers):
        got[int(v), -1] = float(base[o])
        for i in range(at, at + int(counts[o])):
            got[int(v), int(nodes[i])] = float(values[i])
        at += int(counts[o])
    assert set(got) == set(oracle)
    mine = np.array([got[key] for key in oracle])
    theirs = np.array(list(oracle.values()))
    assert np.all(mine >= theirs - 1e-12 * np.maximum(theirs, 1.0))  # never below
    np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-9)
    assert mine.max() > 0.1  # the case has losses to compare


def test_the_pld_bins_are_above_exact():
    """pld's length bins and coarser grid only raise the figure (module docstring)."""
    n, steps = 8, 400
    holders, observers, lengths, law, noise = _run(n, steps, 2.0, 3)
    args = (holders, steps, n, observers, np.full(2, n - 1), lengths, law, noise, DELTA)
    ex = exact.walk_pld_losses(*args, "exact", True, DELTA)
    pl = exact.walk_pld_losses(*args, "pld", True, DELTA)
    np.testing.assert_array_equal(ex[5], pl[5])  # the same attributable pairs
    assert np.all(pl[0] >= ex[0] - 1e-12) and np.all(pl[4] >= ex[4] - 1e-12)
    assert pl[4].mean() > ex[4].mean()  # the bins and the grid do cost something
