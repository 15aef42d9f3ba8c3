"""Where numba keeps netdp's compiled kernels: a per-user folder, never the package folder.

By default numba writes the ``*.nbi``/``*.nbc`` files of ``@njit(cache=True)`` kernels next
to their source, that is into ``site-packages/netdp/**/__pycache__``. pip does not remove files
it did not install, so ``pip install .``, a run, then ``pip install -e .`` left that folder
behind with only those files: a namespace package that shadowed the editable install.

netdp therefore sets ``NUMBA_CACHE_DIR`` (when it is not set already) on import, before any
kernel is defined, to ``<root>/numba-<netdp version>-py<major><minor>``, where ``<root>`` is
``$NETDP_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/netdp``, else ``~/.cache/netdp``. If that
folder cannot be created (a read-only home), a private temporary folder is used instead. A
``NUMBA_CACHE_DIR`` of your own always wins.

To clear the cache, delete the folder; the kernels are recompiled on the next run (a few
seconds)::

    rm -rf "${NETDP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/netdp}"

``python -c "import netdp, os; print(os.environ['NUMBA_CACHE_DIR'])"`` prints the folder in use.
A cache folder that cannot be written (a ``NUMBA_CACHE_DIR`` of your own that is read-only)
makes every run compile its kernels again: the command line then says so in one line on
stderr before the first compilation (:func:`warn_when_compiling`).
This module must stay light: it is imported first by ``netdp/__init__.py`` and imports neither
numba nor numpy (numba only where the cache is unusable, to hear of a compilation).
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def cache_root(environ: Mapping[str, str] | None = None) -> Path:
    """The per-user root folder of netdp's caches (it may not exist yet).

    Parameters
    ----------
    environ : Mapping[str, str], optional
        The environment to read (default: ``os.environ``).

    Returns
    -------
    Path
        ``$NETDP_CACHE_DIR``, else ``$XDG_CACHE_HOME/netdp``, else ``~/.cache/netdp``.
    """
    env = os.environ if environ is None else environ
    if env.get("NETDP_CACHE_DIR"):
        return Path(env["NETDP_CACHE_DIR"]).expanduser()
    xdg = env.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):  # the XDG spec says to ignore a relative path
        return Path(xdg) / "netdp"
    return Path.home() / ".cache" / "netdp"


def numba_subdir(version: str) -> str:
    """The cache subfolder for one netdp version and Python version: ``numba-0.1.0-py311``."""
    return f"numba-{version}-py{sys.version_info.major}{sys.version_info.minor}"


def _writable(path: Path) -> bool:
    """Create ``path`` if needed; True if a file can be written in it."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError:
        return False
    return True


def _private_temp_dir(name: str) -> Path | None:
    """A temporary folder that only this user can write (numba's index files are pickles)."""
    getuid = getattr(os, "getuid", None)
    if getuid is not None:
        base = Path(tempfile.gettempdir()) / f"netdp-{getuid()}"
        try:
            base.mkdir(mode=0o700, exist_ok=True)
            st = base.lstat()
            private = (stat.S_ISDIR(st.st_mode) and st.st_uid == getuid()
                       and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))
        except OSError:
            private = False
        if private and _writable(base / name):
            return base / name
    try:  # no stable private folder: a fresh one (compiled again by each process)
        return Path(tempfile.mkdtemp(prefix=f"netdp-{name}-"))
    except OSError:
        return None


def numba_cache_dir(version: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """Pick, and create, the folder for numba's cache of this netdp version.

    Parameters
    ----------
    version : str
        The netdp version (one subfolder per netdp and Python version).
    environ : Mapping[str, str], optional
        The environment to read (default: ``os.environ``).

    Returns
    -------
    Path or None
        The per-user folder if it is writable, else a private temporary folder; None if
        neither can be created.
    """
    name = numba_subdir(version)
    try:
        path = cache_root(environ) / name
    except RuntimeError:  # no home directory to be found
        path = None
    if path is not None and _writable(path):
        return path
    return _private_temp_dir(name)


def configure_numba_cache(version: str) -> str:
    """Send numba's on-disk cache to :func:`numba_cache_dir`, unless ``NUMBA_CACHE_DIR`` is set.

    Must run before any ``cache=True`` kernel is defined: numba picks a kernel's cache folder
    when it is decorated. Sets ``os.environ["NUMBA_CACHE_DIR"]`` (read when numba is imported,
    and again by its compiler) and, if numba is imported already, ``numba.config.CACHE_DIR``.

    Parameters
    ----------
    version : str
        The netdp version.

    Returns
    -------
    str
        The folder numba will use; "" if none could be created (numba's default then applies).
    """
    chosen = os.environ.get("NUMBA_CACHE_DIR", "")
    if chosen:
        return chosen
    path = numba_cache_dir(version)
    if path is None:
        return ""
    chosen = os.environ["NUMBA_CACHE_DIR"] = str(path)
    config: Any = sys.modules.get("numba.core.config")  # numba's settings, set by name
    if config is not None:
        config.CACHE_DIR = chosen
    return chosen


#: About how long the kernels a run uses take to compile when nothing is cached.
COMPILE_SECONDS = 20


def unusable_cache(environ: Mapping[str, str] | None = None) -> str | None:
    """The folder numba's cache goes to, where it cannot be written (else ``None``):
    ``NUMBA_CACHE_DIR`` (yours, or :func:`configure_numba_cache`'s), else numba's default,
    the package's ``__pycache__``. Creates it where it can, as numba would."""
    env = os.environ if environ is None else environ
    chosen = env.get("NUMBA_CACHE_DIR", "")
    path = Path(chosen).expanduser() if chosen else Path(__file__).resolve().parents[1] / \
        "__pycache__"
    return None if _writable(path) else str(path)


def cache_warning(path: str) -> str:
    """The one line that says a run will compile its kernels, the cache at ``path`` being
    unusable."""
    return (f"netdp: the numba cache at {path} is not writable: every run compiles its "
            f"kernels (about {COMPILE_SECONDS} s); set NUMBA_CACHE_DIR to a writable folder")


def warn_when_compiling(environ: Mapping[str, str] | None = None) -> Any:
    """Where numba's cache is unusable (:func:`unusable_cache`), print
    :func:`cache_warning` once on stderr when numba starts its first compilation; the
    listener registered (``numba.core.event``), or ``None`` where the cache is usable
    (numba is then not imported)."""
    path = unusable_cache(environ)
    if path is None or _LISTENING:
        return _LISTENING[0] if _LISTENING and path is not None else None
    from numba.core import event

    line = cache_warning(path)

    class _Warn(event.Listener):
        said = False

        def on_start(self, _: Any) -> None:
            if not self.said:
                self.said = True
                print(line, file=sys.stderr, flush=True)

        def on_end(self, _: Any) -> None:
            pass

    listener = _Warn()
    event.register("numba:compile", listener)
    _LISTENING.append(listener)  # once a process (the command line's main may run again)
    return listener


#: The listener :func:`warn_when_compiling` registered, if any.
_LISTENING: list[Any] = []
