"""Timestamps as users and the CLI contract expect them: ISO 8601 UTC ending in Z."""

from __future__ import annotations

import time


def utc_now() -> str:
    """Now, to the millisecond (``time`` rather than ``datetime``: hooks import this)."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"
