"""Wall time and peak memory of the pairwise privacy tracker on the complete graph.

Usage: python experiments/bench_tracker.py [--sizes 1e3 1e4 1e5 1e6]
       [--accountant kov rdp pld] [--rdp-max-n 100000] [--pld-max-n 1000] [--timeout 900]
       [--rdp-timeout 60] [--pld-timeout 300] [--direct-n 200] [--mem-limit-gb 0]
       [--convention sound|reference|both]

For each size ``n`` (``T = 100 n`` steps, one walk, ``eps0 = 0.1``, ``delta = 1e-7``) and
accountant, and each convention (``--convention``, default ``both``: ``sound`` and
``reference`` timed back to back with the same set-up, so their ratio is fair), a fresh
subprocess times the walk, :func:`netdp.tracking.loss_table.walk_losses`
and :func:`netdp.tracking.loss_summary.summarize` separately, and reports its peak resident
memory (``getrusage`` maxrss) after each phase; maxrss never decreases, so each column is
the peak so far, interpreter and numba included. The numba kernels are warmed up on a tiny
walk first (loading the compiled cache is not timed). An ``rdp`` (``pld``) run longer than
``--rdp-timeout`` (``--pld-timeout``) seconds is stopped and larger sizes of that
accountant are skipped.

Then a direct per-pair implementation (Python lists of ``(m, c)`` entries for every ordered
pair, as the published research code does, KOV-het per pair) runs at ``--direct-n`` on the
same walk as the tracker, and both must agree on mean, min and max to 1e-9 relative.

Beside each row that finished, a fresh process runs the command a user types for the same
run (``experiments/_command.py``)::

    netdp simulate --nodes N --epsilon 0.1 --delta 1e-7 --accountant A --convention C --seed 0

and the table gives its wall time (start-up, imports and the whole report included), its
peak resident memory and the ratio of its wall time to the row's walk + losses + summary.
The command walks the same walk (seed 0); under ``sound`` it composes every pair at the
one target δ, the row at ``2 k δ``, so their mean ε differ.
``--no-command`` skips it; ``--command-timeout`` bounds each (default 900 s).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

import _command
import numba
import numpy as np

from netdp import engine, mechanisms
from netdp.accounting import composition
from netdp.core import seeding
from netdp.graphs import topologies as topology
from netdp.run.resources import peak_resident_bytes
from netdp.tracking import loss_summary
from netdp.tracking import loss_table as tracker

EPS0, DELTA, T_PER_NODE, SEED = 0.1, 1e-7, 100, 0


def _maxrss_mb() -> float:
    """Peak resident memory of this process so far, in MiB (Linux reports KiB)."""
    return peak_resident_bytes() / 2**20


def _walk(n: int, steps: int, seed: int = SEED) -> engine.Trace:
    router = engine.Router(topology.complete(n))
    return engine.walk("vector", router, steps, [seeding.generator(seed, "walk", 0, 0)])


def _sigma() -> float:
    return mechanisms.Gaussian(EPS0, DELTA).sigma


def _warm_up(accountant: str, convention: str = "sound") -> float:
    """Load (or compile) the numba kernels on a tiny walk; return the seconds it took."""
    start = time.perf_counter()
    loss_summary.summarize([tracker.walk_losses(_walk(10, 1000), EPS0, DELTA, _sigma(),
                                           accountant=accountant,
                                           convention=convention)])
    return time.perf_counter() - start


def worker(n: int, accountant: str, convention: str = "sound") -> dict:
    """Time one (n, accountant) measurement in this process and return its numbers."""
    row = {"n": n, "T": T_PER_NODE * n, "accountant": accountant, "convention": convention,
           "threads": numba.get_num_threads()}
    row["warmup_s"] = _warm_up(accountant, convention)
    row["rss_start_mb"] = _maxrss_mb()
    start = time.perf_counter()
    trace = _walk(n, T_PER_NODE * n)
    row["walk_s"] = time.perf_counter() - start
    row["rss_walk_mb"] = _maxrss_mb()
    start = time.perf_counter()
    losses = tracker.walk_losses(trace, EPS0, DELTA, _sigma(), accountant=accountant,
                                 convention=convention)
    row["losses_s"] = time.perf_counter() - start
    row["rss_losses_mb"] = _maxrss_mb()
    start = time.perf_counter()
    summary = loss_summary.summarize([losses])
    row["summarize_s"] = time.perf_counter() - start
    row["rss_summarize_mb"] = _maxrss_mb()
    row.update(pairs=summary["pairs"], mean=summary["mean"], max=summary["max"])
    return row


def _run_worker(n: int, accountant: str, timeout: float, mem_limit_gb: float,
                convention: str = "sound") -> dict | str:
    """Run :func:`worker` in a fresh interpreter; the row, or why there is none."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", str(n), accountant,
           "--mem-limit-gb", str(mem_limit_gb), "--convention", convention]
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"stopped after {timeout:.0f} s"
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["?"])[-1]
        return f"failed (rc {done.returncode}, {time.perf_counter() - start:.0f} s): {tail}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def command(n: int | str, accountant: str, convention: str) -> list[str]:
    """The ``netdp simulate`` argv of the run a row times."""
    return ["simulate", "--nodes", str(n), "--epsilon", str(EPS0), "--delta", str(DELTA),
            "--accountant", accountant, "--convention", convention, "--seed", str(SEED)]


