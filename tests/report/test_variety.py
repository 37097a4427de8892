"""Runs the report has not seen: every built-in scenario and every plugin scenario of
tests/fixtures, one generation and sixty, runs stopped with SIGTERM and Ctrl-C, resumed, failed
(misbehaving scenarios), started without the incumbent or fresh, task runs (``improve``,
scripted), runs with no playbook, and a strategy whose text is huge, Unicode and HTML-looking.
Each is rendered (``report``), compared with others (``compare --html``) and served (the run's
page, its API answer checked against the OpenAPI document, its event stream): nothing may
raise, hang or draw an empty or broken chart.

The runs are made once for the module (about a minute offline); every call is bounded, so a
hang fails the test instead of stalling the suite."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import subprocess_env

from .page_parts import Page

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PACED = Path(__file__).resolve().parents[1] / "web" / "paced_scenario.py"
BOUND_S = 120  # seconds any one command may take before it counts as hung
HOSTILE = "<script>alert('x')</script> & \"quotes\" ünïcödé 🎯 \u202e‮ <b>bold</b> "

# plugin scenarios: (reference, whether a run of it is expected to complete); Slow, which only
# sleeps a fifth of a second a match, is left out (20 s for nothing the others do not show)
PLUGINS = [
    ("held_scenario.py:Held", True),
    ("plugin_scenario.py:Archery", True),
    ("sailing_scenario.py:Sailing", True),
    ("noisy_scenario.py:NoisyBowl", True),
    ("noisy_scenario.py:MirroredValidation", True),
    ("misbehaving_scenario.py:Crasher", None),  # None: however it ends
    ("misbehaving_scenario.py:AlwaysFails", None),
    ("misbehaving_scenario.py:Wordy", None),
    ("misbehaving_scenario.py:ValidateReturnsNone", None),
    ("misbehaving_scenario.py:ValidateRaises", None),
    ("misbehaving_scenario.py:ValidateTrustsTheSchema", None),
    ("misbehaving_scenario.py:Incomplete", None),
    ("misbehaving_scenario.py:Sleeper", None),
]


@dataclass
class Variety:
    home: Path
    root: Path
    runs: list[str]  # the ids the store knows
    tried: dict[str, tuple[int, str]]  # every command tried: (exit code, stderr)


def bounded(function, *args):
    """``function(*args)`` in a thread, given ``BOUND_S`` seconds (a hang is a failure)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(function, *args).result(timeout=BOUND_S)


def in_process(*args) -> tuple[int, str, str]:
    """The CLI in this process (its output captured by redirecting the streams' targets)."""
    import contextlib
    import io

    from lessonloop.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def as_process(home: Path, *args, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lessonloop", *map(str, args)],
        env=env or subprocess_env(home),
        capture_output=True,
        text=True,
        timeout=BOUND_S,
        stdin=subprocess.DEVNULL,
    )


def completed_generations(home: Path, run_id: str) -> int:
    log = home / "runs" / run_id / "events.ndjson"
    if not log.exists():
        return 0
    return log.read_text().count('"generation_completed"')


