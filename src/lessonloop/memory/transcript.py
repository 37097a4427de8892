"""Read a Claude Code session transcript (JSONL) into tool calls and user prompts.

Tolerant by design: unknown event types are skipped; malformed JSON lines, non-object lines and
lines longer than ``max_line_bytes`` are counted in ``skipped_lines`` (an over-long line is
skipped while streaming, never held whole in memory); invalid UTF-8 is replaced; a missing or
unreadable file gives an empty transcript; nothing in a file's content makes ``read`` raise.

Subagent (sidechain) events are kept and flagged; pairing (error → fix, correction → corrected
call) stays within one chain: the main chain, or one sidechain.

Everything stored is redacted, then capped: tool results at 2,000 characters, prompts at
10,000, input strings at 2,000 each, subjects at 300.
"""

from __future__ import annotations

import bisect
import json
import os
import re
from dataclasses import dataclass, field
from typing import BinaryIO, Iterator

from ..safety.redact import redact
from .signals import (ErrorSignal, Feedback, _block_text, _kind, _view_programs, command_core,
                      command_head, normalize_error, prompt_feedback, subject_of, tool_errors)

__all__ = ["Correction", "ErrorFix", "ToolCall", "Transcript", "UserMessage", "read"]

RESULT_MAX = 2000
PROMPT_MAX = 10_000
INPUT_STR_MAX = 2000
_MARGIN = 4096            # extra characters kept before redaction, so a cut never hides a secret
_CHUNK = 1 << 20
_LESSON_MAX = 120


@dataclass
class ToolCall:
    id: str
    name: str
    input: dict
    subject: str
    result: str
    is_error: bool
    errors: list[ErrorSignal]
    timestamp: str
    sidechain: bool
    index: int
    chain: str = ""           # "" for the main chain, else the sidechain's id
    completed: bool = False   # a tool_result came back for this call
    rejected: bool = False    # the user refused the call (neither a failure nor a success)


@dataclass
class UserMessage:
    text: str
    timestamp: str
    sidechain: bool
    index: int
    chain: str = ""


@dataclass
class Correction:
    feedback: Feedback
    corrected: ToolCall | None


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:max(1, limit - 1)].rstrip() + "\u2026"


def _base(path: str) -> str:
    p = path.rstrip("/\\")
    return re.split(r"[/\\]", p)[-1] or p


def _file_of(call: ToolCall) -> str:
    for key in ("file_path", "notebook_path", "path", "filePath"):
        v = call.input.get(key)
        if isinstance(v, str) and v.strip():
            return v.strip()
    return ""


def _command_of(call: ToolCall) -> str:
    v = call.input.get("command")
    return v if isinstance(v, str) else ""


_EDITS = {"edit", "write", "multiedit", "notebookedit", "str_replace_based_edit_tool"}


def _pair_key(call: ToolCall) -> tuple[str, str]:
    """What "doing the same kind of thing" means: same command head, or same tool and file."""
    if _kind(call.name) == "bash":
        return ("bash", command_head(_command_of(call)))
    name = call.name.lower()
    family = "edit" if name in _EDITS else name
    f = _file_of(call)
    return (family, f) if f else (family, "")


