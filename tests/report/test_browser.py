"""The report in a real browser: headless Chromium (Debian's ``chromium``) driven by
Playwright's Python package with ``executable_path``. Skipped where either is missing; the
screenshots are kept under tests/artifacts/ (not committed) for a person to look at."""

from __future__ import annotations

from pathlib import Path

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


def test_the_report_in_chromium_has_a_point_per_generation_and_fits_a_narrow_window(
    cli, home, chromium
):
    from lessonloop.store import open_store
    from lessonloop.store import runs as run_store

    assert cli("run", "grid_ctf", "-n", 12, "--matches", 3, "--run-id", "b12").code == 0
    assert cli("report", "b12").code == 0
    with open_store(readonly=True) as store:
        stored = [g["gate_decision"] for g in run_store.generations(store, "b12")]
    url = (home / "runs" / "b12" / "report.html").resolve().as_uri()
    ARTIFACTS.mkdir(exist_ok=True)

    page = chromium.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url)
    points = page.locator("#score-chart path.gen-point")
    assert points.count() == len(stored) == 12
    for decision, shape in (("advance", "m-advance"), ("rollback", "m-rollback")):
        assert page.locator(f"#score-chart path.{shape}.gen-point").count() == stored.count(
            decision
        )
    box = page.locator("#score-chart").bounding_box()
    assert box["width"] > 900 and box["height"] > 300, "the chart fills a 1280-wide window"
    first = page.locator("#score-chart path.gen-point[data-generation='1'] > title")
    assert first.text_content().startswith("generation 1: advance")
    page.screenshot(path=str(ARTIFACTS / "report-1280x800.png"))

    narrow = chromium.new_page(viewport={"width": 390, "height": 844})
    narrow.goto(url)
    overflow = narrow.evaluate("document.documentElement.scrollWidth")
    assert overflow <= 390, "the page itself never scrolls sideways"
    size = narrow.evaluate(  # the narrow drawing is the one shown (tests/report/test_fit.py)
        "parseFloat(getComputedStyle(document.querySelector('#score-chart-narrow text')).fontSize)"
        " * document.querySelector('#score-chart-narrow').getScreenCTM().a"
    )
    assert size >= 11, "tick labels stay readable on a phone"
    assert narrow.locator("#score-chart-narrow path.gen-point").count() == 12
    narrow.screenshot(path=str(ARTIFACTS / "report-390x844.png"), full_page=False)
