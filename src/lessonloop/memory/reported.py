"""What the user reports from their own runs, read from the session's prompts.

Users debug by running the project themselves and pasting what it printed: "when I run the
command "snps ui" I see ... thread 'main' panicked at ...". No tool call of the agent ran that
command, so the error detector of tool results never sees the failure, and the fix the agent
then made is credited to nothing. Two lessons come from such prompts:

- ``run_commands``: the command the user says they run the project with (quoted, after "when I
  run", "whenever I start", "I run it with ..."): a project fact stated by the user, with what
  that run printed as its context.
- ``reported_fixes``: an error the user pasted, the agent's edits before the user's next prompt,
  and that next prompt pasting the same run again (it shares a line of the first paste, such as
  the panic's location or the launcher's exit line) without the error: the run got past it, so
  the edits fixed it. A next paste of another run without the error counts only when the agent
  announced what it found in between ("Found the issue. ..."), and the memory says which. When anything but edits (and ``mkdir``/inspection) changed in between, or
  an edit shares none of the error's words, the evidence is ambiguous and nothing is stored; a
  next prompt that pastes nothing proves nothing either.

Standard library only (memorize runs in the session-end hook).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .commands import command_head, only_inspects
from .diagnosis import diagnosis, explanations
from .error_lessons import changed_lines, fit, readable_line
from .tool_errors import tool_errors, tool_kind

SUMMARY_MAX = 120

# "when I run the command "snps ui"", "whenever I start `npm run dev`", "I run it with `make up`"
_RUN_SAID = re.compile(
    r"\b(?:(?:when(?:ever)?|if|after|once|each time|every time)\s+i\s+(?:run|start|launch|execute|"
    r"type|call)|i\s+(?:usually\s+|always\s+|normally\s+)?(?:run|start|launch)\s+(?:it|the app|"
    r"the project|the server|this|the tests)\s+(?:with|using|via|by running))\s+"
    r"(?:the\s+)?(?:command\s+|script\s+)?([\"'`\u201c])([^\"'`\u201d\n]{2,80})[\"'`\u201d]",
    re.I,
)
# "I ran "pnpm build" and got", ""pnpm build:all" fails with": the run a paste came from, said once
_RAN_SAID = re.compile(
    r"\bi\s+(?:just\s+)?(?:ran|tried|executed)\s+(?:the\s+)?(?:command\s+)?"
    r"([\"'`\u201c])([^\"'`\u201d\n]{2,80})[\"'`\u201d]",
    re.I,
)
_FAILS_SAID = re.compile(
    r"([\"'`\u201c])([^\"'`\u201d\n]{2,80})[\"'`\u201d]\s+(?:still\s+)?(?:fails|failed|errors|"
    r"crashes|crashed|breaks|doesn't work|does not work)\b",
    re.I,
)
_COMMANDISH = re.compile(r"^[a-z.][\w.+/-]*(?:\s+[\w.:/=@+-]+){0,6}$", re.I)
_PANIC = re.compile(r"\bpanicked at\b.*:\s*\\?$")
_NUMBER = re.compile(r"\d+")
_TERM = re.compile(r"[a-z_][a-z0-9_.:-]{3,}")
_COMMON = frozenset(
    """error errors failed failure exception found file line lines test tests