@dataclass
class ErrorFix:
    error: ToolCall
    fix: ToolCall
    normalized: str
    between: list[ToolCall] = field(default_factory=list)  # same-chain calls in between

    @property
    def lesson(self) -> str:
        """"When `pytest` fails with `<error>`, <what fixed it>" (at most 120 characters)."""
        err = self.error
        family, what_key = _pair_key(err)
        if family == "bash":
            what = f"`{_short(what_key or err.name, 30)}`"
        elif _file_of(err):
            what = f"{err.name} on `{_short(_base(_file_of(err)), 30)}`"
        else:
            what = f"`{_short(err.name, 30)}`"
        fix_text = self._fix_text(family)
        head = f"When {what} fails with `"
        tail = f"`, {fix_text}"
        budget = _LESSON_MAX - len(head) - len(tail)
        if budget < 12:
            fix_text = _short(fix_text, max(20, len(fix_text) - (12 - budget)))
            tail = f"`, {fix_text}"
            budget = _LESSON_MAX - len(head) - len(tail)
        lesson = head + _short(self.normalized or "an error", max(8, budget)) + tail
        return _short(lesson, _LESSON_MAX)

    def _fix_text(self, family: str) -> str:
        err, fix = self.error, self.fix
        if family == "bash":
            before, after = _command_of(err).strip(), _command_of(fix).strip()
            if after and after != before:
                return f"run `{_short(command_core(fix.subject), 50)}` instead"
            ran = [c for c in self.between if _kind(c.name) == "bash" and not c.is_error
                   and _command_of(c).strip() and not _view_programs(_command_of(c))[0]]
            if ran:
                return f"run `{_short(command_core(ran[-1].subject), 45)}` first"
            edited = self._edited()
            if edited:
                return f"fix {edited} and rerun"
            return "rerunning it worked"
        if family == "edit":
            path = _file_of(err)
            reread = any(c.name.lower() == "read" and _file_of(c) == path for c in self.between)
            if reread:
                return "re-read the file, then edit again"
            return "re-read the file and match its text exactly"
        if _file_of(err):
            return f"retry as `{_short(fix.subject, 50)}`" if fix.subject != err.subject \
                else "retrying it worked"
        if fix.subject and fix.subject != err.subject:
            return f"use `{_short(fix.subject, 50)}`"
        return "retrying it worked"

    def _edited(self) -> str:
        files: list[str] = []
        for c in self.between:
            if c.name.lower() in _EDITS and not c.is_error:
                f = _file_of(c)
                if f and _base(f) not in files:
                    files.append(_base(f))
        if not files:
            return ""
        shown = ", ".join(f"`{_short(f, 30)}`" for f in files[:2])
        return shown + (" and others" if len(files) > 2 else "")


@dataclass
class Transcript:
    calls: list[ToolCall]
    prompts: list[UserMessage]
    skipped_lines: int

    def error_fixes(self) -> list[ErrorFix]:
        """Each failed call paired with the first later successful call of the same kind
        (same tool and command head, or same tool and file), in the same chain."""
        by_key: dict[tuple[str, tuple[str, str]], list[int]] = {}
        keys = []
        for i, call in enumerate(self.calls):
            key = (call.chain, _pair_key(call))
            keys.append(key)
            by_key.setdefault(key, []).append(i)
        out = []
        for i, err in enumerate(self.calls):
            if not (err.is_error and err.completed) or err.rejected or not keys[i][1][1] and \
                    keys[i][1][0] in ("bash", "edit"):
                continue
            positions = by_key[keys[i]]
            k = bisect.bisect_right(positions, i)
            for j in positions[k:]:
                later = self.calls[j]
                if later.completed and not later.is_error and not later.rejected:
                    between = [c for c in self.calls[i + 1:j] if c.chain == err.chain and c.completed]
                    normalized = err.errors[0].normalized if err.errors else \
                        normalize_error(err.result.strip().split("\n", 1)[0] if err.result else "")
                    out.append(ErrorFix(error=err, fix=later, normalized=normalized,
                                        between=between))
                    break
        return out

    def corrections(self) -> list[Correction]:
        """User corrections (main chain), each with the last main-chain tool call made since the
        previous prompt (None when the assistant only answered in text)."""
        out: list[Correction] = []
        main_calls = [c for c in self.calls if not c.sidechain]
        indexes = [c.index for c in main_calls]
        previous = -1
        for prompt in self.prompts:
            if prompt.sidechain:
                continue
            for fb in prompt_feedback(prompt.text):
                if fb.kind != "correction":
                    continue
                k = bisect.bisect_left(indexes, prompt.index) - 1
                corrected = main_calls[k] if k >= 0 and indexes[k] > previous else None
                out.append(Correction(feedback=fb, corrected=corrected))
            previous = prompt.index
        return out


# ===========================================================================================
# reading

def _lines(f: BinaryIO, max_len: int) -> Iterator[bytes | None]:
    """Lines of a binary stream; None for a line longer than ``max_len`` (never held whole)."""
    buf = bytearray()
    skipping = False
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            break
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                if not skipping:
                    if len(buf) + len(chunk) - start > max_len:
                        skipping = True
                        buf.clear()
                    else:
                        buf += chunk[start:]
                break
            if skipping:
                skipping = False
                yield None
            elif len(buf) + nl - start > max_len:
                buf.clear()
                yield None
            elif buf:
                buf += chunk[start:nl]
                yield bytes(buf)
                buf.clear()
            else:
                yield chunk[start:nl]
            start = nl + 1
    if skipping:
        yield None
    elif buf:
        yield bytes(buf)


