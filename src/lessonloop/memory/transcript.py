"""Read a Claude Code session transcript (JSONL) into tool calls and user prompts.

Tolerant by design: unknown event types are skipped; malformed JSON lines, non-object lines and
lines longer than ``max_line_bytes`` are counted in ``skipped_lines`` (an over-long line is
skipped while streaming, never held whole in memory); invalid UTF-8 is replaced; a missing or
unreadable file gives an empty transcript; nothing in a file's content makes ``read`` raise.

Subagent (sidechain) events are kept and flagged; pairing (error → fix, correction → corrected
call) stays within one chain: the main chain, or one sidechain. A call's success is its own
status (``is_error``), never a word in its output; a refused or interrupted call is neither.
``error_lessons`` pairs an error with the evidence of its fix, or with nothing when the
evidence is ambiguous; ``error_fixes`` is the older pairing with the next success. What the user says outside prompts is in ``said``: a refused call's reason, the answers
to ``AskUserQuestion``, commands the user ran themselves (``<bash-input>``); a correction pairs
with the call it is about, or none. The project's own Claude Code hooks are in ``hooks``: each
run Claude Code reports ("PostToolUse:Edit [uv run ruff format] completed successfully") and
each block a hook gave the agent ("Stop hook feedback: ..."), which is the hook's words, not the
user's, so never a prompt. What the agent itself wrote to the user (its text blocks, where it
states what it found or concluded) is in ``texts``, in order with the calls (``conclusions``
reads them).

Everything stored is redacted, then capped: tool results at 2,000 characters, prompts at
10,000, input strings at 2,000 each, subjects at 300.

Where things live: the records (``ToolCall``, ``UserMessage``, ``Said``...) and what a call is
in ``transcript_model``; reading the events in ``transcript_reader``; the pairings in
``error_fixes``, ``error_lessons`` and ``corrections``. This module holds the ``Transcript``
they make up and ``read``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from . import corrections, error_fixes, error_lessons
from .error_fixes import ErrorFix
from .error_lessons import ErrorLesson
from .transcript_model import AgentText, Correction, HookRun, Said, ToolCall, UserMessage, failed
from .transcript_reader import PERMISSION_REFUSAL, Reader, read_lines

__all__ = [
    "AgentText",
    "Correction",
    "ErrorFix",
    "HookRun",
    "Said",
    "ToolCall",
    "Transcript",
    "UserMessage",
    "read",
]


@dataclass
class Transcript:
    calls: list[ToolCall]
    prompts: list[UserMessage]
    skipped_lines: int
    said: list[Said] = field(default_factory=list)  # rejection reasons and answers, in order
    hooks: list[HookRun] = field(default_factory=list)  # the project's hooks that ran
    texts: list[AgentText] = field(default_factory=list)  # what the agent wrote, in order
    cwd: str = ""  # where the session started: the project root
    # the words of the user's <private> spans (held in memory only, never written): what
    # repeats them was dropped here, and goes from the session's captures too
    private: list[str] = field(default_factory=list)

    def error_fixes(self) -> list[ErrorFix]:
        """Each failed call paired with the first later successful call of the same kind
        (``error_fixes.error_fixes``)."""
        return error_fixes.error_fixes(self)

    def permission_refusals(self) -> list[tuple[str, ToolCall]]:
        """Main-chain calls Claude Code's permission settings refused, each with why:
        "approval" (the command needs approval), "not granted" (the tool or path needs a
        permission not given) or "blocked" (outside the allowed directories). These settings
        last beyond the session: the next one need not try again."""
        out = []
        for call in self.calls:
            if call.sidechain or not failed(call):
                continue
            m = PERMISSION_REFUSAL.search(call.result[:400])
            if m:
                why = "approval" if m.group(1) else "not granted" if m.group(2) else "blocked"
                out.append((why, call))
        return out

    def corrections(self) -> list[Correction]:
        """User corrections (main chain), each with the call it corrects
        (``corrections.corrections``)."""
        return corrections.corrections(self)

    def error_lessons(self) -> list[ErrorLesson]:
        """Each failed step with the evidence of its fix (``error_lessons.error_lessons``)."""
        return error_lessons.error_lessons(self)

    def unresolved_errors(self) -> list[tuple[ToolCall, str, int, ToolCall | None]]:
        """Errors the session ended stuck on (``error_lessons.unresolved_errors``)."""
        return error_lessons.unresolved_errors(self)

    def refused_alternatives(self) -> list[tuple[str, str, ToolCall, ToolCall]]:
        """Refused commands and the ones that replaced them
        (``corrections.refused_alternatives``)."""
        return corrections.refused_alternatives(self)


def read(path: str | os.PathLike, max_line_bytes: int = 2_000_000) -> Transcript:
    """The tool calls and user prompts of a Claude Code transcript. Never raises on content."""
    transcript = Transcript(calls=[], prompts=[], skipped_lines=0)
    try:
        handle = open(path, "rb")  # noqa: SIM115
    except (OSError, TypeError, ValueError):
        return transcript
    reader = Reader()
    skipped = 0
    try:
        with handle:
            for raw in read_lines(handle, max(1, int(max_line_bytes))):
                if raw is None:
                    skipped += 1
                    continue
                if not raw.strip():
                    continue
                try:
                    event = json.loads(raw.decode("utf-8", errors="replace"))
                except (ValueError, RecursionError):
                    skipped += 1
                    continue
                if not isinstance(event, dict):
                    skipped += 1
                    continue
                try:
                    reader.add(event)
                except Exception:  # noqa: BLE001 - a shape nobody expected: skip the event
                    skipped += 1
    except OSError:
        pass
    transcript.calls = reader.calls
    transcript.prompts = reader.prompts
    transcript.said = reader.said
    transcript.hooks = reader.hooks
    transcript.texts = reader.texts
    transcript.cwd = reader.cwd
    transcript.private = reader.private
    for call in reader.calls:  # a call a PreToolUse hook refused: its result is the hook's
        hooks = reader.pre_hooks.get(call.id)
        if (
            hooks
            and failed(call)
            and not call.result.lstrip().startswith(("Exit code", "Error: Exit code"))
            and not PERMISSION_REFUSAL.search(call.result[:400])
        ):
            words = set(re.findall(r"[a-z]{3,}", call.result[:300].lower()))
            name, command = max(
                hooks,
                key=lambda h: len(
                    words
                    & set(
                        re.findall(
                            r"[a-z]{3,}",
                            os.path.basename(h[1].split()[0] if h[1].split() else "").lower(),
                        )
                    )
                ),
            )
            transcript.hooks.append(HookRun(name, command, call.result, call))
    transcript.skipped_lines = skipped
    return transcript
