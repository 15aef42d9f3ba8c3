"""Shared helpers for the tests."""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from netdp.run.cli import main

# Statistical tests: a deviation beyond Z standard errors fails. With fixed seeds each test
# is deterministic; Z = 5 keeps the chance that a *correct* implementation fails for an
# unlucky seed below 1e-6 per check, while a wrong constant (a factor 2 in a variance, a
# bias of a tenth of a std) fails by far.
Z = 5.0


def pytest_collection_modifyitems(config, items):
    """``slow`` tests (the full audit grid, ...) run only when asked: ``-m slow``."""
    if "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def assert_mean(samples: np.ndarray, expected: float, std: float | None = None) -> None:
    """The sample mean agrees with ``expected`` within Z standard errors."""
    samples = np.asarray(samples, dtype=float)
    std = samples.std(ddof=1) if std is None else std
    se = std / math.sqrt(samples.size)
    assert abs(samples.mean() - expected) <= Z * se, (samples.mean(), expected, se)


def assert_std_gaussian(samples: np.ndarray, expected: float, p: float = 1e-6) -> None:
    """The sample std of (near-)Gaussian samples is within the χ² two-sided bounds."""
    samples = np.asarray(samples, dtype=float)
    k = samples.size - 1
    ratio = k * samples.var(ddof=1) / expected**2
    lo, hi = stats.chi2.ppf(p / 2, k), stats.chi2.isf(p / 2, k)
    assert lo <= ratio <= hi, (samples.std(ddof=1), expected, lo / k, hi / k)


def assert_unbiased_with_std(estimates: np.ndarray, truth: float, std: float) -> None:
    """Independent runs' estimates: mean ``truth`` and std ``std`` (``assert_mean`` and
    ``assert_std_gaussian``), and a std off by a factor sqrt(1.5) rejected by the same
    χ² check at this many runs, so that the check can fail."""
    estimates = np.asarray(estimates, dtype=float)
    assert_mean(estimates, truth, std)
    assert_std_gaussian(estimates, std)
    k = estimates.size - 1
    ratio = k * estimates.var(ddof=1) / (math.sqrt(1.5) * std) ** 2
    assert not stats.chi2.ppf(5e-7, k) <= ratio <= stats.chi2.isf(5e-7, k)


def transitions_match(holders: np.ndarray, p: np.ndarray, least: int = 1000) -> bool:
    """Every transition frequency of the walk ``holders`` within Z binomial standard
    errors of ``p`` (per row: the visits to the row's node; at least ``least`` each, for
    the normal approximation); transitions outside ``p``'s support never happen."""
    counts = np.zeros_like(p)
    np.add.at(counts, (holders[:-1], holders[1:]), 1)
    rows = counts.sum(axis=1, keepdims=True)
    assert rows.min() > least  # enough visits for the normal approximation
    se = np.sqrt(p * (1 - p) / rows)
    return bool(np.all(np.abs(counts / rows - p) <= Z * se + 1e-12))


@pytest.fixture
def captured(monkeypatch):
    """The figures `netdp plot` saves (to measure their data ink): a spy on
    ``netdp.run.sweep.plots.save``."""
    from netdp.run.sweep import plots

    figures = []
    save = plots.save

    def spy(fig, path, *args, **kwargs):
        figures.append(fig)
        return save(fig, path, *args, **kwargs)

    monkeypatch.setattr(plots, "save", spy)
    return figures


def walk_and_view(config, observer: int):
    """Run 0 of ``config`` as ``simulate`` walks it (``Task.trace``) and ``observer``'s
    view of it: ``(task, setup, trace, outcome, view)``, for the tests that a view ends
    in the published result."""
    from netdp.core.setup import Streams
    from netdp.tasks import task_of

    task = task_of(config)
    setup = task.prepare(config)
    streams = Streams(setup.seed, 0)
    trace = task.trace(setup, streams)
    outcome = task.run(setup, trace, streams)
    return task, setup, trace, outcome, task.view(setup, trace, streams, observer=observer)


# -- the pages the report tests read (tests/report), made once per session: the README's
# default run (``netdp simulate --json --html``) and the tiny Figure 1b sweep (``--html``)

TINY_SPEC = Path(__file__).parent / "report" / "figure1b_tiny.toml"
#: The default run, its seed fixed.
DEFAULT_RUN = ["simulate", "--seed", "1"]


@pytest.fixture(scope="session")
def default_run(tmp_path_factory) -> dict:
    """``netdp simulate --seed 1 --json --html run.html --out run.json``: the page, the
    JSON it printed, and the same run's JSON without ``--html``."""
    folder = tmp_path_factory.mktemp("default-run")
    html, out = folder / "run.html", folder / "run.json"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main([*DEFAULT_RUN, "--json", "--out", str(out), "--html", str(html)]) == 0
        assert main([*DEFAULT_RUN, "--out", str(folder / "plain.json")]) == 0
    result = json.loads(out.read_text())
    assert json.loads(printed.getvalue().split("\n}\n")[0] + "\n}") == result
    return {"html": html, "result": result, "argv": DEFAULT_RUN, "folder": folder,
            "plain": json.loads((folder / "plain.json").read_text())}


@pytest.fixture(scope="session")
def tiny_sweep(tmp_path_factory) -> dict:
    """``netdp sweep figure1b_tiny.toml --out DIR --backend serial --html sweep.html``."""
    folder = tmp_path_factory.mktemp("tiny-sweep")
    html = folder / "sweep.html"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["sweep", str(TINY_SPEC), "--out", str(folder / "out"), "--backend",
                     "serial", "--no-progress", "--html", str(html)]) == 0
    return {"out": folder / "out", "html": html}


def view_cap_max(config) -> float:
    """The largest cap a pair of ``config``'s runs may reach (spec Correction 6): over its
    runs and observers, the LDP loss at the largest count of a node's contributions that
    the observer's view allows (:func:`netdp.tracking.view_cap.view_caps`, on the trace as
    it ran: a published trace cut short has fewer positions, so a smaller cap). A pair's
    figure may pass its node's realised LDP loss (the report's baseline), never this."""
    from netdp.core.setup import Streams
    from netdp.tasks import make_config, task_of
    from netdp.tracking.graph_observers import walk_stays
    from netdp.tracking.view_cap import view_caps

    config = make_config(config)
    task = task_of(config)
    setup = task.prepare(config)
    eps0 = task.tracker(setup, False).epsilon0
    top = 0.0  # a coalition's cap is at most any member's: the single observers' bound it
    for r in range(config.runs):
        trace = task.trace(setup, Streams(setup.seed, r))
        top = max(top, float(view_caps(trace, eps0, config.delta, None, walk_stays(setup)).max()))
    return top + 1e-9
