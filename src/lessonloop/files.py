"""Writing files so that a crash never leaves half of one behind; reading the files users name."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

MB = 1 << 20


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to a uniquely named temporary sibling, then rename it over ``path``.

    A failed write (a full disk above all) leaves the old file as it was and raises
    ``errors.unwritable``'s one line naming ``path``."""
    from .errors import unwritable

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise unwritable(path, exc) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise unwritable(path, exc) from None
        raise


def read_user_file(
    path: str | os.PathLike, what: str, limit: int = 16 * MB, encoding: str = "utf-8"
) -> str:
    """The text of a file the user (or an agent, through MCP) named, as a UsageError when it
    is missing, not a regular file (a directory, ``/dev/zero``, a FIFO) or over ``limit``
    bytes: it is read only after those checks, so it can never hang or fill the memory."""
    from .errors import UsageError

    try:
        with open(path, "rb", opener=_nonblocking) as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise UsageError(f"{what} {path} is not a regular file")
            if info.st_size > limit:
                raise UsageError(f"{what} {path} is larger than {limit // MB} MB")
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise UsageError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{what} {path} is not a regular file") from None
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(data) > limit:  # it grew while we read
        raise UsageError(f"{what} {path} is larger than {limit // MB} MB")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise UsageError(f"cannot read {what} {path}: not {encoding} text ({exc.reason})") from None


def _nonblocking(path, flags):
    """Open without blocking: opening a FIFO for reading would wait for a writer forever."""
    return os.open(path, flags | os.O_NONBLOCK)
