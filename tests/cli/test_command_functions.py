"""The commands are plain functions: called directly, without Typer or a CLI runner, they
print what the command line prints, with the same defaults."""

from __future__ import annotations

import json

import pytest

from lessonloop.cli import inspect, memory, providers, scenarios
from lessonloop.errors import EXIT_USAGE, UsageError


def test_status_and_list_print_what_the_command_line_prints(cli, capsys):
    assert cli("run", "grid_ctf", "--iterations", 2, "--run-id", "r1").code == 0
    for command, argv in (
        (lambda: inspect.status_command("r1"), ["status", "r1"]),
        (inspect.list_command, ["list"]),
    ):
        capsys.readouterr()
        command()
        direct = capsys.readouterr().out
        assert direct and direct == cli(*argv).out


def test_memory_commands_take_their_defaults_without_typer(home, capsys):
    memory.add_command(type_="decision", summary="keep the store in SQLite")
    assert capsys.readouterr().out == "added [project 1] keep the store in SQLite\n"
    memory.list_command(as_json=True)
    (item,) = json.loads(capsys.readouterr().out)
    assert item["author"] == "user" and item["scope"] == "project"


def test_usage_as_json(home, cli, capsys):
    assert cli("run", "grid_ctf", "--iterations", 1).code == 0
    capsys.readouterr()
    providers.usage_command(as_json=True)
    assert set(json.loads(capsys.readouterr().out)) >= {"calls", "cost", "by_role"}


def test_evaluate_returns_its_exit_code_and_names_flags(home, capsys):
    invalid = json.dumps({"aggression": 5})
    assert scenarios.evaluate_command("grid_ctf", strategy=invalid, seeds="1") == EXIT_USAGE
    assert "failed validation" in capsys.readouterr().err
    with pytest.raises(UsageError) as caught:
        scenarios.evaluate_command("grid_ctf", strategy="[1]")
    assert caught.value.field == "strategy"
