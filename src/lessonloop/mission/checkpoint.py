"""The workspace as it was after the last completed step, kept while a step runs, so a step
is all or nothing: killed midway (a patch half written, a command stopped), the mission's
resume puts the workspace back and does the step again; a step that makes the verifier's
outcome worse is undone from it too.

``runs/<id>/checkpoint-<n>`` holds the workspace after step ``n`` (a full copy, made through
a temporary name and renamed, so it exists only once complete). Once step ``n + 1`` is
stored the checkpoint is removed; a checkpoint whose step was stored before a kill is simply
removed on resume."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

PREFIX = "checkpoint-"
PARTIAL = "checkpoint.partial"


def save(folder: Path, workspace: Path, done: int) -> Path:
    """Copy the workspace (after ``done`` stored steps) aside; returns the checkpoint."""
    partial = folder / PARTIAL
    shutil.rmtree(partial, ignore_errors=True)
    try:
        shutil.copytree(workspace, partial, symlinks=True, copy_function=_copy)
    except (OSError, _Failed) as exc:  # a full disk: the half copy goes, so there is room
        shutil.rmtree(partial, ignore_errors=True)  # to say why
        raise exc.error if isinstance(exc, _Failed) else exc from None
    target = folder / f"{PREFIX}{done}"
    shutil.rmtree(target, ignore_errors=True)
    os.replace(partial, target)
    return target


class _Failed(Exception):
    """A file's copy failed: carries its OSError past copytree, which would keep only its
    text (and lose the errno that tells a full disk)."""

    def __init__(self, error: OSError):
        self.error = error


def _copy(source: str, target: str) -> None:
    """A file of the workspace into the checkpoint: a named pipe a step's command made is made
    again (copying one would block or fail), a socket is left out, anything else copied."""
    try:
        mode = os.lstat(source).st_mode
        if stat.S_ISFIFO(mode):
            os.mkfifo(target, stat.S_IMODE(mode))
        elif stat.S_ISREG(mode):
            shutil.copy2(source, target)
    except OSError as exc:
        raise _Failed(exc) from None


def restore(workspace: Path, checkpoint: Path) -> None:
    """The workspace becomes the checkpoint (which is consumed). Killed midway, the
    checkpoint is still there and ``recover`` does it again."""
    shutil.rmtree(workspace, ignore_errors=True)
    os.replace(checkpoint, workspace)


def discard(checkpoint: Path) -> None:
    shutil.rmtree(checkpoint, ignore_errors=True)


def recover(folder: Path, workspace: Path, done: int) -> bool:
    """After a kill: put back the workspace of a step that was not stored (``done`` steps
    are); whether it was put back."""
    shutil.rmtree(folder / PARTIAL, ignore_errors=True)
    restored = False
    for path in sorted(folder.glob(PREFIX + "*")):
        number = path.name.removeprefix(PREFIX)
        if number.isdigit() and int(number) == done and not restored:
            restore(workspace, path)
            restored = True
        else:
            discard(path)
    return restored
