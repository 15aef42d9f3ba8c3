"""Command line: ``python -m netdp`` / ``netdp``. Parses, validates, calls the library."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tomllib
from pathlib import Path

from netdp import __version__
from netdp.config import (
    ACCOUNTANTS,
    CALIBRATIONS,
    MECHANISMS,
    SHUFFLE_BOUNDS,
    WALKS,
    SimulationConfig,
)
from netdp.data import GENERATORS
from netdp.engine import ENGINES
from netdp.errors import InputError
from netdp.files import write_atomic
from netdp.jsonable import jsonable
from netdp.learning.models import MODELS
from netdp.protocols import TASKS
from netdp.protocols.sgd import SCHEDULES

EPILOG_SIMULATE = """\
examples:
  netdp simulate                                   # complete graph, n=100, T=100 n, eps=1
  netdp simulate --topology ring --nodes 1000 --rounds 5 --epsilon 0.5
  netdp simulate --topology ring --nodes 1000 --noise-every-hop   # the LDP baseline
  netdp simulate --topology hypercube --nodes 1024 --steps 100000 --runs 20 --json
  netdp simulate --topology edges.txt --data-file ages.csv --column age --range 0 120
  netdp simulate --config run.toml --seed 7        # TOML keys = flag names, flags win
  netdp simulate --task histogram --mechanism olh --domain 50 --data zipf -n 2000
  netdp simulate --task sgd --epsilon 10 --compare local,network,central --seed 1
  netdp simulate --task histogram --topology ring --gamma 0.5 --domain 8 --rounds 3

