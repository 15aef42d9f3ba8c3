"""Typed reports: frozen records, strict JSON with a schema number, readable text."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
from fuzz_names import check_names

from netdp import simulate
from netdp.report.types import SCHEMA, PairSummary, fmt, row
from netdp.run.cli import main


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


SECRET = "SECRET-5c1e-do-not-print"


def test_report_opens_no_file_its_json_names(tmp_path, capsys, monkeypatch):
    """A crafted JSON naming any file as its graph (here as a contact trace, whose reader
    quoted a line) makes ``netdp report`` ask for --topology, not read the file; with
    --topology the user's file draws the heatmap, and a named graph is rebuilt."""
    import numpy as np

    secret = tmp_path / "secret.txt"
    secret.write_text(f"t,u,v\n{SECRET},0,1\n")
    report = simulate({"topology": "hypercube", "nodes": 8, "steps": 40, "seed": 1},
                      keep_pairs=True)
    result = report.to_json()
    pairs = tmp_path / "p.npy"
    np.save(pairs, report.pairs)
    named = tmp_path / "named.json"
    named.write_text(json.dumps(result))
    result["config"].update(topology=str(secret), graph_format="contacts")
    crafted = tmp_path / "crafted.json"
    crafted.write_text(json.dumps(result))
    page = tmp_path / "page.html"
    opened: list[str] = []
    real = Path.open

    def spy(self, *args, **kwargs):
        opened.append(str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", spy)
    code = main(["report", str(crafted), "--pairs", str(pairs), "--html", str(page)])
    out, err = capsys.readouterr()
    assert code == 2 and not page.exists() and SECRET not in err + out, err
    assert "--topology: give --topology FILE" in err and len(err.strip().splitlines()) == 1, err
    check_names(["report", str(crafted), "--pairs", str(pairs), "--html", str(page)],
                err.strip())
    assert str(secret) not in opened
    edges = tmp_path / "cube.txt"
    edges.write_text("".join(f"{u} {u ^ (1 << b)}\n" for u in range(8) for b in range(3)
                             if u < u ^ (1 << b)))
    result["config"].pop("graph_format")
    crafted.write_text(json.dumps(result))
    assert main(["report", str(crafted), "--pairs", str(pairs), "--topology", str(edges),
                 "--html", str(page)]) == 0
    assert "fig-heatmap" in page.read_text() and SECRET not in page.read_text()
    assert main(["report", str(named), "--pairs", str(pairs), "--html", str(page)]) == 0
    assert "fig-heatmap" in page.read_text()
    capsys.readouterr()
    assert main(["report", str(named), "--topology", str(edges), "--html", str(page)]) == 2
    assert "--topology: " in capsys.readouterr().err
