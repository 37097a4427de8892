"""An error paired with the first later success of the same kind of call (``error_fixes``), and
its lesson: "When `pytest` fails with `<error line>`, run `x` first" (``ErrorFix.lesson``), the
fix being what ran or was edited after the error's last failure, else a rerun or the command
run instead. The pairing with evidence is ``error_lessons``'.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from .commands import command_core, command_heads, command_key, only_inspects, steps_before
from .tool_errors import tool_kind
from .transcript_model import (
    EDIT_TOOLS,
    EXCEPTION_TYPE,
    ToolCall,
    base_name,
    command_of,
    error_key,
    error_line,
    failed,
    file_of,
    pair_key,
    shorten,
    succeeded,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from .transcript import Transcript


_LESSON_MAX = 120
_SHOWN_MIN = 40  # characters of the error line a lesson keeps, at least


def _readable(line: str, limit: int) -> str:
    """An error line as the user saw it, on one line, fit to ``limit``: the exception type is
    dropped first when that keeps the message whole ("No module named 'x'" beats a cut)."""
    line = re.sub(r"\s+", " ", line).strip().replace("`", "'")
    if len(line) > limit:
        bare = EXCEPTION_TYPE.sub("", line, count=1)
        line = bare if len(bare) <= limit else line
    return shorten(line, limit)


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
        family, what_key = pair_key(first)
        if family == "bash":
            what = f"`{shorten(what_key or first.name, 30)}`"
        elif file_of(first):
            what = f"{first.name} on `{shorten(base_name(file_of(first)), 30)}`"
        else:
            what = f"`{shorten(first.name, 30)}`"
        head = f"When {what} fails with `"
        tail = f"`, {self._remedy(family)[0]}"
        budget = _LESSON_MAX - len(head) - len(tail)
        if budget < _SHOWN_MIN:  # a long fix command gives way, so the error stays readable
            tail = f"`, {self._remedy(family, max(20, 50 - (_SHOWN_MIN - budget)))[0]}"
            budget = _LESSON_MAX - len(head) - len(tail)
        shown = _readable(error_line(first), max(8, budget)) or "an error"
        return shorten(head + shown + tail, _LESSON_MAX)

    @property
    def fixed_by(self) -> str:
        """What fixed the error: the command that did (run first, or run instead), else how
        ("fix `x.py` and rerun"). For a memory's content, where ``fix`` is only the rerun."""
        text, call = self._remedy(pair_key(self.error)[0])
        return call.subject if call is not None else text

    def _same_error(self) -> list[ToolCall]:
        """The failures of this error among the attempts (at least ``error`` itself)."""
        return [c for c in self.attempts if error_key(c) == self.normalized] or [self.error]

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
                and command_of(c).strip()
                and not only_inspects(command_of(c))
            ]
            edited = self._edited(window)
            key = command_key(command_of(fix))
            tried = any(command_key(command_of(c)) == key for c in self.attempts or [last])
            # a rerun (of a command that already failed, or of the failing one with fewer
            # words) owes its success to what ran in between; any other command replaced it
            if tried or set(key.split()) <= set(command_key(command_of(last)).split()):
                if ran:
                    return f"run `{shorten(command_core(ran[-1].subject), room)}` first", ran[-1]
                if edited:
                    return f"fix {edited} and rerun", None
            if tried:
                return "rerunning it worked", None
            first = steps_before(command_of(fix), pair_key(last)[1])
            if first:  # "terraform init && terraform plan" worked
                return f"run `{shorten(first, room)}` first", fix
            # leading `cd`/`export` steps are noise, unless they are what changed
            same_core = command_core(fix.subject) == command_core(last.subject)
            shown = fix.subject if same_core else command_core(fix.subject)
            return f"run `{shorten(shown, room)}` instead", fix
        if family == "edit":
            path = file_of(last)
            reread = any(c.name.lower() == "read" and file_of(c) == path for c in window)
            if reread:
                return "re-read the file, then edit again", None
            return "re-read the file and match its text exactly", None
        if file_of(last):
            return (
                (f"retry as `{shorten(fix.subject, room)}`", fix)
                if fix.subject != last.subject
                else ("retrying it worked", None)
            )
        if fix.subject and fix.subject != last.subject:
            return f"use `{shorten(fix.subject, room)}`", fix
        return "retrying it worked", None

    @staticmethod
    def _edited(calls: list[ToolCall]) -> str:
        files: list[str] = []
        for call in calls:
            if call.name.lower() in EDIT_TOOLS and not call.is_error:
                path = file_of(call)
                if path and base_name(path) not in files:
                    files.append(base_name(path))
        if not files:
            return ""
        shown = ", ".join(f"`{shorten(name, 30)}`" for name in files[:2])
        return shown + (" and others" if len(files) > 2 else "")


def error_fixes(transcript: Transcript) -> list[ErrorFix]:
    """Each failed call paired with the first later successful call of the same kind
    (same tool and command head, or same tool and file), in the same chain."""
    by_key: dict[tuple[str, tuple[str, str]], list[int]] = {}
    keys = []
    for i, call in enumerate(transcript.calls):
        key = (call.chain, pair_key(call))
        keys.append(key)
        by_key.setdefault(key, []).append(i)
        if key[1][0] == "bash" and succeeded(call):  # "terraform init && terraform plan"
            for head in command_heads(command_of(call))[1:]:  # succeeds as a plan too
                by_key.setdefault((call.chain, ("bash", head)), []).append(i)
    out = []
    for i, err in enumerate(transcript.calls):
        if not failed(err) or not keys[i][1][1] and keys[i][1][0] in ("bash", "edit"):
            continue
        positions = by_key[keys[i]]
        first_after = bisect.bisect_right(positions, i)
        # (a command that only looks, as "migrate ... version" after "migrate ... up" failed,
        # is no success of the failed one)
        changes = keys[i][1][0] == "bash" and not only_inspects(command_of(err))
        fixed_at = next(
            (
                fixed_at
                for fixed_at in positions[first_after:]
                if succeeded(transcript.calls[fixed_at])
                and not (changes and only_inspects(command_of(transcript.calls[fixed_at])))
            ),
            None,
        )
        if fixed_at is None:
            continue
        before = bisect.bisect_left(positions, i)
        while before > 0 and not succeeded(transcript.calls[positions[before - 1]]):
            before -= 1
        attempts = [
            transcript.calls[p]
            for p in positions[before:]
            if p < fixed_at and failed(transcript.calls[p])
        ]
        between = [
            c for c in transcript.calls[i + 1 : fixed_at] if c.chain == err.chain and c.completed
        ]
        out.append(
            ErrorFix(
                error=err,
                fix=transcript.calls[fixed_at],
                normalized=error_key(err),
                between=between,
                attempts=attempts,
            )
        )
    return out
