"""The machine-readable block every role prompt carries, so a non-LLM agent can act on it.

It is a fenced JSON block tagged ``lessonloop-state``: ``local`` reads it; a model sees it as
ordinary structured context.
"""

from __future__ import annotations

import json
import re

TAG = "lessonloop-state"
_BLOCK = re.compile(r"```json " + re.escape(TAG) + r"\n(.*?)\n```", re.DOTALL)


def render(payload: dict) -> str:
    return f"```json {TAG}\n{json.dumps(payload, sort_keys=True)}\n```"


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
