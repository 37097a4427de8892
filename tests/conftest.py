"""Shared fixtures: an isolated lessonloop home and ways to call the CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CONTRACTS = Path(__file__).resolve().parent / "contracts" / "autocontext-cli"
PLUGIN = f"{FIXTURES / 'plugin_scenario.py'}:Archery"

# The files that take longest, slowest first: each 25-200 s of the workers' time in two runs
# of the whole suite under -n 2 on a loaded 2-core machine (Dec 2026; about a third of that on
# an idle one). The workers are given them first: `--dist loadfile` runs a file on one worker,
# and a long file handed out last runs alone while the other worker has nothing left to do
# (test_lazyre, test_layering and the browser files are collected last). pyproject's
# --no-loadscope-reorder keeps this order; xdist would otherwise hand out the files with the
# most tests first. A file missing here only loses its place in the queue.
SLOWEST_FIRST = (
    "tests/memory/test_session.py",
    "tests/test_readme.py",
    "tests/safety/test_redact.py",
    "tests/memory/test_memorize_model.py",
    "tests/loop/test_runner.py",
    "tests/web/test_browser.py",
    "tests/report/test_variety.py",
    "tests/cli/test_training_commands.py",
    "tests/evolve/test_metrics.py",
    "tests/training/test_lora.py",
    "tests/cli/test_cli.py",
    "tests/test_lazyre.py",
    "tests/loop/test_true_scores.py",
    "tests/reliability/test_full_disk.py",
    "tests/mission/test_mission.py",
    "tests/mcp/test_server.py",
    "tests/test_layering.py",
    "tests/reliability/test_kills.py",
    "tests/cli/test_task_commands.py",
    "tests/loop/test_context_trials.py",
    "tests/evolve/test_cli.py",
    "tests/reliability/test_shared_home.py",
    "tests/report/test_fit.py",
    "tests/web/test_promotions.py",
    "tests/web/test_browser_live.py",
)


def pytest_collection_modifyitems(config, items) -> None:
    """The slowest files first (``SLOWEST_FIRST``), every other in the order collected; the
    tests of a file keep their order."""
    rank = {name: index for index, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.partition("::")[0], len(rank)))


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)

    def error(self) -> dict:
        lines = [line for line in self.err.splitlines() if line.strip()]
        assert len(lines) == 1, f"expected one error line, got: {self.err!r}"
        return json.loads(lines[0])


def _settings_from_outside(environ) -> list[str]:
    """Variables of the developer's shell that would reroute providers inside a test."""
    return [
        name
        for name in environ
        if name.startswith("LESSONLOOP_")
        and name not in ("LESSONLOOP_HOME", "LESSONLOOP_USER_HOME")
        and not name.startswith("LESSONLOOP_TEST_")
        or name
        in (
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "CLAUDE_PROJECT_DIR",
            "ANTHROPIC_BASE_URL",
            "OPENAI_BASE_URL",
            "OLLAMA_HOST",
        )
    ]


@dataclass(frozen=True)
class RealModel:
    url: str  # the OpenAI-compatible base URL, ending in /v1
    model: str  # the id the server serves

    def env(self, **extra: str) -> dict[str, str]:
        """Settings that send every role to this server."""
        return {
            "LESSONLOOP_PROVIDER": "openai",
            "LESSONLOOP_BASE_URL": self.url,
            "LESSONLOOP_MODEL": self.model,
            **extra,
        }


@pytest.fixture(scope="session")
def real_model() -> RealModel:
    """A real model server (``LESSONLOOP_TEST_MODEL_URL``, such as the kit in
    shared/tools/local-model on http://127.0.0.1:8089/v1). Tests marked ``real_model`` are
    skipped when it is not set or does not answer."""
    import urllib.request

    url = os.environ.get("LESSONLOOP_TEST_MODEL_URL", "").rstrip("/")
    if not url:
        pytest.skip("LESSONLOOP_TEST_MODEL_URL is not set: no real model server to test against")
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=10) as response:
            models = json.load(response)["data"]
    except (OSError, ValueError, KeyError) as exc:
        pytest.skip(f"the model server at {url} does not answer: {exc}")
    return RealModel(url, os.environ.get("LESSONLOOP_TEST_MODEL") or models[0]["id"])


