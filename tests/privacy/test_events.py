"""Event records: validation (parameter named in the error), immutability, derived values."""

from __future__ import annotations

import dataclasses
import math

import pytest

from netdp.accounting.events import (
    ApproxDP,
    Composed,
    Gaussian,
    Laplace,
    PureDP,
    RandomizedResponse,
    Repeated,
    Subsampled,
)


def test_valid_events_construct_and_are_frozen():
    events = [
        PureDP(1.0),
        ApproxDP(0.5, 1e-6),
        Gaussian(2.0, sensitivity=0.5),
        Laplace(1.0),
        RandomizedResponse(1.0, domain=5),
        Composed((PureDP(1.0), Gaussian(1.0))),
        Repeated(PureDP(0.1), 10),
        Subsampled(Gaussian(1.0), 0.01),
    ]
    for e in events:
        hash(e)  # frozen dataclasses are hashable
        field = dataclasses.fields(e)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(e, field, getattr(e, field))


@pytest.mark.parametrize(
    ("factory", "param"),
    [
        (lambda: PureDP(-0.1), "epsilon"),
        (lambda: PureDP(math.inf), "epsilon"),
        (lambda: PureDP(math.nan), "epsilon"),
        (lambda: PureDP("1"), "epsilon"),
        (lambda: ApproxDP(1.0, 1.5), "delta"),
        (lambda: ApproxDP(1.0, -1e-9), "delta"),
        (lambda: Gaussian(0.0), "sigma"),
        (lambda: Gaussian(1.0, sensitivity=-1.0), "sensitivity"),
        (lambda: Laplace(0.0), "scale"),
        (lambda: Laplace(1.0, sensitivity=math.inf), "sensitivity"),
        (lambda: RandomizedResponse(1.0, domain=1), "domain"),
        (lambda: RandomizedResponse(1.0, domain=2.5), "domain"),
        (lambda: RandomizedResponse(-1.0), "epsilon"),
        (lambda: Repeated(PureDP(1.0), -1), "count"),
        (lambda: Repeated(PureDP(1.0), 1.5), "count"),
        (lambda: Repeated(PureDP(1.0), True), "count"),
        (lambda: Repeated(1.0, 3), "event"),
        (lambda: Subsampled(PureDP(1.0), 1.5), "probability"),
        (lambda: Subsampled("x", 0.5), "event"),
        (lambda: Composed((PureDP(1.0), 3)), "events"),
        (lambda: Composed(PureDP(1.0)), "events"),
    ],
)
def test_invalid_parameters_raise_value_error_naming_the_parameter(factory, param):
    with pytest.raises(ValueError, match=param):
        factory()


def test_composed_accepts_a_list_and_stores_a_tuple():
    c = Composed([PureDP(1.0), PureDP(2.0)])
    assert isinstance(c.events, tuple)
    assert c == Composed((PureDP(1.0), PureDP(2.0)))
    assert Composed(()).events == ()


def test_numbers_are_stored_as_floats_and_ints():
    assert isinstance(PureDP(1).epsilon, float)
    assert isinstance(Repeated(PureDP(1), 3).count, int)


@pytest.mark.parametrize(("eps", "k"), [(0.1, 2), (1.0, 2), (1.0, 7), (5.0, 100)])
def test_randomized_response_gamma_gives_exactly_eps(eps, k):
    # keep w.p. 1 - gamma, else uniform over k values: ratio of the two extreme outputs
    g = RandomizedResponse(eps, domain=k).gamma
    ratio = (1 - g + g / k) / (g / k)
    assert math.isclose(math.log(ratio), eps, rel_tol=1e-12)


def test_derived_parameters():
    assert Laplace(2.0, sensitivity=3.0).epsilon == 1.5
    assert Gaussian(4.0, sensitivity=2.0).mu == 0.5
