"""Privacy loss distributions: the ``pld`` accountant, through Google's dp-accounting
(Koskela et al. 2020's discretisation; pessimistic rounding, so its figures are upper
bounds).

Why not dp-accounting's own ``PLDAccountant`` on the converted events
(:func:`netdp.accounting.dp_events.to_dp_accounting`): it discretises every Gaussian,
where this one merges them into one Gaussian first (exact), and it refuses randomized
response under add/remove neighbours; the two agree to 1e-6 where both apply
(``tests/accounting/test_dp_events.py``), Laplace alone to the last bit."""

from __future__ import annotations

import math

import numpy as np

from netdp.accounting.amplification import subsampled_delta, subsampled_epsilon
from netdp.accounting.base import Accountant, check_delta, check_epsilon
from netdp.accounting.events import (
    ApproxDP,
    Composed,
    DpEvent,
    Gaussian,
    Laplace,
    PrivacyLoss,
    PureDP,
    RandomizedResponse,
    Repeated,
    Subsampled,
)


class PldAccountant(Accountant):
    """Privacy loss distributions through ``dp_accounting.pld`` (pessimistic, exact up to
    discretisation).

    All Gaussian parts are merged first into one Gaussian of parameter
    ``mu = sqrt(sum mu_i^2)`` (exact). Randomized response is built with
    ``from_randomized_response(...)`` and repetitions with ``self_compose``: this avoids
    the dp-accounting 0.6.0 bug where ``PLDAccountant`` ignores the repeat count of a
    ``RandomizedResponseDpEvent``. Pure/approximate DP use the worst-case PLD of
    ``from_privacy_parameters``; subsampled Gaussian/Laplace use the library's
    ``sampling_prob`` (add/remove relation); other subsampled events use the amplified
    ``(eps, delta)``.

    Parameters
    ----------
    value_discretization_interval : float
        PLD grid step (``1e-4`` is the library default and meets the spec's check values).
    """

    name = "pld"
    description = "privacy loss distributions (dp_accounting.pld)"

    def __init__(self, value_discretization_interval: float = 1e-4) -> None:
        if not value_discretization_interval > 0:
            raise ValueError("value_discretization_interval must be > 0")
        self.vdi = float(value_discretization_interval)

    def pld(self, event: DpEvent):
        """The composed ``dp_accounting`` ``PrivacyLossDistribution`` of ``event``."""
        from dp_accounting.pld import privacy_loss_distribution as pld_lib

        mu2, dist = self._build(event)
        if mu2 > 0:
            g = pld_lib.from_gaussian_mechanism(
                standard_deviation=1.0 / math.sqrt(mu2),
                value_discretization_interval=self.vdi,
            )
            dist = g if dist is None else dist.compose(g)
        if dist is None:
            dist = pld_lib.identity(value_discretization_interval=self.vdi)
        return dist

    def compose(self, plds: list):
        """The composition of several PLDs, in a balanced tree (the one PLD composer).

        Pairs are composed level by level, which keeps the intermediate supports small;
        ``self_compose`` is used for repeats of one event (:class:`Repeated`).
        """
        from dp_accounting.pld import privacy_loss_distribution as pld_lib

        parts = list(plds)
        if not parts:
            return pld_lib.identity(value_discretization_interval=self.vdi)
        while len(parts) > 1:
            parts = [a.compose(b) for a, b in zip(parts[::2], parts[1::2], strict=False)] + (
                [parts[-1]] if len(parts) % 2 else [])
        return parts[0]

    def _params(self, eps: float, delta: float):
        from dp_accounting.pld import common
        from dp_accounting.pld import privacy_loss_distribution as pld_lib

        return pld_lib.from_privacy_parameters(
            common.DifferentialPrivacyParameters(eps, delta),
            value_discretization_interval=self.vdi,
        )

    def _build(self, event: DpEvent):
        from dp_accounting import NeighboringRelation
        from dp_accounting.pld import privacy_loss_distribution as pld_lib

        if isinstance(event, Gaussian):
            return event.mu**2, None
        if isinstance(event, Laplace):
            if event.sensitivity == 0:
                return 0.0, None
            return 0.0, pld_lib.from_laplace_mechanism(
                event.scale, sensitivity=event.sensitivity, value_discretization_interval=self.vdi
            )
        if isinstance(event, RandomizedResponse):
            if event.epsilon == 0:
                return 0.0, None
            return 0.0, pld_lib.from_randomized_response(
                noise_parameter=event.gamma,
                num_buckets=event.domain,
                value_discretization_interval=self.vdi,
                neighboring_relation=NeighboringRelation.REPLACE_ONE,
            )
        if isinstance(event, PureDP):
            return 0.0, (self._params(event.epsilon, 0.0) if event.epsilon > 0 else None)
        if isinstance(event, ApproxDP):
            if event.epsilon == 0 and event.delta == 0:
                return 0.0, None
            return 0.0, self._params(event.epsilon, event.delta)
        if isinstance(event, Composed):
            mu2, parts = 0.0, []
            for e in event.events:
                m, d = self._build(e)
                mu2 += m
                if d is not None:
                    parts.append(d)
            return mu2, (self.compose(parts) if parts else None)
        if isinstance(event, Repeated):
            if event.count == 0:
                return 0.0, None
            m, d = self._build(event.event)
            return event.count * m, (d.self_compose(event.count) if d is not None else None)
        if isinstance(event, Subsampled):
            return 0.0, self._subsampled(event)
        if isinstance(event, PrivacyLoss):
            # onto this accountant's grid, each loss rounded up (pessimistic)
            index = np.ceil(np.asarray(event.index) * (event.step / self.vdi) - 1e-9)
            probs = np.bincount((index - index.min()).astype(np.int64), weights=event.probs)
            return 0.0, pld_lib.PrivacyLossDistribution.create_from_rounded_probability(
                {int(index.min()) + i: float(p) for i, p in enumerate(probs) if p > 0},
                event.infinity, self.vdi)
        raise TypeError(f"accountant {self.name!r} cannot handle event {event!r}")

    def _subsampled(self, event: Subsampled):
        from dp_accounting.pld import privacy_loss_distribution as pld_lib

        q, inner = event.probability, event.event
        if q == 0:
            return None
        if isinstance(inner, Gaussian):
            if inner.sensitivity == 0:
                return None
            return pld_lib.from_gaussian_mechanism(
                inner.sigma,
                sensitivity=inner.sensitivity,
                sampling_prob=q,
                value_discretization_interval=self.vdi,
            )
        if isinstance(inner, Laplace):
            if inner.sensitivity == 0:
                return None
            return pld_lib.from_laplace_mechanism(
                inner.scale,
                sensitivity=inner.sensitivity,
                sampling_prob=q,
                value_discretization_interval=self.vdi,
            )
        if isinstance(inner, (PureDP, RandomizedResponse, ApproxDP)):
            d = inner.delta if isinstance(inner, ApproxDP) else 0.0
            eps = float(subsampled_epsilon(inner.epsilon, q))
            if eps == 0 and d == 0:
                return None
            return self._params(eps, float(subsampled_delta(d, q)))
        raise TypeError(
            f"accountant {self.name!r}: Subsampled supports a Gaussian, Laplace, RR or DP "
            f"event, got {inner!r}"
        )

    def epsilon(self, event: DpEvent, delta: float) -> float:
        delta = check_delta(delta)
        return max(0.0, float(self.pld(event).get_epsilon_for_delta(delta)))

    def delta(self, event: DpEvent, epsilon: float) -> float:
        epsilon = check_epsilon(epsilon)
        return min(1.0, float(self.pld(event).get_delta_for_epsilon(epsilon)))
