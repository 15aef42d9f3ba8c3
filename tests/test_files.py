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


# --------------------------------------------------------------------------- issue 39


def _one_line(capsys, command: str) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"netdp {command}: error: "), err
    return err[0]


@pytest.fixture()
def here(tmp_path, monkeypatch):
    """A fresh current folder with a log (``log.csv``) and a sweep spec (``s.toml``)."""
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "-n", "6", "--steps", "30", "--seed", "1", "-q",
                 "--trace-out", "log.csv"]) == 0
    (tmp_path / "s.toml").write_text('seeds = 1\n[fixed]\ntask = "sum"\nsteps = 20\n'
                                     "[grid]\nnodes = [4]\n")
    return tmp_path


def test_a_pairs_out_of_another_extension_is_refused(here, capsys):
    """--pairs-out writes by extension (.npy, .csv, .parquet); another is refused before
    the run, one line, nothing written."""
    code = main(["simulate", "-n", "6", "--seed", "1", "--pairs-out", "m.json"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "--pairs-out: must end in .npy (the n x n matrix), .csv or .parquet" in err
    assert not (here / "m.json").exists()


@pytest.mark.parametrize(("argv", "flags"), [
    (["simulate", "-n", "6", "--out", "x.npy", "--pairs-out", "x.npy"],
     ("--pairs-out", "--out")),
    (["simulate", "-n", "6", "--out", "./x.json", "--html", "x.json"], ("--html", "--out")),
    (["simulate", "-n", "6", "--trace-out", "sub/../x.csv", "--out", "x.csv"],
     ("--trace-out", "--out")),
    (["simulate", "-n", "6", "--pairs-out", "p.npy", "--html", "p.labels.json"],
     ("--html", "--pairs-out")),
    (["simulate", "--task", "sgd", "-n", "8", "--curves", "c", "--out", "c.csv"],
     ("--curves", "--out")),
    (["account", "log.csv", "--out", "a.npy", "--pairs-out", "a.npy"],
     ("--pairs-out", "--out")),
    (["account", "log.csv", "--pairs-out", "f.csv", "--html", "./f.csv"],
     ("--html", "--pairs-out")),
    (["sweep", "s.toml", "--out", "d", "--html", "d", "--backend", "serial"],
     ("--html", "--out")),
    (["results", "{sweep}", "--csv", "t", "--parquet", "./t"], ("--parquet", "--csv")),
])
def test_two_outputs_at_one_path_are_refused(here, capsys, argv, flags):
    (here / "sub").mkdir()
    if "{sweep}" in argv:
        assert main(["sweep", "s.toml", "--out", "sw", "--backend", "serial", "-q"]) == 0
        capsys.readouterr()
        argv = [w.replace("{sweep}", "sw") for w in argv]
    before = sorted(p.name for p in here.iterdir())
    assert main(argv) == 2
    line = _one_line(capsys, argv[0])
    assert line.startswith(f"netdp {argv[0]}: error: {flags[0]}: ") and flags[1] in line
    assert "give each output its own file" in line
    assert sorted(p.name for p in here.iterdir()) == before  # nothing written


def test_two_names_of_one_file_collide_and_devices_do_not(tmp_path):
    from netdp.core.errors import InputError
    from netdp.core.files import check_distinct

    real = tmp_path / "r.json"
    real.write_text("{}")
    (tmp_path / "link.json").symlink_to(real)
    os.link(real, tmp_path / "hard.json")
    for other in ("link.json", "hard.json"):
        with pytest.raises(InputError, match="so does --out") as err:
            check_distinct([("out", real), ("html", tmp_path / other)])
        assert err.value.param == "html"
    check_distinct([("out", os.devnull), ("pairs-out", os.devnull), ("html", None)])
    check_distinct([("pairs-out", tmp_path / "p.npy")],
                   companions=[("pairs-out", tmp_path / "p.labels.json", "labels")])


@pytest.mark.parametrize("argv", [
    ["simulate", "-n", "6", "--out", "newdir/"],
    ["simulate", "-n", "6", "--pairs-out", "newdir/"],
    ["simulate", "-n", "6", "--trace-out", "newdir/."],
    ["simulate", "-n", "6", "--html", "newdir/"],
    ["simulate", "--task", "sgd", "-n", "8", "--curves", "newdir/"],
    ["account", "log.csv", "--out", "newdir/"],
    ["account", "log.csv", "--plot", "newdir.png/"],
    ["audit", "--trials", "200", "--plot", "newdir.png/"],
    ["report", "log.csv", "--html", "newdir/"],
    ["plot", "--preset", "distance", "-n", "6", "--out", "newdir.png/"],
    ["sweep", "s.toml", "--out", "d", "--html", "newdir/", "--backend", "serial"],
    ["results", "d", "--csv", "newdir/"],
])
def test_an_output_name_ending_in_a_slash_is_a_folder_not_a_file(here, capsys, argv):
    assert main(argv) == 2
    flag = next(w for w in argv if w.startswith("--") and "newdir" in argv[argv.index(w) + 1])
    line = _one_line(capsys, argv[0])
    assert line.startswith(f"netdp {argv[0]}: error: {flag}: ") and "names a folder" in line
    assert not list(here.glob("newdir*")) and not (here / "d").exists()


def test_a_sweep_into_a_folder_named_with_a_slash(here, capsys):
    assert main(["sweep", "s.toml", "--out", "newdir/", "--backend", "serial", "-q"]) == 0
    assert (here / "newdir").is_dir() and (here / "newdir" / "sweep.json").is_file()


def test_labelled_pairs_are_all_or_nothing(tmp_path, monkeypatch):
    import netdp.run.cli.simulate as cli_simulate

    monkeypatch.chdir(tmp_path)
    (tmp_path / "named.txt").write_text("alice bob\nbob carol\ncarol dave\ndave alice\n")
    assert main(["simulate", "--topology", "named.txt", "--pairs-out", "p.npy", "-q"]) == 0
    labels = tmp_path / "p.labels.json"
    matrix, names = (tmp_path / "p.npy").read_bytes(), labels.read_text()
    assert json.loads(names) == ["alice", "bob", "carol", "dave"]
    # the labels fail to write: the matrix stays the old one (no new matrix, old labels)
    monkeypatch.setattr(cli_simulate, "plain_labels", lambda topology: [object()] * 5)
    with pytest.raises(TypeError):
        main(["simulate", "--topology", "complete", "-n", "5", "--pairs-out", "p.npy",
              "--seed", "3", "-q"])
    assert (tmp_path / "p.npy").read_bytes() == matrix and labels.read_text() == names
    assert sorted(p.name for p in tmp_path.iterdir()) == ["named.txt", "p.labels.json",
                                                          "p.npy"]
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    # a graph without labels: the old labels are removed with the new matrix
    assert main(["simulate", "-n", "5", "--pairs-out", "p.npy", "-q"]) == 0
    assert not labels.exists() and (tmp_path / "p.npy").read_bytes() != matrix


def test_several_files_are_replaced_together_or_not_at_all(tmp_path):
    from netdp.core.files import atomic_files

    a, b, stale = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for path in (a, b, stale):
        path.write_text("old")
    with pytest.raises(RuntimeError), atomic_files([a, b], stale=[stale]) as (fa, fb):
        fa.write(b"new")
        fb.write(b"new")
        raise RuntimeError
    assert [p.read_text() for p in (a, b, stale)] == ["old"] * 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "c"]
    with atomic_files([a, b], stale=[stale]) as (fa, fb):
        fa.write(b"A")
        fb.write(b"B")
    assert (a.read_text(), b.read_text(), stale.exists()) == ("A", "B", False)


TERM_SCRIPT = """
import os, signal, sys, time
import numpy as np
real = np.save
def save(fh, array, *args, **kwargs):  # half the file written, then SIGTERM
    real(fh, array, *args, **kwargs)
    fh.flush()
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(30)
np.save = save
from netdp.run.cli import main
sys.exit(main(["simulate", "-n", "6", "--pairs-out", "p.npy", "--out", "r.json"]))
"""


def test_sigterm_removes_the_temporary_files(tmp_path):
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", TERM_SCRIPT], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 128 + 15, (done.returncode, done.stderr[-2000:])
    assert done.stderr.strip() == "netdp: terminated"
    assert list(tmp_path.iterdir()) == []  # no temporary file, no output


def test_the_learning_curves_are_written_both_or_neither(tmp_path, monkeypatch, capsys):
    import errno

    from matplotlib.figure import Figure

    monkeypatch.chdir(tmp_path)
    argv = ["simulate", "--task", "sgd", "-n", "8", "--compare", "local,network", "--curves",
            "c", "-q"]
    assert main([*argv, "--seed", "1"]) == 0
    old = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert sorted(old) == ["c.csv", "c.png"]

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", full)
    capsys.readouterr()
    assert main([*argv, "--seed", "2"]) == 2
    assert "--curves: cannot write" in _one_line(capsys, "simulate")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == old


def test_accounting_a_log_removes_the_labels_of_an_earlier_matrix(here, capsys):
    (here / "named.txt").write_text("alice bob\nbob carol\ncarol dave\ndave alice\n")
    assert main(["simulate", "--topology", "named.txt", "--pairs-out", "p.npy", "-q"]) == 0
    assert (here / "p.labels.json").exists()
    assert main(["account", "log.csv", "--pairs-out", "p.npy", "-q"]) == 0
    assert not (here / "p.labels.json").exists()  # the log's nodes are 0..5: no labels
    capsys.readouterr()
    assert main(["account", "log.csv", "--pairs-out", "q.npy", "--out", "q.labels.json"]) == 2
    assert "--out: writes 'q.labels.json', and --pairs-out writes its labels there" in \
        _one_line(capsys, "account")


#: Issue 39: an output at one of the command's own inputs, for every subcommand with both:
#: (argv, the output flag named, the input it names). ``here`` holds ``log.csv`` and
#: ``s.toml``; ``sw`` (a sweep), ``r.json`` (a run), ``p.npy`` (its matrix), ``e.txt``
#: (an edge list), ``l.csv`` (a loss file), ``c.toml`` (a config) and ``r.svg``
#: (``r.json`` under an image's name) are made for the case.
INPUT_OUTPUT = [
    (["simulate", "--config", "c.toml", "--out", "c.toml"], "--out", "--config"),
    (["simulate", "--topology", "e.txt", "--steps", "30", "--html", "./e.txt"],
     "--html", "--topology"),
    (["simulate", "-n", "6", "--data-file", "e.txt", "--trace-out", "e.txt"], "--trace-out",
     "--data-file"),
    (["simulate", "-n", "6", "--steps", "30", "--loss", "file:l.csv", "--html", "l.csv"],
     "--html", "--loss"),
    (["account", "log.csv", "--out", "log.csv"], "--out", "LOG"),
    (["account", "log.csv", "--pairs-out", "sub/../log.csv"], "--pairs-out", "LOG"),
    (["report", "r.json", "--html", "r.json"], "--html", "PATH"),
    (["report", "r.json", "--pairs", "p.npy", "--html", "p.npy"], "--html", "--pairs"),
    (["report", "sw", "--html", "sw/sweep.json"], "--html", "PATH"),
    (["plot", "--preset", "by-distance", "--result", "r.svg", "--out", "r.svg"], "--out",
     "--result"),
    (["plot", "sw", "--preset", "privacy-vs-n", "--out", "sw/rows/x.png"], "--out", "DIR"),
    (["results", "sw", "--csv", "sw/sweep.json"], "--csv", "DIR"),
    (["sweep", "s.toml", "--out", "o", "--html", "s.toml", "--backend", "serial"], "--html",
     "SPEC.toml"),
    (["sweep", "s.toml", "--out", "sw", "--html", "sw/sweep.json", "--backend", "serial"],
     "--html", "--out"),
]


@pytest.mark.parametrize(("argv", "flag", "source"), INPUT_OUTPUT,
                         ids=[f"{a[0]}-{f}-{s}" for a, f, s in INPUT_OUTPUT])
def test_an_output_at_an_input_is_refused(here, capsys, argv, flag, source):
    """``netdp report run.json --html run.json`` would replace its input: refused in one
    line naming the output's flag and the input's, every file as it was."""
    (here / "sub").mkdir()
    assert main(["sweep", "s.toml", "--out", "sw", "--backend", "serial", "-q"]) == 0
    assert main(["simulate", "-n", "6", "--steps", "30", "--seed", "1", "-q", "--out",
                 "r.json", "--pairs-out", "p.npy"]) == 0
    capsys.readouterr()
    (here / "r.svg").write_bytes((here / "r.json").read_bytes())
    (here / "e.txt").write_text("".join(f"{u} {(u + 1) % 6}\n" for u in range(6)))
    (here / "c.toml").write_text("nodes = 6\nsteps = 30\n")
    (here / "l.csv").write_text("src,dst,p\n0,1,0.1\n")
    before = {p: p.read_bytes() for p in here.rglob("*") if p.is_file()}
    assert main(argv) == 2
    line = _one_line(capsys, argv[0])
    assert line.startswith(f"netdp {argv[0]}: error: {flag}: writes ") and (
        f"which {source} reads" in line), line
    assert {p: p.read_bytes() for p in here.rglob("*") if p.is_file()} == before


def test_an_output_beside_a_sweeps_files_is_fine(here, capsys):
    """Only what a command reads is guarded: a table written into the sweep's folder, or
    a page beside the run's JSON, is an output like another."""
    assert main(["sweep", "s.toml", "--out", "sw", "--backend", "serial", "-q"]) == 0
    assert main(["results", "sw", "--csv", "sw/table.csv"]) == 0
    assert main(["report", "sw", "--html", "sw/page.html"]) == 0
    assert (here / "sw" / "table.csv").is_file() and (here / "sw" / "page.html").is_file()


def test_out_dev_stdout_into_a_pipe(tmp_path):
    """``--out /dev/stdout`` piped into another program writes through the name given
    (its link target, ``pipe:[...]``, cannot be opened: the fresh-clone check of session
    18 found exit 2 there)."""
    import subprocess
    import sys

    done = subprocess.run(
        f"{sys.executable} -m netdp simulate -n 6 --steps 60 --seed 1 --quiet "
        "--out /dev/stdout | cat", shell=True, cwd=tmp_path, capture_output=True, text=True,
        timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    report, _ = json.JSONDecoder().raw_decode(done.stdout)  # the table follows it
    assert report["config"]["nodes"] == 6
    assert list(tmp_path.iterdir()) == []  # nothing left beside
