"""The machine-readable block every role prompt carries, so a non-LLM agent can act on it.

It is a fenced JSON block tagged ``lessonloop-state``: ``local`` reads it; a model sees it as
ordinary structured context.
"""

from __future__ import annotations

import json
import re

from . import canonical

TAG = "lessonloop-state"
_BLOCK = re.compile(r"```json " + re.escape(TAG) + r"\n(.*?)\n```", re.DOTALL)


def render(payload: dict) -> str:
    """One top-level key per line and one list item per line: compact JSON whose lines repeat
    from prompt to prompt (what is already redacted-checked is not scanned again)."""
    lines = []
    for key in sorted(payload):
        value = payload[key]
        if isinstance(value, list) and value:
            items = ",\n".join(canonical.dumps(item) for item in value)
            lines.append(f"{json.dumps(key)}: [\n{items}\n]")
        else:
            lines.append(f"{json.dumps(key)}: {canonical.dumps(value)}")
    return f"```json {TAG}\n{{\n" + ",\n".join(lines) + "\n}\n```"


def parse(text: str) -> dict | None:
    """The last state block in ``text``, or None when there is none or it is not JSON."""
    matches = _BLOCK.findall(text)
    if not matches:
        return None
    try:
        value = json.loads(matches[-1])
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
