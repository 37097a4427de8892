"""Read a Claude Code session transcript (JSONL) into tool calls and user prompts.

Tolerant by design: unknown event types are skipped; malformed JSON lines, non-object lines and
lines longer than ``max_line_bytes`` are counted in ``skipped_lines`` (an over-long line is
skipped while streaming, never held whole in memory); invalid UTF-8 is replaced; a missing or
unreadable file gives an empty transcript; nothing in a file's content makes ``read`` raise.

Subagent (sidechain) events are kept and flagged; pairing (error → fix, correction → corrected
call) stays within one chain: the main chain, or one sidechain. A call's success is its own
status (``is_error``), never a word in its output; a refused or interrupted call is neither.
``error_lessons`` pairs an error with the evidence of its fix (see ``_error_lessons``), or with
nothing when the evidence is ambiguous; ``error_fixes`` is the older pairing with the next
success. What the user says outside prompts is in ``said``: a refused call's reason, the answers
to ``AskUserQuestion``, commands the user ran themselves (``<bash-input>``); a correction pairs
with the call it is about, or none. The project's own Claude Code hooks are in ``hooks``: each
run Claude Code reports ("PostToolUse:Edit [uv run ruff format] completed successfully") and
each block a hook gave the agent ("Stop hook feedback: ..."), which is the hook's words, not the
user's, so never a prompt. What the agent itself wrote to the user (its text blocks, where it
states what it found or concluded) is in ``texts``, in order with the calls (``conclusions``
reads them).

Everything stored is redacted, then capped: tool results at 2,000 characters, prompts at
10,000, input strings at 2,000 each, subjects at 300.
"""

from __future__ import annotations

import bisect
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from ..safety.redact import redact, redact_obj
from . import events
from .commands import (
    command_core,
    command_head,
    command_heads,
    command_key,
    only_inspects,
    steps_before,
)
from .error_lines import normalize_error
from .feedback import Feedback, prompt_feedback
from .phrasing import AUX, PRONOUN_ONLY, VERBS
from .tool_errors import ErrorSignal, block_text, subject_of, tool_errors, tool_kind

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

RESULT_MAX = 2000
TEXT_MAX = 300  # a rejection's reason, an answer, a question
AGENT_TEXT_MAX = 8000  # one text block of the agent (its answers, summaries, findings)
PROMPT_MAX = 10_000
INPUT_STR_MAX = 2000
_MARGIN = 4096  # extra characters kept before redaction, so a cut never hides a secret
_CHUNK = 1 << 20
_LESSON_MAX = 120
_SHOWN_MIN = 40  # characters of the error line a lesson keeps, at least


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
    chain: str = ""  # "" for the main chain, else the sidechain's id
    completed: bool = False  # a tool_result came back for this call
    rejected: bool = False  # the user refused the call (neither a failure nor a success)
    echoed: str = ""  # a task runner's success: the first lines it printed (RECIPE_RUNNERS)


@dataclass
class UserMessage:
    text: str
    timestamp: str
    sidechain: bool
    index: int
    chain: str = ""


@dataclass
class Said:
    """What the user said to the agent outside a prompt: a tool-use rejection's reason
    (``kind`` "rejection"; ``about`` the refused call's subject) or an answer to the agent's
    ``AskUserQuestion`` (``kind`` "answer"; ``about`` the question, ``header`` its short label,
    ``detail`` the chosen option's description)."""

    kind: str
    text: str
    about: str
    index: int
    sidechain: bool
    header: str = ""
    detail: str = ""
    call: ToolCall | None = None  # the refused or asking call


@dataclass
class AgentText:
    """A text block the agent wrote (redacted, capped): what it says it found, concluded or
    advises. ``index`` orders it among the calls and prompts."""

    text: str
    index: int
    sidechain: bool
    chain: str = ""


@dataclass
class HookRun:
    """One run of a project hook: ``event`` as Claude Code names it ("PostToolUse:Edit",
    "Stop"), the hook's ``command``, and ``feedback`` when it blocked the agent (its reason)."""

    event: str
    command: str
    feedback: str = ""
    blocked: ToolCall | None = None  # the call a PreToolUse hook refused
    index: int = -1  # where it stands among the calls and prompts


@dataclass
class Correction:
    feedback: Feedback
    corrected: ToolCall | None


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(1, limit - 1)].rstrip() + "\u2026"


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
    if tool_kind(call.name) == "bash":
        return ("bash", command_head(_command_of(call)))
    name = call.name.lower()
    family = "edit" if name in _EDITS else name
    f = _file_of(call)
    return (family, f) if f else (family, "")


def _error_line(call: ToolCall) -> str:
    """The failure's first error line as reported (already redacted)."""
    if call.errors:
        return call.errors[0].line
    return call.result.strip().split("\n", 1)[0] if call.result else ""


def _error_key(call: ToolCall) -> str:
    """The normalized error: equal for recurrences of one error (the dedupe key)."""
    return call.errors[0].normalized if call.errors else normalize_error(_error_line(call))


_EXC_TYPE = re.compile(
    r"^(?:[\w.]*(?:Error|Exception|Warning)|error|fatal|ERROR|FATAL)"
    r"(?:\[[\w-]+\])?:\s+(?=\S)"
)


