"""Find the strategy JSON in a competitor's prose before asking any provider to extract it."""

from __future__ import annotations

from ..json_blocks import json_objects
from ..scenarios import code


def find_strategy(text: str, schema: dict) -> dict | None:
    """The object that best matches the schema's properties (the last one on ties)."""
    properties = set(schema.get("properties", {}))
    best, best_overlap = None, 0
    for candidate in json_objects(text):
        if code.FIELD in candidate:  # a code strategy: checked as such, run only in the sandbox
            return {code.FIELD: candidate[code.FIELD]}
        overlap = len(properties & set(candidate)) if properties else len(candidate)
        if overlap and overlap >= best_overlap:
            best, best_overlap = candidate, overlap
    return best
