"""The report page without a browser: parsed with ``html.parser``, a run's and a sweep's
page have their sections, captioned and scoped tables, one inline SVG per figure, no URL
that would load anything from elsewhere; a JSON without provenance still renders; bad
input exits 2 with one line and writes nothing; ``--html`` leaves the numbers alone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from page_checks import Page, check_accessible, remote

import netdp
from netdp.report.html import flatten, inline_svg, number
from netdp.report.sections import summary_html
from netdp.run.cli import main
from netdp.run.page import run_page

RUN = ["simulate", "--nodes", "30", "--steps", "3000", "--seed", "1"]


def _page(path: Path) -> Page:
    return Page(path.read_text(encoding="utf-8"))


def _strip_times(result: dict) -> dict:
    result = dict(result)
    result.pop("runtime_s")
    result.pop("timing", None)  # wall times
    result["runs"] = [{k: v for k, v in r.items() if k != "runtime_s"} for r in result["runs"]]
    return result


def test_html_flag_leaves_every_number_as_it_is(default_run):
    assert _strip_times(default_run["result"]) == _strip_times(default_run["plain"])


def test_run_page_has_its_sections_tables_and_figures(default_run):
    page = _page(default_run["html"])
    assert page.sections == ["answer", "figures", "utility", "privacy", "timing", "command",
                             "provenance"]
    check_accessible(page)
    assert [f.key for f in page.figures] == ["fig-pairs", "fig-heatmap"]
    assert page.svgs == 2
    assert "netdp simulate --seed 1 --json --out" in page.text  # the command as typed
    result = default_run["result"]
    emp = page.table("Empirical pairwise losses")
    assert emp.rows == len(result["privacy"]["empirical"]) == 1
    assert emp.col_headers[:2] == ["accountant", "delta"]
    theory = page.table("Theoretical lines")
    assert theory.rows == len(result["privacy"]["theory"]) > 0
    for curve, eps in result["privacy"]["theory"].items():
        assert curve in page.text and number(eps) in page.text
    config = page.table("Resolved configuration")
    assert config.rows == sum(v is not None for v in result["config"].values())
    assert page.table("Each run").rows == 1
    provenance = page.table("Provenance of this result")  # what netdp.core.provenance records
    assert provenance.rows == len(flatten(result["provenance"])) >= 5
    assert result["provenance"]["python"] in page.text
    assert number(result["utility"]["abs_error"]) in page.text


def test_the_page_opens_with_the_answer(default_run):
    """The first section states the first accountant's mean against the LDP baseline (the
    ratio), its q99, the worst pair, the share of pairs below the baseline and the
    utility; the notebook's display opens with the same."""
    result = default_run["result"]
    e, ldp = result["privacy"]["empirical"][0], result["privacy"]["ldp"]
    for html in (default_run["html"].read_text(encoding="utf-8"), summary_html(result)):
        page = Page(html)
        answer = page.text[page.text.index("Mean pairwise loss"):]
        answer = answer[:answer.index("Utility")]  # the answer box, up to its last line
        assert f"ε(u → v) = {number(e['mean'])} ({e['accountant']}, δ = {number(e['delta'])})" \
            in answer
        assert f"{ldp['mean'] / e['mean']:.3g}x below the LDP baseline's {number(ldp['mean'])}" \
            in answer
        assert f"q99 {number(e['q99'])}, worst pair {number(e['max'])}" in answer
        assert f"{100 * e['below_ldp']:.3g}% of the pairs below" in answer
        assert f"Utility of the mean: abs error {number(result['utility']['abs_error'])}" \
            in page.text
    assert Page(summary_html(result)).text.index("The answer") < Page(
        summary_html(result)).text.index("Resolved configuration")


def test_a_pair_above_the_baseline_reads_above():
    """The ratio's side follows the numbers (a run without amplification reads above)."""
    from netdp.report.sections import answer_section

    result = {"privacy": {"ldp": {"mean": 2.0}, "empirical": [
        {"accountant": "kov", "delta": 1e-6, "pairs": 6, "mean": 3.0, "q99": 3.5,
         "max": 4.0, "below_ldp": 0.25}]}}
    text = Page(answer_section(result).html()).text
    assert "1.5x above the LDP baseline's 2" in text and "25% of the pairs below" in text


def test_run_page_loads_nothing_from_elsewhere(default_run):
    text = default_run["html"].read_text(encoding="utf-8")
    page = Page(text)
    assert page.urls and not remote(page.urls)  # the table of contents' anchors only
    assert page.scripts_with_src == 0 and page.links == 0
    assert "@import" not in text and "<?xml" not in text and "<!DOCTYPE svg" not in text
    assert remote(["https://cdn.example.org/x.js", "//x.org/y.css", "#a", "data:,x"]) == [
        "https://cdn.example.org/x.js", "//x.org/y.css"]  # the check can fail


