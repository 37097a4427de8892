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


class Encoded(str):
    """A value's canonical JSON, encoded ahead of time: ``render`` inserts it as it is."""


def encode(value: object) -> Encoded:
    """Encode a value (or list item) once for several state blocks."""
    return Encoded(canonical.dumps(value))


def _json(value: object) -> str:
    return value if isinstance(value, Encoded) else canonical.dumps(value)


def render(payload: dict) -> str:
    """One top-level key per line and one list item per line: compact JSON whose lines repeat
    from prompt to prompt (what is already redacted-checked is not scanned again). Values and
    items may be ``Encoded`` already."""
    lines = []
    for key in sorted(payload):
        value = payload[key]
        if isinstance(value, list) and value:
            items = ",\n".join(map(_json, value))
            lines.append(f"{json.dumps(key)}: [\n{items}\n]")
        else:
            lines.append(f"{json.dumps(key)}: {_json(value)}")
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
