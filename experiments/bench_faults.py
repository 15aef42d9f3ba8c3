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
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

from netdp.core.setup import Streams
from netdp.tasks import make_config, task_of

SETTINGS = {
    "fault-free": {"engine": "event"},
    "faults that never strike": {"slow": "0:2", "timeout": 1e9},
    "loss + churn, resend": {"loss": "0.01", "churn": "exp:500:50", "retries": 1000},
    "loss + churn, skip": {"loss": "0.01", "churn": "exp:500:50", "on_loss": "skip"},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(json.dumps({"machine": platform.platform(), "python": platform.python_version(),
                      "nodes": args.nodes, "tokens": args.tokens, "steps": args.steps}))
    base = None
    for name, extra in SETTINGS.items():
        config = make_config({"task": "sum", "topology": "complete", "nodes": args.nodes,
                              "steps": args.steps, "tokens": args.tokens, "seed": args.seed,
                              **extra})
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
        print(json.dumps({"setting": name, "hops": hops, "seconds": statistics.median(seconds),
                          "hops_per_s": round(rate), "ratio_to_fault_free": rate / base,
                          "messages_per_s": round(2 * sends / statistics.median(seconds)),
                          "faults": trace.faults.to_dict() if trace.faults else None}),
              flush=True)


if __name__ == "__main__":
    main()
