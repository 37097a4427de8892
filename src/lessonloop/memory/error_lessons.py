"""An error with the evidence of what fixed it, or with nothing when the evidence is ambiguous
(``error_lessons``: a wrong fix misleads more than a missing one), and the errors a session
ended stuck on (``unresolved_errors``: an open problem, not a fix). ``fit``, ``readable_line``
and ``changed_lines`` word an error line and an edit for a memory.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .commands import command_core, command_key, only_inspects
from .corrections import PLAIN_WORDS
from .diagnosis import diagnosis, first_cause, in_brief
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
    succeeded,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from .transcript import Transcript


# failures of the agent's own tooling, not of the project: nothing to learn for the project
# (the development set's annotators count "has not been read yet" among these; two held-out
# sets' annotators kept it as a generic lesson: the development set decides)
TOOLING_FAILURE = re.compile(
    r"sibling tool call errored|has not been read yet|no such tool available|"
    r"shell \w+ is not running|file has been (?:unexpectedly )?modified since "
    r"read|interrupted by user",
    re.I,
)
# a test runner's count line says that tests failed, not what failed: no key to match again
COUNT_ONLY = re.compile(
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
    fix: str  # "" when the evidence singled out no fix: ``cause`` is then the lesson
    detail: str
    times: int
    cause: str = ""  # the agent's diagnosis between the failure and the fix (``diagnosis``)

    @property
    def lesson(self) -> str:
        """ "When `mix test` fails with `<error>`, <fix>": at most 120 characters, the error
        message shortened at a word (never the fix), with no ellipsis. Without a fix, the
        agent's diagnosis in brief."""
        if not self.fix:
            return in_brief(first_cause(self.cause)) if self.cause else ""
        family, key = pair_key(self.error)
        if family == "bash":
            what = f"`{key or self.error.name}`"
        elif file_of(self.error):
            what = f"{self.error.name} on `{base_name(file_of(self.error))}`"
        else:
            what = f"`{self.error.name}`"
        line = readable_line(self.line)
        bare = EXCEPTION_TYPE.sub("", re.sub(r"^\*\* \([\w.]+\)\s+", "", line), count=1)
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
    bare = EXCEPTION_TYPE.sub("", re.sub(r"^\*\* \([\w.]+\)\s+", "", text), count=1)
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
        content = call.input.get("content")
        new = content if isinstance(content, str) else ""
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
    return {w for w in words if len(w) >= 4 and w not in PLAIN_WORDS} - _COMMON_ERROR_WORDS


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


def error_lessons(transcript: Transcript) -> list[ErrorLesson]:
    """Each failed step paired with the next run of the same step that no longer shows its
    error (same chain), and the evidence of what fixed it in between: the error's own named fix
    when it was run, else the one change (edit or command that changed something) that shares
    the error's words, else the only change, else how the step itself changed. Ambiguous
    evidence (several unrelated changes) gives no lesson: a wrong fix misleads more than a
    missing one. Failures of the agent's tooling and count-only errors give none either."""
    calls = transcript.calls
    out: list[ErrorLesson] = []
    unsure: list[ErrorLesson] = []  # no single fix, a diagnosis: kept when no fix is known
    done: set[tuple[str, str]] = set()
    counts: dict[str, int] = {}
    for call in calls:
        if failed(call):
            key = error_key(call)
            counts[key] = counts.get(key, 0) + 1
    edited = [  # what each edit wrote (its changed lines), by position among the calls
        changed_lines(call, 100_000) if call.name.lower() in EDIT_TOOLS else "" for call in calls
    ]
    for i, err in enumerate(calls):
        if not failed(err):
            continue
        line = error_line(err)
        key = error_key(err)
        text = f"{line}\n{err.result}"
        if not line or TOOLING_FAILURE.search(text[:600]) or COUNT_ONLY.match(line.strip()):
            continue
        family, step = pair_key(err)
        if not step and family in ("bash", "edit"):
            continue
        # the next run of the same step, and whether it still shows this error
        nxt = None
        for later_at in range(i + 1, len(calls)):
            later = calls[later_at]
            if (
                later.chain != err.chain
                or not later.completed
                or later.rejected
                or pair_key(later) != (family, step)
            ):
                continue
            if failed(later) and error_key(later) == key:
                nxt = None
                break  # failed the same way again: a later failure is paired instead
            if (
                family == "bash"
                and only_inspects(command_of(later))
                and not only_inspects(command_of(err))
            ):
                continue
            nxt = later_at
            break
        if nxt is None or (key, step) in done:
            continue
        fixed = calls[nxt]
        window = [
            later for later in calls[i + 1 : nxt] if later.chain == err.chain and succeeded(later)
        ]
        found = _evidence(err, fixed, window, text, family, transcript.cwd, edited[:i])
        cause = diagnosis(transcript.texts, err.index, _last_change(window, fixed), err.chain)
        if found is None:
            if cause:  # no single fix, but what the agent found: an observation
                unsure.append(ErrorLesson(err, key, line, "", "", counts.get(key, 1), cause))
            continue
        done.add((key, step))
        fix, detail = found
        out.append(ErrorLesson(err, key, line, fix, detail, counts.get(key, 1), cause))
    return out + [
        lesson for lesson in unsure if (lesson.normalized, pair_key(lesson.error)[1]) not in done
    ]


_FAILED_TEST = re.compile(r"^FAILED (\S+::\w+)")


def failed_tests(call: ToolCall) -> list[str]:
    """The tests a pytest run reported FAILED, as ids (``test/a.py::C::test_x``), once each."""
    return list(dict.fromkeys(m.group(1) for e in call.errors if (m := _FAILED_TEST.match(e.line))))


