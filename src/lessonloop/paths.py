"""Where everything lives: one root, moved by the single variable LESSONLOOP_HOME."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import LessonloopError

DB_NAME = "lessonloop.db"


def home() -> Path:
    """The lessonloop root: ``$LESSONLOOP_HOME`` or ``./.lessonloop``, made absolute."""
    return Path(os.environ.get("LESSONLOOP_HOME") or ".lessonloop").expanduser().absolute()


def user_home() -> Path:
    """The user-level root for cross-project preferences: ``$LESSONLOOP_USER_HOME`` or
    ``~/.lessonloop``."""
    return Path(os.environ.get("LESSONLOOP_USER_HOME") or "~/.lessonloop").expanduser().absolute()


def project_home(cwd: str | None = None) -> Path:
    """The home of the project a hook fires in: ``$LESSONLOOP_HOME``, else ``.lessonloop`` in
    ``$CLAUDE_PROJECT_DIR`` or the payload's ``cwd`` (hooks do not always run there)."""
    if os.environ.get("LESSONLOOP_HOME"):
        return home()
    base = os.environ.get("CLAUDE_PROJECT_DIR") or cwd or "."
    return (Path(base).expanduser() / ".lessonloop").absolute()


def session_dir(session_id: str, root: Path | None = None) -> Path:
    """``sessions/<session_id>/``: one folder per session, so sessions share no file."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)[:128].strip(".")
    return (root or home()) / "sessions" / (safe or "unknown")


def db_path(root: Path | None = None) -> Path:
    return (root or home()) / DB_NAME


def runs_dir(root: Path | None = None) -> Path:
    return (root or home()) / "runs"


def run_dir(run_id: str, root: Path | None = None) -> Path:
    return runs_dir(root) / run_id


def ensure_home(root: Path | None = None) -> Path:
    """Create the root (with a ``.gitignore`` of ``*``) or fail with a one-line reason."""
    root = root or home()
    if root.exists() and not root.is_dir():
        raise LessonloopError(f"the lessonloop home {root} is not a directory (check LESSONLOOP_HOME)")
    try:
        root.mkdir(parents=True, exist_ok=True)
        gitignore = root / ".gitignore"
        if not gitignore.exists():
            gitignore.write_text("*\n", encoding="utf-8")
        probe = root / f".write-probe-{os.getpid()}"
        probe.write_text("", encoding="utf-8")
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        raise LessonloopError(
            f"cannot write to the lessonloop home {root}: {reason} "
            "(set LESSONLOOP_HOME to a writable directory)"
        ) from None
    return root
