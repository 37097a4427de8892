"""Hooks: always exit 0, log their own errors, capture without losing lines, recall bounded."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys

import pytest

from lessonloop.memory import capture, consent, recall

from ..conftest import settle_captures, subprocess_env


def hook(home, event: str, payload, env: dict | None = None) -> subprocess.CompletedProcess:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    done = subprocess.run(
        [sys.executable, "-m", "lessonloop", "hook", event],
        input=data,
        capture_output=True,
        env={**subprocess_env(home), **(env or {})},
        timeout=60,
    )
    settle_captures(home)
    return done


def test_a_broken_payload_or_unknown_event_still_exits_zero_and_is_logged(home):
    for event, payload in [
        ("post-tool-use", b"{not json"),
        ("teleport", {"session_id": "s"}),
        ("session-start", b"\xff\xfe garbage"),
        ("post-tool-use", b"[1, 2]"),
    ]:
        done = hook(home, event, payload)
        assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""
    log = (home / "logs" / "hooks.log").read_text()
    assert "not JSON" in log and "unknown hook event 'teleport'" in log


def test_hooks_do_not_import_the_cli_stack_nor_anything_outside_the_standard_library(home):
    # (a failed call, as Claude Code sends it to PostToolUseFailure: the redactor runs, on its
    # standard path)
    payload = json.dumps(
        {
            "session_id": "s",
            "tool_name": "Bash",
            "tool_input": {"command": "make"},
            "error": "Exit code 2\nError: token=abc123 failed",
            "is_interrupt": False,
        }
    )
    probe = (
        "import sys, io\nsys.argv = ['lessonloop', 'hook', 'post-tool-use-failure']\n"
        f"sys.stdin = io.TextIOWrapper(io.BytesIO({payload.encode()!r}))\n"
        # (the capture in this process, as where there is no fork: deferred.after_exit)
        "import os\ndel os.fork\nos._exit = sys.exit  # (the hook ends with os._exit)\n"
        "from lessonloop.__main__ import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('lessonloop.safety.redact' in sys.modules, sorted(m for m, v in sys.modules.items()"
        " if v is not None and (m.split('.')[0] in ('typer', 'click', 'rich', 'pydantic', 'yaml',"
        " 'jsonschema', 'anthropic', 'openai', 'ahocorasick_rs') or m == 'lessonloop.cli')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=subprocess_env(home),
        timeout=60,
    )
    assert done.stdout.strip().splitlines()[-1] == "True []", done.stderr


def _append_many(path: str, worker: int, count: int) -> None:
    for i in range(count):
        capture.append(
            __import__("pathlib").Path(path),
            {"type": "error", "worker": worker, "i": i, "line": "x" * (i * 97 % 3000)},
        )


@pytest.mark.reliability
def test_twenty_concurrent_writers_lose_nothing(tmp_path):
    path = tmp_path / "sessions" / "s" / "signals.jsonl"
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_append_many, args=(str(path), w, 50)) for w in range(20)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(60)
        assert p.exitcode == 0
    records = capture.read(path)
    assert len(records) == 20 * 50
    assert {(r["worker"], r["i"]) for r in records} == {
        (w, i) for w in range(20) for i in range(50)
    }


def test_locked_admits_one_holder_at_a_time(tmp_path):
    import threading

    path = tmp_path / "sessions" / "s" / "memorize.lock"
    order = []

    def second():
        with capture.locked(path):
            order.append("second")

    with capture.locked(path):
        waiting = threading.Thread(target=second)
        waiting.start()
        waiting.join(0.3)
        order.append("first")  # the second holder is still waiting for the lock
    waiting.join(10)
    assert order == ["first", "second"]


def test_consent_states(tmp_path):
    assert consent.state(tmp_path) == "missing"
    for answer in ("yes", "no", "ask"):
        consent.record(tmp_path, answer)
        assert consent.state(tmp_path) == answer
    (tmp_path / consent.FILE).write_text("{garbage")
    assert consent.state(tmp_path) == "missing"


def test_session_start_tells_once_and_recalls_within_budget(home, cli):
    first = hook(home, "session-start", {"session_id": "s1", "source": "startup"})
    assert "memory consent yes" in json.loads(first.stdout)["systemMessage"]
    again = hook(home, "session-start", {"session_id": "s1", "source": "resume"})
    assert again.stdout == b"", "told once per session, and nothing to recall yet"
    import itertools

    nouns = [
        "billing",
        "search",
        "auth",
        "queue",
        "cache",
        "mailer",
        "export",
        "metrics",
        "gateway",
        "scheduler",
    ]
    verbs = ["retries", "logs", "batches", "encrypts", "validates", "throttles", "pages", "streams"]
    for noun, verb, other in itertools.islice(itertools.product(nouns, verbs, nouns[::-1]), 80):
        cli(
            "memory",
            "add",
            "--type",
            "decision",
            "--summary",
            f"The {noun} service {verb} requests before calling {other}",
        )
    cli("memory", "consent", "yes")
    out = json.loads(hook(home, "session-start", {"session_id": "s2"}).stdout)
    context = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "systemMessage" not in out
    assert len(context) <= recall.BUDGET_TOKENS * 4 and context.count("\n- [decision]") > 10


def _bash_failure(session_id: str, i: int, cwd: str) -> dict:
    """A real Claude Code PostToolUse payload for a Bash call that failed with its own line."""
    return {
        "session_id": session_id,
        "transcript_path": f"{cwd}/transcript.jsonl",
        "cwd": cwd,
        "hook_event_name": "PostToolUse",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_use_id": f"toolu_{i:04d}",
        "tool_input": {"command": f"make widget-{i}", "description": f"Build widget {i}"},
        "tool_response": {
            "stdout": "",
            "stderr": f"Error: widget-{i} failed",
            "interrupted": False,
            "isImage": False,
            "exitCode": 1,
        },
    }


@pytest.mark.reliability
def test_twenty_hook_processes_writing_at_once_lose_nothing(home, cli):
    assert cli("memory", "consent", "yes").code == 0
    assert consent.state(home) == "yes"
    session_id = "sess-concurrent-20"
    cwd = str(home.parent / "project")
    env = subprocess_env(home)
    procs = []
    try:
        for i in range(20):  # every process is started before any is waited on
            proc = subprocess.Popen(
                [sys.executable, "-m", "lessonloop", "hook", "post-tool-use"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
            procs.append(proc)
        # Payloads go in only once all 20 are alive, so their captures really overlap.
        for i, proc in enumerate(procs):
            proc.stdin.write(json.dumps(_bash_failure(session_id, i, cwd)).encode())
            proc.stdin.close()
        results = [
            (proc.wait(timeout=120), proc.stdout.read(), proc.stderr.read()) for proc in procs
        ]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for stream in (proc.stdout, proc.stderr):
                if stream and not stream.closed:
                    stream.close()
    for code, out, err in results:
        assert (code, out, err) == (0, b"", b"")
    settle_captures(home)
    assert not (home / "logs" / "hooks.log").exists(), (home / "logs" / "hooks.log").read_text()

    path = home / "sessions" / session_id / "signals.jsonl"
    data = path.read_bytes()
    assert data.endswith(b"\n"), "a partial last line"
    lines = data.split(b"\n")[:-1]
    assert len(lines) == 20
    records = [json.loads(line) for line in lines]  # every line is one whole JSON object
    assert all(
        isinstance(r, dict) and r["type"] == "error" and r["tool"] == "Bash" for r in records
    )
    assert sorted(r["line"] for r in records) == sorted(
        f"Error: widget-{i} failed" for i in range(20)
    )
    assert sorted(r["subject"] for r in records) == sorted(f"make widget-{i}" for i in range(20))
    assert {r["normalized"] for r in records} == {"error: widget-<n> failed"}
    assert capture.read(path) == records
    # The transcript's path was remembered once, intact, despite 20 racing writers.
    assert (
        home / "sessions" / session_id / "transcript_path"
    ).read_text() == f"{cwd}/transcript.jsonl"
    # No other session folder was touched.
    assert [p.name for p in (home / "sessions").iterdir()] == [session_id]


def test_pre_tool_use_exits_zero_and_never_blocks(home, cli):
    # pre-tool-use has nothing to learn: it prints nothing (so it can never set a
    # permissionDecision or "continue": false), writes nothing and logs no error.
    assert cli("memory", "consent", "yes").code == 0
    before = sorted(p.relative_to(home) for p in home.rglob("*"))
    payload = {
        "session_id": "sess-pre",
        "transcript_path": "/tmp/x/transcript.jsonl",
        "cwd": str(home.parent),
        "hook_event_name": "PreToolUse",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_use_id": "toolu_01",
        "tool_input": {
            "command": "rm -rf build && Error: make fails",
            "description": "Clean the build",
        },
    }
    done = hook(home, "pre-tool-use", payload)
    assert done.returncode == 0
    assert done.stdout == b"" and done.stderr == b""
    assert not (home / "logs" / "hooks.log").exists()
    assert sorted(p.relative_to(home) for p in home.rglob("*")) == before
    # Even with no consent at all and a broken payload, it neither blocks nor prints.
    (home / consent.FILE).unlink()
    for broken in (b"", b"{not json"):
        done = hook(home, "pre-tool-use", broken)
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    log = (home / "logs" / "hooks.log").read_text().splitlines()
    assert len(log) == 1 and "pre-tool-use" in log[0] and "not JSON" in log[0]


def test_session_start_with_consent_and_no_memories_says_nothing(home, cli):
    from lessonloop import paths
    from lessonloop.store import open_store

    assert cli("memory", "consent", "yes").code == 0
    payload = {
        "session_id": "sess-empty",
        "transcript_path": "/tmp/x/transcript.jsonl",
        "cwd": str(home.parent),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    # No store yet: nothing to recall, consent given so no notice either -> no output at all.
    done = hook(home, "session-start", payload)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert not paths.db_path(home).exists(), "recall must not create the store"
    # An existing but empty store (project and user) says nothing as well.
    with open_store(home):
        pass
    with open_store(paths.user_home()):
        pass
    assert paths.db_path(home).exists() and paths.db_path(paths.user_home()).exists()
    for source in ("startup", "resume", "clear", "compact"):
        done = hook(home, "session-start", {**payload, "source": source})
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert not (home / "logs" / "hooks.log").exists()
    # The user was never told to answer: consent is already yes.
    assert not (home / "sessions" / "sess-empty" / "consent-notice").exists()
