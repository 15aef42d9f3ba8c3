"""The pages the report tests read, made once per session: the README's default run
(``netdp simulate --json --html``) and the tiny Figure 1b sweep (``--html``)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from netdp.run.cli import main

TINY_SPEC = Path(__file__).with_name("figure1b_tiny.toml")
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
