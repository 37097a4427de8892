"""Every chart fits its window, in a real browser (headless Chromium, skipped where missing):
at 1280x800 and at 390x844 the charts of ``report.html`` and of ``compare --html`` are as wide
as the window allows, nothing scrolls sideways, the last generation's point is on screen and
no label renders under 11 px."""

from __future__ import annotations

from .fit import check_charts_fit


def test_the_reports_charts_fit_a_wide_and_a_narrow_window(cli, home, chromium):
    assert cli("run", "grid_ctf", "-n", 40, "--matches", 2, "--run-id", "fit40").code == 0
    assert cli("report", "fit40").code == 0
    url = (home / "runs" / "fit40" / "report.html").resolve().as_uri()
    check_charts_fit(chromium, url, "fit-report", charts=3, last=40)


def test_the_comparisons_chart_fits_a_wide_and_a_narrow_window(cli, home, tmp_path, chromium):
    for run_id, seed in (("left", 0), ("right", 3)):
        assert (
            cli("run", "grid_ctf", "-n", 6, "--matches", 2, "--seed", seed, "--run-id", run_id).code
            == 0
        )
    target = tmp_path / "compare.html"
    assert cli("compare", "left", "right", "--matches", 4, "--html", target).code == 0
    check_charts_fit(chromium, target.resolve().as_uri(), "fit-compare", charts=1)
