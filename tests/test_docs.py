"""The docs stay true: the CLI reference matches the parser, the quickstart's commands
parse (and the cheapest one prints what the quickstart shows), links resolve, and every
API name, repository path and curve name the guides cite exists."""

from __future__ import annotations

import importlib
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from netdp import __version__
from netdp.bounds.curves import CURVES
from netdp.run import clidoc as _clidoc
from netdp.run.cli import build_parser
from netdp.run.cli.simulate import parameters
from netdp.tasks import make_config

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
GUIDES = ("quickstart.md", "concepts.md", "extending.md", "index.md", "composition.md")
CHEAPEST = "python -m netdp simulate --nodes 50 --seed 1"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)


def _blocks(text: str, lang: str) -> list[str]:
    return [body for kind, body in FENCE.findall(text) if kind == lang]


def _command_lines(text: str) -> list[list[str]]:
    """argv (after ``netdp``) of every netdp command line in the ``bash`` blocks."""
    out = []
    for body in _blocks(text, "bash"):
        for line in body.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words[:3] == ["python", "-m", "netdp"]:
                out.append(words[3:])
            elif words[:1] == ["netdp"]:
                out.append(words[1:])
    return out


def _check_parses(argv: list[str]) -> None:
    """Parse like ``netdp``; for ``simulate`` also validate the configuration (no run)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"`netdp {shlex.join(argv)}` does not parse (exit {exc.code})")
    if args.command == "simulate":
        make_config(parameters(args))


# --------------------------------------------------------------------------- CLI reference

def test_cli_reference_matches_the_parser():
    assert _clidoc.stale(DOCS / "cli.md") is None, (
        "docs/cli.md is stale: run `python -m netdp.run.clidoc > docs/cli.md`")


def test_clidoc_covers_every_command_and_detects_a_stale_page(tmp_path, capsys):
    page = _clidoc.render()
    for name in ("netdp", *_clidoc.commands(build_parser())):
        assert f"\n## {'netdp ' if name != 'netdp' else ''}{name}\n" in page
    assert "--nodes N, -n N" in page or "-n, --nodes N" in page
    assert _clidoc.render() == page  # stable
    good, bad = tmp_path / "good.md", tmp_path / "bad.md"
    good.write_text(page, encoding="utf-8")
    bad.write_text(page.replace("--nodes", "--vertices"), encoding="utf-8")
    assert _clidoc.main(["--check", str(good)]) == 0
    assert _clidoc.main(["--check", str(bad)]) == 1
    assert "stale" in capsys.readouterr().err
    changed = _clidoc.structure(bad.read_text(encoding="utf-8"))
    assert _clidoc.structure(page)["netdp simulate"] != changed["netdp simulate"]


# --------------------------------------------------------------------------- quickstart

def _layout_block(readme: str) -> str:
    start = readme.index("<!-- generated: python -m netdp.run.layout")
    start = readme.index("\n", start) + 1
    return readme[start:readme.index("<!-- /generated -->", start)]


def test_readme_layout_is_the_package_s(tmp_path, monkeypatch):
    """The README's Layout section is what `python -m netdp.run.layout` generates from the
    subpackages' docstrings (every folder named exists; every subpackage is listed); a
    folder renamed in the README, or a new subpackage, is caught."""
    from netdp.run import layout

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert _layout_block(readme) == layout.layout()
    for folder in re.findall(r"`(netdp/[a-z_]+)/`", _layout_block(readme)):
        assert (REPO / folder / "__init__.py").is_file(), folder
    stale = readme.replace("`netdp/tracking/`", "`netdp/privacy/`")
    assert _layout_block(stale) != layout.layout()
    for sub in [p for p in layout.PACKAGE.iterdir() if (p / "__init__.py").is_file()] + [
            tmp_path / "extra"]:  # the package's subpackages and a new one
        (tmp_path / sub.name).mkdir(exist_ok=True)
        (tmp_path / sub.name / "__init__.py").write_text(
            '"""A new subpackage."""\n' if sub.name == "extra" else
            (sub / "__init__.py").read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(layout, "PACKAGE", tmp_path)
    grown = layout.layout()
    assert "  - `netdp/extra/` A new subpackage.\n" in grown
    assert _layout_block(readme) != grown


def test_quickstart_commands_parse():
    text = (DOCS / "quickstart.md").read_text(encoding="utf-8")
    commands = _command_lines(text)
    used = {argv[0] for argv in commands}
    assert len(commands) >= 10 and {"simulate", "bounds", "topologies"} <= used
    for argv in commands:
        _check_parses(argv)


@pytest.mark.parametrize("guide", [g for g in GUIDES if g != "quickstart.md"])
def test_other_guides_commands_parse(guide):
    for argv in _command_lines((DOCS / guide).read_text(encoding="utf-8")):
        _check_parses(argv)


def test_quickstart_sweep_spec_is_valid_and_runs_as_many_runs_as_it_says():
    from netdp.run.sweep.spec import load_spec, parse_spec

    text = (DOCS / "quickstart.md").read_text(encoding="utf-8")
    (block,) = _blocks(text, "toml")
    spec = parse_spec(tomllib.loads(block))
    runs = len(spec.points) * len(spec.seeds)
    assert f"{runs} runs" in text
    for argv in _command_lines(text):
        if argv[0] == "sweep" and (REPO / argv[1]).is_file():
            load_spec(REPO / argv[1])  # the shipped specs validate


def test_quickstart_python_runs(capsys):
    blocks = _blocks((DOCS / "quickstart.md").read_text(encoding="utf-8"), "python")
    assert blocks
    for code in blocks:
        exec(compile(code, "quickstart.md", "exec"), {})
    assert "kov" in capsys.readouterr().out


def test_a_bad_command_would_be_caught():
    with pytest.raises(pytest.fail.Exception):
        _check_parses(["simulate", "--nodse", "5"])
    with pytest.raises(ValueError):
        _check_parses(["simulate", "--task", "histogram", "--mechanism", "gaussian"])
    assert _command_lines("```bash\nnetdp bounds \\\n  --eps0 0.4  # c\nls\n```\n") == [
        ["bounds", "--eps0", "0.4"]]


def test_the_cheapest_quickstart_command_prints_what_the_quickstart_shows():
    text = (DOCS / "quickstart.md").read_text(encoding="utf-8")
    blocks = FENCE.findall(text)
    at = [i for i, (kind, body) in enumerate(blocks)
          if kind == "bash" and body.strip() == CHEAPEST]
    assert at, f"the quickstart no longer shows `{CHEAPEST}` in a bash block of its own"
    kind, shown = blocks[at[0] + 1]
    assert kind == "text", "the command's output should follow it in a text block"
    proc = subprocess.run(shlex.split(CHEAPEST.replace("python", sys.executable, 1)),
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr

    def norm(out: str) -> list[str]:
        lines = [re.sub(r"^netdp \S+:", "netdp VERSION:", line.rstrip())
                 for line in out.strip().splitlines()]
        return [line for line in lines if not re.search(r"hops in \S+ s(;|$)|^  time: ", line)]

    assert norm(proc.stdout) == norm(shown), (
        "the quickstart's sample output is out of date: paste the new output of "
        f"`{CHEAPEST}` into docs/quickstart.md")
    assert f"netdp {__version__}:" in proc.stdout


# --------------------------------------------------------------------------- links, names

def _slug(heading: str) -> str:
    text = re.sub(r"`", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(text: str) -> set[str]:
    text = FENCE.sub("", text)
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def _links(text: str) -> list[str]:
    text = re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))  # not in code
    return re.findall(r"\[[^\]]*\]\(([^)\s]+)\)", text)


def _doc_files() -> list[Path]:
    return [*sorted(DOCS.glob("*.md")), REPO / "README.md", REPO / "experiments" / "README.md"]


def test_links_between_docs_resolve():
    checked, broken = 0, []
    for doc in _doc_files():
        if not doc.is_file():
            continue
        for link in _links(doc.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", link):
                continue  # http:, https:, mailto:
            checked += 1
            path, _, anchor = link.partition("#")
            target = (doc.parent / path).resolve() if path else doc
            if not target.exists():
                broken.append(f"{doc.relative_to(REPO)}: {link} (no such file)")
            elif anchor and target.suffix == ".md" and anchor not in _anchors(
                    target.read_text(encoding="utf-8")):
                broken.append(f"{doc.relative_to(REPO)}: {link} (no such heading)")
    assert not broken, "broken links:\n" + "\n".join(broken)
    assert checked >= 10


def test_link_checker_can_fail():
    assert _links("[a](x.md#b) `[c](d)`\n```\n[e](f)\n```\n") == ["x.md#b"]
    assert _anchors("# A `b` c!\n## Déjà vu\n") == {"a-b-c", "déjà-vu"}


def _resolve(dotted: str) -> object:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


@pytest.mark.parametrize("guide", GUIDES)
def test_cited_names_paths_and_curves_exist(guide):
    text = (DOCS / guide).read_text(encoding="utf-8")
    spans = re.findall(r"`([^`\n]+)`", FENCE.sub("", text))
    for span in spans:
        for dotted in re.findall(r"\bnetdp(?:\.\w+)+", span):
            try:
                _resolve(dotted)
            except (ImportError, AttributeError):
                pytest.fail(f"{guide} cites `{dotted}`, which does not exist")
        if re.fullmatch(r"(netdp|tests|topologies|experiments|docs)/[\w./*-]+", span):
            assert list(REPO.glob(span)), f"{guide} cites {span}, which does not exist"
        for curve in re.findall(r"\b(?:complete|ring|histogram)-[a-z-]*[a-z]\b", span):
            assert curve in CURVES, f"{guide} names the curve {curve!r}, not in CURVES"
