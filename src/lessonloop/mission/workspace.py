"""The mission's workspace: a plain copy of the user's folder under the run's folder.

Why a copy and not ``git worktree``: a worktree only holds committed files (a user's
uncommitted edits would be missing), needs the folder to be a repository and adds a branch to
the user's repository; a copy works for any folder and leaves the user's repository alone.
``.git`` internals, caches and virtual environments are not copied (large, and not what a
mission changes)."""

from __future__ import annotations

import difflib
import hashlib
import os
import shutil
from pathlib import Path

IGNORED = {".git", "__pycache__", ".venv", "venv", "node_modules", ".mypy_cache", ".pytest_cache"}
IGNORED_SUFFIXES = (".pyc", ".pyo")
SHOWN_FILE_BYTES = 6000  # a file larger than this is listed, not shown
SHOWN_TOTAL_BYTES = 16000  # all the contents shown in one prompt


def _ignore(folder: str, names: list[str]) -> set[str]:
    return {n for n in names if n in IGNORED or n.endswith(IGNORED_SUFFIXES)}


def files(root: Path) -> list[str]:
    """Relative paths (with ``/``) of the files a mission sees, sorted."""
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _ignore(folder, dirs))
        for name in names:
            path = Path(folder) / name
            if name in _ignore(folder, [name]) or path.is_symlink() or not path.is_file():
                continue
            found.append(path.relative_to(root).as_posix())
    return sorted(found)


def copy(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` (which must not exist), without what ``IGNORED`` names
    and without links that lead out of the copy: an absolute one, or one that leaves
    ``source`` (through it, the verifier or a step would change the user's own files before
    ``apply``)."""
    root = source.resolve()

    def leaves(path: str) -> bool:
        return os.path.isabs(os.readlink(path)) or not Path(path).resolve().is_relative_to(root)

    def ignore(folder: str, names: list[str]) -> set[str]:
        links = {name for name in names if os.path.islink(os.path.join(folder, name))}
        leaving = {name for name in links if leaves(os.path.join(folder, name))}
        return _ignore(folder, names) | leaving

    shutil.copytree(source, target, ignore=ignore, symlinks=True)


def digest(root: Path) -> str:
    """A digest of every file's path and bytes: equal digests, unchanged folder."""
    hasher = hashlib.sha256()
    for name in files(root):
        hasher.update(name.encode("utf-8") + b"\0")
        hasher.update(hashlib.sha256((root / name).read_bytes()).digest())
    return hasher.hexdigest()


def text(path: Path) -> str | None:
    """A file's text; None for a binary or unreadable one."""
    try:
        data = path.read_bytes()
        return None if b"\0" in data else data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def overview(root: Path, contents: bool = True) -> str:
    """The listing and (``contents``) the small text files' contents, capped, for the model."""
    from ..safety.redact import redact

    names = files(root)
    parts = ["Files:"] + [f"- {name}" for name in names]
    budget = SHOWN_TOTAL_BYTES if contents else 0
    for name in names:
        content = text(root / name)
        if content is None or len(content) > SHOWN_FILE_BYTES or len(content) > budget:
            continue
        budget -= len(content)
        fence = "````" if "```" in content else "```"
        parts.append(f"\nFILE: {name}\n{fence}\n{redact(content).rstrip()}\n{fence}")
    return "\n".join(parts)


def diff(base: Path, changed: Path) -> str:
    """A unified diff (``a/`` and ``b/`` prefixes) of the text files from ``base`` to
    ``changed``."""
    from .patch import split_lines

    out: list[str] = []
    for name in sorted(set(files(base)) | set(files(changed))):
        was, now = (base / name).is_file(), (changed / name).is_file()
        old = text(base / name) if was else ""
        new = text(changed / name) if now else ""
        if old is None or new is None or (old == new and was == now):
            continue
        before = f"a/{name}" if was else "/dev/null"
        after = f"b/{name}" if now else "/dev/null"
        if old == new:  # an empty file made or removed: a header without hunks says so
            out.append(f"--- {before}\n+++ {after}\n")
            continue
        lines = difflib.unified_diff(
            split_lines(old, keepends=True), split_lines(new, keepends=True), before, after
        )
        for line in lines:
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