def pre_existing(err: ToolCall, written: Sequence[str]) -> bool:
    """Whether the step's failure names the tests that failed and the agent's earlier edits
    (``written``: their changed lines) wrote none of them (whole names: ``test_load`` is not
    ``test_load_twice``)."""
    names = {test.rsplit("::", 1)[1] for test in failed_tests(err)}
    return bool(names) and not any(
        re.search(rf"\b{re.escape(name)}\b", text) for text in written for name in names
    )


def _last_change(window: list[ToolCall], fixed: ToolCall) -> int:
    """Where the fix was made: the last edit or command that changed something before the
    step ran clean (the step itself when nothing did). A diagnosis comes before it."""
    changes = [
        call.index
        for call in window
        if call.name.lower() in EDIT_TOOLS
        or tool_kind(call.name) == "bash"
        and not only_inspects(command_of(call))
    ]
    return changes[-1] if changes else fixed.index


def _evidence(
    err: ToolCall,
    fixed: ToolCall,
    window: list[ToolCall],
    text: str,
    family: str,
    root: str = "",
    written: Sequence[str] = (),
) -> tuple[str, str] | None:
    edits = [call for call in window if call.name.lower() in EDIT_TOOLS]
    ran = [
        call
        for call in window
        if tool_kind(call.name) == "bash"
        and command_of(call).strip()
        and not only_inspects(command_of(call))
        and pair_key(call) != pair_key(err)
    ]
    changes = edits + ran
    # 1. the error names its fix, and it was run (in between, or as the step itself)
    for named in _NAMED_FIX.findall(text[:2000]):
        named = named.strip()
        for call in ran + ([fixed] if family == "bash" else []):
            if named and named in command_of(call):
                shown = command_core(call.subject) if call is not fixed else call.subject
                if call is fixed:
                    return f"run `{fit(_short_cd(command_key(shown)), 60)}` instead", call.subject
                return f"run `{fit(command_key(shown), 60)}` first", call.subject
    # 2. a change that shares the error's words
    wanted = _terms_of(text[:2000])
    # the agent adjusting the very test it runs is its work in progress, not a project lesson,
    # unless the failure names tests the agent had not written: their stale expectation was
    # the fix (pytest's "FAILED path::test")
    command = command_of(err)
    changes = [
        call
        for call in changes
        if not (
            call in edits
            and base_name(file_of(call))
            and base_name(file_of(call)) in command
            and not pre_existing(err, written)
        )
    ]
    edits = [call for call in edits if call in changes]
    if not changes and (edits or ran):
        return None
    related = [
        call
        for call in changes
        if wanted & _terms_of(f"{file_of(call)} {changed_lines(call, 2000)} {command_of(call)}")
    ]
    files = {file_of(call) for call in related if call in edits}
    if related and (
        len(related) == 1 or len(files) == 1 and all(call in edits for call in related)
    ):
        return _change(related[-1], edits)
    if not changes:
        # 3. nothing changed in between: the step itself changed
        if family == "bash":
            before, after = command_key(command_of(err)), command_key(command_of(fixed))
            if before == after:
                return None  # a rerun that worked: no evidence of a fix
            shown = _what_changed(before, after, text)
            if not shown:
                return None  # other arguments the error never asked for
            place = _run_in(after, before)
            if place:  # the same command, run from another directory
                where = "the project root" if place.rstrip("/") == root.rstrip("/") else None
                return f"run it from {where or f'`{base_name(place)}/`'}", fixed.subject
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
            if any(
                call.name.lower() == "read" and file_of(call) == file_of(err) for call in window
            ):
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


def _run_in(after: str, before: str) -> str:
    """The directory of ``cd <dir> && <the failing command>``; "" for any other change."""
    match = re.match(r"cd\s+(\S+)\s*(?:&&|;)\s*(.+)$", after)
    return match.group(1) if match and match.group(2).strip() == before.strip() else ""


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
        path = file_of(call)
        parts = path.replace("\\", "/").split("/")
        shown = "/".join(parts[-2:]) if len(parts) > 1 and parts[-2] in _PLACES else parts[-1]
        shown = shown or call.name
        lines = changed_lines(call)
        return f"edit `{shown}`", f"Edited {path}" + (f": {lines}" if lines else "")
    return (
        f"run `{fit(_short_cd(command_key(command_core(call.subject))), 60)}` first",
        call.subject,
    )


UNRESOLVED = 3  # the same error this often, and the tool never worked again: an open problem


def unresolved_errors(transcript: Transcript) -> list[tuple[ToolCall, str, int, ToolCall | None]]:
    """Errors of the main chain seen ``UNRESOLVED`` times or more after which the same tool
    never succeeded again (the session ended stuck), each with its first failure, its line,
    how often, and the call just before the first failure (often what caused it). An open
    problem, not a fix: no fix is named without evidence."""
    main = [c for c in transcript.calls if not c.sidechain and c.completed and not c.rejected]
    by_key: dict[str, list[int]] = {}
    for i, call in enumerate(main):
        if failed(call):
            by_key.setdefault(error_key(call), []).append(i)
    out = []
    for key, places in by_key.items():
        first = main[places[0]]
        line = error_line(first)
        if (
            len(places) < UNRESOLVED
            or not key
            or not line
            or TOOLING_FAILURE.search(line)
            or COUNT_ONLY.match(line.strip())
        ):
            continue
        if any(succeeded(c) and c.name == first.name for c in main[places[0] + 1 :]):
            continue
        before = main[places[0] - 1] if places[0] > 0 else None
        out.append((first, line, len(places), before))
    return out
