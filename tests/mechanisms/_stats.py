"""Helpers the local-randomizer tests share: Monte-Carlo runs and their tolerance checks.

Every check allows ``Z`` standard errors (``tests/conftest.py``), so with the fixed seeds
of the tests a correct mechanism passes and a wrong constant fails.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import Z, assert_std_gaussian

from netdp.core.errors import InputError


def mean_ok(samples: np.ndarray, expected: float, std: float) -> bool:
    """The sample mean is within Z standard errors ``std / sqrt(R)`` of ``expected``."""
    return abs(samples.mean() - expected) <= Z * std / math.sqrt(samples.size)


def agrees(samples: np.ndarray, expected: float) -> bool:
    """The sample mean is within Z *estimated* standard errors of ``expected``.

    A float-rounding floor of ``1e-12 |expected|`` keeps an exactly constant sample of the
    right value from failing.
    """
    samples = np.asarray(samples, dtype=float)
    se = samples.std(ddof=1) / math.sqrt(samples.size)
    return abs(samples.mean() - expected) <= Z * se + 1e-12 * abs(expected)


def variance_ok(samples: np.ndarray, expected: float) -> bool:
    """The sample variance is within Z standard errors (of a sample variance) of ``expected``.

    ``SE = sqrt((m4 - s^4) / R)`` with ``m4`` the sample fourth central moment.
    """
    centred = samples - samples.mean()
    s2 = samples.var(ddof=1)
    se = math.sqrt(max(np.mean(centred**4) - s2**2, 0.0) / samples.size)
    return abs(s2 - expected) <= Z * se


def std_ok(samples: np.ndarray, expected_var: float) -> bool:
    """The sample std of (near-)Gaussian samples is within the χ² bounds of the conftest."""
    try:
        assert_std_gaussian(samples, math.sqrt(expected_var))
    except AssertionError:
        return False
    return True


def estimated_counts(mech, counts: np.ndarray, runs: int, seed: int) -> np.ndarray:
    """Estimated counts of ``runs`` independent rounds on one dataset, shape (runs, d).

    The dataset holds ``counts[i]`` users of category i. All rounds are perturbed by one
    call (``default_rng(seed)``), then each round is aggregated and estimated on its own.
    """
    counts = np.asarray(counts)
    n = int(counts.sum())
    values = np.tile(np.repeat(np.arange(len(counts)), counts), runs)
    reports = mech.perturb(values, np.random.default_rng(seed))
    return np.array([mech.estimate_counts(mech.aggregate(reports[r * n:(r + 1) * n]), n)
                     for r in range(runs)])


def estimated_frequencies(mech, counts: np.ndarray, runs: int, seed: int) -> np.ndarray:
    """:func:`estimated_counts` divided by the number of users."""
    return estimated_counts(mech, counts, runs, seed) / int(np.sum(counts))


def find_seed(make, accept, limit: int = 5000):
    """``make(seed)`` for the first hash seed that builds (no InputError) and ``accept`` takes."""
    for seed in range(limit):
        try:
            mech = make(seed)
        except InputError:
            continue
        if accept(mech):
            return mech
    raise AssertionError("no hash seed found")


def assert_rejected(cases) -> None:
    """Every ``(make, param)``: ``make()`` raises an InputError naming ``param`` first."""
    for make, param in cases:
        with pytest.raises(InputError) as info:
            make()
        assert info.value.param == param
        assert str(info.value).startswith(param)
