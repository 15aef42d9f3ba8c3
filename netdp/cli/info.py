"""``netdp bounds`` (theoretical curves over n) and ``netdp topologies`` (named graphs)."""

from __future__ import annotations

import argparse
import json
import math

from netdp.errors import InputError

EPILOG_BOUNDS = ("examples:\n  netdp bounds\n  netdp bounds --eps0 0.4 --n-max 1e6 --csv > "
                 "curves.csv\n  netdp bounds --curve complete-ndp-chernoff --json")


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``bounds`` and ``topologies``."""
    bnd = sub.add_parser("bounds", help="print theoretical privacy curves over a grid of n",
                         description="Theoretical epsilon of the protocols against the number "
                         "of nodes n (AISTATS 2022 Fig. 1a and the ring's Theorem 1).",
                         formatter_class=argparse.RawDescriptionHelpFormatter,
                         epilog=EPILOG_BOUNDS)
    bnd.add_argument("--eps0", type=float, default=0.1, help="LDP level of one contribution "
                     "(default: 0.1)")
    bnd.add_argument("--delta", type=float, default=1e-7, help="delta (default: 1e-7)")
    bnd.add_argument("--steps-per-node", type=float, default=100.0, metavar="T/n",
                     help="complete graph: T = this x n (default: 100)")
    bnd.add_argument("--rounds", type=int, default=1, metavar="K", help="ring: turns "
                     "(default: 1)")
    bnd.add_argument("--n-min", type=float, default=10.0, help="smallest n (default: 10)")
    bnd.add_argument("--n-max", type=float, default=1e10, help="largest n (default: 1e10)")
    bnd.add_argument("--points", type=int, default=10, help="log-spaced values of n "
                     "(default: 10)")
    bnd.add_argument("--curve", action="append", metavar="NAME", help="only these curves "
                     "(repeatable; default: all)")
    fmt = bnd.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="one JSON object")
    fmt.add_argument("--csv", action="store_true", help="tidy CSV: n, curve, epsilon")
    bnd.set_defaults(handler=bounds)

    topo = sub.add_parser("topologies", help="list the named topologies",
                          description="List the topologies --topology accepts by name.")
    topo.set_defaults(handler=topologies)


def bounds(args: argparse.Namespace) -> int:
    """Print the curves: a table, ``--json`` or ``--csv``."""
    import numpy as np

    from netdp.jsonable import jsonable
    from netdp.privacy.bounds import CURVES

    if not (args.eps0 > 0 and math.isfinite(args.eps0)):
        raise InputError("eps0", f"must be a finite number > 0 (got {args.eps0})")
    if not 0 < args.delta < 1:
        raise InputError("delta", f"must lie in (0, 1) (got {args.delta})")
    if not 2 <= args.n_min <= args.n_max:
        raise InputError("n-min", f"needs 2 <= n-min <= n-max (got {args.n_min}, "
                         f"{args.n_max})")
    if args.points < 1 or args.rounds < 1 or args.steps_per_node <= 0:
        raise InputError("points", "points and rounds must be >= 1, steps-per-node > 0")
    names = args.curve or list(CURVES)
    for name in names:
        if name not in CURVES:
            raise InputError("curve", f"unknown curve {name!r}; choose from "
                             f"{', '.join(CURVES)}")
    n = np.unique(np.round(np.geomspace(args.n_min, args.n_max, args.points)))
    table = {}
    for name in names:
        params = {"n": n, "eps0": args.eps0, "delta": args.delta,
                  "T": args.steps_per_node * n, "K": args.rounds}
        table[name] = np.asarray(CURVES[name](**params), dtype=float) * np.ones_like(n)
    if args.json:
        print(json.dumps(jsonable({"eps0": args.eps0, "delta": args.delta,
                                   "steps_per_node": args.steps_per_node,
                                   "rounds": args.rounds, "n": n.tolist(),
                                   "curves": {k: v.tolist() for k, v in table.items()},
                                   "descriptions": {k: CURVES[k].description
                                                    for k in names}}), indent=2))
    elif args.csv:
        print("n,curve,epsilon")
        for name, eps in table.items():
            for x, e in zip(n, eps, strict=True):
                print(f"{x:.0f},{name},{e:.10g}")
    else:
        print(f"theoretical epsilon; eps0 = {args.eps0:g}, delta = {args.delta:g}, "
              f"T = {args.steps_per_node:g} n (complete), K = {args.rounds} (ring)")
        print(f"{'n':>12}  " + "  ".join(f"{k:>{max(len(k), 10)}}" for k in table))
        for i, x in enumerate(n):
            print(f"{x:>12.4g}  " + "  ".join(f"{table[k][i]:>{max(len(k), 10)}.4g}"
                                              for k in table))
        print()
        for name in names:
            print(f"  {name}: {CURVES[name].description}")
    return 0


def topologies(args: argparse.Namespace) -> int:
    """List the named topologies."""
    from netdp.topology import available

    names = available()
    width = max(map(len, names))
    for name, text in names.items():
        print(f"{name:{width}}  {text}")
    return 0
