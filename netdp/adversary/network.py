"""Malicious holders inside the network protocols: forged contributions, token tampering,
and what honest holders can detect.

Spec mechanisms.md, "Poisoning" and "Poisoning: gains and defences". A set ``M`` of
holders (``--malicious``) runs one attack (``--attack``) whenever it holds a token:

* **forged contributions** (the task's own, e.g. a histogram's ``rpa``, ``ria``, ``mga``
  report, or a sum's ``max`` or ``beyond:X`` value) replace the holder's honest one;
* **token tampering**: ``drop`` forwards only its own contribution (the aggregate is
  reset), ``replay`` forwards the aggregate it received at its previous visit of this
  token, plus its contribution (everything added since is lost), ``inflate:K`` adds ``K``
  fake contributions beside its own.

The token carries its hop counter, which the attacker keeps honest: the number of steps
``T`` is public, so a counter that does not reach it at the end is caught at once.

**What an honest holder checks.** Each contribution has a public *mass* (a sum's value;
a histogram report's debiased total count ``Σ_j ĉ_j``, 1 on average) and under an honest
run ``k`` contributions have a mass in ``[k lo, k hi] ± z sqrt(k var)`` (:class:`Null`).
A holder that receives the token at step ``t`` runs two checks:

* ``conservation``: the token's mass against its counter ``t``;
* ``flow``: the mass added since its own previous hand-off of this token (which it
  remembers) against the ``t - j - 1`` contributions made in between; an aggregate that
  shrinks is caught here.

``z`` is the Bonferroni level that keeps the run's false-alarm chance of each check at
:data:`FALSE_ALARM` over all its receipts (normal tails: exact for Gaussian noise, the
central limit for reports).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

from netdp.core import seeding
from netdp.core.errors import InputError, check
from netdp.engine.faults import from_config
from netdp.graphs.node_names import node_set
from netdp.graphs.walk_kind import kind_of
from netdp.mechanisms.base import FrequencyOracle

TAMPER = ("drop", "replay", "inflate")
CHECKS = ("conservation", "flow")
FALSE_ALARM = 0.01  # per run and check: the chance that an honest run raises it
WITH_AMOUNT = {"beyond": "X, the value added (e.g. beyond:5)",
               "inflate": "K >= 1, the fake contributions added per visit (e.g. inflate:3)"}


@dataclass(frozen=True)
class Attack:
    """A parsed ``--attack``: its name, and ``beyond:X``'s value or ``inflate:K``'s count."""

    name: str
    amount: float | None = None

    @property
    def tampers(self) -> bool:
        """Whether it tampers with the token (rather than forging the contribution)."""
        return self.name in TAMPER

    def __str__(self) -> str:
        return self.name if self.amount is None else f"{self.name}:{self.amount:g}"


def parse_attack(text: str, offered: Sequence[str], task: str) -> Attack:
    """``--attack`` as one of ``offered`` (the task's attacks); ``beyond`` needs ``:X``,
    ``inflate`` takes ``:K`` (default 1)."""
    name, _, amount = str(text).strip().partition(":")
    check(name in offered, "attack", f"{task} offers {', '.join(offered) or 'no attack'} "
          f"(got {text!r})")
    if name not in WITH_AMOUNT:
        check(not amount, "attack", f"{name} takes no value (got {text!r})")
        return Attack(name)
    if name == "inflate" and not amount:
        return Attack(name, 1.0)
    try:
        value = float(amount)
    except ValueError:
        raise InputError("attack", f"{name} needs {WITH_AMOUNT[name]} (got {text!r})") from None
    if name == "inflate":
        check(value.is_integer() and 1 <= value <= 10**6, "attack",
              f"inflate:K needs an integer K in 1..1e6 (got {text!r})")
    check(math.isfinite(value), "attack", f"{name} needs a finite value (got {text!r})")
    return Attack(name, value)


@dataclass(frozen=True)
class Null:
    """The mass of ``k`` honest contributions: in ``[k lo, k hi]`` (the data's part) plus a
    zero-mean part of variance ``k var`` (the noise's, or a report's own spread)."""

    lo: float
    hi: float
    var: float

    def bounds(self, k: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
        """The interval an honest mass of ``k`` contributions stays in, but with chance
        ``2 Φ(-z)``; a relative slack of 1e-9 covers rounding (a grr count is exact)."""
        spread = z * np.sqrt(k * self.var)
        slack = 1e-9 * (1.0 + k * max(abs(self.lo), abs(self.hi)))
        return k * self.lo - spread - slack, k * self.hi + spread + slack


@dataclass(frozen=True, eq=False)
class Epochs:
    """One token's states after each attack event (known before any report is drawn: it
    depends on who held the token, not on what they added).

    The token received at step ``t`` (after the event at ``steps[e] < t``, the last one
    before t) holds the contributions of the interval chain ``closed[e]``, those from
    ``start[e]`` up to ``t``, and ``inflated[e]`` inflate events. A chain is an index into
    ``links``, rows ``(parent, a, b)``: the interval ``[a, b)`` and the rest of the chain
    (-1: none); parents come first, so a chain's mass is one pass over the rows.
    """

    steps: np.ndarray
    closed: np.ndarray
    start: np.ndarray
    inflated: np.ndarray
    links: np.ndarray


@dataclass(frozen=True, eq=False)
class Plan:
    """What the malicious holders did to one run's tokens.

    Attributes
    ----------
    malicious
        The malicious nodes.
    attacked
        ``(tokens, steps)``: steps held by a malicious node.
    alive
        ``(tokens, steps)``: contributions still in the published token.
    fakes
        ``(tokens,)``: ``inflate`` events whose fake contributions reach the result.
    epochs
        Per token, its states after each attack event (:class:`Epochs`).
    """

    malicious: np.ndarray
    attacked: np.ndarray
    alive: np.ndarray
    fakes: np.ndarray
    epochs: tuple[Epochs, ...]

    @property
    def share(self) -> float:
        """The share of contributions made by malicious holders (β of the run)."""
        return float(self.attacked.mean()) if self.attacked.size else 0.0


def plan(holders: np.ndarray, malicious: np.ndarray, attack: Attack) -> Plan:
    """Follow each token through the malicious holders' actions (see the module doc): a
    loop over the attack events only.

    ``replay`` at a node's first visit of a token has nothing to replay: it forwards the
    token as an honest holder would.
    """
    tokens, steps = holders.shape
    attacked = np.isin(holders, malicious)
    alive = np.zeros((tokens, steps), dtype=bool)
    fakes = np.zeros(tokens, dtype=np.int64)
    epochs = []
    for k in range(tokens):
        links: list[tuple[int, int, int]] = []
        closed, start, inflated = -1, 0, 0
        seen: dict[int, tuple[int, int, int, int]] = {}
        rows = []
        for i in (np.flatnonzero(attacked[k]).tolist() if attack.tampers else []):
            node = int(holders[k, i])
            received = (closed, start, i, inflated)
            if attack.name == "drop":
                closed, start, inflated = -1, i, 0
            elif attack.name == "replay" and node in seen:
                old, o, j, f = seen[node]
                if j > o:
                    links.append((old, o, j))
                    old = len(links) - 1
                closed, start, inflated = old, i, f
            elif attack.name == "inflate":
                inflated += 1
            seen[node] = received
            rows.append((i, closed, start, inflated))
        table = np.array(rows, dtype=np.int64).reshape(-1, 4)
        epochs.append(Epochs(table[:, 0], table[:, 1], table[:, 2], table[:, 3],
                             np.array(links, dtype=np.int64).reshape(-1, 3)))
        alive[k, start:] = True
        while closed >= 0:
            closed, a, b = links[closed]
            alive[k, a:b] = True
        fakes[k] = inflated
    return Plan(np.asarray(malicious), attacked, alive, fakes, tuple(epochs))


def received_mass(plan: Plan, masses: np.ndarray, fake_mass: float) -> np.ndarray:
    """``(tokens, steps)``: the mass of the token each holder receives (before its own
    contribution), from the contributions' ``masses`` and one inflate event's mass."""
    tokens, steps = masses.shape
    cum = np.zeros((tokens, steps + 1))
    np.cumsum(masses, axis=1, out=cum[:, 1:])
    out = cum[:, :-1].copy()  # no event yet: everything since step 0
    t = np.arange(steps)
    for k, ep in enumerate(plan.epochs):
        if not ep.steps.size:
            continue
        chain = np.zeros(len(ep.links) + 1)  # chain[-1]: the empty chain
        for row, (parent, a, b) in enumerate(ep.links.tolist()):
            chain[row] = chain[parent] + cum[k, b] - cum[k, a]
        base = chain[ep.closed] + ep.inflated * fake_mass - cum[k, ep.start]
        epoch = np.searchsorted(ep.steps, t, side="left") - 1  # the last event before t
        later = epoch >= 0
        out[k, later] = base[epoch[later]] + cum[k, t[later]]
    return out


@dataclass(frozen=True)
class Detection:
    """One check over one run: whether an honest holder raised it, first at which step
    (of which token), by which node, and how many hops after the first attacked step."""

    check: str
    detected: bool
    step: int | None = None
    token: int | None = None
    node: int | None = None
    delay: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "detected": self.detected, "step": self.step,
                "token": self.token, "node": self.node, "delay": self.delay}


def detect(holders: np.ndarray, plan: Plan, received: np.ndarray, masses: np.ndarray,
           null: Null, alpha: float = FALSE_ALARM) -> tuple[Detection, ...]:
    """Run both checks at every honest receipt (see the module doc)."""
    tokens, steps = holders.shape
    honest = ~plan.attacked
    honest[:, 0] = False  # the first holder receives an empty token: nothing to check
    t = np.broadcast_to(np.arange(steps), holders.shape)
    # flow: each holder's previous visit j of the same token (its hand-off R_j + m_j)
    order = np.argsort(holders, axis=1, kind="stable")  # by node, then by step
    prev = np.full(holders.shape, -1)
    rows = np.arange(tokens)[:, None]
    same = holders[rows, order[:, 1:]] == holders[rows, order[:, :-1]]
    prev[rows, order[:, 1:]] = np.where(same, order[:, :-1], -1)
    flow = honest & (prev >= 0)
    j = np.where(flow, prev, 0)
    handed = np.take_along_axis(received + masses, j, axis=1)
    tests = {"conservation": (honest, received, t.astype(float)),
             "flow": (flow, received - handed, np.where(flow, t - j - 1, 0).astype(float))}
    out = []
    first = [int(np.flatnonzero(row)[0]) if row.any() else None for row in plan.attacked]
    for name, (where, mass, count) in tests.items():
        z = _bonferroni(alpha, int(where.sum()))
        low, high = null.bounds(count, z)
        alarm = where & ((mass < low) | (mass > high))
        if not alarm.any():
            out.append(Detection(name, False))
            continue
        steps_hit = np.where(alarm, t, steps)
        k = int(np.argmin(steps_hit.min(axis=1)))
        i = int(steps_hit[k].min())
        start = first[k]
        out.append(Detection(name, True, i, k, int(holders[k, i]),
                             None if start is None else i - start))
    return tuple(out)


def _bonferroni(alpha: float, checks: int) -> float:
    """``z`` with ``checks · 2 Φ(-z) = alpha``."""

    return -NormalDist().inv_cdf(alpha / (2.0 * max(checks, 1)))


@dataclass(frozen=True, eq=False)
class AttackRun:
    """One run under attack: the gain against the same run with every holder honest (the
    same draws), its conditional expectation, and the checks.

    Attributes
    ----------
    gain, theory
        The task's gain (a histogram: the targets' total frequency gain; a sum: the
        estimate's shift) and its expectation given the walk and who attacked (``None``
        where no closed form is known).
    per_target
        A histogram's gain per target.
    share
        The share of contributions made by malicious holders.
    lost, fakes
        Contributions missing from the result, and fake contributions added to it.
    detections
        One per check (none where the checks are not calibrated for the task's noise).
    honest
        The outcome of the same run with every holder honest.
    malicious
        The run's malicious nodes.
    """

    gain: float
    theory: float | None
    per_target: tuple[float, ...]
    share: float
    lost: int
    fakes: int
    detections: tuple[Detection, ...]
    honest: Any
    malicious: tuple[int, ...]
    note: str | None = None


@dataclass(frozen=True, eq=False)
class AttackReport:
    """The ``attack`` object of a report: the attack's effect over the runs.

    Attributes
    ----------
    attack, malicious
        ``--attack`` and ``--malicious`` as given.
    runs
        One :class:`AttackRun` per completed run.
    targets
        A histogram attack's target categories.
    honest_utility
        The task's utility of the same runs with every holder honest.
    """

    attack: str
    malicious: str
    runs: tuple[AttackRun, ...]
    targets: tuple[int, ...] = ()
    honest_utility: dict[str, Any] = field(default_factory=dict)

    def gain(self) -> dict[str, Any]:
        """``{empirical, std, theory}`` over the runs (the std of the mean)."""
        g = np.array([r.gain for r in self.runs])
        std = float(g.std(ddof=1) / math.sqrt(g.size)) if g.size > 1 else None
        theories = [r.theory for r in self.runs]
        theory = None if any(v is None for v in theories) else \
            float(np.mean([v for v in theories if v is not None]))
        return {"empirical": float(g.mean()), "std": std, "theory": theory}

    def detection(self) -> list[dict[str, Any]]:
        """Per check: the share of runs in which an honest holder raised it, and the mean
        delay (hops from the first attacked step) where it did."""
        out = []
        for name in CHECKS:
            hits = [d for r in self.runs for d in r.detections if d.check == name]
            if not hits:
                continue
            found = [d for d in hits if d.detected]
            delays = [d.delay for d in found if d.delay is not None]
            out.append({"check": name, "runs": len(hits), "detected_runs": len(found),
                        "rate": len(found) / len(hits), "false_alarm": FALSE_ALARM,
                        "mean_delay": float(np.mean(delays)) if delays else None})
        return out

    def to_dict(self) -> dict[str, Any]:
        first = self.runs[0]
        per = np.mean([r.per_target for r in self.runs], axis=0) if first.per_target else []
        notes = sorted({r.note for r in self.runs if r.note})
        return {"attack": self.attack, "malicious": self.malicious,
                "malicious_nodes": list(first.malicious),
                "share": float(np.mean([r.share for r in self.runs])),
                "gain": self.gain(),
                **({"targets": list(self.targets),
                    "per_target": [{"target": t, "gain": float(g)}
                                   for t, g in zip(self.targets, per, strict=True)]}
                   if self.targets else {}),
                "lost": float(np.mean([r.lost for r in self.runs])),
                "fakes": float(np.mean([r.fakes for r in self.runs])),
                "detection": self.detection(),
                "honest_utility": self.honest_utility,
                "runs": [{"gain": r.gain, "theory": r.theory, "share": r.share,
                          "lost": r.lost, "fakes": r.fakes,
                          "malicious": list(r.malicious),
                          "detection": [d.to_dict() for d in r.detections]}
                         for r in self.runs],
                **({"note": "; ".join(notes)} if notes else {})}

    def lines(self) -> list[str]:
        """The ``attack`` lines of the text report."""
        g = self.gain()
        theory = "" if g["theory"] is None else f"  (expected {g['theory']:.4g})"
        std = "" if g["std"] is None else f" +- {g['std']:.2g}"
        d = self.to_dict()
        out = ["", f"  attack  {self.attack} by {self.malicious} malicious holder(s), "
                   f"{d['share']:.2%} of the contributions; {d['lost']:,.0f} lost and "
                   f"{d['fakes']:,.0f} fake contributions per run on average",
               f"          gain {g['empirical']:.4g}{std}{theory} against the same "
               "runs with every holder honest"]
        for row in self.detection():
            delay = "" if row["mean_delay"] is None else \
                f", {row['mean_delay']:,.0f} hops after the first attacked step on average"
            out.append(f"          {row['check']:12} check raised in {row['detected_runs']} "
                       f"of {row['runs']} run(s){delay} (false alarms {row['false_alarm']:g} "
                       "per run)")
        if "note" in d:
            out.append(f"          {d['note']}")
        return out


@dataclass(frozen=True)
class Adversary:
    """Who attacks and how, for every run of one simulation (``--malicious``, ``--attack``).

    The run's malicious nodes come from its ``attack`` stream (key 0) for ``random:K``;
    forged contributions from key 1. Turning an attack on changes no other stream.
    """

    attack: Attack
    malicious_text: str

    def malicious(self, topology: Any, seed: int, run: int) -> np.ndarray:
        """The run's malicious nodes (sorted) on ``topology`` (ids or its labels)."""

        n = topology.n
        kind, spec = node_set(self.malicious_text, "malicious", topology)
        if kind == "random":
            assert isinstance(spec, int)
            check(spec < n, "malicious", f"random:{spec} needs fewer than n = {n} nodes")
            rng = seeding.generator(seed, "attack", run, 0)
            return np.sort(rng.choice(n, size=spec, replace=False))
        assert isinstance(spec, list)
        return np.array(sorted(set(spec)))

    def forge_stream(self, seed: int, run: int) -> np.random.Generator:
        """The run's stream of forged contributions."""

        return seeding.generator(seed, "attack", run, 1)


def adversary_of(config: Any, offered: Sequence[str], task: str) -> Adversary | None:
    """The config's adversary (``None`` without ``--attack``), checked against what the
    task offers and what the run can model."""
    if config.attack is None:
        return None
    attack = parse_attack(config.attack, offered, task)

    check(from_config(config) is None, "attack", "attacks on runs with faults are not "
          "modelled (leave out --loss, --churn, --crash and --slow)")
    check(not (attack.tampers and kind_of(config.topology).public_schedule), "attack",
          f"{attack.name} is modelled on walks; the ring's node 0 pads and unpads the token "
          "itself (use rpa, ria, mga, max or beyond on the ring)")
    return Adversary(attack, config.malicious)


@dataclass(frozen=True)
class MassModel:
    """A frequency oracle's report mass ``Σ_j ĉ_j`` (1 on average), from its per-report
    scores: ``ĉ_j = a score_j + b`` for every category (:meth:`report_scores`), so a
    report's mass is ``a Σ_j score_j + d b``; ``var`` is its variance over honest reports
    of uniform categories (the honest holders' null model)."""

    a: float
    b: float
    var: float
    domain: int

    ROWS = 1 << 22  # scores held at once: reports x categories

    @classmethod
    def of(cls, oracle: Any, rng: np.random.Generator, draws: int = 20_000) -> MassModel | None:
        """Fit ``a``, ``b`` exactly on a few reports and calibrate ``var`` on ``draws``;
        ``None`` for an oracle whose scores are not vectorised or not affine."""

        if type(oracle).report_scores is FrequencyOracle.report_scores:
            return None
        d = oracle.domain
        few = oracle.perturb(rng.integers(0, d, 4), rng)
        scores = oracle.report_scores(few, range(d)).ravel()
        est = np.concatenate([np.asarray(oracle.estimate_counts(oracle.aggregate(few[i:i + 1]),
                                                                1), dtype=float)
                              for i in range(len(few))])
        design = np.stack([scores, np.ones_like(scores)], axis=1)
        (a, b), *_ = np.linalg.lstsq(design, est, rcond=None)
        if np.abs(design @ (a, b) - est).max() > 1e-8 * (1.0 + np.abs(est).max()):
            return None
        model = cls(float(a), float(b), 0.0, d)
        sample = model.masses(oracle, oracle.perturb(rng.integers(0, d, draws), rng))
        return cls(model.a, model.b, float(sample.var(ddof=1)), d)

    def masses(self, oracle: Any, reports: np.ndarray) -> np.ndarray:
        """Each report's mass, in blocks of :attr:`ROWS` scores."""
        rows = max(1, self.ROWS // self.domain)
        out = np.empty(len(reports))
        for lo in range(0, len(reports), rows):
            part = oracle.report_scores(reports[lo:lo + rows], range(self.domain))
            out[lo:lo + len(part)] = self.a * part.sum(axis=1) + self.domain * self.b
        return out
