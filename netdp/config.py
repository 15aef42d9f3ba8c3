"""A run's configuration: one frozen record, validated before anything runs."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from netdp.data import GENERATORS
from netdp.engine import ENGINES, parse_latency
from netdp.errors import InputError, check
from netdp.learning.datasets import DATASETS
from netdp.learning.models import MODELS
from netdp.protocols import TASKS
from netdp.protocols.sgd import SCHEDULES

SUM_MECHANISMS = ("gaussian", "laplace", "duchi", "piecewise", "hybrid")
HISTOGRAM_MECHANISMS = ("grr", "sue", "oue", "blh", "olh", "hr", "cms", "hcms", "rappor",
                        "the", "she")
MECHANISMS = SUM_MECHANISMS + HISTOGRAM_MECHANISMS
SHUFFLE_BOUNDS = ("fmt-numeric", "fmt-closed", "blanket")
CALIBRATIONS = ("analytic", "classic")
WALKS = ("auto", "simple", "metropolis")
ACCOUNTANTS = ("kov", "rdp", "pld")
SGD_REGIMES = ("local", "network", "central", "nonprivate")


@dataclass(frozen=True)
class SimulationConfig:
    """Every parameter of one simulation (CLI flags, TOML keys and sweep axes alike).

    ``None`` means "resolve from the others": ``nodes`` from the topology or the data
    file (2000 for ``sgd``), ``steps`` as ``100 n`` (``rounds · n`` on the ring, ``10 n``
    for ``sgd``), ``seed`` fresh from the OS, ``accountants`` as ``kov`` (``rdp`` for
    ``sgd``). ``accountants = ()`` skips pairwise tracking (utility only).
    ``mechanism = None``: gaussian for ``sum``, grr for ``histogram``. The fields from
    ``dataset`` on parameterise ``task = "sgd"`` only.
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
    accountants: tuple[str, ...] | None = None
    coalition: str | None = None
    dataset: str = "randhie"
    target: str | None = None
    model: str = "logistic"
    lipschitz: float = 0.4
    lr: float = 0.1
    lr_schedule: str = "constant"
    radius: float | None = None
    l2: float = 0.0
    skew: float | None = None
    test_fraction: float = 0.2
    max_contributions: int | None = None
    regimes: tuple[str, ...] = ("network",)
    evals: int = 100

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise :class:`~netdp.errors.InputError` on the first parameter out of range."""
        _choice("task", self.task, TASKS)
        if self.task == "sgd":
            self._validate_sgd()
        mech = self.resolved_mechanism
        _choice("mechanism", mech, MECHANISMS)
        if self.task == "sgd":
            pass
        elif self.task == "sum":
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
            bad = [a for a in self.resolved_accountants if a != "kov"]
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
        check(self.accountants is None or isinstance(self.accountants, tuple | list),
              "accountant", "give a list of accountants (empty: no pairwise tracking)")
        for name in self.resolved_accountants:
            _choice("accountant", name, ACCOUNTANTS)
        for name in ("rdp", "pld"):
            check(name not in self.resolved_accountants or mech != "laplace", "accountant",
                  f"{name} accounts Gaussian noise; use --accountant kov with laplace")
        if self.coalition is not None:
            parse_coalition(self.coalition)
        if self.topology == "ring":
            check(self.tokens == 1, "tokens", "the ring protocol moves one token (got "
                  f"{self.tokens})")
            check(self.steps is None, "steps", "the ring runs full turns: use --rounds K")

    def _validate_sgd(self) -> None:
        check(self.mechanism in (None, "gaussian"), "mechanism",
              f"sgd adds Gaussian noise to clipped gradients (got {self.mechanism!r})")
        check(self.tokens == 1, "tokens", f"sgd moves one model token (got {self.tokens})")
        check(self.coalition is None, "coalition", "coalitions are not tracked for sgd")
        check(self.accountants is None or set(self.accountants) <= {"rdp"}, "accountant",
              "the sgd tracker composes Renyi DP: use --accountant rdp (or --no-tracking)")
        _choice("model", self.model, MODELS)
        _choice("lr-schedule", self.lr_schedule, SCHEDULES)
        check(_finite(self.lipschitz) and self.lipschitz > 0, "lipschitz",
              f"must be a finite number > 0 (got {self.lipschitz})")
        check(_finite(self.lr) and self.lr > 0, "lr", f"must be a finite number > 0 "
              f"(got {self.lr})")
        check(self.radius is None or (_finite(self.radius) and self.radius > 0), "radius",
              f"must be a finite number > 0 (got {self.radius})")
        check(_finite(self.l2) and self.l2 >= 0, "l2", f"must be a finite number >= 0 "
              f"(got {self.l2})")
        check(self.skew is None or (_finite(self.skew) and self.skew > 0), "skew",
              f"must be a finite number > 0 (got {self.skew})")
        check(_finite(self.test_fraction) and 0 < self.test_fraction < 1, "test-fraction",
              f"must lie in the open interval (0, 1) (got {self.test_fraction})")
        if self.max_contributions is not None:
            _integer("max-contributions", self.max_contributions, 1)
        _integer("evals", self.evals, 1)
        check(isinstance(self.regimes, tuple | list) and len(self.regimes) > 0, "compare",
              f"name one or more of {', '.join(SGD_REGIMES)}")
        for name in self.regimes:
            _choice("compare", name, SGD_REGIMES)
        check(len(set(self.regimes)) == len(self.regimes), "compare",
              f"names a regime twice ({', '.join(self.regimes)})")
        check(self.dataset in DATASETS or self.dataset.lower().endswith(".csv")
              or Path(self.dataset).is_file(), "dataset",
              f"must be one of {', '.join(DATASETS)} or a CSV file (got {self.dataset!r})")

    @property
    def resolved_mechanism(self) -> str:
        """The mechanism, or the task's default."""
        if self.mechanism is not None:
            return self.mechanism
        return "grr" if self.task == "histogram" else "gaussian"

    @property
    def resolved_accountants(self) -> tuple[str, ...]:
        """The accountants, or the task's default (``kov``; ``rdp`` for ``sgd``)."""
        if self.accountants is not None:
            return tuple(self.accountants)
        return ("rdp",) if self.task == "sgd" else ("kov",)

    @property
    def local_epsilon(self) -> float:
        """ε0 of one report: from ``gamma`` for γ-RR, else ``epsilon``."""
        if self.gamma is not None:
            return math.log1p(self.domain * (1 - self.gamma) / self.gamma)
        return self.epsilon

    def to_dict(self) -> dict:
        """Plain dict of every field (JSON / TOML ready)."""
        out = asdict(self)
        for key in ("accountants", "regimes"):
            if out[key] is not None:
                out[key] = list(out[key])
        return out

    @classmethod
    def from_dict(cls, data: dict) -> SimulationConfig:
        """Build from a dict (a TOML table, a sweep row); unknown keys are an error."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        check(not unknown, unknown[0] if unknown else "", f"unknown parameter; allowed: "
              f"{', '.join(sorted(names))}")
        data = dict(data)
        for key in ("accountants", "regimes"):
            if isinstance(data.get(key), list):
                data[key] = tuple(data[key])
            elif key == "regimes" and isinstance(data.get(key), str):
                data[key] = tuple(r.strip() for r in data[key].split(",") if r.strip())
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
