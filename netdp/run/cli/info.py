"""``netdp bounds`` (theoretical curves over n) and ``netdp topologies`` (named graphs)."""

from __future__ import annotations

import argparse
import json

from netdp.core.provenance import provenance
from netdp.graphs.topologies import available
from netdp.run.cli import integer, number

EPILOG_BOUNDS = ("examples:\n  netdp bounds\n  netdp bounds --eps0 0.4 --n-max 1e6 --csv > "
                 "curves.csv\n  netdp bounds --curve complete-ndp-chernoff --json\n"
                 "  netdp bounds --target-delta 1e-6")


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``bounds`` and ``topologies``."""
    bnd = sub.add_parser("bounds", help="print theoretical privacy curves over a grid of n",
                         description="Theoretical epsilon of the protocols against the number "
                         "of nodes n (AISTATS 2022 Fig. 1a and the ring's Theorem 1).",
                         formatter_class=argparse.RawDescriptionHelpFormatter,
                         epilog=EPILOG_BOUNDS)
    bnd.add_argument("--eps0", type=number, default=0.1, help="LDP level of one contribution "
                     "(default: 0.1)")
    bnd.add_argument("--delta", type=number, default=1e-7, help="delta, spent as each "
                     "curve's paper spends it (a Chernoff failure and a composition slack "
                     "each take it) (default: 1e-7)")
    bnd.add_argument("--target-delta", type=number, default=None, metavar="DELTA",
                     help="every curve at this one delta in all instead, split among its "
                     "failures and slacks as a report's theory lines are (default: off)")
    bnd.add_argument("--steps-per-node", type=number, default=100.0, metavar="T/n",
                     help="complete graph: T = this x n (default: 100)")
    bnd.add_argument("--rounds", type=integer, default=1, metavar="K", help="ring: turns "
                     "(default: 1)")
    bnd.add_argument("--n-min", type=number, default=10.0, help="smallest n (default: 10)")
    bnd.add_argument("--n-max", type=number, default=1e10, help="largest n (default: 1e10)")
    bnd.add_argument("--points", type=integer, default=10, help="log-spaced values of n "
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
    from netdp.bounds.table import bounds_table

    table = bounds_table(eps0=args.eps0, delta=args.delta, steps_per_node=args.steps_per_node,
                         rounds=args.rounds, n_min=args.n_min, n_max=args.n_max,
                         points=args.points, curves=args.curve,
                         target_delta=args.target_delta)
    if args.json:
        print(json.dumps({**table.to_json(), "provenance": provenance()}, indent=2))
    else:
        print(table.csv() if args.csv else table.text())
    return 0


def topologies(args: argparse.Namespace) -> int:
    """List the named topologies."""

    names = available()
    width = max(map(len, names))
    for name, text in names.items():
        print(f"{name:{width}}  {text}")
    return 0
