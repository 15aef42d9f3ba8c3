"""The long fuzz run (issue 29), outside pytest: every subcommand's generated cases, each
checked with the property of :func:`test_fuzz_cli.check_case`, failures collected instead
of stopping the run.

Usage (from the repository root; see docs/fuzzing.md)::

    nice -n 19 python tests/fuzz_long.py --cases 20000 --seed 29 --report fuzz.json

The cases are split evenly over the subcommands, in rounds of ``--chunk`` cases per
subcommand (so that a run stopped early, ``--minutes``, has covered every subcommand);
``--seed`` makes the run repeatable. The report (``--report``) is rewritten after each
chunk.
Every failure is printed as its command line, to be kept in
tests/test_fuzz_regressions.py.

With ``--readers`` it runs the structure-aware cases of tests/fuzz_readers.py instead
(valid files mutated, the disclosure property on top), split evenly over the readers::

    nice -n 19 python tests/fuzz_long.py --readers --cases 20000 --seed 39 --report r.json
 The address space is capped (``--memory``, GiB) so that
a run the estimates miss fails with ``MemoryError`` here instead of taking the machine.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import resource
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings

sys.path.insert(0, str(Path(__file__).parent))
from test_fuzz_cli import FUZZ_COMMANDS, argv_for, check_case, make_inputs  # noqa: E402


def run_command(command: str, files: dict[str, str], cases: int, at: int,
                tally: dict) -> None:
    """``cases`` generated cases of ``command``, tallied in ``tally``."""

    @seed(at)
    @settings(max_examples=cases, derandomize=False, deadline=None, database=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(argv=argv_for(command, files))
    def one(argv: list[str]) -> None:
        start = time.perf_counter()
        try:
            code = check_case(argv, wall=True)  # the long run: wall-clock time
            tally["codes"][command][str(code)] += 1
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001  (an assertion, a pytest.fail)
            tally["failures"].append({"argv": argv, "error": str(exc)[-1500:]})
            print(f"FAIL {command}: {argv!r}\n  {str(exc)[-400:]}", flush=True)
        tally["cases"][command] += 1
        tally["slowest"][command] = max(tally["slowest"][command],
                                        time.perf_counter() - start)

    one()


#: Readers whose cases run in a fresh interpreter, a chunk each: a ``--scheduler`` case
#: leaves distributed's client and event loop behind, and thousands of them in one
#: process stall in its finalisers (a lock in ``LoopRunner.stop``), which no user's
#: single command meets (session 20's runs 3-4).
ISOLATED = {"scheduler"}


def run_chunk(at: int, count: int, reader: str, root: str,
              rng: random.Random | int) -> list[tuple[int, dict | None, float]]:
    """``count`` cases of ``reader`` drawn from ``at``: each case's exit status (or its
    failure) and seconds."""
    import fuzz_readers

    fuzz_readers.prepare(Path(root))
    rng = rng if isinstance(rng, random.Random) else random.Random(rng)
    out: list[tuple[int, dict | None, float]] = []
    for case in fuzz_readers.cases(at, count, [reader]):
        one = time.perf_counter()
        try:
            out.append((fuzz_readers.run_case(case, Path(root), rng), None,  # CPU time
                        time.perf_counter() - one))
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001
            out.append((-1, {"case": case.line()[:2000], "error": str(exc)[-1500:]},
                        time.perf_counter() - one))
    return out


def run_readers(args: argparse.Namespace, tally: dict, root: Path) -> None:
    """The structure-aware cases (tests/fuzz_readers.py), ``--chunk`` per reader a round,
    each bounded in this process's CPU time (a machine shared with other jobs stretches
    wall time; the alarm at RUNAWAY times the limit still stops a case that hangs)."""
    import fuzz_readers

    fuzz_readers.prepare(root)
    names = args.commands if args.commands != FUZZ_COMMANDS else fuzz_readers.READER_NAMES
    per = -(-args.cases // len(names))
    rng = random.Random(args.seed)
    began = time.perf_counter()
    for round_ in range(-(-per // args.chunk)):
        for i, reader in enumerate(names):
            start = time.perf_counter()
            count = min(args.chunk, per - round_ * args.chunk)
            at = (args.seed * 1000 + round_) * 100 + i
            if reader in ISOLATED:  # a fresh interpreter for the chunk
                with (tempfile.TemporaryDirectory(dir=root) as own,
                      ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool):
                    got = pool.submit(run_chunk, at, count, reader, own,
                                      rng.getrandbits(64)).result()
            else:
                got = run_chunk(at, count, reader, str(root), rng)
            for code, failure, seconds in got:
                if failure is None:
                    tally["codes"][reader][str(code)] += 1
                else:
                    tally["failures"].append(failure)
                    print(f"FAIL {reader}: {failure['case'][:300]}\n  "
                          f"{failure['error'][-400:]}", flush=True)
                tally["cases"][reader] += 1
                tally["slowest"][reader] = max(tally["slowest"][reader], seconds)
            tally["seconds"][reader] = round(tally["seconds"].get(reader, 0.0)
                                             + time.perf_counter() - start, 1)
            print(f"round {round_} {reader}: {tally['cases'][reader]} cases, "
                  f"{dict(tally['codes'][reader])}, {len(tally['failures'])} failures so far",
                  flush=True)
            Path(args.report).write_text(json.dumps(tally, indent=1, default=dict))
        if time.perf_counter() - began > 60 * args.minutes:
            break


def main() -> int:
    """Run; exit 1 if any case failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--memory", type=float, default=8.0, help="address space cap, GiB")
    parser.add_argument("--report", default="fuzz-report.json")
    parser.add_argument("--commands", nargs="*", default=FUZZ_COMMANDS)
    parser.add_argument("--chunk", type=int, default=50, help="cases per subcommand a round")
    parser.add_argument("--minutes", type=float, default=float("inf"),
                        help="stop after the round that passes this time")
    parser.add_argument("--readers", action="store_true", help="the structure-aware cases "
                        "of tests/fuzz_readers.py (--commands: reader names)")
    args = parser.parse_args()
    cap = int(args.memory * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    tally: dict = {"codes": collections.defaultdict(collections.Counter),
                   "cases": collections.Counter(), "slowest": collections.defaultdict(float),
                   "failures": [], "seconds": {}}
    per = -(-args.cases // len(args.commands))
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        if args.readers:
            run_readers(args, tally, Path(tmp))
            print(f"total: {sum(tally['cases'].values())} cases, "
                  f"{len(tally['failures'])} failures")
            return 1 if tally["failures"] else 0
        files = make_inputs(Path(tmp))
        for round_ in range(-(-per // args.chunk)):
            for i, command in enumerate(args.commands):
                start = time.perf_counter()
                cases = min(args.chunk, per - round_ * args.chunk)
                run_command(command, files, cases, (args.seed * 1000 + round_) * 100 + i,
                            tally)
                tally["seconds"][command] = round(tally["seconds"].get(command, 0.0)
                                                  + time.perf_counter() - start, 1)
                print(f"round {round_} {command}: {tally['cases'][command]} cases, "
                      f"{tally['seconds'][command]} s, codes "
                      f"{dict(tally['codes'][command])}, {len(tally['failures'])} failures "
                      f"so far", flush=True)
                Path(args.report).write_text(json.dumps(tally, indent=1, default=dict))
            if time.perf_counter() - began > 60 * args.minutes:
                break
    print(f"total: {sum(tally['cases'].values())} cases, {len(tally['failures'])} failures")
    return 1 if tally["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
