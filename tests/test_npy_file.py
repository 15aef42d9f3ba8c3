"""A user's .npy matrix: one line naming the flag for every way the file can be wrong
(netdp.core.npy_file), and through each command that reads one."""

from __future__ import annotations

import numpy as np
import pytest

from netdp.core.errors import InputError
from netdp.core.npy_file import read_npy


def _files(tmp_path):
    good = tmp_path / "good.npy"
    np.save(good, np.eye(3))
    whole = good.read_bytes()
    obj = tmp_path / "obj.npy"
    np.save(obj, np.array([{1: 2}], dtype=object), allow_pickle=True)
    npz = tmp_path / "z.npy"
    with npz.open("wb") as fh:
        np.savez(fh, a=np.eye(2))
    made = {"empty": b"", "text": b"0 1 2\n", "cut-header": whole[:100],
            "cut-data": whole[:140]}
    out = {}
    for name, data in made.items():
        out[name] = tmp_path / f"{name}.npy"
        out[name].write_bytes(data)
    return good, {**out, "objects": obj, "npz": npz}


@pytest.mark.parametrize("mmap", [False, True])
def test_each_bad_file_is_one_line_on_its_flag(tmp_path, mmap):
    good, bad = _files(tmp_path)
    assert read_npy(good, "pairs", mmap=mmap).shape == (3, 3)
    expect = {"empty": "is empty", "text": "not a .npy file", "npz": "not a .npy file",
              "objects": "Python objects", "cut-header": "damaged", "cut-data": "damaged"}
    for name, path in bad.items():
        with pytest.raises(InputError) as err:
            read_npy(path, "pairs", mmap=mmap)
        assert err.value.param == "pairs"
        assert expect[name] in str(err.value), (name, str(err.value))
        assert "\n" not in err.value.line("plot") and "allow_pickle" not in str(err.value)
    with pytest.raises(InputError, match="cannot read"):
        read_npy(tmp_path / "absent.npy", "pairs")


def test_the_commands_that_read_a_matrix_refuse_a_text_file(tmp_path, capsys):
    from netdp.run.cli import main

    _, bad = _files(tmp_path)
    text = str(bad["text"])
    for argv, flag in [
        (["simulate", "--task", "sgd", "--protocol", "gossip", "-n", "6",
          "--gossip-matrix", text], "--gossip-matrix"),
        (["simulate", "--protocol", "gossip", "-n", "6", "--gossip-matrix", text],
         "--gossip-matrix"),
        (["plot", "--preset", "heatmap", "--pairs", text, "--out",
          str(tmp_path / "h.png")], "--pairs"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"{flag}: text.npy: not a .npy file" in err[0], err
    assert not (tmp_path / "h.png").exists()
