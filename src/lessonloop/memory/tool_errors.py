"""Error and failure lines a tool call reported, read from the shapes tools answer in.

``tool_errors`` finds error/failure lines in what a command or tool *reported*, never in file
contents that were merely read (``Read``/``Grep``/``cat``/``grep``... output is not a failure
just because it contains "Error"; exit status 1 of ``grep`` or ``diff`` means "no match" or
"differs"). ``tool_kind`` sorts tools into bash, read, edit and other; ``subject_of`` says what a
call was about; ``block_text`` reads a result's content blocks. Every stored string is redacted
before it is capped. The hook calls this on every failing tool call: standard library only,
never raising.
"""

from __future__ import annotations

import json
import re
from collections import namedtuple

from ..lazyre import lazy as _lazy
from .commands import NEUTRAL_PROGRAMS, view_programs
from .error_lines import (
    BARE_EXCEPTION_LINE,
    EXCEPTION_LINE,
    EXIT_CODE_LINE,
    last_meaningful_line,
    line_priority,
    normalize_error,
    pick_error_lines,
    rank_error_lines,
)
from .text_limits import cap_text, redact_and_cap, scan_window, text_or_empty

__all__ = [
    "ErrorSignal",
    "LINE_MAX",
    "SUBJECT_MAX",
    "block_text",
    "subject_of",
    "tool_errors",
    "tool_kind",
]


LINE_MAX = 500  # ErrorSignal.line
SUBJECT_MAX = 300  # ErrorSignal.subject

# Named tuples, not dataclasses: importing dataclasses costs a hook ~10 ms.
ErrorSignal = namedtuple("ErrorSignal", "tool line normalized subject")


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


_TOOL_ERROR_TAG = _lazy(r"</?tool_use_error>")
# exit status 1 of these means "no match" / "differs", not failure
_BENIGN_EXIT1 = {
    "grep",
    "egrep",
    "fgrep",
    "zgrep",
    "rg",
    "ag",
    "ack",
    "diff",
    "cmp",
    "test",
    "[",
    "[[",
    "which",
    "find",
    "comm",
    "false",
    "git diff",
    "git grep",
}

_BASH_TOOLS = {
    "bash",
    "bashoutput",
    "shell",
    "powershell",
    "run_shell_command",
    "execute_command",
    "exec_command",
    "terminal",
}
# tools whose results are file or web contents, or prose: only a flagged failure counts
_READ_TOOLS = {
    "read",
    "grep",
    "glob",
    "ls",
    "notebookread",
    "webfetch",
    "websearch",
    "task",
    "agent",
    "todoread",
    "todowrite",
    "exitplanmode",
    "listmcpresourcestool",
    "readmcpresourcetool",
    "read_file",
    "view",
    "search",
    "skill",
    "slashcommand",
}
# tools whose response objects echo file contents (never scanned, only flags and "error")
_EDIT_TOOLS = {
    "edit",
    "write",
    "multiedit",
    "notebookedit",
    "str_replace_based_edit_tool",
    "write_file",
    "create_file",
}
_PATH_KEYS = ("file_path", "notebook_path", "path", "filePath", "file", "url", "uri")


def tool_kind(tool: str) -> str:
    name = tool.strip().lower()
    if name in _BASH_TOOLS:
        return "bash"
    if name in _READ_TOOLS:
        return "read"
    if name in _EDIT_TOOLS:
        return "edit"
    return "other"


def _summary(tool_input: object) -> str:
    if isinstance(tool_input, str):
        return tool_input
    if not isinstance(tool_input, dict):
        return ""
    parts = []
    for key, value in list(tool_input.items())[:8]:
        if isinstance(value, (str, int, float, bool)):
            parts.append(f"{key}={str(value)[:120]}")
        elif isinstance(value, (list, dict)):
            parts.append(f"{key}=<{type(value).__name__} of {len(value)}>")
    return " ".join(parts)


def subject_of(tool_name: str, tool_input: object) -> str:
    """What a call was about: the Bash command, or the file/url, or a short input summary.

    Redacted, then capped at 300 characters.
    """
    try:
        tool = text_or_empty(tool_name)
        if isinstance(tool_input, dict):
            if tool_kind(tool) == "bash" or "command" in tool_input:
                cmd = tool_input.get("command")
                if isinstance(cmd, list):
                    cmd = " ".join(str(part) for part in cmd)
                if isinstance(cmd, str) and cmd.strip():
                    return redact_and_cap(cmd.strip()[: SUBJECT_MAX + 4096], SUBJECT_MAX)
            for key in _PATH_KEYS:
                path_value = tool_input.get(key)
                if isinstance(path_value, str) and path_value.strip():
                    if tool.lower() == "grep" and isinstance(tool_input.get("pattern"), str):
                        return redact_and_cap(
                            f"{tool_input['pattern']} in {path_value}"[: SUBJECT_MAX + 4096],
                            SUBJECT_MAX,
                        )
                    return redact_and_cap(path_value.strip()[: SUBJECT_MAX + 4096], SUBJECT_MAX)
            if isinstance(tool_input.get("pattern"), str):
                return redact_and_cap(tool_input["pattern"][: SUBJECT_MAX + 4096], SUBJECT_MAX)
        return redact_and_cap(_summary(tool_input)[: SUBJECT_MAX + 4096], SUBJECT_MAX)
    except Exception:  # noqa: BLE001
        return ""


