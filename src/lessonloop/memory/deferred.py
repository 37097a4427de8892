"""Capture after the hook has answered: Claude Code waits for a hook process to exit, and what a
capture learns (an error's lines, a prompt's lessons) is no part of the hook's answer. So the
hook answers (recall), then forks: the parent exits at once and the child, in its own session
with no standard streams to hold the caller, redacts and writes the capture in the background.
Nothing unredacted is persisted on the way: the payload stays in the child's memory.

Two ``flock``s in the session's folder keep that safe:
- ``PENDING``: every deferred capture holds it shared from before the fork until it is written,
  so a reader (memorize, or a test) that needs every capture of the session waits for
  ``settled``, which takes it exclusively.
- ``SERIAL``: the children take it exclusively while they work, one at a time, so a capture
  sees what the one before it learned (the session's known secrets).

Where ``os.fork`` is missing, or the fork fails, the capture runs before the hook exits, as it
did. Standard library only: this runs inside hook processes.
"""

from __future__ import annotations

import fcntl
import os
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a hook's start-up)
if TYPE_CHECKING:
    from collections.abc import Callable

PENDING = "captures.pending"
SERIAL = "captures.lock"
SETTLE_SECONDS = 10.0  # a reader waits this long at most for the captures still being written


def after_exit(folder: str, work: Callable[[], None]) -> None:
    """Run ``work`` (which handles its own errors) in a forked child once this process has
    exited, or now where that is not to be had. Flush what the caller wrote first."""
    if not hasattr(os, "fork"):
        work()
        return
    try:
        os.makedirs(folder, exist_ok=True)
        pending = os.open(os.path.join(folder, PENDING), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:  # (a read-only home: the capture fails as it would have, and says so)
        work()
        return
    try:
        fcntl.flock(pending, fcntl.LOCK_SH)  # held by the child (the fork shares the lock)
        pid = os.fork()
    except OSError:
        os.close(pending)
        work()
        return
    if pid:  # the parent: answers and exits; the child holds the lock until it is done
        os.close(pending)
        return
    try:  # the child
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for stream in (0, 1, 2):
            os.dup2(null, stream)
        _close_all_but(pending)  # nothing of the caller's (a pipe it waits on) stays open
        serial = os.open(os.path.join(folder, SERIAL), os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(serial, fcntl.LOCK_EX)
        work()
    finally:
        os._exit(0)


def _close_all_but(keep: int) -> None:
    """Close every descriptor above the standard streams but ``keep``."""
    try:
        open_fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:  # (no /proc: the usual low descriptors)
        open_fds = list(range(3, 256))
    for fd in open_fds:
        if fd > 2 and fd != keep:
            try:
                os.close(fd)
            except OSError:  # (the listing's own descriptor, closed already)
                pass


def settled(folder: str | os.PathLike[str], timeout: float | None = None) -> bool:
    """Wait until no capture of the session in ``folder`` is still being written (at most
    ``timeout`` seconds, ``SETTLE_SECONDS`` by default); False when some still were."""
    timeout = SETTLE_SECONDS if timeout is None else timeout
    try:
        fd = os.open(os.path.join(folder, PENDING), os.O_RDWR)
    except OSError:  # no capture was ever deferred in this session
        return True
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True  # (closing the file releases it)
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.005)
    finally:
        os.close(fd)
