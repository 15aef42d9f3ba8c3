"""``netdp audit``: an empirical lower bound on a randomizer's ε, against a claim."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from netdp.core.errors import InputError, check
from netdp.core.files import check_file_name
from netdp.core.params import MAX_EPSILON, MIN_EPSILON, ORACLE_MAX_EPSILON
from netdp.core.setup import Streams
from netdp.graphs.node_names import is_label, node_id
from netdp.mechanisms import registry
from netdp.report.figures import FORMATS, save
from netdp.report.types import fmt
from netdp.run.cli import integer, number, parse_sets
from netdp.run.cli import node as node_type
from netdp.run.resources import check_footprint, check_seconds
from netdp.tasks import make_config, names, task_of
from netdp.tasks.preparation import with_seed
from netdp.tracking.hidden_paths import resample_seconds

if TYPE_CHECKING:
    from netdp.audit.curve import CurvePoint
    from netdp.audit.mechanism import MechanismAudit, OneRunAudit
    from netdp.core.simulation_config import SimulationConfig

MECHANISMS = registry.names()
R = TypeVar("R", "MechanismAudit", "OneRunAudit")
EPILOG = """\
how it works:
  The randomizer runs TRIALS times on each of two neighbouring inputs (numbers: -1 and +1,
  the whole range; categories: 0 and 1), both worlds drawing from the same seed. Every
  output gets a score (the output itself, or how much more a report supports 1 than 0).
  A threshold is fitted on the first half of the trials; its false positives and false
  negatives on the other half, bounded by Clopper-Pearson at --confidence, prove
  eps_lb. No audit with these trials can prove more than the printed ceiling. Gaussian
  noise adds the Gaussian-DP fit mu_lb and its eps at the mechanism's delta.

  eps_lb above the claim (the mechanism's own eps, or --claim-epsilon) is a violation:
  the claim is false at that confidence, and the exit status is 1.

  --plot FILE also audits the first R trials of each world for a ladder of R up to
  TRIALS and draws eps_lb against R, with the claim and the Clopper-Pearson ceiling:
  no audit with R trials can prove more than the ceiling (--json adds the rows as
  "curve").

one-run audits (--one-run; Steinke, Nasr and Jagielski 2023):
  CANARIES canaries, each included with probability 1/2 (included: input +1 or
  category 1; else -1 or 0), are randomized together in one run and scored as above.
  The lowest GUESSES/2 scores are guessed "out", the highest GUESSES/2 "in", the rest
  abstained on (default GUESSES: a tenth of the canaries, fixed in advance). The count
  of right guesses proves eps_lb at --confidence and at the mechanism's delta (gaussian:
  --delta; larger delta, smaller eps_lb). --trials is not used.

