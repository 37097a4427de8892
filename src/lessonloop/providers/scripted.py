"""Replays recorded responses from a JSON file, for tests and demos.

File format: ``{"competitor": ["...", "..."], "analyst": ["..."], ..., "on_exhausted":
"error" | "repeat_last" | "cycle"}``. Responses are served per role in order. A ``"*"`` list
serves any role that has no list of its own.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..errors import LessonloopError, UsageError
from .base import Completion, Request

EXHAUSTION_POLICIES = ("error", "repeat_last", "cycle")


def provider_for(route, settings) -> ScriptedProvider:
    """The provider for ``scripted:FILE`` (the registry's factory)."""
    argument = route.provider.partition(":")[2]
    if not argument:
        raise UsageError(
            "the scripted provider needs a response file: --provider "
            "scripted:FILE.json (or set LESSONLOOP_SCRIPT)"
        )
    return ScriptedProvider.from_file(argument)


class ScriptedProvider:
    name = "scripted"

    def __init__(self, responses: dict[str, list[str]], on_exhausted: str = "error"):
        if on_exhausted not in EXHAUSTION_POLICIES:
            raise UsageError(
                f"scripted file: on_exhausted must be one of {', '.join(EXHAUSTION_POLICIES)}"
            )
        self.responses = responses
        self.on_exhausted = on_exhausted
        self.cursors: dict[str, int] = {}

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedProvider:
        from ..files import read_user_file

        path = Path(path)
        try:
            data = json.loads(read_user_file(path, "scripted response file"))
        except json.JSONDecodeError as exc:
            raise UsageError(f"scripted response file {path} is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise UsageError(f"scripted response file {path} must hold a JSON object of role lists")
        policy = data.pop("on_exhausted", "error")
        responses: dict[str, list[str]] = {}
        for role, items in data.items():
            if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                raise UsageError(
                    f"scripted response file {path}: {role!r} must be a list of strings"
                )
            responses[role] = items
        return cls(responses, policy)

    def complete(self, request: Request) -> Completion:
        started = time.perf_counter()
        key = request.role if request.role in self.responses else "*"
        items = self.responses.get(key)
        if not items:
            raise LessonloopError(f"scripted provider has no responses for role {request.role!r}")
        index = self.cursors.get(key, 0)
        if index >= len(items):
            if self.on_exhausted == "error":
                raise LessonloopError(
                    f"scripted responses for role {request.role!r} ran out after {len(items)} calls"
                )
            index = len(items) - 1 if self.on_exhausted == "repeat_last" else index % len(items)
        self.cursors[key] = self.cursors.get(key, 0) + 1
        return Completion(
            text=items[index], latency_ms=(time.perf_counter() - started) * 1000, cost=0.0
        )
