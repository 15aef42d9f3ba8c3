"""The summary of loss tables (:mod:`netdp.tracking.loss_summary`): its weighted mean,
min, max and quantiles equal those of the table written out pair by pair and sorted, on
tables that take every path of the selection (one pass, several, a bin sorted outright,
a bin of one key), with ties, zeros of both signs and unprotected pairs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from netdp.report.types import QUANTILES
from netdp.tracking import loss_summary
from netdp.tracking.loss_summary import summarize
from netdp.tracking.loss_table import PairLosses


def table(base: np.ndarray, weight: np.ndarray, values: np.ndarray) -> PairLosses:
    k = base.size
    counts = np.zeros(k, np.int64)
    counts[0] = values.size
    return PairLosses("rdp", k, np.arange(k), base, weight, np.ones(k, np.int64), values,
                      counts, None, 1e-6)


def written_out(runs: list[PairLosses]) -> dict:
    """The oracle: every pair's loss in one sorted array (the base repeated by its
    weight); the q-quantile is its element of rank ``ceil(q × pairs)``."""
    pairs = np.sort(np.concatenate([np.concatenate([np.repeat(r.base, r.weight), r.values])
                                    for r in runs]))
    out = {"pairs": pairs.size, "min": pairs[0], "max": pairs[-1],
           "unprotected": sum(int(np.isinf(r.values).sum()) for r in runs)}
    for q in QUANTILES:
        out[f"q{round(q * 100):d}"] = pairs[max(math.ceil(q * pairs.size), 1) - 1]
    return out


def random_runs(rng: np.random.Generator, kind: str) -> list[PairLosses]:
    runs = []
    for _ in range(int(rng.integers(1, 4))):
        k = int(rng.integers(1, 50))
        weight = rng.integers(0, 2000, k)
        size = int(rng.integers(0, 300_000))
        if kind == "narrow":  # one pass cannot split them: several passes
            values = 0.00099 + 1e-9 * rng.random(size)
            base = 0.00099 + 1e-9 * rng.random(k)
        elif kind == "ties":  # a bin of one key
            values = rng.choice([0.0, -0.0, 0.25, 0.5, np.inf], size)
            base = rng.choice([0.0, 0.25, 0.75], k)
        else:
            values = rng.exponential(size=size) * rng.choice([1.0, 1e-3], size)
            base = rng.exponential(size=k)
        runs.append(table(base, weight, values))
    return runs


@pytest.mark.parametrize("kind", ["spread", "narrow", "ties"])
@pytest.mark.parametrize("seed", range(4))
def test_the_summary_equals_the_table_written_out(kind, seed):
    runs = random_runs(np.random.default_rng(seed), kind)
    if sum(r.weight.sum() + r.values.size for r in runs) == 0:
        return
    got, want = summarize(runs), written_out(runs)
    for key, value in want.items():
        assert got[key] == value, (key, got[key], value)
    finite = np.concatenate([np.repeat(r.base, r.weight) for r in runs]
                            + [r.values for r in runs])
    assert got["mean"] == pytest.approx(finite.mean(), rel=1e-12)


def test_a_bin_sorted_outright_and_one_narrowed_to_a_key_agree(monkeypatch):
    """The same table through the selection's two ends: bins sorted as soon as they hold
    at most 2^16 pairs (the default), and never sorted (narrowed to one key)."""
    runs = random_runs(np.random.default_rng(11), "narrow")
    sorted_outright = summarize(runs)
    monkeypatch.setattr(loss_summary, "_GATHER", -1)
    narrowed = summarize(runs)
    assert sorted_outright == narrowed
    assert narrowed["q50"] == written_out(runs)["q50"]


def test_a_quantile_off_by_one_pair_is_caught():
    """The oracle tells neighbours apart: on distinct losses, the rank below gives
    another value."""
    runs = random_runs(np.random.default_rng(3), "spread")
    pairs = np.sort(np.concatenate([np.concatenate([np.repeat(r.base, r.weight), r.values])
                                    for r in runs]))
    rank = max(math.ceil(0.9 * pairs.size), 1)
    assert summarize(runs)["q90"] == pairs[rank - 1] != pairs[rank - 2]


def test_an_empty_table_is_refused():
    from netdp.core.errors import InputError

    empty = table(np.zeros(2), np.zeros(2, np.int64), np.zeros(0))
    with pytest.raises(InputError):
        summarize([empty])
