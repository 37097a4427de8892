"""The record of what the offline agent acted on: its structured input as a fenced JSON block
tagged ``lessonloop-state``, appended to the stored prompt of a ``local`` call. No model is
ever sent one; ``local`` reads ``Request.state`` itself.
"""

from __future__ import annotations

import json

from . import canonical

TAG = "lessonloop-state"


def render(payload: dict) -> str:
    """One top-level key per line and one list item per line: compact JSON whose lines repeat
    from prompt to prompt (what is already redacted-checked is not scanned again)."""
    lines = []
    for key in sorted(payload):
        value = payload[key]
        if isinstance(value, list) and value:
            items = ",\n".join(map(canonical.dumps, value))
            lines.append(f"{json.dumps(key)}: [\n{items}\n]")
        else:
            lines.append(f"{json.dumps(key)}: {canonical.dumps(value)}")
    return f"```json {TAG}\n{{\n" + ",\n".join(lines) + "\n}\n```"
