"""What a finished mission teaches, through the one admission gate, and the lessons a new
mission is shown.

A mission that succeeded leaves a ``pattern``: the verifier that passed, the failure it
started from, and the change that fixed it (its files and changed lines); one that failed or
was blocked leaves an ``observation`` (a memory kind, so ``lessonloop memory list`` shows it
as it shows a pattern): the changes tried in vain. Both go to the ``project`` scope
of the home the mission ran in, the scope session memory uses for the project (so a session
recalls the pattern too), tagged ``mission``; admission redacts, caps and deduplicates them (a
repeat reinforces the lesson it repeats). A step's prompt shows the lessons most relevant to
its goal and failure."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..knowledge.admission import Outcome, Proposal
    from ..store.db import Store

_EXCEPTION = re.compile(r"^[\w.]*(?:Error|Exception|Failure)\b:?")
_FAILURE = re.compile(r"error|fail|assert|expected", re.I)
SCOPE = "project"  # as memory.recall.PROJECT: the project's scope in its home
KINDS = ("pattern", "observation")
CHANGED_LINES = 30  # of a change kept in a lesson
SHOWN = 3  # lessons in a prompt
SHOWN_CHARS = 400  # of each


def _first_error(output: str) -> str:
    """The line most likely to name the failure: the last exception line (``AssertionError:
    45 != 55``), else the last line saying error or fail, else the last line."""
    lines = [line.strip() for line in (output or "").splitlines() if line.strip()]
    for pattern in (_EXCEPTION, _FAILURE):
        for line in reversed(lines):
            if pattern.search(line) and not line.startswith("---"):
                return line[:200]
    return lines[-1][:200] if lines else "no output"


def changed_lines(diff: str) -> tuple[list[str], list[str]]:
    """The files a unified diff changes and its changed lines (each file's name first)."""
    files: list[str] = []
    lines: list[str] = []
    for line in diff.splitlines():
        if line.startswith("+++ "):
            name = line[4:].split("\t")[0].strip().removeprefix("b/")
            if name != "/dev/null":
                files.append(name)
                lines.append(f"{name}:")
        elif line.startswith(("+", "-")) and not line.startswith("--- "):
            lines.append(line)
    return files, lines[:CHANGED_LINES]


def proposals(row: dict, steps: list[dict], status: str, diff: str) -> list[Proposal]:
    """The lessons of a mission that ended ``status`` (``succeeded``, ``failed``, ``blocked``)."""
    from ..knowledge.admission import Proposal

    verifier, goal = row["verifier"], row["goal"]
    started = _first_error(row["initial_output"] or "")
    common = {"scope": SCOPE, "source": "evidence", "run_id": row["run_id"]}
    if status == "succeeded":
        files, lines = changed_lines(diff)
        if not files:
            return []
        return [
            Proposal(
                kind="pattern",
                summary=f"`{verifier}` failing with {started} was fixed by changing "
                f"{', '.join(files)}",
                content="\n".join(lines),
                why=f"mission goal: {goal}; the verifier passed after {len(steps)} steps",
                how_to_apply=f"When `{verifier}` fails like this again, try this change first.",
                tags=["mission", "verifier-passed", *files],
                detail=f"mission {row['run_id']}",
                **common,
            )
        ]
    tried = []
    for step in steps:
        if step["kind"] in ("invalid",) or step["refused"]:
            continue
        outcome = step["message"]  # an undone step's says why it was undone
        tried.append(f"step {step['step_index']} ({step['kind']}): {outcome[:200]}")
        tried += [f"  {line}" for line in step["proposal"].splitlines()[:12]]
    if not tried:
        return []
    return [
        Proposal(
            kind="observation",
            summary=f"These changes did not make `{verifier}` pass (it fails with {started})",
            content="\n".join(tried[: CHANGED_LINES * 2]),
            why=f"mission goal: {goal}; it ended {status}",
            how_to_apply="Try something other than these changes.",
            tags=["mission", f"mission-{status}"],
            detail=f"mission {row['run_id']}",
            **common,
        )
    ]


def learn(store: Store, row: dict, steps: list[dict], status: str, diff: str) -> list[Outcome]:
    from ..knowledge import admission

    found = proposals(row, steps, status, diff)
    return admission.admit(store, found) if found else []


def recall(store: Store, goal: str, verifier: str, output: str) -> list[str]:
    """The most relevant mission lessons of the project, one text each, for the prompt."""
    from ..knowledge.search import search

    query = f"{goal} {verifier} {_first_error(output)}"
    shown = []
    for entry, _ in search(store, query, scope=SCOPE, kinds=KINDS, limit=SHOWN * 3):
        if "mission" not in entry.tags:
            continue
        label = "worked before" if entry.kind == "pattern" else "did NOT work before"
        shown.append(f"({label}) {entry.summary}\n{entry.content}"[:SHOWN_CHARS])
        if len(shown) == SHOWN:
            break
    return shown
