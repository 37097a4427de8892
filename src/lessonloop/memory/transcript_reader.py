"""Reading a transcript's events one at a time (``Reader``) from lines streamed so that an
over-long line is skipped, never held whole (``read_lines``).

An assistant event gives tool calls and the agent's text; a user event gives tool results
(pairing each with its call, whichever comes first), prompts, the commands the user ran
themselves (``<bash-input>``), a refusal's reason and the answers to ``AskUserQuestion``; a system
or progress event gives the project's hook runs. Everything stored is redacted, then capped:
tool results at 2,000 characters, prompts at 10,000, input strings at 2,000 each, subjects at
300. ``transcript.read`` drives it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO

from ..safety.redact import redact, redact_obj
from . import events, privacy
from .commands import command_head
from .tool_errors import block_text, subject_of, tool_errors, tool_kind
from .transcript_model import (
    SCRIPT_RUNNERS,
    AgentText,
    HookRun,
    Said,
    ToolCall,
    UserMessage,
    command_of,
)

RESULT_MAX = 2000
TEXT_MAX = 300  # a rejection's reason, an answer, a question
AGENT_TEXT_MAX = 8000  # one text block of the agent (its answers, summaries, findings)
PROMPT_MAX = 10_000
INPUT_STR_MAX = 2000
_MARGIN = 4096  # extra characters kept before redaction, so a cut never hides a secret
_CHUNK = 1 << 20


def read_lines(stream: BinaryIO, max_len: int) -> Iterator[bytes | None]:
    """Lines of a binary stream; None for a line longer than ``max_len`` (never held whole)."""
    buf = bytearray()
    skipping = False
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            break
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
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
            elif len(buf) + newline - start > max_len:
                buf.clear()
                yield None
            elif buf:
                buf += chunk[start:newline]
                yield bytes(buf)
                buf.clear()
            else:
                yield chunk[start:newline]
            start = newline + 1
    if skipping:
        yield None
    elif buf:
        yield bytes(buf)


RECIPE_RUNNERS = frozenset({"just", "make"})  # task runners that print each command they run
ECHO_MAX = 300


def _redacted(text: str, limit: int) -> str:
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
# what the user's own command printed, as the next message holds it; a failure it reports
# (not "Command timed out": a suite slower than the shell's limit works, given time)
_BASH_OUTPUT = re.compile(r"^<bash-(?:stdout|stderr)>", re.S)
_BASH_TAGS = re.compile(r"</?bash-(?:stdout|stderr)>")
_EXIT_FAILED = re.compile(
    r"\b(?:exit(?:ing|ed)? (?:with )?(?:code|status) [1-9]\d*|command not found)\b", re.I
)
_USER_SAID = ("The user provided the following reason for the rejection:", "the user said:")
_ANSWER = re.compile(r'"((?:[^"\\]|\\.)+?)"="((?:[^"\\]|\\.)*?)"')
PERMISSION_REFUSAL = re.compile(
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


class Reader:
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
        self.queued: list[tuple[str, str]] = []  # messages the user queued, not yet delivered
        self.mid_turn: set[str] = set()  # messages handed over mid-turn, read once whichever way
        self.unexplained: ToolCall | None = None  # a call refused with no reason, awaiting one
        self.cwd = ""  # the session's working directory (the project root), from its first event
        # the words of the user's <private> spans so far: what repeats them is dropped too
        self.private: list[str] = []

    def _private(self, text: str) -> str:
        """``text`` without private sentences, nor those repeating a private span's words."""
        return privacy.strip(text, self.private) if self.private or "<" in text else text

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
        if not self.cwd and isinstance(event.get("cwd"), str):
            self.cwd = event["cwd"]
        etype = event.get("type")
        if etype == "system":
            self._system(event)
            return
        if etype == "progress":
            self._progress(event)
            return
        if etype == "queue-operation":
            self._queue(event)
            return
        if etype not in ("user", "assistant"):
            return
        message = event.get("message")
        if not isinstance(message, dict):
            return
        sidechain, chain = self._chain(event)
        ts = event.get("timestamp")
        timestamp = _redacted(ts, 64) if isinstance(ts, str) else ""
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
                                _redacted(self._private(block["text"]), AGENT_TEXT_MAX),
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
            if not results:
                return
            # a message the user typed while the tool ran rides beside its result as a text
            # block ("Edit plan to NOT mention Instructor ..."): no UserPromptSubmit fires for it
            content = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
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
        if parts and (not results or self._once_mid_turn("\n".join(parts))):
            self._prompt("\n".join(parts), timestamp, sidechain, chain)

    def _queue(self, event: dict) -> None:
        """A message the user typed while the agent worked waits in a queue: "dequeue" delivers
        it as a user message of its own (read there), "remove" hands it to the agent mid-turn,
        and the queue's record is then all the transcript keeps of it ("the status must always
        be Backlog or the test will not work")."""
        operation, content = event.get("operation"), event.get("content")
        if operation == "enqueue":
            if isinstance(content, list):
                content = "\n".join(
                    b["text"]
                    for b in content
                    if isinstance(b, dict) and isinstance(b.get("text"), str)
                )
            ts = event.get("timestamp")
            if len(self.queued) < 1_000:
                self.queued.append(
                    (content if isinstance(content, str) else "", ts if isinstance(ts, str) else "")
                )
        elif operation in ("dequeue", "remove") and self.queued:
            text, ts = self.queued.pop(0)
            if operation == "remove" and text.strip() and self._once_mid_turn(text):
                self._prompt(text, _redacted(ts, 64), False, "")

    def _once_mid_turn(self, text: str) -> bool:
        """Whether a message handed to the agent mid-turn is new: a Claude Code version that
        records it both in the queue ("remove") and beside a tool result is read once."""
        key = text.strip()
        if key in self.mid_turn:
            return False
        if len(self.mid_turn) < 1_000:
            self.mid_turn.add(key)
        return True

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
                self.pre_hooks.setdefault(call, []).append(
                    (name, _redacted(command, INPUT_STR_MAX))
                )

    def _system(self, event: dict) -> None:
        content = event.get("content")
        if isinstance(content, str) and not event.get("isSidechain"):
            ran = _HOOK_RAN.match(_ANSI.sub("", content).strip())
            if ran:
                self.hooks.append(HookRun(ran.group(1), _redacted(ran.group(2), INPUT_STR_MAX)))

    def _prompt(self, text: str, timestamp: str, sidechain: bool, chain: str) -> None:
        for words in privacy.echoes(text):
            if words not in self.private:
                self.private.append(words)
        text = self._private(text)
        blocked = _HOOK_FEEDBACK.match(_ANSI.sub("", text).strip())
        if blocked:  # a hook's words, not the user's
            if not sidechain:
                self.hooks.append(
                    HookRun(
                        blocked.group(1),
                        _redacted(blocked.group(2), INPUT_STR_MAX),
                        _redacted(blocked.group(3), TEXT_MAX * 4),
                        index=self._next(),
                    )
                )
            return
        if _BASH_OUTPUT.match(text.strip()):
            output = _BASH_TAGS.sub("\n", _ANSI.sub("", text)).strip()
            failed = _EXIT_FAILED.search(output)
            ran = self.said[-1] if self.said and self.said[-1].kind == "command" else None
            if ran is not None and ran.call is not None and not ran.call.completed:
                ran.detail = failed.group(0) if failed else ""
                self._complete(ran.call, {"command": ran.text}, output, bool(failed), None)
            return
        typed = _BASH_INPUT.match(text.strip())
        if typed and not sidechain:  # a command the user ran themselves ("!uv run ty check")
            command = _redacted(typed.group(1).strip(), INPUT_STR_MAX)
            if command:
                # a Bash call like the agent's, so its failure and fix read the same way
                self._tool_use(
                    {"id": "", "name": "Bash", "input": {"command": command}},
                    timestamp,
                    False,
                    chain,
                )
                self.said.append(
                    Said("command", command, "", self._next(), sidechain, call=self.calls[-1])
                )
            return
        own = events.prompt_text(text)
        if own and not sidechain and self.unexplained is not None:
            # the user refused a call without a reason, then said what to do instead ("fix the
            # test, the code is right" after refusing an edit of the code): the reason it lacked
            refused, self.unexplained = self.unexplained, None
            if len(own) <= TEXT_MAX:
                self.said.append(
                    Said(
                        "rejection",
                        _redacted(own, TEXT_MAX),
                        refused.subject,
                        self._next(),
                        False,
                        call=refused,
                    )
                )
        if own:
            self.prompts.append(
                UserMessage(
                    text=_redacted(own, PROMPT_MAX),
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
        for question_entry in questions if isinstance(questions, list) else []:
            if isinstance(question_entry, dict) and isinstance(question_entry.get("question"), str):
                asked[question_entry["question"]] = question_entry
        for question, answer in list(answers.items())[:10]:
            if isinstance(answer, list):
                answer = ", ".join(str(a) for a in answer)
            if not isinstance(question, str) or not isinstance(answer, str) or not answer.strip():
                continue
            question_entry = asked.get(question, {})
            header = question_entry.get("header")
            if not isinstance(header, str):
                header = ""
            detail = ""
            for option in question_entry.get("options") or []:
                if (
                    isinstance(option, dict)
                    and option.get("label") == answer
                    and isinstance(option.get("description"), str)
                ):
                    detail = option["description"]
            self.said.append(
                Said(
                    "answer",
                    _redacted(answer.strip(), TEXT_MAX),
                    _redacted(question.strip(), TEXT_MAX),
                    self._next(),
                    call.sidechain,
                    header=_redacted(header.strip(), 60),
                    detail=_redacted(detail.strip(), TEXT_MAX),
                )
            )

    def _tool_use(self, block: dict, timestamp: str, sidechain: bool, chain: str) -> None:
        call_id = block.get("id")
        call_id = call_id if isinstance(call_id, str) else ""
        if call_id and call_id in self.by_id:
            return  # the same block repeated (resumed or re-logged session)
        name = block.get("name")
        name = _redacted(name, 200) if isinstance(name, str) else ""
        if not sidechain:
            self.unexplained = None  # the agent went on: no reason is coming
        raw = block.get("input")
        raw = raw if isinstance(raw, dict) else ({} if raw is None else {"value": raw})
        if self.private:  # a command or a question that repeats a private span
            stripped = privacy.strip_value(raw, self.private)
            raw = stripped if isinstance(stripped, dict) else raw
        safe = _redact_input(raw)
        call = ToolCall(
            id=_redacted(call_id, 200),
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
            text = self._private(text)  # (what the user said when refusing it, too)
            call.result = _redacted(text, RESULT_MAX)
            if not call.sidechain and not any(m in text for m in _USER_SAID):
                self.unexplained = call
            for marker in _USER_SAID:
                said = text.find(marker)
                if said >= 0:
                    reason = _redacted(text[said + len(marker) :].strip(), TEXT_MAX)
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
        if self.private:  # what the call echoed of a private span (its answer, its output)
            text = self._private(text)
            extra = privacy.strip_value(extra, self.private)
        if call.name == "AskUserQuestion" and not flagged:
            self._answers(call, raw, text, extra)
        response = events.response(tool_kind(call.name) == "bash", text, flagged, extra)
        # a success is judged by the tool's own status (``is_error``), never by a word in its
        # output: "297 tests, 0 failures" next to a "[warning]" log line is a success
        call.errors = tool_errors(call.name, raw, response) if flagged else []
        call.is_error = flagged
        # only a failure's text is ever used (error lines, lessons): a success keeps none, so a
        # long session is not redacted twice over for nothing
        call.result = _redacted(text, RESULT_MAX) if text and call.is_error else ""
        if (
            text
            and not call.is_error
            and tool_kind(call.name) == "bash"
            and command_head(command_of(call)).partition(" ")[0] in RECIPE_RUNNERS | SCRIPT_RUNNERS
        ):
            call.echoed = _redacted(text, ECHO_MAX)  # `just check` prints what its recipe runs
        call.completed = True
