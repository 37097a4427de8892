"""The record of what the offline agent acted on: its structured input as a fenced JSON block
tagged ``lessonloop-state``, appended to the stored prompt of a ``local`` call. No model is
ever sent one; ``local`` reads ``Request.state`` itself.

A record must not grow with the run: a list longer than ``RECORDED_ITEMS`` (the competitor's
``history``, every strategy the run measured; the analyst's ``trajectory``, every generation) is
recorded as its newest ``RECORDED_ITEMS`` items and ``<key>_omitted``, the number of older ones
left out. Those are the run's earlier rows in the store, which the history is rebuilt from on
resume. The agent itself still reads all of them (its whole-run fits cost no tokens; a model
reads the same facts in words, trimmed to the context budget). A list that is not in time
order (the playbook, ranked best first) keeps its first items instead.
"""

from __future__ import annotations

import json

from . import canonical

TAG = "lessonloop-state"
RECORDED_ITEMS = 30  # a default run's whole trajectory; the analyst's record stays that size
IN_TIME_ORDER = ("history", "trajectory")  # oldest first: the newest are the last items


def render(payload: dict) -> str:
    """One top-level key per line and one list item per line: compact JSON whose lines repeat
    from prompt to prompt (what is already redacted-checked is not scanned again)."""
    lines = []
    for key in sorted(payload):
        value = payload[key]
        omitted = len(value) - RECORDED_ITEMS if isinstance(value, list) else 0
        if omitted > 0:
            value = value[-RECORDED_ITEMS:] if key in IN_TIME_ORDER else value[:RECORDED_ITEMS]
        if isinstance(value, list) and value:
            items = ",\n".join(map(canonical.dumps, value))
            lines.append(f"{json.dumps(key)}: [\n{items}\n]")
        else:
            lines.append(f"{json.dumps(key)}: {canonical.dumps(value)}")
        if omitted > 0:
            lines.append(f"{json.dumps(key + '_omitted')}: {omitted}")
    return f"```json {TAG}\n{{\n" + ",\n".join(lines) + "\n}\n```"
