"""The agent's shell keeps its working directory between Bash calls: a lesson agents learn by
failing ("after `cd apps/desktop`, `cd apps/desktop && ...` fails: no such file or
directory"), and one that holds in every project.

Kept only with that evidence: a relative ``cd DIR`` succeeded, and a later call in the same
chain failed on ``DIR`` itself (the directory was not found because the shell was already in
it).
"""

from __future__ import annotations

import re

from .candidate import Candidate
from .transcript_model import command_of, failed

_CD = re.compile(r"^\s*cd\s+([^\s;&|/~$][^\s;&|]*?)/?\s*(?:&&|;|$)")
_NOT_FOUND = re.compile(
    r"(?:no such file or directory|can't cd to|cannot find path)[:\s]+['\"]?([^\s'\"]+)|"
    r"cd:?\s+['\"]?([^\s:'\"]+)['\"]?:\s+no such file or directory",
    re.I,
)


def kept_directory(transcript) -> list[Candidate]:
    """One lesson when a relative ``cd`` that worked made a later call fail on the same
    directory; none otherwise."""
    entered: dict[str, set[str]] = {}  # chain -> relative directories a cd entered
    for call in transcript.calls:
        if call.name.lower() != "bash" or not call.completed:
            continue
        command = command_of(call)
        directories = entered.setdefault(call.chain, set())
        if failed(call):
            for match in _NOT_FOUND.finditer(call.result[:2000]):
                missing = (match.group(1) or match.group(2) or "").rstrip("/.,")
                if missing in directories:
                    return [_lesson(missing)]
            continue
        cd = _CD.match(command)
        if cd:
            directories.add(cd.group(1))
    return []


def _lesson(directory: str) -> Candidate:
    summary = (
        f"The shell keeps its working directory between Bash calls: after `cd {directory}`, "
        "use absolute paths"
    )
    if len(summary) > 120:
        summary = "The shell keeps its working directory between Bash calls: use absolute paths"
    return Candidate(
        kind="observation",
        summary=summary,
        content=f"After a successful `cd {directory}`, a later call failed because the shell was "
        f"still there: `{directory}` was not found from inside it. Use absolute paths, or cd "
        "back to the project root, in the calls that follow.",
        why="A relative cd worked, then the same directory was not found from inside it.",
        tags=["error", "shell"],
    )
