"""Issue 39: the library's public functions refuse an argument of the wrong type with an
InputError naming it (never a TypeError or AttributeError from inside), and take what
stands for a value: numpy scalars, ``os.PathLike`` file names."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import netdp
from netdp.core import arguments
from netdp.core.errors import InputError

SMALL = {"nodes": 6, "steps": 20, "seed": 1}
HYPERCUBE = {"topology": "hypercube", "nodes": 8, "steps": 20, "seed": 1}


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("log") / "log.csv"
    netdp.simulate(SMALL, trace_out=path)
    return path


@pytest.mark.parametrize(("call", "param", "words"), [
    (lambda log: netdp.account(5), "log", "must be a file name"),
    (lambda log: netdp.account(None), "log", "must be a file name"),
    (lambda log: netdp.account(str(log).encode()), "log", "must be a file name"),
    (lambda log: netdp.account(log, repair="yes"), "repair", "must be True or False"),
    (lambda log: netdp.account(log, keep_pairs=5), "keep_pairs", "must be True or False"),
    (lambda log: netdp.account(log, observer=2.5), "observer", "must be an integer"),
    (lambda log: netdp.account(log, observer="a"), "observer", "complete has no node labels"),
    (lambda log: netdp.account(log, observer=" "), "observer", "names one node"),
    (lambda log: netdp.simulate(SMALL, trace_out=5), "trace_out", "must be a file name"),
    (lambda log: netdp.simulate(SMALL, trace_out="newdir/"), "trace_out", "names a folder"),
    (lambda log: netdp.simulate(HYPERCUBE, scheduler=5), "scheduler", "must be an address"),
    (lambda log: netdp.simulate(HYPERCUBE, client=object()), "client",
     "must be a distributed.Client"),
    (lambda log: netdp.simulate(SMALL, progress="x"), "progress", "True, False or None"),
    (lambda log: netdp.simulate(SMALL, keep_pairs=5), "keep_pairs", "must be True or False"),
    (lambda log: netdp.simulate(5), "config", "expected a mapping"),
    (lambda log: netdp.make_config(nodes="6"), "nodes", "must be an integer"),
    (lambda log: netdp.attack(5), "mechanism", "must be a string"),
    (lambda log: netdp.attack(users="x"), "users", "must be an integer"),
    (lambda log: netdp.attack(trials=2.5), "trials", "must be an integer"),
    (lambda log: netdp.attack(epsilon="1"), "epsilon", "must be a number"),
    (lambda log: netdp.attack(defences="krum"), "defences", "must be a list of names"),
])
def test_a_wrong_type_is_an_input_error_naming_the_argument(log, call, param, words,
                                                          tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a regression writes here (newdir), not in the checkout
    with pytest.raises(InputError, match=words) as error:
        call(log)
    assert error.value.param == param


def test_what_stands_for_a_value_is_accepted(log, tmp_path):
    report = netdp.account(Path(log), repair=np.bool_(False), observer=np.int64(0))
    assert report.topology.n == 6
    assert netdp.account(log, nodes=np.int64(6), epsilon=np.float32(0.5)).topology.n == 6
    out = tmp_path / "again.csv"
    netdp.simulate(SMALL, trace_out=out, progress=np.bool_(False), keep_pairs=np.bool_(True))
    assert out.read_text() == Path(log).read_text()
    result = netdp.attack(users=np.int64(2000), trials=np.int64(2), domain=np.int32(16),
                          epsilon=np.float32(1.0), defences=[])
    assert result.config["users"] == 2000 and type(result.config["users"]) is int


def test_the_checks_themselves():
    assert arguments.integer(np.uint8(3), "k") == 3 and arguments.real(2, "x") == 2.0
    assert arguments.path(Path("a/b"), "f") == "a/b" and arguments.plain(np.bool_(1)) is True
    for check, value in ((arguments.integer, True), (arguments.integer, 1.0),
                         (arguments.real, "1"), (arguments.real, False),
                         (arguments.flag, 1), (arguments.text, b"x"), (arguments.path, b"x")):
        with pytest.raises(InputError):
            check(value, "p")
