"""A pure-Python unified-diff applier, forgiving where small models are sloppy (line numbers
and counts in ``@@`` headers are hints: a hunk is found by its context, nearest the hint) and
strict where it matters (every path must stay inside the folder; nothing is written unless
every hunk of every file applies)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


class PatchRefused(Exception):
    """The patch names a path outside the folder (or inside ``.git``): never applied."""


class PatchFailed(Exception):
    """The patch is not a unified diff, or a hunk's context is not in the file."""


@dataclass
class Hunk:
    start: int  # 1-based line of the old side, a hint
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)


@dataclass
class FilePatch:
    old_path: str | None  # None: /dev/null (a new file)
    new_path: str | None  # None: /dev/null (a deleted file)
    hunks: list[Hunk] = field(default_factory=list)


def _name(header: str) -> str | None:
    name = header[4:].split("\t")[0].strip()
    if name == "/dev/null":
        return None
    if name.startswith(("a/", "b/")):
        name = name[2:]
    return name


def parse(text: str) -> list[FilePatch]:
    """The files and hunks of a unified diff; ``PatchFailed`` when there are none."""
    lines = [line.removesuffix("\r") for line in split_lines(text)]
    patches: list[FilePatch] = []
    hunk: Hunk | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            patches.append(FilePatch(_name(line), _name(lines[i + 1])))
            hunk = None
            i += 2
            continue
        match = _HUNK.match(line)
        if match and patches:
            hunk = Hunk(int(match.group(1)))
            patches[-1].hunks.append(hunk)
        elif hunk is not None and line[:1] in (" ", "-", "+", ""):
            body = line[1:]
            if line[:1] in (" ", ""):
                hunk.old.append(body)
                hunk.new.append(body)
            elif line[:1] == "-":
                hunk.old.append(body)
            else:
                hunk.new.append(body)
        elif not line.startswith("\\"):
            hunk = None  # "diff --git", "index ...", prose: outside any hunk
        i += 1
    # a patch without hunks deletes a file or creates an empty one
    patches = [p for p in patches if p.hunks or p.new_path is None or p.old_path is None]
    if not patches:
        raise PatchFailed("no file header (--- a/PATH, +++ b/PATH) with a hunk (@@) found")
    return patches


def inside(root: Path, name: str) -> Path:
    """``root / name``, refused when it leaves ``root`` or touches ``.git``."""
    if not name or name.startswith(("/", "~")) or "\\" in name:
        raise PatchRefused(f"path {name!r} is not a relative path inside the workspace")
    parts = Path(name).parts
    if ".." in parts or ".git" in parts:
        raise PatchRefused(f"path {name!r} leaves the workspace (or touches .git)")
    target = (root / name).resolve()
    if not target.is_relative_to(root.resolve()):
        raise PatchRefused(f"path {name!r} resolves outside the workspace")
    return target


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """``text``'s lines, split at ``\n`` only: ``str.splitlines`` also splits at a form feed
    and other separators, and a file rejoined from its pieces would change there."""
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    if not keepends:
        return parts
    ends = ["\n"] * len(parts)
    if parts and not text.endswith("\n"):
        ends[-1] = ""
    return [part + end for part, end in zip(parts, ends)]


def read(path: Path) -> tuple[str, str]:
    """A file's text with ``\n`` line ends, and the line end it has (``\r\n`` or ``\n``),
    so a change written back keeps the file's own."""
    text = path.read_bytes().decode("utf-8")
    newline = "\r\n" if "\r\n" in text else "\n"
    return text.replace("\r\n", "\n"), newline


def _find(lines: list[str], block: list[str], hint: int, start: int) -> int | None:
    """Where ``block`` occurs at or after ``start``, nearest ``hint``; exact first, then
    ignoring trailing whitespace."""
    for norm in (lambda s: s, lambda s: s.rstrip()):
        wanted = [norm(b) for b in block]
        found = [
            i
            for i in range(start, len(lines) - len(block) + 1)
            if [norm(x) for x in lines[i : i + len(block)]] == wanted
        ]
        if found:
            return min(found, key=lambda i: abs(i - hint))
    return None


def _apply_hunks(name: str, text: str, hunks: list[Hunk]) -> str:
    lines = split_lines(text)
    cursor = 0
    for number, hunk in enumerate(hunks, 1):
        if not hunk.old:
            at = min(max(hunk.start, cursor), len(lines))
        else:
            found = _find(lines, hunk.old, max(hunk.start - 1, 0), cursor)
            if found is None:
                raise PatchFailed(f"{name}: hunk {number}'s lines are not in the file")
            at = found
        lines[at : at + len(hunk.old)] = hunk.new
        cursor = at + len(hunk.new)
    return "\n".join(lines) + ("\n" if lines else "")


def apply(root: Path, text: str) -> list[str]:
    """Apply the diff ``text`` under ``root``; returns the paths changed. All or nothing."""
    writes: dict[Path, tuple[str, str] | None] = {}  # new text and its line end
    changed: list[str] = []
    for patch in parse(text):
        name = patch.new_path or patch.old_path
        if name is None:
            raise PatchFailed("a file patch from /dev/null to /dev/null")
        target = inside(root, name)
        if patch.old_path is not None:
            inside(root, patch.old_path)
        if patch.new_path is None:
            if not target.is_file():
                raise PatchFailed(f"{name}: cannot delete a file that does not exist")
            writes[target] = None
        else:
            source = target if patch.old_path is None else inside(root, patch.old_path)
            old, newline = "", "\n"
            if patch.old_path is not None:
                if not source.is_file():
                    raise PatchFailed(f"{name}: no such file in the workspace")
                old, newline = read(source)
            new = _apply_hunks(name, old, patch.hunks) if patch.hunks else old
            if patch.old_path is not None and new == old:
                raise PatchFailed(f"{name}: the patch changes nothing")
            writes[target] = new, newline
        changed.append(name)
    for target, content in writes.items():
        if content is None:
            target.unlink()
        else:
            text, newline = content
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text.replace("\n", newline), encoding="utf-8", newline="")
    return changed
