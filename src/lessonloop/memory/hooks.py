"""``lessonloop hook <event>``: the Claude Code hook entry point.

Reads the hook's JSON payload on stdin, captures what the session teaches, and prints the hook
JSON output only when it has something to say. It always exits 0 — a hook never blocks or
breaks the agent — and its own errors go to ``logs/hooks.log``. The capture paths import the
standard library and lessonloop's stdlib-only modules, never the CLI stack; only session-end
and pre-compact (memorize) and session-start (recall) open the store.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path

from .. import paths
from ..safety.redact import redact
from ..timeutil import utc_now
from . import capture, consent

EVENTS = ("session-start", "user-prompt-submit", "pre-tool-use", "post-tool-use", "stop",
          "session-end", "pre-compact")
MAX_PAYLOAD = 32 * 1024 * 1024  # bytes read from stdin; tool responses can be large
LOG_MAX = 1024 * 1024  # logs/hooks.log is cut back to its newest half beyond this


def _payload() -> dict:
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    raw = sys.stdin.buffer.read(MAX_PAYLOAD)
    try:
        value = json.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
    except ValueError:
        raise ValueError(f"the hook payload is not JSON ({len(raw)} bytes)") from None
    return value if isinstance(value, dict) else {}


def _session(payload: dict) -> str:
    value = payload.get("session_id")
    return value if isinstance(value, str) and value else "unknown"


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _consent_notice(root: Path, session: str) -> str | None:
    """The how-to-answer line, once per session, while consent is missing or ``ask``."""
    if consent.state(root) in ("missing", "ask") and capture.mark_once(
            paths.session_dir(session, root) / "consent-notice"):
        return consent.HOW_TO_ANSWER
    return None


def _remember_transcript(payload: dict, root: Path) -> None:
    """Keep the transcript's path, so ``lessonloop memorize --session-id`` can find it later."""
    path = _text(payload.get("transcript_path"))
    target = paths.session_dir(_session(payload), root) / "transcript_path"
    if path and not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path, encoding="utf-8")


def session_start(payload: dict, root: Path) -> dict | None:
    from . import recall

    output: dict = {}
    notice = _consent_notice(root, _session(payload))
    if notice:
        output["systemMessage"] = notice
    block = recall.block(root, paths.user_home())
    if block:
        output["hookSpecificOutput"] = {"hookEventName": "SessionStart", "additionalContext": block}
    return output or None


def user_prompt_submit(payload: dict, root: Path) -> None:
    if consent.state(root) == "no":
        return None
    from .signals import prompt_check, prompt_feedback

    _remember_transcript(payload, root)
    prompt = _text(payload.get("prompt"))
    path = paths.session_dir(_session(payload), root) / "feedback.jsonl"
    at = utc_now()
    for found in prompt_feedback(prompt):
        capture.append(path, {"type": "feedback", "kind": found.kind, "lesson": found.lesson,
                              "text": found.text, "user_scope": found.user_scope, "at": at})
    if prompt.strip():
        capture.append(path, {"type": "prompt_check", **prompt_check(prompt), "at": at})
    return None


def post_tool_use(payload: dict, root: Path) -> None:
    if consent.state(root) == "no":
        return None
    from .signals import tool_errors

    _remember_transcript(payload, root)
    found = tool_errors(_text(payload.get("tool_name")), payload.get("tool_input"),
                        payload.get("tool_response"))
    path = paths.session_dir(_session(payload), root) / "signals.jsonl"
    at = utc_now()
    for signal in found:
        capture.append(path, {"type": "error", "tool": signal.tool, "line": signal.line,
                              "normalized": signal.normalized, "subject": signal.subject,
                              "at": at})
    return None


def session_end(payload: dict, root: Path) -> dict | None:
    """Memorize the session (session-end and pre-compact): one line when memories were stored."""
    from . import memorize

    session = _session(payload)
    output: dict = {}
    notice = _consent_notice(root, session)
    result = memorize.memorize(session, root, transcript=_text(payload.get("transcript_path")))
    message = result.message or notice
    if message:
        output["systemMessage"] = message
    return output or None


HANDLERS = {
    "session-start": session_start,
    "user-prompt-submit": user_prompt_submit,
    "pre-tool-use": lambda payload, root: None,  # nothing to learn before a tool runs
    "post-tool-use": post_tool_use,
    "stop": lambda payload, root: None,  # fires after every turn: memorize waits for the end
    "session-end": session_end,
    "pre-compact": session_end,
}


def log(root: Path | None, event: str, message: str) -> None:
    """One redacted line in ``logs/hooks.log``; the log never grows without bound."""
    try:
        folder = (root or paths.project_home(None)) / "logs"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "hooks.log"
        line = f"{utc_now()} {event or '-'} {redact(message)}\n".encode("utf-8", "replace")
        if path.exists() and path.stat().st_size > LOG_MAX:
            data = path.read_bytes()
            path.write_bytes(data[len(data) // 2:])
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except Exception:  # a hook that cannot log still must not fail the agent
        pass


def main(argv: list[str]) -> int:
    """Run one hook; always 0."""
    event = argv[0] if argv else ""
    root = None
    try:
        if event in ("-h", "--help", ""):
            sys.stdout.write("usage: lessonloop hook <event>   (events: " + ", ".join(EVENTS)
                             + "); reads the Claude Code hook payload on stdin\n")
            return 0
        payload = _payload()
        root = paths.project_home(_text(payload.get("cwd")) or None)
        handler = HANDLERS.get(event)
        if handler is None:
            log(root, event, f"unknown hook event {event!r}; known: {', '.join(EVENTS)}")
            return 0
        output = handler(payload, root)
        if output:
            sys.stdout.write(json.dumps(output) + "\n")
            sys.stdout.flush()
    except BaseException as exc:  # noqa: BLE001 - the agent must never see a hook fail
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        where = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
        at = f" at {Path(where[0].filename).name}:{where[0].lineno}" if where else ""
        log(root, event, f"{detail}{at}")
    return 0
