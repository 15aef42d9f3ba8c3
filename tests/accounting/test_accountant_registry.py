"""The accountant registry is the one source: the library's table, ``--accountant``'s
choices and help, the CLI reference, the task trackers' declarations, the sweep's weights
and the cost estimates all read it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from netdp.accounting import ACCOUNTANTS, get_accountant, registry
from netdp.core.errors import InputError
from netdp.tasks import TASKS, common_specs, make_config

ROOT = Path(__file__).resolve().parents[2]


def test_entries_are_frozen_unique_and_load_their_classes():
    names = [e.name for e in registry.entries()]
    assert len(names) == len(set(names))
    with pytest.raises(dataclasses.FrozenInstanceError):
        registry.ENTRIES[0].name = "x"  # type: ignore[misc]
    for name in registry.names(library=True):
        assert registry.load(name).name == name
    assert registry.names() == ("kov", "rdp", "pld", "exact")
    assert [e.name for e in registry.entries() if e.exact] == ["exact"]


def test_the_library_table_is_the_registry():
    assert tuple(ACCOUNTANTS) == registry.names(library=True)
    for name, acc in ACCOUNTANTS.items():
        assert get_accountant(name) is acc and type(acc) is registry.load(name)
    with pytest.raises(ValueError, match="unknown accountant 'exact'"):
        get_accountant("exact")  # the simulator's only: no library class


def test_a_bad_entry_is_refused():
    with pytest.raises(ValueError, match="kinds must be among"):
        registry.Entry("x", "x", kinds=("torus",))
    with pytest.raises(ValueError, match="gaussian_shift"):
        registry.Entry("x", "x", gaussian_shift="fast")


def test_every_tracker_composes_only_with_what_the_registry_says_it_supports():
    """The tasks' trackers declare which accountants they run; each of those declares the
    task, the walk kind and the protocol; and every task an entry names has a tracker."""
    for task in TASKS.values():
        for tracking in task.tracking:
            for name in tracking.accountants:
                e = registry.entry(name)
                assert task.key in e.tasks, (task.key, name)
                assert tracking.topology in e.kinds, (task.key, tracking.topology, name)
                assert task.protocol in e.protocols, (task.key, name)
        assert task.default_accountants == task.tracking[0].accountants[:1], task.key
    for e in registry.entries():
        for key in e.tasks:
            assert any(e.name in t.accountants for t in TASKS[key].tracking), (e.name, key)


def test_the_flag_reads_the_registry():
    spec = common_specs()["accountants"]
    assert spec.choices == registry.names()
    assert registry.help_text() in spec.help
    with pytest.raises(InputError, match="must be one of kov, rdp, pld, exact") as err:
        make_config(accountants=("moments",))
    assert err.value.param == "accountant"
    config = make_config(nodes=10)
    with pytest.raises(InputError, match="must be one of kov, rdp, pld, exact"):
        make_config(config, accountants=("moments",))
    with pytest.raises(InputError, match="composes with kov"):
        make_config(task="histogram", accountants=("rdp",))


def _paragraphs(text: str, flag: str) -> list[str]:
    """Each ``flag``'s help in ``text`` (the CLI reference), unwrapped."""
    out = []
    for block in re.findall(rf"^  {re.escape(flag)} NAME +(.*?)(?=^  -)", text, re.M | re.S):
        out.append(" ".join(block.split()))
    return out


def test_the_cli_reference_agrees_with_the_registry():
    """docs/cli.md lists, under each command's ``--accountant``, every accountant the
    registry offers with its help, and nothing else."""
    found = [p for p in _paragraphs((ROOT / "docs" / "cli.md").read_text(encoding="utf-8"),
                                    "--accountant")
             if p.startswith("how pairwise losses are composed")]  # not plot's filter
    assert len(found) == 2  # simulate and account
    for text in found:
        assert f": {registry.help_text()}; repeat for several" in text
        listed = re.findall(r"(?:: |, | or )([a-z-]+) \(", text.split("; repeat")[0])
        assert tuple(listed) == registry.names()


def test_the_sweep_weights_and_the_cost_model_are_the_registry_s():
    from netdp.run.sweep.runner import RUN_OVERHEAD, estimate_cost
    from netdp.tracking.pld_cost import pld_seconds

    base = make_config(nodes=20, accountants=("kov",))
    steps = estimate_cost(base) - RUN_OVERHEAD
    for name in registry.names():
        cost = estimate_cost(make_config(base, accountants=(name,))) - RUN_OVERHEAD
        assert cost == pytest.approx(steps * registry.entry(name).weight)
    assert round(pld_seconds("exact", True, 6, 6, 100, 4.22), 1) == 5.0
    with pytest.raises(AssertionError, match="no cost model"):
        pld_seconds("kov", True, 6, 6, 100, 4.22)


def test_a_gaussian_accountant_with_laplace_noise_is_refused_naming_those_that_can():
    """The line names the accountants of eps0-DP noise from the registry (it named none
    when the noise axis was renamed and the caller still asked for ``laplace``)."""
    import pytest

    from netdp import simulate
    from netdp.core.errors import InputError

    pure = registry.names(noise="pure")
    assert pure
    with pytest.raises(InputError, match=f"use --accountant {' or '.join(pure)} with laplace"):
        simulate({"nodes": 20, "mechanism": "laplace", "accountants": ["rdp"], "seed": 1})
    registry.check_noise(pure[0], False, "laplace")  # one that can: no refusal


def test_the_default_is_pld_where_its_estimate_fits_and_rdp_beyond(monkeypatch):
    """A Gaussian walk sum defaults to pld where netdp estimates pld over the run within
    its budget (``registry.DEFAULT_SECONDS``) and the time limit, to rdp beyond."""
    from netdp.tasks import make_config, task_of
    from netdp.tasks.base import accountant_seconds

    def default(params: dict) -> tuple[str, ...]:
        config = make_config({"task": "sum", "seed": 1, **params})
        return tuple(task_of(config).prepare(config).config.accountants)

    small = {"nodes": 12, "steps": 240}  # about 1.1 s
    assert accountant_seconds(make_config(small), 12, 240, "pld") < registry.DEFAULT_SECONDS
    assert default(small) == ("pld",)
    assert default({"nodes": 100}) == ("rdp",)  # 21.3 s: over the budget
    assert default({**small, "runs": 40}) == ("rdp",)  # the runs together
    assert default({**small, "topology": "hypercube", "nodes": 16, "sources": 2}) == ("pld",)
    assert default({"topology": "hypercube", "nodes": 128}) == ("rdp",)  # every observer
    assert default({"topology": "karate"}) == ("pld",)  # every observer: 13.0 s
    assert default({**small, "mechanism": "laplace"}) == ("kov",)  # pld: Gaussian only
    monkeypatch.setenv("NETDP_TIME_LIMIT", "0.5")  # the estimate is past the limit
    assert default(small) == ("rdp",)
