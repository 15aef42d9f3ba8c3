"""Typed reports: frozen records, strict JSON with a schema number, readable text."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from netdp import simulate
from netdp.report.types import SCHEMA, PairSummary, fmt, row


@pytest.fixture(scope="module")
def exposed():
    """A ring with a coalition holding both neighbours of node 4: infinite losses."""
    return simulate({"topology": "ring", "nodes": 12, "coalition": "3,5", "seed": 1})


def test_reports_are_frozen(exposed):
    with pytest.raises(dataclasses.FrozenInstanceError):
        exposed.runs = ()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        exposed.privacy.empirical[0].mean = 0.0  # type: ignore[misc]


def test_json_is_strict_and_numbered(exposed):
    out = exposed.to_json()
    assert out["schema"] == SCHEMA == 2
    text = json.dumps(out, allow_nan=False)  # no inf or nan left
    assert '"inf"' in text
    assert math.isinf(exposed.to_dict()["privacy"]["empirical"][0]["max"])
    assert out["utility"] == exposed.utility.to_json()
    assert out["privacy"] == exposed.privacy.to_json()
    assert out["runs"] == [r.to_json() for r in exposed.runs]
    assert out["config"]["coalition"] == "3,5" and "domain" not in out["config"]


def test_pair_summary_round_trips():
    summary = {"accountant": "kov", "delta": 1e-6, "pairs": 10, "unprotected": 0,
               "mean": 1.0, "min": 0.5, "max": 2.0, "q50": 1.0, "q90": 1.5, "q99": 1.9}
    assert PairSummary.from_dict(summary).to_dict() == summary


def test_text_names_the_coalition_and_keeps_cells_apart(exposed):
    text = exposed.text()
    assert "observer: the coalition 3,5" in text.splitlines()[0]
    assert "unprotected" in text
    cells = row(("label", fmt(-1.2345e300), fmt(float("inf")), fmt(123456789.0)),
                (6, 10, 10, 10))
    assert len(cells.split()) == 4  # never run together, however wide a value