def kernels_s(row: dict) -> float:
    """Seconds of a row's walk, losses and summary (its warm-up left out)."""
    return row["walk_s"] + row["losses_s"] + row["summarize_s"]


def direct_pairwise(holders: np.ndarray, n: int, eps0: float, delta: float) -> np.ndarray:
    """Every ordered pair's loss from per-pair Python lists of ``(m, c)`` entries.

    Follows the spec's definition literally: each return of the token to ``v`` after a
    cycle of ``m`` hops appends ``[m, 0]`` to the list of every pair ``(u, v)``, ``u != v``,
    then raises ``c`` for the node ``v`` last handed the token to and the node that just
    handed it back. Entry loss ``eps0 / sqrt(m)`` (times ``c`` when ``c > 0``, subsampled
    when ``c = 0``), composed per pair with KOV-het at ``delta_tilde = k delta``.

    Returns
    -------
    numpy.ndarray
        ``(n, n)`` matrix ``M[u, v] = eps_{u -> v}``, NaN on the diagonal.
    """
    holders = holders.tolist()
    cycles = [[[] for _ in range(n)] for _ in range(n)]  # cycles[v][u]: entries of u -> v
    last_time = [-1] * n
    last_send = [-1] * n
    for i, v in enumerate(holders):
        if i > 0:
            last_send[holders[i - 1]] = v
        if last_time[v] >= 0:
            m = i - last_time[v]
            row = cycles[v]
            for u in range(n):
                if u != v:
                    row[u].append([m, 0])
            if m >= 2:  # m = 1 is a self-move: v attributes nothing to anyone else
                row[last_send[v]][-1][1] += 1
                row[holders[i - 1]][-1][1] += 1
        last_time[v] = i

    memo: dict[tuple[int, int], float] = {}

    def translation(m: int, c: int) -> float:
        if (m, c) not in memo:
            eps_g = eps0 / math.sqrt(m)
            memo[m, c] = (math.log(1 + (1 - (1 - 1 / n) ** m) * math.expm1(eps_g)) if c == 0
                          else c * eps_g)
        return memo[m, c]

    out = np.full((n, n), np.nan)
    for v in range(n):
        for u in range(n):
            if u == v:
                continue
            entries = cycles[v][u]
            if not entries:
                out[u, v] = 0.0
                continue
            eps, s1, s2 = composition.kov_het_terms(
                np.array([translation(m, c) for m, c in entries]))
            out[u, v] = composition.kov_het_epsilon(eps.sum(), s1.sum(), s2.sum(),
                                                    len(entries) * delta)
    return out


