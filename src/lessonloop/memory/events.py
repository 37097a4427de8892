"""Normalized session events: the one shape the capture hooks and the transcript reader give what
happened in a session, so memorize reads one stream instead of reconciling two.

Two sources see a session: the hooks, as it happens (a failed tool call, a prompt), and the
transcript, afterwards and whole. They judge a tool call's outcome by the same rules
(``outcome``: a refusal and an interruption are no failure; a success is the tool's own
status), hand the error detector the same response (``response``), and mark what they saw
with the same keys: a tool call by its ``tool_use_id``, a prompt by ``prompt_key`` (a digest of
its redacted text, as the transcript reader keeps it). ``merge`` then gives memorize one stream:

- error events: those of the transcript's calls (it has every call, with what came after),
  then the hooks' error records of calls the transcript does not hold (a transcript cut short,
  or none); a record of a call the transcript holds is the same event seen twice, and goes;
- feedback: the hooks' feedback records, then the feedback of the transcript prompts no hook
  saw (hooks installed mid-session, or consent given late). Captures written before prompts
  carried their key cannot say which prompts they saw: then, as before, the transcript's prompts
  are read only when no feedback was captured at all.

Standard library only, and light: the capture hooks import it.
"""

from __future__ import annotations

import re

from ..lazyre import lazy
from . import privacy

# a refused call's result starts with one of these; an interrupted one with INTERRUPTED
REFUSED = (
    "The user doesn't want to proceed with this tool use",
    "The user doesn't want to take this action",
    "Error: The user doesn't want to",
)
INTERRUPTED = "[Request interrupted by user"

# a prompt's injected blocks (system reminders, command wrappers) and meta messages: not the
# user's words
_INJECTED_TAGS = lazy(r"<([a-z][\w-]*)(?:\s[^>]*)?>.*?</\1\s*>", re.S)
_TAG_NAMES_SKIPPED = (
    "command-",
    "local-command",
    "system-reminder",
    "bash-",
    "user-prompt",
    "task-notification",
    "user-memory",
    "ide_",
    "ide-",
)
_META_PREFIXES = (
    "Caveat:",
    "[Request interrupted",
    "This session is being continued from a previous conversation",
    "[Image",
    "<command-",
    "<local-command",
    "<bash-",
)
_KEY_CHARS = 2000  # characters of a prompt's normalized text its key is taken from


def outcome(text: str, flagged: bool, interrupted: bool = False) -> str:
    """``refused``, ``interrupted``, ``failed`` or ``succeeded``: a call's outcome by its own
    status (``flagged``: ``is_error``; ``interrupted``: the hook's ``is_interrupt``) and the
    words Claude Code puts in a refused or interrupted call's result."""
    start = text.lstrip()
    if interrupted or start.startswith(INTERRUPTED):
        return "interrupted"
    if start.startswith(REFUSED):
        return "refused"
    return "failed" if flagged else "succeeded"


def response(bash: bool, text: str, flagged: bool, extra: object = None) -> object:
    """What the error detector (``tool_errors.tool_errors``) reads of a tool's result: a Bash call's
    streams when Claude Code gave them (``extra``, the transcript's ``toolUseResult``), with
    the exit code of a failure's "Exit code N"; else the result's text, flagged."""
    if bash and isinstance(extra, dict) and ("stdout" in extra or "stderr" in extra):
        shaped: dict = {
            "stdout": extra.get("stdout"),
            "stderr": extra.get("stderr"),
            "interrupted": extra.get("interrupted"),
            "is_error": flagged,
        }
        if flagged and text:
            exit_line = re.match(r"\s*(?:Error: )?Exit code (-?\d+)", text)
            if exit_line:
                shaped["exit_code"] = int(exit_line.group(1))
        return shaped
    if bash and not flagged:
        return text
    return {"content": text, "is_error": flagged}


_SLASH_NAME = lazy(r"<command-name>\s*(/[\w:.-]+)\s*</command-name>")
_SLASH_ARGS = lazy(r"<command-args>(.*?)</command-args>", re.S)


def prompt_text(text: str) -> str:
    """The user's own words in a prompt, or "" for injected or meta text. A slash command with
    arguments is the user's words as typed ("/research_codebase when I run ..."), as the
    UserPromptSubmit hook gets them: its arguments are what the user wrote, its expanded
    template (a meta message) is not; one without arguments says nothing. A sentence holding
    a ``<private>`` span is none of it (``privacy.strip``): no stage after this one sees it."""
    s = privacy.strip(text).strip()
    if s.startswith("<command-") and "<command-args>" in s:
        name, args = _SLASH_NAME.search(s), _SLASH_ARGS.search(s)
        if name and args and args.group(1).strip():
            return f"{name.group(1)} {args.group(1).strip()}"
    if not s or s.startswith(_META_PREFIXES):
        return ""
    if s.startswith("<task-notification>"):
        return ""  # a background task's end, and Claude Code's "Read the output file to ..."
    if "<" in s:
        s = _INJECTED_TAGS.sub(
            lambda m: "" if m.group(1).lower().startswith(_TAG_NAMES_SKIPPED) else m.group(0), s
        )
        s = s.strip()
    return s


def prompt_key(redacted: str) -> str:
    """The key of a prompt, from its redacted text (the transcript reader keeps no other)."""
    import zlib  # (here: only the prompt hook and memorize take keys)

    normalized = " ".join(redacted.split())[:_KEY_CHARS]
    return "%08x" % zlib.crc32(normalized.encode("utf-8", "replace"))


def error_events(transcript) -> list[dict]:
    """The error events of the transcript's calls, in the shape the hooks capture them."""
    return [
        {
            "type": "error",
            "tool": signal.tool,
            "line": signal.line,
            "normalized": signal.normalized,
            "subject": signal.subject,
            "tool_use_id": call.id,
            "at": call.timestamp,
            "source": "transcript",
        }
        for call in transcript.calls
        for signal in call.errors
    ]


def merge_errors(transcript, captured: list[dict]) -> list[dict]:
    """One stream of error events: the transcript's, then the captured ones of calls it does not
    hold (deduplicated by ``tool_use_id``; a replayed session's captures too)."""
    if transcript is None:
        held: set[str] = set()
        stream: list[dict] = []
    else:
        held = {call.id for call in transcript.calls if call.id}
        stream = error_events(transcript)
    seen: set[tuple] = set()
    for record in captured:
        if record.get("type") != "error":
            continue
        call = record.get("tool_use_id")
        if isinstance(call, str) and call in held:
            continue
        key = (call, record.get("line")) if isinstance(call, str) and call else None
        if key is not None:
            if key in seen:
                continue  # (the same call captured again: a replay)
            seen.add(key)
        stream.append(record)
    return stream


def unseen_prompts(transcript, captured: list[dict]) -> list | None:
    """The transcript's main-chain prompts no capture hook saw, or None when the captures
    cannot tell (none of them carries a prompt key: written before keys, or no hook ran)."""
    if transcript is None:
        return []
    keys = {r["prompt_key"] for r in captured if isinstance(r.get("prompt_key"), str)}
    if not keys:
        return None
    return [p for p in transcript.prompts if not p.sidechain and prompt_key(p.text) not in keys]
