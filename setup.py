"""Build step only (the metadata is in pyproject.toml): a non-editable build from a git
checkout records its commit in the built package (``netdp/core/build_commit.json``), so
that an installed copy's provenance names the commit it was built from
(``netdp.core.version.built_from``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=HERE, capture_output=True, text=True,
                             timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


class BuildWithCommit(build_py):
    """build_py, then the checkout's commit beside netdp/core/version.py."""

    def run(self) -> None:
        super().run()
        if _git("rev-parse", "--show-toplevel") != str(HERE):
            return  # not the top of a checkout: nothing to record
        commit = _git("rev-parse", "HEAD")
        if commit is None:
            return
        status = _git("status", "--porcelain", "--untracked-files=no")
        target = Path(self.build_lib) / "netdp" / "core" / "build_commit.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps({"commit": commit, "dirty": None if status is None
                                      else bool(status)}) + "\n", encoding="utf-8")


setup(cmdclass={"build_py": BuildWithCommit})
