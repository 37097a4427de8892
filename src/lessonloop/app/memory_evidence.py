"""Evidence for memories: a verdict someone gives a memory (``memory feedback``, the MCP
``memory_feedback``) and every memory's uses and evidence (``memory stats``).

Sessions give their verdicts at memorize (``memory/evidence.py``); both kinds count in the
memory's ``helpful``/``harmful``, which recall ranks by, and a memory that mostly misleads
retires (``admission.retire_misleading``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import paths
from ..errors import NotFoundError, UsageError
from .memory import memory_entry, memory_roots, scope_root
from .stores import reading, writing

if TYPE_CHECKING:
    from ..knowledge.entries import Entry
    from ..store.db import Store

VERDICTS = ("helped", "misled")


def give_feedback(
    entry_id: int, verdict: str, note: str = "", scope: str = "project", source: str = "user"
) -> dict[str, Any]:
    """Count ``verdict`` (helped or misled) for memory ``entry_id`` of ``scope``, with ``note``
    (redacted) in its history; the memory retires when it now mostly misleads. ``source`` is
    who gave it: ``user`` (the CLI; their verdict may retire a memory they wrote) or ``mcp``."""
    from ..knowledge import admission
    from ..knowledge.entries import get

    if verdict not in VERDICTS:
        raise UsageError(f"the verdict is helped or misled, not {verdict!r}")
    root = scope_root(scope)
    if not paths.db_path(root).exists():
        raise NotFoundError(f"no {scope} memories yet")
    with writing(root) as store:
        entry = memory_entry(store, scope, entry_id)
        admission.record_feedback(store, entry.id, verdict, note, source=source, root=root)
        retired = admission.retire_misleading(
            store, [entry.id], by_user=source == "user", root=root
        )
        now = get(store, entry.id)
    assert now is not None  # (written a moment ago, under the write lock)
    return {**stats_object(now), "verdict": verdict, "retired": bool(retired)}


def stats_object(entry: Entry) -> dict[str, Any]:
    """A memory's uses and evidence, as ``memory stats --json`` prints it."""
    return {
        "id": entry.number,
        "scope": entry.scope,
        "kind": entry.kind,
        "summary": entry.summary,
        "injected": entry.injected,
        "helped": entry.helpful,
        "misled": entry.harmful,
        "last_used_at": entry.last_used_at,
        "status": entry.status,
        "pinned": entry.pinned,
    }


def memory_stats(scope: str = "all") -> list[dict[str, Any]]:
    """Every memory of ``scope`` (project, user or all), whatever its status, with its uses
    (injected, last used) and evidence (helped, misled): by scope, then id."""
    items: list[dict[str, Any]] = []
    for name, root in memory_roots(scope):
        with reading(root) as store:
            if store is not None:
                items += [stats_object(entry) for entry in memories(store, name)]
    return items


def memories(store: Store, scope: str, status: str | None = None) -> list[Entry]:
    """The memories of ``scope`` in ``store`` by id, of one ``status`` or all."""
    from ..knowledge.entries import Entry
    from ..memory.recall import MEMORY_KINDS

    marks = ",".join("?" * len(MEMORY_KINDS))
    where = "" if status is None else " AND status = ?"
    rows = store.query(
        f"SELECT * FROM knowledge WHERE scope = ? AND kind IN ({marks}){where} ORDER BY number",
        (scope, *MEMORY_KINDS, *(() if status is None else (status,))),
    )
    return [Entry.from_row(row) for row in rows]
