"""Structure-aware fuzzing of every reader (issue 39): valid files, mutated.

Each case starts from a valid input of one reader (a trace log, a report JSON, a sweep
folder's manifest or rows, a GraphML, GML, adjacency-list or edge-list file, a contact
trace, a TOML config, sweep spec or topology spec, a ``.npy`` matrix, a data file, an
environment variable, a folder of snapshots, a ``--scheduler`` address) and mutates its
structure: a value of another type, nesting a few thousand levels deep, a size
multiplied, an integer at every width (int32, int64, beyond int64, beyond Python's
4300-digit limit for ``int(str)``), an encoding (a BOM, UTF-16, invalid UTF-8, a NUL),
truncation, or a special file in its place (a FIFO, ``/dev/zero``, a folder, a loop of
symbolic links). A malformed ``--scheduler`` address must be refused naming it
(:attr:`Case.refuse`). The command is run in a folder of its own with
:func:`test_fuzz_cli.check_case` (exit 0, 1 or 2, never a traceback, one line naming a
parameter given with 2, the CPU-time bound), and the disclosure property on top:

* a marker, ``NETDP-SECRET-<random>``, is in every file of the case the user does not
  name on the command line (beside the input and in the working folder), and the
  mutations make the named files point at them (a log header's ``topology``, a JSON's
  ``config.topology`` or ``data_file``, an absolute and a relative path): the marker may
  appear in no stdout, stderr or output file;
* another marker is written into the named file's content (a field, a key, a header
  value): it may appear in no stderr line, and with exit 2 in nothing at all (a refusal
  echoes no content; a run that succeeds may draw what its input holds, as ``report``
  draws its JSON).

:func:`cases` draws the cases from a seed; tests/test_fuzz_readers.py runs a small
seeded tier and ``python tests/fuzz_long.py --readers`` the long run (docs/fuzzing.md).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import random
import re
import shutil
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
from test_fuzz_cli import _quiet, check_case, make_inputs

from netdp.run.cli import main

#: Integers at every width: int32 and int64 edges, beyond int64, beyond Python's digit
#: limit for int(str) (4300 digits).
WIDTHS = [0, -1, 1, 2**31 - 1, 2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63, -(2**63) - 1,
          2**64, 10**30, 10**400, 10**5000]
FLOATS = ["1e300", "-1e300", "1e-320", "5e-324", "nan", "inf", "-inf", "-0.0", "1e999",
          "0.5", "1.5"]
DEPTHS = [40, 150, 1000, 5000]
#: Largest file a mutation makes by repeating a line (4 MB: beyond, the generator's own
#: memory, not netdp's, is what a case measures).
MAX_BYTES = 4_000_000
#: Special files put where a named file is read (each made by :func:`_special`).
SPECIALS = ["fifo", "dev-zero", "folder", "link-loop", "dangling-link", "empty"]
_NUMBER = re.compile(rb"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")


@dataclasses.dataclass
class Case:
    """One fuzzed command: the reader, the files of the case (name -> bytes, or a special
    file's kind; ``snaps/a.txt``: a file in the folder ``snaps``), the command line
    (``{name}`` for a file of the case) and the environment."""

    reader: str
    argv: list[str]
    files: dict[str, bytes | str]
    env: dict[str, str] = dataclasses.field(default_factory=dict)
    what: str = ""
    #: a parameter the case must be refused on (exit 2, its one line naming it), if any
    refuse: str = ""

    def line(self) -> str:
        """The case in one line (for a failure's report)."""
        return f"[{self.reader}: {self.what}] netdp {' '.join(self.argv)}"


# ------------------------------------------------------------------- the valid seeds

def make_seeds(root: Path) -> dict[str, bytes]:
    """The valid inputs the readers' cases start from, by name (files written in
    ``root`` by netdp itself where it writes that kind of file)."""
    files = make_inputs(root)
    gossip_log, account_json = root / "gossip-log.csv", root / "account.json"
    with _quiet():
        assert main(["simulate", "-n", "6", "--protocol", "gossip", "--topology", "cycle",
                     "--seed", "2", "--trace-out", str(gossip_log)]) == 0
        assert main(["account", files["log"], "-n", "6", "--out", str(account_json)]) == 0
    seeds = {name: Path(files[key]).read_bytes() for name, key in
             (("log.csv", "log"), ("run.json", "run"), ("spec.toml", "spec"),
              ("contacts.csv", "contacts.csv"), ("pairs.npy", "pairs"))}
    seeds["gossip-log.csv"] = gossip_log.read_bytes()
    seeds["account.json"] = account_json.read_bytes()
    sweep = Path(files["sweep"])
    seeds["sweep.json"] = (sweep / "sweep.json").read_bytes()
    seeds["rows.jsonl"] = sorted((sweep / "rows").glob("part-*.jsonl"))[0].read_bytes()
    edges = [(u, (u + 1) % 6) for u in range(6)] + [(0, 3)]
    seeds["edges.txt"] = "".join(f"{u} {v}\n" for u, v in edges).encode()
    seeds["weighted.txt"] = "".join(f"{u} {v} {1 + u}\n" for u, v in edges).encode()
    seeds["graph.adjlist"] = "".join(f"{u} {(u + 1) % 6}\n" for u in range(6)).encode()
    seeds["graph.graphml"] = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<graphml xmlns="http://graphml.graphdrawing'
        '.org/xmlns">\n<key id="w" for="edge" attr.name="weight" attr.type="double"/>\n'
        '<graph edgedefault="undirected">\n'
        + "".join(f'<node id="n{u}"/>\n' for u in range(6))
        + "".join(f'<edge source="n{u}" target="n{v}"><data key="w">{u + 1}</data></edge>\n'
                  for u, v in edges) + "</graph>\n</graphml>\n").encode()
    seeds["graph.gml"] = ("graph [\n" + "".join(f"  node [ id {u} label \"{u}\" ]\n"
                                               for u in range(6))
                          + "".join(f"  edge [ source {u} target {v} weight {u + 1} ]\n"
                                    for u, v in edges) + "]\n").encode()
    seeds["config.toml"] = (b'task = "sum"\nnodes = 6\nsteps = 30\nseed = 1\nepsilon = 1.0\n'
                            b'range = [0.0, 1.0]\ntopology = "complete"\n')
    seeds["topology.toml"] = (b'description = "a cycle"\ngenerator = "cycle_graph"\n'
                              b'size = "n"\ndefault_nodes = 6\n')
    seeds["data.csv"] = b"x,y\n" + b"".join(f"{i / 10},{i}\n".encode() for i in range(6))
    seeds["sets.csv"] = b"items\n" + b"".join(f"{i} {i + 1}\n".encode() for i in range(6))
    seeds["dataset.csv"] = b"a,b,label\n" + b"".join(
        f"{i % 3},{i / 7:.3f},{i % 2}\n".encode() for i in range(40))
    buffer = io.BytesIO()
    np.save(buffer, 0.5 * np.eye(6) + 0.1)
    seeds["covariance.npy"] = buffer.getvalue()
    seeds["secret-pairs.txt"] = b"0 1\n1,2\n# a comment\n3 4  # and another\n"
    seeds["matrix.txt"] = "".join(f"{u} {(u + 1) % 6} 0.5\n{u} {u} 0.5\n"
                                  for u in range(6)).encode()
    seeds["loss.csv"] = b"src,dst,p\n0,1,0.1\n1,2,0.2\n"
    seeds["churn.csv"] = b"node,down,up\n1,2,4\n3,1,2\n"
    snaps = root / "snaps"
    snaps.mkdir(exist_ok=True)
    for name, data in SNAPSHOTS.items():
        (snaps / name).write_bytes(data)
    snaps_log = root / "snaps-log.csv"
    with _quiet():
        assert main(["simulate", "--topology", str(snaps), "--steps", "30", "--seed", "3",
                     "--trace-out", str(snaps_log)]) == 0
    seeds["snaps-log.csv"] = snaps_log.read_bytes()
    return seeds


#: The valid folder of snapshots (``--topology DIR``): three edge lists on nodes 0..5,
#: each disconnected, their union connected.
SNAPSHOT_EDGES = [[(0, 1), (1, 2), (2, 3)], [(3, 4), (4, 5), (5, 0)], [(0, 3), (1, 4), (2, 5)]]
SNAPSHOTS = {f"{k}.txt": "".join(f"{u} {v}\n" for u, v in edges).encode()
             for k, edges in enumerate(SNAPSHOT_EDGES)}


#: reader -> (the seed file(s) it mutates, the command lines that read it). ``{f}`` is
#: the mutated file; ``{run.json}`` / ``{pairs.npy}`` a valid companion; ``{sweep}`` a
#: copy of the valid sweep folder with the mutated manifest or row file in it.
READERS: dict[str, tuple[list[str], list[list[str]]]] = {
    "log": (["log.csv", "gossip-log.csv"], [
        ["account", "{f}", "-n", "6"], ["account", "{f}", "-n", "6", "--json"],
        ["account", "{f}", "-n", "6", "--repair"],
        ["account", "{f}", "-n", "6", "--pairs-out", "p.npy", "--out", "a.json"]]),
    "report-json": (["run.json", "account.json"], [
        ["report", "{f}", "--html", "page.html"],
        ["report", "{f}", "--pairs", "{pairs.npy}", "--html", "page.html"],
        ["plot", "--preset", "by-distance", "--result", "{f}", "--out", "fig.png"],
        ["plot", "--preset", "pairs", "--pairs", "{pairs.npy}", "--result", "{f}", "--out",
         "fig.png"]]),
    "sweep": (["sweep.json", "rows.jsonl"], [
        ["results", "{sweep}"], ["results", "{sweep}", "--csv", "t.csv"],
        ["report", "{sweep}", "--html", "page.html"],
        ["plot", "{sweep}", "--preset", "privacy-vs-n", "--out", "fig.png"],
        ["sweep", "{spec.toml}", "--out", "{sweep}", "--backend", "serial",
         "--no-progress"]]),
    "graph": (["edges.txt", "weighted.txt", "graph.adjlist", "graph.graphml", "graph.gml"], [
        ["simulate", "--topology", "{f}", "--steps", "30"],
        ["simulate", "--topology", "{f}", "--protocol", "gossip", "--steps", "30"],
        ["account", "{log.csv}", "-n", "6", "--topology", "{f}"]]),
    "contacts": (["contacts.csv"], [
        ["simulate", "--topology", "{f}", "--format", "contacts", "--steps", "30"],
        ["simulate", "--topology", "{f}", "--format", "contacts", "-n", "6"]]),
    "config": (["config.toml"], [["simulate", "--config", "{f}"],
                                 ["plot", "--preset", "distance", "--config", "{f}",
                                  "--out", "fig.png"]]),
    "spec": (["spec.toml"], [["sweep", "{f}", "--out", "swept", "--backend", "serial",
                              "--no-progress"],
                             ["sweep", "{f}", "--out", "swept", "--dry-run"]]),
    "topology-spec": (["topology.toml"], [["simulate", "--topology", "{f}", "--steps", "30"],
                                          ["simulate", "--topology", "{f}", "-n", "6"]]),
    "npy": (["pairs.npy"], [
        ["plot", "--preset", "pairs", "--pairs", "{f}", "--out", "fig.png"],
        ["plot", "--preset", "heatmap", "--pairs", "{f}", "--result", "{run.json}", "--out",
         "fig.png"],
        ["report", "{run.json}", "--pairs", "{f}", "--html", "page.html"],
        ["simulate", "--protocol", "gossip", "-n", "6", "--gossip-matrix", "{f}"]]),
    "covariance": (["covariance.npy"], [
        ["simulate", "--protocol", "gossip", "-n", "6", "--topology", "cycle", "--sigma", "1",
         "--steps", "3", "--noise-covariance", "{f}"]]),
    "secret-pairs": (["secret-pairs.txt"], [
        ["simulate", "--protocol", "gossip", "-n", "6", "--topology", "cycle", "--sigma", "1",
         "--steps", "3", "--correlated-noise", "1", "--secret-pairs", "{f}"]]),
    "matrix-text": (["matrix.txt"], [
        ["simulate", "--protocol", "gossip", "-n", "6", "--topology", "cycle",
         "--gossip-matrix", "{f}"]]),
    "data": (["data.csv", "sets.csv", "dataset.csv"], [
        ["simulate", "-n", "6", "--data-file", "{f}"],
        ["simulate", "-n", "6", "--data-file", "{f}", "--column", "1"],
        ["simulate", "-n", "6", "--task", "itemsets", "--data-file", "{f}"],
        ["simulate", "-n", "6", "--task", "sgd", "--dataset", "{f}"]]),
    "faults": (["loss.csv", "churn.csv"], [
        ["simulate", "-n", "6", "--steps", "30", "--loss", "file:{f}"],
        ["simulate", "-n", "6", "--steps", "30", "--churn", "file:{f}"]]),
    "snapshot-folder": ([], [  # {dir}: a folder of snapshots (snapshot_case)
        ["simulate", "--topology", "{dir}", "--steps", "30"],
        ["simulate", "--topology", "{dir}", "--protocol", "gossip", "--steps", "30"],
        ["simulate", "--topology", "{dir}", "--steps", "30", "--snapshot-period", "3"],
        ["simulate", "--topology", "{dir}", "--steps", "30", "--after", "last"],
        ["account", "{snaps-log.csv}", "-n", "6", "--topology", "{dir}"]]),
    "scheduler": ([], [  # {addr}: a --scheduler address (scheduler_case)
        ["simulate", "--topology", "{edges.txt}", "--steps", "30", "--scheduler", "{addr}"],
        ["simulate", "--topology", "{edges.txt}", "--steps", "30", "--scheduler={addr}"],
        ["sweep", "{spec.toml}", "--out", "swept", "--backend", "dask", "--no-progress",
         "--scheduler", "{addr}"]]),
    "library": ([], []),  # netdp's public functions called with wrong types
    "environment": ([], [["plot", "--preset", "distance", "-n", "6", "--seed", "1", "--out",
                          "fig.png"], ["simulate", "-n", "6", "--steps", "30"],
                         ["report", "{run.json}", "--html", "page.html"]]),
}
ENVIRONMENT = ["MPLBACKEND", "NETDP_TIME_LIMIT", "NETDP_MEMORY_LIMIT"]


# ------------------------------------------------------------------------ mutations

def _marker(rng: random.Random) -> str:
    return f"NETDP-SECRET-{rng.getrandbits(48):012x}"


def _big(value: int) -> str:
    return str(value) if abs(value) < 10**4000 else "1" + "0" * 5000


def _number(rng: random.Random) -> str:
    return _big(rng.choice(WIDTHS)) if rng.random() < 0.6 else rng.choice(FLOATS)


def _weird_json(rng: random.Random, secret: str, paths: list[str]) -> str:
    """A JSON value (as text) of a random type or size."""
    kind = rng.randrange(9)
    if kind == 0:
        return _big(rng.choice(WIDTHS))
    if kind == 1:
        return rng.choice(["NaN", "Infinity", "-Infinity", "1e999", "-0.0", "1e-320"])
    if kind == 2:
        depth = rng.choice(DEPTHS)
        return "[" * depth + "1" + "]" * depth
    if kind == 3:
        depth = rng.choice(DEPTHS)
        return '{"a":' * depth + "1" + "}" * depth
    if kind == 4:
        return json.dumps(secret)
    if kind == 5:
        return json.dumps(rng.choice(paths))
    if kind == 6:
        return "[" + ",".join(["1"] * rng.choice([0, 1, 10**4, 10**5])) + "]"
    if kind == 7:
        return rng.choice(["null", "true", "false", '""', "{}", "[]", '"x"', "1.5"])
    return json.dumps({secret: [secret, 1]})


def _json_paths(value, at: tuple = ()) -> Iterator[tuple]:
    yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _json_paths(item, (*at, key))
    elif isinstance(value, list):
        for i, item in enumerate(value[:20]):
            yield from _json_paths(item, (*at, i))


def mutate_json(text: bytes, rng: random.Random, secret: str, paths: list[str]) -> tuple[
        bytes, str]:
    """A JSON document with one value (or key) replaced by a value of another type, depth
    or size; the text is spliced so that any integer or literal can be written."""
    doc = json.loads(text)
    lines = [text.decode().rstrip("\n")] if not isinstance(doc, dict | list) else None
    if lines is not None or text.lstrip()[:1] not in (b"{", b"["):
        return text, "not a container"
    where = rng.choice(list(_json_paths(doc)))
    action = rng.randrange(4)
    sentinel = "\x00SPLICE\x00"
    if not where:
        return _weird_json(rng, secret, paths).encode(), "the whole document"
    parent = doc
    for key in where[:-1]:
        parent = parent[key]
    last = where[-1]
    if action == 0 and isinstance(parent, dict):
        del parent[last]
        what = f"without {'/'.join(map(str, where))}"
    elif action == 1 and isinstance(parent, dict):
        parent[secret] = parent.pop(last)
        what = f"key {'/'.join(map(str, where))} renamed"
    else:
        parent[last] = sentinel
        what = f"{'/'.join(map(str, where))} replaced"
    out = json.dumps(doc, indent=1)
    value = _weird_json(rng, secret, paths)
    out = out.replace(json.dumps(sentinel), value, 1)
    return out.encode(), f"{what}: {value[:40]}"


def mutate_lines(text: bytes, rng: random.Random, secret: str, paths: list[str],
                 comment: bytes = b"#") -> tuple[bytes, str]:
    """A line-structured file (CSV, log, edge list, GML, GraphML, TOML) with a number,
    a field, a line or the line count changed."""
    lines = text.split(b"\n")
    action = rng.randrange(9)
    i = rng.randrange(len(lines))
    numbers = [(k, m) for k, line in enumerate(lines) for m in _NUMBER.finditer(line)]
    if action <= 2 and numbers:  # a number at another width or kind
        k, m = rng.choice(numbers)
        value = _number(rng).encode() if action < 2 else secret.encode()
        lines[k] = lines[k][:m.start()] + value + lines[k][m.end():]
        return b"\n".join(lines), f"line {k + 1}: a number -> {value[:30]!r}"
    if action == 3:  # a field or value made the secret, or a path to a secret file
        fill = rng.choice([secret, *paths]).encode()
        parts = re.split(rb"([,= \t])", lines[i])
        j = rng.randrange(0, len(parts), 2)
        parts[j] = fill
        lines[i] = b"".join(parts)
        return b"\n".join(lines), f"line {i + 1}: a field -> {fill[:30]!r}"
    if action == 4:  # the line count multiplied
        times = min(rng.choice([2, 100, 10**4, 10**5]), MAX_BYTES // (len(lines[i]) + 1))
        return b"\n".join(lines[:i] + [lines[i]] * times + lines[i + 1:]), (
            f"line {i + 1} x {times}")
    if action == 5:
        del lines[i]
        return b"\n".join(lines), f"line {i + 1} removed"
    if action == 6:  # a header line naming a file (a log's, a comment elsewhere)
        key = rng.choice(["topology", "data_file", "gossip_matrix", "dataset", "loss",
                          "churn", "config"])
        lines.insert(min(i, 3), comment + f' {key} = "{rng.choice(paths)}"'.encode())
        return b"\n".join(lines), f"a line {key} = a path"
    if action == 7:  # a nested value
        depth = rng.choice(DEPTHS)
        nested = b"[" * depth + b"1" + b"]" * depth
        lines.insert(min(i, 3), comment + b" epsilon = " + nested)
        return b"\n".join(lines), f"a header value nested {depth} deep"
    cut = rng.randrange(len(lines[i]) + 1)  # a line cut, and a very long line
    lines[i] = lines[i][:cut] + (b"9" * rng.choice([0, 70_000]))
    return b"\n".join(lines), f"line {i + 1} cut at {cut}"


def mutate_bytes(text: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Encodings and truncation."""
    action = rng.randrange(6)
    if action == 0:
        return b"\xef\xbb\xbf" + text, "a UTF-8 BOM"
    if action == 1:
        try:
            return text.decode().encode("utf-16"), "UTF-16"
        except UnicodeDecodeError:
            return text[::-1], "reversed"
    if action == 2:
        at = rng.randrange(len(text) + 1)
        return text[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00"]) + text[at:], (
            f"an invalid byte at {at}")
    if action == 3:
        at = rng.randrange(len(text) + 1)
        return text[:at], f"truncated at {at} of {len(text)}"
    if action == 4:
        return text.replace(b"\n", b"\r\n"), "CRLF"
    return text.replace(b"\n", b"\r"), "CR line ends"


def mutate_npy(text: bytes, rng: random.Random) -> tuple[bytes, str]:
    """A ``.npy`` file of another dtype, shape, header or size."""
    action = rng.randrange(6)
    if action == 0:
        dtype = rng.choice(["int8", "int64", "uint64", "float16", "complex64", "object",
                            "U3", "bool", "datetime64[s]"])
        try:
            array = np.ones((6, 6)).astype(dtype)
        except (TypeError, ValueError):
            array = np.ones((6, 6))
        return _npy(array), f"dtype {dtype}"
    if action == 1:
        shape = rng.choice([(0, 0), (6,), (6, 5), (1, 6, 6), (3000, 3000), (2**31, 0)])
        try:
            return _npy(np.zeros(shape)), f"shape {shape}"
        except (MemoryError, ValueError):
            return text, "unchanged"
    if action == 2:  # a header that lies about the size
        head = text[:128].replace(b"(6, 6)", rng.choice([b"(100000, 100000)", b"(6, 6, 6)",
                                                         b"(-1, 6)", b"(99999999999999999999, 1)"]))
        return head + text[128:], "a header shape that lies"
    if action == 3:
        return _npy(np.full((6, 6), rng.choice([np.nan, np.inf, -1.0, 1e308, 5e-324]))), (
            "values out of range")
    if action == 4:  # a pickled object array (np.load must refuse pickles)
        array = np.empty(2, dtype=object)
        array[:] = [{"a": 1}, "x"]
        return _npy(array), "a pickle"
    return text[:rng.randrange(len(text))], "truncated"


def _npy(array: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=array.dtype.hasobject)
    return buffer.getvalue()


def mutate_env(rng: random.Random, secret: str) -> tuple[dict[str, str], str]:
    """An environment variable netdp (or matplotlib under it) reads, set to a bad value
    (no marker: the environment is the user's own input, as the command line is, and a
    refusal may echo it)."""
    key = rng.choice(ENVIRONMENT)
    value = rng.choice(["", " ", "nope", "ucx", "module://missing", "agg", "Agg", "tkagg",
                        "\x7f", "1e300", "-1", "0", "nan", "inf", "9" * 5000, "1e-320",
                        "5 GB", "1.5TB", "2**70", "tls://x"])
    return {key: value}, f"{key}={value[:30]!r}"


def _as_format(edges: list[tuple[int, int]], kind: str, weighted: bool = False) -> bytes:
    """The graph of ``edges`` on nodes 0..5 in the file format ``kind``."""
    if kind == "graphml":
        key = ('<key id="w" for="edge" attr.name="weight" attr.type="double"/>\n'
               if weighted else "")
        return ('<?xml version="1.0" encoding="UTF-8"?>\n<graphml xmlns="http://graphml.'
                f'graphdrawing.org/xmlns">\n{key}<graph edgedefault="undirected">\n'
                + "".join(f'<node id="{u}"/>\n' for u in range(6))
                + "".join(f'<edge source="{u}" target="{v}">'
                          + (f'<data key="w">{u + 1}</data>' if weighted else "") + "</edge>\n"
                          for u, v in edges) + "</graph>\n</graphml>\n").encode()
    if kind == "gml":
        return ("graph [\n" + "".join(f'  node [ id {u} label "{u}" ]\n' for u in range(6))
                + "".join(f"  edge [ source {u} target {v}"
                          + (f" weight {u + 1}" if weighted else "") + " ]\n"
                          for u, v in edges) + "]\n").encode()
    if kind == "adjlist":
        return "".join(f"{u} {v}\n" for u, v in edges).encode()
    return "".join(f"{u} {v}" + (f" {u + 1}" if weighted else "") + "\n"
                   for u, v in edges).encode()


#: The extension of each format's file in a folder of snapshots.
SUFFIX = {"edges": ".txt", "graphml": ".graphml", "gml": ".gml", "adjlist": ".adjlist"}
#: Special files put among a folder's snapshots (:func:`_special`; ``secret-link``: a link
#: to a file outside the folder that holds the marker of the files the user did not name).
FOLDER_SPECIALS = [*SPECIALS, "secret-link"]


def snapshot_case(rng: random.Random, secret: str, paths: list[str]) -> tuple[
        dict[str, bytes | str], str]:
    """The files of a folder of snapshots (``snaps/...``), the valid folder mutated in
    its structure: a file's content (:func:`mutate_lines`, :func:`mutate_bytes`), mixed
    formats, a name without a known extension, a hidden file, a subfolder, an empty
    folder, a special file among the files, a few hundred files, weighted and unweighted
    files mixed, node sets that differ."""
    files: dict[str, bytes | str] = {f"snaps/{k}": v for k, v in SNAPSHOTS.items()}
    names = sorted(files)
    action = rng.randrange(12)
    if action == 0:  # a file's content mutated
        name = rng.choice(names)
        data = files[name]
        assert isinstance(data, bytes)
        if rng.random() < 0.3:
            files[name], what = mutate_bytes(data, rng)
        else:
            files[name], what = mutate_lines(data, rng, secret, paths)
        what = f"{name}: {what}"
    elif action == 1:  # mixed formats (same edges), one of them mutated sometimes
        files = {}
        kinds = []
        for k, edges in enumerate(SNAPSHOT_EDGES):
            kind = rng.choice(list(SUFFIX))
            kinds.append(kind)
            files[f"snaps/{k}{SUFFIX[kind]}"] = _as_format(edges, kind)
        what = f"formats {', '.join(kinds)}"
        if rng.random() < 0.4:
            name = rng.choice(sorted(files))
            data = files[name]
            assert isinstance(data, bytes)
            files[name], more = mutate_lines(data, rng, secret, paths,
                                             b"<!--" if name.endswith(".graphml") else b"#")
            what += f"; {name}: {more}"
    elif action == 2:  # a name without a known extension
        name = rng.choice(["snaps/3.dat", "snaps/README", "snaps/3.TXT", "snaps/3.txt~",
                           "snaps/3.json", "snaps/3.npy", "snaps/3."])
        files[name] = rng.choice([SNAPSHOTS["0.txt"], f"{secret}\n".encode(), b""])
        what = f"{name} among the files"
    elif action == 3:  # a hidden file (skipped), valid or not
        files[rng.choice(["snaps/.hidden.txt", "snaps/.DS_Store", "snaps/..txt"])] = (
            rng.choice([b"\x00\x01" * 10, f"{secret} x\n".encode(), b"0 9\n"]))
        what = "a hidden file"
    elif action == 4:  # a subfolder (skipped), empty or holding a snapshot
        if rng.random() < 0.5:
            files["snaps/sub"] = "folder"
        else:
            files["snaps/sub/9.txt"] = b"0 7\n7 8\n"
        what = "a subfolder"
    elif action == 5:  # an empty folder, or a folder of hidden files only
        files = {"snaps": "folder"} if rng.random() < 0.5 else {"snaps/.a.txt": b"0 1\n"}
        what = "no snapshot"
    elif action == 6:  # a special file among the files
        kind = rng.choice(FOLDER_SPECIALS)
        name = rng.choice(["snaps/1.txt", "snaps/3.txt", "snaps/z.graphml"])
        files[name] = kind
        what = f"{name} is {kind}"
    elif action == 7:  # many files (a few hundred, tiny)
        count = rng.choice([50, 200, 400])
        files = {f"snaps/{k:04d}.txt": f"{k % 6} {(k + 1) % 6}\n".encode()
                 for k in range(count)}
        what = f"{count} files"
    elif action == 8:  # weighted and unweighted files mixed
        k = rng.randrange(3)
        kind = rng.choice(list(SUFFIX))
        del files[f"snaps/{k}.txt"]
        files[f"snaps/{k}{SUFFIX[kind]}"] = _as_format(SNAPSHOT_EDGES[k], kind, True)
        what = f"snapshot {k} weighted ({kind})"
    elif action == 9:  # every file weighted, a weight of another width or kind
        files = {f"snaps/{k}.txt": _as_format(e, "edges", True)
                 for k, e in enumerate(SNAPSHOT_EDGES)}
        name = rng.choice(sorted(files))
        value = _number(rng)
        files[name] = bytes(files[name]).replace(b" 1\n", f" {value}\n".encode(), 1)
        what = f"weighted; {name}: a weight {value[:20]}"
    elif action == 10:  # node sets that differ
        name = rng.choice(names)
        files[name] = rng.choice([b"6 7\n7 8\n", b"a b\nb c\n", b"0 1\n", b"0 0\n",
                                  b"0 1.0\n1 2\n", f"{secret} 1\n".encode(),
                                  b"".join(f"{k} {k + 1}\n".encode() for k in range(5000))])
        what = f"{name}: other nodes"
    else:  # a file named like a path, or the folder a link to another folder
        if rng.random() < 0.5:
            files["snaps/-n.txt"] = SNAPSHOTS["0.txt"]
            what = "a file named like an option"
        else:
            files["snaps/3.txt"] = b"".join(f"{u} {v}\n".encode() for u, v in
                                            SNAPSHOT_EDGES[0]) * 10**4
            what = "a long snapshot"
    return files, what


#: Addresses netdp must refuse up front (exit 2 naming ``--scheduler``, no connection):
#: another protocol, no host or port, a port outside [1, 65535] or not ASCII digits, a
#: control character, a path, a file holding the marker.
MALFORMED = [
    "ucx://127.0.0.1:8786", "tls://127.0.0.1:8786", "ws://127.0.0.1:8786", "wss://h:1",
    "http://127.0.0.1:8786", "file:///etc/passwd", "inproc://", "inproc://x", "TCP://h:1",
    "tcp://", "tcp://:", "tcp://h", "tcp://h:", "tcp://:8786", "://", ":", "", " ", "h",
    "tcp://h:0", "tcp://h:65536", "tcp://h:99999", "tcp://127.0.0.1:99999", "h:99999",
    "tcp://h:-1", "tcp://h:" + "9" * 30, "tcp://h:" + "9" * 5000, "tcp://h:abc",
    "tcp://h:8786x", "tcp://h: 8786", "tcp://h:+1", "tcp://h:1e3", "tcp://h:0x10",
    "tcp://h:\u0663", "tcp://h:\uff18\uff17", "tcp://[::1]", "tcp://[::1:8786",
    "tcp://[]:1", "tcp://[::1]x:1", "tcp://h\x00:8786", "tcp://h:87\x0086", "\n",
    "tcp://h\r\n:1", "tcp://\u202e:1\u202d", "tcp://h\t:1", "-1", "--scheduler",
    "/tmp/scheduler.json", "./a/b", "a/b/c", "{secret-abs}", "file://{secret-abs}",
    "tcp://{secret-abs}", "tcp://h:8786/{secret-abs}"]
#: Well-formed addresses to nothing (a connection refused, a name that does not
#: resolve): refused after the connect timeout, within the bound.
UNREACHABLE = ["tcp://127.0.0.1:1", "127.0.0.1:9", "localhost:1", "tcp://[::1]:1",
               "tcp://nohost.invalid:8786"]


def scheduler_case(rng: random.Random) -> tuple[str, str, bool]:
    """A ``--scheduler`` address, its description, and whether it is malformed."""
    if rng.random() < 0.06:
        address = rng.choice(UNREACHABLE)
        return address, f"unreachable {address!r}", False
    action = rng.randrange(6)
    if action == 0:  # a very long host (a label over 63 characters: no name to resolve)
        address = "tcp://" + "a" * rng.choice([64, 254, 300, 70_000]) + ":" + rng.choice(
            ["99999", "0", "", "x", "8786"])
    elif action == 1:  # unicode, control characters and a bad port at once
        host = rng.choice(["h\u00f6st", "\u4f8b\u3048.\u30c6\u30b9\u30c8", "\U0001f600",
                           "h\x7f", "h\x1b[31m", "[fe80::1%eth0]", "[::ffff:127.0.0.1]",
                           "127.0.0.1"])
        address = f"tcp://{host}:{rng.choice(['0', '65536', '-5', str(2**64), '', 'p'])}"
    else:
        address = rng.choice(MALFORMED)
    return address, f"malformed {address[:60]!r}", True


# ------------------------------------------------------------------------- the cases
# ------------------------------------------------------------------------- the cases

def draw(reader: str, rng: random.Random) -> Case:
    """One case of ``reader``."""
    seeds_of, commands = READERS[reader]
    secret = "{secret}"  # the marker: filled in per case by run_case
    paths = ["{secret-abs}", "secret.csv", "../secret.csv", "secret.npy"]
    if reader == "library":
        call, args, what = library_call(rng)
        return Case(reader, ["<library>", call], {"<args>": json.dumps(args)}, what=what)
    argv = list(rng.choice(commands))
    if reader == "snapshot-folder":
        files, what = snapshot_case(rng, secret, paths)
        return Case(reader, argv, files, what=what)
    if reader == "scheduler":
        address, what, malformed = scheduler_case(rng)
        argv = [w.replace("{addr}", address) for w in argv]
        return Case(reader, argv, {}, what=what, refuse="--scheduler" if malformed else "")
    if reader == "environment":
        env, what = mutate_env(rng, secret)
        return Case(reader, argv, {}, env, what)
    seed_name = rng.choice(seeds_of)
    if reader == "data" and seed_name != "dataset.csv" and "--dataset" in argv:
        seed_name = "dataset.csv"
    name = ("rows" if seed_name == "rows.jsonl" else "manifest") if reader == "sweep" \
        else seed_name
    text = SEEDS[seed_name]
    if rng.random() < 0.08:  # a special file in place of the input
        kind = rng.choice(SPECIALS)
        return Case(reader, argv, {name: kind}, what=f"{seed_name} is {kind}")
    if seed_name.endswith(".npy"):
        data, what = mutate_npy(text, rng)
    elif rng.random() < 0.2:
        data, what = mutate_bytes(text, rng)
    elif seed_name.endswith((".json", ".jsonl")) and rng.random() < 0.7:
        if seed_name == "rows.jsonl":
            rows = text.split(b"\n")
            k = rng.randrange(len(rows) - 1 if len(rows) > 1 else 1)
            rows[k], what = mutate_json(rows[k], rng, secret, paths)
            data = b"\n".join(r.replace(b"\n", b"") if j == k else r
                              for j, r in enumerate(rows))
        else:
            data, what = mutate_json(text, rng, secret, paths)
    else:
        data, what = mutate_lines(text, rng, secret, paths)
    for _ in range(rng.choice([0, 0, 1])):  # sometimes a second mutation
        if not seed_name.endswith(".npy"):
            data, more = mutate_lines(data, rng, secret, paths)
            what += "; " + more
    return Case(reader, argv, {name: data}, what=f"{seed_name}: {what}")


SEEDS: dict[str, bytes] = {}
#: Every reader's cases in turn.
READER_NAMES = list(READERS)


def cases(seed: int, count: int, readers: list[str] | None = None) -> Iterator[Case]:
    """``count`` cases, the readers in turn, from ``seed``."""
    rng = random.Random(seed)
    names = readers or READER_NAMES
    for i in range(count):
        yield draw(names[i % len(names)], rng)


# ---------------------------------------------------------------------- running one

def _special(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    elif kind == "link-loop":
        path.symlink_to(path.name + ".b")
        path.with_name(path.name + ".b").symlink_to(path.name)
    elif kind == "dangling-link":
        path.symlink_to(path.name + ".nowhere")
    elif kind == "secret-link":  # a file outside the folder, not named by the user
        path.symlink_to(Path("..") / "secret.csv")
    else:
        path.write_bytes(b"")


def _secrets(folder: Path, unnamed: str) -> None:
    """Files the user does not name, each holding the marker ``unnamed``, in every format
    a data file could point at."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("secret.csv", "secret.txt", "secret.toml", "secret.graphml", "secret.json"):
        (folder / name).write_text(f"{unnamed},1,2\n0,1,{unnamed}\n")
    np.save(folder / "secret.npy", np.array([unnamed]))


def run_case(case: Case, root: Path, rng: random.Random, wall: bool = False,
             check: Callable[..., int] = check_case) -> int:
    """Run ``case`` in a fresh folder under ``root`` and check its properties; the exit
    status. Raises AssertionError (or pytest's fail) with the case's line on a failure."""
    if case.reader == "library":
        return run_library(case, root)
    folder = root / f"case-{rng.getrandbits(32):08x}"
    inputs, work = folder / "in", folder / "work"
    secret = _marker(rng)
    unnamed = secret.replace("SECRET", "UNNAMED")
    for where in (inputs, folder, work):
        _secrets(where, unnamed)
    (work / "a-folder").mkdir()
    fill = {"{secret}": secret, "{secret-abs}": str(folder / "secret.csv")}
    named: dict[str, str] = {}
    sweep = inputs / "sweep"
    shutil.copytree(SWEEP, sweep)
    named["sweep"] = str(sweep)
    for name, data in case.files.items():
        target = (sweep / "sweep.json" if name == "manifest" else
                  sorted((sweep / "rows").glob("part-*.jsonl"))[0] if name == "rows"
                  else inputs / name if name.startswith("snaps")  # a folder's files
                  else inputs / ("f" + Path(name).suffix))
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists() or target.is_symlink():
            target.unlink()
        if isinstance(data, str):
            _special(target, data)
        else:
            for key, value in fill.items():
                data = data.replace(key.encode(), value.encode())
            target.write_bytes(data)
        named["f"] = str(target)
    named["dir"] = str(inputs / "snaps")
    named["secret-abs"] = fill["{secret-abs}"]
    for name in ("run.json", "pairs.npy", "log.csv", "spec.toml", "edges.txt",
                 "snaps-log.csv"):
        (inputs / name).write_bytes(SEEDS[name])
        named[name] = str(inputs / name)
    argv = [re.sub(r"\{([^}]+)\}", lambda m: named.get(m.group(1), m.group(0)), w)
            for w in case.argv]
    env = {k: v.replace("{secret}", secret) for k, v in case.env.items()}
    captured: dict[str, str] = {}
    before = _listing(folder)
    try:
        code = check(argv, workdir=work, captured=captured, env=env, wall=wall)
        _disclosure(code, captured, folder, before, secret, unnamed)
        if case.refuse:  # a malformed input: refused, naming its parameter
            stderr = captured.get("stderr", "")
            assert code == 2 and f"{case.refuse}:" in stderr, (
                f"not refused on {case.refuse}", code, stderr[-500:])
    except AssertionError as exc:
        # a bare assert (netdp's or a library's, not the fuzzer's): where it was raised
        where = str(exc) or "".join(traceback.format_tb(exc.__traceback__)[-3:])
        raise AssertionError(f"{case.line()}\n{where[-1500:]}") from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return code


def _listing(folder: Path) -> dict[str, int]:
    out = {}
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            out[str(path)] = path.lstat().st_mtime_ns
    return out


def _disclosure(code: int, captured: dict[str, str], folder: Path, before: dict[str, int],
                secret: str, unnamed: str) -> None:
    """The markers in no output: ``unnamed`` (the files the user did not name) nowhere;
    ``secret`` (the named file's content) never on stderr, and with exit 2 nowhere."""
    stdout, stderr = captured.get("stdout", ""), captured.get("stderr", "")
    assert secret not in stderr, ("disclosure on stderr", stderr[-500:])
    written = [p for p, t in _listing(folder).items() if before.get(p) != t]
    texts = {"stdout": stdout, "stderr": stderr}
    for path in written:
        if Path(path).is_file() and not Path(path).is_symlink():
            texts[path] = Path(path).read_bytes().decode("utf-8", "replace")
    for where, text in texts.items():
        assert unnamed not in text, ("a file the user did not name is disclosed", where)
        if code == 2:
            assert secret not in text, ("a refusal echoes content", where)
    if code == 2:
        outputs = [p for p in written if "/work/" in p and Path(p).is_file()]
        assert not outputs, ("a refusal wrote", outputs)


SWEEP = Path()


def prepare(root: Path) -> None:
    """Make the valid seeds (once per process) in ``root``."""
    global SWEEP
    if SEEDS:
        return
    seeds_root = root / "seeds"
    seeds_root.mkdir(parents=True, exist_ok=True)
    SEEDS.update(make_seeds(seeds_root))
    SWEEP = seeds_root / "sweep"


# ------------------------------------------------------------------- the library

#: Values of the wrong type, size or kind for any argument (by name: built per call).
WRONG = ["int", "text", "none", "list", "dict", "object", "np-int", "np-nan", "path",
         "bytes", "huge-float", "negative", "bool", "digits-400", "nan", "nested", "set"]


def _wrong(kind: str):
    import numpy as np

    return {"int": 5, "text": "x", "none": None, "list": [1, "a"], "dict": {"a": [1]},
            "object": object(), "np-int": np.int64(6), "np-nan": np.float64("nan"),
            "path": Path("no-such-file.csv"), "bytes": b"\xff", "huge-float": 1e300,
            "negative": -1, "bool": True, "digits-400": 10**400, "nan": float("nan"),
            "nested": [[[[[[1]]]]]], "set": {1, 2}}[kind]


#: The public functions, the arguments each takes (one is given a wrong value), and a
#: valid call to start from (``{log}``: the fuzzer's valid log).
CALLS = {
    "simulate": (["config", "progress", "keep_pairs", "trace_out", "scheduler", "client",
                  "workers", "nodes", "steps", "epsilon", "topology", "task", "seed",
                  "accountants", "range", "data_file", "loss"],
                 {"config": {"nodes": 6, "steps": 30, "seed": 1}}),
    "account": (["log", "repair", "keep_pairs", "observer", "nodes", "epsilon", "topology",
                 "sigma"], {"log": "{log}", "nodes": 6}),
    "attack": (["mechanism", "attack", "domain", "epsilon", "beta", "targets",
                "target_choice", "users", "data", "trials", "defences", "seed"],
               {"users": 2000, "trials": 2, "domain": 16}),
    "make_config": (["params", "nodes", "steps", "epsilon", "topology", "task", "range"],
                    {"params": {"nodes": 6}}),
}


def library_call(rng: random.Random) -> tuple[str, dict[str, str], str]:
    """A call: the function, and each argument given a wrong value (by :data:`WRONG`'s
    kind) or ``"valid"``."""
    call = rng.choice(sorted(CALLS))
    names, _ = CALLS[call]
    chosen = rng.sample(names, rng.choice([1, 1, 2]))
    args = {name: rng.choice(WRONG) for name in chosen}
    return call, args, f"{call}({', '.join(f'{k}={v}' for k, v in args.items())})"


def run_library(case: Case, root: Path) -> int:
    """Call the function of ``case``: it returns, or raises :class:`InputError` whose line
    is one line; within the CPU-time bound (under the fuzzer's ``NETDP_TIME_LIMIT``).
    0 for a return, 2 for a refusal."""
    import time

    from test_fuzz_cli import LIMIT_S, TIME_LIMIT

    import netdp
    from netdp.core.errors import InputError

    call = case.argv[1]
    args = json.loads(case.files["<args>"])
    names, valid = CALLS[call]
    kwargs = {k: (v.replace("{log}", str(root / "seeds" / "log.csv")) if isinstance(v, str)
                  else v) for k, v in valid.items()}
    (root / "seeds" / "log.csv").write_bytes(SEEDS["log.csv"])
    for name, kind in args.items():
        value = _wrong(kind)
        if call == "simulate" and name not in ("config", "progress", "keep_pairs",
                                               "trace_out", "scheduler", "client", "workers"):
            if isinstance(kwargs["config"], dict):  # else the config itself is wrong
                kwargs["config"] = {**kwargs["config"], name: value}  # a config key
        elif call == "make_config" and name != "params":
            kwargs[name] = value
        else:
            kwargs[name] = value
    env = os.environ.get("NETDP_TIME_LIMIT")
    os.environ["NETDP_TIME_LIMIT"] = TIME_LIMIT
    cwd = os.getcwd()
    work = root / "library"
    work.mkdir(exist_ok=True)
    os.chdir(work)
    start = time.process_time()
    try:
        with _quiet():
            getattr(netdp, call)(**kwargs)
        code = 0
    except InputError as exc:
        assert len(exc.line(call).splitlines()) == 1, (case.line(), exc.line(call))
        code = 2
    except MemoryError:
        code = 2
    except Exception as exc:  # noqa: BLE001  (the failure this fuzzes for)
        raise AssertionError(f"{case.line()}: {type(exc).__name__}: {exc}"[:1500]) from None
    finally:
        os.chdir(cwd)
        if env is None:
            os.environ.pop("NETDP_TIME_LIMIT", None)
        else:
            os.environ["NETDP_TIME_LIMIT"] = env
    seconds = time.process_time() - start
    assert seconds <= LIMIT_S, (case.line(), f"{seconds:.1f} s of CPU time")
    return code
