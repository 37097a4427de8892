"""The pages follow runs they did not see start, in a real browser (Debian's chromium through
Playwright, skipped where missing) against the real ``lessonloop serve``: a finished run's open
page shows the generations of its extension, and the runs page shows a run started from the
command line and its status as it changes. Each within the issue's 2 s of the event."""

from __future__ import annotations

import subprocess
import sys

from lessonloop import paths
from tests.conftest import subprocess_env

from .conftest import ARTIFACTS, paced_reference, wait_for
from .test_browser import SHOWN_WITHIN_MS, completed_generations

POINTS = "() => document.querySelectorAll('#score-chart path.gen-point').length"


def played(home, reference: str, run_id: str, generations: int) -> subprocess.Popen:
    """``lessonloop run REFERENCE -n N --run-id ID`` as its own process (as a person types it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "lessonloop", "run", reference, "-n", str(generations)]
        + ["--matches", "2", "--match-timeout", "120", "--run-id", run_id],
        env=subprocess_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def finished(process: subprocess.Popen) -> None:
    assert process.wait(timeout=120) == 0, process.stderr.read()


def test_a_finished_runs_open_page_follows_its_extension(home, tmp_path, served, chromium):
    reference = paced_reference(tmp_path)
    finished(played(home, reference, "later", 1))
    page = chromium.new_page(viewport={"width": 1280, "height": 800})
    page.goto(f"{served.url}/runs/later")
    assert page.evaluate(POINTS) == 1
    assert "completed" in page.locator("main .sub").first.text_content()
    page.wait_for_function("() => document.getElementById('live').textContent === 'not running'")

    hold = tmp_path / "hold"
    hold.touch()  # the extension's generation waits until the file is gone
    process = played(home, reference, "later", 2)
    try:
        log = paths.run_dir("later") / "events.ndjson"
        wait_for(lambda: '"run_resumed"' in log.read_text(), "the run to be extended")
        page.wait_for_function(
            "() => document.querySelector('main .sub').textContent.includes('running')",
            timeout=SHOWN_WITHIN_MS,
        )
        hold.unlink()
        wait_for(lambda: completed_generations("later") == 2, "generation 2 to complete")
        page.wait_for_function(f"() => ({POINTS})() === 2", timeout=SHOWN_WITHIN_MS)
        finished(process)
        page.wait_for_function(
            "() => document.querySelector('main .sub').textContent.includes('completed')",
            timeout=SHOWN_WITHIN_MS,
        )
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "dashboard-run-extended.png"))
    finally:
        hold.unlink(missing_ok=True)
        if process.poll() is None:
            process.kill()
        process.wait()


def row_text(page, run_id: str, cell: str) -> str:
    return page.evaluate(
        "([runId, cell]) => { const row = document.querySelector(`tr[data-run='${runId}']`);"
        " return row ? row.querySelector('.' + cell).textContent : ''; }",
        [run_id, cell],
    )


def wait_for_row(page, run_id: str, cell: str, text: str) -> None:
    page.wait_for_function(
        "([runId, cell, text]) => { const row = document.querySelector(`tr[data-run='${runId}']`);"
        " return row !== null && row.querySelector('.' + cell).textContent === text; }",
        arg=[run_id, cell, text],
        timeout=SHOWN_WITHIN_MS,
    )


def test_the_runs_page_shows_a_run_started_elsewhere_and_its_status(
    home, tmp_path, served, chromium
):
    reference = paced_reference(tmp_path)
    page = chromium.new_page(viewport={"width": 1280, "height": 800})
    page.goto(f"{served.url}/")
    assert "No runs yet" in page.locator("main").text_content()

    hold = tmp_path / "hold"
    hold.touch()
    process = played(home, reference, "fresh", 1)
    try:
        log = paths.run_dir("fresh") / "events.ndjson"
        wait_for(lambda: log.exists() and '"generation_started"' in log.read_text(), "a start")
        wait_for_row(page, "fresh", "status", "running")
        assert row_text(page, "fresh", "generations") == "0/1"
        hold.unlink()
        finished(process)
        wait_for_row(page, "fresh", "status", "completed")
        assert row_text(page, "fresh", "generations") == "1/1"

        hold.touch()  # extended from the command line: the row follows it again
        process = played(home, reference, "fresh", 2)
        wait_for(lambda: '"run_resumed"' in log.read_text(), "the run to be extended")
        wait_for_row(page, "fresh", "status", "running")
        hold.unlink()
        finished(process)
        wait_for_row(page, "fresh", "generations", "2/2")
        wait_for_row(page, "fresh", "status", "completed")
        assert page.locator("#runs tbody tr").count() == 1
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "dashboard-runs-live.png"))
    finally:
        hold.unlink(missing_ok=True)
        if process.poll() is None:
            process.kill()
        process.wait()