none null true false with from this that when into must should could warning info debug code
exit status thread main panicked command expected unknown field running while within your
users home""".split()
)


def said_command(text: str, once: bool = False) -> str:
    """The command a prompt says the user runs ("snps ui"), or "" when it names none that
    reads as a command (a quoted phrase of prose, "when I run 'the tests'", is none). With
    ``once``, also the command of one run the prompt reports ("I ran "pnpm build" and got")."""
    m = _RUN_SAID.search(text) or (
        (_RAN_SAID.search(text) or _FAILS_SAID.search(text)) if once else None
    )
    if not m:
        return ""
    command = " ".join(m.group(2).split())
    if not _COMMANDISH.match(command) or not command_head(command):
        return ""
    if len(command.split()) > 1 and command.split()[0].lower() in ("the", "a", "an", "my", "our"):
        return ""
    return command


def _lines(text: str) -> list[str]:
    return [ln.rstrip("\\").strip() for ln in text.replace("\\\n", "\n").splitlines()]


def pasted_errors(text: str) -> list[str]:
    """The error lines of pasted output, a panic's message after its location line (Rust
    prints "thread 'main' panicked at src/lib.rs:60:10:" and the message on the next line)."""
    lines = _lines(text)
    found = [
        e.line for e in tool_errors("Paste", {}, {"content": "\n".join(lines), "is_error": True})
    ]
    out = []
    for n, line in enumerate(lines):
        if _PANIC.search(line) and n + 1 < len(lines) and lines[n + 1]:
            out.append(lines[n + 1])
    return [
        ln
        for ln in out + [ln for ln in found if ln not in out]
        if _ERROR_WORD.search(ln) and not _PROSE.match(ln)
    ]


# a line of output names an error; the user's own sentence around the paste is not output
_ERROR_WORD = re.compile(
    r"error|panic|fail|exception|fatal|not found|denied|traceback|refused", re.I
)
_PROSE = re.compile(
    r"^(?:/[\w:.-]+\s+)?(?:i|i'm|we|when|but|then|so|and|now|after|it|this|"
    r"here|there|got|see|please|why|how|what)\b",
    re.I,
)


def _same(line: str) -> str:
    """A line as compared between two pastes: spaces, case and numbers masked."""
    return _NUMBER.sub("0", " ".join(line.lower().split()))


def _terms(text: str) -> set[str]:
    return {w.strip(".:-") for w in _TERM.findall(text.lower())} - _COMMON


@dataclass
class Reported:
    summary: str
    content: str
    kind: str = "observation"
    tags: tuple[str, ...] = ()


def run_commands(transcript) -> list[Reported]:
    """The commands the user says they run this project with, once each."""
    out, seen = [], set()
    for prompt in transcript.prompts:
        if prompt.sidechain:
            continue
        command = said_command(prompt.text)
        if not command or command in seen:
            continue
        seen.add(command)
        errors = pasted_errors(prompt.text)
        printed = (
            f" It printed: {' | '.join(readable_line(e) for e in errors[:3])}" if errors else ""
        )
        said = " ".join(prompt.text.split())
        out.append(
            Reported(
                summary=f"The user runs `{command}` in this project",
                content=f'The user said: "{said[:300]}"{printed[:600]}',
                tags=("project-fact", "command"),
            )
        )
    return out


def reported_fixes(transcript) -> list[Reported]:
    """Errors the user pasted that the agent's edits fixed, by the user's next paste."""
    main = sorted(
        [(c.index, c) for c in transcript.calls if not c.sidechain]
        + [(p.index, p) for p in transcript.prompts if not p.sidechain],
        key=lambda x: x[0],
    )
    pastes = [
        (n, errors)
        for n, (_, item) in enumerate(main)
        if not hasattr(item, "name")
        for errors in [pasted_errors(item.text)]
        if errors
    ]
    out = []
    for (a, errors), (b, _) in zip(pastes, pastes[1:]):
        first, second = main[a][1], main[b][1]
        later = {_same(e) for e in _lines(second.text) if e}
        same_run = bool({_same(e) for e in errors[1:]} & later)
        cause = diagnosis(transcript.texts, main[a][0], main[b][0], "")
        if not same_run and not _announced_between(transcript.texts, main[a][0], main[b][0]):
            continue  # another run, and the agent said nothing it found: no evidence
        error = errors[0]
        if _same(error) in later:
            continue  # the same error again: not fixed
        calls = [item for _, item in main[a + 1 : b] if hasattr(item, "name")]
        found = _fix(calls, error, first.text)
        if found is None:
            continue
        fix, detail = found
        command = said_command(first.text, once=True)
        shown = readable_line(error)
        summary = _summary(command, shown, fix)
        if not summary:
            continue
        out.append(
            Reported(
                summary=summary,
                content=f"Error (the user's run): {shown[:300]}\nFixed by: {detail}\n"
                + (
                    "The user's next run got past it."
                    if same_run
                    else "The user's next message pasted another run, without this error."
                )
                + (f"\nCause (as the agent found it): {cause}" if cause else ""),
                tags=("error", "reported"),
            )
        )
    return out


def _announced_between(texts: list, after: int, before: int) -> bool:
    """The agent announced what it found ("Found the issue. ...") between two prompts."""
    return any(
        not text.sidechain
        and after < text.index < before
        and any(found.opened for found in explanations(text.text))
        for text in texts
    )


def _summary(command: str, shown: str, fix: str) -> str:
    """ "When `cmd` fails with `<error>`, <fix>" within SUMMARY_MAX: the error whole, else its
    most specific whole part (what follows its last wrappers' colons: "unknown field 'scope',
    expected 'open'"), else cut at a word; "" when even that leaves too little."""
    parts = [shown]
    rest = shown
    while ": " in rest:
        rest = rest.split(": ", 1)[1]
        parts.append(_closed(rest))
    heads = ([f"When `{command}` fails with `"] if command else []) + ["On `"]
    tail = f"`, {fix}"
    for head in heads:
        for part in parts:
            if len(part.split()) >= 3 and len(head) + len(part) + len(tail) <= SUMMARY_MAX:
                return f"{head}{part}{tail}"
    head = heads[0]
    cut = fit(shown, SUMMARY_MAX - len(head) - len(tail))
    return f"{head}{cut}{tail}" if cut else ""


def _closed(text: str) -> str:
    """A tail of an error line without the closers its cut-off head opened (`")`)."""
    pairs = {")": "(", "]": "["}
    while text and text[-1] in "\"')]":
        c = text[-1]
        unbalanced = text.count(c) % 2 == 1 if c in "\"'" else text.count(c) > text.count(pairs[c])
        if not unbalanced:
            break
        text = text[:-1]
    return text


def _fix(calls: list, error: str, text: str) -> tuple[str, str] | None:
    """The edits that fixed a reported error: all the successful edits between the two
    prompts, each sharing a word with the error (its message or the pasted text's paths), at
    most three files; None when anything else changed or an edit is unrelated."""
    edits = []
    for call in calls:
        kind = tool_kind(call.name)
        if not call.completed or call.rejected:
            continue
        if kind == "edit":
            if call.is_error:
                continue
            edits.append(call)
        elif kind == "bash":
            command = (
                call.input.get("command") if isinstance(call.input.get("command"), str) else ""
            )
            if not (only_inspects(command) or command.split()[:1] == ["mkdir"]):
                return None  # a command changed something too: ambiguous
    if not edits:
        return None
    wanted = _terms(f"{error}\n{text[:4000]}")
    files: dict[str, list[str]] = {}
    for call in edits:
        path = _path(call)
        if not path or not wanted & _terms(f"{path} {changed_lines(call, 2000)}"):
            return None
        files.setdefault(path, []).append(changed_lines(call))
    if len(files) > 3:
        return None
    names = [_shown(p) for p in files]
    fix = "edit " + (
        " and ".join(f"`{n}`" for n in names)
        if len(names) <= 2
        else f"`{names[0]}`, `{names[1]}` and `{names[2]}`"
    )
    detail = "; ".join(
        f"Edited {p}" + (f": {' | '.join(x for x in ls if x)[:300]}" if any(ls) else "")
        for p, ls in files.items()
    )
    return fix, detail


def _path(call) -> str:
    for key in ("file_path", "notebook_path", "path"):
        v = call.input.get(key)
        if isinstance(v, str) and v.strip():
            return v.strip()
    return ""


_PLACES = frozenset(
    "config conf capabilities settings src lib app assets public scripts "
    "static templates migrations".split()
)


def _shown(path: str) -> str:
    parts = path.replace("\\", "/").split("/")
    return "/".join(parts[-2:]) if len(parts) > 1 and parts[-2] in _PLACES else parts[-1]
