"""The top-level ``lessonloop --help`` text, cached so that printing it does not import Typer
(which alone costs 90–150 ms on a small machine).

The CLI stores the text it rendered; the entry point prints it from the cache when the cache
was made by this very version of the commands for this output width. Standard library only.
"""

from __future__ import annotations

import os
import shutil
import sys

from . import __version__

CLI_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cli")


def _width() -> int:
    """The width Click wraps help to (``HelpFormatter``'s default)."""
    return max(min(shutil.get_terminal_size().columns, 80) - 2, 50)


def _path() -> str | None:
    """The cache file for the current commands and width; None when it cannot be named."""
    try:
        stamp = max(
            entry.stat().st_mtime_ns for entry in os.scandir(CLI_DIR) if entry.name.endswith(".py")
        )
    except (OSError, ValueError):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(
        base, "lessonloop", f"help-{__version__}-{stamp}-{_width()}-{sys.version_info[1]}.txt"
    )


def read() -> str | None:
    path = _path()
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read() or None
    except OSError:
        return None


def store(text: str) -> None:
    """Keep the rendered help for the next call; a cache that cannot be written is skipped."""
    path = _path()
    if path is None:
        return
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except OSError:
        pass
