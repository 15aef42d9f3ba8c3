"""Layout facts of the package: modules per folder, the largest modules, function-level
imports, branches on the topology kind, and imports that run against the folder order.

``python experiments/layout_facts.py`` (``--json`` for one object). The layout issue
measures its progress with these numbers; the folder order (lowest first) is
:data:`ORDER`, and an import from a folder to one later in it is a *back-arrow*.
"""

from __future__ import annotations

import argparse
import ast
import json
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "netdp"
#: The folders and top-level modules, lowest layer first: a module may import from its own
#: entry and from earlier ones.
ORDER = ["core", "graphs", "engine", "mechanisms", "data", "adversary", "accounting", "report",
         "learning", "tracking", "bounds", "tasks", "audit", "run", "__init__", "__main__"]
#: Libraries kept lazy on purpose (start-up time): imports of these inside functions are
#: not counted as hidden dependencies.
HEAVY = {"numba", "dask", "distributed", "matplotlib", "pandas", "scipy", "networkx",
         "simpy", "dp_accounting", "sklearn", "tqdm", "pyarrow",
         "numpy",  # heavy for the CLI shell only: kept off `netdp --help` and `--version`
         "fcntl"}  # POSIX only: imported where a lock is taken
KINDS = {"ring", "complete", "graph"}
NAMES = {"kind", "topology", "topology_kind", "protocol"}  # what holds the kind
LIMIT = 600  # lines: the goal for the largest module


def entry(path: Path) -> str:
    """The layout entry of a module: its top folder under ``netdp/``, or its own name."""
    rel = path.relative_to(ROOT)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def target(node: ast.ImportFrom | ast.Import, path: Path) -> list[str]:
    """The ``netdp`` entries an import names."""
    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif node.level:  # relative: resolve against the module's package
        base = path.relative_to(ROOT).parent.parts[: len(path.relative_to(ROOT).parent.parts)
                                                    - node.level + 1]
        names = [".".join(("netdp", *base, node.module or ""))]
    else:
        mod = node.module or ""
        names = [mod] if mod != "netdp" else [f"netdp.{a.name}" for a in node.names]
    out = []
    for name in names:
        parts = name.split(".")
        if parts[0] == "netdp" and len(parts) > 1 and parts[1]:
            out.append(parts[1])
    return out


def is_kind_branch(node: ast.Compare) -> bool:
    """``kind == "ring"``, ``x.kind in ("ring", "graph")`` and the like."""
    sides = [node.left, *node.comparators]
    named = any((isinstance(s, ast.Attribute) and s.attr in NAMES)
                or (isinstance(s, ast.Name) and s.id in NAMES) for s in sides)
    if not named:
        return False
    for s in sides:
        if isinstance(s, ast.Constant) and s.value in KINDS:
            return True
        if isinstance(s, (ast.Tuple, ast.List, ast.Set)) and any(
                isinstance(e, ast.Constant) and e.value in KINDS for e in s.elts):
            return True
    return False


