"""Context bundles: the playbook bullets, hints and dead ends a competitor is served, addressed
by their content.

A bundle's id is a digest of its entries as the competitor reads them (kind, status, summary,
content, tags), in a fixed order: the same entries give the same id whatever order or store
they come from, and a changed bullet gives a new bundle. Evidence counters (helpful, harmful)
are kept with the entries but are not part of the address: they are evidence *about* the
entries, updated after every generation, and a bundle is what was served, not how it fared.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import TYPE_CHECKING, Any

from .. import canonical
from ..timeutil import utc_now

if TYPE_CHECKING:
    from ..store.db import Store

ADDRESSED = ("kind", "status", "summary", "content", "tags")  # what a bundle's id covers
KEPT = (*ADDRESSED, "helpful", "harmful")  # what a bundle stores of each entry


def _addressed(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": str(entry.get("kind", "")),
        "status": str(entry.get("status", "active")),
        "summary": str(entry.get("summary", "")),
        "content": str(entry.get("content", "")),
        "tags": sorted(str(tag) for tag in entry.get("tags", []) or []),
    }


def normalized(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The bundle's entries in its fixed order, each with only what a bundle keeps."""
    kept = [
        {
            **_addressed(entry),
            "helpful": int(entry.get("helpful", 0) or 0),
            "harmful": int(entry.get("harmful", 0) or 0),
        }
        for entry in entries
    ]
    return sorted(kept, key=lambda entry: canonical.dumps(_addressed(entry)))


def bundle_id(entries: list[dict[str, Any]]) -> str:
    """The content address of a bundle holding ``entries``."""
    text = canonical.dumps([_addressed(entry) for entry in normalized(entries)])
    return "b-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def save(conn: sqlite3.Connection, scope: str, entries: list[dict[str, Any]]) -> str:
    """Store the bundle (once: the same entries are the same bundle) and return its id."""
    identity = bundle_id(entries)
    conn.execute(
        "INSERT OR IGNORE INTO context_bundles (id, scope, entries_json, created_at) "
        "VALUES (?, ?, ?, ?)",
        (identity, scope, canonical.dumps(normalized(entries)), utc_now()),
    )
    return identity


def load(conn: sqlite3.Connection, identity: str) -> list[dict[str, Any]] | None:
    """The entries of bundle ``identity``; None when there is no such bundle."""
    row = conn.execute(
        "SELECT entries_json FROM context_bundles WHERE id = ?", (identity,)
    ).fetchone()
    return None if row is None else list(json.loads(row[0]))


def restore(
    store: Store, scope: str, entries: list[dict[str, Any]], reason: str, by_user: bool
) -> dict[str, int]:
    """Serve ``entries`` (a bundle) again in ``scope``: its active bullets and hints become the
    bundle's, through admission. One the bundle does not hold is retired (kept for the audit);
    one it holds that is not active is approved back when a retired entry has its address, else
    admitted again (as the coach's accepted edit it was). Dead ends are not a coach's edits (the
    gate's evidence writes them): they stay. The counts of retired, restored and admitted."""
    from ..knowledge import admission
    from ..knowledge import entries as knowledge_entries

    def key(entry: dict[str, Any]) -> str:
        return canonical.dumps({**_addressed(entry), "status": "active"})

    editable = ("bullet", "hint")
    wanted = {key(e): e for e in entries if e.get("kind") in editable}
    served = {
        key(e.to_dict()): e for e in knowledge_entries.active(store, scope) if e.kind in editable
    }
    counts = {"retired": 0, "restored": 0, "admitted": 0}
    for address, entry in served.items():
        if address not in wanted:
            outcome = admission.retire(
                store, entry.id, reason, by_user=by_user, scope=scope, render_views=False
            )
            counts["retired"] += outcome.action == "retired"
    retired = {
        key(dict(row) | {"tags": json.loads(row["tags_json"])}): row["id"]
        for row in store.query(
            "SELECT id, kind, summary, content, tags_json FROM knowledge WHERE scope = ? "
            "AND status = 'retired' AND kind IN ('bullet', 'hint') ORDER BY id",
            (scope,),
        )
    }
    missing = [e for address, e in wanted.items() if address not in served]
    back = [retired[key(e)] for e in missing if key(e) in retired]
    if back:
        counts["restored"] = sum(
            o.action == "approved" for o in admission.review(store, back, approve=True)
        )
    again = [
        admission.Proposal(
            kind=str(e["kind"]),
            scope=scope,
            summary=str(e.get("summary", "")),
            content=str(e.get("content", "")),
            tags=[str(t) for t in e.get("tags", [])],
            approved_by="accept",
            detail=reason,
        )
        for e in missing
        if key(e) not in retired
    ]
    if again:
        counts["admitted"] = sum(
            o.action == "added" for o in admission.admit(store, again, render_views=False)
        )
    from ..knowledge.render import render_scope

    render_scope(store, scope)
    return counts
