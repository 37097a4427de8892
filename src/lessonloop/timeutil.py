"""Timestamps as users and the CLI contract expect them: ISO 8601 UTC ending in Z."""

from __future__ import annotations

import time

_second: tuple[int, str] = (-1, "")  # the last whole second formatted, and its text


def utc_now() -> str:
    """Now, to the millisecond (``time`` rather than ``datetime``: hooks import this). A run
    stamps many rows a second: each second is formatted once."""
    global _second
    now = time.time()
    whole = int(now)
    if _second[0] != whole:
        _second = (whole, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)))
    return f"{_second[1]}.{int(now * 1000) % 1000:03d}Z"
