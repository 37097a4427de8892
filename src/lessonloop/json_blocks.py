"""Finding JSON objects inside free text: model answers, prose with fenced blocks."""

from __future__ import annotations

import json
import re

_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def reject_constant(name: str) -> None:
    """``parse_constant`` for json: NaN and Infinity are not numbers a strategy or an answer
    may hold (Python's json accepts them)."""
    raise ValueError(f"{name} is not a JSON number")


_decoder = json.JSONDecoder(parse_constant=reject_constant)  # NaN/Infinity are not data


MAX_SCAN = 200_000  # characters of an answer searched for JSON; models do not need more


def json_objects(text: str) -> list[dict]:
    """Every top-level JSON object embedded in ``text``, in order of appearance."""
    text = text[:MAX_SCAN]
    found = []
    position = text.find("{")
    while position != -1:
        try:
            value, end = _decoder.raw_decode(text, position)
        except (ValueError, RecursionError):  # malformed, or nested beyond reason
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        position = text.find("{", end)
    return found


def find_block(text: str, key: str) -> dict | None:
    """The last JSON object in ``text`` holding ``key``: fenced or not, prose around it,
    trailing commas forgiven."""
    for candidate_text in (text, _TRAILING_COMMA.sub(r"\1", text)):
        for candidate in reversed(json_objects(candidate_text)):
            if key in candidate:
                return candidate
    return None
