"""One recalled memory's line: its freshness in words, and the dates it reads."""

from __future__ import annotations

import calendar
import time

from hypothesis import given
from hypothesis import strategies as st

from lessonloop.memory import recall_lines

NOW = float(calendar.timegm((2026, 12, 2, 12, 0, 0, 0, 0, 0)))


@given(st.integers(min_value=-2_000_000_000, max_value=6_000_000_000))
def test_a_stamp_reads_as_the_epoch_seconds_calendar_computes(seconds):
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + ".250Z"
    assert recall_lines._seconds(stamp) == seconds


def test_what_is_not_a_stamp_has_no_age():
    for bad in (None, 3, "", "yesterday", "2026-13-01T00:00:00Z", "2026/12/01T00:00:00Z"):
        assert recall_lines.ago(bad, NOW) is None
    assert recall_lines.freshness("not a date", None, NOW) == ""


def test_freshness_in_words():
    assert recall_lines.freshness("2026-12-02T08:00:00.000Z", None, NOW) == "new today"
    assert (
        recall_lines.freshness("2026-11-20T10:00:00.000Z", "2026-11-30T10:00:00.000Z", NOW)
        == "12 days old, confirmed 2 days ago"
    )
    assert (
        recall_lines.freshness("2026-11-01T10:00:00Z", None, NOW) == "1 month old, never confirmed"
    )
    assert recall_lines.freshness("2024-11-01T10:00:00Z", "2026-12-02T11:00:00Z", NOW) == (
        "2 years old, confirmed today"
    )


def test_a_line_is_one_line_with_the_users_situation_and_its_age():
    memory = {
        "kind": "preference",
        "summary": "Use `pnpm`, not npm.\n### Heading",
        "how_to_apply": "when installing",
        "author": "user",
        "created_at": "2026-11-30T10:00:00.000Z",
    }
    assert recall_lines.line(memory, NOW) == (
        "- [preference] Use `pnpm`, not npm. ### Heading (when: when installing) "
        "(2 days old, never confirmed)"
    )
    assert "(when:" not in recall_lines.line({**memory, "author": "auto"}, NOW)
