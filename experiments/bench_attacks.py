"""Cost of malicious holders in a run, against the same run without attack.

Usage: python experiments/bench_attacks.py [--nodes 10000] [--steps 1000000]
       [--malicious 500] [--repeats 3] [--seed 1]

One run of ``--steps`` steps on the complete graph, timed (median of ``--repeats``) with
the pairwise tracker off (``accountants = []``), so the figure is the protocol and the
attack: a walk sum (Gaussian noise) and an OUE histogram (d = 32), first without attack
(the baseline, timed in the same process), then with ``--malicious`` random holders
running each attack. An attacked run replays the honest run for its counterfactual, then
the attacked one, then both checks at every honest receipt. Prints one JSON row per
setting: hops per second and the ratio of its time to the baseline's, and beside it the
same run as a command in a fresh process (``netdp simulate --task T --nodes N --steps S
--seed SEED --no-tracking [--mechanism oue --domain 32] [--attack A --malicious
random:M]``, ``experiments/_command.py``): its wall time, its own peak memory and its
ratio to the in-process run (``--no-command`` leaves it out).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import _command

from netdp import simulate

SUM = ("none", "max", "beyond:5", "drop", "replay", "inflate:1")
HISTOGRAM = ("none", "mga", "rpa", "drop", "replay", "inflate:1")


def timed(params: dict, repeats: int) -> float:
    """Median wall time of ``simulate(params)`` over ``repeats`` runs (after one warm-up)."""
    simulate(params, progress=False)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        simulate(params, progress=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--malicious", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    _command.add_arguments(parser)
    args = parser.parse_args()
    print(json.dumps({"machine": platform.platform(), "python": platform.python_version(),
                      "nodes": args.nodes, "steps": args.steps, "malicious": args.malicious}))
    for task, attacks, extra in (("sum", SUM, {}),
                                 ("histogram", HISTOGRAM, {"mechanism": "oue",
                                                           "domain": 32})):
        base = None
        for attack in attacks:
            params = {"task": task, "nodes": args.nodes, "steps": args.steps,
                      "seed": args.seed, "accountants": [], **extra}
            if attack != "none":
                params.update(attack=attack, malicious=f"random:{args.malicious}")
            seconds = timed(params, args.repeats)
            base = base or seconds
            row = {"task": task, "attack": attack, "seconds": round(seconds, 3),
                   "hops_per_s": round(args.steps / seconds), "ratio": round(seconds / base, 2)}
            if not args.no_command:
                argv = ["simulate", "--task", task, "--nodes", str(args.nodes), "--steps",
                        str(args.steps), "--seed", str(args.seed), "--no-tracking"]
                argv += [f"--{k}={v}" for k, v in extra.items()]
                if attack != "none":
                    argv += ["--attack", attack, "--malicious", f"random:{args.malicious}"]
                row.update(_command.beside(argv, seconds, args.command_timeout))
            print(json.dumps(row, default=str))


if __name__ == "__main__":
    main()