def _readable(line: str, limit: int) -> str:
    """An error line as the user saw it, on one line, fit to ``limit``: the exception type is
    dropped first when that keeps the message whole ("No module named 'x'" beats a cut)."""
    line = re.sub(r"\s+", " ", line).strip().replace("`", "'")
    if len(line) > limit:
        bare = _EXC_TYPE.sub("", line, count=1)
        line = bare if len(bare) <= limit else line
    return _short(line, limit)


@dataclass
class ErrorFix:
    error: ToolCall
    fix: ToolCall  # the later success of the same kind of call
    normalized: str
    between: list[ToolCall] = field(default_factory=list)  # same-chain calls in between
    # every failure of the same kind since that kind's previous success, in order (``error``
    # among them): several failures ended by one success share one lesson
    attempts: list[ToolCall] = field(default_factory=list)

    @property
    def lesson(self) -> str:
        """ "When `pytest` fails with `<error line>`, <what fixed it>" (at most 120 characters).

        The error is shown as reported (``normalized`` is only the key), and failures of one
        error ended by one success get the same lesson, so it is stored once."""
        first = self._same_error()[0]
        family, what_key = _pair_key(first)
        if family == "bash":
            what = f"`{_short(what_key or first.name, 30)}`"
        elif _file_of(first):
            what = f"{first.name} on `{_short(_base(_file_of(first)), 30)}`"
        else:
            what = f"`{_short(first.name, 30)}`"
        head = f"When {what} fails with `"
        tail = f"`, {self._remedy(family)[0]}"
        budget = _LESSON_MAX - len(head) - len(tail)
        if budget < _SHOWN_MIN:  # a long fix command gives way, so the error stays readable
            tail = f"`, {self._remedy(family, max(20, 50 - (_SHOWN_MIN - budget)))[0]}"
            budget = _LESSON_MAX - len(head) - len(tail)
        shown = _readable(_error_line(first), max(8, budget)) or "an error"
        return _short(head + shown + tail, _LESSON_MAX)

    @property
    def fixed_by(self) -> str:
        """What fixed the error: the command that did (run first, or run instead), else how
        ("fix `x.py` and rerun"). For a memory's content, where ``fix`` is only the rerun."""
        text, call = self._remedy(_pair_key(self.error)[0])
        return call.subject if call is not None else text

    def _same_error(self) -> list[ToolCall]:
        """The failures of this error among the attempts (at least ``error`` itself)."""
        return [c for c in self.attempts if _error_key(c) == self.normalized] or [self.error]

    def _remedy(self, family: str, room: int = 50) -> tuple[str, ToolCall | None]:
        """(the lesson's fix phrase, a command in it shortened to ``room``; the call that fixed
        it or None)."""
        fix = self.fix
        last = self._same_error()[-1]
        # what happened after this error's last failure: earlier steps did not fix it
        window = [c for c in self.between if c.index > last.index]
        if family == "bash":
            ran = [
                c
                for c in window
                if tool_kind(c.name) == "bash"
                and not c.is_error
                and _command_of(c).strip()
                and not only_inspects(_command_of(c))
            ]
            edited = self._edited(window)
            key = command_key(_command_of(fix))
            tried = any(command_key(_command_of(c)) == key for c in self.attempts or [last])
            # a rerun (of a command that already failed, or of the failing one with fewer
            # words) owes its success to what ran in between; any other command replaced it
            if tried or set(key.split()) <= set(command_key(_command_of(last)).split()):
                if ran:
                    return f"run `{_short(command_core(ran[-1].subject), room)}` first", ran[-1]
                if edited:
                    return f"fix {edited} and rerun", None
            if tried:
                return "rerunning it worked", None
            first = steps_before(_command_of(fix), _pair_key(last)[1])
            if first:  # "terraform init && terraform plan" worked
                return f"run `{_short(first, room)}` first", fix
            # leading `cd`/`export` steps are noise, unless they are what changed
            same_core = command_core(fix.subject) == command_core(last.subject)
            shown = fix.subject if same_core else command_core(fix.subject)
            return f"run `{_short(shown, room)}` instead", fix
        if family == "edit":
            path = _file_of(last)
            reread = any(c.name.lower() == "read" and _file_of(c) == path for c in window)
            if reread:
                return "re-read the file, then edit again", None
            return "re-read the file and match its text exactly", None
        if _file_of(last):
            return (
                (f"retry as `{_short(fix.subject, room)}`", fix)
                if fix.subject != last.subject
                else ("retrying it worked", None)
            )
        if fix.subject and fix.subject != last.subject:
            return f"use `{_short(fix.subject, room)}`", fix
        return "retrying it worked", None

    @staticmethod
    def _edited(calls: list[ToolCall]) -> str:
        files: list[str] = []
        for c in calls:
            if c.name.lower() in _EDITS and not c.is_error:
                f = _file_of(c)
                if f and _base(f) not in files:
                    files.append(_base(f))
        if not files:
            return ""
        shown = ", ".join(f"`{_short(f, 30)}`" for f in files[:2])
        return shown + (" and others" if len(files) > 2 else "")


def _failed(call: ToolCall) -> bool:
    return call.is_error and call.completed and not call.rejected


def _succeeded(call: ToolCall) -> bool:
    return call.completed and not call.is_error and not call.rejected