def compare_direct(n: int) -> None:
    """Time the direct per-pair implementation against the tracker on one walk."""
    trace = _walk(n, T_PER_NODE * n)
    _warm_up("kov")
    times = []
    for _ in range(3):  # median of 3: the fast path takes milliseconds
        start = time.perf_counter()
        summary = loss_summary.summarize([tracker.walk_losses(trace, EPS0, DELTA, _sigma(), "kov",
                                                         convention="reference")])
        times.append(time.perf_counter() - start)
    fast = statistics.median(times)
    start = time.perf_counter()
    matrix = direct_pairwise(trace.holders[0], n, EPS0, DELTA)
    pairs = matrix[~np.isnan(matrix)]
    direct = {"mean": float(pairs.mean()), "min": float(pairs.min()), "max": float(pairs.max())}
    slow = time.perf_counter() - start
    print(f"\ndirect per-pair implementation, n = {n}, T = {T_PER_NODE * n:,}, kov, "
          f"{pairs.size:,} ordered pairs (walk excluded from both; tracker: median of 3)")
    print(f"{'':22}{'seconds':>10}{'mean':>20}{'min':>20}{'max':>20}")
    print(f"{'direct (lists)':22}{slow:>10.3f}"
          + "".join(f"{direct[k]:>20.15f}" for k in ("mean", "min", "max")))
    print(f"{'walk_losses+summarize':22}{fast:>10.3f}"
          + "".join(f"{summary[k]:>20.15f}" for k in ("mean", "min", "max")))
    worst = max(abs(direct[k] - summary[k]) / abs(summary[k]) for k in ("mean", "min", "max"))
    print(f"speed-up of the tracker: {slow / fast:,.0f}x; largest relative difference "
          f"{worst:.1e}")
    assert summary["pairs"] == pairs.size, (summary["pairs"], pairs.size)
    for k in ("mean", "min", "max"):
        assert math.isclose(direct[k], summary[k], rel_tol=1e-9), (k, direct[k], summary[k])


def _print_table(rows: list[dict | tuple], with_command: bool) -> None:
    print(f"{'n':>9}{'T':>13} {'acct':5}{'conv.':10}{'walk s':>9}{'losses s':>10}{'summ. s':>9}"
          f"{'total s':>9}  {'peak RSS MiB: start':>19}{'walk':>7}{'losses':>8}{'summ.':>8}"
          f"{'mean eps':>11}" + (_command.padded(_command.HEADER) if with_command else ""))
    for row in rows:
        if isinstance(row, tuple):
            n, acct, conv, why = row
            print(f"{n:>9,}{T_PER_NODE * n:>13,} {acct:5}{conv:10}  {why}")
            continue
        total = kernels_s(row)
        print(f"{row['n']:>9,}{row['T']:>13,} {row['accountant']:5}{row['convention']:10}"
              f"{row['walk_s']:>9.3f}"
              f"{row['losses_s']:>10.3f}{row['summarize_s']:>9.3f}{total:>9.2f}  "
              f"{row['rss_start_mb']:>19,.0f}{row['rss_walk_mb']:>7,.0f}"
              f"{row['rss_losses_mb']:>8,.0f}{row['rss_summarize_mb']:>8,.0f}"
              f"{row['mean']:>11.5f}"
              + (_command.padded(_command.cells(row)) if with_command else ""))


