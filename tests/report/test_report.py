"""``lessonloop report``: the page of a real offline run, read back as a browser's parser would."""

from __future__ import annotations

import json

import pytest

from ..conftest import copy_home, home_made_once
from .page_parts import Page

SHAPES = {"advance": "m-advance", "rollback": "m-rollback", "retry": "m-retry"}


def _store_rows(run_id: str):
    from lessonloop.store import open_store
    from lessonloop.store import runs as run_store

    with open_store(readonly=True) as store:
        return run_store.generations(store, run_id), run_store.gate_decisions(store, run_id)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    return home_made_once(
        tmp_path_factory, ["run", "grid_ctf", "-n", 8, "--matches", 3, "--run-id", "r8", "--json"]
    )


@pytest.fixture
def ran(home, made):
    """A real 8-generation offline run of grid_ctf (made once; each test has its copy)."""
    copy_home(made, home)
    return "r8"


def test_the_score_chart_has_one_point_per_generation_shaped_by_its_decision(cli, ran, home):
    result = cli("report", ran, "--json")
    assert result.code == 0, result.err
    path = home / "runs" / ran / "report.html"
    assert result.json() == {"path": str(path)}
    page = Page(path.read_text(encoding="utf-8"))
    generations, decisions = _store_rows(ran)
    points = page.find("path", css="gen-point", inside="score-chart")
    assert sorted(int(p.attributes["data-generation"]) for p in points) == sorted(
        g["generation_index"] for g in generations
    )
    by_index = {g["generation_index"]: g for g in generations}
    last_rationale = {d["generation_index"]: d["rationale"] for d in decisions}
    for point in points:
        generation = by_index[int(point.attributes["data-generation"])]
        assert point.attributes["data-decision"] == generation["gate_decision"]
        assert SHAPES[generation["gate_decision"]] in point.attributes["class"].split()
        assert last_rationale[generation["generation_index"]] in point.title  # the hover text
    retries = page.find("path", css="retry-mark", inside="score-chart")
    stored_retries = [d for d in decisions if d["decision"] == "retry"]
    assert len(retries) == len(stored_retries) > 0, "the run should have retried"
    assert {
        (int(r.attributes["data-generation"]), int(r.attributes["data-attempt"])) for r in retries
    } == {(d["generation_index"], d["attempt"]) for d in stored_retries}
    advance, rollback = (
        {
            e.attributes["d"][e.attributes["d"].index("l") :]
            for e in points
            if e.attributes["data-decision"] == kind
        }
        for kind in ("advance", "rollback")
    )
    assert advance and rollback and not advance & rollback, "the shapes differ, not just colours"


def test_the_page_is_one_file_with_labelled_axes_and_every_section(cli, ran, home):
    assert cli("report", ran).code == 0
    source = (home / "runs" / ran / "report.html").read_text(encoding="utf-8")
    page = Page(source)
    assert not page.find("script") and not page.find("link") and not page.find("img")
    assert not [
        e
        for e in page.elements
        if any(v and "http" in v for k, v in e.attributes.items() if k in ("src", "href"))
    ]
    for chart in ("score-chart", "elo-chart", "dimensions-chart"):
        svg = [e for e in page.find("svg") if e.attributes.get("id") == chart]
        assert svg and svg[0].attributes["viewbox"].startswith("0 0 ")
        labels = [e.text for e in page.find("text", css="axis-label", inside=chart)]
        assert len(labels) == 2 and labels[0] in ("generation", "round")
    text = page.text
    for heading in (
        "Best strategy",
        "Gate history",
        "Playbook",
        "Dead ends",
        "Usage and cost",
        "Settings",
    ):
        assert heading in text
    generations, decisions = _store_rows(ran)
    assert len(page.find("tr", inside=None)) >= len(decisions)  # the gate history, one row each
    assert "Best-known" in text, "the playbook's bullets with their evidence counts"
    assert "seen" in text and "+" in text


