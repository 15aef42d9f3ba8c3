"""``netdp audit``: an empirical lower bound on a randomizer's ε, against a claim."""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING

from netdp.cli import integer, number

if TYPE_CHECKING:
    from netdp.privacy.mechanism_audit import MechanismAudit

MECHANISMS = ("laplace", "gaussian", "duchi", "piecewise", "hybrid", "grr", "sue", "oue",
              "blh", "olh", "hr", "cms", "hcms", "rappor", "the", "she")
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

examples:
  netdp audit --mechanism laplace --epsilon 1 --trials 100000
  netdp audit --mechanism oue --epsilon 2 --domain 16 --json
  netdp audit --mechanism gaussian --epsilon 1 --delta 1e-5 --claim-epsilon 0.3
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
    p.set_defaults(handler=audit)


def audit(args: argparse.Namespace) -> int:
    """Run the audit; exit 1 on a violation."""
    from netdp import __version__
    from netdp.errors import check
    from netdp.privacy import mechanism_audit

    check(args.mechanism in MECHANISMS, "mechanism",
          f"must be one of {', '.join(MECHANISMS)} (got {args.mechanism!r})")
    check(math.isfinite(args.epsilon) and args.epsilon > 0, "epsilon",
          f"must be a positive number (got {args.epsilon})")
    check(4 <= args.trials <= 10**8, "trials", f"must lie in 4..1e8 (got {args.trials})")
    check(0 < args.confidence < 1, "confidence",
          f"must lie in (0, 1) (got {args.confidence})")
    check(args.claim_epsilon is None or (math.isfinite(args.claim_epsilon)
                                         and args.claim_epsilon >= 0),
          "claim-epsilon", f"must be a number >= 0 (got {args.claim_epsilon})")
    check(0 <= args.seed < 2**63, "seed", f"must lie in 0..2^63-1 (got {args.seed})")
    mechanism = mechanism_audit.build(args.mechanism, args.epsilon, args.delta, args.domain)
    result = mechanism_audit.audit_mechanism(mechanism, args.trials, args.seed,
                                             args.claim_epsilon, args.confidence)
    if args.json:
        print(json.dumps({"version": __version__, "seed": args.seed, **result.to_dict()},
                         indent=2))
    else:
        print("\n".join(lines(result, args.mechanism)))
    return 1 if result.violation else 0


def lines(result: MechanismAudit, name: str) -> list[str]:
    """The text report of one audit."""
    from netdp.reports import fmt

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
