"""What the model is shown each step, and its answer parsed into exactly one change: a
unified diff (a fenced ``diff`` block, or a bare one) or a command (``{"command": "..."}``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

OUTPUT_CHARS = 3000  # of the verifier's output shown (its end: where failures are reported)
STEPS_SHOWN = 6  # the most recent steps described in the prompt

SYSTEM = (
    "You are working toward a goal in a software workspace. Each turn you make exactly ONE "
    "change, and a verifier command then checks the workspace; only the verifier decides "
    "when the goal is met.\n"
    "Answer with ONE of:\n"
    "1. a unified diff in a ```diff fenced block, with paths relative to the workspace, "
    "e.g.\n```diff\n--- a/path/file.py\n+++ b/path/file.py\n@@ -3,1 +3,1 @@\n-old line\n"
    "+new line\n```\n"
    '2. a JSON object {"command": "..."} to run a shell command in the workspace (only the '
    "allowed commands are run).\n"
    "Copy the context and removed lines exactly from the files shown. No other text is needed."
)


@dataclass
class Proposal:
    kind: str  # "patch", "command" or "invalid"
    text: str  # the patch, the command, or why the answer was not understood


_FENCE = re.compile(r"```([A-Za-z0-9_-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)


def parse(answer: str) -> Proposal:
    """The one change in ``answer``; ``invalid`` (with the reason) when there is none."""
    blocks = _FENCE.findall(answer or "")
    for lang, body in blocks:
        if lang.lower() in ("diff", "patch", "udiff") or (
            body.lstrip().startswith(("--- ", "diff --git")) and "\n+++ " in body
        ):
            return Proposal("patch", body)
    for _lang, body in blocks:
        command = _command(body)
        if command is not None:
            return Proposal("command", command)
    stripped = (answer or "").strip()
    command = _command(stripped)
    if command is not None:
        return Proposal("command", command)
    start = stripped.find("--- ")
    if start != -1 and "\n+++ " in stripped[start:] and "\n@@" in stripped[start:]:
        return Proposal("patch", stripped[start:] + "\n")
    return Proposal(
        "invalid",
        'the answer held neither a ```diff block nor a {"command": ...} object',
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
    allowed = ", ".join(f"`{a}`" for a in allow) if allow else "none (answer with a diff)"
    parts = [
        f"Goal: {goal}",
        f"Verifier: `{verifier}` (the goal is met when it exits 0)",
        f"Allowed commands: {allowed}",
        f"\nThe verifier's last run exited {last_exit}; the end of its output:\n"
        f"{last_output[-OUTPUT_CHARS:]}",
        f"\nThe workspace:\n{overview}",
    ]
    if steps:
        parts.append("\nYour previous steps (most recent last):")
        for step in steps[-STEPS_SHOWN:]:
            what = step["proposal"][:600]
            parts.append(
                f"- step {step['step_index']} ({step['kind']}, "
                f"{'applied' if step['applied'] else 'not applied'}): {step['message']}\n{what}"
            )
    parts.append("\nPropose ONE change now.")
    return "\n".join(parts)
