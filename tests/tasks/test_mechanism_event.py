"""A node's randomizer given as a dp-accounting event (issue 41 item 2):
:mod:`netdp.tasks.mechanism_event`."""

from __future__ import annotations

import dp_accounting as dpa
import numpy as np
import pytest

import netdp
from netdp.accounting.events import Gaussian, Laplace, RandomizedResponse
from netdp.core.errors import InputError
from netdp.mechanisms.noise import analytic_sigma
from netdp.run.cli import main

SMALL = {"nodes": 16, "steps": 200, "seed": 4}


def _figures(report: netdp.Report) -> list[float]:
    return [v for e in report.privacy.empirical for v in (e.mean, e.min, e.max)]


@pytest.mark.parametrize("delta", [1e-6, 1e-9])
def test_a_gaussian_event_on_the_walk_gives_the_built_in_gaussian(delta: float) -> None:
    z = 2.5
    mine = netdp.simulate({**SMALL, "delta": delta, "mechanism": dpa.GaussianDpEvent(z),
                           "range": [0.0, 4.0], "accountants": ["rdp", "kov"]},
                          keep_pairs=True)
    assert mine.mechanism["sigma"] == pytest.approx(z * 4.0, rel=1e-9)  # z x the width
    assert mine.mechanism["sigma"] <= z * 4.0  # never more noise than the event's
    built_in = netdp.simulate({**SMALL, "delta": delta, "mechanism": "gaussian",
                               "epsilon": mine.config.epsilon, "range": [0.0, 4.0],
                               "accountants": ["rdp", "kov"]}, keep_pairs=True)
    assert _figures(mine) == _figures(built_in)
    np.testing.assert_array_equal(mine.pairs, built_in.pairs)
    # the same as netdp's own event, and a noise that differs changes the figures
    assert _figures(netdp.simulate({**SMALL, "delta": delta, "range": [0.0, 4.0],
                                    "mechanism": Gaussian(z * 4.0, 4.0),
                                    "accountants": ["rdp", "kov"]})) == _figures(mine)
    other = netdp.simulate({**SMALL, "delta": delta, "mechanism": dpa.GaussianDpEvent(2.6),
                            "range": [0.0, 4.0], "accountants": ["rdp", "kov"]})
    assert _figures(other) != _figures(mine)


def test_laplace_and_randomized_response_events() -> None:
    lap = netdp.make_config({"mechanism": dpa.LaplaceDpEvent(0.5)})
    assert (lap.section.mechanism, lap.epsilon) == ("laplace", 2.0)
    assert netdp.make_config({"mechanism": Laplace(1.0, 0.25)}).epsilon == 0.25
    rr = netdp.make_config({"mechanism": dpa.RandomizedResponseDpEvent(0.5, 4)})
    assert (rr.task, rr.section.mechanism, rr.section.domain) == ("histogram", "grr", 4)
    assert rr.epsilon == pytest.approx(np.log(4 / 0.5 - 3), rel=1e-15)
    assert netdp.make_config({"mechanism": RandomizedResponse(1.5, 6)}).epsilon == 1.5


def test_a_toml_table_names_the_event(tmp_path, capsys) -> None:
    config = tmp_path / "run.toml"
    config.write_text("nodes = 20\nsteps = 200\nseed = 2\naccountants = [\"rdp\"]\n"
                      "mechanism = {event = \"GaussianDpEvent\", noise_multiplier = 3.0}\n")
    assert main(["simulate", "--config", str(config), "--json"]) == 0
    out = capsys.readouterr().out
    import json

    result = json.loads(out)
    assert result["mechanism"]["sigma"] == pytest.approx(3.0, rel=1e-9)
    assert result["config"]["mechanism"] == "gaussian"


@pytest.mark.parametrize(("mechanism", "extra", "param"), [
    ({"event": "GaussianDpEvent"}, {}, "mechanism"),
    ({"event": "GaussianDpEvent", "noise_multiplier": -1.0}, {}, "mechanism"),
    ({"event": "pld", "noise_multiplier": 1.0}, {}, "mechanism"),
    ({"event": "RandomizedResponseDpEvent", "noise_parameter": 0.5, "num_buckets": 1}, {},
     "mechanism"),
    (dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(1.0)), {}, "mechanism"),
    (dpa.ZCDpEvent(0.5), {}, "mechanism"),
    (dpa.GaussianDpEvent(2.0), {"epsilon": 1.0}, "epsilon"),
    (dpa.RandomizedResponseDpEvent(0.5, 4), {"task": "sum"}, "task"),
])
def test_what_cannot_be_a_node_s_randomizer_is_refused(mechanism, extra, param) -> None:
    with pytest.raises(InputError) as info:
        netdp.make_config({"mechanism": mechanism, **extra})
    assert info.value.param == param


def test_the_event_s_epsilon_calibrates_back_to_its_noise() -> None:
    from netdp.tasks.mechanism_event import event_params

    for z in (0.3, 1.0, 7.0, 50.0):
        for delta in (1e-3, 1e-6, 1e-10):
            eps = event_params(dpa.GaussianDpEvent(z), delta)["epsilon"]
            assert analytic_sigma(eps, delta) == pytest.approx(z, rel=1e-9)
            assert analytic_sigma(eps, delta) <= z


def test_gossip_averaging_takes_the_gaussian_s_noise_multiplier_as_its_sigma() -> None:
    base = {"protocol": "gossip", "topology": "grid", "nodes": 16, "seed": 3}
    mine = netdp.simulate({**base, "mechanism": dpa.GaussianDpEvent(2.0)})
    assert mine.config.section.sigma == 2.0
    assert _figures(mine) == _figures(netdp.simulate({**base, "sigma": 2.0}))
    with pytest.raises(InputError) as info:  # gossip adds Gaussian noise only
        netdp.make_config({**base, "mechanism": dpa.LaplaceDpEvent(2.0)})
    assert info.value.param == "mechanism"
