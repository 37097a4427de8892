"""Where the verifier's failure points, shown to the model with line numbers: the workspace
lines its output names (a Python traceback's ``File "x.py", line 12``, a compiler's or
pytest's ``x.py:12:``) and the functions called on those lines, found by their definition.

Why: a small model shown whole files and a long log rewrites what it sees first; shown the
failing assertion next to the function it calls, it edits that function."""

from __future__ import annotations

import re
from pathlib import Path

from . import workspace

_PY_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_COLON = re.compile(r"(?:^|[\s(])([\w./-]+\.\w+):(\d+)(?::\d+)?")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_DEFINE = (
    r"^\s*(?:async\s+def|def|class|function|func|fn|pub\s+fn|static\s+\w+)\s+{name}\b",
    r"^\s*(?:export\s+)?(?:const|let|var)\s+{name}\s*=",
)
_NOT_CALLS = {"if", "for", "while", "return", "print", "len", "str", "int", "assert", "range"}
WINDOW = 3  # lines either side of a failing line
MAX_LOCATIONS = 3
MAX_DEFINITION_LINES = 30
MAX_CHARS = 3000


def _relative(root: Path, name: str, known: set[str]) -> str | None:
    if name in known:
        return name
    try:
        path = Path(name)
        rel = path.resolve().relative_to(root.resolve()).as_posix() if path.is_absolute() else ""
    except (OSError, ValueError):
        return None
    return rel if rel in known else None


def locations(root: Path, output: str) -> list[tuple[str, int, str]]:
    """The workspace files and lines the output names, the last (innermost) first, each with
    the error that follows it (a traceback's exception line; "" when none)."""
    known = set(workspace.files(root))
    found: dict[tuple[str, int], str] = {}
    for pattern in (_PY_FRAME, _COLON):
        for match in pattern.finditer(output):
            name = _relative(root, match.group(1), known)
            if name is not None:
                error = _error_after(output, match.end()) if pattern is _PY_FRAME else ""
                found.pop((name, int(match.group(2))), None)  # ordered by last mention
                found[(name, int(match.group(2)))] = error
    places = [(name, line, error) for (name, line), error in found.items()]
    return list(reversed(places))[:MAX_LOCATIONS]


def _error_after(output: str, at: int) -> str:
    """The exception a traceback frame leads to: the next line not indented."""
    for line in output[at:].splitlines()[1:12]:
        if line.strip() and not line[:1].isspace():
            return line.strip()[:300] if not line.startswith("Traceback") else ""
    return ""


def _numbered(lines: list[str], start: int, end: int, mark: int | None = None) -> str:
    return "\n".join(
        f"{'>' if i + 1 == mark else ' '}{i + 1:4}| {lines[i]}" for i in range(start, end)
    )


def _definition(lines: list[str], name: str) -> tuple[int, int] | None:
    for pattern in _DEFINE:
        regex = re.compile(pattern.format(name=re.escape(name)))
        for i, line in enumerate(lines):
            if regex.match(line):
                indent = len(line) - len(line.lstrip())
                end = i + 1
                while end < len(lines) and end - i < MAX_DEFINITION_LINES:
                    text = lines[end]
                    if text.strip() and len(text) - len(text.lstrip()) <= indent:
                        end += text.strip() in ("}", "};", "end")  # a closing line: included
                        break
                    end += 1
                while end > i + 1 and not lines[end - 1].strip():
                    end -= 1
                return i, end
    return None


def _lines(root: Path, name: str) -> list[str]:
    try:
        return (root / name).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []


def focus(root: Path, output: str) -> str:
    """The failing lines and the definitions they call, numbered; "" when the output names no
    workspace line."""
    from ..safety.redact import redact

    places = locations(root, output)
    if not places:
        return ""
    parts: list[str] = []
    called: list[str] = []
    for name, line, error in places:
        lines = _lines(root, name)
        if not 1 <= line <= len(lines):
            continue
        start, end = max(0, line - 1 - WINDOW), min(len(lines), line + WINDOW)
        parts.append(
            f"{name}, line {line} (in the verifier's output):\n"
            + _numbered(lines, start, end, line)
            + (f"\nThe error there: {error}" if error else "")
        )
        called += [c for c in _CALL.findall(lines[line - 1]) if c not in _NOT_CALLS]
    shown = {name for name, _, _ in places}
    for function in dict.fromkeys(called):
        for name in workspace.files(root):
            lines = _lines(root, name)
            span = _definition(lines, function)
            if span is not None and not (name in shown and _inside(places, name, span)):
                parts.append(f"{name}, where `{function}` is defined:\n" + _numbered(lines, *span))
                break
    return redact("\n\n".join(parts))[:MAX_CHARS]


def _inside(places: list[tuple[str, int, str]], name: str, span: tuple[int, int]) -> bool:
    return any(n == name and span[0] < line <= span[1] for n, line, _ in places)
