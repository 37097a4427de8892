"""Find the strategy JSON in a competitor's prose before asking any provider to extract it."""

from __future__ import annotations

import json

def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


_decoder = json.JSONDecoder(parse_constant=_reject_constant)  # NaN/Infinity are not strategies


def json_objects(text: str) -> list[dict]:
    """Every top-level JSON object embedded in ``text``, in order of appearance."""
    found = []
    position = text.find("{")
    while position != -1:
        try:
            value, end = _decoder.raw_decode(text, position)
        except ValueError:  # includes JSONDecodeError
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        position = text.find("{", end)
    return found


def find_strategy(text: str, schema: dict) -> dict | None:
    """The object that best matches the schema's properties (the last one on ties)."""
    properties = set(schema.get("properties", {}))
    best, best_overlap = None, 0
    for candidate in json_objects(text):
        overlap = len(properties & set(candidate)) if properties else len(candidate)
        if overlap and overlap >= best_overlap:
            best, best_overlap = candidate, overlap
    return best
