"""Smaller command-line edges of issue 29: config keys, integral floats, closed stdout,
a sweep folder's missing parents, short messages for huge numbers."""

from __future__ import annotations

import sys

import pytest

from netdp.core.config import flat_params
from netdp.core.errors import InputError
from netdp.run.cli import main
from netdp.tasks import make_config


def test_config_keys_of_the_switches_and_integral_floats(tmp_path, capsys):
    config = tmp_path / "c.toml"
    config.write_text("steps = 200.0\nno_tracking = true\nno_self_moves = true\nnodes = 6\n"
                      "seed = 1\n")
    assert main(["simulate", "--config", str(config), "--json"]) == 0
    out = capsys.readouterr().out
    assert '"steps": 200,' in out and '"accountants": []' in out and '"self_moves": false' in out
    assert make_config(steps=200.0).steps == 200
    with pytest.raises(InputError, match="integer"):
        make_config(steps=200.5)
    with pytest.raises(InputError) as err:
        flat_params({"no_tracking": "yes"})
    assert err.value.param == "no-tracking"
    with pytest.raises(InputError, match="both given"):
        flat_params({"no_tracking": True, "accountants": ["kov"]})


def test_a_closed_stdout_is_one_line_and_exit_1(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdout", None)
    assert main(["bounds", "--points", "3"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["netdp bounds: error: cannot write the output: standard output is closed"]


def test_a_sweep_makes_missing_folders_only_under_the_current_one(tmp_path, monkeypatch,
                                                                  capsys):
    spec = tmp_path / "s.toml"
    spec.write_text('seeds = 1\n[fixed]\ntask = "sum"\nsteps = 20\n[grid]\nnodes = [4, 5]\n')
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    far = tmp_path / "missing" / "out"
    assert main(["sweep", str(spec), "--out", str(far), "--backend", "serial",
                 "--no-progress"]) == 2
    assert "--out: the folder" in capsys.readouterr().err and not far.parent.exists()
    assert main(["sweep", str(spec), "--out", "new/out", "--backend", "serial",
                 "--no-progress"]) == 0
    assert (here / "new" / "out").is_dir()


def test_an_option_is_never_abbreviated(capsys):
    """``--set`` is no option of simulate (plot, account and audit take it): it is refused
    as unknown, not read as ``--set-size``; a long value is echoed in part."""
    value = "steps=" + "9" * 5000
    assert main(["simulate", "--set", value]) == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --set steps=999" in err and "--set-size" not in err
    assert len(err) < 200 and err.count("\n") == 1
    assert main(["simulate", "--acc", "rdp"]) == 2
    assert "unrecognized arguments: --acc rdp" in capsys.readouterr().err
    assert main(["simulate", "--accountant", "x" * 500]) == 2
    err = capsys.readouterr().err
    assert "(got 'xxxx" in err and "x" * 200 not in err and err.count("\n") == 1


def test_an_exceptions_message_is_cut_at_a_words_end():
    from netdp.core.errors import one_line

    try:
        int("9" * 5000)
    except ValueError as exc:
        assert one_line(exc, 80) == ("Exceeds the limit (4300 digits) for integer string "
                                     "conversion: value has...")
    assert one_line(ValueError("a" * 200), 20) == "a" * 17 + "..."  # no space: cut as is


def test_huge_numbers_are_quoted_short(capsys):
    assert main(["simulate", "--seed", "1" + "0" * 29]) == 2
    err = capsys.readouterr().err
    assert "[0, 2^64 - 1] (got 1e+29)" in err and "0" * 20 not in err
    assert main(["simulate", "--steps", "9" * 400]) == 2
    assert "9" * 20 not in capsys.readouterr().err
