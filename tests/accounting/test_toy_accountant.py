"""Adding an accountant is one entry: a toy declared here (its library class and its
per-run losses) works from the library and from ``netdp simulate --accountant toy``, end
to end, with no other file edited; it is registered for these tests only."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from netdp.accounting import get_accountant, registry
from netdp.accounting.base import Accountant
from netdp.accounting.events import PureDP, Repeated
from netdp.run.cli import main
from netdp.tracking.base import ldp_setting
from netdp.tracking.graph_observers import walk_stays
from netdp.tracking.loss_table import PairLosses
from netdp.tracking.view_cap import view_caps


class ToyAccountant(Accountant):
    """Basic composition under another name (the library's side of the toy)."""

    name = "toy"

    def epsilon(self, event, delta):
        return get_accountant("basic").epsilon(event, delta)


def toy_losses(setup, trace, accountant, coalition, keep_pairs):
    """Every pair ``(u -> v)`` at its observer's view cap, the LDP loss at the largest count
    of a node's contributions that ``v``'s view allows (spec Correction 6,
    :func:`~netdp.tracking.view_cap.view_caps`), at the report's one δ: sound, and no
    amplification at all (the simulator's side)."""
    n, cfg = trace.n, setup.config
    target, z = ldp_setting(setup)
    caps = view_caps(trace, cfg.epsilon, cfg.delta, None, walk_stays(setup), target, z)
    observers = np.arange(n)
    nodes = np.concatenate([np.delete(observers, v) for v in observers])
    return PairLosses(accountant, n, observers, np.zeros(n), np.zeros(n, np.int64),
                      np.zeros(n, np.int64), np.repeat(caps, n - 1),
                      np.full(n, n - 1, np.int64), nodes if keep_pairs else None,
                      cfg.report_delta)


TOY = registry.Entry(
    "toy", "every pair at its view cap (a test's toy)", library=(__name__, "ToyAccountant"),
    kinds=("complete",), tasks=("sum",), noise=registry.AXES["noise"],
    pair_losses=(__name__, "toy_losses"))


@pytest.fixture
def toy():
    registry.register(TOY)
    try:
        yield TOY
    finally:
        registry.unregister("toy")


def test_the_library_call(toy):
    assert get_accountant("toy").epsilon(Repeated(PureDP(0.5), 4), 1e-6) == 2.0
    assert "toy" in registry.names() and "toy" in registry.names(library=True)


def test_simulate_with_the_toy_end_to_end(toy, capsys):
    argv = ["simulate", "-n", "10", "--steps", "200", "--seed", "3", "--accountant", "kov",
            "--accountant", "toy", "--json"]
    assert main(argv) == 0
    got = json.loads(capsys.readouterr().out)
    kov, mine = got["privacy"]["empirical"]
    assert (kov["accountant"], mine["accountant"]) == ("kov", "toy")
    assert mine["pairs"] == 90 and mine["min"] >= kov["max"]  # the cap bounds kov's pairs
    assert math.isclose(mine["delta"], got["privacy"]["target_delta"])
    assert main(["simulate", "--help"]) == 0
    assert "toy (every pair at its view cap" in " ".join(capsys.readouterr().out.split())


def test_the_toy_is_refused_where_it_declares_no_support(toy, capsys):
    assert main(["simulate", "--topology", "ring", "-n", "10", "--accountant", "toy"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--accountant" in err[0] and "kov, exact" in err[0]


def test_without_the_toy_it_is_refused(capsys):
    assert main(["simulate", "-n", "10", "--accountant", "toy"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["netdp simulate: error: --accountant: must be one of kov, rdp, pld, exact "
                   "(got 'toy')"]
    with pytest.raises(ValueError, match="unknown accountant 'toy'"):
        get_accountant("toy")


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="registered already"):
        registry.register(registry.Entry("kov", "again", library=TOY.library))
    with pytest.raises(KeyError):
        registry.unregister("kov")  # built in: not removable
