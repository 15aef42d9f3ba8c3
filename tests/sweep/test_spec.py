"""Sweep specs: expansion of the grid, seeds, config hashes, validation before running."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from netdp.core.errors import InputError, without_value
from netdp.run.cli import main
from netdp.run.sweep.spec import config_hash, derive_seed, load_spec, parse_spec
from netdp.tasks import make_config

REPO = Path(__file__).resolve().parents[2]


def test_grid_is_the_product_of_the_axes_in_order():
    spec = parse_spec({"seeds": [7, 3], "fixed": {"topology": "complete", "delta": 1e-7},
                       "grid": {"nodes": [5, 10, 20], "epsilon": [0.1, 0.4]}})
    assert spec.n_runs == len(spec.runs) == 12
    points = [(c.nodes, c.epsilon) for c in spec.points]
    assert points == [(5, 0.1), (5, 0.4), (10, 0.1), (10, 0.4), (20, 0.1), (20, 0.4)]
    assert all(c.delta == 1e-7 and c.runs == 1 and c.seed is None for c in spec.points)
    assert [r.seed for r in spec.runs[:4]] == [7, 3, 7, 3]  # seeds inner, as given
    assert len({r.key for r in spec.runs}) == 12


def test_ranges_linear_log_and_integer_fields():
    spec = parse_spec({"grid": {
        "epsilon": {"start": 0.5, "stop": 2, "num": 4},
        "nodes": {"start": 10, "stop": 1000, "num": 3, "logspace": True},
        "steps": {"start": 1, "stop": 3, "num": 9}}})   # 1, 1.25, ... -> 1, 2, 3
    assert spec.grid["epsilon"] == [0.5, 1.0, 1.5, 2.0]
    assert spec.grid["nodes"] == [10, 100, 1000]
    assert all(type(v) is int for v in spec.grid["nodes"] + spec.grid["steps"])
    assert spec.grid["steps"] == [1, 2, 3]   # rounded, duplicates dropped, order kept
    one = parse_spec({"grid": {"epsilon": {"start": 0.3, "stop": 9, "num": 1}}})
    assert one.grid["epsilon"] == [0.3]


def test_integers_given_for_float_parameters_are_floats():
    spec = parse_spec({"fixed": {"epsilon": 2, "range": [0, 10]}})
    cfg = spec.points[0]
    assert type(cfg.epsilon) is float and (cfg.section.low, cfg.section.high) == (0.0, 10.0)
    assert config_hash(cfg) == config_hash(make_config(epsilon=2.0, low=0.0, high=10.0))


def test_seeds_derived_deterministically_from_base_seed():
    a = parse_spec({"seeds": 4}).seeds
    assert a == parse_spec({"seeds": 4, "base_seed": 0}).seeds
    assert a == tuple(derive_seed(0, i) for i in range(4))
    assert len(set(a)) == 4 and all(0 <= s < 2**63 for s in a)
    assert parse_spec({"seeds": 6}).seeds[:4] == a  # more seeds extend the list
    assert not set(a) & set(parse_spec({"seeds": 4, "base_seed": 1}).seeds)
    assert derive_seed(0, 0) == 4334430513956379144  # pinned: resuming depends on it


def test_config_hash_ignores_seed_and_spelled_out_defaults():
    base = make_config(nodes=50, epsilon=0.5)
    assert config_hash(base) == config_hash(base.replace(seed=3))
    assert config_hash(base) == config_hash(base.replace(delta=1e-6, topology="complete"))
    assert config_hash(base) != config_hash(base.replace(epsilon=0.4))
    assert config_hash(base) != config_hash(base.replace(accountants=("kov", "rdp")))
    assert len(config_hash(base)) == 16


def test_repeated_grid_points_run_once():
    spec = parse_spec({"seeds": 2, "grid": {"nodes": [5, 5, 6], "epsilon": [1, 1.0]}})
    assert [c.nodes for c in spec.points] == [5, 6] and spec.n_runs == len(spec.runs) == 4


@pytest.mark.parametrize("data, param, words", [
    ({"seedz": 3}, "seedz", "unknown sweep key; allowed: description, seeds"),
    ({"NETDP-SECRET-X": 3}, "SPEC.toml", "an unknown top-level key (allowed: description"),
    ({"fixed": {"nodez": 5}}, "nodez", "unknown parameter; allowed: accelerated, accountants"),
    ({"grid": {"epsilonn": [1]}}, "epsilonn", "[grid]"),
    ({"grid": {"epsilon": [0.1, -1.0]}}, "epsilon",
     "must be a finite number in the range [1e-06, 1e+06] (in "),  # the value not echoed
    ({"grid": {"epsilon": [0.1, -1.0]}}, "epsilon", "grid point epsilon = -1.0"),
    ({"grid": {"nodes": []}}, "nodes", "empty grid axis"),
    ({"grid": {"nodes": {"start": 5, "stop": 9, "num": 0}}}, "nodes", "num must be"),
    ({"grid": {"nodes": {"start": 5, "stop": 9}}}, "nodes", "missing num"),
    ({"grid": {"nodes": {"start": 5, "stop": 9, "num": 2, "step": 1}}}, "nodes", "'step'"),
    ({"grid": {"nodes": {"start": 0, "stop": 9, "num": 2, "logspace": True}}}, "nodes",
     "start, stop > 0"),
    ({"grid": {"topology": {"start": 1, "stop": 2, "num": 2}}}, "topology", "numeric"),
    ({"grid": {"nodes": 5}}, "nodes", "put single values in [fixed]"),
    ({"grid": {"nodes": [5.5]}}, "nodes", "must be an integer >= 2"),
    ({"fixed": {"seed": 1}}, "seed", "seeds = N"),
    ({"grid": {"runs": [1, 2]}}, "runs", "each row of a sweep is one run"),
    ({"fixed": {"nodes": 5}, "grid": {"nodes": [6]}}, "nodes", "both in [fixed] and in [grid]"),
    ({"seeds": 0}, "seeds", "integer >= 1"),
    ({"seeds": [1, 1]}, "seeds", "distinct"),
    ({"seeds": [1], "base_seed": 2}, "base-seed", "only with seeds = N"),
    ({"backend": "spark"}, "backend", "dask, serial"),
    ({"fixed": {"task": "histogram", "mechanism": "gaussian"}}, "mechanism", "grr"),
])
def test_validation_errors_name_the_parameter(data, param, words):
    with pytest.raises(InputError) as err:
        parse_spec(data, "spec.toml")
    assert err.value.param == param
    assert words in err.value.message and "spec.toml" in err.value.message
    assert "\n" not in err.value.message


def test_same_message_as_simulate():
    with pytest.raises(InputError) as direct:
        make_config(epsilon=-1.0)
    with pytest.raises(InputError) as swept:
        parse_spec({"fixed": {"epsilon": -1.0}})
    assert swept.value.message.startswith(without_value(direct.value.message))
    assert "(got" in direct.value.message and "(got" not in swept.value.message  # issue 39


def test_fixed_values_are_checked_with_each_grid_point():
    # mechanism olh is only valid with the histogram task of the grid: no error
    spec = parse_spec({"fixed": {"mechanism": "olh"}, "grid": {"task": ["histogram"]}})
    assert spec.points[0].get("mechanism") == "olh"


def test_validating_many_grid_points_is_fast():
    start = time.process_time()
    spec = parse_spec({"seeds": 3, "grid": {"nodes": {"start": 10, "stop": 1e4, "num": 50},
                                            "epsilon": {"start": 0.1, "stop": 10, "num": 40,
                                                        "logspace": True}}})
    assert len(spec.points) == 2000
    assert time.process_time() - start < 5.0  # about 0.1 s here: configs, never runs


def test_experiment_specs_are_valid():
    specs = sorted((REPO / "experiments" / "sweeps").glob("*.toml"))
    assert {p.stem for p in specs} >= {"figure1b", "figure1b_quick", "histogram_utility"}
    for path in specs:
        spec = load_spec(path)
        assert spec.n_runs > 0 and spec.description
    full, quick = (load_spec(REPO / f"experiments/sweeps/{n}.toml")
                   for n in ("figure1b", "figure1b_quick"))
    assert set(quick.hashes) < set(full.hashes) and quick.seeds == full.seeds
    assert len(full.seeds) == 10 and set(full.grid["epsilon"]) == {0.1, 0.4}
    assert all(c.accountants == ("kov", "rdp") and c.topology == "complete"
               for c in full.points)


# --------------------------------------------------------------------------- the CLI

BAD_SPECS = {
    "unknown key": "seeds = 2\n[fixed]\nnodez = 5\n",
    "bad grid value": "[grid]\nnodes = [5, 10]\nepsilon = [0.5, -1]\n",
    "empty grid": "[grid]\nnodes = []\n",
    "not toml": "[grid\n",
}


@pytest.mark.parametrize("case", sorted(BAD_SPECS))
def test_cli_rejects_bad_specs_before_writing(case, tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(BAD_SPECS[case])
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out), "--backend", "serial"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(("netdp sweep: error: --", "netdp sweep: error: SPEC.toml: "))
    assert err.count("\n") == 1
    assert not out.exists()
    out.mkdir()  # an existing empty folder stays empty
    assert main(["sweep", str(spec), "--out", str(out)]) == 2
    assert list(out.iterdir()) == []


def test_cli_unknown_key_lists_the_valid_ones(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(BAD_SPECS["unknown key"])
    main(["sweep", str(spec), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert "--nodez: unknown parameter; allowed:" in err and "epsilon, " in err


def test_cli_dry_run_counts_and_writes_nothing(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text("seeds = 3\n[grid]\nnodes = [5, 10]\nepsilon = {start = 0.1, stop = 1, "
                    "num = 4}\n")
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out), "--dry-run"]) == 0
    assert "24 runs = 8 grid points x 3 seeds" in capsys.readouterr().out
    assert not out.exists()
