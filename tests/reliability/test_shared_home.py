"""A home under pressure: twenty hook writers and a memorize while a run runs; a memorize that
finds the disk full; a home that turns read-only. Each ends with one line or nothing lost."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from lessonloop.store import open_store
from lessonloop.store import runs as run_store

from ..conftest import FIXTURES, settle_captures, subprocess_env
from ..memory.test_hooks import _bash_failure
from .test_full_disk import HINT, _fill, on_disk, small_disk  # noqa: F401 - fixtures

pytestmark = pytest.mark.reliability

TRANSCRIPT = FIXTURES / "claude-code" / "session_errors.jsonl"


def _wait_for(path, predicate, proc, timeout=120.0):
    deadline = time.monotonic() + timeout  # a guard against a hang, not a timing
    while time.monotonic() < deadline:
        if path.exists() and any(
            predicate(json.loads(line)) for line in path.read_text().splitlines() if line.strip()
        ):
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)
    raise AssertionError(f"nothing in {path} after {timeout} s")


def test_twenty_hook_writers_and_a_memorize_during_a_run(home, run_cli):
    assert run_cli("memory", "consent", "yes").code == 0
    env = subprocess_env(home)
    target = 10
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lessonloop",
            "run",
            "grid_ctf",
            "-n",
            str(target),
            "--run-id",
            "busy",
            "--json",
        ],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(
            home / "runs" / "busy" / "events.ndjson",
            lambda e: e["event"] == "generation_completed",
            run,
        )
        session, cwd = "during-run", str(home.parent / "project")
        hooks = [
            subprocess.Popen(
                [sys.executable, "-m", "lessonloop", "hook", "post-tool-use-failure"],
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(20)
        ]
        for i, hook in enumerate(hooks):  # all twenty alive before any payload goes in
            payload = {
                **_bash_failure(session, i, cwd),
                "hook_event_name": "PostToolUseFailure",
                "error": f"Error: widget-{i} failed",
            }
            hook.stdin.write(json.dumps(payload).encode())
            hook.stdin.close()
        ended = [(h.wait(timeout=120), h.stdout.read(), h.stderr.read()) for h in hooks]
        memorized = run_cli("memorize", "--transcript", TRANSCRIPT, "--json")
        out, err = run.communicate(timeout=600)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert all(result == (0, b"", b"") for result in ended), ended
    settle_captures(home)
    assert memorized.code == 0 and memorized.json()["stored"], memorized.err
    assert run.returncode == 0, err
    assert json.loads(out)["generations_executed"] == target
    with open_store(home, readonly=True) as store:
        indices = [g["generation_index"] for g in run_store.generations(store, "busy")]
    assert indices == list(range(1, target + 1))
    lines = (home / "sessions" / session / "signals.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]  # every line one whole JSON object
    assert sorted(r["line"] for r in records) == sorted(
        f"Error: widget-{i} failed" for i in range(20)
    )
    assert not (home / "logs" / "hooks.log").exists(), (home / "logs" / "hooks.log").read_text()


def _memories(cli) -> list[tuple]:
    listed = cli("memory", "list", "--scope", "project", "--json")
    assert listed.code == 0, listed.err
    return sorted((m["type"], m["summary"], m["seen"]) for m in listed.json())


def test_a_memorize_that_finds_the_disk_full_says_so_and_loses_nothing(
    small_disk, on_disk, run_cli, home
):
    root, cli = on_disk(small_disk("4m"))
    assert cli("memory", "consent", "yes").code == 0
    assert cli("memory", "add", "--type", "decision", "--summary", "Use pnpm").code == 0
    before = _memories(cli)
    filler = _fill(root.parent)
    full = cli("memorize", "--transcript", TRANSCRIPT)
    assert full.code == 1, full.err
    assert "Traceback" not in full.err and len(full.err.strip().splitlines()) == 1, full.err
    assert "no space left" in full.err and HINT in full.err, full.err
    filler.unlink()
    assert _memories(cli) == before, "what was stored before is intact"
    done = cli("memorize", "--transcript", TRANSCRIPT)
    assert done.code == 0, done.err
    clean_env = subprocess_env(home.parent / "clean")
    clean = lambda *args: run_cli(*args, env=clean_env)  # noqa: E731
    clean("memory", "consent", "yes")
    clean("memory", "add", "--type", "decision", "--summary", "Use pnpm")
    clean("memorize", "--transcript", TRANSCRIPT)
    assert _memories(cli) == _memories(clean), "as if the disk had never filled"


def test_a_home_that_turns_read_only(small_disk, on_disk):
    disk = small_disk("16m")
    root, cli = on_disk(disk)
    assert cli("run", "grid_ctf", "-n", 2, "--run-id", "before").code == 0
    assert cli("memory", "consent", "yes").code == 0
    assert cli("memory", "add", "--type", "decision", "--summary", "Use pnpm").code == 0
    remount = subprocess.run(
        ["mount", "-o", "remount,ro", str(disk)], capture_output=True, text=True
    )
    if remount.returncode:
        pytest.skip(f"cannot remount read-only here: {remount.stderr.strip()}")
    for args in (
        ("run", "grid_ctf", "-n", 1),
        ("resume", "before"),
        ("memory", "add", "--type", "decision", "--summary", "Use yarn"),
        ("memorize", "--transcript", TRANSCRIPT),
    ):
        refused = cli(*args)
        assert refused.code == 1, (args, refused.err)
        lines = refused.err.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in refused.err, (args, refused.err)
        assert "read-only" in lines[0].lower() or "cannot write" in lines[0], (args, lines)
    status = cli("status", "before", "--json")
    assert status.code == 0 and status.json()["run"]["status"] == "completed", status.err
    assert "before" in cli("list").out
    assert [m["summary"] for m in cli("memory", "list", "--json").json()] == ["Use pnpm"]
    hook = subprocess.run(
        [sys.executable, "-m", "lessonloop", "hook", "post-tool-use-failure"],
        input=json.dumps(_bash_failure("ro", 1, str(root.parent))),
        capture_output=True,
        text=True,
        env=subprocess_env(root),
        timeout=120,
    )
    assert (hook.returncode, hook.stdout, hook.stderr) == (0, "", ""), "a hook never fails"
