"""Provenance: what made a number (netdp's version and commit, the dependencies' versions,
Python, the platform, the host).

:func:`provenance` returns one flat dict, recorded in every JSON result (``provenance``),
every sweep row (``provenance_<key>`` columns) and every sweep manifest. The dependencies'
versions come from their installed metadata (:mod:`importlib.metadata`): nothing is
imported. The git commit is asked of ``git`` in netdp's own folder, once per process and
with a short timeout; outside a checkout of netdp (an installed wheel) it is the commit the
wheel was built from where the build recorded one (``setup.py``, from a clone), else
``None``, never an error.
"""

from __future__ import annotations

import functools
import importlib.metadata
import platform
import socket
import subprocess
from pathlib import Path
from typing import Any

from netdp.core.version import __version__, built_from

#: The distributions whose versions are recorded: ``{key: distribution name}``.
DEPENDENCIES = {"numpy": "numpy", "scipy": "scipy", "numba": "numba",
                "dp_accounting": "dp-accounting", "networkx": "networkx", "pandas": "pandas",
                "matplotlib": "matplotlib", "dask": "dask"}
#: Keys of :func:`provenance`, in order (the sweep table's ``provenance_<key>`` columns).
KEYS = ("netdp", "commit", "dirty", "python", "platform", "host", *DEPENDENCIES)
GIT_TIMEOUT_S = 2.0
#: The checkout netdp runs from would have ``netdp/`` right under its top folder.
SOURCE = Path(__file__).resolve().parents[1]


def provenance() -> dict[str, Any]:
    """``{netdp, commit, dirty, python, platform, host, numpy, scipy, numba, dp_accounting,
    networkx, pandas, matplotlib, dask}``: the versions as strings (``None`` where a
    distribution is not installed); ``commit`` the full hash of the checkout's ``HEAD`` and
    ``dirty`` whether tracked files differ from it (both ``None`` outside a checkout).

    A fresh dict each call (computed once per process).
    """
    return dict(_provenance())


@functools.cache
def _provenance() -> tuple[tuple[str, Any], ...]:
    commit, dirty = git_state(SOURCE)
    if commit is None:  # an installed copy: the commit it was built from, if recorded
        commit, dirty = built_from()
    out: dict[str, Any] = {"netdp": __version__, "commit": commit, "dirty": dirty,
                           "python": platform.python_version(),
                           "platform": platform.platform(), "host": socket.gethostname()}
    out.update({key: version(name) for key, name in DEPENDENCIES.items()})
    return tuple(out.items())


def version(distribution: str) -> str | None:
    """The installed version of ``distribution``, or ``None``."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def git_state(package: Path, timeout: float = GIT_TIMEOUT_S) -> tuple[str | None, bool | None]:
    """``(commit, dirty)`` of the git checkout whose top folder holds ``package``;
    ``(None, None)`` when there is none (not a checkout, the package inside another
    project's repository, no git, git failing or too slow)."""
    top = _git(package, ["rev-parse", "--show-toplevel"], timeout)
    if top is None or Path(top).resolve() != package.resolve().parent:
        return None, None
    commit = _git(package, ["rev-parse", "HEAD"], timeout)
    if commit is None:  # a repository with no commit yet
        return None, None
    status = _git(package, ["status", "--porcelain", "--untracked-files=no"], timeout)
    return commit, None if status is None else bool(status)


def _git(where: Path, args: list[str], timeout: float) -> str | None:
    """``git args`` run in ``where``: its stripped output, or ``None`` on any failure."""
    try:
        done = subprocess.run(["git", "-C", str(where), *args], capture_output=True,
                              text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