protocol audits (--task TASK; gossip with --set protocol=gossip):
  The protocol runs once (its walk is then fixed) and is replayed TRIALS times with
  fresh noise, and the walk's hidden stretches (where V does not see the token) drawn
  again from its law given V's view (--fixed-path keeps them); observer V's view
  (every token or message it receives) is compared
  between two worlds that differ in node U's data only (the ends of the range, categories
  0 and 1, or, for sgd, a canary row whose clipped gradient points one way or the other).
  Fisher's linear discriminant, fitted on the first half, makes each view one number.
  The report puts eps_lb beside the tracker's eps for (U -> V) on the same walk, U's
  LDP eps and the cap (LDP at the largest count of U's contributions a hidden path
  consistent with V's view allows; LDP where nothing is hidden): the sandwich
  eps_lb <= tracker <= cap must hold. The claim is the tracker's eps unless
  --claim-epsilon is given.

examples:
  netdp audit --mechanism laplace --epsilon 1 --trials 100000
  netdp audit --mechanism laplace --epsilon 1 --trials 100000 --plot curve.png
  netdp audit --task sum --topology ring --nodes 10 --observer 0 --node 9 --trials 4000
  netdp audit --task histogram --topology complete --nodes 12 --set domain=4 --trials 2000
  netdp audit --task sum --set protocol=gossip --topology cycle --nodes 8 --steps 1 \
      --set sigma=0.5 --trials 4000
  netdp audit --mechanism oue --epsilon 2 --domain 16 --json
  netdp audit --mechanism gaussian --epsilon 1 --delta 1e-5 --claim-epsilon 0.3
  netdp audit --mechanism gaussian --epsilon 2 --delta 1e-5 --one-run --canaries 1000
"""


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``audit``."""

    p = sub.add_parser("audit", help="an empirical lower bound on a randomizer's epsilon",
                       description="Audit a local randomizer: run it on two neighbouring "
                       "inputs, count the errors of a fixed test, and prove a lower bound "
                       "on its epsilon (Clopper-Pearson; spec accounting.md section 5).",
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    p.add_argument("--mechanism", default="laplace", metavar="NAME",
                   help=f"one of {', '.join(MECHANISMS)} (default: laplace)")
    p.add_argument("--epsilon", type=number, default=1.0, help="the randomizer's epsilon "
                   "(default: 1)")
    p.add_argument("--delta", type=number, default=1e-5, help="gaussian: its delta "
                   "(default: 1e-5)")
    p.add_argument("--domain", type=integer, default=8, help="frequency oracles: the number "
                   "of categories (default: 8)")
    p.add_argument("--trials", type=integer, default=100_000, help="runs per input, half to "
                   "fit the test and half to count its errors (default: 100000)")
    p.add_argument("--confidence", type=number, default=0.95, help="of the lower bound "
                   "(default: 0.95)")
    p.add_argument("--claim-epsilon", type=number, default=None, metavar="E",
                   help="audit this claim instead of the mechanism's own epsilon")
    p.add_argument("--seed", type=integer, default=0, help="one seed for both worlds "
                   "(default: 0)")
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.add_argument("--plot", default=None, metavar="FILE", help="also draw eps_lb against "
                   "the number of trials, with the claim and the ceiling (.png, .pdf, .svg)")
    once = p.add_argument_group("one-run audits")
    once.add_argument("--one-run", action="store_true", help="audit the mechanism in one "
                      "run of many canaries instead of TRIALS runs per input")
    once.add_argument("--canaries", type=integer, default=None, metavar="M",
                      help="canaries of the run, each included with probability 1/2 "
                      "(default: 1000)")
    once.add_argument("--guesses", type=integer, default=None, metavar="R",
                      help="canaries guessed on, half in and half out; the rest are "
                      "abstained on (default: a tenth of the canaries)")
    proto = p.add_argument_group("protocol audits (instead of --mechanism)")
    proto.add_argument("--task", choices=names(), default=None,
                       help="audit this task's protocol for one pair")
    proto.add_argument("--topology", default=None, help="as simulate (default: complete)")
    proto.add_argument("--nodes", "-n", type=integer, default=None, help="as simulate")
    proto.add_argument("--steps", type=integer, default=None, help="as simulate")
    proto.add_argument("--rounds", type=integer, default=None, help="as simulate (ring)")
    proto.add_argument("--observer", type=node_type, default=0, metavar="V",
                       help="the observing node, an id or a labelled graph's node label "
                       "(default: 0)")
    proto.add_argument("--coalition", default=None, metavar="NODES",
                       help="instead of --observer: nodes that observe as one, pooling what "
                       "they see (e.g. 1,3; or random:C), as simulate; needs --node")
    proto.add_argument("--node", type=node_type, default=None, metavar="U",
                       help="the node whose value changes, an id or a node label "
                       "(default: the node that first "
                       "hands the observer the token, else the first it hands it to; "
                       "gossip: its first neighbour)")
    proto.add_argument("--fixed-path", action="store_true",
                       help="keep the walk that ran, path and all, in every replay (the "
                       "mechanism given the path); by default the hidden stretches are "
                       "drawn again from the walk's law given the observer's view, the "
                       "mechanism the trackers bound")
    proto.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="any other simulate parameter (repeatable), e.g. --set delta=1e-5")
    p.set_defaults(handler=audit)


def audit(args: argparse.Namespace) -> int:
    """Run the audit; exit 1 on a violation."""
    from netdp.audit import mechanism as mechanism_audit

    check(args.mechanism in MECHANISMS, "mechanism",
          f"must be one of {', '.join(MECHANISMS)} (got {args.mechanism!r})")
    check(MIN_EPSILON <= args.epsilon <= ORACLE_MAX_EPSILON, "epsilon",
          f"must be a number in the range [{MIN_EPSILON:g}, {ORACLE_MAX_EPSILON:g}] (e^epsilon "
          f"must stay finite; got {args.epsilon:g})")
    check(4 <= args.trials <= 10**8, "trials", f"must lie in 4..1e8 (got {args.trials})")
    check(0 < args.confidence < 1, "confidence",
          f"must lie in (0, 1) (got {args.confidence})")
    check(args.claim_epsilon is None or 0 <= args.claim_epsilon <= MAX_EPSILON,
          "claim-epsilon", f"must be a number in the range [0, {MAX_EPSILON:g}] (got "
                           f"{args.claim_epsilon})")
    check(0 <= args.seed < 2**63, "seed", f"must lie in 0..2^63-1 (got {args.seed})")
    if args.one_run:
        check(args.task is None, "one-run", "audits a mechanism (not with --task)")
        check(getattr(args, "plot", None) is None, "plot", "draws the audit by trials "
              "(not with --one-run)")
        return one_run(args)
    for flag in ("canaries", "guesses"):
        check(getattr(args, flag) is None, flag, "needs --one-run")
    if args.task is not None:
        check(args.plot is None, "plot", "draws mechanism audits only (not with --task)")
        return protocol(args)
    if args.plot is not None:
        _check_plot(args.plot)
    check_seconds({"the trials": mechanism_audit.audit_seconds(
        args.mechanism, args.domain, args.trials, curve=args.plot is not None)},
        f"; {args.trials:,} trials of {args.mechanism}" + (
            "" if args.mechanism in mechanism_audit.NUMERIC else f", domain {args.domain:,}"))
    mechanism = mechanism_audit.build(args.mechanism, args.epsilon, args.delta, args.domain)
    result = with_command(mechanism_audit.audit_mechanism(
        mechanism, args.trials, args.seed, args.claim_epsilon, args.confidence), args)
    curve = None if args.plot is None else plot_curve(args, mechanism, result)
    if args.json:
        out = result.to_json()
        if curve is not None:
            out["curve"] = [point.to_dict() for point in curve]
        print(json.dumps(out, indent=2))
    else:
        print("\n".join(lines(result, args.mechanism)))
        if curve is not None:
            print(f"  plot          {args.plot}  (eps_lb and the ceiling at {len(curve)} "
                  f"trial counts, {curve[0].runs:,} to {curve[-1].runs:,})")
    return 1 if result.violation else 0


#: Namespace entries that are not parameters of the audit.
NOT_PARAMS = ("handler", "command", "json", "plot", "set")


def command(args: argparse.Namespace) -> dict[str, Any]:
    """The audit's parameters as the command line names them (``--set`` ones spread)."""
    out = {k: v for k, v in vars(args).items() if k not in NOT_PARAMS}
    out.update(parse_sets(args.set))
    return out


def with_command(result: R, args: argparse.Namespace) -> R:
    """``result`` with the command's parameters as its ``config``."""
    return dataclasses.replace(result, config=command(args))


def _check_plot(path: str) -> None:
    """Refuse a --plot file that cannot be written, before the audit runs."""


    check_file_name(path, "plot")
    out = Path(path)
    if out.suffix.lower() not in FORMATS:
        raise InputError("plot", f"unknown image format {out.suffix or '(none)'!r} in "
                         f"{path!r}; allowed: {', '.join(FORMATS)}")
    parent = out.parent if str(out.parent) else Path(".")
    if out.is_dir() or not parent.is_dir():
        raise InputError("plot", f"cannot write {path!r}: give a file in an existing folder")


def plot_curve(args: argparse.Namespace, mechanism: object,
               result: MechanismAudit) -> list[CurvePoint]:
    """Audit the ladder of trial counts and write its figure to ``--plot``."""
    from netdp.audit.curve import audit_curve, curve_figure

    curve = audit_curve(mechanism, args.trials, args.seed, confidence=args.confidence,
                        pair=result.pair)
    r = result.result
    title = (f"{args.mechanism}, ε = {args.epsilon:g}: audit against trials "
             f"({r.confidence:.0%} confidence each)")
    save(curve_figure(curve, result.claim_epsilon, title, delta=r.delta,
                      confidence=r.confidence), args.plot, param="plot")
    return curve


def lines(result: MechanismAudit, name: str) -> list[str]:
    """The text report of one audit."""

    r = result.result
    x0, x1 = result.pair
    out = [f"netdp audit: {name} on inputs {x0:g} and {x1:g}, {r.trials:,} held-out trials "
           f"per input ({r.confidence:.0%} confidence)",
           f"  test          score > {fmt(r.threshold)}: {r.false_positives:,} false "
           f"positives, {r.false_negatives:,} false negatives",
           f"  eps lower     {fmt(r.epsilon_lower)}  (Clopper-Pearson, delta = {r.delta:g})",
           f"  ceiling       {fmt(r.ceiling)}  (no test can prove more with these trials)"]
    if r.mu_lower is not None:
        out.append(f"  Gaussian DP   mu >= {fmt(r.mu_lower)}, eps >= {fmt(r.gdp_epsilon)} "
                   f"at delta = {r.delta:g}")
    claim = result.claim_epsilon
    verdict = "VIOLATION: the claim is false" if result.violation else \
        "consistent with the claim"
    out.append(f"  claim         eps = {fmt(claim)}: {verdict}")
    out.append(f"  {result.seconds:.2f} s")
    return out


def one_run(args: argparse.Namespace) -> int:
    """The one-run audit of a mechanism; exit 1 on a violation."""
    from netdp.audit import mechanism as mechanism_audit

    canaries = 1000 if args.canaries is None else args.canaries
    check(2 <= canaries <= 10**7, "canaries", f"must lie in 2..1e7 (got {canaries})")
    check(args.guesses is None or 1 <= args.guesses <= canaries, "guesses",
          f"must lie in 1..{canaries}, the canaries (got {args.guesses})")
    mechanism = mechanism_audit.build(args.mechanism, args.epsilon, args.delta, args.domain)
    result = with_command(mechanism_audit.one_run_audit(
        mechanism, canaries, args.seed, args.guesses, args.confidence, args.claim_epsilon), args)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        print("\n".join(one_run_lines(result, args.mechanism)))
    return 1 if result.violation else 0


def one_run_lines(result: OneRunAudit, name: str) -> list[str]:
    """The text report of one one-run audit."""

    x0, x1 = result.pair
    out_guesses = result.guesses // 2
    verdict = "VIOLATION: the claim is false" if result.violation else \
        "consistent with the claim"
    return [f"netdp audit: {name}, one run of {result.canaries:,} canaries on inputs "
            f"{x0:g} (out) and {x1:g} (in) ({result.confidence:.0%} confidence)",
            f"  guesses       {result.guesses:,} ({out_guesses:,} out, "
            f"{result.guesses - out_guesses:,} in, "
            f"{result.canaries - result.guesses:,} abstained): {result.correct:,} right",
            f"  eps lower     {fmt(result.epsilon_lower)}  (Steinke, Nasr and Jagielski, "
            f"delta = {result.delta:g})",
            f"  ceiling       {fmt(result.ceiling)}  (every guess right)",
            f"  claim         eps = {fmt(result.claim_epsilon)}: {verdict}",
            f"  {result.seconds:.2f} s"]


def protocol(args: argparse.Namespace) -> int:
    """The protocol audit of one pair; exit 1 when eps_lb exceeds the claim."""
    from netdp.audit.protocol import audit_protocol

    params = parse_sets(args.set)
    params.update(task=args.task, epsilon=args.epsilon, seed=args.seed)
    for name in ("topology", "nodes", "steps", "rounds", "coalition"):
        if getattr(args, name) is not None:
            params[name] = getattr(args, name)
    config = make_config(params)
    check_footprint(task_of(config), config)  # one tracked run, then the trials' replays
    secret = not args.fixed_path and config.protocol == "walk"

    def paths(n: int, steps: int) -> dict[str, tuple[float, str]]:
        seconds = resample_seconds(n, steps, config.tokens, args.trials) if secret else 0.0
        return {"the hidden paths": (seconds, "trials")}

    check_footprint(task_of(config), config.replace(accountants=()), runs=2 * args.trials,
                    runs_flag="trials", extra=paths)
    observer = None if config.coalition is not None else args.observer
    node = args.node
    if node is None:
        check(observer is not None, "node", "give the node whose data changes with a "
              "coalition (a node outside it)")
        assert observer is not None
        node = _first_predecessor(config, observer)
    result = audit_protocol(config, observer, node, args.trials, args.confidence,
                            paths="fixed" if args.fixed_path else "secret")
    result = dataclasses.replace(result, config={**command(args), **result.config})
    claim = result.tracker_epsilon if args.claim_epsilon is None else args.claim_epsilon
    violation = result.result.epsilon_lower > claim
    if args.json:
        out = {"task": args.task, **result.to_json()}
        out["audit"].update(claim_epsilon=claim, violation=violation)
        print(json.dumps(out, indent=2))
        return 1 if violation else 0
    r = result.result
    who = f"observer {_named(observer, result.observer)}" if result.coalition is None else \
        f"coalition {','.join(map(str, result.coalition))}"
    node = result.node
    print(f"netdp audit: {args.task} on {config.topology}, node {_named(args.node, node)} -> "
          f"{who}, "
          f"{r.trials:,} held-out replays per world "
          f"({r.confidence:.0%} confidence)")
    print("  paths         " + ("hidden stretches drawn again in every replay (the "
                                  "trackers' mechanism)" if result.paths == "secret" else
                                  "the walk that ran, its path known (public on the ring; "
                                  "gossip has none)"))
    print(f"  eps lower     {fmt(r.epsilon_lower)}  (ceiling {fmt(r.ceiling)})")
    if r.gdp_epsilon is not None:
        print(f"  Gaussian DP   mu >= {fmt(r.mu_lower)}, eps >= {fmt(r.gdp_epsilon)}")
    print(f"  tracker eps   {fmt(result.tracker_epsilon)}  (the same pair on the same walk)")
    print(f"  LDP eps       {fmt(result.ldp_epsilon)}  (node {node}'s realised contributions)")
    if result.cap_epsilon is not None:
        print(f"  cap eps       {fmt(result.cap_epsilon)}  (LDP at the largest count of node "
              f"{node}'s contributions the view allows)")
    for name, bound in result.theory.items():
        aside = "" if name in result.pair_bounds else \
            "  (bounds one observer's pairs: not checked for a coalition)" \
            if result.coalition else "  (a mean over pairs, or no bound: not checked)"
        print(f"  theory        {name}: {fmt(bound)}{aside}")
    print(f"  sandwich      {'holds' if result.sandwich else 'BROKEN'}: eps_lb <= tracker <= "
          f"{'cap' if result.cap_epsilon is not None else 'LDP'}, and eps_lb <= every "
          "per-pair theory bound")
    verdict = "VIOLATION: the claim is false" if violation else "consistent with the claim"
    print(f"  claim         eps = {fmt(claim)}: {verdict}")
    print(f"  {result.seconds:.2f} s")
    return 1 if violation else 0


def _named(given: int | str | None, ident: int) -> str:
    """A node as the text report names it: its id, after its label when one was given."""
    return f"{given} ({ident})" if is_label(given) else str(ident)


def _first_predecessor(config: SimulationConfig, observer: int | str) -> int:
    """The node that first hands the token to ``observer`` in the run's walk."""
    import numpy as np


    config = with_seed(config)
    task = task_of(config)
    setup = task.prepare(config)
    observer = node_id(observer, "observer", setup.topology)  # an id, or a label
    trace = task.trace(setup, Streams(setup.seed, 0))
    if trace.holders.size == 0:  # gossip: the observer's first neighbour
        topo = setup.topology
        assert topo.indptr is not None and topo.indices is not None
        return int(topo.indices[topo.indptr[observer]])
    holders = trace.holders[0]
    steps = np.flatnonzero(holders[1:] == observer)
    steps = steps[holders[steps] != observer]
    if steps.size:
        return int(holders[steps[0]])
    handed = np.flatnonzero(holders[:-1] == observer)  # else the node it hands it to
    handed = handed[holders[handed + 1] != observer]
    if handed.size == 0:
        raise InputError("observer", f"node {observer} never passes the token to another "
                         "node; give --node")
    return int(holders[handed[0] + 1])
