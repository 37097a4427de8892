"""How much one call may list: a listing's ``limit`` is checked here, once for every use case.
(Apart from ``stores.py``, which needs threading: ``lessonloop list`` does not.)"""

from __future__ import annotations

from ..errors import UsageError

MAX_LISTED = 500  # the most items one listing returns (runs, memories)


def check_limit(limit: int | None, most: int = MAX_LISTED) -> None:
    """A listing's ``limit`` (None: everything) is between 1 and ``most``."""
    if limit is not None and not 1 <= limit <= most:
        raise UsageError(f"must be between 1 and {most}", field="limit")
