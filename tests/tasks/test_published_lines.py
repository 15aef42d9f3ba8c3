"""The published bounds as theory lines by hop distance in the sum's report: JSON, text and
the by-distance plot, all at the one δ of :func:`netdp.bounds.by_distance.target_delta`."""

from __future__ import annotations

import json

import numpy as np
import pytest

from netdp import simulate
from netdp.bounds.by_distance import PNFDP_PAIRS, target_delta
from netdp.report.pair_figures import distance_series

RUN = {"topology": "hypercube", "nodes": 16, "steps": 160, "seed": 3, "accountants": ("kov",)}


@pytest.fixture(scope="module")
def report():
    return simulate(RUN)


def test_the_json_holds_both_lines_by_distance_beside_the_empirical_rows(report):
    out = json.loads(json.dumps(report.to_json()))
    priv = out["privacy"]
    lines, info = priv["theory_by_distance"], priv["theory_by_distance_info"]
    assert set(lines) == {"icml2024", "pn-f-dp"}
    empirical = [r["distance"] for r in priv["empirical"][0]["by_distance"]]
    for name, rows in lines.items():
        assert [r["distance"] for r in rows] == empirical
        assert all(r["min"] <= r["mean"] * (1 + 1e-12) and r["mean"] <= r["max"] * (1 + 1e-12)
                   for r in rows)
        assert info[name]["delta"] == target_delta(report.config) == 1e-6
        assert info[name]["sound_for_netdp_view"] is False
    assert info["icml2024"]["pairs"] == 16 * 15  # every pair
    assert info["pn-f-dp"]["pairs"] <= PNFDP_PAIRS and "sampled" in info["pn-f-dp"]
    # the hypercube is distance-transitive: one value per distance, falling with it
    for rows in lines.values():
        assert all(r["min"] == pytest.approx(r["max"]) for r in rows)
        means = [r["mean"] for r in rows]
        assert all(a > b for a, b in zip(means, means[1:], strict=False))


def test_the_icml_line_averages_to_the_reports_mean_closed_form(report):
    # the same closed form: its mean over all pairs is the theory figure of icml_theory
    rows = report.privacy.theory_by_distance["icml2024"]
    mean = sum(r.mean * r.pairs for r in rows) / sum(r.pairs for r in rows)
    assert mean == pytest.approx(report.privacy.theory["graph-walk-icml2024"], rel=1e-9)


def test_the_text_shows_the_lines_and_what_they_bound(report):
    text = report.text()
    assert "icml2024 mean" in text and "pn-f-dp mean" in text
    assert "a bound of another model, not of this view" in text


def test_the_by_distance_plot_draws_them_as_theory(report):
    series = distance_series(json.loads(json.dumps(report.to_json())))
    theory = [s for s in series if s.role == "theory"]
    assert [s.label.split(",")[0] for s in theory] == ["theory icml2024", "theory pn-f-dp"]
    assert np.array_equal(theory[0].distance, np.array([1, 2, 3, 4]))


def test_no_lines_without_a_transition_matrix_or_gaussian_noise():
    ring = simulate({"topology": "ring", "nodes": 8, "seed": 1})
    assert not ring.privacy.theory_by_distance
    laplace = simulate({**RUN, "mechanism": "laplace"})
    assert not laplace.privacy.theory_by_distance
