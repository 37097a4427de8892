"""The dashboard in a real browser (Debian's chromium through Playwright, skipped where
missing), served by the real ``lessonloop serve`` process: a running run's page shows a
generation completing within 2 s, forgetting a memory from its page removes it from
``memory list``, and a promotion candidate's trials unfold on the promotions page. Screenshots go to tests/artifacts/ (not committed)."""

from __future__ import annotations

import json
import subprocess
import sys

from lessonloop import paths
from tests.conftest import subprocess_env

from .conftest import ARTIFACTS, paced_reference, wait_for

SHOWN_WITHIN_MS = 2000  # the bound: a completed generation is on the open page by then


def completed_generations(run_id: str) -> int:
    log = paths.run_dir(run_id) / "events.ndjson"
    if not log.exists():
        return 0
    return sum('"generation_completed"' in line for line in log.read_text().splitlines())


def test_a_running_runs_page_shows_a_new_generation_as_it_completes(
    home, tmp_path, run_cli, served, chromium
):
    reference = paced_reference(tmp_path)
    common = ["--matches", 2, "--match-timeout", 120, "--run-id", "live"]
    assert run_cli("run", reference, "-n", 1, *common).code == 0
    hold = tmp_path / "hold"
    hold.touch()  # the next generation's matches wait until the file is gone
    process = subprocess.Popen(
        [sys.executable, "-m", "lessonloop", "run", reference, "-n", "2", *map(str, common)],
        env=subprocess_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(
            lambda: (
                '"generation_started"'
                in (paths.run_dir("live") / "events.ndjson").read_text().splitlines()[-1]
            ),
            "generation 2 to start",
        )
        page = chromium.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{served.url}/runs/live")
        assert page.locator("#score-chart path.gen-point").count() == 1
        assert "running" in page.locator("main .sub").first.text_content()
        page.wait_for_function(
            "() => document.getElementById('live').textContent.includes('follow')"
        )

        hold.unlink()
        wait_for(lambda: completed_generations("live") == 2, "generation 2 to complete")
        page.wait_for_function(
            "() => document.querySelectorAll('#score-chart path.gen-point').length === 2",
            timeout=SHOWN_WITHIN_MS,
        )
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "dashboard-run-live.png"))
        assert process.wait(timeout=120) == 0, process.stderr.read()
        page.wait_for_function(
            "() => document.getElementById('live').textContent === 'not running'"
        )
        assert "completed" in page.locator("main .sub").first.text_content()
    finally:
        hold.unlink(missing_ok=True)
        if process.poll() is None:
            process.kill()
        process.wait()


def test_forgetting_a_memory_on_its_page_removes_it_from_memory_list(run_cli, served, chromium):
    for summary in ("Indent YAML with two spaces", "Use SQLite for the store"):
        assert run_cli("memory", "add", "--type", "decision", "--summary", summary).code == 0
    listed = json.loads(run_cli("memory", "list", "--json").out)
    doomed = next(item for item in listed if item["summary"].startswith("Indent"))

    page = chromium.new_page(viewport={"width": 1280, "height": 800})
    page.goto(f"{served.url}/memories")
    rows = page.locator("tbody tr")
    assert rows.count() == 2
    assert page.locator("main .sub").text_content().startswith("2 memories")
    asked = []
    page.on("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    page.locator(f"tr[data-id='{doomed['id']}'] button.forget").click()
    page.wait_for_selector(f"tr[data-id='{doomed['id']}']", state="detached")
    assert asked and "Indent YAML with two spaces" in asked[0]
    assert "forgot [project" in page.locator("#message").text_content()
    assert page.locator("main .sub").text_content().startswith("1 memory,"), "the count follows"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "dashboard-memories.png"))

    left = json.loads(run_cli("memory", "list", "--json").out)
    assert [item["summary"] for item in left] == ["Use SQLite for the store"]


def test_a_declined_confirmation_forgets_nothing(run_cli, served, chromium):
    assert run_cli("memory", "add", "--type", "decision", "--summary", "Keep me").code == 0
    page = chromium.new_page()
    page.goto(f"{served.url}/memories")
    page.on("dialog", lambda dialog: dialog.dismiss())
    page.locator("button.forget").click()
    assert page.locator("tbody tr").count() == 1
    assert [item["summary"] for item in json.loads(run_cli("memory", "list", "--json").out)] == [
        "Keep me"
    ]


