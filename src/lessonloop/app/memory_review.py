"""Correcting and reviewing memories: edit, supersede, pin, and the verdicts on held ones
(approve, reject). ``lessonloop memory edit|supersede|pin|approve|reject`` and the MCP tools
``memory_edit``/``memory_supersede`` call these.

A memory is named as everywhere else: its number within its scope (``project`` or ``user``).
Every change goes through admission (``knowledge/admission.py``), under the write lock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import paths
from ..errors import NotFoundError, UsageError
from .memory import memory_entry, memory_object, memory_roots, scope_root
from .stores import reading, writing

if TYPE_CHECKING:
    from pathlib import Path

    from ..knowledge.entries import Entry
    from ..store.db import Store


def _store_root(scope: str) -> Path:
    """The root of ``scope``'s store, which must exist (there is nothing to change before)."""
    root = scope_root(scope)
    if not paths.db_path(root).exists():
        raise NotFoundError(f"no {scope} memories yet", listing="list_memories")
    return root


def reviewed_object(store: Store, entry: Entry) -> dict[str, Any]:
    """A memory as ``memory_object`` shows it, with what review changes: its status, whether it
    is pinned, when last confirmed, and the id (number) of the memory that superseded it."""
    from ..knowledge.entries import get

    replacement = get(store, entry.superseded_by) if entry.superseded_by else None
    return {
        **memory_object(store, entry),
        "status": entry.status,
        "pinned": entry.pinned,
        "confirmed_at": entry.confirmed_at,
        "superseded_by": replacement.number if replacement else None,
    }


def edit_memory(
    entry_id: int,
    summary: str | None = None,
    content: str | None = None,
    scope: str = "project",
) -> dict[str, Any]:
    """Correct a memory's summary and/or content. The new text goes through admission
    (redacted, capped); text that repeats another memory of the scope is refused, naming it.
    The memory is user-authored afterwards and confirmed now. Returns it with ``action``
    (edited, or unchanged when the text is the same)."""
    from ..knowledge import admission
    from ..knowledge.entries import get

    if summary is None and content is None:
        raise UsageError("nothing to change: give a new summary, content or both")
    root = _store_root(scope)
    with writing(root) as store:
        entry = memory_entry(store, scope, entry_id)
        outcome = admission.edit(store, entry.id, summary=summary, content=content, root=root)
        if outcome.action == "duplicate":
            twin = get(store, outcome.entry_id) if outcome.entry_id else None
            raise UsageError(
                f"not edited: the new text repeats {scope} memory "
                f"{twin.number if twin else '?'} ({outcome.reason}: "
                f"{twin.summary if twin else ''!r}); supersede one by the other, or forget one"
            )
        if outcome.action == "rejected":
            raise UsageError(f"{scope} memory {entry_id} not edited: {outcome.reason}")
        edited = get(store, entry.id)
        assert edited is not None  # edited just above, under the write lock
        return {**reviewed_object(store, edited), "action": outcome.action}


def parse_memory_ref(value: str | int, scope: str) -> tuple[str, int]:
    """A memory named as ``N`` (in ``scope``) or ``SCOPE:N`` (as listings show ``[user 4]``)."""
    text = str(value).strip()
    named, _, number = text.rpartition(":")
    named = named.strip() or scope
    if not number.strip().isdigit():
        raise UsageError(f"is a memory id (N or SCOPE:N), not {text!r}", field="by")
    return named, int(number)