def test_hostile_text_in_the_store_is_escaped_everywhere(cli, home):
    from lessonloop.knowledge import admission
    from lessonloop.store import open_store
    from lessonloop.store import runs as run_store

    hostile = '</title><script>alert(1)</script><img src=x onerror="alert(2)"> & "quoted"'
    with open_store() as store:
        run_store.create_run(
            store,
            run_id="evil",
            scenario="grid_ctf",
            scenario_ref="grid_ctf",
            target_generations=2,
            provider="local",
            seed=0,
            config={"note": hostile},
        )
        run_store.save_generation(
            store,
            run_store.GenerationRecord(
                run_id="evil",
                generation_index=1,
                attempts=1,
                strategy={"aggression": 0.5, hostile: hostile},
                mean_score=0.5,
                incumbent_score=None,
                mean_delta=None,
                best_score=0.5,
                elo=1000.0,
                wins=0,
                losses=0,
                ties=0,
                quarantined=0,
                gate_decision="advance",
                evaluator_epoch="e",
                dimensions={hostile: 0.4},
                context={},
                analysis=hostile,
                duration_seconds=0.1,
                created_at="2026-01-01T00:00:00Z",
                decisions=[
                    {"attempt": 0, "decision": "advance", "rationale": hostile, "created_at": "x"}
                ],
            ),
        )
        admission.admit(
            store,
            [
                admission.Proposal(
                    kind="bullet",
                    scope="scenario:grid_ctf",
                    source="evidence",
                    summary=f"Bullet {hostile}",
                    run_id="evil",
                    generation_index=1,
                )
            ],
        )
    assert cli("report", "evil").code == 0
    source = (home / "runs" / "evil" / "report.html").read_text(encoding="utf-8")
    page = Page(source)
    assert not page.find("script") and not page.find("img")
    assert not [e for e in page.elements if any(k.startswith("on") for k in e.attributes)]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in source
    point = page.find("path", css="gen-point")[0]
    assert hostile in point.title  # the hover text says it, as text
    assert f"Bullet {hostile}" in page.text
    assert hostile in page.text.replace("\\", "")  # the strategy's JSON, the settings


def test_a_task_run_shows_its_rounds_and_the_verifiers_feedback(cli, home, tmp_path):
    from ..cli.test_task_commands import BAD_SQL, EXAMPLES, GOOD_SQL, fenced, script

    provider = script(tmp_path, competitor=[fenced(BAD_SQL), fenced(GOOD_SQL), fenced(GOOD_SQL)])
    improve = cli(
        "improve", EXAMPLES / "sql-top-customers.yaml", "--provider", provider, "--run-id", "t1"
    )
    assert improve.code == 0, improve.err
    assert cli("report", "t1").code == 0
    page = Page((home / "runs" / "t1" / "report.html").read_text(encoding="utf-8"))
    points = page.find("path", css="gen-point", inside="score-chart")
    decided = {int(p.attributes["data-generation"]): p.attributes["data-decision"] for p in points}
    assert decided == {1: "advance", 2: "advance", 3: "rollback"}
    assert not [e for e in page.find("svg") if e.attributes.get("id") == "elo-chart"]  # no Elo
    assert all(p.title.startswith(f"round {p.attributes['data-generation']}:") for p in points)
    for chart in ("score-chart", "score-chart-narrow"):
        assert [e.text for e in page.find("text", css="axis-label", inside=chart)] == [
            "round",
            "score",
        ]
        ticks = [
            float(e.text)
            for e in page.find("text", inside=chart)
            if e.attributes.get("text-anchor") == "end" and "class" not in e.attributes
        ]
        assert ticks and 0 <= min(ticks) and max(ticks) <= 1, f"a score's axis fits [0, 1]: {ticks}"
    text = page.text
    assert "Rounds and feedback" in text and "Verifier FAILED" in text and "expected rows" in text
    assert "GROUP BY c.id" in text  # the rounds' outputs and the best one
    assert "task-sql-top-customers" in text or "task:sql-top-customers" in text
    gate = text[text.index("Gate history") :]
    for scenario_word in ("paired Δ", "won-lost", "pairs", "rollback", "advance"):
        assert scenario_word not in gate, (
            f"a task's gate history in a scenario's words: {scenario_word}"
        )
    assert "Δ vs the best round" in gate and "best kept" in gate and "new best" in gate
    rounds = text[text.index("Rounds and feedback") : text.index("Gate history")]
    assert "rollback" not in rounds and "best kept" in rounds, "round 3 kept the best round"


def test_an_unknown_run_is_one_line_and_exit_1_like_show(cli, ran):
    result = cli("report", "nope")
    assert result.code == 1 and result.out == ""
    assert result.err.strip() == cli("show", "nope").err.strip()
    assert result.err.count("\n") == 1 and "unknown run id 'nope'" in result.err
    as_json = cli("report", "nope", "--json")
    assert as_json.code == 1 and "unknown run id" in as_json.error()["error"]


def test_an_unknown_run_in_an_empty_home(cli):
    result = cli("report", "nope", "--json")
    assert result.code == 1 and "no lessonloop database here yet" in result.error()["error"]


