"""The run use cases (app/runs.py, app/tasks.py) called directly, and the commands over them
called as plain functions, without the CLI runner."""

from __future__ import annotations

import json

import pytest

from lessonloop.app import runs, tasks
from lessonloop.errors import LessonloopError, UsageError

from ..cli.test_task_commands import EXAMPLES, GOOD_SQL
from ..conftest import PLUGIN


@pytest.mark.parametrize(
    ("iterations", "overrides", "field"),
    [(0, {}, "iterations"), (2, {"matches": 0}, "matches"), (2, {"max_calls": 0}, "max_calls")],
)
def test_a_run_here_and_one_in_the_background_refuse_a_request_alike(
    home, iterations, overrides, field
):
    announced = []
    with pytest.raises(UsageError) as here:
        runs.start(PLUGIN, iterations, overrides, "here", announced.append)
    with pytest.raises(UsageError) as background:
        runs.start_in_background(PLUGIN, iterations, "there", overrides)
    assert here.value.field == background.value.field == field
    assert str(here.value) == str(background.value)
    assert announced == []  # refused before the id was announced
    assert not (home / "runs" / "here").exists() and not (home / "runs" / "there").exists()


def test_the_run_is_announced_once_its_options_are_good_before_the_scenario_loads(home):
    announced = []
    with pytest.raises(LessonloopError, match="no-such-scenario"):
        runs.start("no-such-scenario", 2, {}, "early", announced.append)
    assert announced == ["early"]


def test_a_run_executes_here_and_tells_its_events_to_the_watch(home):
    from contextlib import contextmanager

    seen: list[tuple[int, str]] = []

    @contextmanager
    def watch(total):
        yield lambda event: seen.append((total, event["event"]))

    summary = runs.start(PLUGIN, 2, {"seed": 1}, "here", watch=watch)
    assert summary["status"] == "completed" and summary["generations_executed"] == 2
    assert seen[0] == (2, "run_started") and seen[-1] == (2, "run_completed")
    assert sum(event == "generation_completed" for _, event in seen) == 2


def test_the_commands_are_functions_callable_without_the_cli_runner(home, tmp_path, capsys):
    from lessonloop.cli import run as run_commands
    from lessonloop.cli import tasks as task_commands

    run_commands.run(
        scenario=PLUGIN,
        iterations=1,
        provider=None,
        model=None,
        max_calls=None,
        max_tokens=None,
        matches=None,
        seed=None,
        run_id="direct",
        max_retries=None,
        min_delta=None,
        match_timeout=None,
        workers=None,
        no_incumbent=False,
        no_knowledge=False,
        fresh=False,
        context_budget=None,
        context_trials=None,
        as_json=True,
    )
    assert json.loads(capsys.readouterr().out)["run_id"] == "direct"
    output = tmp_path / "good.sql"
    output.write_text(GOOD_SQL)
    task_commands.judge(
        EXAMPLES / "sql-top-customers.yaml", output, provider=None, model=None, as_json=True
    )
    assert json.loads(capsys.readouterr().out)["passed_verifier"] is True
    assert tasks.judge_file(EXAMPLES / "sql-top-customers.yaml", output).score == 1.0
