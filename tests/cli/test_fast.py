"""The inspection commands skip Typer (cli/fast.py): the same commands, flags, output and exit
codes as through Typer, and none of the heavy imports (issue 20, point 3)."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from lessonloop.cli import fast, main

from ..conftest import copy_home, home_made_once, subprocess_env

HEAVY = (
    "typer",
    "click",
    "rich",
    "pydantic",
    "numpy",
    "optuna",
    "nevergrad",
    "anthropic",
    "openai",
    "httpx",
    "httpx2",
    "mcp",
    "lessonloop.loop.runner",
    "lessonloop.safety.redact",
)


def _typer_command(words: tuple[str, ...]):
    from typer.main import get_command

    from lessonloop.cli.app import app

    command = get_command(app)
    for word in words:
        command = command.commands[word]
    return command


@pytest.mark.parametrize("words", list(fast.COMMANDS), ids=" ".join)
def test_the_table_agrees_with_the_typer_command(words):
    """Every option and argument the Typer command has, with its kind and default, and no other:
    a flag added to one side only fails here."""
    module, function, positional, options = fast.COMMANDS[words]
    target = getattr(__import__(f"lessonloop.cli.{module}", fromlist=[function]), function)
    defaults = {name: p.default for name, p in inspect.signature(target).parameters.items()}
    seen_options, seen_arguments = {}, []
    for param in _typer_command(words).params:
        if param.param_type_name == "argument":
            seen_arguments.append(param.name)
            continue
        if param.name == "help":
            continue
        assert defaults[param.name] == param.default, param.name
        kind = param.type_descriptor.annotation  # Optional[str] is str here
        if kind is bool:  # Typer's flags are True when given, False for a --no- form
            assert param.is_bool_flag, param.name
            seen_options.update(dict.fromkeys(param.opts, (param.name, True)))
            seen_options.update(dict.fromkeys(param.secondary_opts, (param.name, False)))
        else:
            assert kind in (int, str, float) and not param.multiple and param.nargs == 1, param.name
            seen_options.update(dict.fromkeys(param.opts, (param.name, kind)))
    assert tuple(seen_arguments) == positional
    assert seen_options == options
    assert set(defaults) == {name for name, _ in options.values()} | set(positional)


@pytest.mark.parametrize(
    "argv",
    [
        ["status"],
        ["status", "a", "b"],
        ["status", "a", "--json", "--json"],
        ["status", "--help"],
        ["status", "a", "--jso"],
        ["status", "a", "--json=1"],
        ["show", "a", "-g3"],
        ["show", "a", "-g=3"],
        ["show", "a", "--generation"],
        ["show", "a", "--generation", "-1"],
        ["show", "a", "--generation", "x"],
        ["show", "a", "-g", "2", "--generation", "3"],
        ["doctor", "--latency", "--no-latency"],
        ["memory", "search", "--", "-x"],
        ["memory", "search", "-"],
        ["memory", "list", "--scope"],
        ["memory"],
        ["run"],
        ["run", "--help"],
        ["run", "grid_ctf", "--min-delta", "1e-3"],
        ["run", "grid_ctf", "--min-delta", ".5"],
        ["run", "grid_ctf", "--match-timeout=2."],
        ["run", "grid_ctf", "-n3"],
        ["train", "grid_ctf"],
    ],
)
def test_anything_unusual_is_left_to_typer(argv):
    assert fast.parse(argv) is None


def test_plain_command_lines_are_read_as_click_reads_them():
    assert fast.parse(["show", "r1", "-g", "2", "--json"]) == (
        "inspect",
        "show_command",
        {"run_id": "r1", "generation": 2, "as_json": True},
    )
    assert fast.parse(["show", "--generation=03", "r1"])[2] == {"run_id": "r1", "generation": 3}
    assert fast.parse(["doctor", "--no-latency"])[2] == {"latency": False}
    assert fast.parse(["run", "grid_ctf", "-n", "30", "--min-delta=0.01", "--fresh"]) == (
        "run",
        "run",
        {"scenario": "grid_ctf", "iterations": 30, "min_delta": 0.01, "fresh": True},
    )
    assert fast.parse(["memory", "search", "--scope=user", "a b", "--limit", "3"])[2] == {
        "query": "a b",
        "scope": "user",
        "limit": 3,
    }


@pytest.fixture(scope="module")
def filled_home(tmp_path_factory) -> Path:
    """A home with a run and a memory, made once for the module's 50 tests."""
    return home_made_once(
        tmp_path_factory,
        ["run", "grid_ctf", "--iterations", "3", "--run-id", "r1"],
        ["memory", "add", "--type", "preference", "--summary", "tests run with pytest"],
    )


