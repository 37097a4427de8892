"""One stream of session events: the hooks and the transcript reader judge a call alike, mark what
they saw with the same keys, and memorize reads their captures and the transcript merged (error
events deduplicated by tool_use_id, every prompt's feedback once)."""

from __future__ import annotations

import json
import subprocess
import sys

from lessonloop.memory import capture, events, memorize, session_lessons
from lessonloop.memory.transcript import read

from ..conftest import settle_captures, subprocess_env
from .test_transcript import event, result, use, write


def hook(home, name: str, payload: dict) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "lessonloop", "hook", name],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=subprocess_env(home),
        timeout=60,
    )
    settle_captures(home)
    assert (done.returncode, done.stderr) == (0, b"")


def test_a_refusal_is_judged_alike_by_the_hook_and_the_transcript_reader(home, cli, tmp_path):
    cli("memory", "consent", "yes")
    refused = "Error: The user doesn't want to proceed with this tool use. Exit code 1"
    hook(
        home,
        "post-tool-use-failure",
        {
            "session_id": "s",
            "cwd": str(tmp_path),
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_input": {"command": "npm install"},
            "tool_use_id": "t1",
            "is_interrupt": False,
            "error": refused,
        },
    )
    assert not (home / "sessions" / "s" / "signals.jsonl").exists()
    transcript = read(
        write(
            tmp_path / "t.jsonl",
            [use("t1", "Bash", {"command": "npm install"}), result("t1", refused, is_error=True)],
        )
    )
    [call] = transcript.calls
    assert call.rejected and not call.errors
    assert events.outcome(refused, True) == "refused"
    assert events.outcome("[Request interrupted by user for tool use]", True) == "interrupted"
    assert events.outcome("Exit code 1\nboom", True) == "failed"
    assert events.outcome("", False, interrupted=True) == "interrupted"


def _failing_session(tmp_path):
    return write(
        tmp_path / "t.jsonl",
        [
            use("t1", "Bash", {"command": "python app.py"}),
            result("t1", "Exit code 1\nModuleNotFoundError: No module named 'yaml'", is_error=True),
            use("t2", "Bash", {"command": "pip install pyyaml"}),
            result("t2", "ok"),
            use("t3", "Bash", {"command": "python app.py"}),
            result("t3", "ok"),
        ],
    )


def test_error_events_merge_by_tool_use_id(home, cli, tmp_path):
    cli("memory", "consent", "yes")
    path = _failing_session(tmp_path)
    failure = {
        "session_id": "s",
        "cwd": str(tmp_path),
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": "python app.py"},
        "is_interrupt": False,
        "error": "Exit code 1\nModuleNotFoundError: No module named 'yaml'",
    }
    for call in ("t1", "t1", "t9"):  # t1 twice (a replay); t9: a call the transcript lacks
        hook(home, "post-tool-use-failure", {**failure, "tool_use_id": call})
    captured = capture.read(home / "sessions" / "s" / "signals.jsonl")
    assert [r["tool_use_id"] for r in captured] == ["t1", "t1", "t9"]
    stream = events.merge_errors(read(path), captured)
    assert [(r["tool_use_id"], r.get("source")) for r in stream] == [
        ("t1", "transcript"),
        ("t9", "hook"),
    ]
    assert stream[0]["line"] == captured[0]["line"]  # the same event, seen by both
    assert events.merge_errors(None, captured) == [captured[0], captured[2]]


def test_the_prompts_no_hook_saw_are_read_from_the_transcript(home, cli, tmp_path):
    # the hooks were installed after the first prompt: its lesson is in the transcript only
    cli("memory", "consent", "yes")
    first, second = "I prefer pnpm over npm for this repo.", "From now on we use vitest."
    path = write(tmp_path / "t.jsonl", [event("user", first), event("user", second)])
    hook(
        home,
        "user-prompt-submit",
        {
            "session_id": "s",
            "cwd": str(tmp_path),
            "hook_event_name": "UserPromptSubmit",
            "prompt": second,
            "transcript_path": str(path),
        },
    )
    captured = capture.read(home / "sessions" / "s" / "feedback.jsonl")
    assert [r["type"] for r in captured] == ["feedback", "prompt_check"]
    assert [p.text for p in events.unseen_prompts(read(path), captured)] == [first]
    result = memorize.memorize("s", home, transcript=str(path))
    assert sorted(result.stored) == ["Use pnpm instead of npm for this repo", "Use vitest"]
    again = memorize.memorize("s", home, transcript=str(path))
    assert again.stored == []


def test_captures_without_prompt_keys_keep_the_old_rule(tmp_path):
    # (written before prompts carried their key: the transcript's prompts only when no feedback
    # was captured at all)
    path = write(tmp_path / "t.jsonl", [event("user", "I prefer pnpm over npm for this repo.")])
    transcript = read(path)
    assert events.unseen_prompts(transcript, [{"type": "prompt_check", "intent": "other"}]) is None
    stream = session_lessons.feedback_stream([], transcript)
    assert [f["lesson"] for f in stream] == ["Use pnpm instead of npm for this repo"]
    old = [{"type": "feedback", "kind": "decision", "lesson": "Use vitest", "text": "x"}]
    assert session_lessons.feedback_stream(old, transcript) == old
