"""Start-up time of the CLI, as whole processes, against `python -c "import numpy"`.

Usage: python experiments/bench_startup.py [--repeat 5]

Runs each command ``repeat`` times in turn (A B A B ..., after one warm-up round that
also fills numba's cache), and prints each one's median wall time and its ratio to the
baseline's median in the same round. Targets (the Task-interface issue): ``netdp --help``
within 3x the baseline, ``netdp simulate`` with defaults within 0.8 s.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "python -c 'import numpy' (baseline)": [sys.executable, "-c", "import numpy"],
    "netdp --help": [sys.executable, "-m", "netdp", "--help"],
    "netdp --version": [sys.executable, "-m", "netdp", "--version"],
    "netdp simulate --help": [sys.executable, "-m", "netdp", "simulate", "--help"],
    "netdp simulate (defaults)": [sys.executable, "-m", "netdp", "simulate"],
    "netdp simulate --no-tracking": [sys.executable, "-m", "netdp", "simulate",
                                     "--no-tracking"],
}


def wall(argv: list[str]) -> float:
    """Wall seconds of one run of ``argv`` (its output discarded)."""
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for argv in COMMANDS.values():  # warm-up: page cache, numba's kernel cache
        wall(argv)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.repeat):
        for name, argv in COMMANDS.items():
            times[name].append(wall(argv))
    base = statistics.median(next(iter(times.values())))
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}; "
          f"median of {args.repeat} whole-process runs")
    print(f"{'command':36} {'median s':>9} {'min s':>7} {'x baseline':>11}")
    for name, values in times.items():
        med = statistics.median(values)
        print(f"{name:36} {med:9.3f} {min(values):7.3f} {med / base:11.2f}")


if __name__ == "__main__":
    main()
