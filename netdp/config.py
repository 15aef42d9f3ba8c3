"""A run's configuration: one frozen record, validated before anything runs."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace

from netdp.data import GENERATORS
from netdp.engine import ENGINES, parse_latency
from netdp.errors import InputError, check
from netdp.protocols import TASKS

SUM_MECHANISMS = ("gaussian", "laplace", "duchi", "piecewise", "hybrid")
HISTOGRAM_MECHANISMS = ("grr", "sue", "oue", "blh", "olh", "hr", "cms", "hcms", "rappor",
                        "the", "she")
MECHANISMS = SUM_MECHANISMS + HISTOGRAM_MECHANISMS
SHUFFLE_BOUNDS = ("fmt-numeric", "fmt-closed", "blanket")
CALIBRATIONS = ("analytic", "classic")
WALKS = ("auto", "simple", "metropolis")
ACCOUNTANTS = ("kov", "rdp", "pld")


@dataclass(frozen=True)
class SimulationConfig:
    """Every parameter of one simulation (CLI flags, TOML keys and sweep axes alike).

    ``None`` means "resolve from the others": ``nodes`` from the topology or the data
    file, ``steps`` as ``100 n`` (``rounds · n`` on the ring), ``seed`` fresh from the OS.
    ``accountants = ()`` skips pairwise tracking (utility only). ``mechanism = None``:
    gaussian for ``sum``, grr for ``histogram``.
    """

    task: str = "sum"
    topology: str = "complete"
    nodes: int | None = None
    steps: int | None = None
    rounds: int = 1
    tokens: int = 1
    mechanism: str | None = None
    epsilon: float = 1.0
    gamma: float | None = None
    domain: int = 10
    shuffle: str = "fmt-numeric"
    dummies: int | None = None
    project: bool = False
    delta: float = 1e-6
    calibration: str = "analytic"
    noise_every_hop: bool = False
    self_moves: bool = True
    walk: str = "auto"
    directed: bool = False
    data: str = "uniform"
    data_file: str | None = None
    column: str | None = None
    low: float = 0.0
    high: float = 1.0
    latency: str = "1"
    service_time: float = 0.0
    engine: str = "auto"
    seed: int | None = None
    runs: int = 1
    accountants: tuple[str, ...] = ("kov",)
    coalition: str | None = None

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise :class:`~netdp.errors.InputError` on the first parameter out of range."""
        _choice("task", self.task, TASKS)
        mech = self.resolved_mechanism
        _choice("mechanism", mech, MECHANISMS)
        if self.task == "sum":
            check(mech in SUM_MECHANISMS, "mechanism",
                  f"summation randomizes numbers: {' '.join(SUM_MECHANISMS)} (got {mech!r})")
            check(self.data != "zipf", "data", "zipf draws categories: use it with "
                  "--task histogram")
        else:
            check(mech in HISTOGRAM_MECHANISMS, "mechanism", "a histogram needs a frequency "
                  f"oracle: {' '.join(HISTOGRAM_MECHANISMS)} (got {mech!r})")
            _integer("domain", self.domain, 2)
            _choice("shuffle", self.shuffle, SHUFFLE_BOUNDS)
            check(self.shuffle != "blanket" or mech == "grr", "shuffle",
                  "the privacy blanket bound holds for grr (k-ary randomized response) only")
            if self.dummies is not None:
                _integer("dummies", self.dummies, 0)
            bad = [a for a in self.accountants if a != "kov"]
            check(not bad, "accountant", "the histogram tracker composes shuffle bounds "
                  f"with kov (got {', '.join(bad)})")
        if self.gamma is not None:
            check(mech == "grr", "gamma", "gamma parameterises grr (gamma-randomized "
                  "response); use --mechanism grr")
            check(_finite(self.gamma) and 0 < self.gamma < 1, "gamma",
                  f"must lie in the open interval (0, 1) (got {self.gamma})")
        _choice("calibration", self.calibration, CALIBRATIONS)
        _choice("walk", self.walk, WALKS)
        _choice("engine", self.engine, ENGINES)
        _choice("data", self.data, GENERATORS)
        if self.nodes is not None:
            _integer("nodes", self.nodes, 2)
        if self.steps is not None:
            _integer("steps", self.steps, 1)
        _integer("rounds", self.rounds, 1)
        _integer("tokens", self.tokens, 1)
        _integer("runs", self.runs, 1)
        check(_finite(self.epsilon) and self.epsilon > 0, "epsilon",
              f"must be a finite number > 0 (got {self.epsilon})")
        check(_finite(self.delta) and 0 < self.delta < 1, "delta",
              f"must lie in the open interval (0, 1) (got {self.delta})")
        check(_finite(self.low) and _finite(self.high) and self.low < self.high, "range",
              f"needs finite LOW < HIGH (got {self.low} {self.high})")
        check(_finite(self.service_time) and self.service_time >= 0, "service-time",
              f"must be a finite number >= 0 (got {self.service_time})")
        if self.seed is not None:
            _integer("seed", self.seed, 0)
        parse_latency(self.latency)
        check(isinstance(self.accountants, tuple | list), "accountant",
              "give a list of accountants (empty: no pairwise tracking)")
        for name in self.accountants:
            _choice("accountant", name, ACCOUNTANTS)
        for name in ("rdp", "pld"):
            check(name not in self.accountants or mech != "laplace", "accountant",
                  f"{name} accounts Gaussian noise; use --accountant kov with laplace")
        if self.coalition is not None:
            parse_coalition(self.coalition)
        if self.topology == "ring":
            check(self.tokens == 1, "tokens", "the ring protocol moves one token (got "
                  f"{self.tokens})")
            check(self.steps is None, "steps", "the ring runs full turns: use --rounds K")

    @property
    def resolved_mechanism(self) -> str:
        """The mechanism, or the task's default."""
        if self.mechanism is not None:
            return self.mechanism
        return "gaussian" if self.task == "sum" else "grr"

    @property
    def local_epsilon(self) -> float:
        """ε0 of one report: from ``gamma`` for γ-RR, else ``epsilon``."""
        if self.gamma is not None:
            return math.log1p(self.domain * (1 - self.gamma) / self.gamma)
        return self.epsilon

    def to_dict(self) -> dict:
        """Plain dict of every field (JSON / TOML ready)."""
        out = asdict(self)
        out["accountants"] = list(self.accountants)
        return out

    @classmethod
    def from_dict(cls, data: dict) -> SimulationConfig:
        """Build from a dict (a TOML table, a sweep row); unknown keys are an error."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        check(not unknown, unknown[0] if unknown else "", f"unknown parameter; allowed: "
              f"{', '.join(sorted(names))}")
        data = dict(data)
        if isinstance(data.get("accountants"), list):
            data["accountants"] = tuple(data["accountants"])
        return cls(**data)

    def replace(self, **changes) -> SimulationConfig:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)


def parse_coalition(text: str) -> tuple[str, list[int] | int]:
    """``"3,7,9"`` (those nodes) or ``"random:C"`` (C nodes drawn per run)."""
    text = str(text).strip()
    bad = InputError("coalition", f"expected node ids like 3,7,9 or random:C with C >= 1 "
                                  f"(got {text!r})")
    try:
        if text.startswith("random:"):
            size = int(text[7:])
            if size < 1:
                raise bad
            return "random", size
        ids = [int(p) for p in text.split(",")]
    except ValueError:
        raise bad from None
    if not ids or min(ids) < 0:
        raise bad
    return "nodes", ids


def _choice(param: str, value, allowed) -> None:
    check(value in allowed, param, f"must be one of {', '.join(allowed)} (got {value!r})")


def _integer(param: str, value, minimum: int) -> None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= minimum
    if not ok:
        raise InputError(param, f"must be an integer >= {minimum} (got {value!r})")


def _finite(x) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
