"""The per-session log of memories given to the agent: what, when, by which hook and why.

Every injection (the session-start block, a prompt's matches, a command's known failure) is one
JSON line in ``sessions/<session_id>/recall.jsonl``. The hooks append to it (standard library
only); the next injection reads it so a memory is given at most once per session; memorize reads
it to count uses and to judge whether each given memory helped or misled; ``memory recall --log
SESSION`` prints it.

A line: ``{"at": ISO, "event": "session-start"|"user-prompt-submit"|"pre-tool-use",
"scope": "project"|"user", "id": <knowledge row id>, "number": <the id users see>,
"summary": str, "reason": str, "score": float|null}``.
"""

from __future__ import annotations

import os

from .. import paths
from ..timeutil import utc_now
from . import capture, privacy

LOG_NAME = "recall.jsonl"


def log_path(root: str, session_id: str) -> str:
    """The session's injection log under the lessonloop home ``root``."""
    return os.path.join(root, "sessions", paths.session_name(session_id), LOG_NAME)


def record(root: str, session_id: str, event: str, given: list[dict]) -> None:
    """Append one line per memory in ``given`` (each with scope, id, number, summary, reason
    and score) for ``event``, all stamped with the same time; nothing while
    ``LESSONLOOP_MEMORY=off`` (the session leaves nothing behind, and no memorize reads it).
    A home that cannot be written (read-only, full) leaves the memories unlogged (and so
    possibly given again in the session): the hook still gives them rather than none."""
    if privacy.memory_off(os.environ):
        return
    at = utc_now()
    path = log_path(root, session_id)
    try:
        _append(path, at, event, given)
    except OSError:
        pass


def _append(path: str, at: str, event: str, given: list[dict]) -> None:
    for item in given:
        capture.append(
            path,
            {
                "at": at,
                "event": event,
                "scope": item["scope"],
                "id": item["id"],
                "number": item.get("number"),
                "summary": item.get("summary", ""),
                "reason": item.get("reason", ""),
                "score": item.get("score"),
            },
        )


def read(root: str, session_id: str) -> list[dict]:
    """The session's injections in the order they were given (none when nothing was)."""
    return [x for x in capture.read(log_path(root, session_id)) if isinstance(x.get("id"), int)]


def given_ids(root: str, session_id: str) -> set[tuple[str, int]]:
    """``(scope, id)`` of every memory a prompt or a command was already given in this session.
    The session-start block does not count: it may be long out of context (after a compaction,
    or hundreds of turns later) when a prompt needs one of its memories."""
    return {
        (item.get("scope", "project"), item["id"])
        for item in read(root, session_id)
        if item.get("event") != "session-start"
    }