def block_text(value: object, depth: int = 0) -> str:
    """Text of a string, a list of content blocks, or a {"text"}/{"content"} object."""
    if depth > 4:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [block_text(v, depth + 1) for v in value[:200]]
        return "\n".join(p for p in parts if p)
    if isinstance(value, dict):
        if value.get("type") in ("image", "document"):
            return ""
        for key in ("text", "content", "output", "result", "message"):
            if key in value:
                text = block_text(value[key], depth + 1)
                if text:
                    return text
    return ""


class _Response:
    """A tool response in the few shapes detection cares about (mutable while parsed)."""

    __slots__ = ("stdout", "stderr", "text", "error", "flagged", "exit_code")

    def __init__(self) -> None:
        self.stdout = self.stderr = ""
        self.text = ""  # a tool's own result text (non-Bash), or Bash output not split
        self.error = ""  # an explicit error message
        self.flagged = False  # is_error / isError / success false
        self.exit_code: int | None = None


def _parse_response(kind: str, response: object) -> _Response:
    parsed = _Response()
    if response is None:
        return parsed
    if isinstance(response, str):
        parsed.text = response
    elif isinstance(response, list):
        parsed.text = block_text(response)
    elif isinstance(response, dict):
        for key in ("is_error", "isError"):
            if response.get(key) is True:
                parsed.flagged = True
        if response.get("success") is False or response.get("ok") is False:
            parsed.flagged = True
        status = response.get("status")
        if isinstance(status, str) and status.lower() in ("failed", "error", "failure"):
            parsed.flagged = True
        err = response.get("error")
        if isinstance(err, str) and err.strip():
            parsed.error = err
        elif isinstance(err, dict):
            parsed.error = block_text(err) or cap_text(json.dumps(err, default=str)[:2000], 2000)
        for key in ("exit_code", "returncode", "exitCode", "exit_status", "returnCode"):
            code = _int(response.get(key))
            if code is not None:
                parsed.exit_code = code
                break
        if kind == "bash" or "stdout" in response or "stderr" in response:
            parsed.stdout = text_or_empty(response.get("stdout")) or block_text(
                response.get("output")
            )
            parsed.stderr = text_or_empty(response.get("stderr"))
            if not parsed.stdout and not parsed.stderr and kind == "bash":
                parsed.text = block_text(response.get("content"))
        elif kind == "other":
            parsed.text = (
                block_text(response.get("content"))
                or block_text(response.get("result"))
                or block_text(response.get("output"))
            )
        elif kind == "read" and parsed.flagged:
            parsed.text = block_text(response.get("content"))
        # "edit": response objects echo file contents; only flags and "error" count
        if parsed.flagged and not parsed.text and not parsed.error:
            parsed.text = block_text(response.get("content")) or block_text(response.get("message"))
    return parsed


def _strip_exit_line(text: str) -> tuple[str, int | None]:
    """Claude Code's failed Bash results start with "Exit code N"."""
    head = text[:200].lstrip()
    m = EXIT_CODE_LINE.match(head.split("\n", 1)[0]) if head else None
    if not m:
        return text, None
    rest = head.split("\n", 1)[1] if "\n" in head else ""
    return rest + text[200:] if len(text) > 200 else rest, int(m.group(1))


def _is_tool_error_text(text: str) -> bool:
    """A tool's string result that is itself an error report."""
    head = text.lstrip()[:300]
    if not head:
        return False
    if head.startswith("<tool_use_error>"):
        return True
    first = head.split("\n", 1)[0].strip()
    return bool(
        re.match(r"^(?:error|fatal|failed|failure)\b\s*[:!]", first, re.I)
        or EXCEPTION_LINE.match(first)
        and not BARE_EXCEPTION_LINE.match(first)
    )


def _first_lines(text: str, limit: int = 2) -> list[tuple[int, int, str]]:
    out = []
    for pos, line in enumerate(_TOOL_ERROR_TAG.sub("", text[:20_000]).splitlines()):
        stripped = line.strip()
        if stripped:
            out.append((0, pos, stripped[:4000]))
            if len(out) >= limit:
                break
    return out