_SECRET_KEY = re.compile(r"(?i)^(?:.*[_-])?(?:pass(?:word|wd|phrase)?|secret|token|api[_-]?key|apikey|"
                         r"credentials?|private[_-]?key|auth(?:orization)?|access[_-]?key|cookie)$")


def _clean(text: str, limit: int) -> str:
    text = redact(text[:limit + _MARGIN])
    return text[:limit]


def _redact_input(value: object, depth: int = 0) -> object:
    if isinstance(value, str):
        return _clean(value, INPUT_STR_MAX)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if depth >= 6:
        return "[...]"
    if isinstance(value, dict):
        out = {}
        for k, v in list(value.items())[:50]:
            key = _clean(str(k), 200)
            if isinstance(v, str) and v.strip() and _SECRET_KEY.match(str(k)):
                out[key] = "[REDACTED:input]"
            else:
                out[key] = _redact_input(v, depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [_redact_input(v, depth + 1) for v in list(value)[:50]]
    return _clean(str(value), INPUT_STR_MAX)


_INJECTED_TAGS = re.compile(r"<([a-z][\w-]*)(?:\s[^>]*)?>.*?</\1\s*>", re.S)
_TAG_NAMES_SKIPPED = ("command-", "local-command", "system-reminder", "bash-", "user-prompt",
                      "task-notification", "user-memory", "ide_", "ide-")
_META_PREFIXES = ("Caveat:", "[Request interrupted", "This session is being continued from a "
                  "previous conversation", "[Image", "<command-", "<local-command", "<bash-")


def _prompt_text(text: str) -> str:
    """The user's own words, or "" for injected/meta text."""
    s = text.strip()
    if not s or s.startswith(_META_PREFIXES):
        return ""
    if "<" in s:
        s = _INJECTED_TAGS.sub(
            lambda m: "" if m.group(1).lower().startswith(_TAG_NAMES_SKIPPED) else m.group(0), s)
        s = s.strip()
    return s


_REJECTED = "The user doesn't want to proceed with this tool use"
_USER_SAID = "the user said:"


class _Reader:
    def __init__(self) -> None:
        self.calls: list[ToolCall] = []
        self.prompts: list[UserMessage] = []
        self.by_id: dict[str, ToolCall] = {}
        self.raw_input: dict[str, dict] = {}
        self.orphans: dict[str, tuple] = {}
        self.side_root: dict[str, str] = {}
        self.counter = 0

    def _next(self) -> int:
        self.counter += 1
        return self.counter - 1

    def _chain(self, event: dict) -> tuple[bool, str]:
        if not event.get("isSidechain"):
            return False, ""
        uuid = event.get("uuid")
        parent = event.get("parentUuid")
        agent = event.get("agentId")
        if isinstance(agent, str) and agent:
            root = f"agent:{agent}"
        elif isinstance(parent, str) and parent in self.side_root:
            root = self.side_root[parent]
        else:
            root = f"side:{uuid if isinstance(uuid, str) else self.counter}"
        if isinstance(uuid, str):
            self.side_root[uuid] = root
        return True, root

    def add(self, event: dict) -> None:
        etype = event.get("type")
        if etype not in ("user", "assistant"):
            return
        message = event.get("message")
        if not isinstance(message, dict):
            return
        sidechain, chain = self._chain(event)
        ts = event.get("timestamp")
        timestamp = _clean(ts, 64) if isinstance(ts, str) else ""
        content = message.get("content")
        if etype == "assistant":
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        self._tool_use(block, timestamp, sidechain, chain)
            return
        # user
        if isinstance(content, str):
            if not event.get("isMeta") and not event.get("isCompactSummary"):
                self._prompt(content, timestamp, sidechain, chain)
            return
        if not isinstance(content, list):
            return
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        if results or "toolUseResult" in event:
            extra = event.get("toolUseResult") if len(results) == 1 else None
            for block in results:
                self._tool_result(block, extra)
            return
        if event.get("isMeta") or event.get("isCompactSummary"):
            return
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text" and isinstance(
                    block.get("text"), str):
                parts.append(block["text"])
        if parts:
            self._prompt("\n".join(parts), timestamp, sidechain, chain)

    def _prompt(self, text: str, timestamp: str, sidechain: bool, chain: str) -> None:
        own = _prompt_text(text)
        if own:
            self.prompts.append(UserMessage(text=_clean(own, PROMPT_MAX), timestamp=timestamp,
                                            sidechain=sidechain, index=self._next(), chain=chain))

    def _tool_use(self, block: dict, timestamp: str, sidechain: bool, chain: str) -> None:
        call_id = block.get("id")
        call_id = call_id if isinstance(call_id, str) else ""
        if call_id and call_id in self.by_id:
            return  # the same block repeated (resumed or re-logged session)
        name = block.get("name")
        name = _clean(name, 200) if isinstance(name, str) else ""
        raw = block.get("input")
        raw = raw if isinstance(raw, dict) else ({} if raw is None else {"value": raw})
        safe = _redact_input(raw)
        call = ToolCall(id=_clean(call_id, 200), name=name,
                        input=safe if isinstance(safe, dict) else {},
                        subject=subject_of(name, raw), result="", is_error=False, errors=[],
                        timestamp=timestamp, sidechain=sidechain, index=self._next(), chain=chain)
        self.calls.append(call)
        if call_id:
            self.by_id[call_id] = call
            self.raw_input[call_id] = raw
            if call_id in self.orphans:
                self._complete(call, self.raw_input.pop(call_id, raw), *self.orphans.pop(call_id))

    def _tool_result(self, block: dict, extra: object) -> None:
        call_id = block.get("tool_use_id")
        if not isinstance(call_id, str) or not call_id:
            return
        content = block.get("content")
        text = _block_text(content) if not isinstance(content, str) else content
        flagged = block.get("is_error") is True
        call = self.by_id.get(call_id)
        if call is None:
            if call_id not in self.orphans and len(self.orphans) < 10_000:
                self.orphans[call_id] = (text, flagged, extra)
            return
        if not call.completed:
            self._complete(call, self.raw_input.pop(call_id, {}), text, flagged, extra)

    def _complete(self, call: ToolCall, raw: dict, text: str, flagged: bool,
                  extra: object) -> None:
        if text.startswith(_REJECTED):
            # the user refused the call; what they said instead is a prompt
            call.rejected = call.completed = True
            call.result = _clean(text, RESULT_MAX)
            said = text.find(_USER_SAID)
            if said >= 0:
                self._prompt(text[said + len(_USER_SAID):], call.timestamp, call.sidechain,
                             call.chain)
            return
        if _kind(call.name) == "bash" and isinstance(extra, dict) and (
                "stdout" in extra or "stderr" in extra):
            response: object = {"stdout": extra.get("stdout"), "stderr": extra.get("stderr"),
                                "interrupted": extra.get("interrupted"), "is_error": flagged}
            if flagged and text:
                exit_line = re.match(r"\s*(?:Error: )?Exit code (-?\d+)", text)
                if exit_line:
                    response["exit_code"] = int(exit_line.group(1))
        else:
            response = {"content": text, "is_error": flagged}
            if _kind(call.name) == "bash" and not flagged:
                response = text
        call.errors = tool_errors(call.name, raw, response)
        call.is_error = flagged or bool(call.errors)
        # only a failure's text is ever used (error lines, lessons): a success keeps none, so a
        # long session is not redacted twice over for nothing
        call.result = _clean(text, RESULT_MAX) if text and call.is_error else ""
        call.completed = True


def read(path: str | os.PathLike, max_line_bytes: int = 2_000_000) -> Transcript:
    """The tool calls and user prompts of a Claude Code transcript. Never raises on content."""
    transcript = Transcript(calls=[], prompts=[], skipped_lines=0)
    try:
        f = open(path, "rb")  # noqa: SIM115
    except (OSError, TypeError, ValueError):
        return transcript
    reader = _Reader()
    skipped = 0
    try:
        with f:
            for raw in _lines(f, max(1, int(max_line_bytes))):
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
    transcript.skipped_lines = skipped
    return transcript
