"""The package's shape: no import cycle anywhere (function-level imports count), and the
commands load heavy libraries only where they use them."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "netdp"
HEAVY = ("numba", "scipy", "networkx", "dask", "distributed", "matplotlib", "pandas", "simpy",
         "dp_accounting", "tqdm", "statsmodels")


def module_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """``{module: modules of the package it imports}``, from every import statement
    (top-level, in functions, under ``TYPE_CHECKING``); a module importing its own parent
    package is not an edge."""
    modules = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and not name.startswith(target + "."):
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle():
    found = cycles(module_graph())
    assert not found, "import cycles: " + "; ".join(" -> ".join(c) for c in found)


def test_the_cycle_finder_finds_a_planted_cycle(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from pkg.sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from .. import a\n")
    (pkg / "c.py").write_text("import pkg\n")  # a child importing its package: no edge
    assert cycles(module_graph(pkg)) == [["pkg.a", "pkg.sub.b"]]


def _loaded(code: str) -> list[str]:
    """The heavy libraries a fresh interpreter has loaded after running ``code``."""
    probe = (f"import sys\n{code}\nimport json\n"
             f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & "
             f"set({list(HEAVY)!r}))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, cwd=PACKAGE.parent)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["simulate", "--help"],
                                  ["account", "--help"],
                                  ["sweep", "--help"], ["plot", "--help"]])
def test_help_loads_no_heavy_library(argv):
    code = (f"from netdp.run.cli import main\nimport contextlib, io\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    main({argv!r})")
    assert _loaded(code) == []


def test_import_netdp_loads_no_heavy_library():
    assert _loaded("import netdp") == []


def test_the_default_simulation_loads_only_what_it_uses():
    """`netdp simulate` as it comes (n = 100: rdp, pld being over its budget there)."""
    code = ("from netdp.run.cli import main\nimport contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    main(['simulate'])")
    loaded = set(_loaded(code))
    assert loaded <= {"numba", "scipy"}, loaded  # the tracker's kernels (numba loads scipy)
    assert "numba" in loaded  # the probe itself can fail
    ours = ("scipy.special", "scipy.optimize", "scipy.stats", "scipy.sparse", "scipy.signal")
    probe = ("import sys, contextlib, io\nfrom netdp.run.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             "    main(['simulate'])\n"
             f"print([m for m in {ours!r} if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, cwd=PACKAGE.parent)
    assert done.stdout.strip().splitlines()[-1] == "[]"


#: Annotations under ``TYPE_CHECKING`` that name a type of a later folder (no import at run
#: time): :class:`~netdp.core.setup.Setup` holds the run's graph.
KNOWN_TYPE_ONLY = {"netdp/core/setup.py -> netdp.graphs"}


def _layout_facts():
    import importlib.util

    path = PACKAGE.parent / "experiments" / "layout_facts.py"
    spec = importlib.util.spec_from_file_location("layout_facts", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_new_import_against_the_folder_order():
    """``experiments/layout_facts.py`` lists the imports from a folder to a later one in
    its ``ORDER`` (lowest layer first): none beyond the known ones."""
    facts = _layout_facts().facts()
    assert facts["back_arrows"] == [], f"imports against the folder order: {facts['back_arrows']}"
    new = set(facts["type_only_back_arrows"]) - KNOWN_TYPE_ONLY
    assert not new, f"type-only references against the folder order: {sorted(new)}"
    assert facts["folder_cycles"] == []


def test_the_back_arrow_finder_finds_a_planted_one(tmp_path):
    lf = _layout_facts()
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "errors.py").write_text("from netdp.tasks import x\n")
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "__init__.py").write_text("from netdp.core.errors import y\n")
    lf.ROOT = tmp_path
    (arrow,) = lf.facts()["back_arrows"]  # tasks -> core runs with the order
    assert arrow.endswith("core/errors.py -> netdp.tasks")


def test_imports_at_module_top_and_modules_within_the_limit():
    """Every import inside a function loads a heavy library (directly, or through a netdp
    module that does at its top), so the start-up path stays light; everything else sits at
    the module's top, where the dependency graph can be read. No module above
    ``LIMIT`` lines."""
    lf = _layout_facts()
    facts = lf.facts()
    assert facts["function_level_imports_light"] == []
    assert facts["above_limit"] == [], f"modules above {lf.LIMIT} lines"


def test_the_hidden_import_finder_finds_a_planted_one(tmp_path):
    lf = _layout_facts()
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "errors.py").write_text("def f():\n    from netdp.core import x\n")
    (tmp_path / "core" / "x.py").write_text("import math\n")
    (tmp_path / "core" / "y.py").write_text("def g():\n    from netdp.core import z\n")
    (tmp_path / "core" / "z.py").write_text("import numba\n")
    lf.ROOT = tmp_path
    light = lf.facts()["function_level_imports_light"]
    assert len(light) == 1 and "core/errors.py:2 " in light[0]  # z loads numba: not hidden


def test_the_topology_kind_is_asked_of_its_object_outside_graphs():
    """Comparisons of the topology kind with ``"ring"``, ``"complete"`` or ``"graph"`` live
    in ``netdp/graphs/`` only; elsewhere code asks the walk kind
    (:mod:`netdp.graphs.walk_kind`) what it needs to know."""
    facts = _layout_facts().facts()
    outside = {f: k for f, k in facts["kind_branches_per_file"].items()
               if not f.startswith("netdp/graphs/")}
    assert outside == {}