def supersede_memory(old: int, new: int | str, scope: str = "project") -> dict[str, Any]:
    """Replace memory ``old`` by ``new`` (both of ``scope``; ``new`` may be written
    ``SCOPE:N``, and must then name the same scope). The old one leaves recall, search and
    listings but keeps its history, which says what replaced it; the new one must be active."""
    from ..knowledge import admission

    new_scope, new_number = parse_memory_ref(new, scope)
    if new_scope != scope:
        raise UsageError(
            f"a memory is superseded by one of its own scope: {scope} memory {old} cannot "
            f"point to {new_scope} memory {new_number} (add the new text to {scope} first)"
        )
    if new_number == old:
        raise UsageError(f"{scope} memory {old} cannot supersede itself")
    root = _store_root(scope)
    with writing(root) as store:
        before, after = memory_entry(store, scope, old), memory_entry(store, scope, new_number)
        if after.status != "active":
            raise UsageError(
                f"{scope} memory {new_number} is {after.status}, not active: it cannot replace "
                f"memory {old}"
            )
        if before.status == "superseded":
            raise UsageError(f"{scope} memory {old} is already superseded")
        outcome = admission.supersede(store, before.id, after.id, root)
        if outcome.action == "rejected":
            raise UsageError(f"{scope} memory {old} not superseded: {outcome.reason}")
        return {
            "superseded": reviewed_object(store, memory_entry(store, scope, old)),
            "by": reviewed_object(store, after),
        }


def pin_memory(entry_id: int, scope: str = "project", pinned: bool = True) -> dict[str, Any]:
    """Pin a memory (recalled first; never pruned nor retired automatically) or unpin it.
    Returns it with ``action`` (pinned, unpinned or unchanged)."""
    from ..knowledge import admission

    root = _store_root(scope)
    with writing(root) as store:
        entry = memory_entry(store, scope, entry_id)
        outcome = admission.pin(store, entry.id, pinned, root)
        return {
            **reviewed_object(store, memory_entry(store, scope, entry_id)),
            "action": outcome.action,
        }


def held_memories(scope: str = "all") -> list[dict[str, Any]]:
    """Memories held for review (status ``pending``), oldest first: what ``--review`` kept out
    of recall until approved."""
    from ..knowledge.entries import MEMORY_KINDS, Entry

    items: list[dict[str, Any]] = []
    marks = ",".join("?" * len(MEMORY_KINDS))
    for name, root in memory_roots(scope):
        with reading(root) as store:
            if store is None:
                continue
            rows = store.query(
                f"SELECT * FROM knowledge WHERE scope = ? AND status = 'pending' AND kind IN "
                f"({marks}) ORDER BY id",
                (name, *MEMORY_KINDS),
            )
            items += [reviewed_object(store, Entry.from_row(row)) for row in rows]
    return items


def review_memories(
    entry_ids: list[int] | None, approve: bool, scope: str | None = None
) -> dict[str, Any]:
    """Approve (back into use, confirmed now) or reject memories held for review: the ones
    named (``pending``, ``stale`` ones to confirm, ``retired`` ones to bring back) in ``scope`` (default project), or with
    ``entry_ids`` None every pending one of ``scope`` (default all). Nothing changes when one
    named memory is unknown or not held. Returns {"approved"|"rejected": [memories]}."""
    from ..knowledge import admission
    from ..knowledge.admission import REVIEWED
    from ..knowledge.entries import MEMORY_KINDS

    verdict = "approved" if approve else "rejected"
    done: list[dict[str, Any]] = []
    if entry_ids is None:
        roots = memory_roots(scope or "all")
    elif not entry_ids:
        raise UsageError("give the ids to review, or --all")
    else:
        roots = [(scope or "project", _store_root(scope or "project"))]
    marks = ",".join("?" * len(MEMORY_KINDS))
    for name, root in roots:
        if not paths.db_path(root).exists():
            continue
        with writing(root) as store:
            if entry_ids is None:
                targets = [
                    row["number"]
                    for row in store.query(
                        f"SELECT number FROM knowledge WHERE scope = ? AND status = 'pending' "
                        f"AND kind IN ({marks}) ORDER BY id",
                        (name, *MEMORY_KINDS),
                    )
                ]
            else:
                targets = list(dict.fromkeys(entry_ids))
            entries = [memory_entry(store, name, number) for number in targets]
            for entry in entries:
                if entry.status not in REVIEWED:
                    raise UsageError(
                        f"{name} memory {entry.number} is {entry.status}: only pending, stale or "
                        "retired memories are approved or rejected"
                    )
            admission.review(store, [e.id for e in entries], approve, root)
            done += [reviewed_object(store, memory_entry(store, name, e.number)) for e in entries]
    return {verdict: done}