def _print_ratios(rows: list[dict | tuple]) -> None:
    """Sound over reference, per size and accountant, for the rows that both finished."""
    done = {(r["n"], r["accountant"], r["convention"]): r for r in rows if isinstance(r, dict)}
    pairs = [(k[0], k[1]) for k in done if k[2] == "sound" and (k[0], k[1], "reference") in done]
    if not pairs:
        return
    print("\nsound / reference, same machine and set-up")
    print(f"{'n':>9} {'acct':5}{'losses':>9}{'losses+summ.':>14}{'peak RSS':>10}")
    for n, acct in pairs:
        s, r = done[n, acct, "sound"], done[n, acct, "reference"]
        print(f"{n:>9,} {acct:5}{s['losses_s'] / r['losses_s']:>9.2f}"
              f"{(s['losses_s'] + s['summarize_s']) / (r['losses_s'] + r['summarize_s']):>14.2f}"
              f"{s['rss_summarize_mb'] / r['rss_summarize_mb']:>10.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e3, 1e4, 1e5, 1e6])
    parser.add_argument("--accountant", nargs="+", choices=tracker.WALK_ACCOUNTANTS,
                        default=["kov", "rdp", "pld"])
    parser.add_argument("--rdp-max-n", type=float, default=1e5,
                        help="largest n measured with rdp (default 1e5)")
    parser.add_argument("--pld-max-n", type=float, default=1e3,
                        help="largest n measured with pld (default 1e3)")
    parser.add_argument("--timeout", type=float, default=900,
                        help="seconds allowed to one kov measurement (default 900)")
    parser.add_argument("--rdp-timeout", type=float, default=60,
                        help="seconds allowed to one rdp measurement (default 60)")
    parser.add_argument("--pld-timeout", type=float, default=300,
                        help="seconds allowed to one pld measurement (default 300)")
    parser.add_argument("--direct-n", type=int, default=200,
                        help="n of the direct per-pair comparison (0: skip it)")
    parser.add_argument("--mem-limit-gb", type=float, default=0,
                        help="address-space limit of each measurement (0: none)")
    parser.add_argument("--convention", choices=("sound", "reference", "both"), default="both",
                        help="tracker convention(s) timed (default both, back to back)")
    _command.add_arguments(parser)
    parser.add_argument("--worker", nargs=2, metavar=("N", "ACCOUNTANT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        if args.mem_limit_gb > 0:
            limit = int(args.mem_limit_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        print(json.dumps(worker(int(args.worker[0]), args.worker[1], args.convention)))
        return
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"numba threads {numba.get_num_threads()}, python {platform.python_version()}, "
          f"numpy {np.__version__}, numba {numba.__version__}")
    print(f"complete graph with self-moves, T = {T_PER_NODE} n, one walk, eps0 = {EPS0}, "
          f"delta = {DELTA:g}; one fresh process per row (kernels warmed up first)")
    if not args.no_command:
        print(f"command: {_command.shell_line(command('N', 'A', 'C'))} "
              "(a fresh process per row; command / kernels: its wall time over walk + "
              "losses + summary)")
    rows: list[dict | tuple] = []
    conventions = ["sound", "reference"] if args.convention == "both" else [args.convention]
    for acct in args.accountant:
        timed_out = set()
        for size in args.sizes:
            n = int(size)
            max_n = {"rdp": args.rdp_max_n, "pld": args.pld_max_n}.get(acct, math.inf)
            for conv in conventions:
                if n > max_n or conv in timed_out:
                    rows.append((n, acct, conv, f"skipped ({acct} past --{acct}-max-n or an "
                                 "earlier timeout)"))
                    continue
                timeout = {"rdp": args.rdp_timeout, "pld": args.pld_timeout}.get(
                    acct, args.timeout)
                row = _run_worker(n, acct, timeout, args.mem_limit_gb, conv)
                if isinstance(row, str):
                    if row.startswith("stopped"):
                        timed_out.add(conv)
                    row = (n, acct, conv, row)
                elif not args.no_command:
                    row.update(_command.beside(command(n, acct, conv), kernels_s(row),
                                               args.command_timeout))
                rows.append(row)
                print(f"  done n = {n:,} {acct} {conv}", file=sys.stderr, flush=True)
                if isinstance(row, dict):
                    print(json.dumps(row), file=sys.stderr, flush=True)
    _print_table(rows, not args.no_command)
    _print_ratios(rows)
    if args.direct_n:
        compare_direct(args.direct_n)


if __name__ == "__main__":
    main()