def _bash_lines(command: str, response: _Response) -> list[str]:
    text, code_in_text = _strip_exit_line(response.text) if response.text else ("", None)
    code = response.exit_code if response.exit_code is not None else code_in_text
    view, programs = view_programs(command[:4000]) if command else (False, frozenset())
    benign = (
        view and code == 1 and bool(programs & _BENIGN_EXIT1 or not programs - NEUTRAL_PROGRAMS)
    )
    failed = (response.flagged or (code is not None and code != 0)) and not benign
    ranked: list[tuple[int, int, str]] = []
    if response.error:
        ranked += [(0, -1, line) for _, _, line in _first_lines(response.error, 1)]
    if view:
        # output is file or command contents: only the programs' own complaints count
        if code == 1 and benign:
            return []
        prefixes = tuple(
            f"{p}:"
            for p in programs | {"bash", "sh", "zsh", "/bin/sh", "/bin/bash"}
            if " " not in p
        )
        stderr_ranked = rank_error_lines(response.stderr) if response.stderr else []
        ranked += stderr_ranked
        for source in (text, response.stdout) if failed or response.stderr else ():
            for pos, line in enumerate(scan_window(source).splitlines()):
                stripped = line.strip()
                if stripped.startswith(prefixes) and line_priority(stripped, stripped) is not None:
                    ranked.append((0, pos, stripped[:4000]))
        if failed and not ranked:
            last = last_meaningful_line(response.stderr, text) or (
                f"Exit code {code}" if code is not None else ""
            )
            if last:
                ranked.append((3, 0, last))
    else:
        for source in (response.stderr, response.stdout, text):
            if source:
                ranked += rank_error_lines(source)
        if failed and not ranked:
            last = (
                last_meaningful_line(response.stderr, text)
                or (f"Exit code {code}" if code is not None else "")
                or last_meaningful_line(response.stdout)
            )
            ranked.append((3, 0, last))
    ranked = [t for t in ranked if t[2]]
    if (
        not failed
        and ranked
        and all(t[0] >= 2 for t in ranked)
        and not response.stderr
        and code is None
    ):
        # weak hints (e.g. "0 errors", "ERROR:" in a program's log) without any failure sign:
        # keep only those that clearly report failures
        ranked = [t for t in ranked if re.search(r"\bfailed\b|\*\*\*|non-zero|Killed", t[2])]
    return pick_error_lines(ranked)


def tool_errors(tool_name: str, tool_input: object, tool_response: object) -> list[ErrorSignal]:
    """Error and failure lines a tool call reported (at most 5, most informative first).

    Only from results that failed or report failures: Bash output and exit status, results
    flagged ``is_error``, error strings returned by tools. Never from contents that were read
    (Read/Grep/Glob/WebFetch results, ``cat``/``grep``/``git log`` output). Never raises.
    """
    try:
        return _tool_errors(text_or_empty(tool_name) or "tool", tool_input, tool_response)
    except Exception:  # noqa: BLE001 - a hook must never fail because of a payload's shape
        return []


def _tool_errors(tool: str, tool_input: object, tool_response: object) -> list[ErrorSignal]:
    kind = tool_kind(tool)
    if (
        kind == "other"
        and isinstance(tool_input, dict)
        and isinstance(tool_input.get("command"), str)
        and tool.lower().endswith(("bash", "shell", "command"))
    ):
        kind = "bash"
    response = _parse_response(kind, tool_response)
    if kind == "bash":
        command = ""
        if isinstance(tool_input, dict):
            command_value = tool_input.get("command")
            command = (
                command_value
                if isinstance(command_value, str)
                else " ".join(map(str, command_value))
                if isinstance(command_value, list)
                else ""
            )
        elif isinstance(tool_input, str):
            command = tool_input
        lines = _bash_lines(command, response)
    else:
        if (
            response.text
            and not response.flagged
            and kind != "edit"
            and response.text.lstrip().startswith("<tool_use_error>")
        ):
            response.flagged = True
        if (
            kind in ("other", "edit")
            and response.text
            and not response.flagged
            and _is_tool_error_text(response.text)
        ):
            response.flagged = True
        ranked: list[tuple[int, int, str]] = []
        if response.error:
            ranked += _first_lines(response.error, 2)
        if response.flagged:
            body = response.text or response.stderr
            if body:
                ranked += _first_lines(body, 1)
                if kind == "other":
                    ranked += [(p + 1, pos, s) for p, pos, s in rank_error_lines(body[:20_000])]
            if not ranked:
                ranked.append((3, 0, f"{tool} failed"))
        lines = pick_error_lines(ranked)
    if not lines:
        return []
    subject = subject_of(tool, tool_input)
    out = []
    for line in lines:
        clean = redact_and_cap(line[: LINE_MAX + 4096], LINE_MAX)
        out.append(
            ErrorSignal(
                tool=redact_and_cap(tool[: 100 + 4096], 100),
                line=clean,
                normalized=normalize_error(clean),
                subject=subject,
            )
        )
    return out
