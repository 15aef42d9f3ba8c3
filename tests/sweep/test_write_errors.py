"""Writes that fail (a read-only folder, a full disk, a file where a folder should be) end
as one line on stderr with exit status 2, and leave nothing half-written."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

import pytest

from netdp.core.errors import InputError
from netdp.core.files import atomic, write_atomic
from netdp.run.cli import main
from netdp.run.sweep.table import ResultTable, read_table

SPEC = "[fixed]\naccountants = []\n[grid]\nnodes = [5, 6, 7, 8]\n"
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _one_line(capsys, command: str) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"netdp {command}: error: ") and "Traceback" not in captured.err
    return lines[0]


def _fail_replace(monkeypatch, code: int, when=lambda dst: True) -> None:
    """``os.replace`` fails with ``code`` (ENOSPC, EACCES) for targets ``when`` accepts."""
    real = os.replace

    def replace(src, dst, *args, **kwargs):
        if when(Path(dst)):
            raise OSError(code, os.strerror(code))
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)


def _no_temp_files(folder: Path) -> None:
    assert [p for p in folder.rglob("*") if p.name.endswith(".tmp")] == []


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("table")
    (base / "s.toml").write_text(SPEC)
    out = base / "out"
    assert main(["sweep", str(base / "s.toml"), "--out", str(out), "--backend", "serial"]) == 0
    return out


@pytest.fixture
def spec(tmp_path) -> str:
    path = tmp_path / "s.toml"
    path.write_text(SPEC)
    return str(path)


# --------------------------------------------------------------------------- files.py


@pytest.mark.parametrize("code, reason", [(errno.ENOSPC, "No space left on device"),
                                          (errno.EACCES, "Permission denied")])
def test_a_failed_write_is_an_input_error_and_the_old_file_stays(tmp_path, monkeypatch,
                                                                 code, reason):
    target = tmp_path / "r.csv"
    target.write_text("old")
    _fail_replace(monkeypatch, code)
    with pytest.raises(InputError) as err:
        write_atomic(target, "new", param="csv")
    assert err.value.param == "csv"
    assert err.value.message == f"cannot write {str(target)!r}: {reason}"
    assert isinstance(err.value.__cause__, OSError)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["r.csv"]


def test_every_step_of_a_write_may_fail(tmp_path, monkeypatch):
    target = tmp_path / "f.bin"
    with pytest.raises(InputError, match="cannot write .*: No space left on device"), \
            atomic(target, param="out") as fh:
        fh.write(b"part")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # a write in the block
    assert list(tmp_path.iterdir()) == []

    def no_temp(*args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr(tempfile, "mkstemp", no_temp)
    with pytest.raises(InputError, match="Permission denied") as err:
        write_atomic(target, "x", param="pairs-out")
    assert err.value.label == "--pairs-out"
    assert list(tmp_path.iterdir()) == []


def test_a_folder_in_place_of_the_file(tmp_path):
    (tmp_path / "f.json").mkdir()
    with pytest.raises(InputError, match="cannot write"):
        write_atomic(tmp_path / "f.json", "{}")
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]


# --------------------------------------------------------------------------- netdp sweep


def test_sweep_into_a_full_disk_writes_nothing(tmp_path, capsys, monkeypatch, spec):
    _fail_replace(monkeypatch, errno.ENOSPC)
    monkeypatch.chdir(tmp_path)  # missing parents are made only under the current folder
    out = Path("new") / "out"
    assert main(["sweep", spec, "--out", str(out), "--backend", "serial"]) == 2
    line = _one_line(capsys, "sweep")
    assert line.startswith("netdp sweep: error: --out: cannot write ") and \
        line.endswith(": No space left on device")
    assert not (tmp_path / "new").exists()  # the folders it made are gone again
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["sweep", spec, "--out", str(empty), "--backend", "serial"]) == 2
    _one_line(capsys, "sweep")
    assert list(empty.iterdir()) == []


def test_a_full_disk_mid_sweep_keeps_the_batches_written(tmp_path, capsys, monkeypatch,
                                                         spec):
    out = tmp_path / "out"
    written = []

    def second_part(dst: Path) -> bool:
        if dst.name.startswith("part-"):
            written.append(dst)
        return len(written) >= 2

    _fail_replace(monkeypatch, errno.ENOSPC, second_part)
    argv = ["sweep", spec, "--out", str(out), "--backend", "serial", "--batch-size", "1"]
    assert main(argv) == 2
    line = _one_line(capsys, "sweep")
    assert "--out: cannot write " in line and "No space left on device" in line
    assert "batches written before are kept" in line
    assert len(ResultTable(out).parts()) == 1
    _no_temp_files(out)
    monkeypatch.undo()
    assert main(argv) == 0
    assert sorted(read_table(out)["nodes"]) == [5, 6, 7, 8]


def test_sweep_out_under_a_file(tmp_path, capsys, spec):
    (tmp_path / "file").write_text("x")
    for out in (tmp_path / "file" / "sub", tmp_path / "file"):
        assert main(["sweep", spec, "--out", str(out), "--backend", "serial"]) == 2
        assert "--out: " in _one_line(capsys, "sweep")
    assert (tmp_path / "file").read_text() == "x"


@pytest.mark.skipif(ROOT, reason="root writes into read-only folders")
def test_read_only_folders(tmp_path, capsys, spec, table):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        assert main(["sweep", spec, "--out", str(ro / "out"), "--backend", "serial"]) == 2
        assert "--out: cannot create" in _one_line(capsys, "sweep")
        assert main(["results", str(table), "--csv", str(ro / "t.csv")]) == 2
        assert "--csv: cannot write into" in _one_line(capsys, "results")
        assert main(["plot", str(table), "--x", "n", "--y", "abs_error", "--out",
                     str(ro / "f.png")]) == 2
        assert "--out: cannot write" in _one_line(capsys, "plot")
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o755)


# --------------------------------------------------------------------------- results, plot


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EACCES])
def test_results_csv_that_cannot_be_written(tmp_path, capsys, monkeypatch, table, code):
    target = tmp_path / "t.csv"
    target.write_text("old")
    _fail_replace(monkeypatch, code)
    assert main(["results", str(table), "--csv", str(target)]) == 2
    line = _one_line(capsys, "results")
    assert line == f"netdp results: error: --csv: cannot write {str(target)!r}: " \
                   f"{os.strerror(code)}"
    assert target.read_text() == "old"
    _no_temp_files(tmp_path)


def test_plot_out_that_cannot_be_written(tmp_path, capsys, monkeypatch, table):
    out = tmp_path / "f.png"
    _fail_replace(monkeypatch, errno.ENOSPC)
    assert main(["plot", str(table), "--x", "n", "--y", "abs_error", "--out", str(out)]) == 2
    line = _one_line(capsys, "plot")
    assert line.startswith("netdp plot: error: --out: cannot write ") and "No space" in line
    assert list(tmp_path.iterdir()) == []
