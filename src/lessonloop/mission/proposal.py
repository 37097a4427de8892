"""What the model is shown each step, and its answer parsed into exactly one change:
search/replace blocks (``replace``), a unified diff (a fenced ``diff`` block, or a bare one), a
file's whole new content, or a command (``{"command": "..."}``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from . import merge, replace

OUTPUT_CHARS = 2000  # of the verifier's output shown (its end: where failures are reported)
STEPS_SHOWN = 6  # the most recent steps described in the prompt


def system(allow: list[str]) -> str:
    """Short on purpose: a small model given a page of answer rules copies the code back
    unchanged; told only its job, it reasons about the bug. The answer format is at the end
    of each prompt; search/replace blocks, diffs and whole files are understood too."""
    text = "You fix bugs in code."
    if allow:
        text += ' You may instead run one allowed command: answer {"command": "..."}.'
    return text


@dataclass
class Proposal:
    kind: str  # "replace", "patch", "file", "code", "command" or "invalid"
    text: str  # the blocks; the patch; the file's name, a newline, its new content; definitions
    # (code) for the file that has them; the command; or why
    # the answer was not understood


_FENCE = re.compile(r"```([^\n`]*)\n(.*?)(?:```|\Z)", re.S)
_NAMED = re.compile(r"(?:^|\s|`|\*)([\w.-]+(?:/[\w.-]+)*\.\w+)`?\**\s*:?\s*$")


def _file_name(info: str, before: str) -> str | None:
    """The file a fenced block replaces: named in the fence (```python calc.py) or on the last
    non-empty line before it (``FILE: calc.py``)."""
    words = info.replace(":", " ").split()
    for word in words[1:] if len(words) > 1 else words:
        if "." in word.strip("."):
            return word
    lines = [
        line.strip().strip("`").strip() or "```"
        for line in before.splitlines()
        if line.strip() and not line.strip().startswith("```")
    ]
    if lines:
        match = _NAMED.search(lines[-1].strip())
        if match:
            return match.group(1)
    return None


_PROSE = re.compile(
    r"`([^`\n]{3,})`\s+(?:should (?:be|read|become)|(?:is|are) (?:changed|corrected) to|to|with|"
    r"into|->|→)\s+`([^`\n]+)`"
)
_DOUBLED = re.compile(r"(?im)^(FILE:[^\n]*\n)```[^\S\n]*\n```(\w*)\n")


def _undoubled(answer: str) -> str:
    """A doubled opening fence after a file's name (``FILE: x`` then two fence lines), as
    small models write, as one; a ``FILE:`` line inside a block is left alone."""

    def fix(match: re.Match[str]) -> str:
        inside = answer[: match.start()].count("```") % 2 == 1
        return match.group(0) if inside else f"{match.group(1)}```{match.group(2)}\n"

    return _DOUBLED.sub(fix, answer)


def replace_blocks(text: str) -> list[replace.Block]:
    """The search/replace blocks in ``text``, each with the file named before it."""
    return replace.parse(text, lambda before: _file_name("", before))


