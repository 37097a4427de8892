"""One recalled memory as one line, the same wherever a memory is given to the agent (the
session-start block, a prompt's matches, a command's known failure): its kind, its summary,
for the user's own the situation it applies to, and how fresh it is. Standard library only:
the per-prompt hooks format lines too."""

from __future__ import annotations

import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a hook's start-up)
if TYPE_CHECKING:
    from collections.abc import Mapping

DAY = 86400.0


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm): what
    ``calendar.timegm`` computes, without importing ``calendar`` and ``_strptime`` (~3 ms of a
    hook's start-up)."""
    year -= month <= 2
    era = year // 400
    of_era = year - era * 400
    of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    of_era_days = of_era * 365 + of_era // 4 - of_era // 100 + of_year
    return era * 146097 + of_era_days - 719468


def _seconds(stamp: object) -> float | None:
    """An ISO 8601 UTC stamp (``2026-12-01T10:00:00.000Z``) as epoch seconds, None if not one."""
    if not isinstance(stamp, str) or len(stamp) < 19 or stamp[4] + stamp[7] + stamp[10] != "--T":
        return None
    try:
        year, month, day = int(stamp[:4]), int(stamp[5:7]), int(stamp[8:10])
        hour, minute, second = int(stamp[11:13]), int(stamp[14:16]), int(stamp[17:19])
    except ValueError:
        return None
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return float(_days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second)


def ago(stamp: object, now: float | None = None) -> str | None:
    """How long ago ``stamp`` was, in words people skim: ``today``, ``1 day``, ``12 days``,
    ``3 months``, ``2 years`` (None when there is no stamp)."""
    then = _seconds(stamp)
    if then is None:
        return None
    days = max(0.0, ((time.time() if now is None else now) - then) / DAY)
    if days < 1:
        return "today"
    for size, unit in ((365.0, "year"), (30.0, "month"), (1.0, "day")):
        if days >= size:
            count = int(days // size)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return "today"  # unreachable: days >= 1 matched "day"


def freshness(created_at: object, confirmed_at: object, now: float | None = None) -> str:
    """``12 days old, confirmed 3 days ago``; ``new today``; ``40 days old, never confirmed``."""
    age = ago(created_at, now)
    if age is None:
        return ""
    text = "new today" if age == "today" else f"{age} old"
    confirmed = ago(confirmed_at, now)
    if confirmed is not None:
        return f"{text}, confirmed {'today' if confirmed == 'today' else confirmed + ' ago'}"
    return text if age == "today" else f"{text}, never confirmed"


def line(memory: Mapping[str, object], now: float | None = None) -> str:
    """``- [kind] summary (when: …) (12 days old, confirmed 3 days ago)`` on one line, whatever
    the fields hold: no text can pose as a heading. ``memory`` has the knowledge row's fields
    (kind, summary, how_to_apply, author, created_at, confirmed_at)."""
    text = f"- [{memory.get('kind', '')}] {memory.get('summary', '')}"
    how = memory.get("how_to_apply")
    if how and memory.get("author") == "user":  # automatic ones say the obvious
        text += f" (when: {str(how)[:160]})"
    fresh = freshness(memory.get("created_at"), memory.get("confirmed_at"), now)
    if fresh:
        text += f" ({fresh})"
    return " ".join(text.split())
