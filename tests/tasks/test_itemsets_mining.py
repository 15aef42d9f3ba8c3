"""--task itemsets --mining svim/svsm (S&P 2018 §V-§VI): the itemset round is unbiased up to
its closed-form bias with the closed-form variance; the candidate and support helpers
against brute force; precision/recall of the top itemsets; pairwise <= LDP; bad input."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from conftest import assert_mean, assert_std_gaussian, view_cap_max
from scipy import stats

from netdp import engine, simulate
from netdp.core.errors import InputError
from netdp.core.setup import Streams
from netdp.engine.routing import Router
from netdp.engine.trace import Trace
from netdp.mechanisms.set_valued import (
    PSFO,
    ItemSets,
    candidate_masks,
    contained,
    itemset_keys,
    itemset_supports,
    mask_items,
)
from netdp.run.cli import main
from netdp.tasks import get_task, make_config
from netdp.tasks.itemsets import phase_trace, psfo_round, size_round
from netdp.tasks.preparation import with_seed

RUNS = 400


def _random_sets(rng: np.random.Generator, n: int, d: int, max_size: int) -> ItemSets:
    return ItemSets.from_lists([list(rng.choice(d, int(rng.integers(0, max_size + 1)),
                                                replace=False)) for _ in range(n)], d)


def test_candidates_and_supports_against_brute_force():
    sets = _random_sets(np.random.default_rng(5), 60, 7, 5)
    lists = [set(sets.items[a:b]) for a, b in zip(sets.offsets[:-1], sets.offsets[1:],
                                                   strict=True)]
    top = np.array([4, 1, 6, 0])
    masks = candidate_masks(top.size, 3)
    rows = mask_items(top, masks, 3)
    combos = [c for s in (2, 3) for c in itertools.combinations(range(4), s)]
    assert masks.size == len(combos) == 10
    for row, combo in zip(rows, combos, strict=True):
        assert sorted(int(i) for i in row if i >= 0) == sorted(int(top[j]) for j in combo)
    held = contained(sets, top, masks)
    for u, v in enumerate(lists):
        expect = [j for j, row in enumerate(rows) if {int(i) for i in row if i >= 0} <= v]
        assert list(held.items[held.offsets[u]:held.offsets[u + 1]]) == expect
    keys, counts = itemset_supports(sets, 3)
    brute: dict[tuple[int, ...], int] = {}
    for v in lists:
        for s in (2, 3):
            for c in itertools.combinations(sorted(int(i) for i in v), s):
                brute[c] = brute.get(c, 0) + 1
    padded = np.array([list(c) + [-1] * (3 - len(c)) for c in brute])
    order = np.argsort(itemset_keys(padded, 7))
    np.testing.assert_array_equal(keys, itemset_keys(padded, 7)[order])
    np.testing.assert_array_equal(counts, np.array(list(brute.values()))[order])


@pytest.fixture(scope="module", params=["grr", "olh"])
def itemset_round(request):
    """The itemset round over fixed candidates (the pairs and triples of 4 items), ℓ = 2:
    ``RUNS`` rounds of ``N`` reports by holders drawn uniformly (the complete graph)."""
    rng = np.random.default_rng(17)
    sets = _random_sets(rng, 200, 8, 5)
    top = np.array([0, 1, 2, 3])
    held = contained(sets, top, candidate_masks(4, 3))
    psfo = PSFO(1.0, held.domain, 2, request.param)
    reports = 600
    est = np.array([psfo_round(psfo, held, rng.integers(0, sets.n, reports), rng)
                    for _ in range(RUNS)])
    share = psfo.sampling_sums(held)[0] / sets.n
    return psfo, held, est, psfo.length * share, psfo.mixture_variance(share, reports)


def test_itemset_round_unbiased_up_to_its_bias_with_the_closed_form_variance(itemset_round):
    """The mean is ``ℓ Σ_u π_uj / n`` (the itemset's share, less the closed-form bias of the
    users holding more than ℓ candidates); the spread the mixture variance."""
    psfo, held, est, mean, var = itemset_round
    np.testing.assert_allclose(mean, (held.counts() + psfo.bias(held)) / held.n, rtol=1e-12)
    for j in range(est.shape[1]):
        assert_mean(est[:, j], mean[j], math.sqrt(var[j]))
        assert_std_gaussian(est[:, j], math.sqrt(var[j]))


def test_itemset_round_checks_can_fail(itemset_round):
    """1.5 times the variance is rejected, and with GRR (whose variance is the smaller
    here: OLH's leaves the bias within 5 standard errors at this many runs) so is the
    plain support as the mean."""
    psfo, held, est, mean, var = itemset_round
    z = ((est - mean) / np.sqrt(1.5 * var)).ravel()
    k = z.size - 1
    assert not stats.chi2.ppf(5e-7, k) <= k * z.var(ddof=1) <= stats.chi2.isf(5e-7, k)
    if psfo.chosen != "grr":
        return
    truth = held.frequencies()
    worst = int(np.argmax(np.abs(mean - truth)))
    assert abs(est[:, worst].mean() - truth[worst]) > 5 * math.sqrt(var[worst] / RUNS)


def test_size_round_finds_the_90th_percentile_at_large_epsilon():
    rng = np.random.default_rng(3)
    sizes = rng.integers(0, 9, 500)
    truth = int(np.quantile(sizes, 0.9, method="inverted_cdf"))
    got = size_round(8.0, sizes, 10, "adaptive", rng.integers(0, 500, 20_000), rng)
    assert got == max(1, truth)


def _planted(path, n: int = 400, seed: int = 0) -> str:
    """Baskets {0,1,2} (30%), {0,1} (25%), {0,2} (15%), {1,2} (5%), none (25%), each with
    1-2 background items from 3..29: the top pairs {0,1} .55, {0,2} .45, {1,2} .35, the
    next below .1."""
    rng = np.random.default_rng(seed)
    kinds = [[0, 1, 2], [0, 1], [0, 2], [1, 2], []]
    rows = []
    for kind in rng.choice(5, n, p=[0.3, 0.25, 0.15, 0.05, 0.25]):
        extra = rng.choice(np.arange(3, 30), int(rng.integers(1, 3)), replace=False)
        rows.append(" ".join(str(i) for i in [*kinds[kind], *extra]))
    path.write_text("items\n" + "\n".join(rows) + "\n")
    return str(path)


def test_itemset_precision_one_when_easy_lower_at_tiny_epsilon(tmp_path):
    data = _planted(tmp_path / "baskets.csv")
    common = {"task": "itemsets", "data_file": data, "domain": 30, "top": 3,
              "mining": "svsm", "accountants": (), "seed": 2}
    easy = simulate(make_config(**common, steps=30_000, epsilon=4.0))
    u = easy.utility
    assert u.itemset_precision == 1.0 and u.itemset_recall == 1.0 and u.precision == 1.0
    assert u.last is not None and u.last.itemsets is not None
    assert {tuple(int(i) for i in r if i >= 0) for r in u.last.itemsets} == {(0, 1), (0, 2),
                                                                            (1, 2)}
    np.testing.assert_allclose(sorted(u.last.itemset_truth), sorted(
        np.array([(0.3 + 0.25), 0.3 + 0.15, 0.3 + 0.05])), atol=0.08)
    hard = simulate(make_config(**common, steps=2000, epsilon=0.05, runs=5))
    assert hard.utility.itemset_precision < 0.7


def test_svim_reports_items_only_and_rounds_the_steps_up():
    report = simulate(make_config(task="itemsets", nodes=50, steps=1000, domain=20, top=4,
                                  mining="svim", accountants=(), seed=1))
    assert report.config.steps == 1002  # three equal blocks
    d = report.utility.to_dict()
    assert d["mining"] == "svim" and len(d["round_set_sizes"]) == 2
    assert "itemsets_found" not in d and math.isnan(report.utility.theoretical_mse)


def test_phase_trace_makes_each_round_a_token():
    holders = np.arange(24).reshape(2, 12) % 5
    trace = Trace(5, holders)
    assert phase_trace(trace, 1) is trace
    split = phase_trace(trace, 3)
    np.testing.assert_array_equal(split.holders, holders.reshape(6, 4))
    np.testing.assert_array_equal(split.holders[4], holders[1, 4:8])


def test_pairwise_losses_never_exceed_ldp():
    report = simulate(make_config(task="itemsets", nodes=30, steps=1500, domain=10, top=3,
                                  mining="svsm", seed=3))
    (kov,) = report.privacy.empirical
    assert 0 < kov.mean <= kov.max <= view_cap_max(report.config)


def test_the_audit_view_is_one_round_only():
    config = with_seed(make_config(task="itemsets", nodes=15, steps=300, domain=6,
                                   mining="svim", seed=5))
    task = get_task("itemsets")
    setup = task.prepare(config)
    streams = Streams(setup.seed, 0)
    trace = engine.walk("vector", Router(setup.topology, config.walk), setup.steps,
                        [streams.generator("walk", 0)])
    with pytest.raises(InputError) as info:
        task.view(setup, trace, streams, observer=1)
    assert info.value.param == "mining"


def test_bad_input_names_its_flag(capsys):
    for argv, flag in ((["--mining", "svim", "--topology", "ring"], "--mining"),
                       (["--mining", "apriori"], "--mining"),
                       (["--mining", "svsm", "--itemset-size", "5"], "--itemset-size"),
                       (["--mining", "svsm", "--domain", "100", "--top", "40",
                         "--itemset-size", "4"], "--itemset-size")):
        assert main(["simulate", "--task", "itemsets", *argv]) == 2
        assert f"error: {flag}" in capsys.readouterr().err, argv
