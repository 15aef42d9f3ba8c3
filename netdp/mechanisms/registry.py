"""The local randomizers, each registered once: its CLI name, its kind, its family (the
module that holds its class, loaded on first use) and the traits by which the rest of the
simulator accepts it.

Every list of randomizer names elsewhere (a task's choices, an attack's oracles, the
audit's) is a query of :data:`ENTRIES` by :func:`names`: a new randomizer is written in
its module and registered here, nowhere else.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

#: The kinds, by the interface of :mod:`netdp.mechanisms.base` their classes implement.
KINDS = {
    "additive": "noise added to a number, shared between hops (AdditiveNoise)",
    "bounded": "an epsilon-LDP report of a number in [-1, 1] (Mechanism)",
    "frequency-oracle": "an epsilon-LDP report of a category (FrequencyOracle)",
}
#: The traits: what else accepts (or how the simulator treats) a randomizer that has one.
TRAITS = {
    "hashed": "draws public hash functions from a hash_seed (the simulator: one per run)",
    "multidim": "a pure oracle whose reports show their support (report_scores): the "
                "categorical attributes of --task multidim",
    "set-valued": "a base oracle of padding and sampling (PSFO, --task itemsets)",
    "crafted": "its RPA and MGA reports are built (netdp.adversary.poisoning)",
    "detectable": "fake-user detection applies (netdp.adversary.defences.detect_fake)",
    "recoverable": "LDPRecover applies (netdp.adversary.defences.recover)",
}


@dataclass(frozen=True)
class Entry:
    """One randomizer.

    Attributes
    ----------
    name
        Its CLI name (``--mechanism``), also its class's ``name``.
    kind
        One of :data:`KINDS`.
    family
        The module of :mod:`netdp.mechanisms` that holds its class.
    cls
        Its class's name there.
    aliases
        Other CLI names (the papers' short ones).
    traits
        Some of :data:`TRAITS`.
    seconds
        Frequency oracles: seconds per (report, category) pair and per category (its
        decoding), measured at 20 nodes and 1e4..1e6 categories and halved (the time
        estimates err short: :data:`netdp.tasks.base.HOP_SECONDS`).
    audit_us
        Microseconds one trial of ``netdp audit --mechanism`` takes, ``(a, b)`` for
        ``a + b d`` on ``d`` categories (both worlds drawn and scored, the test fitted and
        counted), measured at ε = 1 with 2e5 to 4e6 trials and halved
        (:func:`netdp.audit.mechanism.audit_seconds`).
    """

    name: str
    kind: str
    family: str
    cls: str
    aliases: tuple[str, ...] = ()
    traits: tuple[str, ...] = ()
    seconds: tuple[float, float] = (7e-9, 1e-7)
    audit_us: tuple[float, float] = (0.5, 0.02)


_ORACLE = "frequency-oracle"
#: Every randomizer, in the order the CLI lists them.
ENTRIES = (
    Entry("laplace", "additive", "noise", "Laplace", audit_us=(0.14, 0.0)),
    Entry("gaussian", "additive", "noise", "Gaussian", audit_us=(0.12, 0.0)),
    Entry("duchi", "bounded", "bounded", "Duchi", audit_us=(0.03, 0.0)),
    Entry("piecewise", "bounded", "bounded", "Piecewise", aliases=("pm",),
          audit_us=(0.13, 0.0)),
    Entry("hybrid", "bounded", "bounded", "Hybrid", aliases=("hm",), audit_us=(0.09, 0.0)),
    Entry("grr", _ORACLE, "randomized_response", "GRR",
          traits=("multidim", "set-valued", "crafted", "recoverable"),
          seconds=(0.0, 1e-07), audit_us=(0.48, 0.0)),
    Entry("sue", _ORACLE, "unary", "SUE",
          traits=("multidim", "crafted", "detectable", "recoverable"),
          seconds=(3.5e-09, 1e-07), audit_us=(0.17, 0.0027)),
    Entry("oue", _ORACLE, "unary", "OUE",
          traits=("multidim", "crafted", "detectable", "recoverable"),
          seconds=(3.5e-09, 1e-07), audit_us=(0.24, 0.0006)),
    Entry("blh", _ORACLE, "local_hashing", "BLH",
          traits=("multidim", "crafted", "detectable", "recoverable"), audit_us=(0.16, 0.0)),
    Entry("olh", _ORACLE, "local_hashing", "OLH",
          traits=("multidim", "set-valued", "crafted", "detectable", "recoverable"),
          audit_us=(0.5, 0.0)),
    Entry("hr", _ORACLE, "hadamard_response", "HadamardResponse",
          traits=("multidim", "crafted", "recoverable"),
          seconds=(1e-09, 1e-07), audit_us=(0.12, 0.0005)),
    Entry("cms", _ORACLE, "sketch", "CMS", traits=("hashed", "crafted", "recoverable"),
          seconds=(0.0, 7e-06), audit_us=(2.8, 0.0)),
    Entry("hcms", _ORACLE, "sketch", "HCMS", traits=("hashed", "crafted", "recoverable"),
          seconds=(0.0, 7e-06), audit_us=(0.12, 0.0)),
    Entry("rappor", _ORACLE, "rappor", "RAPPOR", traits=("hashed", "crafted"),
          seconds=(0.0, 1e-05), audit_us=(0.25, 0.019)),
    Entry("the", _ORACLE, "histogram_encoding", "THE", traits=("multidim",),
          seconds=(3.5e-09, 1e-07), audit_us=(0.09, 0.0005)),
    Entry("she", _ORACLE, "histogram_encoding", "SHE",
          seconds=(3.5e-09, 1e-07), audit_us=(0.2, 0.012)),
)
_BY_NAME = {e.name: e for e in ENTRIES}


def names(*kinds: str, trait: str | None = None, family: str | None = None,
          first: str | None = None) -> tuple[str, ...]:
    """The names of the randomizers of ``kinds`` (every kind if none is given) that have
    ``trait`` and belong to ``family``, in the order of :data:`ENTRIES`.

    ``first`` (one of them: the default of a choice) is moved to the front. An unknown
    kind or trait, or a ``first`` not found, raises ``ValueError``.
    """
    unknown = [k for k in kinds if k not in KINDS]
    unknown += [trait] if trait is not None and trait not in TRAITS else []
    if unknown:
        raise ValueError(f"no such kind or trait: {', '.join(unknown)}")
    out = tuple(e.name for e in ENTRIES if (not kinds or e.kind in kinds)
                and (trait is None or trait in e.traits)
                and (family is None or e.family == family))
    if first is None:
        return out
    if first not in out:
        raise ValueError(f"{first!r} is not among {', '.join(out)}")
    return (first,) + tuple(name for name in out if name != first)


def aliases(*kinds: str) -> tuple[str, ...]:
    """The aliases of the randomizers of ``kinds`` (every kind if none is given)."""
    return tuple(a for e in ENTRIES if not kinds or e.kind in kinds for a in e.aliases)


def canonical(name: str) -> str:
    """The registered name of ``name`` or of the alias ``name``; any other text as it is."""
    return next((e.name for e in ENTRIES if name in e.aliases), name)


def entry(name: str) -> Entry:
    """The entry of a registered name (``KeyError`` otherwise)."""
    return _BY_NAME[name]


def load(name: str) -> Any:
    """The class of the registered name ``name``, its module loaded on first use."""
    e = entry(name)
    return getattr(importlib.import_module(f"netdp.mechanisms.{e.family}"), e.cls)
