"""A "whole file" answer that is only a fragment, merged by definitions.

Small models asked for a file's complete content often write only the function they fixed
(and the import it needs). Written as the file, that fragment deletes the rest of it. When
the answer lacks some of the file's top-level definitions but redefines others, each of its
top-level definitions (``def``, ``async def``, ``class``) replaces the one of the same name,
and its import lines the file does not have are added after the file's imports."""

from __future__ import annotations

import re
from pathlib import Path

_TOP = re.compile(r"^(?:async\s+def|def|class)\s+([A-Za-z_]\w*)")
_IMPORT = re.compile(r"^(?:import\s+\w|from\s+[\w.]+\s+import\s)")


def definitions(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Each top-level definition's name and its lines [start, end), decorators included."""
    found: dict[str, tuple[int, int]] = {}
    for i, line in enumerate(lines):
        match = _TOP.match(line)
        if not match:
            continue
        start = i
        while start > 0 and lines[start - 1].startswith("@"):
            start -= 1
        end = i + 1
        while end < len(lines) and (not lines[end].strip() or lines[end][:1] in (" ", "\t")):
            end += 1
        while end > i + 1 and not lines[end - 1].strip():
            end -= 1
        found.setdefault(match.group(1), (start, end))
    return found


def merge(old: str, answer: str, whole: bool = True) -> str | None:
    """``old`` with ``answer``'s definitions and imports merged in; None when ``answer``
    redefines none of them, or (``whole``: it may be the whole file) keeps all of them."""
    old_lines, new_lines = old.splitlines(), answer.splitlines()
    old_defs, new_defs = definitions(old_lines), definitions(new_lines)
    if not set(new_defs) & set(old_defs) or (whole and set(old_defs) <= set(new_defs)):
        return None
    result = list(old_lines)
    for name, (start, end) in sorted(
        ((n, old_defs[n]) for n in new_defs if n in old_defs), key=lambda item: -item[1][0]
    ):
        begin, finish = new_defs[name]
        result[start:end] = new_lines[begin:finish]
    extra = [line for line in new_lines if _IMPORT.match(line) and line not in old_lines]
    if extra:
        imports = [i for i, line in enumerate(result) if _IMPORT.match(line)]
        at = imports[-1] + 1 if imports else _after_docstring(result)
        result[at:at] = extra + ([""] if not imports else [])
    return "\n".join(result) + "\n"


def _after_docstring(lines: list[str]) -> int:
    """The line after a module's leading comments and docstring."""
    i = 0
    while i < len(lines) and (not lines[i].strip() or lines[i].startswith("#")):
        i += 1
    if i < len(lines) and lines[i].lstrip().startswith(('"""', "'''")):
        quote = lines[i].lstrip()[:3]
        if lines[i].count(quote) >= 2 and len(lines[i].strip()) > 3:
            return i + 1
        i += 1
        while i < len(lines) and quote not in lines[i]:
            i += 1
        return min(i + 1, len(lines))
    return i


def home_of(files: dict[str, str], code: str) -> str | None:
    """The one file (of ``files``: name to content) defining the most of ``code``'s top-level
    names, a test file only when no other one does; None when none or a tie."""
    names = set(definitions(code.splitlines()))
    scores = {}
    for name, text in files.items():
        shared = len(names & set(definitions(text.splitlines())))
        if shared:
            scores[name] = (not Path(name).name.startswith("test"), shared)
    if not scores:
        return None
    best = max(scores.values())
    found = [name for name, score in scores.items() if score == best]
    return found[0] if len(found) == 1 else None