@pytest.fixture
def filled(cli, home, filled_home):
    copy_home(filled_home, home)
    assert cli("status", "r1").code == 0  # the copy reads as the home it was made in
    return cli


CASES = [
    ["status", "r1"],
    ["status", "r1", "--json"],
    ["status", "nosuch"],
    ["status", "nosuch", "--json"],
    ["show", "r1"],
    ["show", "r1", "--json"],
    ["show", "r1", "--best"],
    ["show", "r1", "-g", "2"],
    ["show", "r1", "-g", "02"],
    ["show", "r1", "--generation=1", "--json"],
    ["show", "r1", "-g", "9"],
    ["show", "r1", "-g", "1", "--best"],
    ["list"],
    ["list", "--json"],
    ["scenarios"],
    ["scenarios", "--json"],
    ["usage"],
    ["usage", "--json"],
    ["usage", "--run", "r1"],
    ["usage", "--run=nosuch", "--json"],
    ["doctor"],
    ["doctor", "--json", "--no-latency"],
    ["doctor", "--provider", "nosuch"],
    ["memory", "list"],
    ["memory", "list", "--json"],
    ["memory", "list", "--scope", "user"],
    ["memory", "list", "--scope", "bogus"],
    ["memory", "search", "pytest"],
    ["memory", "search", "pytest", "--limit", "1", "--json"],
    ["memory", "search", "nothing-like-it", "--scope", "project"],
]


@pytest.mark.parametrize("argv", CASES, ids=" ".join)
def test_both_paths_print_the_same(filled, capsys, argv):
    assert fast.parse(argv) is not None
    results = []
    for use_fast in (True, False):
        capsys.readouterr()
        code = main(list(argv), fast=use_fast)
        captured = capsys.readouterr()
        results.append((code, captured.out, captured.err))
    assert results[0] == results[1]


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "grid_ctf", "-n", "2", "--run-id", "r1", "--seed", "4", "--json"],
        ["run", "grid_ctf", "--iterations", "1", "--run-id", "r1", "--matches", "3"],
        ["run", "grid_ctf", "-n", "1", "--run-id", "r1", "--min-delta", "0.5", "--fresh"],
        ["run", "nosuch", "-n", "1", "--json"],
        ["run", "grid_ctf", "-n", "1", "--context-trials", "sometimes"],
        ["run", "grid_ctf", "-n", "0"],
    ],
    ids=" ".join,
)
def test_a_run_reads_and_ends_the_same_on_both_paths(home, capsys, monkeypatch, argv):
    """``run`` without Typer: the same run (its summary and its stored generations) from the
    same command line in a fresh home, and the same refusals."""
    from lessonloop.store import open_store

    assert fast.parse(argv) is not None
    results = []
    for use_fast in (True, False):
        where = str(home / ("fast" if use_fast else "typer"))
        monkeypatch.setenv("LESSONLOOP_HOME", where)
        capsys.readouterr()
        code = main(list(argv), fast=use_fast)
        captured = capsys.readouterr()
        captured = (captured.out.replace(where, "HOME"), captured.err.replace(where, "HOME"))
        rows = []
        if code == 0:
            with open_store(readonly=True) as store:
                rows = [
                    tuple(row)
                    for row in store.query(
                        "SELECT generation_index, strategy_json, mean_score, best_score, "
                        "gate_decision FROM generations ORDER BY generation_index"
                    )
                ]
        results.append((code, *captured, rows))
    assert results[0] == results[1]


def test_an_empty_home_reads_the_same_on_both_paths(cli, capsys):
    for argv in (["list"], ["status", "r1"], ["usage"], ["memory", "list", "--json"]):
        outputs = []
        for use_fast in (True, False):
            capsys.readouterr()
            outputs.append((main(list(argv), fast=use_fast), *capsys.readouterr()))
        assert outputs[0] == outputs[1], argv


@pytest.mark.parametrize(
    "argv",
    [
        ["status", "r1"],
        ["status", "r1", "--json"],
        ["show", "r1", "--best"],
        ["list"],
        ["scenarios"],
        ["usage"],
        ["memory", "list"],
        ["memory", "search", "pytest"],
        ["doctor"],
    ],
    ids=" ".join,
)
def test_inspection_imports_only_what_it_needs(filled, home, argv):
    """Typer (with Click and Pydantic), Rich, the SDKs, the optimizer's libraries, the engine
    and the redactor's patterns cost more than the command: none of them is imported."""
    probe = (
        "import sys\nsys.argv = ['lessonloop'] + sys.argv[1:]\n"
        "from lessonloop.__main__ import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
        f"heavy = {HEAVY!r}\n"
        "print(sorted(m for m in heavy if sys.modules.get(m) is not None))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, *argv],
        capture_output=True,
        text=True,
        env=subprocess_env(home),
        timeout=120,
    )
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stderr
