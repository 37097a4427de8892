"""Where everything lives: one root, moved by the single variable LESSONLOOP_HOME.

``pathlib`` is imported where a ``Path`` is made, not at import: the hook hot path works with
plain strings (``project_root``, ``session_name``) and does not pay for it.
"""

from __future__ import annotations

import os

from .errors import LessonloopError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hooks import this)
if TYPE_CHECKING:
    from pathlib import Path

DB_NAME = "lessonloop.db"


def home() -> Path:
    """The lessonloop root: ``$LESSONLOOP_HOME`` or ``./.lessonloop``, made absolute."""
    from pathlib import Path

    return Path(os.environ.get("LESSONLOOP_HOME") or ".lessonloop").expanduser().absolute()


def user_home() -> Path:
    """The user-level root for cross-project preferences: ``$LESSONLOOP_USER_HOME`` or
    ``~/.lessonloop``."""
    from pathlib import Path

    return Path(os.environ.get("LESSONLOOP_USER_HOME") or "~/.lessonloop").expanduser().absolute()


def project_root(cwd: str | None = None) -> str:
    """The home of the project a hook fires in, as a string: ``$LESSONLOOP_HOME``, else
    ``.lessonloop`` in ``$CLAUDE_PROJECT_DIR`` or the payload's ``cwd`` (hooks do not always
    run in the project's folder)."""
    base = os.environ.get("LESSONLOOP_HOME")
    if not base:
        base = os.path.join(os.environ.get("CLAUDE_PROJECT_DIR") or cwd or ".", ".lessonloop")
    return os.path.abspath(os.path.expanduser(base))


def session_name(session_id: str) -> str:
    """The folder name of a session under ``sessions/``: one folder per session, so sessions
    share no file; nothing in the id can climb out of it."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)[:128].strip(".")
    return safe or "unknown"


def session_dir(session_id: str, root: Path | None = None) -> Path:
    """``sessions/<session_id>/`` under ``root`` (the home by default)."""
    return (root or home()) / "sessions" / session_name(session_id)


def db_path(root: Path | None = None) -> Path:
    return (root or home()) / DB_NAME


def variable_for(root: Path) -> str:
    """The variable that moves ``root``, for error messages: the user root has its own."""
    same = os.path.abspath(root) == os.path.abspath(user_home())
    return "LESSONLOOP_USER_HOME" if same else "LESSONLOOP_HOME"


def runs_dir(root: Path | None = None) -> Path:
    return (root or home()) / "runs"


def run_dir(run_id: str, root: Path | None = None) -> Path:
    return runs_dir(root) / run_id


def ensure_home(root: Path | None = None) -> Path:
    """Create the root (with a ``.gitignore`` of ``*``) or fail with a one-line reason."""
    root = root or home()
    if root.exists() and not root.is_dir():
        raise LessonloopError(
            f"the lessonloop home {root} is not a directory (check {variable_for(root)})"
        )
    try:
        root.mkdir(parents=True, exist_ok=True)
        gitignore = root / ".gitignore"
        if not gitignore.exists():
            gitignore.write_text("*\n", encoding="utf-8")
        probe = root / f".write-probe-{os.getpid()}"
        probe.write_text("", encoding="utf-8")
        probe.unlink()
    except OSError as exc:
        from .errors import NO_SPACE, no_space

        if exc.errno in NO_SPACE:
            raise no_space(root) from None
        reason = exc.strerror or exc.__class__.__name__
        raise LessonloopError(
            f"cannot write to the lessonloop home {root}: {reason} "
            f"(set {variable_for(root)} to a writable directory)"
        ) from None
    return root
