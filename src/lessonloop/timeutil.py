"""Timestamps as users and the CLI contract expect them: ISO 8601 UTC ending in Z."""

from __future__ import annotations

from datetime import datetime, timezone


def utc_now() -> str:
    now = datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"
