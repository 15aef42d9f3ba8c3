"""netdp's events and dp-accounting's, converted both ways (issue 41 item 3)."""

from __future__ import annotations

import math

import dp_accounting as dpa
import numpy as np
import pytest

from netdp.accounting.accountants import get_accountant
from netdp.accounting.dp_events import as_netdp_event, from_dp_accounting, to_dp_accounting
from netdp.accounting.events import (
    ApproxDP,
    Composed,
    DpEvent,
    Gaussian,
    Laplace,
    PureDP,
    RandomizedResponse,
    Repeated,
    Subsampled,
)


def _random_event(rng: np.random.Generator, depth: int = 0) -> DpEvent:
    """A random tree of the events that convert (leaves with sensitivity 1)."""
    kind = rng.integers(0, 7 if depth < 2 else 3)
    if kind == 0:
        return Gaussian(float(rng.uniform(0.5, 5.0)))
    if kind == 1:
        return Laplace(float(rng.uniform(0.5, 5.0)))
    if kind == 2:
        return RandomizedResponse(float(rng.uniform(0.1, 3.0)), int(rng.integers(2, 9)))
    if kind in (3, 4):
        return Composed(tuple(_random_event(rng, depth + 1)
                              for _ in range(int(rng.integers(1, 4)))))
    if kind == 5:
        return Repeated(_random_event(rng, depth + 1), int(rng.integers(1, 6)))
    inner = Gaussian(float(rng.uniform(0.8, 3.0))) if rng.random() < 0.5 else \
        Laplace(float(rng.uniform(0.8, 3.0)))
    return Subsampled(inner, float(rng.uniform(0.01, 0.5)))


def _same(a: object, b: object) -> bool:
    """The same event tree, floats within 1e-14 (randomized response's ε <-> γ costs an
    ulp)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return math.isclose(a, b, rel_tol=1e-14)  # type: ignore[arg-type]
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))  # type: ignore
    fields = getattr(a, "__dataclass_fields__", None) or [
        f.name for f in getattr(a, "__attrs_attrs__", ())]  # dp-accounting's are attrs
    if fields:
        return all(_same(getattr(a, f), getattr(b, f)) for f in fields)
    return a == b


@pytest.mark.parametrize("seed", range(40))
def test_a_random_event_tree_round_trips(seed: int) -> None:
    event = _random_event(np.random.default_rng(seed))
    theirs = to_dp_accounting(event)
    back = from_dp_accounting(theirs)
    assert _same(back, event) and _same(to_dp_accounting(back), theirs)
    assert not _same(back, Composed((back,)))  # the comparison can fail
    for name in ("rdp", "pld", "gdp"):
        accountant = get_accountant(name)
        try:
            mine = accountant.epsilon(event, 1e-6)
        except TypeError:  # gdp takes Gaussians only
            continue
        assert accountant.epsilon(back, 1e-6) == pytest.approx(mine, rel=1e-12, abs=1e-12)
        assert accountant.epsilon(theirs, 1e-6) == pytest.approx(mine, rel=1e-12, abs=1e-12)


def test_each_kind_maps_to_its_twin() -> None:
    assert to_dp_accounting(Gaussian(2.0, 0.5)) == dpa.GaussianDpEvent(4.0)
    assert to_dp_accounting(Laplace(3.0, 1.5)) == dpa.LaplaceDpEvent(2.0)
    rr = to_dp_accounting(RandomizedResponse(1.0, 4))
    assert rr.num_buckets == 4 and rr.noise_parameter == pytest.approx(4 / (math.e + 3))
    assert from_dp_accounting(rr).epsilon == pytest.approx(1.0, rel=1e-14)
    pure = to_dp_accounting(PureDP(0.7))
    assert pure.num_buckets == 2
    assert to_dp_accounting(Subsampled(Gaussian(1.0), 0.1)) == dpa.PoissonSampledDpEvent(
        0.1, dpa.GaussianDpEvent(1.0))
    assert to_dp_accounting(Repeated(Laplace(1.0), 3)) == dpa.SelfComposedDpEvent(
        dpa.LaplaceDpEvent(1.0), 3)
    assert to_dp_accounting(Gaussian(1.0, 0.0)) == dpa.NoOpDpEvent()
    assert to_dp_accounting(Composed(())) == dpa.NoOpDpEvent()
    assert from_dp_accounting(dpa.NoOpDpEvent()) == Composed(())
    assert as_netdp_event(Gaussian(1.0)) == Gaussian(1.0)


def test_pure_dp_is_binary_randomized_response_in_every_accountant() -> None:
    """The same figures, up to pld's grid step (1e-4: the two are discretised apart)."""
    for name, tol in (("rdp", 1e-12), ("pld", 2e-4), ("kov", 1e-12), ("basic", 1e-12)):
        accountant = get_accountant(name)
        assert accountant.epsilon(to_dp_accounting(PureDP(0.7)), 1e-6) == pytest.approx(
            accountant.epsilon(PureDP(0.7), 1e-6), rel=0, abs=tol)


def test_what_has_no_twin_is_refused() -> None:
    with pytest.raises(ValueError, match="no event"):
        to_dp_accounting(ApproxDP(1.0, 1e-6))
    with pytest.raises(ValueError, match="ZCDpEvent"):
        from_dp_accounting(dpa.ZCDpEvent(0.5))
    with pytest.raises(TypeError):
        get_accountant("pld").epsilon("gaussian", 1e-6)  # type: ignore[arg-type]


def test_dp_accounting_composes_a_converted_event_as_netdp_does() -> None:
    """dp-accounting's own PLD accountant on the converted event agrees with netdp's
    ``pld`` (which composes the Gaussians in closed form, hence the 1e-9)."""
    event = Composed((Repeated(Gaussian(3.0), 10), Repeated(Laplace(2.0), 5),
                      Repeated(Subsampled(Gaussian(1.1), 0.01), 100)))
    theirs = dpa.pld.PLDAccountant()
    theirs.compose(to_dp_accounting(event))
    assert theirs.get_epsilon(1e-6) == pytest.approx(
        get_accountant("pld").epsilon(event, 1e-6), rel=1e-6)


def test_the_accountants_keep_their_keyword_arguments() -> None:
    for name in ("rdp", "pld", "gdp"):
        accountant = get_accountant(name)
        assert accountant.epsilon(Gaussian(2.0), delta=1e-6) == accountant.epsilon(
            dpa.GaussianDpEvent(2.0), delta=1e-6)
        assert accountant.delta(event=Gaussian(2.0), epsilon=1.0) > 0