def test_open_hands_the_file_to_the_browser(cli, ran, home, monkeypatch):
    import webbrowser

    opened = []
    monkeypatch.setattr(webbrowser, "open", lambda url, *a, **k: opened.append(url) or True)
    assert cli("report", ran, "--open").code == 0
    assert opened == [(home / "runs" / ran / "report.html").resolve().as_uri()]


def test_open_says_so_when_no_browser_can_be_opened(cli, ran, monkeypatch):
    import webbrowser

    monkeypatch.setattr(webbrowser, "open", lambda url, *a, **k: False)
    result = cli("report", ran, "--open")
    assert result.code == 0
    assert "could not open a browser" in result.err and "report.html" in result.err


def test_the_report_package_never_imports_the_layers_above_it():
    import ast

    from ..test_layering import ROOT, _imports  # noqa: F401 - the same scan

    offenders = []
    for path in (ROOT / "report").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module:
                if node.module.split(".")[0] in ("app", "cli", "mcp", "loop"):
                    offenders.append(f"{path.name}: {node.module}")
    assert offenders == []


def test_json_strategy_is_shown_pretty(cli, ran, home):
    from lessonloop.store import open_store
    from lessonloop.store import runs as run_store

    cli("report", ran)
    with open_store(readonly=True) as store:
        best = run_store.best_generation(run_store.generations(store, ran))
    page = Page((home / "runs" / ran / "report.html").read_text(encoding="utf-8"))
    shown = [e.text for e in page.find("pre")]
    assert json.dumps(json.loads(best["strategy_json"]), indent=2, sort_keys=True) in shown


@pytest.mark.parametrize("argv", [["report", "r8"], ["report", "r8", "--json"], ["report", "x"]])
def test_report_reads_the_same_without_typer(ran, capsys, argv):
    """`report` is on the fast path (cli/fast.py): the same output and exit code as Typer's."""
    from lessonloop.cli import fast, main

    assert fast.parse(argv) is not None
    results = []
    for use_fast in (True, False):
        capsys.readouterr()
        results.append((main(list(argv), fast=use_fast), *capsys.readouterr()))
    assert results[0] == results[1]


def test_a_run_writes_its_page_when_it_ends_scenario_and_task_alike(cli, home, tmp_path):
    from ..cli.test_task_commands import EXAMPLES, GOOD_SQL, fenced, script

    assert cli("run", "grid_ctf", "-n", 2, "--matches", 3, "--run-id", "end1").code == 0
    provider = script(tmp_path, competitor=[fenced(GOOD_SQL)])
    improve = cli(
        "improve", EXAMPLES / "sql-top-customers.yaml", "--provider", provider, "--run-id", "end2"
    )
    assert improve.code == 0, improve.err
    for run_id in ("end1", "end2"):
        generations, _ = _store_rows(run_id)
        page = Page((home / "runs" / run_id / "report.html").read_text(encoding="utf-8"))
        assert generations
        assert len(page.find("path", css="gen-point", inside="score-chart")) == len(generations)


def test_rounds_the_judge_could_not_score_are_off_the_score_lines(cli, home, tmp_path):
    """judge_failed rounds are stored with 0 for the column's sake: the chart puts their cross
    in the lane below the plot, not on a line at 0, and the axis stays a score's."""
    from ..cli.test_task_commands import GARBLED, REPLY, RUBRIC_TASK, script

    task = tmp_path / "reply.yaml"
    task.write_text(RUBRIC_TASK)
    provider = script(tmp_path, competitor=[REPLY, REPLY + " Sorry again."], judge=[GARBLED])
    assert cli("improve", task, "--provider", provider, "--run-id", "jf").code == 1
    assert cli("report", "jf").code == 0
    page = Page((home / "runs" / "jf" / "report.html").read_text(encoding="utf-8"))
    for chart in ("score-chart", "score-chart-narrow"):
        crosses = page.find("path", css="gen-point", inside=chart)
        assert [p.attributes["class"].split()[0] for p in crosses] == ["m-failed", "m-failed"]
        assert all("not scored" in p.title for p in crosses)
        assert not page.find("polyline", inside=chart), "no line through scores never given"
        assert "no score" in [e.text for e in page.find("text", css="lane-label", inside=chart)]
        ticks = [
            float(e.text)
            for e in page.find("text", inside=chart)
            if e.attributes.get("text-anchor") == "end" and "class" not in e.attributes
        ]
        assert (ticks[0], ticks[-1]) == (0.0, 1.0), "a score's axis, not 0 to 0.05"
