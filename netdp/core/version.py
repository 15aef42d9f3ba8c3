"""netdp's version, and the commit a non-editable install was built from.

The one place the version is written (``pyproject.toml`` reads it from here, and
``netdp.__version__`` is this one), so that any module reads it without importing the
package's top. :func:`built_from` reads ``build_commit.json``, which ``setup.py`` writes
into the built package when it is built from a git checkout (``pip install .`` from a
clone): the commit of an installed copy, where no checkout is at hand to ask.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__version__ = "0.3.0"

#: Written by setup.py's build step beside this module (never in the source tree).
BUILD_COMMIT = Path(__file__).with_name("build_commit.json")


def built_from() -> tuple[str | None, bool | None]:
    """``(commit, dirty)`` recorded when this copy was built, or ``(None, None)``."""
    try:
        data: Any = json.loads(BUILD_COMMIT.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    commit, dirty = (data.get("commit"), data.get("dirty")) if isinstance(data, dict) \
        else (None, None)
    ok = isinstance(commit, str) and len(commit) == 40 and all(
        c in "0123456789abcdef" for c in commit)
    return (commit, dirty if isinstance(dirty, bool) else None) if ok else (None, None)
