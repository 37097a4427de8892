"""Timestamps as users and the CLI contract expect them: ISO 8601 UTC ending in Z."""

from __future__ import annotations

from datetime import datetime, timezone


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")[:-6] + "Z"