@dataclass
class Transcript:
    calls: list[ToolCall]
    prompts: list[UserMessage]
    skipped_lines: int
    said: list[Said] = field(default_factory=list)  # rejection reasons and answers, in order
    hooks: list[HookRun] = field(default_factory=list)  # the project's hooks that ran
    texts: list[AgentText] = field(default_factory=list)  # what the agent wrote, in order

    def error_fixes(self) -> list[ErrorFix]:
        """Each failed call paired with the first later successful call of the same kind
        (same tool and command head, or same tool and file), in the same chain."""
        by_key: dict[tuple[str, tuple[str, str]], list[int]] = {}
        keys = []
        for i, call in enumerate(self.calls):
            key = (call.chain, _pair_key(call))
            keys.append(key)
            by_key.setdefault(key, []).append(i)
            if key[1][0] == "bash" and _succeeded(call):  # "terraform init && terraform plan"
                for head in command_heads(_command_of(call))[1:]:  # succeeds as a plan too
                    by_key.setdefault((call.chain, ("bash", head)), []).append(i)
        out = []
        for i, err in enumerate(self.calls):
            if not _failed(err) or not keys[i][1][1] and keys[i][1][0] in ("bash", "edit"):
                continue
            positions = by_key[keys[i]]
            k = bisect.bisect_right(positions, i)
            # (a command that only looks, as "migrate ... version" after "migrate ... up" failed,
            # is no success of the failed one)
            changes = keys[i][1][0] == "bash" and not only_inspects(_command_of(err))
            j = next(
                (
                    j
                    for j in positions[k:]
                    if _succeeded(self.calls[j])
                    and not (changes and only_inspects(_command_of(self.calls[j])))
                ),
                None,
            )
            if j is None:
                continue
            before = bisect.bisect_left(positions, i)
            while before > 0 and not _succeeded(self.calls[positions[before - 1]]):
                before -= 1
            attempts = [
                self.calls[p] for p in positions[before:] if p < j and _failed(self.calls[p])
            ]
            between = [c for c in self.calls[i + 1 : j] if c.chain == err.chain and c.completed]
            out.append(
                ErrorFix(
                    error=err,
                    fix=self.calls[j],
                    normalized=_error_key(err),
                    between=between,
                    attempts=attempts,
                )
            )
        return out

    def permission_refusals(self) -> list[tuple[str, ToolCall]]:
        """Main-chain calls Claude Code's permission settings refused, each with why:
        "approval" (the command needs approval), "not granted" (the tool or path needs a
        permission not given) or "blocked" (outside the allowed directories). These settings
        last beyond the session: the next one need not try again."""
        out = []
        for call in self.calls:
            if call.sidechain or not _failed(call):
                continue
            m = _PERMISSION.search(call.result[:400])
            if m:
                why = "approval" if m.group(1) else "not granted" if m.group(2) else "blocked"
                out.append((why, call))
        return out

    def corrections(self) -> list[Correction]:
        """User corrections (main chain), each with the call it corrects: the latest main-chain
        call since the previous prompt that it is about (see ``_about``), else None."""
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
                turn = main_calls[
                    bisect.bisect_right(indexes, previous) : bisect.bisect_left(
                        indexes, prompt.index
                    )
                ]
                out.append(Correction(feedback=fb, corrected=_about(fb, turn)))
            previous = prompt.index
        for said in self.said:  # a refusal's reason corrects the refused call
            if said.kind == "rejection" and not said.sidechain:
                for fb in prompt_feedback(said.text, corrected=True):
                    if fb.kind == "correction" or fb.lesson:
                        out.append(Correction(feedback=fb, corrected=said.call))
        return out


# words that relate nothing: instruction verbs, pronouns, and what any correction says
_PLAIN = (
    VERBS
    | AUX
    | PRONOUN_ONLY
    | frozenset(
        """
the and not don't dont didn't instead always never wrong that's it's right correct actually
please with for from into onto than rather prefer like just only also all any some each every
your you our we they their there here when then what which why how way should would could must
need needs want said told asked meant mean file files code repo project thing again more less
too very much many yes sure okay redacted
""".split()
    )
)
# a correction in these words is about how code is written: the latest edit
_STYLE = frozenset(
    """tab space indentation indent quote semicolon comma naming camelcase
snake_case kebab-case docstring comment type hint annotation formatting whitespace brace
bracket newline""".split()
)
_TERM = re.compile(r"[a-z0-9][a-z0-9_+-]*[a-z0-9]")


def _terms(text: str) -> set[str]:
    """The distinctive words of a text, lowercase, singular, and identifiers split too
    (``orders_core`` gives ``orders`` and ``core``)."""
    out: set[str] = set()
    for word in _TERM.findall(text.lower()[:4000]):
        for w in {word, *re.split(r"[_+-]", word)}:
            w = w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
            if len(w) >= 3 and w not in _PLAIN:
                out.add(w)
    return out


def _call_terms(call: ToolCall) -> set[str]:
    values = [call.name, call.subject, *(v for v in call.input.values() if isinstance(v, str))]
    return _terms(" ".join(values))


