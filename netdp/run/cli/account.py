"""``netdp account LOG``: the pairwise privacy of a deployment's log of hops or messages
(:func:`netdp.run.account.account`), reported as ``netdp simulate`` reports it."""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path
from typing import Any

from netdp.core.errors import check
from netdp.core.files import check_distinct, check_file_name, check_not_inputs, write_atomic
from netdp.report import figures
from netdp.run.account import account
from netdp.run.cli import node, number, parse_sets
from netdp.run.cli.param_flags import add_flag
from netdp.run.cli.simulate import (
    check_writable,
    labels_path,
    read_files,
    report_outputs,
    write_pairs,
)
from netdp.run.log_graph import located
from netdp.run.sweep.plot_command import check_image, pairs_plot
from netdp.tasks import param_specs

SUMMARY = "the pairwise privacy of a deployment's log of hops or messages"
DESCRIPTION = (
    "Read a deployment's log (one line per hop of a walk, or per gossip message), check it, "
    "rebuild the run's trace from it, and report how much each node leaked to each other "
    "node: the tracker of `netdp simulate`, fed the log instead of the engine. A log "
    "records who held the token, not the values: there is no utility.")
EPILOG = """\
examples:
  netdp simulate --topology hypercube -n 64 --steps 2000 --seed 1 --trace-out hops.csv
  netdp account hops.csv                           # the same privacy report, from the log
  netdp account hops.csv --accountant rdp --json   # another accountant
  netdp account hops.csv --observer 5              # every node's loss towards node 5
  netdp account log.csv --topology grid -n 100 --sigma 2 --delta 1e-6 --repair
  netdp simulate --task sum --protocol gossip --topology grid -n 36 --seed 1 --trace-out g.csv
  netdp account g.csv --pairs-out pairs.npy --plot pairs.png

The log (docs/your-network.md): '# key = value' header lines (a TOML value; keys are
the parameters of `netdp simulate`: protocol, task, topology, nodes, epsilon or sigma,
delta, mechanism, walk, ...), other '#' lines and blank lines ignored, then the column
line and one line per hop or message:
  t,token,sender,receiver       a walk: sender hands the token to receiver at time t
  t,sender,receiver             gossip: sender sends its state to receiver at round t
                                (pairwise, push-pull: at tick t, a -> b then b -> a)
  run,...                       a leading run column when the log holds several runs
The lines give the runs, the tokens and the steps (hops per token + 1; full turns on the
ring; gossip: the last round; pairwise: ticks / n, rounded up). Flags override the
header; --epsilon or --sigma replaces its noise (on a walk --sigma S means eps0 = the
exact eps(delta) of N(0, S^2) with sensitivity 1).
netdp opens no file a log names: a header naming a graph file (or a gossip matrix, a
data file, a loss or churn table) is refused until you name the file yourself
(--topology FILE, --set KEY=FILE); a named graph (hypercube, grid, ...) is rebuilt.
--trace-out writes a graph file's path relative to the log's folder, and its sha256
(# topology_sha256): a relative --topology FILE is read from the current folder, else
from the log's, and a file whose sha256 is not the header's is refused (the graph
changed since the log was written).
On a labelled graph (GraphML, GML, a file's node names, florentine) a log may name its
nodes by label, and so may --observer and --coalition: netdp account log.csv --topology
g.graphml --observer Medici. A list of whole numbers names node ids, as before.

Checks (each problem is one line naming its line number; the first refuses, exit 2):
  malformed     a line without the columns' number of fields, or a field that is not
                a number (t: finite; gossip t: a round >= 0; run, token: whole >= 0;
                sender, receiver: whole)
  unknown node  a sender or receiver outside 0..n-1 (never repaired)
  duplicate     a line identical to an earlier one
  backwards     a time before the previous line's of the same token (gossip: run)
  non-holder    a hop from a node that does not hold the token (the receiver of the
                token's previous hop, in time order)
  empty         no hop or message line
Then, refused without repair: token or run ids with a gap, tokens making different
numbers of hops, a hop the walk rule cannot make on the topology, a gossip message off
the graph's edges or missing from a round (every edge carries one at every round, unless
the header says '# gossip_schedule = "partial"'), a pairwise tick that is not one
exchange.

--repair: drop the malformed lines; drop the exact duplicates (the first copy stays);
sort each token's hops (each gossip run's messages) by time, ties in file order; then
drop each hop whose sender does not hold the token (the receiver of the last hop kept).
The report says how many lines each rule dropped or moved.

Not from a log: the task's utility (no values), --task sgd (its tracker reads the
model's updates), a run with faults (lost tokens and messages).
"""
#: The deployment's parameters offered as flags (the others: --set KEY=VALUE).
DEPLOYMENT = ("task", "protocol", "topology", "nodes", "walk", "epsilon", "delta", "seed")
HELP = {"task": "the task whose tracker accounts the log: sum (default), histogram, fraction, "
        "one-bit, ... (not sgd)",
        "nodes": "n: node ids are 0..n-1 (--trace-out writes it in the header)",
        "seed": "seed of what the accounting draws (a random topology, sampled observers, a "
        "random coalition); default: the header's, else fresh"}
