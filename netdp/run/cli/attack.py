"""``netdp attack``: poisoning attacks on a frequency oracle, measured beside theory."""

from __future__ import annotations

import argparse
import json

from netdp import mechanisms
from netdp.report.types import fmt
from netdp.run.attacks import BETA, TARGETS
from netdp.run.attacks import attack as run_attack
from netdp.run.cli import integer, number

EPILOG = """\
how it works:
  USERS users hold categories (--data); a fraction BETA of them are fake and send
  reports that promote TARGETS target categories:
    rpa  a uniformly random valid report
    ria  a uniformly random target, perturbed honestly
    mga  the report that maximises the targets' estimated frequency (grr: a target,
         unperturbed; sue/oue: every target bit set; blh/olh: a hash that maps the
         targets to one value, and that value; cms: +1 at every target's hash; hcms:
         the all-ones Hadamard coefficient; hr: a coefficient whose column has one
         sign on every target, and that sign; rappor: the Bloom bits whose decoder
         weight summed over the targets is positive)
  The frequency gain is the targets' total estimated frequency with the fake reports
  minus without them (the same honest reports), over --trials repetitions, beside the
  closed form beta (sum_t (s_t - q*)/(p* - q*) - f_T) of Cao, Jia and Gong (USENIX
  Security 2021), s_t being the chance that a fake report supports target t (rappor:
  the estimate of the fake report's mean bit vector). rpa and mga are built for grr,
  sue, oue, blh, olh, hr, cms, hcms and rappor; ria for every oracle.

defences (--defence, repeatable; measured on the same trials):
  normalize               the estimate clipped at 0 and renormalised to sum to 1
  enforced-perturbation   the randomness is fixed by an oblivious-transfer step the user
                          cannot bias: a fake user picks only its input (mga becomes ria)
  detect-fake             drop the reports supporting an itemset that more reports
                          support than its honest Binomial law allows (alpha 0.01,
                          Bonferroni; pool: the 2 x TARGETS items of largest estimate);
                          sue, oue, blh, olh; reports removed_fake and removed_honest
  recover                 LDPRecover-style (beta known): subtract the fake footprint on
                          the outlying items, rescale by 1/(1 - beta), project onto the
                          simplex; grr, sue, oue, blh, olh, hr, cms, hcms

examples:
  netdp attack --mechanism oue --domain 128 --epsilon 1 --beta 0.05 --targets 10 \\
      --attack mga --users 100000 --seed 1 --json
  netdp attack --mechanism olh --attack mga --defence normalize --defence enforced-perturbation
  netdp attack --mechanism grr --attack rpa --target-choice least
  netdp attack --mechanism hcms --attack mga --domain 64
  netdp attack --mechanism oue --domain 32 --targets 5 --defence detect-fake --defence recover
"""


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``attack``."""
    p = sub.add_parser("attack", help="poisoning attacks on a frequency oracle vs theory",
                       description="Fake users promote target categories of an LDP "
                       "frequency oracle; measure the frequency gain against its closed "
                       "form (spec mechanisms.md, Poisoning).",
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    oracles = " ".join(mechanisms.registry.names("frequency-oracle"))
    p.add_argument("--mechanism", default="oue", metavar="NAME",
                   help=f"a frequency oracle: {oracles} (default: oue)")
    p.add_argument("--attack", default="mga", choices=("rpa", "ria", "mga"),
                   help="the attack (default: mga)")
    p.add_argument("--domain", type=integer, default=128, metavar="D",
                   help="number of categories (default: 128)")
    p.add_argument("--epsilon", type=number, default=1.0, help="of one report (default: 1)")
    p.add_argument("--beta", type=number, default=BETA,
                   help="fraction of fake users among all users, in (0, 1) (default: 0.05)")
    p.add_argument("--targets", type=integer, default=TARGETS, metavar="R",
                   help="number of target categories (default: 10)")
    p.add_argument("--target-choice", default="random", choices=("random", "least"),
                   help="random targets, or the least frequent (default: random)")
    p.add_argument("--users", type=integer, default=100_000, help="honest and fake users "
                   "(default: 100000)")
    p.add_argument("--data", default="zipf", choices=("uniform", "zipf", "normal"),
                   help="the honest users' categories (default: zipf)")
    p.add_argument("--trials", type=integer, default=20, help="repetitions with fresh "
                   "reports, for the gain's standard error (default: 20)")
    p.add_argument("--defence", action="append", default=[], metavar="NAME",
                   help="also measure the gain under a defence (repeatable): normalize "
                   "(clip at 0, renormalise), enforced-perturbation (the randomness is "
                   "not the fake user's: it picks only its input), detect-fake (drop "
                   "reports supporting an improbably frequent itemset) or recover "
                   "(LDPRecover-style, beta known)")
    p.add_argument("--seed", type=integer, default=0, help="the run's seed (default: 0)")
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.set_defaults(handler=attack)


def attack(args: argparse.Namespace) -> int:
    """Run the attack; print the gain beside its closed form."""

    result = run_attack(mechanism=args.mechanism, attack=args.attack, domain=args.domain,
                        epsilon=args.epsilon, beta=args.beta, targets=args.targets,
                        target_choice=args.target_choice, users=args.users, data=args.data,
                        trials=args.trials, defences=tuple(args.defence), seed=args.seed)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
        return 0
    theory = "-" if result.theory is None else fmt(result.theory)
    print(f"netdp attack: {args.attack} on {args.mechanism} (eps = {args.epsilon:g}, d = "
          f"{args.domain}), {result.fake:,} fake and {result.honest:,} honest users "
          f"(beta = {result.beta:.4g}), {len(result.targets)} targets, {result.trials} trials")
    print(f"  gain        {fmt(result.gain)} +- {fmt(result.gain_std)}  (theory {theory})")
    if args.attack == "mga" and result.supported < len(result.targets):
        print(f"  supported   {result.supported} of {len(result.targets)} targets (the best "
              "hash found)")
    print(f"  honest MSE  {fmt(result.mse)} without the fake reports, "
          f"{fmt(result.mse_attacked)} with them")
    for d in result.defences:
        aside = "" if d["theory"] is None else f"  (theory {fmt(d['theory'])})"
        print(f"  defence     {d['name']}: gain {fmt(d['gain'])} +- {fmt(d['std'])}{aside}; "
              f"honest MSE {fmt(d['mse_honest'])}, {fmt(d['mse_with_attack'])} with the "
              "fake reports")
        if "removed_fake" in d:
            print(f"              removed {d['removed_fake']:,.1f} of {result.fake:,} fake "
                  f"and {d['removed_honest']:,.1f} of {result.honest:,} honest reports "
                  "per trial")
    print(f"  targets     {', '.join(str(t) for t in result.targets)}")
    print(f"  {result.seconds:.2f} s")
    return 0