def _about(fb: Feedback, turn: list[ToolCall]) -> ToolCall | None:
    """The call in ``turn`` a correction is about: the latest one sharing a word with it (a
    tool, package, file...); for a correction on code style, the latest edit; for one that
    names nothing ("that's wrong"), the latest call. None when nothing relates: "use httpx"
    does not correct an unrelated ``python flush.py``."""
    wanted = _terms(fb.text or fb.lesson)
    if not wanted:
        return turn[-1] if turn else None
    for call in reversed(turn):
        if wanted & _call_terms(call):
            return call
    if wanted & _STYLE:
        return next((c for c in reversed(turn) if c.name.lower() in _EDITS), None)
    return None


# ===========================================================================================
# reading


def read_lines(f: BinaryIO, max_len: int) -> Iterator[bytes | None]:
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


RECIPE_RUNNERS = frozenset({"just", "make"})  # task runners that print each command they run
ECHO_MAX = 300


def _clean(text: str, limit: int) -> str:
    text = redact(text[: limit + _MARGIN])
    return text[:limit]


def _redact_input(value: object) -> object:
    """A tool call's input as kept: cut to size with a margin (a secret at a cut stays whole),
    redacted by the one redactor (a value under a secret's name, ``{"dbPassword": ...}``, goes
    whole), then cut exactly."""
    return _cut(redact_obj(_cut(value, INPUT_STR_MAX + _MARGIN, 200 + _MARGIN)), INPUT_STR_MAX, 200)


def _cut(value: object, limit: int, key_limit: int, depth: int = 0) -> object:
    """``value`` with strings cut to ``limit`` (keys to ``key_limit``), at most 50 items per
    list or dict, nested at most 6 deep."""
    if isinstance(value, str):
        return value[:limit]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if depth >= 6:
        return "[...]"
    if isinstance(value, dict):
        return {
            str(k)[:key_limit]: _cut(v, limit, key_limit, depth + 1)
            for k, v in list(value.items())[:50]
        }
    if isinstance(value, (list, tuple)):
        return [_cut(v, limit, key_limit, depth + 1) for v in list(value)[:50]]
    return str(value)[:limit]


_BASH_INPUT = re.compile(r"^<bash-input>(.{1,2000}?)</bash-input>", re.S)
_USER_SAID = ("The user provided the following reason for the rejection:", "the user said:")
_ANSWER = re.compile(r'"((?:[^"\\]|\\.)+?)"="((?:[^"\\]|\\.)*?)"')
_PERMISSION = re.compile(
    r"^(?:Error: )?(?:(This (?:Bash )?command (?:contains multiple operations"
    r"\. The following parts? )?requires? approval)|(Claude requested "
    r"permissions to \w+.{0,200}?but you haven't granted it yet)|"
    r"(\w+ in '[^']{1,200}' was blocked\. For security))",
    re.S,
)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# "PostToolUse:Edit [uv run ruff format] completed successfully: 1 file reformatted"
_HOOK_RAN = re.compile(r"^([A-Z]\w+(?::[^\s\[]+)?) \[(.+?)\] completed successfully\b", re.S)
# "Stop hook feedback:\n[${CLAUDE_PLUGIN_ROOT}/scripts/hooks/stop.sh]: # Uncommitted ..."
_HOOK_FEEDBACK = re.compile(r"^([A-Z]\w+(?::\S+)?) hook feedback:\s*\n\[(.+?)\]:\s*(.*)$", re.S)


