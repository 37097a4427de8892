"""A scenario's or task's playbook bullets, hints and dead ends, reached by the user: list,
edit, forget, pin, and the verdicts on entries a ``--review`` run held (approve, reject).
``lessonloop playbook ...`` calls these.

A scope is named as a scenario (``grid_ctf`` or ``scenario:grid_ctf``) or a task
(``task:NAME``); an entry by its number within that scope, as a memory is. Every change goes
through admission (``knowledge/admission.py``), which renders the scope's Markdown views again.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .. import paths
from ..errors import NotFoundError, UsageError
from .stores import reading, writing

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from ..knowledge.entries import Entry
    from ..store.db import Store

PLAYBOOK_KINDS = ("bullet", "hint", "dead_end")
SHOWN = ("active", "pending", "stale")  # what `playbook list` shows without --all


def playbook_scope(name: str) -> str:
    """The knowledge scope a user names: a scenario's name or ``scenario:NAME``, ``task:NAME``
    (its name as the task file gives it, or the slug its runs store it under), or
    ``evolve:NAME`` (an evolve spec's name: its runs' lessons)."""
    from ..knowledge.entries import scenario_scope

    text = name.strip()
    kind, colon, rest = text.partition(":")
    if text in ("project", "user"):
        raise UsageError(f"{text} holds memories, not a playbook: see `lessonloop memory`")
    if not colon:
        if not text:
            raise UsageError(
                "is a scenario name, scenario:NAME, task:NAME or evolve:NAME", field="scope"
            )
        return scenario_scope(text)
    if kind not in ("scenario", "task", "evolve") or not rest.strip():
        raise UsageError(
            f"is a scenario name, scenario:NAME, task:NAME or evolve:NAME, not {text!r}",
            field="scope",
        )
    if kind == "evolve":  # as evolve/lessons.scope names it (the spec's name)
        return f"evolve:{rest.strip()}"
    if kind == "task":  # as tasks.improve.task_scope names it (TaskSpec.slug)
        return "task:" + (re.sub(r"[^a-z0-9]+", "-", rest.lower()).strip("-") or "task")
    return f"scenario:{rest.strip()}"


def _known_scopes(store: Store) -> list[str]:
    return [
        row["scope"]
        for row in store.query(
            "SELECT DISTINCT scope FROM knowledge WHERE scope NOT IN ('project', 'user') "
            "ORDER BY scope"
        )
    ]


def _check_scope(store: Store | None, scope: str) -> None:
    """NotFoundError, naming the scopes that hold knowledge, when ``scope`` holds none."""
    if store is not None and store.query_one(
        "SELECT 1 FROM knowledge WHERE scope = ? LIMIT 1", (scope,)
    ):
        return
    known = _known_scopes(store) if store is not None else []
    where = f" (scopes with knowledge: {', '.join(known)})" if known else " (no knowledge yet)"
    raise NotFoundError(f"no playbook entries in {scope}{where}")


def _entry(store: Store, scope: str, number: int) -> Entry:
    from ..knowledge.entries import by_number

    entry = by_number(store, scope, number)
    if entry is None or entry.kind not in PLAYBOOK_KINDS:
        raise NotFoundError(
            f"no playbook entry {number} in {scope} (see `lessonloop playbook list {scope}`)"
        )
    return entry


def entry_object(entry: Entry) -> dict[str, Any]:
    """A playbook entry as `playbook ... --json` prints it (``id`` is its number)."""
    return {
        "id": entry.number,
        "kind": entry.kind,
        "scope": entry.scope,
        "summary": entry.summary,
        "content": entry.content,
        "tags": entry.tags,
        "helpful": entry.helpful,
        "harmful": entry.harmful,
        "seen": entry.seen,
        "pinned": entry.pinned,
        "status": entry.status,
        "author": entry.author,
        "updated_at": entry.updated_at,
    }


def list_entries(name: str, every: bool = False) -> list[dict[str, Any]]:
    """The scope's bullets, hints and dead ends (active, pending and stale ones; ``every``: all
    statuses), in that kind order, pinned first, then by evidence."""
    from ..knowledge.entries import Entry

    scope = playbook_scope(name)
    statuses = ("active", "pending", "stale", "retired", "superseded", "rejected")
    shown = statuses if every else SHOWN
    with reading(paths.home()) as store:
        _check_scope(store, scope)
        assert store is not None  # checked above
        rows = store.query(
            f"SELECT * FROM knowledge WHERE scope = ? AND kind IN ('bullet', 'hint', 'dead_end') "
            f"AND status IN ({','.join('?' * len(shown))})",
            (scope, *shown),
        )
    entries = [Entry.from_row(row) for row in rows]
    entries.sort(
        key=lambda e: (
            PLAYBOOK_KINDS.index(e.kind),
            statuses.index(e.status) if e.status in statuses else len(statuses),
            not e.pinned,
            -e.evidence,
            -e.seen,
            -e.number,
        )
    )
    return [entry_object(e) for e in entries]


def _writing_scope(name: str) -> tuple[str, AbstractContextManager[Store]]:
    """The scope named and the store to change it in (which must exist and hold it)."""
    scope = playbook_scope(name)
    if not paths.db_path(paths.home()).exists():
        _check_scope(None, scope)
    return scope, writing(paths.home())


def edit_entry(
    name: str, number: int, summary: str | None = None, content: str | None = None
) -> dict[str, Any]:
    """Correct an entry's summary and/or content through admission (redacted, capped, refused
    when it repeats another entry of the scope); it is user-authored afterwards, so the coach
    never overwrites or retires it."""
    from ..knowledge import admission
    from ..knowledge.entries import get

    if summary is None and content is None:
        raise UsageError("nothing to change: give a new summary, content or both")
    scope, opened = _writing_scope(name)
    with opened as store:
        _check_scope(store, scope)
        entry = _entry(store, scope, number)
        outcome = admission.edit(store, entry.id, summary=summary, content=content)
        if outcome.action == "duplicate":
            twin = get(store, outcome.entry_id) if outcome.entry_id else None
            raise UsageError(
                f"not edited: the new text repeats entry {twin.number if twin else '?'} of "
                f"{scope} ({outcome.reason}); forget one of them instead"
            )
        if outcome.action == "rejected":
            raise UsageError(f"entry {number} of {scope} not edited: {outcome.reason}")
        return {**entry_object(_entry(store, scope, number)), "action": outcome.action}


def forget_entry(name: str, number: int) -> dict[str, Any]:
    """Delete an entry for good (the audit keeps a note), and its line in the views."""
    from ..knowledge import admission

    scope, opened = _writing_scope(name)
    with opened as store:
        _check_scope(store, scope)
        entry = _entry(store, scope, number)
        admission.forget(store, entry.id)
    return {"forgotten": number, "scope": scope, "kind": entry.kind, "summary": entry.summary}


def pin_entry(name: str, number: int, pinned: bool = True) -> dict[str, Any]:
    """Pin an entry (never retired by the coach or by its evidence) or unpin it."""
    from ..knowledge import admission

    scope, opened = _writing_scope(name)
    with opened as store:
        _check_scope(store, scope)
        entry = _entry(store, scope, number)
        outcome = admission.pin(store, entry.id, pinned)
        return {**entry_object(_entry(store, scope, number)), "action": outcome.action}


def review_entries(name: str, numbers: list[int] | None, approve: bool) -> dict[str, Any]:
    """Approve (into use) or reject the entries a ``--review`` run held: those named, or every
    pending one when ``numbers`` is None. Nothing changes when a named one is not held."""
    from ..knowledge import admission
    from ..knowledge.admission import REVIEWED

    if numbers is not None and not numbers:
        raise UsageError("give the ids to review, or --all")
    scope, opened = _writing_scope(name)
    with opened as store:
        _check_scope(store, scope)
        if numbers is None:
            numbers = [
                row["number"]
                for row in store.query(
                    "SELECT number FROM knowledge WHERE scope = ? AND status = 'pending' AND "
                    "kind IN ('bullet', 'hint', 'dead_end') ORDER BY id",
                    (scope,),
                )
            ]
        entries = [_entry(store, scope, n) for n in dict.fromkeys(numbers)]
        for entry in entries:
            if entry.status not in REVIEWED:
                raise UsageError(
                    f"entry {entry.number} of {scope} is {entry.status}: only pending, stale or retired "
                    "entries are approved or rejected"
                )
        admission.review(store, [e.id for e in entries], approve)
        done = [entry_object(_entry(store, scope, e.number)) for e in entries]
    return {"approved" if approve else "rejected": done}
