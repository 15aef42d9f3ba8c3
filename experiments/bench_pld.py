"""Speed and tightness of the ``pld`` walk accountant: the batched Fourier composition
(:mod:`netdp.accounting.pld_fourier`) against the previous one and the exact loss.

Usage: python experiments/bench_pld.py [--nodes 100 1000] [--eps0 0.1 1] [--observers 2]
       [--old REV] [--old-exact REV] [--all-observers] [--seed 0]

One walk per cell on the complete graph (self-moves), ``T = 100 n``, ``δ = 1e-6``. In one
process, the same sampled observers are accounted by the previous ``pld`` (the
``netdp/tracking/exact.py`` of git revision ``--old``, loaded beside the package), the new
``pld`` and ``exact``; each row gives the seconds per observer, the ratio of the old
pld's seconds to the new one's, and the mean over pairs (and the largest) of each pld's
ratio to exact. ``--old-exact REV`` adds the exact accountant of revision ``REV`` (its
module loaded the same way; ``1eac256``: each pair composed directly over a balanced tree
of PMFs, before exact went through the Fourier banks), with its seconds' ratio to the new
exact's. ``--all-observers`` also times the new pld over every observer of each cell (what
``netdp simulate --accountant pld`` does). Machine: whatever runs it; compare the ratios,
not the seconds.

Beside the new pld's row and exact's, a fresh process runs the command a user types for
the same cell (``experiments/_command.py``), which accounts every observer::

    netdp simulate --nodes N --steps 100N --epsilon EPS0 --delta 1e-6 --accountant A \\
        --seed SEED

with its wall time, its peak resident memory and its ratio to the kernels: the walk and
every observer's accounting (measured with ``--all-observers`` for pld, else the seconds
per observer times n). ``--no-command`` skips it.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _command
import numpy as np

from netdp import engine, mechanisms
from netdp.core import seeding
from netdp.graphs import topologies as topology
from netdp.tracking import exact, loss_summary
from netdp.tracking import loss_table as tracker

DELTA, T_PER_NODE = 1e-6, 100
ROOT = Path(__file__).resolve().parents[1]
#: The rows a user can run as a command, and the accountant it names.
COMMAND_ACCOUNTANTS = {"pld new": "pld", "exact": "exact"}


def old_module(rev: str):
    """``netdp/tracking/exact.py`` as of ``rev``, imported under another name."""
    text = subprocess.run(["git", "show", f"{rev}:netdp/tracking/exact.py"], cwd=ROOT,
                          check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "old_exact.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("old_exact", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def without_target(old_losses: Callable[..., Any]) -> Callable[..., Any]:
    """An old ``walk_pld_losses`` (from before the one target δ) called as the tracker
    calls the new one: its last argument, ``target``, must be ``None`` (every pair at
    ``2 k δ``, as the old one composes)."""

    def call(*args: Any) -> Any:
        *before, target = args
        assert target is None, target
        return old_losses(*before)

    return call


def account(trace, eps0: float, z: float, accountant: str, obs: np.ndarray,
            impl=None) -> tuple[np.ndarray, float]:
    """The dense loss matrix of ``obs`` and the seconds (``impl``: another
    ``walk_pld_losses``)."""
    saved = exact.walk_pld_losses
    if impl is not None:
        exact.walk_pld_losses = impl
    try:
        t0 = time.perf_counter()
        losses = tracker.walk_losses(trace, eps0, DELTA, z, accountant, keep_pairs=True,
                                     observers=obs)
        sec = time.perf_counter() - t0
    finally:
        exact.walk_pld_losses = saved
    return loss_summary.dense(losses), sec


def command(n: int, eps0: float, accountant: str, seed: int) -> list[str]:
    """The ``netdp simulate`` argv of a cell's run, every observer accounted."""
    return ["simulate", "--nodes", str(n), "--steps", str(T_PER_NODE * n),
            "--epsilon", str(eps0), "--delta", str(DELTA), "--accountant", accountant,
            "--seed", str(seed)]


def cell(n: int, eps0: float, n_obs: int, seed: int, old, every: bool,
         timeout: float | None, old_exact=None) -> list[dict]:
    """The rows of one cell; with ``timeout`` (seconds), the command beside the new pld's
    row and exact's."""
    z = mechanisms.Gaussian(eps0, DELTA).sigma
    topo = topology.complete(n, self_moves=True)
    start = time.perf_counter()
    trace = engine.walk("vector", engine.Router(topo), T_PER_NODE * n,
                        [seeding.generator(seed, "walk", 0, 0)])
    walk_s = time.perf_counter() - start
    obs = np.sort(np.random.default_rng(seed).choice(n, size=min(n_obs, n), replace=False))
    account(trace, eps0, z, "pld", obs[:1])  # warm the compiled kernels and imports
    runs = {"pld old": account(trace, eps0, z, "pld", obs,
                               without_target(old.walk_pld_losses)),
            "pld new": account(trace, eps0, z, "pld", obs),
            "exact": account(trace, eps0, z, "exact", obs)}
    if old_exact is not None:
        runs["exact old"] = account(trace, eps0, z, "exact", obs,
                                    without_target(old_exact.walk_pld_losses)
                                    if "target" not in old_exact.walk_pld_losses.__code__
                                    .co_varnames else old_exact.walk_pld_losses)
    ex = runs["exact"][0]
    ok = ~np.isnan(ex) & (ex > 0)
    rows = []
    for method, (m, sec) in runs.items():
        ratio = m[ok] / ex[ok]
        rows.append(dict(n=n, eps0=eps0, observers=obs.size, method=method,
                         mean=float(np.nanmean(m)), ratio_mean=float(ratio.mean()),
                         ratio_max=float(ratio.max()), ratio_min=float(ratio.min()),
                         s_per_observer=sec / obs.size))
    rows[1]["speedup"] = rows[0]["s_per_observer"] / rows[1]["s_per_observer"]
    if old_exact is not None:
        rows[3]["speedup_of_exact"] = rows[3]["s_per_observer"] / rows[2]["s_per_observer"]
    every_s = {r["method"]: r["s_per_observer"] * n for r in rows}
    if every:
        m, sec = account(trace, eps0, z, "pld", np.arange(n))
        rows.append(dict(n=n, eps0=eps0, observers=n, method="pld new, every observer",
                         mean=float(np.nanmean(m)), seconds=sec, s_per_observer=sec / n))
        every_s["pld new"] = sec
    if timeout is not None:
        for row in rows:
            if row["method"] in COMMAND_ACCOUNTANTS:
                argv = command(n, eps0, COMMAND_ACCOUNTANTS[row["method"]], seed)
                row.update(_command.beside(argv, walk_s + every_s[row["method"]], timeout))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--eps0", type=float, nargs="+", default=[0.1, 1.0])
    parser.add_argument("--observers", type=int, default=2)
    parser.add_argument("--old", default="06bc09d", help="git revision of the old pld")
    parser.add_argument("--old-exact", metavar="REV",
                        help="git revision of an earlier exact accountant to time beside")
    parser.add_argument("--all-observers", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    _command.add_arguments(parser)
    args = parser.parse_args(argv)
    old = old_module(args.old)
    timeout = None if args.no_command else args.command_timeout
    for n in args.nodes:
        for eps0 in args.eps0:
            for row in cell(n, eps0, args.observers, args.seed, old, args.all_observers,
                            timeout, old_module(args.old_exact) if args.old_exact else None):
                print({k: (float(f"{v:.4g}") if isinstance(v, float) else v)
                       for k, v in row.items() if k != "command_timing"}, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