class _Reader:
    def __init__(self) -> None:
        self.calls: list[ToolCall] = []
        self.prompts: list[UserMessage] = []
        self.by_id: dict[str, ToolCall] = {}
        self.raw_input: dict[str, dict] = {}
        self.orphans: dict[str, tuple] = {}
        self.side_root: dict[str, str] = {}
        self.said: list[Said] = []
        self.hooks: list[HookRun] = []
        self.texts: list[AgentText] = []
        self.pre_hooks: dict[str, list[tuple[str, str]]] = {}  # call id -> PreToolUse hooks
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
        if etype == "system":
            self._system(event)
            return
        if etype == "progress":
            self._progress(event)
            return
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
                    elif (
                        isinstance(block, dict)
                        and block.get("type") == "text"
                        and isinstance(block.get("text"), str)
                        and block["text"].strip()
                    ):
                        self.texts.append(
                            AgentText(
                                _clean(block["text"], AGENT_TEXT_MAX),
                                self._next(),
                                sidechain,
                                chain,
                            )
                        )
            return
        # user
        if isinstance(content, str):
            if (
                _HOOK_FEEDBACK.match(content)
                or not event.get("isMeta")
                and not event.get("isCompactSummary")
            ):  # (Claude Code marks a hook's feedback isMeta)
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
            elif (
                isinstance(block, dict)
                and block.get("type") == "text"
                and isinstance(block.get("text"), str)
            ):
                parts.append(block["text"])
        if parts:
            self._prompt("\n".join(parts), timestamp, sidechain, chain)

    def _progress(self, event: dict) -> None:
        data = event.get("data")
        call = event.get("toolUseID")
        if (
            isinstance(data, dict)
            and data.get("type") == "hook_progress"
            and isinstance(call, str)
            and not event.get("isSidechain")
        ):
            name, command = data.get("hookName"), data.get("command")
            if isinstance(name, str) and name.startswith("PreToolUse") and isinstance(command, str):
                self.pre_hooks.setdefault(call, []).append((name, _clean(command, INPUT_STR_MAX)))

    def _system(self, event: dict) -> None:
        content = event.get("content")
        if isinstance(content, str) and not event.get("isSidechain"):
            ran = _HOOK_RAN.match(_ANSI.sub("", content).strip())
            if ran:
                self.hooks.append(HookRun(ran.group(1), _clean(ran.group(2), INPUT_STR_MAX)))

    def _prompt(self, text: str, timestamp: str, sidechain: bool, chain: str) -> None:
        blocked = _HOOK_FEEDBACK.match(_ANSI.sub("", text).strip())
        if blocked:  # a hook's words, not the user's
            if not sidechain:
                self.hooks.append(
                    HookRun(
                        blocked.group(1),
                        _clean(blocked.group(2), INPUT_STR_MAX),
                        _clean(blocked.group(3), TEXT_MAX * 4),
                        index=self._next(),
                    )
                )
            return
        typed = _BASH_INPUT.match(text.strip())
        if typed and not sidechain:  # a command the user ran themselves ("!uv run ty check")
            command = _clean(typed.group(1).strip(), INPUT_STR_MAX)
            if command:
                self.said.append(Said("command", command, "", self._next(), sidechain))
            return
        own = events.prompt_text(text)
        if own:
            self.prompts.append(
                UserMessage(
                    text=_clean(own, PROMPT_MAX),
                    timestamp=timestamp,
                    sidechain=sidechain,
                    index=self._next(),
                    chain=chain,
                )
            )

    def _answers(self, call: ToolCall, raw: dict, text: str, extra: object) -> None:
        """The user's answers to an AskUserQuestion call: from the result's ``answers``
        (question -> chosen labels or typed text), else from its text
        (``User has answered your questions: "Q"="A", ...``)."""
        answers = extra.get("answers") if isinstance(extra, dict) else None
        if not isinstance(answers, dict):
            answers = dict(_ANSWER.findall(text)) if "answered" in text[:200] else {}
        questions = raw.get("questions") if isinstance(raw, dict) else None
        if not isinstance(questions, list) and isinstance(extra, dict):
            questions = extra.get("questions")
        asked = {}
        for q in questions if isinstance(questions, list) else []:
            if isinstance(q, dict) and isinstance(q.get("question"), str):
                asked[q["question"]] = q
        for question, answer in list(answers.items())[:10]:
            if isinstance(answer, list):
                answer = ", ".join(str(a) for a in answer)
            if not isinstance(question, str) or not isinstance(answer, str) or not answer.strip():
                continue
            q = asked.get(question, {})
            header = q.get("header") if isinstance(q.get("header"), str) else ""
            detail = ""
            for option in q.get("options") or []:
                if (
                    isinstance(option, dict)
                    and option.get("label") == answer
                    and isinstance(option.get("description"), str)
                ):
                    detail = option["description"]
            self.said.append(
                Said(
                    "answer",
                    _clean(answer.strip(), TEXT_MAX),
                    _clean(question.strip(), TEXT_MAX),
                    self._next(),
                    call.sidechain,
                    header=_clean(header.strip(), 60),
                    detail=_clean(detail.strip(), TEXT_MAX),
                )
            )

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
        call = ToolCall(
            id=_clean(call_id, 200),
            name=name,
            input=safe if isinstance(safe, dict) else {},
            subject=subject_of(name, raw),
            result="",
            is_error=False,
            errors=[],
            timestamp=timestamp,
            sidechain=sidechain,
            index=self._next(),
            chain=chain,
        )
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
        text = block_text(content) if not isinstance(content, str) else content
        flagged = block.get("is_error") is True
        call = self.by_id.get(call_id)
        if call is None:
            if call_id not in self.orphans and len(self.orphans) < 10_000:
                self.orphans[call_id] = (text, flagged, extra)
            return
        if not call.completed:
            self._complete(call, self.raw_input.pop(call_id, {}), text, flagged, extra)

    def _complete(self, call: ToolCall, raw: dict, text: str, flagged: bool, extra: object) -> None:
        if events.outcome(text, flagged) in ("refused", "interrupted"):
            # the user refused the call; what they said instead is a prompt
            call.rejected = call.completed = True
            call.result = _clean(text, RESULT_MAX)
            for marker in _USER_SAID:
                said = text.find(marker)
                if said >= 0:
                    reason = _clean(text[said + len(marker) :].strip(), TEXT_MAX)
                    if reason:
                        self.said.append(
                            Said(
                                "rejection",
                                reason,
                                call.subject,
                                self._next(),
                                call.sidechain,
                                call=call,
                            )
                        )
                    break
            return
        if call.name == "AskUserQuestion" and not flagged:
            self._answers(call, raw, text, extra)
        response = events.response(tool_kind(call.name) == "bash", text, flagged, extra)
        # a success is judged by the tool's own status (``is_error``), never by a word in its
        # output: "297 tests, 0 failures" next to a "[warning]" log line is a success
        call.errors = tool_errors(call.name, raw, response) if flagged else []
        call.is_error = flagged
        # only a failure's text is ever used (error lines, lessons): a success keeps none, so a
        # long session is not redacted twice over for nothing
        call.result = _clean(text, RESULT_MAX) if text and call.is_error else ""
        if (
            text
            and not call.is_error
            and tool_kind(call.name) == "bash"
            and command_head(_command_of(call)).partition(" ")[0] in RECIPE_RUNNERS
        ):
            call.echoed = _clean(text, ECHO_MAX)  # `just check` prints what its recipe runs
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
            for raw in read_lines(f, max(1, int(max_line_bytes))):
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
    for call in reader.calls:  # a call a PreToolUse hook refused: its result is the hook's
        hooks = reader.pre_hooks.get(call.id)
        if (
            hooks
            and _failed(call)
            and not call.result.lstrip().startswith(("Exit code", "Error: Exit code"))
            and not _PERMISSION.search(call.result[:400])
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


# ===========================================================================================
# error lessons: an error, and the evidence of what fixed it

# failures of the agent's own tooling, not of the project: nothing to learn for the project
_TOOLING = re.compile(
    r"sibling tool call errored|has not been read yet|no such tool available|"
    r"shell \w+ is not running|file has been (?:unexpectedly )?modified since "
    r"read|interrupted by user",
    re.I,
)
# a test runner's count line says that tests failed, not what failed: no key to match again
_COUNT_ONLY = re.compile(
    r"^[\W\d_]*(?:\d+\s+(?:doctests?|tests?|properties|examples?|failures?|"
    r"errors?|passed|failed|skipped|excluded|invalid)[,;\s]*)+"
    r"(?:in [\d.]+m?s)?\W*$",
    re.I,
)
_NAMED_FIX = re.compile(r"(?:run|use|try|with)\s+['`\"]([^'`\"\n]{2,60})['`\"]", re.I)
_LESSON_WORDS = 120


@dataclass
class ErrorLesson:
    """One error of a step and the evidence of its fix: ``fix`` the phrase for the summary
    ("run `mix format` first", "edit `config/test.exs`"), ``detail`` what content shows (the
    command, or the edited file and its changed lines)."""

    error: ToolCall
    normalized: str
    line: str
    fix: str
    detail: str
    times: int

    @property
    def lesson(self) -> str:
        """ "When `mix test` fails with `<error>`, <fix>": at most 120 characters, the error
        message shortened at a word (never the fix), with no ellipsis."""
        family, key = _pair_key(self.error)
        if family == "bash":
            what = f"`{key or self.error.name}`"
        elif _file_of(self.error):
            what = f"{self.error.name} on `{_base(_file_of(self.error))}`"
        else:
            what = f"`{self.error.name}`"
        line = readable_line(self.line)
        bare = _EXC_TYPE.sub("", re.sub(r"^\*\* \([\w.]+\)\s+", "", line), count=1)
        tail = f"`, {self.fix}"
        for head in (f"When {what} fails with `", "On `"):
            for shown in (line, bare):  # the error whole: with its type, or without
                if len(head) + len(shown) + len(tail) <= _LESSON_WORDS:
                    return head + shown + tail
        shown = fit(line, _LESSON_WORDS - len(f"When {what} fails with `") - len(tail))
        if shown:
            return f"When {what} fails with `{shown}{tail}"
        plain = f"When {what} fails, {self.fix}"
        return plain if len(plain) <= _LESSON_WORDS else ""


def readable_line(line: str) -> str:
    line = re.sub(r"(?:\\n|\\t|\s)+", " ", line).strip().replace("`", "'")
    return _TOOL_TAG.sub("", line).strip()


_TOOL_TAG = re.compile(r"</?tool_use_error>")


def fit(text: str, room: int) -> str:
    """``text`` within ``room`` characters, cut at a word and without an ellipsis; the
    exception type goes first; "" when fewer than four words would be left."""
    if len(text) <= room:
        return text
    bare = _EXC_TYPE.sub("", re.sub(r"^\*\* \([\w.]+\)\s+", "", text), count=1)
    if len(bare) <= room:
        return bare
    cut = bare[: room + 1]
    cut = cut[: cut.rfind(" ")] if " " in cut else ""
    cut = cut.rstrip(" ,;:.(-")
    return cut if len(cut.split()) >= 4 else ""


def changed_lines(call: ToolCall, limit: int = 200) -> str:
    """An edit's added or changed lines, on one line (redacted input), at most ``limit``."""
    new, old = call.input.get("new_string"), call.input.get("old_string")
    if not isinstance(new, str):
        new = call.input.get("content") if isinstance(call.input.get("content"), str) else ""
    edits = call.input.get("edits")
    if not new and isinstance(edits, list):
        new = "\n".join(
            e.get("new_string", "")
            for e in edits
            if isinstance(e, dict) and isinstance(e.get("new_string"), str)
        )
    before = set((old or "").splitlines()) if isinstance(old, str) else set()
    lines = [ln.strip() for ln in new.splitlines() if ln.strip() and ln not in before]
    text = " | ".join(lines)
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " ..."


def _terms_of(text: str) -> set[str]:
    """Distinctive words (identifiers of 4+ characters) of a text, lowercase."""
    words = (w.strip(".:-") for w in re.findall(r"[a-z_][a-z0-9_.:-]{3,}", text.lower()))
    return {w for w in words if len(w) >= 4 and w not in _PLAIN} - _COMMON_ERROR_WORDS


_COMMON_ERROR_WORDS = frozenset(
    """error errors failed failure failures exception found file
line lines test tests none null true false with from this that when into must should could
warning info debug code exit status""".split()
)


def _short_cd(command: str) -> str:
    """``cd /a/long/path/assets && node build.js`` → ``cd assets && node build.js``."""
    return re.sub(r"\bcd\s+(?:\S*/)?([^/\s]+)/?(?=\s*(?:&&|;))", r"cd \1", command)


def _input_change(failed: ToolCall, fixed: ToolCall) -> str:
    """How a non-Bash call's input changed between a failure and its success ("`limit: 5`")."""
    added = [
        (k, v)
        for k, v in fixed.input.items()
        if failed.input.get(k) != v
        and k not in ("old_string", "new_string", "content", "description")
    ]
    shown = [
        f"{k}: {v}"
        for k, v in added
        if isinstance(v, (int, float, bool)) or isinstance(v, str) and len(v) <= 40
    ]
    return ", ".join(shown[:3])


def _error_lessons(self: Transcript) -> list[ErrorLesson]:
    """Each failed step paired with the next run of the same step that no longer shows its
    error (same chain), and the evidence of what fixed it in between: the error's own named fix
    when it was run, else the one change (edit or command that changed something) that shares
    the error's words, else the only change, else how the step itself changed. Ambiguous
    evidence (several unrelated changes) gives no lesson: a wrong fix misleads more than a
    missing one. Failures of the agent's tooling and count-only errors give none either."""
    calls = self.calls
    out: list[ErrorLesson] = []
    done: set[tuple[str, str]] = set()
    counts: dict[str, int] = {}
    for call in calls:
        if _failed(call):
            key = _error_key(call)
            counts[key] = counts.get(key, 0) + 1
    for i, err in enumerate(calls):
        if not _failed(err):
            continue
        line = _error_line(err)
        key = _error_key(err)
        text = f"{line}\n{err.result}"
        if not line or _TOOLING.search(text[:600]) or _COUNT_ONLY.match(line.strip()):
            continue
        family, step = _pair_key(err)
        if not step and family in ("bash", "edit"):
            continue
        # the next run of the same step, and whether it still shows this error
        nxt = None
        for j in range(i + 1, len(calls)):
            c = calls[j]
            if (
                c.chain != err.chain
                or not c.completed
                or c.rejected
                or _pair_key(c) != (family, step)
            ):
                continue
            if _failed(c) and _error_key(c) == key:
                nxt = None
                break  # failed the same way again: a later failure is paired instead
            if (
                family == "bash"
                and only_inspects(_command_of(c))
                and not only_inspects(_command_of(err))
            ):
                continue
            nxt = j
            break
        if nxt is None or (key, step) in done:
            continue
        fixed = calls[nxt]
        window = [c for c in calls[i + 1 : nxt] if c.chain == err.chain and _succeeded(c)]
        found = _evidence(err, fixed, window, text, family)
        if found is None:
            continue
        done.add((key, step))
        fix, detail = found
        out.append(
            ErrorLesson(
                error=err,
                normalized=key,
                line=line,
                fix=fix,
                detail=detail,
                times=counts.get(key, 1),
            )
        )
    return out


def _evidence(
    err: ToolCall, fixed: ToolCall, window: list[ToolCall], text: str, family: str
) -> tuple[str, str] | None:
    edits = [c for c in window if c.name.lower() in _EDITS]
    ran = [
        c
        for c in window
        if tool_kind(c.name) == "bash"
        and _command_of(c).strip()
        and not only_inspects(_command_of(c))
        and _pair_key(c) != _pair_key(err)
    ]
    changes = edits + ran
    # 1. the error names its fix, and it was run (in between, or as the step itself)
    for named in _NAMED_FIX.findall(text[:2000]):
        named = named.strip()
        for c in ran + ([fixed] if family == "bash" else []):
            if named and named in _command_of(c):
                shown = command_core(c.subject) if c is not fixed else c.subject
                if c is fixed:
                    return f"run `{fit(_short_cd(command_key(shown)), 60)}` instead", c.subject
                return f"run `{fit(command_key(shown), 60)}` first", c.subject
    # 2. a change that shares the error's words
    wanted = _terms_of(text[:2000])
    command = _command_of(err)
    # the agent adjusting the very test it runs is its work in progress, not a project lesson
    changes = [
        c
        for c in changes
        if not (c in edits and _base(_file_of(c)) and _base(_file_of(c)) in command)
    ]
    edits = [c for c in edits if c in changes]
    if not changes and (edits or ran):
        return None
    related = [
        c
        for c in changes
        if wanted & _terms_of(f"{_file_of(c)} {changed_lines(c, 2000)} {_command_of(c)}")
    ]
    files = {_file_of(c) for c in related if c in edits}
    if related and (len(related) == 1 or len(files) == 1 and all(c in edits for c in related)):
        return _change(related[-1], edits)
    if not changes:
        # 3. nothing changed in between: the step itself changed
        if family == "bash":
            before, after = command_key(_command_of(err)), command_key(_command_of(fixed))
            if before == after:
                return None  # a rerun that worked: no evidence of a fix
            shown = _what_changed(before, after, text)
            if not shown:
                return None  # other arguments the error never asked for
            return f"run `{fit(shown, 60)}` instead", fixed.subject
        if family == "edit":
            old_err, old_ok = err.input.get("old_string"), fixed.input.get("old_string")
            if (
                isinstance(old_err, str)
                and isinstance(old_ok, str)
                and "\\n" in old_err
                and "\\n" not in old_ok
            ):
                return (
                    "write real newlines in `old_string`, not `\\n` escapes",
                    "The failing old_string held literal \\n escapes; the edit that "
                    "worked used real newlines.",
                )
            if any(c.name.lower() == "read" and _file_of(c) == _file_of(err) for c in window):
                return (
                    "re-read the file, then edit again",
                    "The file was read again before the edit that worked.",
                )
            return None
        change = _input_change(err, fixed)
        return (f"retry with `{change}`", f"Retried with {change}") if change else None
    if len(changes) == 1:
        return _change(changes[0], edits)
    return None  # several unrelated changes: ambiguous


_PLACES = frozenset(
    "config conf test tests spec src lib app assets public scripts js css "
    "static templates migrations settings".split()
)


def _what_changed(before: str, after: str, text: str) -> str:
    """The new command, shown from its changed stages, when the change is a directory (``cd``)
    or what the error asked for (a word of the new command that the error text holds, such as
    ``--set-upstream`` or ``-f``); "" otherwise."""
    old = set(before.split())
    new = [w for w in after.split() if w not in old]
    said = set(re.findall(r"[\w./:-]+", text[:4000]))
    if not (
        any(w == "cd" for w in new)
        or any(
            len(w) >= 2 and w in said and w.startswith("-") or len(w) >= 4 and w in said
            for w in new
        )
    ):
        return ""
    stages = re.split(r"\s*(?:&&|;)\s*", _short_cd(after))
    kept, shown = [], 0
    for stage in stages:
        if stage.startswith("cd ") or any(w in stage.split() for w in new):
            kept.append(stage)
            shown += 1
        elif kept:
            break
    return " && ".join(kept or stages)


def _change(call: ToolCall, edits: list[ToolCall]) -> tuple[str, str]:
    if call in edits:
        path = _file_of(call)
        parts = path.replace("\\", "/").split("/")
        shown = "/".join(parts[-2:]) if len(parts) > 1 and parts[-2] in _PLACES else parts[-1]
        shown = shown or call.name
        lines = changed_lines(call)
        return f"edit `{shown}`", f"Edited {path}" + (f": {lines}" if lines else "")
    return (
        f"run `{fit(_short_cd(command_key(command_core(call.subject))), 60)}` first",
        call.subject,
    )


Transcript.error_lessons = _error_lessons  # type: ignore[attr-defined]

UNRESOLVED = 3  # the same error this often, and the tool never worked again: an open problem


def _unresolved_errors(self: Transcript) -> list[tuple[ToolCall, str, int, ToolCall | None]]:
    """Errors of the main chain seen ``UNRESOLVED`` times or more after which the same tool
    never succeeded again (the session ended stuck), each with its first failure, its line,
    how often, and the call just before the first failure (often what caused it). An open
    problem, not a fix: no fix is named without evidence."""
    main = [c for c in self.calls if not c.sidechain and c.completed and not c.rejected]
    by_key: dict[str, list[int]] = {}
    for i, call in enumerate(main):
        if _failed(call):
            by_key.setdefault(_error_key(call), []).append(i)
    out = []
    for key, places in by_key.items():
        first = main[places[0]]
        line = _error_line(first)
        if (
            len(places) < UNRESOLVED
            or not key
            or not line
            or _TOOLING.search(line)
            or _COUNT_ONLY.match(line.strip())
        ):
            continue
        if any(_succeeded(c) and c.name == first.name for c in main[places[0] + 1 :]):
            continue
        before = main[places[0] - 1] if places[0] > 0 else None
        out.append((first, line, len(places), before))
    return out


Transcript.unresolved_errors = _unresolved_errors  # type: ignore[attr-defined]


_LOOKS = frozenset("list ls show status info --help -h --version".split())


def _refused_alternatives(self: Transcript) -> list[tuple[str, str, ToolCall, ToolCall]]:
    """A refused command and the one that replaced it: the very next call of the main chain, a
    command that succeeded and runs the same program as a step of the refused one (``uv tool
    upgrade --reinstall X`` after ``... uv tool uninstall X && uv tool install --reinstall .``
    was refused). As (the new command, the refused step it replaces, refused call, new call)."""
    from ..shell import command_stages

    main = [c for c in self.calls if not c.sidechain and c.completed]
    out = []
    for refused, after in zip(main, main[1:]):
        if (
            not refused.rejected
            or tool_kind(refused.name) != "bash"
            or not _succeeded(after)
            or tool_kind(after.name) != "bash"
        ):
            continue
        new = command_core(_command_of(after)).strip()
        head = command_head(new)
        if (
            not head
            or only_inspects(new)
            or len(command_heads(new)) != 1
            or new.split()[-1] in _LOOKS
        ):
            continue
        steps = [s.strip() for s in command_stages(_command_of(refused)) if s.strip()]
        same = [s for s in steps if command_head(s) == head]
        if same and command_key(same[-1]) != command_key(new):
            out.append((new, same[-1], refused, after))
    return out


Transcript.refused_alternatives = _refused_alternatives  # type: ignore[attr-defined]
