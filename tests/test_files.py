"""The atomic writer never destroys what the user pointed at: symlinks stay links,
devices and FIFOs are written through, hard links keep sharing the file."""

from __future__ import annotations

import json
import os
import stat
import threading

import pytest

from netdp.core.files import atomic, write_atomic
from netdp.run.cli import main


def test_a_symlink_stays_a_link_and_its_file_is_replaced(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_atomic(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new"


def test_a_dangling_symlink_creates_the_file_it_names(tmp_path):
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "missing.json")
    write_atomic(link, "made")
    assert link.is_symlink() and (tmp_path / "missing.json").read_text() == "made"


def test_hard_links_keep_sharing_the_file(tmp_path):
    first = tmp_path / "a.json"
    first.write_text("old")
    second = tmp_path / "b.json"
    os.link(first, second)
    write_atomic(second, "new")
    assert first.read_text() == "new" and os.stat(first).st_ino == os.stat(second).st_ino
    assert os.stat(first).st_nlink == 2
    assert not list(tmp_path.glob(".*.tmp"))  # the temporary file is gone


def test_a_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    with atomic(fifo) as fh:
        fh.write(b"through the pipe")
    reader.join(timeout=10)
    assert got == [b"through the pipe"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")
def test_a_device_node_stays_a_device(tmp_path):
    null = tmp_path / "mynull"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # like /dev/null
    write_atomic(null, "gone")
    assert stat.S_ISCHR(os.stat(null).st_mode)


def test_the_writer_check_can_fail(tmp_path, monkeypatch):
    """Without following the link (the writer before), the first test's check fails."""
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    monkeypatch.setattr(os.path, "realpath", lambda p: p)  # the rename lands on the link
    write_atomic(link, "new")
    assert not link.is_symlink() and real.read_text() == "old"


@pytest.mark.parametrize("flag", ["--out", "--pairs-out"])
def test_simulate_writes_through_a_symlink(tmp_path, capsys, flag):
    suffix = ".npy" if flag == "--pairs-out" else ".json"
    real = tmp_path / f"real{suffix}"
    real.write_text("old")
    link = tmp_path / f"link{suffix}"
    link.symlink_to(real)
    args = ["simulate", "--nodes", "10", "--seed", "1", flag, str(link)]
    assert main(args) == 0
    capsys.readouterr()
    assert link.is_symlink() and real.stat().st_size > 10
    if flag == "--out":
        assert json.loads(real.read_text())["config"]["seed"] == 1


def test_path_kind_names_what_is_there_and_never_raises(tmp_path):
    from netdp.core.files import path_kind

    (tmp_path / "f.txt").write_text("x")
    os.mkfifo(tmp_path / "pipe")
    assert path_kind(tmp_path) == "dir" and path_kind(tmp_path / "f.txt") == "file"
    assert path_kind(tmp_path / "pipe") == "other" and path_kind(tmp_path / "nothing") is None
    assert path_kind("x" * 5000) is None and path_kind("a\0b") is None  # cannot stat