Summation: the estimate is the mean of the nodes' values. On the ring (AISTATS 2022
Alg. 1) noise is added once every n-1 hops; on other graphs (Alg. 3) every holder adds
noise and the token moves to a uniform neighbour (Metropolis-Hastings on irregular
graphs, so the estimate stays unbiased).
Histogram: each holder adds a fresh report of its category to the token (Alg. 2 on the
ring, Alg. 4 on a walk); an observer sees only the sum of the reports since its last
visit, so each report is amplified by shuffling among them.
SGD: the token is a model (Alg. 5); each holder takes a clipped, noisy gradient step on
its own rows. --compare runs local, network and central DP at the same (eps, delta) on
the same walk and writes the learning curves (CSV and PNG).
Bad input exits with status 2 and writes nothing.
"""


class _Parser(argparse.ArgumentParser):
    """argparse, but errors are one line (no usage dump) and exit with status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The whole command-line interface."""
    parser = _Parser(prog="netdp", description="Simulate network differential privacy: a "
                     "token walks a graph, every node perturbs its own data, and netdp "
                     "reports the utility of the result.")
    parser.add_argument("--version", action="version", version=f"netdp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    sim = sub.add_parser("simulate", help="run one protocol and report its utility",
                         description="Run one decentralized protocol on a graph and report "
                         "the estimate, its error and its theoretical standard deviation.",
                         epilog=EPILOG_SIMULATE,
                         formatter_class=argparse.RawDescriptionHelpFormatter,
                         argument_default=argparse.SUPPRESS)
    what = sim.add_argument_group("what to run")
    what.add_argument("--config", metavar="FILE.toml",
                      help="read parameters from a TOML file (keys are the flag names with "
                      "_ for -); flags given here override it")
    what.add_argument("--task", choices=TASKS, help="the computation: sum (the mean of "
                      "real values), histogram (frequencies of categories) or sgd (a model "
                      "trained by the walk) (default: sum)")
    what.add_argument("--topology", metavar="NAME|FILE",
                      help="ring, complete, a named topology (list them with `netdp "
                      "topologies`), an edge-list file or a TOML topology spec "
                      "(default: complete)")
    what.add_argument("--nodes", "-n", type=int, metavar="N",
                      help="number of nodes, >= 2 (default: 100, or the topology's / data "
                      "file's own size)")
    what.add_argument("--steps", "-T", type=int, metavar="T",
                      help="random-walk steps per token, >= 1 (default: 100 n)")
    what.add_argument("--rounds", "-K", type=int, metavar="K",
                      help="ring only: full turns of the token, >= 1 (default: 1)")
    what.add_argument("--tokens", type=int, metavar="K",
                      help="tokens walking at once, averaged at the end (default: 1)")
    what.add_argument("--no-self-moves", dest="self_moves", action="store_false",
                      help="complete graph: never forward the token to oneself")
    what.add_argument("--walk", choices=WALKS, help="walk rule on other graphs: simple "
                      "(uniform neighbour) or metropolis (uniform stationary law; default "
                      "on irregular undirected graphs)")
    what.add_argument("--directed", action="store_true",
                      help="read an edge-list file as one-way edges")

    priv = sim.add_argument_group("local randomizer")
    priv.add_argument("--mechanism", choices=MECHANISMS, metavar="NAME",
                      help="sum: gaussian (default) or laplace noise, or duchi piecewise "
                      "hybrid (a report at every hop); histogram: a frequency oracle, grr "
                      "(default) sue oue blh olh hr cms hcms rappor the she")
    priv.add_argument("--epsilon", "-e", type=float, metavar="EPS",
                      help="LDP level of one noisy contribution or report, > 0 (default: 1)")
    priv.add_argument("--gamma", type=float, metavar="G", help="grr only: gamma-randomized "
                      "response (keep the value w.p. 1 - G, else uniform); sets epsilon to "
                      "ln(1 + L (1 - G) / G)")
    priv.add_argument("--delta", "-d", type=float, metavar="DELTA",
                      help="Gaussian only: delta in (0, 1) (default: 1e-6)")
    priv.add_argument("--calibration", choices=CALIBRATIONS,
                      help="Gaussian sigma: analytic (exact, default) or classic "
                      "(sqrt(2 ln(1.25/delta))/eps, eps <= 1 only)")
    priv.add_argument("--noise-every-hop", action="store_true",
                      help="ring: noise at every contribution (the local-DP baseline)")

    hist = sim.add_argument_group("histograms (--task histogram)")
    hist.add_argument("--domain", "-L", type=int, metavar="L", help="number of categories, "
                      ">= 2 (default: 10)")
    hist.add_argument("--shuffle", choices=SHUFFLE_BOUNDS, help="amplification-by-shuffling "
                      "bound per window: fmt-numeric (default), fmt-closed or blanket (grr)")
    hist.add_argument("--dummies", type=int, metavar="D", help="ring: dummy reports node 0 "
                      "adds at the start and again at the end (default: n - 1)")
    hist.add_argument("--project", action="store_true", help="project the estimate onto the "
                      "simplex (post-processing; biased, off by default)")

    data = sim.add_argument_group("data")
    data.add_argument("--data", choices=GENERATORS,
                      help="synthetic values: uniform on the range (default), constant "
                      "(midpoint) or normal (clipped); for histograms the same over the "
                      "categories, or zipf")
    data.add_argument("--data-file", metavar="CSV", help="take the values from a CSV file "
                      "with a header row (one row per node)")
    data.add_argument("--column", metavar="NAME|INDEX", help="the CSV column (default: first)")
    data.add_argument("--range", nargs=2, type=float, metavar=("LOW", "HIGH"),
                      help="range of the values; its width is the sensitivity (default: 0 1)")

    sgd = sim.add_argument_group(
        "decentralized SGD (--task sgd)",
        "The token is a model; each holder takes one step on its own rows with its gradient "
        "clipped to L, then Gaussian noise. --epsilon/--delta is the target of every regime; "
        "sigma is calibrated per regime. Defaults: n = 2000, T = 10 n.")
    sgd.add_argument("--dataset", metavar="NAME|FILE.csv", help="randhie (RAND health "
                     "insurance, 20 190 rows, shipped with statsmodels; default), synthetic, "
                     "or a CSV file with a header row")
    sgd.add_argument("--target", metavar="COLUMN", help="CSV label column (default: last)")
    sgd.add_argument("--model", choices=MODELS, help="logistic (labels -1/+1, default) or "
                     "linear (least squares)")
    sgd.add_argument("--lipschitz", type=float, metavar="L",
                     help="gradient clipping norm, applied before the noise (default: 0.4)")
    sgd.add_argument("--lr", type=float, metavar="GAMMA", help="step size (default: 0.1)")
    sgd.add_argument("--lr-schedule", choices=SCHEDULES, help="constant (default), inv-sqrt "
                     "(lr / sqrt(1 + t/n)) or inv (lr / (1 + t/n))")
    sgd.add_argument("--radius", type=float, metavar="R", help="project the model onto the "
                     "ball of radius R after each step (default: no projection)")
    sgd.add_argument("--l2", type=float, metavar="LAMBDA", help="ridge term lambda/2 |w|^2 "
                     "(default: 0)")
    sgd.add_argument("--skew", type=float, metavar="A", help="deal each label's rows to the "
                     "nodes with Dirichlet(A) shares (default: equal split)")
    sgd.add_argument("--test-fraction", type=float, metavar="F", help="held-out share of the "
                     "rows (default: 0.2)")
    sgd.add_argument("--max-contributions", type=int, metavar="K", help="cap on each node's "
                     "updates (the calibration then assumes K; default: none, assumes T/n)")
    sgd.add_argument("--compare", dest="regimes", metavar="REGIMES",
                     help="comma-separated regimes run on the same walk and noise: local, "
                     "network (default), central, nonprivate; e.g. local,network,central")
    sgd.add_argument("--curves", metavar="PREFIX", help="write PREFIX.csv (objective and "
                     "test score against steps, per regime) and PREFIX.png (default with "
                     "--compare: sgd-curves)")
    sgd.add_argument("--evals", type=int, metavar="E", help="evaluation points along the "
                     "walk (default: 100)")

    run = sim.add_argument_group("time and engines")
    run.add_argument("--engine", choices=ENGINES, help="event (simpy), vector (numpy) or "
                     "auto: vector whenever it is exact (default)")
    run.add_argument("--latency", metavar="LAW", help="hop latency: a number, exp:MEAN or "
                     "uniform:LOW:HIGH (default: 1)")
    run.add_argument("--service-time", type=float, metavar="S", help="time a node keeps a "
                     "token; with several tokens, tokens queue at busy nodes (event engine)")

    acc = sim.add_argument_group("privacy tracking (ring and complete graph; sgd: any graph)")
    acc.add_argument("--accountant", dest="accountants", action="append", choices=ACCOUNTANTS,
                     help="how pairwise losses are composed: kov (the reference tracker: "
                     "KOV heterogeneous composition of per-cycle losses, default), rdp "
                     "(Renyi DP of the same Gaussian entries, tighter) or pld (privacy loss "
                     "distributions, tightest; about 50 ms per node); repeat for several")
    acc.add_argument("--no-tracking", dest="accountants", action="store_const", const=(),
                     help="skip pairwise privacy tracking (utility only; faster)")
    acc.add_argument("--coalition", metavar="IDS|random:C", help="nodes observing as one, "
                     "e.g. 3,7,9, or C random nodes per run; reports every other node's loss "
                     "towards the coalition")
    acc.add_argument("--pairs-out", metavar="FILE.npy", help="write the n x n matrix of "
                     "pairwise losses M[u, v] = eps(u -> v) (first accountant, mean over runs; "
                     "n <= 10 000)")

    out = sim.add_argument_group("reproducibility and output")
    out.add_argument("--seed", type=int, metavar="INT", help="seed of the run, >= 0 "
                     "(default: fresh from the OS, printed in the output)")
    out.add_argument("--runs", "-r", type=int, metavar="R", help="independent runs of the "
                     "walk and noise on the same data (default: 1)")
    out.add_argument("--json", action="store_true", help="print one JSON object instead of "
                     "the table")
    out.add_argument("--out", metavar="FILE.json", help="also write the JSON object to FILE "
                     "(atomically)")
    sim.set_defaults(handler=_simulate)

    bnd = sub.add_parser("bounds", help="print theoretical privacy curves over a grid of n",
                         description="Theoretical epsilon of the protocols against the number "
                         "of nodes n (AISTATS 2022 Fig. 1a and the ring's Theorem 1).",
                         formatter_class=argparse.RawDescriptionHelpFormatter,
                         epilog="examples:\n  netdp bounds\n  netdp bounds --eps0 0.4 --n-max "
                         "1e6 --csv > curves.csv\n  netdp bounds --curve complete-ndp-chernoff "
                         "--json")
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
    bnd.set_defaults(handler=_bounds)

    topo = sub.add_parser("topologies", help="list the named topologies",
                          description="List the topologies --topology accepts by name.")
    topo.set_defaults(handler=_topologies)

    from netdp.sweep import commands, plot_command

    commands.register(sub)       # sweep, results
    plot_command.register(sub)   # plot
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a one-line usage error
        return int(exc.code or 0)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 0
    try:
        return args.handler(args)
    except InputError as exc:
        flag = exc.param.replace("_", "-")
        print(f"netdp {args.command}: error: --{flag}: {exc.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("netdp: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `netdp bounds | head`: the reader left, stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


# --------------------------------------------------------------------------- commands

def _simulate(args: argparse.Namespace) -> int:
    from netdp.report import format_text
    from netdp.simulate import simulate

    options = vars(args).copy()
    for key in ("command", "handler", "json", "out", "config", "pairs_out", "curves"):
        options.pop(key, None)
    if "range" in options:
        options["low"], options["high"] = options.pop("range")
    params = read_config(args.config) if "config" in args else {}
    params.update(options)
    out = Path(args.out) if "out" in args else None
    pairs_out = Path(args.pairs_out) if "pairs_out" in args else None
    config = SimulationConfig.from_dict(params)
    curves = getattr(args, "curves", None)
    if curves is None and "regimes" in params and config.task == "sgd":
        curves = "sgd-curves"
    if curves is not None and config.task != "sgd":
        raise InputError("curves", "learning curves come from --task sgd")
    curve_paths = [Path(f"{curves}.csv"), Path(f"{curves}.png")] if curves else []
    for path, flag in ((out, "out"), (pairs_out, "pairs-out"),
                       *((p, "curves") for p in curve_paths)):
        if path is not None:
            _check_writable(path, flag)
    res = simulate(config, keep_pairs=pairs_out is not None)
    result = jsonable(res.to_dict())
    if curve_paths:
        from netdp.learning.curves import curves_csv, curves_figure
        from netdp.sweep.plots import save

        write_atomic(curve_paths[0], curves_csv(res))
        save(curves_figure(res), curve_paths[1], dpi=120)
        result["curves_files"] = [str(p) for p in curve_paths]
    text = json.dumps(result, indent=2, allow_nan=False)
    if pairs_out is not None:
        write_atomic(pairs_out, res.pairs, binary=True)
    if out is not None:
        write_atomic(out, text + "\n")
    print(text if "json" in args else format_text(result))
    return 0




def _bounds(args: argparse.Namespace) -> int:
    from netdp.privacy.bounds import bounds_table

    table = bounds_table(eps0=args.eps0, delta=args.delta, steps_per_node=args.steps_per_node,
                         rounds=args.rounds, n_min=args.n_min, n_max=args.n_max,
                         points=args.points, curves=args.curve)
    if args.json:
        print(json.dumps(table.to_json(), indent=2))
    else:
        print(table.csv() if args.csv else table.text())
    return 0


def _topologies(args: argparse.Namespace) -> int:
    from netdp.topology import available

    names = available()
    width = max(map(len, names))
    for name, text in names.items():
        print(f"{name:{width}}  {text}")
    return 0


def read_config(path: str) -> dict:
    try:
        data = tomllib.loads(Path(path).read_text())
    except OSError as exc:
        raise InputError("config", f"cannot read {path!r}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError("config", f"{path} is not valid TOML: {exc}") from None
    data = {k.replace("-", "_"): v for k, v in data.items()}
    if "range" in data:
        rng = data.pop("range")
        if not (isinstance(rng, list) and len(rng) == 2):
            raise InputError("range", f"expects [LOW, HIGH] in {path} (got {rng!r})")
        data["low"], data["high"] = rng
    return data


def _check_writable(path: Path, flag: str = "out") -> None:
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise InputError(flag, f"{str(path)!r} is a directory; give a file name")
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise InputError(flag, f"cannot write into {str(parent)!r}: no such writable folder")