def test_every_figure_id_is_unique_and_references_stay_inside_their_figure():
    svg = ('<?xml version="1.0"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" '
           '"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n<svg xmlns="http://www.w3.'
           'org/2000/svg" width="10pt"><metadata><rdf:RDF/></metadata><defs><path id="m1" '
           'd="M0 0"/><clipPath id="p1"><rect/></clipPath></defs><use xlink:href="#m1" '
           'clip-path="url(#p1)"/></svg>')
    out = inline_svg(svg, "fig-a", "a figure")
    assert out.startswith("<svg role=\"img\"") and "metadata" not in out
    assert 'id="fig-a-m1"' in out and 'href="#fig-a-m1"' in out and "url(#fig-a-p1)" in out
    assert '<title id="fig-a-title">a figure</title>' in out
    both = Page(out + inline_svg(svg, "fig-b", "another figure"))
    assert len(both.ids) == len(set(both.ids)) == 6


def test_a_result_without_provenance_renders_with_its_version_and_seed(default_run):
    result = dict(default_run["result"])
    result.pop("provenance", None)
    page = Page(run_page(result))
    assert "records no provenance object" in page.text
    rows = page.table("Version and seed")
    assert rows.rows == 3  # schema, version, seed
    # no matrix, no by-distance summary: the figures section says why and how to get them
    assert page.sections[:2] == ["answer", "figures"]
    assert "Pairs and heatmap figures not drawn: the page was made without the run's n x n " \
        "matrix" in page.text and "--pairs FILE.npy" in page.text
    assert page.table("Time").rows == len(result["timing"])
    check_accessible(page)


def test_a_provenance_object_renders_whatever_keys_it_holds(default_run):
    result = dict(default_run["result"])
    result["provenance"] = {"netdp": "9.9.9", "git": {"commit": "abc123", "dirty": False},
                            "python": "3.11.7", "dependencies": {"numpy": "2.0.1"},
                            "command": ["netdp", "simulate", "--seed", "1"]}
    page = Page(run_page(result))
    table = page.table("Provenance of this result")
    assert table.rows == 6
    for text in ("git.commit", "abc123", "dependencies.numpy", "2.0.1", "9.9.9"):
        assert text in page.text
    assert "netdp simulate --seed 1" in page.text  # the command it records is shown


@pytest.mark.slow
def test_report_command_with_the_matrix_draws_the_run_figures(tmp_path, capsys):
    pairs = tmp_path / "p.npy"
    out = tmp_path / "r.json"
    assert main([*RUN, "--out", str(out), "--pairs-out", str(pairs)]) == 0
    html = tmp_path / "page.html"
    assert main(["report", str(out), "--pairs", str(pairs), "--html", str(html)]) == 0
    assert f"wrote {html}" in capsys.readouterr().out
    page = _page(html)
    assert [f.key for f in page.figures] == ["fig-pairs", "fig-heatmap"]
    assert "870 pairwise losses" in page.figures[0].svg_title  # n = 30: 30 x 29