def stop_after(home: Path, root: Path, run_id: str, sent: int, done: int = 1) -> None:
    """A paced run interrupted (``sent``: SIGTERM, SIGINT or SIGKILL) once ``done``
    generations completed and the next one's matches wait on the hold file."""
    paced = root / f"paced_{run_id}"
    paced.mkdir()
    shutil.copy(PACED, paced / "paced.py")
    hold = paced / "hold"
    if done == 0:
        hold.touch()
    process = subprocess.Popen(
        [sys.executable, "-m", "lessonloop", "run", f"{paced / 'paced.py'}:Paced", "-n", "4",
         "--matches", "2", "--run-id", run_id],
        env=subprocess_env(home), stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        # a shell's background job starts with SIGINT ignored, and the child would inherit it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + BOUND_S
        log = home / "runs" / run_id / "events.ndjson"
        while time.monotonic() < deadline and not (
            completed_generations(home, run_id) >= done
            and log.exists()
            and '"generation_started"' in log.read_text()
        ):
            time.sleep(0.02)
        hold.touch()  # the next generation's matches now wait
        time.sleep(0.3)
        process.send_signal(sent)
        process.wait(timeout=BOUND_S)
    finally:
        hold.unlink(missing_ok=True)
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def variety(tmp_path_factory) -> Variety:
    root = tmp_path_factory.mktemp("variety")
    home = root / "home"
    tried: dict[str, tuple[int, str]] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LESSONLOOP_HOME", str(home))
        patch.setenv("LESSONLOOP_USER_HOME", str(root / "user-home"))
        patch.setenv("XDG_CACHE_HOME", str(root / "cache"))
        patch.delenv("CLAUDE_PROJECT_DIR", raising=False)
        for name in [n for n in os.environ if n.startswith("LESSONLOOP_") and "HOME" not in n]:
            patch.delenv(name)

        def run(run_id: str, *args) -> None:
            code, _, err = bounded(in_process, *args, "--run-id", run_id)
            tried[run_id] = (code, err)

        run("grid", "run", "grid_ctf", "-n", 3, "--matches", 2)
        run("negotiation", "run", "negotiation", "-n", 3, "--matches", 2)
        run("one", "run", "grid_ctf", "-n", 1, "--matches", 2)
        run("long", "run", "grid_ctf", "-n", 60, "--matches", 1, "--max-retries", 0)
        run("no-incumbent", "run", "grid_ctf", "-n", 2, "--matches", 2, "--no-incumbent")
        run("fresh", "run", "negotiation", "-n", 2, "--matches", 2, "--fresh", "--seed", 7)
        for index, (reference, _) in enumerate(PLUGINS):
            run(
                f"plugin-{index}", "run", f"{FIXTURES / reference}", "-n", 2, "--matches", 2,
                "--match-timeout", 2,
            )  # fmt: skip
        stop_after(home, root, "terminated", signal.SIGTERM)
        stop_after(home, root, "early", signal.SIGTERM, done=0)  # no generation at all
        stop_after(home, root, "killed", signal.SIGKILL)  # "running", its process gone
        stop_after(home, root, "resumed", signal.SIGINT)
        finished = as_process(home, "resume", "resumed")
        tried["resumed"] = (finished.returncode, finished.stderr)

        from ..cli.test_task_commands import BAD_SQL, EXAMPLES, GOOD_SQL, fenced, script

        task_dir = root / "task"
        task_dir.mkdir()
        provider = script(
            task_dir,
            competitor=[fenced(f"-- {HOSTILE}\n{BAD_SQL}"), fenced(GOOD_SQL), fenced(GOOD_SQL)],
        )
        run("task", "improve", EXAMPLES / "sql-top-customers.yaml", "--provider", provider)
        from ..cli.test_task_commands import GARBLED, REPLY, RUBRIC_TASK

        rubric = task_dir / "reply.yaml"
        rubric.write_text(RUBRIC_TASK)
        unjudged = script(
            task_dir, "judged.json", competitor=[REPLY, f"{REPLY} {HOSTILE}"], judge=[GARBLED]
        )
        run("unjudged", "improve", rubric, "--provider", unjudged)  # judge_failed rounds

        # a strategy of huge (~100 KB: answers are read up to 200 000 characters), Unicode,
        # HTML-looking text: a scenario with a free-text parameter, every role scripted (the
        # offline agent searches numbers only)
        huge = json.dumps({"motto": HOSTILE * 1000, "x": 0.5})  # (Wordy checks x as its base)
        words = f"Keep the motto. {HOSTILE}"
        answers = root / "huge.json"
        answers.write_text(
            json.dumps(
                {"competitor": [huge], "translator": [huge], "analyst": [words],
                 "coach": [words], "curator": [words], "on_exhausted": "repeat_last"}
            )
        )  # fmt: skip
        wordy = FIXTURES / "misbehaving_scenario.py:Wordy"
        run("huge", "run", wordy, "-n", 2, "--matches", 2, "--provider", f"scripted:{answers}")

        listed = json.loads(bounded(in_process, "list", "--json")[1])
        runs = [item["run_id"] for item in listed]
        yield Variety(home, root, runs, tried)


def test_the_variety_was_made(variety):
    """The runs that must exist do, in the states they were driven to."""
    from lessonloop.store import open_store
    from lessonloop.store import runs as run_store

    assert {"grid", "negotiation", "one", "long", "task", "huge", "terminated", "resumed"} <= set(
        variety.runs
    )
    with open_store(variety.home, readonly=True) as store:
        status = {run_id: run_store.get_run(store, run_id)["status"] for run_id in variety.runs}
    assert status["terminated"] == status["early"] == "stopped", variety.tried
    assert status["killed"] == "running" and generations_of(variety.home, "early") == 0
    assert status["resumed"] == "completed", variety.tried["resumed"]
    assert status["huge"] == "completed" and status["task"] == "completed", variety.tried
    assert status["unjudged"] == "failed", variety.tried["unjudged"]
    for index, (_, completes) in enumerate(PLUGINS):
        code, err = variety.tried[f"plugin-{index}"]
        assert "Traceback" not in err, err
        if completes:
            assert code == 0 and status[f"plugin-{index}"] == "completed", err
        else:
            assert code in (0, 1, 2) and err.count("\n") <= 3, err
    assert any(state == "failed" for state in status.values()), status


def sound_charts(source: str, generations: int, where: str) -> None:
    """Every chart of a page is drawn: a viewBox, finite coordinates, ticks that go up, at
    least one line or marker, and the score chart has a point per generation in each
    drawing."""
    page = Page(source)
    charts = [e for e in page.find("svg") if "chart" in e.attributes.get("class", "").split()]
    if generations == 0:
        assert not charts, where
        return
    assert charts, where
    for chart in charts:
        ident = chart.attributes["id"]
        width, height = map(float, chart.attributes["viewbox"].split()[2:])
        assert width > 0 and height > 0, (where, ident)
        inside = [e for e in page.elements if ident in e.parents]
        for element in inside:
            for name in ("x", "y", "x1", "x2", "y1", "y2", "points", "d"):
                value = element.attributes.get(name)
                if value is not None:
                    lowered = value.lower()
                    assert "nan" not in lowered and "inf" not in lowered, (where, ident, value)
        drawn = [e for e in inside if e.tag in ("polyline", "path")]
        assert drawn, (where, ident, "an empty chart")
        for line in (e for e in inside if e.tag == "polyline"):
            assert line.attributes["points"].strip(), (where, ident, "a line without points")
        ticks = [
            float(e.text)
            for e in inside
            if e.tag == "text"
            and e.attributes.get("text-anchor") == "end"
            and "class" not in e.attributes
        ]
        assert len(ticks) >= 2 and ticks == sorted(set(ticks)), (where, ident, ticks)
        if ident.startswith("score-chart"):
            points = [e for e in inside if "gen-point" in e.attributes.get("class", "").split()]
            assert len(points) == generations, (where, ident, len(points), generations)


def generations_of(home: Path, run_id: str) -> int:
    from lessonloop.store import open_store
    from lessonloop.store import runs as run_store

    with open_store(home, readonly=True) as store:
        return len(run_store.generations(store, run_id))


def test_every_run_has_a_report_with_sound_charts(variety):
    for run_id in variety.runs:
        code, _, err = bounded(in_process, "report", run_id)
        assert code == 0 and "Traceback" not in err, (run_id, err)
        source = (variety.home / "runs" / run_id / "report.html").read_text(encoding="utf-8")
        assert source.startswith("<!DOCTYPE html>") and source.rstrip().endswith("</html>")
        assert "<script" not in source.replace("&lt;script", ""), run_id
        sound_charts(source, generations_of(variety.home, run_id), run_id)


def test_the_unseen_reports_fit_a_wide_and_a_narrow_window_in_chromium(variety, chromium):
    """A real browser on a few of them (a task run, a huge strategy, sixty generations, a run
    stopped by SIGTERM, a plugin scenario with a boolean and an enum): tests/report/fit.py."""
    from .fit import check_charts_fit

    for run_id in ("task", "unjudged", "huge", "long", "terminated", "killed", "plugin-2"):
        bounded(in_process, "report", run_id)
        url = (variety.home / "runs" / run_id / "report.html").resolve().as_uri()
        from lessonloop.report.data import collect
        from lessonloop.store import open_store

        with open_store(variety.home, readonly=True) as store:
            shown = collect(store, run_id)
        generations = len(shown.generations)
        dimensions = any(g["dimensions"] for g in shown.generations)
        charts = 1 + (not shown.is_task) + dimensions  # score, Elo (not a task's), dimensions
        check_charts_fit(chromium, url, f"variety-{run_id}", charts, last=generations)


def test_runs_compare_with_each_other(variety):
    """Pairs and a triple of one scenario compare (a page with its chart); runs of different
    scenarios or kinds are refused in one line, never a traceback."""
    pages = variety.root / "compare"
    pages.mkdir(exist_ok=True)
    groups = [
        ("grid", "one"),
        ("grid", "long", "no-incumbent", "huge"),
        ("negotiation", "fresh"),
        ("terminated", "resumed"),
        ("grid", "negotiation"),
        ("grid", "task"),
        ("plugin-0", "plugin-1"),
    ]
    for index, group in enumerate(groups):
        target = pages / f"compare-{index}.html"
        code, _, err = bounded(in_process, "compare", *group, "--matches", 2, "--html", target)
        assert "Traceback" not in err and code in (0, 1, 2), (group, err)
        if code == 0:
            generations = max(generations_of(variety.home, run_id) for run_id in group)
            sound_charts(target.read_text(encoding="utf-8"), generations and 1, str(group))
        else:
            assert err.strip().count("\n") == 0 and err.strip(), (group, err)
    assert (pages / "compare-0.html").exists() and (pages / "compare-1.html").exists()


def test_every_run_on_the_dashboard(variety, monkeypatch):
    """Each run's page and API answer (against the OpenAPI document's schema), its event
    stream to its end, and the lists."""
    pytest.importorskip("starlette")
    import jsonschema
    from starlette.testclient import TestClient

    from lessonloop.web import openapi
    from lessonloop.web.routes import build

    monkeypatch.setenv("LESSONLOOP_HOME", str(variety.home))
    from lessonloop.web import events

    monkeypatch.setattr(events, "GRACE", 0.5)  # the killed run's stream: no start to wait for
    components = openapi.document()["components"]

    def check(value, name: str) -> None:
        jsonschema.Draft202012Validator(
            {"$ref": f"#/components/schemas/{name}", "components": components}
        ).validate(value)

    with TestClient(
        build("127.0.0.1", 8765, "t"), base_url="http://127.0.0.1:8765",
        raise_server_exceptions=False,
    ) as client:  # fmt: skip

        def get(url: str):
            answer = bounded(client.get, url)
            assert answer.status_code == 200, (url, answer.text[:300])
            return answer

        for item in get("/api/runs").json():
            check(item, "Run")
        for run_id in variety.runs:
            check(get(f"/api/runs/{run_id}").json(), "RunStatus")
            page = get(f"/runs/{run_id}").text
            sound_charts(page, generations_of(variety.home, run_id), f"/runs/{run_id}")
            streamed = bounded(lambda url: client.get(url).text, f"/api/runs/{run_id}/events")
            assert streamed.rstrip().endswith("event: end\ndata: {}"), run_id
        for scope in get("/api/knowledge").json():
            check(scope, "KnowledgeScope")
            check(get(f"/api/knowledge/{scope['scope']}").json(), "Knowledge")
            get(f"/playbooks/{scope['scope']}")
        for url in ("/", "/scenarios", "/playbooks", "/memories", "/start"):
            get(url)
        for item in get("/api/scenarios").json():
            check(item, "Scenario")
