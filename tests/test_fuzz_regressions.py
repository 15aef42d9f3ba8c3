"""The fuzzer's regression corpus: every command line that once gave a traceback, a
second stderr line or a run without end, kept as an explicit case (issue 29).

``{name}`` in a case is one of the generated files of tests/test_fuzz_cli.py.
"""

from __future__ import annotations

import re

import pytest
from test_fuzz_cli import check_case, make_inputs

SIM = ["simulate", "-n", "6", "--steps", "30"]
GOSSIP = ["simulate", "--protocol", "gossip", "-n", "6"]

CASES: list[tuple[str, list[str]]] = [
    # numbers out of any meaning: refused by their declared range
    ("gossip-sigma-1e300", [*GOSSIP, "--sigma", "1e300"]),
    ("gossip-sigma-1e-300", [*GOSSIP, "--sigma", "1e-300"]),
    ("sgd-gossip-sigma-1e300", [*GOSSIP, "--task", "sgd", "--sigma", "1e300"]),
    ("range-1e300-1e301", [*SIM, "--range", "1e300", "1e301"]),
    ("range-pm-1e300", [*SIM, "--range", "-1e300", "1e300"]),
    ("gossip-range-pm-1e300", [*GOSSIP, "--range", "-1e300", "1e300"]),
    ("laplace-eps-1e-300", [*SIM, "--mechanism", "laplace", "--epsilon", "1e-300"]),
    ("histogram-eps-1e-300", [*SIM, "--task", "histogram", "--epsilon", "1e-300"]),
    ("olh-eps-1e-300", [*SIM, "--task", "itemsets", "--oracle", "olh", "--epsilon", "1e-300"]),
    ("multidim-eps-1e-300", [*SIM, "--task", "multidim", "--epsilon", "1e-300"]),
    ("sgd-eps-1e300", [*SIM, "--task", "sgd", "--epsilon", "1e300"]),
    ("rdp-pld-eps-1e300", [*SIM, "--epsilon", "1e300", "--accountant", "rdp",
                           "--accountant", "pld"]),
    ("sgd-lipschitz-1e300", [*SIM, "--task", "sgd", "--lipschitz", "1e300"]),
    ("sgd-max-contributions-1e300", [*SIM, "--task", "sgd", "--max-contributions", "1e300"]),
    ("audit-domain-1e300", ["audit", "--mechanism", "olh", "--domain", "1e300"]),
    ("audit-steps-1e300", ["audit", "--task", "sum", "--steps", "1e300", "--trials", "100"]),
    ("audit-rounds-1e300", ["audit", "--task", "sum", "--topology", "ring", "--rounds",
                            "1e300", "--trials", "100"]),
    ("audit-eps-1e12", ["audit", "--epsilon", "1e12", "--trials", "100"]),
    ("attack-eps-1e12", ["attack", "--epsilon", "1e12", "--trials", "2", "--users", "2000"]),
    # bad files: one line naming the flag
    ("gossip-matrix-empty-npy", [*GOSSIP, "--gossip-matrix", "{empty.npy}"]),
    ("plot-pairs-empty-npy", ["plot", "--preset", "pairs", "--pairs", "{empty.npy}",
                              "--out", "x.png"]),
    ("loss-binary", [*SIM, "--loss", "file:{binary.bin}"]),
    ("churn-binary", [*SIM, "--churn", "file:{binary.bin}"]),
    ("loss-huge-cell", [*SIM, "--loss", "file:{huge-cell.csv}"]),
    ("data-file-huge-cell", [*SIM, "--data-file", "{huge-cell.csv}"]),
    ("config-deep", [*SIM, "--config", "{deep.toml}"]),
    ("config-deep-closed", [*SIM, "--config", "{deep-closed.toml}"]),
    ("sweep-spec-deep", ["sweep", "{deep.toml}", "--out", "o", "--backend", "serial"]),
    ("sweep-spec-deep-closed", ["sweep", "{deep-closed.toml}", "--out", "o"]),
    ("plot-result-deep-json", ["plot", "--preset", "by-distance", "--result", "{deep.json}",
                               "--out", "x.png"]),
    ("plot-result-deep-object", ["plot", "--preset", "by-distance", "--result",
                                 "{deep-object.json}", "--out", "x.png"]),
    ("account-binary", ["account", "{binary.bin}"]),
    ("account-deep-json", ["account", "{deep.json}"]),
]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, str]:
    """The fuzzer's generated files, by name."""
    return make_inputs(tmp_path_factory.mktemp("fuzz-regressions"))


def _argv(argv: list[str], inputs: dict[str, str]) -> list[str]:
    return [re.sub(r"\{([^}]+)\}", lambda m: inputs[m.group(1)], word) for word in argv]


@pytest.mark.parametrize(("label", "argv"), CASES, ids=[c[0] for c in CASES])
def test_regression(label, argv, inputs):
    check_case(_argv(argv, inputs))


def test_regressions_exit_2(inputs, tmp_path, monkeypatch):
    """The corpus's cases are refusals: each exits 2 (checked once, all together, in a
    fresh folder: nothing may land in the checkout)."""
    monkeypatch.chdir(tmp_path)
    import contextlib
    import io

    from netdp.run.cli import main

    codes = {}
    for label, argv in CASES:
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            codes[label] = main(_argv(argv, inputs))
    assert {k: v for k, v in codes.items() if v != 2} == {}


@pytest.mark.xfail(run=False, reason="found by the slow tier: a protocol audit of "
                   "heavy-hitters at its default size takes over 30 s (not refused up "
                   "front, no time estimate); open")
def test_audit_heavy_hitters_default_is_bounded(inputs):
    check_case(["audit", "--trials", "200", "--task", "heavy-hitters"])
