"""What the model is shown each step, and its answer parsed into exactly one change: a
unified diff (a fenced ``diff`` block, or a bare one) or a command (``{"command": "..."}``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

OUTPUT_CHARS = 3000  # of the verifier's output shown (its end: where failures are reported)
STEPS_SHOWN = 6  # the most recent steps described in the prompt

_FILE = (
    "the whole new content of ONE file: a line `FILE: path/of/the/file` (a file shown below, "
    "or a new one), then the complete file in a fenced block.\n"
)
_DIFF = (
    "a unified diff of the workspace's files in a ```diff fenced block: a line `--- a/FILE` "
    "and a line `+++ b/FILE` naming a file shown below, an `@@` line, then the lines: a space "
    "before each unchanged line, `-` before each line removed, `+` before each line added.\n"
)


def system(allow: list[str]) -> str:
    """The rules; a mission that allows no command asks for a diff only (a small model offered
    a command tends to rerun the verifier)."""
    head = (
        "You are working toward a goal in a software workspace. Each turn you make exactly ONE "
        "change to the files; then the verifier command runs by itself and checks the "
        "workspace. Only the verifier decides when the goal is met: never run it yourself.\n"
    )
    tail = "Change only what the goal needs; keep everything else exactly as shown."
    answers = [_FILE, _DIFF]
    if allow:
        answers.append(
            'a JSON object {"command": "..."} to run one of the allowed commands in the '
            "workspace.\n"
        )
    listed = "".join(f"{i}. {text}" for i, text in enumerate(answers, 1))
    return head + "Answer with ONE of:\n" + listed + tail


@dataclass
class Proposal:
    kind: str  # "patch", "file", "command" or "invalid"
    text: str  # the patch; the file's name, a newline, its new content; the command; or why
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


def parse(answer: str) -> Proposal:
    """The one change in ``answer``; ``invalid`` (with the reason) when there is none."""
    answer = answer or ""
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
    stripped = answer.strip()
    command = _command(stripped)
    if command is not None:
        return Proposal("command", command)
    begin = stripped.find("--- ")
    if begin != -1 and "\n+++ " in stripped[begin:] and "\n@@" in stripped[begin:]:
        return Proposal("patch", stripped[begin:] + "\n")
    return Proposal(
        "invalid",
        "the answer held neither a ```diff block, a file's new content after its name, nor a "
        '{"command": ...} object',
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


def prompt(
    goal: str,
    allow: list[str],
    verifier: str,
    last_exit: int | None,
    last_output: str,
    overview: str,
    steps: list[dict],
) -> str:
    """The user message of one step: goal, verifier result, workspace, previous steps."""
    parts = [
        f"Goal: {goal}",
        f"Verifier: `{verifier}` (it runs after your change; the goal is met when it exits 0)",
    ]
    if allow:
        parts.append("Allowed commands: " + ", ".join(f"`{a}`" for a in allow))
    parts.append(f"\nThe workspace:\n{overview}")
    if steps:
        parts.append("\nYour previous steps (most recent last):")
        for step in steps[-STEPS_SHOWN:]:
            what = step["proposal"][:600]
            parts.append(
                f"- step {step['step_index']} ({step['kind']}, "
                f"{'applied' if step['applied'] else 'not applied'}): {step['message']}\n{what}"
            )
    parts.append(  # last: what a small model reads right before it answers
        f"\nThe verifier's last run exited {last_exit}; the end of its output:\n"
        f"{last_output[-OUTPUT_CHARS:]}"
    )
    parts.append(
        "\nMake ONE change now that brings the goal closer. Answer in this format:\n"
        "FILE: <path of the file you change>\n```\n<its complete corrected content>\n```"
        + ("\n(or a ```diff block)" if not allow else "\n(or a ```diff block, or a command)")
    )
    return "\n".join(parts)