def dotted(path: Path) -> str:
    """``netdp.a.b`` of ``netdp/a/b.py`` (``netdp.a`` of ``netdp/a/__init__.py``)."""
    parts = ("netdp", *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(node: ast.Import | ast.ImportFrom, known: set[str]) -> list[str]:
    """The ``netdp`` modules an import loads (``from m import x``: ``m.x`` when a module)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "netdp"]
    mod = node.module or ""
    if mod.split(".")[0] != "netdp":
        return []
    subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in known]
    return subs or [mod]


def heavy_modules(modules: list[Path]) -> set[str]:
    """The netdp modules that load a heavy library when imported (at their top level, or
    through a netdp module imported at top that does): importing one of them inside a
    function keeps that library off the start-up path, as a heavy import itself does."""
    known = {dotted(p) for p in modules}
    deps: dict[str, set[str]] = {}
    heavy: set[str] = set()
    for path in modules:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        name = dotted(path)
        deps[name] = set()
        for node in tree.body:
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            roots = ([a.name.split(".")[0] for a in node.names]
                     if isinstance(node, ast.Import) else [(node.module or "").split(".")[0]])
            if any(r in HEAVY for r in roots):
                heavy.add(name)
            deps[name].update(m for m in imported_modules(node, known) if m in known)
    changed = True
    while changed:
        changed = False
        for name, ds in deps.items():
            if name not in heavy and ds & heavy:
                heavy.add(name)
                changed = True
    return heavy


def literal_config_gets(tree: ast.AST) -> list[int]:
    """Lines calling ``<...>config.get("literal")``: a known parameter read by string, where
    ``config.x`` (common) or ``config.section_as(Section).x`` (the task's) says it typed."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "get" and node.args \
                and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            receiver = node.func.value
            name = receiver.attr if isinstance(receiver, ast.Attribute) else \
                getattr(receiver, "id", "")
            library = isinstance(receiver, ast.Attribute) and \
                getattr(receiver.value, "id", "") == "dask"  # dask.config.get("key")
            if name in ("config", "resolved") and not library:
                out.append(node.lineno)
    return out


def task_protocol() -> list[str]:
    """The public methods of :class:`netdp.tasks.base.Task` (the protocol every task has)."""
    path = ROOT / "tasks" / "base.py"
    tree = ast.parse(path.read_text(encoding="utf-8")) if path.is_file() else ast.Module([], [])
    task = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Task"),
                ast.ClassDef("Task", [], [], [], []))
    return [n.name for n in task.body if isinstance(n, ast.FunctionDef)
            and not n.name.startswith("_")
            and not any(getattr(d, "id", "") == "property" for d in n.decorator_list)]


def facts() -> dict:
    modules = sorted(ROOT.rglob("*.py"))
    known = {dotted(p) for p in modules}
    heavy = heavy_modules(modules)
    light_list: list[str] = []
    per_folder: Counter[str] = Counter()
    lines: dict[str, int] = {}
    local_imports = 0
    local_light = 0
    kind_branches: Counter[str] = Counter()
    back: list[str] = []
    type_only: list[str] = []
    edges: dict[str, set[str]] = defaultdict(set)
    memo_reads = 0
    literal_gets: list[str] = []
    for path in modules:
        text = path.read_text(encoding="utf-8")
        rel = str(path.relative_to(ROOT.parent))
        per_folder[entry(path) if path.parent != ROOT else "(top)"] += 1
        lines[rel] = text.count("\n") + 1
        tree = ast.parse(text)
        top = {id(n) for n in tree.body}
        memo_reads += text.count(".memo[") + text.count(".memo.get(")
        literal_gets += [f"{rel}:{line}" for line in literal_config_gets(tree)]
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and is_kind_branch(node):
                kind_branches[rel] += 1
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            inner = id(node) not in top and not _in_type_checking(tree, node)
            if inner:
                local_imports += 1
                roots = ([a.name.split(".")[0] for a in node.names]
                         if isinstance(node, ast.Import) else [(node.module or "").split(".")[0]])
                loads = imported_modules(node, known)
                if not any(r in HEAVY for r in roots) and not any(m in heavy for m in loads):
                    local_light += 1
                    light_list.append(f"{rel}:{node.lineno} {ast.unparse(node)}")
            src = entry(path)
            for dst in target(node, path):
                if dst == src or dst not in ORDER or src not in ORDER:
                    continue
                if not _in_type_checking(tree, node):
                    edges[src].add(dst)  # a run-time dependency
                if ORDER.index(dst) > ORDER.index(src):
                    arrow = f"{rel} -> netdp.{dst}"
                    (type_only if _in_type_checking(tree, node) else back).append(arrow)
    largest = sorted(lines.items(), key=lambda kv: -kv[1])
    return {
        "modules": len(modules),
        "lines": sum(lines.values()),
        "modules_per_folder": dict(sorted(per_folder.items())),
        "largest": largest[:10],
        "above_limit": [name for name, n in largest if n > LIMIT],
        "function_level_imports": local_imports,
        "function_level_imports_not_heavy": local_light,
        "function_level_imports_light": light_list,
        "kind_branches": sum(kind_branches.values()),
        "kind_branches_per_file": dict(kind_branches.most_common()),
        "back_arrows": sorted(set(back)),
        "type_only_back_arrows": sorted(set(type_only) - set(back)),
        "folder_cycles": _cycles(edges),
        "task_protocol": task_protocol(),
        "memo_reads": memo_reads,
        "literal_parameter_reads": literal_gets,
    }


def _in_type_checking(tree: ast.Module, node: ast.AST) -> bool:
    """Whether ``node`` sits under a top-level ``if TYPE_CHECKING:``."""
    for stmt in tree.body:
        if (isinstance(stmt, ast.If) and "TYPE_CHECKING" in ast.unparse(stmt.test)
                and any(n is node for n in ast.walk(stmt))):
            return True
    return False


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Pairs of entries that import each other (the shortest cycles)."""
    out = []
    for a in sorted(edges):
        for b in sorted(edges[a]):
            if a < b and a in edges.get(b, set()):
                out.append([a, b])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    f = facts()
    if args.json:
        print(json.dumps(f, indent=1))
        return
    print(f"{f['modules']} modules, {f['lines']:,} lines")
    print("modules per folder: " + ", ".join(f"{k} {v}" for k, v in
                                             f["modules_per_folder"].items()))
    print(f"largest: {f['largest'][0][0]} ({f['largest'][0][1]} lines); above {LIMIT} "
          f"lines: {len(f['above_limit'])}")
    print(f"function-level imports: {f['function_level_imports']} "
          f"({f['function_level_imports_not_heavy']} of them neither a heavy library nor a "
          f"netdp module that loads one)")
    print(f"branches on the topology kind: {f['kind_branches']} in "
          f"{len(f['kind_branches_per_file'])} files")
    print(f"back-arrows (imports against ORDER): {len(f['back_arrows'])}")
    for line in f["back_arrows"]:
        print(f"  {line}")
    print(f"type-only references against ORDER (annotations under TYPE_CHECKING): "
          f"{len(f['type_only_back_arrows'])}")
    for line in f["type_only_back_arrows"]:
        print(f"  {line}")
    print(f"folders importing each other: {f['folder_cycles']}")
    print(f"Task protocol: {len(f['task_protocol'])} methods ({', '.join(f['task_protocol'])})")
    print(f"string-keyed memo reads: {f['memo_reads']}; parameters read by a literal name: "
          f"{len(f['literal_parameter_reads'])}")


if __name__ == "__main__":
    main()