def parse(answer: str) -> Proposal:
    """The one change in ``answer``; ``invalid`` (with the reason) when there is none."""
    answer = _undoubled(answer or "")
    edits = replace_blocks(answer)
    if edits:
        return Proposal("replace", "\n\n".join(edit.render() for edit in edits))
    blocks = [(m.group(1).strip(), m.group(2), m.start()) for m in _FENCE.finditer(answer)]
    for info, body, _ in blocks:
        lang = info.split()[0].lower() if info else ""
        if lang in ("diff", "patch", "udiff") or (
            body.lstrip().startswith(("--- ", "diff --git")) and "\n+++ " in body
        ):
            return Proposal("patch", body)
    for _info, body, _ in blocks:
        command = _command(body)
        if command is not None:
            return Proposal("command", command)
    for info, body, start in blocks:
        first, _, rest = body.partition("\n")
        named = _NAMED.search(first.strip()) if first.strip().upper().startswith("FILE") else None
        if named is not None and rest.strip():  # the name inside the block, on its first line
            return Proposal("file", f"{named.group(1)}\n{rest}")
        name = _file_name(info, answer[:start])
        if name is not None and body.strip():
            return Proposal("file", f"{name}\n{body}")
    for _info, body, _ in blocks:  # code without a file's name: its definitions say which
        if merge.definitions(body.splitlines()):
            return Proposal("code", body)
    stripped = answer.strip()
    command = _command(stripped)
    if command is not None:
        return Proposal("command", command)
    begin = stripped.find("--- ")
    if begin != -1 and "\n+++ " in stripped[begin:] and "\n@@" in stripped[begin:]:
        return Proposal("patch", stripped[begin:] + "\n")
    said = _PROSE.search(answer)  # "`x = 1` should be `x = 2`": a one-line search/replace
    if said is not None and said.group(1).strip() != said.group(2).strip():
        edit = replace.Block(None, [said.group(1)], [said.group(2)])
        return Proposal("replace", edit.render())
    return Proposal(
        "invalid",
        "no code found in the answer: write `FILE: <path>`, then the corrected code in a ``` "
        'block (search/replace blocks, a ```diff block or a {"command": ...} object are '
        "understood too)",
    )


def _command(text: str) -> str | None:
    start, end = text.find("{"), text.rfind("}")
    if start == -1 or end <= start:
        return None
    try:
        value = json.loads(text[start : end + 1])
    except ValueError:
        return None
    if isinstance(value, dict) and isinstance(value.get("command"), str):
        return value["command"].strip() or None
    return None


def _tried(step: dict) -> str:
    """One previous step, short: what it changed and what came of it."""
    if step["kind"] == "replace":
        what = step["proposal"]
    elif step["kind"] == "invalid":
        what = ""
    else:
        what = step["proposal"][:400]
    if step.get("reverted"):
        why = step["message"].partition("; reverted: ")[2] or "it made things worse"
        result = f"UNDONE ({why}); the verifier said: " + " ".join(
            (step["verifier_output"] or "").split()[-40:]
        )
    elif step["applied"] and step["verifier_exit"] not in (None, 0):
        result = "applied, but the verifier still fails"
    else:
        result = step["message"]
    head = f"- step {step['step_index']} ({step['kind']}): {result}"
    return head + (f"\n{what[:800]}" if what else "")


def prompt(
    goal: str,
    allow: list[str],
    verifier: str,
    last_exit: int | None,
    last_output: str,
    overview: str,
    steps: list[dict],
    focus: str = "",
    lessons: list[str] | None = None,
) -> str:
    """The user message of one step: goal, workspace, lessons, what was tried, the verifier's
    result and the lines it points at; last, the answer format (what a small model reads
    right before it answers)."""
    parts = [
        f"Goal: {goal}",
        f"Verifier: `{verifier}` (it runs after your change; the goal is met when it exits 0)",
    ]
    if allow:
        parts.append("Allowed commands: " + ", ".join(f"`{a}`" for a in allow))
    parts.append(f"\nThe workspace:\n{overview}")
    if lessons:
        parts.append("\nLessons from earlier missions in this project:")
        parts += [f"- {lesson}" for lesson in lessons]
    if steps:
        parts.append("\nWhat you tried before (do not repeat a change that did not work):")
        parts += [_tried(step) for step in steps[-STEPS_SHOWN:]]
    parts.append(
        f"\nThe verifier's last run exited {last_exit}; the end of its output:\n"
        f"{last_output[-OUTPUT_CHARS:]}"
    )
    if focus:
        parts.append(f"\nWhere it fails (line numbers are for reference only):\n{focus}")
    parts.append(
        "\nFix the code so that the verifier passes. Say in a sentence what is wrong, then "
        "write the corrected function(s) in full after the file's name:\nFILE: <path of the "
        "file>\n```\n<the corrected code>\n```"
        + ("" if not allow else '\n(or, to run an allowed command: {"command": "..."})')
    )
    return "\n".join(parts)
