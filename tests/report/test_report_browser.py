"""The report pages in a real browser: headless Chromium opens the page of the README's
default run (``netdp simulate --json --html``) and of the Figure 1b sweep, the DOM it
dumps has every section, table and figure, and no figure is blank in its screenshot
(pixel variance of each figure's region, located by the page's own script).

Without Chromium the tests skip, unless ``NETDP_REQUIRE_BROWSER=1`` (CI sets it, and
installs Debian's ``chromium``): then they fail. The screenshots are kept in the folder
``NETDP_BROWSER_ARTIFACTS`` names (default: under pytest's tmp). The default tier sweeps
``figure1b_tiny.toml`` (n <= 50, serial; seconds); the slow tier the README's
``experiments/sweeps/figure1b_quick.toml`` (minutes on 2 cores).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from page_checks import Page, check_accessible, remote

from netdp.report.html import Section, document, figure
from netdp.run.cli import main

REPO = Path(__file__).resolve().parents[2]
QUICK_SPEC = REPO / "experiments" / "sweeps" / "figure1b_quick.toml"
WIDTH = 1280
#: A figure region whose grey levels vary less than this (std on 0..255) is blank: a
#: drawn axis, tick labels and one curve alone give tens.
BLANK_STD = 8.0
#: Least share of a figure's region that is not white (ink): a blank or clipped SVG has ~0.
MIN_INK = 0.01


def _chromium() -> str:
    found = next((p for p in map(shutil.which, ("chromium", "chromium-browser",
                                                "google-chrome")) if p), None)
    if found is None:
        if os.environ.get("NETDP_REQUIRE_BROWSER") == "1":
            pytest.fail("NETDP_REQUIRE_BROWSER=1 but no chromium on PATH (.ci/run installs "
                        "Debian's chromium)")
        pytest.skip("no chromium on PATH (apt-get install chromium); CI requires it")
    return found


@pytest.fixture(scope="module")
def browser() -> str:
    return _chromium()


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    named = os.environ.get("NETDP_BROWSER_ARTIFACTS")
    folder = Path(named) if named else tmp_path_factory.mktemp("browser-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _chrome(browser: str, profile: Path, *args: str) -> str:
    out = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                          "--hide-scrollbars", "--force-device-scale-factor=1",
                          f"--user-data-dir={profile}", *args], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def open_page(browser: str, html: Path, shot: Path) -> tuple[Page, np.ndarray]:
    """The DOM Chromium builds from ``html`` (after the page's script ran) and a
    screenshot of the whole page (a window as tall as the page reports itself)."""
    from PIL import Image

    profile = shot.with_suffix(".profile")
    dom = Page(_chrome(browser, profile, f"--window-size={WIDTH},1000", "--dump-dom",
                       html.resolve().as_uri()))
    height = int(dom.body["data-height"] or 0)
    assert height > 500, dom.body
    _chrome(browser, profile, f"--window-size={WIDTH},{height + 20}",
            f"--screenshot={shot}", html.resolve().as_uri())
    shutil.rmtree(profile, ignore_errors=True)
    pixels = np.asarray(Image.open(shot).convert("L"), dtype=float)
    assert pixels.shape[1] == WIDTH and pixels.shape[0] >= height
    return dom, pixels


def figure_regions(dom: Page, pixels: np.ndarray) -> dict[str, np.ndarray]:
    """Each figure's pixels, cut from the screenshot at the box the page recorded."""
    out = {}
    for f in dom.figures:
        left, top, width, height = map(int, str(f.attrs["data-box"]).split(","))
        assert width > 200 and height > 150, (f.key, width, height)
        assert top + height <= pixels.shape[0] and left + width <= pixels.shape[1], f.key
        out[f.key] = pixels[top:top + height, left:left + width]
    return out


def blank(region: np.ndarray) -> bool:
    """Nothing drawn: the grey levels barely vary, or almost nothing is darker than white."""
    return bool(region.std() < BLANK_STD or (region < 200).mean() < MIN_INK)


def check_page(browser: str, html: Path, shot: Path, sections: list[str],
               figures: list[str], tables: list[str]) -> None:
    """Sections, figures and tables in the DOM, no figure blank, and the answer's box
    (every page opens with one) ending above 800 pixels of a 1000-pixel-high window:
    read without scrolling. The first screen is kept beside the shot
    (``SHOT-first-screen.png``: the docs' screenshots)."""
    from PIL import Image

    dom, pixels = open_page(browser, html, shot)
    left, top, width, height = map(int, str(dom.answer["data-box"]).split(","))
    assert width > 300 and top > 0 and top + height < 800, (top, height)
    full = Image.open(shot).convert("RGB")
    full.crop((0, 0, full.size[0], 1000)).save(shot.with_name(shot.stem + "-first-screen.png"))
    assert dom.sections == sections
    assert [f.key for f in dom.figures] == figures
    assert dom.svgs == len(figures) and not remote(dom.urls)
    check_accessible(dom)
    for caption in tables:
        assert dom.table(caption).rows > 0, caption
    for key, region in figure_regions(dom, pixels).items():
        assert not blank(region), (key, region.std(), (region < 200).mean())


RUN_TABLES = ["Resolved configuration", "Mechanism", "Provenance of this result",
              "Utility over the runs", "Each run", "Empirical pairwise losses", "LDP baseline",
              "Theoretical lines"]
SWEEP_TABLES = ["Grid axes", "Fixed parameters", "Provenance of this sweep",
                "Mean over seeds of each grid point", "Theoretical lines at each grid point"]


def test_the_default_runs_page_in_chromium(browser, artifacts, default_run):
    check_page(browser, default_run["html"], artifacts / "report-run.png",
               ["answer", "figures", "utility", "privacy", "timing", "command", "provenance"],
               ["fig-pairs", "fig-heatmap"], RUN_TABLES)


SWEEP_SECTIONS = ["answer", "figures", "results", "command", "provenance"]
SWEEP_FIGURES = ["fig-privacy-vs-n", "fig-utility-vs-eps"]


def test_the_tiny_figure1b_sweeps_page_in_chromium(browser, artifacts, tiny_sweep):
    check_page(browser, tiny_sweep["html"], artifacts / "report-sweep-tiny.png",
               SWEEP_SECTIONS, SWEEP_FIGURES, SWEEP_TABLES)


@pytest.mark.slow
def test_the_readme_figure1b_quick_sweeps_page_in_chromium(browser, artifacts, tmp_path):
    html = tmp_path / "fig1b.html"  # the README's command, with --html
    assert main(["sweep", str(QUICK_SPEC), "--out", str(tmp_path / "fig1b"), "--no-progress",
                 "--html", str(html)]) == 0
    check_page(browser, html, artifacts / "report-sweep.png", SWEEP_SECTIONS, SWEEP_FIGURES,
               SWEEP_TABLES)


def test_a_blank_figure_is_caught(browser, artifacts, tmp_path):
    """The check can fail: an empty SVG of a figure's size, and one drawn all white."""
    empty = '<svg xmlns="http://www.w3.org/2000/svg" width="600pt" height="300pt"></svg>'
    white = empty.replace("></svg>", '><rect width="100%" height="100%" fill="#fff"/></svg>')
    drawn = empty.replace("></svg>", '><path d="M0 0 L800 400" stroke="#000" stroke-width="40"/>'
                          '<rect x="40" y="40" width="300" height="200" fill="#0072B2"/></svg>')
    body = "\n".join(figure(svg, key, f"{key} figure, drawn for the blank check", key)
                     for key, svg in (("empty", empty), ("white", white), ("drawn", drawn)))
    html = tmp_path / "blank.html"
    html.write_text(document("blank", "planted", [Section("figures", "Figures", body)], "-"))
    dom, pixels = open_page(browser, html, artifacts / "planted-blank.png")
    verdict = {k: blank(r) for k, r in figure_regions(dom, pixels).items()}
    assert verdict == {"empty": True, "white": True, "drawn": False}
