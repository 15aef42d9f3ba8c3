"""Build ``docs/cli.md``, the CLI reference, from the parser itself.

Every page is what ``netdp COMMAND --help`` prints, formatted at a fixed width so the
file is the same on every terminal::

    python -m netdp.run.clidoc > docs/cli.md          # regenerate
    python -m netdp.run.clidoc --check                # exit 1 if docs/cli.md is stale

argparse's layout changes a little between Python versions (3.13 writes ``-n, --nodes N``
where 3.11 writes ``--nodes N, -n N``), so the page records the Python it was made with;
under another version ``--check`` compares the commands and their options only.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from netdp.run.cli import build_parser

COLUMNS = 100
DEFAULT_PATH = Path("docs") / "cli.md"
_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"
_VERSION_LINE = re.compile(r"^<!-- generated with Python (\d+\.\d+) -->$", re.M)


@contextmanager
def _fixed_terminal() -> Iterator[None]:
    """argparse reads the width from ``COLUMNS``; pin it (and switch colour off)."""
    saved = {k: os.environ.get(k) for k in ("COLUMNS", "NO_COLOR")}
    os.environ["COLUMNS"] = str(COLUMNS)
    os.environ["NO_COLOR"] = "1"
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subcommands of ``parser``, in the order ``--help`` lists them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def help_pages(parser: argparse.ArgumentParser | None = None) -> dict[str, str]:
    """``{"netdp": top-level help, "netdp simulate": ..., ...}`` at the fixed width."""
    if parser is None:

        parser = build_parser()
    with _fixed_terminal():
        pages = {parser.prog: parser.format_help()}
        for sub in commands(parser).values():
            pages[sub.prog] = sub.format_help()
    return {name: "\n".join(line.rstrip() for line in text.rstrip().splitlines())
            for name, text in pages.items()}


def render(parser: argparse.ArgumentParser | None = None) -> str:
    """The whole Markdown page."""
    pages = help_pages(parser)
    out = [
        "# CLI reference",
        "",
        f"<!-- generated with Python {_PYTHON} -->",
        "This page is generated from the parser: do not edit it by hand. After changing a",
        "command's options, regenerate it from the repository root with",
        "",
        "```bash",
        "python -m netdp.run.clidoc > docs/cli.md",
        "```",
        "",
        "`tests/test_docs.py` fails while it is stale. Each section is exactly what",
        f"`COMMAND --help` prints in a terminal {COLUMNS} columns wide. For a guided tour, see",
        "[the quickstart](quickstart.md).",
        "",
        "Commands: " + ", ".join(f"[`{name}`](#{_slug(name)})" for name in pages) + ".",
        "",
    ]
    for name, text in pages.items():
        out += [f"## {name}", "", "```text", text, "```", ""]
    return "\n".join(out + JSON_NOTES)


#: What changed in the ``--json`` object, schema by schema (appended to the page).
JSON_NOTES = [
    "## JSON output",
    "",
    "`netdp simulate --json` prints one object; its `schema` field numbers the layout.",
    "",
    "- **The answer first** (schema 2 unchanged): each `privacy.empirical[*]` summary gains",
    "  `below_ldp`, the share of its ordered pairs whose loss is below the LDP baseline's",
    "  mean (`privacy.ldp.mean`); the report pages open with it (docs/report.md). No",
    "  number moved.",
    "- **Provenance** (schema 2 unchanged; `attack` and `audit` schema 1): every JSON",
    "  result (`simulate`, `account`, `attack`, `audit`, `bounds`) ends with a",
    "  `provenance` object: `netdp` (the version), `commit` and `dirty` (the git checkout",
    "  netdp runs from, null when installed), `python`, `platform`, `host`, and the",
    "  versions of `numpy`, `scipy`, `numba`, `dp_accounting`, `networkx`, `pandas`,",
    "  `matplotlib` and `dask` (docs/sweeps.md, \"Provenance\"). The JSON of `attack` and",
    "  `audit` gains `schema` (1), `version`, `seed` and `config` (the command's",
    "  parameters) around its figures, as `simulate`'s has. No number moved.",
    "- **Time by part** (schema 2 unchanged): `timing` is new: `setup_s` (graph, gossip",
    "  matrix, data), `engine_s` (the walk or gossip rounds and each run's computation",
    "  along them), `accounting_s` (the privacy tracker), `report_s` (utility, report, a",
    "  faulty run's fault-free baseline) and `total_s`, which the four add up to at most.",
    "  `runtime_s` keeps its meaning (the runs' loop). The text report's footer prints the",
    "  total and the four parts. Like `runtime_s`, `timing` differs between two runs of a",
    "  seed; no other number moved.",
    "- **Your own network** (schema 2 unchanged): a run on an explicit graph (a named",
    "  graph, a graph file or a networkx graph) has a `graph` object beside `topology`:",
    "  `name`, `nodes`, `edges`, `directed`, `weighted`, `sha256` and, up to 10,000 nodes",
    "  whose labels are not their ids, `labels` (the node of each id, docs/your-network.md).",
    "  `config` lists `graph_format` and `weight` (null unless given); a networkx graph's",
    "  `config.topology` is its record `networkx:NAME (n nodes, m edges, sha256 ...)`. No",
    "  number of an earlier run moved.",
    "- **Sound accounting** (netdp 0.3, schema 2 unchanged): `config.convention` is new",
    "  (`sound`, the default, or `reference`), and so is the accountant `exact`. Under",
    "  `--convention reference` every number of every earlier golden command is unchanged",
    "  (`tests/test_golden.py` reruns them all with it, as `NAME-reference`). Under the",
    "  default, what moved: the walk trackers' `privacy.empirical` figures (a walk `sum` on",
    "  the complete graph and on any graph, and the report-based tasks' shuffle-window",
    "  trackers on the complete graph and on any graph): each view's `m - 1` unknown draws,",
    "  every visit",
    "  counted, the exact law of a node's visits, and the stretch before each observer's first",
    "  visit, so the figures rise (docs/accounting-exactness.md); their `delta` is the",
    "  exact total of the entries. `privacy.empirical[*].ratio_to_exact` (`mean`, `q90`,",
    "  `max` of each pair's figure over its exact one) appears beside `--accountant exact`.",
    "  The ring's (Alg. 1) kov figures, gossip, sgd and `netdp bounds` did not move. The",
    "  report-based tasks on a graph other than the complete graph reach their LDP cap on",
    "  sparse graphs (docs/graph-reports.md).",
    "- **schema 2** (netdp 0.2): `schema` is new. `config` holds the common parameters",
    "  and those of the run's task only: a `sum` run no longer lists `domain`, `dataset`,",
    "  `lr`, ... (the other tasks' parameters), and an `sgd` run no longer lists `mechanism`",
    "  (its noise is Gaussian by construction). No other key was renamed or removed: `seed`,",
    "  `engine`, `topology`, `mechanism`, `hops`, `runtime_s`, `utility`, `privacy` (with",
    "  `empirical`, `ldp`, `theory`, `note`, `coalitions`), `runs`, and for sgd `dataset`,",
    "  `model`, `curves` and `curves_files` keep their names and meaning; the numbers of a",
    "  seed are those of schema 1 (`tests/test_golden.py` checks 27 commands to 1e-12).",
    "  One deliberate change since: a walk `sum` on any graph other than the ring and the",
    "  complete graph now has a pairwise tracker (the taboo-chain generalisation of the",
    "  reference tracker), so its `privacy.empirical` lists kov (and rdp on request) where",
    "  schema 1 had none, and `privacy.note` says how the observers were covered, where it",
    "  said that only the LDP baseline was reported. The golden test allows exactly these",
    "  two keys to change, for its two such commands; every other number is unchanged.",
    "  Likewise the report-based tasks (`histogram`, `fraction`, `multidim`, `itemsets`,",
    "  `heavy-hitters`) on any graph now have a pairwise tracker (the shuffle-window",
    "  tracker with taboo-chain presence rates, docs/graph-reports.md): `privacy.empirical`",
    "  lists kov with its `by_distance` rows where it was empty, and `privacy.note` says",
    "  how the observers were covered (absent when every observer was), where it said that",
    "  only the LDP baseline was reported; their `config` lists `sources` (null unless",
    "  given). The golden command `hist-graph-cms` changes in these two keys only; runs on",
    "  the ring and the complete graph are unchanged.",
    "  Added since, with no number of a fault-free run changed: `config` lists the fault",
    "  parameters (`loss`, `churn`, `crash`, `slow`, `on_loss`, `timeout`, `retries`); a run",
    "  with faults has a `faults` object (counts summed over runs, `completed`, the",
    "  `lost_token_log`, each run's log, and `fault_free`: the same runs' `utility` and",
    "  `privacy` without faults), and a run that lost a token has `completed: false` in its",
    "  `runs` record; when no run completed, `utility` and `privacy` are",
    "  `{completed: false, note}` (see docs/faults.md).",
    "- **schema 1** (netdp 0.1, no `schema` field): `config` listed every parameter of every",
    "  task.",
    "",
]


def structure(text: str) -> dict[str, list[str]]:
    """Commands of a rendered page and the option strings each one lists (sorted)."""
    out: dict[str, list[str]] = {}
    for match in re.finditer(r"^## (.+?)\n\n```text\n(.*?)\n```$", text, re.M | re.S):
        flags = re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", match.group(2))
        out[match.group(1)] = sorted(set(flags))
    return out


def stale(path: Path, parser: argparse.ArgumentParser | None = None) -> str | None:
    """``None`` if ``path`` matches the parser, else why not (one line)."""
    try:
        current = path.read_text(encoding="utf-8")
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror}"
    fresh = render(parser)
    if current == fresh:
        return None
    made = _VERSION_LINE.search(current)
    if made and made.group(1) != _PYTHON and structure(current) == structure(fresh):
        return None  # another Python lays help out differently; same commands and options
    return f"{path} is stale: run `python -m netdp.run.clidoc > {path}`"


def main(argv: list[str] | None = None) -> int:
    """Print the page, or with ``--check [PATH]`` exit 1 when PATH is stale."""
    ap = argparse.ArgumentParser(prog="python -m netdp.run.clidoc", description=__doc__.split(
        "\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", nargs="?", const=str(DEFAULT_PATH), metavar="PATH",
                    help=f"compare PATH (default: {DEFAULT_PATH}) with the parser instead "
                    "of printing; exit 1 if it differs")
    args = ap.parse_args(argv)
    if args.check is None:
        sys.stdout.flush()
        sys.stdout.buffer.write(render().encode("utf-8"))  # whatever the locale
        return 0
    problem = stale(Path(args.check))
    if problem:
        print(problem, file=sys.stderr)
        return 1
    print(f"{args.check} is up to date")
    return 0


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


if __name__ == "__main__":
    sys.exit(main())
