"""Installing, running and reinstalling netdp; where numba's compiled kernels are cached.

numba used to write the ``*.nbi``/``*.nbc`` cache files of netdp's kernels into
``site-packages/netdp/**/__pycache__``. pip's uninstall leaves files it did not install, so
after ``pip install .``, a run and ``pip install -e .`` that leftover folder (a namespace
package) shadowed the editable install and ``netdp --version`` failed.
"""

from __future__ import annotations

import csv
import importlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import site
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SIMULATE = ["-m", "netdp", "simulate", "--nodes", "20", "--steps", "200", "--seed", "1", "--json"]
TIMEOUT = 600  # seconds per command: a hang fails the test rather than stalling CI
KERNEL_CACHE_SUFFIXES = {".nbi", ".nbc"}

# What belongs to netdp itself in a site folder: hidden from the inner venv, which must
# resolve netdp only from its own install.
_NETDP_ENTRY = re.compile(r"netdp(\.py|\.pth|\.egg-link)?|netdp-.+|__editable__[._]+netdp[-_].*",
                          re.IGNORECASE)
# Left out of the copy of the checkout that gets installed.
_COPY_IGNORED_AT_ROOT = {".git", "build", "dist", "out", ".venv", "venv", ".tox", ".nox",
                         ".pytest_cache", ".ruff_cache", ".mypy_cache"}


def _cache_module():
    return importlib.import_module("netdp.core._cache")


# --- the cache folder -------------------------------------------------------------------


def test_cache_root_precedence() -> None:
    cache = _cache_module()
    home = Path.home() / ".cache" / "netdp"
    both = {"NETDP_CACHE_DIR": "/a/b", "XDG_CACHE_HOME": "/x"}
    assert cache.cache_root(both) == Path("/a/b")
    assert cache.cache_root({"XDG_CACHE_HOME": "/x"}) == Path("/x/netdp")
    assert cache.cache_root({"XDG_CACHE_HOME": "relative"}) == home
    assert cache.cache_root({}) == home
    py = f"py{sys.version_info.major}{sys.version_info.minor}"
    assert cache.numba_subdir("1.2.3") == f"numba-1.2.3-{py}"


def test_unwritable_cache_root_falls_back_to_a_temp_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = _cache_module()
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    path = cache.numba_cache_dir("9.9", {"NETDP_CACHE_DIR": str(blocker / "cache")})
    assert path is not None and path.is_dir()
    assert temp in path.parents and path.name.startswith("numba-9.9")


def test_configure_sets_numba_cache_dir_unless_the_user_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = _cache_module()
    config = importlib.import_module("numba.core.config")
    monkeypatch.setattr(config, "CACHE_DIR", config.CACHE_DIR)  # restored after the test
    monkeypatch.setenv("NETDP_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    assert cache.configure_numba_cache("9.9") == str(tmp_path / "mine")
    assert os.environ["NUMBA_CACHE_DIR"] == str(tmp_path / "mine")

    monkeypatch.delenv("NUMBA_CACHE_DIR")
    chosen = cache.configure_numba_cache("9.9")
    assert chosen == str(tmp_path / cache.numba_subdir("9.9"))
    assert os.environ["NUMBA_CACHE_DIR"] == chosen == config.CACHE_DIR
    assert Path(chosen).is_dir()


# --- install, run, reinstall editable, run again ------------------------------------------


def _skip_unless_offline_build_possible() -> None:
    """Skip unless venv, pip and a setuptools able to build without the network are here."""
    for module in ("venv", "pip", "setuptools"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"needs {module} in the test environment to install netdp offline")
    try:
        found = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("setuptools has no metadata: cannot check it can build netdp")
    version = tuple(int(part) for part in re.findall(r"\d+", found)[:2])
    if version < (69,):
        pytest.skip(f"setuptools {found} < 69 (netdp's build requirement): cannot build offline")
    if version < (70, 1) and importlib.util.find_spec("wheel") is None:
        pytest.skip(f"setuptools {found} needs the wheel package to build offline")


def _ignore_for_copy(folder: str, names: list[str]) -> set[str]:
    ignored = {n for n in names if n == "__pycache__" or n.endswith((".egg-info", ".pyc"))}
    if Path(folder) == REPO:
        ignored |= _COPY_IGNORED_AT_ROOT & set(names)
    return ignored


def _outer_site_dirs() -> list[Path]:
    """The site folders of the environment running the tests (netdp's dependencies)."""
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [Path(d) for d in dict.fromkeys(dirs) if os.path.isdir(d)]


def _mirror_without_netdp(source: Path, dest: Path) -> None:
    """Symlink every entry of the site folder ``source`` into ``dest``, except netdp's own."""
    dest.mkdir(parents=True)
    for entry in source.iterdir():
        if entry.name != "__pycache__" and not _NETDP_ENTRY.fullmatch(entry.name):
            (dest / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())


def _run(args: list[str], env: dict[str, str], cwd: Path) -> str:
    """Run a command; on failure, fail the test with its output. Returns stdout."""
    proc = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)
    assert proc.returncode == 0, (
        f"{' '.join(args[1:])} exited {proc.returncode}\n"
        f"--- stdout\n{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-4000:]}"
    )
    return proc.stdout


