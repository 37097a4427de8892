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
from typing import Any

from .. import canonical
from ..timeutil import utc_now

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
