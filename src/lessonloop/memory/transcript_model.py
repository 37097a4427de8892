"""What a transcript holds, and the questions every reader of its calls asks.

A tool call, a prompt, what the user said outside prompts, a text the agent wrote, a run of a
project hook, a correction; and of a call: its file, its command, what kind of step it is
(``pair_key``), its error line and the key equal for recurrences of that error, whether it
failed or succeeded (its own status, never a word in its output; a refused or interrupted call
is neither).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .commands import command_head
from .error_lines import normalize_error
from .feedback import Feedback
from .tool_errors import ErrorSignal, tool_kind


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
    echoed: str = ""  # a task or script runner's success: the first lines it printed


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
    ``detail`` the chosen option's description) or a command the user ran themselves (``kind``
    "command"; ``detail`` the failure its output reported, if any)."""

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


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(1, limit - 1)].rstrip() + "\u2026"


def base_name(path: str) -> str:
    trimmed = path.rstrip("/\\")
    return re.split(r"[/\\]", trimmed)[-1] or trimmed


def file_of(call: ToolCall) -> str:
    for key in ("file_path", "notebook_path", "path", "filePath"):
        value = call.input.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def command_of(call: ToolCall) -> str:
    value = call.input.get("command")
    return value if isinstance(value, str) else ""


# package managers that print a script's command before running it ("> test:pr\n> vitest run"),
# and mise, which prints each task's ("[test] $ go test ./...")
SCRIPT_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun", "mise"})
EDIT_TOOLS = {"edit", "write", "multiedit", "notebookedit", "str_replace_based_edit_tool"}


def pair_key(call: ToolCall) -> tuple[str, str]:
    """What "doing the same kind of thing" means: same command head, or same tool and file."""
    if tool_kind(call.name) == "bash":
        return ("bash", command_head(command_of(call)))
    name = call.name.lower()
    family = "edit" if name in EDIT_TOOLS else name
    path = file_of(call)
    return (family, path) if path else (family, "")


def error_line(call: ToolCall) -> str:
    """The failure's first error line as reported (already redacted)."""
    if call.errors:
        return call.errors[0].line
    return call.result.strip().split("\n", 1)[0] if call.result else ""


def error_key(call: ToolCall) -> str:
    """The normalized error: equal for recurrences of one error (the dedupe key)."""
    return call.errors[0].normalized if call.errors else normalize_error(error_line(call))


EXCEPTION_TYPE = re.compile(
    r"^(?:[\w.]*(?:Error|Exception|Warning)|error|fatal|ERROR|FATAL)"
    r"(?:\[[\w-]+\])?:\s+(?=\S)"
)


def failed(call: ToolCall) -> bool:
    return call.is_error and call.completed and not call.rejected


def succeeded(call: ToolCall) -> bool:
    return call.completed and not call.is_error and not call.rejected
