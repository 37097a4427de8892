"""Whether a run is being run right now: some process holds its ``run.lock`` (``runner.run_lock``
takes it). Apart from the runner so that ``status``, ``list`` and ``watch`` can ask without
importing the engine. Standard library only."""

from __future__ import annotations

import fcntl

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def is_active(run_dir: Path) -> bool:
    """True while some process holds the run's lock (probed read-only, never blocking)."""
    try:
        handle = open(run_dir / "run.lock")
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        return False
