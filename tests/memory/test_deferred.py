"""A hook answers first and captures after it has exited (memory/deferred.py): Claude Code waits
for the answer only, readers wait for the captures, and captures run one at a time."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import threading
import time

from lessonloop.memory import capture, deferred

from ..conftest import subprocess_env


def _hook(home, event: str, payload: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lessonloop", "hook", event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=subprocess_env(home),
        timeout=60,
    )


def _failure(session: str, cwd: str) -> dict:
    return {
        "session_id": session,
        "cwd": cwd,
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_use_id": "t1",
        "tool_input": {"command": "make widget"},
        "error": "Exit code 2\nError: widget failed",
        "is_interrupt": False,
    }


class Held:
    """The session's SERIAL lock held by the test: a capture started now waits for it."""

    def __init__(self, folder):
        folder.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(folder / deferred.SERIAL, os.O_RDWR | os.O_CREAT)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def release(self) -> None:
        os.close(self.fd)


def test_the_hook_exits_before_its_capture_and_a_reader_waits_for_it(home, cli):
    cli("memory", "consent", "yes")
    folder = home / "sessions" / "deferred"
    held = Held(folder)
    try:
        done = _hook(home, "post-tool-use-failure", _failure("deferred", str(home.parent)))
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
        # the hook has exited; its capture has not been written: it waits for the lock
        assert not (folder / "signals.jsonl").exists()
        assert not deferred.settled(folder, timeout=0.3)
    finally:
        held.release()
    assert deferred.settled(folder)
    [signal] = capture.read(folder / "signals.jsonl")
    assert signal["line"] == "Error: widget failed" and signal["subject"] == "make widget"


def test_a_prompt_is_answered_while_its_capture_waits(home, cli):
    cli("memory", "consent", "yes")
    summary = "Deploy the billing worker with kamal"
    assert cli("memory", "add", "--type", "preference", "--summary", summary).code == 0
    folder = home / "sessions" / "answered"
    held = Held(folder)
    try:
        done = _hook(
            home,
            "user-prompt-submit",
            {
                "session_id": "answered",
                "cwd": str(home.parent),
                "hook_event_name": "UserPromptSubmit",
                "prompt": "From now on, always use pnpm. How do we deploy the billing worker "
                "with kamal?",
            },
        )
        answer = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "kamal" in answer
        assert not (folder / "feedback.jsonl").exists()
    finally:
        held.release()
    assert deferred.settled(folder)
    lessons = [r["lesson"] for r in capture.read(folder / "feedback.jsonl") if "lesson" in r]
    assert any("pnpm" in lesson for lesson in lessons), lessons


def test_memorize_waits_for_the_captures_still_being_written(home, cli):
    cli("memory", "consent", "yes")
    folder = home / "sessions" / "waited"
    held = Held(folder)
    released: list[float] = []

    def release() -> None:
        released.append(time.monotonic())
        held.release()

    releaser = threading.Timer(1.0, release)
    try:
        for _ in range(2):  # the same failure twice: a pattern candidate needs it seen again
            done = _hook(home, "post-tool-use-failure", _failure("waited", str(home.parent)))
            assert done.returncode == 0
    finally:
        releaser.start()
    memorized = cli("memorize", "--session-id", "waited", "--json")
    returned = time.monotonic()
    releaser.join()
    assert memorized.code == 0, memorized.err
    assert returned > released[0]  # it waited for the lock, then read both captures
    assert len(capture.read(folder / "signals.jsonl")) == 2


def test_a_capture_still_being_written_is_left_out_and_said_then_memorized_later(
    home, cli, monkeypatch
):
    cli("memory", "consent", "yes")
    monkeypatch.setattr(deferred, "SETTLE_SECONDS", 0.3)
    folder = home / "sessions" / "stuck"
    held = Held(folder)
    try:
        prompt = {
            "session_id": "stuck",
            "cwd": str(home.parent),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "From now on, always use pnpm in this repo, never npm.",
        }
        assert _hook(home, "user-prompt-submit", prompt).returncode == 0
        first = cli("memorize", "--session-id", "stuck", "--json").json()
        assert first["stored"] == []
        assert "still being written" in first["unsettled"]
        assert "lessonloop memorize --session-id stuck" in first["unsettled"]
    finally:
        held.release()
    assert deferred.settled(folder, timeout=10)
    later = cli("memorize", "--session-id", "stuck", "--json").json()
    assert later["unsettled"] is None
    assert any("pnpm" in lesson for lesson in later["stored"]), later


def test_the_background_capture_holds_nothing_of_the_callers_but_its_lock(home, cli):
    """A caller that passes the hook another descriptor (a pipe it reads to its end) is not
    kept waiting by the background capture."""
    cli("memory", "consent", "yes")
    folder = home / "sessions" / "fds"
    held = Held(folder)
    read_end, write_end = os.pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "lessonloop", "hook", "post-tool-use-failure"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=subprocess_env(home),
            pass_fds=(write_end,),
        )
        proc.communicate(json.dumps(_failure("fds", str(home.parent))).encode(), timeout=60)
        os.close(write_end)
        os.set_blocking(read_end, False)
        # the capture waits for the lock, alive; the pipe's only writer it had is closed
        assert not deferred.settled(folder, timeout=0.2)
        assert os.read(read_end, 1) == b""  # end of file: no process holds the write end
    finally:
        held.release()
        os.close(read_end)
    assert deferred.settled(folder)
