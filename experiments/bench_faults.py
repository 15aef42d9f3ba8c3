"""Speed of the event engine with faults, against the fault-free event engine.

Usage: python experiments/bench_faults.py [--nodes 100000] [--tokens 64] [--steps 2000]
       [--repeats 3] [--seed 1]

One walk of ``--tokens`` tokens for ``--steps`` steps each on the complete graph, timed
(median of ``--repeats``) in four settings: the fault-free event engine (the baseline,
timed in the same process), faults that never strike (``--slow 0:2``: every hop is a
hand-off, none fails), loss 0.01 with exponential churn (means 500 up, 50 down) under
``resend`` with 1000 retries, and the same under ``skip``. Prints one JSON row per
setting: hops per second, the ratio to the baseline, messages per second (every send
and its ack), and the fault counts.

Beside each setting, a fresh process runs the command a user types for the same walk
(``experiments/_command.py``; the sum without the tracker, which the tracker benchmarks
time)::

    netdp simulate --task sum --topology complete --nodes N --steps T --tokens K \\
        --seed SEED [the setting's flags] --no-tracking

with its wall time, its peak resident memory (``command_s``, ``command_peak_mib``) and its
ratio to the median walk (``command_over_kernels``); with faults, the command's report
also runs the fault-free walk beside. ``--no-command`` skips it.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import _command

from netdp.core.setup import Streams
from netdp.tasks import make_config, task_of

SETTINGS = {
    "fault-free": {"engine": "event"},
    "faults that never strike": {"slow": "0:2", "timeout": 1e9},
    "loss + churn, resend": {"loss": "0.01", "churn": "exp:500:50", "retries": 1000},
    "loss + churn, skip": {"loss": "0.01", "churn": "exp:500:50", "on_loss": "skip"},
}


def command(params: dict) -> list[str]:
    """The ``netdp simulate`` argv of a setting's config, without the tracker."""
    argv = ["simulate"]
    for key, value in params.items():
        argv += [f"--{key.replace('_', '-')}", str(value)]
    return [*argv, "--no-tracking"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    _command.add_arguments(parser)
    args = parser.parse_args()
    print(json.dumps({"machine": platform.platform(), "python": platform.python_version(),
                      "nodes": args.nodes, "tokens": args.tokens, "steps": args.steps}))
    base = None
    for name, extra in SETTINGS.items():
        params = {"task": "sum", "topology": "complete", "nodes": args.nodes,
                  "steps": args.steps, "tokens": args.tokens, "seed": args.seed, **extra}
        config = make_config(params)
        task = task_of(config)
        setup = task.prepare(config)
        seconds, trace = [], None
        for _ in range(args.repeats):
            start = time.perf_counter()
            trace = task.trace(setup, Streams(setup.seed, 0))
            seconds.append(time.perf_counter() - start)
        assert trace is not None
        hops = int((trace.holders >= 0).sum())
        rate = hops / statistics.median(seconds)
        base = base or rate
        sends = trace.faults.sent if trace.faults else 0
        row = {"setting": name, "hops": hops, "seconds": statistics.median(seconds),
               "hops_per_s": round(rate), "ratio_to_fault_free": rate / base,
               "messages_per_s": round(2 * sends / statistics.median(seconds)),
               "faults": trace.faults.to_dict() if trace.faults else None}
        if not args.no_command:
            row.update(_command.beside(command(params), row["seconds"], args.command_timeout))
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
