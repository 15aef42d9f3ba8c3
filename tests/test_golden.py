"""Golden outputs: the ``--json`` of fixed-seed commands recorded before the wave-2
refactor (``tests/golden/``) must come out the same, every number to 1e-9 relative (the
FFTs and compiled kernels round differently with the CPU's vector width: an AVX-512 EPYC
moved the complete graph's pld figures by 6e-11 relative against the recording machine;
any change of method moves them by far more).

Keys added since the recording (``schema``, ...) are allowed; a key of the recording that
is missing, or a number that moved, fails. Timings and the version are not compared. One
documented change (docs/cli.md, "JSON schema 2"): ``config`` lists the common parameters
and the run's task's own, so the recorded keys of other tasks' parameters may be missing.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden"
sys.path.insert(0, str(GOLDEN))
from record import commands, run  # noqa: E402

IGNORED = {"runtime_s", "timing", "version"}
RTOL = 1e-9


def other_tasks_parameters(task: str) -> set[str]:
    """Parameters that the config of ``task`` does not hold (other tasks' own)."""
    from netdp.tasks import make_config, param_specs

    return set(param_specs()) - set(make_config({"task": task}).to_dict())


def differences(old, new, path: str = "", absent: frozenset = frozenset()) -> list[str]:
    """Every place where ``new`` does not reproduce ``old`` (``absent``: keys of
    ``.config`` that may be missing)."""
    if isinstance(old, dict):
        if not isinstance(new, dict):
            return [f"{path}: expected an object, got {new!r}"]
        out = []
        for key, value in old.items():
            if key in IGNORED or (path == ".config" and key in absent and key not in new):
                continue
            if key not in new:
                out.append(f"{path}.{key}: missing")
            else:
                out += differences(value, new[key], f"{path}.{key}", absent)
        return out
    if isinstance(old, list):
        if not isinstance(new, list) or len(new) != len(old):
            return [f"{path}: expected a list of {len(old)}, got {new!r}"[:200]]
        return [d for i, (a, b) in enumerate(zip(old, new, strict=True))
                for d in differences(a, b, f"{path}[{i}]")]
    if isinstance(old, float) and isinstance(new, int | float) and not isinstance(new, bool):
        if math.isclose(old, new, rel_tol=RTOL, abs_tol=1e-300) or old == new:
            return []
        return [f"{path}: {old!r} -> {new!r}"]
    if old != new:
        return [f"{path}: {old!r} -> {new!r}"]
    return []


def test_differences_catches_a_moved_number():
    old = {"a": 1.0, "b": [1, {"c": 0.5}], "runtime_s": 3.0}
    assert differences(old, {"a": 1.0, "b": [1, {"c": 0.5}], "runtime_s": 9.0, "x": 1}) == []
    assert differences(old, {"a": 1.0 + 1e-9, "b": [1, {"c": 0.5}]}) == [".a: 1.0 -> 1.000000001"]
    assert differences(old, {"a": 1.0, "b": [1, {}]}) == [".b[1].c: missing"]


#: Goldens of the slow tier (CI runs it too): the exact accountant's takes 34 s.
SLOW = frozenset({"sum-complete-exact"})


@pytest.mark.parametrize(("name", "argv"), [
    pytest.param(name, argv, id=name, marks=[pytest.mark.slow] if name in SLOW else [])
    for name, argv in commands()])
def test_golden(name, argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # --compare writes its curves into the working folder
    expected = json.loads((GOLDEN / f"{name}.json").read_text())
    absent = frozenset(other_tasks_parameters(expected["config"]["task"])
                       if "config" in expected else ())
    got = run(argv)
    problems = differences(expected, got, absent=absent)
    assert not problems, f"netdp {' '.join(argv)}:\n" + "\n".join(problems[:20])
