"""Bad input, generated for every parameter from its declaration, sizes included: each is
refused with exit status 2 and one line naming a flag, with no traceback and nothing
written. Also the same values from a TOML config file, where types are not strings."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from netdp.core.params import Param, params_of
from netdp.core.simulation_config import SimulationConfig
from netdp.run.cli import main
from netdp.tasks import TASKS


def _bad_values(spec: Param) -> list[str]:
    """Text values that a parameter of this declaration must refuse."""
    if spec.kind is bool:
        return []
    if spec.choices is not None:
        return ["nope", ""]
    if spec.kind is int:
        out = ["abc", "1.5", "nan", "inf"]
        if spec.low is not None:
            out.append(str(int(spec.low) - 1))
        if spec.high is not None:
            out.append(str(int(spec.high) + 1))
        return out
    if spec.kind is float:
        out = ["abc", "nan", "inf", "-inf"]
        if spec.low is not None:
            out.append(repr(spec.low - 1.0) if not spec.low_open else repr(spec.low))
        if spec.high is not None:
            out.append(repr(spec.high + 1.0) if not spec.high_open else repr(spec.high))
        return out
    return []


def _records() -> list[tuple[str, list[str], type]]:
    """(label, the flags that pick the task, the record of its parameters)."""
    out: list[tuple[str, list[str], type]] = [("sum", ["--task", "sum"], SimulationConfig)]
    for t in TASKS.values():
        out.append((t.key, ["--task", t.name, "--protocol", t.protocol], t.section))
    return out


def _cases() -> list[tuple[str, list[str]]]:
    cases = []
    for label, picks, record in _records():
        for name, spec, _ in params_of(record):
            if name in ("task", "protocol") or spec.pair:
                continue
            flag = "--" + (spec.flag or name.replace("_", "-"))
            for value in _bad_values(spec):
                cases.append((f"{label}:{flag}={value}", [*picks, flag, value]))
    return cases


SIZES = [
    ("nodes-1e9", ["--nodes", "1e9"]),
    ("nodes-1e9-ring", ["--topology", "ring", "--nodes", "1000000000"]),
    ("steps-1e14", ["--steps", "1e14"]),
    ("rounds-1e9", ["--topology", "ring", "--rounds", "1e9"]),
    ("domain-1e9", ["--task", "histogram", "--domain", "1e9"]),
    ("dummies-1e12", ["--task", "histogram", "--topology", "ring", "--dummies", "1e12"]),
    ("tokens-1e9", ["--tokens", "1e9", "-n", "10"]),
    ("hypercube-2^30", ["--topology", "hypercube", "--nodes", str(2**30)]),
    ("sgd-nodes-1e6", ["--task", "sgd", "--nodes", "1000000"]),
    ("runs-1e9", ["--runs", "1e9"]),
    ("seed-huge", ["--seed", "1e300"]),
    ("pairs-out-huge", ["--nodes", "1e9", "--pairs-out", "p.npy"]),
    ("pairs-out-20001", ["--nodes", "20001", "--steps", "1", "--pairs-out", "p.npy"]),
    ("range-overflow", ["--range", "-1e308", "1e308"]),
    ("range-reversed", ["--range", "1", "-1e3"]),
    ("hist-eps-huge", ["--task", "histogram", "--epsilon", "1e300"]),
    ("latency", ["--latency", "uniform:2:1"]),
    ("coalition", ["--coalition", "random:0"]),
    ("coalition-range", ["--nodes", "10", "--coalition", "3,99"]),
    ("other-task-flag", ["--domain", "5"]),
    ("sgd-flag-on-sum", ["--lr", "0.1"]),
    ("every-hop-histogram", ["--task", "histogram", "--noise-every-hop"]),
    ("self-moves-ring", ["--topology", "ring", "--no-self-moves"]),
    ("directed-named", ["--topology", "karate", "--directed"]),
    ("rounds-complete", ["--rounds", "3"]),
    ("steps-ring", ["--topology", "ring", "--steps", "10"]),
    ("walk-ring", ["--topology", "ring", "--walk", "metropolis"]),
    ("curves-on-sum", ["--curves", "c"]),
    ("accountant-hist", ["--task", "histogram", "--accountant", "rdp"]),
    ("accountant-ring", ["--topology", "ring", "--accountant", "rdp"]),
    ("laplace-rdp", ["--mechanism", "laplace", "--accountant", "rdp"]),
    ("column-without-file", ["--column", "x"]),
    ("missing-data-file", ["--data-file", "nope.csv"]),
    ("missing-topology", ["--topology", "nope.txt"]),
    ("out-is-dir", ["--out", "."]),
]


def _run(capsys, tmp_path: Path, argv: list[str]) -> tuple[int, str]:
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        code = main(["simulate", *argv])
    finally:
        os.chdir(cwd)
    out, err = capsys.readouterr()
    return code, err


@pytest.mark.parametrize(("label", "argv"), _cases() + SIZES,
                         ids=[c[0] for c in _cases() + SIZES])
def test_bad_value_exits_2_with_one_line(label, argv, tmp_path, capsys):
    code, err = _run(capsys, tmp_path, argv)
    lines = err.strip().splitlines()
    assert code == 2, (label, code, err)
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(("netdp simulate: error: --",
                                "netdp simulate: error: argument ")), err
    assert not list(tmp_path.iterdir())  # nothing written


def _toml(value) -> str:
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if value != value else ("inf" if value > 0 else "-inf")
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _wrong_types(spec: Param) -> list:
    """TOML values of the wrong type for a declaration."""
    if spec.pair:  # range = [LOW, HIGH]
        return [5, "x", [1, "a"], [1, [2]], {"a": 1}]
    wrong: list = [[1, 2], {"a": 1}]
    if spec.kind in (int, float):
        wrong += ["3", True]
    if spec.kind is int:
        wrong.append(2.5)
    if spec.kind is str:
        wrong += [5, 1.5, True]
    if spec.kind is bool:
        wrong += ["yes", 1]
    if spec.kind is tuple:
        wrong = [5, [1, 2], {"a": 1}]
    return wrong


def _toml_cases() -> list[tuple[str, str]]:
    out = []
    for label, picks, record in _records():
        for name, spec, _ in params_of(record):
            if name in ("task", "protocol"):
                continue
            for value in _wrong_types(spec):
                key = spec.pair if spec.pair else name
                head = f'task = "{picks[1]}"\n' + (
                    f'protocol = "{picks[3]}"\n' if len(picks) > 2 else "")
                out.append((f"{label}:{key}={_toml(value)}", f"{head}{key} = {_toml(value)}\n"))
    out.append(("binary", "\x00\xff\xfe"))
    out.append(("not-toml", "nodes = = 3"))
    out.append(("unknown-key", "vertices = 3"))
    out.append(("range-one", "range = [1]"))
    return out


@pytest.mark.parametrize(("label", "text"), _toml_cases(), ids=[c[0] for c in _toml_cases()])
def test_bad_config_file_exits_2_with_one_line(label, text, tmp_path, capsys):
    config = tmp_path / "run.toml"
    if label == "binary":
        config.write_bytes(b"\x00\xff\xfe\x80")
    else:
        config.write_text(text)
    code, err = _run(capsys, tmp_path, ["--config", str(config)])
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, (label, err)
    assert [p.name for p in tmp_path.iterdir()] == ["run.toml"]


@pytest.mark.parametrize("argv", [
    ["bounds", "--n-max", "inf"], ["bounds", "--delta", "1e-320"],
    ["bounds", "--steps-per-node", "nan"], ["bounds", "--points", "1e9"],
    ["bounds", "--rounds", "0"], ["bounds", "--curve", "nope"],
])
def test_other_commands_refuse_bad_values(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
