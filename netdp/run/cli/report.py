"""``netdp report``: the HTML page of a run's JSON or a sweep's folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from netdp.core.files import check_not_inputs, sweep_parts
from netdp.run.cli.simulate import check_writable

EPILOG = """\
examples:
  netdp simulate --json > run.json && netdp report run.json --html run.html
  netdp simulate -n 100 --seed 1 --pairs-out p.npy --out r.json
  netdp report r.json --pairs p.npy --html r.html   # with the pairs and heatmap figures
  netdp simulate --topology edges.txt --pairs-out q.npy --out q.json
  netdp report q.json --pairs q.npy --topology edges.txt --html q.html  # a graph file
  netdp sweep experiments/sweeps/figure1b_quick.toml --out out/fig1b
  netdp report out/fig1b --html fig1b.html

One self-contained file: tables, and the figures inline as SVG (the pairs and heatmap
figures of a run whose matrix is given, its loss by hop distance where the result has
it; a sweep's privacy-vs-n and utility-vs-eps presets where their x axis varies). It
needs no network to open and reads without JavaScript. `netdp simulate --html FILE` and
`netdp sweep --html FILE` write the same page beside their outputs. netdp opens no file
a JSON names: the heatmap of a run on a graph file needs --topology FILE.
Bad input exits with status 2 and writes nothing.
"""


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``report``."""
    rep = sub.add_parser("report", help="an HTML page of a run's JSON or a sweep's folder",
                         description="Write one self-contained HTML page of a result: the "
                         "answer first (the mean pairwise loss against the LDP baseline, its "
                         "q99 and worst pair, the utility), the figures that apply, utility, "
                         "privacy with its theoretical lines, faults, attacks and audits, "
                         "then the command, its configuration and provenance.", epilog=EPILOG,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    rep.add_argument("path", metavar="PATH", help="a run's JSON (simulate, account, attack or "
                     "audit --json / --out) or a folder written by `netdp sweep`")
    rep.add_argument("--html", required=True, metavar="OUT.html", help="the page to write "
                     "(atomically)")
    rep.add_argument("--pairs", metavar="FILE.npy", help="the run's n x n matrix (`netdp "
                     "simulate --pairs-out`): adds the pairs and heatmap figures")
    rep.add_argument("--topology", metavar="FILE", help="the run's graph file, for the "
                     "heatmap with --pairs when the run's graph is a file (netdp opens no "
                     "file a JSON names; a named graph, e.g. hypercube, is rebuilt)")
    rep.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Read PATH, render, write OUT.html, say where."""
    from netdp.run.page import page_of, write_page

    check_writable(args.html, "html")
    check_not_inputs([("html", args.html)], [*sweep_parts("PATH", args.path),
                                              ("pairs", args.pairs), ("topology", args.topology)])
    out = Path(args.html)
    write_page(out, page_of(args.path, args.pairs, args.topology))
    print(f"wrote {out}")
    return 0