NOT_PARAMS = ("command", "handler", "argv", "log", "repair", "json", "out", "pairs_out", "html",
              "plot", "set", "observer", "quiet")


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``account`` to the ``netdp`` parser."""
    acc = sub.add_parser("account", help=SUMMARY, description=DESCRIPTION, epilog=EPILOG,
                         formatter_class=argparse.RawDescriptionHelpFormatter,
                         argument_default=argparse.SUPPRESS)
    acc.add_argument("log", metavar="LOG", help="the log file (CSV with a '#' header)")
    acc.add_argument("--repair", action="store_true", help="mend what can be mended "
                     "(see below) and say so in the report, instead of refusing")
    specs = param_specs()
    dep = acc.add_argument_group("the deployment (override the log's header)")
    for name in DEPLOYMENT:
        add_flag(dep, name, specs[name], HELP.get(name, specs[name].help))
    dep.add_argument("--sigma", type=number, metavar="S", help="the noise std of one "
                     "contribution in units of the sensitivity, instead of --epsilon")
    dep.add_argument("--mechanism", metavar="NAME", help="the randomizer (as in simulate)")
    dep.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                     help="any other parameter of simulate, a TOML value (e.g. domain=8); "
                     "repeatable")
    track = acc.add_argument_group("privacy tracking")
    track.add_argument("--accountant", dest="accountants", action="append",
                       choices=specs["accountants"].choices, metavar="NAME",
                       help=specs["accountants"].help)
    add_flag(track, "convention", specs["convention"], specs["convention"].help)
    who = track.add_mutually_exclusive_group()
    who.add_argument("--observer", type=node, metavar="V", help="every node's loss "
                     "towards node V only, an id or a labelled graph's node label "
                     "(default: every ordered pair)")
    who.add_argument("--coalition", metavar="IDS|random:C", help=specs["coalition"].help)
    out = report_outputs(acc)
    out.add_argument("--plot", metavar="FILE.png", help="draw the histogram and ECDF of the "
                     "pairwise losses (.png, .pdf or .svg)")
    out.add_argument("--html", metavar="FILE.html", help="also write the log's report page "
                     "(the page of `netdp simulate --html`: the answer first, the figures, "
                     "the details; one self-contained file)")
    acc.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Parse -> ``netdp.account`` -> write the files -> print."""
    options: dict[str, Any] = {k: v for k, v in vars(args).items() if k not in NOT_PARAMS}
    params = {**parse_sets(getattr(args, "set", [])), **options}
    if "topology" in params:  # a relative file: here, else beside the log
        params["topology"] = located(params["topology"], args.log)
    targets = {name: Path(getattr(args, name)) for name in ("out", "pairs_out", "html")
               if name in args}
    for name in targets:
        check_writable(getattr(args, name), name.replace("_", "-"))
    plot = Path(args.plot) if "plot" in args else None
    if plot is not None:
        check_file_name(args.plot, "plot")
        check_image(plot, "plot")
        who = next((f for f in ("observer", "coalition") if f in args), None)
        check(who is None, "plot", f"draws the losses of every ordered pair; --{who} "
              "observes as one (no matrix): leave --plot out")
    labels = labels_path(targets["pairs_out"]) if "pairs_out" in targets else None
    written = [(name.replace("_", "-"), path) for name, path in targets.items()]
    check_distinct(written + [("plot", plot)], companions=[("pairs-out", labels, "labels")])
    check_not_inputs([*written, ("plot", plot), ("pairs-out", labels)],
                     [("LOG", args.log), *read_files(params)])
    whole = not any(f in args for f in ("observer", "coalition"))
    report = account(args.log, repair="repair" in args,
                     keep_pairs="pairs_out" in targets or plot is not None
                     or ("html" in targets and whole),
                     observer=getattr(args, "observer", None), **params)
    result = report.to_json()
    text = json.dumps(result, indent=2, allow_nan=False)
    if "pairs_out" in targets:
        write_pairs(targets["pairs_out"], labels, report)  # as simulate's
    if plot is not None:
        figures.save(pairs_plot(report.pairs, result, what=f"the log {args.log}"), plot,
                     param="plot")
    if "out" in targets:
        write_atomic(targets["out"], text + "\n", param="out")
    if "html" in targets:
        from netdp.run.page import run_page, write_page

        write_page(targets["html"], run_page(result, pairs=report.pairs,
                                             topology=report.topology,
                                             command=shlex.join(["netdp", *args.argv])
                                             if getattr(args, "argv", None) else None))
    print(text if "json" in args else report.text())
    if "html" in targets and "json" not in args:
        print(f"  report page written to {targets['html']}")
    return 0
