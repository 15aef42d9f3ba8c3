"""One seed per run, split into independent streams per component.

Every random draw of netdp comes from a ``numpy.random.Generator`` made here. A stream
is addressed by (component, run, token), not by the order in which streams are asked
for, so adding a component or a token never changes the draws of another.
"""

from __future__ import annotations

import numpy as np

COMPONENTS = ("topology", "data", "walk", "noise", "latency", "faults", "coalition", "hashes",
              "sources", "paths", "attack", "targets", "calibration",
              "bounding", "schedule")


def fresh_seed() -> int:
    """A new 64-bit seed from the OS, to be recorded with the result."""
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0])


def seed_sequence(seed: int, component: str, *key: int) -> np.random.SeedSequence:
    """The ``SeedSequence`` of one component (and optional run / token indices)."""
    return np.random.SeedSequence(seed, spawn_key=(COMPONENTS.index(component), *key))


def generator(seed: int, component: str, *key: int) -> np.random.Generator:
    """A ``Generator`` (PCG64) for one component of one run, e.g. ``("walk", run, token)``."""
    return np.random.Generator(np.random.PCG64(seed_sequence(seed, component, *key)))