@pytest.mark.parametrize("argv, param", [
    (["report", "missing.json"], "PATH"),
    (["report", "bad.json"], "PATH"),
    (["report", "list.json"], "PATH"),
    (["report", "."], "PATH"),  # a folder, but no sweep's
    (["report", "good.json", "--pairs", "wrong.npy"], "pairs"),
    (["report", "good.json", "--pairs", "missing.npy"], "pairs"),
    (["report", ".", "--pairs", "wrong.npy"], "pairs"),
])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(argv, param, default_run, tmp_path,
                                                            capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("bad.json").write_text("{not json")
    Path("list.json").write_text("[1, 2]")
    Path("good.json").write_text(json.dumps(default_run["result"]))
    np.save("wrong.npy", np.zeros((3, 3)))
    assert main([*argv, "--html", "out.html"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{param}:" in err and "Traceback" not in err
    assert not Path("out.html").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json", "good.json",
                                                         "list.json", "wrong.npy"]


def test_an_unwritable_page_is_refused_before_the_run(tmp_path, capsys):
    assert main([*RUN, "--html", str(tmp_path / "no" / "page.html")]) == 2
    assert "html:" in capsys.readouterr().err


def test_gossip_page_draws_the_loss_by_distance_without_keeping_a_matrix(tmp_path):
    html = tmp_path / "g.html"
    assert main(["simulate", "--task", "sum", "--protocol", "gossip", "--topology",
                 "hypercube", "--nodes", "16", "--sigma", "1", "--seed", "1",
                 "--html", str(html)]) == 0
    page = _page(html)
    assert [f.key for f in page.figures] == ["fig-by-distance"]
    assert page.table("rdp: pairwise loss by hop distance").rows == 4  # distances 1..4
    check_accessible(page)


def test_attack_and_audit_results_render(tmp_path, capsys):
    for argv, sections in ((["attack", "--trials", "2", "--users", "2000", "--seed", "1"],
                            ["command", "provenance", "utility", "more-users", "more-gain",
                             "more-per_target"]),
                           (["audit", "--mechanism", "grr", "--epsilon", "1", "--trials",
                             "400", "--seed", "1"], ["command", "provenance", "audit"])):
        assert main([*argv, "--json"]) == 0
        result = json.loads(capsys.readouterr().out)
        path = tmp_path / f"{argv[0]}.json"
        path.write_text(json.dumps(result))
        assert main(["report", str(path), "--html", str(tmp_path / "p.html")]) == 0
        capsys.readouterr()
        page = _page(tmp_path / "p.html")
        for s in sections:
            assert s in page.sections, (s, page.sections)
        check_accessible(page)
        assert page.headings[0].startswith(f"netdp {argv[0]}")
    assert page.table("Audit").rows == len(result["audit"])


def test_sweep_page_has_spec_results_theory_and_preset_figures(tiny_sweep):
    page = _page(tiny_sweep["html"])
    assert page.sections == ["answer", "figures", "results", "command", "provenance"]
    check_accessible(page)
    assert [f.key for f in page.figures] == ["fig-privacy-vs-n", "fig-utility-vs-eps"]
    assert page.svgs == 2 and not remote(page.urls)
    means = page.table("Mean over seeds of each grid point")
    assert means.rows == 6  # 3 n x 2 eps
    assert means.col_headers[:3] == ["nodes", "epsilon", "seeds"]
    assert {"kov_mean", "rdp_mean", "ldp_mean"} <= set(means.col_headers)
    assert page.table("Theoretical lines at each grid point").rows == 6
    assert page.table("Grid axes").rows == 2
    assert page.table("Provenance of this sweep").rows >= 5  # the manifest's
    assert "netdp sweep" in page.text and "Runs by status: 12 ok." in page.text


def test_the_sweep_page_opens_with_the_answer(tiny_sweep):
    """How much ran, the seeds per point, and each accountant's mean loss against the LDP
    baseline's over the grid (its least and most amplified points); a partial sweep and
    unequal seeds are said."""
    from netdp.run.page import _sweep_answer
    from netdp.run.sweep.summary import grid_means
    from netdp.run.sweep.table import ResultTable

    table = ResultTable(tiny_sweep["out"], param="PATH")
    frame, manifest = table.dataframe(), table.manifest()
    text = Page(_sweep_answer(frame, manifest).html()).text
    assert "12 of 12 runs finished" in text and "6 grid points, 2 seeds each" in text
    means = grid_means(frame, manifest)
    for name in ("kov", "rdp"):
        ratio = means["ldp_mean"] / means[f"{name}_mean"]
        assert (f"{name}: the mean pairwise loss is {ratio.min():.3g}x to {ratio.max():.3g}x "
                "below the LDP baseline's mean") in text
    part = Page(_sweep_answer(frame.iloc[1:], manifest).html()).text
    assert "11 of 12 runs finished (a partial sweep" in part
    assert "unequal seeds: 1 to 2 per point" in part


def test_report_command_on_the_tiny_sweep_gives_the_same_tables(tiny_sweep, tmp_path):
    html = tmp_path / "again.html"
    assert main(["report", str(tiny_sweep["out"]), "--html", str(html)]) == 0
    a, b = _page(tiny_sweep["html"]), _page(html)
    assert [(t.caption, t.rows) for t in a.tables] == [(t.caption, t.rows) for t in b.tables]
    assert [f.key for f in a.figures] == [f.key for f in b.figures]


def test_a_sweep_where_n_does_not_vary_says_why_privacy_vs_n_is_not_drawn(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('seeds = 1\n[fixed]\nnodes = 10\n[grid]\nepsilon = [0.5, 1.0]\n')
    html = tmp_path / "s.html"
    assert main(["sweep", str(spec), "--out", str(tmp_path / "o"), "--backend", "serial",
                 "--no-progress", "--html", str(html)]) == 0
    page = _page(html)
    assert [f.key for f in page.figures] == ["fig-utility-vs-eps"]
    assert "privacy-vs-n not drawn: nodes takes one value in this sweep" in page.text


def test_repr_html_shows_the_pages_summary_without_figures_or_script(default_run):
    report = netdp.simulate({"seed": 1})
    rich = Page(report._repr_html_())
    page = _page(default_run["html"])
    assert rich.sections == [s for s in page.sections if s != "figures"]
    assert [(t.caption, t.rows, t.col_headers) for t in rich.tables] == [
        (t.caption, t.rows, t.col_headers) for t in page.tables]
    assert rich.svgs == 0 and "<script" not in report._repr_html_()
    assert summary_html(report.to_json()) == report._repr_html_()


def test_a_sweep_with_a_failed_run_lists_it(tiny_sweep, tmp_path):
    folder = tmp_path / "out"
    shutil.copytree(tiny_sweep["out"], folder)
    part = folder / "rows" / "part-99999999999999999999-1-1.jsonl"
    part.write_text(json.dumps({"config_hash": "deadbeef", "seed": 7, "status": "error",
                                "error": "InputError: planted"}) + "\n")
    html = tmp_path / "f.html"
    assert main(["report", str(folder), "--html", str(html)]) == 0
    page = _page(html)
    assert page.sections == ["answer", "figures", "results", "failures", "command",
                             "provenance"]
    assert "12 of 12 runs finished" in page.text
    assert "1 run(s) ended with an error (listed below)" in page.text
    assert page.table("Runs that ended with an error").rows == 1
    assert "InputError: planted" in page.text and "12 ok, 1 error" in page.text
    assert page.table("Mean over seeds of each grid point").rows == 6  # no error averaged in
