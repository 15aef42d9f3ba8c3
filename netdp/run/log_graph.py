"""A log's graph file: where ``--trace-out`` records it, where ``account`` looks for the
file the user names, and the hash that tells that file is the one the log was written on.

The rule (``docs/your-network.md``, "The graph file of a log"):

- ``simulate --trace-out LOG`` writes ``# topology = "PATH"`` with ``PATH`` relative to
  the log's own folder (``g.graphml`` when the graph lies beside the log), and
  ``# topology_sha256 = "HEX"``, the sha256 of the file's bytes (a folder of snapshots:
  its path, no hash);
- ``account LOG`` still opens no file a log names (docs/security.md, P5): you name the
  graph, ``--topology FILE``. A relative ``FILE`` is read from the current folder, as
  any path you give; when nothing there has that name, from the log's folder. So the
  header's own path, given to ``--topology``, works from any folder, and a path from the
  folder where ``simulate`` ran still works there;
- when the header records a ``topology_sha256``, the file you name must have that hash:
  a graph changed (or another file) since the log was written is refused in one line; a
  graph netdp makes (``--topology hypercube``) is not checked.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from netdp.core.errors import InputError, shorten
from netdp.core.reading import check_regular
from netdp.engine.trace_log import LogLines
from netdp.graphs.topologies import is_named

#: The header key of the graph file's hash (not a parameter of ``simulate``).
HASH_KEY = "topology_sha256"
_HEX = re.compile(r"[0-9a-f]{64}")


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a regular file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def names_file(topology: Any, graph: Any = None, folder: bool = False) -> bool:
    """Whether ``topology`` (a config's value) is a regular file netdp reads (or, with
    ``folder``, a folder of graph files), not a graph it makes (``hypercube``) nor one
    given from Python."""
    if graph is not None or not isinstance(topology, str | os.PathLike) or is_named(topology):
        return False
    return os.path.isfile(topology) or (folder and os.path.isdir(topology))


def recorded(topology: str | os.PathLike[str], log: str | os.PathLike[str]) -> dict[str, str]:
    """The header lines of a log at ``log`` for the graph file (or folder) ``topology``:
    its path relative to the log's folder and, for a file, its sha256."""
    folder = os.path.dirname(os.path.abspath(log))
    target = os.path.realpath(topology)
    try:
        path = os.path.relpath(target, os.path.realpath(folder))
    except ValueError:  # another drive: the absolute path
        path = target
    path = Path(path).as_posix()
    if is_named(path):  # ./hypercube, a file, not the graph netdp makes
        path = f"./{path}"
    if os.path.isdir(topology):
        return {"topology": path}
    check_regular(topology, "topology", "a graph file")
    return {"topology": path, HASH_KEY: file_sha256(topology)}


def located(topology: Any, log: str | os.PathLike[str]) -> Any:
    """The file the user's ``--topology`` names for ``account LOG``: a relative path read
    from the current folder, else (nothing there by that name) from the log's folder."""
    if not isinstance(topology, str | os.PathLike) or is_named(topology):
        return topology
    text = os.fspath(topology)
    if not text or os.path.isabs(text) or os.path.lexists(text):
        return topology
    beside = os.path.join(os.path.dirname(os.fspath(log)), text)
    return beside if os.path.lexists(beside) else topology


def check_hash(lines: LogLines, params: Mapping[str, Any]) -> None:
    """Refuse a graph file whose sha256 is not the one the log's header records (a
    changed graph, another file); a header's hash that is no sha256 is refused naming
    its line. No hash in the header, or a graph netdp makes: nothing to check."""
    if HASH_KEY not in lines.header:
        return
    at = lines.header_at[HASH_KEY]
    want = lines.header[HASH_KEY]
    if not isinstance(want, str) or _HEX.fullmatch(want) is None:
        raise lines.error(f"{HASH_KEY}: expected the sha256 of the graph file, 64 "
                          "lower-case hexadecimal digits", at)
    topology = params.get("topology")
    if not names_file(topology, params.get("graph")):
        return
    assert isinstance(topology, str | os.PathLike)
    check_regular(topology, "topology", "a graph file")
    if file_sha256(topology) != want:
        raise InputError("topology", f"{shorten(repr(os.fspath(topology)), 200)} is not the "
                         f"graph file {lines.name} was written on: its sha256 differs from "
                         f"the header's (line {at}); the graph changed since, or give the "
                         "file the log was written on")