@pytest.fixture(scope="session", autouse=True)
def typer_command_built_once():
    """``cli.main`` has Typer build lessonloop's Click command from every command's signature
    on each call (0.05-0.1 s of evaluating annotations): once in a process, but thousands of
    times in the suite's in-process calls. The same app always gives the same command, so the
    suite builds it once and every call still parses and runs through it; any other Typer app
    (a test's own) is built as before."""
    import typer.main

    from lessonloop.cli.app import app

    build = typer.main.get_command
    built = build(app)

    def get_command(typer_instance):
        return built if typer_instance is app else build(typer_instance)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(typer.main, "get_command", get_command)
        yield


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    return isolated_home(monkeypatch, tmp_path)


def isolated_home(monkeypatch, tmp_path: Path) -> Path:
    """``tmp_path / "home"`` as LESSONLOOP_HOME, with none of the developer's settings (also for
    a module's fixture, given a ``pytest.MonkeyPatch.context()``)."""
    root = tmp_path / "home"
    monkeypatch.setenv("LESSONLOOP_HOME", str(root))
    for name in _settings_from_outside(os.environ):
        monkeypatch.delenv(name)
    monkeypatch.setenv("LESSONLOOP_USER_HOME", str(tmp_path / "user-home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the --help cache
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    return root


@pytest.fixture
def cli(home, capsys):
    """Run the CLI in-process; returns exit code, stdout and stderr."""
    from lessonloop.cli import main

    def invoke(*args: str) -> Result:
        capsys.readouterr()
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return invoke


def settle_captures(home: Path) -> None:
    """Wait for the captures the hooks of every session under ``home`` are still writing (a
    hook answers first, then captures in the background: memory/deferred.py)."""
    from lessonloop.memory import deferred

    for folder in sorted((home / "sessions").glob("*")):
        assert deferred.settled(folder), f"captures of {folder.name} still running after 10 s"


def home_made_once(factory, *commands: list[str]) -> Path:
    """A home made by these lessonloop commands, each in a process of its own, for a module's
    tests to copy (``copy_home``): a fixture that makes the same runs for every test costs a
    second or more each time."""
    root = factory.mktemp("made") / "home"
    env = subprocess_env(root)
    for argv in commands:
        done = subprocess.run(
            [sys.executable, "-m", "lessonloop", *map(str, argv)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
    return root


def copy_home(made: Path, home: Path) -> None:
    """The test's own copy of a home ``home_made_once`` made."""
    shutil.copytree(made, home, dirs_exist_ok=True)


def subprocess_env(home: Path, **extra: str) -> dict:
    env = dict(os.environ)
    env["LESSONLOOP_HOME"] = str(home)
    env.setdefault("LESSONLOOP_USER_HOME", str(home.parent / "user-home"))
    env.setdefault("XDG_CACHE_HOME", str(home.parent / "cache"))
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    for name in _settings_from_outside(env):
        del env[name]
    env.update(extra)
    return env


@pytest.fixture
def run_cli(home):
    """Run the CLI as a separate process (for signals, tracebacks and real exits)."""

    def invoke(*args: str, env: dict | None = None, timeout: float = 120) -> Result:
        proc = subprocess.run(
            [sys.executable, "-m", "lessonloop", *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env or subprocess_env(home),
            stdin=subprocess.DEVNULL,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    return invoke


def contract_validator(name: str):
    """A validator for one of the autocontext CLI schemas, resolving their cross-references."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    registry = Registry()
    for path in CONTRACTS.glob("*.schema.json"):
        schema = json.loads(path.read_text())
        registry = registry.with_resource(path.name, Resource.from_contents(schema))
    schema = json.loads((CONTRACTS / name).read_text())
    return Draft202012Validator(schema, registry=registry)


@pytest.fixture
def chromium():
    """Debian's headless Chromium driven by Playwright (``executable_path``: no browser
    download); the test is skipped where either is missing."""
    sync_api = pytest.importorskip("playwright.sync_api")
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.skip("no chromium on the PATH (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def coach_once(monkeypatch):
    """The offline coach proposes ``edits`` after generation 1 and nothing else afterwards."""
    from lessonloop.providers.local import agent

    def install(edits: list[dict]) -> None:
        def coach(self, state, request):
            chosen = edits if state.get("generation") == 1 else []
            return "```json\n" + json.dumps({"edits": chosen}) + "\n```\n"

        monkeypatch.setattr(agent.LocalProvider, "_coach", coach)

    return install