def _commit_all(folder: Path) -> str | None:
    """Make ``folder`` a git repository of one commit; its hash (``None`` without git)."""
    if shutil.which("git") is None:
        return None
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "copy"]):
        subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True,
                       timeout=TIMEOUT)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, check=True, text=True,
                          capture_output=True, timeout=TIMEOUT).stdout.strip()


def _kernel_caches(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.suffix in KERNEL_CACHE_SUFFIXES}


def _not_installed_by_pip(purelib: Path) -> list[str]:
    """Files under ``purelib/netdp`` that pip's RECORD does not list (bytecode aside)."""
    (dist_info,) = purelib.glob("netdp-*.dist-info")
    with open(dist_info / "RECORD", newline="") as f:
        recorded = {(purelib / row[0]).resolve() for row in csv.reader(f) if row}
    return sorted(
        str(p.relative_to(purelib))
        for p in (purelib / "netdp").rglob("*")
        if p.is_file() and p.suffix != ".pyc" and p.resolve() not in recorded
    )


@pytest.mark.slow  # ~25 s: builds a venv
@pytest.mark.install
def test_install_run_reinstall_editable_run(tmp_path: Path) -> None:
    """Installs the package (non-editable), runs it, reinstalls it editable, runs it again."""
    _skip_unless_offline_build_possible()
    if not (REPO / "pyproject.toml").is_file():
        pytest.skip("not run from a checkout: no pyproject.toml to install from")
    assert tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dynamic"] == [
        "version"]  # read from netdp.core.version, the one place it is written
    version = importlib.import_module("netdp.core.version").__version__

    src = tmp_path / "src"
    shutil.copytree(REPO, src, ignore=_ignore_for_copy, symlinks=True)
    head = _commit_all(src)  # a clone of its own: the build records its commit
    work = tmp_path / "work"  # the inner runs' cwd: `python -m` puts it first on sys.path
    work.mkdir()
    cache_root = tmp_path / "netdp-cache"

    # A venv whose only third-party packages are the test environment's, netdp's hidden.
    venv = tmp_path / "venv"
    made = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)],
                          capture_output=True, text=True, timeout=TIMEOUT, check=False)
    if made.returncode != 0:
        pytest.skip(f"python -m venv failed: {made.stderr.strip()[-500:]}")
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = str(bindir / ("python.exe" if os.name == "nt" else "python"))

    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT", "NETDP_"))
           and k not in {"PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONSTARTUP",
                         "VIRTUAL_ENV", "__PYVENV_LAUNCHER__"}}
    env.update(NETDP_CACHE_DIR=str(cache_root), XDG_CACHE_HOME=str(tmp_path / "xdg"),
               PYTHONNOUSERSITE="1", PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    purelib = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                        env, work).strip())
    lines = []
    try:
        for i, outer in enumerate(_outer_site_dirs()):
            mirror = tmp_path / "outer-site" / str(i)
            _mirror_without_netdp(outer, mirror)
            lines.append(f"import site; site.addsitedir({str(mirror)!r})\n")
    except OSError as exc:  # e.g. no symlinks on this platform
        pytest.skip(f"cannot mirror the test environment's site folders: {exc}")
    (purelib / "_netdp_test_outer_site.pth").write_text("".join(lines))
    where = [python, "-c", "import importlib.util as u; s = u.find_spec('netdp'); "
             "print(s and s.origin)"]  # finds netdp without importing it
    pip_install = [python, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "-q"]

    # 1. A regular install, and a first run: it compiles and caches the kernels.
    _run([*pip_install, str(src)], env, work)
    assert Path(_run(where, env, work).strip()) == purelib / "netdp" / "__init__.py"
    first = json.loads(_run([python, *SIMULATE], env, work))
    assert not _not_installed_by_pip(purelib), "files written into the installed package"
    if head is not None:  # the installed copy names the commit it was built from
        assert (first["provenance"]["commit"], first["provenance"]["dirty"]) == (head, False)
        assert not (src / "netdp" / "core" / "build_commit.json").exists()  # build dir only
    numba_dir = cache_root / f"numba-{version}-py{sys.version_info.major}{sys.version_info.minor}"
    cached = _kernel_caches(numba_dir)
    assert cached, f"no numba cache under {numba_dir}"

    # 2. Reinstalled editable: netdp now comes from the source tree, and still runs.
    _run([*pip_install, "-e", str(src)], env, work)
    assert _run([python, "-m", "netdp", "--version"], env, work).split() == ["netdp", version]
    assert not (purelib / "netdp").exists(), "a leftover of the regular install"
    assert Path(_run(where, env, work).strip()) == src / "netdp" / "__init__.py"
    second = json.loads(_run([python, *SIMULATE], env, work))
    assert second["utility"]["estimate"] == first["utility"]["estimate"]
    assert _kernel_caches(numba_dir) > cached  # the source tree's kernels, cached there too
    assert not _kernel_caches(src), "numba cache written into the source tree"


def test_every_subpackage_ships_in_the_wheel() -> None:
    """A subpackage missing from ``[tool.setuptools] packages`` works in an editable install
    and is absent from ``pip install .`` (``netdp attack`` once failed that way)."""
    declared = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
                   ["packages"])
    found = {".".join(init.parent.relative_to(REPO).parts)
             for init in (REPO / "netdp").rglob("__init__.py")
             if "__pycache__" not in init.parts}
    assert found, "no package found under netdp/"
    assert found <= declared, f"not shipped: {sorted(found - declared)}"
