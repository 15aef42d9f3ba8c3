"""No code outside the accountant registry compares an accountant's name: it asks the
registry (:mod:`netdp.accounting.registry`) for a capability instead (issue 38: none
left; a file that starts again fails)."""

from __future__ import annotations

import ast
from pathlib import Path

from netdp.accounting import registry

PACKAGE = Path(__file__).resolve().parents[2] / "netdp"
NAMES = {e.name for e in registry.entries()}
#: Files allowed to branch on accountant names, with their count: none.
ALLOWED: dict[str, int] = {}


def _names_in(node: ast.AST) -> bool:
    """Whether ``node`` is an accountant's name, or a tuple, list or set holding one."""
    if isinstance(node, ast.Constant):
        return node.value in NAMES
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(isinstance(e, ast.Constant) and e.value in NAMES for e in node.elts)
    return False


def branches(source: str) -> list[int]:
    """The lines of ``source`` that branch on an accountant's name: a comparison with one
    (``a == "kov"``, ``a in ("pld", "exact")``) or a table keyed by two or more (``{"kov":
    ..., "rdp": ...}``, keys of tuples counted too)."""
    def branch(node: ast.AST) -> bool:
        if isinstance(node, ast.Compare):
            return any(_names_in(side) for side in (node.left, *node.comparators))
        if isinstance(node, ast.Dict):
            return sum(k is not None and _names_in(k) for k in node.keys) >= 2
        return False

    return [node.lineno for node in ast.walk(ast.parse(source)) if branch(node)]


def scan(root: Path = PACKAGE) -> dict[str, int]:
    """``{file: branches}`` over the package, the registry itself left out."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        if rel == "netdp/accounting/registry.py":
            continue
        count = len(branches(path.read_text(encoding="utf-8")))
        if count:
            found[rel] = count
    return found


def test_the_finder_finds_planted_branches():
    src = ('if a == "kov":\n    pass\nb = a in ("pld", "exact")\n'
           'c = {"kov": 1, "rdp": 2}[a]\nd = {"exact": 1, "W": 2}\ne = a == "other"\n')
    assert branches(src) == [1, 3, 4]


def test_no_new_branch_on_an_accountant_name():
    found = scan()
    total = sum(found.values())
    print(f"\naccountant-name branches outside the registry: {total} "
          + ", ".join(f"{f}: {c}" for f, c in found.items()))
    new = {f: c for f, c in found.items() if f not in ALLOWED}
    assert not new, f"branches on accountant names outside the registry: {new}"
    grown = {f: (c, ALLOWED[f]) for f, c in found.items() if c > ALLOWED[f]}
    assert not grown, f"more branches than allowed (found, allowed): {grown}"
    stale = {f: (found.get(f, 0), c) for f, c in ALLOWED.items() if found.get(f, 0) < c}
    assert not stale, f"fewer branches than ALLOWED says: lower the count {stale}"
