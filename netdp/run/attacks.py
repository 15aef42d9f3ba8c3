"""What a notebook calls for ``netdp attack``: ``attack(...) -> Poisoning``, fake users
promoting target categories of a frequency oracle, measured beside theory."""

from __future__ import annotations

import dataclasses
import math

from netdp import mechanisms
from netdp.adversary.poisoning import Poisoning, choose_targets, poison
from netdp.core import arguments, seeding
from netdp.core.errors import InputError, check
from netdp.core.params import MIN_EPSILON, ORACLE_MAX_EPSILON
from netdp.data.values import categories
from netdp.mechanisms import registry
from netdp.run.resources import check_seconds

#: Seconds of one user's report in one trial beside the oracle's own work (drawing, the
#: attack's crafting), halved as :data:`netdp.tasks.base.HOP_SECONDS` is.
USER_SECONDS = 2e-7
BETA, TARGETS = 0.05, 10
"""The defaults of ``--beta`` (the fraction of fake users) and ``--targets``."""


def attack(mechanism: str = "oue", attack: str = "mga", domain: int = 128,
           epsilon: float = 1.0, beta: float = BETA, targets: int = TARGETS,
           target_choice: str = "random", users: int = 100_000, data: str = "zipf",
           trials: int = 20, defences: tuple[str, ...] = (), seed: int = 0) -> Poisoning:
    """Run a poisoning attack on a frequency oracle, as ``netdp attack`` does (the same
    parameters, the same defaults; ``defences`` is the repeated ``--defence``).

    >>> result = netdp.attack(mechanism="olh", attack="mga", users=20_000, seed=1)
    >>> result.gain, result.theory, result.to_frame()

    Raises
    ------
    InputError
        On a parameter out of range or of the wrong type.
    """
    domain, targets, users, trials, seed = (
        arguments.integer(value, name) for value, name in (
            (domain, "domain"), (targets, "targets"), (users, "users"), (trials, "trials"),
            (seed, "seed")))
    epsilon, beta = arguments.real(epsilon, "epsilon"), arguments.real(beta, "beta")
    mechanism, attack, target_choice, data = (
        arguments.text(value, name) for value, name in (
            (mechanism, "mechanism"), (attack, "attack"), (target_choice, "target_choice"),
            (data, "data")))
    if isinstance(defences, str) or not isinstance(defences, tuple | list):
        raise InputError("defences", f"must be a list of names (got {defences!r:.60})")
    defences = tuple(arguments.text(d, "defences") for d in defences)
    check(MIN_EPSILON <= epsilon <= ORACLE_MAX_EPSILON, "epsilon",
          f"must be a number in the range [{MIN_EPSILON:g}, {ORACLE_MAX_EPSILON:g}] (e^epsilon "
          f"must stay finite; got {epsilon:g})")
    check(2 <= domain <= 1_000_000, "domain", f"must lie in 2..1e6 (got {domain})")
    check(math.isfinite(beta) and 0 < beta < 1, "beta", f"must lie in (0, 1) (got {beta})")
    check(2 <= users <= 10**8, "users", f"must lie in 2..1e8 (got {users})")
    check(2 <= trials <= 10_000, "trials", f"must lie in 2..10000 (got {trials})")
    check(0 <= seed < 2**63, "seed", f"must lie in 0..2^63-1 (got {seed})")
    fake = int(round(beta * users))
    # the pair's culprit: --users when --beta is left at its default (a refusal names a
    # parameter the user gave)
    check(1 <= fake < users, "users" if beta == BETA else "beta",
          f"{users:,} users at beta {beta:g} give {fake:,} fake users; needs at least one "
          "fake and one honest user")
    if targets == TARGETS:  # the default: --domain is the one given
        check(targets <= domain, "domain", f"must be at least --targets {targets} (got "
              f"{domain})")
    oracle = mechanisms.frequency_oracle(mechanism, epsilon, domain)  # checks the name
    per_pair, per_item = registry.entry(registry.canonical(mechanism)).seconds
    reports = float(users) * trials
    check_seconds({"the reports": (reports * (USER_SECONDS + per_pair * domain), "users"),
                   "the estimates": (trials * per_item * domain, "domain")},
                  f"; {users:,} users x {trials} trials")
    values = categories(data, users - fake, domain, seeding.generator(seed, "data"))
    chosen = choose_targets(values, domain, targets, target_choice,
                            seeding.generator(seed, "attack", 0))
    result = poison(oracle, values, attack, chosen, beta, trials,
                    seeding.generator(seed, "attack", 1), tuple(defences))
    config = {"mechanism": mechanism, "attack": attack, "domain": domain, "epsilon": epsilon,
              "beta": beta, "targets": targets, "target_choice": target_choice,
              "users": users, "data": data, "trials": trials, "defences": list(defences),
              "seed": seed}
    return dataclasses.replace(result, seed=seed, config=config)