def test_a_runs_page_fits_a_wide_and_a_narrow_window(finished_run, served, chromium):
    from tests.report.fit import check_charts_fit

    check_charts_fit(chromium, f"{served.url}/runs/{finished_run}", "fit-dashboard-run", 3, last=3)


BROKEN_WORDS = """
() => {
  const broken = [];
  for (const cell of document.querySelectorAll('main td')) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const lines = new Set([...range.getClientRects()].map((box) => Math.round(box.top)));
        if (lines.size > 1) broken.push(word[0]);
      }
    }
  }
  return {broken, cells: document.querySelectorAll('main td').length,
          page: document.documentElement.scrollWidth};
}
"""


def test_the_tables_read_whole_words_at_390_pixels(finished_run, run_cli, served, chromium):
    """The memories, playbooks and runs tables and a run's page (its gate history, its model
    calls) at 390x844 (and 1280x800): no word is cut over two lines (a column a few letters
    wide did: "pr / oje / ct 3", "scenario:grid_c / tf"), the page does not scroll sideways,
    and at 390 no table is cut off on the right nor has a row taller than 200 px (the gate's
    rationale in a 93 px column made rows of 427 px: tests/report/fit.py)."""
    from tests.report.fit import check_tables_read

    for summary in ("Use the project's formatter before committing", "Forget nothing twice"):
        assert run_cli("memory", "add", "--type", "decision", "--summary", summary).code == 0
    ARTIFACTS.mkdir(exist_ok=True)
    for width, height in ((390, 844), (1280, 800)):
        for path in (
            "/memories",
            "/playbooks",
            "/playbooks/grid_ctf",
            "/",
            f"/runs/{finished_run}",
        ):
            page = chromium.new_page(viewport={"width": width, "height": height})
            page.goto(f"{served.url}{path}")
            seen = page.evaluate(BROKEN_WORDS)
            name = path.strip("/").replace("/", "-") or "runs"
            page.screenshot(path=str(ARTIFACTS / f"dashboard-{name}-{width}x{height}.png"))
            assert seen["cells"] > 0, path
            assert seen["broken"] == [], (path, width, seen["broken"])
            assert seen["page"] <= width, (path, width, seen["page"])
            if width < 600 and path.startswith("/runs/"):
                tables = check_tables_read(page, width)
                assert any("gate" in table["table"] for table in tables), tables
            page.close()


def test_a_candidates_trials_unfold_on_the_promotions_page(promoted, run_cli, served, chromium):
    """The candidate with the most trials (every stage played): folded to one line, opened by
    a click on it, every trial a row; at 390 and 1280 pixels no word is cut, the page does
    not scroll sideways and no table is cut off (a rationale is a paragraph: its row may be
    taller than the report's tables allow)."""
    from tests.report.fit import TABLES

    listed = json.loads(run_cli("promotions", "--json").out)["candidates"]
    longest = max(listed, key=lambda candidate: sum(candidate["trials"].values()))
    count = sum(longest["trials"].values())
    assert count > 30
    ARTIFACTS.mkdir(exist_ok=True)
    for width, height in ((1280, 800), (390, 844)):
        page = chromium.new_page(viewport={"width": width, "height": height})
        page.goto(f"{served.url}/promotions")
        trials = page.locator(f"#trials-{longest['id']}")
        assert trials.locator("tr.trial").first.is_hidden()
        assert page.locator(f"#candidate-{longest['id']} tr.decision").first.is_visible()
        trials.locator("summary").click()
        rows = trials.locator("tr.trial")
        rows.first.wait_for(state="visible")
        assert rows.count() == count
        assert all(rows.nth(i).is_visible() for i in (0, count - 1))
        answer = page.request.get(f"{served.url}/api/promotions").json()
        [mine] = [c for c in answer["candidates"] if c["id"] == longest["id"]]
        delta = rows.first.locator("td").last.text_content()
        assert delta == format(mine["trial_scores"][0]["delta"], "+.4f")
        page.screenshot(path=str(ARTIFACTS / f"dashboard-promotions-{width}x{height}.png"))
        seen = page.evaluate(BROKEN_WORDS)
        assert seen["cells"] > count, seen
        assert seen["broken"] == [], (width, seen["broken"])
        assert seen["page"] <= width, (width, seen["page"])
        tables = page.evaluate(TABLES)
        assert len(tables) > 3 and not [table for table in tables if table["cut"]], tables
        page.close()
