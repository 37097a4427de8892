"""Session captures: one JSON object per line in ``sessions/<id>/<name>.jsonl``.

Hooks of one session may run at the same time (Claude Code runs matching hooks in parallel),
so every record is one ``write`` of one whole line to a file opened for appending, under an
exclusive ``flock``: concurrent writers interleave whole lines and lose none. Standard library
only — this runs inside hook processes.
"""

from __future__ import annotations

import fcntl
import os

from .. import fastjson

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a hook's start-up)
if TYPE_CHECKING:
    from collections.abc import Callable

MAX_RECORD = 16_000  # bytes per line; the fields were capped before, this is a backstop


def append(path: str | os.PathLike, record: dict) -> None:
    """Append ``record`` as one line (the caller redacted and capped its text)."""
    line = fastjson.dumps(record, ensure_ascii=False, sort_keys=True)
    # (a lone surrogate, which a JSON payload may carry as "\\ud800", becomes "?" rather than
    # losing the record)
    data = (
        line
        if len(line) <= MAX_RECORD
        else fastjson.dumps({"type": record.get("type"), "dropped": "record too large"})
    ).encode("utf-8", "replace") + b"\n"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, data)
    finally:
        os.close(fd)


def read(path: str | os.PathLike) -> list[dict]:
    """Every complete, well-formed record (a torn or corrupt line is skipped)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return []
    records = []
    for line in data.splitlines():
        try:
            value = fastjson.loads(line)
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(value, dict):
            records.append(value)
    return records


def mark_once(path: str | os.PathLike) -> bool:
    """Create ``path`` if absent; True only for the one caller that created it."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        return False
    return True


class locked:  # noqa: N801 - used like a function: ``with locked(path):``
    """Hold an exclusive ``flock`` on ``path`` (created if absent) for the block: one holder at
    a time per session, however many hooks fire at once. (A class, not contextlib: the hooks
    import this module, and contextlib costs them a few percent of their time.)"""

    def __init__(self, path: str | os.PathLike):
        self.path = path

    def __enter__(self) -> None:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(self._fd)
            raise

    def __exit__(self, *exc_info) -> None:
        os.close(self._fd)


def clean_strings(value: object, clean: Callable[[str], str]) -> object:
    """``value`` (a record) with ``clean`` applied to every string in it, keys included."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {clean_strings(k, clean): clean_strings(v, clean) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_strings(v, clean) for v in value]
    return value


def rewrite_all(folder: str | os.PathLike, clean: Callable[[str], str]) -> None:
    """Rewrite every capture of a session (``folder/*.jsonl``) with ``clean`` applied to each
    string of each record (a torn line: to its text), each file under the lock ``append``
    takes. Memorize does this once it knows what no capture may keep: the session's secrets
    (``known_secrets``), its private spans (``privacy``)."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".jsonl"))
    except OSError:
        return
    for name in names:
        try:
            fd = os.open(os.path.join(folder, name), os.O_RDWR)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            with os.fdopen(os.dup(fd), "rb") as handle:
                data = handle.read()
            lines = []
            for line in data.split(b"\n"):
                try:
                    record = fastjson.loads(line)
                except ValueError:  # a torn or odd line: cleaned as text
                    text = line.decode("utf-8", "replace")
                    lines.append(clean(text).encode("utf-8", "replace"))
                    continue
                tidy = clean_strings(record, clean)
                lines.append(
                    line
                    if tidy == record
                    else fastjson.dumps(tidy, ensure_ascii=False, sort_keys=True).encode(
                        "utf-8", "replace"
                    )
                )
            cleaned = b"\n".join(lines)
            if cleaned != data:
                os.lseek(fd, 0, os.SEEK_SET)
                os.write(fd, cleaned)
                os.ftruncate(fd, len(cleaned))
        finally:
            os.close(fd)
